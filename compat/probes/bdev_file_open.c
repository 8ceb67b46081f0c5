// SPDX-License-Identifier: GPL-2.0-only
/*
 * bdev_file_open: a block device is opened as a struct file,
 * bdev_file_open_by_dev(), reached through file_bdev() and released with
 * bdev_fput(); blkdev_get_by_dev() and blkdev_put() are gone.
 * bdev_file_open_by_dev() came in 6.9, bdev_fput() in 6.10; the forms of
 * 6.5 to 6.9 (a holder argument, struct bdev_handle) are neither side, so
 * such a kernel is refused.
 * Changed in: 6.10
 */
#include <linux/blkdev.h>

#ifdef RNBD_PROBE_NEW
struct block_device *rnbd_probe(dev_t devt, void *holder);
struct block_device *rnbd_probe(dev_t devt, void *holder)
{
	struct file *file = bdev_file_open_by_dev(devt, BLK_OPEN_READ, holder,
						  NULL);
	struct block_device *bdev;

	if (IS_ERR(file))
		return ERR_CAST(file);
	bdev = file_bdev(file);
	bdev_fput(file);
	return bdev;
}
#else
struct block_device *rnbd_probe(dev_t devt, void *holder);
struct block_device *rnbd_probe(dev_t devt, void *holder)
{
	struct block_device *bdev = blkdev_get_by_dev(devt, FMODE_READ |
						      FMODE_EXCL, holder);

	if (!IS_ERR(bdev))
		blkdev_put(bdev, FMODE_READ | FMODE_EXCL);
	return bdev;
}
#endif
