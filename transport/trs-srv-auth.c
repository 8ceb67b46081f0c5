// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport server: the exchange of TRS_CAP_AUTH on a path's
 * connection 0 (Documentation/security.rst).
 *
 * Connection 0 of a path that negotiated it gets two receives with
 * buffers before its others: the client's HELLO and PROOF land there.
 * Their completions queue the auth work, which checks the HELLO, asks the
 * user for the host's key, answers the CHALLENGE (with the server's proof
 * if the host has a key) and, at the PROOF, checks the client's.  Until
 * then the path is not opened, whatever connections it has: the open
 * work waits for trs_srv_auth_state(), and connections 1..N-1 join only
 * with the token of the exchange.  A refused path is closed a second
 * later (the client sees the refusal first), and the refusal counts
 * against its address (trs_srv_auth_admit()).  The session's host name
 * and proved key live here too (trs_srv_sess_authenticated()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jhash.h>
#include <linux/random.h>
#include <linux/slab.h>
#include "trs-srv.h"

/* Failed exchanges an address may have before it waits TRS_SRV_AUTH_HOLD */
#define TRS_SRV_AUTH_FAILS	3
#define TRS_SRV_AUTH_HOLD	HZ
#define TRS_SRV_AUTH_SLOTS	64

/* What a path's exchange receives (DMA from the device)... */
struct trs_srv_auth_in {
	struct trs_msg_hello		hello;
	struct trs_msg_proof		proof;
};

/* ...and what it sends (DMA to the device). */
struct trs_srv_auth_out {
	struct trs_msg_challenge	chal;
	struct trs_msg_result		result;
};

enum trs_srv_auth_state {
	TRS_SRV_AUTH_HELLO,
	TRS_SRV_AUTH_PROOF,
	TRS_SRV_AUTH_DONE,
	TRS_SRV_AUTH_REFUSED,
};

/**
 * struct trs_srv_auth - the exchange of a path
 * @path: the path
 * @conn: its connection 0, as its first receive completion gave it (the
 *	path's conns[0] is set only after the accept)
 * @a: what both sides MAC
 * @key: the host's key, if it has one
 * @klen: its length; 0: none
 * @in: the messages received
 * @out: the messages sent
 * @in_dma: DMA address of @in
 * @out_dma: DMA address of @out
 * @recv_cqe: completion of HELLO's and PROOF's receives
 * @send_cqe: completion of CHALLENGE and RESULT
 * @work: takes each message in process context
 * @state: where the exchange is; guarded by the path's lock
 * @got: messages received, 0..2; guarded by the path's lock
 * @len: their lengths
 */
struct trs_srv_auth {
	struct trs_srv_path		*path;
	struct trs_srv_conn		*conn;
	struct trs_auth			a;
	u8				key[TRS_KEY_MAX];
	unsigned int			klen;
	struct trs_srv_auth_in		*in;
	struct trs_srv_auth_out		*out;
	u64				in_dma;
	u64				out_dma;
	struct ib_cqe			recv_cqe;
	struct ib_cqe			send_cqe;
	struct work_struct		work;
	enum trs_srv_auth_state		state;
	u32				got;
	u32				len[2];
};

/* Recent failures by client address: a brute force waits. */
static struct {
	u8		addr[16];
	u32		fails;
	unsigned long	last;
} trs_srv_auth_fails[TRS_SRV_AUTH_SLOTS];
/* guards trs_srv_auth_fails */
static DEFINE_SPINLOCK(trs_srv_auth_lock);

static u32 trs_srv_auth_slot(const u8 *addr)
{
	return jhash(addr, 16, 0) % TRS_SRV_AUTH_SLOTS;
}

/**
 * trs_srv_auth_admit() - may this address try again now?
 * @peer: the client's address
 *
 * Return: 0, or -EAGAIN while an address that failed TRS_SRV_AUTH_FAILS
 * times in a row waits TRS_SRV_AUTH_HOLD after its last failure.
 */
int trs_srv_auth_admit(const struct sockaddr_storage *peer)
{
	u8 addr[16];
	u32 i;
	int err = 0;

	trs_auth_addr(peer, addr);
	i = trs_srv_auth_slot(addr);
	spin_lock_irq(&trs_srv_auth_lock);
	if (!memcmp(trs_srv_auth_fails[i].addr, addr, sizeof(addr)) &&
	    trs_srv_auth_fails[i].fails >= TRS_SRV_AUTH_FAILS &&
	    time_before(jiffies, trs_srv_auth_fails[i].last +
			TRS_SRV_AUTH_HOLD))
		err = -EAGAIN;
	spin_unlock_irq(&trs_srv_auth_lock);
	return err;
}

/* Count a failure of @addr, or forget its failures after a success. */
static void trs_srv_auth_count(const u8 *addr, bool failed)
{
	u32 i = trs_srv_auth_slot(addr);

	spin_lock_irq(&trs_srv_auth_lock);
	if (memcmp(trs_srv_auth_fails[i].addr, addr, 16)) {
		if (!failed)
			goto unlock;
		memcpy(trs_srv_auth_fails[i].addr, addr, 16);
		trs_srv_auth_fails[i].fails = 0;
	}
	trs_srv_auth_fails[i].fails = failed ?
				      trs_srv_auth_fails[i].fails + 1 : 0;
	trs_srv_auth_fails[i].last = jiffies;
unlock:
	spin_unlock_irq(&trs_srv_auth_lock);
}

static void trs_srv_auth_recvd(struct ib_cq *cq, struct ib_wc *wc)
{
	struct trs_srv_conn *conn = cq->cq_context;
	struct trs_srv_path *path = conn->path;
	struct trs_srv_auth *auth = path->auth;
	unsigned long flags;

	if (trs_wc_failed(wc, "authentication receive")) {
		trs_srv_path_fail(path, "authentication receive failed");
		return;
	}
	if (wc->opcode != IB_WC_RECV) {
		trs_srv_path_fail(path, "not a message where one was due");
		return;
	}
	spin_lock_irqsave(&path->lock, flags);
	auth->conn = conn;
	auth->len[auth->got++] = wc->byte_len;
	spin_unlock_irqrestore(&path->lock, flags);
	queue_work(trs_srv_setup_wq, &auth->work);
}

static void trs_srv_auth_sent(struct ib_cq *cq, struct ib_wc *wc)
{
	struct trs_srv_conn *conn = cq->cq_context;

	if (trs_wc_failed(wc, "authentication send"))
		trs_srv_path_fail(conn->path, "authentication send failed");
}

/* Post a SEND of @len bytes at @off of the messages on connection 0. */
static int trs_srv_auth_send(struct trs_srv_path *path, size_t off, u32 len)
{
	struct trs_srv_auth *auth = path->auth;
	struct trs_srv_conn *conn = auth->conn;
	int err;

	ib_dma_sync_single_for_device(path->ibdev, auth->out_dma,
				      sizeof(*auth->out), DMA_TO_DEVICE);
	spin_lock_irq(&conn->lock);
	err = conn->dead ? -ENOTCONN :
	      trs_auth_send(conn->cm_id->qp, &auth->send_cqe,
			    auth->out_dma + off, len, path->pd->local_dma_lkey);
	spin_unlock_irq(&conn->lock);
	return err;
}

/* Refuse the path with @status, where the client looks next; close soon. */
static void trs_srv_auth_refuse(struct trs_srv_path *path, int status,
				bool chal, const char *why)
{
	struct trs_srv_auth *auth = path->auth;
	struct trs_msg_result *res = &auth->out->result;
	struct trs_msg_challenge *c = &auth->out->chal;
	int err;

	spin_lock_irq(&path->lock);
	auth->state = TRS_SRV_AUTH_REFUSED;
	spin_unlock_irq(&path->lock);
	trs_srv_auth_count(auth->a.clt_addr, true);
	trs_log_err_rl(path, "host %s refused: %s\n",
		       auth->a.host[0] ? auth->a.host : "(none)", why);
	if (chal) {
		c->status = cpu_to_le16(status);
		err = trs_srv_auth_send(path, offsetof(struct trs_srv_auth_out,
						       chal), sizeof(*c));
	} else {
		res->magic = cpu_to_le16(TRS_MAGIC);
		res->type = cpu_to_le16(TRS_MSG_RESULT);
		res->status = cpu_to_le16(status);
		err = trs_srv_auth_send(path, offsetof(struct trs_srv_auth_out,
						       result), sizeof(*res));
	}
	if (err) {
		trs_srv_path_fail(path, "refusal not sent");
		return;
	}
	/* under the lock: the close work cancels it once CLOSING */
	spin_lock_irq(&path->lock);
	if (path->state == TRS_SRV_CONNECTING)
		mod_delayed_work(trs_srv_setup_wq, &path->setup_work, HZ);
	spin_unlock_irq(&path->lock);
}

/**
 * trs_srv_sess_host_ok() - may a path of @host join @sess?
 * @sess: the session
 * @host: the name its path's HELLO gave
 *
 * Every path of a session is of one host, whatever key it knows: the
 * first whose exchange succeeds names it (trs_srv_sess_authenticated()).
 *
 * Return: true if the session has no host yet, or it is @host.
 */
bool trs_srv_sess_host_ok(struct trs_srv_sess *sess, const char *host)
{
	bool ok;

	spin_lock_irq(&sess->lock);
	ok = !sess->host[0] || !strncmp(sess->host, host, sizeof(sess->host));
	spin_unlock_irq(&sess->lock);
	return ok;
}

/**
 * trs_srv_sess_authenticated() - a path of @sess finished its exchange
 * @path: the path, of host @host
 * @host: its host name
 * @key_id: the id of the key it proved, NULL for none
 *
 * Names the session's host if it has none yet, and takes the key for the
 * session's; with a key, the path replaces its older selves.
 *
 * Return: false if another path named the session for another host first.
 */
bool trs_srv_sess_authenticated(struct trs_srv_path *path, const char *host,
				const u8 *key_id)
{
	struct trs_srv_sess *sess = path->sess;
	bool ok = true;

	spin_lock_irq(&sess->lock);
	if (!sess->host[0])
		memcpy(sess->host, host, sizeof(sess->host));
	else
		ok = !strncmp(sess->host, host, sizeof(sess->host));
	if (ok) {
		if (!trs_is_zero(sess->key_id, TRS_KEY_ID_LEN))
			trs_srv_sess_replace(path);
		if (key_id)
			memcpy(sess->key_id, key_id, TRS_KEY_ID_LEN);
		else
			memset(sess->key_id, 0, TRS_KEY_ID_LEN);
	}
	spin_unlock_irq(&sess->lock);
	return ok;
}

/**
 * trs_srv_sess_hostname() - the client host of a session
 * @sess: a session its user opened
 *
 * Return: the host name its paths authenticated as or, without
 * TRS_CAP_AUTH, an empty string; valid while the session is.
 */
const char *trs_srv_sess_hostname(struct trs_srv_sess *sess)
{
	return sess->host;
}
EXPORT_SYMBOL_GPL(trs_srv_sess_hostname);

/**
 * trs_srv_sess_key_id() - which host key a session proved
 * @sess: a session its user opened
 * @id: out, TRS_KEY_ID_LEN bytes: the id of the key its last
 *	authenticated path proved, zero if it proved none
 */
void trs_srv_sess_key_id(struct trs_srv_sess *sess, u8 *id)
{
	spin_lock_irq(&sess->lock);
	memcpy(id, sess->key_id, TRS_KEY_ID_LEN);
	spin_unlock_irq(&sess->lock);
}
EXPORT_SYMBOL_GPL(trs_srv_sess_key_id);

/* HELLO: the host and its key; answer with the CHALLENGE. */
static void trs_srv_auth_hello(struct trs_srv_path *path)
{
	struct trs_srv_auth *auth = path->auth;
	const struct trs_msg_hello *h = &auth->in->hello;
	struct trs_msg_challenge *c = &auth->out->chal;
	const struct trs_srv_ops *ops = path->sess->ctx->ops;
	int klen = 0;

	c->magic = cpu_to_le16(TRS_MAGIC);
	c->type = cpu_to_le16(TRS_MSG_CHALLENGE);
	if (auth->len[0] != sizeof(*h) || le16_to_cpu(h->magic) != TRS_MAGIC ||
	    le16_to_cpu(h->type) != TRS_MSG_HELLO || h->reserved0 ||
	    !trs_hostname_ok(h->hostname)) {
		trs_srv_auth_refuse(path, EPROTO, true, "malformed HELLO");
		return;
	}
	memcpy(auth->a.nonce_c, h->nonce, sizeof(auth->a.nonce_c));
	memcpy(auth->a.host, h->hostname, sizeof(auth->a.host));
	if (!trs_srv_sess_host_ok(path->sess, auth->a.host)) {
		trs_srv_auth_refuse(path, EACCES, true,
				    "not the host of the session it joins");
		return;
	}
	if (ops->host_key)
		klen = ops->host_key(auth->a.host,
				     trs_is_zero(h->key_id, TRS_KEY_ID_LEN) ?
				     NULL : h->key_id, auth->key);
	if (klen < 0 || klen > TRS_KEY_MAX) {
		trs_srv_auth_refuse(path, klen == -EACCES ? EACCES :
				    EKEYREJECTED, true,
				    klen == -EACCES ? "not allowed" :
				    "no key of the client's");
		return;
	}
	auth->klen = klen;
	get_random_bytes(auth->a.nonce_s, sizeof(auth->a.nonce_s));
	memcpy(c->nonce, auth->a.nonce_s, sizeof(c->nonce));
	if (klen) {
		c->flags = cpu_to_le16(TRS_CHAL_F_KEY);
		if (trs_auth_mac(auth->key, klen, "rnbd-srv", &auth->a,
				 c->mac)) {
			trs_srv_path_fail(path, "no HMAC-SHA256");
			return;
		}
	}
	spin_lock_irq(&path->lock);
	auth->state = TRS_SRV_AUTH_PROOF;
	spin_unlock_irq(&path->lock);
	if (trs_srv_auth_send(path, offsetof(struct trs_srv_auth_out, chal),
			      sizeof(*c)))
		trs_srv_path_fail(path, "challenge not sent");
}

/* PROOF: the client's, if the host has a key. */
static void trs_srv_auth_proof(struct trs_srv_path *path)
{
	struct trs_srv_auth *auth = path->auth;
	const struct trs_msg_proof *p = &auth->in->proof;
	u8 mac[TRS_MAC_LEN] = {};
	bool ok;

	if (auth->len[1] != sizeof(*p) || le16_to_cpu(p->magic) != TRS_MAGIC ||
	    le16_to_cpu(p->type) != TRS_MSG_PROOF || p->reserved0) {
		trs_srv_auth_refuse(path, EPROTO, false, "malformed PROOF");
		return;
	}
	if (auth->klen &&
	    trs_auth_mac(auth->key, auth->klen, "rnbd-clt", &auth->a, mac)) {
		trs_srv_path_fail(path, "no HMAC-SHA256");
		return;
	}
	ok = trs_auth_equal(mac, p->mac, sizeof(mac));
	memzero_explicit(mac, sizeof(mac));
	if (!ok) {
		trs_srv_auth_refuse(path, EKEYREJECTED, false,
				    "its proof does not verify");
		return;
	}
	if (!trs_srv_sess_authenticated(path, auth->a.host,
					auth->klen ? auth->in->hello.key_id :
					NULL)) {
		trs_srv_auth_refuse(path, EACCES, false,
				    "not the host of the session it joins");
		return;
	}
	/* a proof of a key clears the address's failures; none does not */
	if (auth->klen)
		trs_srv_auth_count(auth->a.clt_addr, false);
	trs_log_info(path, "host %s%s\n", auth->a.host,
		     auth->klen ? " authenticated" : " (no key)");
	spin_lock_irq(&path->lock);
	auth->state = TRS_SRV_AUTH_DONE;
	spin_unlock_irq(&path->lock);
	trs_srv_path_may_open(path);
}

static void trs_srv_auth_work(struct work_struct *work)
{
	struct trs_srv_auth *auth = container_of(work, struct trs_srv_auth,
						 work);
	struct trs_srv_path *path = auth->path;
	enum trs_srv_auth_state state;
	u32 got;

	spin_lock_irq(&path->lock);
	/* the close work stops it (trs_srv_auth_stop()) once CLOSING */
	if (path->state == TRS_SRV_CLOSING) {
		spin_unlock_irq(&path->lock);
		return;
	}
	state = auth->state;
	got = auth->got;
	spin_unlock_irq(&path->lock);
	ib_dma_sync_single_for_cpu(path->ibdev, auth->in_dma, sizeof(*auth->in),
				   DMA_FROM_DEVICE);
	if (state == TRS_SRV_AUTH_HELLO && got >= 1) {
		trs_srv_auth_hello(path);
		spin_lock_irq(&path->lock);
		state = auth->state;
		spin_unlock_irq(&path->lock);
	}
	if (state == TRS_SRV_AUTH_PROOF && got >= 2)
		trs_srv_auth_proof(path);
}

/**
 * trs_srv_auth_prepare() - the exchange of a new path's connection 0
 * @path: the path, its PD allocated; nothing without TRS_CAP_AUTH
 * @cm_id: connection 0's CM id, its QP created without receives yet
 *
 * Posts the receives of HELLO and PROOF, before any other.  Undo with
 * trs_srv_auth_free(), also after a failure.
 *
 * Return: 0 or a negative errno.
 */
int trs_srv_auth_prepare(struct trs_srv_path *path, struct rdma_cm_id *cm_id)
{
	static const size_t off[2] = {
		offsetof(struct trs_srv_auth_in, hello),
		offsetof(struct trs_srv_auth_in, proof),
	};
	static const u32 len[2] = {
		sizeof(struct trs_msg_hello), sizeof(struct trs_msg_proof),
	};
	struct trs_srv_auth *auth;
	struct ib_sge sge;
	struct ib_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };
	int i, err = 0;

	if (!(path->rsp.caps & cpu_to_le32(TRS_CAP_AUTH)))
		return 0;
	auth = TRS_FI(kzalloc(sizeof(*auth), GFP_KERNEL), NULL);
	if (!auth)
		return -ENOMEM;
	path->auth = auth;
	auth->path = path;
	auth->recv_cqe.done = trs_srv_auth_recvd;
	auth->send_cqe.done = trs_srv_auth_sent;
	INIT_WORK(&auth->work, trs_srv_auth_work);
	memcpy(auth->a.uuid, &path->sess->uuid, sizeof(auth->a.uuid));
	auth->a.path_id = path->path_id;
	auth->a.conn_cnt = path->conn_cnt;
	trs_auth_addr(&cm_id->route.addr.dst_addr, auth->a.clt_addr);
	trs_auth_addr(&cm_id->route.addr.src_addr, auth->a.srv_addr);
	auth->in = trs_auth_buf_alloc(path->ibdev, sizeof(*auth->in),
				      DMA_FROM_DEVICE, &auth->in_dma);
	auth->out = trs_auth_buf_alloc(path->ibdev, sizeof(*auth->out),
				       DMA_TO_DEVICE, &auth->out_dma);
	if (!auth->in || !auth->out)
		return -ENOMEM;
	wr.wr_cqe = &auth->recv_cqe;
	sge.lkey = path->pd->local_dma_lkey;
	for (i = 0; i < 2 && !err; i++) {
		sge.addr = auth->in_dma + off[i];
		sge.length = len[i];
		err = ib_post_recv(cm_id->qp, &wr, NULL);
	}
	return err;
}

/**
 * trs_srv_auth_stop() - no more work of a closing path's exchange
 * @path: the path, CLOSING, its connections dead
 *
 * The exchange's memory stays until trs_srv_auth_free(), after the QPs
 * are destroyed: a receive may still complete until then, and its work
 * then finds the path closing and does nothing.
 */
void trs_srv_auth_stop(struct trs_srv_path *path)
{
	if (path->auth)
		cancel_work_sync(&path->auth->work);
}

/**
 * trs_srv_auth_free() - release a path's exchange
 * @path: the path, its QPs destroyed and the device still held
 */
void trs_srv_auth_free(struct trs_srv_path *path)
{
	struct trs_srv_auth *auth = path->auth;

	if (!auth)
		return;
	cancel_work_sync(&auth->work);
	trs_auth_buf_free(path->ibdev, auth->in, sizeof(*auth->in),
			  DMA_FROM_DEVICE, auth->in_dma);
	trs_auth_buf_free(path->ibdev, auth->out, sizeof(*auth->out),
			  DMA_TO_DEVICE, auth->out_dma);
	kfree_sensitive(auth);
	path->auth = NULL;
}

/**
 * trs_srv_auth_state() - where a path's exchange is
 * @path: the path; its lock held
 *
 * Return: 1 done (or none: the path has no TRS_CAP_AUTH), 0 under way,
 * -EKEYREJECTED refused.
 */
int trs_srv_auth_state(struct trs_srv_path *path)
{
	lockdep_assert_held(&path->lock);
	if (!path->auth || path->auth->state == TRS_SRV_AUTH_DONE)
		return 1;
	return path->auth->state == TRS_SRV_AUTH_REFUSED ? -EKEYREJECTED : 0;
}

/**
 * trs_srv_auth_conn_ok() - does connection @idx of @path know its key?
 * @path: the path, connection 0 accepted
 * @idx: the connection, 1..conn_cnt-1
 * @key: the session key field of its connect request
 *
 * With a host key, the token of the path's exchange, which must have
 * sent its CHALLENGE; else the session's key.  Process context.
 *
 * Return: true if it does.
 */
bool trs_srv_auth_conn_ok(struct trs_srv_path *path, u16 idx, const u8 *key)
{
	struct trs_srv_auth *auth = path->auth;
	u8 token[TRS_CONN_TOKEN_LEN];
	bool ok, sent;

	if (!auth)
		return trs_auth_equal(key, path->sess->key, TRS_SESS_KEY_LEN);
	/* the CHALLENGE went out: the host, its key and the nonces are set */
	spin_lock_irq(&path->lock);
	sent = auth->state == TRS_SRV_AUTH_PROOF ||
	       auth->state == TRS_SRV_AUTH_DONE;
	spin_unlock_irq(&path->lock);
	if (!sent)
		return false;
	if (!auth->klen)
		return trs_auth_equal(key, path->sess->key, TRS_SESS_KEY_LEN);
	if (trs_auth_token(auth->key, auth->klen, &auth->a, idx, token))
		return false;
	ok = trs_auth_equal(token, key, sizeof(token));
	memzero_explicit(token, sizeof(token));
	return ok;
}
