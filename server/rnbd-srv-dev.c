// SPDX-License-Identifier: GPL-2.0-only
/*
 * rnbd server: opening and closing block devices, and regular files
 * (rnbd-srv-file.c), for a session.
 *
 * The path of an OPEN is resolved by rnbd-srv-path.c.  Read-only
 * opens use BLK_OPEN_READ; read-write and migration opens add
 * BLK_OPEN_WRITE | BLK_OPEN_EXCL with the device's struct rnbd_srv_export
 * as the holder, so no
 * other kernel user (mount, md...) writes the device while a session
 * does.  Among sessions, as upstream rnbd: ro opens are always allowed, rw
 * only when no session writes the device, migration when fewer than two
 * do (a migration open shares the exclusive claim of the first writer);
 * a refused open fails with -EBUSY and a log line.  A writer counts until
 * its last bio ended, after its CLOSE.
 *
 * A regular file is exported, if file_exports is on, like a block device,
 * with the same confinement and the same rules among sessions: its export
 * is keyed on its inode (rnbd_srv_file_exports), so one writer at a time
 * whatever the path or hard link that names it.  Anything else (a directory, fifo,
 * socket, character device), and a regular file of a pseudo file system
 * (proc, sysfs, debugfs...: kernel memory, device registers, files with no
 * read_iter), is refused with -ENOTBLK and a log line.
 *
 * A read-write open of a read-only device (blockdev --setro) fails with
 * -EROFS: the block layer would only warn about the writes.  A device that
 * another kernel user holds exclusively (a mounted file system, swap, a dm
 * or md member, or a disk with such a partition) is busy: no open, not
 * even read-only, unless allow_busy_devices.  An rnbd session's read-write
 * open is not such a user: read-only opens of other sessions stay
 * allowed.  Checked at OPEN only: a file system mounted afterwards is not
 * refused by the block layer, nor by us.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "rnbd-srv.h"
#include "rnbd-srv-trace.h"

/*
 * Runs the close of a device whose last bio ended after its CLOSE; module
 * exit drains it, so no such work runs in our text after the unload.
 */
static struct workqueue_struct *rnbd_srv_release_wq;

/*
 * dev_t -> the struct rnbd_srv_export of every device a session opened or
 * is opening, which is the exclusive holder of the writers' opens: tells
 * an rnbd holder from another user's.  Stored before the claim and erased
 * after the last open of the device is released, so a bd_holder equal to
 * the entry is ours.  Loads take the xarray's own lock.
 */
static DEFINE_XARRAY(rnbd_srv_exports);

/* The exports of regular files, keyed on their inode; few, searched at OPEN. */
static LIST_HEAD(rnbd_srv_file_exports);

/*
 * Guards rnbd_srv_exports' stores and erasures, rnbd_srv_file_exports,
 * the counters of every
 * export, and the adding and removal of the sysfs directories of exports
 * and of their session devices.  Taken after a sess->lock, never before.
 * Held for no open or close of a block device or file: one that hangs
 * holds up no other.
 */
static DEFINE_MUTEX(rnbd_srv_exports_mutex);

static void rnbd_srv_dev_release_work(struct work_struct *work);

/* @dev is the block device @devt, or the file of @inode if @devt is 0. */
static bool rnbd_srv_dev_is(const struct rnbd_srv_dev *dev, dev_t devt,
			    const struct inode *inode)
{
	/* an export's key never changes */
	return devt ? dev->export->devt == devt : dev->export->inode == inode;
}

/*
 * @sess has the block device @devt, or the file of @inode, open already,
 * or is opening it.  Called with sess->lock held.
 */
static bool rnbd_srv_dev_is_open(struct rnbd_srv_sess *sess, dev_t devt,
				 const struct inode *inode)
{
	struct rnbd_srv_dev *dev;
	unsigned long id;

	xa_for_each(&sess->devs, id, dev) {
		if (rnbd_srv_dev_is(dev, devt, inode))
			return true;
	}
	list_for_each_entry(dev, &sess->opening, open_node) {
		if (rnbd_srv_dev_is(dev, devt, inode))
			return true;
	}
	return false;
}

/* @bdev has an exclusive holder other than an rnbd read-write open. */
static bool rnbd_srv_held_elsewhere(struct block_device *bdev)
{
	void *holder = READ_ONCE(bdev->bd_holder);

	return holder && holder != xa_load(&rnbd_srv_exports, bdev->bd_dev);
}

/*
 * @bdev is in use by another kernel user: it is held, or it is a whole disk
 * one of whose partitions is held, or a partition of a disk held as a whole.
 * The block layer marks a disk held while a partition is (bd_holder is
 * then a marker, not a holder), so the disk's own holder counts only when
 * no partition has one.  A held sibling partition leaves a partition free.
 */
static bool rnbd_srv_bdev_busy(struct block_device *bdev)
{
	struct block_device *whole = bdev_whole(bdev), *part;
	bool part_held = false, busy = false;
	unsigned long idx;

	/* partitions are freed after an RCU grace period */
	rcu_read_lock();
	xa_for_each_start(&bdev->bd_disk->part_tbl, idx, part, 1) {
		if (!READ_ONCE(part->bd_holder))
			continue;
		part_held = true;
		if ((bdev == whole || bdev == part) &&
		    rnbd_srv_held_elsewhere(part)) {
			busy = true;
			break;
		}
	}
	rcu_read_unlock();
	return busy || (!part_held && rnbd_srv_held_elsewhere(whole));
}

/*
 * Refuse an open the device's state does not allow: read-write of a
 * read-only device, or any open of a busy device unless allow_busy_devices.
 */
static int rnbd_srv_dev_check(struct rnbd_srv_sess *sess,
			      const struct rnbd_srv_dev *dev)
{
	if ((dev->mode & BLK_OPEN_WRITE) && bdev_read_only(dev->bdev)) {
		pr_info_ratelimited("session %s: %pg is read-only: read-write open refused, map it ro\n",
				    trs_srv_sess_name(sess->trs), dev->bdev);
		return -EROFS;
	}
	if (!READ_ONCE(rnbd_srv_allow_busy) && rnbd_srv_bdev_busy(dev->bdev)) {
		pr_info_ratelimited("session %s: %pg is in use (mounted, swap, dm or md member...): refused; allow_busy_devices=1 exports it anyway\n",
				    trs_srv_sess_name(sess->trs), dev->bdev);
		return -EBUSY;
	}
	return 0;
}

/* The export of the file at @path; rnbd_srv_exports_mutex held. */
static struct rnbd_srv_export *rnbd_srv_file_export(const struct path *path)
{
	struct rnbd_srv_export *exp;

	list_for_each_entry(exp, &rnbd_srv_file_exports, file_node) {
		if (exp->inode == d_inode(path->dentry))
			return exp;
	}
	return NULL;
}

/*
 * Make the export of the block device @devt, or of the file at @path if
 * @devt is 0; rnbd_srv_exports_mutex held.
 */
static struct rnbd_srv_export *rnbd_srv_export_new(dev_t devt,
						   const struct path *path)
{
	struct rnbd_srv_export *exp;
	int err;

	exp = TRS_FI(kzalloc(sizeof(*exp), GFP_KERNEL), NULL);
	if (!exp)
		return ERR_PTR(-ENOMEM);
	rnbd_srv_export_kobj_init(exp, !devt);
	INIT_LIST_HEAD(&exp->file_node);
	if (!devt) {
		exp->inode = d_inode(path->dentry);
		exp->file_path = *path;
		path_get(&exp->file_path);
		list_add(&exp->file_node, &rnbd_srv_file_exports);
		return exp;
	}
	exp->devt = devt;
	err = TRS_FI(xa_insert(&rnbd_srv_exports, devt, exp, GFP_KERNEL),
		     -ENOMEM);
	if (err) {
		kobject_put(&exp->kobj);
		return ERR_PTR(err);
	}
	return exp;
}

/*
 * Find or make the export of @devt (or, if 0, of the file at @path) for
 * @dev, and count @dev as a writer if its access mode writes: -EBUSY,
 * with a log line, if the access mode does not allow another writer.
 * Called with @dev's session's lock held.
 */
static int rnbd_srv_export_get(struct rnbd_srv_dev *dev, dev_t devt,
			       const struct path *path)
{
	struct rnbd_srv_export *exp;
	unsigned int max_writers = 0;
	char what[32];
	int err = 0;

	if (dev->access_mode == RNBD_ACCESS_RW)
		max_writers = 1;
	else if (dev->access_mode == RNBD_ACCESS_MIGRATION)
		max_writers = 2;

	mutex_lock(&rnbd_srv_exports_mutex);
	exp = devt ? xa_load(&rnbd_srv_exports, devt) :
		     rnbd_srv_file_export(path);
	if (!exp) {
		exp = rnbd_srv_export_new(devt, path);
		if (IS_ERR(exp)) {
			err = PTR_ERR(exp);
			goto unlock;
		}
	}
	if (max_writers && exp->nr_writers >= max_writers) {
		if (devt)
			snprintf(what, sizeof(what), "%u:%u", MAJOR(devt),
				 MINOR(devt));
		else
			snprintf(what, sizeof(what), "file, inode %llu",
				 (u64)exp->inode->i_ino);
		pr_info_ratelimited("session %s: %s (%s): %s open refused: %u session(s) open it for writing (rw needs none, migration at most one)\n",
				    trs_srv_sess_name(dev->sess->trs), dev->path,
				    what, rnbd_access_mode_str(dev->access_mode),
				    exp->nr_writers);
		err = -EBUSY;
		goto unlock;
	}
	exp->ref++;
	if (max_writers)
		exp->nr_writers++;
	dev->export = exp;
unlock:
	mutex_unlock(&rnbd_srv_exports_mutex);
	return err;
}

/*
 * Undo rnbd_srv_export_get() for @dev, whose block device or file is
 * closed (so its claim is released); the last user removes the export.
 */
static void rnbd_srv_export_put(struct rnbd_srv_dev *dev)
{
	struct rnbd_srv_export *exp = dev->export;

	mutex_lock(&rnbd_srv_exports_mutex);
	if (dev->mode & BLK_OPEN_WRITE)
		exp->nr_writers--;
	if (!--exp->ref) {
		if (exp->devt)
			xa_erase(&rnbd_srv_exports, exp->devt);
		else
			list_del(&exp->file_node);
		rnbd_srv_sysfs_export_del(exp);
		kobject_put(&exp->kobj);
	}
	mutex_unlock(&rnbd_srv_exports_mutex);
}

/* Show @dev, just opened, in sysfs: under its export, made if need be. */
static void rnbd_srv_dev_publish(struct rnbd_srv_dev *dev)
{
	struct rnbd_srv_export *exp = dev->export;

	mutex_lock(&rnbd_srv_exports_mutex);
	if (!exp->sysfs_tried) {
		exp->sysfs_tried = true;
		if (dev->file)
			exp->direct = dev->direct;
		rnbd_srv_sysfs_export_add(exp, dev);
	}
	rnbd_srv_sysfs_dev_add(dev);
	mutex_unlock(&rnbd_srv_exports_mutex);
}

/* Close @dev's block device or file, opened by the next function. */
static void rnbd_srv_dev_close_backend(struct rnbd_srv_dev *dev)
{
	if (dev->file)
		rnbd_srv_file_close(dev);
	else
		rnbd_bdev_close(&dev->bdev_handle, dev->mode);
}

/* Open @dev's block device @devt, or the file at @path if @devt is 0. */
static int rnbd_srv_dev_open_backend(struct rnbd_srv_sess *sess,
				     struct rnbd_srv_dev *dev, dev_t devt,
				     const struct path *path)
{
	struct block_device *bdev;
	int err;

	if (!devt) {
		err = rnbd_srv_file_open(dev, path);
		if (err)
			return err;
		err = rnbd_srv_file_check(sess, dev);
		goto check;
	}
	/* the writers share the exclusive claim; readers claim nothing */
	bdev = rnbd_bdev_open(&dev->bdev_handle, devt, dev->mode,
			      dev->mode & BLK_OPEN_EXCL ? dev->export : NULL);
	if (IS_ERR(bdev))
		return PTR_ERR(bdev);
	dev->bdev = bdev;
	dev->nsectors = bdev_nr_sectors(bdev);
	err = rnbd_srv_dev_check(sess, dev);
check:
	if (err)
		rnbd_srv_dev_close_backend(dev);
	return err;
}

/*
 * Reserve @dev's block device @devt, or file at @path if @devt is 0, in
 * @sess, which may not have it open or being opened: count it in its
 * export, and put @dev on the session's opening list.  Called with
 * sess->lock held.
 */
static int rnbd_srv_dev_reserve(struct rnbd_srv_sess *sess,
				struct rnbd_srv_dev *dev, dev_t devt,
				const struct path *path)
{
	int err;

	if (sess->closed)
		return -ENOTCONN;
	if (rnbd_srv_dev_is_open(sess, devt,
				 devt ? NULL : d_inode(path->dentry)))
		return -EEXIST;
	err = rnbd_srv_export_get(dev, devt, path);
	if (err)
		return err;
	list_add_tail(&dev->open_node, &sess->opening);
	return 0;
}

/*
 * @dev's block device or file is open: give it an id in @sess and show it
 * in sysfs, unless the session closed while it was being opened.  @rsp is
 * filled here: a CLOSE of the new id, or the session's close, may close
 * the device as soon as sess->lock is unlocked.  Called with sess->lock
 * held, @dev off the opening list.
 */
static int rnbd_srv_dev_add(struct rnbd_srv_sess *sess,
			    struct rnbd_srv_dev *dev,
			    struct rnbd_msg_open_rsp *rsp)
{
	int err;

	if (sess->closed) {
		pr_info("session %s: %s opened after the session closed: closed again\n",
			trs_srv_sess_name(sess->trs), dev->path);
		return -ENOTCONN;
	}
	err = TRS_FI(xa_alloc(&sess->devs, &dev->id, dev, xa_limit_32b,
			      GFP_KERNEL), -ENOMEM);
	if (err)
		return err;
	rnbd_srv_dev_publish(dev);
	rnbd_srv_fill_open_rsp(dev, rsp);
	return 0;
}

/* An OPEN of what the session's host may not open. */
static int rnbd_srv_dev_refused(struct rnbd_srv_sess *sess,
				const struct rnbd_msg_open *msg)
{
	pr_info_ratelimited("session %s: host %s may not open %s%s: refused\n",
			    trs_srv_sess_name(sess->trs),
			    trs_srv_sess_hostname(sess->trs), msg->path,
			    msg->access_mode != RNBD_ACCESS_RO ?
			    " read-write" : "");
	return -EACCES;
}

/**
 * rnbd_srv_dev_open() - open the block device or file an OPEN message names
 * @sess: session the message arrived on
 * @msg: the message; its header and length are checked already
 * @rsp: the response to fill
 *
 * The block device or file is opened without sess->lock: an open that
 * hangs (a partition rescan, a FUSE or NFS open) holds up neither the
 * session's close nor its other OPENs and CLOSEs.  Meanwhile it is on the
 * session's opening list, so an OPEN of the same device or file in the
 * session fails with -EEXIST, and it has no id, so no CLOSE or IO can name
 * it.  If the session closed meanwhile, what was opened is closed again
 * when the open returns, however late (the admin work's session reference
 * keeps the session until then), and the OPEN fails with -ENOTCONN.
 *
 * Context: process context, sleeps; takes sess->lock.
 * Return: 0, the device registered under the id in @rsp in @sess, or
 * -EPROTO for a malformed path field, -EINVAL for an unknown access mode,
 * a control character, an empty path or a ".." component, -ENOENT,
 * -ENOTBLK (neither a block device nor a regular file, or a file of a
 * pseudo file system or one that cannot be read and written from the
 * kernel), -EOPNOTSUPP (a
 * regular file while file_exports is off), -EACCES (nodev
 * mount), -ELOOP (symlink loop or magic link), -EEXIST if @sess has the
 * device or file open already, or is opening it, -EROFS for a read-write
 * or migration open of a read-only device or a file on a read-only mount,
 * -EBUSY if the writers of other sessions do not allow the access mode,
 * or the device or file is busy, -ENOTCONN if @sess is closed, or closed
 * while the device or file was being opened, or another errno of the
 * lookup or the open.
 */
int rnbd_srv_dev_open(struct rnbd_srv_sess *sess,
		      const struct rnbd_msg_open *msg,
		      struct rnbd_msg_open_rsp *rsp)
{
	struct rnbd_srv_dev *dev;
	unsigned long gen;
	struct path path;
	dev_t devt;
	int err;

	if (msg->access_mode != RNBD_ACCESS_RO &&
	    msg->access_mode != RNBD_ACCESS_RW &&
	    msg->access_mode != RNBD_ACCESS_MIGRATION)
		return -EINVAL;
	/* a file keeps @path until the end, a block device only @devt */
	err = rnbd_srv_resolve(sess, msg, &path, &devt);
	/* listed exports: the same answer whether the path exists or not */
	if (err && err != -EPROTO && rnbd_srv_acl_listed())
		return rnbd_srv_dev_refused(sess, msg);
	if (err)
		return err;
	err = rnbd_srv_acl_check(sess, devt, devt ? NULL : &path,
				 msg->access_mode != RNBD_ACCESS_RO, &gen);
	if (err) {
		rnbd_srv_dev_refused(sess, msg);
		goto put_path;
	}
	/* a test's window for a change of the rules: access-revoke-race */
	TRS_FI_DELAY();

	dev = TRS_FI(kzalloc(sizeof(*dev), GFP_KERNEL), NULL);
	if (!dev) {
		err = -ENOMEM;
		goto put_path;
	}
	/* from here on kobject_put() frees it */
	rnbd_srv_dev_kobj_init(dev);
	dev->path = TRS_FI(kstrdup(msg->path, GFP_KERNEL), NULL);
	err = dev->path ? rnbd_srv_dev_waitq_init(dev) : -ENOMEM;
	if (err)
		goto put_dev;
	dev->sess = sess;
	dev->access_mode = msg->access_mode;
	refcount_set(&dev->ref, 1);
	INIT_WORK(&dev->release_work, rnbd_srv_dev_release_work);
	dev->mode = BLK_OPEN_READ;
	if (msg->access_mode != RNBD_ACCESS_RO)
		dev->mode |= BLK_OPEN_WRITE | BLK_OPEN_EXCL;

	mutex_lock(&sess->lock);
	err = rnbd_srv_dev_reserve(sess, dev, devt, &path);
	mutex_unlock(&sess->lock);
	if (err)
		goto put_dev;
	/* may wait for ever: see above */
	err = rnbd_srv_dev_open_backend(sess, dev, devt, &path);
	mutex_lock(&sess->lock);
	list_del(&dev->open_node);
	if (err) {
		mutex_unlock(&sess->lock);
		goto put_export;
	}
	err = rnbd_srv_dev_add(sess, dev, rsp);
	mutex_unlock(&sess->lock);
	if (err)
		goto close_backend;
	rnbd_srv_acl_opened(gen);
	if (!devt)
		path_put(&path);
	return 0;

close_backend:
	rnbd_srv_dev_close_backend(dev);
put_export:
	/* after the claim is gone: see rnbd_srv_exports */
	rnbd_srv_export_put(dev);
put_dev:
	kobject_put(&dev->kobj);
put_path:
	if (!devt)
		path_put(&path);
	return err;
}

/* Close the device: no IO of it is in flight. */
static void rnbd_srv_dev_release(struct rnbd_srv_dev *dev)
{
	rnbd_srv_dev_close_backend(dev);
	/* after the claim is gone: see rnbd_srv_exports */
	rnbd_srv_export_put(dev);
	/* freed after an RCU grace period: see rnbd_srv_dev_get() */
	kobject_put(&dev->kobj);
}

/* The last bio of a device closed before it ended. */
static void rnbd_srv_dev_release_work(struct work_struct *work)
{
	rnbd_srv_dev_release(container_of(work, struct rnbd_srv_dev,
					  release_work));
}

/*
 * Drop the open reference of a device just taken out of its session's
 * devs, and remove its sysfs directory: closed now if it is idle, else by
 * its last bio (a disk that hangs keeps its device open, not the caller
 * waiting).  Called with sess->lock held.
 */
static void rnbd_srv_dev_destroy(struct rnbd_srv_sess *sess,
				 struct rnbd_srv_dev *dev)
{
	trace_rnbd_srv_dev_close(sess, dev, refcount_read(&dev->ref) > 1);
	mutex_lock(&rnbd_srv_exports_mutex);
	rnbd_srv_sysfs_dev_del(dev);
	mutex_unlock(&rnbd_srv_exports_mutex);
	if (refcount_dec_and_test(&dev->ref)) {
		rnbd_srv_dev_release(dev);
		return;
	}
	if (dev->bdev)
		pr_info("session %s: device %pg closed with IO in flight; released when it ends\n",
			trs_srv_sess_name(sess->trs), dev->bdev);
	else
		pr_info("session %s: file %s closed with IO in flight; released when it ends\n",
			trs_srv_sess_name(sess->trs), dev->path);
}

/**
 * rnbd_srv_dev_close() - close device @id of @sess
 * @sess: session
 * @id: dev_id from the open response
 *
 * Does not wait for the device's bios in flight: the last one closes it.
 *
 * Context: process context, sleeps; takes sess->lock.
 * Return: 0, or -ENODEV if @sess has no device @id.
 */
int rnbd_srv_dev_close(struct rnbd_srv_sess *sess, u32 id)
{
	struct rnbd_srv_dev *dev;

	mutex_lock(&sess->lock);
	dev = xa_erase(&sess->devs, id);
	if (dev)
		rnbd_srv_dev_destroy(sess, dev);
	if (xa_empty(&sess->devs) && !sess->closed)
		rnbd_srv_idle_arm(sess);
	mutex_unlock(&sess->lock);
	return dev ? 0 : -ENODEV;
}

/**
 * rnbd_srv_dev_force_close() - close a device on the server's own
 *	initiative (sysfs force_close)
 * @dev: device; the caller holds a reference on its kobject and on its
 *	session
 *
 * The device's dev_id stays taken in its session until the client's CLOSE
 * of it (which then fails with -ENODEV): the client's IO to it fails with
 * -ENODEV and never reaches a device opened later.  The session stays.
 *
 * Context: process context, sleeps; takes the session's lock.
 * Return: 0, or -ENODEV if @dev is closed already.
 */
int rnbd_srv_dev_force_close(struct rnbd_srv_dev *dev)
{
	struct rnbd_srv_sess *sess = dev->sess;
	int err = -ENODEV;

	mutex_lock(&sess->lock);
	if (xa_load(&sess->devs, dev->id) == dev) {
		if (dev->bdev)
			pr_info("session %s: device %u (%pg, %s) closed by force_close\n",
				trs_srv_sess_name(sess->trs), dev->id,
				dev->bdev, dev->path);
		else
			pr_info("session %s: device %u (file %s) closed by force_close\n",
				trs_srv_sess_name(sess->trs), dev->id,
				dev->path);
		rnbd_srv_dev_revoke(sess, dev);
		err = 0;
	}
	mutex_unlock(&sess->lock);
	return err;
}

/**
 * rnbd_srv_dev_revoke() - close an open device of a session, keeping its id
 * @sess: the session; its lock held
 * @dev: one of its open devices
 *
 * As force_close: the client's IO to it and its CLOSE fail with -ENODEV.
 */
void rnbd_srv_dev_revoke(struct rnbd_srv_sess *sess, struct rnbd_srv_dev *dev)
{
	lockdep_assert_held(&sess->lock);
	/* NULL in an allocating xarray: the id stays reserved */
	xa_store(&sess->devs, dev->id, NULL, GFP_KERNEL);
	rnbd_srv_dev_destroy(sess, dev);
}

/**
 * rnbd_srv_dev_close_all() - close every device of @sess
 * @sess: session going away; no request of it will arrive
 *
 * An OPEN still queued then finds @sess closed and opens nothing; one
 * whose block device or file is being opened is not waited for: it closes
 * what it opened when its open returns (rnbd_srv_dev_open()).
 *
 * Context: process context, sleeps; takes sess->lock.
 */
void rnbd_srv_dev_close_all(struct rnbd_srv_sess *sess)
{
	struct rnbd_srv_dev *dev;
	unsigned long id;

	mutex_lock(&sess->lock);
	sess->closed = true;
	xa_for_each(&sess->devs, id, dev) {
		xa_erase(&sess->devs, id);
		rnbd_srv_dev_destroy(sess, dev);
	}
	mutex_unlock(&sess->lock);
}

/**
 * rnbd_srv_dev_init() - create the workqueue closing devices after IO
 *
 * Return: 0 or -ENOMEM.
 */
int rnbd_srv_dev_init(void)
{
	rnbd_srv_release_wq = alloc_workqueue("rnbd_srv_release", 0, 0);
	return rnbd_srv_release_wq ? 0 : -ENOMEM;
}

/**
 * rnbd_srv_dev_exit() - close the devices whose last bio ended, and free
 *	the workqueue
 *
 * Context: process context, sleeps; after trs_srv_close(), so every bio
 * has ended and queued its device's close.
 */
void rnbd_srv_dev_exit(void)
{
	destroy_workqueue(rnbd_srv_release_wq);
}

/**
 * rnbd_srv_dev_get() - look up an open device for one IO
 * @sess: session
 * @id: dev_id from the request
 *
 * Context: any.
 * Return: the device with a reference for rnbd_srv_dev_put(), or NULL if
 * @sess has no device @id or it is being closed.
 */
struct rnbd_srv_dev *rnbd_srv_dev_get(struct rnbd_srv_sess *sess, u32 id)
{
	struct rnbd_srv_dev *dev;

	rcu_read_lock();
	dev = xa_load(&sess->devs, id);
	if (dev && !refcount_inc_not_zero(&dev->ref))
		dev = NULL;
	rcu_read_unlock();
	return dev;
}

/**
 * rnbd_srv_dev_put() - drop a reference from rnbd_srv_dev_get()
 * @dev: device
 *
 * Context: any.
 */
void rnbd_srv_dev_put(struct rnbd_srv_dev *dev)
{
	if (refcount_dec_and_test(&dev->ref))
		queue_work(rnbd_srv_release_wq, &dev->release_work);
}

/**
 * rnbd_srv_dev_nr_sectors() - the size of an open device or file now
 * @dev: open device, or a reference held
 *
 * Return: 512-byte sectors; a file's size rounded down to its logical
 * block size.
 */
sector_t rnbd_srv_dev_nr_sectors(const struct rnbd_srv_dev *dev)
{
	return dev->file ? rnbd_srv_file_nr_sectors(dev) :
			   bdev_nr_sectors(dev->bdev);
}

/**
 * rnbd_srv_fill_open_rsp() - describe @dev for the client
 * @dev: open device or file
 * @rsp: response to fill, reserved fields zero
 *
 * The physical block size is clamped to [logical block size, 4096] so that
 * every client can take it; discard granularity is at least the logical
 * block size, and a multiple of it.
 */
void rnbd_srv_fill_open_rsp(const struct rnbd_srv_dev *dev,
			    struct rnbd_msg_open_rsp *rsp)
{
	struct block_device *bdev = dev->bdev;
	u32 lbs, pbs;

	if (dev->file) {
		rnbd_srv_file_fill_open_rsp(dev, rsp);
		return;
	}
	lbs = bdev_logical_block_size(bdev);
	pbs = max_t(u32, lbs, min_t(u32, bdev_physical_block_size(bdev),
				    SZ_4K));
	memset(rsp, 0, sizeof(*rsp));
	rsp->dev_id = cpu_to_le32(dev->id);
	rsp->nsectors = cpu_to_le64(bdev_nr_sectors(bdev));
	rsp->max_hw_sectors = cpu_to_le32(queue_max_hw_sectors(bdev_get_queue(bdev)));
	if (bdev_max_discard_sectors(bdev)) {
		rsp->max_discard_sectors = cpu_to_le32(bdev_max_discard_sectors(bdev));
		rsp->discard_granularity =
			cpu_to_le32(max(round_up(bdev_discard_granularity(bdev),
						 lbs), lbs));
		rsp->discard_alignment =
			cpu_to_le32(round_down(bdev_discard_alignment(bdev) %
					       le32_to_cpu(rsp->discard_granularity),
					       SECTOR_SIZE));
	}
	rsp->max_write_zeroes_sectors = cpu_to_le32(bdev_write_zeroes_sectors(bdev));
	rsp->logical_block_size = cpu_to_le16(lbs);
	rsp->physical_block_size = cpu_to_le16(pbs);
	rsp->max_segments = cpu_to_le16(bdev_max_segments(bdev));
	rsp->rotational = bdev_rot(bdev);
	if (bdev_write_cache(bdev))
		rsp->cache_flags |= RNBD_CACHE_WRITEBACK;
	if (bdev_fua(bdev))
		rsp->cache_flags |= RNBD_CACHE_FUA;
}
