// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport client: connection setup and teardown.
 *
 * trs_clt_sess_connect() connects connection 0, whose private data asks
 * the server for a session, sets the slots up for the queue depth the
 * server granted and registers their bounce buffers, connects the other
 * connections, then waits for that registration and for the chunk table
 * the server sends on connection 0 once all connections are established
 * and its user accepted the session.  Each step waits at most
 * TRS_CONNECT_TIMEOUT_MS (plus a margin so the CM's own timeout of the step
 * normally fires first).  trs_clt_sess_disconnect() undoes it in reverse
 * order of creation, from any intermediate state.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include "trs-clt.h"

#define TRS_CLT_STEP_TIMEOUT	msecs_to_jiffies(TRS_CONNECT_TIMEOUT_MS + 2000)

static void trs_clt_step_begin(struct trs_clt_conn *conn)
{
	struct trs_clt_sess *sess = conn->sess;

	spin_lock_irq(&sess->state_lock);
	conn->cm_done = false;
	conn->cm_err = 0;
	spin_unlock_irq(&sess->state_lock);
}

/* Record the result of a connect step; called by the CM handler. */
static void trs_clt_step_end(struct trs_clt_conn *conn, int err,
			     bool established)
{
	struct trs_clt_sess *sess = conn->sess;
	unsigned long flags;

	spin_lock_irqsave(&sess->state_lock, flags);
	if (!conn->cm_done) {
		conn->cm_err = err;
		conn->cm_done = true;
	}
	conn->established |= established;
	spin_unlock_irqrestore(&sess->state_lock, flags);
	wake_up(&sess->setup_wq);
}

static bool trs_clt_step_over(struct trs_clt_conn *conn, int *err)
{
	struct trs_clt_sess *sess = conn->sess;
	bool over;

	spin_lock_irq(&sess->state_lock);
	over = conn->cm_done || sess->setup_err;
	/*
	 * The step's own CM result (a reject says why) wins over the
	 * generic session failure a later CM event of the same attempt
	 * records.
	 */
	if (conn->cm_done && conn->cm_err)
		*err = conn->cm_err;
	else
		*err = sess->setup_err ?: conn->cm_err;
	spin_unlock_irq(&sess->state_lock);
	return over;
}

static int trs_clt_step_wait(struct trs_clt_conn *conn)
{
	int err;

	if (!wait_event_timeout(conn->sess->setup_wq,
				trs_clt_step_over(conn, &err),
				TRS_CLT_STEP_TIMEOUT))
		return -ETIMEDOUT;
	return err;
}

static int trs_clt_rejected(struct trs_clt_conn *conn,
			    struct rdma_cm_event *ev)
{
	struct trs_clt_sess *sess = conn->sess;
	const struct trs_msg_conn_rsp *rsp;
	u8 len = 0;
	u16 status = 0;

	rsp = rdma_consumer_reject_data(conn->cm_id, ev, &len);
	if (rsp && len >= sizeof(*rsp) && le16_to_cpu(rsp->magic) == TRS_MAGIC)
		status = le16_to_cpu(rsp->status);
	if (status && status <= MAX_ERRNO) {
		trs_clt_err(sess, "connection %u rejected by the server: %pe\n",
			    conn->idx, ERR_PTR(-status));
		return -status;
	}
	trs_clt_err(sess, "connection %u rejected: %s\n", conn->idx,
		    rdma_reject_msg(conn->cm_id, ev->status));
	return -ECONNREFUSED;
}

static int trs_clt_established(struct trs_clt_conn *conn,
			       struct rdma_cm_event *ev)
{
	const struct rdma_conn_param *param = &ev->param.conn;

	if (!param->private_data || param->private_data_len < sizeof(conn->rsp))
		return -EPROTO;
	memcpy(&conn->rsp, param->private_data, sizeof(conn->rsp));
	return 0;
}

/*
 * CM events of a connection.  Before ESTABLISHED they end a connect step;
 * errors after it fail the session.  Never returns non-zero: the teardown
 * owns and destroys the cm_id, also on RDMA_CM_EVENT_DEVICE_REMOVAL (the
 * ib_client removal or the close work does it from a workqueue).
 */
static int trs_clt_cm_handler(struct rdma_cm_id *cm_id,
			      struct rdma_cm_event *ev)
{
	struct trs_clt_conn *conn = cm_id->context;
	bool established = false;
	int err;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		err = 0;
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		err = trs_clt_established(conn, ev);
		established = !err;
		break;
	case RDMA_CM_EVENT_REJECTED:
		err = trs_clt_rejected(conn, ev);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		err = ev->status == -ETIMEDOUT ? -ETIMEDOUT : -EHOSTUNREACH;
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		err = -ENODEV;
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_ADDR_CHANGE:
		err = -ECONNRESET;
		break;
	default:
		return 0;
	}
	trs_clt_step_end(conn, err, established);
	if (err)
		trs_clt_fail(conn->sess, err);
	return 0;
}

static int trs_clt_dev_init(struct trs_clt_sess *sess,
			    struct rdma_cm_id *cm_id)
{
	struct ib_device *dev = cm_id->device;
	const struct ib_device_attr *attr = &dev->attrs;
	struct trs_msg_chunks *table;
	int err;

	err = trs_dev_check(cm_id, TRS_MR_PAGES(TRS_MR_PAGE));
	if (err)
		return err;
	sess->max_send_sge = min_t(u32, attr->max_send_sge,
				   TRS_CLT_MAX_SEND_SGE);
	sess->max_mr_pages = min_t(u32, attr->max_fast_reg_page_list_len,
				   TRS_MR_PAGES(TRS_MAX_IO_SIZE));
	/* connection 0's QP and CQ: see trs_clt_conn_create_qp() */
	sess->max_qd = min3(TRS_CLT_MAX_QUEUE_DEPTH,
			    (u32)max(attr->max_qp_wr -
				     (int)TRS_CLT_SIGNAL_EVERY - 1, 0) /
				TRS_CLT_MR_WRS,
			    (u32)max(attr->max_cqe -
				     (int)TRS_CLT_SIGNAL_EVERY - 4, 0) /
				(TRS_CLT_MR_WRS + 1));
	if (!sess->max_qd)
		return -EOPNOTSUPP;

	sess->pd = TRS_FI(ib_alloc_pd(dev, 0), ERR_PTR(-ENOMEM));
	if (IS_ERR(sess->pd)) {
		err = PTR_ERR(sess->pd);
		sess->pd = NULL;
		return err;
	}
	sess->table_size = struct_size(table, desc, sess->max_qd);
	sess->table = TRS_FI(kzalloc(sess->table_size, GFP_KERNEL), NULL);
	if (!sess->table) {
		err = -ENOMEM;
		goto dealloc_pd;
	}
	sess->table_dma = ib_dma_map_single(dev, sess->table, sess->table_size,
					    DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(dev, sess->table_dma)) {
		err = -ENOMEM;
		goto free_table;
	}
	WRITE_ONCE(sess->ibdev, dev);
	strscpy(sess->hca_name, dev_name(&dev->dev), sizeof(sess->hca_name));
	sess->hca_port = cm_id->port_num;
	memcpy(&sess->src, &cm_id->route.addr.src_addr, sizeof(sess->src));
	return 0;

free_table:
	kfree(sess->table);
	sess->table = NULL;
dealloc_pd:
	ib_dealloc_pd(sess->pd);
	sess->pd = NULL;
	return err;
}

static void trs_clt_dev_free(struct trs_clt_sess *sess)
{
	if (!sess->ibdev)
		return;
	ib_dma_unmap_single(sess->ibdev, sess->table_dma, sess->table_size,
			    DMA_FROM_DEVICE);
	kfree(sess->table);
	sess->table = NULL;
	ib_dealloc_pd(sess->pd);
	sess->pd = NULL;
	WRITE_ONCE(sess->ibdev, NULL);
}

/* Create the CM id of a connection and resolve address and route. */
static int trs_clt_conn_resolve(struct trs_clt_conn *conn)
{
	struct trs_clt_sess *sess = conn->sess;
	struct rdma_cm_id *cm_id;
	int err;

	cm_id = TRS_FI(rdma_create_id(&init_net, trs_clt_cm_handler, conn,
				      RDMA_PS_TCP, IB_QPT_RC),
		       ERR_PTR(-ENOMEM));
	if (IS_ERR(cm_id))
		return PTR_ERR(cm_id);
	conn->cm_id = cm_id;
	spin_lock_irq(&conn->lock);
	conn->dead = false;
	spin_unlock_irq(&conn->lock);

	trs_clt_step_begin(conn);
	err = rdma_resolve_addr(cm_id, NULL, (struct sockaddr *)&sess->dst,
				TRS_CONNECT_TIMEOUT_MS);
	if (!err)
		err = trs_clt_step_wait(conn);
	if (err)
		return err;

	trs_clt_step_begin(conn);
	err = rdma_resolve_route(cm_id, TRS_CONNECT_TIMEOUT_MS);
	if (!err)
		err = trs_clt_step_wait(conn);
	return err;
}

static int trs_clt_conn_create_qp(struct trs_clt_conn *conn, u32 qd)
{
	struct trs_clt_sess *sess = conn->sess;
	struct trs_qp_attr attr = {
		/*
		 * A request puts at most TRS_CLT_MR_WRS WRs in the send
		 * queue; conn->sq_free counts entries until a signaled
		 * completion retires them, and a request finding fewer waits
		 * (-EAGAIN).  Room for @qd requests (one per slot) and
		 * TRS_CLT_SIGNAL_EVERY retired late, plus the drain WR.
		 * Each reply consumes a receive: qd, plus the chunk table on
		 * connection 0, plus the drain WR.
		 */
		.send_wr	= TRS_CLT_MR_WRS * qd + TRS_CLT_SIGNAL_EVERY + 1,
		.recv_wr	= qd + 1 + !conn->idx,
		.send_sge	= sess->max_send_sge,
		.poll_ctx	= IB_POLL_SOFTIRQ,
	};

	conn->sq_free = attr.send_wr - 1;
	conn->sq_posted = 0;
	conn->sq_retired = 0;
	conn->unsignaled = 0;
	return trs_qp_create(conn->cm_id, sess->pd, conn, conn->idx, &attr,
			     &conn->cq);
}

/* The accept private data: connection 0 sets the session's limits. */
static int trs_clt_check_rsp(struct trs_clt_conn *conn)
{
	struct trs_clt_sess *sess = conn->sess;
	const struct trs_msg_conn_rsp *rsp = &conn->rsp;
	u32 qd, io_size, segs, pages;

	if (!trs_proto_ok(rsp->magic, rsp->ver_major) || rsp->status ||
	    rsp->caps & ~cpu_to_le32(TRS_CAPS_KNOWN) || rsp->reserved0 ||
	    !trs_is_zero(rsp->reserved, sizeof(rsp->reserved)))
		goto bad;
	if (conn->idx) {
		if (memcmp(rsp, &sess->conns[0].rsp, sizeof(*rsp)))
			goto bad;
		return 0;
	}

	qd = le16_to_cpu(rsp->queue_depth);
	io_size = le32_to_cpu(rsp->max_io_size);
	segs = le16_to_cpu(rsp->max_segments);
	if (!qd || qd > sess->max_qd || !io_size || io_size % TRS_MR_PAGE ||
	    io_size > TRS_MAX_IO_SIZE || !segs)
		goto bad;

	pages = min(TRS_MR_PAGES(io_size), sess->max_mr_pages);
	sess->queue_depth = qd;
	sess->chunk_size = TRS_HDR_AREA + io_size;
	sess->max_io_size = (pages - 1) * TRS_MR_PAGE;
	sess->max_segments = min(segs, pages);
	return 0;

bad:
	trs_clt_err(sess, "connection %u: malformed accept from the server\n",
		    conn->idx);
	return -EPROTO;
}

static int trs_clt_conn_connect(struct trs_clt_conn *conn)
{
	struct trs_clt_sess *sess = conn->sess;
	struct trs_msg_conn_req req = {
		.magic		 = cpu_to_le16(TRS_MAGIC),
		.ver_major	 = TRS_PROTO_VER_MAJOR,
		.ver_minor	 = TRS_PROTO_VER_MINOR,
		.caps		 = cpu_to_le32(TRS_CAPS_KNOWN),
		.conn_idx	 = cpu_to_le16(conn->idx),
		.conn_cnt	 = cpu_to_le16(sess->nr_conns),
		.max_queue_depth = cpu_to_le16(sess->max_qd),
	};
	struct rdma_conn_param param = {
		.private_data		= &req,
		.private_data_len	= sizeof(req),
		.flow_control		= 1,
		.retry_count		= 7,
		.rnr_retry_count	= 7,
	};
	int err;

	memcpy(req.sess_uuid, &sess->uuid, sizeof(req.sess_uuid));
	trs_clt_step_begin(conn);
	err = rdma_connect(conn->cm_id, &param);
	if (!err)
		err = trs_clt_step_wait(conn);
	if (err)
		return err;
	return trs_clt_check_rsp(conn);
}

static void trs_clt_table_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct trs_clt_sess *sess = container_of(wc->wr_cqe,
						 struct trs_clt_sess, table_cqe);
	unsigned long flags;
	int err = 0;

	if (trs_wc_failed(wc, "chunk table receive"))
		err = -ECONNRESET;
	else if (wc->opcode != IB_WC_RECV)
		err = -EPROTO;

	spin_lock_irqsave(&sess->state_lock, flags);
	sess->table_err = err;
	sess->table_len = wc->byte_len;
	sess->table_done = true;
	spin_unlock_irqrestore(&sess->state_lock, flags);
	if (err)
		trs_clt_wc_fail(sess, wc, err);
	wake_up(&sess->setup_wq);
}

static int trs_clt_post_table_recv(struct trs_clt_sess *sess)
{
	struct trs_clt_conn *conn = &sess->conns[0];
	struct ib_sge sge = {
		.addr	= sess->table_dma,
		.length	= sess->table_size,
		.lkey	= sess->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe		= &sess->table_cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
	};
	int err;

	sess->table_cqe.done = trs_clt_table_done;
	spin_lock_irq(&conn->lock);
	err = ib_post_recv(conn->cm_id->qp, &wr, NULL);
	if (!err)
		conn->stats.wrs_posted++;
	spin_unlock_irq(&conn->lock);
	return err;
}

/* The chunk table arrived and the bounce MRs are registered, or failure. */
static bool trs_clt_table_over(struct trs_clt_sess *sess, int *err)
{
	bool over;

	spin_lock_irq(&sess->state_lock);
	over = (sess->table_done && sess->bounce_done) || sess->setup_err ||
	       sess->table_err || sess->bounce_err;
	*err = sess->setup_err ?: sess->table_err ?: sess->bounce_err;
	spin_unlock_irq(&sess->state_lock);
	return over;
}

/*
 * Wait for the chunk table (and for the registration of the bounce MRs)
 * and check every field of the table.
 */
static int trs_clt_get_table(struct trs_clt_sess *sess)
{
	const struct trs_msg_chunks *table = sess->table;
	u32 i;
	int err;

	if (!wait_event_timeout(sess->setup_wq, trs_clt_table_over(sess, &err),
				TRS_CLT_STEP_TIMEOUT))
		return -ETIMEDOUT;
	if (err)
		return err;

	ib_dma_sync_single_for_cpu(sess->ibdev, sess->table_dma,
				   sess->table_size, DMA_FROM_DEVICE);
	if (sess->table_len != struct_size(table, desc, sess->queue_depth) ||
	    le16_to_cpu(table->magic) != TRS_MAGIC ||
	    le16_to_cpu(table->type) != TRS_MSG_CHUNKS ||
	    le16_to_cpu(table->count) != sess->queue_depth ||
	    table->reserved0 || table->reserved1 ||
	    le32_to_cpu(table->chunk_size) != sess->chunk_size)
		goto bad;
	for (i = 0; i < sess->queue_depth; i++) {
		const struct trs_chunk_desc *desc = &table->desc[i];
		u64 addr = le64_to_cpu(desc->addr);

		if (desc->reserved || addr > U64_MAX - sess->chunk_size)
			goto bad;
		sess->slots[i].raddr = addr;
		sess->slots[i].rkey = le32_to_cpu(desc->rkey);
	}
	return 0;

bad:
	trs_clt_err(sess, "malformed chunk table from the server\n");
	return -EPROTO;
}

static int trs_clt_conn_post_recvs(struct trs_clt_conn *conn, u32 n)
{
	int err;

	spin_lock_irq(&conn->lock);
	err = trs_post_recvs(conn->cm_id->qp, &conn->recv_cqe, n);
	conn->stats.wrs_posted += n;
	spin_unlock_irq(&conn->lock);
	return err;
}

/* Connect connection @conn (not 0) of a session whose slots exist. */
static int trs_clt_conn_open(struct trs_clt_conn *conn)
{
	struct trs_clt_sess *sess = conn->sess;
	int err;

	err = trs_clt_conn_resolve(conn);
	if (err)
		return err;
	if (conn->cm_id->device != sess->ibdev) {
		trs_clt_err(sess, "connection %u resolved to %s, not %s\n",
			    conn->idx, dev_name(&conn->cm_id->device->dev),
			    sess->hca_name);
		return -EXDEV;
	}
	err = trs_clt_conn_create_qp(conn, sess->queue_depth);
	if (err)
		return err;
	conn->recv_cqe.done = trs_clt_recv_done;
	err = trs_clt_conn_post_recvs(conn, sess->queue_depth);
	if (err)
		return err;
	return trs_clt_conn_connect(conn);
}

/**
 * trs_clt_sess_connect() - connect every connection of a session
 * @sess: session in state CONNECTING, without RDMA resources
 *
 * On failure everything is undone with trs_clt_sess_disconnect().  After
 * that the session can be connected again.
 *
 * Return: 0 or a negative errno.
 */
int trs_clt_sess_connect(struct trs_clt_sess *sess)
{
	struct trs_clt_conn *conn0 = &sess->conns[0];
	u32 i;
	int err;

	/* per attempt: a reconnect would run this again on the session */
	spin_lock_irq(&sess->state_lock);
	sess->setup_err = 0;
	sess->table_done = false;
	sess->bounce_done = false;
	spin_unlock_irq(&sess->state_lock);

	err = trs_clt_conn_resolve(conn0);
	if (err)
		goto disconnect;
	err = trs_clt_dev_init(sess, conn0->cm_id);
	if (err)
		goto disconnect;
	err = trs_clt_conn_create_qp(conn0, sess->max_qd);
	if (err)
		goto disconnect;
	err = trs_clt_post_table_recv(sess);
	if (err)
		goto disconnect;
	err = trs_clt_conn_connect(conn0);
	if (err)
		goto disconnect;
	err = trs_clt_slots_init(sess);
	if (err)
		goto disconnect;
	err = trs_clt_slots_register(sess);
	if (err)
		goto disconnect;
	conn0->recv_cqe.done = trs_clt_recv_done;
	err = trs_clt_conn_post_recvs(conn0, sess->queue_depth);
	if (err)
		goto disconnect;

	for (i = 1; i < sess->nr_conns; i++) {
		err = trs_clt_conn_open(&sess->conns[i]);
		if (err)
			goto disconnect;
	}
	err = trs_clt_get_table(sess);
	if (err)
		goto disconnect;
	return 0;

disconnect:
	trs_clt_sess_disconnect(sess);
	return err;
}

/* No more posts on @conn, and tell the server. */
static void trs_clt_conn_stop(struct trs_clt_conn *conn)
{
	spin_lock_irq(&conn->lock);
	conn->dead = true;
	spin_unlock_irq(&conn->lock);
	if (conn->cm_id)
		rdma_disconnect(conn->cm_id);
}

static bool trs_clt_conn_established(struct trs_clt_conn *conn)
{
	bool established;

	spin_lock_irq(&conn->sess->state_lock);
	established = conn->established;
	spin_unlock_irq(&conn->sess->state_lock);
	return established;
}

static void trs_clt_conn_destroy_qp(struct trs_clt_conn *conn)
{
	if (!conn->cq)
		return;
	trs_qp_destroy(conn->cm_id, conn->cq);
	conn->cq = NULL;
}

static void trs_clt_conn_destroy_id(struct trs_clt_conn *conn)
{
	if (!conn->cm_id)
		return;
	rdma_destroy_id(conn->cm_id);
	conn->cm_id = NULL;
	conn->established = false;
}

/**
 * trs_clt_sess_disconnect() - release the RDMA resources of a session
 * @sess: session in any state of trs_clt_sess_connect()
 *
 * Disconnects and drains every connection, so the server can no longer
 * touch client memory, fails the requests in flight, then destroys
 * everything in reverse order of creation.  The PD goes before connection
 * 0's CM id so that the CM's device removal, which waits for our CM ids,
 * also finds the PD gone.  The caller owns the session: trs_clt_open() or
 * the close work.
 */
void trs_clt_sess_disconnect(struct trs_clt_sess *sess)
{
	struct trs_clt_conn *conn0 = &sess->conns[0];
	u32 i;

	for (i = 0; i < sess->nr_conns; i++)
		trs_clt_conn_stop(&sess->conns[i]);
	for (i = 0; i < sess->nr_conns; i++)
		if (trs_clt_conn_established(&sess->conns[i]))
			ib_drain_qp(sess->conns[i].cm_id->qp);
	trs_clt_fail_inflight(sess);

	for (i = sess->nr_conns - 1; i > 0; i--) {
		trs_clt_conn_destroy_qp(&sess->conns[i]);
		trs_clt_conn_destroy_id(&sess->conns[i]);
	}
	trs_clt_slots_free(sess);
	trs_clt_conn_destroy_qp(conn0);
	trs_clt_dev_free(sess);
	trs_clt_conn_destroy_id(conn0);
}
