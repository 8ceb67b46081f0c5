// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport core: the heartbeat timer both sides share.
 *
 * Every TRS_HB_INTERVAL_MS the timer checks when the peer's last heartbeat
 * arrived and, if that was less than the side's timeout ago, asks the side
 * to send one of its own; otherwise it tells the side that the peer is
 * lost.  The side posts (trs_post_hb()) and receives (trs_is_hb()) them on
 * its connection 0, and calls trs_hb_received() for each that arrives.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include "trs-core.h"

static unsigned long trs_hb_period(void)
{
	return msecs_to_jiffies(TRS_HB_INTERVAL_MS);
}

static void trs_hb_work(struct work_struct *work)
{
	struct trs_hb *hb = container_of(to_delayed_work(work), struct trs_hb,
					 work);
	unsigned int sec = clamp(READ_ONCE(*hb->timeout_sec), 3u, 3600u);
	int err;

	/* checked every period: at most @sec after the last heartbeat */
	if (time_after_eq(jiffies, READ_ONCE(hb->rx) + sec * HZ -
			  trs_hb_period())) {
		hb->ops->lost(hb, sec);
		return;
	}
	err = hb->ops->send(hb);
	if (err) {
		hb->ops->lost(hb, 0);
		return;
	}
	queue_delayed_work(hb->wq, &hb->work, trs_hb_period());
}

/**
 * trs_hb_init() - prepare a heartbeat timer, once
 * @hb: the timer
 * @wq: workqueue it runs on
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
}
EXPORT_SYMBOL_GPL(trs_hb_init);

/**
 * trs_hb_start() - start the timer of a path that just came up
 * @hb: the timer
 */
void trs_hb_start(struct trs_hb *hb)
{
	WRITE_ONCE(hb->rx, jiffies);
	queue_delayed_work(hb->wq, &hb->work, trs_hb_period());
}
EXPORT_SYMBOL_GPL(trs_hb_start);

/**
 * trs_hb_stop() - stop the timer; on return no callback runs
 * @hb: the timer
 */
void trs_hb_stop(struct trs_hb *hb)
{
	cancel_delayed_work_sync(&hb->work);
}
EXPORT_SYMBOL_GPL(trs_hb_stop);

/**
 * trs_hb_received() - the peer's heartbeat arrived
 * @hb: the timer
 *
 * Any context.
 */
void trs_hb_received(struct trs_hb *hb)
{
	WRITE_ONCE(hb->rx, jiffies);
}
EXPORT_SYMBOL_GPL(trs_hb_received);
