// SPDX-License-Identifier: GPL-2.0-only
/*
 * Test-only module: an rnbd server that lies about reads.  It serves one
 * made-up 1 MiB device (any OPEN path) on its own port, accepts writes
 * and flushes, and answers a read with fewer bytes than asked for as its
 * "mode" parameter says, with status 0: the client must fail such a read,
 * never hand the bytes the server did not send to the user.  Never load
 * it outside the test guest.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/module.h>
#include <linux/string.h>
#include <rnbd/proto.h>
#include <rnbd/trs.h>

#define RNBD_LIAR_SECTORS	2048	/* 1 MiB */

static ushort rnbd_liar_port = 1235;
module_param_named(port_nr, rnbd_liar_port, ushort, 0444);
MODULE_PARM_DESC(port_nr, "Port to listen on (default 1235)");

static char *rnbd_liar_mode = "short";
module_param_named(mode, rnbd_liar_mode, charp, 0444);
MODULE_PARM_DESC(mode, "How reads are answered: short (512 bytes fewer than asked, or 0 of 512), empty (0 bytes) or full (the truth: every byte 0xa5)");

static struct trs_srv_ctx *rnbd_liar_ctx;

static int rnbd_liar_sess_open(struct trs_srv_sess *sess, void **priv)
{
	*priv = sess;
	return 0;
}

static void rnbd_liar_sess_close(struct trs_srv_sess *sess, void *priv)
{
}

/* Bytes the answer to a read of @len bytes carries. */
static u32 rnbd_liar_read_len(u32 len)
{
	if (!strcmp(rnbd_liar_mode, "full"))
		return len;
	if (!strcmp(rnbd_liar_mode, "empty") || len <= SECTOR_SIZE)
		return 0;
	return len - SECTOR_SIZE;
}

static void rnbd_liar_open(struct trs_srv_req *req)
{
	struct rnbd_msg_open_rsp rsp = {
		.dev_id			= cpu_to_le32(1),
		.nsectors		= cpu_to_le64(RNBD_LIAR_SECTORS),
		.max_hw_sectors		= cpu_to_le32(256),
		.logical_block_size	= cpu_to_le16(SECTOR_SIZE),
		.physical_block_size	= cpu_to_le16(SECTOR_SIZE),
		.max_segments		= cpu_to_le16(128),
	};

	if (req->dir != DMA_FROM_DEVICE || req->data_len < sizeof(rsp)) {
		trs_srv_resp(req, -EPROTO, 0);
		return;
	}
	memcpy(req->data, &rsp, sizeof(rsp));
	trs_srv_resp(req, 0, sizeof(rsp));
}

static void rnbd_liar_request(void *priv, struct trs_srv_req *req)
{
	const struct rnbd_msg_hdr *hdr = req->usr_hdr;
	const struct rnbd_msg_io *io = req->usr_hdr;
	u32 len;

	if (req->usr_len < sizeof(*hdr)) {
		trs_srv_resp(req, -EPROTO, 0);
		return;
	}
	switch (le16_to_cpu(hdr->type)) {
	case RNBD_MSG_OPEN:
		rnbd_liar_open(req);
		return;
	case RNBD_MSG_IO:
		if (req->usr_len != sizeof(*io) || io->op != RNBD_OP_READ ||
		    req->dir != DMA_FROM_DEVICE)
			break;
		len = rnbd_liar_read_len(req->data_len);
		memset(req->data, 0xa5, len);
		trs_srv_resp(req, 0, len);
		return;
	default:
		break;
	}
	/* writes, flushes and closes: done */
	trs_srv_resp(req, 0, 0);
}

static const struct trs_srv_ops rnbd_liar_ops = {
	.sess_open	= rnbd_liar_sess_open,
	.sess_close	= rnbd_liar_sess_close,
	.request	= rnbd_liar_request,
};

static int __init rnbd_liar_init(void)
{
	rnbd_liar_ctx = trs_srv_open(&rnbd_liar_ops, rnbd_liar_port);
	if (IS_ERR(rnbd_liar_ctx))
		return PTR_ERR(rnbd_liar_ctx);
	pr_info("lying about reads (%s) on port %u\n", rnbd_liar_mode,
		rnbd_liar_port);
	return 0;
}

static void __exit rnbd_liar_exit(void)
{
	trs_srv_close(rnbd_liar_ctx);
}

module_init(rnbd_liar_init);
module_exit(rnbd_liar_exit);

MODULE_DESCRIPTION("rnbd test bed: a server that answers reads short");
MODULE_LICENSE("GPL");
