// SPDX-License-Identifier: GPL-2.0-only
/*
 * blk_mode_t: block devices are opened with a blk_mode_t of BLK_OPEN_*
 * flags; FMODE_EXCL is gone.
 * Changed in: 6.5
 */
#include <linux/blkdev.h>

#ifdef RNBD_PROBE_NEW
blk_mode_t rnbd_probe(void);
blk_mode_t rnbd_probe(void)
{
	return BLK_OPEN_READ | BLK_OPEN_WRITE | BLK_OPEN_EXCL;
}
#else
fmode_t rnbd_probe(void);
fmode_t rnbd_probe(void)
{
	return FMODE_READ | FMODE_WRITE | FMODE_EXCL;
}
#endif
