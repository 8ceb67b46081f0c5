// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport client: the slots of a path, one per server chunk.
 *
 * Each slot has a header buffer (transport and user header, DMA-mapped for
 * the request's WRITE), an MR for request data that needs one, and a
 * bounce buffer with an MR of its own that small reads land in.  The
 * bounce MRs are registered once per path, by one chain of REG_MRs on
 * connection 0 before the path takes requests, and stay registered until
 * the connections are drained.  The data path is trs-clt-io.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include "trs-clt.h"

/* A DMA-mapped buffer of @len bytes, or NULL; *@dma 0 if unmapped. */
static void *trs_clt_buf_alloc(struct ib_device *dev, size_t len,
			       enum dma_data_direction dir, u64 *dma)
{
	void *buf = TRS_FI(kzalloc(len, GFP_KERNEL), NULL);

	if (!buf)
		return NULL;
	*dma = ib_dma_map_single(dev, buf, len, dir);
	if (ib_dma_mapping_error(dev, *dma))
		*dma = 0;
	return buf;
}

static void trs_clt_buf_free(struct ib_device *dev, void *buf, size_t len,
			     enum dma_data_direction dir, u64 dma)
{
	if (dma)
		ib_dma_unmap_single(dev, dma, len, dir);
	kfree(buf);
}

/* An MR for @pages pages, or NULL and the error in *@err if none yet. */
static struct ib_mr *trs_clt_mr_alloc(struct ib_pd *pd, u32 pages, int *err)
{
	struct ib_mr *mr = TRS_FI(ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, pages),
				  ERR_PTR(-ENOMEM));

	if (!IS_ERR(mr))
		return mr;
	*err = *err ?: PTR_ERR(mr);
	return NULL;
}

/**
 * trs_clt_slots_init() - allocate a slot per server chunk
 * @path: path whose queue depth, PD and MR size are known
 *
 * Undo with trs_clt_slots_free(), also after a failure.
 *
 * Return: 0 or a negative errno.
 */
int trs_clt_slots_init(struct trs_clt_path *path)
{
	struct ib_device *dev = path->ibdev;
	struct trs_clt_slot *slot;
	int err = 0;
	u32 i;

	path->slots = TRS_FI(kcalloc(path->queue_depth, sizeof(*path->slots),
				     GFP_KERNEL), NULL);
	if (!path->slots)
		return -ENOMEM;
	for (i = 0; i < path->queue_depth && !err; i++) {
		slot = &path->slots[i];
		slot->tag = i;
		trs_clt_slot_cqes_init(slot);
		slot->hdr = trs_clt_buf_alloc(dev, TRS_CLT_HDR_LEN,
					      DMA_TO_DEVICE, &slot->hdr_dma);
		slot->bounce = trs_clt_buf_alloc(dev, TRS_CLT_BOUNCE_SIZE,
						 DMA_FROM_DEVICE,
						 &slot->bounce_dma);
		slot->mr = trs_clt_mr_alloc(path->pd,
					    TRS_MR_PAGES(path->max_io_size),
					    &err);
		slot->bounce_mr =
			trs_clt_mr_alloc(path->pd,
					 TRS_MR_PAGES(TRS_CLT_BOUNCE_SIZE), &err);
		if (!err && (!slot->hdr_dma || !slot->bounce_dma))
			err = -ENOMEM;
	}
	return err;
}

/* Registration of the bounce MRs: only the last REG_MR is signaled. */
static void trs_clt_bounce_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct trs_clt_conn *conn = cq->cq_context;
	struct trs_clt_path *path = conn->path;
	unsigned long flags;
	int err = 0;

	if (trs_wc_failed(wc, "bounce buffer registration"))
		err = -ECONNRESET;

	spin_lock_irqsave(&path->state_lock, flags);
	path->bounce_err = err;
	path->bounce_done = true;
	spin_unlock_irqrestore(&path->state_lock, flags);
	if (err)
		trs_clt_wc_fail(path, wc, err);
	wake_up(&path->setup_wq);
}

/* Fill @reg to register @slot's bounce buffer for the server to write. */
static int trs_clt_bounce_reg(struct trs_clt_slot *slot, struct ib_reg_wr *reg)
{
	struct ib_mr *mr = slot->bounce_mr;
	struct scatterlist sg;

	sg_init_one(&sg, slot->bounce, TRS_CLT_BOUNCE_SIZE);
	sg_dma_address(&sg) = slot->bounce_dma;
	sg_dma_len(&sg) = TRS_CLT_BOUNCE_SIZE;
	if (ib_map_mr_sg(mr, &sg, 1, NULL, TRS_MR_PAGE) != 1)
		return -EINVAL;
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	trs_reg_wr_init(reg, mr, &slot->reg_cqe,
			IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
	return 0;
}

/**
 * trs_clt_slots_register() - register every slot's bounce MR
 * @path: path whose slots exist and whose connection 0 is established
 *
 * One chain of REG_MRs on connection 0, the last one signaled; its
 * completion sets @path->bounce_done (and @path->bounce_err), and the
 * path waits for it before its first request, so the keys are valid on
 * every connection by then.  The MRs stay registered until the connections
 * are drained and trs_clt_slots_free() deregisters them.
 *
 * Return: 0 if the chain was posted, or a negative errno.
 */
int trs_clt_slots_register(struct trs_clt_path *path)
{
	struct trs_clt_conn *conn = &path->conns[0];
	u32 qd = path->queue_depth, i;
	struct ib_reg_wr *reg;
	int err = 0;

	reg = TRS_FI(kcalloc(qd, sizeof(*reg), GFP_KERNEL), NULL);
	if (!reg)
		return -ENOMEM;
	for (i = 0; i < qd && !err; i++) {
		err = trs_clt_bounce_reg(&path->slots[i], &reg[i]);
		reg[i].wr.next = i + 1 < qd ? &reg[i + 1].wr : NULL;
	}
	if (err)
		goto free_reg;
	path->bounce_cqe.done = trs_clt_bounce_done;
	reg[qd - 1].wr.wr_cqe = &path->bounce_cqe;
	reg[qd - 1].wr.send_flags = IB_SEND_SIGNALED;

	spin_lock_irq(&conn->lock);
	err = conn->dead ? -ENOTCONN :
	      ib_post_send(conn->cm_id->qp, &reg[0].wr, NULL);
	if (!err)
		conn->stats.wrs_posted += qd;
	spin_unlock_irq(&conn->lock);
free_reg:
	kfree(reg);
	return err;
}

/**
 * trs_clt_slots_free() - free what trs_clt_slots_init() allocated
 * @path: path without requests in flight
 */
void trs_clt_slots_free(struct trs_clt_path *path)
{
	struct trs_clt_slot *slot;
	u32 i;

	if (!path->slots)
		return;
	for (i = 0; i < path->queue_depth; i++) {
		slot = &path->slots[i];
		if (slot->bounce_mr)
			ib_dereg_mr(slot->bounce_mr);
		if (slot->mr)
			ib_dereg_mr(slot->mr);
		trs_clt_buf_free(path->ibdev, slot->bounce, TRS_CLT_BOUNCE_SIZE,
				 DMA_FROM_DEVICE, slot->bounce_dma);
		trs_clt_buf_free(path->ibdev, slot->hdr, TRS_CLT_HDR_LEN,
				 DMA_TO_DEVICE, slot->hdr_dma);
	}
	kfree(path->slots);
	path->slots = NULL;
}
