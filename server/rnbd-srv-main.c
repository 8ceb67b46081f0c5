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

static ushort rnbd_srv_port_nr = TRS_DEFAULT_PORT;
module_param_named(port_nr, rnbd_srv_port_nr, ushort, 0444);
MODULE_PARM_DESC(port_nr, "Port the server listens on (default: "
		 __stringify(TRS_DEFAULT_PORT) ")");

char *rnbd_srv_search_path = "/";
module_param_named(dev_search_path, rnbd_srv_search_path, charp, 0444);
MODULE_PARM_DESC(dev_search_path,
		 "Directory client device paths are resolved beneath; nothing outside it can be opened (default: \"/\")");

static struct trs_srv_ctx *rnbd_srv_ctx;

static int rnbd_srv_open(struct rnbd_srv_sess *sess, struct trs_srv_req *req)
{
	const struct rnbd_msg_open *msg = req->usr_hdr;
	struct rnbd_msg_open_rsp rsp;
	struct rnbd_srv_dev *dev;

	if (req->usr_len != sizeof(*msg) || req->dir != DMA_FROM_DEVICE ||
	    req->data_len < sizeof(rsp) || msg->reserved0 || msg->reserved1)
		return -EPROTO;
	dev = rnbd_srv_dev_open(sess, msg);
	if (IS_ERR(dev)) {
		pr_info("session %s: opening %*pE failed: %ld\n",
			trs_srv_sess_name(sess->trs),
			(int)strnlen(msg->path, RNBD_PATH_MAX), msg->path,
			PTR_ERR(dev));
		return PTR_ERR(dev);
	}

	rnbd_srv_fill_open_rsp(dev, &rsp);
	memcpy(req->data, &rsp, sizeof(rsp));
	pr_info("session %s: opened %s %s as device %u\n",
		trs_srv_sess_name(sess->trs), msg->path,
		msg->access_mode == RNBD_ACCESS_RO ? "ro" : "rw", dev->id);
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
		err = rnbd_srv_open(sess, req);
		break;
	case RNBD_MSG_CLOSE:
		err = rnbd_srv_close(sess, req);
		break;
	default:
		err = -EOPNOTSUPP;
		break;
	}
	if (!err)
		return;
answer:
	pr_debug_ratelimited("session %s: message type %u refused: %d\n",
			     trs_srv_sess_name(sess->trs), type, err);
	trs_srv_resp(req, err, 0);
}

static int rnbd_srv_sess_open(struct trs_srv_sess *trs, void **priv)
{
	struct rnbd_srv_sess *sess;

	sess = TRS_FI(kzalloc(sizeof(*sess), GFP_KERNEL), NULL);
	if (!sess)
		return -ENOMEM;
	sess->trs = trs;
	xa_init_flags(&sess->devs, XA_FLAGS_ALLOC);
	mutex_init(&sess->lock);
	*priv = sess;
	pr_info("session %s: connected\n", trs_srv_sess_name(trs));
	return 0;
}

static void rnbd_srv_sess_close(struct trs_srv_sess *trs, void *priv)
{
	struct rnbd_srv_sess *sess = priv;

	rnbd_srv_dev_close_all(sess);
	xa_destroy(&sess->devs);
	mutex_destroy(&sess->lock);
	kfree(sess);
	pr_info("session %s: closed\n", trs_srv_sess_name(trs));
}

static const struct trs_srv_ops rnbd_srv_ops = {
	.sess_open	= rnbd_srv_sess_open,
	.sess_close	= rnbd_srv_sess_close,
	.request	= rnbd_srv_request,
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
	err = rnbd_srv_dev_init();
	if (err)
		goto exit_io;
	rnbd_srv_ctx = trs_srv_open(&rnbd_srv_ops, rnbd_srv_port_nr);
	if (IS_ERR(rnbd_srv_ctx)) {
		err = PTR_ERR(rnbd_srv_ctx);
		pr_err("listening on port %u failed: %d\n", rnbd_srv_port_nr, err);
		goto exit_dev;
	}
	pr_info("listening on port %u, dev_search_path %s\n",
		rnbd_srv_port_nr, rnbd_srv_search_path);
	return 0;

exit_dev:
	rnbd_srv_dev_exit();
exit_io:
	rnbd_srv_io_exit();
	return err;
}

static void __exit rnbd_srv_exit(void)
{
	/*
	 * Closes every session and waits for their requests (so for every
	 * bio), then for the devices the last bios close.
	 */
	trs_srv_close(rnbd_srv_ctx);
	rnbd_srv_dev_exit();
	rnbd_srv_io_exit();
}

module_init(rnbd_srv_init);
module_exit(rnbd_srv_exit);

MODULE_DESCRIPTION("rnbd server: exports block devices over RDMA");
MODULE_LICENSE("GPL");
