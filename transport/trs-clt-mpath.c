// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport client: the paths of a session.
 *
 * A request goes to a connected path picked by the session's policy
 * (trs_clt_pick_path(), under RCU).  sysfs adds a path (add_path), takes
 * one down and back up (disconnect, reconnect) and removes one
 * (remove_path).  These run under the session's paths_mutex, one at a
 * time and never once trs_clt_close() started.  The writes to a path's
 * own files only try the mutex and have the write restarted if it is
 * taken: remove_path deletes the path's directory under it, which waits
 * for every write in progress in that directory.  A path is unlinked from
 * the RCU list and a grace period passes before it is torn down and
 * freed.  A path that goes away hands its requests back with
 * -ECONNABORTED, which the user sends again on another path.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched/signal.h>
#include <linux/sysfs.h>
#include "trs-clt.h"

/* The @n-th connected path (from 0), or NULL. */
static struct trs_clt_path *trs_clt_nth_up(struct trs_clt_sess *sess, u32 n)
{
	struct trs_clt_path *path;

	list_for_each_entry_rcu(path, &sess->paths, entry) {
		if (trs_clt_path_state(path) != TRS_CLT_PATH_CONNECTED)
			continue;
		if (!n--)
			return path;
	}
	return NULL;
}

/* Connected path whose connection @conn has the lowest @val. */
static struct trs_clt_path *trs_clt_min_path(struct trs_clt_sess *sess,
					     unsigned int conn, bool latency)
{
	struct trs_clt_path *path, *best = NULL;
	u64 val, best_val = U64_MAX;

	list_for_each_entry_rcu(path, &sess->paths, entry) {
		if (trs_clt_path_state(path) != TRS_CLT_PATH_CONNECTED)
			continue;
		val = latency ? READ_ONCE(path->conns[conn].lat_ns) :
		      READ_ONCE(path->conns[conn].inflight);
		if (!best || val < best_val) {
			best = path;
			best_val = val;
		}
	}
	return best;
}

/**
 * trs_clt_pick_path() - the path a request goes to
 * @sess: the session; rcu_read_lock() held
 * @conn: the connection index of the request (its CPU's)
 *
 * With one path, that path, whatever its state: the caller checks it
 * under the connection's lock.  With several, a connected one by the
 * session's policy (see enum trs_clt_mp_policy), or NULL if none is.
 *
 * Return: the path, valid until rcu_read_unlock().
 */
struct trs_clt_path *trs_clt_pick_path(struct trs_clt_sess *sess,
				       unsigned int conn)
{
	int policy = READ_ONCE(sess->mp_policy);
	u32 n, up = 0;
	struct trs_clt_path *path;

	if (likely(READ_ONCE(sess->nr_paths) <= 1))
		return list_first_or_null_rcu(&sess->paths,
					      struct trs_clt_path, entry);

	if (policy == TRS_CLT_MP_MIN_LATENCY &&
	    this_cpu_inc_return(*sess->rr_seq) % TRS_CLT_ML_PROBE)
		return trs_clt_min_path(sess, conn, true);
	if (policy == TRS_CLT_MP_MIN_INFLIGHT)
		return trs_clt_min_path(sess, conn, false);

	list_for_each_entry_rcu(path, &sess->paths, entry)
		if (trs_clt_path_state(path) == TRS_CLT_PATH_CONNECTED)
			up++;
	if (!up)
		return NULL;
	n = this_cpu_inc_return(*sess->rr_seq) % up;
	return trs_clt_nth_up(sess, n) ?: trs_clt_nth_up(sess, 0);
}

/**
 * trs_clt_path_close() - stop a path for good and release its resources
 * @path: a path unlinked from its session or whose session is closing
 *
 * Stops its recovery, tells the user if it was the session's last
 * connected path, then tears it down: its requests in flight complete
 * with -ECONNABORTED.
 */
void trs_clt_path_close(struct trs_clt_path *path)
{
	struct trs_clt_sess *sess = path->sess;

	trs_clt_path_change_state(path, TRS_CLT_PATH_CLOSED);
	/* a running setup gives up at its next wait */
	spin_lock_irq(&path->state_lock);
	if (!path->setup_err)
		path->setup_err = -ESHUTDOWN;
	spin_unlock_irq(&path->state_lock);
	wake_up(&path->setup_wq);

	mutex_lock(&sess->event_mutex);
	trs_clt_sess_check_down(sess, NULL);
	mutex_unlock(&sess->event_mutex);

	/* err_work only queues reconnect_work while RECONNECTING */
	cancel_work_sync(&path->err_work);
	cancel_delayed_work_sync(&path->reconnect_work);
	if (path->up)
		trs_clt_path_teardown(path);
}

/* A path id not in use in @sess; paths_mutex held. */
static u16 trs_clt_new_id(struct trs_clt_sess *sess)
{
	struct trs_clt_path *path;
	bool used;
	u16 id;

	lockdep_assert_held(&sess->paths_mutex);
	do {
		id = sess->next_id++;
		used = false;
		list_for_each_entry(path, &sess->paths, entry)
			used |= path->id == id;
	} while (used);
	return id;
}

/**
 * trs_clt_path_add() - connect a path of a session and put it to work
 * @sess: the session, with paths_mutex held
 * @addr: the path's addresses, checked by the caller
 *
 * The session's first path (trs_clt_open()) also sets the limits every
 * later path and reconnect must grant, and the session's sysfs
 * directory; a later one is connected with those limits.  If the first
 * path fails, the caller removes that directory after it dropped
 * paths_mutex, which its add_path store takes.  Process context, sleeps.
 *
 * Return: 0, or the error of the connect (see trs_clt_open()), with a
 * log line.
 */
int trs_clt_path_add(struct trs_clt_sess *sess,
		     const struct trs_clt_path_addr *addr)
{
	bool first = list_empty(&sess->paths);
	struct trs_clt_path *path;
	char name[TRS_ADDR_LEN];
	bool live;
	int err;

	lockdep_assert_held(&sess->paths_mutex);
	path = trs_clt_path_alloc(sess, addr);
	if (!path)
		return -ENOMEM;
	path->id = trs_clt_new_id(sess);
	trs_addr_print((struct sockaddr *)&path->dst, name, sizeof(name));

	err = trs_clt_path_setup(path);
	if (err)
		goto free_path;
	if (first) {
		sess->queue_depth = path->queue_depth;
		sess->chunk_size = path->chunk_size;
		sess->max_io_size = path->max_io_size;
		sess->max_segments = path->max_segments;
		sess->multipath = path->conns[0].rsp.caps &
				  cpu_to_le32(TRS_CAP_MULTIPATH);
		err = trs_clt_sysfs_add(sess);
		if (err)
			goto teardown;
	}
	err = trs_clt_path_sysfs_add(path);
	if (err)
		goto remove_path_sysfs;
	list_add_tail_rcu(&path->entry, &sess->paths);
	WRITE_ONCE(sess->nr_paths, sess->nr_paths + 1);
	mutex_lock(&sess->event_mutex);
	live = trs_clt_path_go_live(path);
	mutex_unlock(&sess->event_mutex);
	if (!live) {
		/* an error after the last step was recorded */
		spin_lock_irq(&path->state_lock);
		err = path->setup_err ?: -ECONNRESET;
		spin_unlock_irq(&path->state_lock);
		goto unlink;
	}
	if (first)
		trs_clt_info(sess, "connected to %s port %u over %s: %u connections, queue depth %u, %u bytes and %u segments per request\n",
			     name, trs_addr_port(&path->dst), path->hca_name,
			     path->nr_conns, sess->queue_depth,
			     sess->max_io_size, sess->max_segments);
	else
		trs_clt_info(sess, "path %u to %s over %s added\n", path->id,
			     name, path->hca_name);
	return 0;

unlink:
	list_del_rcu(&path->entry);
	WRITE_ONCE(sess->nr_paths, sess->nr_paths - 1);
	synchronize_rcu();
remove_path_sysfs:
	/* also what a failed trs_clt_path_sysfs_add() left */
	trs_clt_path_sysfs_del(path);
teardown:
	trs_clt_path_teardown(path);
free_path:
	if (first)
		trs_clt_err(sess, "cannot connect to %s port %u (last step: %s on connection %u): %pe\n",
			    name, trs_addr_port(&path->dst),
			    path->setup_step ?: "setup", path->setup_conn,
			    ERR_PTR(err));
	else
		trs_clt_err(sess, "cannot add a path to %s (last step: %s on connection %u): %pe\n",
			    name, path->setup_step ?: "setup", path->setup_conn,
			    ERR_PTR(err));
	trs_clt_path_free(path);
	return err;
}

/**
 * trs_clt_add_path() - connect a new path of a session
 * @sess: the session
 * @addr: the path's addresses
 *
 * Connects it like the session's first path, with the session's limits,
 * and puts it to work.  Process context, sleeps.
 *
 * Return: 0; -EINVAL bad addresses; -EEXIST the session has that path;
 * -ENOSPC it has TRS_CLT_MAX_PATHS paths; -EOPNOTSUPP the server does
 * not do multipath; -ENODEV the session is closing; or the error of the
 * connect (see trs_clt_open()).
 */
int trs_clt_add_path(struct trs_clt_sess *sess,
		     const struct trs_clt_path_addr *addr)
{
	int err = 0;

	if (!trs_addr_pair_ok(&addr->dst, &addr->src))
		return -EINVAL;

	mutex_lock(&sess->paths_mutex);
	if (trs_clt_sess_closing(sess))
		err = -ENODEV;
	else if (!sess->multipath)
		err = -EOPNOTSUPP;
	else if (sess->nr_paths >= TRS_CLT_MAX_PATHS)
		err = -ENOSPC;
	else if (trs_clt_has_path(sess, addr))
		err = -EEXIST;
	if (!err)
		err = trs_clt_path_add(sess, addr);
	mutex_unlock(&sess->paths_mutex);
	return err;
}
EXPORT_SYMBOL_GPL(trs_clt_add_path);

/**
 * trs_clt_remove_path() - disconnect and free a path of a session
 * @path: the path
 * @kobj: its sysfs directory, whose remove_path file runs this
 * @attr: that file, removed first so that deleting the directory does not
 *	wait for this very write
 *
 * Its requests in flight go back to the user, which sends them on the
 * other paths.  Process context, sleeps.
 *
 * Return: 0; -EBUSY it is the session's last path; -ENODEV the session
 * is closing; restart_syscall() while another change runs.
 */
int trs_clt_remove_path(struct trs_clt_path *path, struct kobject *kobj,
			struct kobj_attribute *attr)
{
	struct trs_clt_sess *sess = path->sess;
	int err = 0;

	if (!mutex_trylock(&sess->paths_mutex))
		return restart_syscall();
	if (trs_clt_sess_closing(sess))
		err = -ENODEV;
	else if (sess->nr_paths <= 1)
		err = -EBUSY;
	if (err) {
		mutex_unlock(&sess->paths_mutex);
		return err;
	}
	list_del_rcu(&path->entry);
	WRITE_ONCE(sess->nr_paths, sess->nr_paths - 1);
	sysfs_remove_file_self(kobj, &attr->attr);
	synchronize_rcu();
	trs_clt_path_close(path);
	trs_clt_path_sysfs_del(path);
	mutex_unlock(&sess->paths_mutex);
	trs_clt_info(sess, "path %u removed\n", path->id);
	trs_clt_path_free(path);
	return 0;
}

/**
 * trs_clt_path_disconnect() - take a path down until
 *	trs_clt_path_reconnect()
 * @path: the path
 *
 * Its requests in flight go back to the user, which sends them on the
 * other paths; if it was the last connected one, the session is down.
 * Process context, sleeps.
 *
 * Return: 0, -ENODEV the session is closing, or restart_syscall() while
 * another change runs.
 */
int trs_clt_path_disconnect(struct trs_clt_path *path)
{
	struct trs_clt_sess *sess = path->sess;
	int err = -ENODEV;

	if (!mutex_trylock(&sess->paths_mutex))
		return restart_syscall();
	if (!trs_clt_sess_closing(sess)) {
		err = 0;
		trs_clt_info(sess, "path %u: disconnecting\n", path->id);
		WRITE_ONCE(path->admin_down, true);
		trs_clt_fail(path, -ECONNRESET);
		/* its recovery parks it: see trs_clt_path_park() */
		flush_work(&path->err_work);
		cancel_delayed_work_sync(&path->reconnect_work);
		trs_clt_path_park(path);
	}
	mutex_unlock(&sess->paths_mutex);
	return err;
}

/*
 * A path the administrator disconnected goes RECONNECTING; one in any
 * other state is left to its recovery (a connected one must be torn down
 * by its err_work before it connects again).
 */
static bool trs_clt_path_wake(struct trs_clt_path *path)
{
	bool woke = false;

	spin_lock_irq(&path->state_lock);
	if (path->state == TRS_CLT_PATH_DISCONNECTED)
		woke = __trs_clt_path_change_state(path,
						   TRS_CLT_PATH_RECONNECTING);
	spin_unlock_irq(&path->state_lock);
	return woke;
}

/**
 * trs_clt_path_reconnect() - connect a path again now
 * @path: the path: a disconnected one connects; a connected one
 *	disconnects and connects; one waiting for its next attempt makes it
 *	now
 *
 * Process context.
 *
 * Return: 0, -ENODEV the session is closing, or restart_syscall() while
 * another change runs.
 */
int trs_clt_path_reconnect(struct trs_clt_path *path)
{
	struct trs_clt_sess *sess = path->sess;
	int err = -ENODEV;

	if (!mutex_trylock(&sess->paths_mutex))
		return restart_syscall();
	if (trs_clt_sess_closing(sess))
		goto unlock;
	err = 0;
	WRITE_ONCE(path->admin_down, false);
	if (trs_clt_path_wake(path)) {
		/* it was disconnected: no recovery work is queued */
		path->attempts = 0;
		queue_delayed_work(trs_clt_wq, &path->reconnect_work, 0);
		goto unlock;
	}
	WRITE_ONCE(path->reconnect_now, true);
	if (trs_clt_path_state(path) == TRS_CLT_PATH_CONNECTED)
		trs_clt_fail(path, -ECONNRESET);
	else if (delayed_work_pending(&path->reconnect_work))
		mod_delayed_work(trs_clt_wq, &path->reconnect_work, 0);
unlock:
	mutex_unlock(&sess->paths_mutex);
	return err;
}
