// SPDX-License-Identifier: GPL-2.0-only
/*
 * rnbd client: module, sessions and control messages.
 *
 * A session is a transport session plus one blk-mq tag set that all its
 * disks share (queue_depth = transport slots, one hardware queue per
 * connection).  OPEN and CLOSE travel as passthrough requests on an admin
 * queue of the same tag set, on its reserved tags, so a blk-mq tag is the
 * transport slot of every message and there is no second allocator.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/ipv6.h>

#include <rnbd-compat.h>
#include <rnbd/trs-proto.h>

#include "rnbd-clt.h"

/* The request timeout of OPEN, CLOSE and INFO (the admin queue's). */
#define RNBD_CLT_ADMIN_TIMEOUT	(30 * HZ)

static LIST_HEAD(rnbd_clt_sessions);
/* Guards rnbd_clt_sessions and serialises session creation. */
static DEFINE_MUTEX(rnbd_clt_sess_mutex);

/**
 * struct rnbd_clt_admin - one OPEN, CLOSE or INFO exchange
 * @done: completed by the request, which touches nothing of this after:
 *	rnbd_clt_admin_exec(), which always waits for it, frees it.  The
 *	timeout handler, which may run while the request completes, touches
 *	only the request.
 * @status: 0 or the errno of the transport or the server
 * @msg: the message
 * @msg_len: its length
 * @sg: describes @rsp
 * @rsp: receives the server's open or info response (DMA target, own
 *	cache lines)
 */
struct rnbd_clt_admin {
	struct completion	done;
	int			status;
	union {
		struct rnbd_msg_open	open;
		struct rnbd_msg_close	close;
		struct rnbd_msg_info	info;
	} msg;
	u16			msg_len;
	struct scatterlist	sg;
	struct rnbd_msg_open_rsp rsp ____cacheline_aligned;
};

static struct rnbd_clt_admin *rnbd_clt_admin_alloc(u16 type, u16 msg_len)
{
	struct rnbd_clt_admin *adm;

	adm = TRS_FI(kzalloc(sizeof(*adm), GFP_KERNEL), NULL);
	if (!adm)
		return NULL;
	init_completion(&adm->done);
	adm->msg.open.hdr.type = cpu_to_le16(type);
	adm->msg.open.hdr.version = RNBD_PROTO_VER;
	adm->msg_len = msg_len;
	return adm;
}

static enum rq_end_io_ret rnbd_clt_admin_end_io(struct request *rq,
						blk_status_t sts,
						const struct io_comp_batch *iob)
{
	struct rnbd_clt_iu *iu = blk_mq_rq_to_pdu(rq);
	struct rnbd_clt_admin *adm = rq->end_io_data;

	if (READ_ONCE(iu->timed_out))
		adm->status = -ETIMEDOUT;
	else
		adm->status = iu->status ?: blk_status_to_errno(sts);
	complete(&adm->done);
	return RQ_END_IO_FREE;
}

RNBD_RQ_END_IO_DEFINE(rnbd_clt_admin_end_io);

static const char *rnbd_clt_admin_name(const struct rnbd_clt_iu *iu)
{
	switch (le16_to_cpu(iu->msg.hdr.type)) {
	case RNBD_MSG_OPEN:
		return "OPEN";
	case RNBD_MSG_INFO:
		return "INFO";
	default:
		return "CLOSE";
	}
}

/**
 * rnbd_clt_admin_timeout() - blk-mq's timeout of an admin request
 * @sess: its session
 * @rq: the request, on @sess->admin_q, after RNBD_CLT_ADMIN_TIMEOUT
 *
 * Unlike a disk request, which takes its own path down, an admin request
 * unanswered reconnects the whole session: the server then forgets what
 * it did for it, so a late OPEN leaves nothing open.  The transport hands
 * the request back, which fails with -ETIMEDOUT.  The answer may come
 * while this runs, and its waiter free the exchange (rq->end_io_data):
 * only the request is touched here (TRS_FI_DELAY() widens that window
 * for the admin-timeout-race case).
 */
void rnbd_clt_admin_timeout(struct rnbd_clt_sess *sess, struct request *rq)
{
	struct rnbd_clt_iu *iu = blk_mq_rq_to_pdu(rq);

	TRS_FI_DELAY();

	if (!trs_clt_connected(sess->trs))
		return;
	pr_warn("session %s: no answer to %s for %u s; reconnecting\n",
		sess->name, rnbd_clt_admin_name(iu), rq->timeout / HZ);
	WRITE_ONCE(iu->timed_out, true);
	trs_clt_recover(sess->trs, -ETIMEDOUT);
}

/*
 * Send @adm on a reserved tag and wait for the answer, or for the request
 * timeout (rnbd_clt_admin_timeout()); the server's answer to @rsp, if
 * any.  Frees @adm.
 */
static int rnbd_clt_admin_exec(struct rnbd_clt_sess *sess,
			       struct rnbd_clt_admin *adm,
			       struct rnbd_msg_open_rsp *rsp)
{
	struct rnbd_clt_iu *iu;
	struct request *rq;
	int err;

	rq = blk_mq_alloc_request(sess->admin_q,
				  rsp ? REQ_OP_DRV_IN : REQ_OP_DRV_OUT,
				  BLK_MQ_REQ_RESERVED);
	if (IS_ERR(rq)) {
		kfree(adm);
		return PTR_ERR(rq);
	}

	iu = blk_mq_rq_to_pdu(rq);
	iu->status = 0;
	iu->timed_out = false;
	/* the timeout handler's, which must not touch @adm */
	iu->msg.hdr.type = adm->msg.open.hdr.type;
	iu->trs = (struct trs_clt_io) {
		.dir = DMA_NONE,
		.usr_hdr = &adm->msg,
		.usr_len = adm->msg_len,
		.done = rnbd_clt_io_done,
	};
	if (rsp) {
		sg_init_one(&adm->sg, &adm->rsp, sizeof(adm->rsp));
		iu->trs.dir = DMA_FROM_DEVICE;
		iu->trs.sgl = &adm->sg;
		iu->trs.sg_cnt = 1;
		iu->trs.data_len = sizeof(adm->rsp);
	}
	rq->end_io = RNBD_RQ_END_IO(rnbd_clt_admin_end_io);
	rq->end_io_data = adm;
	blk_execute_rq_nowait(rq, false);

	wait_for_completion(&adm->done);
	err = adm->status;
	if (!err && rsp)
		*rsp = adm->rsp;
	kfree(adm);
	return err;
}

/**
 * rnbd_clt_send_open() - open @dev's path on the server
 * @dev: device being mapped
 * @rsp: receives the server's answer (not yet validated)
 *
 * Context: process context, sleeps.
 * Return: 0, the server's negative errno, or a transport error.
 */
int rnbd_clt_send_open(struct rnbd_clt_dev *dev, struct rnbd_msg_open_rsp *rsp)
{
	struct rnbd_clt_admin *adm;
	size_t len = strlen(dev->path);

	adm = rnbd_clt_admin_alloc(RNBD_MSG_OPEN, sizeof(adm->msg.open));
	if (!adm)
		return -ENOMEM;
	adm->msg.open.access_mode = dev->access_mode;
	adm->msg.open.path_len = cpu_to_le16(len);
	memcpy(adm->msg.open.path, dev->path, len);
	return rnbd_clt_admin_exec(dev->sess, adm, rsp);
}

/**
 * rnbd_clt_send_info() - ask the server what @dev is like now
 * @dev: device open on the server
 * @dev_id: its id there
 * @rsp: receives the server's answer (not yet validated)
 *
 * Context: process context, sleeps.
 * Return: 0, the server's negative errno, or a transport error.
 */
int rnbd_clt_send_info(struct rnbd_clt_dev *dev, u32 dev_id,
		       struct rnbd_msg_open_rsp *rsp)
{
	struct rnbd_clt_admin *adm;

	adm = rnbd_clt_admin_alloc(RNBD_MSG_INFO, sizeof(adm->msg.info));
	if (!adm)
		return -ENOMEM;
	adm->msg.info.dev_id = cpu_to_le32(dev_id);
	return rnbd_clt_admin_exec(dev->sess, adm, rsp);
}

/**
 * rnbd_clt_send_close() - close @dev on the server, best effort
 * @dev: device opened with rnbd_clt_send_open()
 * @dev_id: the id that open returned
 *
 * Nothing is sent on a disconnected session: the server closed the
 * device when it lost the session.
 *
 * Context: process context, sleeps.
 */
void rnbd_clt_send_close(struct rnbd_clt_dev *dev, u32 dev_id)
{
	struct rnbd_clt_sess *sess = dev->sess;
	struct rnbd_clt_admin *adm;
	int err = -ENOMEM;

	if (!trs_clt_connected(sess->trs))
		return;
	adm = rnbd_clt_admin_alloc(RNBD_MSG_CLOSE, sizeof(adm->msg.close));
	if (adm) {
		adm->msg.close.dev_id = cpu_to_le32(dev_id);
		err = rnbd_clt_admin_exec(sess, adm, NULL);
	}
	if (err)
		pr_warn("%s@%s: closing the device on the server failed: %d\n",
			dev->path, sess->name, err);
}

static int rnbd_clt_sess_check_attrs(const struct rnbd_clt_sess *sess)
{
	const struct trs_clt_attrs *a = &sess->attrs;

	if (a->queue_depth <= RNBD_CLT_RESERVED_TAGS ||
	    a->queue_depth > TRS_MAX_QUEUE_DEPTH || !a->nr_conns ||
	    a->max_io_size < PAGE_SIZE || !a->max_segments) {
		pr_err("session %s: unusable transport limits (queue_depth %u, max_io_size %u, max_segments %u, nr_conns %u)\n",
		       sess->name, a->queue_depth, a->max_io_size,
		       a->max_segments, a->nr_conns);
		return -EPROTO;
	}
	return 0;
}

static int rnbd_clt_sess_alloc_tags(struct rnbd_clt_sess *sess)
{
	struct blk_mq_tag_set *set = &sess->tag_set;
	int err;

	set->ops = &rnbd_clt_mq_ops;
	set->nr_hw_queues = sess->attrs.nr_conns;
	set->queue_depth = sess->attrs.queue_depth;
	set->reserved_tags = RNBD_CLT_RESERVED_TAGS;
	set->numa_node = NUMA_NO_NODE;
	set->cmd_size = struct_size((struct rnbd_clt_iu *)NULL, first_sgl,
				    RNBD_CLT_INLINE_SG_CNT);
	/*
	 * The tags are shared by the hardware queues, which would give the
	 * disks mq-deadline; the far end has its own scheduler, so none by
	 * default, like NVMe.
	 */
	set->flags = RNBD_BLK_MQ_F_SHOULD_MERGE | BLK_MQ_F_TAG_HCTX_SHARED |
		     BLK_MQ_F_NO_SCHED_BY_DEFAULT;
	set->driver_data = sess;
	err = TRS_FI(blk_mq_alloc_tag_set(set), -ENOMEM);
	if (err)
		return err;

	sess->admin_q = TRS_FI(blk_mq_alloc_queue(set, NULL, NULL),
			       ERR_PTR(-ENOMEM));
	if (IS_ERR(sess->admin_q)) {
		err = PTR_ERR(sess->admin_q);
		blk_mq_free_tag_set(set);
		return err;
	}
	blk_queue_rq_timeout(sess->admin_q, RNBD_CLT_ADMIN_TIMEOUT);
	return 0;
}

static void rnbd_clt_sess_free_tags(struct rnbd_clt_sess *sess)
{
	blk_mq_destroy_queue(sess->admin_q);
	blk_put_queue(sess->admin_q);
	blk_mq_free_tag_set(&sess->tag_set);
}

/* Called with rnbd_clt_sess_mutex held. */
static struct rnbd_clt_sess *
rnbd_clt_sess_create(const struct rnbd_clt_map_opts *opts)
{
	char host[TRS_HOSTNAME_LEN];
	struct rnbd_clt_sess *sess;
	unsigned int i;
	int err;

	sess = TRS_FI(kzalloc(sizeof(*sess), GFP_KERNEL), NULL);
	if (!sess)
		return ERR_PTR(-ENOMEM);
	kref_init(&sess->ref);
	mutex_init(&sess->lock);
	INIT_LIST_HEAD(&sess->devs);
	strscpy(sess->name, opts->sessname, sizeof(sess->name));
	sess->dst = opts->paths[0].dst;
	sess->state = RNBD_CLT_SESS_CONNECTED;
	INIT_WORK(&sess->reopen_work, rnbd_clt_reopen_work);
	INIT_WORK(&sess->size_work, rnbd_clt_size_work);
	sess->trs_ops.priv = sess;
	sess->trs_ops.event = rnbd_clt_sess_event;
	sess->trs_ops.get_key = rnbd_clt_host_key;
	rnbd_clt_host_name(host);
	sess->trs_ops.hostname = host;

	sess->trs = trs_clt_open(sess->name, &opts->paths[0], &sess->trs_ops);
	/* copied by the transport */
	sess->trs_ops.hostname = NULL;
	if (IS_ERR(sess->trs)) {
		err = PTR_ERR(sess->trs);
		pr_err("session %s: connecting to %pISpc failed: %d\n",
		       sess->name, &sess->dst, err);
		goto free_sess;
	}
	for (i = 1; i < opts->nr_paths; i++) {
		err = trs_clt_add_path(sess->trs, &opts->paths[i]);
		if (err) {
			pr_err("session %s: adding its path %u to %pISpc failed: %d\n",
			       sess->name, i, &opts->paths[i].dst, err);
			goto close_trs;
		}
	}
	trs_clt_query(sess->trs, &sess->attrs);
	err = rnbd_clt_sess_check_attrs(sess) ?: rnbd_clt_sess_alloc_tags(sess);
	if (err)
		goto close_trs;

	list_add(&sess->node, &rnbd_clt_sessions);
	pr_info("session %s: connected to %pISpc (queue_depth %u, max_io_size %u, %u connections, %u paths)\n",
		sess->name, &sess->dst, sess->attrs.queue_depth,
		sess->attrs.max_io_size, sess->attrs.nr_conns, opts->nr_paths);
	return sess;

close_trs:
	trs_clt_close(sess->trs);
	/*
	 * An event between trs_clt_open() and here (a reconnect of a path,
	 * a notice) may have queued a work; none can come after the close.
	 */
	cancel_work_sync(&sess->reopen_work);
	cancel_work_sync(&sess->size_work);
free_sess:
	mutex_destroy(&sess->lock);
	kfree(sess);
	return ERR_PTR(err);
}

/* Every path= of @opts is a path of @sess (what tools send back). */
static int rnbd_clt_sess_check_paths(struct rnbd_clt_sess *sess,
				     const struct rnbd_clt_map_opts *opts)
{
	const struct trs_clt_path_addr *p;
	unsigned int i;

	for (i = 0; i < opts->nr_paths; i++) {
		p = &opts->paths[i];
		if (trs_clt_has_path(sess->trs, p))
			continue;
		if (p->src.ss_family != AF_UNSPEC)
			pr_err("map_device: session %s has no path from %pISc to %pISpc (its path: to %pISpc)\n",
			       sess->name, &p->src, &p->dst, &sess->dst);
		else
			pr_err("map_device: session %s has no path to %pISpc (its path: to %pISpc)\n",
			       sess->name, &p->dst, &sess->dst);
		return -EINVAL;
	}
	return 0;
}

/**
 * rnbd_clt_sess_get() - find the session named in @opts or create it
 * @opts: parsed map request; a path is required to create a session
 *	(the first connects it, the others are added to it), and paths
 *	given for an existing session must be its own
 *
 * Creating a session connects it, with rnbd_clt_sess_mutex held: other
 * maps and the release of other sessions wait for the connect.
 *
 * Context: process context, sleeps.
 * Return: a referenced session or an ERR_PTR: -EINVAL for a missing or
 * different address, a transport error if a connect fails (-EOPNOTSUPP
 * for several paths to a server without multipath).
 */
struct rnbd_clt_sess *rnbd_clt_sess_get(const struct rnbd_clt_map_opts *opts)
{
	struct rnbd_clt_sess *sess;

	mutex_lock(&rnbd_clt_sess_mutex);
	list_for_each_entry(sess, &rnbd_clt_sessions, node) {
		if (strcmp(sess->name, opts->sessname))
			continue;
		if (rnbd_clt_sess_check_paths(sess, opts))
			sess = ERR_PTR(-EINVAL);
		else
			kref_get(&sess->ref);
		goto unlock;
	}
	if (opts->nr_paths) {
		sess = rnbd_clt_sess_create(opts);
	} else {
		pr_err("map_device: session %s does not exist and no path= was given\n",
		       opts->sessname);
		sess = ERR_PTR(-EINVAL);
	}
unlock:
	mutex_unlock(&rnbd_clt_sess_mutex);
	return sess;
}

/* Called with rnbd_clt_sess_mutex held; releases it. */
static void rnbd_clt_sess_release(struct kref *ref)
{
	struct rnbd_clt_sess *sess = container_of(ref, struct rnbd_clt_sess, ref);

	list_del(&sess->node);
	mutex_unlock(&rnbd_clt_sess_mutex);

	pr_info("session %s: closing\n", sess->name);
	/*
	 * Every device is unlinked, but a work may still hold one that was
	 * unmapped while it waited for the server, and send on the transport
	 * and the admin queue (a CLOSE after a re-OPEN it did not take): it
	 * ends within RNBD_CLT_ADMIN_TIMEOUT per message.  An event until
	 * the close may queue a work again; with no device it touches
	 * nothing but the empty list, and is cancelled after the close.
	 */
	cancel_work_sync(&sess->reopen_work);
	cancel_work_sync(&sess->size_work);
	/*
	 * The admin queue's timeout handler may still run for a request whose
	 * answer completed it under the handler, and whose caller then let
	 * the session go: it uses the transport session, so it ends first.
	 * No admin request is in flight: every caller waits for its own.
	 */
	blk_sync_queue(sess->admin_q);
	/*
	 * Not the mirror of setup: closing the transport first completes every
	 * request still in flight, so freezing the admin queue below cannot
	 * wait forever.
	 */
	trs_clt_close(sess->trs);
	/* no event after the close: nothing queues the works again */
	cancel_work_sync(&sess->reopen_work);
	cancel_work_sync(&sess->size_work);
	rnbd_clt_sess_free_tags(sess);
	mutex_destroy(&sess->lock);
	kfree(sess);
}

/**
 * rnbd_clt_sess_put() - drop a session reference
 * @sess: session from rnbd_clt_sess_get()
 *
 * The last reference closes the transport session and frees the tag set.
 *
 * Context: process context, sleeps.
 */
void rnbd_clt_sess_put(struct rnbd_clt_sess *sess)
{
	kref_put_mutex(&sess->ref, rnbd_clt_sess_release, &rnbd_clt_sess_mutex);
}

static struct rnbd_clt_dev *rnbd_clt_first_dev(struct rnbd_clt_sess *sess)
{
	struct rnbd_clt_dev *dev, *found = NULL;

	mutex_lock(&sess->lock);
	list_for_each_entry(dev, &sess->devs, node) {
		if (dev->state != RNBD_CLT_DEV_UNMAPPING) {
			found = dev;
			break;
		}
	}
	mutex_unlock(&sess->lock);
	return found;
}

/*
 * Module exit: force-unmap every device.  No map or unmap runs concurrently:
 * both hold a module reference while they work, and exit only runs once
 * the module has none.
 */
static void rnbd_clt_unmap_all(void)
{
	struct rnbd_clt_sess *sess;
	struct rnbd_clt_dev *dev;

	mutex_lock(&rnbd_clt_sess_mutex);
	while ((sess = list_first_entry_or_null(&rnbd_clt_sessions,
						struct rnbd_clt_sess, node))) {
		kref_get(&sess->ref);
		mutex_unlock(&rnbd_clt_sess_mutex);
		while ((dev = rnbd_clt_first_dev(sess)))
			rnbd_clt_unmap_device(dev, true, NULL);
		rnbd_clt_sess_put(sess);
		mutex_lock(&rnbd_clt_sess_mutex);
	}
	mutex_unlock(&rnbd_clt_sess_mutex);
}

static int __init rnbd_clt_init(void)
{
	int err;

	rnbd_proto_build_checks();
	BUILD_BUG_ON(sizeof(struct rnbd_msg_open) > TRS_MAX_USR_HDR);

	err = rnbd_clt_dev_init();
	if (err)
		return err;
	err = rnbd_clt_sysfs_init();
	if (err)
		rnbd_clt_dev_exit();
	return err;
}

static void __exit rnbd_clt_exit(void)
{
	rnbd_clt_unmap_all();
	rnbd_clt_sysfs_exit();
	rnbd_clt_dev_exit();
	rnbd_clt_host_exit();
}

module_init(rnbd_clt_init);
module_exit(rnbd_clt_exit);

MODULE_DESCRIPTION("rnbd client: remote block devices over RDMA");
MODULE_LICENSE("GPL");
