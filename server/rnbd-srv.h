/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rnbd server: exports block devices to rnbd clients over the rnbd
 * transport (trs).  Passive: a client opens any block device found under
 * dev_search_path; nothing is configured per device.
 */
#ifndef RNBD_SRV_H
#define RNBD_SRV_H

#include <linux/blkdev.h>
#include <linux/kobject.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include <rnbd/fault-inject.h>
#include <rnbd/proto.h>
#include <rnbd/trs.h>

/**
 * struct rnbd_srv_sess - a client session
 * @trs: transport session
 * @devs: dev_id -> struct rnbd_srv_dev; lookups on the IO path under RCU
 * @lock: serialises OPEN and CLOSE of this session's devices
 * @closed: the transport closed the session: no device may be added
 * @ref: one until the transport closes the session, plus one per OPEN or
 *	CLOSE queued on the admin workqueue and per force_close write
 *	running; the last frees the struct
 * @idle_work: closes the session if it has no device open for
 *	idle_session_sec (armed at open and when the last device closes)
 * @size_work: looks for devices that changed size (rnbd-srv-size.c)
 */
struct rnbd_srv_sess {
	struct trs_srv_sess	*trs;
	struct xarray		devs;
	struct mutex		lock;	/* open and close of devs, closed */
	bool			closed;
	refcount_t		ref;
	struct delayed_work	idle_work;
	struct delayed_work	size_work;
};

/**
 * struct rnbd_srv_export - a block device that sessions opened
 * @kobj: /sys/class/rnbd-server/ctl/devices/<name>/; owns the memory
 * @sessions_kobj: its sessions/ directory, NULL if it was not made
 * @sysfs_tried: the directory was made, or failed to be, once
 * @devt: the device; key in rnbd_srv_exports
 * @ref: session devices that hold it: from their OPEN until their
 *	release (after their last bio), opens that failed excluded
 * @nr_writers: how many of these opened it rw or migration
 *
 * Also the FMODE_EXCL holder of the writers' opens: a second writer
 * (migration) shares the claim of the first.  Every field but @kobj's
 * own state is guarded by rnbd_srv_exports_mutex.
 */
struct rnbd_srv_export {
	struct kobject		kobj;
	struct kobject		*sessions_kobj;
	bool			sysfs_tried;
	dev_t			devt;
	unsigned int		ref;
	unsigned int		nr_writers;
};

/**
 * struct rnbd_srv_dev - a block device opened by a session
 * @kobj: sessions/<session>/ in the export's sysfs directory; owns the
 *	memory (its release frees the struct after an RCU grace period)
 * @sess: session that opened it; alive while the device is in its devs
 * @export: the block device's export, held until the release
 * @bdev: the device; opened exclusively (holder: @export) if @mode has
 *	FMODE_WRITE
 * @mode: FMODE_* the device was opened with
 * @access_mode: RNBD_ACCESS_* of the OPEN
 * @path: the path the OPEN named, as sent
 * @id: index in the session's devs, the dev_id of the protocol
 * @nsectors: its size as the client was last told, in 512-byte sectors;
 *	written by the OPEN and INFO answers and the size work (READ_ONCE)
 * @ref: one while open plus one per bio in flight; zero closes it
 * @release_work: closes it when its last bio ended after the close
 * @rcu: frees the struct after IO lookups are done with it
 */
struct rnbd_srv_dev {
	struct kobject		kobj;
	struct rnbd_srv_sess	*sess;
	struct rnbd_srv_export	*export;
	struct block_device	*bdev;
	fmode_t			mode;
	enum rnbd_access_mode	access_mode;
	char			*path;
	u32			id;
	sector_t		nsectors;
	refcount_t		ref;
	struct work_struct	release_work;
	struct rcu_head		rcu;
};

/* rnbd-srv-main.c: module parameters */
extern char *rnbd_srv_search_path;
extern bool rnbd_srv_allow_busy;
extern bool rnbd_srv_allow_rt_prio;
void rnbd_srv_idle_arm(struct rnbd_srv_sess *sess);
void rnbd_srv_sess_get(struct rnbd_srv_sess *sess);
void rnbd_srv_sess_put(struct rnbd_srv_sess *sess);

/* fs/namei.c exports it; the kernel declares it in fs/internal.h only */
int vfs_path_lookup(struct dentry *dentry, struct vfsmount *mnt,
		    const char *name, unsigned int flags, struct path *path);

/* rnbd-srv-dev.c: block devices */
int rnbd_srv_dev_open(struct rnbd_srv_sess *sess,
		      const struct rnbd_msg_open *msg,
		      struct rnbd_msg_open_rsp *rsp);
int rnbd_srv_dev_close(struct rnbd_srv_sess *sess, u32 id);
void rnbd_srv_dev_close_all(struct rnbd_srv_sess *sess);
int rnbd_srv_dev_force_close(struct rnbd_srv_dev *dev);
int rnbd_srv_dev_init(void);
void rnbd_srv_dev_exit(void);
struct rnbd_srv_dev *rnbd_srv_dev_get(struct rnbd_srv_sess *sess, u32 id);
void rnbd_srv_dev_put(struct rnbd_srv_dev *dev);
void rnbd_srv_fill_open_rsp(const struct rnbd_srv_dev *dev,
			    struct rnbd_msg_open_rsp *rsp);

/* rnbd-srv-size.c: device sizes */
void rnbd_srv_size_arm(struct rnbd_srv_sess *sess);
void rnbd_srv_size_work(struct work_struct *work);
int rnbd_srv_info(struct rnbd_srv_sess *sess, struct trs_srv_req *req);

/* rnbd-srv-sysfs.c: /sys/class/rnbd-server/ */
int rnbd_srv_sysfs_init(void);
void rnbd_srv_sysfs_exit(void);
void rnbd_srv_export_kobj_init(struct rnbd_srv_export *exp);
void rnbd_srv_dev_kobj_init(struct rnbd_srv_dev *dev);
void rnbd_srv_sysfs_export_add(struct rnbd_srv_export *exp,
			       struct block_device *bdev);
void rnbd_srv_sysfs_export_del(struct rnbd_srv_export *exp);
void rnbd_srv_sysfs_dev_add(struct rnbd_srv_dev *dev);
void rnbd_srv_sysfs_dev_del(struct rnbd_srv_dev *dev);

/* rnbd-srv-io.c: block IO */
int rnbd_srv_io(struct rnbd_srv_sess *sess, struct trs_srv_req *req);
int rnbd_srv_io_init(void);
void rnbd_srv_io_exit(void);

#endif /* RNBD_SRV_H */
