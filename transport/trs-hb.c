// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport core: the heartbeat both sides share.
 *
 * With TRS_CAP_HEARTBEAT negotiated, each side sends a heartbeat on a
 * path's connection 0 every TRS_HB_INTERVAL_MS, at most one in flight: a
 * zero-length SEND with immediate data TRS_IMM_HB, which takes one receive
 * of the peer and no buffer, chunk or slot.  Every period the timer checks
 * when the peer's last heartbeat (or request or reply, trs_hb_alive())
 * arrived: within the side's timeout, it asks the side to send one of its
 * own (trs_hb_post() under the lock of its posts); otherwise it tells the
 * side that the peer is lost.  The timer runs from the side's workqueue,
 * not from a CQ, so a request stuck in a backing disk stops no heartbeat.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include "trs-core.h"

#define TRS_HB_PERIOD	msecs_to_jiffies(TRS_HB_INTERVAL_MS)

static void trs_hb_work(struct work_struct *work)
{
	struct trs_hb *hb = container_of(to_delayed_work(work), struct trs_hb,
					 work);
	unsigned int sec = clamp(READ_ONCE(*hb->timeout_sec), 3u, 3600u);

	/* checked every period: at most @sec after the last heartbeat */
	if (time_after_eq(jiffies, READ_ONCE(hb->rx) + sec * HZ -
			  TRS_HB_PERIOD)) {
		hb->ops->lost(hb, sec);
		return;
	}
	if (hb->ops->send(hb) < 0) {
		hb->ops->lost(hb, 0);
		return;
	}
	queue_delayed_work(hb->wq, &hb->work, TRS_HB_PERIOD);
}

static void trs_hb_sent(struct ib_cq *cq, struct ib_wc *wc)
{
	struct trs_hb *hb = container_of(wc->wr_cqe, struct trs_hb, cqe);

	/*
	 * A flush follows whatever moved the QP to the error state, which
	 * reports its own cause; trs_hb_start() clears @busy again.
	 */
	if (!trs_wc_failed(wc, "heartbeat"))
		WRITE_ONCE(hb->busy, false);
	else if (wc->status != IB_WC_WR_FLUSH_ERR)
		hb->ops->lost(hb, 0);
}

/**
 * trs_hb_init() - prepare a heartbeat, once
 * @hb: the heartbeat
 * @wq: workqueue its timer runs on
 * @ops: the side's callbacks
 * @timeout_sec: the side's timeout parameter, read at every check
 *	(clamped to 3..3600)
 */
void trs_hb_init(struct trs_hb *hb, struct workqueue_struct *wq,
		 const struct trs_hb_ops *ops, const unsigned int *timeout_sec)
{
	INIT_DELAYED_WORK(&hb->work, trs_hb_work);
	hb->wq = wq;
	hb->ops = ops;
	hb->timeout_sec = timeout_sec;
	hb->cqe.done = trs_hb_sent;
}
EXPORT_SYMBOL_GPL(trs_hb_init);

/**
 * trs_hb_start() - start the timer of a path that just came up
 * @hb: the heartbeat; nothing unless @hb->on
 */
void trs_hb_start(struct trs_hb *hb)
{
	if (!hb->on)
		return;
	WRITE_ONCE(hb->busy, false);
	WRITE_ONCE(hb->rx, jiffies);
	queue_delayed_work(hb->wq, &hb->work, TRS_HB_PERIOD);
}
EXPORT_SYMBOL_GPL(trs_hb_start);

/**
 * trs_hb_stop() - stop the timer; on return no timer callback runs
 * @hb: the heartbeat
 */
void trs_hb_stop(struct trs_hb *hb)
{
	cancel_delayed_work_sync(&hb->work);
}
EXPORT_SYMBOL_GPL(trs_hb_stop);

/**
 * trs_hb_post() - post a heartbeat unless one is in flight
 * @hb: the heartbeat
 * @qp: connection 0's queue pair; the caller holds the lock of its posts
 * @arg: 0, or TRS_HB_NOTICE (server, with TRS_CAP_NOTICE)
 *
 * Return: 1 if one is in flight already, 0 if posted, or the post's
 * negative errno.
 */
int trs_hb_post(struct trs_hb *hb, struct ib_qp *qp, u32 arg)
{
	struct ib_send_wr wr = {
		.opcode		= IB_WR_SEND_WITH_IMM,
		.wr_cqe		= &hb->cqe,
		.send_flags	= IB_SEND_SIGNALED,
		.ex.imm_data	= cpu_to_be32(trs_imm_pack(TRS_IMM_HB, 0, arg)),
	};
	int err;

	if (READ_ONCE(hb->busy))
		return 1;
	/* before the post: its completion may run before the post returns */
	WRITE_ONCE(hb->busy, true);
	err = ib_post_send(qp, &wr, NULL);
	if (err)
		WRITE_ONCE(hb->busy, false);
	return err;
}
EXPORT_SYMBOL_GPL(trs_hb_post);

/**
 * trs_hb_recv() - take a receive that is no request or reply as a heartbeat
 * @hb: the heartbeat of the path
 * @idx: index of the connection it arrived on
 * @wc: the successful receive completion
 * @args: the args the receiver takes besides 0
 *
 * Return: true for a heartbeat the path expects: on connection 0, with
 * heartbeats on, a zero-length SEND with immediate data TRS_IMM_HB, slot 0
 * and an arg that is 0 or within @args.  Any context.
 */
bool trs_hb_recv(struct trs_hb *hb, u32 idx, const struct ib_wc *wc, u32 args)
{
	u32 imm = be32_to_cpu(wc->ex.imm_data);

	if (idx || !hb->on || wc->opcode != IB_WC_RECV ||
	    !(wc->wc_flags & IB_WC_WITH_IMM) || wc->byte_len ||
	    trs_imm_type(imm) != TRS_IMM_HB || trs_imm_slot(imm) ||
	    trs_imm_arg(imm) & ~args)
		return false;
	WRITE_ONCE(hb->rx, jiffies);
	return true;
}
EXPORT_SYMBOL_GPL(trs_hb_recv);
