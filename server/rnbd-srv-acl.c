// SPDX-License-Identifier: GPL-2.0-only
/*
 * rnbd server: who may open what (Documentation/security.rst).
 *
 * Host keys: up to two per host name, written to ctl/host_key and never
 * shown; the transport asks for one by its id when a path of that host
 * connects (rnbd_srv_host_key()).  Exports: in the "listed" mode of the
 * exports parameter, an OPEN succeeds only for a path that an export
 * names, for the session's host (or any host), read-write only if that
 * export is; the path of an export is resolved as a client's would be, at
 * every OPEN, and what it names (a block device, a file) is compared with
 * what the OPEN names.  Every change of the keys or the exports queues the
 * revocation work, which closes the devices their hosts may no longer
 * have open.  Everything here is guarded by rnbd_srv_acl_mutex.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <rnbd-compat.h>
#include <linux/module.h>
#include <linux/namei.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "rnbd-srv.h"

#define RNBD_SRV_HOST_KEYS	2

/**
 * struct rnbd_srv_host - a host that has keys
 * @entry: in rnbd_srv_hosts
 * @name: its host name
 * @nr_keys: keys it has, 1..RNBD_SRV_HOST_KEYS
 * @keys: the keys, each with its id and length
 */
struct rnbd_srv_host {
	struct list_head	entry;
	char			name[TRS_HOSTNAME_LEN];
	unsigned int		nr_keys;
	struct {
		u8		id[TRS_KEY_ID_LEN];
		u8		key[TRS_KEY_MAX];
		unsigned int	len;
	} keys[RNBD_SRV_HOST_KEYS];
};

/**
 * struct rnbd_srv_acl - one export for one host (or any)
 * @entry: in rnbd_srv_acls
 * @path: the path as clients name it
 * @host: the host it is for; "" for any host
 * @rw: read-write; else read-only
 */
struct rnbd_srv_acl {
	struct list_head	entry;
	char			path[RNBD_PATH_MAX];
	char			host[TRS_HOSTNAME_LEN];
	bool			rw;
};

/*
 * guards rnbd_srv_hosts, rnbd_srv_acls, rnbd_srv_acl_sessions and
 * rnbd_srv_acl_gen
 */
static DEFINE_MUTEX(rnbd_srv_acl_mutex);
static LIST_HEAD(rnbd_srv_hosts);
static LIST_HEAD(rnbd_srv_acls);
static LIST_HEAD(rnbd_srv_acl_sessions);
/* counts the changes of the keys, the exports and the mode */
static unsigned long rnbd_srv_acl_gen;

static void rnbd_srv_acl_revoke_work(struct work_struct *work);
static DECLARE_WORK(rnbd_srv_acl_revoke, rnbd_srv_acl_revoke_work);

/*
 * The keys, the exports or the mode changed: count it, and let the
 * revocation work look at every open device.  rnbd_srv_acl_mutex held.
 */
static void rnbd_srv_acl_changed(void)
{
	lockdep_assert_held(&rnbd_srv_acl_mutex);
	rnbd_srv_acl_gen++;
	/* module load: no session, and the work's queue may not be up yet */
	if (system_wq)
		queue_work(system_wq, &rnbd_srv_acl_revoke);
}

/* The exports parameter: false all, true listed. */
static bool rnbd_srv_listed;

static int rnbd_srv_exports_set(const char *val, const struct kernel_param *kp)
{
	bool listed;

	if (sysfs_streq(val, "all"))
		listed = false;
	else if (sysfs_streq(val, "listed"))
		listed = true;
	else
		return -EINVAL;
	mutex_lock(&rnbd_srv_acl_mutex);
	WRITE_ONCE(rnbd_srv_listed, listed);
	rnbd_srv_acl_changed();
	mutex_unlock(&rnbd_srv_acl_mutex);
	return 0;
}

static int rnbd_srv_exports_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", READ_ONCE(rnbd_srv_listed) ?
			  "listed" : "all");
}

static const struct kernel_param_ops rnbd_srv_exports_ops = {
	.set	= rnbd_srv_exports_set,
	.get	= rnbd_srv_exports_get,
};
module_param_cb(exports, &rnbd_srv_exports_ops, NULL, 0644);
MODULE_PARM_DESC(exports,
		 "\"all\": every peer may open anything under dev_search_path (upstream RNBD's passive mode); \"listed\": only what ctl/exports lists, for the hosts it names (default: all)");

static struct rnbd_srv_host *rnbd_srv_host_find(const char *name)
{
	struct rnbd_srv_host *host;

	lockdep_assert_held(&rnbd_srv_acl_mutex);
	list_for_each_entry(host, &rnbd_srv_hosts, entry)
		if (!strncmp(host->name, name, sizeof(host->name)))
			return host;
	return NULL;
}

/**
 * rnbd_srv_host_key() - the transport asks for a host's key
 * @name: the host name a path's HELLO gave
 * @id: the id of the client's key, or NULL if it has none
 * @key: out, TRS_KEY_MAX bytes
 *
 * Return: the key's length; 0 if the host has no key (it is served without
 * authentication); -EKEYREJECTED if it has keys but none with @id.
 */
int rnbd_srv_host_key(const char *name, const u8 *id, u8 *key)
{
	struct rnbd_srv_host *host;
	unsigned int i;
	int len = 0;

	mutex_lock(&rnbd_srv_acl_mutex);
	host = rnbd_srv_host_find(name);
	if (host) {
		len = -EKEYREJECTED;
		for (i = 0; id && i < host->nr_keys; i++) {
			if (memcmp(host->keys[i].id, id, TRS_KEY_ID_LEN))
				continue;
			memcpy(key, host->keys[i].key, host->keys[i].len);
			len = host->keys[i].len;
		}
	}
	mutex_unlock(&rnbd_srv_acl_mutex);
	return len;
}

/* Does @name, as a client names it, name what @devt or @file is? */
static bool rnbd_srv_acl_names(const char *name, dev_t devt,
			       const struct path *file)
{
	struct path path;
	struct inode *inode;
	bool same;

	if (rnbd_srv_lookup(name + strspn(name, "/"), &path))
		return false;
	inode = d_inode(path.dentry);
	if (devt)
		same = S_ISBLK(inode->i_mode) && inode->i_rdev == devt;
	else
		same = file && inode == d_inode(file->dentry);
	path_put(&path);
	return same;
}

/*
 * May @host have what @devt (a block device) or @file (a regular file)
 * names open, read-write if @rw?  An export that names a host serves it
 * only if it proved a key (@keyed): a name alone is only a claim.
 * rnbd_srv_acl_mutex held.
 */
static bool rnbd_srv_acl_allows(const char *host, bool keyed, dev_t devt,
				const struct path *file, bool rw)
{
	struct rnbd_srv_acl *acl;

	lockdep_assert_held(&rnbd_srv_acl_mutex);
	if (!READ_ONCE(rnbd_srv_listed))
		return true;
	list_for_each_entry(acl, &rnbd_srv_acls, entry) {
		if (acl->host[0] &&
		    (!keyed || strncmp(acl->host, host, sizeof(acl->host))))
			continue;
		if ((rw && !acl->rw) || !rnbd_srv_acl_names(acl->path, devt, file))
			continue;
		return true;
	}
	return false;
}

/*
 * The session and its host's keys: -1 it proved a key its host no longer
 * has (removing the host's last key counts), 0 it proved none and its host
 * has none, 1 it proved one its host still has.  A session that proved
 * none while its host has one never got here (the transport refused it),
 * unless the key came later: -1 too.  rnbd_srv_acl_mutex held.
 */
static int rnbd_srv_acl_key_state(struct rnbd_srv_sess *sess,
				  const char *name)
{
	struct rnbd_srv_host *host = rnbd_srv_host_find(name);
	u8 id[TRS_KEY_ID_LEN];
	unsigned int i;

	trs_srv_sess_key_id(sess->trs, id);
	if (!host)
		return memchr_inv(id, 0, sizeof(id)) ? -1 : 0;
	for (i = 0; i < host->nr_keys; i++)
		if (!memcmp(host->keys[i].id, id, sizeof(id)))
			return 1;
	return -1;
}

/**
 * rnbd_srv_acl_check() - may a session open what its OPEN resolved to?
 * @sess: the session
 * @devt: the block device, or 0 for a file
 * @file: the file's path, or NULL
 * @rw: opened for writing
 * @gen: out: the generation of the rules the answer is of, for
 *	rnbd_srv_acl_opened()
 *
 * The session's host must still hold the key its session proved, and in
 * the listed mode an export must allow it: one for any host, or one that
 * names the host if the session proved a key.
 *
 * Context: process context, sleeps (path walks).
 * Return: 0 or -EACCES.
 */
int rnbd_srv_acl_check(struct rnbd_srv_sess *sess, dev_t devt,
		       const struct path *file, bool rw, unsigned long *gen)
{
	const char *host = trs_srv_sess_hostname(sess->trs);
	int key;
	bool ok;

	mutex_lock(&rnbd_srv_acl_mutex);
	key = rnbd_srv_acl_key_state(sess, host);
	ok = key >= 0 && rnbd_srv_acl_allows(host, key > 0, devt, file, rw);
	if (!ok && !key && rnbd_srv_acl_allows(host, true, devt, file, rw))
		pr_info_ratelimited("session %s: an export names host %s, which proved no key (rnbdctl host-key add)\n",
				    trs_srv_sess_name(sess->trs), host);
	*gen = rnbd_srv_acl_gen;
	mutex_unlock(&rnbd_srv_acl_mutex);
	return ok ? 0 : -EACCES;
}

/**
 * rnbd_srv_acl_opened() - a device that rnbd_srv_acl_check() allowed is open
 * @gen: the generation rnbd_srv_acl_check() gave
 *
 * The device is now among its session's devices, where the revocation
 * work finds it.  If the rules changed since the check, that work may have
 * looked before the device was there: it looks again.
 */
void rnbd_srv_acl_opened(unsigned long gen)
{
	mutex_lock(&rnbd_srv_acl_mutex);
	if (gen != rnbd_srv_acl_gen)
		queue_work(system_wq, &rnbd_srv_acl_revoke);
	mutex_unlock(&rnbd_srv_acl_mutex);
}

/**
 * rnbd_srv_acl_listed() - whether only listed exports may be opened
 *
 * Return: true in the listed mode.
 */
bool rnbd_srv_acl_listed(void)
{
	return READ_ONCE(rnbd_srv_listed);
}

/**
 * rnbd_srv_acl_sess_add() - a session the revocation work looks at
 * @sess: a new session
 */
void rnbd_srv_acl_sess_add(struct rnbd_srv_sess *sess)
{
	mutex_lock(&rnbd_srv_acl_mutex);
	list_add_tail(&sess->acl_entry, &rnbd_srv_acl_sessions);
	mutex_unlock(&rnbd_srv_acl_mutex);
}

/**
 * rnbd_srv_acl_sess_del() - a session the revocation work forgets
 * @sess: a session being closed
 */
void rnbd_srv_acl_sess_del(struct rnbd_srv_sess *sess)
{
	mutex_lock(&rnbd_srv_acl_mutex);
	list_del(&sess->acl_entry);
	mutex_unlock(&rnbd_srv_acl_mutex);
}

/*
 * Close every device a host may no longer have open: its export went, or
 * became read-only, or the host lost the key its session proved (or got
 * one its session did not prove).
 */
static void rnbd_srv_acl_revoke_work(struct work_struct *work)
{
	struct rnbd_srv_sess *sess;
	struct rnbd_srv_dev *dev;
	const char *host;
	unsigned long id;
	int key;
	bool ok;

	mutex_lock(&rnbd_srv_acl_mutex);
	list_for_each_entry(sess, &rnbd_srv_acl_sessions, acl_entry) {
		host = trs_srv_sess_hostname(sess->trs);
		key = rnbd_srv_acl_key_state(sess, host);
		mutex_lock(&sess->lock);
		xa_for_each(&sess->devs, id, dev) {
			ok = key >= 0 &&
			     rnbd_srv_acl_allows(host, key > 0,
						 dev->bdev ? dev->bdev->bd_dev : 0,
						 dev->file ? &dev->file->f_path :
						 NULL,
						 dev->mode & BLK_OPEN_WRITE);
			if (ok)
				continue;
			pr_info("session %s: host %s may no longer have %s open%s: closed\n",
				trs_srv_sess_name(sess->trs), host, dev->path,
				key >= 0 ? "" :
				" (its session's key is not one the host has)");
			rnbd_srv_dev_revoke(sess, dev);
		}
		mutex_unlock(&sess->lock);
	}
	mutex_unlock(&rnbd_srv_acl_mutex);
}

/* "rnbd:" and 64 to 128 hex digits, or the bare digits. */
static int rnbd_srv_parse_key(const char *str, u8 *key)
{
	size_t len;

	if (!strncmp(str, "rnbd:", 5))
		str += 5;
	len = strlen(str);
	if (len % 2 || len / 2 < TRS_KEY_MIN || len / 2 > TRS_KEY_MAX ||
	    hex2bin(key, str, len / 2))
		return -EINVAL;
	return len / 2;
}

/* "add HOST KEY" or "remove HOST [KEYID]" */
static int rnbd_srv_host_key_cmd(char *buf)
{
	char *cmd = strsep(&buf, " "), *name = strsep(&buf, " "), *arg = buf;
	char hname[TRS_HOSTNAME_LEN] = {};
	struct rnbd_srv_host *host;
	u8 key[TRS_KEY_MAX], id[TRS_KEY_ID_LEN];
	unsigned int i;
	int len, err = 0;

	if (!cmd || !name || strlen(name) >= sizeof(hname))
		return -EINVAL;
	strscpy(hname, name, sizeof(hname));
	if (!trs_hostname_ok(hname))
		return -EINVAL;
	if (!strcmp(cmd, "add")) {
		len = arg ? rnbd_srv_parse_key(arg, key) : -EINVAL;
		if (len < 0) {
			/* hex2bin() may have written part of it */
			err = len;
			goto wipe;
		}
		err = trs_key_id(key, len, id);
		if (err)
			goto wipe;
		mutex_lock(&rnbd_srv_acl_mutex);
		host = rnbd_srv_host_find(hname);
		if (!host) {
			host = kzalloc(sizeof(*host), GFP_KERNEL);
			if (host) {
				memcpy(host->name, hname, sizeof(hname));
				list_add_tail(&host->entry, &rnbd_srv_hosts);
			}
		}
		if (!host)
			err = -ENOMEM;
		else if (host->nr_keys == RNBD_SRV_HOST_KEYS)
			err = -ENOSPC;
		for (i = 0; host && i < host->nr_keys && !err; i++)
			if (!memcmp(host->keys[i].id, id, sizeof(id)))
				err = -EEXIST;
		if (!err) {
			i = host->nr_keys++;
			memcpy(host->keys[i].id, id, sizeof(id));
			memcpy(host->keys[i].key, key, len);
			host->keys[i].len = len;
			/* a first key: its sessions without one must prove it */
			rnbd_srv_acl_changed();
		}
		mutex_unlock(&rnbd_srv_acl_mutex);
		goto wipe;
	}
	if (strcmp(cmd, "remove"))
		return -EINVAL;
	if (arg && (strlen(arg) != 2 * TRS_KEY_ID_LEN ||
		    hex2bin(id, arg, TRS_KEY_ID_LEN)))
		return -EINVAL;
	mutex_lock(&rnbd_srv_acl_mutex);
	host = rnbd_srv_host_find(hname);
	err = -ENOENT;
	for (i = 0; host && i < host->nr_keys; i++) {
		if (arg && memcmp(host->keys[i].id, id, sizeof(id)))
			continue;
		memzero_explicit(&host->keys[i], sizeof(host->keys[i]));
		host->nr_keys--;
		if (i < host->nr_keys)
			swap(host->keys[i], host->keys[host->nr_keys]);
		err = 0;
		i--;
	}
	if (host && !host->nr_keys) {
		list_del(&host->entry);
		kfree_sensitive(host);
	}
	if (!err)
		rnbd_srv_acl_changed();
	mutex_unlock(&rnbd_srv_acl_mutex);
	return err;

wipe:
	memzero_explicit(key, sizeof(key));
	return err;
}

/* A command written to a ctl file, which may hold a key: wiped after. */
static ssize_t rnbd_srv_acl_store(const char *buf, size_t count,
				  int (*cmd)(char *buf))
{
	char *str;
	int err;

	str = kstrndup(buf, count, GFP_KERNEL);
	if (!str)
		return -ENOMEM;
	err = cmd(strim(str));
	kfree_sensitive(str);
	return err ?: count;
}

static ssize_t host_key_store(struct device *dev, struct device_attribute *attr,
			      const char *buf, size_t count)
{
	return rnbd_srv_acl_store(buf, count, rnbd_srv_host_key_cmd);
}
static DEVICE_ATTR_WO(host_key);

/* One line per host: its name and its keys' ids, never the keys. */
static ssize_t hosts_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	struct rnbd_srv_host *host;
	unsigned int i;
	int len = 0;

	mutex_lock(&rnbd_srv_acl_mutex);
	list_for_each_entry(host, &rnbd_srv_hosts, entry) {
		len += sysfs_emit_at(buf, len, "%s", host->name);
		for (i = 0; i < host->nr_keys; i++)
			len += sysfs_emit_at(buf, len, " %*phN", TRS_KEY_ID_LEN,
					     host->keys[i].id);
		len += sysfs_emit_at(buf, len, "\n");
	}
	mutex_unlock(&rnbd_srv_acl_mutex);
	return len;
}
static DEVICE_ATTR_RO(hosts);

/* One line per export and host: PATH HOST|* rw|ro */
static ssize_t exports_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	struct rnbd_srv_acl *acl;
	int len = 0;

	mutex_lock(&rnbd_srv_acl_mutex);
	list_for_each_entry(acl, &rnbd_srv_acls, entry)
		len += sysfs_emit_at(buf, len, "%s %s %s\n", acl->path,
				     acl->host[0] ? acl->host : "*",
				     acl->rw ? "rw" : "ro");
	mutex_unlock(&rnbd_srv_acl_mutex);
	return len;
}

static struct rnbd_srv_acl *rnbd_srv_acl_find(const char *path,
					      const char *host)
{
	struct rnbd_srv_acl *acl;

	list_for_each_entry(acl, &rnbd_srv_acls, entry)
		if (!strcmp(acl->path, path) && !strcmp(acl->host, host))
			return acl;
	return NULL;
}

/* "add PATH HOST|* rw|ro" or "remove PATH [HOST|*]" */
static int rnbd_srv_exports_cmd(char *buf)
{
	char *cmd = strsep(&buf, " "), *path = strsep(&buf, " ");
	char *host = strsep(&buf, " "), *mode = strsep(&buf, " ");
	struct rnbd_srv_acl *acl, *tmp;
	char hname[TRS_HOSTNAME_LEN] = {};
	int err = 0;

	if (!cmd || !path || path[0] != '/' || strlen(path) >= RNBD_PATH_MAX ||
	    buf)
		return -EINVAL;
	if (host && strcmp(host, "*")) {
		if (strlen(host) >= sizeof(hname))
			return -EINVAL;
		strscpy(hname, host, sizeof(hname));
		if (!trs_hostname_ok(hname))
			return -EINVAL;
	}
	if (!strcmp(cmd, "add")) {
		if (!host || !mode || (strcmp(mode, "rw") && strcmp(mode, "ro")))
			return -EINVAL;
		mutex_lock(&rnbd_srv_acl_mutex);
		acl = rnbd_srv_acl_find(path, hname);
		if (!acl) {
			acl = kzalloc(sizeof(*acl), GFP_KERNEL);
			if (acl) {
				strscpy(acl->path, path, sizeof(acl->path));
				memcpy(acl->host, hname, sizeof(hname));
				list_add_tail(&acl->entry, &rnbd_srv_acls);
			} else {
				err = -ENOMEM;
			}
		}
		if (acl) {
			acl->rw = !strcmp(mode, "rw");
			/* rw to ro: its hosts' rw opens go */
			rnbd_srv_acl_changed();
		}
		mutex_unlock(&rnbd_srv_acl_mutex);
	} else if (!strcmp(cmd, "remove") && !mode) {
		err = -ENOENT;
		mutex_lock(&rnbd_srv_acl_mutex);
		list_for_each_entry_safe(acl, tmp, &rnbd_srv_acls, entry) {
			if (strcmp(acl->path, path) ||
			    (host && strcmp(acl->host, hname)))
				continue;
			list_del(&acl->entry);
			kfree(acl);
			err = 0;
		}
		if (!err)
			rnbd_srv_acl_changed();
		mutex_unlock(&rnbd_srv_acl_mutex);
	} else {
		return -EINVAL;
	}
	return err;
}

static ssize_t exports_store(struct device *dev, struct device_attribute *attr,
			     const char *buf, size_t count)
{
	return rnbd_srv_acl_store(buf, count, rnbd_srv_exports_cmd);
}
static DEVICE_ATTR_RW(exports);

static struct attribute *rnbd_srv_acl_attrs[] = {
	&dev_attr_host_key.attr,
	&dev_attr_hosts.attr,
	&dev_attr_exports.attr,
	NULL,
};

static const struct attribute_group rnbd_srv_acl_group = {
	.attrs	= rnbd_srv_acl_attrs,
};

const struct attribute_group *rnbd_srv_ctl_groups[] = {
	&rnbd_srv_acl_group,
	NULL,
};

/**
 * rnbd_srv_acl_exit() - forget every key and export
 *
 * Every session is gone.
 */
void rnbd_srv_acl_exit(void)
{
	struct rnbd_srv_host *host, *htmp;
	struct rnbd_srv_acl *acl, *atmp;

	cancel_work_sync(&rnbd_srv_acl_revoke);
	list_for_each_entry_safe(host, htmp, &rnbd_srv_hosts, entry)
		kfree_sensitive(host);
	list_for_each_entry_safe(acl, atmp, &rnbd_srv_acls, entry)
		kfree(acl);
}
