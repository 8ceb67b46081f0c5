// SPDX-License-Identifier: GPL-2.0-only
/*
 * rnbd server: module, sessions and message dispatch.  Every request gets
 * exactly one answer: an error for a bad one, never a silent drop.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/limits.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "rnbd-srv.h"
#include "rnbd-srv-trace.h"

static ushort rnbd_srv_port_nr = TRS_DEFAULT_PORT;
module_param_named(port_nr, rnbd_srv_port_nr, ushort, 0444);
MODULE_PARM_DESC(port_nr, "Port the server listens on (default: "
		 __stringify(TRS_DEFAULT_PORT) ")");

char *rnbd_srv_search_path = "/";
module_param_named(dev_search_path, rnbd_srv_search_path, charp, 0444);
MODULE_PARM_DESC(dev_search_path,
		 "Directory client device paths (block devices and regular files) are resolved beneath; nothing outside it can be opened (default: \"/\")");

bool rnbd_srv_export_files;
module_param_named(file_exports, rnbd_srv_export_files, bool, 0644);
MODULE_PARM_DESC(file_exports,
		 "Export the regular files under dev_search_path (disk images) as well as its block devices; off, a regular file is refused with EOPNOTSUPP, since the default dev_search_path \"/\" would offer every file of the server (default: false)");

bool rnbd_srv_allow_busy;
module_param_named(allow_busy_devices, rnbd_srv_allow_busy, bool, 0644);
MODULE_PARM_DESC(allow_busy_devices,
		 "Open devices another kernel user holds exclusively (mounted, swap, dm or md member), and files others write, read-only; read-write stays refused (default: false)");

bool rnbd_srv_allow_rt_prio;
module_param_named(allow_rt_prio, rnbd_srv_allow_rt_prio, bool, 0644);
MODULE_PARM_DESC(allow_rt_prio,
		 "Submit IO of the real-time priority class as clients ask; else as best-effort of the same level (default: false)");

static unsigned int rnbd_srv_idle_sec = 60;
module_param_named(idle_session_sec, rnbd_srv_idle_sec, uint, 0644);
MODULE_PARM_DESC(idle_session_sec,
		 "Close a session that has no device open for this long, seconds; 0: never (default: 60)");

static struct trs_srv_ctx *rnbd_srv_ctx;

/*
 * Runs OPEN and CLOSE, not the connection's completion work, which serves
 * every device of the session and its heartbeats: a path lookup may hang
 * on a mount that hangs, the open or close of a device on the device.  Not
 * rnbd_srv_submit_wq either: under memory pressure its rescuer alone would
 * run both, and a hung OPEN would stall the resubmitted bios behind it.
 */
static struct workqueue_struct *rnbd_srv_admin_wq;

/**
 * struct rnbd_srv_admin - an OPEN or CLOSE queued on rnbd_srv_admin_wq
 * @work: runs it
 * @sess: session it arrived on, referenced until the work ends
 * @req: the request, answered by the work
 */
struct rnbd_srv_admin {
	struct work_struct	work;
	struct rnbd_srv_sess	*sess;
	struct trs_srv_req	*req;
};

static int rnbd_srv_open(struct rnbd_srv_sess *sess, struct trs_srv_req *req)
{
	const struct rnbd_msg_open *msg = req->usr_hdr;
	struct rnbd_msg_open_rsp rsp;
	int err;

	if (req->usr_len != sizeof(*msg) || req->dir != DMA_FROM_DEVICE ||
	    req->data_len < sizeof(rsp) || msg->reserved0 || msg->reserved1)
		return -EPROTO;
	err = rnbd_srv_dev_open(sess, msg, &rsp);
	trace_rnbd_srv_dev_open(sess, msg, err ? 0 : le32_to_cpu(rsp.dev_id),
				err);
	if (err) {
		pr_info_ratelimited("session %s: opening %*pE failed: %d\n",
				    trs_srv_sess_name(sess->trs),
				    (int)strnlen(msg->path, RNBD_PATH_MAX),
				    msg->path, err);
		return err;
	}

	memcpy(req->data, &rsp, sizeof(rsp));
	pr_info("session %s: opened %s %s as device %u\n",
		trs_srv_sess_name(sess->trs), msg->path,
		rnbd_access_mode_str(msg->access_mode),
		le32_to_cpu(rsp.dev_id));
	trs_srv_resp(req, 0, sizeof(rsp));
	return 0;
}

static int rnbd_srv_close(struct rnbd_srv_sess *sess, struct trs_srv_req *req)
{
	const struct rnbd_msg_close *msg = req->usr_hdr;
	u32 id = le32_to_cpu(msg->dev_id);
	int err;

	if (req->usr_len != sizeof(*msg) || req->dir != DMA_NONE ||
	    req->data_len)
		return -EPROTO;
	err = rnbd_srv_dev_close(sess, id);
	if (err)
		return err;
	pr_info("session %s: closed device %u\n",
		trs_srv_sess_name(sess->trs), id);
	trs_srv_resp(req, 0, 0);
	return 0;
}

/* Answer @req with @err; @type of 0 if its header is malformed. */
static void rnbd_srv_refuse(struct rnbd_srv_sess *sess,
			    struct trs_srv_req *req, u16 type, int err)
{
	pr_debug_ratelimited("session %s: message type %u refused: %d\n",
			     trs_srv_sess_name(sess->trs), type, err);
	trs_srv_resp(req, err, 0);
}

/**
 * rnbd_srv_sess_get() - take a reference on a session
 * @sess: session with a reference held already (by the caller's context)
 */
void rnbd_srv_sess_get(struct rnbd_srv_sess *sess)
{
	refcount_inc(&sess->ref);
}

/**
 * rnbd_srv_sess_put() - drop a reference; the last frees the session
 * @sess: session
 *
 * Context: process context.
 */
void rnbd_srv_sess_put(struct rnbd_srv_sess *sess)
{
	if (!refcount_dec_and_test(&sess->ref))
		return;
	/* an open still running holds a reference (its admin work's) */
	WARN_ON_ONCE(!list_empty(&sess->opening));
	xa_destroy(&sess->devs);
	mutex_destroy(&sess->lock);
	kfree(sess);
}

static void rnbd_srv_admin_work(struct work_struct *work)
{
	struct rnbd_srv_admin *admin = container_of(work, struct rnbd_srv_admin,
						    work);
	struct rnbd_srv_sess *sess = admin->sess;
	struct trs_srv_req *req = admin->req;
	const struct rnbd_msg_hdr *hdr = req->usr_hdr;
	u16 type = le16_to_cpu(hdr->type);
	int err;

	if (type == RNBD_MSG_OPEN)
		err = rnbd_srv_open(sess, req);
	else
		err = rnbd_srv_close(sess, req);
	if (err)
		rnbd_srv_refuse(sess, req, type, err);
	rnbd_srv_sess_put(sess);
	/*
	 * Freed last, not first: while this function runs (an OPEN may wait
	 * for ever on its file), the workqueue runs a work at the same
	 * address with the same function only after it, and the next
	 * admin's kmalloc() may well return this one's memory.
	 */
	kfree(admin);
}

/*
 * Hand an OPEN or CLOSE to rnbd_srv_admin_wq.  The session reference keeps
 * @sess for the work even if the transport closes the session first.
 * GFP_NOIO: the connection's completion work, which IO completions need,
 * must not wait for IO in reclaim (as for the bios).
 */
static int rnbd_srv_queue_admin(struct rnbd_srv_sess *sess,
				struct trs_srv_req *req)
{
	struct rnbd_srv_admin *admin;

	admin = TRS_FI(kmalloc(sizeof(*admin), GFP_NOIO), NULL);
	if (!admin)
		return -ENOMEM;
	INIT_WORK(&admin->work, rnbd_srv_admin_work);
	admin->sess = sess;
	admin->req = req;
	rnbd_srv_sess_get(sess);
	queue_work(rnbd_srv_admin_wq, &admin->work);
	return 0;
}

static void rnbd_srv_request(void *priv, struct trs_srv_req *req)
{
	const struct rnbd_msg_hdr *hdr = req->usr_hdr;
	struct rnbd_srv_sess *sess = priv;
	int err = -EPROTO;
	u16 type = 0;

	if (req->usr_len < sizeof(*hdr) || hdr->version != RNBD_PROTO_VER ||
	    hdr->reserved)
		goto answer;

	type = le16_to_cpu(hdr->type);
	switch (type) {
	case RNBD_MSG_IO:
		err = rnbd_srv_io(sess, req);
		break;
	case RNBD_MSG_OPEN:
	case RNBD_MSG_CLOSE:
		err = rnbd_srv_queue_admin(sess, req);
		break;
	case RNBD_MSG_INFO:
		err = rnbd_srv_info(sess, req);
		break;
	default:
		err = -EOPNOTSUPP;
		break;
	}
	if (!err)
		return;
answer:
	rnbd_srv_refuse(sess, req, type, err);
}

/**
 * rnbd_srv_idle_arm() - start the idle timer of a session with no device
 * @sess: session; its lock held or not yet published
 */
void rnbd_srv_idle_arm(struct rnbd_srv_sess *sess)
{
	unsigned int sec = READ_ONCE(rnbd_srv_idle_sec);

	if (sec)
		/* sysfs takes any uint: no wrap of sec * HZ */
		mod_delayed_work(system_wq, &sess->idle_work,
				 (unsigned long)sec * HZ);
}

/*
 * A session that opens no device holds its chunks for nothing: our client
 * opens one right after connecting (and closes the session with its last
 * device), so only a client that is not ours, or stuck, gets here.
 */
static void rnbd_srv_idle_work(struct work_struct *work)
{
	struct rnbd_srv_sess *sess = container_of(to_delayed_work(work),
						  struct rnbd_srv_sess,
						  idle_work);
	bool idle;

	mutex_lock(&sess->lock);
	idle = !sess->closed && xa_empty(&sess->devs);
	/* an OPEN still queued holds a reference: wait for its answer */
	if (idle && refcount_read(&sess->ref) > 1) {
		rnbd_srv_idle_arm(sess);
		idle = false;
	}
	mutex_unlock(&sess->lock);
	if (idle)
		trs_srv_sess_close(sess->trs, "no device open for idle_session_sec");
}

static int rnbd_srv_sess_open(struct trs_srv_sess *trs, void **priv)
{
	struct rnbd_srv_sess *sess;

	sess = TRS_FI(kzalloc(sizeof(*sess), GFP_KERNEL), NULL);
	if (!sess)
		return -ENOMEM;
	sess->trs = trs;
	xa_init_flags(&sess->devs, XA_FLAGS_ALLOC);
	INIT_LIST_HEAD(&sess->opening);
	mutex_init(&sess->lock);
	refcount_set(&sess->ref, 1);
	INIT_DELAYED_WORK(&sess->idle_work, rnbd_srv_idle_work);
	INIT_DELAYED_WORK(&sess->size_work, rnbd_srv_size_work);
	rnbd_srv_idle_arm(sess);
	rnbd_srv_size_arm(sess);
	rnbd_srv_acl_sess_add(sess);
	*priv = sess;
	if (trs_srv_sess_hostname(trs)[0])
		pr_info("session %s: connected, host %s\n",
			trs_srv_sess_name(trs), trs_srv_sess_hostname(trs));
	else
		pr_info("session %s: connected\n", trs_srv_sess_name(trs));
	return 0;
}

/*
 * An OPEN or CLOSE still queued runs later, and one whose lookup or open
 * hangs is not waited for: it finds the session closed (an OPEN closes
 * what it opened), and frees it if it is last.
 */
static void rnbd_srv_sess_close(struct trs_srv_sess *trs, void *priv)
{
	struct rnbd_srv_sess *sess = priv;

	/* it notices the transport session, gone after this */
	cancel_delayed_work_sync(&sess->size_work);
	rnbd_srv_acl_sess_del(sess);
	/* closed first: nothing arms the idle timer again */
	rnbd_srv_dev_close_all(sess);
	cancel_delayed_work_sync(&sess->idle_work);
	rnbd_srv_sess_put(sess);
	pr_info("session %s: closed\n", trs_srv_sess_name(trs));
}

static const struct trs_srv_ops rnbd_srv_ops = {
	.sess_open	= rnbd_srv_sess_open,
	.sess_close	= rnbd_srv_sess_close,
	.request	= rnbd_srv_request,
	.host_key	= rnbd_srv_host_key,
};

static int __init rnbd_srv_init(void)
{
	int err;

	rnbd_proto_build_checks();
	if (rnbd_srv_search_path[0] != '/' ||
	    strnlen(rnbd_srv_search_path, PATH_MAX) >= PATH_MAX) {
		pr_err("dev_search_path must be an absolute path\n");
		return -EINVAL;
	}
	err = rnbd_srv_io_init();
	if (err)
		return err;
	err = rnbd_srv_file_init();
	if (err)
		goto exit_io;
	err = rnbd_srv_dev_init();
	if (err)
		goto exit_file;
	err = rnbd_srv_sysfs_init();
	if (err)
		goto exit_dev;
	rnbd_srv_admin_wq = alloc_workqueue("rnbd_srv_admin", 0, 0);
	if (!rnbd_srv_admin_wq) {
		err = -ENOMEM;
		goto exit_sysfs;
	}
	rnbd_srv_ctx = trs_srv_open(&rnbd_srv_ops, rnbd_srv_port_nr);
	if (IS_ERR(rnbd_srv_ctx)) {
		err = PTR_ERR(rnbd_srv_ctx);
		pr_err("listening on port %u failed: %d\n", rnbd_srv_port_nr, err);
		goto destroy_admin_wq;
	}
	pr_info("listening on port %u, dev_search_path %s\n",
		rnbd_srv_port_nr, rnbd_srv_search_path);
	if (!rnbd_srv_acl_listed())
		pr_warn("exports=all: every peer that reaches port %u may open everything under %s, read-write\n",
			rnbd_srv_port_nr, rnbd_srv_search_path);
	return 0;

destroy_admin_wq:
	destroy_workqueue(rnbd_srv_admin_wq);
exit_sysfs:
	rnbd_srv_sysfs_exit();
exit_dev:
	rnbd_srv_dev_exit();
exit_file:
	rnbd_srv_file_exit();
exit_io:
	rnbd_srv_io_exit();
	return err;
}

static void __exit rnbd_srv_exit(void)
{
	/*
	 * Closes every session and waits for their requests (so for every
	 * bio, file IO, OPEN and CLOSE), then for the admin works still returning
	 * from their answers, then for the devices the last bios close;
	 * their sysfs directories are gone then.
	 */
	trs_srv_close(rnbd_srv_ctx);
	destroy_workqueue(rnbd_srv_admin_wq);
	rnbd_srv_dev_exit();
	rnbd_srv_sysfs_exit();
	rnbd_srv_acl_exit();
	rnbd_srv_file_exit();
	rnbd_srv_io_exit();
}

module_init(rnbd_srv_init);
module_exit(rnbd_srv_exit);

MODULE_DESCRIPTION("rnbd server: exports block devices and files over RDMA");
MODULE_LICENSE("GPL");
