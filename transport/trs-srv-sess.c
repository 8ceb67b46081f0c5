// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport server: session handshake and life cycle.
 *
 * The connect request of connection 0 creates the session (PD, chunks and
 * their MRs) and is accepted with the session's limits; the other
 * connections attach to it by its uuid.  When all are established, the
 * open work asks the user (sess_open) and then sends the chunk table on
 * connection 0, which tells the client the session is usable.  A session
 * that does not get all its connections within TRS_SRV_SETUP_TIMEOUT of
 * its first one is closed.  Sessions, sessions per client address and the
 * chunk memory of all sessions are capped by module parameters.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/algapi.h>
#include <linux/bitmap.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include <rdma/ib_cm.h>
#include "trs-srv.h"

#define TRS_SRV_SETUP_TIMEOUT	(30 * HZ)

/*
 * What every session holds, from its admission (trs_srv_admit(), under
 * trs_srv_mutex) until it is freed: atomic, since the free runs from a
 * work without the mutex.
 */
static atomic_t trs_srv_nr_sess = ATOMIC_INIT(0);
static atomic64_t trs_srv_chunk_bytes = ATOMIC64_INIT(0);

/**
 * trs_srv_sess_name() - printable name of a session
 * @sess: session passed to a callback
 *
 * Return: "<client address>-<8 hex digits of the session uuid>".
 */
const char *trs_srv_sess_name(struct trs_srv_sess *sess)
{
	return sess->name;
}
EXPORT_SYMBOL_GPL(trs_srv_sess_name);

/**
 * trs_srv_sess_close() - close a session the user no longer wants
 * @sess: session passed to a callback, not closed yet (sess_close() not
 *	returned)
 * @why: reason, logged
 *
 * Disconnects it as any error would: sess_close() follows from the close
 * work.  Any context.
 */
void trs_srv_sess_close(struct trs_srv_sess *sess, const char *why)
{
	trs_srv_sess_fail(sess, why);
}
EXPORT_SYMBOL_GPL(trs_srv_sess_close);

/**
 * trs_srv_sess_fail() - close a session
 * @sess: session
 * @why: reason, logged the first time
 *
 * Queues the close work once.  Any context.
 */
void trs_srv_sess_fail(struct trs_srv_sess *sess, const char *why)
{
	unsigned long flags;
	bool first;

	spin_lock_irqsave(&sess->lock, flags);
	first = sess->state != TRS_SRV_CLOSING;
	sess->state = TRS_SRV_CLOSING;
	spin_unlock_irqrestore(&sess->lock, flags);
	if (!first)
		return;
	trs_srv_info(sess, "closing: %s\n", why);
	/*
	 * No request reaches the user any more.  The kill drops the initial
	 * reference; the close work holds its own until it is done.
	 */
	percpu_ref_get(&sess->inflight);
	percpu_ref_kill(&sess->inflight);
	queue_work(trs_srv_wq, &sess->close_work);
}

static int trs_srv_chunk_init(struct trs_srv_sess *sess,
			      struct trs_srv_slot *slot)
{
	struct ib_device *dev = sess->ibdev;
	int err = -ENOMEM;

	slot->buf = TRS_FI(alloc_pages_exact(sess->chunk_size,
					     GFP_KERNEL | __GFP_ZERO), NULL);
	if (!slot->buf)
		return -ENOMEM;
	sg_init_one(&slot->sg, slot->buf, sess->chunk_size);
	if (ib_dma_map_sg(dev, &slot->sg, 1, DMA_BIDIRECTIONAL) != 1)
		return -ENOMEM;
	slot->mr = TRS_FI(ib_alloc_mr(sess->pd, IB_MR_TYPE_MEM_REG,
				      sess->chunk_size / TRS_MR_PAGE),
			  ERR_PTR(-ENOMEM));
	if (IS_ERR(slot->mr)) {
		err = PTR_ERR(slot->mr);
		goto unmap;
	}
	if (ib_map_mr_sg(slot->mr, &slot->sg, 1, NULL, TRS_MR_PAGE) != 1) {
		err = -EINVAL;
		goto dereg_mr;
	}
	return 0;

dereg_mr:
	ib_dereg_mr(slot->mr);
unmap:
	ib_dma_unmap_sg(dev, &slot->sg, 1, DMA_BIDIRECTIONAL);
	slot->mr = NULL;
	return err;
}

/* The RDMA side of a chunk; its memory stays for a request still in use. */
static void trs_srv_chunk_unmap(struct trs_srv_sess *sess,
				struct trs_srv_slot *slot)
{
	if (!slot->mr)
		return;
	ib_dereg_mr(slot->mr);
	ib_dma_unmap_sg(sess->ibdev, &slot->sg, 1, DMA_BIDIRECTIONAL);
	slot->mr = NULL;
}

/* PD, chunks, MRs and chunk table buffer; trs_srv_dev_free() undoes it. */
static int trs_srv_dev_init(struct trs_srv_sess *sess, struct ib_device *dev)
{
	u32 qd = sess->queue_depth, i;
	int err;

	sess->ibdev = dev;
	sess->pd = TRS_FI(ib_alloc_pd(dev, 0), ERR_PTR(-ENOMEM));
	if (IS_ERR(sess->pd)) {
		err = PTR_ERR(sess->pd);
		sess->pd = NULL;
		return err;
	}
	sess->table_len = struct_size(sess->table, desc, qd);
	sess->table = TRS_FI(kzalloc(sess->table_len, GFP_KERNEL), NULL);
	if (!sess->table)
		return -ENOMEM;
	sess->table_dma = ib_dma_map_single(dev, sess->table, sess->table_len,
					    DMA_TO_DEVICE);
	if (ib_dma_mapping_error(dev, sess->table_dma)) {
		kfree(sess->table);
		sess->table = NULL;
		return -ENOMEM;
	}
	sess->table_mapped = true;
	sess->busy = TRS_FI(bitmap_zalloc(qd, GFP_KERNEL), NULL);
	sess->slots = TRS_FI(kvcalloc(qd, sizeof(*sess->slots), GFP_KERNEL),
			     NULL);
	if (!sess->busy || !sess->slots)
		return -ENOMEM;

	for (i = 0; i < qd; i++) {
		struct trs_srv_slot *slot = &sess->slots[i];

		slot->sess = sess;
		slot->req.sess = sess;
		slot->req.slot = i;
		INIT_LIST_HEAD(&slot->wait_entry);
		err = trs_srv_chunk_init(sess, slot);
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
static void trs_srv_dev_unmap(struct trs_srv_sess *sess)
{
	u32 i;

	if (sess->slots)
		for (i = 0; i < sess->queue_depth; i++)
			trs_srv_chunk_unmap(sess, &sess->slots[i]);
	if (sess->table_mapped) {
		ib_dma_unmap_single(sess->ibdev, sess->table_dma,
				    sess->table_len, DMA_TO_DEVICE);
		sess->table_mapped = false;
	}
	if (sess->pd) {
		ib_dealloc_pd(sess->pd);
		sess->pd = NULL;
	}
}

/* Free what trs_srv_dev_init() allocated, once nothing uses it. */
static void trs_srv_dev_free(struct trs_srv_sess *sess)
{
	u32 i;

	trs_srv_dev_unmap(sess);
	if (sess->slots) {
		for (i = 0; i < sess->queue_depth; i++)
			if (sess->slots[i].buf)
				free_pages_exact(sess->slots[i].buf,
						 sess->chunk_size);
		kvfree(sess->slots);
	}
	kfree(sess->table);
	bitmap_free(sess->busy);
}

/*
 * Can a new session of @bytes of chunk memory from the client address
 * @peer be held?  Counts it if so.  trs_srv_mutex held; trs_srv_release() undoes.
 */
static int trs_srv_admit(const struct sockaddr_storage *peer, u64 bytes)
{
	unsigned int max_sess = READ_ONCE(trs_srv_max_sessions);
	unsigned int max_peer = READ_ONCE(trs_srv_max_peer_sessions);
	u64 limit = (u64)READ_ONCE(trs_srv_max_chunk_mem_mb) << 20;
	struct trs_srv_sess *sess;
	char addr[TRS_ADDR_LEN];
	unsigned int nr = 0;

	lockdep_assert_held(&trs_srv_mutex);
	if (!limit)
		limit = (u64)totalram_pages() << PAGE_SHIFT >> 1;
	trs_addr_print((const struct sockaddr *)peer, addr, sizeof(addr));
	if (max_sess && atomic_read(&trs_srv_nr_sess) >= max_sess) {
		pr_info_ratelimited("session from %s refused: the server holds max_sessions (%u) sessions\n",
				    addr, max_sess);
		return -EUSERS;
	}
	list_for_each_entry(sess, &trs_srv_sessions, entry)
		if (!memcmp(&sess->peer, peer, sizeof(*peer)))
			nr++;
	if (max_peer && nr >= max_peer) {
		pr_info_ratelimited("session from %s refused: it holds max_sessions_per_peer (%u) sessions\n",
				    addr, max_peer);
		return -EUSERS;
	}
	if (atomic64_read(&trs_srv_chunk_bytes) + bytes > limit) {
		pr_info_ratelimited("session from %s refused: its %llu KiB of chunks would pass max_chunk_mem_mb (%llu MiB)\n",
				    addr, bytes >> 10, limit >> 20);
		return -ENOSPC;
	}
	atomic_inc(&trs_srv_nr_sess);
	atomic64_add(bytes, &trs_srv_chunk_bytes);
	return 0;
}

/* Undo trs_srv_admit(); any context. */
static void trs_srv_release(u64 bytes)
{
	atomic64_sub(bytes, &trs_srv_chunk_bytes);
	atomic_dec(&trs_srv_nr_sess);
}

static void trs_srv_sess_free(struct trs_srv_sess *sess)
{
	struct trs_srv_ctx *ctx = sess->ctx;
	u32 i;

	trs_srv_dev_free(sess);
	trs_srv_release(sess->chunk_bytes);
	if (sess->conns)
		for (i = 0; i < sess->conn_cnt; i++)
			kfree(sess->conns[i]);
	kfree(sess->conns);
	percpu_ref_exit(&sess->inflight);
	kfree(sess);
	if (atomic_dec_and_test(&ctx->nr_sess))
		wake_up_var(&ctx->nr_sess);
}

/* The last request of a closed session was answered (any context). */
static void trs_srv_sess_release(struct percpu_ref *ref)
{
	struct trs_srv_sess *sess = container_of(ref, struct trs_srv_sess,
						 inflight);

	queue_work(trs_srv_wq, &sess->free_work);
}

static void trs_srv_free_work(struct work_struct *work)
{
	struct trs_srv_sess *sess = container_of(work, struct trs_srv_sess,
						 free_work);

	trs_srv_info(sess, "freed\n");
	trs_srv_sess_free(sess);
}

static void trs_srv_open_work(struct work_struct *work)
{
	struct trs_srv_sess *sess = container_of(work, struct trs_srv_sess,
						 open_work);
	void *priv = NULL;
	bool opened;
	int err;

	err = sess->ctx->ops->sess_open(sess, &priv);
	spin_lock_irq(&sess->lock);
	if (!err) {
		sess->priv = priv;
		sess->user_open = true;
	}
	opened = !err && sess->state == TRS_SRV_CONNECTING;
	if (opened) {
		/* @priv before: pairs with trs_srv_recv_done() */
		smp_store_release(&sess->state, TRS_SRV_OPEN);
	}
	spin_unlock_irq(&sess->lock);

	if (err) {
		trs_srv_err(sess, "refused by the user: %pe\n", ERR_PTR(err));
		trs_srv_sess_fail(sess, "refused");
		return;
	}
	if (!opened)
		return;
	err = trs_srv_send_chunks(sess);
	if (err) {
		trs_srv_err(sess, "cannot send the chunk table: %pe\n",
			    ERR_PTR(err));
		trs_srv_sess_fail(sess, "chunk table not sent");
		return;
	}
	trs_srv_hb_start(sess);
	trs_srv_info(sess, "open: %u connections, queue depth %u, %u bytes per chunk\n",
		     sess->conn_cnt, sess->queue_depth, sess->chunk_size);
}

static void trs_srv_setup_timeout(struct work_struct *work)
{
	struct trs_srv_sess *sess = container_of(to_delayed_work(work),
						 struct trs_srv_sess,
						 setup_work);
	bool stuck;

	spin_lock_irq(&sess->lock);
	stuck = sess->nr_established < sess->conn_cnt;
	spin_unlock_irq(&sess->lock);
	if (stuck)
		trs_srv_sess_fail(sess, "handshake timeout");
}

static bool trs_srv_conn_established(struct trs_srv_conn *conn)
{
	bool established;

	spin_lock_irq(&conn->sess->lock);
	established = conn->established;
	spin_unlock_irq(&conn->sess->lock);
	return established;
}

/*
 * Tear a session down: stop all connections, drain them so that no
 * request can arrive and no reply is pending, say goodbye to the user,
 * then release every RDMA object in reverse order of creation.  The PD
 * goes before the CM ids so that the CM's device removal, which waits for
 * our CM ids, also finds it gone.  The user may still hold requests (a
 * bio on a disk that hangs): their chunks' memory, the slots, connections
 * and the session itself are freed when the last is answered.  So a hung
 * disk keeps neither the RDMA device nor the client's next session
 * waiting.
 */
static void trs_srv_close_work(struct work_struct *work)
{
	struct trs_srv_sess *sess = container_of(work, struct trs_srv_sess,
						 close_work);
	struct trs_srv_conn *conn;
	u32 i;

	mutex_lock(&trs_srv_mutex);
	list_del_init(&sess->entry);
	mutex_unlock(&trs_srv_mutex);
	cancel_delayed_work_sync(&sess->setup_work);
	flush_work(&sess->open_work);
	trs_srv_hb_stop(sess);

	for (i = 0; i < sess->conn_cnt; i++) {
		conn = sess->conns[i];
		if (!conn)
			continue;
		spin_lock_irq(&conn->lock);
		conn->dead = true;
		spin_unlock_irq(&conn->lock);
		rdma_disconnect(conn->cm_id);
	}
	for (i = 0; i < sess->conn_cnt; i++)
		if (sess->conns[i] && trs_srv_conn_established(sess->conns[i]))
			ib_drain_qp(sess->conns[i]->cm_id->qp);

	/*
	 * Requests the user still has (a bio that hangs) are not waited
	 * for: their answers go nowhere, and only the memory of their
	 * chunks stays, until the last is answered (trs_srv_sess_release()).
	 */
	if (sess->user_open)
		sess->ctx->ops->sess_close(sess, sess->priv);

	for (i = 0; i < sess->conn_cnt; i++) {
		if (!sess->conns[i])
			continue;
		/*
		 * Replies held before the connection died are dropped by the
		 * flush work, which may still be pending: run it to the end.
		 */
		flush_work(&sess->conns[i]->flush_work);
		trs_qp_destroy(sess->conns[i]->cm_id, sess->conns[i]->cq);
	}
	trs_srv_dev_unmap(sess);
	for (i = 0; i < sess->conn_cnt; i++)
		if (sess->conns[i])
			rdma_destroy_id(sess->conns[i]->cm_id);
	trs_srv_info(sess, "closed\n");
	percpu_ref_put(&sess->inflight);
}

static struct trs_srv_sess *trs_srv_find(const u8 *uuid)
{
	struct trs_srv_sess *sess;

	lockdep_assert_held(&trs_srv_mutex);
	list_for_each_entry(sess, &trs_srv_sessions, entry)
		if (!memcmp(&sess->uuid, uuid, sizeof(sess->uuid)))
			return sess;
	return NULL;
}

/* The client's address without its port: what identifies a peer. */
static void trs_srv_peer(struct rdma_cm_id *cm_id,
			 struct sockaddr_storage *peer)
{
	const struct sockaddr *dst =
		(const struct sockaddr *)&cm_id->route.addr.dst_addr;
	const struct sockaddr_in6 *dst6 = (const struct sockaddr_in6 *)dst;
	const struct sockaddr_in *dst4 = (const struct sockaddr_in *)dst;
	struct sockaddr_in6 *peer6 = (struct sockaddr_in6 *)peer;
	struct sockaddr_in *peer4 = (struct sockaddr_in *)peer;

	memset(peer, 0, sizeof(*peer));
	peer->ss_family = dst->sa_family;
	if (dst->sa_family == AF_INET) {
		peer4->sin_addr = dst4->sin_addr;
	} else if (dst->sa_family == AF_INET6) {
		peer6->sin6_addr = dst6->sin6_addr;
		peer6->sin6_scope_id = dst6->sin6_scope_id;
	}
}

/*
 * Connection 0: create the session.  The checks and the admission run
 * under trs_srv_mutex, the chunk allocation without it, so that closing
 * sessions do not wait for it.
 */
static struct trs_srv_sess *
trs_srv_sess_create(struct trs_srv_ctx *ctx, struct rdma_cm_id *cm_id,
		    const struct trs_msg_conn_req *req)
{
	struct ib_device *dev = cm_id->device;
	const struct ib_device_attr *attr = &dev->attrs;
	u32 chunk_size = TRS_HDR_AREA + trs_srv_max_io_size;
	struct sockaddr_storage peer;
	struct trs_srv_sess *sess, *old;
	char addr[TRS_ADDR_LEN];
	u64 bytes;
	u32 qd;
	int err;

	err = trs_dev_check(cm_id, chunk_size / TRS_MR_PAGE);
	if (err)
		return ERR_PTR(err);
	/* QP and CQ of connection 0: see trs_srv_conn_create() */
	qd = min3(trs_srv_queue_depth, (u32)le16_to_cpu(req->max_queue_depth),
		  (u32)max(attr->max_qp_wr - 3, 0) / 2);
	qd = min(qd, (u32)max(attr->max_cqe - 4 - (int)TRS_HB_RECVS, 0) / 3);
	if (!qd)
		return ERR_PTR(-EOPNOTSUPP);
	bytes = (u64)qd * chunk_size;
	trs_srv_peer(cm_id, &peer);

	mutex_lock(&trs_srv_mutex);
	old = trs_srv_find(req->sess_uuid);
	if (old && crypto_memneq(req->sess_key, old->rsp.sess_key,
				 TRS_SESS_KEY_LEN)) {
		/* not the client of that session: it does not know its key */
		err = -EEXIST;
	} else if (old) {
		/*
		 * The client reconnects a session we still hold, say after a
		 * link flap we did not see: that one is dead.  Close it (with
		 * its device opens) and let the client retry once it is gone.
		 */
		trs_srv_sess_fail(old, "the client reconnected");
		err = -EAGAIN;
	} else {
		err = trs_srv_admit(&peer, bytes);
	}
	mutex_unlock(&trs_srv_mutex);
	if (err)
		return ERR_PTR(err);

	sess = TRS_FI(kzalloc(sizeof(*sess), GFP_KERNEL), NULL);
	if (!sess) {
		trs_srv_release(bytes);
		return ERR_PTR(-ENOMEM);
	}
	sess->ctx = ctx;
	sess->peer = peer;
	sess->chunk_bytes = bytes;
	INIT_LIST_HEAD(&sess->entry);
	memcpy(&sess->uuid, req->sess_uuid, sizeof(sess->uuid));
	trs_addr_print((struct sockaddr *)&cm_id->route.addr.dst_addr, addr,
		       sizeof(addr));
	snprintf(sess->name, sizeof(sess->name), "%s-%4phN", addr,
		 sess->uuid.b);
	sess->conn_cnt = le16_to_cpu(req->conn_cnt);
	sess->queue_depth = qd;
	sess->max_io_size = trs_srv_max_io_size;
	sess->chunk_size = chunk_size;
	spin_lock_init(&sess->lock);
	sess->state = TRS_SRV_CONNECTING;
	if (TRS_FI(percpu_ref_init(&sess->inflight, trs_srv_sess_release, 0,
				   GFP_KERNEL), -ENOMEM)) {
		kfree(sess);
		trs_srv_release(bytes);
		return ERR_PTR(-ENOMEM);
	}
	atomic_inc(&ctx->nr_sess);
	INIT_WORK(&sess->open_work, trs_srv_open_work);
	INIT_WORK(&sess->close_work, trs_srv_close_work);
	INIT_WORK(&sess->free_work, trs_srv_free_work);
	INIT_DELAYED_WORK(&sess->setup_work, trs_srv_setup_timeout);
	sess->rsp = (struct trs_msg_conn_rsp) {
		.magic		= cpu_to_le16(TRS_MAGIC),
		.ver_major	= TRS_PROTO_VER_MAJOR,
		.ver_minor	= TRS_PROTO_VER_MINOR,
		.caps		= req->caps & cpu_to_le32(TRS_CAPS_KNOWN),
		.queue_depth	= cpu_to_le16(qd),
		.max_segments	= cpu_to_le16(TRS_MR_PAGES(sess->max_io_size)),
		.max_io_size	= cpu_to_le32(sess->max_io_size),
	};
	get_random_bytes(sess->rsp.sess_key, sizeof(sess->rsp.sess_key));
	sess->tag_idx_mask = sess->rsp.caps & cpu_to_le32(TRS_CAP_SLOT_GEN) ?
			     TRS_IMM_MASK(TRS_SLOT_IDX_BITS) :
			     TRS_IMM_MASK(TRS_IMM_SLOT_BITS);
	sess->table_cqe.done = trs_srv_table_done;
	trs_srv_hb_init(sess);

	sess->conns = TRS_FI(kcalloc(sess->conn_cnt, sizeof(*sess->conns),
				     GFP_KERNEL), NULL);
	err = sess->conns ? trs_srv_dev_init(sess, dev) : -ENOMEM;
	if (err) {
		trs_srv_sess_free(sess);
		return ERR_PTR(err);
	}
	return sess;
}

/* Connection 1..n: find the session it belongs to. */
static struct trs_srv_sess *
trs_srv_sess_attach(struct trs_srv_ctx *ctx, struct rdma_cm_id *cm_id,
		    const struct trs_msg_conn_req *req)
{
	struct trs_srv_sess *sess = trs_srv_find(req->sess_uuid);
	bool connecting;

	/* a connection that does not know the key is not the client's */
	if (!sess || sess->ctx != ctx ||
	    crypto_memneq(req->sess_key, sess->rsp.sess_key, TRS_SESS_KEY_LEN))
		return ERR_PTR(-ENOENT);
	if (le16_to_cpu(req->conn_cnt) != sess->conn_cnt ||
	    cm_id->device != sess->ibdev)
		return ERR_PTR(-EINVAL);
	if (sess->conns[le16_to_cpu(req->conn_idx)])
		return ERR_PTR(-EEXIST);
	spin_lock_irq(&sess->lock);
	connecting = sess->state == TRS_SRV_CONNECTING;
	spin_unlock_irq(&sess->lock);
	return connecting ? sess : ERR_PTR(-EBUSY);
}

static struct trs_srv_conn *trs_srv_conn_create(struct trs_srv_sess *sess,
						struct rdma_cm_id *cm_id,
						u32 idx)
{
	u32 qd = sess->queue_depth;
	struct trs_qp_attr attr = {
		/*
		 * Replies need a credit each, and there are qd credits.
		 * Connection 0 also posts one REG_MR per chunk and the chunk
		 * table SEND, once, and one heartbeat at a time.  Plus the
		 * drain WR.  The receive queue holds qd receives: a receive
		 * is reposted as soon as its request arrives, and the client
		 * has at most qd requests in flight; connection 0 also
		 * TRS_HB_RECVS for the client's heartbeats.  Plus the drain
		 * WR.
		 */
		.send_wr	= qd + 1 + (idx ? 0 : qd + 2),
		.recv_wr	= qd + 1 + (idx ? 0 : TRS_HB_RECVS),
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
	conn->sess = sess;
	conn->idx = idx;
	conn->cm_id = cm_id;
	conn->recv_cqe.done = trs_srv_recv_done;
	conn->rsp_cqe.done = trs_srv_rsp_done;
	spin_lock_init(&conn->lock);
	conn->credits = qd;
	INIT_LIST_HEAD(&conn->rsp_wait);
	INIT_WORK(&conn->flush_work, trs_srv_flush_work);

	err = trs_qp_create(cm_id, sess->pd, conn, idx, &attr, &conn->cq);
	if (err)
		goto free_conn;
	err = trs_post_recvs(cm_id->qp, &conn->recv_cqe,
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

static int trs_srv_check_req(const struct trs_msg_conn_req *req, u8 len)
{
	unsigned int max_conns;
	u16 cnt, idx;

	if (!req || len < sizeof(*req) || le16_to_cpu(req->magic) != TRS_MAGIC)
		return -EINVAL;
	if (req->ver_major != TRS_PROTO_VER_MAJOR)
		return -EPROTONOSUPPORT;
	cnt = le16_to_cpu(req->conn_cnt);
	idx = le16_to_cpu(req->conn_idx);
	max_conns = READ_ONCE(trs_srv_max_conns);
	if (!max_conns || max_conns > TRS_MAX_CONNS)
		max_conns = TRS_MAX_CONNS;
	if (req->reserved0 || !cnt || cnt > max_conns || idx >= cnt || !req->max_queue_depth)
		return -EINVAL;
	return 0;
}

static void trs_srv_reject(struct rdma_cm_id *cm_id, int err)
{
	struct trs_msg_conn_rsp rsp = {
		.magic		= cpu_to_le16(TRS_MAGIC),
		.ver_major	= TRS_PROTO_VER_MAJOR,
		.ver_minor	= TRS_PROTO_VER_MINOR,
		.status		= cpu_to_le16(-err),
	};
	char addr[TRS_ADDR_LEN];

	trs_addr_print((struct sockaddr *)&cm_id->route.addr.dst_addr, addr,
		       sizeof(addr));
	pr_info_ratelimited("rejecting a connection from %s: %pe\n", addr,
			    ERR_PTR(err));
	rdma_reject(cm_id, &rsp, sizeof(rsp), IB_CM_REJ_CONSUMER_DEFINED);
}

/**
 * trs_srv_connect() - handle a connect request
 * @ctx: listener it arrived on
 * @cm_id: new CM id of the connection
 * @ev: RDMA_CM_EVENT_CONNECT_REQUEST
 *
 * Accepts the connection with the session's limits, or rejects it with a
 * struct trs_msg_conn_rsp carrying the reason.
 *
 * Return: 0, or a negative errno that makes the CM destroy @cm_id.
 */
int trs_srv_connect(struct trs_srv_ctx *ctx, struct rdma_cm_id *cm_id,
		    struct rdma_cm_event *ev)
{
	const struct trs_msg_conn_req *req = ev->param.conn.private_data;
	struct rdma_conn_param param = {};
	struct trs_srv_sess *sess;
	struct trs_srv_conn *conn;
	u32 idx;
	int err;

	err = trs_srv_check_req(req, ev->param.conn.private_data_len);
	if (err)
		goto reject;
	idx = le16_to_cpu(req->conn_idx);

	if (idx) {
		mutex_lock(&trs_srv_mutex);
		sess = trs_srv_sess_attach(ctx, cm_id, req);
	} else {
		sess = trs_srv_sess_create(ctx, cm_id, req);
		if (IS_ERR(sess)) {
			err = PTR_ERR(sess);
			goto reject;
		}
		mutex_lock(&trs_srv_mutex);
		/* connect requests come one at a time, but do not rely on it */
		if (trs_srv_find(req->sess_uuid)) {
			err = -EAGAIN;
			goto free_sess;
		}
	}
	if (IS_ERR(sess)) {
		err = PTR_ERR(sess);
		goto unlock;
	}
	conn = trs_srv_conn_create(sess, cm_id, idx);
	if (IS_ERR(conn)) {
		err = PTR_ERR(conn);
		goto free_sess;
	}

	cm_id->context = &conn->kind;
	param.private_data = &sess->rsp;
	param.private_data_len = sizeof(sess->rsp);
	param.flow_control = 1;
	param.rnr_retry_count = 7;
	err = rdma_accept(cm_id, &param);
	if (err) {
		/* rdma_accept() rejected it already */
		trs_qp_destroy(cm_id, conn->cq);
		kfree(conn);
		if (!idx)
			trs_srv_sess_free(sess);
		mutex_unlock(&trs_srv_mutex);
		return err;
	}

	sess->conns[idx] = conn;
	if (!idx) {
		list_add_tail(&sess->entry, &trs_srv_sessions);
		/* from the first connection: later ones do not extend it */
		queue_delayed_work(trs_srv_setup_wq, &sess->setup_work,
				   TRS_SRV_SETUP_TIMEOUT);
	}
	mutex_unlock(&trs_srv_mutex);
	return 0;

free_sess:
	if (!idx)
		trs_srv_sess_free(sess);
unlock:
	mutex_unlock(&trs_srv_mutex);
reject:
	trs_srv_reject(cm_id, err);
	return err;
}

/**
 * trs_srv_established() - a connection is established
 * @conn: the connection
 *
 * The last one of its session starts the open work.
 */
void trs_srv_established(struct trs_srv_conn *conn)
{
	struct trs_srv_sess *sess = conn->sess;

	spin_lock_irq(&sess->lock);
	if (!conn->established) {
		conn->established = true;
		sess->nr_established++;
	}
	/* under the lock: the close work flushes it once CLOSING */
	if (sess->state == TRS_SRV_CONNECTING &&
	    sess->nr_established == sess->conn_cnt)
		queue_work(trs_srv_setup_wq, &sess->open_work);
	spin_unlock_irq(&sess->lock);
}
