// SPDX-License-Identifier: GPL-2.0-only
/*
 * rnbd client: sysfs.  /sys/class/rnbd-client/ctl/map_device parses map
 * requests; /sys/block/rnbdN/rnbd/ (a group of the disk's attributes)
 * describes and unmaps a device;
 * /sys/class/rnbd-client/ctl/devices/ links each device's name to its disk.
 * See Documentation/ABI/testing/sysfs-class-rnbd-client and
 * sysfs-block-rnbd.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/ctype.h>
#include <linux/device.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/kernfs.h>
#include <linux/module.h>
#include <linux/parser.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "rnbd-clt.h"

static struct class rnbd_clt_class = {
	.name	= "rnbd-client",
};

static struct device *rnbd_clt_ctl;
static struct kobject *rnbd_clt_devs_kobj;

enum {
	RNBD_OPT_SESSNAME,
	RNBD_OPT_PATH,
	RNBD_OPT_DEV_PATH,
	RNBD_OPT_ACCESS_MODE,
	RNBD_OPT_DEST_PORT,
	RNBD_OPT_ERR,
};

static const match_table_t rnbd_clt_opt_tokens = {
	{ RNBD_OPT_SESSNAME,	"sessname=%s"		},
	{ RNBD_OPT_PATH,	"path=%s"		},
	{ RNBD_OPT_DEV_PATH,	"device_path=%s"	},
	{ RNBD_OPT_ACCESS_MODE,	"access_mode=%s"	},
	{ RNBD_OPT_DEST_PORT,	"dest_port=%s"		},
	{ RNBD_OPT_ERR,		NULL			},
};

/*
 * Session names as upstream takes them ("host@server", dots and all), but
 * never one that is not a plain sysfs directory name: no '/', spaces or
 * control characters, not "." or "..", and no leading '.' (which tools
 * listing the directory skip).
 */
static int rnbd_clt_check_sessname(const char *s)
{
	size_t len = strlen(s);

	if (len > RNBD_CLT_SESSNAME_MAX) {
		pr_err("map_device: sessname longer than %d bytes\n",
		       RNBD_CLT_SESSNAME_MAX);
		return -EINVAL;
	}
	if (s[0] == '.') {
		pr_err("map_device: sessname may not start with '.'\n");
		return -EINVAL;
	}
	for (; *s; s++) {
		if (!isgraph(*s) || *s == '/') {
			pr_err("map_device: sessname may not contain '/', spaces or control characters\n");
			return -EINVAL;
		}
	}
	return 0;
}

static int rnbd_clt_check_dev_path(const char *s)
{
	if (strlen(s) >= RNBD_PATH_MAX) {
		pr_err("map_device: device_path longer than %d bytes\n",
		       RNBD_PATH_MAX - 1);
		return -EINVAL;
	}
	for (; *s; s++) {
		if (iscntrl(*s)) {
			pr_err("map_device: device_path contains a control character\n");
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * A path= value: "[SRC@]DST" or "[SRC,]DST" (upstream's forms), each an
 * "ip:" address; added to @opts.  One given twice (the same source, or
 * none, and destination) is refused: a typo in a multipath map would
 * else make a session of fewer paths than asked for.
 */
static int rnbd_clt_parse_path(char *val, struct rnbd_clt_map_opts *opts)
{
	struct trs_clt_path_addr addr = {};
	char *dst = strpbrk(val, "@,");
	unsigned int i;
	int err;

	if (dst) {
		*dst++ = '\0';
		err = trs_addr_parse(val, &addr.src) ?:
		      trs_addr_parse(dst, &addr.dst);
		if (!err && addr.src.ss_family != addr.dst.ss_family)
			err = -EINVAL;
	} else {
		err = trs_addr_parse(val, &addr.dst);
	}
	if (err) {
		pr_err("map_device: bad path '%.64s%s%.64s': want [SRC@]DST, each ip:<IPv4 or IPv6[%%scope]> (the same family)\n",
		       val, dst ? "@" : "", dst ?: "");
		return -EINVAL;
	}
	for (i = 0; i < opts->nr_paths; i++) {
		if (!memcmp(&opts->paths[i], &addr, sizeof(addr))) {
			pr_err("map_device: path '%.64s%s%.64s' given twice\n",
			       val, dst ? "@" : "", dst ?: "");
			return -EINVAL;
		}
	}
	if (opts->nr_paths == RNBD_CLT_MAX_PATHS) {
		pr_err("map_device: more than %d paths\n", RNBD_CLT_MAX_PATHS);
		return -EINVAL;
	}
	opts->paths[opts->nr_paths++] = addr;
	return 0;
}

/* One option of map_device; @val points into the caller's copy. */
static int rnbd_clt_parse_opt(int token, char *val,
			      struct rnbd_clt_map_opts *opts, u16 *port)
{
	switch (token) {
	case RNBD_OPT_SESSNAME:
		if (rnbd_clt_check_sessname(val))
			return -EINVAL;
		strscpy(opts->sessname, val, sizeof(opts->sessname));
		return 0;
	case RNBD_OPT_PATH:
		return rnbd_clt_parse_path(val, opts);
	case RNBD_OPT_DEV_PATH:
		if (rnbd_clt_check_dev_path(val))
			return -EINVAL;
		strscpy(opts->path, val, sizeof(opts->path));
		return 0;
	case RNBD_OPT_ACCESS_MODE:
		/* any case: the rnbd tool passes on the user's */
		if (!strcasecmp(val, "ro")) {
			opts->access_mode = RNBD_ACCESS_RO;
		} else if (!strcasecmp(val, "rw")) {
			opts->access_mode = RNBD_ACCESS_RW;
		} else if (!strcasecmp(val, "migration")) {
			opts->access_mode = RNBD_ACCESS_MIGRATION;
		} else {
			pr_err("map_device: access_mode must be ro, rw or migration\n");
			return -EINVAL;
		}
		return 0;
	case RNBD_OPT_DEST_PORT:
		if (kstrtou16(val, 10, port) || !*port) {
			pr_err("map_device: dest_port must be 1..65535\n");
			return -EINVAL;
		}
		return 0;
	}
	return -EINVAL;
}

/**
 * rnbd_clt_parse_map_opts() - parse a write to map_device
 * @buf: the written bytes, NUL terminated by sysfs
 * @count: their number
 * @opts: receives the options
 *
 * Space separated key=value tokens in any order, each key at most once
 * but path=, which may name up to RNBD_CLT_MAX_PATHS different paths; sessname and
 * device_path are required.  Every rejection logs one line.
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int rnbd_clt_parse_map_opts(const char *buf, size_t count,
			    struct rnbd_clt_map_opts *opts)
{
	char *options, *cur, *tok;
	substring_t args[MAX_OPT_ARGS];
	u16 port = 0;
	unsigned long seen = 0;
	unsigned int i;
	int token, err = -EINVAL;

	/* sysfs hands over at most a page: a full one may be truncated */
	if (count >= PAGE_SIZE) {
		pr_err("map_device: input of a page or more\n");
		return -EINVAL;
	}
	if (strnlen(buf, count) != count) {
		pr_err("map_device: input contains a NUL byte\n");
		return -EINVAL;
	}
	options = TRS_FI(kstrdup(buf, GFP_KERNEL), NULL);
	if (!options)
		return -ENOMEM;
	cur = strstrip(options);
	if (!*cur) {
		pr_err("map_device: empty input\n");
		goto free_options;
	}

	opts->access_mode = RNBD_ACCESS_RW;
	while ((tok = strsep(&cur, " "))) {
		if (!*tok)
			continue;
		token = match_token(tok, rnbd_clt_opt_tokens, args);
		if (token == RNBD_OPT_ERR) {
			pr_err("map_device: unknown option or empty value: '%.32s'\n",
			       tok);
			goto free_options;
		}
		if (__test_and_set_bit(token, &seen) &&
		    token != RNBD_OPT_PATH) {
			pr_err("map_device: option given twice: '%.32s'\n", tok);
			goto free_options;
		}
		/* "%s" matched up to the end of the token: args[0] ends in NUL */
		if (rnbd_clt_parse_opt(token, args[0].from, opts, &port))
			goto free_options;
	}

	if (!test_bit(RNBD_OPT_SESSNAME, &seen) ||
	    !test_bit(RNBD_OPT_DEV_PATH, &seen)) {
		pr_err("map_device: sessname= and device_path= are required\n");
		goto free_options;
	}
	if (port && !opts->nr_paths) {
		pr_err("map_device: dest_port= needs path=\n");
		goto free_options;
	}
	for (i = 0; i < opts->nr_paths; i++)
		trs_addr_set_port(&opts->paths[i].dst, port);
	err = 0;
free_options:
	kfree(options);
	return err;
}

static ssize_t map_device_show(struct device *d, struct device_attribute *attr,
			       char *page)
{
	return sysfs_emit(page,
			  "Usage: echo \"sessname=<session name> [path=[<src>@]<dst>] [dest_port=<port>] device_path=<path on the server> [access_mode=<ro|rw|migration>]\" > %s\n"
			  "  <src>, <dst>: ip:<IPv4 or IPv6[%%scope]>\n",
			  attr->attr.name);
}

static ssize_t map_device_store(struct device *d, struct device_attribute *attr,
				const char *buf, size_t count)
{
	struct rnbd_clt_map_opts *opts;
	int err;

	opts = TRS_FI(kzalloc(sizeof(*opts), GFP_KERNEL), NULL);
	if (!opts)
		return -ENOMEM;
	err = rnbd_clt_parse_map_opts(buf, count, opts);
	if (err)
		goto free_opts;
	/* Module exit unmaps everything: it must not run while we map. */
	if (!try_module_get(THIS_MODULE)) {
		err = -ENODEV;
		goto free_opts;
	}
	err = rnbd_clt_map_device(opts);
	module_put(THIS_MODULE);
free_opts:
	kfree(opts);
	return err ?: count;
}

static DEVICE_ATTR_RW(map_device);

static struct attribute *rnbd_clt_ctl_attrs[] = {
	&dev_attr_map_device.attr,
	&dev_attr_host_key.attr,
	NULL,
};
ATTRIBUTE_GROUPS(rnbd_clt_ctl);

/* The device of a disk's attribute: valid while its files exist. */
static struct rnbd_clt_dev *rnbd_clt_attr_dev(struct device *d)
{
	return dev_to_disk(d)->private_data;
}

static ssize_t session_show(struct device *d, struct device_attribute *attr,
			    char *page)
{
	return sysfs_emit(page, "%s\n", rnbd_clt_attr_dev(d)->sess->name);
}

static ssize_t mapping_path_show(struct device *d,
				 struct device_attribute *attr, char *page)
{
	return sysfs_emit(page, "%s\n", rnbd_clt_attr_dev(d)->path);
}

static ssize_t access_mode_show(struct device *d,
				struct device_attribute *attr, char *page)
{
	return sysfs_emit(page, "%s\n",
			  rnbd_access_mode_str(rnbd_clt_attr_dev(d)->access_mode));
}

static ssize_t state_show(struct device *d, struct device_attribute *attr,
			  char *page)
{
	static const char * const names[] = {
		[RNBD_CLT_DEV_MAPPING]		= "init",
		[RNBD_CLT_DEV_MAPPED]		= "open",
		[RNBD_CLT_DEV_HELD]		= "open",
		[RNBD_CLT_DEV_DISCONNECTED]	= "closed",
		[RNBD_CLT_DEV_UNMAPPING]	= "unmapping",
	};

	return sysfs_emit(page, "%s\n", names[READ_ONCE(rnbd_clt_attr_dev(d)->state)]);
}

static ssize_t unmap_device_show(struct device *d,
				 struct device_attribute *attr, char *page)
{
	return sysfs_emit(page, "Usage: echo <normal|force> > %s\n",
			  attr->attr.name);
}

static ssize_t unmap_device_store(struct device *d,
				  struct device_attribute *attr,
				  const char *buf, size_t count)
{
	struct rnbd_clt_dev *dev = rnbd_clt_attr_dev(d);
	bool force;
	int err;

	if (sysfs_streq(buf, "normal")) {
		force = false;
	} else if (sysfs_streq(buf, "force")) {
		force = true;
	} else {
		pr_err("%s: unmap_device: write \"normal\" or \"force\"\n",
		       dev->disk->disk_name);
		return -EINVAL;
	}
	/* Module exit unmaps everything: it must not run while we unmap. */
	if (!try_module_get(THIS_MODULE))
		return -ENODEV;
	/* On success @dev is gone. */
	err = rnbd_clt_unmap_device(dev, force, &attr->attr);
	module_put(THIS_MODULE);
	return err ?: count;
}

static ssize_t resize_show(struct device *d, struct device_attribute *attr,
			   char *page)
{
	return sysfs_emit(page, "Usage: echo <sectors> > %s\n",
			  attr->attr.name);
}

static ssize_t resize_store(struct device *d, struct device_attribute *attr,
			    const char *buf, size_t count)
{
	u64 sectors;
	int err;

	err = kstrtou64(buf, 0, &sectors);
	if (err)
		return err;
	return rnbd_clt_dev_resize(rnbd_clt_attr_dev(d), sectors) ?: count;
}

static ssize_t remap_device_show(struct device *d,
				 struct device_attribute *attr, char *page)
{
	return sysfs_emit(page, "Usage: echo 1 > %s\n", attr->attr.name);
}

static ssize_t remap_device_store(struct device *d,
				  struct device_attribute *attr,
				  const char *buf, size_t count)
{
	bool on;

	if (kstrtobool(buf, &on) || !on)
		return -EINVAL;
	return rnbd_clt_dev_remap(rnbd_clt_attr_dev(d)) ?: count;
}

static DEVICE_ATTR_RO(session);
static DEVICE_ATTR_RO(mapping_path);
static DEVICE_ATTR_RO(access_mode);
static DEVICE_ATTR_RO(state);
static DEVICE_ATTR_RW(unmap_device);
static DEVICE_ATTR_RW(resize);
static DEVICE_ATTR_RW(remap_device);

static struct attribute *rnbd_clt_dev_attrs[] = {
	&dev_attr_session.attr,
	&dev_attr_mapping_path.attr,
	&dev_attr_access_mode.attr,
	&dev_attr_state.attr,
	&dev_attr_unmap_device.attr,
	&dev_attr_resize.attr,
	&dev_attr_remap_device.attr,
	NULL,
};

/*
 * /sys/block/rnbdN/rnbd/: created with the disk, before its "add" uevent,
 * so that udev rules can read the files; removed with the disk.
 */
static const struct attribute_group rnbd_clt_disk_group = {
	.name	= "rnbd",
	.attrs	= rnbd_clt_dev_attrs,
};

const struct attribute_group *rnbd_clt_disk_groups[] = {
	&rnbd_clt_disk_group,
	NULL,
};

/* "/dev/a/b" in session "s" gives "!dev!a!b@s"; false if too long. */
static bool rnbd_clt_link_name(struct rnbd_clt_dev *dev)
{
	char *p;

	if (snprintf(dev->link_name, sizeof(dev->link_name), "%s@%s",
		     dev->path, dev->sess->name) >= sizeof(dev->link_name)) {
		dev->link_name[0] = '\0';
		return false;
	}
	for (p = dev->link_name; (p = strchr(p, '/')); p++)
		*p = '!';
	return true;
}

/**
 * rnbd_clt_dev_sysfs_add() - link @dev's disk in
 * /sys/class/rnbd-client/ctl/devices/
 * @dev: device whose disk was added
 *
 * Best effort: the link is skipped, with a warning, if its name is longer
 * than NAME_MAX or taken.
 */
void rnbd_clt_dev_sysfs_add(struct rnbd_clt_dev *dev)
{
	struct kobject *disk_kobj = &disk_to_dev(dev->disk)->kobj;
	int err;

	if (rnbd_clt_link_name(dev))
		err = sysfs_create_link_nowarn(rnbd_clt_devs_kobj, disk_kobj,
					       dev->link_name);
	else
		err = -ENAMETOOLONG;
	if (err) {
		pr_warn("%s: no link in %s/devices: %d\n", dev->disk->disk_name,
			dev_name(rnbd_clt_ctl), err);
		dev->link_name[0] = '\0';
	}
}

/*
 * Remove @attr, a file of the disk's rnbd/ group, from its own store, so
 * that deleting the disk does not wait for that store to return.  sysfs
 * does this for the files of a kobject's own directory only:
 * sysfs_remove_file_self() looks the file up in kobj->sd and uses nothing
 * else of the kobject.  A stand-in kobject that names the group's
 * directory (never initialised, registered or referenced) lets it find
 * the file there.
 */
static void rnbd_clt_remove_self(struct gendisk *disk,
				 const struct attribute *attr)
{
	struct kobject dir = {};

	dir.sd = kernfs_find_and_get(disk_to_dev(disk)->kobj.sd,
				     rnbd_clt_disk_group.name);
	/* the directory goes with the disk, after this store returns */
	if (WARN_ON_ONCE(!dir.sd))
		return;
	/*
	 * False: another store of the same file removed it first, and waited
	 * for that here.  Either way the file is gone and the disk's removal
	 * will not wait for this store.  The device's UNMAPPING state lets
	 * one unmap through, so this is not expected.
	 */
	if (!sysfs_remove_file_self(&dir, attr))
		pr_warn("%s: %s/%s was removed by another task\n",
			disk->disk_name, rnbd_clt_disk_group.name,
			attr->name);
	kernfs_put(dir.sd);
}

/**
 * rnbd_clt_dev_sysfs_remove() - undo rnbd_clt_dev_sysfs_add() before the
 * disk goes
 * @dev: device being unmapped
 * @self: attribute of @dev whose store is running, or NULL
 *
 * The rnbd/ files go with the disk; @self goes now, since deleting the
 * disk would wait for its store otherwise.
 */
void rnbd_clt_dev_sysfs_remove(struct rnbd_clt_dev *dev,
			       const struct attribute *self)
{
	if (dev->link_name[0])
		sysfs_remove_link(rnbd_clt_devs_kobj, dev->link_name);
	if (self)
		rnbd_clt_remove_self(dev->disk, self);
}

/**
 * rnbd_clt_sysfs_init() - create the rnbd-client class and its ctl device
 *
 * Return: 0 or a negative errno.
 */
int rnbd_clt_sysfs_init(void)
{
	int err;

	err = class_register(&rnbd_clt_class);
	if (err)
		return err;
	rnbd_clt_ctl =
		TRS_FI(device_create_with_groups(&rnbd_clt_class, NULL,
						 MKDEV(0, 0), NULL,
						 rnbd_clt_ctl_groups, "ctl"),
		       ERR_PTR(-ENOMEM));
	if (IS_ERR(rnbd_clt_ctl)) {
		err = PTR_ERR(rnbd_clt_ctl);
		goto unregister_class;
	}
	rnbd_clt_devs_kobj = kobject_create_and_add("devices",
						    &rnbd_clt_ctl->kobj);
	if (!rnbd_clt_devs_kobj) {
		err = -ENOMEM;
		goto destroy_ctl;
	}
	return 0;

destroy_ctl:
	device_unregister(rnbd_clt_ctl);
unregister_class:
	class_unregister(&rnbd_clt_class);
	return err;
}

/**
 * rnbd_clt_sysfs_exit() - undo rnbd_clt_sysfs_init(); every device is
 * unmapped already
 */
void rnbd_clt_sysfs_exit(void)
{
	kobject_put(rnbd_clt_devs_kobj);
	device_unregister(rnbd_clt_ctl);
	class_unregister(&rnbd_clt_class);
}
