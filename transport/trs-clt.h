/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * RNBD transport client: private definitions.
 *
 * Object model: a session (trs_clt_sess) lives from trs_clt_open() to
 * trs_clt_close(), nothing else frees it.  It holds what its user sees:
 * the name, the callbacks and the limits negotiated by its first connect,
 * which every reconnect and every new path must grant again.  Its paths
 * (trs_clt_path, an RCU list) each hold a server address and, while
 * connected, the RDMA resources: the PD, the connections (one per CPU)
 * with their CM ids, CQs and QPs, and one slot per server chunk with a
 * header buffer and MRs.  A path lives from trs_clt_open() or add_path
 * until remove_path or trs_clt_close().  trs_clt_path_setup() creates its
 * resources and trs_clt_path_teardown() releases them; the path's
 * recovery works run the pair again after an error.  A request goes to a
 * connected path chosen by the session's policy, in the slot of its tag:
 * tags are unique in the session, so slot i of every path is free when
 * the request of tag i fails over.  sysfs only points at the session and
 * its paths.
 */

/* The locks below: their order and rules in Documentation/locking.rst */
#ifndef TRS_CLT_H
#define TRS_CLT_H

#include <linux/kobject.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rculist.h>
#include <linux/spinlock.h>
#include <linux/uuid.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <rnbd/trs.h>
#include "trs-core.h"

/* Largest queue depth the client asks for; the device may lower it. */
#define TRS_CLT_MAX_QUEUE_DEPTH	512u
/* Send SGEs we use: a header plus up to 15 data segments without an MR. */
#define TRS_CLT_MAX_SEND_SGE	16u
/* Request header buffer: transport header and user header. */
#define TRS_CLT_HDR_LEN		(sizeof(struct trs_msg_req) + TRS_MAX_USR_HDR)
/*
 * Reads of at most this many bytes land in the slot's bounce buffer, whose
 * MR is registered once per path, and are copied out when the reply
 * arrives: no REG_MR and no LOCAL_INV, so the reply completes the read.
 */
#define TRS_CLT_BOUNCE_SIZE	SZ_4K
/*
 * A read or a request without data that needs no MR is answered by the
 * server's reply alone: its RDMA_WRITE_WITH_IMM is unsignaled, except
 * every TRS_CLT_SIGNAL_EVERY-th and every one while the send queue is
 * nearly full, whose completion retires the unsignaled WRs before it
 * (send queue order).  A write's is always signaled: its pages are the
 * block layer's, and only the completion says the HCA is done with them.
 */
#define TRS_CLT_SIGNAL_EVERY	16u
/*
 * Send queue entries a request with an MR takes: LOCAL_INV, REG_MR,
 * RDMA_WRITE_WITH_IMM and the LOCAL_INV posted after the reply.  The first
 * LOCAL_INV (of the MR's last key: the MR is already free) fences the
 * REG_MR, which then runs only once every WR before it completed.  Soft
 * RoCE (rdma_rxe up to at least 6.1) restarts a retransmission at the
 * oldest WR not completed and runs again every REG_MR it meets on the way;
 * a REG_MR of a valid MR fails, its QP dies without a completion and the
 * session hangs.  With the fence no REG_MR is ever behind a WR that may be
 * retransmitted.
 */
#define TRS_CLT_MR_WRS		4u

/*
 * Path states.  Every change goes through trs_clt_path_change_state():
 *
 *   CONNECTING -> CONNECTED -> RECONNECTING -> CONNECTING -> ...
 *   RECONNECTING -> DISCONNECTED -> RECONNECTING (sysfs disconnect,
 *	reconnect)
 *   any -> CLOSED (trs_clt_close(), remove_path, or no reconnect attempt
 *	left)
 */
enum trs_clt_path_state {
	TRS_CLT_PATH_CONNECTING,	/* trs_clt_path_setup() runs */
	TRS_CLT_PATH_CONNECTED,		/* requests flow */
	TRS_CLT_PATH_RECONNECTING,	/* lost: recovery works own it */
	TRS_CLT_PATH_DISCONNECTED,	/* down until sysfs reconnect */
	TRS_CLT_PATH_CLOSED,		/* no more connects */
};

/*
 * Session states: what the user was told.  Every change goes through
 * trs_clt_sess_change_state(), which reports it (ops.event):
 *
 *   NEW -> UP (the first path connected; trs_clt_open() returns)
 *   UP -> DOWN (RECONNECTING: no path connected, or the server made a
 *	new session) -> UP (RESUMED, or RECONNECTED for a new session)
 *   DOWN -> LOST (LOST: loss_timeout_sec passed) -> UP
 *   DOWN, LOST -> DEAD (DISCONNECTED: every path gave up) -> UP (a path
 *	added later connected)
 *   any -> CLOSING (trs_clt_close(), or trs_clt_open() failed; no event)
 */
enum trs_clt_sess_state {
	TRS_CLT_SESS_NEW,		/* opening: no key from the server yet */
	TRS_CLT_SESS_UP,		/* a path is connected */
	TRS_CLT_SESS_DOWN,		/* none is: the user holds its IO */
	TRS_CLT_SESS_LOST,		/* none was for loss_timeout_sec */
	TRS_CLT_SESS_DEAD,		/* every path gave up */
	TRS_CLT_SESS_CLOSING,		/* no path is added, no event sent */
};

/* Most paths of a session. */
#define TRS_CLT_MAX_PATHS		8u

/*
 * Multipath policies: the sysfs numbers are upstream RTRS's.
 * Round-robin turns through the connected paths; min-inflight takes the
 * path whose connection of the submitting CPU has the fewest requests in
 * flight; min-latency the one whose replies came fastest lately (and one
 * request in TRS_CLT_ML_PROBE goes round-robin, so that a path that was
 * slow is measured again).
 */
enum trs_clt_mp_policy {
	TRS_CLT_MP_RR		= 0,
	TRS_CLT_MP_MIN_INFLIGHT	= 1,
	TRS_CLT_MP_MIN_LATENCY	= 2,
};

#define TRS_CLT_ML_PROBE		32u

/* Defaults of the session's recovery tunables (sysfs). */
#define TRS_CLT_RECONNECT_DELAY_SEC	5
#define TRS_CLT_LOSS_TIMEOUT_SEC	600

/**
 * struct trs_clt_stats - per connection counters, shown in sysfs
 * @requests: requests posted
 * @reads: requests with data from the server posted
 * @writes: requests with data to the server posted
 * @bytes_read: data bytes requested from the server
 * @bytes_written: data bytes sent to the server
 * @wrs_posted: send and receive work requests posted
 * @write_ack_waits: writes whose reply came before their WRITE completed,
 *	so their pages were held until it did
 * @cpu_migr_from: replies to requests of this connection's CPU that
 *	completed on another CPU
 */
struct trs_clt_stats {
	u64	requests;
	u64	reads;
	u64	writes;
	u64	bytes_read;
	u64	bytes_written;
	u64	wrs_posted;
	u64	write_ack_waits;
	u64	cpu_migr_from;
};

/**
 * struct trs_clt_conn - one RC connection of a path
 * @path: owner
 * @idx: index in the path; serves CPU @idx
 * @cm_id: CM id; its QP is cm_id->qp
 * @cq: completion queue, polled in softirq
 * @recv_cqe: completion of the zero-length receives taking replies
 * @rsp: the server's accept private data
 * @cm_err: result of the last connect step
 * @cm_done: the last connect step finished
 * @established: the connection reached ESTABLISHED (so it must be drained)
 * @lock: guards @dead, @inflight, the send queue accounting below, @stats,
 *	the state of the slots whose request is on this connection, and every
 *	post to the QP
 * @dead: teardown started; nothing may be posted any more
 * @inflight: requests posted on this connection and not complete
 * @sq_free: send queue entries neither holding a WR that is not retired
 *	nor reserved for a LOCAL_INV still to post
 * @sq_posted: WRs posted, counted modulo 2^32
 * @sq_retired: @sq_posted as of the last signaled WR that completed
 * @unsignaled: request WRITEs posted unsignaled since the last signaled one
 * @lat_ns: moving average of the time to a reply, in ns, measured under
 *	the min-latency policy (written under @lock, read without)
 * @stats: counters
 *
 * @cm_err, @cm_done and @established are guarded by the path's
 * state_lock.
 */
struct trs_clt_conn {
	struct trs_clt_path	*path;
	u32			idx;
	struct rdma_cm_id	*cm_id;
	struct ib_cq		*cq;
	struct ib_cqe		recv_cqe;
	struct trs_msg_conn_rsp	rsp;
	int			cm_err;
	bool			cm_done;
	bool			established;
	spinlock_t		lock;	/* see above */
	bool			dead;
	u32			inflight;
	u32			sq_free;
	u32			sq_posted;
	u32			sq_retired;
	u32			unsignaled;
	u64			lat_ns;
	struct trs_clt_stats	stats;
};

/* slot->flags: progress of the request in flight */
#define TRS_SLOT_SENT		BIT(0)	/* WRITE_WITH_IMM done, or unsignaled */
#define TRS_SLOT_REPLIED	BIT(1)	/* the server's reply arrived */
#define TRS_SLOT_MR		BIT(2)	/* the slot's MR is registered */
#define TRS_SLOT_INV		BIT(3)	/* LOCAL_INV of the MR posted */

/**
 * struct trs_clt_slot - a server chunk and what the client needs to use it
 * @io: request in flight, NULL if none
 * @conn: connection @io was posted on; its lock guards the fields below
 * @flags: TRS_SLOT_*
 * @status: the server's status for @io
 * @raddr: remote address of the chunk
 * @hdr: header buffer (struct trs_msg_req + user header)
 * @hdr_dma: its DMA address
 * @mr: FRWR MR for data that cannot go in SGEs, and for reads larger than
 *	TRS_CLT_BOUNCE_SIZE
 * @bounce: TRS_CLT_BOUNCE_SIZE bytes the server writes smaller reads to
 * @bounce_dma: its DMA address
 * @bounce_mr: MR over @bounce, registered for remote write from the
 *	path's setup to its teardown
 * @reg_cqe: completion of the REG_MR WRs (unsignaled: errors only)
 * @send_cqe: completion of the RDMA_WRITE_WITH_IMM WR (when signaled)
 * @inv_cqe: completion of the LOCAL_INV WR
 * @send_seq: conn->sq_posted after the signaled WRITE of the request
 * @inv_seq: conn->sq_posted after its LOCAL_INV
 * @tag: slot field of the immediate of the request last posted on the
 *	slot: its index and, with TRS_CAP_SLOT_GEN, its generation
 * @rkey: remote key of the chunk
 * @t0: ktime of the post, taken under the min-latency policy only (0
 *	otherwise)
 *
 * 128 bytes on 64-bit: a power of two, so finding a slot is a shift.
 */
struct trs_clt_slot {
	struct trs_clt_io	*io;
	struct trs_clt_conn	*conn;
	unsigned int		flags;
	int			status;
	u64			raddr;
	void			*hdr;
	u64			hdr_dma;
	struct ib_mr		*mr;
	void			*bounce;
	u64			bounce_dma;
	struct ib_mr		*bounce_mr;
	struct ib_cqe		reg_cqe;
	struct ib_cqe		send_cqe;
	struct ib_cqe		inv_cqe;
	u32			send_seq;
	u32			inv_seq;
	u32			tag;
	u32			rkey;
	u64			t0;
};

struct trs_clt_auth;
struct trs_clt_kobj;

/**
 * struct trs_clt_path - the connections of a session to one server address
 * @sess: owner
 * @entry: in sess->paths (RCU)
 * @id: the path's id in the session, sent in its connect requests
 * @key: the session key of the last accept of the path's connection 0
 * @admin_down: sysfs disconnect: no reconnect until sysfs reconnect
 * @reconnect_now: the next reconnect attempt runs without delay
 * @dst: server address and port
 * @src: local address the route resolved to
 * @src_req: local address asked for, zeroed if none: every address
 *	resolution binds it
 * @state_lock: guards @state, @setup_err, @table_err, @table_done,
 *	@bounce_err, @bounce_done, the connections' connect step results,
 *	and @src once the path is in sysfs
 * @state: enum trs_clt_path_state
 * @setup_err: first error of the running trs_clt_path_setup()
 * @setup_wq: trs_clt_path_setup() waits here for connect steps
 * @setup_step: what the running or last setup waited for last, for logs
 * @setup_conn: on which connection; both written by the setup only
 * @attempts: failed reconnect attempts in a row; recovery works only
 * @reconnects: reconnects that succeeded; written by the recovery works
 *	and by a reset in sysfs (statistics: WRITE_ONCE, no lock)
 * @reconnect_fails: reconnect attempts that failed; the same
 * @failovers: requests the path handed back when it went down, for
 *	another path or a reconnect; written by its teardown
 * @cpu_migr_to: per CPU: replies that completed on this CPU for a
 *	request of another CPU
 * @up: the RDMA resources exist: trs_clt_path_setup() succeeded and
 *	trs_clt_path_teardown() did not run since.  Written by whoever owns
 *	the path: trs_clt_open(), then one recovery work at a time, then
 *	trs_clt_close() once the works are cancelled.
 * @err_work: recovery, step 1: tears the path down after an error
 * @reconnect_work: recovery, step 2: sets the path up again
 * @hb: heartbeat: sends ours and checks the server's
 * @notice_on: its heartbeats may carry TRS_HB_NOTICE (TRS_CAP_NOTICE)
 * @slot_gen: the server echoes a generation in its replies' slot field
 *	(TRS_CAP_SLOT_GEN)
 * @tag_idx_mask: the bits of a reply's slot field that are the slot index
 * @auth: the exchange of TRS_CAP_AUTH of the running or last setup
 *	attempt, until its teardown; NULL without it
 * @nr_conns: connections
 * @conns: the connections
 * @ibdev: RDMA device of the path (all connections)
 * @pd: protection domain
 * @hca_name: name of @ibdev, kept for sysfs
 * @hca_port: port of @ibdev, kept for sysfs
 * @max_send_sge: send SGEs per WR
 * @max_mr_pages: most pages an MR of @ibdev maps (capped)
 * @max_qd: queue depth asked for
 * @queue_depth: queue depth granted; the session's after the first connect
 * @chunk_size: size of a server chunk
 * @max_io_size: data bytes per request
 * @max_segments: data segments per request
 * @slots: one per server chunk
 * @table: receive buffer of the chunk table
 * @table_dma: its DMA address
 * @table_size: its size
 * @table_len: bytes received
 * @table_err: receive status of the chunk table
 * @table_done: the chunk table receive completed
 * @table_cqe: its completion
 * @bounce_err: status of the bounce MRs' registration
 * @bounce_done: the bounce MRs' registration completed
 * @bounce_cqe: completion of its last REG_MR
 * @kobj: sysfs paths/<src@dst> directory
 * @stats_kobj: sysfs "stats" directory
 * @conns_kobj: sysfs "conns" directory
 * @conn_kobjs: sysfs conns/<i> directories
 */
struct trs_clt_path {
	struct trs_clt_sess	*sess;
	struct list_head	entry;
	u16			id;
	u8			key[TRS_SESS_KEY_LEN];
	bool			admin_down;
	bool			reconnect_now;
	struct sockaddr_storage	dst;
	struct sockaddr_storage	src;
	struct sockaddr_storage	src_req;

	spinlock_t		state_lock;	/* see above */
	enum trs_clt_path_state	state;
	int			setup_err;
	wait_queue_head_t	setup_wq;
	const char		*setup_step;
	u32			setup_conn;
	u32			attempts;
	u32			reconnects;
	u32			reconnect_fails;
	u32			failovers;
	u32 __percpu		*cpu_migr_to;
	bool			up;
	struct work_struct	err_work;
	struct delayed_work	reconnect_work;
	struct trs_hb		hb;
	bool			notice_on;
	bool			slot_gen;
	u32			tag_idx_mask;
	struct trs_clt_auth	*auth;

	u32			nr_conns;
	struct trs_clt_conn	*conns;

	struct ib_device	*ibdev;
	struct ib_pd		*pd;
	char			hca_name[IB_DEVICE_NAME_MAX];
	u32			hca_port;
	u32			max_send_sge;
	u32			max_mr_pages;
	u32			max_qd;

	u32			queue_depth;
	u32			chunk_size;
	u32			max_io_size;
	u32			max_segments;
	struct trs_clt_slot	*slots;

	void			*table;
	u64			table_dma;
	size_t			table_size;
	u32			table_len;
	int			table_err;
	bool			table_done;
	struct ib_cqe		table_cqe;
	int			bounce_err;
	bool			bounce_done;
	struct ib_cqe		bounce_cqe;

	struct trs_clt_kobj	*kobj;
	struct trs_clt_kobj	*stats_kobj;
	struct kobject		*conns_kobj;
	struct trs_clt_kobj	**conn_kobjs;
};

/**
 * struct trs_clt_sess - a client session
 * @name: session name, also its sysfs directory
 * @hostname: the host name its paths send (TRS_CAP_AUTH)
 * @ops: user callbacks
 * @uuid: identifies the session to the server, the same on every connect:
 *	a path that connects again replaces what the server still holds of it
 * @key_lock: guards @sess_key
 * @sess_key: key of the server's session, which a path's connect shows
 *	to join it; written when a path goes connected (zero while NEW)
 * @entry: in trs_clt_sessions, guarded by trs_clt_mutex
 * @paths_mutex: serialises adding and removing paths and closing, and
 *	guards @nr_paths and @next_id; the list is read under RCU
 * @paths: the paths (struct trs_clt_path), RCU list
 * @nr_paths: paths on @paths
 * @next_id: id of the next path added
 * @multipath: the server does multipath (TRS_CAP_MULTIPATH in the first
 *	accept): add_path may add paths
 * @mp_policy: enum trs_clt_mp_policy; sysfs
 * @rr_seq: per CPU counter of round-robin choices
 * @nr_conns: connections per path
 * @event_mutex: serialises calls of @ops.event and the state checks that
 *	decide them, and guards @state
 * @state: enum trs_clt_sess_state; written under @event_mutex, and to
 *	CLOSING under @paths_mutex as well, so that either lock tells
 *	whether the session is closing
 * @loss_work: reports the loss timeout
 * @notice_work: reports a server's notice (TRS_CLT_EV_NOTICE)
 * @reconnect_delay_sec: delay before a reconnect attempt (plus up to a
 *	second of jitter); sysfs
 * @max_reconnect_attempts: failed attempts in a row before the session
 *	gives up, -1 for never; sysfs
 * @loss_timeout_sec: time after losing the path until EV_LOST; sysfs
 * @queue_depth: negotiated queue depth, frozen by the first connect
 * @chunk_size: size of a server chunk, frozen likewise
 * @max_io_size: data bytes per request, frozen likewise
 * @max_segments: data segments per request, frozen likewise
 * @dev: sysfs device
 * @paths_kobj: sysfs "paths" directory
 *
 * The tunables are read locklessly by the recovery works and written by
 * sysfs.
 */
struct trs_clt_sess {
	char			*name;
	char			hostname[TRS_HOSTNAME_LEN];
	struct trs_clt_ops	ops;
	uuid_t			uuid;
	spinlock_t		key_lock;	/* see above */
	u8			sess_key[TRS_SESS_KEY_LEN];
	struct list_head	entry;

	struct mutex		paths_mutex;	/* see above */
	struct list_head	paths;
	u32			nr_paths;
	u16			next_id;
	bool			multipath;
	int			mp_policy;
	u32 __percpu		*rr_seq;
	u32			nr_conns;

	struct mutex		event_mutex;	/* see above */
	enum trs_clt_sess_state	state;
	struct delayed_work	loss_work;
	struct work_struct	notice_work;
	u32			reconnect_delay_sec;
	int			max_reconnect_attempts;
	u32			loss_timeout_sec;

	u32			queue_depth;
	u32			chunk_size;
	u32			max_io_size;
	u32			max_segments;

	struct device		*dev;
	struct kobject		*paths_kobj;
};

/* trs-clt.c */
extern struct workqueue_struct *trs_clt_wq;
bool trs_clt_sess_any(struct trs_clt_sess *sess,
		      enum trs_clt_path_state state);

/* trs-clt-path.c */
void trs_clt_fail(struct trs_clt_path *path, int err);
void trs_clt_wc_fail(struct trs_clt_path *path, const struct ib_wc *wc,
		     int err);
enum trs_clt_path_state trs_clt_path_state(struct trs_clt_path *path);
const char *trs_clt_path_state_name(enum trs_clt_path_state state);
bool __trs_clt_path_change_state(struct trs_clt_path *path,
				 enum trs_clt_path_state new);
bool trs_clt_path_change_state(struct trs_clt_path *path,
			       enum trs_clt_path_state new);
struct trs_clt_path *trs_clt_path_alloc(struct trs_clt_sess *sess,
					const struct trs_clt_path_addr *addr);
void trs_clt_path_free(struct trs_clt_path *path);
bool trs_clt_path_matches(struct trs_clt_path *path,
			  const struct trs_clt_path_addr *addr);
int trs_clt_path_add(struct trs_clt_sess *sess,
		     const struct trs_clt_path_addr *addr);
void trs_clt_path_close(struct trs_clt_path *path);
int trs_clt_remove_path(struct trs_clt_path *path,
			struct kobject *kobj, struct kobj_attribute *attr);
int trs_clt_path_disconnect(struct trs_clt_path *path);
int trs_clt_path_reconnect(struct trs_clt_path *path);

/* trs-clt-recovery.c */
bool trs_clt_sess_change_state(struct trs_clt_sess *sess,
			       enum trs_clt_sess_state new, bool fresh);
bool trs_clt_sess_closing(struct trs_clt_sess *sess);
bool trs_clt_path_go_live(struct trs_clt_path *path);
bool trs_clt_path_park(struct trs_clt_path *path);
void trs_clt_hb_init(struct trs_clt_path *path);
void trs_clt_sess_check_down(struct trs_clt_sess *sess,
			     struct trs_clt_path *path);
void trs_clt_err_work(struct work_struct *work);
void trs_clt_reconnect_work(struct work_struct *work);
void trs_clt_loss_work(struct work_struct *work);
void trs_clt_notice_work(struct work_struct *work);

/* trs-clt-auth.c */
int trs_clt_auth_start(struct trs_clt_path *path);
int trs_clt_auth_finish(struct trs_clt_path *path);
int trs_clt_auth_conn_key(struct trs_clt_path *path, u16 idx, u8 *key);
void trs_clt_auth_free(struct trs_clt_path *path);
int trs_clt_hostname(const char *name, char *out);

/* trs-clt-conn.c */
int trs_clt_path_setup(struct trs_clt_path *path);
void trs_clt_path_teardown(struct trs_clt_path *path);

/* trs-clt-io.c */
void trs_clt_slot_cqes_init(struct trs_clt_slot *slot);
void trs_clt_fail_inflight(struct trs_clt_path *path);
void trs_clt_recv_done(struct ib_cq *cq, struct ib_wc *wc);

/* trs-clt-slots.c */
int trs_clt_slots_init(struct trs_clt_path *path);
void trs_clt_slots_free(struct trs_clt_path *path);
int trs_clt_slots_register(struct trs_clt_path *path);

/* trs-clt-mpath.c */
struct trs_clt_path *trs_clt_pick_path(struct trs_clt_sess *sess,
				       unsigned int conn);

/* trs-clt-sysfs.c */
extern struct class trs_clt_class;
int trs_clt_sysfs_add(struct trs_clt_sess *sess);
void trs_clt_sysfs_del(struct trs_clt_sess *sess);
int trs_clt_path_sysfs_add(struct trs_clt_path *path);
void trs_clt_path_sysfs_del(struct trs_clt_path *path);

#endif /* TRS_CLT_H */
