// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport server: the life cycle of a path.
 *
 * A path is the connections of a session from one client port: its
 * connection 0 brings it (trs-srv-sess.c links it into its session), with
 * its PD, chunks and MRs; the other connections attach to it.  When all are
 * established, the open work opens the session for the user if no other
 * path did, and sends the chunk table on connection 0, which tells the
 * client the path is usable.  A path that does not get all its connections
 * within TRS_SRV_SETUP_TIMEOUT of its first one is closed.  Every end of a
 * path goes through trs_srv_path_fail(), which queues its close work once;
 * the work unlinks it from the session, and the last path to go closes
 * the session for the user.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ib_cm.h>
#include "trs-srv.h"

#define TRS_SRV_SETUP_TIMEOUT	(30 * HZ)

static unsigned int trs_srv_hb_timeout_sec = 10;
module_param_named(heartbeat_timeout_sec, trs_srv_hb_timeout_sec, uint, 0644);
MODULE_PARM_DESC(heartbeat_timeout_sec,
		 "seconds without a heartbeat from a client before its path is closed (3..3600, default 10)");

/**
 * trs_srv_path_fail() - close a path
 * @path: the path
 * @why: reason, logged the first time
 *
 * Queues the close work once.  Any context.
 */
void trs_srv_path_fail(struct trs_srv_path *path, const char *why)
{
	unsigned long flags;
	bool first;

	spin_lock_irqsave(&path->lock, flags);
	first = path->state != TRS_SRV_CLOSING;
	path->state = TRS_SRV_CLOSING;
	spin_unlock_irqrestore(&path->lock, flags);
	if (!first)
		return;
	trs_log_info(path, "closing: %s\n", why);
	/*
	 * No request reaches the user any more.  The kill drops the initial
	 * reference; the close work holds its own until it is done.
	 */
	percpu_ref_get(&path->inflight);
	percpu_ref_kill(&path->inflight);
	queue_work(trs_srv_wq, &path->close_work);
}

/* The RDMA side of a chunk; its memory stays for a request still in use. */
static void trs_srv_chunk_unmap(struct trs_srv_path *path,
				struct trs_srv_slot *slot)
{
	if (!slot->mr)
		return;
	ib_dereg_mr(slot->mr);
	ib_dma_unmap_sg(path->ibdev, &slot->sg, 1, DMA_BIDIRECTIONAL);
	slot->mr = NULL;
}

static int trs_srv_chunk_init(struct trs_srv_path *path,
			      struct trs_srv_slot *slot)
{
	struct ib_device *dev = path->ibdev;
	struct ib_mr *mr;

	slot->buf = TRS_FI(alloc_pages_exact(path->chunk_size,
					     GFP_KERNEL | __GFP_ZERO), NULL);
	if (!slot->buf)
		return -ENOMEM;
	sg_init_one(&slot->sg, slot->buf, path->chunk_size);
	if (ib_dma_map_sg(dev, &slot->sg, 1, DMA_BIDIRECTIONAL) != 1)
		return -ENOMEM;
	mr = TRS_FI(ib_alloc_mr(path->pd, IB_MR_TYPE_MEM_REG,
				path->chunk_size / TRS_MR_PAGE),
		    ERR_PTR(-ENOMEM));
	if (IS_ERR(mr)) {
		ib_dma_unmap_sg(dev, &slot->sg, 1, DMA_BIDIRECTIONAL);
		return PTR_ERR(mr);
	}
	slot->mr = mr;
	if (ib_map_mr_sg(mr, &slot->sg, 1, NULL, TRS_MR_PAGE) != 1) {
		trs_srv_chunk_unmap(path, slot);
		return -EINVAL;
	}
	return 0;
}

/**
 * trs_srv_path_dev_init() - PD, chunks, MRs and chunk table buffer
 * @path: a path from trs_srv_path_alloc(), its setup not done: its close
 *	work, if it was failed already, waits
 *
 * What is allocated is freed with the path, also after a failure.
 *
 * Return: 0 or a negative errno.
 */
int trs_srv_path_dev_init(struct trs_srv_path *path)
{
	struct ib_device *dev = path->ibdev;
	u32 qd = path->queue_depth, i;
	int err;

	path->pd = TRS_FI(ib_alloc_pd(dev, 0), ERR_PTR(-ENOMEM));
	if (IS_ERR(path->pd)) {
		err = PTR_ERR(path->pd);
		path->pd = NULL;
		return err;
	}
	path->table_len = struct_size(path->table, desc, qd);
	path->table = TRS_FI(kzalloc(path->table_len, GFP_KERNEL), NULL);
	if (!path->table)
		return -ENOMEM;
	path->table_dma = ib_dma_map_single(dev, path->table, path->table_len,
					    DMA_TO_DEVICE);
	if (ib_dma_mapping_error(dev, path->table_dma))
		return -ENOMEM;
	path->table_mapped = true;
	path->busy = TRS_FI(bitmap_zalloc(qd, GFP_KERNEL), NULL);
	path->slots = TRS_FI(kvcalloc(qd, sizeof(*path->slots), GFP_KERNEL),
			     NULL);
	if (!path->busy || !path->slots)
		return -ENOMEM;

	for (i = 0; i < qd; i++) {
		struct trs_srv_slot *slot = &path->slots[i];

		slot->path = path;
		slot->req.sess = path->sess;
		slot->req.slot = i;
		INIT_LIST_HEAD(&slot->wait_entry);
		err = trs_srv_chunk_init(path, slot);
		if (err)
			return err;
		slot->req.data = slot->buf + TRS_HDR_AREA;
	}
	return 0;
}

/*
 * Undo the RDMA side of trs_srv_dev_init(): MRs, DMA mappings, PD.  The
 * memory stays: a request whose bio still runs may use its chunk.
 */
static void trs_srv_dev_unmap(struct trs_srv_path *path)
{
	u32 i;

	trs_srv_auth_free(path);
	if (path->slots)
		for (i = 0; i < path->queue_depth; i++)
			trs_srv_chunk_unmap(path, &path->slots[i]);
	if (path->table_mapped) {
		ib_dma_unmap_single(path->ibdev, path->table_dma,
				    path->table_len, DMA_TO_DEVICE);
		path->table_mapped = false;
	}
	if (path->pd) {
		ib_dealloc_pd(path->pd);
		path->pd = NULL;
	}
}

/* Free what trs_srv_dev_init() allocated, once nothing uses it. */
static void trs_srv_dev_free(struct trs_srv_path *path)
{
	u32 i;

	trs_srv_dev_unmap(path);
	if (path->slots) {
		for (i = 0; i < path->queue_depth; i++)
			if (path->slots[i].buf)
				free_pages_exact(path->slots[i].buf,
						 path->chunk_size);
		kvfree(path->slots);
	}
	kfree(path->table);
	bitmap_free(path->busy);
}

/* The last request of a closed path was answered (any context). */
static void trs_srv_path_release(struct percpu_ref *ref)
{
	struct trs_srv_path *path = container_of(ref, struct trs_srv_path,
						 inflight);

	queue_work(trs_srv_wq, &path->free_work);
}

/**
 * trs_srv_path_free() - free a path, and what trs_srv_path_alloc() took:
 *	its chunk memory admission and its session reference
 * @path: from trs_srv_path_alloc(), its last request answered, or one
 *	never linked nor started (then trs_srv_mutex may be held)
 */
void trs_srv_path_free(struct trs_srv_path *path)
{
	struct trs_srv_sess *sess = path->sess;
	u32 i;

	trs_srv_dev_free(path);
	/* a path discarded before it was linked has no close work */
	trs_srv_release_conns(path);
	trs_srv_release_bytes(path->chunk_bytes);
	if (path->conns)
		for (i = 0; i < path->conn_cnt; i++)
			kfree(path->conns[i]);
	kfree(path->conns);
	percpu_ref_exit(&path->inflight);
	kfree(path);
	trs_srv_sess_put(sess);
}

static void trs_srv_free_work(struct work_struct *work)
{
	struct trs_srv_path *path = container_of(work, struct trs_srv_path,
						 free_work);

	trs_log_info(path, "freed\n");
	trs_srv_path_free(path);
}

static void trs_srv_open_work(struct work_struct *work)
{
	struct trs_srv_path *path = container_of(work, struct trs_srv_path,
						 open_work);
	bool opened;
	int err;

	err = trs_srv_sess_user_open(path->sess);
	if (err) {
		trs_log_err(path, "refused by the user: %pe\n", ERR_PTR(err));
		trs_srv_sess_close(path->sess, "refused");
		return;
	}
	spin_lock_irq(&path->lock);
	opened = path->state == TRS_SRV_CONNECTING;
	if (opened) {
		/* the session's priv before: pairs with trs_srv_recv_done() */
		smp_store_release(&path->state, TRS_SRV_OPEN);
	}
	spin_unlock_irq(&path->lock);
	if (!opened)
		return;

	err = trs_srv_send_chunks(path);
	if (err) {
		trs_log_err(path, "cannot send the chunk table: %pe\n",
			    ERR_PTR(err));
		trs_srv_path_fail(path, "chunk table not sent");
		return;
	}
	trs_hb_start(&path->hb);
	trs_srv_sysfs_path_add(path);
	trs_log_info(path, "open: %u connections, queue depth %u, %u bytes per chunk\n",
		     path->conn_cnt, path->queue_depth, path->chunk_size);
}

static void trs_srv_setup_timeout(struct work_struct *work)
{
	struct trs_srv_path *path = container_of(to_delayed_work(work),
						 struct trs_srv_path,
						 setup_work);
	int auth;
	bool stuck;

	spin_lock_irq(&path->lock);
	auth = trs_srv_auth_state(path);
	stuck = path->nr_established < path->conn_cnt || auth <= 0;
	spin_unlock_irq(&path->lock);
	if (auth < 0)
		trs_srv_path_fail(path, "refused");
	else if (stuck)
		trs_srv_path_fail(path, "handshake timeout");
}

static bool trs_srv_conn_established(struct trs_srv_conn *conn)
{
	bool established;

	spin_lock_irq(&conn->path->lock);
	established = conn->established;
	spin_unlock_irq(&conn->path->lock);
	return established;
}

/*
 * Tear a path down: stop all connections, drain them so that no request
 * can arrive and no reply is pending, leave the session (the last path
 * says goodbye to the user), then release every RDMA object in reverse
 * order of creation.  The PD goes before the CM ids so that the CM's
 * device removal, which waits for our CM ids, also finds it gone.  The
 * user may still hold requests (a bio on a disk that hangs): their chunks'
 * memory, the slots, connections and the path itself are freed when the
 * last is answered.  So a hung disk keeps neither the RDMA device nor the
 * client's next connect waiting.
 */
static void trs_srv_close_work(struct work_struct *work)
{
	struct trs_srv_path *path = container_of(work, struct trs_srv_path,
						 close_work);
	struct trs_srv_conn *conn;
	u32 i;

	/*
	 * The connect of connection 0 may still be setting the path up
	 * (trs_srv_path_join() fills its PD and chunks without
	 * trs_srv_mutex): nothing is torn down before it is done.  A connect
	 * of another connection that saw the path alive has set its
	 * connection by the time we get trs_srv_mutex; later ones see it
	 * closing.
	 */
	wait_for_completion(&path->setup_done);
	mutex_lock(&trs_srv_mutex);
	mutex_unlock(&trs_srv_mutex);
	cancel_delayed_work_sync(&path->setup_work);
	flush_work(&path->open_work);
	trs_hb_stop(&path->hb);

	for (i = 0; i < path->conn_cnt; i++) {
		conn = path->conns[i];
		if (!conn)
			continue;
		spin_lock_irq(&conn->lock);
		conn->dead = true;
		spin_unlock_irq(&conn->lock);
		rdma_disconnect(conn->cm_id);
	}
	for (i = 0; i < path->conn_cnt; i++)
		if (path->conns[i] && trs_srv_conn_established(path->conns[i]))
			ib_drain_qp(path->conns[i]->cm_id->qp);
	/* its work may post on connection 0 until then, or use the session */
	trs_srv_auth_stop(path);

	/*
	 * Requests the user still has (a bio that hangs) are not waited
	 * for: their answers go nowhere, and only the memory of their
	 * chunks stays, until the last is answered (trs_srv_path_release()).
	 */
	trs_srv_sess_unlink(path);

	for (i = 0; i < path->conn_cnt; i++) {
		if (!path->conns[i])
			continue;
		/*
		 * Replies held before the connection died are dropped by the
		 * flush work, which may still be pending: run it to the end.
		 */
		flush_work(&path->conns[i]->flush_work);
		trs_qp_destroy(path->conns[i]->cm_id, path->conns[i]->cq);
	}
	trs_srv_dev_unmap(path);
	for (i = 0; i < path->conn_cnt; i++)
		if (path->conns[i])
			rdma_destroy_id(path->conns[i]->cm_id);
	/* its QPs are gone: other paths may have them */
	trs_srv_release_conns(path);
	trs_log_info(path, "closed\n");
	percpu_ref_put(&path->inflight);
}

/*
 * Heartbeats (trs-hb.c): with the last path of a session, a client that
 * vanished (crashed, powered off, cut off) loses its session, its chunks
 * and what it had open, instead of keeping them for ever.
 */
static int trs_srv_hb_send(struct trs_hb *hb)
{
	struct trs_srv_path *path = container_of(hb, struct trs_srv_path, hb);
	struct trs_srv_conn *conn = path->conns[0];
	unsigned long notice = xchg(&path->notice, 0);
	int err = 1;

	spin_lock_irq(&conn->lock);
	if (!conn->dead)
		err = trs_hb_post(hb, conn->cm_id->qp,
				  notice ? TRS_HB_NOTICE : 0);
	spin_unlock_irq(&conn->lock);
	/* not sent now (one in flight, going, or an error): with the next */
	if (err && notice)
		WRITE_ONCE(path->notice, 1);
	return err;
}

static void trs_srv_hb_lost(struct trs_hb *hb, unsigned int sec)
{
	struct trs_srv_path *path = container_of(hb, struct trs_srv_path, hb);

	if (sec)
		trs_log_err(path, "no heartbeat from the client for %u s\n",
			    sec);
	trs_srv_path_fail(path, sec ? "client lost" : "heartbeat not sent");
}

static const struct trs_hb_ops trs_srv_hb_ops = {
	.send	= trs_srv_hb_send,
	.lost	= trs_srv_hb_lost,
};

/**
 * trs_srv_path_alloc() - a new path of a session, not linked yet
 * @sess: its session; the path takes a reference
 * @cm_id: CM id of its connection 0
 * @req: its connect request, checked
 * @rsp: the accept it will send
 * @bytes: chunk memory it was admitted with; released when it is freed
 *
 * Return: the path, or NULL without memory (then nothing is taken).
 */
struct trs_srv_path *trs_srv_path_alloc(struct trs_srv_sess *sess,
					struct rdma_cm_id *cm_id,
					const struct trs_msg_conn_req *req,
					const struct trs_msg_conn_rsp *rsp,
					u64 bytes)
{
	struct trs_srv_path *path;

	path = TRS_FI(kzalloc(sizeof(*path), GFP_KERNEL), NULL);
	if (!path)
		return NULL;
	path->conn_cnt = le16_to_cpu(req->conn_cnt);
	path->conns = TRS_FI(kcalloc(path->conn_cnt, sizeof(*path->conns),
				     GFP_KERNEL), NULL);
	if (!path->conns ||
	    TRS_FI(percpu_ref_init(&path->inflight, trs_srv_path_release, 0,
				   GFP_KERNEL), -ENOMEM)) {
		kfree(path->conns);
		kfree(path);
		return NULL;
	}

	path->sess = sess;
	kref_get(&sess->ref);
	INIT_LIST_HEAD(&path->sess_entry);
	INIT_LIST_HEAD(&path->conn_entry);
	path->path_id = le16_to_cpu(req->path_id);
	snprintf(path->name, sizeof(path->name), "%s/%u", sess->name,
		 path->path_id);
	path->ibdev = cm_id->device;
	path->src = cm_id->route.addr.src_addr;
	path->dst = cm_id->route.addr.dst_addr;
	path->hca_port = cm_id->port_num;
	path->chunk_bytes = bytes;
	path->rsp = *rsp;
	path->queue_depth = le16_to_cpu(rsp->queue_depth);
	path->max_io_size = le32_to_cpu(rsp->max_io_size);
	path->chunk_size = TRS_HDR_AREA + path->max_io_size;
	spin_lock_init(&path->lock);
	path->state = TRS_SRV_CONNECTING;
	INIT_WORK(&path->open_work, trs_srv_open_work);
	INIT_WORK(&path->close_work, trs_srv_close_work);
	INIT_WORK(&path->free_work, trs_srv_free_work);
	INIT_DELAYED_WORK(&path->setup_work, trs_srv_setup_timeout);
	init_completion(&path->setup_done);
	path->tag_idx_mask = rsp->caps & cpu_to_le32(TRS_CAP_SLOT_GEN) ?
			     TRS_IMM_MASK(TRS_SLOT_IDX_BITS) :
			     TRS_IMM_MASK(TRS_IMM_SLOT_BITS);
	path->table_cqe.done = trs_srv_table_done;
	trs_hb_init(&path->hb, trs_srv_wq, &trs_srv_hb_ops,
		    &trs_srv_hb_timeout_sec);
	path->hb.on = rsp->caps & cpu_to_le32(TRS_CAP_HEARTBEAT);
	return path;
}

/**
 * trs_srv_path_setup_done() - the connect of connection 0 is done with it
 * @path: a path of trs_srv_path_join(), set up or failed
 *
 * Lets its close work run; the caller must not touch @path afterwards
 * unless it holds trs_srv_mutex (which the close work takes next).
 */
void trs_srv_path_setup_done(struct trs_srv_path *path)
{
	complete(&path->setup_done);
}

/**
 * trs_srv_path_start() - arm the handshake timeout of a new path
 * @path: a path whose connection 0 was accepted
 */
void trs_srv_path_start(struct trs_srv_path *path)
{
	/* from the first connection: later ones do not extend it */
	queue_delayed_work(trs_srv_setup_wq, &path->setup_work,
			   TRS_SRV_SETUP_TIMEOUT);
}

/**
 * trs_srv_path_alive() - may the path still take a connection?
 * @path: the path; trs_srv_mutex held, which its close work waits for
 *
 * Return: true while it is connecting.
 */
bool trs_srv_path_alive(struct trs_srv_path *path)
{
	bool alive;

	lockdep_assert_held(&trs_srv_mutex);
	spin_lock_irq(&path->lock);
	alive = path->state == TRS_SRV_CONNECTING;
	spin_unlock_irq(&path->lock);
	return alive;
}

/**
 * trs_srv_conn_create() - QP, CQ and receives of a connection
 * @path: its path
 * @cm_id: its CM id
 * @idx: its index in the path
 *
 * Undo with trs_srv_conn_destroy() until it is accepted.
 *
 * Return: the connection or an ERR_PTR().
 */
struct trs_srv_conn *trs_srv_conn_create(struct trs_srv_path *path,
					 struct rdma_cm_id *cm_id, u32 idx)
{
	u32 qd = path->queue_depth;
	struct trs_qp_attr attr = {
		/*
		 * Replies need a credit each, and there are qd credits.
		 * Connection 0 also posts one REG_MR per chunk and the chunk
		 * table SEND, once, one heartbeat at a time, and the
		 * CHALLENGE and a RESULT (TRS_CAP_AUTH).  Plus the drain WR.
		 * The receive queue holds qd receives: a receive is reposted
		 * as soon as its request arrives, and the client has at most
		 * qd requests in flight; connection 0 also TRS_HB_RECVS for
		 * the client's heartbeats and HELLO's and PROOF's.  Plus the
		 * drain WR.
		 */
		.send_wr	= qd + 1 + (idx ? 0 : qd + 2 + 2),
		.recv_wr	= qd + 1 + (idx ? 0 : TRS_HB_RECVS + 2),
		.send_sge	= 1,
		.poll_ctx	= IB_POLL_WORKQUEUE,
	};
	struct trs_srv_conn *conn;
	int err;

	conn = TRS_FI(kzalloc(struct_size(conn, sig_covers, qd), GFP_KERNEL),
		      NULL);
	if (!conn)
		return ERR_PTR(-ENOMEM);
	conn->kind = TRS_SRV_CM_CONN;
	conn->path = path;
	conn->idx = idx;
	conn->cm_id = cm_id;
	conn->recv_cqe.done = trs_srv_recv_done;
	conn->rsp_cqe.done = trs_srv_rsp_done;
	spin_lock_init(&conn->lock);
	conn->credits = qd;
	INIT_LIST_HEAD(&conn->rsp_wait);
	INIT_WORK(&conn->flush_work, trs_srv_flush_work);

	err = trs_qp_create(cm_id, path->pd, conn, idx, &attr, &conn->cq);
	if (err)
		goto free_conn;
	/* HELLO and PROOF land in the first two receives */
	if (!idx)
		err = trs_srv_auth_prepare(path, cm_id);
	err = err ?: trs_post_recvs(cm_id->qp, &conn->recv_cqe,
				    qd + (idx ? 0 : TRS_HB_RECVS));
	if (err)
		goto destroy_qp;
	return conn;

destroy_qp:
	trs_qp_destroy(cm_id, conn->cq);
free_conn:
	kfree(conn);
	return ERR_PTR(err);
}

/**
 * trs_srv_conn_destroy() - undo trs_srv_conn_create()
 * @conn: a connection that was not accepted
 */
void trs_srv_conn_destroy(struct trs_srv_conn *conn)
{
	trs_qp_destroy(conn->cm_id, conn->cq);
	kfree(conn);
}

/**
 * trs_srv_established() - a connection is established
 * @conn: the connection
 *
 * The last one of its session starts the open work.
 */
void trs_srv_established(struct trs_srv_conn *conn)
{
	struct trs_srv_path *path = conn->path;

	spin_lock_irq(&path->lock);
	if (!conn->established) {
		conn->established = true;
		path->nr_established++;
	}
	spin_unlock_irq(&path->lock);
	trs_srv_path_may_open(path);
}

/**
 * trs_srv_path_may_open() - open a path that has all it needs
 * @path: a path whose connection was established or whose exchange of
 *	TRS_CAP_AUTH succeeded
 *
 * Once every connection is established and the exchange (if any) done,
 * the open work opens the session for the user and sends the chunk table.
 */
void trs_srv_path_may_open(struct trs_srv_path *path)
{
	spin_lock_irq(&path->lock);
	/* under the lock: the close work flushes it once CLOSING */
	if (path->state == TRS_SRV_CONNECTING &&
	    path->nr_established == path->conn_cnt &&
	    trs_srv_auth_state(path) > 0)
		queue_work(trs_srv_setup_wq, &path->open_work);
	spin_unlock_irq(&path->lock);
}
