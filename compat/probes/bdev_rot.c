// SPDX-License-Identifier: GPL-2.0-only
/*
 * bdev_rot: a block device says whether it is rotational with
 * bdev_rot(); bdev_nonrot() went a release later (7.1).
 * Changed in: 7.0
 */
#include <linux/blkdev.h>

#ifndef RNBD_PROBE_NEW
/* a name the kernel has cannot be declared again as a variable */
static int bdev_rot __maybe_unused;
#endif

bool rnbd_probe(struct block_device *bdev);
bool rnbd_probe(struct block_device *bdev)
{
#ifdef RNBD_PROBE_NEW
	return bdev_rot(bdev);
#else
	return !bdev_nonrot(bdev);
#endif
}
