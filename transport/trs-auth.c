// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport core: the MACs of the exchange of TRS_CAP_AUTH, which
 * names a path's client host and authenticates both sides with the host's
 * key (Documentation/security.rst).  HMAC-SHA256 of the crypto API, in
 * process context, at connect only.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/algapi.h>
#include <crypto/hash.h>
#include <linux/ctype.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rnbd/fault-inject.h>
#include "trs-core.h"

/*
 * What every MAC of a path covers after its label: both nonces, the
 * session, the path and both addresses as each side sees them, and the
 * host name.
 */
struct trs_auth_transcript {
	char	label[8];
	u8	nonce_c[TRS_NONCE_LEN];
	u8	nonce_s[TRS_NONCE_LEN];
	u8	uuid[16];
	__le16	path_id;
	__le16	count;
	u8	clt_addr[16];
	u8	srv_addr[16];
	char	host[TRS_HOSTNAME_LEN];
} __packed;

static int trs_hmac(const u8 *key, unsigned int klen, const void *data,
		    size_t len, u8 *out)
{
	struct crypto_shash *tfm;
	int err;

	tfm = TRS_FI(crypto_alloc_shash("hmac(sha256)", 0, 0),
		     ERR_PTR(-ENOMEM));
	if (IS_ERR(tfm))
		return PTR_ERR(tfm);
	err = crypto_shash_setkey(tfm, key, klen);
	if (!err)
		err = crypto_shash_tfm_digest(tfm, data, len, out);
	crypto_free_shash(tfm);
	return err;
}

/**
 * trs_auth_mac() - one side's proof of a path's exchange
 * @key: the host's key
 * @klen: its length, TRS_KEY_MIN..TRS_KEY_MAX
 * @label: "rnbd-srv" or "rnbd-clt": whose proof
 * @a: the exchange
 * @mac: TRS_MAC_LEN bytes out
 *
 * Return: 0 or a negative errno of the crypto API.  Process context.
 */
int trs_auth_mac(const u8 *key, unsigned int klen, const char *label,
		 const struct trs_auth *a, u8 *mac)
{
	struct trs_auth_transcript t = {
		.path_id	= cpu_to_le16(a->path_id),
		.count		= cpu_to_le16(a->conn_cnt),
	};

	memcpy(t.label, label, sizeof(t.label));
	memcpy(t.nonce_c, a->nonce_c, sizeof(t.nonce_c));
	memcpy(t.nonce_s, a->nonce_s, sizeof(t.nonce_s));
	memcpy(t.uuid, a->uuid, sizeof(t.uuid));
	memcpy(t.clt_addr, a->clt_addr, sizeof(t.clt_addr));
	memcpy(t.srv_addr, a->srv_addr, sizeof(t.srv_addr));
	memcpy(t.host, a->host, sizeof(t.host));
	return trs_hmac(key, klen, &t, sizeof(t), mac);
}
EXPORT_SYMBOL_GPL(trs_auth_mac);

/**
 * trs_auth_token() - what connection @idx of an authenticated path sends
 *	instead of the session key
 * @key: the host's key
 * @klen: its length
 * @a: the path's exchange
 * @idx: the connection's index, 1..conn_cnt-1
 * @token: TRS_CONN_TOKEN_LEN bytes out
 *
 * Return: 0 or a negative errno of the crypto API.  Process context.
 */
int trs_auth_token(const u8 *key, unsigned int klen, const struct trs_auth *a,
		   u16 idx, u8 *token)
{
	struct trs_auth_transcript t = {
		.label		= "rnbd-con",
		.path_id	= cpu_to_le16(a->path_id),
		.count		= cpu_to_le16(idx),
	};
	u8 mac[TRS_MAC_LEN];
	int err;

	memcpy(t.nonce_c, a->nonce_c, sizeof(t.nonce_c));
	memcpy(t.nonce_s, a->nonce_s, sizeof(t.nonce_s));
	memcpy(t.uuid, a->uuid, sizeof(t.uuid));
	err = trs_hmac(key, klen, &t, sizeof(t), mac);
	memcpy(token, mac, TRS_CONN_TOKEN_LEN);
	memzero_explicit(mac, sizeof(mac));
	return err;
}
EXPORT_SYMBOL_GPL(trs_auth_token);

/**
 * trs_key_id() - the id that names a key on the wire and in sysfs
 * @key: the key
 * @klen: its length
 * @id: TRS_KEY_ID_LEN bytes out: the first of SHA-256("rnbd-kid" | key)
 *
 * Return: 0 or a negative errno of the crypto API.  Process context.
 */
int trs_key_id(const u8 *key, unsigned int klen, u8 *id)
{
	static const char label[8] = "rnbd-kid";
	struct crypto_shash *tfm;
	u8 digest[32];
	int err;

	tfm = TRS_FI(crypto_alloc_shash("sha256", 0, 0), ERR_PTR(-ENOMEM));
	if (IS_ERR(tfm))
		return PTR_ERR(tfm);
	{
		SHASH_DESC_ON_STACK(desc, tfm);

		desc->tfm = tfm;
		err = crypto_shash_init(desc) ?:
		      crypto_shash_update(desc, label, sizeof(label)) ?:
		      crypto_shash_finup(desc, key, klen, digest);
		shash_desc_zero(desc);
	}
	crypto_free_shash(tfm);
	if (!err)
		memcpy(id, digest, TRS_KEY_ID_LEN);
	return err;
}
EXPORT_SYMBOL_GPL(trs_key_id);

/**
 * trs_auth_equal() - compare two MACs or tokens in constant time
 * @a: one
 * @b: the other
 * @len: their length
 *
 * Return: true if they are the same.
 */
bool trs_auth_equal(const u8 *a, const u8 *b, size_t len)
{
	return !crypto_memneq(a, b, len);
}
EXPORT_SYMBOL_GPL(trs_auth_equal);

/**
 * trs_hostname_ok() - is @name a host name the exchange may carry?
 * @name: TRS_HOSTNAME_LEN bytes from the wire or the user
 *
 * Return: true for 1..TRS_HOSTNAME_LEN-1 characters of [A-Za-z0-9._:-]
 * followed by NULs only.
 */
bool trs_hostname_ok(const char *name)
{
	size_t len = strnlen(name, TRS_HOSTNAME_LEN), i;

	if (!len || len == TRS_HOSTNAME_LEN ||
	    memchr_inv(name + len, 0, TRS_HOSTNAME_LEN - len))
		return false;
	for (i = 0; i < len; i++)
		/* isalnum() takes Latin-1 letters too */
		if (!(isascii(name[i]) && isalnum(name[i])) &&
		    !strchr("._:-", name[i]))
			return false;
	return true;
}
EXPORT_SYMBOL_GPL(trs_hostname_ok);

/**
 * trs_auth_addr() - an IP address as the transcript holds it
 * @addr: AF_INET or AF_INET6 address
 * @out: 16 bytes: the IPv6 address, or the IPv4-mapped one
 */
void trs_auth_addr(const struct sockaddr_storage *addr, u8 *out)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)addr;
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)addr;

	memset(out, 0, 16);
	if (addr->ss_family == AF_INET6) {
		memcpy(out, &s6->sin6_addr, 16);
	} else if (addr->ss_family == AF_INET) {
		out[10] = 0xff;
		out[11] = 0xff;
		memcpy(out + 12, &s4->sin_addr, 4);
	}
}
EXPORT_SYMBOL_GPL(trs_auth_addr);

/**
 * trs_auth_buf_alloc() - a zeroed buffer of the exchange, DMA-mapped
 * @dev: the path's RDMA device
 * @len: its size
 * @dir: DMA_TO_DEVICE for what is sent, DMA_FROM_DEVICE for what is
 *	received
 * @dma: out: its DMA address
 *
 * Return: the buffer, or NULL (-ENOMEM): nothing to free.  Process context.
 */
void *trs_auth_buf_alloc(struct ib_device *dev, size_t len,
			 enum dma_data_direction dir, u64 *dma)
{
	void *buf = TRS_FI(kzalloc(len, GFP_KERNEL), NULL);

	if (!buf)
		return NULL;
	*dma = ib_dma_map_single(dev, buf, len, dir);
	if (ib_dma_mapping_error(dev, *dma)) {
		kfree(buf);
		return NULL;
	}
	return buf;
}
EXPORT_SYMBOL_GPL(trs_auth_buf_alloc);

/**
 * trs_auth_buf_free() - undo trs_auth_buf_alloc()
 * @dev: the path's RDMA device
 * @buf: the buffer, or NULL
 * @len: its size
 * @dir: its direction
 * @dma: its DMA address
 */
void trs_auth_buf_free(struct ib_device *dev, void *buf, size_t len,
		       enum dma_data_direction dir, u64 dma)
{
	if (!buf)
		return;
	ib_dma_unmap_single(dev, dma, len, dir);
	kfree_sensitive(buf);
}
EXPORT_SYMBOL_GPL(trs_auth_buf_free);

/**
 * trs_auth_send() - post a signaled SEND of a message of the exchange
 * @qp: connection 0's QP; the caller holds what guards its posts
 * @cqe: the send completion
 * @dma: the message's DMA address, synced for the device
 * @len: its length
 * @lkey: the PD's local DMA lkey
 *
 * Return: 0 or ib_post_send()'s error.
 */
int trs_auth_send(struct ib_qp *qp, struct ib_cqe *cqe, u64 dma, u32 len,
		  u32 lkey)
{
	struct ib_sge sge = { .addr = dma, .length = len, .lkey = lkey };
	struct ib_send_wr wr = {
		.opcode		= IB_WR_SEND,
		.wr_cqe		= cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
		.send_flags	= IB_SEND_SIGNALED,
	};

	return ib_post_send(qp, &wr, NULL);
}
EXPORT_SYMBOL_GPL(trs_auth_send);
