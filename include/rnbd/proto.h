/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * RNBD block protocol, version 1: the user headers the block client and
 * server exchange over the transport (include/rnbd/trs.h).  Little endian,
 * packed, reserved fields zero on send and checked on receive.
 */
#ifndef RNBD_PROTO_H
#define RNBD_PROTO_H

#include <linux/types.h>
#include <linux/bits.h>
#include <linux/build_bug.h>

#define RNBD_PROTO_VER		1

enum rnbd_msg_type {
	RNBD_MSG_OPEN	= 1,	/* read: server returns rnbd_msg_open_rsp */
	RNBD_MSG_CLOSE	= 2,	/* no data */
	RNBD_MSG_IO	= 3,	/* block IO */
	RNBD_MSG_INFO	= 4,	/* read: rnbd_msg_open_rsp of an open device */
};

/*
 * How an OPEN opens its device.  RW: the only writer of the device (of
 * all sessions).  MIGRATION: a writer that may share the device with one
 * other writer, RW or MIGRATION, while a VM moves between two hosts.
 */
enum rnbd_access_mode {
	RNBD_ACCESS_RO		= 0,
	RNBD_ACCESS_RW		= 1,
	RNBD_ACCESS_MIGRATION	= 2,
};

/* The name of @mode in sysfs: "ro", "rw", "migration", or "unknown". */
static inline const char *rnbd_access_mode_str(enum rnbd_access_mode mode)
{
	switch (mode) {
	case RNBD_ACCESS_RO:
		return "ro";
	case RNBD_ACCESS_RW:
		return "rw";
	case RNBD_ACCESS_MIGRATION:
		return "migration";
	}
	return "unknown";
}

/**
 * struct rnbd_msg_hdr - common first bytes of every message
 * @type: enum rnbd_msg_type
 * @version: RNBD_PROTO_VER
 * @reserved: zero
 */
struct rnbd_msg_hdr {
	__le16	type;
	u8	version;
	u8	reserved;
} __packed;

#define RNBD_PATH_MAX	256	/* device_path bytes, NUL included */

/**
 * struct rnbd_msg_open - open a device on the server
 * @hdr: type RNBD_MSG_OPEN
 * @access_mode: enum rnbd_access_mode
 * @reserved0: zero
 * @path_len: bytes in @path before the terminating NUL (1..RNBD_PATH_MAX-1)
 * @reserved1: zero
 * @path: device path relative to the server's dev_search_path; NUL
 *	terminated, the rest zero
 */
struct rnbd_msg_open {
	struct rnbd_msg_hdr hdr;
	u8	access_mode;
	u8	reserved0;
	__le16	path_len;
	__le32	reserved1;
	char	path[RNBD_PATH_MAX];
} __packed;

/* cache_flags bits of struct rnbd_msg_open_rsp */
#define RNBD_CACHE_WRITEBACK	BIT(0)
#define RNBD_CACHE_FUA		BIT(1)

/**
 * struct rnbd_msg_open_rsp - the server's answer to RNBD_MSG_OPEN, written
 * into the client's response buffer
 * @dev_id: identifier of the open device within the session
 * @reserved0: zero
 * @nsectors: device size in 512-byte sectors
 * @max_hw_sectors: most sectors per IO the device takes
 * @max_discard_sectors: 0 if discard is not supported
 * @max_write_zeroes_sectors: 0 if write-zeroes is not supported
 * @discard_granularity: bytes
 * @discard_alignment: bytes
 * @logical_block_size: bytes
 * @physical_block_size: bytes
 * @max_segments: most segments per IO the device takes
 * @rotational: 1 if the device is rotational
 * @cache_flags: RNBD_CACHE_*
 * @reserved: zero
 */
struct rnbd_msg_open_rsp {
	__le32	dev_id;
	__le32	reserved0;
	__le64	nsectors;
	__le32	max_hw_sectors;
	__le32	max_discard_sectors;
	__le32	max_write_zeroes_sectors;
	__le32	discard_granularity;
	__le32	discard_alignment;
	__le16	logical_block_size;
	__le16	physical_block_size;
	__le16	max_segments;
	u8	rotational;
	u8	cache_flags;
	u8	reserved[20];
} __packed;

/**
 * struct rnbd_msg_close - close a device opened with RNBD_MSG_OPEN
 * @hdr: type RNBD_MSG_CLOSE
 * @dev_id: from rnbd_msg_open_rsp
 */
struct rnbd_msg_close {
	struct rnbd_msg_hdr hdr;
	__le32	dev_id;
} __packed;

/**
 * struct rnbd_msg_info - what an open device is like now
 * @hdr: type RNBD_MSG_INFO
 * @dev_id: from rnbd_msg_open_rsp
 *
 * The answer is a struct rnbd_msg_open_rsp with the device's current
 * values (its size may have changed since the OPEN).  A client asks after
 * its transport reported a notice of the server.
 */
struct rnbd_msg_info {
	struct rnbd_msg_hdr hdr;
	__le32	dev_id;
} __packed;

enum rnbd_io_op {
	RNBD_OP_READ		= 0,
	RNBD_OP_WRITE		= 1,
	RNBD_OP_FLUSH		= 2,
	RNBD_OP_DISCARD		= 3,
	RNBD_OP_WRITE_ZEROES	= 4,
};

/* flags of struct rnbd_msg_io */
#define RNBD_F_FUA		BIT(0)
#define RNBD_F_PREFLUSH		BIT(1)
#define RNBD_F_NOUNMAP		BIT(2)
#define RNBD_F_SYNC		BIT(3)
#define RNBD_F_ALL		(RNBD_F_FUA | RNBD_F_PREFLUSH | \
				 RNBD_F_NOUNMAP | RNBD_F_SYNC)

/**
 * struct rnbd_msg_io - one block IO
 * @hdr: type RNBD_MSG_IO
 * @op: enum rnbd_io_op
 * @flags: RNBD_F_*
 * @prio: IO priority (ioprio value)
 * @dev_id: from rnbd_msg_open_rsp
 * @len: bytes covered; equals the transport data length for READ/WRITE
 * @sector: first 512-byte sector
 */
struct rnbd_msg_io {
	struct rnbd_msg_hdr hdr;
	u8	op;
	u8	flags;
	__le16	prio;
	__le32	dev_id;
	__le32	len;
	__le64	sector;
} __packed;

static inline void rnbd_proto_build_checks(void)
{
	BUILD_BUG_ON(sizeof(struct rnbd_msg_hdr) != 4);
	BUILD_BUG_ON(sizeof(struct rnbd_msg_open) != 12 + RNBD_PATH_MAX);
	BUILD_BUG_ON(sizeof(struct rnbd_msg_open_rsp) != 64);
	BUILD_BUG_ON(sizeof(struct rnbd_msg_close) != 8);
	BUILD_BUG_ON(sizeof(struct rnbd_msg_info) != 8);
	BUILD_BUG_ON(sizeof(struct rnbd_msg_io) != 24);
}

#endif /* RNBD_PROTO_H */
