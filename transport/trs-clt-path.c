// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport client: the life of a path.
 *
 * A path is allocated CONNECTING and set up (trs-clt-conn.c) by
 * trs_clt_path_add(): for a session's first path from trs_clt_open(),
 * for the next ones from the add_path store.  Connected, it takes
 * requests; every error enters through trs_clt_fail() and its recovery
 * (trs-clt-recovery.c) reconnects it.  sysfs takes it down and back up
 * (disconnect, reconnect) and removes it (remove_path); trs_clt_close()
 * closes it.  Every change of its state goes through
 * trs_clt_path_change_state() (the diagram: transport-protocol.rst).
 *
 * The changes of a session's paths (add, remove, disconnect, reconnect)
 * run under its paths_mutex, one at a time and never once trs_clt_close()
 * started.  The writes to a path's own files only try the mutex and have
 * the write restarted if it is taken: remove_path deletes the path's
 * directory under it, which waits for every write in progress in that
 * directory.  A path is unlinked from the RCU list and a grace period
 * passes before it is torn down and freed; its requests come back with
 * -ECONNABORTED and the user sends them again on another path.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include "trs-clt.h"

/**
 * trs_clt_path_state_name() - a path state as sysfs and the log show it
 * @state: the state
 *
 * Return: its name.
 */
const char *trs_clt_path_state_name(enum trs_clt_path_state state)
{
	static const char *const names[] = {
		[TRS_CLT_PATH_CONNECTING]	= "connecting",
		[TRS_CLT_PATH_CONNECTED]	= "connected",
		[TRS_CLT_PATH_RECONNECTING]	= "reconnecting",
		[TRS_CLT_PATH_DISCONNECTED]	= "disconnected",
		[TRS_CLT_PATH_CLOSED]		= "closed",
	};

	return names[state];
}

static bool trs_clt_state_allowed(enum trs_clt_path_state old,
				  enum trs_clt_path_state new)
{
	switch (new) {
	case TRS_CLT_PATH_CONNECTING:
		return old == TRS_CLT_PATH_RECONNECTING;
	case TRS_CLT_PATH_CONNECTED:
		return old == TRS_CLT_PATH_CONNECTING;
	case TRS_CLT_PATH_RECONNECTING:
		/* CONNECTING: a failed reconnect attempt */
		return old == TRS_CLT_PATH_CONNECTED ||
		       old == TRS_CLT_PATH_CONNECTING ||
		       old == TRS_CLT_PATH_DISCONNECTED;
	case TRS_CLT_PATH_DISCONNECTED:
		return old == TRS_CLT_PATH_RECONNECTING;
	case TRS_CLT_PATH_CLOSED:
		return old != TRS_CLT_PATH_CLOSED;
	}
	return false;
}

/**
 * __trs_clt_path_change_state() - move a path to a new state
 * @path: the path; its state_lock held
 * @new: the state wanted
 *
 * Return: true if the path was in a state that may go to @new, and now is
 * in @new.
 */
bool __trs_clt_path_change_state(struct trs_clt_path *path,
				 enum trs_clt_path_state new)
{
	enum trs_clt_path_state old = path->state;

	lockdep_assert_held(&path->state_lock);
	if (!trs_clt_state_allowed(old, new))
		return false;
	/* an error after the last setup step: the attempt failed */
	if (new == TRS_CLT_PATH_CONNECTED && path->setup_err)
		return false;
	WRITE_ONCE(path->state, new);
	/* a new attempt: trs_clt_fail() records its first error */
	if (new == TRS_CLT_PATH_CONNECTING)
		path->setup_err = 0;
	pr_debug("%s: path %u %s -> %s\n", path->sess->name, path->id,
		 trs_clt_path_state_name(old), trs_clt_path_state_name(new));
	return true;
}

/**
 * trs_clt_path_change_state() - move a path to a new state
 * @path: the path
 * @new: the state wanted
 *
 * Return: as __trs_clt_path_change_state().  Any context.
 */
bool trs_clt_path_change_state(struct trs_clt_path *path,
			       enum trs_clt_path_state new)
{
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(&path->state_lock, flags);
	ok = __trs_clt_path_change_state(path, new);
	spin_unlock_irqrestore(&path->state_lock, flags);
	return ok;
}

/* The path's state, for checks that need no lock. */
enum trs_clt_path_state trs_clt_path_state(struct trs_clt_path *path)
{
	return READ_ONCE(path->state);
}

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
			trs_log_err(path->sess, "path %u: connection lost: %pe; reconnecting\n",
				    path->id, ERR_PTR(err));
		else
			trs_log_err(path->sess, "connection lost: %pe; reconnecting\n",
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
		trs_clt_path_free(path);
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
		trs_log_info(sess, "connected to %s port %u over %s: %u connections, queue depth %u, %u bytes and %u segments per request\n",
			     name, trs_addr_port(&path->dst), path->hca_name,
			     path->nr_conns, sess->queue_depth,
			     sess->max_io_size, sess->max_segments);
	else
		trs_log_info(sess, "path %u to %s over %s added\n", path->id,
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
		trs_log_err(sess, "cannot connect to %s port %u (last step: %s on connection %u): %pe\n",
			    name, trs_addr_port(&path->dst),
			    path->setup_step ?: "setup", path->setup_conn,
			    ERR_PTR(err));
	else
		trs_log_err(sess, "cannot add a path to %s (last step: %s on connection %u): %pe\n",
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
	trs_log_info(sess, "path %u removed\n", path->id);
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
		trs_log_info(sess, "path %u: disconnecting\n", path->id);
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
