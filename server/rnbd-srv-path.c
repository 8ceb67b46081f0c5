// SPDX-License-Identifier: GPL-2.0-only
/*
 * rnbd server: what the path of an OPEN names.
 *
 * The path is resolved with dev_search_path as its root directory: a ".."
 * component is refused with -EINVAL, and symlinks are resolved inside
 * dev_search_path, as under chroot; a /proc magic link (/proc/self/root,
 * /proc/<pid>/fd/<n>) is refused with -ELOOP.  What it names must be a
 * block device, or a regular file if file_exports is on
 * (rnbd_srv_path_kind()).  Nothing is opened here: rnbd-srv-dev.c opens it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/string.h>

#include "rnbd-srv.h"

/* Check the path of @msg; return it without its leading slashes. */
static const char *rnbd_srv_check_path(const struct rnbd_msg_open *msg)
{
	size_t len = le16_to_cpu(msg->path_len), n;
	const char *p, *rel;

	if (!len || len >= RNBD_PATH_MAX ||
	    strnlen(msg->path, RNBD_PATH_MAX) != len ||
	    memchr_inv(msg->path + len, 0, RNBD_PATH_MAX - len))
		return ERR_PTR(-EPROTO);
	for (p = msg->path; *p; p++) {
		if (iscntrl(*p))
			return ERR_PTR(-EINVAL);
	}
	rel = msg->path + strspn(msg->path, "/");
	if (!*rel)
		return ERR_PTR(-EINVAL);
	for (p = rel; *p; p += strspn(p, "/")) {
		n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return ERR_PTR(-EINVAL);
		p += n;
	}
	return rel;
}

/*
 * Resolve @rel to a path with dev_search_path as the root directory: like
 * chroot, neither ".." nor a symlink (even an absolute one) can lead out
 * of it.  Nothing is opened here.
 *
 * LOOKUP_IN_ROOT scopes the walk to the preset root: ".." stops there and
 * the result is checked to lie beneath it; LOOKUP_NO_MAGICLINKS refuses a
 * /proc magic link, which jumps to its target whatever the root, with
 * -ELOOP.  Not LOOKUP_NO_XDEV: with the default dev_search_path "/",
 * /dev/loop0 is on devtmpfs, another mount.  A ".." (as in the symlinks of
 * /dev/disk/by-id) fails with -EAGAIN if a mount or rename happened
 * meanwhile anywhere: tried again, a few times.
 */
int rnbd_srv_lookup(const char *rel, struct path *path)
{
	struct path base;
	int tries = 3, err;

	err = kern_path(rnbd_srv_search_path, LOOKUP_FOLLOW | LOOKUP_DIRECTORY,
			&base);
	if (err)
		return err;
	do {
		err = vfs_path_lookup(base.dentry, base.mnt, rel,
				      LOOKUP_FOLLOW | LOOKUP_IN_ROOT |
				      LOOKUP_NO_MAGICLINKS, path);
	} while (err == -EAGAIN && --tries);
	path_put(&base);
	return err;
}

static const char *rnbd_srv_file_type(umode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a fifo";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode))
		return "a character device";
	return "not a regular file";
}

/*
 * What @path names: a block device (its number in *@devt, @path put) or a
 * regular file (*@devt 0, @path kept for the caller) if file_exports is
 * on (else -EOPNOTSUPP and a log line); anything else, and a file of a
 * pseudo file system (/proc/kcore, a device's registers in sysfs), is
 * refused with -ENOTBLK and a log line, a device node on a nodev mount
 * with -EACCES.
 */
static int rnbd_srv_path_kind(struct rnbd_srv_sess *sess, const char *name,
			      struct path *path, dev_t *devt)
{
	struct inode *inode = d_inode(path->dentry);
	int err = 0;

	*devt = 0;
	if (S_ISREG(inode->i_mode) && !READ_ONCE(rnbd_srv_export_files)) {
		pr_info_ratelimited("session %s: %s is a regular file and file exports are off (file_exports=0): refused\n",
				    trs_srv_sess_name(sess->trs), name);
		err = -EOPNOTSUPP;
	} else if (S_ISREG(inode->i_mode) &&
		   rnbd_srv_file_pseudo(inode->i_sb)) {
		pr_info_ratelimited("session %s: %s is on %s, a pseudo file system, not a disk image: refused\n",
				    trs_srv_sess_name(sess->trs), name,
				    inode->i_sb->s_type->name);
		err = -ENOTBLK;
	} else if (S_ISREG(inode->i_mode)) {
		return 0;
	} else if (!S_ISBLK(inode->i_mode)) {
		pr_info_ratelimited("session %s: %s is %s, not a block device or regular file: refused\n",
				    trs_srv_sess_name(sess->trs), name,
				    rnbd_srv_file_type(inode->i_mode));
		err = -ENOTBLK;
	} else if ((path->mnt->mnt_flags & MNT_NODEV) ||
		   (inode->i_sb->s_iflags & SB_I_NODEV)) {
		err = -EACCES;
	} else {
		*devt = inode->i_rdev;
	}
	path_put(path);
	return err;
}

/**
 * rnbd_srv_resolve() - what the path of an OPEN names
 * @sess: the session that sent the OPEN
 * @msg: the OPEN; its path is checked here
 * @path: for a regular file, its path, which the caller must put
 * @devt: the block device's number, or 0 for a regular file
 *
 * Context: process context, sleeps (a path walk); no lock held.
 * Return: 0; -EPROTO for a malformed path, -EINVAL for a ".." or a control
 * character, -ELOOP, -ENOENT... from the walk, or the refusals of
 * rnbd_srv_path_kind(), each with a log line.
 */
int rnbd_srv_resolve(struct rnbd_srv_sess *sess,
		     const struct rnbd_msg_open *msg, struct path *path,
		     dev_t *devt)
{
	const char *rel;
	int err;

	rel = rnbd_srv_check_path(msg);
	if (IS_ERR(rel))
		return PTR_ERR(rel);
	err = rnbd_srv_lookup(rel, path);
	if (err == -ELOOP)
		pr_info_ratelimited("session %s: %s: symlink loop or /proc magic link: refused\n",
				    trs_srv_sess_name(sess->trs), msg->path);
	if (err)
		return err;
	return rnbd_srv_path_kind(sess, msg->path, path, devt);
}
