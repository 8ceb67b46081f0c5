/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rnbd server: exports block devices, and regular files as if they were
 * block devices, to rnbd clients over the rnbd transport (trs).  Passive:
 * a client opens any block device or regular file found under
 * dev_search_path; nothing is configured per device.
 */

/* The locks below: their order and rules in Documentation/locking.rst */
#ifndef RNBD_SRV_H
#define RNBD_SRV_H

#include <linux/blkdev.h>
#include <linux/ioprio.h>
#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include <rnbd-compat.h>
#include <rnbd/fault-inject.h>
#include <rnbd/proto.h>
#include <rnbd/trs.h>

/**
 * struct rnbd_srv_sess - a client session
 * @trs: transport session
 * @devs: dev_id -> struct rnbd_srv_dev, the open devices; lookups on the
 *	IO path under RCU
 * @opening: the devices whose block device or file is being opened
 *	(struct rnbd_srv_dev.open_node), no id yet: an OPEN of the same
 *	device or file fails with -EEXIST meanwhile
 * @lock: guards the stores and erasures of @devs, @opening and @closed.
 *	Held for no open of a block device or file: one may hang for ever
 *	(a partition rescan, a FUSE or NFS open), and the session's close
 *	takes this lock
 * @closed: the transport closed the session: no device may be added; an
 *	open still running closes what it opened when it ends
 * @ref: one until the transport closes the session, plus one per OPEN or
 *	CLOSE queued on the admin workqueue and per force_close write
 *	running; the last frees the struct
 * @idle_work: closes the session if it has no device open for
 *	idle_session_sec (armed at open and when the last device closes)
 * @size_work: looks for devices that changed size (rnbd-srv-size.c)
 * @acl_entry: in the sessions the revocation work looks at
 */
struct rnbd_srv_sess {
	struct trs_srv_sess	*trs;
	struct xarray		devs;
	struct list_head	opening;
	struct mutex		lock;	/* devs, opening, closed: see above */
	bool			closed;
	refcount_t		ref;
	struct delayed_work	idle_work;
	struct delayed_work	size_work;
	struct list_head	acl_entry;
};

/**
 * struct rnbd_srv_export - a block device or a regular file that sessions
 *	opened
 * @kobj: /sys/class/rnbd-server/ctl/devices/<name>/ (a block device) or
 *	ctl/files/<name>/ (a file); owns the memory
 * @sessions_kobj: its sessions/ directory, NULL if it was not made
 * @sysfs_tried: the directory was made, or failed to be, once
 * @devt: the block device; key in rnbd_srv_exports.  0 for a file
 * @inode: the file's inode, key in rnbd_srv_file_exports; NULL for a
 *	block device.  Pinned by the opens of the file (the session devices
 *	that hold the export)
 * @file_path: the file's path, held (path_get()) until the export is freed
 * @file_node: entry in rnbd_srv_file_exports
 * @direct: the file is read and written with O_DIRECT (IOCB_DIRECT)
 * @ref: session devices that hold it: from their OPEN until their
 *	release (after their last IO), opens that failed excluded
 * @nr_writers: how many of these opened it rw or migration
 *
 * For a block device also the exclusive holder of the writers' opens: a
 * second writer (migration) shares the claim of the first.  Every field
 * but @kobj's own state is guarded by rnbd_srv_exports_mutex.
 */
struct rnbd_srv_export {
	struct kobject		kobj;
	struct kobject		*sessions_kobj;
	bool			sysfs_tried;
	dev_t			devt;
	struct inode		*inode;
	struct path		file_path;
	struct list_head	file_node;
	bool			direct;
	unsigned int		ref;
	unsigned int		nr_writers;
};

/**
 * struct rnbd_srv_dev_waitq - bios of a device waiting to be submitted
 *	again, allowed to wait for a tag, in order (rnbd-srv-io.c)
 * @lock: guards @list
 * @list: the bios (struct rnbd_srv_io), oldest first
 * @work: submits them, one per run; queued with a device reference
 * @dev: the device
 */
struct rnbd_srv_dev_waitq {
	spinlock_t		lock;	/* see above */
	struct list_head	list;
	struct work_struct	work;
	struct rnbd_srv_dev	*dev;
};

/**
 * struct rnbd_srv_dev - a block device or a regular file opened by a
 *	session
 * @kobj: sessions/<session>/ in the export's sysfs directory; owns the
 *	memory (its release frees the struct after an RCU grace period)
 * @sess: session that opened it; alive while the device is in its devs
 *	or opening list
 * @export: the block device's or the file's export, held until the release
 * @bdev: the device; opened exclusively (holder: @export) if @mode has
 *	BLK_OPEN_WRITE.  NULL for a file
 * @bdev_handle: what opened @bdev, for rnbd_bdev_close()
 * @file: the regular file (rnbd-srv-file.c); NULL for a block device
 * @lbs: a file's logical block size: 512, or with O_DIRECT the logical
 *	block size of its file system's device
 * @direct: a file is read and written with IOCB_DIRECT: its file system
 *	has O_DIRECT and a direct read of it worked at OPEN
 * @mode: BLK_OPEN_* the device or file was opened with
 * @access_mode: RNBD_ACCESS_* of the OPEN
 * @path: the path the OPEN named, as sent
 * @open_node: entry in its session's opening list while its block device
 *	or file is being opened, under the session's lock
 * @id: index in the session's devs, the dev_id of the protocol
 * @nsectors: its size as the client was last told, in 512-byte sectors;
 *	written by the OPEN and INFO answers and the size work (READ_ONCE)
 * @ref: one while open plus one per bio or file IO in flight; zero
 *	closes it
 * @release_work: closes it when its last IO ended after the close
 * @waitq: per CPU, the bios waiting to be submitted again (rnbd-srv-io.c)
 * @waiting: bios in the @waitq FIFOs or being submitted from them
 * @rcu: frees the struct after IO lookups are done with it
 */
struct rnbd_srv_dev {
	struct kobject		kobj;
	struct rnbd_srv_sess	*sess;
	struct rnbd_srv_export	*export;
	struct block_device	*bdev;
	struct rnbd_bdev_handle	bdev_handle;
	struct file		*file;
	u32			lbs;
	bool			direct;
	blk_mode_t		mode;
	enum rnbd_access_mode	access_mode;
	char			*path;
	struct list_head	open_node;
	u32			id;
	sector_t		nsectors;
	refcount_t		ref;
	struct work_struct	release_work;
	struct rnbd_srv_dev_waitq __percpu *waitq;
	atomic_t		waiting;
	struct rcu_head		rcu;
};

/* rnbd-srv-main.c: module parameters */
extern char *rnbd_srv_search_path;
extern bool rnbd_srv_export_files;
extern bool rnbd_srv_allow_busy;
extern bool rnbd_srv_allow_rt_prio;
void rnbd_srv_idle_arm(struct rnbd_srv_sess *sess);
void rnbd_srv_sess_get(struct rnbd_srv_sess *sess);
void rnbd_srv_sess_put(struct rnbd_srv_sess *sess);

/* fs/namei.c exports it; the kernel declares it in fs/internal.h only */
int vfs_path_lookup(struct dentry *dentry, struct vfsmount *mnt,
		    const char *name, unsigned int flags, struct path *path);

/* rnbd-srv-path.c: the path of an OPEN */
int rnbd_srv_resolve(struct rnbd_srv_sess *sess,
		     const struct rnbd_msg_open *msg, struct path *path,
		     dev_t *devt);
int rnbd_srv_lookup(const char *rel, struct path *path);

/* rnbd-srv-acl.c: host keys and exports */
extern const struct attribute_group *rnbd_srv_ctl_groups[];
int rnbd_srv_host_key(const char *name, const u8 *id, u8 *key);
int rnbd_srv_acl_check(struct rnbd_srv_sess *sess, dev_t devt,
		       const struct path *file, bool rw, unsigned long *gen);
void rnbd_srv_acl_opened(unsigned long gen);
bool rnbd_srv_acl_listed(void);
void rnbd_srv_acl_sess_add(struct rnbd_srv_sess *sess);
void rnbd_srv_acl_sess_del(struct rnbd_srv_sess *sess);
void rnbd_srv_acl_exit(void);

/* rnbd-srv-dev.c: block devices */
int rnbd_srv_dev_open(struct rnbd_srv_sess *sess,
		      const struct rnbd_msg_open *msg,
		      struct rnbd_msg_open_rsp *rsp);
int rnbd_srv_dev_close(struct rnbd_srv_sess *sess, u32 id);
void rnbd_srv_dev_close_all(struct rnbd_srv_sess *sess);
int rnbd_srv_dev_force_close(struct rnbd_srv_dev *dev);
void rnbd_srv_dev_revoke(struct rnbd_srv_sess *sess, struct rnbd_srv_dev *dev);
int rnbd_srv_dev_init(void);
void rnbd_srv_dev_exit(void);
struct rnbd_srv_dev *rnbd_srv_dev_get(struct rnbd_srv_sess *sess, u32 id);
void rnbd_srv_dev_put(struct rnbd_srv_dev *dev);
void rnbd_srv_fill_open_rsp(const struct rnbd_srv_dev *dev,
			    struct rnbd_msg_open_rsp *rsp);
sector_t rnbd_srv_dev_nr_sectors(const struct rnbd_srv_dev *dev);

/* rnbd-srv-file.c: regular files */
bool rnbd_srv_file_pseudo(const struct super_block *sb);
int rnbd_srv_file_open(struct rnbd_srv_dev *dev, const struct path *path);
int rnbd_srv_file_check(struct rnbd_srv_sess *sess,
			const struct rnbd_srv_dev *dev);
void rnbd_srv_file_close(struct rnbd_srv_dev *dev);
sector_t rnbd_srv_file_nr_sectors(const struct rnbd_srv_dev *dev);
void rnbd_srv_file_fill_open_rsp(const struct rnbd_srv_dev *dev,
				 struct rnbd_msg_open_rsp *rsp);
int rnbd_srv_file_io(struct rnbd_srv_dev *dev, struct trs_srv_req *req);
int rnbd_srv_file_init(void);
void rnbd_srv_file_exit(void);

/* rnbd-srv-size.c: device sizes */
void rnbd_srv_size_arm(struct rnbd_srv_sess *sess);
void rnbd_srv_size_work(struct work_struct *work);
int rnbd_srv_info(struct rnbd_srv_sess *sess, struct trs_srv_req *req);

/* rnbd-srv-sysfs.c: /sys/class/rnbd-server/ */
int rnbd_srv_sysfs_init(void);
void rnbd_srv_sysfs_exit(void);
void rnbd_srv_export_kobj_init(struct rnbd_srv_export *exp, bool file);
void rnbd_srv_dev_kobj_init(struct rnbd_srv_dev *dev);
void rnbd_srv_sysfs_export_add(struct rnbd_srv_export *exp,
			       const struct rnbd_srv_dev *dev);
void rnbd_srv_sysfs_export_del(struct rnbd_srv_export *exp);
void rnbd_srv_sysfs_dev_add(struct rnbd_srv_dev *dev);
void rnbd_srv_sysfs_dev_del(struct rnbd_srv_dev *dev);

/* rnbd-srv-io.c: block IO, and the checks file IO shares */
int rnbd_srv_io(struct rnbd_srv_sess *sess, struct trs_srv_req *req);
int rnbd_srv_dev_waitq_init(struct rnbd_srv_dev *dev);
void rnbd_srv_dev_waitq_work(struct work_struct *work);
u16 rnbd_srv_io_prio(const struct trs_srv_req *req,
		     const struct rnbd_msg_io *msg);

/* A write, discard or write-zeroes: refused if the device is read-only. */
static inline bool rnbd_srv_io_writes(const struct rnbd_msg_io *msg)
{
	return msg->op != RNBD_OP_READ && msg->op != RNBD_OP_FLUSH;
}

/**
 * rnbd_srv_io_flags() - add the request flags of @msg to @opf
 * @msg: IO message whose op is checked already
 * @opf: REQ_FUA, REQ_PREFLUSH, REQ_NOUNMAP, REQ_SYNC added to it
 *
 * Return: 0, -EOPNOTSUPP for an unknown flag, -EINVAL for a flag its op
 * does not take.
 */
static __always_inline int rnbd_srv_io_flags(const struct rnbd_msg_io *msg,
					     blk_opf_t *opf)
{
	if (msg->flags & ~RNBD_F_ALL)
		return -EOPNOTSUPP;
	if ((msg->flags & RNBD_F_FUA) && msg->op != RNBD_OP_WRITE)
		return -EINVAL;
	if ((msg->flags & RNBD_F_PREFLUSH) && msg->op != RNBD_OP_WRITE &&
	    msg->op != RNBD_OP_FLUSH)
		return -EINVAL;
	if ((msg->flags & RNBD_F_NOUNMAP) && msg->op != RNBD_OP_WRITE_ZEROES)
		return -EINVAL;

	if (msg->flags & RNBD_F_FUA)
		*opf |= REQ_FUA;
	if (msg->flags & RNBD_F_PREFLUSH)
		*opf |= REQ_PREFLUSH;
	if (msg->flags & RNBD_F_NOUNMAP)
		*opf |= REQ_NOUNMAP;
	if (msg->flags & RNBD_F_SYNC)
		*opf |= REQ_SYNC;
	return 0;
}

/**
 * rnbd_srv_io_check() - validate an IO message against its request and
 *	the device's geometry
 * @req: the request
 * @msg: its IO message
 * @lbs: the device's logical block size, bytes
 * @cap: the device's size, 512-byte sectors
 * @opf: set to the bio's op (its flags: rnbd_srv_io_flags())
 *
 * Return: 0, -EOPNOTSUPP for an unknown op, -EPROTO for a transport
 * direction or data length the op does not have, -EINVAL for a bad
 * priority, length or range.
 */
static __always_inline int
rnbd_srv_io_check(const struct trs_srv_req *req, const struct rnbd_msg_io *msg,
		  u32 lbs, u64 cap, blk_opf_t *opf)
{
	u32 len = le32_to_cpu(msg->len);
	u64 sector = le64_to_cpu(msg->sector);
	enum dma_data_direction dir = DMA_NONE;

	switch (msg->op) {
	case RNBD_OP_READ:
		*opf = REQ_OP_READ;
		dir = DMA_FROM_DEVICE;
		break;
	case RNBD_OP_WRITE:
		*opf = REQ_OP_WRITE;
		dir = DMA_TO_DEVICE;
		break;
	case RNBD_OP_FLUSH:
		/* REQ_OP_FLUSH is for requests only, never for submit_bio */
		*opf = REQ_OP_WRITE | REQ_PREFLUSH;
		break;
	case RNBD_OP_DISCARD:
		*opf = REQ_OP_DISCARD;
		break;
	case RNBD_OP_WRITE_ZEROES:
		*opf = REQ_OP_WRITE_ZEROES;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (req->dir != dir || (dir == DMA_NONE ? req->data_len : len != req->data_len))
		return -EPROTO;
	/* as ioprio_set() would: a known class, no level without one */
	if (IOPRIO_PRIO_CLASS(le16_to_cpu(msg->prio)) > IOPRIO_CLASS_IDLE ||
	    (IOPRIO_PRIO_CLASS(le16_to_cpu(msg->prio)) == IOPRIO_CLASS_NONE &&
	     IOPRIO_PRIO_DATA(le16_to_cpu(msg->prio))))
		return -EINVAL;
	if (msg->op == RNBD_OP_FLUSH) {
		if (len)
			return -EINVAL;
	} else if (!len || len % lbs || sector & ((lbs >> SECTOR_SHIFT) - 1) ||
		   sector > cap || len >> SECTOR_SHIFT > cap - sector) {
		return -EINVAL;
	}
	return 0;
}

int rnbd_srv_io_init(void);
void rnbd_srv_io_exit(void);

#endif /* RNBD_SRV_H */
