// SPDX-License-Identifier: GPL-2.0-only
/*
 * bdops_open_gendisk: block_device_operations.open takes the gendisk and
 * a blk_mode_t, no more the block_device and an fmode_t.
 * Changed in: 6.5
 */
#include <linux/blkdev.h>

#ifdef RNBD_PROBE_NEW
static int rnbd_probe_open(struct gendisk *disk, blk_mode_t mode)
{
	return 0;
}
#else
static int rnbd_probe_open(struct block_device *bdev, fmode_t mode)
{
	return 0;
}
#endif

const struct block_device_operations rnbd_probe_fops = {
	.open	= rnbd_probe_open,
};
