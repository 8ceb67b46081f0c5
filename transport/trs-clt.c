// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport client: sessions and the module.
 *
 * trs_clt_open() allocates a session and adds its first path;
 * trs_clt_close() closes every path and frees them and the session.  In
 * between, the paths live and recover (trs-clt-path.c,
 * trs-clt-recovery.c), and sysfs adds and removes some.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/module.h>
#include <linux/slab.h>
#include "trs-clt.h"

struct workqueue_struct *trs_clt_wq;

/* guards trs_clt_sessions */
static DEFINE_MUTEX(trs_clt_mutex);
static LIST_HEAD(trs_clt_sessions);

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
	sess->ops.hostname = NULL;
	err = trs_clt_hostname(ops->hostname, sess->hostname);
	if (err)
		goto free_rr_seq;
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
free_rr_seq:
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
	trs_log_info(sess, "closed\n");
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
 * trs_clt_has_path() - is @addr a path of the session?
 * @sess: from trs_clt_open()
 * @addr: as for trs_clt_path_matches()
 *
 * Return: true if one of the session's paths matches @addr.  Any context.
 */
bool trs_clt_has_path(struct trs_clt_sess *sess,
		      const struct trs_clt_path_addr *addr)
{
	struct trs_clt_path *path;
	bool found = false;

	rcu_read_lock();
	list_for_each_entry_rcu(path, &sess->paths, entry)
		found |= trs_clt_path_matches(path, addr);
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
	list_for_each_entry_rcu(path, &sess->paths, entry)
		found |= trs_clt_path_state(path) == state;
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
	err = class_register(&trs_clt_class);
	if (err)
		goto destroy_wq;
	err = ib_register_client(&trs_clt_ib_client);
	if (err)
		goto unregister_class;
	return 0;

unregister_class:
	class_unregister(&trs_clt_class);
destroy_wq:
	destroy_workqueue(trs_clt_wq);
	return err;
}

static void __exit trs_clt_exit(void)
{
	ib_unregister_client(&trs_clt_ib_client);
	class_unregister(&trs_clt_class);
	destroy_workqueue(trs_clt_wq);
}

module_init(trs_clt_init);
module_exit(trs_clt_exit);

MODULE_DESCRIPTION("RNBD RDMA transport: client");
MODULE_LICENSE("GPL");
