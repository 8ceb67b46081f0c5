// SPDX-License-Identifier: GPL-2.0-only
/*
 * rnbd client: IO across transport reconnects.
 *
 * When the transport loses a session's last path it reports RECONNECTING
 * before it hands back the requests in flight: the session holds every
 * mapped disk and requeues what comes back, so the IO waits in blk-mq,
 * not in a queue of our own (queue_rq answers BLK_STS_RESOURCE for a held
 * disk, and blk-mq tries again shortly; a request that fails fast on
 * transport errors, an md leg's, fails at once).  (A path lost
 * while another is connected hands its requests back too: they are
 * requeued and go out on the other path.)  The admin queue is never held:
 * OPEN and CLOSE fail fast instead.  On RECONNECTED the server has
 * forgotten the session's devices, and a new epoch starts: the reopen
 * work opens each held device again, with the same path and access mode,
 * checks that it is the same size, takes the new device id and releases
 * the queue.  On RESUMED the server kept the session: the reopen work
 * releases the devices opened in the current epoch as they are.  A device the
 * server refuses is closed (its IO fails) and the others carry on.  On
 * LOST (the transport's loss timeout) the held queues are released and
 * their IO fails until a reconnect; on DISCONNECTED for good.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>

#include "rnbd-clt.h"
#include "rnbd-clt-trace.h"

static bool rnbd_clt_dev_state_allowed(enum rnbd_clt_dev_state old,
				       enum rnbd_clt_dev_state new)
{
	switch (new) {
	case RNBD_CLT_DEV_MAPPING:
		return false;
	case RNBD_CLT_DEV_MAPPED:
		return old == RNBD_CLT_DEV_MAPPING || old == RNBD_CLT_DEV_HELD ||
		       old == RNBD_CLT_DEV_DISCONNECTED;
	case RNBD_CLT_DEV_HELD:
		return old == RNBD_CLT_DEV_MAPPED;
	case RNBD_CLT_DEV_DISCONNECTED:
		return old == RNBD_CLT_DEV_MAPPED || old == RNBD_CLT_DEV_HELD;
	case RNBD_CLT_DEV_UNMAPPING:
		return old != RNBD_CLT_DEV_MAPPING &&
		       old != RNBD_CLT_DEV_UNMAPPING;
	}
	return false;
}

/*
 * Does @dev's IO wait while its session reconnects, rather than fail?  Its
 * session connected or reconnecting, and it open there (or held for it).
 */
bool rnbd_clt_dev_waits(const struct rnbd_clt_dev *dev)
{
	enum rnbd_clt_sess_state ss = READ_ONCE(dev->sess->state);
	enum rnbd_clt_dev_state ds = READ_ONCE(dev->state);

	return (ds == RNBD_CLT_DEV_MAPPED || ds == RNBD_CLT_DEV_HELD) &&
	       (ss == RNBD_CLT_SESS_CONNECTED ||
		ss == RNBD_CLT_SESS_RECONNECTING);
}

/*
 * A request of a held device, or of a reconnecting session, stays in
 * blk-mq, which runs it again shortly (as nvme-rdma does while it
 * reconnects); one that fails fast on transport errors (an md leg's,
 * mdadm --failfast) fails now: its mirror goes on without it.
 */
blk_status_t rnbd_clt_held_sts(const struct request *rq)
{
	return rq->cmd_flags & REQ_FAILFAST_TRANSPORT ? BLK_STS_IOERR :
							BLK_STS_RESOURCE;
}

/*
 * Tell user space that @dev, whose state just changed from @old, does IO
 * again after an interruption, or never will: a change uevent of its disk
 * with RNBD_EVENT=reconnected (open on the server again after its session
 * reconnected, or a remap) or RNBD_EVENT=closed.  An md mirror's udev hook
 * re-adds its leg on "reconnected".  A HELD device released while its
 * session is not connected (the loss timeout) fails its IO: no event.
 * Only a disk user space sees: not one still being mapped.
 */
static void rnbd_clt_dev_event(struct rnbd_clt_dev *dev,
			       enum rnbd_clt_dev_state old)
{
	char *envp[2] = { NULL, NULL };

	if (dev->state == RNBD_CLT_DEV_DISCONNECTED)
		envp[0] = "RNBD_EVENT=closed";
	else if (dev->state == RNBD_CLT_DEV_MAPPED &&
		 old != RNBD_CLT_DEV_MAPPING &&
		 dev->sess->state == RNBD_CLT_SESS_CONNECTED)
		envp[0] = "RNBD_EVENT=reconnected";
	if (envp[0] && dev->disk && disk_live(dev->disk))
		kobject_uevent_env(&disk_to_dev(dev->disk)->kobj, KOBJ_CHANGE,
				   envp);
}

/**
 * rnbd_clt_dev_change_state() - move a device to a new state
 * @dev: the device; sess->lock held
 * @new: the state wanted
 *
 * Going HELD waits for the queue_rq calls running (a quiesce, undone at
 * once): from then on queue_rq sees HELD and keeps the requests in blk-mq
 * (a device without its disk yet is held by rnbd_clt_dev_catch_up()).
 * Leaving HELD runs the queue: the requests go out if the device is
 * MAPPED and its session connected, and fail otherwise.  A change that
 * user space should know of sends a uevent (rnbd_clt_dev_event()).
 *
 * Return: true if the device was in a state that may go to @new, and now
 * is in @new.
 */
bool rnbd_clt_dev_change_state(struct rnbd_clt_dev *dev,
			       enum rnbd_clt_dev_state new)
{
	enum rnbd_clt_dev_state old = dev->state;

	lockdep_assert_held(&dev->sess->lock);
	if (!rnbd_clt_dev_state_allowed(old, new) ||
	    (new == RNBD_CLT_DEV_HELD && !dev->disk))
		return false;
	if (new == RNBD_CLT_DEV_HELD)
		blk_mq_quiesce_queue(dev->disk->queue);
	WRITE_ONCE(dev->state, new);
	if (new == RNBD_CLT_DEV_HELD)
		blk_mq_unquiesce_queue(dev->disk->queue);
	else if (old == RNBD_CLT_DEV_HELD)
		blk_mq_run_hw_queues(dev->disk->queue, true);
	rnbd_clt_dev_event(dev, old);
	return true;
}

/*
 * Move the session to @state; with @hold, hold every mapped device first,
 * else release every held one.  Devices that will not come back
 * (@closed) are disconnected.
 */
static void rnbd_clt_sess_set(struct rnbd_clt_sess *sess,
			      enum rnbd_clt_sess_state state, bool hold,
			      bool closed)
{
	struct rnbd_clt_dev *dev;

	mutex_lock(&sess->lock);
	list_for_each_entry(dev, &sess->devs, node) {
		if (closed)
			rnbd_clt_dev_change_state(dev,
						  RNBD_CLT_DEV_DISCONNECTED);
		else if (hold)
			rnbd_clt_dev_change_state(dev, RNBD_CLT_DEV_HELD);
		else if (dev->state == RNBD_CLT_DEV_HELD)
			rnbd_clt_dev_change_state(dev, RNBD_CLT_DEV_MAPPED);
	}
	if (sess->state != state)
		trace_rnbd_clt_sess_state(sess->name, sess->state, state);
	WRITE_ONCE(sess->state, state);
	mutex_unlock(&sess->lock);
}

/**
 * rnbd_clt_sess_event() - transport event of a session
 * @priv: the session
 * @ev: what happened
 *
 * Context: the transport's workqueue, one event at a time.
 */
void rnbd_clt_sess_event(void *priv, enum trs_clt_event ev)
{
	struct rnbd_clt_sess *sess = priv;

	switch (ev) {
	case TRS_CLT_EV_RECONNECTING:
		pr_warn("session %s: lost its connection to the server; holding IO while reconnecting\n",
			sess->name);
		rnbd_clt_sess_set(sess, RNBD_CLT_SESS_RECONNECTING, true, false);
		break;
	case TRS_CLT_EV_RECONNECTED:
		/* the server forgot our device ids: a new epoch */
		mutex_lock(&sess->lock);
		sess->epoch++;
		mutex_unlock(&sess->lock);
		fallthrough;
	case TRS_CLT_EV_RESUMED:
		/*
		 * No IO with a stale device id: hold, then connected; the
		 * reopen work opens the devices of an older epoch again and
		 * releases the others.
		 */
		rnbd_clt_sess_set(sess, RNBD_CLT_SESS_CONNECTED, true, false);
		queue_work(system_long_wq, &sess->reopen_work);
		break;
	case TRS_CLT_EV_NOTICE:
		/* the server has news: a device changed size */
		queue_work(system_long_wq, &sess->size_work);
		break;
	case TRS_CLT_EV_LOST:
		pr_warn("session %s: still not connected; failing IO until it reconnects\n",
			sess->name);
		rnbd_clt_sess_set(sess, RNBD_CLT_SESS_LOST, false, false);
		break;
	case TRS_CLT_EV_DISCONNECTED:
		pr_warn("session %s: disconnected for good; its devices fail IO until unmapped\n",
			sess->name);
		rnbd_clt_sess_set(sess, RNBD_CLT_SESS_DEAD, false, true);
		break;
	}
}

/* The next held device to open again, referenced, or NULL. */
static struct rnbd_clt_dev *rnbd_clt_next_held(struct rnbd_clt_sess *sess)
{
	struct rnbd_clt_dev *dev, *found = NULL;

	mutex_lock(&sess->lock);
	if (sess->state != RNBD_CLT_SESS_CONNECTED)
		goto unlock;
	list_for_each_entry(dev, &sess->devs, node) {
		if (dev->state == RNBD_CLT_DEV_HELD) {
			found = dev;
			rnbd_clt_dev_get(dev);
			break;
		}
	}
unlock:
	mutex_unlock(&sess->lock);
	return found;
}

static bool rnbd_clt_transport_err(int err)
{
	return err == -ECONNABORTED || err == -ENOTCONN ||
	       err == -ETIMEDOUT || err == -ECONNRESET;
}

/*
 * Take the server's new open of @dev if it is the device we have: its id,
 * the epoch and its size; the caller makes it MAPPED.  @rsp passed
 * rnbd_clt_check_open_rsp().  Under sess->lock, @dev HELD or DISCONNECTED
 * with a disk (a DISCONNECTED one's stays until unmap, which cannot start
 * while its remap store runs).
 */
static int rnbd_clt_dev_reopened(struct rnbd_clt_dev *dev,
				 const struct rnbd_msg_open_rsp *rsp)
{
	struct rnbd_clt_sess *sess = dev->sess;

	lockdep_assert_held(&sess->lock);
	if (le16_to_cpu(rsp->logical_block_size) !=
	    queue_logical_block_size(dev->disk->queue)) {
		pr_err("%s: %s@%s changed its block size on the server\n",
		       dev->disk->disk_name, dev->path, sess->name);
		return -EMEDIUMTYPE;
	}
	dev->dev_id = le32_to_cpu(rsp->dev_id);
	dev->epoch = sess->epoch;
	__rnbd_clt_dev_srv_resized(dev, le64_to_cpu(rsp->nsectors));
	return 0;
}

/*
 * Open @dev again.  Returns false if the transport failed, so the next
 * reconnect has to try again.  A transport-like errno while the session
 * is still connected came from the server, and no reconnect follows: the
 * device fails, it is not held for ever.  The device may be unmapped
 * while the OPEN waits, its disk deleted: whether it still is MAPPED is
 * decided under sess->lock, and only then is its disk used.
 */
static bool rnbd_clt_reopen(struct rnbd_clt_dev *dev)
{
	struct rnbd_clt_sess *sess = dev->sess;
	struct rnbd_msg_open_rsp rsp;
	bool opened = false;
	int err;

	/* the server kept the session, and the device open in it */
	mutex_lock(&sess->lock);
	if (dev->epoch == sess->epoch) {
		if (dev->state == RNBD_CLT_DEV_HELD &&
		    sess->state == RNBD_CLT_SESS_CONNECTED)
			rnbd_clt_dev_change_state(dev, RNBD_CLT_DEV_MAPPED);
		mutex_unlock(&sess->lock);
		return true;
	}
	mutex_unlock(&sess->lock);

	err = rnbd_clt_send_open(dev, &rsp);
	if (rnbd_clt_transport_err(err) && !trs_clt_connected(sess->trs))
		return false;
	if (!err) {
		opened = true;
		err = rnbd_clt_check_open_rsp(dev, &rsp);
	}

	mutex_lock(&sess->lock);
	/* a held device has its disk (rnbd_clt_dev_change_state()) */
	if (dev->state == RNBD_CLT_DEV_HELD &&
	    sess->state == RNBD_CLT_SESS_CONNECTED) {
		err = err ?: rnbd_clt_dev_reopened(dev, &rsp);
		if (!err) {
			opened = false;
			pr_info("%s: %s@%s open again\n", dev->disk->disk_name,
				dev->path, sess->name);
			rnbd_clt_dev_change_state(dev, RNBD_CLT_DEV_MAPPED);
		} else {
			pr_err("%s: opening %s@%s again failed: %d; its IO fails until unmapped\n",
			       dev->disk->disk_name, dev->path, sess->name,
			       err);
			rnbd_clt_dev_change_state(dev,
						  RNBD_CLT_DEV_DISCONNECTED);
		}
	}
	mutex_unlock(&sess->lock);

	/*
	 * Opened, but not taken (the device was unmapped, or the session
	 * reconnected meanwhile): do not leave it open on the server.
	 */
	if (opened)
		rnbd_clt_send_close(dev, le32_to_cpu(rsp.dev_id));
	return true;
}

/**
 * rnbd_clt_reopen_work() - open the held devices again after a reconnect
 * @work: the session's reopen_work
 */
void rnbd_clt_reopen_work(struct work_struct *work)
{
	struct rnbd_clt_sess *sess = container_of(work, struct rnbd_clt_sess,
						  reopen_work);
	struct rnbd_clt_dev *dev;
	bool more = true;

	while (more && (dev = rnbd_clt_next_held(sess))) {
		more = rnbd_clt_reopen(dev);
		rnbd_clt_dev_put(dev);
	}
}

/**
 * rnbd_clt_dev_remap() - open a closed device again
 * @dev: the device, closed for good after a failed re-open (state
 *	"closed") while its session is connected
 *
 * On success the device is open again and its IO flows.
 *
 * Context: process context, sleeps; takes sess->lock.
 * Return: 0; -EALREADY if the device is open; -EBUSY if it is being
 * mapped; -ENODEV if it is being unmapped; -ENOTCONN if its session is not
 * connected; or the error of the open (the server's, a transport error,
 * -EMEDIUMTYPE for a device whose logical block size changed).
 */
int rnbd_clt_dev_remap(struct rnbd_clt_dev *dev)
{
	static const int errs[] = {
		[RNBD_CLT_DEV_MAPPING]		= -EBUSY,
		[RNBD_CLT_DEV_MAPPED]		= -EALREADY,
		[RNBD_CLT_DEV_HELD]		= -EALREADY,
		[RNBD_CLT_DEV_DISCONNECTED]	= 0,
		[RNBD_CLT_DEV_UNMAPPING]	= -ENODEV,
	};
	struct rnbd_clt_sess *sess = dev->sess;
	struct rnbd_msg_open_rsp rsp;
	bool opened;
	int err;

	mutex_lock(&sess->lock);
	err = errs[dev->state];
	if (!err && sess->state != RNBD_CLT_SESS_CONNECTED)
		err = -ENOTCONN;
	mutex_unlock(&sess->lock);
	if (err)
		return err;

	err = rnbd_clt_send_open(dev, &rsp);
	opened = !err;
	if (!err)
		err = rnbd_clt_check_open_rsp(dev, &rsp);
	if (!err) {
		mutex_lock(&sess->lock);
		/* unmapped, remapped or disconnected meanwhile */
		if (dev->state != RNBD_CLT_DEV_DISCONNECTED)
			err = errs[dev->state];
		else if (sess->state != RNBD_CLT_SESS_CONNECTED)
			err = -ENOTCONN;
		else
			err = rnbd_clt_dev_reopened(dev, &rsp);
		if (!err) {
			opened = false;
			rnbd_clt_dev_change_state(dev, RNBD_CLT_DEV_MAPPED);
		}
		mutex_unlock(&sess->lock);
	}
	if (opened)
		rnbd_clt_send_close(dev, le32_to_cpu(rsp.dev_id));
	if (err)
		pr_err("%s: remap of %s@%s failed: %d\n", dev->disk->disk_name,
		       dev->path, sess->name, err);
	else
		pr_info("%s: %s@%s open again (remap)\n", dev->disk->disk_name,
			dev->path, sess->name);
	return err;
}
