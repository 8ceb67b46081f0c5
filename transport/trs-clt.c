// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport client: sessions, their life cycle and the module.
 *
 * A session is CONNECTING while trs_clt_open() builds it, CONNECTED once
 * every connection and the chunk table are up, and DISCONNECTED after any
 * transport error (or trs_clt_close()).  Going DISCONNECTED queues the
 * close work, which tears the connections down, fails the requests in
 * flight and tells the user.  The session itself stays until
 * trs_clt_close().  There is no reconnect yet; it would move the session
 * back to CONNECTING and run trs_clt_sess_connect() again from a work.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include "trs-clt.h"

static struct workqueue_struct *trs_clt_wq;

/* guards trs_clt_sessions */
static DEFINE_MUTEX(trs_clt_mutex);
static LIST_HEAD(trs_clt_sessions);

/*
 * trs_clt_fail() - a connection of @sess failed with @err.  While
 * connecting, trs_clt_open() gives up; once connected, the close work tears
 * the session down.  Any context.
 */
void trs_clt_fail(struct trs_clt_sess *sess, int err)
{
	unsigned long flags;

	spin_lock_irqsave(&sess->state_lock, flags);
	switch (sess->state) {
	case TRS_CLT_CONNECTING:
		if (!sess->setup_err)
			sess->setup_err = err;
		break;
	case TRS_CLT_CONNECTED:
		sess->state = TRS_CLT_DISCONNECTED;
		if (!sess->closing)
			trs_clt_err(sess, "connection lost: %pe\n",
				    ERR_PTR(err));
		queue_work(trs_clt_wq, &sess->close_work);
		break;
	case TRS_CLT_DISCONNECTED:
		break;
	}
	spin_unlock_irqrestore(&sess->state_lock, flags);
	wake_up(&sess->setup_wq);
}

/*
 * trs_clt_wc_fail() - a completion on @sess failed with @err.  A flush
 * while connecting is not recorded: it only follows whatever moved the QP
 * to the error state, a reject or a disconnect whose CM event reports its
 * own cause, or a failed work request whose completion does, and the first
 * error recorded is the one trs_clt_open() returns.  A refused connect must
 * not read as -ECONNRESET because a receive posted before it flushed first.
 * The waiter of the chunk table or of the bounce registration sees a flush
 * through its own error field.
 */
void trs_clt_wc_fail(struct trs_clt_sess *sess, const struct ib_wc *wc,
		     int err)
{
	if (wc->status == IB_WC_WR_FLUSH_ERR &&
	    READ_ONCE(sess->state) == TRS_CLT_CONNECTING)
		return;
	trs_clt_fail(sess, err);
}

static void trs_clt_close_work(struct work_struct *work)
{
	struct trs_clt_sess *sess = container_of(work, struct trs_clt_sess,
						 close_work);
	bool notify;

	trs_clt_sess_disconnect(sess);

	spin_lock_irq(&sess->state_lock);
	notify = !sess->closing;
	spin_unlock_irq(&sess->state_lock);
	if (notify && sess->ops.event)
		sess->ops.event(sess->ops.priv, TRS_CLT_EV_DISCONNECTED);
}

static bool trs_clt_name_ok(const char *name)
{
	size_t len = strnlen(name, NAME_MAX);

	return len && len < NAME_MAX && !strchr(name, '/') &&
	       strcmp(name, ".") && strcmp(name, "..");
}

static __be16 *trs_clt_port(struct sockaddr_storage *addr)
{
	if (addr->ss_family == AF_INET)
		return &((struct sockaddr_in *)addr)->sin_port;
	return &((struct sockaddr_in6 *)addr)->sin6_port;
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
					       const struct sockaddr_storage *dst,
					       const struct trs_clt_ops *ops)
{
	struct trs_clt_sess *sess;
	int err = -ENOMEM;
	u32 i;

	sess = TRS_FI(kzalloc(sizeof(*sess), GFP_KERNEL), NULL);
	if (!sess)
		return ERR_PTR(-ENOMEM);
	sess->name = TRS_FI(kstrdup(name, GFP_KERNEL), NULL);
	sess->nr_conns = min_t(u32, nr_cpu_ids, TRS_MAX_CONNS);
	sess->conns = TRS_FI(kcalloc(sess->nr_conns, sizeof(*sess->conns),
				     GFP_KERNEL), NULL);
	if (!sess->name || !sess->conns)
		goto free_sess;

	sess->ops = *ops;
	sess->dst = *dst;
	if (!*trs_clt_port(&sess->dst))
		*trs_clt_port(&sess->dst) = htons(TRS_DEFAULT_PORT);
	uuid_gen(&sess->uuid);
	spin_lock_init(&sess->state_lock);
	sess->state = TRS_CLT_CONNECTING;
	init_waitqueue_head(&sess->setup_wq);
	INIT_WORK(&sess->close_work, trs_clt_close_work);
	for (i = 0; i < sess->nr_conns; i++) {
		sess->conns[i].sess = sess;
		sess->conns[i].idx = i;
		spin_lock_init(&sess->conns[i].lock);
	}

	mutex_lock(&trs_clt_mutex);
	err = trs_clt_find(name) ? -EEXIST : 0;
	if (!err)
		list_add_tail(&sess->entry, &trs_clt_sessions);
	mutex_unlock(&trs_clt_mutex);
	if (!err)
		return sess;

free_sess:
	kfree(sess->conns);
	kfree(sess->name);
	kfree(sess);
	return ERR_PTR(err);
}

static void trs_clt_sess_free(struct trs_clt_sess *sess)
{
	mutex_lock(&trs_clt_mutex);
	list_del(&sess->entry);
	mutex_unlock(&trs_clt_mutex);
	kfree(sess->conns);
	kfree(sess->name);
	kfree(sess);
}

/**
 * trs_clt_open() - connect a session to a server
 * @sessname: session name, unique on this host: 1..NAME_MAX-1 characters,
 *	no '/'; names the sysfs directory /sys/class/rtrs-client/<sessname>
 * @dst: server address (AF_INET or AF_INET6); port 0 means
 *	TRS_DEFAULT_PORT
 * @ops: user callbacks, copied
 *
 * Opens one connection per CPU and waits until all of them and the
 * server's chunk table are up; each step times out after
 * TRS_CONNECT_TIMEOUT_MS.  A session that fails later is not reconnected:
 * @ops->event reports it, possibly even before this returns.  Process
 * context, sleeps.
 *
 * Return: the session, or ERR_PTR(): -EINVAL bad arguments, -EEXIST name
 * in use, -EHOSTUNREACH or -ETIMEDOUT no route or no answer, -ECONNREFUSED
 * nothing listens, -EPROTO a malformed answer, -EOPNOTSUPP unusable RDMA
 * device, -ECONNRESET the server closed the session while it was set up,
 * or the errno the server rejected the session with.
 */
struct trs_clt_sess *trs_clt_open(const char *sessname,
				  const struct sockaddr_storage *dst,
				  const struct trs_clt_ops *ops)
{
	struct trs_clt_sess *sess;
	char addr[TRS_ADDR_LEN];
	int err;

	if (!sessname || !trs_clt_name_ok(sessname) || !dst || !ops ||
	    (dst->ss_family != AF_INET && dst->ss_family != AF_INET6))
		return ERR_PTR(-EINVAL);

	sess = trs_clt_sess_alloc(sessname, dst, ops);
	if (IS_ERR(sess))
		return sess;

	err = trs_clt_sess_connect(sess);
	if (err)
		goto free_sess;
	err = trs_clt_sysfs_add(sess);
	if (err)
		goto disconnect;

	spin_lock_irq(&sess->state_lock);
	err = sess->setup_err;
	if (!err)
		sess->state = TRS_CLT_CONNECTED;
	spin_unlock_irq(&sess->state_lock);
	if (err)
		goto remove_sysfs;

	trs_addr_print((struct sockaddr *)&sess->dst, addr, sizeof(addr));
	trs_clt_info(sess, "connected to %s port %u over %s: %u connections, queue depth %u, %u bytes and %u segments per request\n",
		     addr, ntohs(*trs_clt_port(&sess->dst)),
		     sess->hca_name, sess->nr_conns, sess->queue_depth,
		     sess->max_io_size, sess->max_segments);
	return sess;

remove_sysfs:
	trs_clt_sysfs_del(sess);
disconnect:
	trs_clt_sess_disconnect(sess);
free_sess:
	trs_addr_print((struct sockaddr *)&sess->dst, addr, sizeof(addr));
	trs_clt_err(sess, "cannot connect to %s port %u: %pe\n", addr,
		    ntohs(*trs_clt_port(&sess->dst)), ERR_PTR(err));
	trs_clt_sess_free(sess);
	return ERR_PTR(err);
}
EXPORT_SYMBOL_GPL(trs_clt_open);

/**
 * trs_clt_close() - disconnect and free a session
 * @sess: from trs_clt_open()
 *
 * Requests still in flight complete with -ECONNABORTED before this
 * returns.  The event callback may still run until then, so the caller
 * must not hold anything the callback needs, and must not call this from
 * the callback.  Process context, sleeps.
 */
void trs_clt_close(struct trs_clt_sess *sess)
{
	spin_lock_irq(&sess->state_lock);
	sess->closing = true;
	spin_unlock_irq(&sess->state_lock);

	trs_clt_fail(sess, -ESHUTDOWN);
	flush_work(&sess->close_work);
	trs_clt_sysfs_del(sess);
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
 * trs_clt_connected() - whether a session can take requests
 * @sess: from trs_clt_open()
 *
 * Return: true until the session lost its connections.
 */
bool trs_clt_connected(struct trs_clt_sess *sess)
{
	return READ_ONCE(sess->state) == TRS_CLT_CONNECTED;
}
EXPORT_SYMBOL_GPL(trs_clt_connected);

/**
 * trs_clt_sessname() - name of a session
 * @sess: from trs_clt_open()
 *
 * Return: the name given to trs_clt_open().
 */
const char *trs_clt_sessname(struct trs_clt_sess *sess)
{
	return sess->name;
}
EXPORT_SYMBOL_GPL(trs_clt_sessname);

/*
 * The device goes away: fail every session on it, then wait until their
 * close works released its resources.  Sessions still connecting give up
 * on their own; the CM also reports DEVICE_REMOVAL on their ids.
 */
static void trs_clt_remove_one(struct ib_device *dev, void *client_data)
{
	struct trs_clt_sess *sess;

	mutex_lock(&trs_clt_mutex);
	list_for_each_entry(sess, &trs_clt_sessions, entry)
		if (READ_ONCE(sess->ibdev) == dev)
			trs_clt_fail(sess, -ENODEV);
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
