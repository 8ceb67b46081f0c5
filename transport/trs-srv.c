// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport server: listeners, the CM handler and the module.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include <rnbd-compat.h>

#include "trs-srv.h"

#define TRS_SRV_BACKLOG		64

unsigned int trs_srv_queue_depth = 128;
module_param_named(sess_queue_depth, trs_srv_queue_depth, uint, 0444);
MODULE_PARM_DESC(sess_queue_depth,
		 "Chunks (request slots) per session, 1..4096; a client may ask for fewer (default 128)");

unsigned int trs_srv_max_io_size = SZ_128K;
module_param_named(max_io_size, trs_srv_max_io_size, uint, 0444);
MODULE_PARM_DESC(max_io_size,
		 "Data bytes per chunk: a multiple of 4096, at most 1048576 (default 131072)");

/*
 * Limits on what connecting clients may make the server hold; read without
 * a lock (READ_ONCE) where a session is admitted, so they can be changed
 * at run time and apply to the next connect request.
 */
unsigned int trs_srv_max_sessions = 256;
module_param_named(max_sessions, trs_srv_max_sessions, uint, 0644);
MODULE_PARM_DESC(max_sessions,
		 "Sessions the server holds at once, from all clients; 0: no limit (default 256)");

unsigned int trs_srv_max_peer_sessions = 32;
module_param_named(max_sessions_per_peer, trs_srv_max_peer_sessions, uint,
		   0644);
MODULE_PARM_DESC(max_sessions_per_peer,
		 "Sessions one client address may hold at once; 0: no limit (default 32)");

unsigned int trs_srv_max_conns = TRS_MAX_CONNS;
module_param_named(max_conns_per_session, trs_srv_max_conns, uint, 0644);
MODULE_PARM_DESC(max_conns_per_session,
		 "Connections one session may have, 1..1024; a client opens one per CPU (default 1024)");

/*
 * Every connection is a QP and a CQ on the server's RDMA device, which has
 * a fixed number of them for all its users.  A client opens one connection
 * per CPU and path (at most 1024 and 8): a session of a 128-CPU client
 * over 8 paths has 1024, one of a 2-CPU guest over one path 2.  4096 per
 * peer leaves such a client four sessions of 8 paths, or
 * max_sessions_per_peer single-path ones, and a 2-CPU guest more than its
 * max_sessions_per_peer sessions of 8 paths can use (512); 32768 in all is
 * max_sessions single-path sessions of 128-CPU clients, a fraction of the
 * QPs of an InfiniBand or RoCE adapter.
 */
unsigned int trs_srv_max_total_conns = 32768;
module_param_named(max_conns, trs_srv_max_total_conns, uint, 0644);
MODULE_PARM_DESC(max_conns,
		 "Connections the server holds at once, from all clients (a path counts those its connection 0 announces); over it a path is refused with ENFILE; 0: no limit (default 32768)");

unsigned int trs_srv_max_peer_conns = 4096;
module_param_named(max_conns_per_peer, trs_srv_max_peer_conns, uint, 0644);
MODULE_PARM_DESC(max_conns_per_peer,
		 "Connections one client address may hold at once, over all its sessions and paths; over it a path is refused with EMFILE; 0: no limit (default 4096)");

unsigned int trs_srv_max_chunk_mem_mb;
module_param_named(max_chunk_mem_mb, trs_srv_max_chunk_mem_mb, uint, 0644);
MODULE_PARM_DESC(max_chunk_mem_mb,
		 "MiB of chunk memory all sessions together may pin; 0: half of the RAM (default 0)");

/*
 * Sessions close on trs_srv_wq; their setup works (open, handshake timeout)
 * run on trs_srv_setup_wq, since a closing session waits for them: on one
 * WQ_MEM_RECLAIM queue, whose rescuer runs one work at a time under memory
 * pressure, that wait could deadlock.
 */
struct workqueue_struct *trs_srv_wq;
struct workqueue_struct *trs_srv_setup_wq;

/* guards trs_srv_sessions and the conns[] of every path */
DEFINE_MUTEX(trs_srv_mutex);
LIST_HEAD(trs_srv_sessions);

/* /sys/module/rnbd_trs_server/nr_conns: the connections max_conns counts */
static ssize_t nr_conns_show(RNBD_MODULE_ATTR_CONST struct module_attribute *attr,
			     struct module_kobject *mk, char *buf)
{
	return sysfs_emit(buf, "%u\n", trs_srv_nr_conns());
}

static struct module_attribute trs_srv_attr_nr_conns = __ATTR_RO(nr_conns);

/*
 * CM events.  Connect requests go to trs_srv_connect(); any error or
 * disconnect of a connection closes its whole session.  Returns non-zero
 * only from a failed connect request, so that the CM destroys the new id;
 * every other id is destroyed by its owner from a workqueue, also on
 * RDMA_CM_EVENT_DEVICE_REMOVAL.  The wildcard listener is bound to no
 * device and gets no events of its own.
 */
static int trs_srv_cm_handler(struct rdma_cm_id *cm_id,
			      struct rdma_cm_event *ev)
{
	enum trs_srv_cm_kind *kind = cm_id->context;
	struct trs_srv_conn *conn;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return trs_srv_connect(container_of(kind, struct trs_srv_ctx,
						    kind), cm_id, ev);
	if (*kind != TRS_SRV_CM_CONN)
		return 0;
	conn = container_of(kind, struct trs_srv_conn, kind);

	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		trs_srv_established(conn);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_ADDR_CHANGE:
		trs_srv_path_fail(conn->path, rdma_event_msg(ev->event));
		break;
	default:
		break;
	}
	return 0;
}

static int trs_srv_listen(struct trs_srv_ctx *ctx, sa_family_t family,
			  u16 port)
{
	struct sockaddr_storage addr = { .ss_family = family };
	struct rdma_cm_id *cm_id;
	int err = 0;

	cm_id = TRS_FI(rdma_create_id(&init_net, trs_srv_cm_handler, ctx,
				      RDMA_PS_TCP, IB_QPT_RC),
		       ERR_PTR(-ENOMEM));
	if (IS_ERR(cm_id))
		return PTR_ERR(cm_id);
	trs_addr_set_port(&addr, port);
	/* IPv6 accepts IPv4 too */
	if (family == AF_INET6)
		err = rdma_set_afonly(cm_id, 0);
	err = err ?: rdma_bind_addr(cm_id, (struct sockaddr *)&addr) ?:
	      rdma_listen(cm_id, TRS_SRV_BACKLOG);
	if (err) {
		rdma_destroy_id(cm_id);
		return err;
	}
	ctx->listen_id = cm_id;
	return 0;
}

/**
 * trs_srv_open() - start accepting sessions
 * @ops: user callbacks; must stay valid until trs_srv_close()
 * @port: port to listen on, 0 for TRS_DEFAULT_PORT
 *
 * Listens on every address, IPv6 and IPv4 (IPv4 only if IPv6 is
 * unavailable), of every RDMA device, present or future.  Process context.
 *
 * Return: the context, or ERR_PTR() (-EINVAL bad @ops, -EADDRINUSE, ...).
 */
struct trs_srv_ctx *trs_srv_open(const struct trs_srv_ops *ops, u16 port)
{
	struct trs_srv_ctx *ctx;
	int err;

	if (!ops || !ops->sess_open || !ops->sess_close || !ops->request)
		return ERR_PTR(-EINVAL);
	ctx = TRS_FI(kzalloc(sizeof(*ctx), GFP_KERNEL), NULL);
	if (!ctx)
		return ERR_PTR(-ENOMEM);
	ctx->kind = TRS_SRV_CM_LISTENER;
	ctx->ops = ops;
	port = port ?: TRS_DEFAULT_PORT;

	err = trs_srv_listen(ctx, AF_INET6, port);
	if (err)
		err = trs_srv_listen(ctx, AF_INET, port);
	if (err) {
		pr_err("cannot listen on port %u: %pe\n", port, ERR_PTR(err));
		kfree(ctx);
		return ERR_PTR(err);
	}
	pr_info("listening on port %u (%s)\n", port,
		ctx->listen_id->route.addr.src_addr.ss_family == AF_INET6 ?
		"IPv6 and IPv4" : "IPv4");
	return ctx;
}
EXPORT_SYMBOL_GPL(trs_srv_open);

/**
 * trs_srv_close() - stop listening and close every session
 * @ctx: from trs_srv_open()
 *
 * Disconnects every session of @ctx and waits until each opened one got
 * sess_close() and the user answered all of their requests (a request on
 * a disk that hangs keeps this waiting).  Process context, sleeps.
 */
void trs_srv_close(struct trs_srv_ctx *ctx)
{
	struct trs_srv_sess *sess;

	/* also waits for connect requests being handled */
	rdma_destroy_id(ctx->listen_id);

	mutex_lock(&trs_srv_mutex);
	list_for_each_entry(sess, &trs_srv_sessions, entry)
		if (sess->ctx == ctx)
			trs_srv_sess_close(sess, "server shutdown");
	mutex_unlock(&trs_srv_mutex);
	wait_var_event(&ctx->nr_sess, !atomic_read(&ctx->nr_sess));
	kfree(ctx);
}
EXPORT_SYMBOL_GPL(trs_srv_close);

/* The device goes away: close its paths and wait until they are gone. */
static void trs_srv_remove_one(struct ib_device *dev, void *client_data)
{
	struct trs_srv_sess *sess;
	struct trs_srv_path *path;

	mutex_lock(&trs_srv_mutex);
	list_for_each_entry(sess, &trs_srv_sessions, entry) {
		spin_lock_irq(&sess->lock);
		list_for_each_entry(path, &sess->paths, sess_entry)
			if (path->ibdev == dev)
				trs_srv_path_fail(path, "RDMA device removal");
		spin_unlock_irq(&sess->lock);
	}
	mutex_unlock(&trs_srv_mutex);
	flush_workqueue(trs_srv_wq);
}

static struct ib_client trs_srv_ib_client = {
	.name	= "rnbd_trs_server",
	.remove	= trs_srv_remove_one,
};

static int __init trs_srv_init(void)
{
	int err;

	trs_proto_build_checks();
	if (!trs_srv_queue_depth || trs_srv_queue_depth > TRS_MAX_QUEUE_DEPTH) {
		pr_err("sess_queue_depth must be 1..%u\n", TRS_MAX_QUEUE_DEPTH);
		return -EINVAL;
	}
	if (!trs_srv_max_io_size || trs_srv_max_io_size % TRS_MR_PAGE ||
	    trs_srv_max_io_size > TRS_MAX_IO_SIZE) {
		pr_err("max_io_size must be a multiple of %u, at most %u\n",
		       TRS_MR_PAGE, TRS_MAX_IO_SIZE);
		return -EINVAL;
	}
	trs_srv_wq = TRS_FI(alloc_workqueue("trs_srv", WQ_MEM_RECLAIM, 0),
			    NULL);
	if (!trs_srv_wq)
		return -ENOMEM;
	trs_srv_setup_wq = TRS_FI(alloc_workqueue("trs_srv_setup",
						  WQ_MEM_RECLAIM, 0), NULL);
	if (!trs_srv_setup_wq) {
		err = -ENOMEM;
		goto destroy_wq;
	}
	err = class_register(&trs_srv_class);
	if (err)
		goto destroy_setup_wq;
	err = sysfs_create_file(&THIS_MODULE->mkobj.kobj,
				&trs_srv_attr_nr_conns.attr);
	if (err)
		goto unregister_class;
	err = ib_register_client(&trs_srv_ib_client);
	if (err)
		goto remove_nr_conns;
	return 0;

remove_nr_conns:
	sysfs_remove_file(&THIS_MODULE->mkobj.kobj,
			  &trs_srv_attr_nr_conns.attr);
unregister_class:
	class_unregister(&trs_srv_class);
destroy_setup_wq:
	destroy_workqueue(trs_srv_setup_wq);
destroy_wq:
	destroy_workqueue(trs_srv_wq);
	return err;
}

static void __exit trs_srv_exit(void)
{
	ib_unregister_client(&trs_srv_ib_client);
	/* every user closed its listener: every path was freed */
	WARN(trs_srv_nr_conns(), "%u connections still counted\n",
	     trs_srv_nr_conns());
	sysfs_remove_file(&THIS_MODULE->mkobj.kobj,
			  &trs_srv_attr_nr_conns.attr);
	class_unregister(&trs_srv_class);
	destroy_workqueue(trs_srv_setup_wq);
	destroy_workqueue(trs_srv_wq);
}

module_init(trs_srv_init);
module_exit(trs_srv_exit);

MODULE_DESCRIPTION("RNBD RDMA transport: server");
MODULE_LICENSE("GPL");
