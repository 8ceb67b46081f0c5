// SPDX-License-Identifier: GPL-2.0-only
/*
 * rnbd client: instantiates the tracepoints of rnbd-clt-trace.h.
 */
#include <linux/build_bug.h>

#define CREATE_TRACE_POINTS
#include "rnbd-clt-trace.h"

/* rnbd_clt_show_op() prints these by number */
static_assert((__force u32)REQ_OP_READ == 0);
static_assert((__force u32)REQ_OP_WRITE == 1);
static_assert((__force u32)REQ_OP_FLUSH == 2);
static_assert((__force u32)REQ_OP_DISCARD == 3);
static_assert((__force u32)REQ_OP_WRITE_ZEROES == 9);
static_assert((__force u32)REQ_OP_DRV_IN == 34);
static_assert((__force u32)REQ_OP_DRV_OUT == 35);
