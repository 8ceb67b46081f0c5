// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport client: connection setup and teardown.
 *
 * trs_clt_path_setup() connects connection 0, whose private data asks
 * the server for a session, sets the slots up for the queue depth the
 * server granted and registers their bounce buffers, connects the other
 * connections, then waits for that registration and for the chunk table
 * the server sends on connection 0 once all connections are established
 * and its user accepted the session.  Each step waits at most
 * TRS_CONNECT_TIMEOUT_MS (plus a margin so the CM's own timeout of the step
 * normally fires first); address resolution is tried again every
 * TRS_ADDR_TRY_MS within that bound.  trs_clt_path_teardown() undoes it in
 * reverse order of creation, from any intermediate state.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include "trs-clt.h"

#define TRS_CLT_STEP_TIMEOUT	msecs_to_jiffies(TRS_CONNECT_TIMEOUT_MS + 2000)

static void trs_clt_step_begin(struct trs_clt_conn *conn, const char *step)
{
	struct trs_clt_path *path = conn->path;

	path->setup_step = step;
	path->setup_conn = conn->idx;
	spin_lock_irq(&path->state_lock);
	conn->cm_done = false;
	conn->cm_err = 0;
	spin_unlock_irq(&path->state_lock);
}

/* Record the result of a connect step; called by the CM handler. */
static void trs_clt_step_end(struct trs_clt_conn *conn, int err,
			     bool established)
{
	struct trs_clt_path *path = conn->path;
	unsigned long flags;

	spin_lock_irqsave(&path->state_lock, flags);
	if (!conn->cm_done) {
		conn->cm_err = err;
		conn->cm_done = true;
	}
	conn->established |= established;
	spin_unlock_irqrestore(&path->state_lock, flags);
	wake_up(&path->setup_wq);
}

static bool trs_clt_step_over(struct trs_clt_conn *conn, int *err)
{
	struct trs_clt_path *path = conn->path;
	bool over;

	spin_lock_irq(&path->state_lock);
	over = conn->cm_done || path->setup_err;
	/*
	 * The step's own CM result (a reject says why) wins over the
	 * generic session failure a later CM event of the same attempt
	 * records.
	 */
	if (conn->cm_done && conn->cm_err)
		*err = conn->cm_err;
	else
		*err = path->setup_err ?: conn->cm_err;
	spin_unlock_irq(&path->state_lock);
	return over;
}

static int trs_clt_step_wait(struct trs_clt_conn *conn)
{
	int err;

	if (!wait_event_timeout(conn->path->setup_wq,
				trs_clt_step_over(conn, &err),
				TRS_CLT_STEP_TIMEOUT))
		return -ETIMEDOUT;
	return err;
}

/*
 * A reject: the errno the server's private data gives, as replies' statuses
 * are taken (trs-clt-io.c), or -ECONNREFUSED.  Never one of the kernel's
 * internal errnos (512 and up: -ERESTARTSYS...), which would reach the
 * map writer (or make its write start again), nor the rest up to
 * MAX_ERRNO.
 */
static int trs_clt_rejected(struct trs_clt_conn *conn,
			    struct rdma_cm_event *ev)
{
	struct trs_clt_path *path = conn->path;
	const struct trs_msg_conn_rsp *rsp;
	u8 len = 0;
	u16 status = 0;

	rsp = rdma_consumer_reject_data(conn->cm_id, ev, &len);
	if (rsp && len >= sizeof(*rsp) && le16_to_cpu(rsp->magic) == TRS_MAGIC)
		status = le16_to_cpu(rsp->status);
	if (status && status < 512) {
		trs_log_err(path->sess, "connection %u rejected by the server: %pe\n",
			    conn->idx, ERR_PTR(-status));
		return -status;
	}
	if (status) {
		trs_log_err(path->sess, "connection %u rejected by the server with status %u, not an errno a server can mean: ECONNREFUSED\n",
			    conn->idx, status);
		return -ECONNREFUSED;
	}
	trs_log_err(path->sess, "connection %u rejected: %s\n", conn->idx,
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
 * ib_client removal, a recovery work or trs_clt_close() does it, in
 * process context).
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
	/* the resolution may try again: its step alone hears of it */
	if (err && ev->event != RDMA_CM_EVENT_ADDR_ERROR)
		trs_clt_fail(conn->path, err);
	return 0;
}

static int trs_clt_dev_init(struct trs_clt_path *path,
			    struct rdma_cm_id *cm_id)
{
	struct ib_device *dev = cm_id->device;
	const struct ib_device_attr *attr = &dev->attrs;
	struct trs_msg_chunks *table;
	int err;

	err = trs_dev_check(cm_id, TRS_MR_PAGES(TRS_MR_PAGE));
	if (err)
		return err;
	path->max_send_sge = min_t(u32, attr->max_send_sge,
				   TRS_CLT_MAX_SEND_SGE);
	path->max_mr_pages = min_t(u32, attr->max_fast_reg_page_list_len,
				   TRS_MR_PAGES(TRS_MAX_IO_SIZE));
	/* connection 0's QP and CQ: see trs_clt_conn_create_qp() */
	path->max_qd = min3(TRS_CLT_MAX_QUEUE_DEPTH,
			    (u32)max(attr->max_qp_wr -
				     (int)TRS_CLT_SIGNAL_EVERY - 2, 0) /
				TRS_CLT_MR_WRS,
			    (u32)max(attr->max_cqe -
				     (int)TRS_CLT_SIGNAL_EVERY - 5 -
				     (int)TRS_HB_RECVS, 0) /
				(TRS_CLT_MR_WRS + 1));
	/* a reconnect asks for what the session has */
	if (path->sess->queue_depth)
		path->max_qd = min(path->max_qd, path->sess->queue_depth);
	if (!path->max_qd)
		return -EOPNOTSUPP;

	path->pd = TRS_FI(ib_alloc_pd(dev, 0), ERR_PTR(-ENOMEM));
	if (IS_ERR(path->pd)) {
		err = PTR_ERR(path->pd);
		path->pd = NULL;
		return err;
	}
	path->table_size = struct_size(table, desc, path->max_qd);
	path->table = TRS_FI(kzalloc(path->table_size, GFP_KERNEL), NULL);
	if (!path->table) {
		err = -ENOMEM;
		goto dealloc_pd;
	}
	path->table_dma = ib_dma_map_single(dev, path->table, path->table_size,
					    DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(dev, path->table_dma)) {
		err = -ENOMEM;
		goto free_table;
	}
	WRITE_ONCE(path->ibdev, dev);
	strscpy(path->hca_name, dev_name(&dev->dev), sizeof(path->hca_name));
	path->hca_port = cm_id->port_num;
	spin_lock_irq(&path->state_lock);
	memcpy(&path->src, &cm_id->route.addr.src_addr, sizeof(path->src));
	spin_unlock_irq(&path->state_lock);
	return 0;

free_table:
	kfree(path->table);
	path->table = NULL;
dealloc_pd:
	ib_dealloc_pd(path->pd);
	path->pd = NULL;
	return err;
}

static void trs_clt_dev_free(struct trs_clt_path *path)
{
	if (!path->ibdev)
		return;
	ib_dma_unmap_single(path->ibdev, path->table_dma, path->table_size,
			    DMA_FROM_DEVICE);
	kfree(path->table);
	path->table = NULL;
	ib_dealloc_pd(path->pd);
	path->pd = NULL;
	WRITE_ONCE(path->ibdev, NULL);
}

/* Create the CM id of a connection and resolve address and route. */
static int trs_clt_conn_resolve(struct trs_clt_conn *conn)
{
	struct trs_clt_path *path = conn->path;
	struct rdma_cm_id *cm_id;
	unsigned long end;
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

	/*
	 * rdma_cm looks at the neighbour entry again only when one becomes
	 * valid or when the request times out: a request that found the
	 * entry still probing, just before its last probe failed (a link
	 * that was silent and is back), would wait the whole timeout for an
	 * answer nobody asks for.  So resolve in short tries, each of which
	 * probes the neighbour anew, within the step's bound.
	 */
	end = jiffies + msecs_to_jiffies(TRS_CONNECT_TIMEOUT_MS);
	do {
		trs_clt_step_begin(conn, "address resolution");
		err = rdma_resolve_addr(cm_id,
					path->src_req.ss_family == AF_UNSPEC ?
					NULL :
					(struct sockaddr *)&path->src_req,
					(struct sockaddr *)&path->dst,
					TRS_ADDR_TRY_MS) ?:
		      trs_clt_step_wait(conn);
	} while (err == -ETIMEDOUT && time_before(jiffies, end));
	if (err)
		return err;

	trs_clt_step_begin(conn, "route resolution");
	return rdma_resolve_route(cm_id, TRS_CONNECT_TIMEOUT_MS) ?:
	       trs_clt_step_wait(conn);
}

static int trs_clt_conn_create_qp(struct trs_clt_conn *conn)
{
	struct trs_clt_path *path = conn->path;
	/* connection 0 is created before the server granted a depth */
	u32 qd = conn->idx ? path->queue_depth : path->max_qd;
	struct trs_qp_attr attr = {
		/*
		 * A request puts at most TRS_CLT_MR_WRS WRs in the send
		 * queue; conn->sq_free counts entries until a signaled
		 * completion retires them, and a request finding fewer waits
		 * (-EAGAIN).  Room for @qd requests (one per slot) and
		 * TRS_CLT_SIGNAL_EVERY retired late, plus the drain WR;
		 * connection 0 also has room for the one heartbeat in flight,
		 * which is not counted in sq_free.  Each reply consumes a
		 * receive: qd, plus the drain WR; on connection 0 also the
		 * chunk table and the server's heartbeats.
		 */
		.send_wr	= TRS_CLT_MR_WRS * qd + TRS_CLT_SIGNAL_EVERY + 1 +
				  !conn->idx,
		.recv_wr	= qd + 1 + (conn->idx ? 0 : 1 + TRS_HB_RECVS),
		.send_sge	= path->max_send_sge,
		.poll_ctx	= IB_POLL_SOFTIRQ,
	};

	spin_lock_irq(&conn->lock);
	conn->sq_free = attr.send_wr - 1 - !conn->idx;
	conn->sq_posted = 0;
	conn->sq_retired = 0;
	conn->unsignaled = 0;
	spin_unlock_irq(&conn->lock);
	return trs_qp_create(conn->cm_id, path->pd, conn, conn->idx, &attr,
			     &conn->cq);
}

/*
 * The accept private data: connection 0 sets the path's limits, which must
 * be the session's once it has them (a reconnect).
 */
static int trs_clt_check_rsp(struct trs_clt_conn *conn)
{
	struct trs_clt_path *path = conn->path;
	struct trs_clt_sess *sess = path->sess;
	const struct trs_msg_conn_rsp *rsp = &conn->rsp;
	u32 qd, io_size, segs, pages;

	if (!trs_proto_ok(rsp->magic, rsp->ver_major) || rsp->status ||
	    rsp->caps & ~cpu_to_le32(TRS_CAPS_KNOWN) || rsp->reserved0)
		goto bad;
	if (conn->idx) {
		if (memcmp(rsp, &path->conns[0].rsp, sizeof(*rsp)))
			goto bad;
		return 0;
	}

	qd = le16_to_cpu(rsp->queue_depth);
	io_size = le32_to_cpu(rsp->max_io_size);
	segs = le16_to_cpu(rsp->max_segments);
	if (!qd || qd > path->max_qd || !io_size || io_size % TRS_MR_PAGE ||
	    io_size > TRS_MAX_IO_SIZE || !segs)
		goto bad;

	pages = min(TRS_MR_PAGES(io_size), path->max_mr_pages);
	path->slot_gen = rsp->caps & cpu_to_le32(TRS_CAP_SLOT_GEN);
	path->hb.on = rsp->caps & cpu_to_le32(TRS_CAP_HEARTBEAT);
	path->notice_on = rsp->caps & cpu_to_le32(TRS_CAP_NOTICE);
	path->tag_idx_mask = path->slot_gen ? TRS_IMM_MASK(TRS_SLOT_IDX_BITS) :
			     TRS_IMM_MASK(TRS_IMM_SLOT_BITS);
	path->queue_depth = qd;
	path->chunk_size = TRS_HDR_AREA + io_size;
	path->max_io_size = (pages - 1) * TRS_MR_PAGE;
	path->max_segments = min(segs, pages);
	if (sess->queue_depth &&
	    (path->queue_depth != sess->queue_depth ||
	     path->chunk_size != sess->chunk_size ||
	     path->max_io_size != sess->max_io_size ||
	     path->max_segments != sess->max_segments)) {
		trs_log_err(sess, "the server now grants queue depth %u, %u bytes and %u segments per request; the session has %u, %u and %u\n",
			    path->queue_depth, path->max_io_size,
			    path->max_segments, sess->queue_depth,
			    sess->max_io_size, sess->max_segments);
		return -EPROTO;
	}
	/* the server's session: trs_clt_path_go_live() compares it */
	memcpy(path->key, rsp->sess_key, sizeof(path->key));
	return 0;

bad:
	trs_log_err(path->sess, "connection %u: malformed accept from the server\n",
		    conn->idx);
	return -EPROTO;
}

static int trs_clt_conn_connect(struct trs_clt_conn *conn)
{
	struct trs_clt_path *path = conn->path;
	struct trs_msg_conn_req req = {
		.magic		 = cpu_to_le16(TRS_MAGIC),
		.ver_major	 = TRS_PROTO_VER_MAJOR,
		.ver_minor	 = TRS_PROTO_VER_MINOR,
		.caps		 = cpu_to_le32(TRS_CAPS_KNOWN),
		.conn_idx	 = cpu_to_le16(conn->idx),
		.conn_cnt	 = cpu_to_le16(path->nr_conns),
		.max_queue_depth = cpu_to_le16(path->max_qd),
		.path_id	 = cpu_to_le16(path->id),
	};
	struct rdma_conn_param param = {
		.private_data		= &req,
		.private_data_len	= sizeof(req),
		.flow_control		= 1,
		.retry_count		= 7,
		.rnr_retry_count	= 7,
	};
	int err;

	memcpy(req.sess_uuid, &path->sess->uuid, sizeof(req.sess_uuid));
	/* connection 0 names the session it joins, the others their path */
	if (conn->idx) {
		err = trs_clt_auth_conn_key(path, conn->idx, req.sess_key);
		if (err)
			return err;
	} else {
		spin_lock_irq(&path->sess->key_lock);
		memcpy(req.sess_key, path->sess->sess_key,
		       sizeof(req.sess_key));
		spin_unlock_irq(&path->sess->key_lock);
	}
	trs_clt_step_begin(conn, "connect");
	return rdma_connect(conn->cm_id, &param) ?: trs_clt_step_wait(conn) ?:
	       trs_clt_check_rsp(conn);
}

static void trs_clt_table_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct trs_clt_path *path = container_of(wc->wr_cqe,
						 struct trs_clt_path, table_cqe);
	int err = trs_wc_recv_err(wc, "chunk table receive");
	unsigned long flags;

	spin_lock_irqsave(&path->state_lock, flags);
	path->table_err = err;
	path->table_len = wc->byte_len;
	path->table_done = true;
	spin_unlock_irqrestore(&path->state_lock, flags);
	if (err)
		trs_clt_wc_fail(path, wc, err);
	wake_up(&path->setup_wq);
}

static int trs_clt_post_table_recv(struct trs_clt_path *path)
{
	struct trs_clt_conn *conn = &path->conns[0];
	struct ib_sge sge = {
		.addr	= path->table_dma,
		.length	= path->table_size,
		.lkey	= path->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe		= &path->table_cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
	};
	int err;

	path->table_cqe.done = trs_clt_table_done;
	spin_lock_irq(&conn->lock);
	err = ib_post_recv(conn->cm_id->qp, &wr, NULL);
	if (!err)
		conn->stats.wrs_posted++;
	spin_unlock_irq(&conn->lock);
	return err;
}

/* The chunk table arrived and the bounce MRs are registered, or failure. */
static bool trs_clt_table_over(struct trs_clt_path *path, int *err)
{
	bool over;

	spin_lock_irq(&path->state_lock);
	over = (path->table_done && path->bounce_done) || path->setup_err ||
	       path->table_err || path->bounce_err;
	*err = path->setup_err ?: path->table_err ?: path->bounce_err;
	spin_unlock_irq(&path->state_lock);
	return over;
}

/* The server refused the path where its chunk table would come. */
static int trs_clt_refused(struct trs_clt_path *path,
			   const struct trs_msg_result *res)
{
	u16 status = le16_to_cpu(res->status);
	int err = status && status < 512 ? -status : -EPROTO;

	if (le16_to_cpu(res->magic) != TRS_MAGIC || res->reserved0 ||
	    !path->auth)
		err = -EPROTO;
	trs_log_err(path->sess, "the server refused the path: %pe\n",
		    ERR_PTR(err));
	return err;
}

/*
 * Wait for the chunk table (and for the registration of the bounce MRs)
 * and check every field of the table.
 */
static int trs_clt_get_table(struct trs_clt_path *path)
{
	const struct trs_msg_chunks *table = path->table;
	u32 i;
	int err;

	path->setup_step = "chunk table";
	path->setup_conn = 0;
	if (!wait_event_timeout(path->setup_wq, trs_clt_table_over(path, &err),
				TRS_CLT_STEP_TIMEOUT))
		return -ETIMEDOUT;
	if (err)
		return err;

	ib_dma_sync_single_for_cpu(path->ibdev, path->table_dma,
				   path->table_size, DMA_FROM_DEVICE);
	if (path->table_len == sizeof(struct trs_msg_result) &&
	    le16_to_cpu(table->type) == TRS_MSG_RESULT)
		return trs_clt_refused(path, (const void *)table);
	if (path->table_len != struct_size(table, desc, path->queue_depth) ||
	    le16_to_cpu(table->magic) != TRS_MAGIC ||
	    le16_to_cpu(table->type) != TRS_MSG_CHUNKS ||
	    le16_to_cpu(table->count) != path->queue_depth ||
	    table->reserved0 || table->reserved1 ||
	    le32_to_cpu(table->chunk_size) != path->chunk_size)
		goto bad;
	for (i = 0; i < path->queue_depth; i++) {
		const struct trs_chunk_desc *desc = &table->desc[i];
		u64 addr = le64_to_cpu(desc->addr);

		if (desc->reserved || addr > U64_MAX - path->chunk_size)
			goto bad;
		path->slots[i].raddr = addr;
		path->slots[i].rkey = le32_to_cpu(desc->rkey);
	}
	return 0;

bad:
	trs_log_err(path->sess, "malformed chunk table from the server\n");
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

/*
 * Connect connection @conn of a path.  Connection 0 finds the path's
 * device; its receives are posted once its accept says what comes first
 * (trs_clt_path_setup()).  The others come once the slots exist, on the
 * same device, with a receive per slot.
 */
static int trs_clt_conn_open(struct trs_clt_conn *conn)
{
	struct trs_clt_path *path = conn->path;
	int err;

	err = trs_clt_conn_resolve(conn);
	if (err)
		return err;
	if (!conn->idx) {
		err = trs_clt_dev_init(path, conn->cm_id);
	} else if (conn->cm_id->device != path->ibdev) {
		trs_log_err(path->sess, "connection %u resolved to %s, not %s\n",
			    conn->idx, dev_name(&conn->cm_id->device->dev),
			    path->hca_name);
		err = -EXDEV;
	}
	if (!err)
		err = trs_clt_conn_create_qp(conn);
	if (err)
		return err;
	conn->recv_cqe.done = trs_clt_recv_done;
	if (conn->idx)
		err = trs_clt_conn_post_recvs(conn, path->queue_depth);
	return err ?: trs_clt_conn_connect(conn);
}

/**
 * trs_clt_path_setup() - connect every connection of a path
 * @path: path in state CONNECTING, without RDMA resources
 *
 * On failure everything is undone with trs_clt_path_teardown().  After
 * that the path can be set up again.
 *
 * Return: 0 or a negative errno.
 */
int trs_clt_path_setup(struct trs_clt_path *path)
{
	struct trs_clt_conn *conn0 = &path->conns[0];
	u32 i;
	int err;

	/* per attempt; setup_err is reset by the change to CONNECTING */
	spin_lock_irq(&path->state_lock);
	path->table_done = false;
	path->table_err = 0;
	path->bounce_done = false;
	path->bounce_err = 0;
	spin_unlock_irq(&path->state_lock);

	/*
	 * Connection 0's receives in the order the server's messages come:
	 * its CHALLENGE (TRS_CAP_AUTH), then the chunk table or a RESULT
	 * refusing the path, then replies and heartbeats.  The server sends
	 * nothing before our HELLO, or, without TRS_CAP_AUTH, before every
	 * connection is established.
	 */
	err = trs_clt_conn_open(conn0) ?:
	      trs_clt_auth_start(path) ?:
	      trs_clt_post_table_recv(path) ?:
	      trs_clt_auth_finish(path) ?:
	      trs_clt_slots_init(path) ?:
	      trs_clt_slots_register(path) ?:
	      trs_clt_conn_post_recvs(conn0, path->queue_depth + TRS_HB_RECVS);
	for (i = 1; i < path->nr_conns && !err; i++)
		err = trs_clt_conn_open(&path->conns[i]);
	err = err ?: trs_clt_get_table(path);
	if (err) {
		trs_clt_path_teardown(path);
		return err;
	}
	path->up = true;
	trs_hb_start(&path->hb);
	return 0;
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

	spin_lock_irq(&conn->path->state_lock);
	established = conn->established;
	spin_unlock_irq(&conn->path->state_lock);
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
	spin_lock_irq(&conn->path->state_lock);
	conn->established = false;
	spin_unlock_irq(&conn->path->state_lock);
}

/**
 * trs_clt_path_teardown() - release the RDMA resources of a path
 * @path: path in any state of trs_clt_path_setup()
 *
 * Disconnects and drains every connection, so the server can no longer
 * touch client memory, fails the requests in flight, then destroys
 * everything in reverse order of creation.  The PD goes before connection
 * 0's CM id so that the CM's device removal, which waits for our CM ids,
 * also finds the PD gone.  The caller owns the path: trs_clt_open(), a
 * recovery work or trs_clt_close().
 */
void trs_clt_path_teardown(struct trs_clt_path *path)
{
	struct trs_clt_conn *conn0 = &path->conns[0];
	u32 i;

	trs_hb_stop(&path->hb);
	for (i = 0; i < path->nr_conns; i++)
		trs_clt_conn_stop(&path->conns[i]);
	for (i = 0; i < path->nr_conns; i++)
		if (trs_clt_conn_established(&path->conns[i]))
			ib_drain_qp(path->conns[i].cm_id->qp);
	trs_clt_fail_inflight(path);

	for (i = path->nr_conns - 1; i > 0; i--) {
		trs_clt_conn_destroy_qp(&path->conns[i]);
		trs_clt_conn_destroy_id(&path->conns[i]);
	}
	trs_clt_slots_free(path);
	trs_clt_conn_destroy_qp(conn0);
	trs_clt_auth_free(path);
	trs_clt_dev_free(path);
	trs_clt_conn_destroy_id(conn0);
	path->up = false;
}
