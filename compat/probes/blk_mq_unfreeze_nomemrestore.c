// SPDX-License-Identifier: GPL-2.0-only
/*
 * blk_mq_unfreeze_nomemrestore: freezing a queue saves the task's memory
 * allocation flags, which blk_mq_unfreeze_queue() now takes back; a
 * freeze begun with blk_freeze_queue_start() ends with
 * blk_mq_unfreeze_queue_nomemrestore().
 * Changed in: 6.15
 */
#include <linux/blk-mq.h>

void rnbd_probe(struct request_queue *q);
void rnbd_probe(struct request_queue *q)
{
	blk_freeze_queue_start(q);
#ifdef RNBD_PROBE_NEW
	blk_mq_unfreeze_queue_nomemrestore(q);
#else
	blk_mq_unfreeze_queue(q);
#endif
}
