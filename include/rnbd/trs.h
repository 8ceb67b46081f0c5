/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * RNBD transport (TRS) API: a request/response transport over RDMA for one
 * user module on each side.  It knows nothing about block devices.
 *
 * Client side: a session is one RC connection per CPU to one server.  The
 * server reserves queue_depth chunks for the session and the client owns
 * them: a request is submitted on a slot (chunk index) the user allocated,
 * usually its blk-mq tag.  A request carries a small user header and
 * optionally data towards the server (write) or a buffer the server fills
 * (read).  Completion is reported exactly once through the request's done
 * callback: the server's answer arrives on the connection the request was
 * submitted on; a request the session lost before its answer is completed
 * with -ECONNABORTED from the recovery work.
 *
 * A session has one or more paths (sysfs add_path), each a connection
 * per CPU to one server address, each with its own chunks.  A request
 * goes to a connected path chosen by the session's multipath policy; one
 * a path lost comes back with -ECONNABORTED and may be submitted again
 * at once, to another path.  A path that loses its connections (an error,
 * the peer's disconnect, RDMA device removal, trs_clt_recover())
 * reconnects by itself, every reconnect_delay_sec, with the same limits,
 * until trs_clt_close() or until max_reconnect_attempts failed in a row;
 * the user hears of it through the event callback when the session has
 * no connected path left, and when it has one again.
 *
 * Server side: the user module gets each request with the user header and
 * the chunk's data area, and answers it exactly once with trs_srv_resp().
 */
#ifndef RNBD_TRS_H
#define RNBD_TRS_H

#include <linux/types.h>
#include <linux/socket.h>
#include <linux/dma-direction.h>
#include <linux/scatterlist.h>
#include <rnbd/trs-proto.h>	/* TRS_HOSTNAME_LEN, TRS_KEY_* */

#define TRS_DEFAULT_PORT	1234

/* ------------------------------------------------------------------ */
/* client                                                              */
/* ------------------------------------------------------------------ */

struct trs_clt_sess;

/**
 * enum trs_clt_event - session events reported to the user
 * @TRS_CLT_EV_RECONNECTING: the session lost its last connected path and
 *	will reconnect.  Reported before the requests in flight complete
 *	with -ECONNABORTED (they may be submitted again after
 *	%TRS_CLT_EV_RECONNECTED or %TRS_CLT_EV_RESUMED); new requests fail
 *	with -ENOTCONN.
 * @TRS_CLT_EV_RECONNECTED: connected again, with the same limits.  The
 *	server has forgotten the session's state: everything the user set
 *	up on it must be set up again.
 * @TRS_CLT_EV_RESUMED: connected again, with the same limits, and the
 *	server kept the session: what the user set up on it stands.
 * @TRS_CLT_EV_NOTICE: the server's user has news (trs_srv_sess_notify());
 *	the user asks it with a request.
 * @TRS_CLT_EV_LOST: loss_timeout_sec passed since
 *	%TRS_CLT_EV_RECONNECTING without a reconnect; reconnecting goes on.
 * @TRS_CLT_EV_DISCONNECTED: max_reconnect_attempts failed in a row on
 *	every path: the session stays down until closed.
 */
enum trs_clt_event {
	TRS_CLT_EV_RECONNECTING,
	TRS_CLT_EV_RECONNECTED,
	TRS_CLT_EV_LOST,
	TRS_CLT_EV_DISCONNECTED,
	TRS_CLT_EV_RESUMED,
	TRS_CLT_EV_NOTICE,
};

/**
 * struct trs_clt_ops - user callbacks and settings of a client session
 * @priv: passed back to @event and @get_key
 * @event: session event; called from a workqueue, one at a time, may
 *	sleep, but must not wait for requests of the session to complete
 * @hostname: the client's host name its paths send (1..63 characters of
 *	[A-Za-z0-9._:-]), copied at open; NULL or "": the node name
 * @get_key: the host's key for a path's connect: copies it to @key
 *	(TRS_KEY_MAX bytes) and returns its length (TRS_KEY_MIN..
 *	TRS_KEY_MAX), 0 if the host has none, or a negative errno.  Called
 *	at every connect of a path, in process context; may be NULL.
 */
struct trs_clt_ops {
	void		*priv;
	void		(*event)(void *priv, enum trs_clt_event ev);
	const char	*hostname;
	int		(*get_key)(void *priv, u8 *key);
};

/**
 * struct trs_clt_attrs - negotiated session limits
 * @queue_depth: number of slots; valid slots are 0..queue_depth-1
 * @max_io_size: most data bytes per request
 * @max_segments: most scatter/gather entries per request
 * @nr_conns: number of connections; valid conn indexes are 0..nr_conns-1
 */
struct trs_clt_attrs {
	u32	queue_depth;
	u32	max_io_size;
	u32	max_segments;
	u32	nr_conns;
};

/**
 * struct trs_clt_io - one request, owned by the user until done() runs
 * @slot: chunk index, 0..queue_depth-1, not in use by another request
 * @dir: DMA_TO_DEVICE (data to the server), DMA_FROM_DEVICE (the server
 *	returns data into @sgl) or DMA_NONE
 * @usr_hdr: user header, copied at submission
 * @usr_len: user header length, 1..TRS_MAX_USR_HDR
 * @sgl: data, not yet DMA mapped; the transport maps and unmaps it
 * @sg_cnt: entries in @sgl, at most max_segments
 * @data_len: total bytes in @sgl, at most max_io_size
 * @done: completion, called exactly once in softirq context with 0 or a
 *	negative errno (the server's status or a transport error)
 */
struct trs_clt_io {
	u32			slot;
	enum dma_data_direction	dir;
	const void		*usr_hdr;
	u16			usr_len;
	struct scatterlist	*sgl;
	unsigned int		sg_cnt;
	u32			data_len;
	void			(*done)(struct trs_clt_io *io, int status);
};

/**
 * struct trs_clt_path_addr - the two ends of a path
 * @src: local address to connect from; zeroed (AF_UNSPEC): the one the
 *	route to @dst leaves from
 * @dst: server address (AF_INET or AF_INET6); port 0 means
 *	TRS_DEFAULT_PORT
 */
struct trs_clt_path_addr {
	struct sockaddr_storage	src;
	struct sockaddr_storage	dst;
};

struct trs_clt_sess *trs_clt_open(const char *sessname,
				  const struct trs_clt_path_addr *addr,
				  const struct trs_clt_ops *ops);
bool trs_clt_has_path(struct trs_clt_sess *sess,
		      const struct trs_clt_path_addr *addr);
int trs_clt_add_path(struct trs_clt_sess *sess,
		     const struct trs_clt_path_addr *addr);
void trs_clt_close(struct trs_clt_sess *sess);
void trs_clt_query(struct trs_clt_sess *sess, struct trs_clt_attrs *attrs);
int trs_clt_request(struct trs_clt_sess *sess, unsigned int conn,
		    struct trs_clt_io *io);
bool trs_clt_timeout(struct trs_clt_sess *sess, unsigned int conn,
		     const struct trs_clt_io *io);
bool trs_clt_connected(struct trs_clt_sess *sess);
void trs_clt_recover(struct trs_clt_sess *sess, int err);

/* ------------------------------------------------------------------ */
/* server                                                              */
/* ------------------------------------------------------------------ */

struct trs_srv_ctx;
struct trs_srv_sess;

/**
 * struct trs_srv_req - one received request, valid until trs_srv_resp()
 * @sess: session it arrived on
 * @slot: chunk index
 * @conn: connection it arrived on (the reply goes back on it)
 * @dir: DMA_TO_DEVICE (write: @data holds @data_len bytes from the
 *	client), DMA_FROM_DEVICE (read: put up to @data_len bytes at @data)
 *	or DMA_NONE
 * @usr_hdr: private copy of the user header, already length-checked
 * @usr_len: its length, 1..TRS_MAX_USR_HDR
 * @data: the chunk's data area (physically contiguous, page aligned,
 *	max_io_size bytes)
 * @data_len: see @dir; validated against max_io_size
 */
struct trs_srv_req {
	struct trs_srv_sess	*sess;
	u32			slot;
	u32			conn;
	enum dma_data_direction	dir;
	const void		*usr_hdr;
	u16			usr_len;
	void			*data;
	u32			data_len;
};

/**
 * struct trs_srv_ops - user callbacks of the server
 * @sess_open: a session finished its handshake; set *priv for the other
 *	callbacks.  Return 0 or a negative errno to refuse the session.
 *	Process context.
 * @sess_close: the session is gone; no request will arrive.  Requests
 *	the user still holds (a bio that hangs) must still be answered with
 *	trs_srv_resp(), which then only frees them: the session's memory
 *	lives until the last one is.  Process context.
 * @request: a request arrived; the user must answer it exactly once
 *	with trs_srv_resp(), from any context.  Process context.
 * @host_key: a path's HELLO named @host and the id of its key (NULL: the
 *	client has none): copy the host's key with that id to @key
 *	(TRS_KEY_MAX bytes) and return its length (TRS_KEY_MIN..
 *	TRS_KEY_MAX); 0: the host has no key and is served without
 *	authentication; -EACCES: the host may not connect; -EKEYREJECTED:
 *	the host has keys, none with that id.  NULL: no host has a key.
 *	Process context.
 */
struct trs_srv_ops {
	int	(*sess_open)(struct trs_srv_sess *sess, void **priv);
	void	(*sess_close)(struct trs_srv_sess *sess, void *priv);
	void	(*request)(void *priv, struct trs_srv_req *req);
	int	(*host_key)(const char *host, const u8 *key_id, u8 *key);
};

struct trs_srv_ctx *trs_srv_open(const struct trs_srv_ops *ops, u16 port);
void trs_srv_close(struct trs_srv_ctx *ctx);
void trs_srv_resp(struct trs_srv_req *req, int status, u32 len);
const char *trs_srv_sess_name(struct trs_srv_sess *sess);
const char *trs_srv_sess_hostname(struct trs_srv_sess *sess);
void trs_srv_sess_key_id(struct trs_srv_sess *sess, u8 *id);
void trs_srv_sess_close(struct trs_srv_sess *sess, const char *why);
bool trs_srv_sess_notify(struct trs_srv_sess *sess);

/* ------------------------------------------------------------------ */
/* host names, keys and addresses ("ip:10.9.0.1", "ip:fe80::1%eth0"),   */
/* rnbd_trs_core                                                       */
/* ------------------------------------------------------------------ */

bool trs_hostname_ok(const char *name);
int trs_key_id(const u8 *key, unsigned int klen, u8 *id);

int trs_addr_parse(const char *str, struct sockaddr_storage *addr);
int trs_addr_print(const struct sockaddr *addr, char *buf, size_t len);
u16 trs_addr_port(const struct sockaddr_storage *addr);
void trs_addr_set_port(struct sockaddr_storage *addr, u16 port);
bool trs_addr_pair_ok(const struct sockaddr_storage *dst,
		      const struct sockaddr_storage *src);
bool trs_addr_eq(const struct sockaddr_storage *a,
		 const struct sockaddr_storage *b, bool port);

#endif /* RNBD_TRS_H */
