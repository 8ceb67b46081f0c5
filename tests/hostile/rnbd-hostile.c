// SPDX-License-Identifier: GPL-2.0-only
/*
 * rnbd-hostile - a hostile RNBD client.
 *
 * Speaks the RNBD transport (include/rnbd/trs-proto.h) and block
 * (include/rnbd/proto.h) wire protocols to a kernel rnbd_server and breaks
 * every field of them.  Each case prints what it sent and what the server
 * did; the tool does not judge the server (the test around it checks the
 * kernel for crashes and leaks).  See README.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <endian.h>
#include <rdma/rdma_cma.h>
#include <infiniband/verbs.h>

#include "wire.h"

/* the kernel's helper macros, which userspace lacks */
#define __printf(a, b)		wire_attr(format(printf, a, b))
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

/* ---------------------------------------------------------------------- */
/* Options, PRNG                                                          */

static struct {
	const char *server;
	int port;
	uint64_t seed;
	int rounds;
	const char *device;
	int flood_scale;
	int idle_wait;
	int timeout_ms;
	bool verbose;
	int flood_qd;
	int race_sessions;
	const char *auth_host;
	int brute_ms;
} opt = {
	.port = TRS_DEFAULT_PORT,
	.rounds = 1,
	.flood_scale = 1,
	.timeout_ms = 5000,
	.flood_qd = 32,
	.race_sessions = 10,
	.brute_ms = 3000,
};

/*
 * Two PRNG streams: "in" draws the values of the malformed inputs and is
 * reseeded from (seed, group, round) before every group, so a group run
 * alone gets the same inputs as in a full run; "aux" draws uuids, keys and
 * data, whose number depends on what the server does.
 */
struct prng {
	uint64_t s;
};

static struct prng prng_in, prng_aux;

static uint64_t prng_next(struct prng *p)	/* splitmix64 */
{
	uint64_t z = (p->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A value in [lo, hi] of the input stream. */
static uint32_t rnd(uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(prng_next(&prng_in) % ((uint64_t)hi - lo + 1));
}

static void aux_bytes(void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		uint64_t v = prng_next(&prng_aux);
		size_t n = len < 8 ? len : 8;

		memcpy(p, &v, n);
		p += n;
		len -= n;
	}
}

static uint64_t str_hash(const char *s)	/* FNV-1a */
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 0x100000001b3ULL;
	return h;
}

/* ---------------------------------------------------------------------- */
/* Output, errno names, case accounting                                   */

static const char *errname(int err)
{
	static char buf[16];
	const char *n;

	if (!err)
		return "0";
	n = strerrorname_np(err);
	if (n)
		return n;
	snprintf(buf, sizeof(buf), "E%d", err);
	return buf;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

#define die(...)						\
	do {								\
		fprintf(stderr, "rnbd-hostile: " __VA_ARGS__);		\
		fputc('\n', stderr);					\
		exit(1);						\
	} while (0)
#define note(...)						\
	do {								\
		if (opt.verbose) {					\
			fprintf(stderr, "  " __VA_ARGS__);		\
			fputc('\n', stderr);				\
		}							\
	} while (0)

enum okind { O_REJECTED, O_ANSWERED, O_CLOSED, O_ACCEPTED, O_TIMEOUT };

struct outcome {
	enum okind k;
	int err;	/* O_REJECTED, O_ANSWERED: errno magnitude */
	long ms;	/* O_TIMEOUT */
};

#define OUT(kind, e)	((struct outcome){ .k = (kind), .err = (e) })
#define OUT_TIMEOUT(t)	((struct outcome){ .k = O_TIMEOUT, .ms = (t) })

static const char *outcome_str(struct outcome o)
{
	static char buf[64];

	switch (o.k) {
	case O_REJECTED:
		snprintf(buf, sizeof(buf), "rejected %s", errname(o.err));
		break;
	case O_ANSWERED:
		snprintf(buf, sizeof(buf), "answered %s", errname(o.err));
		break;
	case O_CLOSED:
		return "session closed";
	case O_ACCEPTED:
		return "accepted";
	case O_TIMEOUT:
		snprintf(buf, sizeof(buf), "timeout %ld", o.ms);
		break;
	}
	return buf;
}

/* A set of 64-bit hashes: the distinct inputs. */
struct hset {
	uint64_t *v;
	size_t cap, n;
};

static void hset_add(struct hset *h, uint64_t x)
{
	size_t i;

	if (!x)
		x = 1;
	if ((h->n + 1) * 2 > h->cap) {
		struct hset nh = { .cap = h->cap ? h->cap * 2 : 1024 };

		nh.v = calloc(nh.cap, sizeof(*nh.v));
		if (!nh.v)
			die("out of memory");
		for (i = 0; i < h->cap; i++)
			if (h->v[i])
				hset_add(&nh, h->v[i]);
		free(h->v);
		*h = nh;
	}
	for (i = x % h->cap; h->v[i]; i = (i + 1) % h->cap)
		if (h->v[i] == x)
			return;
	h->v[i] = x;
	h->n++;
}

static struct {
	bool dry;		/* --list: count inputs, run nothing */
	bool open;		/* a case is running */
	char name[64];
	char input[384];
	unsigned long cases;
	struct hset all;	/* distinct inputs of the run */
	struct hset group;	/* distinct inputs of the current group */
	unsigned long skipped;
} cs;

static bool begin_case(const char *name, const char *fmt, ...) __printf(2, 3);

/* Start a case; false in --list mode (the caller runs nothing). */
static bool begin_case(const char *name, const char *fmt, ...)
{
	char key[512];
	va_list ap;

	if (cs.open) {
		printf("case %s: %s -> (no outcome: tool bug)\n", cs.name,
		       cs.input);
		cs.open = false;
	}
	snprintf(cs.name, sizeof(cs.name), "%s", name);
	va_start(ap, fmt);
	vsnprintf(cs.input, sizeof(cs.input), fmt, ap);
	va_end(ap);
	snprintf(key, sizeof(key), "%s|%s", cs.name, cs.input);
	hset_add(&cs.group, str_hash(key));
	if (cs.dry)
		return false;
	hset_add(&cs.all, str_hash(key));
	cs.open = true;
	note("case %s: %s ...", cs.name, cs.input);
	return true;
}

static void end_case(struct outcome o)
{
	printf("case %s: %s -> %s\n", cs.name, cs.input, outcome_str(o));
	fflush(stdout);
	cs.open = false;
	cs.cases++;
}

/* CASE(name, fmt, ...) statement: runs statement, which ends the case */
#define CASE(name, ...)	\
	for (bool case_on_ = begin_case(name, __VA_ARGS__); case_on_; \
	     case_on_ = false)
/* Cases that need --device: counted by --list, skipped without it. */
#define NEED_DEV	(opt.device || cs.dry || (cs.skipped++, false))

/* ---------------------------------------------------------------------- */
/* RDMA sessions                                                          */

static struct sockaddr_storage srv_addr;

#define MAX_CONNS	4
#define MAX_SLOTS	((int)TRS_MAX_QUEUE_DEPTH)
#define SMALL_BUF	1024			/* per-slot header buffer */
#define TABLE_BYTES	(sizeof(struct trs_msg_chunks) + \
			 TRS_MAX_QUEUE_DEPTH * sizeof(struct trs_chunk_desc))
#define BIG_IO		(TRS_MAX_IO_SIZE + 2 * TRS_HDR_AREA)
#define EXTRA_RECVS	8

/* wr_id: kind in the high half */
#define WR_RECV		1ULL
#define WR_SEND		2ULL
#define WR_ID(kind, v)	((kind) << 32 | (uint32_t)(v))

enum cstate { C_NONE, C_ADDR, C_ROUTE, C_CONNECTING, C_ESTABLISHED,
	      C_REJECTED, C_ERROR, C_DISCONNECTED };

struct hsess;

struct hconn {
	struct hsess *s;
	int idx;
	struct rdma_cm_id *id;
	struct ibv_cq *cq;
	enum cstate state;
	int err;			/* C_REJECTED, C_ERROR */
	bool was_established;
	struct trs_msg_conn_rsp rsp;
	unsigned int recvs;		/* posted, not completed */
};

struct sess_opts {
	uint16_t conn_cnt;		/* connections to make (0: 1) */
	uint16_t max_qd;		/* asked (0: 128) */
	uint32_t caps;
	bool small;			/* no data buffers (flood) */
	bool no_recvs;			/* post only the chunk table receive */
	bool no_repost;			/* do not repost consumed receives */
	uint8_t rnr_retry;		/* 0: 7 */
	bool rnr_set;
};

struct hsess {
	struct sess_opts o;
	struct rdma_event_channel *ec;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t buf_len, tbl_off, small_off, rd_off, wr_off, io_len;
	unsigned int small_cnt;
	struct hconn conn[MAX_CONNS];
	int nconn;
	uint8_t uuid[16];
	uint8_t key[TRS_SESS_KEY_LEN];	/* from connection 0's accept */
	uint16_t qd;
	uint32_t max_io;
	uint32_t caps;
	bool have_table, closed, dead_qp;
	uint32_t table_early;		/* table length, before the accept */
	struct trs_chunk_desc *chunk;	/* MAX_SLOTS */
	int16_t *rsp;			/* per slot: -1 none, else status */
	uint32_t *rsp_len;
	uint16_t *rsp_tag;		/* per slot: the last reply's slot field */
	bool *pending;
	unsigned int next_slot;
	unsigned long n_hb, n_bad_imm, n_rsp;
	/* the device opened in it, if any */
	bool dev_open;
	uint32_t dev_id;
	uint64_t nsectors;
	uint32_t lbs;
	bool dev_ro;
};

static unsigned int cap_qd(const struct hsess *s)
{
	unsigned int q = s->o.max_qd ? s->o.max_qd : 128;

	return q > 512 ? 512 : q;
}

static struct hsess *sess_alloc(const struct sess_opts *o)
{
	struct hsess *s = calloc(1, sizeof(*s));
	size_t small, io;
	int i;

	if (!s)
		die("out of memory");
	if (o)
		s->o = *o;
	if (!s->o.conn_cnt)
		s->o.conn_cnt = 1;
	s->chunk = calloc(MAX_SLOTS, sizeof(*s->chunk));
	s->rsp = malloc(MAX_SLOTS * sizeof(*s->rsp));
	s->rsp_len = calloc(MAX_SLOTS, sizeof(*s->rsp_len));
	s->rsp_tag = calloc(MAX_SLOTS, sizeof(*s->rsp_tag));
	s->pending = calloc(MAX_SLOTS, sizeof(*s->pending));
	if (!s->chunk || !s->rsp || !s->rsp_len || !s->rsp_tag || !s->pending)
		die("out of memory");
	for (i = 0; i < MAX_SLOTS; i++)
		s->rsp[i] = -1;
	s->small_cnt = cap_qd(s) + 4;
	small = (size_t)s->small_cnt * SMALL_BUF;
	io = s->o.small ? 2 * TRS_HDR_AREA : BIG_IO;
	s->io_len = io;
	s->tbl_off = 0;
	s->small_off = (TABLE_BYTES + 4095) & ~4095UL;
	s->rd_off = s->small_off + small;
	s->wr_off = s->rd_off + io;
	s->buf_len = s->wr_off + io;
	if (posix_memalign((void **)&s->buf, 4096, s->buf_len))
		die("out of memory");
	memset(s->buf, 0, s->buf_len);
	aux_bytes(s->uuid, sizeof(s->uuid));
	s->ec = rdma_create_event_channel();
	if (!s->ec)
		die("rdma_create_event_channel: %s", strerror(errno));
	i = fcntl(s->ec->fd, F_GETFL);
	fcntl(s->ec->fd, F_SETFL, i | O_NONBLOCK);
	for (i = 0; i < MAX_CONNS; i++) {
		s->conn[i].s = s;
		s->conn[i].idx = i;
	}
	return s;
}

static void parse_table(struct hsess *s, uint32_t len)
{
	const struct trs_msg_chunks *t = (const void *)(s->buf + s->tbl_off);
	unsigned int i, n = le16toh(t->count);

	/*
	 * The server sends the table once connection 0 is established on
	 * its side: it can be here before our ESTABLISHED event gave us the
	 * queue depth.  Parsed once it did (conn_connect()).
	 */
	if (!s->qd) {
		s->table_early = len;
		return;
	}
	if (le16toh(t->magic) != TRS_MAGIC ||
	    le16toh(t->type) != TRS_MSG_CHUNKS || n != s->qd ||
	    len != sizeof(*t) + n * sizeof(struct trs_chunk_desc) ||
	    t->reserved0 || t->reserved1 ||
	    le32toh(t->chunk_size) != TRS_HDR_AREA + s->max_io) {
		fprintf(stderr, "rnbd-hostile: warning: malformed chunk table (len %u count %u qd %u)\n",
			len, n, s->qd);
		if (n > s->qd)
			n = s->qd;
	}
	for (i = 0; i < n && i < MAX_SLOTS; i++)
		memcpy(&s->chunk[i], (const uint8_t *)t + sizeof(*t) +
		       i * sizeof(struct trs_chunk_desc), sizeof(s->chunk[i]));
	s->have_table = true;
}

static int post_recv(struct hconn *c)
{
	struct hsess *s = c->s;
	struct ibv_sge sge = {
		.addr	= (uintptr_t)(s->buf + s->tbl_off),
		.length	= TABLE_BYTES,
		.lkey	= s->mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id	 = WR_ID(WR_RECV, c->idx),
		.sg_list = &sge,
		.num_sge = 1,
	}, *bad;

	if (!c->id || !c->id->qp || ibv_post_recv(c->id->qp, &wr, &bad))
		return -1;
	c->recvs++;
	return 0;
}

static void mark_closed(struct hsess *s)
{
	s->closed = true;
}

static bool auth_take(struct hsess *s, uint32_t len);

/* Take every completion of connection @c. */
static void cq_pump(struct hconn *c)
{
	struct hsess *s = c->s;
	struct ibv_wc wc[16];
	int n, i;

	if (!c->cq)
		return;
	while ((n = ibv_poll_cq(c->cq, 16, wc)) > 0) {
		for (i = 0; i < n; i++) {
			struct ibv_wc *w = &wc[i];
			uint64_t kind = w->wr_id >> 32;
			uint32_t imm, type, slot;

			if (kind == WR_RECV)
				c->recvs--;
			if (w->status != IBV_WC_SUCCESS) {
				note("conn %d: %s completion: %s", c->idx,
				     kind == WR_RECV ? "recv" : "send",
				     ibv_wc_status_str(w->status));
				s->dead_qp = true;
				mark_closed(s);
				continue;
			}
			if (kind != WR_RECV)
				continue;
			if (!s->o.no_repost)
				post_recv(c);
			if (w->opcode == IBV_WC_RECV &&
			    !(w->wc_flags & IBV_WC_WITH_IMM)) {
				if (!auth_take(s, w->byte_len))
					parse_table(s, w->byte_len);
				continue;
			}
			imm = ntohl(w->imm_data);
			type = imm >> TRS_IMM_TYPE_SHIFT;
			if (w->opcode == IBV_WC_RECV) {
				if (imm == trs_imm_pack(TRS_IMM_HB, 0, 0))
					s->n_hb++;
				else
					s->n_bad_imm++;
				continue;
			}
			if (type == TRS_IMM_RSP) {
				uint32_t tag = trs_imm_slot(imm);

				slot = s->caps & TRS_CAP_SLOT_GEN ?
				       trs_tag_idx(tag) : tag;
				if (slot < MAX_SLOTS) {
					s->rsp_tag[slot] = tag;
					s->rsp[slot] = imm & 0xfff;
					s->rsp_len[slot] = w->byte_len;
					s->pending[slot] = false;
					s->n_rsp++;
				} else {
					s->n_bad_imm++;
				}
			} else if (type == TRS_IMM_RSP_BATCH) {
				unsigned int base = (imm >> 16) & 0xfff, b;

				for (b = 0; b <= 16; b++) {
					slot = b ? base + b : base;
					if (b && !(imm & (1u << (b - 1))))
						continue;
					if (slot < MAX_SLOTS) {
						s->rsp[slot] = 0;
						s->rsp_len[slot] = 0;
						s->pending[slot] = false;
						s->n_rsp++;
					}
				}
			} else {
				s->n_bad_imm++;
			}
		}
	}
}

static struct hconn *ev_conn(struct rdma_cm_event *ev)
{
	return ev->id ? ev->id->context : NULL;
}

/* Handle the CM events that are there, waiting at most @ms for one. */
static void cm_pump(struct hsess *s, int ms)
{
	struct rdma_cm_event *ev;
	struct pollfd pfd = { .fd = s->ec->fd, .events = POLLIN };

	if (ms > 0 && poll(&pfd, 1, ms) <= 0)
		return;
	while (!rdma_get_cm_event(s->ec, &ev)) {
		struct hconn *c = ev_conn(ev);
		const struct trs_msg_conn_rsp *rsp = ev->param.conn.private_data;
		uint8_t pdlen = ev->param.conn.private_data_len;

		if (!c) {
			rdma_ack_cm_event(ev);
			continue;
		}
		switch (ev->event) {
		case RDMA_CM_EVENT_ADDR_RESOLVED:
			c->state = C_ADDR;
			break;
		case RDMA_CM_EVENT_ROUTE_RESOLVED:
			c->state = C_ROUTE;
			break;
		case RDMA_CM_EVENT_ADDR_ERROR:
		case RDMA_CM_EVENT_ROUTE_ERROR:
			c->state = C_ERROR;
			c->err = EHOSTUNREACH;
			break;
		case RDMA_CM_EVENT_UNREACHABLE:
		case RDMA_CM_EVENT_CONNECT_ERROR:
			c->state = C_ERROR;
			c->err = ETIMEDOUT;
			break;
		case RDMA_CM_EVENT_ESTABLISHED:
			c->state = C_ESTABLISHED;
			c->was_established = true;
			memset(&c->rsp, 0, sizeof(c->rsp));
			if (rsp)
				memcpy(&c->rsp, rsp, pdlen < sizeof(c->rsp) ?
				       pdlen : sizeof(c->rsp));
			break;
		case RDMA_CM_EVENT_REJECTED:
			c->state = C_REJECTED;
			c->err = ECONNREFUSED;
			if (rsp && pdlen >= sizeof(*rsp) &&
			    le16toh(rsp->magic) == TRS_MAGIC &&
			    le16toh(rsp->status))
				c->err = le16toh(rsp->status);
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
		case RDMA_CM_EVENT_ADDR_CHANGE:
			if (c->state == C_ESTABLISHED)
				c->state = C_DISCONNECTED;
			mark_closed(s);
			break;
		default:
			break;
		}
		rdma_ack_cm_event(ev);
	}
}

/* One round: CM events (waiting up to @ms), then every CQ. */
static void pump(struct hsess *s, int ms)
{
	int i;

	cm_pump(s, ms);
	for (i = 0; i < s->nconn; i++)
		cq_pump(&s->conn[i]);
}

static int wait_state(struct hconn *c, enum cstate busy, int ms)
{
	long end = now_ms() + ms;

	while (c->state == busy) {
		if (now_ms() >= end)
			return -ETIMEDOUT;
		pump(c->s, 1);
	}
	return 0;
}

/* Resolve, create the QP and post the receives of connection @idx. */
static int conn_prepare(struct hsess *s, int idx)
{
	struct hconn *c = &s->conn[idx];
	unsigned int qd = cap_qd(s), nrecv;
	struct ibv_qp_init_attr qa = {};
	int err;

	if (idx >= MAX_CONNS)
		return -EINVAL;
	if (idx >= s->nconn)
		s->nconn = idx + 1;
	c->state = C_NONE;
	if (rdma_create_id(s->ec, &c->id, c, RDMA_PS_TCP))
		return -errno;
	c->state = C_NONE;
	if (rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&srv_addr,
			      opt.timeout_ms))
		return -errno;
	if (wait_state(c, C_NONE, opt.timeout_ms + 500))
		return -ETIMEDOUT;
	if (c->state != C_ADDR)
		return -(c->err ? c->err : EHOSTUNREACH);
	if (rdma_resolve_route(c->id, opt.timeout_ms))
		return -errno;
	if (wait_state(c, C_ADDR, opt.timeout_ms + 500))
		return -ETIMEDOUT;
	if (c->state != C_ROUTE)
		return -(c->err ? c->err : EHOSTUNREACH);

	if (!s->pd) {
		s->pd = ibv_alloc_pd(c->id->verbs);
		if (!s->pd)
			return -ENOMEM;
		s->mr = ibv_reg_mr(s->pd, s->buf, s->buf_len,
				   IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_WRITE);
		if (!s->mr)
			return -errno;
	} else if (s->pd->context != c->id->verbs) {
		return -EXDEV;
	}
	nrecv = qd + EXTRA_RECVS + 2;
	c->cq = ibv_create_cq(c->id->verbs, 2 * qd + 32 + nrecv, NULL, NULL, 0);
	if (!c->cq)
		return -errno;
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.sq_sig_all = 1;
	qa.cap.max_send_wr = 2 * qd + 16;
	qa.cap.max_recv_wr = nrecv;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(c->id, s->pd, &qa))
		return -errno;
	if (s->o.no_recvs) {
		/* only the chunk table's, on connection 0 */
		err = idx ? 0 : post_recv(c);
	} else {
		unsigned int i;

		for (err = 0, i = 0; i < qd + EXTRA_RECVS && !err; i++)
			err = post_recv(c);
	}
	return err ? -ENOMEM : 0;
}

static struct outcome errno_outcome(int err)
{
	if (err == -ETIMEDOUT)
		return OUT_TIMEOUT(opt.timeout_ms);
	return OUT(O_REJECTED, -err);
}

/*
 * Connect the prepared connection @idx with @pdlen bytes of private data
 * @pd.  Accepted: the session learns the limits (from connection 0).
 */
static struct outcome conn_connect(struct hsess *s, int idx, const void *pd,
				   uint8_t pdlen)
{
	struct hconn *c = &s->conn[idx];
	struct rdma_conn_param p = {
		.private_data		= pdlen ? pd : NULL,
		.private_data_len	= pdlen,
		.flow_control		= 1,
		.retry_count		= 7,
		.rnr_retry_count	= s->o.rnr_set ? s->o.rnr_retry : 7,
	};

	c->state = C_CONNECTING;
	if (rdma_connect(c->id, &p))
		return OUT(O_REJECTED, errno);
	if (wait_state(c, C_CONNECTING, opt.timeout_ms))
		return OUT_TIMEOUT(opt.timeout_ms);
	if (c->state == C_REJECTED)
		return OUT(O_REJECTED, c->err);
	if (c->state == C_ERROR)
		return errno_outcome(-c->err);
	if (c->state != C_ESTABLISHED)
		return OUT(O_CLOSED, 0);
	if (!idx || !s->qd) {
		s->qd = le16toh(c->rsp.queue_depth);
		s->max_io = le32toh(c->rsp.max_io_size);
		s->caps = le32toh(c->rsp.caps);
		memcpy(s->key, c->rsp.sess_key, sizeof(s->key));
		if (s->qd > MAX_SLOTS)
			s->qd = MAX_SLOTS;
		if (s->qd && s->table_early) {
			parse_table(s, s->table_early);
			s->table_early = 0;
		}
	}
	return OUT(O_ACCEPTED, 0);
}

/* A well-formed connect request for connection @idx of @s. */
static void conn_req_fill(const struct hsess *s, int idx,
			  struct trs_msg_conn_req *r)
{
	memset(r, 0, sizeof(*r));
	r->magic = htole16(TRS_MAGIC);
	r->ver_major = TRS_PROTO_VER_MAJOR;
	r->ver_minor = TRS_PROTO_VER_MINOR;
	r->caps = htole32(s->o.caps);
	r->conn_idx = htole16(idx);
	r->conn_cnt = htole16(s->o.conn_cnt);
	r->max_queue_depth = htole16(s->o.max_qd ? s->o.max_qd : 128);
	memcpy(r->sess_uuid, s->uuid, sizeof(r->sess_uuid));
	if (idx)
		memcpy(r->sess_key, s->key, sizeof(r->sess_key));
}

/* Prepare and connect @idx with @pd (NULL: a well-formed request). */
static struct outcome conn_open(struct hsess *s, int idx,
				const void *pd, uint8_t pdlen)
{
	struct trs_msg_conn_req r;
	int err;

	err = conn_prepare(s, idx);
	if (err)
		return errno_outcome(err);
	if (!pd) {
		conn_req_fill(s, idx, &r);
		pd = &r;
		pdlen = sizeof(r);
	}
	return conn_connect(s, idx, pd, pdlen);
}

static struct outcome wait_table(struct hsess *s, int ms)
{
	long end = now_ms() + ms;

	while (!s->have_table) {
		if (s->closed)
			return OUT(O_CLOSED, 0);
		if (now_ms() >= end)
			return OUT_TIMEOUT(ms);
		pump(s, 1);
	}
	return OUT(O_ACCEPTED, 0);
}

/* Connect every connection of @s well-formed and wait for the chunk table. */
static struct outcome sess_connect(struct hsess *s)
{
	struct outcome o;
	int i;

	for (i = 0; i < s->o.conn_cnt && i < MAX_CONNS; i++) {
		o = conn_open(s, i, NULL, 0);
		if (o.k != O_ACCEPTED)
			return o;
	}
	return wait_table(s, opt.timeout_ms);
}

/* Disconnect and free everything of @s. */
static void sess_free(struct hsess *s)
{
	long end;
	int i;
	bool waiting;

	if (!s)
		return;
	for (i = 0; i < s->nconn; i++)
		if (s->conn[i].id && s->conn[i].state == C_ESTABLISHED)
			rdma_disconnect(s->conn[i].id);
	end = now_ms() + 1000;
	do {
		waiting = false;
		for (i = 0; i < s->nconn; i++)
			if (s->conn[i].state == C_ESTABLISHED)
				waiting = true;
		if (waiting)
			pump(s, 1);
	} while (waiting && now_ms() < end);
	for (i = 0; i < s->nconn; i++) {
		struct hconn *c = &s->conn[i];

		if (c->id && c->id->qp)
			rdma_destroy_qp(c->id);
		if (c->cq)
			ibv_destroy_cq(c->cq);
		c->cq = NULL;
	}
	if (s->mr)
		ibv_dereg_mr(s->mr);
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	for (i = 0; i < s->nconn; i++)
		if (s->conn[i].id)
			rdma_destroy_id(s->conn[i].id);
	rdma_destroy_event_channel(s->ec);
	free(s->buf);
	free(s->chunk);
	free(s->rsp);
	free(s->rsp_len);
	free(s->rsp_tag);
	free(s->pending);
	free(s);
}

/*
 * A session for a case that is not about the handshake: retried while the
 * server is busy closing the sessions of earlier cases.
 */
static struct hsess *sess_new(const struct sess_opts *o, struct outcome *out)
{
	struct outcome r = OUT(O_CLOSED, 0);
	struct hsess *s = NULL;
	int tries;

	for (tries = 0; tries < 10; tries++) {
		s = sess_alloc(o);
		r = sess_connect(s);
		if (r.k == O_ACCEPTED)
			break;
		sess_free(s);
		s = NULL;
		if (r.k != O_REJECTED || (r.err != EUSERS && r.err != ENOSPC &&
					  r.err != EMFILE && r.err != ENFILE &&
					  r.err != EBUSY && r.err != EAGAIN))
			break;
		sleep_ms(300);
	}
	if (out)
		*out = r;
	return s;
}

/* ---------------------------------------------------------------------- */
/* Requests                                                               */

static int post_send(struct hsess *s, int ci, enum ibv_wr_opcode op,
		     uint32_t imm, uint64_t raddr, uint32_t rkey,
		     const void *local, uint32_t len)
{
	struct hconn *c = &s->conn[ci];
	struct ibv_sge sge = {
		.addr	= (uintptr_t)local,
		.length	= len,
		.lkey	= s->mr ? s->mr->lkey : 0,
	};
	struct ibv_send_wr wr = {
		.wr_id		= WR_ID(WR_SEND, 0),
		.sg_list	= &sge,
		.num_sge	= len ? 1 : 0,
		.opcode		= op,
		.send_flags	= IBV_SEND_SIGNALED,
	}, *bad;

	if (op == IBV_WR_RDMA_WRITE_WITH_IMM || op == IBV_WR_SEND_WITH_IMM) {
		unsigned int islot = trs_imm_slot(imm);

		if (s->caps & TRS_CAP_SLOT_GEN)
			islot = trs_tag_idx(islot);

		wr.imm_data = htonl(imm);
		/* whatever the type: a reply naming the slot is awaited */
		if (islot < (unsigned int)MAX_SLOTS) {
			s->rsp[islot] = -1;
			s->pending[islot] = true;
		}
	}
	if (op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM) {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	if (ci >= s->nconn || !c->id || !c->id->qp)
		return -EINVAL;
	errno = ibv_post_send(c->id->qp, &wr, &bad);
	return errno ? -errno : 0;
}

/* A slot with no request in flight (round robin). */
static int slot_pick(struct hsess *s)
{
	unsigned int i;

	for (i = 0; i < s->qd; i++) {
		unsigned int slot = (s->next_slot + i) % s->qd;

		if (!s->pending[slot]) {
			s->next_slot = slot + 1;
			return slot;
		}
	}
	return 0;
}

/* Where the payload of a request on @slot of @len bytes is built. */
static uint8_t *payload_buf(struct hsess *s, unsigned int slot, size_t len)
{
	if (len <= SMALL_BUF && slot < s->small_cnt)
		return s->buf + s->small_off + (size_t)slot * SMALL_BUF;
	if (len <= s->io_len)
		return s->buf + s->wr_off;
	return NULL;
}

static struct trs_msg_req th_make(const struct hsess *s, uint8_t dir,
				  uint32_t len)
{
	struct trs_msg_req t = { .dir = dir, .data_len = htole32(len) };

	if (dir == TRS_DIR_READ) {
		t.addr = htole64((uintptr_t)(s->buf + s->rd_off));
		t.rkey = htole32(s->mr->rkey);
	}
	return t;
}

/*
 * Build [th][usr][data] and RDMA-write it with immediate @imm into chunk
 * @wslot, right-aligned to @hdr_pos bytes before the data area (the
 * header length, normally).  @wlen: bytes written (-1: all).
 */
static int req_write(struct hsess *s, int ci, unsigned int wslot, uint32_t imm,
		     uint32_t hdr_pos, const struct trs_msg_req *th,
		     const void *usr, size_t usr_len, const void *data,
		     size_t dlen, long wlen, enum ibv_wr_opcode op)
{
	size_t len = (th ? sizeof(*th) : 0) + usr_len + dlen;
	uint8_t *p = payload_buf(s, wslot, len);
	uint64_t raddr;

	if (!p || wslot >= MAX_SLOTS)
		return -EINVAL;
	if (th)
		memcpy(p, th, sizeof(*th));
	if (usr_len)
		memcpy(p + (th ? sizeof(*th) : 0), usr, usr_len);
	if (dlen && data)
		memmove(p + (th ? sizeof(*th) : 0) + usr_len, data, dlen);
	else if (dlen)
		memset(p + (th ? sizeof(*th) : 0) + usr_len, 0xa5, dlen);
	if (wlen >= 0)
		len = wlen;
	raddr = le64toh(s->chunk[wslot].addr) + TRS_HDR_AREA - hdr_pos;
	return post_send(s, ci, op, imm, raddr, le32toh(s->chunk[wslot].rkey),
			 p, len);
}

/* Wait for the reply on @slot: answered, session closed or timeout. */
static struct outcome wait_rsp(struct hsess *s, unsigned int slot, int ms)
{
	long end = now_ms() + ms;

	for (;;) {
		pump(s, 0);
		if (slot < (unsigned int)MAX_SLOTS && s->rsp[slot] >= 0)
			return OUT(O_ANSWERED, s->rsp[slot]);
		if (s->closed)
			return OUT(O_CLOSED, 0);
		if (now_ms() >= end)
			return OUT_TIMEOUT(ms);
		pump(s, 1);
	}
}

/* Wait for the session to be closed (or @ms): closed or timeout. */
static struct outcome wait_closed(struct hsess *s, int ms)
{
	long end = now_ms() + ms;

	while (!s->closed) {
		if (now_ms() >= end)
			return OUT_TIMEOUT(ms);
		pump(s, 1);
	}
	return OUT(O_CLOSED, 0);
}

/*
 * A request with transport header @th on a free slot of connection @ci:
 * the usual immediate and placement.  Returns the outcome; *slotp the slot.
 */
static struct outcome req_th(struct hsess *s, int ci,
			     const struct trs_msg_req *th, const void *usr,
			     size_t usr_len, const void *data, size_t dlen,
			     int *slotp)
{
	int slot = slot_pick(s);
	uint32_t hl = sizeof(*th) + usr_len;
	int err;

	if (slotp)
		*slotp = slot;
	err = req_write(s, ci, slot, trs_imm_pack(TRS_IMM_REQ, slot, hl), hl, th,
			usr, usr_len, data, dlen, -1,
			IBV_WR_RDMA_WRITE_WITH_IMM);
	if (err)
		return s->closed ? OUT(O_CLOSED, 0) : OUT(O_REJECTED, -err);
	return wait_rsp(s, slot, opt.timeout_ms);
}

/* A well-formed transport request carrying @usr. */
static struct outcome req_do(struct hsess *s, uint8_t dir, const void *usr,
			     size_t usr_len, const void *data, uint32_t len,
			     int *slotp)
{
	struct trs_msg_req th = th_make(s, dir, dir == TRS_DIR_NONE ? 0 : len);

	return req_th(s, 0, &th, usr, usr_len, data,
		      dir == TRS_DIR_WRITE ? len : 0, slotp);
}

/* ---------------------------------------------------------------------- */
/* Block messages                                                         */

static struct rnbd_msg_hdr blk_hdr(uint16_t type)
{
	return (struct rnbd_msg_hdr){ .type = htole16(type),
				      .version = RNBD_PROTO_VER };
}

static struct rnbd_msg_open open_msg(const char *path, uint8_t mode)
{
	struct rnbd_msg_open m = { .hdr = blk_hdr(RNBD_MSG_OPEN),
				   .access_mode = mode };
	size_t n = strlen(path);

	if (n > RNBD_PATH_MAX - 1)
		n = RNBD_PATH_MAX - 1;
	memcpy(m.path, path, n);
	m.path_len = htole16(n);
	return m;
}

static struct rnbd_msg_close close_msg(uint32_t id)
{
	return (struct rnbd_msg_close){ .hdr = blk_hdr(RNBD_MSG_CLOSE),
					.dev_id = htole32(id) };
}

static struct rnbd_msg_io io_msg(const struct hsess *s, uint8_t op,
				 uint32_t len, uint64_t sector)
{
	return (struct rnbd_msg_io){ .hdr = blk_hdr(RNBD_MSG_IO), .op = op,
				     .dev_id = htole32(s->dev_id),
				     .len = htole32(len),
				     .sector = htole64(sector) };
}

/* Send OPEN @m (a READ of 64 bytes); on success remember the device. */
static struct outcome open_do(struct hsess *s, const struct rnbd_msg_open *m,
			      bool remember)
{
	const struct rnbd_msg_open_rsp *r = (const void *)(s->buf + s->rd_off);
	struct outcome o;

	memset(s->buf + s->rd_off, 0, sizeof(*r));
	o = req_do(s, TRS_DIR_READ, m, sizeof(*m), NULL, sizeof(*r), NULL);
	if (o.k == O_ANSWERED && !o.err && remember && !s->dev_open) {
		s->dev_open = true;
		s->dev_id = le32toh(r->dev_id);
		s->nsectors = le64toh(r->nsectors);
		s->lbs = le16toh(r->logical_block_size);
		if (s->lbs < 512 || s->lbs > 65536)
			s->lbs = 512;
		s->dev_ro = m->access_mode == RNBD_ACCESS_RO;
	}
	return o;
}

/* Open --device, retried while the server still closes an earlier open. */
static struct outcome dev_open(struct hsess *s, bool ro)
{
	struct rnbd_msg_open m = open_msg(opt.device, ro ? RNBD_ACCESS_RO :
					  RNBD_ACCESS_RW);
	struct outcome o;
	int tries;

	for (tries = 0; tries < 15; tries++) {
		o = open_do(s, &m, true);
		if (o.k != O_ANSWERED || o.err != EBUSY)
			break;
		sleep_ms(200);
	}
	return o;
}

static struct outcome close_do(struct hsess *s, uint32_t id)
{
	struct rnbd_msg_close m = close_msg(id);

	return req_do(s, TRS_DIR_NONE, &m, sizeof(m), NULL, 0, NULL);
}

static struct outcome io_do(struct hsess *s, const struct rnbd_msg_io *m,
			    uint8_t dir, const void *data, uint32_t len)
{
	return req_do(s, dir, m, sizeof(*m), data, len, NULL);
}

/* Close the device of @s (if the session lives) and free it. */
static void sess_done(struct hsess *s)
{
	if (s && s->dev_open && !s->closed)
		close_do(s, s->dev_id);
	sess_free(s);
}

/*
 * The shared session of the cases that the server answers with an error:
 * kept while it lives, with --device opened in it if @devmode is 0 (ro)
 * or 1 (rw), none if -1.
 */
static struct hsess *shared;
static int shared_mode = -2;
static struct outcome shared_err;

static struct hsess *shared_get(int devmode)
{
	struct outcome o;

	if (shared && (shared->closed || shared_mode != devmode)) {
		sess_done(shared);
		shared = NULL;
	}
	if (shared)
		return shared;
	shared = sess_new(NULL, &o);
	if (shared && devmode >= 0) {
		o = dev_open(shared, devmode == 0);
		if (o.k != O_ANSWERED || o.err) {
			fprintf(stderr, "rnbd-hostile: setup: OPEN %s: %s\n",
				opt.device, outcome_str(o));
			sess_free(shared);
			shared = NULL;
		}
	}
	if (!shared) {
		if (o.k == O_ANSWERED || o.k == O_ACCEPTED)
			o = OUT(O_CLOSED, 0);
		shared_err = o;
		fprintf(stderr, "rnbd-hostile: setup of a session failed: %s\n",
			outcome_str(o));
		return NULL;
	}
	shared_mode = devmode;
	return shared;
}

/* After a case on the shared session: drop it if it died. */
static struct outcome shared_after(struct outcome o)
{
	if (shared && (o.k == O_CLOSED || o.k == O_TIMEOUT || shared->closed)) {
		sess_free(shared);
		shared = NULL;
	}
	return o;
}

static void shared_put(void)
{
	sess_done(shared);
	shared = NULL;
}

/* ---------------------------------------------------------------------- */
/* Baseline, groups, main                                                 */

/*
 * The legitimate exchange every other case is measured against: a session
 * of two connections (the second joins with the key), OPEN of --device,
 * a 4 KiB write and a read back, CLOSE.  Without --device: a CLOSE of an
 * unknown id, which the server must answer with ENODEV.
 */
static void run_baseline(void)
{
	struct sess_opts so = { .conn_cnt = 2 };
	struct hsess *s;
	struct outcome o;
	uint8_t data[4096];
	int slot;

	begin_case("baseline", "2 connections%s%s%s", opt.device ?
		   ", OPEN rw " : ", CLOSE of dev_id 12345",
		   opt.device ? opt.device : "",
		   opt.device ? ", 4 KiB write and read back, CLOSE" : "");
	s = sess_new(&so, &o);
	if (!s) {
		end_case(o);
		die("baseline failed: cannot connect to %s port %d: %s",
		    opt.server, opt.port, outcome_str(o));
	}
	printf("hostile: session: queue depth %u, max_io_size %u, caps %#x\n",
	       s->qd, s->max_io, s->caps);
	if (!opt.device) {
		o = close_do(s, 12345);
		end_case(o);
		sess_free(s);
		if (o.k != O_ANSWERED || o.err != ENODEV)
			die("baseline failed: CLOSE of an unknown device: %s",
			    outcome_str(o));
		return;
	}
	o = dev_open(s, false);
	if (o.k != O_ANSWERED || o.err) {
		end_case(o);
		sess_free(s);
		die("baseline failed: OPEN %s: %s", opt.device, outcome_str(o));
	}
	printf("hostile: device %s: dev_id %u, %llu sectors, block size %u\n",
	       opt.device, s->dev_id, (unsigned long long)s->nsectors, s->lbs);
	aux_bytes(data, sizeof(data));
	if (s->nsectors < 8 || s->lbs > sizeof(data)) {
		o = OUT(O_ANSWERED, 0);
	} else {
		struct rnbd_msg_io w = io_msg(s, RNBD_OP_WRITE, sizeof(data), 0);
		struct rnbd_msg_io r = io_msg(s, RNBD_OP_READ, sizeof(data), 0);

		o = io_do(s, &w, TRS_DIR_WRITE, data, sizeof(data));
		if (o.k == O_ANSWERED && !o.err) {
			memset(s->buf + s->rd_off, 0, sizeof(data));
			o = req_do(s, TRS_DIR_READ, &r, sizeof(r), NULL,
				   sizeof(data), &slot);
		}
		if (o.k == O_ANSWERED && !o.err &&
		    (s->rsp_len[slot] != sizeof(data) ||
		     memcmp(s->buf + s->rd_off, data, sizeof(data)))) {
			end_case(o);
			sess_done(s);
			die("baseline failed: the read back differs from the write (reply of %u bytes)",
			    s->rsp_len[slot]);
		}
	}
	if (o.k == O_ANSWERED && !o.err)
		o = close_do(s, s->dev_id);
	if (o.k == O_ANSWERED && !o.err)
		s->dev_open = false;
	end_case(o);
	sess_done(s);
	if (o.k != O_ANSWERED || o.err)
		die("baseline failed: %s", outcome_str(o));
}

/* ---------------------------------------------------------------------- */
/* Group cm: the connect request                                          */

static const struct sess_opts cm_so = { .small = true, .max_qd = 16 };

/* A well-formed connection 0 request of a new one-connection session. */
static struct trs_msg_conn_req cm_good(void)
{
	struct trs_msg_conn_req r = {
		.magic		 = htole16(TRS_MAGIC),
		.ver_major	 = TRS_PROTO_VER_MAJOR,
		.ver_minor	 = TRS_PROTO_VER_MINOR,
		.conn_cnt	 = htole16(1),
		.max_queue_depth = htole16(16),
	};

	aux_bytes(r.sess_uuid, sizeof(r.sess_uuid));
	return r;
}

/*
 * Connect a fresh connection with the first @len bytes of @pd as private
 * data.  Accepted and @keep: the connection is handed back, else freed.
 */
static struct outcome cm_attempt(const void *pd, uint8_t len,
				 struct hsess **keep)
{
	struct hsess *s = sess_alloc(&cm_so);
	const struct trs_msg_conn_req *r = pd;
	struct outcome o = conn_open(s, 0, pd, len);

	if (o.k == O_ACCEPTED && len >= sizeof(*r)) {
		uint32_t granted = le32toh(s->conn[0].rsp.caps);

		if (granted & ~(le32toh(r->caps) & TRS_CAPS_KNOWN))
			fprintf(stderr, "rnbd-hostile: note: caps %#x granted for %#x asked\n",
				granted, le32toh(r->caps));
	}
	if (o.k == O_ACCEPTED && keep) {
		*keep = s;
		return o;
	}
	sess_free(s);
	return o;
}

/* Connection 0 of a session of @cnt connections (the others not made). */
static struct hsess *cm_host(uint16_t cnt, struct outcome *o)
{
	struct sess_opts so = cm_so;
	struct hsess *s;
	int tries;

	so.conn_cnt = cnt;
	for (tries = 0; tries < 10; tries++) {
		s = sess_alloc(&so);
		*o = conn_open(s, 0, NULL, 0);
		if (o->k == O_ACCEPTED && cnt == 1)
			*o = wait_table(s, opt.timeout_ms);
		if (o->k == O_ACCEPTED)
			return s;
		sess_free(s);
		if (o->k != O_REJECTED || (o->err != EUSERS && o->err != ENOSPC &&
					   o->err != EMFILE && o->err != ENFILE))
			break;
		sleep_ms(300);
	}
	return NULL;
}

/* The request connection @idx of @host sends, with @cnt connections. */
static struct trs_msg_conn_req cm_join(const struct hsess *host, uint16_t idx)
{
	struct trs_msg_conn_req r;

	conn_req_fill(host, idx, &r);
	return r;
}

/* A join attempt @r on @host (created if NULL), which is freed after. */
static struct outcome cm_on_host(uint16_t cnt, struct trs_msg_conn_req *r,
				 void (*edit)(struct hsess *, struct trs_msg_conn_req *))
{
	struct outcome o;
	struct hsess *h = cm_host(cnt, &o);

	if (!h)
		return o;
	*r = cm_join(h, 1);
	edit(h, r);
	o = cm_attempt(r, sizeof(*r), NULL);
	sess_free(h);
	return o;
}

static void ed_uuid_unknown(struct hsess *h, struct trs_msg_conn_req *r)
{
	(void)h;
	aux_bytes(r->sess_uuid, sizeof(r->sess_uuid));
}

static void ed_key_zero(struct hsess *h, struct trs_msg_conn_req *r)
{
	(void)h;
	memset(r->sess_key, 0, sizeof(r->sess_key));
}

static void ed_key_random(struct hsess *h, struct trs_msg_conn_req *r)
{
	(void)h;
	aux_bytes(r->sess_key, sizeof(r->sess_key));
}

static uint32_t ed_bit;

static void ed_key_flip(struct hsess *h, struct trs_msg_conn_req *r)
{
	(void)h;
	r->sess_key[ed_bit / 8] ^= 1u << (ed_bit % 8);
}

static void ed_cnt_plus(struct hsess *h, struct trs_msg_conn_req *r)
{
	r->conn_cnt = htole16(h->o.conn_cnt + 1);
}

static void ed_cnt_one(struct hsess *h, struct trs_msg_conn_req *r)
{
	(void)h;
	r->conn_cnt = htole16(1);
	r->conn_idx = 0;
	memset(r->sess_key, 0, sizeof(r->sess_key));
}

static void ed_idx_cnt(struct hsess *h, struct trs_msg_conn_req *r)
{
	r->conn_idx = htole16(h->o.conn_cnt);
}

static void ed_qd_other(struct hsess *h, struct trs_msg_conn_req *r)
{
	(void)h;
	r->max_queue_depth = htole16(1);
}

static void ed_caps_other(struct hsess *h, struct trs_msg_conn_req *r)
{
	(void)h;
	r->caps = htole32(TRS_CAPS_KNOWN);
}

/* Connection 0 again, with the uuid of a live session and key @how. */
static struct outcome cm_conn0_again(uint16_t cnt, int how)
{
	struct trs_msg_conn_req r;
	struct outcome o;
	struct hsess *h = cm_host(cnt, &o);

	if (!h)
		return o;
	r = cm_join(h, 0);
	r.conn_cnt = htole16(cnt);
	if (how == 2)
		aux_bytes(r.sess_key, sizeof(r.sess_key));
	o = cm_attempt(&r, sizeof(r), NULL);
	sess_free(h);
	return o;
}

/*
 * Connection 0 with the uuid and key of a live session: the server closes
 * that one (EAGAIN); then it must be gone, and the uuid usable again.
 */
static struct hsess *rep_host;
static struct trs_msg_conn_req rep_req;
static struct outcome rep_err;

static struct outcome cm_replace(uint16_t cnt)
{
	struct outcome o;

	rep_host = cm_host(cnt, &o);
	if (!rep_host)
		return rep_err = o;
	rep_req = cm_join(rep_host, 0);
	rep_req.conn_cnt = htole16(cnt);
	memcpy(rep_req.sess_key, rep_host->key, sizeof(rep_req.sess_key));
	return cm_attempt(&rep_req, sizeof(rep_req), NULL);
}

static struct outcome cm_replaced_old(void)
{
	if (!rep_host)
		return rep_err;
	return wait_closed(rep_host, opt.timeout_ms);
}

static struct outcome cm_replaced_new(void)
{
	long end = now_ms() + opt.timeout_ms;
	struct outcome o;

	if (!rep_host)
		return rep_err;
	memset(rep_req.sess_key, 0, sizeof(rep_req.sess_key));
	rep_req.conn_cnt = htole16(1);
	do {
		o = cm_attempt(&rep_req, sizeof(rep_req), NULL);
		if (o.k != O_REJECTED || (o.err != EEXIST && o.err != EAGAIN &&
					  o.err != EBUSY))
			break;
		sleep_ms(100);
	} while (now_ms() < end);
	sess_free(rep_host);
	rep_host = NULL;
	return o;
}

static void grp_cm(void)
{
	struct trs_msg_conn_req r;
	uint8_t raw[56];
	struct outcome o;
	uint32_t i;

	for (i = 0; i < sizeof(r); i++)
		CASE("cm-short", "private data of %u bytes (of 48)", i) {
			r = cm_good();
			end_case(cm_attempt(&r, i, NULL));
		}
	CASE("cm-long", "56 bytes of private data, 8 of garbage after the request") {
		r = cm_good();
		memcpy(raw, &r, sizeof(r));
		aux_bytes(raw + sizeof(r), sizeof(raw) - sizeof(r));
		end_case(cm_attempt(raw, sizeof(raw), NULL));
	}
	{
		uint32_t magics[] = { 0, 0x5b7e, 0xffff, 0x7e5a, 0xfe5b,
				      rnd(0, 0xffff) };

		for (i = 0; i < 6; i++) {
			if (magics[i] == TRS_MAGIC)
				magics[i] ^= 1;
			CASE("cm-magic", "magic %#x", magics[i]) {
				r = cm_good();
				r.magic = htole16(magics[i]);
				end_case(cm_attempt(&r, sizeof(r), NULL));
			}
		}
	}
	{
		uint8_t majs[] = { 0, 2, 255, (uint8_t)rnd(3, 254) };
		uint8_t mins[] = { 0, 3, 5, 255 };

		for (i = 0; i < 4; i++)
			CASE("cm-ver-major", "ver_major %u", majs[i]) {
				r = cm_good();
				r.ver_major = majs[i];
				end_case(cm_attempt(&r, sizeof(r), NULL));
			}
		for (i = 0; i < 4; i++)
			CASE("cm-ver-minor", "ver_minor %u", mins[i]) {
				r = cm_good();
				r.ver_minor = mins[i];
				end_case(cm_attempt(&r, sizeof(r), NULL));
			}
	}
	{
		uint32_t caps[] = { 0x1, 0x8, 0x10, 0x80000000, 0xffffffff,
				    TRS_CAP_RSP_BATCH, TRS_CAP_HEARTBEAT,
				    TRS_CAPS_KNOWN,
				    (rnd(0, 0xffffffff) | 0x100) & ~TRS_CAPS_KNOWN,
				    rnd(0, 0xffffffff) | 0x1 };

		for (i = 0; i < 10; i++)
			CASE("cm-caps", "caps %#x", caps[i]) {
				r = cm_good();
				r.caps = htole32(caps[i]);
				end_case(cm_attempt(&r, sizeof(r), NULL));
			}
	}
	{
		static const uint16_t ic[][2] = {
			{ 1, 1 }, { 2, 2 }, { 5, 2 }, { 1023, 1023 },
			{ 1024, 1024 }, { 0xffff, 0xffff }, { 0, 0 },
			{ 0, 1025 }, { 0, 65535 }, { 0xffff, 0 },
		};
		uint16_t rc = rnd(1026, 65534), ri = rnd(2, 1024);

		for (i = 0; i < ARRAY_SIZE(ic); i++)
			CASE("cm-idx-cnt", "conn_idx %u conn_cnt %u",
			     ic[i][0], ic[i][1]) {
				r = cm_good();
				r.conn_idx = htole16(ic[i][0]);
				r.conn_cnt = htole16(ic[i][1]);
				end_case(cm_attempt(&r, sizeof(r), NULL));
			}
		CASE("cm-idx-cnt", "conn_idx 0 conn_cnt %u", rc) {
			r = cm_good();
			r.conn_cnt = htole16(rc);
			end_case(cm_attempt(&r, sizeof(r), NULL));
		}
		CASE("cm-idx-cnt", "conn_idx %u conn_cnt %u", ri + rc % ri, ri) {
			r = cm_good();
			r.conn_idx = htole16(ri + rc % ri);
			r.conn_cnt = htole16(ri);
			end_case(cm_attempt(&r, sizeof(r), NULL));
		}
	}
	{
		uint16_t qds[] = { 0, 1, 4097, 0xffff };

		for (i = 0; i < 4; i++)
			CASE("cm-max-qd", "max_queue_depth %u", qds[i]) {
				r = cm_good();
				r.max_queue_depth = htole16(qds[i]);
				end_case(cm_attempt(&r, sizeof(r), NULL));
			}
	}
	{
		uint16_t res[] = { 1, 0x8000, (uint16_t)rnd(2, 0xfffe) };

		for (i = 0; i < 3; i++)
			CASE("cm-path-id", "path_id %#x without TRS_CAP_MULTIPATH", res[i]) {
				r = cm_good();
				r.caps &= ~htole32(TRS_CAP_MULTIPATH);
				r.path_id = htole16(res[i]);
				end_case(cm_attempt(&r, sizeof(r), NULL));
			}
	}
	CASE("cm-uuid", "all-zero session uuid, new session") {
		r = cm_good();
		memset(r.sess_uuid, 0, sizeof(r.sess_uuid));
		end_case(cm_attempt(&r, sizeof(r), NULL));
	}
	CASE("cm-key", "connection 0 of a new session with a nonzero sess_key") {
		r = cm_good();
		aux_bytes(r.sess_key, sizeof(r.sess_key));
		end_case(cm_attempt(&r, sizeof(r), NULL));
	}

	/* joining a session: connection 1 of a 2-connection session */
	CASE("cm-join", "conn_idx 1 of an unknown uuid, the key of a live session")
		end_case(cm_on_host(2, &r, ed_uuid_unknown));
	CASE("cm-join", "conn_idx 1, right uuid, zero sess_key")
		end_case(cm_on_host(2, &r, ed_key_zero));
	CASE("cm-join", "conn_idx 1, right uuid, random sess_key")
		end_case(cm_on_host(2, &r, ed_key_random));
	ed_bit = rnd(0, 127);
	CASE("cm-join", "conn_idx 1, right uuid, sess_key with bit %u flipped",
	     ed_bit)
		end_case(cm_on_host(2, &r, ed_key_flip));
	CASE("cm-join", "conn_idx 1, right uuid and key, conn_cnt + 1")
		end_case(cm_on_host(2, &r, ed_cnt_plus));
	CASE("cm-join", "conn_idx = conn_cnt, right uuid and key")
		end_case(cm_on_host(2, &r, ed_idx_cnt));
	CASE("cm-join", "conn_idx 1, right uuid and key, another max_queue_depth")
		end_case(cm_on_host(2, &r, ed_qd_other));
	CASE("cm-join", "conn_idx 1, right uuid and key, other caps")
		end_case(cm_on_host(2, &r, ed_caps_other));
	CASE("cm-join", "conn_idx 0 conn_cnt 1 with the uuid of a half-made 2-connection session, zero key")
		end_case(cm_on_host(2, &r, ed_cnt_one));
	CASE("cm-join", "conn_idx 1 twice, right uuid and key") {
		struct hsess *h = cm_host(3, &o), *j = NULL;

		if (h) {
			r = cm_join(h, 1);
			o = cm_attempt(&r, sizeof(r), &j);
			if (o.k == O_ACCEPTED)
				o = cm_attempt(&r, sizeof(r), NULL);
			else
				fprintf(stderr, "rnbd-hostile: note: a legitimate join was %s\n",
					outcome_str(o));
			sess_free(j);
			sess_free(h);
		}
		end_case(o);
	}
	CASE("cm-join", "conn_idx 1 of a session that is open already") {
		struct hsess *h = cm_host(1, &o);

		if (h) {
			r = cm_join(h, 1);
			r.conn_cnt = htole16(2);
			o = cm_attempt(&r, sizeof(r), NULL);
			sess_free(h);
		}
		end_case(o);
	}

	/* connection 0 twice with the same uuid */
	CASE("cm-conn0-twice", "uuid of a half-made session, zero key")
		end_case(cm_conn0_again(2, 0));
	CASE("cm-conn0-twice", "uuid of a half-made session, random key")
		end_case(cm_conn0_again(2, 2));
	CASE("cm-conn0-twice", "uuid of an open session, zero key")
		end_case(cm_conn0_again(1, 0));
	CASE("cm-conn0-twice", "uuid of an open session, random key")
		end_case(cm_conn0_again(1, 2));
	for (i = 1; i <= 2; i++) {
		const char *what = i == 1 ? "an open" : "a half-made";

		CASE("cm-conn0-twice", "uuid and key of %s session", what)
			end_case(cm_replace(i));
		CASE("cm-conn0-replace", "%s session replaced: its fate", what)
			end_case(cm_replaced_old());
		CASE("cm-conn0-replace", "uuid of %s session replaced, zero key, once it closed", what)
			end_case(cm_replaced_new());
	}
}

/* ---------------------------------------------------------------------- */
/* Case runners                                                           */

typedef struct outcome (*case_fn)(struct hsess *s, long arg);

/* Run @fn on the shared session (see shared_get()). */
static struct outcome on_shared(int devmode, case_fn fn, long arg)
{
	struct hsess *s = shared_get(devmode);

	if (!s)
		return shared_err;
	return shared_after(fn(s, arg));
}

/* Run @fn on a session of its own, made with @so, freed after. */
static struct outcome on_fresh(const struct sess_opts *so, int devmode,
			       case_fn fn, long arg)
{
	struct outcome o;
	struct hsess *s = sess_new(so, &o);

	if (!s) {
		fprintf(stderr, "rnbd-hostile: setup of a session failed: %s\n",
			outcome_str(o));
		return o;
	}
	if (devmode >= 0) {
		o = dev_open(s, devmode == 0);
		if (o.k != O_ANSWERED || o.err) {
			fprintf(stderr, "rnbd-hostile: setup: OPEN %s: %s\n",
				opt.device, outcome_str(o));
			sess_free(s);
			return o;
		}
	}
	o = fn(s, arg);
	sess_done(s);
	return o;
}

/* Whether the session still serves: accepted, or what happened. */
static struct outcome probe(struct hsess *s)
{
	struct outcome o;

	pump(s, 50);
	if (s->closed)
		return OUT(O_CLOSED, 0);
	o = close_do(s, 12345);
	if (o.k == O_ANSWERED && o.err == ENODEV)
		return OUT(O_ACCEPTED, 0);
	return o;
}

/* After a post: the reply on @slot, or the session's close. */
static struct outcome after_post(struct hsess *s, int err, unsigned int slot)
{
	if (err) {
		fprintf(stderr, "rnbd-hostile: note: post failed locally: %s\n",
			strerror(-err));
		return s->closed ? OUT(O_CLOSED, 0) : OUT(O_REJECTED, -err);
	}
	if (slot < s->qd)
		return wait_rsp(s, slot, opt.timeout_ms);
	return wait_closed(s, opt.timeout_ms);
}

/* ---------------------------------------------------------------------- */
/* Group imm: immediates and work request types                           */

#define CLOSE_HL	(sizeof(struct trs_msg_req) + sizeof(struct rnbd_msg_close))

/* Post a CLOSE 12345 request header on a free slot with immediate @imm. */
static int imm_post_close(struct hsess *s, int ci, int slot, uint32_t imm,
			  uint32_t pos, long wlen, enum ibv_wr_opcode op)
{
	struct trs_msg_req th = th_make(s, TRS_DIR_NONE, 0);
	struct rnbd_msg_close m = close_msg(12345);

	return req_write(s, ci, slot, imm, pos, &th, &m, sizeof(m), NULL, 0,
			 wlen, op);
}

static struct outcome c_imm_type(struct hsess *s, long type)
{
	int slot = slot_pick(s);

	return after_post(s, imm_post_close(s, 0, slot,
					    trs_imm_pack(type, slot, CLOSE_HL),
					    CLOSE_HL, -1,
					    IBV_WR_RDMA_WRITE_WITH_IMM), slot);
}

/* arg: the slot, or -1/-2 for queue_depth/queue_depth + 1 */
static struct outcome c_imm_slot(struct hsess *s, long arg)
{
	unsigned int slot = arg == -1 ? s->qd : arg == -2 ? s->qd + 1U : arg;
	int err = imm_post_close(s, 0, 0, trs_imm_pack(TRS_IMM_REQ, slot, CLOSE_HL),
				 CLOSE_HL, -1, IBV_WR_RDMA_WRITE_WITH_IMM);

	return after_post(s, err, slot);
}

/*
 * TRS_CAP_SLOT_GEN: a CLOSE whose immediate carries generation @arg above
 * the slot index, which the reply must echo; -1: generation 3 above index
 * queue_depth (out of range however the field is read).
 */
static struct outcome c_imm_gen(struct hsess *s, long arg)
{
	unsigned int slot = slot_pick(s);
	unsigned int idx = arg < 0 ? s->qd : slot;
	uint32_t tag = (arg < 0 ? 3u : (uint32_t)arg) << TRS_SLOT_IDX_BITS | idx;
	struct outcome o;

	if (!(s->caps & TRS_CAP_SLOT_GEN)) {
		note("TRS_CAP_SLOT_GEN asked, not granted (caps %#x)", s->caps);
		return OUT(O_REJECTED, EOPNOTSUPP);
	}
	o = after_post(s, imm_post_close(s, 0, slot,
					 trs_imm_pack(TRS_IMM_REQ, tag, CLOSE_HL),
					 CLOSE_HL, -1, IBV_WR_RDMA_WRITE_WITH_IMM),
		       idx);
	if (o.k == O_ANSWERED && s->rsp_tag[slot] != tag) {
		note("reply slot field %#x, request's %#x: not echoed",
		     s->rsp_tag[slot], tag);
		return OUT(O_REJECTED, EBADMSG);
	}
	return o;
}

/* A header of @hl bytes (transport header, CLOSE, zeros) right-aligned. */
static struct outcome c_imm_hdrlen(struct hsess *s, long hl)
{
	uint8_t pad[4096] = { 0 };
	struct trs_msg_req th = th_make(s, TRS_DIR_NONE, 0);
	struct rnbd_msg_close m = close_msg(12345);
	int slot = slot_pick(s);
	int err;

	memcpy(pad, &th, sizeof(th));
	memcpy(pad + sizeof(th), &m, sizeof(m));
	err = req_write(s, 0, slot, trs_imm_pack(TRS_IMM_REQ, slot, hl), hl, NULL,
			pad, hl, NULL, 0, -1, IBV_WR_RDMA_WRITE_WITH_IMM);
	return after_post(s, err, slot);
}

/* A CLOSE header with immediate length CLOSE_HL, but @arg bytes written. */
static struct outcome c_imm_wlen(struct hsess *s, long wlen)
{
	int slot = slot_pick(s);
	uint8_t pad[512] = { 0 };
	struct trs_msg_req th = th_make(s, TRS_DIR_NONE, 0);
	struct rnbd_msg_close m = close_msg(12345);
	int err;

	memcpy(pad, &th, sizeof(th));
	memcpy(pad + sizeof(th), &m, sizeof(m));
	/* longer writes still start where the header should */
	err = req_write(s, 0, slot, trs_imm_pack(TRS_IMM_REQ, slot, CLOSE_HL),
			CLOSE_HL, NULL, pad, wlen, NULL, 0, -1,
			IBV_WR_RDMA_WRITE_WITH_IMM);
	return after_post(s, err, slot);
}

/* The header written @arg bytes before (>0) or after where it belongs. */
static struct outcome c_imm_misplaced(struct hsess *s, long shift)
{
	int slot = slot_pick(s);

	return after_post(s, imm_post_close(s, 0, slot,
					    trs_imm_pack(TRS_IMM_REQ, slot, CLOSE_HL),
					    CLOSE_HL + shift, -1,
					    IBV_WR_RDMA_WRITE_WITH_IMM), slot);
}

/*
 * After two requests on one slot: both answered (the last status), the
 * session closed, or a timeout if only one or none was answered.
 */
static struct outcome wait_two(struct hsess *s, unsigned long base,
			       unsigned int slot)
{
	long end = now_ms() + opt.timeout_ms;

	for (;;) {
		pump(s, 1);
		if (s->n_rsp >= base + 2)
			return OUT(O_ANSWERED, s->rsp[slot]);
		if (s->closed)
			return OUT(O_CLOSED, 0);
		if (now_ms() >= end)
			return OUT_TIMEOUT(opt.timeout_ms);
	}
}

/* Two requests on one slot back to back; arg: second on connection 1. */
static struct outcome c_imm_busy(struct hsess *s, long other_conn)
{
	int slot = slot_pick(s);
	uint32_t imm = trs_imm_pack(TRS_IMM_REQ, slot, CLOSE_HL);
	unsigned long base = s->n_rsp;
	int err;

	err = imm_post_close(s, 0, slot, imm, CLOSE_HL, -1,
			     IBV_WR_RDMA_WRITE_WITH_IMM);
	if (!err)
		err = imm_post_close(s, other_conn ? 1 : 0, slot, imm, CLOSE_HL,
				     -1, IBV_WR_RDMA_WRITE_WITH_IMM);
	if (err)
		return after_post(s, err, slot);
	return wait_two(s, base, slot);
}

/* An OPEN of --device and a CLOSE on the same slot back to back. */
static struct outcome c_imm_busy_open(struct hsess *s, long arg)
{
	struct rnbd_msg_open m = open_msg(opt.device, RNBD_ACCESS_RO);
	struct trs_msg_req th = th_make(s, TRS_DIR_READ,
					sizeof(struct rnbd_msg_open_rsp));
	int slot = slot_pick(s);
	uint32_t hl = sizeof(th) + sizeof(m);
	unsigned long base = s->n_rsp;
	int err;

	(void)arg;
	err = req_write(s, 0, slot, trs_imm_pack(TRS_IMM_REQ, slot, hl), hl, &th,
			&m, sizeof(m), NULL, 0, -1, IBV_WR_RDMA_WRITE_WITH_IMM);
	if (!err)
		err = imm_post_close(s, 0, slot,
				     trs_imm_pack(TRS_IMM_REQ, slot, CLOSE_HL),
				     CLOSE_HL, -1, IBV_WR_RDMA_WRITE_WITH_IMM);
	if (err)
		return after_post(s, err, slot);
	return wait_two(s, base, slot);
}

/* A zero-length RDMA write with immediate REQ(slot, @hl). */
static struct outcome c_imm_zero(struct hsess *s, long hl)
{
	int slot = slot_pick(s);

	return after_post(s, post_send(s, 0, IBV_WR_RDMA_WRITE_WITH_IMM,
				       trs_imm_pack(TRS_IMM_REQ, slot, hl), 0, 0,
				       NULL, 0), slot);
}

/* A zero-length write with immediate after a plain write of the header. */
static struct outcome c_imm_zero_after_plain(struct hsess *s, long arg)
{
	int slot = slot_pick(s);
	int err;

	(void)arg;
	err = imm_post_close(s, 0, slot, 0, CLOSE_HL, -1, IBV_WR_RDMA_WRITE);
	if (!err)
		err = post_send(s, 0, IBV_WR_RDMA_WRITE_WITH_IMM,
				trs_imm_pack(TRS_IMM_REQ, slot, CLOSE_HL), 0, 0,
				NULL, 0);
	return after_post(s, err, slot);
}

/* A plain RDMA write of a request, no immediate: no request; still alive? */
static struct outcome c_imm_plain(struct hsess *s, long arg)
{
	int slot = slot_pick(s);
	int err;

	(void)arg;
	err = imm_post_close(s, 0, slot, 0, CLOSE_HL, -1, IBV_WR_RDMA_WRITE);
	if (err)
		return after_post(s, err, slot);
	sleep_ms(100);
	return probe(s);
}

/*
 * A SEND (arg & 1: with immediate, arg & 2: 32 bytes of payload; arg & 4:
 * heartbeat immediate, arg & 8: heartbeat with slot 1, arg & 16: on
 * connection 1) instead of an RDMA write with immediate.  Anything but a
 * well-formed heartbeat of a session that negotiated them must close it.
 */
static struct outcome c_imm_send(struct hsess *s, long arg)
{
	int slot = slot_pick(s), ci = arg & 16 ? 1 : 0;
	uint32_t imm = trs_imm_pack(TRS_IMM_REQ, slot, CLOSE_HL);
	uint8_t *p = payload_buf(s, slot, 32);
	int err;

	if (arg & 4)
		imm = trs_imm_pack(TRS_IMM_HB, arg & 8 ? 1 : 0, 0);
	memset(p, 0, 32);
	err = post_send(s, ci, arg & 1 ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
			imm, 0, 0, p, arg & 2 ? 32 : 0);
	if (err)
		return after_post(s, err, slot);
	if (!(arg & 4) || (arg & (8 | 2 | 16)))
		return wait_closed(s, opt.timeout_ms);
	/* a heartbeat: if the session negotiated them, nothing happens */
	sleep_ms(100);
	return probe(s);
}

/* An RDMA write with immediate the server's memory protection refuses. */
static struct outcome c_imm_remote(struct hsess *s, long how)
{
	int slot = slot_pick(s);
	uint32_t imm = trs_imm_pack(TRS_IMM_REQ, slot, CLOSE_HL);
	uint8_t *p = payload_buf(s, slot, 64);
	uint64_t chunk = le64toh(s->chunk[slot].addr);
	uint32_t rkey = le32toh(s->chunk[slot].rkey);
	int err;

	memset(p, 0, 64);
	if (how == 0)		/* across the end of the chunk */
		err = post_send(s, 0, IBV_WR_RDMA_WRITE_WITH_IMM, imm,
				chunk + TRS_HDR_AREA + s->max_io - 16, rkey, p, 64);
	else if (how == 1)	/* before its start */
		err = post_send(s, 0, IBV_WR_RDMA_WRITE_WITH_IMM, imm,
				chunk - 32, rkey, p, 64);
	else if (how == 2)	/* a wrong rkey */
		err = post_send(s, 0, IBV_WR_RDMA_WRITE_WITH_IMM, imm,
				chunk + TRS_HDR_AREA - 32, rkey ^ 0x5a5a00, p, 32);
	else			/* another slot's rkey */
		err = post_send(s, 0, IBV_WR_RDMA_WRITE_WITH_IMM, imm,
				chunk + TRS_HDR_AREA - 32,
				le32toh(s->chunk[(slot + 1) % s->qd].rkey), p, 32);
	return after_post(s, err, slot);
}

/* Request in chunk @slot, immediate naming the next slot. */
static struct outcome c_imm_other_chunk(struct hsess *s, long arg)
{
	int slot = slot_pick(s), other = (slot + 1) % s->qd;

	(void)arg;
	return after_post(s, imm_post_close(s, 0, slot,
					    trs_imm_pack(TRS_IMM_REQ, other, CLOSE_HL),
					    CLOSE_HL, -1,
					    IBV_WR_RDMA_WRITE_WITH_IMM), other);
}

/*
 * Before the session is open: connection 0 of 2 made, chunk table not
 * sent, so no rkey: a zero-length write with immediate (arg: its type).
 */
static struct outcome c_imm_early(long type)
{
	struct sess_opts so = { .conn_cnt = 2, .small = true };
	struct hsess *s = sess_alloc(&so);
	struct outcome o = conn_open(s, 0, NULL, 0);
	int err;

	if (o.k == O_ACCEPTED) {
		err = post_send(s, 0, IBV_WR_RDMA_WRITE_WITH_IMM,
				trs_imm_pack(type, 0, CLOSE_HL), 0, 0, NULL, 0);
		s->qd = s->qd ? s->qd : 1;
		o = type == TRS_IMM_REQ ? after_post(s, err, 0) :
		    err ? after_post(s, err, 0) : wait_closed(s, opt.timeout_ms);
	}
	sess_free(s);
	return o;
}

static void grp_imm(void)
{
	static const struct sess_opts two = { .conn_cnt = 2 };
	static const struct sess_opts hb = { .caps = TRS_CAP_HEARTBEAT };
	static const struct sess_opts hb2 = { .caps = TRS_CAP_HEARTBEAT,
					      .conn_cnt = 2 };
	static const struct sess_opts gen = { .caps = TRS_CAP_SLOT_GEN };
	uint32_t t, v;
	long slots[] = { -1, -2, 4095, 4096, 0xffff, rnd(4097, 0xfffe) };
	long big[] = { 537, 538, 1024, 4095, rnd(539, 4094) };
	long wl[] = { CLOSE_HL - 1, CLOSE_HL + 1, CLOSE_HL + 100, 2 * CLOSE_HL,
		      rnd(2 * CLOSE_HL + 101, 500) };

	for (t = 0; t < 16; t++) {
		if (t == TRS_IMM_REQ)
			continue;
		CASE("imm-type", "immediate type %u, valid CLOSE request", t)
			end_case(on_shared(-1, c_imm_type, t));
	}
	for (t = 0; t < ARRAY_SIZE(slots); t++) {
		char what[32];

		if (slots[t] < 0)
			snprintf(what, sizeof(what), "queue_depth%s",
				 slots[t] == -2 ? " + 1" : "");
		else
			snprintf(what, sizeof(what), "%ld", slots[t]);
		CASE("imm-slot", "slot %s in the immediate, request in chunk 0",
		     what)
			end_case(on_shared(-1, c_imm_slot, slots[t]));
	}
	for (v = 0; v <= sizeof(struct trs_msg_req); v++)
		CASE("imm-hdrlen", "hdr_len %u (at most a transport header)", v)
			end_case(on_shared(-1, c_imm_hdrlen, v));
	for (t = 0; t < ARRAY_SIZE(big); t++)
		CASE("imm-hdrlen", "hdr_len %ld (over 536), as many bytes written",
		     big[t])
			end_case(on_shared(-1, c_imm_hdrlen, big[t]));
	CASE("imm-hdrlen", "hdr_len 536 (the largest), CLOSE padded with zeros")
		end_case(on_shared(-1, c_imm_hdrlen, 536));
	for (t = 0; t < ARRAY_SIZE(wl); t++)
		CASE("imm-wlen", "CLOSE request, hdr_len %zu, %ld bytes written",
		     CLOSE_HL, wl[t])
			end_case(on_shared(-1, c_imm_wlen, wl[t]));
	for (v = 0; v < 3; v++) {
		long shift[] = { 8, -8, (long)rnd(9, 1000) };

		CASE("imm-misplaced", "CLOSE header written %ld bytes %s its place",
		     labs(shift[v]), shift[v] > 0 ? "before" : "after")
			end_case(on_shared(-1, c_imm_misplaced, shift[v]));
	}
	CASE("imm-busy", "two CLOSE requests on one slot back to back")
		end_case(on_shared(-1, c_imm_busy, 0));
	CASE("imm-busy", "two CLOSE requests on one slot, on connections 0 and 1")
		end_case(on_fresh(&two, -1, c_imm_busy, 1));
	if (NEED_DEV)
		CASE("imm-busy", "OPEN of --device and CLOSE on one slot back to back")
			end_case(on_shared(-1, c_imm_busy_open, 0));
	CASE("imm-zero", "zero-length WRITE_WITH_IMM, hdr_len %zu (stale chunk)",
	     CLOSE_HL)
		end_case(on_shared(-1, c_imm_zero, CLOSE_HL));
	CASE("imm-zero", "zero-length WRITE_WITH_IMM, hdr_len 0")
		end_case(on_shared(-1, c_imm_zero, 0));
	CASE("imm-zero", "plain RDMA WRITE of a CLOSE header, then a zero-length WRITE_WITH_IMM naming it")
		end_case(on_shared(-1, c_imm_zero_after_plain, 0));
	CASE("imm-plain-write", "plain RDMA WRITE of a CLOSE request, no immediate")
		end_case(on_shared(-1, c_imm_plain, 0));
	CASE("imm-send", "zero-length SEND")
		end_case(on_shared(-1, c_imm_send, 0));
	CASE("imm-send", "SEND of 32 bytes")
		end_case(on_shared(-1, c_imm_send, 2));
	CASE("imm-send", "zero-length SEND_WITH_IMM, REQ immediate")
		end_case(on_shared(-1, c_imm_send, 1));
	CASE("imm-send", "SEND_WITH_IMM of 32 bytes, REQ immediate")
		end_case(on_shared(-1, c_imm_send, 3));
	CASE("imm-send", "heartbeat SEND_WITH_IMM, heartbeats not negotiated")
		end_case(on_shared(-1, c_imm_send, 1 | 4 | 8));
	CASE("imm-hb", "heartbeat on connection 0, heartbeats negotiated")
		end_case(on_fresh(&hb, -1, c_imm_send, 1 | 4));
	CASE("imm-hb", "heartbeat with slot 1 in the immediate, heartbeats negotiated")
		end_case(on_fresh(&hb, -1, c_imm_send, 1 | 4 | 8));
	CASE("imm-hb", "heartbeat of 32 bytes, heartbeats negotiated")
		end_case(on_fresh(&hb, -1, c_imm_send, 1 | 2 | 4));
	CASE("imm-hb", "heartbeat on connection 1, heartbeats negotiated")
		end_case(on_fresh(&hb2, -1, c_imm_send, 1 | 4 | 16));
	CASE("imm-remote", "WRITE_WITH_IMM across the end of the chunk")
		end_case(on_shared(-1, c_imm_remote, 0));
	CASE("imm-remote", "WRITE_WITH_IMM before the start of the chunk")
		end_case(on_shared(-1, c_imm_remote, 1));
	CASE("imm-remote", "WRITE_WITH_IMM with a wrong rkey")
		end_case(on_shared(-1, c_imm_remote, 2));
	CASE("imm-remote", "WRITE_WITH_IMM into a chunk with the next chunk's rkey")
		end_case(on_shared(-1, c_imm_remote, 3));
	CASE("imm-other-chunk", "CLOSE written into chunk S, immediate naming slot S + 1")
		end_case(on_shared(-1, c_imm_other_chunk, 0));
	CASE("imm-early", "zero-length request before the session is open (1 of 2 connections)")
		end_case(c_imm_early(TRS_IMM_REQ));
	CASE("imm-early", "immediate type %u before the session is open", t = rnd(2, 15))
		end_case(c_imm_early(t));
	for (t = 0; t < 3; t++) {
		v = t ? rnd(1, 15) : 0;
		CASE("imm-gen", "slot tag generation %u, CLOSE: the reply echoes the tag", v)
			end_case(on_fresh(&gen, -1, c_imm_gen, v));
	}
	CASE("imm-gen", "slot tag generation 3 above index queue_depth")
		end_case(on_fresh(&gen, -1, c_imm_gen, -1));
}

/* ---------------------------------------------------------------------- */
/* Group req: the transport request header                                */

/* The transport header of the next req case, relative to the session. */
static struct {
	uint8_t dir, flags, r0[2];
	uint32_t r1;
	bool dl_max;		/* data_len = max_io_size + dl */
	long dl;
	int addr_mode;		/* 0: addr; 1: read buffer + addr */
	uint64_t addr;
	int rkey_mode;		/* 0: rkey; 1: our rkey ^ rkey */
	uint32_t rkey;
	long wbytes;		/* data written after the header; -1: data_len */
} P;

static void p_reset(uint8_t dir, long dl)
{
	memset(&P, 0, sizeof(P));
	P.dir = dir;
	P.dl = dl;
	P.wbytes = dir == TRS_DIR_WRITE ? -1 : 0;
	if (dir == TRS_DIR_READ) {
		P.addr_mode = 1;
		P.rkey_mode = 1;
	}
}

static struct trs_msg_req p_th(const struct hsess *s)
{
	struct trs_msg_req t = {
		.dir	= P.dir,
		.flags	= P.flags,
		.reserved0 = { P.r0[0], P.r0[1] },
		.reserved1 = htole32(P.r1),
	};
	uint64_t dl = (P.dl_max ? (uint64_t)s->max_io : 0) + (uint64_t)P.dl;

	t.data_len = htole32((uint32_t)dl);
	t.addr = htole64(P.addr_mode ? (uintptr_t)(s->buf + s->rd_off) + P.addr :
			 P.addr);
	t.rkey = htole32(P.rkey_mode ? s->mr->rkey ^ P.rkey : P.rkey);
	return t;
}

/* The request P describes, with a CLOSE 12345 as its user header. */
static struct outcome c_req_p(struct hsess *s, long arg)
{
	struct trs_msg_req th = p_th(s);
	struct rnbd_msg_close m = close_msg(12345);
	long wb = P.wbytes < 0 ? (long)le32toh(th.data_len) : P.wbytes;

	(void)arg;
	if (wb > (long)s->max_io)
		wb = s->max_io;
	return req_th(s, 0, &th, &m, sizeof(m), NULL, wb, NULL);
}

/* An IO READ of the device (4 KiB at sector 0) with P's addr and rkey. */
static struct outcome c_req_read_remote(struct hsess *s, long len)
{
	struct rnbd_msg_io m = io_msg(s, RNBD_OP_READ, len, 0);
	struct trs_msg_req th;

	P.dir = TRS_DIR_READ;
	P.dl = len;
	th = p_th(s);
	return req_th(s, 0, &th, &m, sizeof(m), NULL, 0, NULL);
}

/* OPEN of --device (read-only) with P's addr and rkey for its answer. */
static struct outcome c_req_open_remote(struct hsess *s, long arg)
{
	struct rnbd_msg_open m = open_msg(opt.device, RNBD_ACCESS_RO);
	struct trs_msg_req th;

	(void)arg;
	P.dir = TRS_DIR_READ;
	P.dl = sizeof(struct rnbd_msg_open_rsp);
	th = p_th(s);
	return req_th(s, 0, &th, &m, sizeof(m), NULL, 0, NULL);
}

static void grp_req(void)
{
	static const struct sess_opts batch = { .caps = TRS_CAP_RSP_BATCH };
	static const char *const dn[] = { "NONE", "WRITE", "READ" };
	uint32_t d, i;

	for (d = 3; d <= 255; d++)
		CASE("req-dir", "dir %u, otherwise a NONE request", d) {
			p_reset(d, 0);
			end_case(on_shared(-1, c_req_p, 0));
		}
	{
		uint8_t fl[] = { 1, 2, 0x80, 0xff, (uint8_t)rnd(3, 0x7f) };

		for (i = 0; i < sizeof(fl); i++)
			CASE("req-flags", "flags %#x without TRS_CAP_RSP_BATCH",
			     fl[i]) {
				p_reset(TRS_DIR_NONE, 0);
				P.flags = fl[i];
				end_case(on_shared(-1, c_req_p, 0));
			}
		for (i = 1; i <= 4; i++)
			CASE("req-flags", "flags %#x with TRS_CAP_RSP_BATCH", i) {
				p_reset(TRS_DIR_NONE, 0);
				P.flags = i;
				end_case(on_fresh(&batch, -1, c_req_p, 0));
			}
	}
	{
		long r = rnd(2, 0xfffffffe);

		CASE("req-len", "NONE with data_len 1")
			{ p_reset(TRS_DIR_NONE, 1); end_case(on_shared(-1, c_req_p, 0)); }
		CASE("req-len", "NONE with data_len 0xffffffff")
			{ p_reset(TRS_DIR_NONE, 0xffffffff); end_case(on_shared(-1, c_req_p, 0)); }
		CASE("req-len", "NONE with data_len %ld", r)
			{ p_reset(TRS_DIR_NONE, r); end_case(on_shared(-1, c_req_p, 0)); }
		CASE("req-len", "NONE with data_len 512 and 512 bytes written")
			{ p_reset(TRS_DIR_NONE, 512); P.wbytes = 512; end_case(on_shared(-1, c_req_p, 0)); }
		CASE("req-len", "NONE with data_len 0 and 512 bytes written")
			{ p_reset(TRS_DIR_NONE, 0); P.wbytes = 512; end_case(on_shared(-1, c_req_p, 0)); }
	}
	for (d = TRS_DIR_WRITE; d <= TRS_DIR_READ; d++) {
		long r = rnd(1, 0x7fffffff);

		CASE("req-len", "%s with data_len 0", dn[d])
			{ p_reset(d, 0); end_case(on_shared(-1, c_req_p, 0)); }
		CASE("req-len", "%s with data_len max_io_size + 1, header only", dn[d])
			{ p_reset(d, 1); P.dl_max = true; P.wbytes = 0; end_case(on_shared(-1, c_req_p, 0)); }
		CASE("req-len", "%s with data_len max_io_size + 4096, header only", dn[d])
			{ p_reset(d, 4096); P.dl_max = true; P.wbytes = 0; end_case(on_shared(-1, c_req_p, 0)); }
		CASE("req-len", "%s with data_len 0xffffffff, header only", dn[d])
			{ p_reset(d, 0xffffffff); P.wbytes = 0; end_case(on_shared(-1, c_req_p, 0)); }
		CASE("req-len", "%s with data_len max_io_size + %ld, header only", dn[d], r)
			{ p_reset(d, r); P.dl_max = true; P.wbytes = 0; end_case(on_shared(-1, c_req_p, 0)); }
		CASE("req-len", "%s with data_len max_io_size (valid; CLOSE header)", dn[d])
			{ p_reset(d, 0); P.dl_max = true; end_case(on_shared(-1, c_req_p, 0)); }
	}
	{
		long dl[][2] = { { 4096, 4095 }, { 4096, 4097 }, { 4096, 0 },
				 { 1, 2 }, { 512, 1 } };
		long r = rnd(2, 4096);

		for (i = 0; i < 5; i++)
			CASE("req-len", "WRITE with data_len %ld, %ld bytes written",
			     dl[i][0], dl[i][1]) {
				p_reset(TRS_DIR_WRITE, dl[i][0]);
				P.wbytes = dl[i][1];
				end_case(on_shared(-1, c_req_p, 0));
			}
		CASE("req-len", "WRITE with data_len %ld, %ld bytes written", r, r - 1) {
			p_reset(TRS_DIR_WRITE, r);
			P.wbytes = r - 1;
			end_case(on_shared(-1, c_req_p, 0));
		}
		CASE("req-len", "READ with data_len 4096 and 4096 bytes written") {
			p_reset(TRS_DIR_READ, 4096);
			P.wbytes = 4096;
			end_case(on_shared(-1, c_req_p, 0));
		}
	}
	CASE("req-addr", "READ with addr 0")
		{ p_reset(TRS_DIR_READ, 64); P.addr_mode = 0; end_case(on_shared(-1, c_req_p, 0)); }
	CASE("req-addr", "READ with rkey 0")
		{ p_reset(TRS_DIR_READ, 64); P.rkey_mode = 0; end_case(on_shared(-1, c_req_p, 0)); }
	CASE("req-addr", "READ with addr 0 and rkey 0")
		{ p_reset(TRS_DIR_READ, 64); P.addr_mode = P.rkey_mode = 0; end_case(on_shared(-1, c_req_p, 0)); }
	for (d = TRS_DIR_NONE; d <= TRS_DIR_WRITE; d++) {
		uint64_t a = ((uint64_t)rnd(1, 0xffffffff) << 32) | rnd(0, 0xffffffff);

		CASE("req-addr", "%s with a valid addr", dn[d])
			{ p_reset(d, d ? 512 : 0); P.addr_mode = 1; end_case(on_shared(-1, c_req_p, 0)); }
		CASE("req-addr", "%s with a valid rkey", dn[d])
			{ p_reset(d, d ? 512 : 0); P.rkey_mode = 1; end_case(on_shared(-1, c_req_p, 0)); }
		CASE("req-addr", "%s with addr %#llx", dn[d], (unsigned long long)a)
			{ p_reset(d, d ? 512 : 0); P.addr = a; end_case(on_shared(-1, c_req_p, 0)); }
	}
	{
		uint32_t r1 = rnd(2, 0xffffffff);

		CASE("req-reserved", "reserved0[0] = 1")
			{ p_reset(TRS_DIR_NONE, 0); P.r0[0] = 1; end_case(on_shared(-1, c_req_p, 0)); }
		CASE("req-reserved", "reserved0[1] = 0x80")
			{ p_reset(TRS_DIR_NONE, 0); P.r0[1] = 0x80; end_case(on_shared(-1, c_req_p, 0)); }
		CASE("req-reserved", "reserved1 = 1")
			{ p_reset(TRS_DIR_NONE, 0); P.r1 = 1; end_case(on_shared(-1, c_req_p, 0)); }
		CASE("req-reserved", "reserved1 = %#x", r1)
			{ p_reset(TRS_DIR_NONE, 0); P.r1 = r1; end_case(on_shared(-1, c_req_p, 0)); }
		CASE("req-reserved", "READ with reserved1 = %#x", r1)
			{ p_reset(TRS_DIR_READ, 64); P.r1 = r1; end_case(on_shared(-1, c_req_p, 0)); }
	}

	/* reads the server serves: its RDMA write to us fails */
	if (NEED_DEV)
		CASE("req-read-remote", "IO READ of 4 KiB, a bogus rkey") {
			p_reset(TRS_DIR_READ, 0);
			P.rkey = 0x5a5a00;
			end_case(on_shared(0, c_req_read_remote, 4096));
		}
	if (NEED_DEV)
		CASE("req-read-remote", "IO READ of 4 KiB, addr 1 MiB before our buffer") {
			p_reset(TRS_DIR_READ, 0);
			P.addr = -(1L << 20) - 4096 * 64L;
			end_case(on_shared(0, c_req_read_remote, 4096));
		}
	if (NEED_DEV)
		CASE("req-read-remote", "IO READ of 8 KiB into the last 4 KiB of our buffer") {
			p_reset(TRS_DIR_READ, 0);
			P.addr = BIG_IO * 2 - 4096;
			end_case(on_shared(0, c_req_read_remote, 8192));
		}
	if (NEED_DEV)
		CASE("req-read-remote", "IO READ of 4 KiB to an odd address (valid)") {
			p_reset(TRS_DIR_READ, 0);
			P.addr = 1;
			end_case(on_shared(0, c_req_read_remote, 4096));
		}
	if (NEED_DEV)
		CASE("req-read-remote", "OPEN of --device answered to a bogus rkey") {
			p_reset(TRS_DIR_READ, 0);
			P.rkey = 0x00a5a5;
			end_case(on_shared(-1, c_req_open_remote, 0));
		}
}

/* ---------------------------------------------------------------------- */
/* Group blk: block messages                                              */

/* --device, or a stand-in when --list runs without it */
static const char *dev_path(void)
{
	return opt.device ? opt.device : "/dev/DEVICE";
}

static const char *dev_name(void)
{
	const char *p = strrchr(dev_path(), '/');

	return p ? p + 1 : dev_path();
}

/* The OPEN of the next blk-open case. */
static struct {
	uint8_t raw[RNBD_PATH_MAX];	/* the path field as sent */
	long path_len;			/* -1: strnlen of raw */
	uint8_t mode, r0;
	uint32_t r1;
	uint8_t dir;
	uint32_t dlen;
	uint16_t usr_len;		/* 0: sizeof(struct rnbd_msg_open) */
	uint16_t hdr_type;		/* 0: OPEN */
} OP;

static void op_reset(const char *path)
{
	memset(&OP, 0, sizeof(OP));
	memcpy(OP.raw, path, strnlen(path, sizeof(OP.raw)));
	OP.path_len = -1;
	OP.mode = RNBD_ACCESS_RO;
	OP.dir = TRS_DIR_READ;
	OP.dlen = sizeof(struct rnbd_msg_open_rsp);
}

static struct outcome c_open(struct hsess *s, long arg)
{
	uint8_t usr[TRS_MAX_USR_HDR] = { 0 };
	struct rnbd_msg_open *m = (void *)usr;
	size_t ul = OP.usr_len ? OP.usr_len : sizeof(*m);
	struct trs_msg_req th = th_make(s, OP.dir, OP.dlen);

	(void)arg;
	m->hdr = blk_hdr(OP.hdr_type ? OP.hdr_type : RNBD_MSG_OPEN);
	m->access_mode = OP.mode;
	m->reserved0 = OP.r0;
	m->reserved1 = htole32(OP.r1);
	memcpy(m->path, OP.raw, sizeof(m->path));
	m->path_len = htole16(OP.path_len >= 0 ? (uint16_t)OP.path_len :
			      strnlen((char *)OP.raw, sizeof(OP.raw)));
	if (ul > sizeof(*m) && ul <= sizeof(usr))
		memset(usr + sizeof(*m), 0, ul - sizeof(*m));
	return req_th(s, 0, &th, usr, ul, NULL,
		      OP.dir == TRS_DIR_WRITE ? OP.dlen : 0, NULL);
}

/* The IO of the next blk-io case. */
struct ioc {
	uint8_t op, flags;
	uint16_t prio;
	uint8_t dev;		/* dev_id: 0 ours, 1 ours + 1, 2 ~0, 3 rnd_id */
	uint8_t len_mode;	/* 0 len, 1 whole device, 2 max_io_size */
	uint32_t len;
	uint8_t sec_mode;	/* 0 sector, 1 nsectors +, 2 U64_MAX -, 3 nsectors - */
	uint64_t sector;
	int dir;		/* 0: by op, else DIR(TRS_DIR_*) */
	long dlen;		/* 0: by op (len or 0), else DLEN(bytes) */
	uint16_t usr_len;	/* 0: 24 */
	bool ro;		/* on a read-only open */
	uint32_t rnd_id;
};

static struct ioc IO;

static const char *op_name(unsigned int op)
{
	static const char *const n[] = { "READ", "WRITE", "FLUSH", "DISCARD",
					 "WRITE_ZEROES" };
	static char buf[16];

	if (op < 5)
		return n[op];
	snprintf(buf, sizeof(buf), "op %u", op);
	return buf;
}

static int io_dir(const struct ioc *c)
{
	if (c->dir)
		return c->dir - 1;
	return c->op == RNBD_OP_READ ? TRS_DIR_READ :
	       c->op == RNBD_OP_WRITE ? TRS_DIR_WRITE : TRS_DIR_NONE;
}

/* A self-describing input string of an IO case. */
static const char *io_desc(const struct ioc *c)
{
	static const char *const dn[] = { "NONE", "WRITE", "READ" };
	static char buf[256];
	char len[40], sec[48], dev[24], extra[96] = "";
	size_t n = 0;

	if (c->len_mode == 1)
		snprintf(len, sizeof(len), "whole device");
	else if (c->len_mode == 2)
		snprintf(len, sizeof(len), "max_io_size");
	else
		snprintf(len, sizeof(len), "%u", c->len);
	if (c->sec_mode == 1)
		snprintf(sec, sizeof(sec), "nsectors + %llu",
			 (unsigned long long)c->sector);
	else if (c->sec_mode == 2)
		snprintf(sec, sizeof(sec), "2^64 - 1 - %llu",
			 (unsigned long long)c->sector);
	else if (c->sec_mode == 3)
		snprintf(sec, sizeof(sec), "nsectors - %llu",
			 (unsigned long long)c->sector);
	else
		snprintf(sec, sizeof(sec), "%llu", (unsigned long long)c->sector);
	if (c->dev == 1)
		snprintf(dev, sizeof(dev), " dev_id ours+1");
	else if (c->dev == 2)
		snprintf(dev, sizeof(dev), " dev_id 0xffffffff");
	else if (c->dev == 3)
		snprintf(dev, sizeof(dev), " dev_id %u", c->rnd_id);
	else
		dev[0] = 0;
	if (c->dir >= 1 && c->dir <= 3)
		n += snprintf(extra + n, sizeof(extra) - n, " dir %s",
			      dn[c->dir - 1]);
	if (c->dlen)
		n += snprintf(extra + n, sizeof(extra) - n, " data_len %ld",
			      c->dlen - 1);
	if (c->usr_len)
		n += snprintf(extra + n, sizeof(extra) - n, " header %u bytes",
			      c->usr_len);
	if (c->ro)
		snprintf(extra + n, sizeof(extra) - n, " (device opened ro)");
	snprintf(buf, sizeof(buf), "%s flags %#x prio %#x%s len %s sector %s%s",
		 op_name(c->op), c->flags, c->prio, dev, len, sec, extra);
	return buf;
}

static struct outcome c_io(struct hsess *s, long arg)
{
	const struct ioc *c = &IO;
	uint8_t usr[TRS_MAX_USR_HDR] = { 0 };
	struct rnbd_msg_io *m = (void *)usr;
	uint64_t whole = s->nsectors * 512, sec;
	uint32_t len, id;
	long dlen;
	int dir = io_dir(c);
	struct trs_msg_req th;

	(void)arg;
	if (whole > 0xffffffffULL - 0xfff)
		whole = (0xffffffffULL - 0xfff) & ~(uint64_t)(s->lbs - 1);
	len = c->len_mode == 1 ? whole : c->len_mode == 2 ? s->max_io : c->len;
	sec = c->sec_mode == 1 ? s->nsectors + c->sector :
	      c->sec_mode == 2 ? UINT64_MAX - c->sector :
	      c->sec_mode == 3 ? s->nsectors - c->sector : c->sector;
	id = c->dev == 1 ? s->dev_id + 1 : c->dev == 2 ? 0xffffffff :
	     c->dev == 3 ? c->rnd_id : s->dev_id;
	*m = io_msg(s, c->op, len, sec);
	m->flags = c->flags;
	m->prio = htole16(c->prio);
	m->dev_id = htole32(id);
	dlen = c->dlen ? c->dlen - 1 : dir == TRS_DIR_NONE ? 0 : (long)len;
	th = th_make(s, dir, dlen);
	return req_th(s, 0, &th, usr, c->usr_len ? c->usr_len : sizeof(*m),
		      NULL, dir == TRS_DIR_WRITE && dlen <= (long)s->max_io ?
		      dlen : 0, NULL);
}

static void io_case(const char *name, struct ioc c)
{
	if (!NEED_DEV)
		return;
	CASE(name, "%s", io_desc(&c)) {
		IO = c;
		end_case(on_shared(c.ro ? 0 : 1, c_io, 0));
	}
}

#define IOC(...)	((struct ioc){ __VA_ARGS__ })
#define DIR(d)		((d) + 1)
#define DLEN(n)		((n) + 1L)

/*
 * The next blk-hdr case: H.len bytes of a message (body: an IO READ, a
 * CLOSE or an OPEN) with header type, version and reserved from H, zero
 * padded.
 */
static struct {
	uint16_t type;
	uint8_t ver, res;
	uint16_t len;
	int body;	/* 0: IO READ 4 KiB, 1: CLOSE of ours + 1, 2: OPEN */
} H;

static struct outcome c_hdr(struct hsess *s, long arg)
{
	uint8_t usr[TRS_MAX_USR_HDR] = { 0 };
	struct rnbd_msg_hdr *h = (void *)usr;
	struct trs_msg_req th;

	(void)arg;
	if (H.body == 0) {
		struct rnbd_msg_io m = io_msg(s, RNBD_OP_READ, 4096, 0);

		memcpy(usr, &m, sizeof(m));
		th = th_make(s, TRS_DIR_READ, 4096);
	} else if (H.body == 1) {
		struct rnbd_msg_close m = close_msg(s->dev_id + 1);

		memcpy(usr, &m, sizeof(m));
		th = th_make(s, TRS_DIR_NONE, 0);
	} else {
		struct rnbd_msg_open m = open_msg("/nonexistent-rnbd-hostile",
						  RNBD_ACCESS_RO);

		memcpy(usr, &m, sizeof(m));
		th = th_make(s, TRS_DIR_READ, 64);
	}
	h->type = htole16(H.type);
	h->version = H.ver;
	h->reserved = H.res;
	return req_th(s, 0, &th, usr, H.len, NULL, 0, NULL);
}

static void hdr_case(const char *what, uint16_t type, uint8_t ver, uint8_t res,
		     uint16_t len, int body)
{
	static const char *const bn[] = { "IO READ 4 KiB", "CLOSE", "OPEN" };

	if (!NEED_DEV)
		return;
	CASE("blk-hdr", "%s: type %u version %u reserved %#x, %u-byte %s message",
	     what, type, ver, res, len, bn[body]) {
		H.type = type;
		H.ver = ver;
		H.res = res;
		H.len = len;
		H.body = body;
		end_case(on_shared(1, c_hdr, 0));
	}
}

/* CLOSE with dir @arg >> 16 and data_len / header length in the rest. */
static struct outcome c_close_odd(struct hsess *s, long arg)
{
	uint8_t usr[64] = { 0 };
	struct rnbd_msg_close m = close_msg(12345);
	int dir = arg >> 16, ul = arg & 0xffff;
	struct trs_msg_req th = th_make(s, dir, dir ? 64 : 0);

	memcpy(usr, &m, sizeof(m));
	return req_th(s, 0, &th, usr, ul, NULL, dir == TRS_DIR_WRITE ? 64 : 0,
		      NULL);
}

static struct outcome c_close_id(struct hsess *s, long id)
{
	return close_do(s, id);
}

/* CLOSE the open device, then @arg: 0 CLOSE it again, 1 an IO READ on it. */
static struct outcome c_after_close(struct hsess *s, long arg)
{
	struct outcome o = close_do(s, s->dev_id);
	struct rnbd_msg_io m = io_msg(s, RNBD_OP_READ, 4096, 0);

	if (o.k != O_ANSWERED || o.err) {
		fprintf(stderr, "rnbd-hostile: setup: CLOSE: %s\n", outcome_str(o));
		return o;
	}
	s->dev_open = false;
	if (!arg)
		return close_do(s, s->dev_id);
	return io_do(s, &m, TRS_DIR_READ, NULL, 4096);
}

static void open_case_path(const char *what, const char *path, uint8_t mode)
{
	if (!NEED_DEV)
		return;
	CASE("blk-open", "%s: path \"%s\" %s", what, path, mode ? "rw" : "ro") {
		op_reset(path);
		OP.mode = mode;
		end_case(on_shared(1, c_open, 0));
	}
}

static void grp_blk_open(void)
{
	char p[RNBD_PATH_MAX + 64];
	uint32_t i;
	size_t n;

	for (i = 2; i <= 255; i++) {
		if (!NEED_DEV)
			break;
		CASE("blk-open", "access_mode %u, path --device", i) {
			op_reset(dev_path());
			OP.mode = i;
			end_case(on_shared(1, c_open, 0));
		}
	}
	{
		long pl[] = { 0, 256, 65535, 255, (long)rnd(257, 65534), 1 };

		for (i = 0; i < 6; i++) {
			if (!NEED_DEV)
				break;
			CASE("blk-open", "path_len %ld, path --device", pl[i]) {
				op_reset(dev_path());
				OP.path_len = pl[i];
				end_case(on_shared(1, c_open, 0));
			}
		}
		if (NEED_DEV)
			CASE("blk-open", "path_len strlen + 1, path --device") {
				op_reset(dev_path());
				OP.path_len = strlen(dev_path()) + 1;
				end_case(on_shared(1, c_open, 0));
			}
		if (NEED_DEV)
			CASE("blk-open", "path_len strlen - 1, path --device") {
				op_reset(dev_path());
				OP.path_len = strlen(dev_path()) - 1;
				end_case(on_shared(1, c_open, 0));
			}
	}
	if (NEED_DEV)
		CASE("blk-open", "unterminated path: 256 x 'a', path_len 255") {
			op_reset("");
			memset(OP.raw, 'a', sizeof(OP.raw));
			OP.path_len = 255;
			end_case(on_shared(1, c_open, 0));
		}
	if (NEED_DEV)
		CASE("blk-open", "unterminated path: --device then 'x' to the end, path_len 255") {
			op_reset("");
			memset(OP.raw, 'x', sizeof(OP.raw));
			memcpy(OP.raw, dev_path(), strlen(dev_path()));
			OP.path_len = 255;
			end_case(on_shared(1, c_open, 0));
		}
	if (NEED_DEV)
		CASE("blk-open", "garbage after the NUL of --device") {
			op_reset(dev_path());
			n = strlen(dev_path());
			memcpy(OP.raw + n + 1, "garbage", 7);
			end_case(on_shared(1, c_open, 0));
		}
	if (NEED_DEV)
		CASE("blk-open", "one byte 0x01 in the last byte of the path field") {
			op_reset(dev_path());
			OP.raw[RNBD_PATH_MAX - 1] = 1;
			end_case(on_shared(1, c_open, 0));
		}
	for (i = 1; i < 256; i++) {
		if (!(i < 32 || i == 127 || i == 0x80 || i == 0x9f ||
		      i == 0xa0 || i == 0xff))
			continue;
		if (!NEED_DEV)
			break;
		CASE("blk-open", "byte %#x inserted in --device after its last '/'",
		     i) {
			const char *d = dev_path(), *sl = strrchr(d, '/');
			size_t at = sl ? (size_t)(sl - d) + 1 : 0;

			op_reset("");
			memcpy(OP.raw, d, at);
			OP.raw[at] = i;
			memcpy(OP.raw + at + 1, d + at, strlen(d) - at);
			end_case(on_shared(1, c_open, 0));
		}
	}
	{
		static const char * const names[] = {
			"..", "../../etc/passwd", "dev/../..", "/..", "a/../../b",
			"/dev/..", "../",
		};

		for (i = 0; i < 7; i++)
			open_case_path("dot-dot", names[i], RNBD_ACCESS_RO);
	}
	snprintf(p, sizeof(p), "/dev/../dev/%s", dev_name());
	open_case_path("dot-dot", p, RNBD_ACCESS_RO);
	snprintf(p, sizeof(p), "%s/..", dev_path());
	open_case_path("dot-dot", p, RNBD_ACCESS_RO);
	snprintf(p, sizeof(p), "/proc/self/root/dev/%s", dev_name());
	open_case_path("magic link", p, RNBD_ACCESS_RO);
	snprintf(p, sizeof(p), "/proc/1/root/dev/%s", dev_name());
	open_case_path("magic link", p, RNBD_ACCESS_RO);
	snprintf(p, sizeof(p), "/proc/self/cwd/dev/%s", dev_name());
	open_case_path("magic link", p, RNBD_ACCESS_RW);
	open_case_path("magic link", "/proc/self/fd/0", RNBD_ACCESS_RO);
	open_case_path("magic link", "/dev/fd/0", RNBD_ACCESS_RO);
	open_case_path("magic link", "/proc/self/exe", RNBD_ACCESS_RO);
	open_case_path("not a device", "/etc/passwd", RNBD_ACCESS_RO);
	open_case_path("not a device", "/", RNBD_ACCESS_RO);
	open_case_path("not a device", "///", RNBD_ACCESS_RW);
	open_case_path("not a device", "/dev", RNBD_ACCESS_RO);
	open_case_path("not a device", "/dev/null", RNBD_ACCESS_RW);
	open_case_path("not a device", "/nonexistent-rnbd-hostile", RNBD_ACCESS_RO);
	open_case_path("not a device", "...", RNBD_ACCESS_RO);
	open_case_path("not a device", ".", RNBD_ACCESS_RO);
	snprintf(p, sizeof(p), "%s/", dev_path());
	open_case_path("not a device", p, RNBD_ACCESS_RO);
	snprintf(p, sizeof(p), "/sys/block/%s", dev_name());
	open_case_path("not a device", p, RNBD_ACCESS_RO);
	open_case_path("same device", dev_path(), RNBD_ACCESS_RW);
	open_case_path("same device", dev_path(), RNBD_ACCESS_RO);
	snprintf(p, sizeof(p), "//dev//%s", dev_name());
	open_case_path("same device", p, RNBD_ACCESS_RO);
	snprintf(p, sizeof(p), "/dev/./%s", dev_name());
	open_case_path("same device", p, RNBD_ACCESS_RO);
	snprintf(p, sizeof(p), "dev/%s", dev_name());
	open_case_path("same device", p, RNBD_ACCESS_RO);
	{
		static const struct {
			const char *what;
			uint8_t dir;
			uint32_t dlen;
			uint16_t ul;
			uint8_t r0;
			uint32_t r1;
		} v[] = {
			{ "data_len 63", TRS_DIR_READ, 63, 0, 0, 0 },
			{ "data_len 1", TRS_DIR_READ, 1, 0, 0, 0 },
			{ "dir NONE", TRS_DIR_NONE, 0, 0, 0, 0 },
			{ "dir WRITE of 64 bytes", TRS_DIR_WRITE, 64, 0, 0, 0 },
			{ "data_len 4096 (valid)", TRS_DIR_READ, 4096, 0, 0, 0 },
			{ "header 267 bytes", TRS_DIR_READ, 64, 267, 0, 0 },
			{ "header 269 bytes", TRS_DIR_READ, 64, 269, 0, 0 },
			{ "header 512 bytes", TRS_DIR_READ, 64, 512, 0, 0 },
			{ "reserved0 1", TRS_DIR_READ, 64, 0, 1, 0 },
			{ "reserved1 1", TRS_DIR_READ, 64, 0, 0, 1 },
			{ "reserved1 0x80000000", TRS_DIR_READ, 64, 0, 0, 0x80000000 },
		};

		for (i = 0; i < ARRAY_SIZE(v); i++) {
			if (!NEED_DEV)
				break;
			CASE("blk-open", "%s, path \"/nonexistent-rnbd-hostile\"",
			     v[i].what) {
				op_reset("/nonexistent-rnbd-hostile");
				OP.dir = v[i].dir;
				OP.dlen = v[i].dlen;
				OP.usr_len = v[i].ul;
				OP.r0 = v[i].r0;
				OP.r1 = v[i].r1;
				end_case(on_shared(1, c_open, 0));
			}
		}
	}
}

static void grp_blk(void)
{
	uint32_t i, r;

	/* the common header, on a session with --device open rw */
	{
		uint16_t types[] = { 0, 5, 6, 0xff, 0x100, 0xffff,
				     (uint16_t)rnd(7, 0xfffe) };
		uint8_t vers[] = { 0, 2, 255, (uint8_t)rnd(3, 254) };
		uint8_t res[] = { 1, 0xff, (uint8_t)rnd(2, 254) };

		for (i = 0; i < ARRAY_SIZE(types); i++)
			hdr_case("unknown type", types[i], 1, 0, 24, 0);
		for (i = 0; i < sizeof(vers); i++)
			hdr_case("version", RNBD_MSG_IO, vers[i], 0, 24, 0);
		for (i = 0; i < sizeof(res); i++)
			hdr_case("reserved", RNBD_MSG_IO, 1, res[i], 24, 0);
		for (i = 1; i < 4; i++)
			hdr_case("short header", RNBD_MSG_IO, 1, 0, i, 0);
		hdr_case("zeros", 0, 0, 0, 512, 0);
		hdr_case("type OPEN", RNBD_MSG_OPEN, 1, 0, 24, 0);
		/* INFO is 8 bytes with a read buffer: neither of these */
		hdr_case("type INFO", RNBD_MSG_INFO, 1, 0, 8, 1);
		hdr_case("type INFO", RNBD_MSG_INFO, 1, 0, 24, 0);
		hdr_case("type CLOSE", RNBD_MSG_CLOSE, 1, 0, 24, 0);
		hdr_case("type IO", RNBD_MSG_IO, 1, 0, 8, 1);
		hdr_case("type IO", RNBD_MSG_IO, 1, 0, 268, 2);
		hdr_case("type CLOSE", RNBD_MSG_CLOSE, 1, 0, 268, 2);
		hdr_case("version", RNBD_MSG_CLOSE, 0, 0, 8, 1);
		hdr_case("version", RNBD_MSG_OPEN, 2, 0, 268, 2);
		hdr_case("reserved", RNBD_MSG_OPEN, 1, 0x80, 268, 2);
	}

	grp_blk_open();

	/* CLOSE */
	{
		uint32_t ids[] = { 0, 12345, 0xffffffff, rnd(1, 0xfffffffe) };

		for (i = 0; i < 4; i++)
			CASE("blk-close", "CLOSE of dev_id %u, no device open",
			     ids[i])
				end_case(on_shared(-1, c_close_id, ids[i]));
		if (NEED_DEV)
			CASE("blk-close", "CLOSE of the open device twice")
				end_case(on_fresh(NULL, 0, c_after_close, 0));
		CASE("blk-close", "CLOSE with dir WRITE, 64 bytes")
			end_case(on_shared(-1, c_close_odd, TRS_DIR_WRITE << 16 | 8));
		CASE("blk-close", "CLOSE with dir READ, 64 bytes")
			end_case(on_shared(-1, c_close_odd, TRS_DIR_READ << 16 | 8));
		CASE("blk-close", "CLOSE header of 9 bytes")
			end_case(on_shared(-1, c_close_odd, 9));
		CASE("blk-close", "CLOSE header of 24 bytes")
			end_case(on_shared(-1, c_close_odd, 24));
		CASE("blk-close", "CLOSE header of 7 bytes")
			end_case(on_shared(-1, c_close_odd, 7));
	}

	/* IO: ops, flags */
	{
		uint32_t hi = rnd(3, 13);	/* not 1, 2, 8 nor 15 */
		uint8_t ops[] = { 5, 6, 127, 255, (uint8_t)rnd(128, 254) };
		uint8_t fl[] = { 0x10, 0x20, 0x80, 0xf0,
				 (uint8_t)((hi + (hi >= 8)) << 4) };

		for (i = 0; i < sizeof(ops); i++)
			io_case("blk-io-op", IOC(.op = ops[i], .len = 4096,
						 .dir = DIR(TRS_DIR_READ)));
		for (i = 0; i < sizeof(ops); i++)
			io_case("blk-io-op", IOC(.op = ops[i], .len = 0,
						 .dir = DIR(TRS_DIR_NONE)));
		for (i = 0; i < sizeof(fl); i++)
			io_case("blk-io-flags", IOC(.op = RNBD_OP_READ,
						    .flags = fl[i], .len = 4096));
		for (i = 0; i < 5; i++) {
			uint32_t len = i == RNBD_OP_FLUSH ? 0 : 4096;

			if (i != RNBD_OP_WRITE)
				io_case("blk-io-flags", IOC(.op = i, .len = len,
							    .flags = RNBD_F_FUA));
			if (i != RNBD_OP_WRITE && i != RNBD_OP_FLUSH)
				io_case("blk-io-flags", IOC(.op = i, .len = len,
							    .flags = RNBD_F_PREFLUSH));
			if (i != RNBD_OP_WRITE_ZEROES)
				io_case("blk-io-flags", IOC(.op = i, .len = len,
							    .flags = RNBD_F_NOUNMAP));
			io_case("blk-io-flags", IOC(.op = i, .len = len,
						    .flags = RNBD_F_SYNC));
		}
		io_case("blk-io-flags", IOC(.op = RNBD_OP_WRITE, .len = 4096,
					    .flags = 0xf));
	}
	/* IO: device ids */
	r = rnd(2, 0xfffffffe);
	io_case("blk-io-dev", IOC(.op = RNBD_OP_READ, .len = 4096, .dev = 1));
	io_case("blk-io-dev", IOC(.op = RNBD_OP_READ, .len = 4096, .dev = 2));
	io_case("blk-io-dev", IOC(.op = RNBD_OP_WRITE, .len = 4096, .dev = 3,
				  .rnd_id = r));
	if (NEED_DEV)
		CASE("blk-io-dev", "READ of a closed dev_id")
			end_case(on_fresh(NULL, 0, c_after_close, 1));
	/* IO: lengths */
	{
		struct ioc l[] = {
			IOC(.op = RNBD_OP_READ, .len = 0, .dir = DIR(TRS_DIR_NONE)),
			IOC(.op = RNBD_OP_WRITE, .len = 0, .dir = DIR(TRS_DIR_NONE)),
			IOC(.op = RNBD_OP_DISCARD, .len = 0),
			IOC(.op = RNBD_OP_WRITE_ZEROES, .len = 0),
			IOC(.op = RNBD_OP_READ, .len = 100),
			IOC(.op = RNBD_OP_WRITE, .len = 100),
			IOC(.op = RNBD_OP_READ, .len = 4097),
			IOC(.op = RNBD_OP_WRITE, .len = 511),
			IOC(.op = RNBD_OP_DISCARD, .len = 1000),
			IOC(.op = RNBD_OP_WRITE_ZEROES, .len = 511),
			IOC(.op = RNBD_OP_READ, .len = rnd(1, 65535) | 1),
			IOC(.op = RNBD_OP_READ, .len = 4096, .dlen = DLEN(512)),
			IOC(.op = RNBD_OP_READ, .len = 8192, .dlen = DLEN(4096)),
			IOC(.op = RNBD_OP_WRITE, .len = 512, .dlen = DLEN(4096)),
			IOC(.op = RNBD_OP_WRITE, .len = 4096, .dlen = DLEN(512)),
			IOC(.op = RNBD_OP_READ, .len = 4096, .dir = DIR(TRS_DIR_WRITE)),
			IOC(.op = RNBD_OP_WRITE, .len = 4096, .dir = DIR(TRS_DIR_READ)),
			IOC(.op = RNBD_OP_FLUSH, .len = 0, .dir = DIR(TRS_DIR_READ),
			    .dlen = DLEN(512)),
			IOC(.op = RNBD_OP_DISCARD, .len = 4096, .dir = DIR(TRS_DIR_WRITE)),
			IOC(.op = RNBD_OP_WRITE_ZEROES, .len = 4096,
			    .dir = DIR(TRS_DIR_READ)),
			IOC(.op = RNBD_OP_READ, .len_mode = 2),
			IOC(.op = RNBD_OP_WRITE, .len_mode = 2),
			IOC(.op = RNBD_OP_READ, .len = 4096, .usr_len = 23),
			IOC(.op = RNBD_OP_READ, .len = 4096, .usr_len = 25),
			IOC(.op = RNBD_OP_READ, .len = 4096, .usr_len = 512),
			IOC(.op = RNBD_OP_FLUSH, .len = 512),
			IOC(.op = RNBD_OP_FLUSH, .len = 4096),
			IOC(.op = RNBD_OP_FLUSH, .len = 0, .sector = 1ULL << 63),
			IOC(.op = RNBD_OP_DISCARD, .len = 0xfffffe00),
			IOC(.op = RNBD_OP_WRITE_ZEROES, .len = 0xfffffe00),
			IOC(.op = RNBD_OP_DISCARD, .len_mode = 1),
			IOC(.op = RNBD_OP_WRITE_ZEROES, .len_mode = 1),
			IOC(.op = RNBD_OP_DISCARD, .len = 0xfffffe00,
			    .sec_mode = 3, .sector = 8),
		};

		for (i = 0; i < ARRAY_SIZE(l); i++)
			io_case("blk-io-len", l[i]);
	}
	/* IO: sectors */
	{
		uint64_t rs = rnd(1, 0xffffffff);
		struct ioc l[] = {
			IOC(.op = RNBD_OP_READ, .len = 512, .sec_mode = 1),
			IOC(.op = RNBD_OP_READ, .len = 512, .sec_mode = 1,
			    .sector = 1),
			IOC(.op = RNBD_OP_READ, .len = 1024, .sec_mode = 3,
			    .sector = 1),
			IOC(.op = RNBD_OP_WRITE, .len = 4096, .sec_mode = 3,
			    .sector = 7),
			IOC(.op = RNBD_OP_READ, .len = 4096, .sector = 1ULL << 63),
			IOC(.op = RNBD_OP_READ, .len = 512, .sec_mode = 2),
			IOC(.op = RNBD_OP_READ, .len = 4096, .sec_mode = 2,
			    .sector = 7),
			IOC(.op = RNBD_OP_WRITE, .len = 4096, .sec_mode = 2,
			    .sector = 3),
			IOC(.op = RNBD_OP_DISCARD, .len = 4096, .sec_mode = 2,
			    .sector = 7),
			IOC(.op = RNBD_OP_WRITE_ZEROES, .len = 0xfffffe00,
			    .sec_mode = 2),
			IOC(.op = RNBD_OP_READ, .len = 4096, .sec_mode = 1,
			    .sector = rs),
			IOC(.op = RNBD_OP_READ, .len = 4096, .sec_mode = 3,
			    .sector = 8),
			IOC(.op = RNBD_OP_WRITE, .len = 4096, .sec_mode = 3,
			    .sector = 8),
		};

		for (i = 0; i < ARRAY_SIZE(l); i++)
			io_case("blk-io-sector", l[i]);
	}
	/* IO: priorities (class in bits 13..15) */
	{
		uint16_t pr[] = { 1 << 13 | 3, 1 << 13, 2 << 13 | 7, 3 << 13,
				  4 << 13, 5 << 13 | 1, 6 << 13, 7 << 13 | 0x1fff,
				  2 << 13 | 8, 2 << 13 | 0x1fff, 0 << 13 | 5,
				  1 << 13 | 0x1fff,
				  (uint16_t)(rnd(4, 7) << 13 | rnd(0, 0x1fff)) };

		for (i = 0; i < ARRAY_SIZE(pr); i++)
			io_case("blk-io-prio", IOC(.op = RNBD_OP_READ,
						   .len = 4096, .prio = pr[i]));
		io_case("blk-io-prio", IOC(.op = RNBD_OP_WRITE, .len = 4096,
					   .prio = 1 << 13 | 7));
	}
	/* IO on a device opened read-only */
	{
		struct ioc l[] = {
			IOC(.op = RNBD_OP_WRITE, .len = 4096, .ro = true),
			IOC(.op = RNBD_OP_DISCARD, .len = 4096, .ro = true),
			IOC(.op = RNBD_OP_WRITE_ZEROES, .len = 4096, .ro = true),
			IOC(.op = RNBD_OP_FLUSH, .len = 0, .ro = true),
			IOC(.op = RNBD_OP_WRITE, .len = 4096, .flags = 0x40,
			    .ro = true),
			IOC(.op = RNBD_OP_WRITE, .len = 4096, .flags = RNBD_F_FUA,
			    .ro = true),
			IOC(.op = RNBD_OP_READ, .len = 4096, .ro = true),
		};

		for (i = 0; i < ARRAY_SIZE(l); i++)
			io_case("blk-io-ro", l[i]);
	}
}

/* ---------------------------------------------------------------------- */
/* Group flood                                                            */

/* @n sessions with fresh uuids at once, held, then all closed. */
static void flood_sessions(int n)
{
	struct sess_opts so = { .small = true, .max_qd = opt.flood_qd };
	struct hsess **ss = calloc(n, sizeof(*ss));
	int i, acc = 0, other = 0, eusers = 0, enospc = 0;
	struct outcome o;

	if (!ss)
		die("out of memory");
	for (i = 0; i < n; i++) {
		CASE("flood-sessions", "session %d of %d held at once, fresh uuid, max_queue_depth %d",
		     i + 1, n, opt.flood_qd) {
			ss[i] = sess_alloc(&so);
			o = sess_connect(ss[i]);
			if (o.k == O_ACCEPTED)
				acc++;
			else if (o.k == O_REJECTED && o.err == EUSERS)
				eusers++;
			else if (o.k == O_REJECTED && o.err == ENOSPC)
				enospc++;
			else
				other++;
			if (o.k != O_ACCEPTED) {
				sess_free(ss[i]);
				ss[i] = NULL;
			}
			end_case(o);
		}
	}
	if (!cs.dry) {
		/* held together for a moment, then all dropped */
		long end = now_ms() + 500;

		while (now_ms() < end)
			for (i = 0; i < n; i++)
				if (ss[i])
					pump(ss[i], 0);
		for (i = 0; i < n; i++)
			if (ss[i] && ss[i]->closed)
				fprintf(stderr, "rnbd-hostile: note: flood session %d was closed by the server while held\n",
					i + 1);
		for (i = 0; i < n; i++)
			sess_free(ss[i]);
		printf("hostile: flood-sessions: %d of %d accepted, rejected: %d EUSERS, %d ENOSPC, %d other\n",
		       acc, n, eusers, enospc, other);
		/* let the server finish closing them before the next case */
		sleep_ms(1000);
	}
	free(ss);
}

/* A session promising @cnt connections, only connection 0 made, held. */
static struct outcome c_flood_half(long cnt)
{
	struct sess_opts so = { .small = true, .conn_cnt = cnt,
				.max_qd = 16 };
	struct hsess *s = sess_alloc(&so);
	struct outcome o = conn_open(s, 0, NULL, 0);

	if (o.k == O_ACCEPTED) {
		o = wait_closed(s, 2000);
		if (o.k == O_TIMEOUT)
			o = OUT(O_ACCEPTED, 0);
	}
	sess_free(s);
	return o;
}

/*
 * Connections 0..MAX_CONNS-1 of @s (a session, or a path of one, that
 * announces more): accepted, or the first other outcome.
 */
static struct outcome conns_open(struct hsess *s, const uint8_t *key,
				 uint16_t path_id)
{
	struct trs_msg_conn_req r;
	struct outcome o = OUT(O_ACCEPTED, 0);
	int i, err;

	for (i = 0; i < s->o.conn_cnt && i < MAX_CONNS; i++) {
		err = conn_prepare(s, i);
		if (err)
			return errno_outcome(err);
		conn_req_fill(s, i, &r);
		r.path_id = htole16(path_id);
		if (key)
			memcpy(r.sess_key, key, sizeof(r.sess_key));
		o = conn_connect(s, i, &r, sizeof(r));
		if (o.k != O_ACCEPTED)
			break;
	}
	return o;
}

/* Held for a moment (the server's view settles), then all dropped. */
static void hold_and_free(struct hsess **ss, int n)
{
	long end = now_ms() + 500;
	int i;

	while (now_ms() < end)
		for (i = 0; i < n; i++)
			if (ss[i])
				pump(ss[i], 0);
	for (i = 0; i < n; i++)
		sess_free(ss[i]);
	/* let the server finish closing them before the next case */
	sleep_ms(1000);
}

/*
 * @n sessions at once that announce @cnt connections each and make the
 * first MAX_CONNS: the connections one client address may hold
 * (max_conns_per_peer) and the server in all (max_conns) refuse them, by
 * what they announce.
 */
static void flood_conns(int n, int cnt)
{
	struct sess_opts so = { .small = true, .max_qd = opt.flood_qd,
				.conn_cnt = cnt };
	struct hsess **ss = calloc(n, sizeof(*ss));
	int i, acc = 0, emfile = 0, enfile = 0, eusers = 0, enospc = 0;
	int other = 0;
	struct outcome o;

	if (!ss)
		die("out of memory");
	for (i = 0; i < n; i++) {
		CASE("flood-conns", "session %d of %d held at once, conn_cnt %d, connections 0..%d made",
		     i + 1, n, cnt, (cnt < MAX_CONNS ? cnt : MAX_CONNS) - 1) {
			ss[i] = sess_alloc(&so);
			o = conns_open(ss[i], NULL, 0);
			if (o.k == O_ACCEPTED)
				acc++;
			else if (o.k == O_REJECTED && o.err == EMFILE)
				emfile++;
			else if (o.k == O_REJECTED && o.err == ENFILE)
				enfile++;
			else if (o.k == O_REJECTED && o.err == EUSERS)
				eusers++;
			else if (o.k == O_REJECTED && o.err == ENOSPC)
				enospc++;
			else
				other++;
			if (o.k != O_ACCEPTED) {
				sess_free(ss[i]);
				ss[i] = NULL;
			}
			end_case(o);
		}
	}
	if (!cs.dry) {
		hold_and_free(ss, n);
		printf("hostile: flood-conns: %d of %d sessions of %d connections accepted (%d connections), rejected: %d EMFILE, %d ENFILE, %d EUSERS, %d ENOSPC, %d other\n",
		       acc, n, cnt, acc * cnt, emfile, enfile, eusers, enospc,
		       other);
	}
	free(ss);
}

/*
 * One multipath session joined by @n paths at once (path ids 0..n-1),
 * each announcing @cnt connections and making the first MAX_CONNS: a
 * session has at most 8 paths, whatever their connections.
 */
static void flood_paths(int n, int cnt)
{
	struct sess_opts so = { .small = true, .max_qd = opt.flood_qd,
				.conn_cnt = cnt, .caps = TRS_CAP_MULTIPATH };
	struct hsess **ss = calloc(n, sizeof(*ss));
	int i, acc = 0, tries;
	struct outcome o;

	if (!ss)
		die("out of memory");
	for (i = 0; i < n; i++) {
		CASE("flood-paths", "path %d of %d of one session held at once, conn_cnt %d, connections 0..%d made",
		     i + 1, n, cnt, (cnt < MAX_CONNS ? cnt : MAX_CONNS) - 1) {
			/* the first one, the session's, waits out closing ones */
			for (tries = 0; tries < (i ? 1 : 10); tries++) {
				ss[i] = sess_alloc(&so);
				if (i && ss[0]) {
					memcpy(ss[i]->uuid, ss[0]->uuid,
					       sizeof(ss[i]->uuid));
					o = conns_open(ss[i], ss[0]->key, i);
				} else {
					o = conns_open(ss[i], NULL, i);
				}
				if (o.k == O_ACCEPTED)
					break;
				sess_free(ss[i]);
				ss[i] = NULL;
				if (i || o.k != O_REJECTED ||
				    (o.err != EUSERS && o.err != EMFILE &&
				     o.err != ENFILE && o.err != ENOSPC))
					break;
				sleep_ms(300);
			}
			acc += o.k == O_ACCEPTED;
			end_case(o);
		}
	}
	if (!cs.dry) {
		hold_and_free(ss, n);
		printf("hostile: flood-paths: %d of %d paths of %d connections accepted in one session\n",
		       acc, n, cnt);
	}
	free(ss);
}

/* @arg OPEN/CLOSE pairs of --device: answered 0, or the first failure. */
static struct outcome c_flood_open_close(struct hsess *s, long n)
{
	struct outcome o = OUT(O_ANSWERED, 0);
	long i;

	for (i = 0; i < n; i++) {
		s->dev_open = false;
		o = dev_open(s, i & 1);
		if (o.k != O_ANSWERED || o.err)
			break;
		o = close_do(s, s->dev_id);
		s->dev_open = false;
		if (o.k != O_ANSWERED || o.err)
			break;
	}
	if (i < n)
		fprintf(stderr, "rnbd-hostile: note: OPEN/CLOSE pair %ld of %ld: %s\n",
			i + 1, n, outcome_str(o));
	return o;
}

/*
 * Every slot holds a CLOSE 12345 request at once.  @arg: 0 receives
 * posted (every reply must come: answered ENODEV, or the first other
 * outcome), 1 flagged TRS_REQ_F_MORE (a session with batch replies).
 */
static struct outcome c_flood_burst(struct hsess *s, long more)
{
	struct trs_msg_req th = th_make(s, TRS_DIR_NONE, 0);
	struct rnbd_msg_close m = close_msg(12345);
	unsigned long base = s->n_rsp;
	unsigned int slot;
	long end;
	int err = 0;

	th.flags = more ? TRS_REQ_F_MORE : 0;
	for (slot = 0; slot < s->qd && !err; slot++)
		err = req_write(s, 0, slot, trs_imm_pack(TRS_IMM_REQ, slot, CLOSE_HL),
				CLOSE_HL, &th, &m, sizeof(m), NULL, 0, -1,
				IBV_WR_RDMA_WRITE_WITH_IMM);
	if (err)
		return after_post(s, err, 0);
	end = now_ms() + opt.timeout_ms;
	while (s->n_rsp < base + s->qd && !s->closed && now_ms() < end)
		pump(s, 1);
	if (s->n_rsp < base + s->qd) {
		fprintf(stderr, "rnbd-hostile: note: %lu of %u replies\n",
			s->n_rsp - base, s->qd);
		return s->closed ? OUT(O_CLOSED, 0) : OUT_TIMEOUT(opt.timeout_ms);
	}
	for (slot = 0; slot < s->qd; slot++)
		if (s->rsp[slot] != ENODEV)
			return OUT(O_ANSWERED, s->rsp[slot]);
	return OUT(O_ANSWERED, ENODEV);
}

/* Every slot filled while no receive is posted: no reply can land. */
static struct outcome c_flood_norecv(long rnr)
{
	struct sess_opts so = { .no_recvs = true, .no_repost = true,
				.rnr_set = true, .rnr_retry = rnr,
				.max_qd = 128 };
	struct trs_msg_req th;
	struct rnbd_msg_close m = close_msg(12345);
	struct outcome o;
	struct hsess *s = sess_new(&so, &o);
	unsigned int slot;
	int err = 0;

	if (!s)
		return o;
	th = th_make(s, TRS_DIR_NONE, 0);
	for (slot = 0; slot < s->qd && !err; slot++)
		err = req_write(s, 0, slot, trs_imm_pack(TRS_IMM_REQ, slot, CLOSE_HL),
				CLOSE_HL, &th, &m, sizeof(m), NULL, 0, -1,
				IBV_WR_RDMA_WRITE_WITH_IMM);
	o = err ? after_post(s, err, 0) : wait_closed(s, 2000);
	sess_free(s);
	return o;
}

/* @n sessions made and dropped one after the other: the last outcome. */
static struct outcome c_flood_churn(long n)
{
	struct sess_opts so = { .small = true, .max_qd = 16 };
	struct outcome o = OUT(O_ACCEPTED, 0);
	long i, bad = 0;

	for (i = 0; i < n; i++) {
		struct hsess *s = sess_alloc(&so);
		struct outcome r = sess_connect(s);

		sess_free(s);
		if (r.k != O_ACCEPTED) {
			bad++;
			o = r;
		}
	}
	if (bad)
		fprintf(stderr, "rnbd-hostile: note: churn: %ld of %ld sessions not accepted\n",
			bad, n);
	return o;
}

static void grp_flood(void)
{
	static const struct sess_opts batch = { .caps = TRS_CAP_RSP_BATCH };
	int k = opt.flood_scale;

	flood_sessions(64 * k);
	CASE("flood-half-session", "conn_cnt 1024, only connection 0 made, held 2 s")
		end_case(c_flood_half(1024));
	CASE("flood-half-session", "conn_cnt 2, only connection 0 made, held 2 s")
		end_case(c_flood_half(2));
	if (NEED_DEV)
		CASE("flood-open-close", "%d OPEN/CLOSE pairs of --device (ro and rw) on one session",
		     200 * k)
			end_case(on_fresh(NULL, -1, c_flood_open_close, 200L * k));
	CASE("flood-burst", "a CLOSE 12345 on every slot at once")
		end_case(on_fresh(NULL, -1, c_flood_burst, 0));
	CASE("flood-burst", "a CLOSE 12345 on every slot at once, TRS_REQ_F_MORE, batch replies")
		end_case(on_fresh(&batch, -1, c_flood_burst, 1));
	CASE("flood-norecv", "every slot filled, no receive posted, rnr_retry 7 (infinite)")
		end_case(c_flood_norecv(7));
	CASE("flood-norecv", "every slot filled, no receive posted, rnr_retry 0")
		end_case(c_flood_norecv(0));
	CASE("flood-churn", "%d sessions made and dropped one after the other",
	     50 * k)
		end_case(c_flood_churn(50L * k));
	/* last: what they leave closing makes the caps refuse sooner */
	flood_paths(10, 96);
	flood_conns(12 * k, 128);
}

/* ---------------------------------------------------------------------- */
/* Group idle                                                             */

static void grp_idle(void)
{
	static const char *const what[] = {
		"handshake, then nothing",
		"handshake with TRS_CAP_HEARTBEAT, then no heartbeat",
		"2 connections promised, only connection 0 made",
		"OPEN and CLOSE of --device, then nothing",
	};
	struct sess_opts so[4] = {
		{ .small = true, .max_qd = 16 },
		{ .small = true, .max_qd = 16, .caps = TRS_CAP_HEARTBEAT },
		{ .small = true, .max_qd = 16, .conn_cnt = 2 },
		{ .max_qd = 16 },
	};
	struct hsess *s[4] = {};
	struct outcome o[4];
	long t0, closed_at[4] = {};
	int i, n = opt.device || cs.dry ? 4 : 3;

	if (!cs.dry) {
		for (i = 0; i < n; i++) {
			s[i] = sess_alloc(&so[i]);
			o[i] = i == 2 ? conn_open(s[i], 0, NULL, 0) :
			       sess_connect(s[i]);
			if (o[i].k == O_ACCEPTED && i == 3) {
				o[i] = dev_open(s[i], true);
				if (o[i].k == O_ANSWERED && !o[i].err)
					o[i] = close_do(s[i], s[i]->dev_id);
				s[i]->dev_open = false;
				if (o[i].k == O_ANSWERED && !o[i].err)
					o[i] = OUT(O_ACCEPTED, 0);
			}
		}
		t0 = now_ms();
		for (;;) {
			bool open = false;

			for (i = 0; i < n; i++) {
				if (o[i].k != O_ACCEPTED || closed_at[i])
					continue;
				pump(s[i], 0);
				if (s[i]->closed)
					closed_at[i] = now_ms() - t0;
				else
					open = true;
			}
			if (!open || now_ms() - t0 >= opt.idle_wait * 1000L)
				break;
			sleep_ms(5);
		}
		for (i = 0; i < n; i++)
			if (o[i].k == O_ACCEPTED && closed_at[i])
				o[i] = OUT(O_CLOSED, 0);
	}
	for (i = 0; i < 4; i++) {
		if (i == 3 && !NEED_DEV)
			break;
		CASE("idle", "%s, up to %d s", what[i], opt.idle_wait) {
			end_case(o[i]);
			if (closed_at[i])
				printf("hostile: idle: %s: closed by the server after %ld ms\n",
				       what[i], closed_at[i]);
			else if (o[i].k == O_ACCEPTED && opt.idle_wait)
				printf("hostile: idle: %s: still open after %d s\n",
				       what[i], opt.idle_wait);
		}
	}
	for (i = 0; i < n; i++)
		sess_free(s[i]);
}

/* ---------------------------------------------------------------------- */
/* Group join-race                                                        */

/*
 * A multipath session is made, and its client then joins path 1 to it
 * again and again with the key (each connect replacing the last, whose
 * second connection never comes), until the server closes the session for
 * having no device (idle_session_sec, which the test sets short).  The
 * server's close and the setup of a joining path race; both must end
 * cleanly.  Outcome: "session closed" when the server closed it, with a
 * summary line of the joins: a join the server refuses ECONNRESET is one
 * whose path was closed while it was being set up.
 */
static struct outcome c_join_race(long nr)
{
	static const struct sess_opts host_so = {
		.small = true, .max_qd = 16, .caps = TRS_CAP_MULTIPATH,
	};
	const struct sess_opts join_so = {
		.small = true, .conn_cnt = 2, .max_qd = opt.flood_qd,
		.caps = TRS_CAP_MULTIPATH,
	};
	unsigned long acc = 0, rej = 0, reset = 0, other = 0;
	struct trs_msg_conn_req r;
	struct outcome o, last = OUT(O_ACCEPTED, 0);
	struct hsess *h, *j;
	long t0;
	int err;

	h = sess_new(&host_so, &o);
	if (!h)
		return o;
	t0 = now_ms();
	while (!h->closed && now_ms() - t0 < opt.idle_wait * 1000L) {
		j = sess_alloc(&join_so);
		conn_req_fill(h, 0, &r);
		memcpy(r.sess_key, h->key, sizeof(r.sess_key));
		r.conn_cnt = htole16(join_so.conn_cnt);
		r.max_queue_depth = htole16(join_so.max_qd);
		r.path_id = htole16(1);
		err = conn_prepare(j, 0);
		o = err ? errno_outcome(err) : conn_connect(j, 0, &r, sizeof(r));
		if (o.k == O_ACCEPTED)
			acc++;
		else if (o.k == O_REJECTED)
			rej++, reset += o.err == ECONNRESET, last = o;
		else
			other++, last = o;
		sess_free(j);
		pump(h, 0);
	}
	o = h->closed ? OUT(O_CLOSED, 0) : OUT_TIMEOUT(opt.idle_wait * 1000);
	printf("hostile: join-race: session %ld: %lu joins accepted, %lu rejected (%lu ECONNRESET), %lu other (last %s), %s after %ld ms\n",
	       nr, acc, rej, reset, other, outcome_str(last),
	       h->closed ? "closed by the server" : "still open",
	       now_ms() - t0);
	sess_free(h);
	return o;
}

static void grp_join_race(void)
{
	long i;

	for (i = 0; i < opt.race_sessions; i++)
		CASE("join-race", "session %ld of %d: path 1 joined with the key until the server closes it, up to %d s",
		     i + 1, opt.race_sessions, opt.idle_wait)
			end_case(c_join_race(i + 1));
}

#include "auth.c"

struct group {
	const char *name;
	void (*run)(void);
	bool randomised;
	const char *desc;
	bool named_only;	/* not in "all": runs only when named */
};

static const struct group groups[] = {
	{ "cm", grp_cm, true, "connect request private data", false },
	{ "imm", grp_imm, true, "immediate data and work request types", false },
	{ "req", grp_req, true, "transport request header", false },
	{ "blk", grp_blk, true, "block messages OPEN, CLOSE, IO", false },
	{ "flood", grp_flood, false, "many sessions, connections, requests", false },
	{ "idle", grp_idle, false, "sessions that say nothing", false },
	{ "join-race", grp_join_race, false,
	  "paths joining a session the server closes (named only)", true },
	{ "auth", grp_auth, false,
	  "the exchange of TRS_CAP_AUTH, with --auth-host and --auth-key (named only)",
	  true },
};

#define NR_GROUPS	((int)(ARRAY_SIZE(groups)))

static void group_seed(int g, int round)
{
	prng_in.s = opt.seed ^ str_hash(groups[g].name) ^
		    (0x51ed270b27ULL * (uint64_t)(round + 1));
}

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: rnbd-hostile --server ADDR [--port N] [--seed N] [--cases GROUP,...|all]\n"
		"                    [--rounds N] [--device PATH] [--flood-scale N]\n"
		"                    [--flood-qd N] [--idle-wait SEC] [--race-sessions N]\n"
		"                    [--timeout MS] [--verbose]\n"
		"                    [--auth-host NAME --auth-key rnbd:HEX [--brute-ms MS]]\n"
		"       rnbd-hostile --list\n"
		"A hostile client of the rnbd server: sends malformed input of every kind\n"
		"and prints what the server did with each.  See tests/hostile/README.\n"
		"Exit: 0 every case ran to an outcome, 1 the tool cannot work, 2 bad usage.\n");
}

static long parse_num(const char *arg, const char *what, long lo, long hi)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(arg, &end, 0);
	if (errno || end == arg || *end || v < lo || v > hi) {
		fprintf(stderr, "rnbd-hostile: bad %s: %s (%ld..%ld)\n", what,
			arg, lo, hi);
		print_usage(stderr);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "server",	 required_argument, NULL, 's' },
		{ "port",	 required_argument, NULL, 'p' },
		{ "seed",	 required_argument, NULL, 'S' },
		{ "cases",	 required_argument, NULL, 'c' },
		{ "rounds",	 required_argument, NULL, 'r' },
		{ "device",	 required_argument, NULL, 'd' },
		{ "flood-scale", required_argument, NULL, 'f' },
		{ "flood-qd",	 required_argument, NULL, 'q' },
		{ "idle-wait",	 required_argument, NULL, 'i' },
		{ "race-sessions", required_argument, NULL, 'R' },
		{ "auth-host",	 required_argument, NULL, 'H' },
		{ "auth-key",	 required_argument, NULL, 'K' },
		{ "brute-ms",	 required_argument, NULL, 'B' },
		{ "timeout",	 required_argument, NULL, 't' },
		{ "list",	 no_argument,	    NULL, 'l' },
		{ "verbose",	 no_argument,	    NULL, 'v' },
		{ "help",	 no_argument,	    NULL, 'h' },
		{}
	};
	bool sel[NR_GROUPS], list = false, seeded = false;
	const char *cases = "all";
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	struct ibv_device **devs;
	char port[16], *tok, *save, *cl;
	int c, g, round, ndev;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			opt.server = optarg;
			break;
		case 'p':
			opt.port = parse_num(optarg, "port", 1, 65535);
			break;
		case 'S':
			errno = 0;
			opt.seed = strtoull(optarg, &cl, 0);
			if (errno || cl == optarg || *cl) {
				fprintf(stderr, "rnbd-hostile: bad seed: %s\n",
					optarg);
				print_usage(stderr);
				return 2;
			}
			seeded = true;
			break;
		case 'c':
			cases = optarg;
			break;
		case 'r':
			opt.rounds = parse_num(optarg, "rounds", 1, 1000000);
			break;
		case 'd':
			opt.device = optarg;
			break;
		case 'f':
			opt.flood_scale = parse_num(optarg, "flood scale", 1, 100);
			break;
		case 'q':
			opt.flood_qd = parse_num(optarg, "flood queue depth", 1,
						 TRS_MAX_QUEUE_DEPTH);
			break;
		case 'i':
			opt.idle_wait = parse_num(optarg, "idle wait", 0, 3600);
			break;
		case 'R':
			opt.race_sessions = parse_num(optarg, "race sessions",
						      1, 10000);
			break;
		case 't':
			opt.timeout_ms = parse_num(optarg, "timeout", 100,
						   600000);
			break;
		case 'H':
			opt.auth_host = optarg;
			break;
		case 'B':
			opt.brute_ms = parse_num(optarg, "brute force ms", 1000,
						 600000);
			break;
		case 'K':
			cl = optarg + (strncmp(optarg, "rnbd:", 5) ? 0 : 5);
			auth_klen = strlen(cl) / 2;
			if (strlen(cl) % 2 || auth_klen < TRS_KEY_MIN ||
			    auth_klen > TRS_KEY_MAX) {
				fprintf(stderr, "rnbd-hostile: bad --auth-key\n");
				return 2;
			}
			for (g = 0; g < (int)auth_klen; g++)
				if (sscanf(cl + 2 * g, "%2hhx", &auth_key[g]) != 1) {
					fprintf(stderr, "rnbd-hostile: bad --auth-key\n");
					return 2;
				}
			break;
		case 'l':
			list = true;
			break;
		case 'v':
			opt.verbose = true;
			break;
		case 'h':
			print_usage(stdout);
			return 0;
		default:
			print_usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rnbd-hostile: unexpected argument: %s\n",
			argv[optind]);
		print_usage(stderr);
		return 2;
	}
	/* room for the paths the blk group builds around it */
	if (opt.device && (!*opt.device || strlen(opt.device) > 199)) {
		fprintf(stderr, "rnbd-hostile: bad --device: 1..199 bytes\n");
		return 2;
	}
	memset(sel, 0, sizeof(sel));
	cl = strdup(cases);
	if (!cl)
		die("out of memory");
	for (tok = strtok_r(cl, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (g = 0; g < NR_GROUPS; g++)
			if ((!strcmp(tok, "all") && !groups[g].named_only) ||
			    !strcmp(tok, groups[g].name))
				sel[g] = true;
		if (strcmp(tok, "all")) {
			for (g = 0; g < NR_GROUPS; g++)
				if (!strcmp(tok, groups[g].name))
					break;
			if (g == NR_GROUPS) {
				fprintf(stderr, "rnbd-hostile: unknown case group: %s\n",
					tok);
				print_usage(stderr);
				return 2;
			}
		}
	}
	free(cl);
	if (!seeded)
		opt.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);

	if (list) {
		unsigned long total = 0;

		cs.dry = true;
		for (g = 0; g < NR_GROUPS; g++) {
			group_seed(g, 0);
			memset(&cs.group, 0, sizeof(cs.group));
			groups[g].run();
			printf("%-9s %4zu inputs  %s%s\n", groups[g].name,
			       cs.group.n, groups[g].desc,
			       groups[g].randomised ? " (randomised)" : "");
			if (!groups[g].named_only)
				total += cs.group.n;
			free(cs.group.v);
		}
		printf("total     %4lu inputs per round of all\n", total);
		return 0;
	}
	if (!opt.server) {
		fprintf(stderr, "rnbd-hostile: --server is required\n");
		print_usage(stderr);
		return 2;
	}

	printf("hostile: seed %llu\n", (unsigned long long)opt.seed);
	prng_aux.s = opt.seed ^ 0xa0761d6478bd642fULL;
	snprintf(port, sizeof(port), "%d", opt.port);
	c = getaddrinfo(opt.server, port, &hints, &ai);
	if (c)
		die("cannot resolve %s: %s", opt.server, gai_strerror(c));
	memcpy(&srv_addr, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	devs = ibv_get_device_list(&ndev);
	if (devs)
		ibv_free_device_list(devs);
	if (!devs || ndev <= 0)
		die("no RDMA device on this machine (load rdma_rxe and add a link: rdma link add rxe0 type rxe netdev IF)");

	run_baseline();
	for (g = 0; g < NR_GROUPS; g++) {
		if (!sel[g])
			continue;
		for (round = 0; round < (groups[g].randomised ? opt.rounds : 1);
		     round++) {
			group_seed(g, round);
			printf("hostile: group %s round %d\n", groups[g].name,
			       round + 1);
			groups[g].run();
			shared_put();
		}
	}
	if (cs.skipped)
		printf("hostile: %lu cases skipped: they need --device\n",
		       cs.skipped);
	printf("hostile: %lu cases, %zu distinct inputs, seed %llu\n",
	       cs.cases, cs.all.n, (unsigned long long)opt.seed);
	return 0;
}
