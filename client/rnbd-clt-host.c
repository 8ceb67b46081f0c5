// SPDX-License-Identifier: GPL-2.0-only
/*
 * rnbd client: the host's name and key, which every path of every
 * session presents to its server (Documentation/security.rst).
 *
 * The name is the hostname parameter (empty: the node name), read when a
 * session is created; the key is written to ctl/host_key ("rnbd:" and 64
 * to 128 hex digits, or "none"), never shown, and read at every connect of
 * a path, so that a new key serves the next reconnect.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <rnbd-compat.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "rnbd-clt.h"

/* guarded by the module's kernel_param_lock() */
static char rnbd_clt_hostname[TRS_HOSTNAME_LEN];

/* "" or a name trs_hostname_ok() takes; a trailing newline is dropped */
static int rnbd_clt_hostname_set(const char *val, const struct kernel_param *kp)
{
	char name[TRS_HOSTNAME_LEN] = {};
	size_t len = strcspn(val, "\n");

	if (len >= TRS_HOSTNAME_LEN || (val[len] && val[len + 1]))
		return -EINVAL;
	memcpy(name, val, len);
	if (len && !trs_hostname_ok(name))
		return -EINVAL;
	memcpy(rnbd_clt_hostname, name, sizeof(name));
	return 0;
}

static int rnbd_clt_hostname_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", rnbd_clt_hostname);
}

static const struct kernel_param_ops rnbd_clt_hostname_ops = {
	.set = rnbd_clt_hostname_set,
	.get = rnbd_clt_hostname_get,
};
module_param_cb(hostname, &rnbd_clt_hostname_ops, NULL, 0644);
MODULE_PARM_DESC(hostname,
		 "The name this host gives its servers, 1..63 characters of [A-Za-z0-9._:-]; empty: the node name (rnbdctl sets it from /etc/rnbd/hostname)");

/* guards rnbd_clt_key and rnbd_clt_key_len */
static DEFINE_MUTEX(rnbd_clt_key_mutex);
static u8 rnbd_clt_key[TRS_KEY_MAX];
static unsigned int rnbd_clt_key_len;

/**
 * rnbd_clt_host_name() - the host name a new session gives
 * @buf: TRS_HOSTNAME_LEN bytes out; "" for the node name
 */
void rnbd_clt_host_name(char *buf)
{
	kernel_param_lock(THIS_MODULE);
	strscpy(buf, rnbd_clt_hostname, TRS_HOSTNAME_LEN);
	kernel_param_unlock(THIS_MODULE);
}

/**
 * rnbd_clt_host_key() - the transport asks for the host's key
 * @priv: the session, unused: one key per host
 * @key: out, TRS_KEY_MAX bytes
 *
 * Return: the key's length, or 0 if the host has none.
 */
int rnbd_clt_host_key(void *priv, u8 *key)
{
	int len;

	mutex_lock(&rnbd_clt_key_mutex);
	len = rnbd_clt_key_len;
	memcpy(key, rnbd_clt_key, len);
	mutex_unlock(&rnbd_clt_key_mutex);
	return len;
}

static ssize_t host_key_store(struct device *dev, struct device_attribute *attr,
			      const char *buf, size_t count)
{
	u8 key[TRS_KEY_MAX];
	char *str, *hex;
	size_t len = 0;
	int err = 0;

	str = kstrndup(buf, count, GFP_KERNEL);
	if (!str)
		return -ENOMEM;
	hex = strim(str);
	if (strcmp(hex, "none")) {
		if (!strncmp(hex, "rnbd:", 5))
			hex += 5;
		len = strlen(hex) / 2;
		if (strlen(hex) % 2 || len < TRS_KEY_MIN || len > TRS_KEY_MAX ||
		    hex2bin(key, hex, len))
			err = -EINVAL;
	}
	kfree_sensitive(str);
	if (err)
		goto wipe;
	mutex_lock(&rnbd_clt_key_mutex);
	memzero_explicit(rnbd_clt_key, sizeof(rnbd_clt_key));
	memcpy(rnbd_clt_key, key, len);
	rnbd_clt_key_len = len;
	mutex_unlock(&rnbd_clt_key_mutex);
	pr_info("host key %s\n", len ? "set" : "removed");
wipe:
	memzero_explicit(key, sizeof(key));
	return err ?: count;
}
DEVICE_ATTR_WO(host_key);

/**
 * rnbd_clt_host_exit() - forget the key at unload
 */
void rnbd_clt_host_exit(void)
{
	memzero_explicit(rnbd_clt_key, sizeof(rnbd_clt_key));
}
