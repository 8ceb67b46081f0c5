// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport server: heartbeats.
 *
 * With TRS_CAP_HEARTBEAT negotiated, each live path sends a heartbeat on
 * its connection 0 every TRS_HB_INTERVAL_MS, at most one in flight (the
 * timer is trs-hb.c's).  If none came from the client for
 * heartbeat_timeout_sec the path is closed; with the session's last path
 * the session goes too: its chunks are freed and its user closes what the
 * client had open, so a client that vanished (crashed, powered off, cut
 * off) does not keep them for ever.  The timer runs from the transport's
 * workqueue, not from a connection's CQ work, so a request stuck in a
 * backing disk does not stop our heartbeats.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include "trs-srv.h"

static unsigned int trs_srv_hb_timeout_sec = 10;
module_param_named(heartbeat_timeout_sec, trs_srv_hb_timeout_sec, uint, 0644);
MODULE_PARM_DESC(heartbeat_timeout_sec,
		 "seconds without a heartbeat from a client before its path is closed (3..3600, default 10)");

static void trs_srv_hb_sent(struct ib_cq *cq, struct ib_wc *wc)
{
	struct trs_srv_conn *conn = cq->cq_context;
	unsigned long flags;

	if (trs_wc_failed(wc, "heartbeat")) {
		trs_srv_path_fail(conn->path, "heartbeat not sent");
		return;
	}
	spin_lock_irqsave(&conn->lock, flags);
	conn->path->hb_busy = false;
	spin_unlock_irqrestore(&conn->lock, flags);
}

static int trs_srv_hb_send(struct trs_hb *hb)
{
	struct trs_srv_path *path = container_of(hb, struct trs_srv_path, hb);
	struct trs_srv_conn *conn = path->conns[0];
	int err = 0;

	spin_lock_irq(&conn->lock);
	if (!conn->dead && !path->hb_busy) {
		bool notice = READ_ONCE(path->notice);

		err = trs_post_hb(conn->cm_id->qp, &path->hb_cqe,
				  notice ? TRS_HB_NOTICE : 0);
		path->hb_busy = !err;
		if (!err && notice)
			WRITE_ONCE(path->notice, false);
	}
	spin_unlock_irq(&conn->lock);
	return err;
}

static void trs_srv_hb_lost(struct trs_hb *hb, unsigned int sec)
{
	struct trs_srv_path *path = container_of(hb, struct trs_srv_path, hb);

	if (!sec) {
		trs_srv_path_fail(path, "heartbeat not posted");
		return;
	}
	trs_srv_err(path, "no heartbeat from the client for %u s\n", sec);
	trs_srv_path_fail(path, "client lost");
}

static const struct trs_hb_ops trs_srv_hb_ops = {
	.send	= trs_srv_hb_send,
	.lost	= trs_srv_hb_lost,
};

/**
 * trs_srv_hb_init() - prepare the heartbeat of a new path
 * @path: the path, its negotiated caps set
 */
void trs_srv_hb_init(struct trs_srv_path *path)
{
	trs_hb_init(&path->hb, trs_srv_wq, &trs_srv_hb_ops,
		    &trs_srv_hb_timeout_sec);
	path->hb_cqe.done = trs_srv_hb_sent;
	path->hb_on = path->rsp.caps & cpu_to_le32(TRS_CAP_HEARTBEAT);
}

/**
 * trs_srv_hb_start() - start heartbeats on a path that just went live
 * @path: the path; nothing if its client does not do heartbeats
 */
void trs_srv_hb_start(struct trs_srv_path *path)
{
	if (path->hb_on)
		trs_hb_start(&path->hb);
}

/**
 * trs_srv_hb_stop() - stop the heartbeats of a path being closed
 * @path: the path
 */
void trs_srv_hb_stop(struct trs_srv_path *path)
{
	trs_hb_stop(&path->hb);
}

/**
 * trs_srv_hb_recv() - take a receive that is not a request as a heartbeat
 * @conn: the connection (its receive is posted again already)
 * @wc: the successful completion
 *
 * Return: true if it was the client's heartbeat.
 */
bool trs_srv_hb_recv(struct trs_srv_conn *conn, const struct ib_wc *wc)
{
	struct trs_srv_path *path = conn->path;

	if (conn->idx || !path->hb_on || !trs_is_hb(wc, 0))
		return false;
	trs_hb_received(&path->hb);
	return true;
}
