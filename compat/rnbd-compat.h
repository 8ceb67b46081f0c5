/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rnbd-compat.h - the one place that knows which kernel rnbd is built for
 *
 * The rest of the tree is written against the newest kernel's API.  For
 * an older kernel this header supplies what that kernel lacks, chosen by
 * the build-time probes of compat/probes/ (compat/probe runs them against
 * the target kernel's headers and writes generated/rnbd-compat-probed.h:
 * RNBD_HAVE_<PROBE> is 1 for the newer API, 0 for the older one).  No
 * kernel version number is compared anywhere, here or elsewhere.
 *
 * Every shim is a macro or a static inline: the IO path pays nothing for
 * it (no function pointer, no branch that the newest kernel does not have).
 *
 * Tested kernels: Debian's 6.1 and 6.12; the newest Debian 7.x builds.  A
 * kernel that mixes the sides of two changes this header treats as one
 * (between 6.5 and 6.11) stops the build below with a message.
 */
#ifndef RNBD_COMPAT_H
#define RNBD_COMPAT_H

#include <linux/blkdev.h>
#include <linux/blk-mq.h>
#include <linux/fs.h>
#include <linux/mount.h>

/* Made by the top-level Kbuild: build from the tree's top (make, or make -C KDIR M=TREE). */
#include "generated/rnbd-compat-probed.h"

/*
 * The changes of 6.5 (open modes) and those of 6.9 to 6.11 (queue limits,
 * block device files) are followed pairwise: a kernel on one side of a
 * pair and the other side of its twin (6.5 to 6.10) is not supported.
 */
#if (RNBD_HAVE_BLK_MODE_T ^ RNBD_HAVE_BDOPS_OPEN_GENDISK) || \
	(RNBD_HAVE_BLK_MQ_ALLOC_DISK_LIMITS ^ RNBD_HAVE_QUEUE_LIMITS_FEATURES) || \
	(RNBD_HAVE_BLK_MQ_ALLOC_DISK_LIMITS ^ RNBD_HAVE_BDEV_FILE_OPEN)
#error "rnbd: kernels 6.5 to 6.10 are not supported; 6.1, 6.12 and newer are"
#endif

/* --- blk_mode_t (6.5): block device open modes ------------------------ */
#if !RNBD_HAVE_BLK_MODE_T
typedef fmode_t blk_mode_t;
#define BLK_OPEN_READ	FMODE_READ
#define BLK_OPEN_WRITE	FMODE_WRITE
#define BLK_OPEN_EXCL	FMODE_EXCL
#endif

/* --- block_device_operations.open (6.5) ------------------------------- */
/*
 * The driver writes its open as int fn(struct gendisk *, blk_mode_t),
 * follows it with RNBD_BDOPS_OPEN_DEFINE(fn); and puts
 * RNBD_BDOPS_OPEN(fn) in its block_device_operations.
 */
#if RNBD_HAVE_BDOPS_OPEN_GENDISK
#define RNBD_BDOPS_OPEN_DEFINE(fn)	static_assert(1)
#define RNBD_BDOPS_OPEN(fn)		fn
#else
#define RNBD_BDOPS_OPEN_DEFINE(fn)					\
	static int fn##_bdev(struct block_device *bdev, fmode_t mode)	\
	{								\
		return fn(bdev->bd_disk, mode);				\
	}								\
	static_assert(1)
#define RNBD_BDOPS_OPEN(fn)		fn##_bdev
#endif

/* --- an open block device (6.9, 6.10) --------------------------------- */
/**
 * struct rnbd_bdev_handle - a block device opened by rnbd_bdev_open()
 *
 * @file: the block device's file (bdev_file_open_by_dev()), since 6.10
 * @bdev: the block device itself, before
 *
 * The newest kernels hand out a struct file, 6.1 the block_device itself;
 * either is released by rnbd_bdev_close().
 */
struct rnbd_bdev_handle {
#if RNBD_HAVE_BDEV_FILE_OPEN
	struct file		*file;
#else
	struct block_device	*bdev;
#endif
};

/**
 * rnbd_bdev_open() - open a block device by number
 * @h: filled on success
 * @devt: the device
 * @mode: BLK_OPEN_READ, BLK_OPEN_WRITE, BLK_OPEN_EXCL
 * @holder: the exclusive holder: non-NULL exactly when @mode has
 *	BLK_OPEN_EXCL
 *
 * Return: the block device, or an ERR_PTR.
 */
static inline struct block_device *
rnbd_bdev_open(struct rnbd_bdev_handle *h, dev_t devt, blk_mode_t mode,
	       void *holder)
{
#if RNBD_HAVE_BDEV_FILE_OPEN
	struct file *file = bdev_file_open_by_dev(devt, mode, holder, NULL);

	if (IS_ERR(file))
		return ERR_CAST(file);
	h->file = file;
	return file_bdev(file);
#else
	struct block_device *bdev = blkdev_get_by_dev(devt, mode, holder);

	if (!IS_ERR(bdev))
		h->bdev = bdev;
	return bdev;
#endif
}

/**
 * rnbd_bdev_close() - release what rnbd_bdev_open() opened
 * @h: the handle
 * @mode: the mode it was opened with
 *
 * The exclusive claim is given up before this returns, so the device can
 * be opened exclusively again at once.
 */
static inline void rnbd_bdev_close(struct rnbd_bdev_handle *h, blk_mode_t mode)
{
#if RNBD_HAVE_BDEV_FILE_OPEN
	bdev_fput(h->file);
	h->file = NULL;
#else
	blkdev_put(h->bdev, mode);
	h->bdev = NULL;
#endif
}

/* --- queue limits given at allocation (6.9), features in them (6.11) -- */
#if !RNBD_HAVE_QUEUE_LIMITS_FEATURES
typedef unsigned int __bitwise blk_features_t;
#define BLK_FEAT_WRITE_CACHE	((__force blk_features_t)(1u << 0))
#define BLK_FEAT_FUA		((__force blk_features_t)(1u << 1))
#define BLK_FEAT_ROTATIONAL	((__force blk_features_t)(1u << 2))

/*
 * 6.1 sets limits one by one on a queue that exists: the limits rnbd
 * gives (and only those; a zero discard size means no discard) go
 * through the old setters, which derive the rest as 6.12 does.
 */
static inline void rnbd_compat_set_limits(struct request_queue *q,
					  const struct queue_limits *lim)
{
	blk_queue_logical_block_size(q, lim->logical_block_size);
	blk_queue_physical_block_size(q, lim->physical_block_size);
	blk_queue_max_hw_sectors(q, lim->max_hw_sectors);
	blk_queue_max_segments(q, lim->max_segments);
	blk_queue_virt_boundary(q, lim->virt_boundary_mask);
	if (lim->max_hw_discard_sectors) {
		blk_queue_max_discard_sectors(q, lim->max_hw_discard_sectors);
		blk_queue_max_discard_segments(q, lim->max_discard_segments);
		q->limits.discard_granularity = lim->discard_granularity;
		q->limits.discard_alignment = lim->discard_alignment;
	}
	blk_queue_max_write_zeroes_sectors(q, lim->max_write_zeroes_sectors);
}

static inline struct request_queue *
blk_mq_alloc_queue(struct blk_mq_tag_set *set, struct queue_limits *lim,
		   void *queuedata)
{
	struct request_queue *q = blk_mq_init_queue(set);

	if (IS_ERR(q))
		return q;
	q->queuedata = queuedata;
	if (lim)
		rnbd_compat_set_limits(q, lim);
	return q;
}
#endif

/**
 * rnbd_blk_mq_alloc_disk() - blk_mq_alloc_disk() with limits and features
 * @set: the tag set
 * @lim: the disk's limits
 * @features: BLK_FEAT_WRITE_CACHE, BLK_FEAT_FUA, BLK_FEAT_ROTATIONAL
 * @queuedata: the queue's queuedata
 *
 * Return: the disk, or an ERR_PTR.
 */
static inline struct gendisk *
rnbd_blk_mq_alloc_disk(struct blk_mq_tag_set *set, struct queue_limits *lim,
		       blk_features_t features, void *queuedata)
{
#if RNBD_HAVE_QUEUE_LIMITS_FEATURES
	lim->features |= features;
	return blk_mq_alloc_disk(set, lim, queuedata);
#else
	struct gendisk *disk = blk_mq_alloc_disk(set, queuedata);

	if (IS_ERR(disk))
		return disk;
	rnbd_compat_set_limits(disk->queue, lim);
	blk_queue_write_cache(disk->queue, features & BLK_FEAT_WRITE_CACHE,
			      features & BLK_FEAT_FUA);
	if (!(features & BLK_FEAT_ROTATIONAL))
		blk_queue_flag_set(QUEUE_FLAG_NONROT, disk->queue);
	return disk;
#endif
}

/* --- trace events: __assign_str() of the field only (6.10) ------------ */
#if RNBD_HAVE_TRACE_ASSIGN_STR_DST_ONLY
#define rnbd_assign_str(dst, src)		__assign_str(dst)
#define rnbd_assign_str_len(dst, src, len)	__assign_str(dst)
#else
#define rnbd_assign_str(dst, src)		__assign_str(dst, src)
#define rnbd_assign_str_len(dst, src, len)	__assign_str_len(dst, src, len)
#endif

/* --- <linux/hex.h> (6.2; 7.x: no longer in <linux/kernel.h>) ----------- */
#if RNBD_HAVE_LINUX_HEX_H
#include <linux/hex.h>
#else
#include <linux/kernel.h>
#endif

/* --- idmapped mounts (6.3) -------------------------------------------- */
#if !RNBD_HAVE_MNT_IDMAP
/* 6.1's permission checks take the mount's user namespace instead */
#define mnt_idmap(mnt)	mnt_user_ns(mnt)
#endif

/* --- a request's end_io gets the completion batch (7.0) -------------- */
/*
 * The driver writes its end_io as enum rq_end_io_ret fn(struct request *,
 * blk_status_t, const struct io_comp_batch *), follows it with
 * RNBD_RQ_END_IO_DEFINE(fn); and sets rq->end_io = RNBD_RQ_END_IO(fn).
 */
#if RNBD_HAVE_RQ_END_IO_BATCH
#define RNBD_RQ_END_IO_DEFINE(fn)	static_assert(1)
#define RNBD_RQ_END_IO(fn)		fn
#else
#define RNBD_RQ_END_IO_DEFINE(fn)					\
	static enum rq_end_io_ret fn##_nobatch(struct request *rq,	\
					       blk_status_t err)	\
	{								\
		return fn(rq, err, NULL);				\
	}								\
	static_assert(1)
#define RNBD_RQ_END_IO(fn)		fn##_nobatch
#endif

/* --- merging is blk-mq's default (6.14) ------------------------------- */
/*
 * Before, a tag set asked for it: the driver puts this in its tag set's
 * flags, 0 where merging needs no asking.
 */
#if RNBD_HAVE_BLK_MQ_MERGE_BY_DEFAULT
#define RNBD_BLK_MQ_F_SHOULD_MERGE	0
#else
#define RNBD_BLK_MQ_F_SHOULD_MERGE	BLK_MQ_F_SHOULD_MERGE
#endif

/* --- blk_rq_map_sg() without the queue (6.15) ------------------------- */
static inline int rnbd_blk_rq_map_sg(struct request *rq,
				     struct scatterlist *sglist)
{
#if RNBD_HAVE_BLK_RQ_MAP_SG_RQ_ONLY
	return blk_rq_map_sg(rq, sglist);
#else
	return blk_rq_map_sg(rq->q, rq, sglist);
#endif
}

/* --- unfreezing a queue frozen by blk_freeze_queue_start() (6.15) ----- */
#if !RNBD_HAVE_BLK_MQ_UNFREEZE_NOMEMRESTORE
static inline void blk_mq_unfreeze_queue_nomemrestore(struct request_queue *q)
{
	blk_mq_unfreeze_queue(q);
}
#endif

/* --- bdev_rot() (7.0) ------------------------------------------------- */
#if !RNBD_HAVE_BDEV_ROT
static inline bool bdev_rot(struct block_device *bdev)
{
	return !bdev_nonrot(bdev);
}
#endif

/* --- a module attribute's show() takes it const (6.14) --------------- */
#if RNBD_HAVE_MODULE_ATTRIBUTE_CONST
#define RNBD_MODULE_ATTR_CONST	const
#else
#define RNBD_MODULE_ATTR_CONST
#endif

#endif /* RNBD_COMPAT_H */
