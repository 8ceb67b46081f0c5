// SPDX-License-Identifier: GPL-2.0-only
/*
 * rnbd server: device sizes.
 *
 * A block device's size can change under its opens (losetup -c, a virtio
 * or NVMe disk resized, an LV extended): the kernel sends a uevent, no
 * notification a holder could take; so can an exported file's (truncate).
 * So each session looks at the sizes of its open devices every
 * RNBD_SRV_SIZE_POLL_MS and, when one changed, has
 * the transport notice its client (trs_srv_sess_notify()), which asks with
 * RNBD_MSG_INFO and resizes its disk.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>

#include "rnbd-srv.h"

#define RNBD_SRV_SIZE_POLL_MS	1000

/**
 * rnbd_srv_size_arm() - look at the device sizes again in a while
 * @sess: session, open
 */
void rnbd_srv_size_arm(struct rnbd_srv_sess *sess)
{
	queue_delayed_work(system_wq, &sess->size_work,
			   msecs_to_jiffies(RNBD_SRV_SIZE_POLL_MS));
}

/**
 * rnbd_srv_size_work() - notice the client of devices that changed size
 * @work: the session's size_work
 */
void rnbd_srv_size_work(struct work_struct *work)
{
	struct rnbd_srv_sess *sess = container_of(to_delayed_work(work),
						  struct rnbd_srv_sess,
						  size_work);
	struct rnbd_srv_dev *dev;
	unsigned long id;
	bool changed = false;
	sector_t now;

	rcu_read_lock();
	xa_for_each(&sess->devs, id, dev) {
		/* open: its bdev or file stays until the reference is dropped */
		if (!refcount_inc_not_zero(&dev->ref))
			continue;
		now = rnbd_srv_dev_nr_sectors(dev);
		if (now != READ_ONCE(dev->nsectors)) {
			pr_info("session %s: %s (device %u) changed size: %llu sectors (was %llu)\n",
				trs_srv_sess_name(sess->trs), dev->path,
				dev->id, (u64)now,
				(u64)READ_ONCE(dev->nsectors));
			WRITE_ONCE(dev->nsectors, now);
			changed = true;
		}
		rnbd_srv_dev_put(dev);
	}
	rcu_read_unlock();
	if (changed && !trs_srv_sess_notify(sess->trs))
		pr_info_ratelimited("session %s: its client cannot be told (no heartbeat with notices)\n",
				    trs_srv_sess_name(sess->trs));
	rnbd_srv_size_arm(sess);
}

/**
 * rnbd_srv_info() - answer RNBD_MSG_INFO: what a device is like now
 * @sess: session
 * @req: the request; answered on success
 *
 * Context: process context (the connection's completion work); does not
 * sleep.
 * Return: 0, -EPROTO for a malformed message, -ENODEV for a device the
 * session does not have open.
 */
int rnbd_srv_info(struct rnbd_srv_sess *sess, struct trs_srv_req *req)
{
	const struct rnbd_msg_info *msg = req->usr_hdr;
	struct rnbd_msg_open_rsp rsp;
	struct rnbd_srv_dev *dev;

	if (req->usr_len != sizeof(*msg) || req->dir != DMA_FROM_DEVICE ||
	    req->data_len < sizeof(rsp))
		return -EPROTO;
	dev = rnbd_srv_dev_get(sess, le32_to_cpu(msg->dev_id));
	if (!dev)
		return -ENODEV;
	rnbd_srv_fill_open_rsp(dev, &rsp);
	/* what the client is told is what the next poll compares with */
	WRITE_ONCE(dev->nsectors, le64_to_cpu(rsp.nsectors));
	rnbd_srv_dev_put(dev);
	memcpy(req->data, &rsp, sizeof(rsp));
	trs_srv_resp(req, 0, sizeof(rsp));
	return 0;
}
