// SPDX-License-Identifier: GPL-2.0-only
/*
 * blk_rq_map_sg_rq_only: blk_rq_map_sg() takes the request and the
 * scatterlist, no more the queue.
 * Changed in: 6.15
 */
#include <linux/blk-mq.h>

int rnbd_probe(struct request *rq, struct scatterlist *sg);
int rnbd_probe(struct request *rq, struct scatterlist *sg)
{
#ifdef RNBD_PROBE_NEW
	return blk_rq_map_sg(rq, sg);
#else
	return blk_rq_map_sg(rq->q, rq, sg);
#endif
}
