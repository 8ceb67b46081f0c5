// SPDX-License-Identifier: GPL-2.0-only
/*
 * rnbd server: sysfs, as upstream rnbd-server has it.
 *
 *   /sys/class/rnbd-server/ctl/devices/<bdev>/block_dev -> the device
 *   /sys/class/rnbd-server/ctl/devices/<bdev>/sessions/<session>/
 *	read_only, access_mode, mapping_path, force_close
 *   /sys/class/rnbd-server/ctl/files/<file>/file_path, io_mode
 *   /sys/class/rnbd-server/ctl/files/<file>/sessions/<session>/
 *	the same as a device's
 *
 * <bdev> is the block device's own name (nullb0, sda1), <file> the path
 * of an exported regular file with '/' as '!' (srv!images!vm1.img), as
 * block device names are (cciss!c0d0), <session> the transport's name of
 * the session.  Files are not under devices/: the rnbd tool takes every
 * entry there for a block device, and stops at one without block_dev.
 *
 * A device's or file's directory exists while a session has it open (and
 * until its last IO after the close); a session's directory from the OPEN
 * to the CLOSE, the force_close or the end of the session.  Both are made and removed under
 * rnbd_srv_exports_mutex (rnbd-srv-dev.c); making them is best effort: a
 * failure is logged and the device is served all the same.
 * See Documentation/ABI/testing/sysfs-class-rnbd-server.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "rnbd-srv.h"

static struct class rnbd_srv_class = {
	.name	= "rnbd-server",
};

static struct device *rnbd_srv_ctl;
static struct kobject *rnbd_srv_devs_kobj;
static struct kobject *rnbd_srv_files_kobj;

static struct rnbd_srv_dev *rnbd_srv_kobj_to_dev(struct kobject *kobj)
{
	return container_of(kobj, struct rnbd_srv_dev, kobj);
}

static ssize_t read_only_show(struct kobject *kobj, struct kobj_attribute *attr,
			      char *page)
{
	struct rnbd_srv_dev *dev = rnbd_srv_kobj_to_dev(kobj);

	return sysfs_emit(page, "%d\n", !(dev->mode & BLK_OPEN_WRITE));
}

static ssize_t access_mode_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *page)
{
	return sysfs_emit(page, "%s\n",
			  rnbd_access_mode_str(rnbd_srv_kobj_to_dev(kobj)->access_mode));
}

static ssize_t mapping_path_show(struct kobject *kobj,
				 struct kobj_attribute *attr, char *page)
{
	return sysfs_emit(page, "%s\n", rnbd_srv_kobj_to_dev(kobj)->path);
}

static ssize_t force_close_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *page)
{
	return sysfs_emit(page, "Usage: echo 1 > %s\n", attr->attr.name);
}

/*
 * Closing the device removes this file's directory, which waits for the
 * stores running in it: the file removes itself first, which lets that
 * removal go on, and the references taken before keep the device's and
 * its session's memory until the store returns.  A CLOSE or the session's
 * end racing with it finds the device gone, or makes this store find it
 * gone (-ENODEV).
 */
static ssize_t force_close_store(struct kobject *kobj,
				 struct kobj_attribute *attr,
				 const char *buf, size_t count)
{
	struct rnbd_srv_dev *dev = rnbd_srv_kobj_to_dev(kobj);
	struct rnbd_srv_sess *sess = dev->sess;
	int err;

	if (!sysfs_streq(buf, "1"))
		return -EINVAL;
	/* module exit closes every device: it must not run under us */
	if (!try_module_get(THIS_MODULE))
		return -ENODEV;
	/*
	 * While this store runs unprotected the directory is not removed
	 * (its removal waits for us): @dev is in its session's devs, so the
	 * session has not ended and holds its own reference.
	 */
	kobject_get(kobj);
	rnbd_srv_sess_get(sess);
	sysfs_remove_file_self(kobj, &attr->attr);
	err = rnbd_srv_dev_force_close(dev);
	rnbd_srv_sess_put(sess);
	kobject_put(kobj);
	module_put(THIS_MODULE);
	return err ?: count;
}

static struct kobj_attribute rnbd_srv_read_only_attr = __ATTR_RO(read_only);
static struct kobj_attribute rnbd_srv_access_mode_attr = __ATTR_RO(access_mode);
static struct kobj_attribute rnbd_srv_mapping_path_attr = __ATTR_RO(mapping_path);
static struct kobj_attribute rnbd_srv_force_close_attr = __ATTR_RW(force_close);

static struct attribute *rnbd_srv_dev_attrs[] = {
	&rnbd_srv_read_only_attr.attr,
	&rnbd_srv_access_mode_attr.attr,
	&rnbd_srv_mapping_path_attr.attr,
	&rnbd_srv_force_close_attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(rnbd_srv_dev);

static void rnbd_srv_dev_kobj_release(struct kobject *kobj)
{
	struct rnbd_srv_dev *dev = rnbd_srv_kobj_to_dev(kobj);

	kfree(dev->path);
	/* no bio is left in them: each held a reference of the device */
	free_percpu(dev->waitq);
	/* rnbd_srv_dev_get() may still look at it under RCU */
	kfree_rcu(dev, rcu);
}

static const struct kobj_type rnbd_srv_dev_ktype = {
	.release	= rnbd_srv_dev_kobj_release,
	.sysfs_ops	= &kobj_sysfs_ops,
	.default_groups	= rnbd_srv_dev_groups,
};

/**
 * rnbd_srv_dev_kobj_init() - initialise the kobject that owns @dev's memory
 * @dev: new, zeroed device; from now on kobject_put() frees it
 */
void rnbd_srv_dev_kobj_init(struct rnbd_srv_dev *dev)
{
	kobject_init(&dev->kobj, &rnbd_srv_dev_ktype);
}

static struct rnbd_srv_export *rnbd_srv_kobj_to_export(struct kobject *kobj)
{
	return container_of(kobj, struct rnbd_srv_export, kobj);
}

static void rnbd_srv_export_kobj_release(struct kobject *kobj)
{
	struct rnbd_srv_export *exp = rnbd_srv_kobj_to_export(kobj);

	if (exp->inode)
		path_put(&exp->file_path);
	kfree(exp);
}

static const struct kobj_type rnbd_srv_export_ktype = {
	.release	= rnbd_srv_export_kobj_release,
	.sysfs_ops	= &kobj_sysfs_ops,
};

/* The file's path as the reader's root sees it (d_path()). */
static ssize_t file_path_show(struct kobject *kobj,
			      struct kobj_attribute *attr, char *page)
{
	char *p = d_path(&rnbd_srv_kobj_to_export(kobj)->file_path, page,
			 PAGE_SIZE - 1);
	size_t len;

	if (IS_ERR(p))
		return PTR_ERR(p);
	/* d_path() builds at the end of @page: move it to the start */
	len = strlen(p);
	memmove(page, p, len);
	return len + sysfs_emit_at(page, len, "\n");
}

static ssize_t io_mode_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *page)
{
	return sysfs_emit(page, "%s\n", rnbd_srv_kobj_to_export(kobj)->direct ?
			  "direct" : "buffered");
}

static struct kobj_attribute rnbd_srv_file_path_attr = __ATTR_RO(file_path);
static struct kobj_attribute rnbd_srv_io_mode_attr = __ATTR_RO(io_mode);

static struct attribute *rnbd_srv_file_attrs[] = {
	&rnbd_srv_file_path_attr.attr,
	&rnbd_srv_io_mode_attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(rnbd_srv_file);

static const struct kobj_type rnbd_srv_file_export_ktype = {
	.release	= rnbd_srv_export_kobj_release,
	.sysfs_ops	= &kobj_sysfs_ops,
	.default_groups	= rnbd_srv_file_groups,
};

/**
 * rnbd_srv_export_kobj_init() - initialise the kobject that owns @exp's
 *	memory
 * @exp: new, zeroed export; from now on kobject_put() frees it
 * @file: @exp is a regular file's: its directory has file_path and io_mode
 */
void rnbd_srv_export_kobj_init(struct rnbd_srv_export *exp, bool file)
{
	kobject_init(&exp->kobj, file ? &rnbd_srv_file_export_ktype :
					&rnbd_srv_export_ktype);
}

/*
 * Add the directory of a file's export under files/, named for its path
 * with '/' as '!'.  A name longer than a file name can be is refused.
 */
static int rnbd_srv_sysfs_file_add(struct rnbd_srv_export *exp)
{
	char *buf, *name;
	int err;

	buf = TRS_FI(kmalloc(PATH_MAX, GFP_KERNEL), NULL);
	if (!buf)
		return -ENOMEM;
	name = d_path(&exp->file_path, buf, PATH_MAX);
	if (IS_ERR(name)) {
		err = PTR_ERR(name);
		goto free_buf;
	}
	name += strspn(name, "/");
	strreplace(name, '/', '!');
	err = strlen(name) > NAME_MAX ? -ENAMETOOLONG :
	      kobject_add(&exp->kobj, rnbd_srv_files_kobj, "%s", name);
free_buf:
	kfree(buf);
	return err;
}

/**
 * rnbd_srv_sysfs_export_add() - make devices/<bdev>/ or files/<file>/ for
 *	an export
 * @exp: export, not in sysfs
 * @dev: the session device that opened it first, open
 *
 * A block device's is named as the device, and block_dev links to the
 * device's own sysfs directory (a partition's, not its disk's): the rnbd
 * tool takes the link's target's name for the directory's.  A file's is
 * under files/.  Best effort: on a failure, logged, the export or its
 * sessions/ is left out.
 *
 * Context: rnbd_srv_exports_mutex held.
 */
void rnbd_srv_sysfs_export_add(struct rnbd_srv_export *exp,
			       const struct rnbd_srv_dev *dev)
{
	struct block_device *bdev = dev->bdev;
	int err;

	if (bdev)
		err = kobject_add(&exp->kobj, rnbd_srv_devs_kobj, "%s",
				  dev_name(&bdev->bd_device));
	else
		err = rnbd_srv_sysfs_file_add(exp);
	if (err)
		goto warn;
	if (bdev) {
		err = sysfs_create_link(&exp->kobj, bdev_kobj(bdev),
					"block_dev");
		if (err)
			goto del_export;
	}
	exp->sessions_kobj = kobject_create_and_add("sessions", &exp->kobj);
	if (!exp->sessions_kobj) {
		err = -ENOMEM;
		goto remove_link;
	}
	return;

remove_link:
	if (bdev)
		sysfs_remove_link(&exp->kobj, "block_dev");
del_export:
	kobject_del(&exp->kobj);
warn:
	pr_warn("%s: no directory in %s/%s: %d\n", dev->path,
		dev_name(rnbd_srv_ctl), bdev ? "devices" : "files", err);
}

/**
 * rnbd_srv_sysfs_export_del() - undo rnbd_srv_sysfs_export_add()
 * @exp: export no session device is in sysfs under
 *
 * Context: rnbd_srv_exports_mutex held.
 */
void rnbd_srv_sysfs_export_del(struct rnbd_srv_export *exp)
{
	if (!exp->sessions_kobj)
		return;
	kobject_put(exp->sessions_kobj);
	exp->sessions_kobj = NULL;
	if (!exp->inode)
		sysfs_remove_link(&exp->kobj, "block_dev");
	kobject_del(&exp->kobj);
}

/**
 * rnbd_srv_sysfs_dev_add() - make sessions/<session>/ for a session's open
 * @dev: device just opened, whose export is in sysfs or failed to be
 *
 * Best effort: a failure (a name the session has twice, no memory) is
 * logged.
 *
 * Context: rnbd_srv_exports_mutex held.
 */
void rnbd_srv_sysfs_dev_add(struct rnbd_srv_dev *dev)
{
	const char *name = trs_srv_sess_name(dev->sess->trs);
	int err;

	if (!dev->export->sessions_kobj)
		return;
	err = kobject_add(&dev->kobj, dev->export->sessions_kobj, "%s", name);
	if (err)
		pr_warn("session %s: %s: no directory in its sessions/: %d\n",
			name, kobject_name(&dev->export->kobj), err);
}

/**
 * rnbd_srv_sysfs_dev_del() - undo rnbd_srv_sysfs_dev_add()
 * @dev: device leaving its session
 *
 * Waits for the shows and stores running in the directory but a
 * force_close that removed itself.
 *
 * Context: rnbd_srv_exports_mutex held.
 */
void rnbd_srv_sysfs_dev_del(struct rnbd_srv_dev *dev)
{
	if (dev->kobj.state_in_sysfs)
		kobject_del(&dev->kobj);
}

/**
 * rnbd_srv_sysfs_init() - create the rnbd-server class, its ctl device,
 *	ctl/devices/ and ctl/files/
 *
 * Return: 0 or a negative errno.
 */
int rnbd_srv_sysfs_init(void)
{
	int err;

	err = class_register(&rnbd_srv_class);
	if (err)
		return err;
	rnbd_srv_ctl = TRS_FI(device_create_with_groups(&rnbd_srv_class, NULL,
							MKDEV(0, 0), NULL,
							rnbd_srv_ctl_groups,
							"ctl"),
			      ERR_PTR(-ENOMEM));
	if (IS_ERR(rnbd_srv_ctl)) {
		err = PTR_ERR(rnbd_srv_ctl);
		goto unregister_class;
	}
	rnbd_srv_devs_kobj = kobject_create_and_add("devices",
						    &rnbd_srv_ctl->kobj);
	if (!rnbd_srv_devs_kobj) {
		err = -ENOMEM;
		goto unregister_ctl;
	}
	rnbd_srv_files_kobj = kobject_create_and_add("files",
						     &rnbd_srv_ctl->kobj);
	if (!rnbd_srv_files_kobj) {
		err = -ENOMEM;
		goto put_devs;
	}
	return 0;

put_devs:
	kobject_put(rnbd_srv_devs_kobj);
unregister_ctl:
	device_unregister(rnbd_srv_ctl);
unregister_class:
	class_unregister(&rnbd_srv_class);
	return err;
}

/**
 * rnbd_srv_sysfs_exit() - undo rnbd_srv_sysfs_init(); every device is
 *	closed already
 */
void rnbd_srv_sysfs_exit(void)
{
	kobject_put(rnbd_srv_files_kobj);
	kobject_put(rnbd_srv_devs_kobj);
	device_unregister(rnbd_srv_ctl);
	class_unregister(&rnbd_srv_class);
}
