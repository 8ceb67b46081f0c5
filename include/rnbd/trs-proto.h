/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * RNBD transport (TRS) wire format, version 1.
 *
 * Everything a peer sends is described here: the CM private data of the
 * connection handshake, the chunk table the server sends once per session,
 * the request header the client writes into a server chunk, and the 32-bit
 * immediate data of requests and replies.  All multi-byte fields are little
 * endian, except the immediate, which travels in network byte order as the
 * verbs API requires.  Every reserved field must be zero on send and is
 * checked on receive.  Documentation/transport-protocol.rst describes the exchanges.
 */
#ifndef RNBD_TRS_PROTO_H
#define RNBD_TRS_PROTO_H

#include <linux/types.h>
#include <linux/sizes.h>
#include <linux/build_bug.h>

#define TRS_MAGIC		0x7e5b
#define TRS_PROTO_VER_MAJOR	1
#define TRS_PROTO_VER_MINOR	7

/*
 * Capability bits exchanged in the handshake.
 * Bit 0 was TRS_CAP_RSP_PAIR (minor 1, replies answering two requests):
 * no longer offered nor accepted.
 * TRS_CAP_RSP_BATCH: the client takes TRS_IMM_RSP_BATCH replies and may
 * flag its requests TRS_REQ_F_MORE (minor 2).
 * TRS_CAP_HEARTBEAT: both sides send a heartbeat (TRS_IMM_HB) on
 * connection 0 every TRS_HB_INTERVAL_MS and close the session when the
 * peer's stop (minor 3).
 * TRS_CAP_SLOT_GEN: the slot field of a request's immediate carries a
 * generation above the slot index, and the server's TRS_IMM_RSP echoes the
 * field whole, so the client tells a reply to an earlier use of the slot
 * from the reply to the request in it (minor 5).
 * TRS_CAP_MULTIPATH: a session may have several paths, each its own
 * connections and chunks, told apart by the path id of their connect
 * requests; a path that connects again replaces its old self and the
 * session stays (minor 6).
 * TRS_CAP_NOTICE: the server's heartbeat may carry TRS_HB_NOTICE in its
 * arg: its user has news for the client's user, who asks for it (minor 6;
 * rnbd: a device changed size).
 * TRS_CAP_AUTH: connection 0 of every path starts with the exchange of
 * HELLO, CHALLENGE and PROOF, which names the client's host and, if the
 * host has a key, authenticates both sides (minor 7,
 * Documentation/security.rst).
 */
#define TRS_CAP_RSP_BATCH	0x2u
#define TRS_CAP_HEARTBEAT	0x4u
#define TRS_CAP_SLOT_GEN	0x8u
#define TRS_CAP_MULTIPATH	0x10u
#define TRS_CAP_NOTICE		0x20u
#define TRS_CAP_AUTH		0x40u
#define TRS_CAPS_KNOWN		(TRS_CAP_RSP_BATCH | TRS_CAP_HEARTBEAT | \
				 TRS_CAP_SLOT_GEN | TRS_CAP_MULTIPATH | \
				 TRS_CAP_NOTICE | TRS_CAP_AUTH)

/* Heartbeat period, the same on both sides (TRS_CAP_HEARTBEAT). */
#define TRS_HB_INTERVAL_MS	1000
/* Receives each side keeps on connection 0 for the peer's heartbeats. */
#define TRS_HB_RECVS		2

/*
 * Chunk layout: each server chunk is TRS_HDR_AREA bytes of header area
 * followed by max_io_size bytes of data area.  A request header of hdr_len
 * bytes is written right-aligned into the header area, so header and data
 * form one contiguous remote range starting at
 * chunk + TRS_HDR_AREA - hdr_len, and the data area stays page aligned.
 */
#define TRS_HDR_AREA		4096u
#define TRS_MAX_USR_HDR		512u	/* user header bytes per request */

/* Bytes of the session key in the CM private data (minor 4). */
#define TRS_SESS_KEY_LEN	16

/* Limits a server may advertise and a client accepts. */
#define TRS_MAX_QUEUE_DEPTH	4096u
#define TRS_MAX_IO_SIZE		SZ_1M
#define TRS_MAX_CONNS		1024u

/*
 * Immediate data layout (32 bits):
 *
 *   31    28 27              12 11            0
 *  +--------+------------------+---------------+
 *  |  type  |   slot (chunk)   |  arg          |
 *  +--------+------------------+---------------+
 *
 *  type TRS_IMM_REQ (client -> server): arg = header length in bytes.
 *  type TRS_IMM_RSP (server -> client): arg = status, an errno magnitude
 *                                       (0 = success).
 *
 * With TRS_CAP_SLOT_GEN the slot field is a tag: the slot index in its low
 * TRS_SLOT_IDX_BITS bits and, above them, a generation the client changes
 * with every request on the slot.  A TRS_IMM_RSP carries the tag of the
 * request it answers.  Without the capability the field is the index and
 * its upper bits are zero.
 *
 * A zero-length reply can answer up to 17 requests on one connection that
 * all succeeded and read nothing (TRS_CAP_RSP_BATCH):
 *
 *   31    28 27            16 15                 0
 *  +--------+----------------+--------------------+
 *  |  type  |   base slot    |   mask             |
 *  +--------+----------------+--------------------+
 *
 *  type TRS_IMM_RSP_BATCH (server -> client): slot base, and slot
 *  base + 1 + i for every bit i set in mask; status 0.  Type 0x3 was
 *  TRS_IMM_RSP_PAIR (minor 1) and is not sent any more.
 */
#define TRS_IMM_TYPE_SHIFT	28
#define TRS_IMM_TYPE_BITS	4
#define TRS_IMM_SLOT_SHIFT	12
#define TRS_IMM_SLOT_BITS	16
#define TRS_IMM_ARG_SHIFT	0
#define TRS_IMM_ARG_BITS	12

#define TRS_IMM_REQ		0x1
#define TRS_IMM_RSP		0x2
#define TRS_IMM_RSP_BATCH	0x4
#define TRS_IMM_HB		0x8	/* zero-length SEND_WITH_IMM, both ways */
/* arg of a server's TRS_IMM_HB with TRS_CAP_NOTICE: its user has news */
#define TRS_HB_NOTICE		0x1

#define TRS_IMM_BATCH_BITS	16	/* mask; the base takes the rest */
#define TRS_RSP_BATCH_MAX	(1 + TRS_IMM_BATCH_BITS)	/* requests */

#define TRS_IMM_MASK(bits)	((1u << (bits)) - 1)

#define TRS_SLOT_IDX_BITS	12	/* ilog2(TRS_MAX_QUEUE_DEPTH) */
#define TRS_SLOT_GEN_BITS	(TRS_IMM_SLOT_BITS - TRS_SLOT_IDX_BITS)

/* The slot index a tag names (TRS_CAP_SLOT_GEN). */
static inline u32 trs_tag_idx(u32 tag)
{
	BUILD_BUG_ON(TRS_MAX_QUEUE_DEPTH != 1u << TRS_SLOT_IDX_BITS);

	return tag & TRS_IMM_MASK(TRS_SLOT_IDX_BITS);
}

/* The tag of the next request on the slot whose last tag was @tag. */
static inline u32 trs_tag_next(u32 tag)
{
	return (tag + (1u << TRS_SLOT_IDX_BITS)) &
	       TRS_IMM_MASK(TRS_IMM_SLOT_BITS);
}

static inline u32 trs_imm_pack(u32 type, u32 slot, u32 arg)
{
	BUILD_BUG_ON(TRS_IMM_TYPE_SHIFT + TRS_IMM_TYPE_BITS != 32);
	BUILD_BUG_ON(TRS_IMM_SLOT_SHIFT + TRS_IMM_SLOT_BITS != TRS_IMM_TYPE_SHIFT);
	BUILD_BUG_ON(TRS_IMM_ARG_SHIFT + TRS_IMM_ARG_BITS != TRS_IMM_SLOT_SHIFT);
	BUILD_BUG_ON(TRS_MAX_QUEUE_DEPTH > (1u << TRS_IMM_SLOT_BITS));
	BUILD_BUG_ON(TRS_HDR_AREA - 1 > TRS_IMM_MASK(TRS_IMM_ARG_BITS));
	BUILD_BUG_ON(TRS_IMM_MASK(TRS_IMM_ARG_BITS) < 4095); /* MAX_ERRNO */

	return (type & TRS_IMM_MASK(TRS_IMM_TYPE_BITS)) << TRS_IMM_TYPE_SHIFT |
	       (slot & TRS_IMM_MASK(TRS_IMM_SLOT_BITS)) << TRS_IMM_SLOT_SHIFT |
	       (arg & TRS_IMM_MASK(TRS_IMM_ARG_BITS)) << TRS_IMM_ARG_SHIFT;
}

static inline u32 trs_imm_type(u32 imm)
{
	return (imm >> TRS_IMM_TYPE_SHIFT) & TRS_IMM_MASK(TRS_IMM_TYPE_BITS);
}

static inline u32 trs_imm_slot(u32 imm)
{
	return (imm >> TRS_IMM_SLOT_SHIFT) & TRS_IMM_MASK(TRS_IMM_SLOT_BITS);
}

static inline u32 trs_imm_arg(u32 imm)
{
	return (imm >> TRS_IMM_ARG_SHIFT) & TRS_IMM_MASK(TRS_IMM_ARG_BITS);
}

static inline u32 trs_imm_pack_batch(u32 base, u32 mask)
{
	BUILD_BUG_ON(TRS_MAX_QUEUE_DEPTH >
		     (1u << (TRS_IMM_TYPE_SHIFT - TRS_IMM_BATCH_BITS)));

	return TRS_IMM_RSP_BATCH << TRS_IMM_TYPE_SHIFT |
	       (base << TRS_IMM_BATCH_BITS) |
	       (mask & TRS_IMM_MASK(TRS_IMM_BATCH_BITS));
}

static inline u32 trs_imm_batch_base(u32 imm)
{
	return (imm >> TRS_IMM_BATCH_BITS) &
	       TRS_IMM_MASK(TRS_IMM_TYPE_SHIFT - TRS_IMM_BATCH_BITS);
}

static inline u32 trs_imm_batch_mask(u32 imm)
{
	return imm & TRS_IMM_MASK(TRS_IMM_BATCH_BITS);
}

/**
 * struct trs_msg_conn_req - CM private data of a connect request
 * @magic: TRS_MAGIC
 * @ver_major: TRS_PROTO_VER_MAJOR; the server rejects any other major
 * @ver_minor: sender's minor version (informational)
 * @caps: capability bits the client supports
 * @conn_idx: index of this connection in the session (0 first)
 * @conn_cnt: number of connections the session will have
 * @max_queue_depth: largest queue depth the client accepts
 * @path_id: the path of the session this connection belongs to, chosen by
 *	the client, unique in the session; zero without TRS_CAP_MULTIPATH
 *	(minor 6; reserved and zero before)
 * @sess_uuid: random per-session identifier chosen by the client
 * @sess_key: connections 1..conn_cnt-1: the key of connection 0's accept,
 *	which proves they belong to the session; connection 0: the key of
 *	the last accept of the session (zero if none), which lets the path
 *	join the session, or replace the session without TRS_CAP_MULTIPATH
 *	(minor 4)
 *
 * Must fit the 56 bytes of private data an RDMA_PS_TCP connect can carry.
 */
struct trs_msg_conn_req {
	__le16	magic;
	u8	ver_major;
	u8	ver_minor;
	__le32	caps;
	__le16	conn_idx;
	__le16	conn_cnt;
	__le16	max_queue_depth;
	__le16	path_id;
	u8	sess_uuid[16];
	u8	sess_key[TRS_SESS_KEY_LEN];
} __packed;

/**
 * struct trs_msg_conn_rsp - CM private data of an accept (or a reject)
 * @magic: TRS_MAGIC
 * @ver_major: TRS_PROTO_VER_MAJOR
 * @ver_minor: server's minor version
 * @caps: capability bits both sides support (subset of the request's)
 * @status: 0 on accept; on reject the errno magnitude explaining why
 * @queue_depth: number of chunks (request slots) of the session
 * @max_segments: most scatter/gather entries one request may use
 * @reserved0: zero
 * @max_io_size: data bytes per chunk
 * @sess_key: random secret of the session, the same in every accept of
 *	it; zero in a reject (minor 4)
 */
struct trs_msg_conn_rsp {
	__le16	magic;
	u8	ver_major;
	u8	ver_minor;
	__le32	caps;
	__le16	status;
	__le16	queue_depth;
	__le16	max_segments;
	__le16	reserved0;
	__le32	max_io_size;
	u8	sess_key[TRS_SESS_KEY_LEN];
} __packed;

/**
 * struct trs_chunk_desc - one chunk as the client addresses it
 * @addr: remote address of the chunk's first byte (header area start)
 * @rkey: remote key covering the whole chunk
 * @reserved: zero
 */
struct trs_chunk_desc {
	__le64	addr;
	__le32	rkey;
	__le32	reserved;
} __packed;

/**
 * struct trs_msg_chunks - chunk table, sent by the server with one SEND on
 * connection 0 once that connection is established
 * @magic: TRS_MAGIC
 * @type: TRS_MSG_CHUNKS
 * @count: number of descriptors, equal to the negotiated queue depth
 * @reserved0: zero
 * @chunk_size: TRS_HDR_AREA + max_io_size
 * @reserved1: zero
 * @desc: one descriptor per chunk, slot order
 */
struct trs_msg_chunks {
	__le16	magic;
	__le16	type;
	__le16	count;
	__le16	reserved0;
	__le32	chunk_size;
	__le32	reserved1;
	struct trs_chunk_desc desc[];
} __packed;

#define TRS_MSG_CHUNKS		1
#define TRS_MSG_HELLO		2
#define TRS_MSG_CHALLENGE	3
#define TRS_MSG_PROOF		4
#define TRS_MSG_RESULT		5

/* The exchange of TRS_CAP_AUTH (Documentation/security.rst). */
/* a client's host name: 1..63 characters of [A-Za-z0-9._:-], and a NUL */
#define TRS_HOSTNAME_LEN	64
/* a host key, and the id that names it (trs_key_id()) */
#define TRS_KEY_MIN		32
#define TRS_KEY_MAX		64
#define TRS_KEY_ID_LEN		8
#define TRS_NONCE_LEN		32
#define TRS_MAC_LEN		32	/* HMAC-SHA256 */
#define TRS_CONN_TOKEN_LEN	TRS_SESS_KEY_LEN

/**
 * struct trs_msg_hello - first message of a path, client to server
 * @magic: TRS_MAGIC
 * @type: TRS_MSG_HELLO
 * @reserved0: zero
 * @key_id: id of the client's host key; zero: it has none
 * @nonce: fresh random bytes of the client (Nc)
 * @hostname: the client's host name, NUL-padded
 */
struct trs_msg_hello {
	__le16	magic;
	__le16	type;
	__le32	reserved0;
	u8	key_id[TRS_KEY_ID_LEN];
	u8	nonce[TRS_NONCE_LEN];
	char	hostname[TRS_HOSTNAME_LEN];
} __packed;

/* TRS_MSG_CHALLENGE flags: the host has a key; @mac is the server's */
#define TRS_CHAL_F_KEY		0x1

/**
 * struct trs_msg_challenge - the server's answer to HELLO
 * @magic: TRS_MAGIC
 * @type: TRS_MSG_CHALLENGE
 * @status: 0, or the errno magnitude of the refusal (EACCES,
 *	EKEYREJECTED); the server closes the path after it
 * @flags: TRS_CHAL_F_*
 * @nonce: fresh random bytes of the server (Ns)
 * @mac: with TRS_CHAL_F_KEY the server's proof, else zero
 */
struct trs_msg_challenge {
	__le16	magic;
	__le16	type;
	__le16	status;
	__le16	flags;
	u8	nonce[TRS_NONCE_LEN];
	u8	mac[TRS_MAC_LEN];
} __packed;

/**
 * struct trs_msg_proof - the client's proof, after it checked the server's
 * @magic: TRS_MAGIC
 * @type: TRS_MSG_PROOF
 * @reserved0: zero
 * @mac: the client's proof; zero if the host has no key
 */
struct trs_msg_proof {
	__le16	magic;
	__le16	type;
	__le32	reserved0;
	u8	mac[TRS_MAC_LEN];
} __packed;

/**
 * struct trs_msg_result - a refusal where the chunk table would come
 * @magic: TRS_MAGIC
 * @type: TRS_MSG_RESULT
 * @status: errno magnitude (EKEYREJECTED: the proof did not verify)
 * @reserved0: zero
 */
struct trs_msg_result {
	__le16	magic;
	__le16	type;
	__le16	status;
	__le16	reserved0;
} __packed;

/* Request directions carried in struct trs_msg_req.dir. */
#define TRS_DIR_NONE		0	/* no data */
#define TRS_DIR_WRITE		1	/* data follows the header in the chunk */
#define TRS_DIR_READ		2	/* server writes data to @addr/@rkey */

/*
 * Request flags carried in struct trs_msg_req.flags (TRS_CAP_RSP_BATCH):
 * TRS_REQ_F_MORE: other requests of the client are in flight on this
 * connection, so the reply may wait a little for others to share its
 * message; without it the reply goes alone at once.
 */
#define TRS_REQ_F_MORE		0x1
#define TRS_REQ_F_KNOWN		TRS_REQ_F_MORE

/**
 * struct trs_msg_req - transport request header, first bytes of the header
 * written into a chunk; the user header follows it directly
 * @dir: TRS_DIR_*
 * @flags: TRS_REQ_F_*; zero unless TRS_CAP_RSP_BATCH was negotiated
 * @reserved0: zero
 * @data_len: bytes of data written (WRITE) or wanted (READ); 0 for NONE
 * @addr: READ only: client buffer address the server writes to, else 0
 * @rkey: READ only: remote key of that buffer, else 0
 * @reserved1: zero
 */
struct trs_msg_req {
	u8	dir;
	u8	flags;
	u8	reserved0[2];
	__le32	data_len;
	__le64	addr;
	__le32	rkey;
	__le32	reserved1;
} __packed;

/*
 * The wire sizes, checked at compile time: both transport modules call
 * this from their init.  A CM private data of a connect request holds at
 * most 56 bytes over RoCE and InfiniBand.
 */
static inline void trs_proto_build_checks(void)
{
	BUILD_BUG_ON(sizeof(struct trs_msg_conn_req) != 48);
	BUILD_BUG_ON(sizeof(struct trs_msg_conn_req) > 56);
	BUILD_BUG_ON(sizeof(struct trs_msg_conn_rsp) != 36);
	BUILD_BUG_ON(sizeof(struct trs_chunk_desc) != 16);
	BUILD_BUG_ON(sizeof(struct trs_msg_chunks) != 16);
	BUILD_BUG_ON(sizeof(struct trs_msg_req) != 24);
	BUILD_BUG_ON(sizeof(struct trs_msg_req) + TRS_MAX_USR_HDR > TRS_HDR_AREA);
	BUILD_BUG_ON(sizeof(struct trs_msg_hello) != 112);
	BUILD_BUG_ON(sizeof(struct trs_msg_challenge) != 72);
	BUILD_BUG_ON(sizeof(struct trs_msg_proof) != 40);
	BUILD_BUG_ON(sizeof(struct trs_msg_result) != 8);
}

#endif /* RNBD_TRS_PROTO_H */
