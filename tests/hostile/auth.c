// SPDX-License-Identifier: GPL-2.0-only
/*
 * rnbd-hostile: the "auth" group, the exchange of TRS_CAP_AUTH
 * (Documentation/security.rst), included by rnbd-hostile.c.
 *
 * The server must know host --auth-host with key --auth-key (exports and
 * keys set by the test).  Each case opens a fresh session that offers
 * TRS_CAP_AUTH and plays the exchange right, or wrong in one way: a proof
 * with another key or none, a recorded exchange played again, a proof made
 * for another session or another address, malformed, truncated, oversized
 * and out-of-order messages, a connection 1 with the session key instead of
 * its token, and a brute force.  The outcome is what the server did:
 * "answered E..." is the status of its CHALLENGE or RESULT, "accepted" the
 * chunk table, "session closed" a disconnect, "rejected E..." a connect
 * refused.
 */
#include <openssl/evp.h>
#include <openssl/hmac.h>

#define AUTH_MSG_MAX	256

/* the kernel's struct trs_auth_transcript (transport/trs-auth.c) */
struct auth_transcript {
	char	label[8];
	uint8_t	nonce_c[TRS_NONCE_LEN];
	uint8_t	nonce_s[TRS_NONCE_LEN];
	uint8_t	uuid[16];
	__le16	path_id;
	__le16	count;
	uint8_t	clt_addr[16];
	uint8_t	srv_addr[16];
	char	host[TRS_HOSTNAME_LEN];
} __packed;

static uint8_t auth_key[TRS_KEY_MAX];
static unsigned int auth_klen;

static void auth_hmac(const uint8_t *key, unsigned int klen, const void *d,
		      size_t len, uint8_t *mac)
{
	unsigned int n = TRS_MAC_LEN;

	if (!HMAC(EVP_sha256(), key, (int)klen, d, len, mac, &n))
		die("HMAC-SHA256 failed");
}

static void auth_key_id(const uint8_t *key, unsigned int klen, uint8_t *id)
{
	uint8_t buf[8 + TRS_KEY_MAX], md[32];
	unsigned int n = sizeof(md);

	memcpy(buf, "rnbd-kid", 8);
	memcpy(buf + 8, key, klen);
	if (!EVP_Digest(buf, 8 + klen, md, &n, EVP_sha256(), NULL))
		die("SHA-256 failed");
	memcpy(id, md, TRS_KEY_ID_LEN);
}

static void auth_addr(const struct sockaddr *sa, uint8_t *out)
{
	memset(out, 0, 16);
	if (sa->sa_family == AF_INET6) {
		memcpy(out, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	} else if (sa->sa_family == AF_INET) {
		out[10] = 0xff;
		out[11] = 0xff;
		memcpy(out + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	}
}

/* How a case plays the exchange wrong. */
enum auth_how {
	A_RIGHT,
	A_KEY_OTHER,		/* proof with another key */
	A_KEY_NONE,		/* HELLO without a key id, PROOF zero */
	A_REPLAY,		/* HELLO and PROOF of an earlier session */
	A_RELAY_SESS,		/* proof made for another session's uuid */
	A_RELAY_ADDR,		/* proof made for another client address */
	A_HELLO_MAGIC,
	A_HELLO_TYPE,
	A_HELLO_RESERVED,
	A_HELLO_HOST_BAD,	/* a '/' in the host name */
	A_HELLO_HOST_NONUL,	/* 64 characters, no NUL */
	A_HELLO_HOST_EMPTY,
	A_HELLO_SHORT,		/* 100 bytes */
	A_HELLO_LONG,		/* 200 bytes: more than its receive */
	A_PROOF_FIRST,		/* PROOF where HELLO is due */
	A_HELLO_TWICE,		/* HELLO where PROOF is due */
	A_HB_FIRST,		/* a heartbeat where HELLO is due */
	A_PROOF_SHORT,		/* 20 bytes */
	A_CONN1_KEY,		/* connection 1 with the session key, not its token */
	A_HOST_OTHER,		/* another host's name with this host's key */
	A_JOIN_NOAUTH,		/* then a path without TRS_CAP_AUTH joins */
};

/* The exchange a replay plays again. */
static struct {
	bool have;
	struct trs_msg_hello hello;
	struct trs_msg_proof proof;
} auth_rec;

struct auth_state {
	struct auth_transcript t;
	uint8_t msg[AUTH_MSG_MAX];	/* the server's last message */
	uint32_t len;
	bool got;
};

static struct auth_state *auth_cur;

/* cq_pump()'s hook: a message (no immediate) while an exchange runs. */
static bool auth_take(struct hsess *s, uint32_t len)
{
	if (!auth_cur)
		return false;
	memcpy(auth_cur->msg, s->buf + s->tbl_off,
	       len < AUTH_MSG_MAX ? len : AUTH_MSG_MAX);
	auth_cur->len = len;
	auth_cur->got = true;
	/* a table (the exchange succeeded) is the table's too */
	return len <= AUTH_MSG_MAX;
}

static struct outcome auth_wait(struct hsess *s, struct auth_state *a)
{
	long end = now_ms() + opt.timeout_ms;

	a->got = false;
	while (!a->got) {
		if (s->closed)
			return OUT(O_CLOSED, 0);
		if (now_ms() >= end)
			return OUT_TIMEOUT(opt.timeout_ms);
		pump(s, 1);
	}
	return OUT(O_ACCEPTED, 0);
}

static int auth_send(struct hsess *s, const void *msg, uint32_t len)
{
	uint8_t *b = s->buf + s->small_off;

	memcpy(b, msg, len);
	return post_send(s, 0, IBV_WR_SEND, 0, 0, 0, b, len);
}

/* The server's answer to a HELLO, or its status. */
static struct outcome auth_challenge(struct hsess *s, struct auth_state *a)
{
	const struct trs_msg_challenge *ch = (const void *)a->msg;
	struct outcome o = auth_wait(s, a);

	if (o.k != O_ACCEPTED)
		return o;
	if (a->len != sizeof(*ch) || le16toh(ch->type) != TRS_MSG_CHALLENGE)
		return OUT(O_ANSWERED, EPROTO);
	if (le16toh(ch->status))
		return OUT(O_ANSWERED, le16toh(ch->status));
	memcpy(a->t.nonce_s, ch->nonce, sizeof(a->t.nonce_s));
	return OUT(O_ACCEPTED, 0);
}

/* After the PROOF: the chunk table (accepted) or a RESULT. */
static struct outcome auth_result(struct hsess *s, struct auth_state *a)
{
	const struct trs_msg_result *r = (const void *)a->msg;
	long end = now_ms() + opt.timeout_ms;

	a->got = false;
	while (!a->got && !s->have_table) {
		if (s->closed)
			return OUT(O_CLOSED, 0);
		if (now_ms() >= end)
			return OUT_TIMEOUT(opt.timeout_ms);
		pump(s, 1);
	}
	if (a->got && a->len == sizeof(*r) &&
	    le16toh(r->type) == TRS_MSG_RESULT)
		return OUT(O_ANSWERED, le16toh(r->status));
	return s->have_table ? OUT(O_ACCEPTED, 0) : OUT(O_CLOSED, 0);
}

/* One session that plays the exchange @how; its outcome. */
static struct outcome auth_case(enum auth_how how)
{
	struct sess_opts so = {
		.conn_cnt = how == A_CONN1_KEY ? 2 : 1,
		.caps = TRS_CAP_AUTH | TRS_CAP_SLOT_GEN |
			(how == A_JOIN_NOAUTH ? TRS_CAP_MULTIPATH : 0),
	};
	struct trs_msg_conn_req r;
	struct hsess *s = sess_alloc(&so);
	struct auth_state a = {};
	struct trs_msg_hello h = {};
	struct trs_msg_proof p = {};
	uint8_t big[200] = {}, other[TRS_KEY_MIN];
	const uint8_t *key = auth_key;
	unsigned int klen = auth_klen;
	struct outcome o;

	o = conn_open(s, 0, NULL, 0);
	if (o.k != O_ACCEPTED)
		goto out;
	if (!(s->caps & TRS_CAP_AUTH)) {
		o = OUT(O_REJECTED, EOPNOTSUPP);
		goto out;
	}
	auth_cur = &a;
	memcpy(a.t.uuid, s->uuid, sizeof(a.t.uuid));
	a.t.count = htole16(so.conn_cnt);
	auth_addr(rdma_get_local_addr(s->conn[0].id), a.t.clt_addr);
	auth_addr(rdma_get_peer_addr(s->conn[0].id), a.t.srv_addr);
	snprintf(a.t.host, sizeof(a.t.host), "%s",
		 how == A_HOST_OTHER ? "hostile-other" : opt.auth_host);
	aux_bytes(a.t.nonce_c, sizeof(a.t.nonce_c));

	h.magic = htole16(TRS_MAGIC);
	h.type = htole16(TRS_MSG_HELLO);
	if (how != A_KEY_NONE)
		auth_key_id(key, klen, h.key_id);
	memcpy(h.nonce, a.t.nonce_c, sizeof(h.nonce));
	memcpy(h.hostname, a.t.host, sizeof(h.hostname));
	switch (how) {
	case A_REPLAY:
		if (!auth_rec.have) {
			o = OUT(O_REJECTED, ENODATA);
			goto out;
		}
		h = auth_rec.hello;
		break;
	case A_HELLO_MAGIC:
		h.magic = htole16(TRS_MAGIC ^ 1);
		break;
	case A_HELLO_TYPE:
		h.type = htole16(TRS_MSG_PROOF);
		break;
	case A_HELLO_RESERVED:
		h.reserved0 = htole32(1);
		break;
	case A_HELLO_HOST_BAD:
		h.hostname[1] = '/';
		break;
	case A_HELLO_HOST_NONUL:
		memset(h.hostname, 'h', sizeof(h.hostname));
		break;
	case A_HELLO_HOST_EMPTY:
		memset(h.hostname, 0, sizeof(h.hostname));
		break;
	default:
		break;
	}

	/* what the server gets where HELLO is due */
	if (how == A_HELLO_SHORT) {
		auth_send(s, &h, 100);
	} else if (how == A_HELLO_LONG) {
		memcpy(big, &h, sizeof(h));
		auth_send(s, big, sizeof(big));
	} else if (how == A_PROOF_FIRST) {
		p.magic = htole16(TRS_MAGIC);
		p.type = htole16(TRS_MSG_PROOF);
		auth_send(s, &p, sizeof(p));
	} else if (how == A_HB_FIRST) {
		post_send(s, 0, IBV_WR_SEND_WITH_IMM,
			  trs_imm_pack(TRS_IMM_HB, 0, 0), 0, 0, NULL, 0);
	} else {
		auth_send(s, &h, sizeof(h));
	}
	o = auth_challenge(s, &a);
	if (o.k != O_ACCEPTED)
		goto out;

	/* the PROOF, made as the case wants */
	p.magic = htole16(TRS_MAGIC);
	p.type = htole16(TRS_MSG_PROOF);
	if (how == A_KEY_OTHER) {
		aux_bytes(other, sizeof(other));
		key = other;
		klen = sizeof(other);
	}
	if (how == A_RELAY_SESS)
		a.t.uuid[0] ^= 1;
	if (how == A_RELAY_ADDR)
		a.t.clt_addr[15] ^= 1;
	memcpy(a.t.label, "rnbd-clt", 8);
	if (how != A_KEY_NONE)
		auth_hmac(key, klen, &a.t, sizeof(a.t), p.mac);
	if (how == A_REPLAY)
		p = auth_rec.proof;
	if (how == A_HELLO_TWICE)
		auth_send(s, &h, sizeof(h));
	else
		auth_send(s, &p, how == A_PROOF_SHORT ? 20 : sizeof(p));
	if (how == A_RIGHT) {
		auth_rec.hello = h;
		auth_rec.proof = p;
		auth_rec.have = true;
	}
	if (how == A_CONN1_KEY) {
		/* connection 1 shows the session key, sent in clear */
		o = conn_open(s, 1, NULL, 0);
		if (o.k != O_ACCEPTED)
			goto out;
	}
	o = auth_result(s, &a);
	if (how == A_JOIN_NOAUTH && o.k == O_ACCEPTED) {
		/*
		 * The session is the host's, authenticated: a second path with
		 * its uuid and session key (both seen in clear) but without
		 * TRS_CAP_AUTH must not get in
		 */
		conn_req_fill(s, 0, &r);
		memcpy(r.sess_key, s->key, sizeof(r.sess_key));
		r.caps = htole32(TRS_CAP_MULTIPATH | TRS_CAP_SLOT_GEN);
		r.path_id = htole16(1);
		o = cm_attempt(&r, sizeof(r), NULL);
	}
out:
	auth_cur = NULL;
	sess_free(s);
	return o;
}

static void grp_auth(void)
{
	static const struct {
		enum auth_how how;
		const char *what;
	} cases[] = {
		{ A_RIGHT, "the exchange played right" },
		{ A_KEY_OTHER, "PROOF made with another key" },
		{ A_KEY_NONE, "HELLO without a key id, PROOF zero, for a host that has a key" },
		{ A_REPLAY, "the HELLO and PROOF of an earlier session played again" },
		{ A_RELAY_SESS, "PROOF made for another session's uuid" },
		{ A_RELAY_ADDR, "PROOF made for another client address" },
		{ A_HOST_OTHER, "another host's name with this host's key" },
		{ A_HELLO_MAGIC, "HELLO with a bad magic" },
		{ A_HELLO_TYPE, "HELLO with the type of PROOF" },
		{ A_HELLO_RESERVED, "HELLO with reserved0 1" },
		{ A_HELLO_HOST_BAD, "HELLO with a '/' in the host name" },
		{ A_HELLO_HOST_NONUL, "HELLO with a host name of 64 characters, no NUL" },
		{ A_HELLO_HOST_EMPTY, "HELLO with an empty host name" },
		{ A_HELLO_SHORT, "HELLO of 100 bytes" },
		{ A_HELLO_LONG, "HELLO of 200 bytes, more than its receive" },
		{ A_PROOF_FIRST, "PROOF where HELLO is due" },
		{ A_HELLO_TWICE, "HELLO again where PROOF is due" },
		{ A_HB_FIRST, "a heartbeat where HELLO is due" },
		{ A_PROOF_SHORT, "PROOF of 20 bytes" },
		{ A_CONN1_KEY, "connection 1 with the session key instead of its token" },
		{ A_JOIN_NOAUTH, "a path without TRS_CAP_AUTH joins the authenticated session" },
	};
	unsigned int i;
	long t0;
	int n, again;

	if (!cs.dry && (!opt.auth_host || !auth_klen)) {
		fprintf(stderr, "rnbd-hostile: auth: needs --auth-host and --auth-key\n");
		return;
	}
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		CASE("auth", "%s", cases[i].what)
			end_case(auth_case(cases[i].how));
		/* each failure counts against this address: let it pass */
		if (!cs.dry && cases[i].how != A_RIGHT)
			sleep_ms(1100);
	}
	/*
	 * A brute force: wrong proofs back to back, for --brute-ms (3 s by
	 * default).  The server holds an address 1 s after its third failure
	 * in a row: a try must come within that second to be refused, so a
	 * slow guest (a debug kernel's try takes about as long) needs longer.
	 */
	CASE("auth", "brute force: PROOFs with other keys back to back for %d s",
	     opt.brute_ms / 1000) {
		t0 = now_ms();
		n = 0;
		again = 0;
		while (now_ms() - t0 < opt.brute_ms) {
			struct outcome o = auth_case(A_KEY_OTHER);

			n++;
			if (o.k == O_REJECTED && o.err == EAGAIN)
				again++;
		}
		printf("auth: brute force: %d tries in %d s, %d refused EAGAIN, %d proofs checked\n",
		       n, opt.brute_ms / 1000, again, n - again);
		end_case(OUT(O_ANSWERED, again ? EAGAIN : 0));
	}
}
