// SPDX-License-Identifier: GPL-2.0-only
/*
 * blk_mq_merge_by_default: blk-mq merges requests unless told not to;
 * the tag set flag BLK_MQ_F_SHOULD_MERGE is gone.
 * Changed in: 6.14
 */
#include <linux/blk-mq.h>

#ifdef RNBD_PROBE_NEW
/* a name the kernel still uses cannot be declared again as a variable */
static int BLK_MQ_F_SHOULD_MERGE __maybe_unused;
#else
unsigned int rnbd_probe = BLK_MQ_F_SHOULD_MERGE;
#endif
