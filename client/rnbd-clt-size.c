// SPDX-License-Identifier: GPL-2.0-only
/*
 * rnbd client: device sizes.
 *
 * The disk shows the device's size on the server, or less if the
 * administrator shrank it (rnbd/resize).  When the server's device
 * changes size, its transport notices the client (a heartbeat with
 * TRS_HB_NOTICE); the size work then asks the server about each mapped
 * device (RNBD_MSG_INFO) and the disk follows: it grows with the server's
 * device unless it was shrunk by hand, and never shows more than it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>

#include "rnbd-clt.h"

/**
 * rnbd_clt_dev_resize() - set the size the disk shows
 * @dev: the device
 * @sectors: new size in 512-byte sectors: whole logical blocks, at most
 *	the device's size on the server
 *
 * Shrinking hides the end of the device from this host (the server's
 * device keeps its size); growing goes back up to the server's size.
 *
 * Context: process context, sleeps; takes sess->lock.
 * Return: 0, -EINVAL for a size out of range, -ENODEV if the device is not
 * open on the server (closed, or being mapped or unmapped).
 */
int rnbd_clt_dev_resize(struct rnbd_clt_dev *dev, u64 sectors)
{
	struct rnbd_clt_sess *sess = dev->sess;
	u32 lbs;
	int err = 0;

	mutex_lock(&sess->lock);
	if (dev->state != RNBD_CLT_DEV_MAPPED &&
	    dev->state != RNBD_CLT_DEV_HELD) {
		err = -ENODEV;
		goto unlock;
	}
	lbs = queue_logical_block_size(dev->disk->queue) >> SECTOR_SHIFT;
	if (!sectors || sectors > dev->srv_sectors || sectors % lbs) {
		pr_err("%s: resize: %llu sectors: want 1..%llu, a multiple of %u\n",
		       dev->disk->disk_name, sectors, dev->srv_sectors, lbs);
		err = -EINVAL;
		goto unlock;
	}
	if (set_capacity_and_notify(dev->disk, sectors))
		pr_info("%s: resized to %llu sectors\n", dev->disk->disk_name,
			sectors);
unlock:
	mutex_unlock(&sess->lock);
	return err;
}

/**
 * __rnbd_clt_dev_srv_resized() - the device has a new size on the server
 * @dev: a device with a disk
 * @sectors: its size on the server now, from an open or info response
 *	that passed rnbd_clt_check_open_rsp()
 *
 * The disk follows, unless the administrator made it smaller than the
 * server's device was and it still fits.
 *
 * Context: sess->lock held.
 */
void __rnbd_clt_dev_srv_resized(struct rnbd_clt_dev *dev, u64 sectors)
{
	u64 old = dev->srv_sectors, cur, want;

	lockdep_assert_held(&dev->sess->lock);
	if (sectors == old || !dev->disk ||
	    dev->state == RNBD_CLT_DEV_UNMAPPING)
		return;
	dev->srv_sectors = sectors;
	cur = get_capacity(dev->disk);
	want = cur == old || cur > sectors ? sectors : cur;
	pr_info("%s: %s@%s is %llu sectors on the server now (was %llu); the disk shows %llu\n",
		dev->disk->disk_name, dev->path, dev->sess->name, sectors,
		old, want);
	if (want != cur)
		set_capacity_and_notify(dev->disk, want);
}

/*
 * The server answered INFO for @dev (@err: or did not, or badly).  The
 * device may have been unmapped while the work waited, its disk deleted:
 * that is decided under sess->lock, where unmap changes the state.
 */
static void rnbd_clt_dev_info_done(struct rnbd_clt_dev *dev,
				   const struct rnbd_msg_open_rsp *rsp, int err)
{
	struct rnbd_clt_sess *sess = dev->sess;

	mutex_lock(&sess->lock);
	if ((dev->state != RNBD_CLT_DEV_MAPPED &&
	     dev->state != RNBD_CLT_DEV_HELD) || !dev->disk)
		goto unlock;
	if (!err && le16_to_cpu(rsp->logical_block_size) !=
	    queue_logical_block_size(dev->disk->queue))
		err = -EPROTO;
	if (!err)
		__rnbd_clt_dev_srv_resized(dev, le64_to_cpu(rsp->nsectors));
	else
		pr_warn_ratelimited("%s: %s@%s: asking the server about its size failed: %d\n",
				    dev->disk->disk_name, dev->path,
				    sess->name, err);
unlock:
	mutex_unlock(&sess->lock);
}

/* The next device to ask about, referenced, or NULL. */
static struct rnbd_clt_dev *rnbd_clt_next_size_check(struct rnbd_clt_sess *sess,
						     u32 *dev_id)
{
	struct rnbd_clt_dev *dev, *found = NULL;

	mutex_lock(&sess->lock);
	list_for_each_entry(dev, &sess->devs, node) {
		if (!dev->size_check)
			continue;
		dev->size_check = false;
		/* a held device is asked by its re-open */
		if (dev->state != RNBD_CLT_DEV_MAPPED || !dev->disk ||
		    dev->epoch != sess->epoch)
			continue;
		found = dev;
		*dev_id = dev->dev_id;
		rnbd_clt_dev_get(dev);
		break;
	}
	mutex_unlock(&sess->lock);
	return found;
}

/**
 * rnbd_clt_size_work() - ask the server about the size of every device
 * @work: the session's size_work
 *
 * It holds a reference on the device it asks about, not on its disk nor
 * its session: see rnbd_clt_dev_info_done() and rnbd_clt_sess_release().
 */
void rnbd_clt_size_work(struct work_struct *work)
{
	struct rnbd_clt_sess *sess = container_of(work, struct rnbd_clt_sess,
						  size_work);
	struct rnbd_msg_open_rsp rsp;
	struct rnbd_clt_dev *dev;
	u32 dev_id;
	int err;

	mutex_lock(&sess->lock);
	list_for_each_entry(dev, &sess->devs, node)
		dev->size_check = true;
	mutex_unlock(&sess->lock);

	while ((dev = rnbd_clt_next_size_check(sess, &dev_id))) {
		err = rnbd_clt_send_info(dev, dev_id, &rsp) ?:
		      rnbd_clt_check_open_rsp(dev, &rsp);
		if (!err && le32_to_cpu(rsp.dev_id) != dev_id)
			err = -EPROTO;
		rnbd_clt_dev_info_done(dev, &rsp, err);
		rnbd_clt_dev_put(dev);
	}
}
