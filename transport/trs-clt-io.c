// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport client: the data path.
 *
 * A request on slot S is one RDMA_WRITE_WITH_IMM of its header (and, for a
 * write, its data) to the end of the header area of server chunk S,
 * preceded by a REG_MR of the slot's MR when the data needs one (reads
 * larger than the slot's bounce buffer, writes with more segments than
 * send SGEs), itself fenced by a LOCAL_INV (see TRS_CLT_MR_WRS).  The
 * server answers with an RDMA_WRITE_WITH_IMM carrying slot and status in
 * the immediate; a small read's data arrives with it in the
 * bounce buffer and is copied to the request's pages.  With
 * TRS_CAP_SLOT_GEN the slot field is a tag whose generation changes with
 * every request on the slot, so a reply that comes late (its request was
 * answered before, and the slot taken again) is a protocol error instead of
 * the answer to the new request: a read would end with pages the server
 * never wrote.  Batch replies carry no tags, and answer no reads.
 * done() runs once the reply arrived and, with an MR, the LOCAL_INV posted
 * after the reply completed, without one for a write the WRITE's own
 * completion.  From then on neither the server nor the HCA touches the
 * request's memory: the reply says the server has the whole request, the
 * completion that the HCA will not send it again (its ACK arrived).  The
 * other WRs are mostly unsignaled: a signaled completion
 * retires every WR posted before it (completions come in send queue
 * order), and conn->sq_free keeps the WRs not known to be retired within
 * the send queue (see trs_clt_conn_create_qp()).
 *
 * Slot progress (slot->flags) is guarded by the lock of the connection the
 * request was posted on; its completions arrive on that connection's CQ.
 * done() is always called without locks held.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include "trs-clt.h"

/* A read small enough for the slot's bounce buffer: no DMA of its pages. */
static bool trs_clt_bounced(const struct trs_clt_io *io)
{
	return io->dir == DMA_FROM_DEVICE && io->data_len <= TRS_CLT_BOUNCE_SIZE;
}

static void trs_clt_finish(struct trs_clt_path *path, struct trs_clt_io *io,
			   int status)
{
	if (io->dir != DMA_NONE && !trs_clt_bounced(io))
		ib_dma_unmap_sg(path->ibdev, io->sgl, io->sg_cnt, io->dir);
	io->done(io, status);
}

/* Invalidate the slot's MR once the server is done with it. */
static int trs_clt_post_inv(struct trs_clt_conn *conn,
			    struct trs_clt_slot *slot)
{
	struct ib_send_wr wr = {
		.opcode			= IB_WR_LOCAL_INV,
		.wr_cqe			= &slot->inv_cqe,
		.send_flags		= IB_SEND_SIGNALED,
		.ex.invalidate_rkey	= slot->mr->rkey,
	};
	int err;

	/* its send queue entry was reserved with the request */
	err = ib_post_send(conn->cm_id->qp, &wr, NULL);
	if (err) {
		trs_log_err_rl(conn->path->sess, "cannot invalidate an MR: %pe\n",
			       ERR_PTR(err));
		trs_clt_fail(conn->path, err);
		return err;
	}
	slot->inv_seq = ++conn->sq_posted;
	slot->flags |= TRS_SLOT_INV;
	conn->stats.wrs_posted++;
	return 0;
}

/*
 * Move a request on after one of its events; conn->lock held.  Returns the
 * request if it is complete (the slot is free again), else NULL.  A request
 * that cannot move on stays in flight until the teardown fails it.
 */
static struct trs_clt_io *trs_clt_advance(struct trs_clt_conn *conn,
					  struct trs_clt_slot *slot)
{
	struct trs_clt_io *io = slot->io;

	if ((slot->flags & (TRS_SLOT_SENT | TRS_SLOT_REPLIED)) !=
	    (TRS_SLOT_SENT | TRS_SLOT_REPLIED))
		return NULL;
	if (slot->flags & TRS_SLOT_MR) {
		if (!(slot->flags & TRS_SLOT_INV) && !conn->dead)
			trs_clt_post_inv(conn, slot);
		return NULL;
	}
	slot->io = NULL;
	conn->inflight--;
	if (unlikely(slot->t0)) {
		u64 ns = ktime_get_ns() - slot->t0;

		/* moving average over about 8 replies */
		WRITE_ONCE(conn->lat_ns, conn->lat_ns ?
			   conn->lat_ns - (conn->lat_ns >> 3) + (ns >> 3) : ns);
	}
	return io;
}

/*
 * A signaled WR completed, and with it every WR before it: @seq is
 * conn->sq_posted as of its post; conn->lock held.
 */
static void trs_clt_sq_retire(struct trs_clt_conn *conn, u32 seq)
{
	conn->sq_free += seq - conn->sq_retired;
	conn->sq_retired = seq;
}

/*
 * A signaled completion of the request on @slot, the WR posted as number
 * *@seq: set and clear slot->flags, then finish the request if that was
 * its last event.
 */
static void trs_clt_slot_event(struct ib_cq *cq, struct trs_clt_slot *slot,
			       const u32 *seq, unsigned int set,
			       unsigned int clear)
{
	struct trs_clt_conn *conn = cq->cq_context;
	struct trs_clt_io *io = NULL;
	unsigned long flags;
	int status = 0;

	spin_lock_irqsave(&conn->lock, flags);
	trs_clt_sq_retire(conn, *seq);
	if (!WARN_ON_ONCE(!slot->io || slot->conn != conn)) {
		slot->flags = (slot->flags | set) & ~clear;
		io = trs_clt_advance(conn, slot);
		status = slot->status;
	}
	spin_unlock_irqrestore(&conn->lock, flags);
	if (io)
		trs_clt_finish(conn->path, io, status);
}

/* The REG_MR of a request and the LOCAL_INV fencing it. */
static void trs_clt_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct trs_clt_conn *conn = cq->cq_context;

	/* unsignaled: only failures complete */
	if (trs_wc_failed(wc, "memory registration"))
		trs_clt_fail(conn->path, -ECONNRESET);
}

static void trs_clt_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct trs_clt_conn *conn = cq->cq_context;
	struct trs_clt_slot *slot;

	if (trs_wc_failed(wc, "request")) {
		trs_clt_fail(conn->path, -ECONNRESET);
		return;
	}
	slot = container_of(wc->wr_cqe, struct trs_clt_slot, send_cqe);
	trs_clt_slot_event(cq, slot, &slot->send_seq, TRS_SLOT_SENT, 0);
}

static void trs_clt_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct trs_clt_conn *conn = cq->cq_context;
	struct trs_clt_slot *slot;

	if (trs_wc_failed(wc, "local invalidate")) {
		trs_clt_fail(conn->path, -ECONNRESET);
		return;
	}
	slot = container_of(wc->wr_cqe, struct trs_clt_slot, inv_cqe);
	trs_clt_slot_event(cq, slot, &slot->inv_seq, 0, TRS_SLOT_MR);
}

/**
 * trs_clt_slot_cqes_init() - the completion handlers of a slot's WRs
 * @slot: a slot being set up
 */
void trs_clt_slot_cqes_init(struct trs_clt_slot *slot)
{
	slot->reg_cqe.done = trs_clt_reg_done;
	slot->send_cqe.done = trs_clt_send_done;
	slot->inv_cqe.done = trs_clt_inv_done;
}

/* Copy the @len bytes the server wrote to the bounce buffer to the read. */
static int trs_clt_bounce_copy(struct trs_clt_path *path,
			       struct trs_clt_slot *slot, u32 len)
{
	struct trs_clt_io *io = slot->io;

	ib_dma_sync_single_for_cpu(path->ibdev, slot->bounce_dma, len,
				   DMA_FROM_DEVICE);
	if (sg_copy_from_buffer(io->sgl, io->sg_cnt, slot->bounce, len) != len)
		return -EIO;
	return 0;
}

/*
 * Can the reply just received on @conn, which wrote @len bytes, answer the
 * request on slot @idx, sent with @tag?  A batch reply never answers a
 * read: it carries no data, nor the tags of the requests it answers.
 */
static bool trs_clt_reply_ok(struct trs_clt_conn *conn, u32 idx, u32 tag,
			     u32 len, bool batch)
{
	struct trs_clt_path *path = conn->path;
	struct trs_clt_slot *slot;
	bool read;

	if (idx >= path->queue_depth)
		return false;
	slot = &path->slots[idx];
	if (!slot->io || slot->conn != conn || slot->flags & TRS_SLOT_REPLIED)
		return false;
	/* a reply to an earlier request on the slot (TRS_CAP_SLOT_GEN) */
	if (!batch && tag != slot->tag)
		return false;
	read = slot->io->dir == DMA_FROM_DEVICE;
	if (read && batch)
		return false;
	return len <= (read ? slot->io->data_len : 0);
}

/*
 * Record the server's @status for the request on @slot, whose reply wrote
 * @len bytes; conn->lock held.  Returns the request if that completes it
 * (with its final status in *@status), else NULL.
 */
static struct trs_clt_io *trs_clt_replied(struct trs_clt_conn *conn,
					  struct trs_clt_slot *slot,
					  int *status, u32 len)
{
	slot->flags |= TRS_SLOT_REPLIED;
	slot->status = *status;
	if (slot->io->dir == DMA_TO_DEVICE && !(slot->flags & TRS_SLOT_SENT))
		conn->stats.write_ack_waits++;
	if (!slot->status && slot->io->dir == DMA_FROM_DEVICE &&
	    len != slot->io->data_len) {
		/* the rest of the pages would reach the user as data */
		trs_log_err_rl(conn->path->sess,
			       "conn %u: read on slot %u answered with %u of %u bytes: I/O error\n",
			       conn->idx, slot->io->slot, len,
			       slot->io->data_len);
		slot->status = -EIO;
	}
	if (!slot->status && trs_clt_bounced(slot->io))
		slot->status = trs_clt_bounce_copy(conn->path, slot, len);
	*status = slot->status;
	return trs_clt_advance(conn, slot);
}

/*
 * The status a server's reply carries, as the user sees it: an errno a
 * server can mean, else -EIO.  Never one of the kernel's internal ones
 * (512 and up: -ERESTARTSYS...), nor -ECONNABORTED, which says the
 * transport lost the request with its connection (the user resubmits it).
 */
static int trs_clt_srv_status(u32 arg)
{
	if (arg >= 512 || arg == ECONNABORTED)
		return -EIO;
	return -(int)arg;
}

/*
 * A reply: zero-length receive of an RDMA_WRITE_WITH_IMM from the server,
 * answering one request (TRS_IMM_RSP) or several (TRS_IMM_RSP_BATCH).
 * Anything that is not a reply to requests in flight on this connection is
 * a protocol error and fails the path.
 */
void trs_clt_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct trs_clt_conn *conn = cq->cq_context;
	struct trs_clt_path *path = conn->path;
	struct trs_clt_io *io[TRS_RSP_BATCH_MAX] = {};
	int status[TRS_RSP_BATCH_MAX] = {};
	u32 idx[TRS_RSP_BATCH_MAX];
	unsigned long flags, mask;
	u32 imm, tag = 0, nr, i, bit;
	int err = -EPROTO;

	if (trs_wc_failed(wc, "reply receive")) {
		trs_clt_wc_fail(path, wc, -ECONNRESET);
		return;
	}
	if (unlikely(wc->opcode != IB_WC_RECV_RDMA_WITH_IMM ||
		     !(wc->wc_flags & IB_WC_WITH_IMM))) {
		if (!trs_hb_recv(&path->hb, conn->idx, wc,
				 path->notice_on ? TRS_HB_NOTICE : 0))
			goto proto_err;
		if (trs_imm_arg(be32_to_cpu(wc->ex.imm_data)) & TRS_HB_NOTICE)
			queue_work(trs_clt_wq, &path->sess->notice_work);
		/* a heartbeat is no IO: not in wrs_posted */
		spin_lock_irqsave(&conn->lock, flags);
		err = conn->dead ? 0 : trs_post_recvs(conn->cm_id->qp,
						      &conn->recv_cqe, 1);
		spin_unlock_irqrestore(&conn->lock, flags);
		if (err)
			trs_clt_fail(path, err);
		return;
	}
	imm = be32_to_cpu(wc->ex.imm_data);
	switch (trs_imm_type(imm)) {
	case TRS_IMM_RSP:
		nr = 1;
		tag = trs_imm_slot(imm);
		idx[0] = tag & path->tag_idx_mask;
		status[0] = trs_clt_srv_status(trs_imm_arg(imm));
		break;
	case TRS_IMM_RSP_BATCH:
		mask = trs_imm_batch_mask(imm);
		/* only a session that negotiated them gets batches */
		if (!mask || wc->byte_len ||
		    !(path->conns[0].rsp.caps & cpu_to_le32(TRS_CAP_RSP_BATCH)))
			goto proto_err;
		nr = 1;
		idx[0] = trs_imm_batch_base(imm);
		for_each_set_bit(bit, &mask, TRS_IMM_BATCH_BITS)
			idx[nr++] = idx[0] + 1 + bit;
		break;
	default:
		goto proto_err;
	}

	spin_lock_irqsave(&conn->lock, flags);
	if (conn->dead) {
		/* being torn down: the requests are failed after the drain */
		spin_unlock_irqrestore(&conn->lock, flags);
		return;
	}
	for (i = 0; i < nr; i++)
		if (!trs_clt_reply_ok(conn, idx[i], tag, wc->byte_len,
				      trs_imm_type(imm) == TRS_IMM_RSP_BATCH))
			goto unlock;
	err = trs_post_recvs(conn->cm_id->qp, &conn->recv_cqe, 1);
	if (err)
		goto unlock;
	conn->stats.wrs_posted++;
	if (unlikely(raw_smp_processor_id() != conn->idx)) {
		conn->stats.cpu_migr_from += nr;
		this_cpu_add(*path->cpu_migr_to, nr);
	}
	trs_hb_alive(&path->hb);
	for (i = 0; i < nr; i++)
		io[i] = trs_clt_replied(conn, &path->slots[idx[i]], &status[i],
					wc->byte_len);
unlock:
	spin_unlock_irqrestore(&conn->lock, flags);
	for (i = 0; i < nr; i++)
		if (io[i])
			trs_clt_finish(path, io[i], status[i]);
	if (!err)
		return;
	if (err != -EPROTO) {
		trs_clt_fail(path, err);
		return;
	}
proto_err:
	trs_log_err_rl(path->sess, "conn %u: bad reply: opcode %d imm %#x len %u\n",
		       conn->idx, wc->opcode, be32_to_cpu(wc->ex.imm_data),
		       wc->byte_len);
	trs_clt_fail(path, -EPROTO);
}

/* Register the data of @io with the slot's MR, rotating its key. */
static int trs_clt_map_mr(struct trs_clt_slot *slot, struct trs_clt_io *io,
			  int nents, int access, struct ib_reg_wr *reg)
{
	struct ib_mr *mr = slot->mr;

	if (ib_map_mr_sg(mr, io->sgl, nents, NULL, TRS_MR_PAGE) != nents ||
	    mr->length != io->data_len)
		return -EINVAL;
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	trs_reg_wr_init(reg, mr, &slot->reg_cqe, access);
	return 0;
}

/* Data segments as SGEs after the header SGE; returns the SGE count. */
static int trs_clt_map_sges(struct trs_clt_path *path, struct trs_clt_io *io,
			    int nents, struct ib_sge *sge)
{
	struct scatterlist *sg;
	u32 len = 0;
	int i;

	for_each_sg(io->sgl, sg, nents, i) {
		sge[i + 1].addr = sg_dma_address(sg);
		sge[i + 1].length = sg_dma_len(sg);
		sge[i + 1].lkey = path->pd->local_dma_lkey;
		len += sg_dma_len(sg);
	}
	return len == io->data_len ? nents + 1 : -EINVAL;
}

/*
 * Map the data of @io for its WRITE_WITH_IMM @wr, whose first SGE is the
 * header @req: as SGEs after it, as the slot's MR (@reg, a write with more
 * segments than send SGEs, a read too large for the bounce buffer), or as
 * the bounce buffer (a small read); a read's header says where the server
 * is to write its data.
 */
static int trs_clt_map_data(struct trs_clt_path *path,
			    struct trs_clt_slot *slot, struct trs_clt_io *io,
			    int nents, struct trs_msg_req *req,
			    struct ib_rdma_wr *wr, struct ib_reg_wr *reg)
{
	struct ib_sge *sge = wr->wr.sg_list;
	int err;

	switch (io->dir) {
	case DMA_TO_DEVICE:
		req->dir = TRS_DIR_WRITE;
		if (nents + 1 <= path->max_send_sge) {
			wr->wr.num_sge = trs_clt_map_sges(path, io, nents, sge);
			return wr->wr.num_sge < 0 ? wr->wr.num_sge : 0;
		}
		err = trs_clt_map_mr(slot, io, nents, IB_ACCESS_LOCAL_WRITE,
				     reg);
		sge[1].addr = slot->mr->iova;
		sge[1].length = slot->mr->length;
		sge[1].lkey = slot->mr->lkey;
		wr->wr.num_sge = 2;
		return err;
	case DMA_FROM_DEVICE:
		req->dir = TRS_DIR_READ;
		if (trs_clt_bounced(io)) {
			ib_dma_sync_single_for_device(path->ibdev,
						      slot->bounce_dma,
						      io->data_len,
						      DMA_FROM_DEVICE);
			req->addr = cpu_to_le64(slot->bounce_mr->iova);
			req->rkey = cpu_to_le32(slot->bounce_mr->rkey);
			return 0;
		}
		err = trs_clt_map_mr(slot, io, nents, IB_ACCESS_LOCAL_WRITE |
				     IB_ACCESS_REMOTE_WRITE, reg);
		req->addr = cpu_to_le64(slot->mr->iova);
		req->rkey = cpu_to_le32(slot->mr->rkey);
		return err;
	default:
		req->dir = TRS_DIR_NONE;
		return 0;
	}
}

/*
 * Chain the WRs of the request on @slot and choose what completes it on
 * our side: with an MR, the LOCAL_INV fences the REG_MR (see
 * TRS_CLT_MR_WRS) and the LOCAL_INV posted after the reply stands for the
 * WRITE's completion; a read or a request without data is answered by the
 * reply alone, its WRITE unsignaled (but every TRS_CLT_SIGNAL_EVERY-th
 * and while the send queue is nearly full); a write's pages go back to the
 * block layer only once the WRITE completed: the server's reply does not
 * acknowledge it, and while its ACK is lost the HCA may send the pages
 * again.  Returns the first WR; conn->lock held.
 */
static struct ib_send_wr *trs_clt_chain(struct trs_clt_conn *conn,
					struct trs_clt_slot *slot,
					const struct trs_clt_io *io,
					struct ib_send_wr *inv,
					struct ib_reg_wr *reg,
					struct ib_rdma_wr *wr)
{
	slot->flags = 0;
	if (reg->mr) {
		inv->next = &reg->wr;
		reg->wr.next = &wr->wr;
		wr->wr.send_flags = 0;
		slot->flags = TRS_SLOT_MR | TRS_SLOT_SENT;
		return inv;
	}
	if (io->dir != DMA_TO_DEVICE &&
	    conn->unsignaled + 1 < TRS_CLT_SIGNAL_EVERY &&
	    conn->sq_free > TRS_CLT_SIGNAL_EVERY + TRS_CLT_MR_WRS - 1) {
		wr->wr.send_flags = 0;
		slot->flags = TRS_SLOT_SENT;
	}
	return &wr->wr;
}

/*
 * The send queue accounting of a request posted on @conn, all of it: an
 * MR request takes TRS_CLT_MR_WRS entries, one of them reserved for the
 * LOCAL_INV posted after the reply; a signaled WRITE's completion will
 * retire every WR up to its sequence number (trs_clt_sq_retire()).
 */
static void trs_clt_sq_account(struct trs_clt_conn *conn,
			       struct trs_clt_slot *slot, bool mr,
			       bool signaled)
{
	conn->sq_free -= mr ? TRS_CLT_MR_WRS : 1;
	conn->sq_posted += mr ? TRS_CLT_MR_WRS - 1 : 1;
	if (signaled) {
		slot->send_seq = conn->sq_posted;
		conn->unsignaled = 0;
	} else if (!mr) {
		conn->unsignaled++;
	}
	conn->inflight++;
}

static void trs_clt_count(struct trs_clt_conn *conn,
			  const struct trs_clt_io *io, bool mr)
{
	conn->stats.requests++;
	conn->stats.wrs_posted += mr ? TRS_CLT_MR_WRS - 1 : 1;
	if (io->dir == DMA_TO_DEVICE) {
		conn->stats.writes++;
		conn->stats.bytes_written += io->data_len;
	} else if (io->dir == DMA_FROM_DEVICE) {
		conn->stats.reads++;
		conn->stats.bytes_read += io->data_len;
	}
}

/* Build and post the WRs of a request; conn->lock held. */
static int trs_clt_post_req(struct trs_clt_conn *conn,
			    struct trs_clt_slot *slot, struct trs_clt_io *io)
{
	struct trs_clt_path *path = conn->path;
	struct ib_device *dev = path->ibdev;
	u32 hdr_len = sizeof(struct trs_msg_req) + io->usr_len;
	struct ib_sge sge[TRS_CLT_MAX_SEND_SGE];
	struct trs_msg_req *req = slot->hdr;
	/* a new generation: a late reply to the slot's last request is told */
	u32 tag = path->slot_gen ? trs_tag_next(slot->tag) : io->slot;
	const struct ib_send_wr *bad_wr;
	/* the key of the MR's last registration: taken before the rotation */
	struct ib_send_wr inv = {
		.opcode			= IB_WR_LOCAL_INV,
		.wr_cqe			= &slot->reg_cqe,
		.ex.invalidate_rkey	= slot->mr->rkey,
	};
	struct ib_reg_wr reg = {};
	struct ib_rdma_wr wr = {
		.wr = {
			.opcode		= IB_WR_RDMA_WRITE_WITH_IMM,
			.wr_cqe		= &slot->send_cqe,
			.sg_list	= sge,
			.num_sge	= 1,
			.send_flags	= IB_SEND_SIGNALED,
			.ex.imm_data	= cpu_to_be32(trs_imm_pack(TRS_IMM_REQ,
								   tag,
								   hdr_len)),
		},
		.remote_addr	= slot->raddr + TRS_HDR_AREA - hdr_len,
		.rkey		= slot->rkey,
	};
	struct ib_send_wr *first;
	int nents = 0, err;

	/* room for the most a request takes: see TRS_CLT_MR_WRS */
	if (conn->sq_free < TRS_CLT_MR_WRS)
		return -EAGAIN;
	if (io->dir != DMA_NONE && !trs_clt_bounced(io)) {
		nents = ib_dma_map_sg(dev, io->sgl, io->sg_cnt, io->dir);
		if (!nents)
			return -EIO;
	}

	memset(req, 0, sizeof(*req));
	/* a reply may then wait for a second one to share its message */
	if (conn->inflight &&
	    path->conns[0].rsp.caps & cpu_to_le32(TRS_CAP_RSP_BATCH))
		req->flags = TRS_REQ_F_MORE;
	req->data_len = cpu_to_le32(io->data_len);
	memcpy(req + 1, io->usr_hdr, io->usr_len);
	sge[0].addr = slot->hdr_dma;
	sge[0].length = hdr_len;
	sge[0].lkey = path->pd->local_dma_lkey;
	err = trs_clt_map_data(path, slot, io, nents, req, &wr, &reg);
	if (err)
		goto unmap;
	ib_dma_sync_single_for_device(dev, slot->hdr_dma, hdr_len,
				      DMA_TO_DEVICE);

	slot->t0 = 0;
	if (unlikely(READ_ONCE(conn->path->sess->mp_policy) ==
		     TRS_CLT_MP_MIN_LATENCY))
		slot->t0 = ktime_get_ns();
	WRITE_ONCE(slot->io, io);
	slot->conn = conn;
	slot->tag = tag;
	first = trs_clt_chain(conn, slot, io, &inv, &reg, &wr);
	slot->status = 0;
	err = ib_post_send(conn->cm_id->qp, first, &bad_wr);
	if (err && bad_wr == first) {
		/* nothing posted: the MR keeps the key the device knows */
		if (reg.mr)
			ib_update_fast_reg_key(slot->mr,
					       inv.ex.invalidate_rkey & 0xff);
		slot->io = NULL;
		/* a QP that takes no WR is broken: recover, the user retries */
		trs_clt_fail(path, err);
		err = -ENOTCONN;
		goto unmap;
	}
	trs_clt_sq_account(conn, slot, reg.mr, wr.wr.send_flags);
	if (err) {
		/*
		 * Part of the chain is posted: the request is in flight until
		 * the teardown drained the connection and fails it.
		 */
		trs_clt_fail(path, err);
		return 0;
	}
	trs_clt_count(conn, io, reg.mr);
	return 0;

unmap:
	if (nents)
		ib_dma_unmap_sg(dev, io->sgl, io->sg_cnt, io->dir);
	return err;
}

static bool trs_clt_io_ok(struct trs_clt_sess *sess, unsigned int conn,
			  const struct trs_clt_io *io)
{
	if (conn >= sess->nr_conns || io->slot >= sess->queue_depth ||
	    !io->usr_len || io->usr_len > TRS_MAX_USR_HDR || !io->done)
		return false;
	if (io->dir == DMA_NONE)
		return !io->data_len && !io->sg_cnt;
	if (io->dir != DMA_TO_DEVICE && io->dir != DMA_FROM_DEVICE)
		return false;
	return io->data_len && io->data_len <= sess->max_io_size &&
	       io->sg_cnt && io->sg_cnt <= sess->max_segments && io->sgl;
}

/**
 * trs_clt_request() - submit a request
 * @sess: connected session
 * @conn: connection to use, 0..nr_conns-1 (normally the submitting CPU's)
 * @io: the request; its slot must not be in use
 *
 * Any context.  The session's multipath policy picks a connected path.
 * On success @io->done() is called exactly once, in softirq context (with
 * -ECONNABORTED if its path loses its connections first).
 * The data must respect a 4 KiB virt boundary (every segment but the first
 * starts on a 4 KiB boundary, every one but the last ends on one).
 *
 * Return: 0 if submitted; otherwise done() is not called and the error
 * is -EINVAL (bad @conn or @io, or data the MR cannot map), -ENOTCONN
 * (no path connected, or the post failed and the path goes
 * reconnecting), -EBUSY (slot in use), -EAGAIN (the send queue is full
 * until a completion retires WRs: retry later) or -EIO (DMA mapping
 * failed).
 */
int trs_clt_request(struct trs_clt_sess *sess, unsigned int conn,
		    struct trs_clt_io *io)
{
	struct trs_clt_path *path;
	struct trs_clt_conn *c;
	unsigned long flags;
	int err;

	if (!trs_clt_io_ok(sess, conn, io))
		return -EINVAL;

	/* a path is freed only after a grace period once unlinked */
	rcu_read_lock();
	path = trs_clt_pick_path(sess, conn);
	if (unlikely(!path)) {
		rcu_read_unlock();
		return -ENOTCONN;
	}
	c = &path->conns[conn];
	/* teardown marks every connection dead before it frees the slots */
	spin_lock_irqsave(&c->lock, flags);
	if (c->dead ||
	    trs_clt_path_state(path) != TRS_CLT_PATH_CONNECTED)
		err = -ENOTCONN;
	else if (READ_ONCE(path->slots[io->slot].io))
		err = -EBUSY;
	else
		err = trs_clt_post_req(c, &path->slots[io->slot], io);
	spin_unlock_irqrestore(&c->lock, flags);
	rcu_read_unlock();
	if (err == -EBUSY)
		trs_log_err_rl(sess, "request on slot %u, which is in use\n",
			       io->slot);
	return err;
}
EXPORT_SYMBOL_GPL(trs_clt_request);

/**
 * trs_clt_timeout() - the user gave up waiting for a request
 * @sess: its session
 * @conn: the connection it was submitted on, as to trs_clt_request()
 * @io: the request
 *
 * The path the request is in flight on reconnects (as nvme-rdma's error
 * recovery does), which hands it back with -ECONNABORTED once the server
 * can no longer touch its buffers; other paths go on.  The server is
 * alive (heartbeats fail a dead one sooner) but does not answer, say
 * because its disk hangs.  Any context.
 *
 * Return: true if @io was in flight on a connected path, which now
 * reconnects; false if it is not (answered meanwhile, or on a path
 * already going down, which hands it back anyway).
 */
bool trs_clt_timeout(struct trs_clt_sess *sess, unsigned int conn,
		     const struct trs_clt_io *io)
{
	struct trs_clt_path *path, *found = NULL;
	unsigned long irqflags;
	struct trs_clt_conn *c;
	unsigned int flags = 0;

	if (conn >= sess->nr_conns || io->slot >= sess->queue_depth)
		return false;
	rcu_read_lock();
	list_for_each_entry_rcu(path, &sess->paths, entry) {
		c = &path->conns[conn];
		/* as in trs_clt_request(): the slots exist while connected */
		spin_lock_irqsave(&c->lock, irqflags);
		if (!c->dead &&
		    trs_clt_path_state(path) == TRS_CLT_PATH_CONNECTED &&
		    READ_ONCE(path->slots[io->slot].io) == io) {
			found = path;
			flags = path->slots[io->slot].flags;
		}
		spin_unlock_irqrestore(&c->lock, irqflags);
		if (found)
			break;
	}
	if (found) {
		trs_log_err(sess, "path %u: request on slot %u unanswered (%s, %s%s); reconnecting the path\n",
			    found->id, io->slot,
			    flags & TRS_SLOT_REPLIED ? "replied" : "no reply",
			    flags & TRS_SLOT_SENT ? "sent" :
						    "send not completed",
			    flags & TRS_SLOT_MR ? ", MR not invalidated" : "");
		trs_clt_fail(found, -ETIMEDOUT);
	}
	rcu_read_unlock();
	return found;
}
EXPORT_SYMBOL_GPL(trs_clt_timeout);

/**
 * trs_clt_fail_inflight() - complete every request in flight with an error
 * @path: path whose connections are drained
 *
 * After rdma_disconnect() and ib_drain_qp() of every connection no remote
 * access and no completion is possible any more.
 */
void trs_clt_fail_inflight(struct trs_clt_path *path)
{
	struct trs_clt_slot *slot;
	struct trs_clt_io *io;
	u32 i;

	if (!path->slots)
		return;
	for (i = 0; i < path->queue_depth; i++) {
		slot = &path->slots[i];
		io = slot->io;
		if (!io)
			continue;
		spin_lock_irq(&slot->conn->lock);
		slot->io = NULL;
		slot->conn->inflight--;
		spin_unlock_irq(&slot->conn->lock);
		WRITE_ONCE(path->failovers, path->failovers + 1);
		local_bh_disable();
		trs_clt_finish(path, io, -ECONNABORTED);
		local_bh_enable();
	}
}
