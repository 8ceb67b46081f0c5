// SPDX-License-Identifier: GPL-2.0-only
/*
 * rq_end_io_batch: a request's end_io callback also gets the completion
 * batch (const struct io_comp_batch *).
 * Changed in: 7.0
 */
#include <linux/blk-mq.h>

#ifdef RNBD_PROBE_NEW
static enum rq_end_io_ret rnbd_probe_end_io(struct request *rq,
					    blk_status_t err,
					    const struct io_comp_batch *iob)
{
	return RQ_END_IO_NONE;
}
#else
static enum rq_end_io_ret rnbd_probe_end_io(struct request *rq,
					    blk_status_t err)
{
	return RQ_END_IO_NONE;
}
#endif

void rnbd_probe(struct request *rq);
void rnbd_probe(struct request *rq)
{
	rq->end_io = rnbd_probe_end_io;
}
