// SPDX-License-Identifier: GPL-2.0-only
/*
 * rnbd-hostile-srv - a hostile RNBD server.
 *
 * Speaks the RNBD transport (include/rnbd/trs-proto.h) and block
 * (include/rnbd/proto.h) wire protocols to the kernel rnbd client and lies
 * in one way per session (--mode): in the accept, in the chunk table, in
 * the replies or in the OPEN answer.  It serves a 1 MiB device of memory
 * honestly otherwise.  Each lie is printed with what the client did
 * afterwards as far as a server can see it (it disconnected, it went on
 * sending requests...); the test around the tool checks the client's side:
 * the map's errno, EIO for the affected IO, the kernel log, no oops, no
 * hang.  See README-srv.
 *
 * One thread: one CM event channel and one completion channel per session,
 * all in one poll(2) with a 50 ms tick for the timers, so no session ever
 * blocks another and every wait is bounded.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/random.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "wire.h"

#define SRV_DEFAULT_PORT	1240
#define SRV_QUEUE_DEPTH		128u		/* the kernel server's default */
#define SRV_MAX_IO_SIZE		131072u		/* the kernel server's default */
#define SRV_SETUP_TIMEOUT_MS	30000		/* as the kernel server */
#define SRV_TICK_MS		50
#define SRV_OBSERVE_MS		3000
#define SRV_BATCH_WAIT_MS	200
#define SRV_MAX_LIES		32
#define SRV_DELAY_MS		5000		/* info-slow, reopen-slow */
#define SRV_MAX_SLOW		8		/* answers held back at once */
/* room after the last chunk for a reply that writes past its chunk */
#define SRV_SLACK		8192u

#define DISK_SECTORS		2048u		/* 1 MiB */
#define SECTOR_SIZE		512u
#define DISK_BYTES		(DISK_SECTORS * SECTOR_SIZE)

/* wr_id of our work requests: kind << 32 | slot */
enum wr_kind {
	WR_RECV = 1,
	WR_REPLY,
	WR_LIE,		/* a reply that lies */
	WR_TABLE,
	WR_HB,		/* our heartbeat */
	WR_AUTH,	/* a message of TRS_CAP_AUTH, either way */
};

#define WR_ID(kind, slot)	((uint64_t)(kind) << 32 | (uint32_t)(slot))
#define WR_KIND(id)		((unsigned int)((id) >> 32))
#define WR_SLOT(id)		((unsigned int)(id))

/* ---------------------------------------------------------------------- */
/* Modes                                                                  */

enum mode {
	M_HONEST,
	/* replies */
	M_SHORT_READ,
	M_EMPTY_READ,
	M_IDLE_SLOT,
	M_DUP_REPLY,
	M_LATE_REPLY,
	M_WRONG_CONN,
	M_SLOT_OUT_OF_RANGE,
	M_BAD_TYPE,
	M_BATCH_UNASKED,
	M_HUGE_STATUS,
	M_READ_OVERFLOW,
	/* accept */
	M_QD_ZERO,
	M_QD_HUGE,
	M_IO_SIZE_BAD,
	M_SEGS_ZERO,
	M_CAPS_UNKNOWN,
	M_RESERVED_NONZERO,
	M_KEY_MISMATCH,
	M_VERSION_MINOR,
	M_VERSION_MAJOR,
	M_HB_SILENT,
	/* chunk table */
	M_TABLE_SHORT,
	M_TABLE_COUNT,
	M_TABLE_MAGIC,
	M_TABLE_CHUNK_SIZE,
	M_TABLE_WRAP,
	M_TABLE_RKEY_BOGUS,
	M_TABLE_TWICE,
	M_TABLE_NEVER,
	/* handshake and OPEN */
	M_DISCONNECT_HANDSHAKE,
	M_REJECT_GARBAGE,
	M_REJECT_ERRNO,
	M_OPEN_RSP_LIE,
	M_OPEN_HANG,
	M_OPEN_ERRNO,
	M_REOPEN_ERRNO,
	M_REOPEN_SLOW,
	/* device size */
	M_INFO_SLOW,
	/* the exchange of TRS_CAP_AUTH */
	M_AUTH_WRONG_KEY,
	M_AUTH_KEYLESS,
	NR_MODES
};

static const struct {
	const char *name;
	const char *help;
} modes[NR_MODES] = {
	[M_HONEST]		= { "honest", "no lie: the baseline" },
	[M_SHORT_READ]		= { "short-read", "every IO READ: status 0 with data_len-512 bytes (0 of 512)" },
	[M_EMPTY_READ]		= { "empty-read", "every IO READ: status 0 with 0 bytes" },
	[M_IDLE_SLOT]		= { "idle-slot", "first IO: correct reply, then a reply for a slot with nothing in flight" },
	[M_DUP_REPLY]		= { "dup-reply", "first IO: the reply twice" },
	[M_LATE_REPLY]		= { "late-reply", "first IO READ's reply sent again once its slot carries a READ of the same length" },
	[M_WRONG_CONN]		= { "wrong-conn", "first IO: answered on another connection (needs >= 2)" },
	[M_SLOT_OUT_OF_RANGE]	= { "slot-out-of-range", "first IO: reply names slot queue_depth, one past the last" },
	[M_BAD_TYPE]		= { "bad-type", "first IO: reply imm type 0,1,3,5..15 (next one each session)" },
	[M_BATCH_UNASKED]	= { "batch-unasked", "two zero-length successes answered with one RSP_BATCH though caps 0" },
	[M_HUGE_STATUS]		= { "huge-status", "every IO: status 4095" },
	[M_READ_OVERFLOW]	= { "read-overflow", "first IO READ: data_len+4096 bytes written" },
	[M_QD_ZERO]		= { "qd-zero", "accept: queue_depth 0" },
	[M_QD_HUGE]		= { "qd-huge", "accept: queue_depth 65535 (more than asked)" },
	[M_IO_SIZE_BAD]		= { "io-size-bad", "accept: max_io_size 0, 1000 or 16 MiB (next one each session)" },
	[M_SEGS_ZERO]		= { "segs-zero", "accept: max_segments 0" },
	[M_CAPS_UNKNOWN]	= { "caps-unknown", "accept: caps 0x80000000" },
	[M_RESERVED_NONZERO]	= { "reserved-nonzero", "accept: reserved0 1" },
	[M_KEY_MISMATCH]	= { "key-mismatch", "accept of connection 1: another sess_key than connection 0's" },
	[M_VERSION_MINOR]	= { "version-minor", "accept: ver_minor 99 (legal: should work)" },
	[M_VERSION_MAJOR]	= { "version-major", "accept: ver_major 2" },
	[M_HB_SILENT]		= { "hb-silent", "accept: grant TRS_CAP_HEARTBEAT, never send one" },
	[M_TABLE_SHORT]		= { "table-short", "chunk table: 8 bytes fewer than count needs" },
	[M_TABLE_COUNT]		= { "table-count", "chunk table: count queue_depth+1" },
	[M_TABLE_MAGIC]		= { "table-magic", "chunk table: bad magic" },
	[M_TABLE_CHUNK_SIZE]	= { "table-chunk-size", "chunk table: chunk_size 4096 too small" },
	[M_TABLE_WRAP]		= { "table-wrap", "chunk table: last chunk at 2^64-4096 (wraps)" },
	[M_TABLE_RKEY_BOGUS]	= { "table-rkey-bogus", "chunk table: random rkeys" },
	[M_TABLE_TWICE]		= { "table-twice", "chunk table: sent twice" },
	[M_TABLE_NEVER]		= { "table-never", "chunk table: never sent" },
	[M_DISCONNECT_HANDSHAKE] = { "disconnect-handshake", "disconnect once conn 0 is up, once conn 1 is up, or right after the table (next one each session)" },
	[M_REJECT_GARBAGE]	= { "reject-garbage", "reject conn 0 with garbage private data (next variant each session)" },
	[M_REJECT_ERRNO]	= { "reject-errno", "reject conn 0: status 512 or --errno" },
	[M_OPEN_RSP_LIE]	= { "open-rsp-lie", "every OPEN: logical_block_size 3, nsectors 2^62 or reserved bytes set (in turn)" },
	[M_OPEN_HANG]		= { "open-hang", "every OPEN: never answered" },
	[M_OPEN_ERRNO]		= { "open-errno", "every OPEN: status 4095, 512 (ERESTARTSYS), 513 (ERESTARTNOINTR) or 104 (ECONNRESET) in turn, or --errno" },
	[M_REOPEN_ERRNO]	= { "reopen-errno", "odd sessions: honest, dropped 2 s after their first OPEN; even ones: OPEN answered with ECONNRESET (or --errno)" },
	[M_REOPEN_SLOW]		= { "reopen-slow", "SIGUSR1 drops every session; each OPEN of a later session answered after --delay-ms" },
	[M_INFO_SLOW]		= { "info-slow", "heartbeats with TRS_CAP_NOTICE; SIGUSR1: the next one carries TRS_HB_NOTICE; each INFO answered after --delay-ms" },
	[M_AUTH_WRONG_KEY]	= { "auth-wrong-key", "grant TRS_CAP_AUTH; CHALLENGE with a proof made with another key than the host's" },
	[M_AUTH_KEYLESS]	= { "auth-keyless", "grant TRS_CAP_AUTH; CHALLENGE without a proof, as for a host without a key" },
};

#define M_CYCLE		NR_MODES	/* --mode cycle */

/* sessions of each mode so far: picks the variant of a lie */
static unsigned int mode_uses[NR_MODES];

/* ---------------------------------------------------------------------- */
/* Options and state                                                      */

static struct {
	const char *addr;
	unsigned int port;
	unsigned int mode;		/* enum mode or M_CYCLE */
	unsigned long sessions;		/* stop after this many ended; 0: never */
	unsigned long honest_after;	/* later sessions are honest; 0: none */
	unsigned int observe_ms;
	unsigned int errno_val;		/* open-, reopen-, reject-errno */
	unsigned int delay_ms;		/* info-slow, reopen-slow */
	bool no_slot_gen;		/* refuse TRS_CAP_SLOT_GEN */
	uint64_t seed;
} opt = {
	.addr		= "0.0.0.0",
	.port		= SRV_DEFAULT_PORT,
	.mode		= M_HONEST,
	.observe_ms	= SRV_OBSERVE_MS,
	.delay_ms	= SRV_DELAY_MS,
};

static atomic_int stop;
/* SIGUSR1: reopen-slow drops its sessions, info-slow sends a notice */
static atomic_int usr1;
static struct rdma_event_channel *cm_ch;
static struct rdma_cm_id *listen_id;
static struct sess *sessions;
static unsigned long nr_sessions;	/* started (numbered from 1) */
static unsigned long nr_ended;
static unsigned int cycle_next;
static uint64_t rng_state;
/* the device: shared by all sessions, so data survives a reconnect */
static uint8_t disk[DISK_BYTES];

struct conn {
	struct sess		*sess;
	unsigned int		idx;
	struct rdma_cm_id	*id;
	struct ibv_cq		*cq;
	bool			established;
	unsigned int		sq_out;
	unsigned int		sq_max;
};

/* a reply to post: what goes in the RDMA_WRITE_WITH_IMM */
struct rsp {
	struct conn		*conn;
	unsigned int		slot;	/* for the wr_id and the logs */
	uint32_t		imm;	/* host order */
	uint32_t		len;
	uint64_t		raddr;
	uint32_t		rkey;
	const uint8_t		*src;	/* in the session's MR */
};

/* a lie told, waiting for its outcome */
struct lie {
	bool			used;
	char			key[24];
	char			what[200];
	unsigned int		more;	/* like ones told while this waits */
	int64_t			t0;
	unsigned int		window_ms;	/* 0: until the session ends */
	uint64_t		reqs0;
};

/* a request being served */
struct req {
	struct conn		*conn;
	unsigned int		slot;
	unsigned int		tag;	/* slot field; the reply echoes it */
	uint32_t		hdr_len;
	uint32_t		byte_len;
	struct trs_msg_req	th;
	uint8_t			usr[TRS_MAX_USR_HDR];
	uint32_t		usr_len;
	uint32_t		data_len;
	uint16_t		type;	/* RNBD_MSG_*, 0 if not parsed */
	uint8_t			op;	/* RNBD_OP_* of an IO */
	uint64_t		sector;	/* of an IO */
};

struct sess {
	struct sess		*next;
	unsigned long		no;
	enum mode		mode;
	unsigned int		variant;
	char			peer[INET6_ADDRSTRLEN + 8];
	uint8_t			uuid[16];
	struct trs_msg_conn_rsp	rsp;	/* the honest accept */
	uint32_t		client_caps;
	unsigned int		client_max_qd;

	struct ibv_context	*verbs;
	struct ibv_pd		*pd;
	struct ibv_comp_channel	*ch;
	struct ibv_mr		*mr;
	uint8_t			*buf;
	size_t			buf_len;
	size_t			stash_off;	/* max_io_size bytes */
	size_t			ctl_off;	/* chunk table */
	size_t			ctl_len;

	unsigned int		qd;
	uint32_t		max_io_size;
	uint32_t		chunk_size;
	uint8_t			*busy;		/* per slot */

	unsigned int		conn_cnt;
	unsigned int		nr_established;
	struct conn		*conns;
	bool			table_sent;
	bool			hb;		/* heartbeats granted */
	bool			slot_gen;	/* TRS_CAP_SLOT_GEN granted */
	bool			auth;		/* TRS_CAP_AUTH granted */
	unsigned int		auth_msgs;	/* HELLO, PROOF received */
	size_t			auth_off;	/* their buffers, and ours */
	uint64_t		hb_rx;

	bool			closing;
	char			why[200];
	int64_t			t_start;
	int64_t			t_open;
	uint64_t		nr_reqs;
	unsigned int		nr_lies;

	/* lie state */
	bool			lie_done;	/* the once-per-session lie */
	bool			late_valid;	/* late-reply: the reply to send again */
	struct rsp		late;
	int64_t			late_t;
	bool			batch_valid;	/* batch-unasked: a held success */
	unsigned int		batch_slot;
	unsigned int		batch_tag;
	struct conn		*batch_conn;
	int64_t			batch_t;
	int64_t			drop_at;	/* reopen-errno: when we hang up */
	/* info-slow */
	uint64_t		hb_tx;		/* heartbeats sent */
	int64_t			hb_next;	/* when the next one goes */
	bool			hb_busy;	/* one in flight */
	bool			notice;		/* the next one carries a notice */
	bool			notice_on;	/* TRS_CAP_NOTICE granted */
	/* info-slow, reopen-slow: answers held back until their time */
	struct {
		bool		used;
		int64_t		due;
		int64_t		t0;
		struct req	r;
		uint32_t	len;
	} slow[SRV_MAX_SLOW];
	struct lie		lies[SRV_MAX_LIES];
};

/* ---------------------------------------------------------------------- */
/* Helpers                                                                */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static void rnd_bytes(void *p, size_t len)
{
	uint8_t *b = p;

	while (len--)
		*b++ = (uint8_t)rnd();
}

static const char *mode_name(unsigned int m)
{
	return m == M_CYCLE ? "cycle" : modes[m].name;
}

static void say(const struct sess *s, const char *fmt, ...)
	wire_attr(format(printf, 2, 3));

/* One line: "session N mode M: ..." */
static void say(const struct sess *s, const char *fmt, ...)
{
	va_list ap;

	printf("session %lu mode %s: ", s->no, modes[s->mode].name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void note(const char *fmt, ...) wire_attr(format(printf, 1, 2));

/* A line about no session in particular. */
static void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static const char *errno_name(int err)
{
	switch (err) {
	case 0:			return "0";
	case EINVAL:		return "EINVAL";
	case EPROTO:		return "EPROTO";
	case ENODEV:		return "ENODEV";
	case EOPNOTSUPP:	return "EOPNOTSUPP";
	case ENOTCONN:		return "ENOTCONN";
	case ENOMEM:		return "ENOMEM";
	case EAGAIN:		return "EAGAIN";
	case EEXIST:		return "EEXIST";
	case ENOENT:		return "ENOENT";
	case EBUSY:		return "EBUSY";
	case EPROTONOSUPPORT:	return "EPROTONOSUPPORT";
	case EPERM:		return "EPERM";
	case ENOSPC:		return "ENOSPC";
	default:		return "errno";
	}
}

static uint8_t *chunk(const struct sess *s, unsigned int slot)
{
	return s->buf + (size_t)slot * s->chunk_size;
}

static uint8_t *chunk_data(const struct sess *s, unsigned int slot)
{
	return chunk(s, slot) + TRS_HDR_AREA;
}

static const char *req_name(const struct req *r)
{
	static const char *const ops[] = { "READ", "WRITE", "FLUSH", "DISCARD",
					   "WRITE_ZEROES" };

	switch (r->type) {
	case RNBD_MSG_OPEN:
		return "OPEN";
	case RNBD_MSG_CLOSE:
		return "CLOSE";
	case RNBD_MSG_INFO:
		return "INFO";
	case RNBD_MSG_IO:
		return r->op < 5 ? ops[r->op] : "IO(bad op)";
	default:
		return "request";
	}
}

/* Close the session from the main loop, once; @why is logged. */
static void sess_fail(struct sess *s, const char *fmt, ...)
	wire_attr(format(printf, 2, 3));

static void sess_fail(struct sess *s, const char *fmt, ...)
{
	va_list ap;

	if (s->closing)
		return;
	s->closing = true;
	va_start(ap, fmt);
	vsnprintf(s->why, sizeof(s->why), fmt, ap);
	va_end(ap);
}

/* ---------------------------------------------------------------------- */
/* Lies and their outcome                                                 */

/*
 * Record a lie just told.  Its line is printed with the outcome once
 * @window_ms passed (the client kept going) or the session ended; like
 * lies (same @key) told meanwhile are counted on the first one.
 */
static void lie(struct sess *s, const char *key, unsigned int window_ms,
		const char *fmt, ...) wire_attr(format(printf, 4, 5));

static void lie(struct sess *s, const char *key, unsigned int window_ms,
		const char *fmt, ...)
{
	struct lie *l = NULL;
	va_list ap;
	unsigned int i;

	s->nr_lies++;
	for (i = 0; i < SRV_MAX_LIES; i++) {
		if (s->lies[i].used && !strcmp(s->lies[i].key, key)) {
			s->lies[i].more++;
			return;
		}
		if (!s->lies[i].used && !l)
			l = &s->lies[i];
	}
	if (!l) {
		/* too many at once: print without outcome */
		printf("session %lu mode %s: ", s->no, modes[s->mode].name);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf(" -> (outcome not tracked)\n");
		return;
	}
	memset(l, 0, sizeof(*l));
	l->used = true;
	snprintf(l->key, sizeof(l->key), "%s", key);
	va_start(ap, fmt);
	vsnprintf(l->what, sizeof(l->what), fmt, ap);
	va_end(ap);
	l->t0 = now_ms();
	l->window_ms = window_ms;
	l->reqs0 = s->nr_reqs;
}

static void lie_print(struct sess *s, struct lie *l, const char *outcome)
{
	char more[48] = "";

	if (l->more)
		snprintf(more, sizeof(more), " (and %u more like it)", l->more);
	say(s, "%s%s -> %s", l->what, more, outcome);
	l->used = false;
}

/* The window of each lie that has one: the client kept going. */
static void lies_tick(struct sess *s, int64_t now)
{
	char out[160];
	unsigned int i;

	for (i = 0; i < SRV_MAX_LIES; i++) {
		struct lie *l = &s->lies[i];

		if (!l->used || !l->window_ms ||
		    now - l->t0 < (int64_t)l->window_ms)
			continue;
		snprintf(out, sizeof(out),
			 "client kept going: still connected after %u ms, %" PRIu64 " requests since",
			 l->window_ms, s->nr_reqs - l->reqs0);
		lie_print(s, l, out);
	}
}

/* The session ended: every lie still waiting gets that outcome. */
static void lies_end(struct sess *s, int64_t now)
{
	char out[320];
	unsigned int i;

	for (i = 0; i < SRV_MAX_LIES; i++) {
		struct lie *l = &s->lies[i];

		if (!l->used)
			continue;
		snprintf(out, sizeof(out),
			 "session ended %" PRId64 " ms later: %s; %" PRIu64 " requests since",
			 now - l->t0, s->why, s->nr_reqs - l->reqs0);
		lie_print(s, l, out);
	}
}

/* ---------------------------------------------------------------------- */
/* Posting                                                                */

static int post_recv(struct conn *c)
{
	struct ibv_recv_wr wr = { .wr_id = WR_ID(WR_RECV, 0) }, *bad;

	return ibv_post_recv(c->id->qp, &wr, &bad);
}

/* Post one RDMA_WRITE_WITH_IMM; every send is signaled. */
static int post_rsp(struct sess *s, const struct rsp *r, enum wr_kind kind)
{
	struct conn *c = r->conn;
	struct ibv_sge sge = {
		.addr	= (uintptr_t)r->src,
		.length	= r->len,
		.lkey	= s->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id		= WR_ID(kind, r->slot),
		.sg_list	= &sge,
		.num_sge	= r->len ? 1 : 0,
		.opcode		= IBV_WR_RDMA_WRITE_WITH_IMM,
		.send_flags	= IBV_SEND_SIGNALED,
		.imm_data	= htonl(r->imm),
	}, *bad;
	int err;

	if (s->closing)
		return 0;
	if (c->sq_out >= c->sq_max) {
		sess_fail(s, "our send queue on conn %u is full", c->idx);
		return -1;
	}
	wr.wr.rdma.remote_addr = r->len ? r->raddr : 0;
	wr.wr.rdma.rkey = r->len ? r->rkey : 0;
	err = ibv_post_send(c->id->qp, &wr, &bad);
	if (err) {
		sess_fail(s, "posting a reply on conn %u failed: %s", c->idx,
			  strerror(err));
		return -1;
	}
	c->sq_out++;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Session setup and teardown                                             */

static struct sess *sess_find(const uint8_t *uuid)
{
	struct sess *s;

	for (s = sessions; s; s = s->next)
		if (!s->closing && !memcmp(s->uuid, uuid, sizeof(s->uuid)))
			return s;
	return NULL;
}

static void sess_destroy(struct sess *s)
{
	unsigned int i, n = s->conns ? s->conn_cnt : 0;

	for (i = 0; i < n; i++)
		if (s->conns[i].id)
			rdma_disconnect(s->conns[i].id);
	for (i = 0; i < n; i++) {
		struct conn *c = &s->conns[i];

		if (c->id && c->id->qp)
			rdma_destroy_qp(c->id);
		if (c->cq)
			ibv_destroy_cq(c->cq);
	}
	if (s->mr)
		ibv_dereg_mr(s->mr);
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	if (s->ch)
		ibv_destroy_comp_channel(s->ch);
	for (i = 0; i < n; i++)
		if (s->conns[i].id)
			rdma_destroy_id(s->conns[i].id);
	free(s->conns);
	free(s->busy);
	free(s->buf);
	free(s);
}

/* Print the end of every closing session and free it. */
static void sess_reap(void)
{
	struct sess **p = &sessions, *s;
	int64_t now = now_ms();

	while ((s = *p)) {
		if (!s->closing) {
			p = &s->next;
			continue;
		}
		*p = s->next;
		if (s->late_valid && s->mode == M_LATE_REPLY)
			say(s, "the reply to slot %u was never sent again: the slot carried no new request",
			    s->late.slot);
		lies_end(s, now);
		if (s->hb)
			say(s, "%" PRIu64 " heartbeats received from the client, %" PRIu64 " sent",
			    s->hb_rx, s->hb_tx);
		say(s, "ended after %" PRId64 " ms: %s (%" PRIu64 " requests, %u lies)",
		    now - s->t_start, s->why, s->nr_reqs, s->nr_lies);
		sess_destroy(s);
		nr_ended++;
	}
}

/* PD, completion channel, chunks (one MR over all of them), slots. */
static int sess_dev_init(struct sess *s)
{
	size_t chunks = (size_t)s->qd * s->chunk_size;
	int flags;

	s->pd = ibv_alloc_pd(s->verbs);
	if (!s->pd)
		return -1;
	s->ch = ibv_create_comp_channel(s->verbs);
	if (!s->ch)
		return -1;
	flags = fcntl(s->ch->fd, F_GETFL);
	if (flags < 0 || fcntl(s->ch->fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -1;

	s->stash_off = chunks + SRV_SLACK;
	s->ctl_off = s->stash_off + s->max_io_size;
	s->ctl_len = 4096 + ((sizeof(struct trs_msg_chunks) +
			      (size_t)(s->qd + 1) * sizeof(struct trs_chunk_desc)
			      + 4095) & ~(size_t)4095);
	s->auth_off = s->ctl_off + s->ctl_len;
	s->buf_len = s->auth_off + 4096;
	if (posix_memalign((void **)&s->buf, 4096, s->buf_len)) {
		s->buf = NULL;
		errno = ENOMEM;
		return -1;
	}
	memset(s->buf, 0, s->buf_len);
	s->mr = ibv_reg_mr(s->pd, s->buf, s->buf_len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!s->mr)
		return -1;
	s->busy = calloc(s->qd, 1);
	if (!s->busy) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* CQ and QP of connection @idx on @id, its receives posted. */
static int conn_init(struct sess *s, unsigned int idx, struct rdma_cm_id *id)
{
	struct conn *c = &s->conns[idx];
	struct ibv_qp_init_attr attr = {};
	unsigned int recvs = s->qd + 1 + (!idx && s->hb ? TRS_HB_RECVS : 0);
	unsigned int i, auth = !idx && s->auth ? 2 : 0;

	c->sess = s;
	c->idx = idx;
	/* replies (some lies add one), the table (twice) on conn 0 */
	c->sq_max = 2 * s->qd + 16 + (idx ? 0 : 4);
	c->cq = ibv_create_cq(s->verbs, (int)(c->sq_max + recvs + 1), c,
			      s->ch, 0);
	if (!c->cq)
		return -1;
	if (ibv_req_notify_cq(c->cq, 0))
		return -1;
	attr.send_cq = c->cq;
	attr.recv_cq = c->cq;
	attr.qp_type = IBV_QPT_RC;
	attr.cap.max_send_wr = c->sq_max;
	attr.cap.max_recv_wr = recvs + auth + 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, s->pd, &attr))
		return -1;
	c->id = id;
	id->context = c;
	/* HELLO and PROOF land in the first two receives */
	for (i = 0; i < auth; i++) {
		struct ibv_sge sge = {
			.addr	= (uintptr_t)(s->buf + s->auth_off + 256 * i),
			.length	= 256,
			.lkey	= s->mr->lkey,
		};
		struct ibv_recv_wr wr = {
			.wr_id = WR_ID(WR_AUTH, i), .sg_list = &sge, .num_sge = 1,
		}, *bad;

		errno = ibv_post_recv(id->qp, &wr, &bad);
		if (errno)
			return -1;
	}
	for (i = 0; i < recvs; i++) {
		errno = post_recv(c);
		if (errno)
			return -1;
	}
	return 0;
}

static void reject(struct rdma_cm_id *id, int err, const char *why)
{
	struct trs_msg_conn_rsp rsp = {
		.magic		= htole16(TRS_MAGIC),
		.ver_major	= TRS_PROTO_VER_MAJOR,
		.ver_minor	= TRS_PROTO_VER_MINOR,
		.status		= htole16((uint16_t)err),
	};

	note("rejecting a connection: %s (%s)", why, errno_name(err));
	rdma_reject(id, &rsp, sizeof(rsp));
	rdma_destroy_id(id);
}

static void peer_name(struct rdma_cm_id *id, char *buf, size_t len)
{
	struct sockaddr *sa = rdma_get_peer_addr(id);
	char host[INET6_ADDRSTRLEN] = "?";

	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)sa)->sin_addr,
			  host, sizeof(host));
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)sa)->sin6_addr,
			  host, sizeof(host));
	snprintf(buf, len, "%s", host);
}

static enum mode next_mode(void)
{
	enum mode m;

	if (opt.mode != M_CYCLE)
		m = (enum mode)opt.mode;
	else
		m = (enum mode)(cycle_next++ % NR_MODES);
	if (opt.honest_after && nr_sessions > opt.honest_after)
		m = M_HONEST;
	return m;
}

static int accept_conn(struct sess *s, struct conn *c,
		       const struct trs_msg_conn_rsp *rsp)
{
	struct rdma_conn_param param = {
		.private_data		= rsp,
		.private_data_len	= sizeof(*rsp),
		.flow_control		= 1,
		.retry_count		= 7,
		.rnr_retry_count	= 7,
	};

	if (rdma_accept(c->id, &param)) {
		sess_fail(s, "rdma_accept of conn %u failed: %s", c->idx,
			  strerror(errno));
		return -1;
	}
	return 0;
}

static void accept_lie(struct sess *s, unsigned int idx,
		       struct trs_msg_conn_rsp *rsp);
static bool reject_lie(struct sess *s, struct rdma_cm_id *id);

/* Connection 0: a new session. */
static void on_connect0(struct rdma_cm_id *id, const struct trs_msg_conn_req *req)
{
	struct trs_msg_conn_rsp rsp;
	struct sess *s, *old;
	char uuid[40];
	unsigned int i;

	old = sess_find(req->sess_uuid);
	if (old) {
		if (memcmp(old->rsp.sess_key, req->sess_key, TRS_SESS_KEY_LEN)) {
			reject(id, EEXIST, "conn 0 of a session we have, without its key");
			return;
		}
		sess_fail(old, "the client reconnected (conn 0 with this session's uuid and key)");
		reject(id, EAGAIN, "conn 0 replaces a session we still have: closing it");
		return;
	}

	s = calloc(1, sizeof(*s));
	if (!s) {
		reject(id, ENOMEM, "out of memory");
		return;
	}
	s->no = ++nr_sessions;
	s->mode = next_mode();
	s->variant = mode_uses[s->mode]++;
	s->t_start = now_ms();
	memcpy(s->uuid, req->sess_uuid, sizeof(s->uuid));
	peer_name(id, s->peer, sizeof(s->peer));
	s->conn_cnt = le16toh(req->conn_cnt);
	s->client_caps = le32toh(req->caps);
	s->client_max_qd = le16toh(req->max_queue_depth);
	for (i = 0; i < 4; i++)
		snprintf(uuid + 2 * i, sizeof(uuid) - 2 * i, "%02x",
			 s->uuid[i]);
	say(s, "conn 0 from %s, uuid %s..., %u connections, max queue depth %u, caps %#x",
	    s->peer, uuid, s->conn_cnt, s->client_max_qd, s->client_caps);

	/* counted as a session that ended at once */
	s->next = sessions;
	sessions = s;
	if (reject_lie(s, id))
		return;

	s->verbs = id->verbs;
	s->qd = s->client_max_qd < SRV_QUEUE_DEPTH ? s->client_max_qd :
						      SRV_QUEUE_DEPTH;
	s->max_io_size = SRV_MAX_IO_SIZE;
	s->chunk_size = TRS_HDR_AREA + s->max_io_size;
	s->hb = (s->mode == M_HB_SILENT || s->mode == M_INFO_SLOW) &&
		(s->client_caps & TRS_CAP_HEARTBEAT);
	s->notice_on = s->mode == M_INFO_SLOW && s->hb &&
		       (s->client_caps & TRS_CAP_NOTICE);
	/* as the kernel server: granted when asked */
	s->slot_gen = !opt.no_slot_gen &&
		      (s->client_caps & TRS_CAP_SLOT_GEN);
	s->auth = (s->mode == M_AUTH_WRONG_KEY || s->mode == M_AUTH_KEYLESS) &&
		  (s->client_caps & TRS_CAP_AUTH);
	s->rsp = (struct trs_msg_conn_rsp) {
		.magic		= htole16(TRS_MAGIC),
		.ver_major	= TRS_PROTO_VER_MAJOR,
		.ver_minor	= TRS_PROTO_VER_MINOR,
		.caps		= htole32((s->hb ? TRS_CAP_HEARTBEAT : 0) |
					  (s->notice_on ? TRS_CAP_NOTICE : 0) |
					  (s->slot_gen ? TRS_CAP_SLOT_GEN : 0) |
					  (s->auth ? TRS_CAP_AUTH : 0)),
		.queue_depth	= htole16((uint16_t)s->qd),
		.max_segments	= htole16((uint16_t)(s->max_io_size / 4096 + 1)),
		.max_io_size	= htole32(s->max_io_size),
	};
	if (getrandom(s->rsp.sess_key, sizeof(s->rsp.sess_key), 0) !=
	    (ssize_t)sizeof(s->rsp.sess_key))
		rnd_bytes(s->rsp.sess_key, sizeof(s->rsp.sess_key));

	s->conns = calloc(s->conn_cnt, sizeof(*s->conns));
	if (!s->conns || sess_dev_init(s) || conn_init(s, 0, id)) {
		sess_fail(s, "cannot set the session up: %s", strerror(errno));
		if (!s->conns || !s->conns[0].id)
			reject(id, ENOMEM, "cannot set the session up");
		return;
	}
	rsp = s->rsp;
	accept_lie(s, 0, &rsp);
	accept_conn(s, &s->conns[0], &rsp);
}

/* Connection 1..n-1: join its session. */
static void on_connect_more(struct rdma_cm_id *id,
			    const struct trs_msg_conn_req *req)
{
	unsigned int idx = le16toh(req->conn_idx);
	struct trs_msg_conn_rsp rsp;
	struct sess *s = sess_find(req->sess_uuid);

	if (!s || memcmp(s->rsp.sess_key, req->sess_key, TRS_SESS_KEY_LEN)) {
		reject(id, ENOENT, "conn > 0 of an unknown session or without its key");
		return;
	}
	if (le16toh(req->conn_cnt) != s->conn_cnt || id->verbs != s->verbs) {
		reject(id, EINVAL, "conn > 0 with another count or device");
		return;
	}
	if (s->conns[idx].id) {
		reject(id, EEXIST, "connection index already connected");
		return;
	}
	if (s->table_sent) {
		reject(id, EBUSY, "session already open");
		return;
	}
	if (conn_init(s, idx, id)) {
		sess_fail(s, "cannot set conn %u up: %s", idx, strerror(errno));
		if (!s->conns[idx].id)
			reject(id, ENOMEM, "cannot set the connection up");
		return;
	}
	rsp = s->rsp;
	accept_lie(s, idx, &rsp);
	accept_conn(s, &s->conns[idx], &rsp);
}

static void on_connect_request(struct rdma_cm_id *id, const void *pdata,
			       size_t len)
{
	struct trs_msg_conn_req req;
	unsigned int cnt, idx;

	if (!pdata || len < sizeof(req)) {
		reject(id, EINVAL, "short private data");
		return;
	}
	memcpy(&req, pdata, sizeof(req));
	if (le16toh(req.magic) != TRS_MAGIC) {
		reject(id, EINVAL, "bad magic");
		return;
	}
	if (req.ver_major != TRS_PROTO_VER_MAJOR) {
		reject(id, EPROTONOSUPPORT, "other major version");
		return;
	}
	cnt = le16toh(req.conn_cnt);
	idx = le16toh(req.conn_idx);
	if ((req.path_id && !(le32toh(req.caps) & TRS_CAP_MULTIPATH)) || !cnt || cnt > TRS_MAX_CONNS || idx >= cnt ||
	    !req.max_queue_depth) {
		reject(id, EINVAL, "malformed connect request");
		return;
	}
	if (idx)
		on_connect_more(id, &req);
	else
		on_connect0(id, &req);
}

/* ---------------------------------------------------------------------- */
/* The chunk table                                                        */

static void table_lie(struct sess *s, struct trs_msg_chunks *t, size_t *len);

static int post_table(struct sess *s)
{
	struct trs_msg_chunks *t = (void *)(s->buf + s->ctl_off);
	size_t len = sizeof(*t) + (size_t)s->qd * sizeof(t->desc[0]);
	struct conn *c = &s->conns[0];
	struct ibv_sge sge;
	struct ibv_send_wr wr = {
		.wr_id		= WR_ID(WR_TABLE, 0),
		.sg_list	= &sge,
		.num_sge	= 1,
		.opcode		= IBV_WR_SEND,
		.send_flags	= IBV_SEND_SIGNALED,
	}, *bad;
	unsigned int i;
	int err;

	memset(t, 0, s->ctl_len);
	t->magic = htole16(TRS_MAGIC);
	t->type = htole16(TRS_MSG_CHUNKS);
	t->count = htole16((uint16_t)s->qd);
	t->chunk_size = htole32(s->chunk_size);
	for (i = 0; i < s->qd; i++) {
		t->desc[i].addr = htole64((uintptr_t)chunk(s, i));
		t->desc[i].rkey = htole32(s->mr->rkey);
	}
	table_lie(s, t, &len);
	sge.addr = (uintptr_t)t;
	sge.length = (uint32_t)len;
	sge.lkey = s->mr->lkey;
	err = ibv_post_send(c->id->qp, &wr, &bad);
	if (err) {
		sess_fail(s, "posting the chunk table failed: %s", strerror(err));
		return -1;
	}
	c->sq_out++;
	return 0;
}

static void established_lie(struct sess *s, struct conn *c);
static void table_sent_lie(struct sess *s);
static void table_done_lie(struct sess *s);

static void on_established(struct conn *c)
{
	struct sess *s = c->sess;

	if (s->closing || c->established)
		return;
	c->established = true;
	s->nr_established++;
	established_lie(s, c);
	if (s->closing || s->nr_established < s->conn_cnt)
		return;
	if (s->mode == M_TABLE_NEVER) {
		/* the handshake timeout bounds it, as in the kernel server */
		lie(s, "table", 0, "all %u connections up: chunk table never sent",
		    s->conn_cnt);
		return;
	}
	if (post_table(s))
		return;
	s->table_sent = true;
	s->t_open = now_ms();
	say(s, "all %u connections up, queue depth %u: chunk table sent",
	    s->conn_cnt, s->qd);
	table_sent_lie(s);
}

/* ---------------------------------------------------------------------- */
/* Requests                                                               */

static void respond(struct sess *s, struct req *r, int status, uint32_t len);

/* The OPEN answer, into the slot's data area. */
static void open_rsp_fill(struct sess *s, struct req *r)
{
	struct rnbd_msg_open_rsp rsp = {
		.dev_id			= htole32(1),
		.nsectors		= htole64(DISK_SECTORS),
		.max_hw_sectors		= htole32(256),
		.logical_block_size	= htole16(SECTOR_SIZE),
		.physical_block_size	= htole16(SECTOR_SIZE),
		.max_segments		= htole16(128),
	};

	memcpy(chunk_data(s, r->slot), &rsp, sizeof(rsp));
}

static bool open_lie(struct sess *s, struct req *r);
static void late_lie(struct sess *s, const struct req *r);

/*
 * info-slow, reopen-slow: answer @r (its answer of @len bytes is in its
 * slot's data area already) after --delay-ms, from sess_tick().  With no
 * room left it is answered now.
 */
static void slow_add(struct sess *s, struct req *r, uint32_t len)
{
	unsigned int i;

	for (i = 0; i < SRV_MAX_SLOW; i++) {
		if (s->slow[i].used)
			continue;
		s->slow[i].used = true;
		s->slow[i].t0 = now_ms();
		s->slow[i].due = s->slow[i].t0 + opt.delay_ms;
		s->slow[i].r = *r;
		s->slow[i].len = len;
		lie(s, req_name(r), 0, "%s on slot %u: answer held back %u ms",
		    req_name(r), r->slot, opt.delay_ms);
		/* printed now too: a test waits for it to act meanwhile */
		say(s, "%s on slot %u: answer held back %u ms", req_name(r),
		    r->slot, opt.delay_ms);
		return;
	}
	say(s, "%s on slot %u: no room to hold it back: answered now",
	    req_name(r), r->slot);
	respond(s, r, 0, len);
}

/* The held-back answers whose time has come. */
static void slow_tick(struct sess *s, int64_t now)
{
	unsigned int i;

	for (i = 0; i < SRV_MAX_SLOW; i++) {
		if (!s->slow[i].used || now < s->slow[i].due)
			continue;
		s->slow[i].used = false;
		say(s, "%s on slot %u answered after %" PRId64 " ms",
		    req_name(&s->slow[i].r), s->slow[i].r.slot,
		    now - s->slow[i].t0);
		respond(s, &s->slow[i].r, 0, s->slow[i].len);
	}
}

/* INFO: what the device is like now (the OPEN answer again). */
static void serve_info(struct sess *s, struct req *r)
{
	struct rnbd_msg_info msg;

	if (r->usr_len != sizeof(msg) || r->th.dir != TRS_DIR_READ ||
	    r->data_len < sizeof(struct rnbd_msg_open_rsp)) {
		respond(s, r, EPROTO, 0);
		return;
	}
	memcpy(&msg, r->usr, sizeof(msg));
	if (le32toh(msg.dev_id) != 1) {
		respond(s, r, ENODEV, 0);
		return;
	}
	open_rsp_fill(s, r);
	if (s->mode == M_INFO_SLOW) {
		slow_add(s, r, sizeof(struct rnbd_msg_open_rsp));
		return;
	}
	say(s, "INFO dev_id 1 on slot %u: 1 MiB", r->slot);
	respond(s, r, 0, sizeof(struct rnbd_msg_open_rsp));
}

static void serve_open(struct sess *s, struct req *r)
{
	struct rnbd_msg_open msg;

	if (r->usr_len != sizeof(msg) || r->th.dir != TRS_DIR_READ ||
	    r->data_len < sizeof(struct rnbd_msg_open_rsp)) {
		respond(s, r, EPROTO, 0);
		return;
	}
	memcpy(&msg, r->usr, sizeof(msg));
	msg.path[RNBD_PATH_MAX - 1] = 0;
	if (open_lie(s, r))
		return;
	open_rsp_fill(s, r);
	say(s, "OPEN %s (%s) on slot %u: dev_id 1, 1 MiB", msg.path,
	    msg.access_mode == RNBD_ACCESS_RO ? "ro" : "rw", r->slot);
	respond(s, r, 0, sizeof(struct rnbd_msg_open_rsp));
}

static void serve_close(struct sess *s, struct req *r)
{
	struct rnbd_msg_close msg;

	if (r->usr_len != sizeof(msg) || r->th.dir != TRS_DIR_NONE) {
		respond(s, r, EPROTO, 0);
		return;
	}
	memcpy(&msg, r->usr, sizeof(msg));
	if (le32toh(msg.dev_id) != 1) {
		respond(s, r, ENODEV, 0);
		return;
	}
	say(s, "CLOSE dev_id 1 on slot %u", r->slot);
	respond(s, r, 0, 0);
}

static void serve_io(struct sess *s, struct req *r)
{
	struct rnbd_msg_io msg;
	uint64_t sector, off;
	uint32_t len;
	uint8_t dir;

	if (r->usr_len != sizeof(msg)) {
		respond(s, r, EPROTO, 0);
		return;
	}
	memcpy(&msg, r->usr, sizeof(msg));
	r->op = msg.op;
	if (le32toh(msg.dev_id) != 1) {
		respond(s, r, ENODEV, 0);
		return;
	}
	len = le32toh(msg.len);
	sector = le64toh(msg.sector);
	r->sector = sector;
	switch (msg.op) {
	case RNBD_OP_READ:
		dir = TRS_DIR_READ;
		break;
	case RNBD_OP_WRITE:
		dir = TRS_DIR_WRITE;
		break;
	case RNBD_OP_FLUSH:
	case RNBD_OP_DISCARD:
	case RNBD_OP_WRITE_ZEROES:
		dir = TRS_DIR_NONE;
		break;
	default:
		respond(s, r, EOPNOTSUPP, 0);
		return;
	}
	if (msg.flags & ~RNBD_F_ALL) {
		respond(s, r, EOPNOTSUPP, 0);
		return;
	}
	if (r->th.dir != dir ||
	    (dir == TRS_DIR_NONE ? r->data_len != 0 : len != r->data_len)) {
		respond(s, r, EPROTO, 0);
		return;
	}
	if (msg.op == RNBD_OP_FLUSH) {
		respond(s, r, len ? EINVAL : 0, 0);
		return;
	}
	if (!len || len % SECTOR_SIZE || sector > DISK_SECTORS ||
	    len / SECTOR_SIZE > DISK_SECTORS - sector) {
		respond(s, r, EINVAL, 0);
		return;
	}
	off = sector * SECTOR_SIZE;
	switch (msg.op) {
	case RNBD_OP_READ:
		late_lie(s, r);
		memcpy(chunk_data(s, r->slot), disk + off, len);
		respond(s, r, 0, len);
		return;
	case RNBD_OP_WRITE:
		memcpy(disk + off, chunk_data(s, r->slot), len);
		break;
	default:
		memset(disk + off, 0, len);
		break;
	}
	respond(s, r, 0, 0);
}

/* Check the transport header as the kernel server does; fill @r. */
static int parse_req(struct sess *s, struct req *r)
{
	const uint8_t *hdr;

	if (r->hdr_len <= sizeof(r->th) ||
	    r->hdr_len > sizeof(r->th) + TRS_MAX_USR_HDR)
		return -EINVAL;
	hdr = chunk(s, r->slot) + TRS_HDR_AREA - r->hdr_len;
	memcpy(&r->th, hdr, sizeof(r->th));
	r->data_len = le32toh(r->th.data_len);
	if (r->th.reserved0[0] || r->th.reserved0[1] || r->th.reserved1 ||
	    r->data_len > s->max_io_size || r->th.flags)
		return -EINVAL;
	switch (r->th.dir) {
	case TRS_DIR_NONE:
		if (r->data_len || r->th.addr || r->th.rkey ||
		    r->byte_len != r->hdr_len)
			return -EINVAL;
		break;
	case TRS_DIR_WRITE:
		if (!r->data_len || r->th.addr || r->th.rkey ||
		    r->byte_len != r->hdr_len + r->data_len)
			return -EINVAL;
		break;
	case TRS_DIR_READ:
		if (!r->data_len || !r->th.addr || !r->th.rkey ||
		    r->byte_len != r->hdr_len)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	r->usr_len = r->hdr_len - sizeof(r->th);
	memcpy(r->usr, hdr + sizeof(r->th), r->usr_len);
	return 0;
}

static void serve(struct sess *s, struct req *r)
{
	struct rnbd_msg_hdr h;
	int err;

	err = parse_req(s, r);
	if (err) {
		say(s, "malformed request on slot %u (hdr_len %u, %u bytes): EINVAL",
		    r->slot, r->hdr_len, r->byte_len);
		respond(s, r, -err, 0);
		return;
	}
	if (!s->table_sent) {
		respond(s, r, ENOTCONN, 0);
		return;
	}
	if (r->usr_len < sizeof(h)) {
		respond(s, r, EPROTO, 0);
		return;
	}
	memcpy(&h, r->usr, sizeof(h));
	r->type = le16toh(h.type);
	if (h.version != RNBD_PROTO_VER || h.reserved) {
		respond(s, r, EPROTO, 0);
		return;
	}
	switch (r->type) {
	case RNBD_MSG_OPEN:
		serve_open(s, r);
		break;
	case RNBD_MSG_CLOSE:
		serve_close(s, r);
		break;
	case RNBD_MSG_INFO:
		serve_info(s, r);
		break;
	case RNBD_MSG_IO:
		serve_io(s, r);
		break;
	default:
		respond(s, r, EOPNOTSUPP, 0);
		break;
	}
}

static void batch_tick(struct sess *s, int64_t now);

static void on_recv(struct conn *c, const struct ibv_wc *wc)
{
	struct sess *s = c->sess;
	struct req r = { .conn = c };
	uint32_t imm;
	int err;

	err = post_recv(c);
	if (err) {
		sess_fail(s, "reposting a receive on conn %u failed: %s",
			  c->idx, strerror(err));
		return;
	}
	if (wc->opcode == IBV_WC_RECV && c->idx == 0 && s->hb &&
	    (wc->wc_flags & IBV_WC_WITH_IMM) && !wc->byte_len &&
	    ntohl(wc->imm_data) == trs_imm_pack(TRS_IMM_HB, 0, 0)) {
		s->hb_rx++;
		return;
	}
	if (wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
	    !(wc->wc_flags & IBV_WC_WITH_IMM)) {
		sess_fail(s, "protocol violation by the client on conn %u: opcode %d, %u bytes",
			  c->idx, wc->opcode, wc->byte_len);
		return;
	}
	imm = ntohl(wc->imm_data);
	r.tag = trs_imm_slot(imm);
	r.slot = s->slot_gen ? trs_tag_idx(r.tag) : r.tag;
	r.hdr_len = trs_imm_arg(imm);
	r.byte_len = wc->byte_len;
	if (trs_imm_type(imm) != TRS_IMM_REQ || r.slot >= s->qd ||
	    s->busy[r.slot]) {
		sess_fail(s, "protocol violation by the client on conn %u: imm %#x (%s)",
			  c->idx, imm, r.slot < s->qd && s->busy[r.slot] ?
			  "busy slot" : "bad immediate");
		return;
	}
	s->nr_reqs++;
	s->busy[r.slot] = 1;
	serve(s, &r);
}

/*
 * HELLO: the CHALLENGE of the mode, with a proof that no key of the
 * client's verifies (auth-wrong-key) or none (auth-keyless); PROOF: noted,
 * and the session goes on as an honest one.
 */
static void on_auth(struct sess *s, const struct ibv_wc *wc)
{
	struct trs_msg_hello *h = (void *)(s->buf + s->auth_off);
	struct trs_msg_challenge *ch = (void *)(s->buf + s->auth_off + 512);
	struct conn *c = &s->conns[0];
	struct ibv_sge sge = {
		.addr	= (uintptr_t)ch,
		.length	= sizeof(*ch),
		.lkey	= s->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id		= WR_ID(WR_AUTH, 2),
		.sg_list	= &sge,
		.num_sge	= 1,
		.opcode		= IBV_WR_SEND,
		.send_flags	= IBV_SEND_SIGNALED,
	}, *bad;
	char host[TRS_HOSTNAME_LEN + 1] = "";
	int err;

	if (s->auth_msgs++) {
		say(s, "PROOF of %u bytes", wc->byte_len);
		return;
	}
	if (wc->byte_len != sizeof(*h) || le16toh(h->type) != TRS_MSG_HELLO) {
		sess_fail(s, "not a HELLO: %u bytes", wc->byte_len);
		return;
	}
	memcpy(host, h->hostname, TRS_HOSTNAME_LEN);
	memset(ch, 0, sizeof(*ch));
	ch->magic = htole16(TRS_MAGIC);
	ch->type = htole16(TRS_MSG_CHALLENGE);
	rnd_bytes(ch->nonce, sizeof(ch->nonce));
	if (s->mode == M_AUTH_WRONG_KEY) {
		ch->flags = htole16(TRS_CHAL_F_KEY);
		rnd_bytes(ch->mac, sizeof(ch->mac));
	}
	err = ibv_post_send(c->id->qp, &wr, &bad);
	if (err) {
		sess_fail(s, "posting the CHALLENGE failed: %s", strerror(err));
		return;
	}
	c->sq_out++;
	lie(s, "auth", 0, "HELLO of host %s%s: CHALLENGE %s", host,
	    h->key_id[0] || memcmp(h->key_id, h->key_id + 1, TRS_KEY_ID_LEN - 1) ?
	    " (with a key)" : "",
	    s->mode == M_AUTH_WRONG_KEY ? "with a proof of another key" :
	    "without a proof");
}

static void on_wc(struct conn *c, const struct ibv_wc *wc)
{
	struct sess *s = c->sess;
	unsigned int kind = WR_KIND(wc->wr_id);
	static const char *const kinds[] = {
		[WR_RECV] = "receive", [WR_REPLY] = "reply",
		[WR_LIE] = "lying reply", [WR_TABLE] = "chunk table",
		[WR_HB] = "heartbeat",
	};

	if (kind != WR_RECV && !(kind == WR_AUTH && WR_SLOT(wc->wr_id) < 2) &&
	    c->sq_out)
		c->sq_out--;
	if (wc->status != IBV_WC_SUCCESS) {
		if (s->closing)
			return;
		if (kind == WR_RECV && wc->status == IBV_WC_WR_FLUSH_ERR)
			sess_fail(s, "our receives on conn %u were flushed (QP in error)",
				  c->idx);
		else if (kind == WR_RECV)
			sess_fail(s, "a receive on conn %u completed with error: %s (vendor error %#x): the client's request was refused by our HCA",
				  c->idx, ibv_wc_status_str(wc->status),
				  wc->vendor_err);
		else
			sess_fail(s, "our %s (slot %u) on conn %u failed: %s (vendor error %#x)",
				  kind <= WR_HB && kinds[kind] ? kinds[kind] : "WR",
				  WR_SLOT(wc->wr_id), c->idx,
				  ibv_wc_status_str(wc->status), wc->vendor_err);
		return;
	}
	if (s->closing)
		return;
	if (kind == WR_RECV) {
		on_recv(c, wc);
	} else if (kind == WR_AUTH && WR_SLOT(wc->wr_id) < 2) {
		on_auth(s, wc);
	} else if (kind == WR_TABLE) {
		table_done_lie(s);
	} else if (kind == WR_HB) {
		s->hb_busy = false;
		s->hb_tx++;
	}
}

/* Every completion of a session's channel. */
static void sess_cq_events(struct sess *s)
{
	struct ibv_wc wc[16];
	struct ibv_cq *cq;
	void *ctx;
	int n, i;

	while (!ibv_get_cq_event(s->ch, &cq, &ctx)) {
		struct conn *c = ctx;

		ibv_ack_cq_events(cq, 1);
		if (ibv_req_notify_cq(cq, 0))
			sess_fail(s, "cannot arm the CQ of conn %u", c->idx);
		while ((n = ibv_poll_cq(cq, 16, wc)) > 0)
			for (i = 0; i < n; i++)
				on_wc(c, &wc[i]);
		if (n < 0)
			sess_fail(s, "polling the CQ of conn %u failed", c->idx);
	}
}

/* ---------------------------------------------------------------------- */
/* CM events                                                              */

static void cm_events(void)
{
	struct rdma_cm_event *ev;
	uint8_t pdata[256];

	while (!rdma_get_cm_event(cm_ch, &ev)) {
		enum rdma_cm_event_type type = ev->event;
		struct rdma_cm_id *id = ev->id;
		int status = ev->status;
		size_t len = ev->param.conn.private_data_len;
		struct conn *c;

		if (len > sizeof(pdata))
			len = sizeof(pdata);
		if (type == RDMA_CM_EVENT_CONNECT_REQUEST &&
		    ev->param.conn.private_data)
			memcpy(pdata, ev->param.conn.private_data, len);
		else
			len = 0;
		rdma_ack_cm_event(ev);

		if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
			on_connect_request(id, len ? pdata : NULL, len);
			continue;
		}
		c = id == listen_id ? NULL : id->context;
		if (!c) {
			if (type == RDMA_CM_EVENT_DEVICE_REMOVAL)
				note("listener: RDMA device removed");
			continue;
		}
		switch (type) {
		case RDMA_CM_EVENT_ESTABLISHED:
			on_established(c);
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
			sess_fail(c->sess, "client disconnected (DISCONNECTED on conn %u)",
				  c->idx);
			break;
		case RDMA_CM_EVENT_CONNECT_ERROR:
		case RDMA_CM_EVENT_UNREACHABLE:
		case RDMA_CM_EVENT_REJECTED:
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
			sess_fail(c->sess, "%s on conn %u (status %d)",
				  rdma_event_str(type), c->idx, status);
			break;
		default:
			break;
		}
	}
}

/* ---------------------------------------------------------------------- */
/* Lies: hooks called from the honest code above                          */

/*
 * The accept: every connection gets the same lie (else the client would
 * catch the difference between connections first), except key-mismatch,
 * which is the difference.  The lie is logged once.
 */
static void accept_lie(struct sess *s, unsigned int idx,
		       struct trs_msg_conn_rsp *rsp)
{
	static const uint32_t io_sizes[] = { 0, 1000, 16u << 20 };
	unsigned int w = opt.observe_ms;
	uint32_t v;

	switch (s->mode) {
	case M_QD_ZERO:
		rsp->queue_depth = 0;
		if (!idx)
			lie(s, "accept", w, "accept with queue_depth 0");
		break;
	case M_QD_HUGE:
		rsp->queue_depth = htole16(65535);
		if (!idx)
			lie(s, "accept", w, "accept with queue_depth 65535 (client asked at most %u)",
			    s->client_max_qd);
		break;
	case M_IO_SIZE_BAD:
		v = io_sizes[s->variant % 3];
		rsp->max_io_size = htole32(v);
		if (!idx)
			lie(s, "accept", w, "accept with max_io_size %u", v);
		break;
	case M_SEGS_ZERO:
		rsp->max_segments = 0;
		if (!idx)
			lie(s, "accept", w, "accept with max_segments 0");
		break;
	case M_CAPS_UNKNOWN:
		rsp->caps = htole32(0x80000000u);
		if (!idx)
			lie(s, "accept", w, "accept with caps 0x80000000");
		break;
	case M_RESERVED_NONZERO:
		rsp->reserved0 = htole16(1);
		if (!idx)
			lie(s, "accept", w, "accept with reserved0 1");
		break;
	case M_VERSION_MINOR:
		rsp->ver_minor = 99;
		if (!idx)
			lie(s, "accept", w, "accept with ver_minor 99 (legal)");
		break;
	case M_VERSION_MAJOR:
		rsp->ver_major = 2;
		if (!idx)
			lie(s, "accept", w, "accept with ver_major 2");
		break;
	case M_KEY_MISMATCH:
		if (!idx && s->conn_cnt < 2)
			say(s, "only one connection: no connection 1 to give another key (honest session)");
		if (idx != 1)
			break;
		do
			rnd_bytes(rsp->sess_key, sizeof(rsp->sess_key));
		while (!memcmp(rsp->sess_key, s->rsp.sess_key,
			       sizeof(rsp->sess_key)));
		lie(s, "accept", w, "accept of conn 1 with another sess_key than conn 0's");
		break;
	case M_HB_SILENT:
		if (idx)
			break;
		if (s->hb)
			lie(s, "accept", 0, "accept granting TRS_CAP_HEARTBEAT; we never send a heartbeat");
		else
			say(s, "the client did not ask for heartbeats: nothing to lie about (honest session)");
		break;
	default:
		break;
	}
}

/* reject-garbage: reject connection 0 with garbage instead of accepting */
static bool reject_lie(struct sess *s, struct rdma_cm_id *id)
{
	struct trs_msg_conn_rsp *rsp;
	uint8_t buf[148];
	unsigned int st;
	uint8_t len;

	if (s->mode != M_REJECT_GARBAGE && s->mode != M_REJECT_ERRNO)
		return false;
	memset(buf, 0, sizeof(buf));
	rsp = (void *)buf;
	if (s->mode == M_REJECT_ERRNO) {
		len = sizeof(*rsp);
		rsp->magic = htole16(TRS_MAGIC);
		rsp->ver_major = TRS_PROTO_VER_MAJOR;
		rsp->ver_minor = TRS_PROTO_VER_MINOR;
		st = opt.errno_val ? opt.errno_val : 512;
		rsp->status = htole16((uint16_t)st);
		lie(s, "reject", 0, "rejected conn 0 with status %u%s", st,
		    st >= 512 ? " (not an errno a server can mean)" : "");
		goto reject;
	}
	switch (s->variant % 5) {
	case 0:
		len = (uint8_t)(1 + rnd() % sizeof(buf));
		rnd_bytes(buf, len);
		if (le16toh(rsp->magic) == TRS_MAGIC)
			rsp->magic = 0;
		lie(s, "reject", 0, "rejected conn 0 with %u random bytes of private data",
		    len);
		break;
	case 1:
		len = 0;
		lie(s, "reject", 0, "rejected conn 0 without private data");
		break;
	case 2:
		len = sizeof(*rsp);
		rsp->magic = htole16(TRS_MAGIC);
		rsp->ver_major = TRS_PROTO_VER_MAJOR;
		rnd_bytes(rsp->sess_key, sizeof(rsp->sess_key));
		lie(s, "reject", 0, "rejected conn 0 with our magic, status 0 and a random key");
		break;
	case 3:
		len = sizeof(*rsp);
		rsp->magic = htole16(TRS_MAGIC);
		rsp->ver_major = TRS_PROTO_VER_MAJOR;
		rsp->status = htole16(50000);
		lie(s, "reject", 0, "rejected conn 0 with our magic and status 50000 (> MAX_ERRNO)");
		break;
	default:
		len = 12;
		rsp->magic = htole16(TRS_MAGIC);
		rsp->ver_major = 7;
		rsp->status = htole16(EPERM);
		lie(s, "reject", 0, "rejected conn 0 with 12 bytes: our magic, ver_major 7, status EPERM (the IB CM pads it to 148 bytes)");
		break;
	}
reject:
	if (rdma_reject(id, len ? buf : NULL, len))
		say(s, "rdma_reject failed: %s", strerror(errno));
	rdma_destroy_id(id);
	sess_fail(s, "we rejected conn 0 (lie); the client's side shows what it made of it");
	return true;
}

static void table_lie(struct sess *s, struct trs_msg_chunks *t, size_t *len)
{
	unsigned int w = opt.observe_ms, i;
	uint32_t rkey;

	switch (s->mode) {
	case M_TABLE_SHORT:
		*len -= 8;
		lie(s, "table", w, "chunk table of %zu bytes for count %u (needs %zu)",
		    *len, s->qd, *len + 8);
		break;
	case M_TABLE_COUNT:
		t->count = htole16((uint16_t)(s->qd + 1));
		lie(s, "table", w, "chunk table with count %u, queue depth %u",
		    s->qd + 1, s->qd);
		break;
	case M_TABLE_MAGIC:
		t->magic = htole16(0x5b7e);
		lie(s, "table", w, "chunk table with magic 0x5b7e");
		break;
	case M_TABLE_CHUNK_SIZE:
		t->chunk_size = htole32(TRS_HDR_AREA);
		lie(s, "table", w, "chunk table with chunk_size %u (should be %u)",
		    TRS_HDR_AREA, s->chunk_size);
		break;
	case M_TABLE_WRAP:
		t->desc[s->qd - 1].addr = htole64(UINT64_MAX - 4095);
		lie(s, "table", w, "chunk table with chunk %u at 0x%" PRIx64 " (wraps)",
		    s->qd - 1, UINT64_MAX - 4095);
		break;
	case M_TABLE_RKEY_BOGUS:
		for (i = 0; i < s->qd; i++) {
			do
				rkey = (uint32_t)rnd();
			while (rkey == s->mr->rkey);
			t->desc[i].rkey = htole32(rkey);
		}
		lie(s, "table", w, "chunk table with %u random rkeys (ours is %#x)",
		    s->qd, s->mr->rkey);
		break;
	default:
		break;
	}
}

/* disconnect-handshake: hang up in the middle of the handshake */
static void established_lie(struct sess *s, struct conn *c)
{
	unsigned int v = s->variant % 3;

	if (s->mode != M_DISCONNECT_HANDSHAKE || v == 2)
		return;
	if (v == 1 && s->conn_cnt >= 2) {
		if (c->idx != 1)
			return;
		lie(s, "disconnect", 0, "conn 1 of %u established: we disconnect",
		    s->conn_cnt);
	} else {
		if (c->idx)
			return;
		lie(s, "disconnect", 0, "conn 0 of %u established: we disconnect%s",
		    s->conn_cnt, v == 1 ? " (only one connection)" : "");
	}
	sess_fail(s, "we disconnected in the handshake (lie)");
}

/* The table went out; table-twice sends it again at once. */
static void table_sent_lie(struct sess *s)
{
	struct conn *c = &s->conns[0];
	struct ibv_sge sge = {
		.addr	= (uintptr_t)(s->buf + s->ctl_off),
		.length	= (uint32_t)(sizeof(struct trs_msg_chunks) +
				     (size_t)s->qd * sizeof(struct trs_chunk_desc)),
		.lkey	= s->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id		= WR_ID(WR_TABLE, 1),
		.sg_list	= &sge,
		.num_sge	= 1,
		.opcode		= IBV_WR_SEND,
		.send_flags	= IBV_SEND_SIGNALED,
	}, *bad;
	int err;

	if (s->mode == M_DISCONNECT_HANDSHAKE && s->variant % 3 == 2)
		say(s, "chunk table posted: we disconnect once it is delivered");
	if (s->mode != M_TABLE_TWICE)
		return;
	err = ibv_post_send(c->id->qp, &wr, &bad);
	if (err) {
		sess_fail(s, "posting the second chunk table failed: %s",
			  strerror(err));
		return;
	}
	c->sq_out++;
	lie(s, "table", opt.observe_ms, "chunk table sent twice");
}

/* The chunk table was delivered (its SEND completed). */
static void table_done_lie(struct sess *s)
{
	if (s->mode != M_DISCONNECT_HANDSHAKE || s->variant % 3 != 2 ||
	    s->lie_done)
		return;
	s->lie_done = true;
	lie(s, "disconnect", 0, "chunk table delivered: we disconnect right away");
	sess_fail(s, "we disconnected right after the chunk table (lie)");
}

static bool open_lie(struct sess *s, struct req *r)
{
	static const unsigned int errnos[] = { TRS_MAX_ERRNO, 512, 513,
					       ECONNRESET };
	static unsigned int n, e;
	struct rnbd_msg_open_rsp *rsp = (void *)chunk_data(s, r->slot);
	unsigned int st;

	switch (s->mode) {
	case M_OPEN_RSP_LIE:
		open_rsp_fill(s, r);
		switch (n++ % 3) {
		case 0:
			rsp->logical_block_size = htole16(3);
			lie(s, "open", opt.observe_ms, "OPEN on slot %u answered with logical_block_size 3",
			    r->slot);
			break;
		case 1:
			rsp->nsectors = htole64(1ull << 62);
			lie(s, "open", opt.observe_ms, "OPEN on slot %u answered with nsectors 2^62",
			    r->slot);
			break;
		default:
			rsp->reserved[7] = 0x5a;
			lie(s, "open", opt.observe_ms, "OPEN on slot %u answered with reserved[7] 0x5a",
			    r->slot);
			break;
		}
		respond(s, r, 0, sizeof(*rsp));
		return true;
	case M_OPEN_HANG:
		/* the slot stays busy: the client has to give it up */
		lie(s, "open", 0, "OPEN on slot %u: never answered", r->slot);
		return true;
	case M_OPEN_ERRNO:
		st = opt.errno_val ? opt.errno_val : errnos[e++ % 4];
		lie(s, "open", opt.observe_ms, "OPEN on slot %u answered with status %u%s",
		    r->slot, st, st == ECONNRESET ? " (ECONNRESET, an errno of the transport)" :
		    st >= 512 && st <= 529 ? " (a kernel-internal errno)" : "");
		respond(s, r, (int)st, 0);
		return true;
	case M_REOPEN_ERRNO:
		if (s->variant % 2 == 0) {
			if (!s->drop_at) {
				s->drop_at = now_ms() + 2000;
				say(s, "honest OPEN; we drop this session in 2 s so that the client opens the device again");
			}
			return false;
		}
		st = opt.errno_val ? opt.errno_val : ECONNRESET;
		lie(s, "open", 0, "OPEN on slot %u (the client's reopen) answered with status %u",
		    r->slot, st);
		respond(s, r, (int)st, 0);
		return true;
	case M_REOPEN_SLOW:
		/* the first session is honest: the maps */
		if (!s->variant)
			return false;
		open_rsp_fill(s, r);
		slow_add(s, r, sizeof(*rsp));
		return true;
	default:
		return false;
	}
}

/*
 * late-reply: the held reply to a READ goes out when its slot carries a
 * new READ of the same length, before that one's own reply: only the slot
 * tag's generation tells the two apart.  A request 16 generations on
 * carries the held reply's tag again, which no client can tell from its
 * own (Documentation/transport-protocol.rst): the reply waits for the next.
 */
static void late_lie(struct sess *s, const struct req *r)
{
	struct rsp rsp = s->late;

	if (!s->late_valid || r->slot != s->late.slot ||
	    r->data_len != s->late.len)
		return;
	if (s->slot_gen && r->tag == trs_imm_slot(s->late.imm)) {
		say(s,
		    "slot %u carries a new request with the held reply's tag %#x (the generation wrapped): held for the next",
		    r->slot, r->tag);
		return;
	}
	s->late_valid = false;
	rsp.conn = r->conn;
	lie(s, "late", opt.observe_ms,
	    "slot %u carries a new request: sent the reply of its previous request (%" PRId64 " ms old, imm %#x, %u bytes) on conn %u first",
	    r->slot, now_ms() - s->late_t, rsp.imm, rsp.len, r->conn->idx);
	post_rsp(s, &rsp, WR_LIE);
}

static bool is_io(const struct req *r)
{
	return r->type == RNBD_MSG_IO;
}

static bool is_io_read(const struct req *r)
{
	return is_io(r) && r->op == RNBD_OP_READ;
}

/* batch-unasked: one RSP_BATCH for the held success and @slot's */
static void batch_post(struct sess *s, unsigned int a, unsigned int b,
		       bool partner)
{
	unsigned int base = a < b ? a : b, d = a < b ? b - a : a - b;
	struct rsp rsp = {
		.conn	= s->batch_conn,
		.slot	= base,
		.imm	= trs_imm_pack_batch(base, 1u << (d - 1)),
	};

	s->batch_valid = false;
	s->lie_done = true;
	s->busy[s->batch_slot] = 0;
	if (partner)
		lie(s, "batch", opt.observe_ms,
		    "one RSP_BATCH (base %u mask %#x) answering the zero-length successes on slots %u and %u, though caps 0",
		    base, 1u << (d - 1), a, b);
	else
		lie(s, "batch", opt.observe_ms,
		    "no second success within %u ms: RSP_BATCH (base %u mask %#x) answering slot %u and slot %u, which has nothing in flight here, though caps 0",
		    SRV_BATCH_WAIT_MS, base, 1u << (d - 1), a, b);
	post_rsp(s, &rsp, WR_LIE);
}

static void batch_tick(struct sess *s, int64_t now)
{
	unsigned int held = s->batch_slot;

	if (!s->batch_valid || now - s->batch_t < SRV_BATCH_WAIT_MS)
		return;
	if (s->qd < 2) {
		/* no neighbour slot to name: answer honestly */
		struct rsp rsp = {
			.conn	= s->batch_conn,
			.slot	= held,
			.imm	= trs_imm_pack(TRS_IMM_RSP, s->batch_tag, 0),
		};

		s->batch_valid = false;
		s->lie_done = true;
		s->busy[held] = 0;
		say(s, "queue depth 1: no batch possible (honest session)");
		post_rsp(s, &rsp, WR_REPLY);
		return;
	}
	batch_post(s, held, held + 1 < s->qd ? held + 1 : held - 1, false);
}

/*
 * The lies told in a reply.  @rsp is the honest reply; returns true if the
 * lie took care of it (posted, changed, held or dropped).
 */
static bool reply_lie(struct sess *s, struct req *r, struct rsp *rsp,
		      int status)
{
	static const uint8_t bad_types[] = { 0, 1, 3, 5, 6, 7, 8, 9, 10, 11,
					     12, 13, 14, 15 };
	unsigned int w = opt.observe_ms, t, d;
	struct rsp extra;

	switch (s->mode) {
	case M_SHORT_READ:
	case M_EMPTY_READ:
		if (!is_io_read(r) || status || !rsp->len)
			return false;
		t = s->mode == M_EMPTY_READ || rsp->len <= SECTOR_SIZE ? 0 :
		    rsp->len - SECTOR_SIZE;
		lie(s, "read", w, "READ of %u bytes at sector %" PRIu64 " on slot %u: status 0 with %u bytes",
		    rsp->len, r->sector, r->slot, t);
		rsp->len = t;
		post_rsp(s, rsp, WR_LIE);
		return true;
	case M_HUGE_STATUS:
		if (!is_io(r))
			return false;
		rsp->imm = trs_imm_pack(TRS_IMM_RSP, r->tag, TRS_MAX_ERRNO);
		rsp->len = 0;
		lie(s, "status", w, "%s on slot %u: status 4095", req_name(r),
		    r->slot);
		post_rsp(s, rsp, WR_LIE);
		return true;
	default:
		break;
	}

	/* the others: once per session, on the first IO that fits */
	if (s->lie_done || !is_io(r))
		return false;
	switch (s->mode) {
	case M_READ_OVERFLOW:
		if (!is_io_read(r) || status)
			return false;
		lie(s, "overflow", w, "READ of %u bytes on slot %u: wrote %u bytes to the client's buffer (rkey %#x)",
		    rsp->len, r->slot, rsp->len + 4096, rsp->rkey);
		rsp->len += 4096;
		break;
	case M_SLOT_OUT_OF_RANGE:
		/* the first index past the last: an off-by-one check takes it */
		rsp->imm = trs_imm_pack(TRS_IMM_RSP, s->qd, (uint32_t)status);
		lie(s, "slot", w, "%s on slot %u answered as slot %u (queue depth %u)",
		    req_name(r), r->slot, s->qd, s->qd);
		break;
	case M_BAD_TYPE:
		t = bad_types[s->variant % sizeof(bad_types)];
		rsp->imm = trs_imm_pack(t, r->tag, (uint32_t)status);
		lie(s, "type", w, "%s on slot %u answered with imm type %u (imm %#x)",
		    req_name(r), r->slot, t, rsp->imm);
		break;
	case M_WRONG_CONN:
		if (s->conn_cnt < 2) {
			s->lie_done = true;
			say(s, "only one connection: no other connection to answer on (honest session)");
			return false;
		}
		rsp->conn = &s->conns[(r->conn->idx + 1) % s->conn_cnt];
		lie(s, "conn", w, "%s on slot %u of conn %u answered on conn %u",
		    req_name(r), r->slot, r->conn->idx, rsp->conn->idx);
		break;
	case M_IDLE_SLOT:
		post_rsp(s, rsp, WR_REPLY);
		for (t = s->qd; t-- > 0;)
			if (t != r->slot && !s->busy[t])
				break;
		if (t >= s->qd)
			return true;
		extra = (struct rsp) {
			.conn	= r->conn,
			.slot	= t,
			.imm	= trs_imm_pack(TRS_IMM_RSP, t, 0),
		};
		s->lie_done = true;
		lie(s, "idle", w, "after the reply to %s on slot %u, a success for slot %u, which has nothing in flight here",
		    req_name(r), r->slot, t);
		post_rsp(s, &extra, WR_LIE);
		return true;
	case M_DUP_REPLY:
		post_rsp(s, rsp, WR_REPLY);
		s->lie_done = true;
		lie(s, "dup", w, "the reply to %s on slot %u (imm %#x, %u bytes) sent twice",
		    req_name(r), r->slot, rsp->imm, rsp->len);
		post_rsp(s, rsp, WR_LIE);
		return true;
	case M_LATE_REPLY:
		if (!is_io_read(r) || status || !rsp->len)
			return false;
		post_rsp(s, rsp, WR_REPLY);
		s->lie_done = true;
		s->late = *rsp;
		if (rsp->len) {
			memcpy(s->buf + s->stash_off, rsp->src, rsp->len);
			s->late.src = s->buf + s->stash_off;
		}
		s->late_valid = true;
		s->late_t = now_ms();
		say(s, "answered %s on slot %u; its reply goes again once the slot carries a new request",
		    req_name(r), r->slot);
		return true;
	case M_BATCH_UNASKED:
		if (status || rsp->len || r->th.dir == TRS_DIR_READ)
			return false;
		if (!s->batch_valid) {
			s->batch_valid = true;
			s->batch_slot = r->slot;
			s->batch_tag = r->tag;
			s->batch_conn = r->conn;
			s->batch_t = now_ms();
			s->busy[r->slot] = 1;
			return true;
		}
		d = r->slot > s->batch_slot ? r->slot - s->batch_slot :
					      s->batch_slot - r->slot;
		if (r->conn != s->batch_conn || !d || d > TRS_IMM_BATCH_BITS)
			return false;
		batch_post(s, s->batch_slot, r->slot, true);
		return true;
	default:
		return false;
	}
	s->lie_done = true;
	post_rsp(s, rsp, WR_LIE);
	return true;
}

/* Answer @r with @status and, for a successful READ or OPEN, @len bytes. */
static void respond(struct sess *s, struct req *r, int status, uint32_t len)
{
	struct rsp rsp = {
		.conn	= r->conn,
		.slot	= r->slot,
		.imm	= trs_imm_pack(TRS_IMM_RSP, r->tag, (uint32_t)status),
		.len	= status ? 0 : len,
		.raddr	= le64toh(r->th.addr),
		.rkey	= le32toh(r->th.rkey),
		.src	= chunk_data(s, r->slot),
	};

	/* free before posting, as the kernel server: see trs_srv_release() */
	s->busy[r->slot] = 0;
	if (!reply_lie(s, r, &rsp, status))
		post_rsp(s, &rsp, WR_REPLY);
}

/* info-slow: our heartbeat on connection 0, a notice in it if asked */
static void hb_tick(struct sess *s, int64_t now)
{
	struct conn *c = &s->conns[0];
	uint32_t arg = s->notice ? TRS_HB_NOTICE : 0;
	struct ibv_send_wr wr = {
		.wr_id		= WR_ID(WR_HB, 0),
		.opcode		= IBV_WR_SEND_WITH_IMM,
		.send_flags	= IBV_SEND_SIGNALED,
		.imm_data	= htonl(trs_imm_pack(TRS_IMM_HB, 0, arg)),
	}, *bad;
	int err;

	if (s->mode != M_INFO_SLOW || !s->hb || !s->table_sent || s->hb_busy)
		return;
	if (!s->hb_next)
		s->hb_next = now + TRS_HB_INTERVAL_MS;
	if (now < s->hb_next)
		return;
	if (c->sq_out >= c->sq_max) {
		sess_fail(s, "our send queue on conn 0 is full");
		return;
	}
	err = ibv_post_send(c->id->qp, &wr, &bad);
	if (err) {
		sess_fail(s, "posting a heartbeat failed: %s", strerror(err));
		return;
	}
	c->sq_out++;
	s->hb_busy = true;
	s->hb_next = now + TRS_HB_INTERVAL_MS;
	if (arg) {
		s->notice = false;
		say(s, "heartbeat with TRS_HB_NOTICE sent");
	}
}

/* SIGUSR1 */
static void usr1_act(struct sess *s)
{
	if (s->closing)
		return;
	if (s->mode == M_REOPEN_SLOW) {
		lie(s, "drop", 0, "we drop the session (rdma_disconnect) on SIGUSR1");
		sess_fail(s, "we disconnected so that the client reopens (lie)");
	} else if (s->mode == M_INFO_SLOW) {
		if (s->notice_on)
			s->notice = true;
		else
			say(s, "SIGUSR1: TRS_CAP_NOTICE not granted, no notice to send");
	}
}

static void sess_tick(struct sess *s, int64_t now)
{
	if (s->closing)
		return;
	if (!s->table_sent && now - s->t_start > SRV_SETUP_TIMEOUT_MS) {
		sess_fail(s, "handshake not complete within %u ms: closed (as the kernel server)",
			  SRV_SETUP_TIMEOUT_MS);
		return;
	}
	batch_tick(s, now);
	slow_tick(s, now);
	hb_tick(s, now);
	if (s->closing)
		return;
	if (s->drop_at && now >= s->drop_at) {
		s->drop_at = 0;
		lie(s, "drop", 0, "we drop the session (rdma_disconnect) 2 s after its OPEN");
		sess_fail(s, "we disconnected so that the client reopens (lie)");
		return;
	}
	lies_tick(s, now);
}

/* ---------------------------------------------------------------------- */
/* Main                                                                   */

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		atomic_store(&usr1, 1);
	else
		atomic_store(&stop, 1);
}

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: rnbd-hostile-srv [--addr ADDR] [--port PORT] [--mode MODE|cycle]\n"
		"                        [--sessions N] [--honest-after N] [--observe-ms MS]\n"
		"                        [--errno N] [--delay-ms MS] [--no-slot-gen] [--seed N]\n"
		"       rnbd-hostile-srv --list\n"
		"\n"
		"A hostile rnbd server: speaks the rnbd wire protocol to the kernel client\n"
		"and lies as MODE says (--list), serving a 1 MiB memory device otherwise.\n"
		"\n"
		"  --addr ADDR        address to listen on (default 0.0.0.0)\n"
		"  --port PORT        port (default %u)\n"
		"  --mode MODE        lie to tell in every session (default honest);\n"
		"                     cycle: the next mode of --list for each new session\n"
		"  --sessions N       exit 0 once N sessions ended (default: run until killed)\n"
		"  --honest-after N   sessions after the first N are honest (lets the client\n"
		"                     recover after its reconnect)\n"
		"  --observe-ms MS    how long a lie's outcome is watched before it is printed\n"
		"                     as \"kept going\" (default %u)\n"
		"  --errno N          status of open-errno and reopen-errno OPEN answers\n"
		"  --delay-ms MS      how long info-slow and reopen-slow hold an answer back\n"
		"                     (default %u)\n"
		"  --no-slot-gen      do not grant TRS_CAP_SLOT_GEN (replies carry no\n"
		"                     generation: the client cannot tell a late one)\n"
		"  --seed N           seed of the garbage (default: time)\n"
		"  --list             print the modes\n"
		"\n"
		"Exit: 0 killed (SIGTERM/SIGINT) or --sessions reached, 1 cannot listen\n"
		"(no RDMA device...), 2 bad usage.  SIGUSR1: see reopen-slow and\n"
		"info-slow.\n",
		SRV_DEFAULT_PORT, SRV_OBSERVE_MS, SRV_DELAY_MS);
}

static bool parse_ulong(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 0);
	return !errno && *s && !*end && *s != '-' && *v <= max;
}

static int parse_args(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "addr",		required_argument, NULL, 'a' },
		{ "port",		required_argument, NULL, 'p' },
		{ "mode",		required_argument, NULL, 'm' },
		{ "sessions",		required_argument, NULL, 'n' },
		{ "honest-after",	required_argument, NULL, 'H' },
		{ "observe-ms",		required_argument, NULL, 'o' },
		{ "seed",		required_argument, NULL, 's' },
		{ "errno",		required_argument, NULL, 'e' },
		{ "delay-ms",		required_argument, NULL, 'd' },
		{ "no-slot-gen",	no_argument,	   NULL, 'g' },
		{ "list",		no_argument,	   NULL, 'l' },
		{ "help",		no_argument,	   NULL, 'h' },
		{}
	};
	unsigned long v;
	unsigned int i;
	int o;

	opterr = 0;
	while ((o = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (o) {
		case 'a':
			opt.addr = optarg;
			break;
		case 'p':
			if (!parse_ulong(optarg, 65535, &v) || !v) {
				fprintf(stderr, "rnbd-hostile-srv: bad port: %s\n", optarg);
				return 2;
			}
			opt.port = (unsigned int)v;
			break;
		case 'm':
			if (!strcmp(optarg, "cycle")) {
				opt.mode = M_CYCLE;
				break;
			}
			for (i = 0; i < NR_MODES; i++)
				if (!strcmp(optarg, modes[i].name))
					break;
			if (i == NR_MODES) {
				fprintf(stderr, "rnbd-hostile-srv: unknown mode: %s (see --list)\n",
					optarg);
				return 2;
			}
			opt.mode = i;
			break;
		case 'n':
			if (!parse_ulong(optarg, ~0ul, &v) || !v) {
				fprintf(stderr, "rnbd-hostile-srv: bad --sessions: %s\n", optarg);
				return 2;
			}
			opt.sessions = v;
			break;
		case 'H':
			if (!parse_ulong(optarg, ~0ul, &v)) {
				fprintf(stderr, "rnbd-hostile-srv: bad --honest-after: %s\n",
					optarg);
				return 2;
			}
			opt.honest_after = v;
			break;
		case 'o':
			if (!parse_ulong(optarg, 3600000, &v) || !v) {
				fprintf(stderr, "rnbd-hostile-srv: bad --observe-ms: %s\n",
					optarg);
				return 2;
			}
			opt.observe_ms = (unsigned int)v;
			break;
		case 'g':
			opt.no_slot_gen = true;
			break;
		case 'e':
			if (!parse_ulong(optarg, TRS_MAX_ERRNO, &v) || !v) {
				fprintf(stderr, "rnbd-hostile-srv: bad --errno (1..4095): %s\n",
					optarg);
				return 2;
			}
			opt.errno_val = (unsigned int)v;
			break;
		case 'd':
			if (!parse_ulong(optarg, 600000, &v) || !v) {
				fprintf(stderr, "rnbd-hostile-srv: bad --delay-ms (1..600000): %s\n",
					optarg);
				return 2;
			}
			opt.delay_ms = (unsigned int)v;
			break;
		case 's':
			if (!parse_ulong(optarg, ~0ul, &v)) {
				fprintf(stderr, "rnbd-hostile-srv: bad --seed: %s\n", optarg);
				return 2;
			}
			opt.seed = v;
			break;
		case 'l':
			for (i = 0; i < NR_MODES; i++)
				printf("%-22s %s\n", modes[i].name, modes[i].help);
			printf("%-22s %s\n", "cycle", "the next mode above for each new session");
			exit(0);
		case 'h':
			print_usage(stdout);
			exit(0);
		default:
			fprintf(stderr, "rnbd-hostile-srv: bad or incomplete option %s (try --help)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rnbd-hostile-srv: unexpected argument: %s (try --help)\n",
			argv[optind]);
		return 2;
	}
	return 0;
}

/* Bind and listen; 0 or -1 with a message. */
static int srv_listen(void)
{
	struct addrinfo hints = {
		.ai_flags	= AI_NUMERICHOST | AI_PASSIVE,
		.ai_family	= AF_UNSPEC,
	}, *ai;
	struct ibv_device **devs;
	char port[8];
	int n = 0, err, flags;

	snprintf(port, sizeof(port), "%u", opt.port);
	err = getaddrinfo(opt.addr, port, &hints, &ai);
	if (err) {
		fprintf(stderr, "rnbd-hostile-srv: bad address %s: %s\n",
			opt.addr, gai_strerror(err));
		return -2;
	}
	devs = ibv_get_device_list(&n);
	if (devs)
		ibv_free_device_list(devs);
	if (!devs || n <= 0) {
		fprintf(stderr, "rnbd-hostile-srv: no RDMA device (%s): load rdma_rxe and add a link (rdma link add rxe0 type rxe netdev IF)\n",
			devs ? "none found" : strerror(errno));
		goto free_ai;
	}
	cm_ch = rdma_create_event_channel();
	if (!cm_ch) {
		fprintf(stderr, "rnbd-hostile-srv: cannot open the RDMA CM (is rdma_ucm loaded?): %s\n",
			strerror(errno));
		goto free_ai;
	}
	flags = fcntl(cm_ch->fd, F_GETFL);
	if (flags < 0 || fcntl(cm_ch->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		fprintf(stderr, "rnbd-hostile-srv: fcntl: %s\n", strerror(errno));
		goto destroy_ch;
	}
	if (rdma_create_id(cm_ch, &listen_id, NULL, RDMA_PS_TCP)) {
		fprintf(stderr, "rnbd-hostile-srv: rdma_create_id: %s\n",
			strerror(errno));
		goto destroy_ch;
	}
	if (rdma_bind_addr(listen_id, ai->ai_addr)) {
		fprintf(stderr, "rnbd-hostile-srv: cannot bind %s port %u: %s\n",
			opt.addr, opt.port, strerror(errno));
		goto destroy_id;
	}
	if (rdma_listen(listen_id, 64)) {
		fprintf(stderr, "rnbd-hostile-srv: cannot listen on %s port %u: %s\n",
			opt.addr, opt.port, strerror(errno));
		goto destroy_id;
	}
	freeaddrinfo(ai);
	return 0;

destroy_id:
	rdma_destroy_id(listen_id);
	listen_id = NULL;
destroy_ch:
	rdma_destroy_event_channel(cm_ch);
	cm_ch = NULL;
free_ai:
	freeaddrinfo(ai);
	return -1;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct pollfd *pfd = NULL;
	struct sess **who = NULL;
	size_t cap = 0;
	struct sess *s;
	int err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	err = parse_args(argc, argv);
	if (err)
		return err;
	rng_state = opt.seed ? opt.seed : (uint64_t)time(NULL) ^
		    (uint64_t)getpid() << 32;
	if (!rng_state)
		rng_state = 1;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	err = srv_listen();
	if (err)
		return err == -2 ? 2 : 1;
	note("listening on %s port %u, mode %s", opt.addr, opt.port,
	     mode_name(opt.mode));

	while (!atomic_load(&stop) && !(opt.sessions && nr_ended >= opt.sessions)) {
		size_t n = 1, i;
		int64_t now;

		for (s = sessions; s; s = s->next)
			n++;
		if (n > cap) {
			cap = n * 2;
			pfd = realloc(pfd, cap * sizeof(*pfd));
			who = realloc(who, cap * sizeof(*who));
			if (!pfd || !who) {
				fprintf(stderr, "rnbd-hostile-srv: out of memory\n");
				break;
			}
		}
		pfd[0] = (struct pollfd) { .fd = cm_ch->fd, .events = POLLIN };
		n = 1;
		for (s = sessions; s; s = s->next) {
			if (!s->ch)
				continue;
			who[n] = s;
			pfd[n++] = (struct pollfd) { .fd = s->ch->fd,
						     .events = POLLIN };
		}
		if (poll(pfd, n, SRV_TICK_MS) < 0 && errno != EINTR) {
			fprintf(stderr, "rnbd-hostile-srv: poll: %s\n",
				strerror(errno));
			break;
		}
		/* completions first: a session may end on a CM event */
		for (i = 1; i < n; i++)
			if (pfd[i].revents)
				sess_cq_events(who[i]);
		if (pfd[0].revents)
			cm_events();
		if (atomic_exchange(&usr1, 0))
			for (s = sessions; s; s = s->next)
				usr1_act(s);
		now = now_ms();
		for (s = sessions; s; s = s->next)
			sess_tick(s, now);
		sess_reap();
	}

	for (s = sessions; s; s = s->next)
		sess_fail(s, atomic_load(&stop) ? "we were told to stop" : "we stop");
	sess_reap();
	free(pfd);
	free(who);
	if (listen_id)
		rdma_destroy_id(listen_id);
	if (cm_ch)
		rdma_destroy_event_channel(cm_ch);
	note("stopped: %lu sessions, %lu ended", nr_sessions, nr_ended);
	return 0;
}
