/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * RNBD transport server: private definitions.
 *
 * Object model: a context (trs_srv_ctx) is one listener of one user
 * module.  A session (trs_srv_sess) is what the user sees; it is created
 * by the connect request of the connection 0 of its first path and lives
 * until its last path left it and its last path was freed (kref).  A path
 * (trs_srv_path) is created by the connect request of its connection 0
 * and owns its connections, its PD and its chunks (with their MRs).  It is
 * freed once its close work ran and its last request was answered; every
 * reason to end a path (a connection error or disconnect, a protocol
 * violation, the user refusing or closing the session, a handshake
 * timeout, a reconnect of the same path, device removal, trs_srv_close())
 * goes through trs_srv_path_fail(), which queues that work once.
 *
 * A path is linked into its session before it is set up: the connect of
 * its connection 0 allocates its PD, chunks and MRs after dropping
 * trs_srv_mutex, and then accepts the connection.  Anything that walks the
 * session's paths may fail it meanwhile (the user closing the session, a
 * replacing join, device removal), so the connect owns the path until it
 * completes @setup_done, which its close work waits for before it tears
 * anything down; the path cannot be freed before either.
 */

/* The locks below: their order and rules in Documentation/locking.rst */
#ifndef TRS_SRV_H
#define TRS_SRV_H

#include <linux/completion.h>
#include <linux/kref.h>
#include <linux/mutex.h>
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
 * struct trs_srv_stats - per connection counters, shown in sysfs
 * @reads: requests with data to the client (client READs)
 * @read_bytes: their data bytes
 * @writes: requests with data from the client
 * @write_bytes: their data bytes
 *
 * Written by the connection's CQ work only, read without a lock.
 */
struct trs_srv_stats {
	u64	reads;
	u64	read_bytes;
	u64	writes;
	u64	write_bytes;
};

/**
 * struct trs_srv_conn - one connection of a session
 * @kind: TRS_SRV_CM_CONN
 * @path: owner
 * @idx: index in the session
 * @established: reached ESTABLISHED; guarded by path->lock
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
 * @stats: counters
 * @sig_covers: ring of the signaled replies in flight (at most one per
 *	credit): how many replies the completion of each retires
 */
struct trs_srv_conn {
	enum trs_srv_cm_kind	kind;
	struct trs_srv_path	*path;
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
	struct trs_srv_stats	stats;
	u8			sig_covers[];
};

/**
 * struct trs_srv_slot - a chunk and the request using it
 * @req: the request handed to the user
 * @path: owner
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
 * A slot is busy (bit in path->busy) from the arrival of its request until
 * its reply is posted: the client can send the next request on the slot
 * only after it received that reply, and the HCA finished reading the
 * chunk by then.
 */
struct trs_srv_slot {
	struct trs_srv_req	req;
	struct trs_srv_path	*path;
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

struct trs_srv_auth;

/**
 * struct trs_srv_path - the connections of a session from one client port
 * @sess: the session it belongs to; holds a reference on it
 * @sess_entry: in sess->paths while linked, guarded by sess->lock
 * @path_id: the client's id of the path (TRS_CAP_MULTIPATH), 0 without
 * @name: printable name: the session's, and the path id
 * @conn_cnt: connections
 * @queue_depth: chunks
 * @chunk_size: TRS_HDR_AREA + max_io_size
 * @max_io_size: data area of a chunk
 * @rsp: accept private data, the same for every connection
 * @src: the server's address of connection 0
 * @dst: the client's address of connection 0
 * @chunk_bytes: chunk memory the path was admitted with, in
 *	trs_srv_chunk_bytes until it is freed
 * @peer: the client's address of connection 0, by which
 *	max_conns_per_peer counts (ports are not compared)
 * @conn_entry: on the list of paths whose @conn_cnt connections are
 *	counted (max_conns, max_conns_per_peer), from the admission of
 *	connection 0 until the close work destroyed the connections (or the
 *	path is discarded); guarded by trs_srv_conn_lock
 * @lock: guards @state, @nr_established and the connections' established
 *	flags
 * @state: enum trs_srv_state
 * @nr_established: connections established
 * @inflight: one per request handed to the user and not answered, plus
 *	the initial reference (the close work's from trs_srv_path_fail()
 *	on); per CPU until the path closes.  Zero frees the path.
 * @open_work: opens the session for the user if needed, sends the chunk
 *	table
 * @close_work: tears the path down
 * @free_work: frees it once @inflight is zero
 * @setup_work: handshake timeout
 * @setup_done: the connect of connection 0 is done with the path: set up
 *	(or failed) and its connection accepted (or not); completed once, by
 *	that connect.  The close work waits for it first.
 * @hb: heartbeat: sends ours and checks the client's
 * @notice: the next heartbeat carries TRS_HB_NOTICE; set by
 *	trs_srv_sess_notify(), cleared by the heartbeat's post
 * @auth: the exchange of TRS_CAP_AUTH (trs-srv-auth.c), NULL without it
 * @tag_idx_mask: the bits of a request's slot field that are the slot index:
 *	all of them, or the index bits only with TRS_CAP_SLOT_GEN
 * @ibdev: RDMA device of every connection, that of connection 0's CM id;
 *	set before the path is linked
 * @hca_port: its port (of connection 0)
 * @pd: protection domain
 * @busy: slots with a request not answered yet
 * @slots: one per chunk
 * @table: chunk table send buffer
 * @table_dma: its DMA address, valid if @table_mapped
 * @table_mapped: @table is DMA mapped
 * @table_len: its size
 * @table_cqe: completion of the chunk table SEND (and of REG_MR errors)
 * @conns: connections by index; set under trs_srv_mutex
 * @kobj: sysfs directory paths/<client addr>@<server addr>, NULL if none
 * @stats_kobj: its "stats" directory
 */
struct trs_srv_path {
	struct trs_srv_sess	*sess;
	struct list_head	sess_entry;
	u16			path_id;
	char			name[TRS_ADDR_LEN + 24];
	u32			conn_cnt;
	u32			queue_depth;
	u32			chunk_size;
	u32			max_io_size;
	struct trs_msg_conn_rsp	rsp;
	struct sockaddr_storage	src;
	struct sockaddr_storage	dst;
	u64			chunk_bytes;
	struct sockaddr_storage	peer;
	struct list_head	conn_entry;

	spinlock_t		lock;	/* see above */
	enum trs_srv_state	state;
	u32			nr_established;

	struct percpu_ref	inflight;
	struct work_struct	open_work;
	struct work_struct	close_work;
	struct work_struct	free_work;
	struct delayed_work	setup_work;
	struct completion	setup_done;
	struct trs_hb		hb;
	unsigned long		notice;
	struct trs_srv_auth	*auth;
	u32			tag_idx_mask;

	struct ib_device	*ibdev;
	u32			hca_port;
	struct ib_pd		*pd;
	unsigned long		*busy;
	struct trs_srv_slot	*slots;
	struct trs_msg_chunks	*table;
	u64			table_dma;
	bool			table_mapped;
	size_t			table_len;
	struct ib_cqe		table_cqe;
	struct trs_srv_conn	**conns;
	struct kobject		*kobj;
	struct kobject		*stats_kobj;
};

/**
 * struct trs_srv_sess - a client session: the paths that show its uuid
 *	and key
 * @ctx: listener of its first path
 * @entry: in trs_srv_sessions, guarded by trs_srv_mutex
 * @uuid: the client's session id
 * @key: the secret every connect of the session shows, sent in its accepts
 * @name: printable name: the first path's client address and the start
 *	of @uuid; also the sysfs directory
 * @host: the client's host name, set once by its first path whose
 *	exchange succeeded (empty without TRS_CAP_AUTH), then never changed;
 *	guarded by @lock until set
 * @key_id: the id of the host key its last authenticated path proved,
 *	zero if none; guarded by @lock
 * @peer: the first path's client address, by which
 *	max_sessions_per_peer counts (ports are not compared)
 * @multipath: the client offered TRS_CAP_MULTIPATH: a path that connects
 *	again replaces its old self and the session stays
 * @auth: its first path offered TRS_CAP_AUTH: every path of it must make
 *	the exchange (a path without it would join with no proof)
 * @ref: one for the session list, one per path not freed
 * @lock: guards @paths, @nr_paths, @closing, @key_id and the setting of
 *	@host
 * @paths: its paths, the closing ones until their close work unlinks them
 * @nr_paths: paths on @paths
 * @closing: the user closed it, or its last path went: no path joins
 * @open_mutex: serialises sess_open() with the check of @user_open
 * @priv: the user's session pointer, set before any path goes OPEN
 * @user_open: sess_open() succeeded, so sess_close() is owed; written
 *	under @open_mutex, read after the path's OPEN state (release/acquire)
 *	or by the last path's close work
 * @dev: sysfs device /sys/class/rtrs-server/<name>, NULL if none
 * @paths_kobj: sysfs "paths" directory
 */
struct trs_srv_sess {
	struct trs_srv_ctx	*ctx;
	struct list_head	entry;
	uuid_t			uuid;
	u8			key[TRS_SESS_KEY_LEN];
	char			name[TRS_ADDR_LEN + 16];
	char			host[TRS_HOSTNAME_LEN];
	u8			key_id[TRS_KEY_ID_LEN];
	struct sockaddr_storage	peer;
	bool			multipath;
	bool			auth;
	struct kref		ref;

	spinlock_t		lock;	/* see above */
	struct list_head	paths;
	u32			nr_paths;
	bool			closing;

	struct mutex		open_mutex;	/* see above */
	void			*priv;
	bool			user_open;

	struct device		*dev;
	struct kobject		*paths_kobj;
};

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
extern unsigned int trs_srv_max_total_conns;
extern unsigned int trs_srv_max_peer_conns;
extern unsigned int trs_srv_max_chunk_mem_mb;

/* trs-srv-sess.c */
int trs_srv_connect(struct trs_srv_ctx *ctx, struct rdma_cm_id *cm_id,
		    struct rdma_cm_event *ev);
void trs_srv_release_bytes(u64 bytes);
void trs_srv_release_conns(struct trs_srv_path *path);
unsigned int trs_srv_nr_conns(void);
void trs_srv_sess_put(struct trs_srv_sess *sess);
int trs_srv_sess_user_open(struct trs_srv_sess *sess);
void trs_srv_sess_unlink(struct trs_srv_path *path);
bool trs_srv_sess_host_ok(struct trs_srv_sess *sess, const char *host);
bool trs_srv_sess_authenticated(struct trs_srv_path *path, const char *host,
				const u8 *key_id);
void trs_srv_sess_replace(struct trs_srv_path *path);

/* trs-srv-path.c */
struct trs_srv_path *trs_srv_path_alloc(struct trs_srv_sess *sess,
					struct rdma_cm_id *cm_id,
					const struct trs_msg_conn_req *req,
					const struct trs_msg_conn_rsp *rsp,
					u64 bytes);
void trs_srv_path_free(struct trs_srv_path *path);
int trs_srv_path_dev_init(struct trs_srv_path *path);
void trs_srv_path_setup_done(struct trs_srv_path *path);
void trs_srv_path_start(struct trs_srv_path *path);
bool trs_srv_path_alive(struct trs_srv_path *path);
void trs_srv_path_fail(struct trs_srv_path *path, const char *why);
struct trs_srv_conn *trs_srv_conn_create(struct trs_srv_path *path,
					 struct rdma_cm_id *cm_id, u32 idx);
void trs_srv_conn_destroy(struct trs_srv_conn *conn);
void trs_srv_established(struct trs_srv_conn *conn);
void trs_srv_path_may_open(struct trs_srv_path *path);

/* trs-srv-auth.c */
int trs_srv_auth_admit(const struct sockaddr_storage *peer);
int trs_srv_auth_prepare(struct trs_srv_path *path, struct rdma_cm_id *cm_id);
void trs_srv_auth_stop(struct trs_srv_path *path);
void trs_srv_auth_free(struct trs_srv_path *path);
int trs_srv_auth_state(struct trs_srv_path *path);
bool trs_srv_auth_conn_ok(struct trs_srv_path *path, u16 idx, const u8 *key);

/* trs-srv-sysfs.c */
extern struct class trs_srv_class;
void trs_srv_sysfs_sess_add(struct trs_srv_sess *sess);
void trs_srv_sysfs_sess_del(struct trs_srv_sess *sess);
void trs_srv_sysfs_path_add(struct trs_srv_path *path);
void trs_srv_sysfs_path_del(struct trs_srv_path *path);

/* trs-srv-io.c */
void trs_srv_recv_done(struct ib_cq *cq, struct ib_wc *wc);
void trs_srv_rsp_done(struct ib_cq *cq, struct ib_wc *wc);
void trs_srv_flush_work(struct work_struct *work);
void trs_srv_table_done(struct ib_cq *cq, struct ib_wc *wc);
int trs_srv_send_chunks(struct trs_srv_path *path);

#endif /* TRS_SRV_H */
