// SPDX-License-Identifier: GPL-2.0-only
/*
 * rnbd client: block devices.  Map opens a path on the server and creates
 * /dev/rnbdN on the session's tag set; blk-mq requests become RNBD_MSG_IO
 * messages submitted on the transport slot equal to their tag, on the
 * connection equal to their hardware queue.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/idr.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <rnbd-compat.h>

#include "rnbd-clt.h"
#include "rnbd-clt-trace.h"

#define RNBD_CLT_MAX_DEVS	(1 << (MINORBITS - RNBD_CLT_PART_BITS))
/* How long a force unmap waits for the server's answers to its requests. */
#define RNBD_CLT_FORCE_GRACE	(5 * HZ)
/* Largest discard or write-zeroes: rnbd_msg_io.len is 32 bits of bytes. */
#define RNBD_CLT_MAX_LEN_SECTORS \
	round_down(U32_MAX >> SECTOR_SHIFT, PAGE_SIZE >> SECTOR_SHIFT)

static int rnbd_clt_major;
static DEFINE_IDA(rnbd_clt_index_ida);

static u8 rnbd_clt_rq_flags(struct request *rq)
{
	u8 flags = 0;

	if (rq->cmd_flags & REQ_FUA)
		flags |= RNBD_F_FUA;
	if (rq->cmd_flags & REQ_PREFLUSH)
		flags |= RNBD_F_PREFLUSH;
	if (rq->cmd_flags & REQ_NOUNMAP)
		flags |= RNBD_F_NOUNMAP;
	if (rq->cmd_flags & REQ_SYNC)
		flags |= RNBD_F_SYNC;
	return flags;
}

static bool rnbd_clt_rq_has_data(struct request *rq)
{
	return req_op(rq) == REQ_OP_READ || req_op(rq) == REQ_OP_WRITE;
}

/* Build the IO message and the data mapping of a disk request. */
static blk_status_t rnbd_clt_prep_io(struct rnbd_clt_dev *dev,
				     struct request *rq,
				     struct rnbd_clt_iu *iu)
{
	enum dma_data_direction dir = DMA_NONE;
	u64 sector = blk_rq_pos(rq);
	u8 op;

	switch (READ_ONCE(dev->state)) {
	case RNBD_CLT_DEV_MAPPED:
		break;
	case RNBD_CLT_DEV_HELD:
		return rnbd_clt_held_sts(rq);
	default:
		return BLK_STS_IOERR;
	}
	switch (READ_ONCE(dev->sess->state)) {
	case RNBD_CLT_SESS_CONNECTED:
		break;
	case RNBD_CLT_SESS_RECONNECTING:
		return rnbd_clt_held_sts(rq);
	default:
		return BLK_STS_IOERR;
	}

	switch (req_op(rq)) {
	case REQ_OP_READ:
		op = RNBD_OP_READ;
		dir = DMA_FROM_DEVICE;
		break;
	case REQ_OP_WRITE:
		op = RNBD_OP_WRITE;
		dir = DMA_TO_DEVICE;
		break;
	case REQ_OP_FLUSH:
		op = RNBD_OP_FLUSH;
		sector = 0;
		break;
	case REQ_OP_DISCARD:
		op = RNBD_OP_DISCARD;
		break;
	case REQ_OP_WRITE_ZEROES:
		op = RNBD_OP_WRITE_ZEROES;
		break;
	default:
		return BLK_STS_NOTSUPP;
	}

	iu->msg = (struct rnbd_msg_io) {
		.hdr.type = cpu_to_le16(RNBD_MSG_IO),
		.hdr.version = RNBD_PROTO_VER,
		.op = op,
		.flags = rnbd_clt_rq_flags(rq),
		.prio = cpu_to_le16(req_get_ioprio(rq)),
		.dev_id = cpu_to_le32(dev->dev_id),
		.len = cpu_to_le32(blk_rq_bytes(rq)),
		.sector = cpu_to_le64(sector),
	};
	iu->trs = (struct trs_clt_io) {
		.dir = dir,
		.usr_hdr = &iu->msg,
		.usr_len = sizeof(iu->msg),
		.done = rnbd_clt_io_done,
	};
	if (dir == DMA_NONE)
		return BLK_STS_OK;

	iu->sgt.sgl = iu->first_sgl;
	if (TRS_FI(sg_alloc_table_chained(&iu->sgt,
					  blk_rq_nr_phys_segments(rq),
					  iu->first_sgl,
					  RNBD_CLT_INLINE_SG_CNT), -ENOMEM))
		return BLK_STS_RESOURCE;
	iu->trs.sgl = iu->sgt.sgl;
	iu->trs.sg_cnt = rnbd_blk_rq_map_sg(rq, iu->sgt.sgl);
	iu->trs.data_len = blk_rq_bytes(rq);
	return BLK_STS_OK;
}

static blk_status_t rnbd_clt_queue_rq(struct blk_mq_hw_ctx *hctx,
				      const struct blk_mq_queue_data *bd)
{
	struct rnbd_clt_sess *sess = hctx->queue->tag_set->driver_data;
	struct request *rq = bd->rq;
	struct rnbd_clt_iu *iu = blk_mq_rq_to_pdu(rq);
	struct rnbd_clt_dev *dev = rq->q->queuedata;
	blk_status_t sts;
	int err;

	/* Admin requests (no queuedata) come prepared by their sender. */
	if (dev) {
		sts = rnbd_clt_prep_io(dev, rq, iu);
		if (sts)
			return sts;
	}
	iu->trs.slot = rq->tag;
	iu->status = 0;

	blk_mq_start_request(rq);
	trace_rnbd_clt_rq_submit(rq, 0);
	err = trs_clt_request(sess->trs, hctx->queue_num, &iu->trs);
	if (likely(!err))
		return BLK_STS_OK;

	if (rnbd_clt_rq_has_data(rq))
		sg_free_table_chained(&iu->sgt, RNBD_CLT_INLINE_SG_CNT);
	iu->status = err;
	if (err == -EAGAIN || err == -ENOMEM)
		return BLK_STS_RESOURCE;
	/*
	 * -ENOTCONN: the session is lost; RECONNECTING holds it soon.  Not
	 * a request that fails fast on transport errors (an md leg's): its
	 * mirror goes on without it.
	 */
	if (err == -ENOTCONN && dev && rnbd_clt_dev_waits(dev) &&
	    !(rq->cmd_flags & REQ_FAILFAST_TRANSPORT))
		return BLK_STS_RESOURCE;
	if (err != -ENOTCONN)
		pr_err_ratelimited("session %s: submitting a request failed: %d\n",
				   sess->name, err);
	return BLK_STS_IOERR;
}

/**
 * rnbd_clt_io_done() - transport completion of a request
 * @io: the request's transport part
 * @status: 0 or a negative errno from the server or the transport
 *
 * Context: softirq.
 */
void rnbd_clt_io_done(struct trs_clt_io *io, int status)
{
	struct rnbd_clt_iu *iu = container_of(io, struct rnbd_clt_iu, trs);

	iu->status = status;
	blk_mq_complete_request(blk_mq_rq_from_pdu(iu));
}

/*
 * A disk request the transport lost with its path (-ECONNABORTED) goes
 * back to blk-mq: it goes out again on another connected path, or waits
 * while the session reconnects.  Not if its device is going away, if the
 * session is lost, or if it asked to fail fast on transport errors and
 * no other path is there.
 */
static bool rnbd_clt_retry(struct request *rq, int status)
{
	struct rnbd_clt_dev *dev = rq->q->queuedata;

	if (status != -ECONNABORTED || !dev || !rnbd_clt_dev_waits(dev))
		return false;
	return !(rq->cmd_flags & REQ_FAILFAST_TRANSPORT) ||
	       trs_clt_connected(dev->sess->trs);
}

static void rnbd_clt_complete_rq(struct request *rq)
{
	struct rnbd_clt_iu *iu = blk_mq_rq_to_pdu(rq);

	trace_rnbd_clt_rq_complete(rq, iu->status);
	if (rnbd_clt_rq_has_data(rq))
		sg_free_table_chained(&iu->sgt, RNBD_CLT_INLINE_SG_CNT);
	if (unlikely(iu->status) && rnbd_clt_retry(rq, iu->status)) {
		blk_mq_requeue_request(rq, true);
		return;
	}
	blk_mq_end_request(rq, errno_to_blk_status(iu->status));
}

/*
 * blk-mq's is the one request timeout: the queue's io_timeout for a disk
 * request (30 s by default), RNBD_CLT_ADMIN_TIMEOUT for OPEN, CLOSE and
 * INFO.  The transport answers or drains every request it accepted, and
 * the server may still write into a request's buffers until then: never
 * complete one here.  The path the request waits on reconnects instead,
 * which hands it back (and requeues it); other paths go on.
 */
static enum blk_eh_timer_return rnbd_clt_timeout(struct request *rq)
{
	struct rnbd_clt_sess *sess = rq->q->tag_set->driver_data;
	struct rnbd_clt_iu *iu = blk_mq_rq_to_pdu(rq);

	if (!rq->q->queuedata)
		rnbd_clt_admin_timeout(sess, rq);
	else if (trs_clt_timeout(sess->trs, rq->mq_hctx->queue_num, &iu->trs))
		pr_warn_ratelimited("session %s: request %d (op %u) of rnbd%d unanswered for %u s; reconnecting its path\n",
				    sess->name, rq->tag, req_op(rq),
				    ((struct rnbd_clt_dev *)rq->q->queuedata)->idx,
				    rq->timeout / HZ);
	return BLK_EH_RESET_TIMER;
}

const struct blk_mq_ops rnbd_clt_mq_ops = {
	.queue_rq	= rnbd_clt_queue_rq,
	.complete	= rnbd_clt_complete_rq,
	.timeout	= rnbd_clt_timeout,
};

static int rnbd_clt_open(struct gendisk *disk, blk_mode_t mode)
{
	struct rnbd_clt_dev *dev = disk->private_data;

	/* Called under disk->open_mutex, which unmap holds to change state. */
	if (READ_ONCE(dev->state) == RNBD_CLT_DEV_UNMAPPING)
		return -ENXIO;
	return 0;
}

RNBD_BDOPS_OPEN_DEFINE(rnbd_clt_open);

/*
 * The last reference to an added disk: a force-unmapped disk may stay open
 * long after its unmap.  The disk holds a reference to its rnbd_clt_dev,
 * and with it the index that names it (rnbdN and its minors), which no
 * new map takes before this, as virtio_blk's.
 */
static void rnbd_clt_free_disk(struct gendisk *disk)
{
	rnbd_clt_dev_put(disk->private_data);
}

static const struct block_device_operations rnbd_clt_fops = {
	.owner		= THIS_MODULE,
	.open		= RNBD_BDOPS_OPEN(rnbd_clt_open),
	.free_disk	= rnbd_clt_free_disk,
};

static bool rnbd_clt_bs_ok(u32 bs)
{
	return is_power_of_2(bs) && bs >= SECTOR_SIZE && bs <= PAGE_SIZE;
}

/**
 * rnbd_clt_check_open_rsp() - validate the server's answer to OPEN
 * @dev: device being opened
 * @rsp: the answer
 *
 * Return: 0, or -EPROTO with a dmesg line saying what is wrong.
 */
int rnbd_clt_check_open_rsp(struct rnbd_clt_dev *dev,
			    const struct rnbd_msg_open_rsp *rsp)
{
	u32 lbs = le16_to_cpu(rsp->logical_block_size);
	u32 pbs = le16_to_cpu(rsp->physical_block_size);
	u32 gran = le32_to_cpu(rsp->discard_granularity);
	u32 align = le32_to_cpu(rsp->discard_alignment);
	const char *why = NULL;

	if (rsp->reserved0 || memchr_inv(rsp->reserved, 0, sizeof(rsp->reserved)))
		why = "reserved fields are not zero";
	else if (!rnbd_clt_bs_ok(lbs) || !rnbd_clt_bs_ok(pbs) || pbs < lbs)
		why = "bad block size";
	else if (le64_to_cpu(rsp->nsectors) > (U64_MAX >> (SECTOR_SHIFT + 1)))
		why = "bad device size";
	else if (le32_to_cpu(rsp->max_hw_sectors) < (PAGE_SIZE >> SECTOR_SHIFT))
		why = "bad max_hw_sectors";
	else if (!rsp->max_segments)
		why = "bad max_segments";
	else if (rsp->max_discard_sectors &&
		 (!gran || gran % lbs || align >= gran || align % SECTOR_SIZE))
		why = "bad discard granularity or alignment";
	else if (!rsp->max_discard_sectors && (gran || align))
		why = "discard limits without discard support";
	else if (rsp->rotational > 1)
		why = "bad rotational flag";
	else if (rsp->cache_flags & ~(RNBD_CACHE_WRITEBACK | RNBD_CACHE_FUA))
		why = "unknown cache flags";
	if (!why)
		return 0;
	pr_err("%s@%s: invalid open response from the server: %s\n",
	       dev->path, dev->sess->name, why);
	return -EPROTO;
}

/* The disk's limits and features, all given at its allocation. */
static blk_features_t rnbd_clt_limits(struct rnbd_clt_dev *dev,
				      struct queue_limits *lim,
				      const struct rnbd_msg_open_rsp *rsp)
{
	const struct trs_clt_attrs *attrs = &dev->sess->attrs;
	u32 discard = le32_to_cpu(rsp->max_discard_sectors);
	u32 zeroes = le32_to_cpu(rsp->max_write_zeroes_sectors);
	blk_features_t features = 0;

	lim->logical_block_size = le16_to_cpu(rsp->logical_block_size);
	lim->physical_block_size = le16_to_cpu(rsp->physical_block_size);
	/*
	 * One request is one RDMA message however small the server's device
	 * limits are: its block layer splits the bio there, for free.
	 */
	lim->max_hw_sectors = attrs->max_io_size >> SECTOR_SHIFT;
	lim->max_segments = min_t(u32, attrs->max_segments, USHRT_MAX);
	lim->virt_boundary_mask = SZ_4K - 1;
	if (rsp->cache_flags & RNBD_CACHE_WRITEBACK)
		features |= BLK_FEAT_WRITE_CACHE;
	if (rsp->cache_flags & RNBD_CACHE_FUA)
		features |= BLK_FEAT_FUA;
	if (rsp->rotational)
		features |= BLK_FEAT_ROTATIONAL;
	if (discard) {
		lim->max_hw_discard_sectors = min(discard,
						  RNBD_CLT_MAX_LEN_SECTORS);
		lim->max_discard_segments = 1;
		lim->discard_granularity =
			le32_to_cpu(rsp->discard_granularity);
		lim->discard_alignment = le32_to_cpu(rsp->discard_alignment);
	}
	lim->max_write_zeroes_sectors = min(zeroes, RNBD_CLT_MAX_LEN_SECTORS);
	return features;
}

static int rnbd_clt_disk_add(struct rnbd_clt_dev *dev,
			     const struct rnbd_msg_open_rsp *rsp)
{
	struct queue_limits lim = {};
	blk_features_t features;
	struct gendisk *disk;
	int err;

	features = rnbd_clt_limits(dev, &lim, rsp);
	disk = TRS_FI(rnbd_blk_mq_alloc_disk(&dev->sess->tag_set, &lim,
					     features, dev),
		      ERR_PTR(-ENOMEM));
	if (IS_ERR(disk))
		return PTR_ERR(disk);
	disk->major = rnbd_clt_major;
	disk->first_minor = dev->idx << RNBD_CLT_PART_BITS;
	disk->minors = 1 << RNBD_CLT_PART_BITS;
	disk->fops = &rnbd_clt_fops;
	disk->private_data = dev;
	snprintf(disk->disk_name, sizeof(disk->disk_name), "rnbd%d", dev->idx);
	dev->srv_sectors = le64_to_cpu(rsp->nsectors);
	set_capacity(disk, dev->srv_sectors);
	set_disk_ro(disk, dev->access_mode == RNBD_ACCESS_RO);

	mutex_lock(&dev->sess->lock);
	dev->disk = disk;
	mutex_unlock(&dev->sess->lock);
	/* its rnbd/ files exist when the disk's "add" uevent goes out */
	err = device_add_disk(NULL, disk, rnbd_clt_disk_groups);
	if (!err) {
		/* the disk's, until rnbd_clt_free_disk() */
		rnbd_clt_dev_get(dev);
	} else {
		mutex_lock(&dev->sess->lock);
		/* a reconnect meanwhile may have held it */
		if (dev->state == RNBD_CLT_DEV_HELD)
			rnbd_clt_dev_change_state(dev, RNBD_CLT_DEV_MAPPED);
		dev->disk = NULL;
		mutex_unlock(&dev->sess->lock);
		put_disk(disk);
	}
	return err;
}

/* The device is UNMAPPING: no work uses its disk from now on. */
static void rnbd_clt_disk_del(struct rnbd_clt_dev *dev)
{
	struct gendisk *disk = dev->disk;

	del_gendisk(disk);
	mutex_lock(&dev->sess->lock);
	dev->disk = NULL;
	mutex_unlock(&dev->sess->lock);
	put_disk(disk);
}

static struct rnbd_clt_dev *rnbd_clt_dev_alloc(struct rnbd_clt_sess *sess,
					       const struct rnbd_clt_map_opts *opts)
{
	struct rnbd_clt_dev *dev;

	dev = TRS_FI(kzalloc(sizeof(*dev), GFP_KERNEL), NULL);
	if (!dev)
		return ERR_PTR(-ENOMEM);
	kref_init(&dev->ref);
	dev->idx = TRS_FI(ida_alloc_max(&rnbd_clt_index_ida,
					RNBD_CLT_MAX_DEVS - 1, GFP_KERNEL),
			  -ENOMEM);
	if (dev->idx < 0) {
		int err = dev->idx;

		rnbd_clt_dev_put(dev);
		return ERR_PTR(err);
	}
	dev->sess = sess;
	dev->state = RNBD_CLT_DEV_MAPPING;
	dev->access_mode = opts->access_mode;
	strscpy(dev->path, opts->path, sizeof(dev->path));
	return dev;
}

/*
 * Drops the map's reference to @dev and @dev's session reference: a disk
 * still open keeps @dev (not its session) until its last close.
 */
static void rnbd_clt_dev_free(struct rnbd_clt_dev *dev)
{
	struct rnbd_clt_sess *sess = dev->sess;

	rnbd_clt_dev_put(dev);
	rnbd_clt_sess_put(sess);
}

static void rnbd_clt_dev_release(struct kref *ref)
{
	struct rnbd_clt_dev *dev = container_of(ref, struct rnbd_clt_dev, ref);

	if (dev->idx >= 0)
		ida_free(&rnbd_clt_index_ida, dev->idx);
	kfree(dev);
}

/**
 * rnbd_clt_dev_get() - take a reference on a device
 * @dev: a device on its session's list, under sess->lock, or one the
 *	caller holds a reference to
 */
void rnbd_clt_dev_get(struct rnbd_clt_dev *dev)
{
	kref_get(&dev->ref);
}

/**
 * rnbd_clt_dev_put() - drop a reference; the last frees the device
 * @dev: device from rnbd_clt_dev_get() or from map
 */
void rnbd_clt_dev_put(struct rnbd_clt_dev *dev)
{
	kref_put(&dev->ref, rnbd_clt_dev_release);
}

/* Put @dev on its session's list, unless the path is mapped there already. */
static int rnbd_clt_dev_link(struct rnbd_clt_dev *dev)
{
	struct rnbd_clt_sess *sess = dev->sess;
	struct rnbd_clt_dev *pos;
	int err = 0;

	mutex_lock(&sess->lock);
	if (sess->state != RNBD_CLT_SESS_CONNECTED) {
		pr_err("map_device: session %s is not connected; try again once it reconnected\n",
		       sess->name);
		err = -ENOTCONN;
		goto unlock;
	}
	list_for_each_entry(pos, &sess->devs, node) {
		if (!strcmp(pos->path, dev->path)) {
			pr_err("map_device: %s is already mapped in session %s\n",
			       dev->path, sess->name);
			err = -EEXIST;
			goto unlock;
		}
	}
	list_add_tail(&dev->node, &sess->devs);
	dev->epoch = sess->epoch;
unlock:
	mutex_unlock(&sess->lock);
	return err;
}

static void rnbd_clt_dev_unlink(struct rnbd_clt_dev *dev)
{
	mutex_lock(&dev->sess->lock);
	list_del(&dev->node);
	mutex_unlock(&dev->sess->lock);
}

/* map_device() is done with @dev: from now on unmap may free it. */
static void rnbd_clt_dev_set_ready(struct rnbd_clt_dev *dev)
{
	mutex_lock(&dev->sess->lock);
	dev->ready = true;
	mutex_unlock(&dev->sess->lock);
}

/* MAPPING -> MAPPED, unless the session disconnected meanwhile. */
static int rnbd_clt_dev_set_mapped(struct rnbd_clt_dev *dev)
{
	int err = 0;

	mutex_lock(&dev->sess->lock);
	if (dev->state != RNBD_CLT_DEV_MAPPING ||
	    dev->epoch != dev->sess->epoch ||
	    dev->sess->state != RNBD_CLT_SESS_CONNECTED ||
	    !rnbd_clt_dev_change_state(dev, RNBD_CLT_DEV_MAPPED))
		err = -ENOTCONN;
	mutex_unlock(&dev->sess->lock);
	return err;
}

/*
 * The session lost its connection between the OPEN and add_disk(), so the
 * recovery did not hold the new disk: hold it now, and have it opened
 * again if the session is back already.
 */
static void rnbd_clt_dev_catch_up(struct rnbd_clt_dev *dev)
{
	struct rnbd_clt_sess *sess = dev->sess;

	mutex_lock(&sess->lock);
	if (dev->state == RNBD_CLT_DEV_MAPPED &&
	    (dev->epoch != sess->epoch ||
	     sess->state == RNBD_CLT_SESS_RECONNECTING)) {
		rnbd_clt_dev_change_state(dev, RNBD_CLT_DEV_HELD);
		if (sess->state == RNBD_CLT_SESS_CONNECTED)
			queue_work(system_long_wq, &sess->reopen_work);
	}
	mutex_unlock(&sess->lock);
}

/* Close @dev on the server, unless the server forgot it with its session. */
static void rnbd_clt_dev_close_remote(struct rnbd_clt_dev *dev)
{
	bool same;

	mutex_lock(&dev->sess->lock);
	same = dev->epoch == dev->sess->epoch &&
	       dev->state != RNBD_CLT_DEV_HELD;
	mutex_unlock(&dev->sess->lock);
	if (same)
		rnbd_clt_send_close(dev, dev->dev_id);
}

/*
 * Claim the teardown of @dev.  Under disk->open_mutex so that no open can
 * slip between the openers check and the state change.
 */
static int rnbd_clt_dev_set_unmapping(struct rnbd_clt_dev *dev, bool force,
				      bool *was_mapped)
{
	struct rnbd_clt_sess *sess = dev->sess;
	int err = 0;

	mutex_lock(&dev->disk->open_mutex);
	mutex_lock(&sess->lock);
	if (dev->state == RNBD_CLT_DEV_UNMAPPING) {
		err = -EALREADY;
	} else if (!dev->ready) {
		/* its rnbd/ files appear with the disk, before map returns */
		pr_err("%s: unmap_device: the device is still being mapped; try again\n",
		       dev->disk->disk_name);
		err = -EBUSY;
	} else if (!force && disk_openers(dev->disk)) {
		pr_err("%s: unmap_device: device is open (%u openers), use \"force\"\n",
		       dev->disk->disk_name, disk_openers(dev->disk));
		err = -EBUSY;
	} else {
		/* a held device is not open on the server's current session */
		*was_mapped = dev->state == RNBD_CLT_DEV_MAPPED &&
			      dev->epoch == sess->epoch;
		/* its held requests dispatch, and fail */
		rnbd_clt_dev_change_state(dev, RNBD_CLT_DEV_UNMAPPING);
	}
	mutex_unlock(&sess->lock);
	mutex_unlock(&dev->disk->open_mutex);
	return err;
}

static int __rnbd_clt_map_device(const struct rnbd_clt_map_opts *opts)
{
	struct rnbd_msg_open_rsp rsp;
	struct rnbd_clt_sess *sess;
	struct rnbd_clt_dev *dev;
	int err;

	sess = rnbd_clt_sess_get(opts);
	if (IS_ERR(sess))
		return PTR_ERR(sess);
	dev = rnbd_clt_dev_alloc(sess, opts);
	if (IS_ERR(dev)) {
		rnbd_clt_sess_put(sess);
		return PTR_ERR(dev);
	}
	err = rnbd_clt_dev_link(dev);
	if (err)
		goto free_dev;

	err = rnbd_clt_send_open(dev, &rsp);
	if (err) {
		pr_err("%s@%s: opening the device on the server failed: %d\n",
		       dev->path, sess->name, err);
		goto unlink_dev;
	}
	dev->dev_id = le32_to_cpu(rsp.dev_id);
	err = rnbd_clt_check_open_rsp(dev, &rsp) ?:
	      rnbd_clt_dev_set_mapped(dev) ?:
	      rnbd_clt_disk_add(dev, &rsp);
	if (err)
		goto close_remote;
	rnbd_clt_dev_catch_up(dev);
	rnbd_clt_dev_sysfs_add(dev);
	trace_rnbd_clt_map(dev->disk->disk_name, sess->name, dev->path,
			   dev->access_mode, le64_to_cpu(rsp.nsectors), 0);
	pr_info("%s: mapped %s@%s (%s, %llu sectors)\n", dev->disk->disk_name,
		dev->path, sess->name,
		rnbd_access_mode_str(dev->access_mode),
		le64_to_cpu(rsp.nsectors));
	rnbd_clt_dev_set_ready(dev);
	return 0;

close_remote:
	rnbd_clt_dev_close_remote(dev);
unlink_dev:
	rnbd_clt_dev_unlink(dev);
free_dev:
	rnbd_clt_dev_free(dev);
	return err;
}

/**
 * rnbd_clt_map_device() - map a remote device as /dev/rnbdN
 * @opts: parsed map request
 *
 * On failure nothing is left behind: no session (unless other devices use
 * it), no disk, no sysfs entry, and the device is closed on the server.
 *
 * Context: process context, sleeps.
 * Return: 0, -EEXIST if the path is mapped in that session already, the
 * server's or the transport's errno, or another negative errno.
 */
int rnbd_clt_map_device(const struct rnbd_clt_map_opts *opts)
{
	int err = __rnbd_clt_map_device(opts);

	/* a map that worked is traced with its disk */
	if (err)
		trace_rnbd_clt_map("", opts->sessname, opts->path,
				   opts->access_mode, 0, err);
	return err;
}

/*
 * Force unmap: requests the server has not answered within
 * RNBD_CLT_FORCE_GRACE (its disk hangs, or it died and the heartbeats
 * have not told yet) are taken back by reconnecting the session.  They
 * then fail (the device is unmapping); the other devices' requests are
 * held for the reconnect and sent again, not failed.
 */
static void rnbd_clt_take_back(struct rnbd_clt_dev *dev)
{
	struct request_queue *q = dev->disk->queue;

	blk_freeze_queue_start(q);
	if (!blk_mq_freeze_queue_wait_timeout(q, RNBD_CLT_FORCE_GRACE) &&
	    trs_clt_connected(dev->sess->trs)) {
		pr_warn("%s: unmap_device force: requests unanswered after %u s; reconnecting session %s to take them back\n",
			dev->disk->disk_name, RNBD_CLT_FORCE_GRACE / HZ,
			dev->sess->name);
		trs_clt_recover(dev->sess->trs, -ETIMEDOUT);
	}
	blk_mq_unfreeze_queue_nomemrestore(q);
}

/**
 * rnbd_clt_unmap_device() - remove /dev/rnbdN and close it on the server
 * @dev: mapped device; freed on success
 * @force: unmap even if the device is open; its IO fails from now on
 * @self: the sysfs attribute whose store calls this, or NULL
 *
 * Requests in flight complete when the transport answers or drains them;
 * new ones fail.  With @force, requests still in flight after
 * RNBD_CLT_FORCE_GRACE are taken back by a reconnect of the session.
 * With @self, the attribute removes itself first so that
 * removing its directory does not wait for the running store.
 *
 * Context: process context, sleeps.
 * Return: 0, -EBUSY if the device is open and !@force, -EALREADY if it is
 * being unmapped already.
 */
int rnbd_clt_unmap_device(struct rnbd_clt_dev *dev, bool force,
			  const struct attribute *self)
{
	char name[DISK_NAME_LEN];
	bool was_mapped;
	int err;

	err = rnbd_clt_dev_set_unmapping(dev, force, &was_mapped);
	if (err)
		return err;
	strscpy(name, dev->disk->disk_name, sizeof(name));
	if (force) {
		blk_mark_disk_dead(dev->disk);
		rnbd_clt_take_back(dev);
	}
	rnbd_clt_dev_sysfs_remove(dev, self);
	/* Waits for the requests in flight: CLOSE goes after the last IO. */
	rnbd_clt_disk_del(dev);
	/* unless a reconnect (a force unmap's, say) made the server forget it */
	if (was_mapped)
		rnbd_clt_dev_close_remote(dev);
	trace_rnbd_clt_unmap(name, dev->sess->name, dev->path,
			     dev->access_mode, dev->srv_sectors, force);
	rnbd_clt_dev_unlink(dev);
	rnbd_clt_dev_free(dev);
	pr_info("%s: unmapped%s\n", name, force ? " (force)" : "");
	return 0;
}

/**
 * rnbd_clt_dev_init() - register the rnbd block major
 *
 * Return: 0 or a negative errno.
 */
int rnbd_clt_dev_init(void)
{
	rnbd_clt_major = register_blkdev(0, "rnbd");
	if (rnbd_clt_major < 0) {
		pr_err("registering the block major failed: %d\n",
		       rnbd_clt_major);
		return rnbd_clt_major;
	}
	return 0;
}

/**
 * rnbd_clt_dev_exit() - undo rnbd_clt_dev_init(); every device is unmapped
 */
void rnbd_clt_dev_exit(void)
{
	unregister_blkdev(rnbd_clt_major, "rnbd");
	ida_destroy(&rnbd_clt_index_ida);
}
