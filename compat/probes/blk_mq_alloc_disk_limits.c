// SPDX-License-Identifier: GPL-2.0-only
/*
 * blk_mq_alloc_disk_limits: blk_mq_alloc_disk() and blk_mq_alloc_queue()
 * take the queue's limits, set once at allocation and changed atomically
 * afterwards; blk_mq_init_queue() and the blk_queue_*() limit setters
 * are gone (the setters went in 6.10 and 6.11).
 * Changed in: 6.9
 */
#include <linux/blk-mq.h>

#ifdef RNBD_PROBE_NEW
struct gendisk *rnbd_probe(struct blk_mq_tag_set *set,
			   struct queue_limits *lim);
struct gendisk *rnbd_probe(struct blk_mq_tag_set *set,
			   struct queue_limits *lim)
{
	struct request_queue *q = blk_mq_alloc_queue(set, lim, NULL);

	if (IS_ERR(q))
		return ERR_CAST(q);
	blk_mq_destroy_queue(q);
	return blk_mq_alloc_disk(set, lim, NULL);
}
#else
struct gendisk *rnbd_probe(struct blk_mq_tag_set *set);
struct gendisk *rnbd_probe(struct blk_mq_tag_set *set)
{
	struct request_queue *q = blk_mq_init_queue(set);
	struct gendisk *disk;

	if (IS_ERR(q))
		return ERR_CAST(q);
	blk_mq_destroy_queue(q);
	disk = blk_mq_alloc_disk(set, NULL);
	if (!IS_ERR(disk))
		blk_queue_max_hw_sectors(disk->queue, 8);
	return disk;
}
#endif
