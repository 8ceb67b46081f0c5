// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport server: the data path.
 *
 * A request is a zero-length receive consuming the client's
 * RDMA_WRITE_WITH_IMM into a chunk; the immediate names the slot and the
 * header length.  It is checked completely (every field, against the
 * chunk's limits) before the user sees it; a malformed one is answered
 * with -EINVAL on its slot, a request on a busy slot or with an unusable
 * immediate closes the session.  Every reply is one RDMA_WRITE_WITH_IMM on
 * the connection the request came on: the read data (if any) goes to the
 * client's buffer and the immediate carries slot and status.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/sort.h>
#include "trs-srv.h"

/*
 * Only every TRS_SRV_SIGNAL_EVERY-th reply is signaled, and every reply
 * while credits are low: the completion of a signaled reply retires the
 * unsignaled ones before it (send queue order).  When the credits run out
 * the last reply posted was signaled, so a completion always comes to
 * return them.
 */
#define TRS_SRV_SIGNAL_EVERY	16

/* The slot @mask bit @bit names in a batch reply based at @slot. */
static struct trs_srv_slot *trs_srv_batch_slot(struct trs_srv_slot *slot,
					       unsigned int bit)
{
	return &slot->path->slots[slot->req.slot + 1 + bit];
}

/* The replies of @slot and of the slots in @mask are posted or dropped. */
static void trs_srv_release(struct trs_srv_slot *slot, unsigned long mask)
{
	unsigned int bit;

	/*
	 * The client reuses a slot only after it got the reply, and by then
	 * the HCA has read the chunk: free the slot before posting so that
	 * its next request never finds it busy.
	 */
	clear_bit_unlock(slot->req.slot, slot->path->busy);
	for_each_set_bit(bit, &mask, TRS_IMM_BATCH_BITS)
		clear_bit_unlock(trs_srv_batch_slot(slot, bit)->req.slot,
				 slot->path->busy);
}

/*
 * Post the reply of @slot, or with a non-zero @mask one TRS_IMM_RSP_BATCH
 * message answering @slot and the slots @mask names (all zero-length
 * successes); conn->lock held, a credit taken.
 */
static int trs_srv_post_rsp(struct trs_srv_conn *conn,
			    struct trs_srv_slot *slot, unsigned long mask)
{
	struct trs_srv_path *path = conn->path;
	bool signal = conn->unsignaled + 1 >= TRS_SRV_SIGNAL_EVERY ||
		      conn->credits < TRS_SRV_SIGNAL_EVERY;
	struct ib_sge sge = {
		.addr	= sg_dma_address(&slot->sg) + TRS_HDR_AREA,
		.length	= slot->rsp_len,
		.lkey	= path->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = {
			.opcode		= IB_WR_RDMA_WRITE_WITH_IMM,
			.wr_cqe		= &conn->rsp_cqe,
			.sg_list	= &sge,
			.num_sge	= slot->rsp_len ? 1 : 0,
			.send_flags	= signal ? IB_SEND_SIGNALED : 0,
			.ex.imm_data	= cpu_to_be32(mask ?
					  trs_imm_pack_batch(slot->req.slot,
							     mask) :
					  slot->rsp_imm),
		},
		.remote_addr	= slot->rsp_len ? slot->raddr : 0,
		.rkey		= slot->rsp_len ? slot->rkey : 0,
	};
	int err;

	trs_srv_release(slot, mask);
	err = ib_post_send(conn->cm_id->qp, &wr.wr, NULL);
	if (err)
		return err;
	if (!signal) {
		conn->unsignaled++;
		return 0;
	}
	conn->sig_covers[conn->sig_tail] = conn->unsignaled + 1;
	conn->sig_tail = (conn->sig_tail + 1) % path->queue_depth;
	conn->unsignaled = 0;
	return 0;
}

/*
 * Answer the request on @slot (and those in @mask, see trs_srv_post_rsp()):
 * post now, or when the SQ has room; conn->lock held.
 */
static int trs_srv_send_rsp(struct trs_srv_conn *conn,
			    struct trs_srv_slot *slot, unsigned long mask)
{
	unsigned int bit;
	int err;

	if (conn->dead) {
		trs_srv_release(slot, mask);
		return 0;
	}
	if (!conn->credits) {
		/* each waits alone */
		list_add_tail(&slot->wait_entry, &conn->rsp_wait);
		for_each_set_bit(bit, &mask, TRS_IMM_BATCH_BITS)
			list_add_tail(&trs_srv_batch_slot(slot, bit)->wait_entry,
				      &conn->rsp_wait);
		return 0;
	}
	conn->credits--;
	err = trs_srv_post_rsp(conn, slot, mask);
	if (err)
		conn->credits++;
	return err;
}

static int trs_srv_held_cmp(const void *a, const void *b)
{
	const struct trs_srv_slot *x = *(struct trs_srv_slot * const *)a;
	const struct trs_srv_slot *y = *(struct trs_srv_slot * const *)b;

	return (int)x->req.slot - (int)y->req.slot;
}

/*
 * Answer every held request: in slot order, each message answers a base
 * slot and the held slots up to TRS_IMM_BATCH_BITS above it; conn->lock
 * held.
 */
static int trs_srv_post_held(struct trs_srv_conn *conn)
{
	struct trs_srv_slot *base;
	unsigned long mask;
	u32 i = 0, d;
	int err = 0;

	sort(conn->held, conn->nr_held, sizeof(conn->held[0]),
	     trs_srv_held_cmp, NULL);
	while (i < conn->nr_held) {
		base = conn->held[i++];
		mask = 0;
		for (; i < conn->nr_held; i++) {
			d = conn->held[i]->req.slot - base->req.slot;
			if (d > TRS_IMM_BATCH_BITS)
				break;
			mask |= BIT(d - 1);
		}
		err = trs_srv_send_rsp(conn, base, mask) ?: err;
	}
	conn->nr_held = 0;
	return err;
}

/*
 * A zero-length success may wait for others to share its message when the
 * client takes batches and has other requests in flight on the
 * connection, and the reply is given while the CQ's work hands out
 * requests (the user completed the request at once): more replies are
 * likely to follow in that batch, and the flush work queued behind the
 * CQ's work posts what is held at the end of it.
 */
static bool trs_srv_may_hold(struct trs_srv_conn *conn,
			     struct trs_srv_slot *slot, int status)
{
	return !status && !slot->rsp_len && slot->more &&
	       READ_ONCE(conn->poll_task) == current;
}

/* Answer the request on @slot with @status and @len data bytes. */
static void trs_srv_queue_rsp(struct trs_srv_slot *slot, int status, u32 len)
{
	struct trs_srv_conn *conn = slot->conn;
	struct trs_srv_path *path = slot->path;
	unsigned long flags;
	bool bh_off;
	int err;

	if (status > 0 || status < -MAX_ERRNO)
		status = -EIO;
	slot->rsp_imm = trs_imm_pack(TRS_IMM_RSP, slot->tag, -status);
	slot->rsp_len = status ? 0 : len;

	/*
	 * Transmit in this task (see trs_bh_off()) unless the reply carries
	 * data.  Such replies cannot share a message: sent one by one as
	 * each request is served they would wake the client's task once per
	 * completion, and a large one keeps this high-priority task busy
	 * while the client's task waits to submit its next request.  Left to
	 * ksoftirqd, they leave after the CQ work, together.
	 */
	bh_off = !slot->rsp_len && trs_bh_off();
	spin_lock_irqsave(&conn->lock, flags);
	/*
	 * Only while the connection lives: a request that outlived its
	 * session (a bio that hung) finds the RDMA device gone.
	 */
	if (slot->rsp_len && !conn->dead)
		ib_dma_sync_single_for_device(path->ibdev,
					      sg_dma_address(&slot->sg) +
					      TRS_HDR_AREA, slot->rsp_len,
					      DMA_BIDIRECTIONAL);
	if (!conn->dead && trs_srv_may_hold(conn, slot, status)) {
		if (!conn->nr_held)
			queue_work(conn->cq->comp_wq, &conn->flush_work);
		conn->held[conn->nr_held++] = slot;
		err = conn->nr_held < ARRAY_SIZE(conn->held) ? 0 :
		      trs_srv_post_held(conn);
	} else {
		err = trs_srv_send_rsp(conn, slot, 0);
	}
	spin_unlock_irqrestore(&conn->lock, flags);
	trs_bh_on(bh_off);
	if (err) {
		trs_log_err_rl(path, "cannot post a reply: %pe\n", ERR_PTR(err));
		trs_srv_path_fail(path, "reply not posted");
	}
}

/**
 * trs_srv_flush_work() - post the replies held for sharing a message
 * @work: the connection's flush_work
 */
void trs_srv_flush_work(struct work_struct *work)
{
	struct trs_srv_conn *conn = container_of(work, struct trs_srv_conn,
						 flush_work);
	unsigned long flags;
	bool bh_off;
	int err;

	bh_off = trs_bh_off();
	spin_lock_irqsave(&conn->lock, flags);
	err = trs_srv_post_held(conn);
	spin_unlock_irqrestore(&conn->lock, flags);
	trs_bh_on(bh_off);
	if (err) {
		trs_log_err_rl(conn->path, "cannot post a reply: %pe\n",
			       ERR_PTR(err));
		trs_srv_path_fail(conn->path, "reply not posted");
	}
}

/**
 * trs_srv_rsp_done() - a signaled reply completed: its credit and those of
 *	the unsignaled replies before it return
 * @cq: the connection's CQ
 * @wc: work completion (of any reply if it failed)
 */
void trs_srv_rsp_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct trs_srv_conn *conn = cq->cq_context;
	struct trs_srv_path *path = conn->path;
	struct trs_srv_slot *slot;
	unsigned long flags;
	int err = 0;

	if (trs_wc_failed(wc, "reply")) {
		trs_srv_path_fail(path, "reply failed");
		return;
	}

	spin_lock_irqsave(&conn->lock, flags);
	conn->credits += conn->sig_covers[conn->sig_head];
	conn->sig_head = (conn->sig_head + 1) % path->queue_depth;
	while (!err && !conn->dead && conn->credits &&
	       !list_empty(&conn->rsp_wait)) {
		slot = list_first_entry(&conn->rsp_wait, struct trs_srv_slot,
					wait_entry);
		list_del_init(&slot->wait_entry);
		conn->credits--;
		err = trs_srv_post_rsp(conn, slot, 0);
		if (err)
			conn->credits++;
	}
	spin_unlock_irqrestore(&conn->lock, flags);
	if (err)
		trs_srv_path_fail(path, "reply not posted");
}

/**
 * trs_srv_resp() - answer a request
 * @req: from the request callback
 * @status: 0 or a negative errno
 * @len: DMA_FROM_DEVICE with @status 0: bytes at req->data to return to
 *	the client, at most req->data_len; ignored otherwise
 *
 * Exactly once per request, from any context.  @req is invalid afterwards.
 */
void trs_srv_resp(struct trs_srv_req *req, int status, u32 len)
{
	struct trs_srv_slot *slot = container_of(req, struct trs_srv_slot, req);
	struct trs_srv_path *path = slot->path;

	if (req->dir != DMA_FROM_DEVICE) {
		len = 0;
	} else if (len > req->data_len) {
		trs_log_err_rl(path, "reply of %u bytes to a read of %u\n",
			       len, req->data_len);
		status = -EIO;
	}
	trs_srv_queue_rsp(slot, status, len);
	/* may free the session (see trs_srv_path_release()) */
	percpu_ref_put(&path->inflight);
}
EXPORT_SYMBOL_GPL(trs_srv_resp);

/* The client takes batch replies (and may flag its requests). */
static bool trs_srv_batches(const struct trs_srv_path *path)
{
	return path->rsp.caps & cpu_to_le32(TRS_CAP_RSP_BATCH);
}

/*
 * Check a request header of @hdr_len bytes that arrived in a write of
 * @byte_len bytes, and fill slot->req.  The client may rewrite the chunk at
 * any time, so every field is read once, from a copy.
 */
static int trs_srv_parse_req(struct trs_srv_slot *slot, u32 hdr_len,
			     u32 byte_len)
{
	struct trs_srv_path *path = slot->path;
	u64 dma = sg_dma_address(&slot->sg);
	struct trs_msg_req req;
	u32 data_len;
	void *hdr;

	if (hdr_len <= sizeof(req) || hdr_len > sizeof(req) + TRS_MAX_USR_HDR)
		return -EINVAL;
	hdr = slot->buf + TRS_HDR_AREA - hdr_len;
	ib_dma_sync_single_for_cpu(path->ibdev, dma + TRS_HDR_AREA - hdr_len,
				   hdr_len, DMA_BIDIRECTIONAL);
	memcpy(&req, hdr, sizeof(req));
	data_len = le32_to_cpu(req.data_len);
	if (!trs_is_zero(req.reserved0, sizeof(req.reserved0)) ||
	    req.reserved1 || data_len > path->max_io_size ||
	    req.flags & ~TRS_REQ_F_KNOWN ||
	    (req.flags && !trs_srv_batches(path)))
		return -EINVAL;
	slot->more = req.flags & TRS_REQ_F_MORE;

	switch (req.dir) {
	case TRS_DIR_NONE:
		if (data_len || req.addr || req.rkey || byte_len != hdr_len)
			return -EINVAL;
		slot->req.dir = DMA_NONE;
		break;
	case TRS_DIR_WRITE:
		if (!data_len || req.addr || req.rkey ||
		    byte_len != hdr_len + data_len)
			return -EINVAL;
		ib_dma_sync_single_for_cpu(path->ibdev, dma + TRS_HDR_AREA,
					   data_len, DMA_BIDIRECTIONAL);
		slot->req.dir = DMA_TO_DEVICE;
		break;
	case TRS_DIR_READ:
		if (!data_len || !req.addr || !req.rkey || byte_len != hdr_len)
			return -EINVAL;
		slot->raddr = le64_to_cpu(req.addr);
		slot->rkey = le32_to_cpu(req.rkey);
		slot->req.dir = DMA_FROM_DEVICE;
		break;
	default:
		return -EINVAL;
	}
	slot->req.usr_len = hdr_len - sizeof(req);
	memcpy(slot->usr_hdr, hdr + sizeof(req), slot->req.usr_len);
	slot->req.usr_hdr = slot->usr_hdr;
	slot->req.data_len = data_len;
	return 0;
}

/* Statistics: only this connection's CQ work writes them. */
static void trs_srv_count(struct trs_srv_conn *conn,
			  const struct trs_srv_req *req)
{
	struct trs_srv_stats *st = &conn->stats;

	if (req->dir == DMA_FROM_DEVICE) {
		WRITE_ONCE(st->reads, st->reads + 1);
		WRITE_ONCE(st->read_bytes, st->read_bytes + req->data_len);
	} else if (req->dir == DMA_TO_DEVICE) {
		WRITE_ONCE(st->writes, st->writes + 1);
		WRITE_ONCE(st->write_bytes, st->write_bytes + req->data_len);
	}
}

/**
 * trs_srv_recv_done() - a request arrived
 * @cq: the connection's CQ
 * @wc: work completion of a zero-length receive
 *
 * Runs from the CQ's workqueue, so the user's request callback may sleep.
 */
void trs_srv_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct trs_srv_conn *conn = cq->cq_context;
	struct trs_srv_path *path = conn->path;
	struct trs_srv_slot *slot;
	enum trs_srv_state state;
	unsigned long flags;
	void *priv = NULL;
	u32 imm, tag, idx;
	int err = 0;

	if (trs_wc_failed(wc, "request receive")) {
		trs_srv_path_fail(path, "receive failed");
		return;
	}
	WRITE_ONCE(conn->poll_task, current);
	spin_lock_irqsave(&conn->lock, flags);
	if (!conn->dead)
		err = trs_post_recvs(conn->cm_id->qp, &conn->recv_cqe, 1);
	spin_unlock_irqrestore(&conn->lock, flags);
	if (err) {
		trs_srv_path_fail(path, "receive not posted");
		return;
	}

	if (unlikely(wc->opcode != IB_WC_RECV_RDMA_WITH_IMM ||
		     !(wc->wc_flags & IB_WC_WITH_IMM))) {
		if (trs_hb_recv(&path->hb, conn->idx, wc, 0))
			return;
		goto violation;
	}
	imm = be32_to_cpu(wc->ex.imm_data);
	tag = trs_imm_slot(imm);
	idx = tag & path->tag_idx_mask;
	if (trs_imm_type(imm) != TRS_IMM_REQ || idx >= path->queue_depth ||
	    test_and_set_bit_lock(idx, path->busy))
		goto violation;

	slot = &path->slots[idx];
	slot->conn = conn;
	slot->tag = tag;
	slot->req.conn = conn->idx;
	trs_hb_alive(&path->hb);
	err = trs_srv_parse_req(slot, trs_imm_arg(imm), wc->byte_len);
	if (err) {
		trs_log_err_rl(path, "conn %u: malformed request: imm %#x len %u\n",
			       conn->idx, imm, wc->byte_len);
	} else {
		trs_srv_count(conn, &slot->req);
		/*
		 * A per-CPU reference, not a lock: each connection's CQ work
		 * runs on its own CPU.  The state is read after the
		 * reference is taken: the session was open then, unless it
		 * is closing or not open yet.
		 */
		if (likely(percpu_ref_tryget_live(&path->inflight))) {
			/* pairs with trs_srv_open_work(): then @priv is set */
			state = smp_load_acquire(&path->state);
			if (likely(state == TRS_SRV_OPEN))
				priv = path->sess->priv;
			else
				percpu_ref_put(&path->inflight);
		} else {
			state = TRS_SRV_CLOSING;
		}
		/*
		 * Closing: no answer.  The client gets the request back when
		 * it loses the connection, and sends it again after its
		 * reconnect; an error answer would fail it.
		 */
		if (state == TRS_SRV_CLOSING) {
			clear_bit_unlock(idx, path->busy);
			return;
		}
		if (state != TRS_SRV_OPEN)
			err = -ENOTCONN;
	}
	if (err) {
		trs_srv_queue_rsp(slot, err, 0);
		return;
	}
	path->sess->ctx->ops->request(priv, &slot->req);
	return;

violation:
	trs_log_err_rl(path, "conn %u: protocol violation: opcode %d imm %#x len %u\n",
		       conn->idx, wc->opcode, be32_to_cpu(wc->ex.imm_data),
		       wc->byte_len);
	trs_srv_path_fail(path, "protocol violation");
}

/**
 * trs_srv_table_done() - completion of the chunk table SEND, or of a
 *	failed (unsignaled) chunk REG_MR
 * @cq: connection 0's CQ
 * @wc: work completion
 */
void trs_srv_table_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct trs_srv_path *path = container_of(wc->wr_cqe,
						 struct trs_srv_path, table_cqe);

	if (trs_wc_failed(wc, "chunk registration or table"))
		trs_srv_path_fail(path, "chunk table failed");
}

/**
 * trs_srv_send_chunks() - register every chunk and send the chunk table
 * @path: session whose connections are all established
 *
 * One chain on connection 0: a REG_MR per chunk, then the SEND of the
 * table.  The HCA executes them in order, so the client can use the keys
 * as soon as it has the table.
 *
 * Return: 0 or a negative errno.
 */
int trs_srv_send_chunks(struct trs_srv_path *path)
{
	struct trs_srv_conn *conn = path->conns[0];
	struct trs_msg_chunks *table = path->table;
	struct ib_sge sge = {
		.addr	= path->table_dma,
		.length	= path->table_len,
		.lkey	= path->pd->local_dma_lkey,
	};
	struct ib_send_wr send = {
		.opcode		= IB_WR_SEND,
		.wr_cqe		= &path->table_cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
		.send_flags	= IB_SEND_SIGNALED,
	};
	u32 qd = path->queue_depth, i;
	struct ib_reg_wr *reg;
	int err;

	reg = TRS_FI(kcalloc(qd, sizeof(*reg), GFP_KERNEL), NULL);
	if (!reg)
		return -ENOMEM;
	table->magic = cpu_to_le16(TRS_MAGIC);
	table->type = cpu_to_le16(TRS_MSG_CHUNKS);
	table->count = cpu_to_le16(qd);
	table->chunk_size = cpu_to_le32(path->chunk_size);
	for (i = 0; i < qd; i++) {
		struct ib_mr *mr = path->slots[i].mr;

		table->desc[i].addr = cpu_to_le64(mr->iova);
		table->desc[i].rkey = cpu_to_le32(mr->rkey);
		trs_reg_wr_init(&reg[i], mr, &path->table_cqe,
				IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
		reg[i].wr.next = i + 1 < qd ? &reg[i + 1].wr : &send;
	}
	ib_dma_sync_single_for_device(path->ibdev, path->table_dma,
				      path->table_len, DMA_TO_DEVICE);

	spin_lock_irq(&conn->lock);
	err = conn->dead ? -ENOTCONN :
	      ib_post_send(conn->cm_id->qp, &reg[0].wr, NULL);
	spin_unlock_irq(&conn->lock);
	kfree(reg);
	return err;
}
