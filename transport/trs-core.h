/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * RNBD transport: helpers shared by the client and the server modules.
 * The functions live in rnbd_trs_core.ko; the inline helpers log with the
 * pr_fmt of the module that includes this header.
 */
#ifndef TRS_CORE_H
#define TRS_CORE_H

#include <linux/bottom_half.h>
#include <linux/kobject.h>
#include <linux/preempt.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <rnbd/fault-inject.h>
#include <rnbd/trs-proto.h>
#include <rnbd/trs.h>

/* Each connect step (address, route, connect, chunk table) is bounded. */
#define TRS_CONNECT_TIMEOUT_MS	10000
/* One try of address resolution (ARP probes one neighbour for 3 s). */
#define TRS_ADDR_TRY_MS		2000

/* FRWR page size; the client block driver sets a matching virt boundary. */
#define TRS_MR_PAGE		SZ_4K

/* MR pages needed for @size bytes that may start anywhere in a page. */
#define TRS_MR_PAGES(size)	((size) / TRS_MR_PAGE + 1)

/* "ip:" + IPv6 + "%" + scope id */
#define TRS_ADDR_LEN		64

/* Messages about a session (client) or path (server): "<name>: ..." */
#define trs_log_err(obj, fmt, ...) \
	pr_err("%s: " fmt, (obj)->name, ##__VA_ARGS__)
#define trs_log_info(obj, fmt, ...) \
	pr_info("%s: " fmt, (obj)->name, ##__VA_ARGS__)
#define trs_log_err_rl(obj, fmt, ...) \
	pr_err_ratelimited("%s: " fmt, (obj)->name, ##__VA_ARGS__)

/**
 * struct trs_qp_attr - sizes of a connection's queue pair and CQ
 * @send_wr: send queue depth, including one WR for ib_drain_sq()
 * @recv_wr: receive queue depth, including one WR for ib_drain_rq()
 * @send_sge: scatter/gather entries per send WR
 * @poll_ctx: CQ polling context
 */
struct trs_qp_attr {
	u32			send_wr;
	u32			recv_wr;
	u32			send_sge;
	enum ib_poll_context	poll_ctx;
};

int trs_dev_check(struct rdma_cm_id *cm_id, u32 mr_pages);
int trs_qp_create(struct rdma_cm_id *cm_id, struct ib_pd *pd, void *ctx,
		  u32 idx, const struct trs_qp_attr *attr, struct ib_cq **cq);
void trs_qp_destroy(struct rdma_cm_id *cm_id, struct ib_cq *cq);
int trs_post_recvs(struct ib_qp *qp, struct ib_cqe *cqe, u32 n);

struct trs_hb;

/**
 * struct trs_hb_ops - a side's part of the heartbeat (trs-hb.c)
 * @send: trs_hb_post() on connection 0 under the lock of its posts, unless
 *	the connection is going; its result, or 0.  Process context.
 * @lost: no heartbeat for @sec seconds, or (@sec 0) ours could not be
 *	sent: end the path.  The timer is stopped.  Process or softirq
 *	context.
 */
struct trs_hb_ops {
	int	(*send)(struct trs_hb *hb);
	void	(*lost)(struct trs_hb *hb, unsigned int sec);
};

/**
 * struct trs_hb - heartbeat of a path
 * @work: timer, every TRS_HB_INTERVAL_MS while the path is up
 * @wq: workqueue of @work
 * @ops: the side's callbacks
 * @timeout_sec: the side's timeout parameter
 * @rx: jiffies when the peer's last heartbeat arrived
 * @cqe: completion of our heartbeat
 * @on: the peer does heartbeats (TRS_CAP_HEARTBEAT); set by the side
 *	before trs_hb_start()
 * @busy: our heartbeat is in flight: set by the timer before its post,
 *	cleared by its completion, one of each at a time (no lock)
 */
struct trs_hb {
	struct delayed_work		work;
	struct workqueue_struct		*wq;
	const struct trs_hb_ops		*ops;
	const unsigned int		*timeout_sec;
	unsigned long			rx;
	struct ib_cqe			cqe;
	bool				on;
	bool				busy;
};

void trs_hb_init(struct trs_hb *hb, struct workqueue_struct *wq,
		 const struct trs_hb_ops *ops, const unsigned int *timeout_sec);
void trs_hb_start(struct trs_hb *hb);
void trs_hb_stop(struct trs_hb *hb);
int trs_hb_post(struct trs_hb *hb, struct ib_qp *qp, u32 arg);
bool trs_hb_recv(struct trs_hb *hb, u32 idx, const struct ib_wc *wc, u32 args);

/*
 * A request or reply from the peer: as good a sign of life as a heartbeat.
 * On a link that loses packets a heartbeat can wait long behind writes
 * being sent again on its connection while IO still flows.  At most one
 * store per jiffy: the IO path mostly only reads the cache line.
 */
static inline void trs_hb_alive(struct trs_hb *hb)
{
	unsigned long now = jiffies;

	if (READ_ONCE(hb->rx) != now)
		WRITE_ONCE(hb->rx, now);
}

/**
 * struct trs_auth - a path's exchange of TRS_CAP_AUTH, as both sides know it
 * @nonce_c: the client's nonce
 * @nonce_s: the server's nonce
 * @uuid: the session's uuid
 * @path_id: the path's id
 * @conn_cnt: its number of connections
 * @clt_addr: the client's IP address (trs_auth_addr())
 * @srv_addr: the server's
 * @host: the client's host name, NUL-padded
 */
struct trs_auth {
	u8	nonce_c[TRS_NONCE_LEN];
	u8	nonce_s[TRS_NONCE_LEN];
	u8	uuid[16];
	u16	path_id;
	u16	conn_cnt;
	u8	clt_addr[16];
	u8	srv_addr[16];
	char	host[TRS_HOSTNAME_LEN];
};

int trs_auth_mac(const u8 *key, unsigned int klen, const char *label,
		 const struct trs_auth *a, u8 *mac);
int trs_auth_token(const u8 *key, unsigned int klen, const struct trs_auth *a,
		   u16 idx, u8 *token);
bool trs_auth_equal(const u8 *a, const u8 *b, size_t len);
void trs_auth_addr(const struct sockaddr_storage *addr, u8 *out);
void *trs_auth_buf_alloc(struct ib_device *dev, size_t len,
			 enum dma_data_direction dir, u64 *dma);
void trs_auth_buf_free(struct ib_device *dev, void *buf, size_t len,
		       enum dma_data_direction dir, u64 dma);
int trs_auth_send(struct ib_qp *qp, struct ib_cqe *cqe, u64 dma, u32 len,
		  u32 lkey);

static inline bool trs_is_zero(const void *p, size_t len)
{
	return !memchr_inv(p, 0, len);
}

/* Our magic and a major version we speak. */
static inline bool trs_proto_ok(__le16 magic, u8 ver_major)
{
	return le16_to_cpu(magic) == TRS_MAGIC &&
	       ver_major == TRS_PROTO_VER_MAJOR;
}

/*
 * trs_wc_failed() - true if a work completion failed; logs it unless it is
 * a flush, which every teardown produces.  Rate limited: data path.
 */
static inline bool trs_wc_failed(const struct ib_wc *wc, const char *what)
{
	if (likely(wc->status == IB_WC_SUCCESS))
		return false;
	if (wc->status != IB_WC_WR_FLUSH_ERR)
		pr_err_ratelimited("%s failed: %s (vendor error %#x)\n", what,
				   ib_wc_status_msg(wc->status),
				   wc->vendor_err);
	return true;
}

/* A setup message's receive: 0, -ECONNRESET (logged) or -EPROTO. */
static inline int trs_wc_recv_err(const struct ib_wc *wc, const char *what)
{
	if (trs_wc_failed(wc, what))
		return -ECONNRESET;
	return wc->opcode == IB_WC_RECV ? 0 : -EPROTO;
}

/*
 * trs_bh_off() and trs_bh_on() bracket a post made in task context.  A
 * software RDMA device (rxe) does the work of a post in a tasklet, which a
 * task can only raise for ksoftirqd: a switch to ksoftirqd and back per
 * message.  With bottom halves off around the post, trs_bh_on() runs that
 * tasklet at once, on this CPU, in this task.  In interrupt context, or with
 * interrupts off, bottom halves stay as they are: the softirq runs when the
 * interrupt returns, or later.  Call trs_bh_on() with no lock held that
 * softirq completion handlers take.  Only for posts whose receiver does not
 * preempt the poster (see "Both sides" in the transport protocol document).
 */
static inline bool trs_bh_off(void)
{
	if (!in_task() || irqs_disabled())
		return false;
	local_bh_disable();
	return true;
}

static inline void trs_bh_on(bool off)
{
	if (off)
		local_bh_enable();
}

/* A sysfs file's line: @addr as trs_addr_parse() reads it. */
static inline ssize_t trs_addr_show(const struct sockaddr_storage *addr,
				    char *buf)
{
	char str[TRS_ADDR_LEN];

	trs_addr_print((const struct sockaddr *)addr, str, sizeof(str));
	return sysfs_emit(buf, "%s\n", str);
}

/* The show() of a path's sysfs file that takes "1": how to write it. */
static inline ssize_t trs_usage_show(struct kobject *kobj,
				     struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "Usage: echo 1 > %s\n", attr->attr.name);
}

/* Remove a sysfs directory of a path and drop its reference; NULL: none. */
static inline void trs_kobj_del(struct kobject *kobj)
{
	if (!kobj)
		return;
	kobject_del(kobj);
	kobject_put(kobj);
}

/* Fill @reg to register @mr (already mapped) under its current key. */
static inline void trs_reg_wr_init(struct ib_reg_wr *reg, struct ib_mr *mr,
				   struct ib_cqe *cqe, int access)
{
	reg->wr.opcode = IB_WR_REG_MR;
	reg->wr.wr_cqe = cqe;
	reg->mr = mr;
	reg->key = mr->rkey;
	reg->access = access;
}

#endif /* TRS_CORE_H */
