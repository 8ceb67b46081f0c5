// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport client: the exchange of TRS_CAP_AUTH on a path's
 * connection 0 (Documentation/security.rst).
 *
 * trs_clt_auth_start() posts the receive of the server's CHALLENGE and
 * sends HELLO; trs_clt_auth_finish() waits for the CHALLENGE, checks it
 * and, if the host has a key, the server's proof, then sends the client's
 * PROOF.  The messages live in two DMA-mapped buffers per attempt, freed
 * by trs_clt_auth_free() once the connections are drained.  The key read
 * at the start serves the whole attempt: the tokens of connections 1..N-1
 * are made with it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/utsname.h>
#include "trs-clt.h"

#define TRS_CLT_AUTH_TIMEOUT	msecs_to_jiffies(TRS_CONNECT_TIMEOUT_MS)

/* What one attempt's exchange sends (DMA to the device). */
struct trs_clt_auth_out {
	struct trs_msg_hello		hello;
	struct trs_msg_proof		proof;
};

/**
 * struct trs_clt_auth - the exchange of one setup attempt of a path
 * @a: what both sides MAC
 * @key: the host's key for this attempt
 * @klen: its length; 0: the host has no key
 * @out: the messages sent
 * @chal: the CHALLENGE received
 * @out_dma: DMA address of @out
 * @chal_dma: DMA address of @chal
 * @send_cqe: completion of HELLO and PROOF
 * @recv_cqe: completion of the CHALLENGE's receive
 * @chal_len: bytes the CHALLENGE had; with @chal_done and @chal_err
 *	guarded by the path's state_lock
 * @chal_done: it arrived (or its receive failed)
 * @chal_err: 0, or why its receive failed
 */
struct trs_clt_auth {
	struct trs_auth			a;
	u8				key[TRS_KEY_MAX];
	unsigned int			klen;
	struct trs_clt_auth_out		*out;
	struct trs_msg_challenge	*chal;
	u64				out_dma;
	u64				chal_dma;
	struct ib_cqe			send_cqe;
	struct ib_cqe			recv_cqe;
	u32				chal_len;
	bool				chal_done;
	int				chal_err;
};

static void trs_clt_auth_sent(struct ib_cq *cq, struct ib_wc *wc)
{
	struct trs_clt_conn *conn = cq->cq_context;

	if (trs_wc_failed(wc, "authentication send"))
		trs_clt_wc_fail(conn->path, wc, -ECONNRESET);
}

static void trs_clt_auth_recvd(struct ib_cq *cq, struct ib_wc *wc)
{
	struct trs_clt_conn *conn = cq->cq_context;
	struct trs_clt_path *path = conn->path;
	struct trs_clt_auth *auth = path->auth;
	int err = trs_wc_recv_err(wc, "authentication receive");
	unsigned long flags;

	spin_lock_irqsave(&path->state_lock, flags);
	auth->chal_len = wc->byte_len;
	auth->chal_err = err;
	auth->chal_done = true;
	spin_unlock_irqrestore(&path->state_lock, flags);
	if (err)
		trs_clt_wc_fail(path, wc, err);
	wake_up(&path->setup_wq);
}

/* Post a SEND of @len bytes at @off of @out, or the CHALLENGE's receive. */
static int trs_clt_auth_post(struct trs_clt_path *path, size_t off, u32 len,
			     bool send)
{
	struct trs_clt_conn *conn = &path->conns[0];
	struct trs_clt_auth *auth = path->auth;
	struct ib_sge sge = {
		.addr	= auth->chal_dma,
		.length	= len,
		.lkey	= path->pd->local_dma_lkey,
	};
	struct ib_recv_wr rwr = {
		.wr_cqe		= &auth->recv_cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
	};
	int err;

	if (send)
		ib_dma_sync_single_for_device(path->ibdev, auth->out_dma,
					      sizeof(*auth->out), DMA_TO_DEVICE);
	else
		ib_dma_sync_single_for_device(path->ibdev, auth->chal_dma,
					      sizeof(*auth->chal),
					      DMA_FROM_DEVICE);
	spin_lock_irq(&conn->lock);
	if (conn->dead)
		err = -ENOTCONN;
	else if (send)
		err = trs_auth_send(conn->cm_id->qp, &auth->send_cqe,
				    auth->out_dma + off, len,
				    path->pd->local_dma_lkey);
	else
		err = ib_post_recv(conn->cm_id->qp, &rwr, NULL);
	spin_unlock_irq(&conn->lock);
	return err;
}

/* The exchange's transcript, and the key of this attempt, if any. */
static int trs_clt_auth_init(struct trs_clt_path *path,
			     struct trs_clt_auth *auth)
{
	struct trs_clt_sess *sess = path->sess;
	struct trs_auth *a = &auth->a;
	struct sockaddr_storage src;
	int len = 0;

	get_random_bytes(a->nonce_c, sizeof(a->nonce_c));
	memcpy(a->uuid, &sess->uuid, sizeof(a->uuid));
	a->path_id = path->id;
	a->conn_cnt = path->nr_conns;
	spin_lock_irq(&path->state_lock);
	src = path->src;
	spin_unlock_irq(&path->state_lock);
	trs_auth_addr(&src, a->clt_addr);
	trs_auth_addr(&path->dst, a->srv_addr);
	memcpy(a->host, sess->hostname, sizeof(a->host));

	if (sess->ops.get_key)
		len = sess->ops.get_key(sess->ops.priv, auth->key);
	if (len < 0)
		return len;
	if (len && (len < TRS_KEY_MIN || len > TRS_KEY_MAX))
		return -EINVAL;
	auth->klen = len;
	return 0;
}

/*
 * A server without TRS_CAP_AUTH: fine for a host without a key; one with
 * a key does not connect to a server that cannot prove it knows it.
 */
static int trs_clt_auth_none(struct trs_clt_path *path)
{
	struct trs_clt_sess *sess = path->sess;
	u8 key[TRS_KEY_MAX];
	int len = 0;

	if (sess->ops.get_key)
		len = sess->ops.get_key(sess->ops.priv, key);
	memzero_explicit(key, sizeof(key));
	if (len <= 0)
		return len;
	trs_log_err(sess, "the server does not authenticate, and host %s has a key: refused\n",
		    sess->hostname);
	return -EKEYREJECTED;
}

/**
 * trs_clt_auth_start() - send HELLO on a path's connection 0
 * @path: path being set up, connection 0 connected
 *
 * Without TRS_CAP_AUTH nothing, unless the host has a key.  Process
 * context.
 *
 * Return: 0, -EKEYREJECTED for a server without TRS_CAP_AUTH if the host
 * has a key, or another negative errno.
 */
int trs_clt_auth_start(struct trs_clt_path *path)
{
	struct trs_clt_auth *auth;
	struct trs_msg_hello *hello;
	int err;

	if (!(path->conns[0].rsp.caps & cpu_to_le32(TRS_CAP_AUTH)))
		return trs_clt_auth_none(path);
	auth = TRS_FI(kzalloc(sizeof(*auth), GFP_KERNEL), NULL);
	if (!auth)
		return -ENOMEM;
	path->auth = auth;
	auth->send_cqe.done = trs_clt_auth_sent;
	auth->recv_cqe.done = trs_clt_auth_recvd;
	err = trs_clt_auth_init(path, auth);
	if (err)
		return err;
	auth->out = trs_auth_buf_alloc(path->ibdev, sizeof(*auth->out),
				       DMA_TO_DEVICE, &auth->out_dma);
	auth->chal = trs_auth_buf_alloc(path->ibdev, sizeof(*auth->chal),
					DMA_FROM_DEVICE, &auth->chal_dma);
	if (!auth->out || !auth->chal)
		return -ENOMEM;
	hello = &auth->out->hello;
	hello->magic = cpu_to_le16(TRS_MAGIC);
	hello->type = cpu_to_le16(TRS_MSG_HELLO);
	if (auth->klen) {
		err = trs_key_id(auth->key, auth->klen, hello->key_id);
		if (err)
			return err;
	}
	memcpy(hello->nonce, auth->a.nonce_c, sizeof(hello->nonce));
	memcpy(hello->hostname, auth->a.host, sizeof(hello->hostname));

	path->setup_step = "authentication";
	path->setup_conn = 0;
	return trs_clt_auth_post(path, 0, sizeof(*auth->chal), false) ?:
	       trs_clt_auth_post(path, 0, sizeof(*hello), true);
}

static bool trs_clt_auth_over(struct trs_clt_path *path, int *err)
{
	bool over;

	spin_lock_irq(&path->state_lock);
	over = path->auth->chal_done || path->setup_err;
	*err = path->setup_err ?: path->auth->chal_err;
	spin_unlock_irq(&path->state_lock);
	return over;
}

/* The CHALLENGE: well formed, not a refusal, and the server's proof. */
static int trs_clt_auth_check(struct trs_clt_path *path)
{
	struct trs_clt_auth *auth = path->auth;
	const struct trs_msg_challenge *chal = auth->chal;
	struct trs_clt_sess *sess = path->sess;
	u16 status = le16_to_cpu(chal->status);
	u8 mac[TRS_MAC_LEN];
	int err;

	if (auth->chal_len != sizeof(*chal) ||
	    le16_to_cpu(chal->magic) != TRS_MAGIC ||
	    le16_to_cpu(chal->type) != TRS_MSG_CHALLENGE ||
	    le16_to_cpu(chal->flags) & ~TRS_CHAL_F_KEY) {
		trs_log_err(sess, "malformed authentication challenge from the server\n");
		return -EPROTO;
	}
	if (status) {
		err = status < 512 ? -status : -EPROTO;
		trs_log_err(sess, "the server refused host %s: %pe\n",
			    sess->hostname, ERR_PTR(err));
		return err;
	}
	memcpy(auth->a.nonce_s, chal->nonce, sizeof(auth->a.nonce_s));
	if (!auth->klen)
		return 0;
	if (!(le16_to_cpu(chal->flags) & TRS_CHAL_F_KEY)) {
		trs_log_err(sess, "the server does not authenticate host %s, which has a key: refused\n",
			    sess->hostname);
		return -EKEYREJECTED;
	}
	err = trs_auth_mac(auth->key, auth->klen, "rnbd-srv", &auth->a, mac);
	if (!err && !trs_auth_equal(mac, chal->mac, sizeof(mac))) {
		trs_log_err(sess, "the server's proof for host %s does not verify: refused\n",
			    sess->hostname);
		err = -EKEYREJECTED;
	}
	memzero_explicit(mac, sizeof(mac));
	return err;
}

/**
 * trs_clt_auth_finish() - take the CHALLENGE and send PROOF
 * @path: path whose trs_clt_auth_start() succeeded
 *
 * Nothing without TRS_CAP_AUTH.  Process context.
 *
 * Return: 0; -EACCES or -EKEYREJECTED refused by the server; -EKEYREJECTED
 * the server did not prove it knows the host's key; -EPROTO malformed;
 * -ETIMEDOUT; or the path's error.
 */
int trs_clt_auth_finish(struct trs_clt_path *path)
{
	struct trs_clt_auth *auth = path->auth;
	struct trs_msg_proof *proof;
	int err;

	if (!auth)
		return 0;
	if (!wait_event_timeout(path->setup_wq, trs_clt_auth_over(path, &err),
				TRS_CLT_AUTH_TIMEOUT))
		return -ETIMEDOUT;
	if (err)
		return err;
	ib_dma_sync_single_for_cpu(path->ibdev, auth->chal_dma,
				   sizeof(*auth->chal), DMA_FROM_DEVICE);
	err = trs_clt_auth_check(path);
	if (err)
		return err;
	proof = &auth->out->proof;
	proof->magic = cpu_to_le16(TRS_MAGIC);
	proof->type = cpu_to_le16(TRS_MSG_PROOF);
	if (auth->klen) {
		err = trs_auth_mac(auth->key, auth->klen, "rnbd-clt", &auth->a,
				   proof->mac);
		if (err)
			return err;
	}
	return trs_clt_auth_post(path, offsetof(struct trs_clt_auth_out, proof),
				 sizeof(*proof), true);
}

/**
 * trs_clt_auth_conn_key() - what connection @idx (not 0) sends as its
 *	session key
 * @path: the path
 * @idx: the connection
 * @key: TRS_SESS_KEY_LEN bytes out: the token of an authenticated path,
 *	else connection 0's accept's key
 *
 * Return: 0 or a negative errno.  Process context.
 */
int trs_clt_auth_conn_key(struct trs_clt_path *path, u16 idx, u8 *key)
{
	struct trs_clt_auth *auth = path->auth;

	if (!auth || !auth->klen) {
		memcpy(key, path->conns[0].rsp.sess_key, TRS_SESS_KEY_LEN);
		return 0;
	}
	return trs_auth_token(auth->key, auth->klen, &auth->a, idx, key);
}

/**
 * trs_clt_auth_free() - release the exchange of a path's setup attempt
 * @path: the path, its connections drained
 */
void trs_clt_auth_free(struct trs_clt_path *path)
{
	struct trs_clt_auth *auth = path->auth;

	if (!auth)
		return;
	trs_auth_buf_free(path->ibdev, auth->out, sizeof(*auth->out),
			  DMA_TO_DEVICE, auth->out_dma);
	trs_auth_buf_free(path->ibdev, auth->chal, sizeof(*auth->chal),
			  DMA_FROM_DEVICE, auth->chal_dma);
	kfree_sensitive(auth);
	path->auth = NULL;
}

/**
 * trs_clt_hostname() - the host name a session sends
 * @name: the user's, or NULL or "": the node name
 * @out: TRS_HOSTNAME_LEN bytes out, NUL-padded
 *
 * The node name is made one: its first TRS_HOSTNAME_LEN - 1 characters,
 * each one trs_hostname_ok() does not take made '-' (a node name may hold
 * '_' and be 64 long), so a client maps whatever its node name.
 *
 * Return: 0, or -EINVAL if the user's name is no host name
 * trs_hostname_ok() takes.
 */
int trs_clt_hostname(const char *name, char *out)
{
	size_t i;

	memset(out, 0, TRS_HOSTNAME_LEN);
	if (name && *name) {
		if (strlen(name) >= TRS_HOSTNAME_LEN)
			return -EINVAL;
		strscpy(out, name, TRS_HOSTNAME_LEN);
		return trs_hostname_ok(out) ? 0 : -EINVAL;
	}
	strscpy(out, utsname()->nodename, TRS_HOSTNAME_LEN);
	for (i = 0; out[i]; i++)
		if (!(isascii(out[i]) && isalnum(out[i])) &&
		    !strchr("._:-", out[i]))
			out[i] = '-';
	if (!out[0])
		out[0] = '-';
	return 0;
}
