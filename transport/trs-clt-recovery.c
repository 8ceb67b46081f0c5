// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport client: recovery of paths, and the session's state.
 *
 * Every error of a path goes through trs_clt_fail(), which moves a connected path to
 * RECONNECTING and queues its err_work: tell the user if that was the
 * session's last connected path, tear the path down (its requests complete
 * with -ECONNABORTED, and the user sends them again on another path or
 * after the reconnect), then queue reconnect_work after
 * reconnect_delay_sec plus up to a second of jitter, so that the clients
 * of a restarted server do not all come back in step.  reconnect_work
 * sets the path up again, or queues itself again.  A path that goes
 * connected while the user holds the session down tells it the session is
 * back: RESUMED if the server kept the session (its key is the one we
 * know), RECONNECTED if it made a new one.  The session's loss_work tells
 * the user once no path has been connected for loss_timeout_sec.  One of
 * the two path works runs at a time: each is queued only by the other or,
 * for err_work, by a connected path, or by sysfs once the other is
 * flushed (trs-clt-path.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/random.h>
#include "trs-clt.h"

static unsigned int trs_clt_hb_timeout_sec = 10;
module_param_named(heartbeat_timeout_sec, trs_clt_hb_timeout_sec, uint, 0644);
MODULE_PARM_DESC(heartbeat_timeout_sec,
		 "seconds without a heartbeat from the server before a path reconnects (3..3600, default 10)");

/* Tell the user, unless the session is being closed. */
static void trs_clt_event(struct trs_clt_sess *sess, enum trs_clt_event ev)
{
	lockdep_assert_held(&sess->event_mutex);
	if (sess->state != TRS_CLT_SESS_CLOSING && sess->ops.event)
		sess->ops.event(sess->ops.priv, ev);
}

static bool trs_clt_sess_state_allowed(enum trs_clt_sess_state old,
				       enum trs_clt_sess_state new)
{
	switch (new) {
	case TRS_CLT_SESS_NEW:
		return false;
	case TRS_CLT_SESS_UP:
		return old != TRS_CLT_SESS_UP && old != TRS_CLT_SESS_CLOSING;
	case TRS_CLT_SESS_DOWN:
		return old == TRS_CLT_SESS_UP;
	case TRS_CLT_SESS_LOST:
		return old == TRS_CLT_SESS_DOWN;
	case TRS_CLT_SESS_DEAD:
		return old == TRS_CLT_SESS_DOWN || old == TRS_CLT_SESS_LOST;
	case TRS_CLT_SESS_CLOSING:
		return old != TRS_CLT_SESS_CLOSING;
	}
	return false;
}

/**
 * trs_clt_sess_change_state() - move a session to a new state, and tell
 *	the user
 * @sess: the session; its event_mutex held, and for CLOSING its
 *	paths_mutex too
 * @new: the state wanted
 * @fresh: for UP after DOWN, LOST or DEAD: the server made a new session
 *	(RECONNECTED), or kept ours (RESUMED)
 *
 * Return: true if the session was in a state that may go to @new, and now
 * is in @new.
 */
bool trs_clt_sess_change_state(struct trs_clt_sess *sess,
			       enum trs_clt_sess_state new, bool fresh)
{
	enum trs_clt_sess_state old = sess->state;

	lockdep_assert_held(&sess->event_mutex);
	if (!trs_clt_sess_state_allowed(old, new))
		return false;
	if (new == TRS_CLT_SESS_CLOSING)
		lockdep_assert_held(&sess->paths_mutex);
	WRITE_ONCE(sess->state, new);
	switch (new) {
	case TRS_CLT_SESS_UP:
		if (old == TRS_CLT_SESS_NEW)
			break;
		cancel_delayed_work(&sess->loss_work);
		trs_clt_event(sess, fresh ? TRS_CLT_EV_RECONNECTED :
				    TRS_CLT_EV_RESUMED);
		break;
	case TRS_CLT_SESS_DOWN:
		trs_clt_event(sess, TRS_CLT_EV_RECONNECTING);
		break;
	case TRS_CLT_SESS_LOST:
		trs_log_err(sess, "no connection for %u s: failing its requests until it reconnects\n",
			    READ_ONCE(sess->loss_timeout_sec));
		trs_clt_event(sess, TRS_CLT_EV_LOST);
		break;
	case TRS_CLT_SESS_DEAD:
		trs_clt_event(sess, TRS_CLT_EV_DISCONNECTED);
		break;
	default:
		break;
	}
	return true;
}

/**
 * trs_clt_sess_closing() - is the session closing?
 * @sess: the session; its paths_mutex or its event_mutex held
 *
 * Return: true once trs_clt_close() started or trs_clt_open() failed.
 */
bool trs_clt_sess_closing(struct trs_clt_sess *sess)
{
	return READ_ONCE(sess->state) == TRS_CLT_SESS_CLOSING;
}

/* Did every path of the session give up? */
static bool trs_clt_sess_all_closed(struct trs_clt_sess *sess)
{
	struct trs_clt_path *path;
	bool all = true;

	rcu_read_lock();
	list_for_each_entry_rcu(path, &sess->paths, entry)
		all &= trs_clt_path_state(path) == TRS_CLT_PATH_CLOSED;
	rcu_read_unlock();
	return all;
}

static void trs_clt_queue_reconnect(struct trs_clt_path *path)
{
	struct trs_clt_sess *sess = path->sess;
	unsigned long delay = 0;

	if (!xchg(&path->reconnect_now, false))
		delay = READ_ONCE(sess->reconnect_delay_sec) * HZ +
			get_random_u32_below(HZ);
	queue_delayed_work(trs_clt_wq, &path->reconnect_work, delay);
}

/*
 * The loss timeout counts from the server's last sign of life on the
 * session's last path: its last heartbeat, if it sends them, not from when
 * we noticed its silence.
 */
static unsigned long trs_clt_loss_delay(struct trs_clt_path *path)
{
	unsigned long delay = READ_ONCE(path->sess->loss_timeout_sec) * HZ;
	unsigned long silent;

	if (!path->hb.on)
		return delay;
	silent = jiffies - READ_ONCE(path->hb.rx);
	return silent < delay ? delay - silent : 0;
}

/**
 * trs_clt_sess_check_down() - tell the user when no path is connected
 * @sess: the session; its event_mutex held
 * @path: the path that went down last, whose server's last sign of life
 *	starts the loss timeout; NULL: it starts now
 *
 * The user holds its requests from RECONNECTING on, until a path goes
 * connected again (trs_clt_path_go_live()).
 */
void trs_clt_sess_check_down(struct trs_clt_sess *sess,
			     struct trs_clt_path *path)
{
	lockdep_assert_held(&sess->event_mutex);
	if (sess->state != TRS_CLT_SESS_UP ||
	    trs_clt_sess_any(sess, TRS_CLT_PATH_CONNECTED))
		return;
	trs_clt_sess_change_state(sess, TRS_CLT_SESS_DOWN, false);
	queue_delayed_work(trs_clt_wq, &sess->loss_work,
			   path ? trs_clt_loss_delay(path) :
			   READ_ONCE(sess->loss_timeout_sec) * HZ);
}

/**
 * trs_clt_path_go_live() - a path that was set up goes connected
 * @path: the path, CONNECTING; its session's event_mutex held
 *
 * If the accept carried another key than the session's, the server made
 * a new session for the path: it forgot the old one, and the other paths
 * are connected to nothing it knows.  They reconnect, and the user, told
 * RECONNECTING first (before the path takes requests), then RECONNECTED,
 * sets its state up again.  If the user holds the session down and the
 * server kept it, RESUMED.
 *
 * Return: true if the path is connected; false if an error came after
 * the last setup step, or the path was closed meanwhile.
 */
bool trs_clt_path_go_live(struct trs_clt_path *path)
{
	struct trs_clt_sess *sess = path->sess;
	struct trs_clt_path *other;
	bool fresh;

	lockdep_assert_held(&sess->event_mutex);
	spin_lock_irq(&sess->key_lock);
	fresh = sess->state != TRS_CLT_SESS_NEW &&
		memcmp(sess->sess_key, path->key, sizeof(path->key));
	spin_unlock_irq(&sess->key_lock);
	if (fresh) {
		trs_log_info(sess, "the server made a new session: everything is set up again\n");
		rcu_read_lock();
		list_for_each_entry_rcu(other, &sess->paths, entry)
			if (other != path)
				trs_clt_fail(other, -ECONNRESET);
		rcu_read_unlock();
		trs_clt_sess_change_state(sess, TRS_CLT_SESS_DOWN, false);
	}
	if (!trs_clt_path_change_state(path, TRS_CLT_PATH_CONNECTED))
		return false;
	spin_lock_irq(&sess->key_lock);
	memcpy(sess->sess_key, path->key, sizeof(sess->sess_key));
	spin_unlock_irq(&sess->key_lock);
	trs_clt_sess_change_state(sess, TRS_CLT_SESS_UP, fresh);
	return true;
}

/**
 * trs_clt_path_park() - a path the administrator disconnected stays down
 * @path: the path; nothing unless its admin_down is set
 *
 * Return: true if it is to stay down (and is DISCONNECTED if it was
 * RECONNECTING).
 */
bool trs_clt_path_park(struct trs_clt_path *path)
{
	if (!READ_ONCE(path->admin_down))
		return false;
	if (trs_clt_path_change_state(path, TRS_CLT_PATH_DISCONNECTED))
		trs_log_info(path->sess, "path %u disconnected\n", path->id);
	return true;
}

/**
 * trs_clt_err_work() - recovery of a path that failed while connected
 * @work: the path's err_work
 */
void trs_clt_err_work(struct work_struct *work)
{
	struct trs_clt_path *path = container_of(work, struct trs_clt_path,
						 err_work);
	struct trs_clt_sess *sess = path->sess;

	/* the user stops submitting before its requests come back */
	mutex_lock(&sess->event_mutex);
	trs_clt_sess_check_down(sess, path);
	mutex_unlock(&sess->event_mutex);

	trs_clt_path_teardown(path);
	path->attempts = 0;
	if (trs_clt_path_park(path))
		return;
	if (trs_clt_path_state(path) == TRS_CLT_PATH_RECONNECTING)
		trs_clt_queue_reconnect(path);
}

/**
 * trs_clt_reconnect_work() - one reconnect attempt of a path
 * @work: the path's reconnect_work
 */
void trs_clt_reconnect_work(struct work_struct *work)
{
	struct trs_clt_path *path = container_of(to_delayed_work(work),
						 struct trs_clt_path,
						 reconnect_work);
	struct trs_clt_sess *sess = path->sess;
	int max = READ_ONCE(sess->max_reconnect_attempts);
	int err;

	if (trs_clt_path_park(path))
		return;
	if (!trs_clt_path_change_state(path, TRS_CLT_PATH_CONNECTING))
		return;
	err = trs_clt_path_setup(path);
	if (!err) {
		mutex_lock(&sess->event_mutex);
		if (trs_clt_path_go_live(path)) {
			mutex_unlock(&sess->event_mutex);
			if (path->id)
				trs_log_info(sess, "path %u reconnected after %u failed attempts\n",
					     path->id, path->attempts);
			else
				trs_log_info(sess, "reconnected after %u failed attempts\n",
					     path->attempts);
			WRITE_ONCE(path->reconnects, path->reconnects + 1);
			return;
		}
		mutex_unlock(&sess->event_mutex);
		/* closed meanwhile, or an error after the last step */
		trs_clt_path_teardown(path);
		err = -ECONNRESET;
	}

	if (trs_clt_path_state(path) == TRS_CLT_PATH_CLOSED)
		return;
	path->attempts++;
	WRITE_ONCE(path->reconnect_fails, path->reconnect_fails + 1);
	trs_log_err_rl(sess, "path %u: reconnect %u failed (last step: %s on conn %u): %pe\n",
		       path->id, path->attempts, path->setup_step,
		       path->setup_conn, ERR_PTR(err));
	if (max >= 0 && path->attempts >= max) {
		mutex_lock(&sess->event_mutex);
		if (trs_clt_path_change_state(path, TRS_CLT_PATH_CLOSED)) {
			trs_log_err(sess, "path %u: giving up after %u reconnect attempts\n",
				    path->id, path->attempts);
			if (trs_clt_sess_all_closed(sess))
				trs_clt_sess_change_state(sess,
							  TRS_CLT_SESS_DEAD,
							  false);
		}
		mutex_unlock(&sess->event_mutex);
		return;
	}
	if (trs_clt_path_change_state(path, TRS_CLT_PATH_RECONNECTING) &&
	    !trs_clt_path_park(path))
		trs_clt_queue_reconnect(path);
}

/**
 * trs_clt_loss_work() - no path of the session was connected for
 *	loss_timeout_sec
 * @work: the session's loss_work
 */
void trs_clt_loss_work(struct work_struct *work)
{
	struct trs_clt_sess *sess = container_of(to_delayed_work(work),
						 struct trs_clt_sess,
						 loss_work);

	mutex_lock(&sess->event_mutex);
	trs_clt_sess_change_state(sess, TRS_CLT_SESS_LOST, false);
	mutex_unlock(&sess->event_mutex);
}

/**
 * trs_clt_notice_work() - a server's heartbeat carried a notice
 * @work: the session's notice_work
 *
 * Tells the user, who asks its server what is new.
 */
void trs_clt_notice_work(struct work_struct *work)
{
	struct trs_clt_sess *sess = container_of(work, struct trs_clt_sess,
						 notice_work);

	mutex_lock(&sess->event_mutex);
	trs_clt_event(sess, TRS_CLT_EV_NOTICE);
	mutex_unlock(&sess->event_mutex);
}

static int trs_clt_hb_send(struct trs_hb *hb)
{
	struct trs_clt_path *path = container_of(hb, struct trs_clt_path, hb);
	struct trs_clt_conn *conn = &path->conns[0];
	int err = 0;

	spin_lock_irq(&conn->lock);
	if (!conn->dead)
		err = trs_hb_post(hb, conn->cm_id->qp, 0);
	spin_unlock_irq(&conn->lock);
	return err;
}

static void trs_clt_hb_lost(struct trs_hb *hb, unsigned int sec)
{
	struct trs_clt_path *path = container_of(hb, struct trs_clt_path, hb);

	if (sec)
		trs_log_err(path->sess, "no heartbeat from the server for %u s\n",
			    sec);
	trs_clt_fail(path, sec ? -ETIMEDOUT : -ECONNRESET);
}

static const struct trs_hb_ops trs_clt_hb_ops = {
	.send	= trs_clt_hb_send,
	.lost	= trs_clt_hb_lost,
};

/**
 * trs_clt_hb_init() - prepare the heartbeat of a new path (trs-hb.c)
 * @path: the path
 *
 * Without heartbeats the timer does not run: an unanswered request is
 * blk-mq's to time out (trs_clt_timeout()).
 */
void trs_clt_hb_init(struct trs_clt_path *path)
{
	trs_hb_init(&path->hb, trs_clt_wq, &trs_clt_hb_ops,
		    &trs_clt_hb_timeout_sec);
}
