// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport core module: what the client and the server share.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/error-injection.h>
#include <linux/module.h>
#include <rnbd/fault-inject.h>
#include "trs-core.h"

/**
 * trs_dev_check() - check that an RDMA device can carry the transport
 * @cm_id: CM id whose address resolved to the device and port
 * @mr_pages: pages one fast-registration MR must map
 *
 * Both sides say where a request lies, and which one completed, in the
 * immediate data of RDMA WRITE with immediate, which iWARP lacks; they
 * register memory with FRWR (IB_WR_REG_MR) and send a header plus data in
 * one work request.
 *
 * Return: 0, or -EOPNOTSUPP after logging what the device lacks.
 */
int trs_dev_check(struct rdma_cm_id *cm_id, u32 mr_pages)
{
	struct ib_device *dev = cm_id->device;
	const struct ib_device_attr *attr = &dev->attrs;

	if (rdma_protocol_iwarp(dev, cm_id->port_num)) {
		pr_err("%s: iWARP has no RDMA WRITE with immediate data, which rnbd needs (use InfiniBand or RoCE)\n",
		       dev_name(&dev->dev));
		return -EOPNOTSUPP;
	}
	if (!(attr->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS)) {
		pr_err("%s: no memory management extensions (FRWR)\n",
		       dev_name(&dev->dev));
		return -EOPNOTSUPP;
	}
	if (attr->max_fast_reg_page_list_len < mr_pages) {
		pr_err("%s: an MR maps %u pages, %u needed\n",
		       dev_name(&dev->dev), attr->max_fast_reg_page_list_len,
		       mr_pages);
		return -EOPNOTSUPP;
	}
	if (attr->max_send_sge < 2 || attr->max_recv_sge < 1) {
		pr_err("%s: %d send SGEs, 2 needed\n", dev_name(&dev->dev),
		       attr->max_send_sge);
		return -EOPNOTSUPP;
	}
	return 0;
}
EXPORT_SYMBOL_GPL(trs_dev_check);

#ifdef CONFIG_FUNCTION_ERROR_INJECTION
/**
 * trs_should_fail_alloc() - whether the allocation site asking must fail
 *
 * The fail_function target of include/rnbd/fault-inject.h: it never fails
 * by itself, a test makes it return true.  Not called from this module (its callers
 * are in other files), so no caller can assume its value.
 *
 * Return: false, or true where a test injects a failure.
 */
noinline bool trs_should_fail_alloc(void)
{
	return false;
}
EXPORT_SYMBOL_GPL(trs_should_fail_alloc);
ALLOW_ERROR_INJECTION(trs_should_fail_alloc, TRUE);

/**
 * trs_should_delay() - whether the site asking must sleep a while
 *
 * The fail_function target of TRS_FI_DELAY() (include/rnbd/fault-inject.h),
 * kept apart from trs_should_fail_alloc() so that a test can widen a race
 * window without failing allocations.
 *
 * Return: false, or true where a test arms it.
 */
noinline bool trs_should_delay(void)
{
	return false;
}
EXPORT_SYMBOL_GPL(trs_should_delay);
ALLOW_ERROR_INJECTION(trs_should_delay, TRUE);
#endif

MODULE_DESCRIPTION("RNBD RDMA transport: shared helpers");
MODULE_LICENSE("GPL");
