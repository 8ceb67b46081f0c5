// SPDX-License-Identifier: GPL-2.0-only
/*
 * queue_limits_features: a queue's features (volatile write cache, FUA,
 * rotational) are BLK_FEAT_* bits of its queue_limits; QUEUE_FLAG_NONROT
 * and the two-flag blk_queue_write_cache() are gone.
 * Changed in: 6.11
 */
#include <linux/blkdev.h>

#ifdef RNBD_PROBE_NEW
void rnbd_probe(struct queue_limits *lim);
void rnbd_probe(struct queue_limits *lim)
{
	lim->features |= BLK_FEAT_WRITE_CACHE | BLK_FEAT_FUA |
			 BLK_FEAT_ROTATIONAL;
}
#else
void rnbd_probe(struct request_queue *q);
void rnbd_probe(struct request_queue *q)
{
	blk_queue_write_cache(q, true, true);
	blk_queue_flag_set(QUEUE_FLAG_NONROT, q);
}
#endif
