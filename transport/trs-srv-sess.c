// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport server: sessions and the connect handshake.
 *
 * A session is what the user sees: the paths a client connected with one
 * session uuid and key.  The connect request of a path's connection 0
 * creates the session if the uuid is new, or joins it when it shows the
 * session's key; the other connections of a path attach to the path.  A
 * client that offers TRS_CAP_MULTIPATH may connect several paths, and a
 * path that connects again replaces its old self while the session, and
 * what the user opened in it, stays.  Without the capability a connect of
 * a held session closes it, and the client retries once it is gone.
 * The first path to open opens the session for the user; the last path
 * to go closes it.  Sessions, sessions per client address, connections,
 * connections per client address and the chunk memory of all paths are
 * capped by module parameters.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/algapi.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include <rdma/ib_cm.h>
#include "trs-srv.h"

/* Paths of a session, the closing ones not counted. */
#define TRS_SRV_MAX_PATHS	8u
/* paths of one id a connection 1..N may belong to: the newest are tried */
#define TRS_SRV_ATTACH_CANDS	4u

/*
 * What the sessions and paths hold, from their admission (under
 * trs_srv_mutex) until they are freed: atomic, since the frees run from
 * works without the mutex.
 */
static atomic_t trs_srv_nr_sess = ATOMIC_INIT(0);
static atomic64_t trs_srv_chunk_bytes = ATOMIC64_INIT(0);

/*
 * The connections of the paths, counted for max_conns and
 * max_conns_per_peer: a path counts the conn_cnt its connection 0
 * announces, from the admission of that connect (under trs_srv_mutex)
 * until its close work destroyed its connections, which runs without the
 * mutex.  Per peer, the paths on the list are summed: at most one entry
 * per path held.
 */
static DEFINE_SPINLOCK(trs_srv_conn_lock);	/* guards the two below */
static LIST_HEAD(trs_srv_conn_paths);
static unsigned int trs_srv_conns;

/**
 * trs_srv_sess_name() - printable name of a session
 * @sess: session passed to a callback
 *
 * Return: "<client address>-<8 hex digits of the session uuid>", the
 * client address of its first path; also its directory under
 * /sys/class/rtrs-server.
 */
const char *trs_srv_sess_name(struct trs_srv_sess *sess)
{
	return sess->name;
}
EXPORT_SYMBOL_GPL(trs_srv_sess_name);

/**
 * trs_srv_sess_close() - close a session and all its paths
 * @sess: session passed to a callback, not closed yet (sess_close() not
 *	returned)
 * @why: reason, logged
 *
 * Disconnects every path as an error would; sess_close() follows once the
 * last is down.  No path joins the session any more.  Any context.
 */
void trs_srv_sess_close(struct trs_srv_sess *sess, const char *why)
{
	struct trs_srv_path *path;
	unsigned long flags;

	spin_lock_irqsave(&sess->lock, flags);
	sess->closing = true;
	list_for_each_entry(path, &sess->paths, sess_entry)
		trs_srv_path_fail(path, why);
	spin_unlock_irqrestore(&sess->lock, flags);
}
EXPORT_SYMBOL_GPL(trs_srv_sess_close);

/**
 * trs_srv_sess_notify() - tell the client's user there is news
 * @sess: session passed to a callback, not closed
 *
 * The next heartbeat of each of the session's open paths that negotiated
 * TRS_CAP_NOTICE carries TRS_HB_NOTICE (within TRS_HB_INTERVAL_MS).
 * Notices are not queued: several before a heartbeat are one.  Any context.
 *
 * Return: true if a path will carry it; false if none can (no path does
 * heartbeats with notices), and the client will not hear of it.
 */
bool trs_srv_sess_notify(struct trs_srv_sess *sess)
{
	struct trs_srv_path *path;
	unsigned long flags;
	bool sent = false;

	spin_lock_irqsave(&sess->lock, flags);
	list_for_each_entry(path, &sess->paths, sess_entry) {
		if (path->hb.on && path->rsp.caps & cpu_to_le32(TRS_CAP_NOTICE) &&
		    READ_ONCE(path->state) == TRS_SRV_OPEN) {
			WRITE_ONCE(path->notice, 1);
			sent = true;
		}
	}
	spin_unlock_irqrestore(&sess->lock, flags);
	return sent;
}
EXPORT_SYMBOL_GPL(trs_srv_sess_notify);

/*
 * Can a new session from the client address @peer be held?  Counts it if
 * so.  trs_srv_mutex held; trs_srv_sess_free() undoes.
 */
static int trs_srv_admit_sess(const struct sockaddr_storage *peer)
{
	unsigned int max_sess = READ_ONCE(trs_srv_max_sessions);
	unsigned int max_peer = READ_ONCE(trs_srv_max_peer_sessions);
	struct trs_srv_sess *sess;
	char addr[TRS_ADDR_LEN];
	unsigned int nr = 0;

	lockdep_assert_held(&trs_srv_mutex);
	trs_addr_print((const struct sockaddr *)peer, addr, sizeof(addr));
	if (max_sess && atomic_read(&trs_srv_nr_sess) >= max_sess) {
		pr_info_ratelimited("session from %s refused: the server holds max_sessions (%u) sessions\n",
				    addr, max_sess);
		return -EUSERS;
	}
	list_for_each_entry(sess, &trs_srv_sessions, entry)
		if (trs_addr_eq(&sess->peer, peer, false))
			nr++;
	if (max_peer && nr >= max_peer) {
		pr_info_ratelimited("session from %s refused: it holds max_sessions_per_peer (%u) sessions\n",
				    addr, max_peer);
		return -EUSERS;
	}
	atomic_inc(&trs_srv_nr_sess);
	return 0;
}

/*
 * Can a new path with @bytes of chunk memory be held?  Counts them if so.
 * trs_srv_mutex held; trs_srv_release_bytes() undoes.
 */
static int trs_srv_admit_bytes(const struct sockaddr_storage *peer, u64 bytes)
{
	u64 limit = (u64)READ_ONCE(trs_srv_max_chunk_mem_mb) << 20;

	lockdep_assert_held(&trs_srv_mutex);
	if (!limit)
		limit = (u64)totalram_pages() << PAGE_SHIFT >> 1;
	if (atomic64_read(&trs_srv_chunk_bytes) + bytes > limit) {
		pr_info_ratelimited("path from %pISc refused: its %llu KiB of chunks would pass max_chunk_mem_mb (%llu MiB)\n",
				    peer, bytes >> 10, limit >> 20);
		return -ENOSPC;
	}
	atomic64_add(bytes, &trs_srv_chunk_bytes);
	return 0;
}

/*
 * Can the connections of the new path @path, from the client address
 * @peer, be held?  Counts them if so, until trs_srv_release_conns().
 * trs_srv_mutex held.
 */
static int trs_srv_admit_conns(struct trs_srv_path *path,
			       const struct sockaddr_storage *peer)
{
	unsigned int max_total = READ_ONCE(trs_srv_max_total_conns);
	unsigned int max_peer = READ_ONCE(trs_srv_max_peer_conns);
	unsigned int cnt = path->conn_cnt, nr = 0;
	struct trs_srv_path *held;
	char addr[TRS_ADDR_LEN];
	int err = 0;

	lockdep_assert_held(&trs_srv_mutex);
	path->peer = *peer;
	spin_lock(&trs_srv_conn_lock);
	list_for_each_entry(held, &trs_srv_conn_paths, conn_entry)
		if (trs_addr_eq(&held->peer, peer, false))
			nr += held->conn_cnt;
	if (max_peer && nr + cnt > max_peer) {
		err = -EMFILE;
	} else if (max_total && trs_srv_conns + cnt > max_total) {
		err = -ENFILE;
		nr = trs_srv_conns;
	} else {
		list_add_tail(&path->conn_entry, &trs_srv_conn_paths);
		trs_srv_conns += cnt;
	}
	spin_unlock(&trs_srv_conn_lock);
	if (!err)
		return 0;
	trs_addr_print((const struct sockaddr *)peer, addr, sizeof(addr));
	if (err == -EMFILE)
		pr_info_ratelimited("path from %s refused: its %u connections would pass max_conns_per_peer (%u), it holds %u\n",
				    addr, cnt, max_peer, nr);
	else
		pr_info_ratelimited("path from %s refused: its %u connections would pass max_conns (%u), the server holds %u\n",
				    addr, cnt, max_total, nr);
	return err;
}

/**
 * trs_srv_release_conns() - undo the admission of a path's connections
 * @path: the path; its connections are destroyed, or were never made
 *
 * Once per path: later calls do nothing.  Process context.
 */
void trs_srv_release_conns(struct trs_srv_path *path)
{
	spin_lock(&trs_srv_conn_lock);
	if (!list_empty(&path->conn_entry)) {
		list_del_init(&path->conn_entry);
		trs_srv_conns -= path->conn_cnt;
	}
	spin_unlock(&trs_srv_conn_lock);
}

/**
 * trs_srv_nr_conns() - connections counted against max_conns
 *
 * Return: the sum of the connection counts of the paths held.
 */
unsigned int trs_srv_nr_conns(void)
{
	unsigned int nr;

	spin_lock(&trs_srv_conn_lock);
	nr = trs_srv_conns;
	spin_unlock(&trs_srv_conn_lock);
	return nr;
}

/**
 * trs_srv_release_bytes() - undo the admission of a path's chunk memory
 * @bytes: what it was admitted with
 *
 * Any context.
 */
void trs_srv_release_bytes(u64 bytes)
{
	atomic64_sub(bytes, &trs_srv_chunk_bytes);
}

static void trs_srv_sess_free(struct kref *ref)
{
	struct trs_srv_sess *sess = container_of(ref, struct trs_srv_sess,
						 ref);
	struct trs_srv_ctx *ctx = sess->ctx;

	mutex_destroy(&sess->open_mutex);
	kfree(sess);
	atomic_dec(&trs_srv_nr_sess);
	if (atomic_dec_and_test(&ctx->nr_sess))
		wake_up_var(&ctx->nr_sess);
}

/**
 * trs_srv_sess_put() - drop a reference on a session
 * @sess: the session; the last reference frees it
 */
void trs_srv_sess_put(struct trs_srv_sess *sess)
{
	kref_put(&sess->ref, trs_srv_sess_free);
}

static struct trs_srv_sess *trs_srv_find(const u8 *uuid)
{
	struct trs_srv_sess *sess;

	lockdep_assert_held(&trs_srv_mutex);
	list_for_each_entry(sess, &trs_srv_sessions, entry)
		if (!memcmp(&sess->uuid, uuid, sizeof(sess->uuid)))
			return sess;
	return NULL;
}

/* A new session on the session list; trs_srv_mutex held. */
static struct trs_srv_sess *
trs_srv_sess_create(struct trs_srv_ctx *ctx, struct rdma_cm_id *cm_id,
		    const struct trs_msg_conn_req *req,
		    const struct sockaddr_storage *peer)
{
	struct trs_srv_sess *sess;
	char addr[TRS_ADDR_LEN];
	int err;

	lockdep_assert_held(&trs_srv_mutex);
	err = trs_srv_admit_sess(peer);
	if (err)
		return ERR_PTR(err);
	sess = TRS_FI(kzalloc(sizeof(*sess), GFP_KERNEL), NULL);
	if (!sess) {
		atomic_dec(&trs_srv_nr_sess);
		return ERR_PTR(-ENOMEM);
	}
	sess->ctx = ctx;
	atomic_inc(&ctx->nr_sess);
	memcpy(&sess->uuid, req->sess_uuid, sizeof(sess->uuid));
	get_random_bytes(sess->key, sizeof(sess->key));
	trs_addr_print((struct sockaddr *)&cm_id->route.addr.dst_addr, addr,
		       sizeof(addr));
	snprintf(sess->name, sizeof(sess->name), "%s-%4phN", addr,
		 sess->uuid.b);
	sess->peer = *peer;
	sess->multipath = req->caps & cpu_to_le32(TRS_CAP_MULTIPATH);
	sess->auth = req->caps & cpu_to_le32(TRS_CAP_AUTH);
	kref_init(&sess->ref);
	spin_lock_init(&sess->lock);
	INIT_LIST_HEAD(&sess->paths);
	mutex_init(&sess->open_mutex);
	list_add_tail(&sess->entry, &trs_srv_sessions);
	return sess;
}

/**
 * trs_srv_sess_user_open() - open the session for the user, once
 * @sess: session of a path whose connections are all established
 *
 * Return: 0 if the user has the session open, or the user's refusal.
 */
int trs_srv_sess_user_open(struct trs_srv_sess *sess)
{
	void *priv = NULL;
	int err = 0;

	mutex_lock(&sess->open_mutex);
	if (!sess->user_open) {
		err = sess->ctx->ops->sess_open(sess, &priv);
		if (!err) {
			sess->priv = priv;
			sess->user_open = true;
			trs_srv_sysfs_sess_add(sess);
		}
	}
	mutex_unlock(&sess->open_mutex);
	return err;
}

/**
 * trs_srv_sess_unlink() - a drained path leaves its session
 * @path: the path, from its close work
 *
 * The last path closes the session: no path joins it any more, the user
 * gets sess_close(), and the session leaves the session list, where it
 * kept a client that connects again waiting (-EAGAIN) until then.
 */
void trs_srv_sess_unlink(struct trs_srv_path *path)
{
	struct trs_srv_sess *sess = path->sess;
	bool last;

	trs_srv_sysfs_path_del(path);
	spin_lock_irq(&sess->lock);
	list_del_init(&path->sess_entry);
	sess->nr_paths--;
	last = !sess->nr_paths;
	if (last)
		sess->closing = true;
	spin_unlock_irq(&sess->lock);
	if (!last)
		return;

	trs_srv_sysfs_sess_del(sess);
	if (sess->user_open)
		sess->ctx->ops->sess_close(sess, sess->priv);
	mutex_lock(&trs_srv_mutex);
	list_del_init(&sess->entry);
	mutex_unlock(&trs_srv_mutex);
	trs_srv_sess_put(sess);
}

static int trs_srv_check_req(const struct trs_msg_conn_req *req, u8 len)
{
	unsigned int max_conns;
	u16 cnt, idx;

	if (!req || len < sizeof(*req) || le16_to_cpu(req->magic) != TRS_MAGIC)
		return -EINVAL;
	if (req->ver_major != TRS_PROTO_VER_MAJOR)
		return -EPROTONOSUPPORT;
	cnt = le16_to_cpu(req->conn_cnt);
	idx = le16_to_cpu(req->conn_idx);
	max_conns = READ_ONCE(trs_srv_max_conns);
	if (!max_conns || max_conns > TRS_MAX_CONNS)
		max_conns = TRS_MAX_CONNS;
	if (!cnt || cnt > max_conns || idx >= cnt || !req->max_queue_depth)
		return -EINVAL;
	/* a path id comes with the capability that gives it a meaning */
	if (req->path_id && !(req->caps & cpu_to_le32(TRS_CAP_MULTIPATH)))
		return -EINVAL;
	return 0;
}

static void trs_srv_reject(struct rdma_cm_id *cm_id, int err)
{
	struct trs_msg_conn_rsp rsp = {
		.magic		= cpu_to_le16(TRS_MAGIC),
		.ver_major	= TRS_PROTO_VER_MAJOR,
		.ver_minor	= TRS_PROTO_VER_MINOR,
		.status		= cpu_to_le16(-err),
	};
	char addr[TRS_ADDR_LEN];

	trs_addr_print((struct sockaddr *)&cm_id->route.addr.dst_addr, addr,
		       sizeof(addr));
	pr_info_ratelimited("rejecting a connection from %s: %pe\n", addr,
			    ERR_PTR(err));
	rdma_reject(cm_id, &rsp, sizeof(rsp), IB_CM_REJ_CONSUMER_DEFINED);
}

/*
 * May a path of @req join @sess?  0 or a negative errno.  trs_srv_mutex
 * held.  What it saw may change once sess->lock is dropped (a path's close
 * work unlinks it, and the last one closes the session, without
 * trs_srv_mutex): trs_srv_sess_link() looks again.
 */
static int
trs_srv_sess_may_join(struct trs_srv_ctx *ctx, struct trs_srv_sess *sess,
		      const struct trs_msg_conn_req *req)
{
	struct trs_srv_path *path;
	u16 id = le16_to_cpu(req->path_id);
	u32 live = 0;
	int err = 0;

	/* not the client of that session: it does not know its key */
	if (sess->ctx != ctx ||
	    crypto_memneq(req->sess_key, sess->key, TRS_SESS_KEY_LEN))
		return -EEXIST;
	/*
	 * The session key goes in clear: a session that authenticates its
	 * paths lets none in without the exchange, and none cut it short.
	 */
	if (sess->auth && !(req->caps & cpu_to_le32(TRS_CAP_AUTH)))
		return -EKEYREJECTED;
	if (sess->auth && !(req->caps & cpu_to_le32(TRS_CAP_MULTIPATH)))
		return -EEXIST;
	if (!sess->multipath || !(req->caps & cpu_to_le32(TRS_CAP_MULTIPATH))) {
		/*
		 * A client without multipath reconnects a session we still
		 * hold, say after a link flap we did not see: that one is
		 * dead.  Close it (with its device opens) and let the client
		 * retry once it is gone.
		 */
		trs_srv_sess_close(sess, "the client reconnected");
		return -EAGAIN;
	}
	spin_lock_irq(&sess->lock);
	list_for_each_entry(path, &sess->paths, sess_entry) {
		if (READ_ONCE(path->state) != TRS_SRV_CLOSING &&
		    path->path_id != id)
			live++;
	}
	/* the user is closing it: the client retries when it is gone */
	if (sess->closing)
		err = -EAGAIN;
	else if (live >= TRS_SRV_MAX_PATHS)
		err = -EUSERS;
	spin_unlock_irq(&sess->lock);
	return err;
}

/**
 * trs_srv_sess_replace() - a path takes the place of its client's older
 *	ones of the same id (reconnects of it we did not see fail)
 * @path: the new path; its session's lock held
 */
void trs_srv_sess_replace(struct trs_srv_path *path)
{
	struct trs_srv_path *old;

	lockdep_assert_held(&path->sess->lock);
	list_for_each_entry(old, &path->sess->paths, sess_entry)
		if (old != path && old->path_id == path->path_id)
			trs_srv_path_fail(old, "replaced by a new connect of its client");
}

/*
 * Link @path into its session, unless the session closed since
 * trs_srv_sess_may_join(): its last path went, and a path linked now would
 * close it a second time.  0 or -EAGAIN (the client retries).  It replaces
 * its older selves at once, or, in a session that proved a host key, only
 * once it proved it too (trs-srv-auth.c): who knows the session key, sent
 * in clear, may not cut a path of it.
 */
static int trs_srv_sess_link(struct trs_srv_path *path)
{
	struct trs_srv_sess *sess = path->sess;

	spin_lock_irq(&sess->lock);
	if (sess->closing) {
		spin_unlock_irq(&sess->lock);
		return -EAGAIN;
	}
	if (trs_is_zero(sess->key_id, sizeof(sess->key_id)))
		trs_srv_sess_replace(path);
	list_add_tail(&path->sess_entry, &sess->paths);
	sess->nr_paths++;
	spin_unlock_irq(&sess->lock);
	return 0;
}

/*
 * Connection 0 of a path: find or create its session, admit and allocate
 * the path and link it.  Its chunks are allocated without trs_srv_mutex,
 * so that closing paths do not wait for it; a failure there fails the
 * path, whose close work undoes the rest.  Linked, the path may be failed
 * by anyone at any time, but its close work waits until the caller calls
 * trs_srv_path_setup_done(): until then the returned path is the caller's.
 */
static struct trs_srv_path *
trs_srv_path_join(struct trs_srv_ctx *ctx, struct rdma_cm_id *cm_id,
		  const struct trs_msg_conn_req *req)
{
	struct ib_device *dev = cm_id->device;
	const struct ib_device_attr *attr = &dev->attrs;
	u32 chunk_size = TRS_HDR_AREA + trs_srv_max_io_size;
	struct trs_srv_path *path = NULL;
	struct trs_msg_conn_rsp rsp;
	struct sockaddr_storage peer;
	struct trs_srv_sess *sess;
	bool created = false;
	u64 bytes;
	u32 qd;
	int err;

	err = trs_dev_check(cm_id, chunk_size / TRS_MR_PAGE);
	if (err)
		return ERR_PTR(err);
	/* QP and CQ of connection 0: see trs_srv_conn_create() */
	qd = min3(trs_srv_queue_depth, (u32)le16_to_cpu(req->max_queue_depth),
		  (u32)max(attr->max_qp_wr - 3, 0) / 2);
	qd = min(qd, (u32)max(attr->max_cqe - 4 - (int)TRS_HB_RECVS, 0) / 3);
	if (!qd)
		return ERR_PTR(-EOPNOTSUPP);
	bytes = (u64)qd * chunk_size;
	/* a peer is the client's address; its port is not compared */
	peer = cm_id->route.addr.dst_addr;
	if (peer.ss_family != AF_INET && peer.ss_family != AF_INET6)
		return ERR_PTR(-EAFNOSUPPORT);
	/* an address whose exchanges failed waits a while */
	err = trs_srv_auth_admit(&peer);
	if (err)
		return ERR_PTR(err);

	mutex_lock(&trs_srv_mutex);
	sess = trs_srv_find(req->sess_uuid);
	if (sess) {
		err = trs_srv_sess_may_join(ctx, sess, req);
		if (err)
			goto unlock;
	} else {
		sess = trs_srv_sess_create(ctx, cm_id, req, &peer);
		if (IS_ERR(sess)) {
			err = PTR_ERR(sess);
			goto unlock;
		}
		created = true;
	}
	err = trs_srv_admit_bytes(&peer, bytes);
	if (err)
		goto drop_sess;

	rsp = (struct trs_msg_conn_rsp) {
		.magic		= cpu_to_le16(TRS_MAGIC),
		.ver_major	= TRS_PROTO_VER_MAJOR,
		.ver_minor	= TRS_PROTO_VER_MINOR,
		.caps		= req->caps & cpu_to_le32(TRS_CAPS_KNOWN),
		.queue_depth	= cpu_to_le16(qd),
		.max_segments	= cpu_to_le16(TRS_MR_PAGES(trs_srv_max_io_size)),
		.max_io_size	= cpu_to_le32(trs_srv_max_io_size),
	};
	memcpy(rsp.sess_key, sess->key, sizeof(rsp.sess_key));
	path = trs_srv_path_alloc(sess, cm_id, req, &rsp, bytes);
	if (!path) {
		err = -ENOMEM;
		goto release_bytes;
	}
	err = trs_srv_admit_conns(path, &peer) ?: trs_srv_sess_link(path);
	if (err)
		goto free_path;
	mutex_unlock(&trs_srv_mutex);

	/*
	 * Tests widen the window in which the path is linked and not set up
	 * yet, while its session may be closed or the path replaced.
	 */
	TRS_FI_DELAY();
	err = trs_srv_path_dev_init(path);
	if (err) {
		trs_srv_path_fail(path, "no resources for its chunks");
		trs_srv_path_setup_done(path);
		return ERR_PTR(err);
	}
	return path;

free_path:
	/* it releases the bytes, the connections and its session reference */
	trs_srv_path_free(path);
	goto drop_sess;
release_bytes:
	trs_srv_release_bytes(bytes);
drop_sess:
	if (created) {
		list_del_init(&sess->entry);
		trs_srv_sess_put(sess);
	}
unlock:
	mutex_unlock(&trs_srv_mutex);
	return ERR_PTR(err);
}

/* Connection 1..n: find the path it belongs to; trs_srv_mutex held. */
static struct trs_srv_path *
trs_srv_path_attach(struct trs_srv_ctx *ctx, struct rdma_cm_id *cm_id,
		    const struct trs_msg_conn_req *req)
{
	struct trs_srv_sess *sess = trs_srv_find(req->sess_uuid);
	struct trs_srv_path *path, *found = NULL, *cand[TRS_SRV_ATTACH_CANDS];
	u16 id = le16_to_cpu(req->path_id);
	u32 n = 0, i;

	lockdep_assert_held(&trs_srv_mutex);
	if (!sess || sess->ctx != ctx)
		return ERR_PTR(-ENOENT);
	spin_lock_irq(&sess->lock);
	/*
	 * Those whose connection 0 is accepted, so set up (see path_join),
	 * the newest last; a keyed session keeps older ones of the id until
	 * a proof replaces them, and one may be a stranger's.
	 */
	list_for_each_entry(path, &sess->paths, sess_entry)
		if (path->path_id == id && path->conns[0] &&
		    READ_ONCE(path->state) == TRS_SRV_CONNECTING)
			cand[n++ % TRS_SRV_ATTACH_CANDS] = path;
	spin_unlock_irq(&sess->lock);
	/*
	 * A connection that does not know the key (or, with a host key, the
	 * token of its path's exchange) is not the client's: the newest path
	 * whose key or token it shows is its path.
	 */
	for (i = 0; i < min_t(u32, n, TRS_SRV_ATTACH_CANDS) && !found; i++) {
		path = cand[(n - 1 - i) % TRS_SRV_ATTACH_CANDS];
		if (trs_srv_auth_conn_ok(path, le16_to_cpu(req->conn_idx),
					 req->sess_key))
			found = path;
	}
	if (!found)
		return ERR_PTR(-ENOENT);
	if (le16_to_cpu(req->conn_cnt) != found->conn_cnt ||
	    cm_id->device != found->ibdev)
		return ERR_PTR(-EINVAL);
	if (found->conns[le16_to_cpu(req->conn_idx)])
		return ERR_PTR(-EEXIST);
	return found;
}

/**
 * trs_srv_connect() - handle a connect request
 * @ctx: listener it arrived on
 * @cm_id: new CM id of the connection
 * @ev: RDMA_CM_EVENT_CONNECT_REQUEST
 *
 * Accepts the connection with its path's limits, or rejects it with a
 * struct trs_msg_conn_rsp carrying the reason.
 *
 * Return: 0, or a negative errno that makes the CM destroy @cm_id.
 */
int trs_srv_connect(struct trs_srv_ctx *ctx, struct rdma_cm_id *cm_id,
		    struct rdma_cm_event *ev)
{
	const struct trs_msg_conn_req *req = ev->param.conn.private_data;
	struct rdma_conn_param param = {};
	struct trs_srv_path *path;
	struct trs_srv_conn *conn;
	u32 idx;
	int err;

	err = trs_srv_check_req(req, ev->param.conn.private_data_len);
	if (err)
		goto reject;
	idx = le16_to_cpu(req->conn_idx);

	if (!idx) {
		path = trs_srv_path_join(ctx, cm_id, req);
		if (IS_ERR(path)) {
			err = PTR_ERR(path);
			goto reject;
		}
	}
	mutex_lock(&trs_srv_mutex);
	if (idx) {
		path = trs_srv_path_attach(ctx, cm_id, req);
		if (IS_ERR(path)) {
			err = PTR_ERR(path);
			goto unlock;
		}
	}
	/* failed, closed by the user or replaced meanwhile */
	if (!trs_srv_path_alive(path)) {
		err = -ECONNRESET;
		goto unlock;
	}
	conn = trs_srv_conn_create(path, cm_id, idx);
	if (IS_ERR(conn)) {
		err = PTR_ERR(conn);
		goto fail_path;
	}

	cm_id->context = &conn->kind;
	param.private_data = &path->rsp;
	param.private_data_len = sizeof(path->rsp);
	param.flow_control = 1;
	param.rnr_retry_count = 7;
	err = rdma_accept(cm_id, &param);
	if (err) {
		/* rdma_accept() rejected it already */
		trs_srv_conn_destroy(conn);
		if (!idx) {
			trs_srv_path_fail(path, "accept failed");
			trs_srv_path_setup_done(path);
		}
		mutex_unlock(&trs_srv_mutex);
		return err;
	}
	path->conns[idx] = conn;
	if (!idx) {
		trs_srv_path_start(path);
		trs_srv_path_setup_done(path);
	}
	mutex_unlock(&trs_srv_mutex);
	return 0;

fail_path:
	if (!idx)
		trs_srv_path_fail(path, "no resources for connection 0");
unlock:
	/* connection 0 of a path that is not alive: its close work may go on */
	if (!idx)
		trs_srv_path_setup_done(path);
	mutex_unlock(&trs_srv_mutex);
reject:
	trs_srv_reject(cm_id, err);
	return err;
}
