/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * RNBD transport server: private definitions.
 *
 * Object model: a context (trs_srv_ctx) is one listener of one user
 * module.  A session (trs_srv_sess) is created by the connect request of
 * its connection 0 and owns its connections, its PD and its chunks (with
 * their MRs).  It is freed by its close work and nothing else; every
 * reason to end a session (a connection error or disconnect, a protocol
 * violation, the user refusing it, a handshake timeout, device removal,
 * trs_srv_close()) goes through trs_srv_sess_fail(), which queues that
 * work once.
 */
#ifndef TRS_SRV_H
#define TRS_SRV_H

#include <linux/completion.h>
#include <linux/percpu-refcount.h>
#include <linux/spinlock.h>
#include <linux/uuid.h>
#include <linux/workqueue.h>
#include <rnbd/trs.h>
#include "trs-core.h"

/*
 * The server's CM handler gets two kinds of cm_id contexts: the
 * listener's, which connect requests on new ids also carry, points to a
 * struct trs_srv_ctx, a connection's to a struct trs_srv_conn.  Both start
 * with this tag.
 */
enum trs_srv_cm_kind {
	TRS_SRV_CM_LISTENER,
	TRS_SRV_CM_CONN,
};

/**
 * struct trs_srv_ctx - a listener and its user
 * @kind: TRS_SRV_CM_LISTENER
 * @ops: user callbacks
 * @listen_id: wildcard listener
 * @nr_sess: sessions of this listener not freed yet
 */
struct trs_srv_ctx {
	enum trs_srv_cm_kind	kind;
	const struct trs_srv_ops *ops;
	struct rdma_cm_id	*listen_id;
	atomic_t		nr_sess;
};

/**
 * struct trs_srv_conn - one connection of a session
 * @kind: TRS_SRV_CM_CONN
 * @sess: owner
 * @idx: index in the session
 * @established: reached ESTABLISHED; guarded by sess->lock
 * @cm_id: CM id; its QP is cm_id->qp
 * @cq: completion queue, polled from a workqueue
 * @recv_cqe: completion of the zero-length receives taking requests
 * @rsp_cqe: completion of replies
 * @poll_task: the task that last took a request from @cq (the CQ's work)
 * @flush_work: posts @held once the CQ's work has taken what it had
 * @lock: guards @dead, @credits, @rsp_wait, @held, @nr_held, @unsignaled,
 *	@sig_head, @sig_tail, @sig_covers and every post to the QP
 * @dead: teardown started; nothing may be posted any more
 * @credits: replies the send queue can still take
 * @rsp_wait: slots whose reply waits for a credit
 * @held: slots whose zero-length success replies wait for others to share
 *	their message (TRS_IMM_RSP_BATCH), until @held is full or @flush_work
 *	runs
 * @nr_held: slots in @held
 * @unsignaled: replies posted unsignaled since the last signaled one
 * @sig_head: oldest signaled reply not completed yet, in @sig_covers
 * @sig_tail: where the next signaled reply goes in @sig_covers
 * @sig_covers: ring of the signaled replies in flight (at most one per
 *	credit): how many replies the completion of each retires
 */
struct trs_srv_conn {
	enum trs_srv_cm_kind	kind;
	struct trs_srv_sess	*sess;
	u32			idx;
	bool			established;
	struct rdma_cm_id	*cm_id;
	struct ib_cq		*cq;
	struct ib_cqe		recv_cqe;
	struct ib_cqe		rsp_cqe;
	struct task_struct	*poll_task;
	struct work_struct	flush_work;
	spinlock_t		lock;	/* see above */
	bool			dead;
	u32			credits;
	struct list_head	rsp_wait;
	struct trs_srv_slot	*held[TRS_RSP_BATCH_MAX];
	u32			nr_held;
	u32			unsignaled;
	u32			sig_head;
	u32			sig_tail;
	u8			sig_covers[];
};

/**
 * struct trs_srv_slot - a chunk and the request using it
 * @req: the request handed to the user
 * @sess: owner
 * @conn: connection of the request; the reply goes there
 * @buf: the chunk: TRS_HDR_AREA bytes of header area, then the data area
 * @sg: DMA mapping of @buf
 * @mr: MR covering @buf, registered once for the session
 * @raddr: READ: client buffer
 * @rkey: READ: its remote key
 * @more: the client has other requests in flight on the connection
 * @tag: the slot field of the request's immediate, which the reply echoes
 *	(index and, with TRS_CAP_SLOT_GEN, the client's generation)
 * @rsp_imm: immediate data of the reply
 * @rsp_len: data bytes of the reply
 * @wait_entry: on conn->rsp_wait
 * @usr_hdr: private copy of the user header: the client owns the chunk and
 *	could rewrite it while the user parses it
 *
 * A slot is busy (bit in sess->busy) from the arrival of its request until
 * its reply is posted: the client can send the next request on the slot
 * only after it received that reply, and the HCA finished reading the
 * chunk by then.
 */
struct trs_srv_slot {
	struct trs_srv_req	req;
	struct trs_srv_sess	*sess;
	struct trs_srv_conn	*conn;
	void			*buf;
	struct scatterlist	sg;
	struct ib_mr		*mr;
	u64			raddr;
	u32			rkey;
	bool			more;
	u32			tag;
	u32			rsp_imm;
	u32			rsp_len;
	struct list_head	wait_entry;
	u8			usr_hdr[TRS_MAX_USR_HDR];
};

enum trs_srv_state {
	TRS_SRV_CONNECTING,	/* connections being established */
	TRS_SRV_OPEN,		/* user accepted it: requests reach the user */
	TRS_SRV_CLOSING,
};

/**
 * struct trs_srv_sess - a server session
 * @ctx: listener the session came in on
 * @entry: in trs_srv_sessions, guarded by trs_srv_mutex
 * @uuid: the client's session id
 * @name: printable name: client address and start of @uuid
 * @conn_cnt: connections
 * @queue_depth: chunks
 * @chunk_size: TRS_HDR_AREA + max_io_size
 * @max_io_size: data area of a chunk
 * @rsp: accept private data, the same for every connection
 * @peer: the client's address, port cleared: what max_sessions_per_peer
 *	counts
 * @chunk_bytes: chunk memory the session was admitted with, in
 *	trs_srv_chunk_bytes until it is freed
 * @lock: guards @state, @nr_established, @priv, @user_open and the
 *	connections' established flags
 * @state: enum trs_srv_state
 * @nr_established: connections established
 * @priv: the user's session pointer
 * @user_open: sess_open() succeeded, so sess_close() is owed
 * @inflight: one per request handed to the user and not answered, plus
 *	the initial reference (the close work's from trs_srv_sess_fail()
 *	on); per CPU until the session closes.  Zero frees the session.
 * @open_work: calls sess_open() and sends the chunk table
 * @close_work: tears the session down
 * @free_work: frees it once @inflight is zero
 * @setup_work: handshake timeout
 * @hb: heartbeat timer: sends ours and checks the client's
 * @hb_cqe: completion of our heartbeat
 * @hb_on: the client does heartbeats (TRS_CAP_HEARTBEAT)
 * @tag_idx_mask: the bits of a request's slot field that are the slot index:
 *	all of them, or the index bits only with TRS_CAP_SLOT_GEN
 * @hb_busy: our heartbeat is in flight; guarded by conns[0]->lock
 * @ibdev: RDMA device of every connection
 * @pd: protection domain
 * @busy: slots with a request not answered yet
 * @slots: one per chunk
 * @table: chunk table send buffer
 * @table_dma: its DMA address, valid if @table_mapped
 * @table_mapped: @table is DMA mapped
 * @table_len: its size
 * @table_cqe: completion of the chunk table SEND (and of REG_MR errors)
 * @conns: connections by index; set under trs_srv_mutex
 */
struct trs_srv_sess {
	struct trs_srv_ctx	*ctx;
	struct list_head	entry;
	uuid_t			uuid;
	char			name[TRS_ADDR_LEN + 16];
	u32			conn_cnt;
	u32			queue_depth;
	u32			chunk_size;
	u32			max_io_size;
	struct trs_msg_conn_rsp	rsp;
	struct sockaddr_storage	peer;
	u64			chunk_bytes;

	spinlock_t		lock;	/* see above */
	enum trs_srv_state	state;
	u32			nr_established;
	void			*priv;
	bool			user_open;

	struct percpu_ref	inflight;
	struct work_struct	open_work;
	struct work_struct	close_work;
	struct work_struct	free_work;
	struct delayed_work	setup_work;
	struct trs_hb		hb;
	struct ib_cqe		hb_cqe;
	bool			hb_on;
	bool			hb_busy;
	u32			tag_idx_mask;

	struct ib_device	*ibdev;
	struct ib_pd		*pd;
	unsigned long		*busy;
	struct trs_srv_slot	*slots;
	struct trs_msg_chunks	*table;
	u64			table_dma;
	bool			table_mapped;
	size_t			table_len;
	struct ib_cqe		table_cqe;
	struct trs_srv_conn	**conns;
};

#define trs_srv_err(sess, fmt, ...) \
	pr_err("%s: " fmt, (sess)->name, ##__VA_ARGS__)
#define trs_srv_info(sess, fmt, ...) \
	pr_info("%s: " fmt, (sess)->name, ##__VA_ARGS__)
#define trs_srv_err_rl(sess, fmt, ...) \
	pr_err_ratelimited("%s: " fmt, (sess)->name, ##__VA_ARGS__)

/* trs-srv.c */
extern struct workqueue_struct *trs_srv_wq;
extern struct workqueue_struct *trs_srv_setup_wq;
extern struct mutex trs_srv_mutex;
extern struct list_head trs_srv_sessions;
extern unsigned int trs_srv_queue_depth;
extern unsigned int trs_srv_max_io_size;
extern unsigned int trs_srv_max_sessions;
extern unsigned int trs_srv_max_peer_sessions;
extern unsigned int trs_srv_max_conns;
extern unsigned int trs_srv_max_chunk_mem_mb;

/* trs-srv-sess.c */
int trs_srv_connect(struct trs_srv_ctx *ctx, struct rdma_cm_id *cm_id,
		    struct rdma_cm_event *ev);
void trs_srv_established(struct trs_srv_conn *conn);
void trs_srv_sess_fail(struct trs_srv_sess *sess, const char *why);

/* trs-srv-hb.c */
void trs_srv_hb_init(struct trs_srv_sess *sess);
void trs_srv_hb_start(struct trs_srv_sess *sess);
void trs_srv_hb_stop(struct trs_srv_sess *sess);
bool trs_srv_hb_recv(struct trs_srv_conn *conn, const struct ib_wc *wc);

/* trs-srv-io.c */
void trs_srv_recv_done(struct ib_cq *cq, struct ib_wc *wc);
void trs_srv_rsp_done(struct ib_cq *cq, struct ib_wc *wc);
void trs_srv_flush_work(struct work_struct *work);
void trs_srv_table_done(struct ib_cq *cq, struct ib_wc *wc);
int trs_srv_send_chunks(struct trs_srv_sess *sess);

#endif /* TRS_SRV_H */
