// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport: queue pairs, completion queues and receive buffers of a
 * connection.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include "trs-core.h"

/**
 * trs_qp_create() - create a connection's CQ and RC queue pair
 * @cm_id: the connection's CM id, bound to its RDMA device
 * @pd: protection domain of the session
 * @ctx: connection, becomes cq->cq_context and qp->qp_context
 * @idx: connection index; selects the completion vector
 * @attr: queue sizes
 * @cq: the new CQ, sized for every send and receive WR to complete
 *
 * Undo with trs_qp_destroy().
 *
 * Return: 0 or a negative errno.
 */
int trs_qp_create(struct rdma_cm_id *cm_id, struct ib_pd *pd, void *ctx,
		  u32 idx, const struct trs_qp_attr *attr, struct ib_cq **cq)
{
	struct ib_device *dev = cm_id->device;
	struct ib_qp_init_attr init = {
		.qp_context	= ctx,
		.sq_sig_type	= IB_SIGNAL_REQ_WR,
		.qp_type	= IB_QPT_RC,
		.cap = {
			.max_send_wr	= attr->send_wr,
			.max_recv_wr	= attr->recv_wr,
			.max_send_sge	= attr->send_sge,
			.max_recv_sge	= 1,
		},
	};
	int err;

	*cq = TRS_FI(ib_alloc_cq(dev, ctx, attr->send_wr + attr->recv_wr,
				 idx % dev->num_comp_vectors, attr->poll_ctx),
		     ERR_PTR(-ENOMEM));
	if (IS_ERR(*cq)) {
		err = PTR_ERR(*cq);
		/* the callers' teardown frees a CQ that is not NULL */
		*cq = NULL;
		return err;
	}

	init.send_cq = *cq;
	init.recv_cq = *cq;
	err = TRS_FI(rdma_create_qp(cm_id, pd, &init), -ENOMEM);
	if (err) {
		ib_free_cq(*cq);
		*cq = NULL;
	}
	return err;
}
EXPORT_SYMBOL_GPL(trs_qp_create);

/**
 * trs_qp_destroy() - destroy what trs_qp_create() created
 * @cm_id: the connection's CM id; it stays
 * @cq: the connection's CQ
 *
 * The QP must be drained or have never been connected.
 */
void trs_qp_destroy(struct rdma_cm_id *cm_id, struct ib_cq *cq)
{
	rdma_destroy_qp(cm_id);
	ib_free_cq(cq);
}
EXPORT_SYMBOL_GPL(trs_qp_destroy);

/**
 * trs_post_recvs() - post zero-length receive WRs
 * @qp: queue pair
 * @cqe: completion handler of the receives
 * @n: how many
 *
 * Requests and replies are RDMA writes with immediate data: each consumes
 * a receive WR but no receive buffer.
 *
 * Return: 0 or a negative errno.
 */
int trs_post_recvs(struct ib_qp *qp, struct ib_cqe *cqe, u32 n)
{
	struct ib_recv_wr wr = { .wr_cqe = cqe };
	int err = 0;

	while (n-- && !err)
		err = ib_post_recv(qp, &wr, NULL);
	return err;
}
EXPORT_SYMBOL_GPL(trs_post_recvs);
