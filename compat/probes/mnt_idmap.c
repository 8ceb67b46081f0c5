// SPDX-License-Identifier: GPL-2.0-only
/*
 * mnt_idmap: permission checks take the mount's struct mnt_idmap,
 * mnt_idmap(); mnt_user_ns() is gone.
 * Changed in: 6.3
 */
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/path.h>

int rnbd_probe(const struct path *path);
int rnbd_probe(const struct path *path)
{
#ifdef RNBD_PROBE_NEW
	return inode_permission(mnt_idmap(path->mnt), d_inode(path->dentry),
				MAY_READ);
#else
	return inode_permission(mnt_user_ns(path->mnt), d_inode(path->dentry),
				MAY_READ);
#endif
}
