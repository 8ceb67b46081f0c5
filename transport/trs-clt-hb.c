// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport client: heartbeats.
 *
 * With TRS_CAP_HEARTBEAT negotiated, a connected path sends a heartbeat
 * on connection 0 every TRS_HB_INTERVAL_MS, at most one in flight (the
 * timer is trs-hb.c's).  If none came from the server for
 * heartbeat_timeout_sec, the path fails with -ETIMEDOUT and the usual
 * recovery reconnects it.  Heartbeats take no slot and no chunk, and are
 * not counted in the connection's wrs_posted.  Without heartbeats the
 * timer does not run: an unanswered request is blk-mq's to time out
 * (trs_clt_timeout()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include "trs-clt.h"

static unsigned int trs_clt_hb_timeout_sec = 10;
module_param_named(heartbeat_timeout_sec, trs_clt_hb_timeout_sec, uint, 0644);
MODULE_PARM_DESC(heartbeat_timeout_sec,
		 "seconds without a heartbeat from the server before a path reconnects (3..3600, default 10)");

static void trs_clt_hb_sent(struct ib_cq *cq, struct ib_wc *wc)
{
	struct trs_clt_conn *conn = cq->cq_context;
	unsigned long flags;

	if (trs_wc_failed(wc, "heartbeat")) {
		trs_clt_wc_fail(conn->path, wc, -ECONNRESET);
		return;
	}
	spin_lock_irqsave(&conn->lock, flags);
	conn->path->hb_busy = false;
	spin_unlock_irqrestore(&conn->lock, flags);
}

static int trs_clt_hb_send(struct trs_hb *hb)
{
	struct trs_clt_path *path = container_of(hb, struct trs_clt_path, hb);
	struct trs_clt_conn *conn = &path->conns[0];
	int err = 0;

	spin_lock_irq(&conn->lock);
	if (!conn->dead && !path->hb_busy) {
		err = trs_post_hb(conn->cm_id->qp, &path->hb_cqe, 0);
		path->hb_busy = !err;
	}
	spin_unlock_irq(&conn->lock);
	return err;
}

static void trs_clt_hb_lost(struct trs_hb *hb, unsigned int sec)
{
	struct trs_clt_path *path = container_of(hb, struct trs_clt_path, hb);

	/* sec 0: the heartbeat could not be posted */
	if (sec)
		trs_clt_err(path->sess, "no heartbeat from the server for %u s\n",
			    sec);
	trs_clt_fail(path, -ETIMEDOUT);
}

static const struct trs_hb_ops trs_clt_hb_ops = {
	.send	= trs_clt_hb_send,
	.lost	= trs_clt_hb_lost,
};

/**
 * trs_clt_hb_init() - prepare the heartbeat of a path, once
 * @path: new path
 */
void trs_clt_hb_init(struct trs_clt_path *path)
{
	trs_hb_init(&path->hb, trs_clt_wq, &trs_clt_hb_ops,
		    &trs_clt_hb_timeout_sec);
	path->hb_cqe.done = trs_clt_hb_sent;
}

/**
 * trs_clt_hb_start() - start heartbeats on a path just set up
 * @path: path whose setup succeeded
 *
 * If the server does not do heartbeats, the timer does not run.
 */
void trs_clt_hb_start(struct trs_clt_path *path)
{
	path->hb_on = path->conns[0].rsp.caps & cpu_to_le32(TRS_CAP_HEARTBEAT);
	path->notice_on = path->conns[0].rsp.caps &
			  cpu_to_le32(TRS_CAP_NOTICE);
	spin_lock_irq(&path->conns[0].lock);
	path->hb_busy = false;
	spin_unlock_irq(&path->conns[0].lock);
	if (path->hb_on)
		trs_hb_start(&path->hb);
}

/**
 * trs_clt_hb_stop() - stop the heartbeats of a path
 * @path: path being torn down
 */
void trs_clt_hb_stop(struct trs_clt_path *path)
{
	trs_hb_stop(&path->hb);
}

/**
 * trs_clt_hb_recv() - a receive on @conn that is not a reply
 * @conn: the connection
 * @wc: its successful completion
 *
 * Return: 0 if it was the server's heartbeat (its receive is posted
 * again), -EPROTO if it is no message we expect, or the error of the post.
 */
int trs_clt_hb_recv(struct trs_clt_conn *conn, const struct ib_wc *wc)
{
	struct trs_clt_path *path = conn->path;
	unsigned long flags;
	int err = 0;

	if (conn->idx || !path->hb_on ||
	    !trs_is_hb(wc, path->notice_on ? TRS_HB_NOTICE : 0))
		return -EPROTO;
	if (trs_imm_arg(be32_to_cpu(wc->ex.imm_data)) & TRS_HB_NOTICE)
		queue_work(trs_clt_wq, &path->sess->notice_work);
	spin_lock_irqsave(&conn->lock, flags);
	if (!conn->dead)
		err = trs_post_recvs(conn->cm_id->qp, &conn->recv_cqe, 1);
	spin_unlock_irqrestore(&conn->lock, flags);
	trs_hb_received(&path->hb);
	return err;
}
