// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport client: sessions and the module.
 *
 * trs_clt_open() allocates a session and its first path and sets the path
 * up; trs_clt_close() tears every path down and frees them and the
 * session.  In between, every error of a path enters through
 * trs_clt_fail(), the recovery works (trs-clt-recovery.c) reconnect it,
 * and sysfs adds and removes paths (trs-clt-mpath.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include "trs-clt.h"

struct workqueue_struct *trs_clt_wq;

/* guards trs_clt_sessions */
static DEFINE_MUTEX(trs_clt_mutex);
static LIST_HEAD(trs_clt_sessions);

/**
 * trs_clt_fail() - the one error entry of a path
 * @path: path that failed
 * @err: why
 *
 * While trs_clt_path_setup() runs, the setup gives up with @err (the first
 * error wins).  Once connected, the path goes RECONNECTING and its
 * err_work tears it down and reconnects.  Otherwise nothing: recovery or
 * close already own the path.  Any context.
 */
void trs_clt_fail(struct trs_clt_path *path, int err)
{
	unsigned long flags;

	bool lost = false;

	spin_lock_irqsave(&path->state_lock, flags);
	if (path->state == TRS_CLT_PATH_CONNECTING && !path->setup_err)
		path->setup_err = err;
	if (path->state == TRS_CLT_PATH_CONNECTED)
		lost = __trs_clt_path_change_state(path,
						   TRS_CLT_PATH_RECONNECTING);
	spin_unlock_irqrestore(&path->state_lock, flags);

	if (lost) {
		if (path->id)
			trs_clt_err(path->sess, "path %u: connection lost: %pe; reconnecting\n",
				    path->id, ERR_PTR(err));
		else
			trs_clt_err(path->sess, "connection lost: %pe; reconnecting\n",
				    ERR_PTR(err));
		queue_work(trs_clt_wq, &path->err_work);
	}
	wake_up(&path->setup_wq);
}

/*
 * trs_clt_wc_fail() - a completion on @path failed with @err.  A flush
 * while connecting is not recorded: it only follows whatever moved the QP
 * to the error state, a reject or a disconnect whose CM event reports its
 * own cause, or a failed work request whose completion does, and the first
 * error recorded is the one the setup returns.  A refused connect must
 * not read as -ECONNRESET because a receive posted before it flushed first.
 * The waiter of the chunk table or of the bounce registration sees a flush
 * through its own error field.
 */
void trs_clt_wc_fail(struct trs_clt_path *path, const struct ib_wc *wc,
		     int err)
{
	if (wc->status == IB_WC_WR_FLUSH_ERR &&
	    trs_clt_path_state(path) == TRS_CLT_PATH_CONNECTING)
		return;
	trs_clt_fail(path, err);
}

/* The path's state, for checks that need no lock. */
enum trs_clt_path_state trs_clt_path_state(struct trs_clt_path *path)
{
	return READ_ONCE(path->state);
}

static bool trs_clt_name_ok(const char *name)
{
	size_t len = strnlen(name, NAME_MAX);

	return len && len < NAME_MAX && !strchr(name, '/') &&
	       strcmp(name, ".") && strcmp(name, "..");
}

static struct trs_clt_sess *trs_clt_find(const char *name)
{
	struct trs_clt_sess *sess;

	lockdep_assert_held(&trs_clt_mutex);
	list_for_each_entry(sess, &trs_clt_sessions, entry)
		if (!strcmp(sess->name, name))
			return sess;
	return NULL;
}

/**
 * trs_clt_path_alloc() - a new path of a session, not set up nor linked
 * @sess: its session
 * @addr: its addresses, checked
 *
 * Return: the path, or NULL without memory.
 */
struct trs_clt_path *trs_clt_path_alloc(struct trs_clt_sess *sess,
					const struct trs_clt_path_addr *addr)
{
	struct trs_clt_path *path;
	u32 i;

	path = TRS_FI(kzalloc(sizeof(*path), GFP_KERNEL), NULL);
	if (!path)
		return NULL;
	path->nr_conns = sess->nr_conns;
	path->conns = TRS_FI(kcalloc(path->nr_conns, sizeof(*path->conns),
				     GFP_KERNEL), NULL);
	path->cpu_migr_to = TRS_FI(alloc_percpu(u32), NULL);
	if (!path->conns || !path->cpu_migr_to) {
		free_percpu(path->cpu_migr_to);
		kfree(path->conns);
		kfree(path);
		return NULL;
	}
	path->sess = sess;
	INIT_LIST_HEAD(&path->entry);
	path->dst = addr->dst;
	path->src_req = addr->src;
	/* port 0: the default one */
	trs_addr_set_port(&path->dst, trs_addr_port(&path->dst));
	spin_lock_init(&path->state_lock);
	path->state = TRS_CLT_PATH_CONNECTING;
	init_waitqueue_head(&path->setup_wq);
	INIT_WORK(&path->err_work, trs_clt_err_work);
	INIT_DELAYED_WORK(&path->reconnect_work, trs_clt_reconnect_work);
	trs_clt_hb_init(path);
	for (i = 0; i < path->nr_conns; i++) {
		path->conns[i].path = path;
		path->conns[i].idx = i;
		spin_lock_init(&path->conns[i].lock);
	}
	return path;
}

/**
 * trs_clt_path_free() - free a path that is torn down and unlinked
 * @path: from trs_clt_path_alloc()
 */
void trs_clt_path_free(struct trs_clt_path *path)
{
	free_percpu(path->cpu_migr_to);
	kfree(path->conns);
	kfree(path);
}

/* Allocate a session and reserve its name. */
static struct trs_clt_sess *trs_clt_sess_alloc(const char *name,
					       const struct trs_clt_ops *ops)
{
	struct trs_clt_sess *sess;
	int err = -ENOMEM;

	sess = TRS_FI(kzalloc(sizeof(*sess), GFP_KERNEL), NULL);
	if (!sess)
		return ERR_PTR(-ENOMEM);
	sess->name = TRS_FI(kstrdup(name, GFP_KERNEL), NULL);
	if (!sess->name)
		goto free_sess;
	sess->rr_seq = TRS_FI(alloc_percpu(u32), NULL);
	if (!sess->rr_seq)
		goto free_name;

	sess->ops = *ops;
	uuid_gen(&sess->uuid);
	spin_lock_init(&sess->key_lock);
	mutex_init(&sess->paths_mutex);
	INIT_LIST_HEAD(&sess->paths);
	sess->nr_conns = min_t(u32, nr_cpu_ids, TRS_MAX_CONNS);
	mutex_init(&sess->event_mutex);
	INIT_DELAYED_WORK(&sess->loss_work, trs_clt_loss_work);
	INIT_WORK(&sess->notice_work, trs_clt_notice_work);
	sess->reconnect_delay_sec = TRS_CLT_RECONNECT_DELAY_SEC;
	sess->max_reconnect_attempts = -1;
	sess->loss_timeout_sec = TRS_CLT_LOSS_TIMEOUT_SEC;

	mutex_lock(&trs_clt_mutex);
	err = trs_clt_find(name) ? -EEXIST : 0;
	if (!err)
		list_add_tail(&sess->entry, &trs_clt_sessions);
	mutex_unlock(&trs_clt_mutex);
	if (!err)
		return sess;

	mutex_destroy(&sess->event_mutex);
	mutex_destroy(&sess->paths_mutex);
	free_percpu(sess->rr_seq);
free_name:
	kfree(sess->name);
free_sess:
	kfree(sess);
	return ERR_PTR(err);
}

static void trs_clt_sess_free(struct trs_clt_sess *sess)
{
	mutex_lock(&trs_clt_mutex);
	list_del(&sess->entry);
	mutex_unlock(&trs_clt_mutex);
	mutex_destroy(&sess->event_mutex);
	mutex_destroy(&sess->paths_mutex);
	free_percpu(sess->rr_seq);
	kfree(sess->name);
	kfree(sess);
}

/**
 * trs_clt_open() - connect a session to a server
 * @sessname: session name, unique on this host: 1..NAME_MAX-1 characters,
 *	no '/'; names the sysfs directory /sys/class/rtrs-client/<sessname>
 * @addr: the path's addresses: the server's, and the local one to use or
 *	none (then of the same family)
 * @ops: user callbacks, copied
 *
 * Opens one connection per CPU and waits until all of them and the
 * server's chunk table are up; each step times out after
 * TRS_CONNECT_TIMEOUT_MS.  Once open, the session reconnects by itself
 * after a loss, and @ops->event reports it, possibly even before this
 * returns.  Process context, sleeps.
 *
 * Return: the session, or ERR_PTR(): -EINVAL bad arguments, -EEXIST name
 * in use, -EHOSTUNREACH or -ETIMEDOUT no route or no answer, -ECONNREFUSED
 * nothing listens, -EPROTO a malformed answer, -EOPNOTSUPP unusable RDMA
 * device, -ECONNRESET the server closed the session while it was set up,
 * or the errno the server rejected the session with.
 */
struct trs_clt_sess *trs_clt_open(const char *sessname,
				  const struct trs_clt_path_addr *addr,
				  const struct trs_clt_ops *ops)
{
	struct trs_clt_sess *sess;
	int err;

	if (!sessname || !trs_clt_name_ok(sessname) || !ops || !addr ||
	    !trs_addr_pair_ok(&addr->dst, &addr->src))
		return ERR_PTR(-EINVAL);

	sess = trs_clt_sess_alloc(sessname, ops);
	if (IS_ERR(sess))
		return sess;
	mutex_lock(&sess->paths_mutex);
	err = trs_clt_path_add(sess, addr);
	if (err) {
		/* an add_path store waiting for the lock finds it closing */
		mutex_lock(&sess->event_mutex);
		trs_clt_sess_change_state(sess, TRS_CLT_SESS_CLOSING, false);
		mutex_unlock(&sess->event_mutex);
	}
	mutex_unlock(&sess->paths_mutex);
	if (err) {
		/* not under paths_mutex: the removal waits for that store */
		trs_clt_sysfs_del(sess);
		/* a notice, or the loss of the path, may have queued them */
		cancel_delayed_work_sync(&sess->loss_work);
		cancel_work_sync(&sess->notice_work);
		trs_clt_sess_free(sess);
		return ERR_PTR(err);
	}
	return sess;
}
EXPORT_SYMBOL_GPL(trs_clt_open);

/**
 * trs_clt_close() - disconnect and free a session
 * @sess: from trs_clt_open()
 *
 * Stops recovery, then tears every path down: requests still in flight
 * complete with -ECONNABORTED before this returns.  The event callback
 * may still run until then, so the caller must not hold anything the
 * callback needs, and must not call this from the callback.  Process
 * context, sleeps.
 */
void trs_clt_close(struct trs_clt_sess *sess)
{
	struct trs_clt_path *path, *tmp;

	/* no path is added or removed from now on */
	mutex_lock(&sess->paths_mutex);
	mutex_lock(&sess->event_mutex);
	trs_clt_sess_change_state(sess, TRS_CLT_SESS_CLOSING, false);
	mutex_unlock(&sess->event_mutex);
	mutex_unlock(&sess->paths_mutex);

	list_for_each_entry(path, &sess->paths, entry)
		trs_clt_path_sysfs_del(path);
	trs_clt_sysfs_del(sess);
	list_for_each_entry(path, &sess->paths, entry)
		trs_clt_path_close(path);
	cancel_delayed_work_sync(&sess->loss_work);
	cancel_work_sync(&sess->notice_work);
	/*
	 * The session is still on trs_clt_sessions, whose walker (device
	 * removal), like trs_clt_connected() and the other lockless readers,
	 * reads the paths under RCU only: a grace period before each goes.
	 * No other writer: CLOSING keeps paths from being added or removed.
	 */
	list_for_each_entry_safe(path, tmp, &sess->paths, entry) {
		list_del_rcu(&path->entry);
		synchronize_rcu();
		trs_clt_path_free(path);
	}
	trs_clt_info(sess, "closed\n");
	trs_clt_sess_free(sess);
}
EXPORT_SYMBOL_GPL(trs_clt_close);

/**
 * trs_clt_query() - negotiated limits of a session
 * @sess: from trs_clt_open()
 * @attrs: filled in; constant for the life of the session
 */
void trs_clt_query(struct trs_clt_sess *sess, struct trs_clt_attrs *attrs)
{
	attrs->queue_depth = sess->queue_depth;
	attrs->max_io_size = sess->max_io_size;
	attrs->max_segments = sess->max_segments;
	attrs->nr_conns = sess->nr_conns;
}
EXPORT_SYMBOL_GPL(trs_clt_query);

/**
 * trs_clt_path_matches() - is @addr the path's?
 * @path: a path
 * @addr: server address and port (port 0: TRS_DEFAULT_PORT), and the
 *	local address or none
 *
 * A local address matches the one the path was opened with or, if it was
 * opened without one, the one its last connect resolved to (what sysfs
 * shows in src_addr).
 *
 * Return: true if it is.  Any context.
 */
bool trs_clt_path_matches(struct trs_clt_path *path,
			  const struct trs_clt_path_addr *addr)
{
	struct sockaddr_storage dst = addr->dst;
	unsigned long flags;
	bool ok;

	if (!trs_addr_pair_ok(&dst, &addr->src))
		return false;
	/* port 0: the default one */
	trs_addr_set_port(&dst, trs_addr_port(&dst));
	if (!trs_addr_eq(&path->dst, &dst, true))
		return false;
	if (addr->src.ss_family == AF_UNSPEC)
		return true;
	if (path->src_req.ss_family != AF_UNSPEC)
		return trs_addr_eq(&path->src_req, &addr->src, false);
	/* written by a reconnect's address resolution, under the lock */
	spin_lock_irqsave(&path->state_lock, flags);
	ok = trs_addr_eq(&path->src, &addr->src, false);
	spin_unlock_irqrestore(&path->state_lock, flags);
	return ok;
}

/**
 * trs_clt_has_path() - is @addr a path of the session?
 * @sess: from trs_clt_open()
 * @addr: server address and port (port 0: TRS_DEFAULT_PORT), and the
 *	local address or none
 *
 * A local address matches the one the path was opened with or, if it was
 * opened without one, the one its last connect resolved to (what sysfs
 * shows in src_addr).
 *
 * Return: true if the session has a path to that server address from that
 * local address.  Process context.
 */
bool trs_clt_has_path(struct trs_clt_sess *sess,
		      const struct trs_clt_path_addr *addr)
{
	struct trs_clt_path *path;
	bool found = false;

	rcu_read_lock();
	list_for_each_entry_rcu(path, &sess->paths, entry) {
		if (trs_clt_path_matches(path, addr)) {
			found = true;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}
EXPORT_SYMBOL_GPL(trs_clt_has_path);

/* Is one of the session's paths in @state?  Any context. */
bool trs_clt_sess_any(struct trs_clt_sess *sess,
		      enum trs_clt_path_state state)
{
	struct trs_clt_path *path;
	bool found = false;

	rcu_read_lock();
	list_for_each_entry_rcu(path, &sess->paths, entry) {
		if (trs_clt_path_state(path) == state) {
			found = true;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

/**
 * trs_clt_connected() - whether a session can take requests
 * @sess: from trs_clt_open()
 *
 * Return: true while one of the session's paths is connected.  Any
 * context.
 */
bool trs_clt_connected(struct trs_clt_sess *sess)
{
	return trs_clt_sess_any(sess, TRS_CLT_PATH_CONNECTED);
}
EXPORT_SYMBOL_GPL(trs_clt_connected);

/**
 * trs_clt_recover() - reconnect a session the user found unresponsive
 * @sess: from trs_clt_open()
 * @err: why, for the log (e.g. -ETIMEDOUT for a request without answer)
 *
 * Does what a transport error does, on every path: a connected path goes
 * reconnecting, and its requests in flight complete with -ECONNABORTED.
 * (trs_clt_timeout() reconnects only the path of one request.)  Any
 * context.
 */
void trs_clt_recover(struct trs_clt_sess *sess, int err)
{
	struct trs_clt_path *path;

	rcu_read_lock();
	list_for_each_entry_rcu(path, &sess->paths, entry)
		trs_clt_fail(path, err);
	rcu_read_unlock();
}
EXPORT_SYMBOL_GPL(trs_clt_recover);

/*
 * The device goes away: fail every path on it, then wait until their
 * err_works released its resources.  Paths still connecting give up
 * on their own; the CM also reports DEVICE_REMOVAL on their ids.  A
 * reconnect finds another device or none.
 */
static void trs_clt_remove_one(struct ib_device *dev, void *client_data)
{
	struct trs_clt_sess *sess;
	struct trs_clt_path *path;

	mutex_lock(&trs_clt_mutex);
	rcu_read_lock();
	list_for_each_entry(sess, &trs_clt_sessions, entry)
		list_for_each_entry_rcu(path, &sess->paths, entry)
			if (READ_ONCE(path->ibdev) == dev)
				trs_clt_fail(path, -ENODEV);
	rcu_read_unlock();
	mutex_unlock(&trs_clt_mutex);
	flush_workqueue(trs_clt_wq);
}

static struct ib_client trs_clt_ib_client = {
	.name	= "rnbd_trs_client",
	.remove	= trs_clt_remove_one,
};

static int __init trs_clt_init(void)
{
	int err;

	trs_proto_build_checks();
	trs_clt_wq = TRS_FI(alloc_workqueue("trs_clt", WQ_MEM_RECLAIM, 0),
			    NULL);
	if (!trs_clt_wq)
		return -ENOMEM;
	err = trs_clt_sysfs_init();
	if (err)
		goto destroy_wq;
	err = ib_register_client(&trs_clt_ib_client);
	if (err)
		goto sysfs_exit;
	return 0;

sysfs_exit:
	trs_clt_sysfs_exit();
destroy_wq:
	destroy_workqueue(trs_clt_wq);
	return err;
}

static void __exit trs_clt_exit(void)
{
	ib_unregister_client(&trs_clt_ib_client);
	trs_clt_sysfs_exit();
	destroy_workqueue(trs_clt_wq);
}

module_init(trs_clt_init);
module_exit(trs_clt_exit);

MODULE_DESCRIPTION("RNBD RDMA transport: client");
MODULE_LICENSE("GPL");
