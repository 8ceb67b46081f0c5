// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport server: sysfs, as upstream RTRS lays it out.
 *
 * /sys/class/rtrs-server/<session>/paths/<client addr>@<server addr>/ with
 * src_addr (the client's), dst_addr (ours), hca_name, hca_port, state,
 * stats/rdma and disconnect.  A session's directory exists from its user
 * open until its last path left; a path's from its open until its close
 * work unlinks it.  A directory points at its object and owns nothing:
 * the object outlives it.  sysfs failures are logged and otherwise
 * ignored: the session works without its directory.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/slab.h>
#include "trs-srv.h"

struct class trs_srv_class = {
	.name	= "rtrs-server",
};

/**
 * struct trs_srv_kobj - a sysfs directory of a path
 * @kobj: the directory
 * @path: the path it shows
 */
struct trs_srv_kobj {
	struct kobject		kobj;
	struct trs_srv_path	*path;
};

static struct trs_srv_path *to_path(struct kobject *kobj)
{
	return container_of(kobj, struct trs_srv_kobj, kobj)->path;
}

static ssize_t src_addr_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	return trs_addr_show(&to_path(kobj)->dst, buf);
}

static ssize_t dst_addr_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	return trs_addr_show(&to_path(kobj)->src, buf);
}

static ssize_t hca_name_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%s\n", dev_name(&to_path(kobj)->ibdev->dev));
}

static ssize_t hca_port_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%u\n", to_path(kobj)->hca_port);
}

static ssize_t state_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  READ_ONCE(to_path(kobj)->state) == TRS_SRV_OPEN ?
			  "connected" : "disconnected");
}

static ssize_t disconnect_store(struct kobject *kobj,
				struct kobj_attribute *attr, const char *buf,
				size_t count)
{
	struct trs_srv_path *path = to_path(kobj);

	if (!sysfs_streq(buf, "1"))
		return -EINVAL;
	trs_srv_path_fail(path, "disconnected by the administrator");
	return count;
}

static struct kobj_attribute trs_srv_attr_src_addr = __ATTR_RO(src_addr);
static struct kobj_attribute trs_srv_attr_dst_addr = __ATTR_RO(dst_addr);
static struct kobj_attribute trs_srv_attr_hca_name = __ATTR_RO(hca_name);
static struct kobj_attribute trs_srv_attr_hca_port = __ATTR_RO(hca_port);
static struct kobj_attribute trs_srv_attr_state = __ATTR_RO(state);
static struct kobj_attribute trs_srv_attr_disconnect =
	__ATTR(disconnect, 0644, trs_usage_show, disconnect_store);

static struct attribute *trs_srv_path_attrs[] = {
	&trs_srv_attr_src_addr.attr,
	&trs_srv_attr_dst_addr.attr,
	&trs_srv_attr_hca_name.attr,
	&trs_srv_attr_hca_port.attr,
	&trs_srv_attr_state.attr,
	&trs_srv_attr_disconnect.attr,
	NULL,
};
ATTRIBUTE_GROUPS(trs_srv_path);

/* read_cnt read_bytes write_cnt write_bytes inflight, as upstream */
static ssize_t rdma_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	struct trs_srv_path *path = to_path(kobj);
	u64 reads = 0, rbytes = 0, writes = 0, wbytes = 0;
	u32 i, inflight;

	for (i = 0; i < path->conn_cnt; i++) {
		struct trs_srv_conn *conn = READ_ONCE(path->conns[i]);

		if (!conn)
			continue;
		reads += READ_ONCE(conn->stats.reads);
		rbytes += READ_ONCE(conn->stats.read_bytes);
		writes += READ_ONCE(conn->stats.writes);
		wbytes += READ_ONCE(conn->stats.write_bytes);
	}
	inflight = bitmap_weight(path->busy, path->queue_depth);
	return sysfs_emit(buf, "%llu %llu %llu %llu %u\n", reads, rbytes,
			  writes, wbytes, inflight);
}

static struct kobj_attribute trs_srv_attr_rdma = __ATTR_RO(rdma);

static struct attribute *trs_srv_stats_attrs[] = {
	&trs_srv_attr_rdma.attr,
	NULL,
};
ATTRIBUTE_GROUPS(trs_srv_stats);

static void trs_srv_kobj_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct trs_srv_kobj, kobj));
}

static const struct kobj_type trs_srv_path_ktype = {
	.sysfs_ops	= &kobj_sysfs_ops,
	.release	= trs_srv_kobj_release,
	.default_groups	= trs_srv_path_groups,
};

static const struct kobj_type trs_srv_stats_ktype = {
	.sysfs_ops	= &kobj_sysfs_ops,
	.release	= trs_srv_kobj_release,
	.default_groups	= trs_srv_stats_groups,
};

static struct kobject *trs_srv_kobj_add(struct trs_srv_path *path,
					const struct kobj_type *ktype,
					struct kobject *parent,
					const char *name)
{
	struct trs_srv_kobj *k;

	k = TRS_FI(kzalloc(sizeof(*k), GFP_KERNEL), NULL);
	if (!k)
		return NULL;
	k->path = path;
	/* from here kobject_put() frees it, even if the add fails */
	kobject_init(&k->kobj, ktype);
	if (TRS_FI(kobject_add(&k->kobj, parent, "%s", name), -ENOMEM)) {
		kobject_put(&k->kobj);
		return NULL;
	}
	return &k->kobj;
}

/* The client's host name (TRS_CAP_AUTH), empty without it. */
static ssize_t hostname_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	struct trs_srv_sess *sess = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%s\n", sess->host);
}
static DEVICE_ATTR_RO(hostname);

static struct attribute *trs_srv_sess_attrs[] = {
	&dev_attr_hostname.attr,
	NULL,
};
ATTRIBUTE_GROUPS(trs_srv_sess);

/**
 * trs_srv_sysfs_sess_add() - create the directory of a session
 * @sess: a session the user just opened
 */
void trs_srv_sysfs_sess_add(struct trs_srv_sess *sess)
{
	struct device *dev;

	dev = TRS_FI(device_create_with_groups(&trs_srv_class, NULL,
					       MKDEV(0, 0), sess,
					       trs_srv_sess_groups, "%s",
					       sess->name), ERR_PTR(-ENOMEM));
	if (IS_ERR(dev)) {
		pr_warn("%s: no sysfs directory: %pe\n", sess->name, dev);
		return;
	}
	sess->paths_kobj = TRS_FI(kobject_create_and_add("paths", &dev->kobj),
				  NULL);
	if (!sess->paths_kobj) {
		pr_warn("%s: no sysfs paths directory\n", sess->name);
		device_unregister(dev);
		return;
	}
	sess->dev = dev;
}

/**
 * trs_srv_sysfs_sess_del() - delete the directory of a session
 * @sess: a session whose paths are gone from sysfs
 */
void trs_srv_sysfs_sess_del(struct trs_srv_sess *sess)
{
	if (!sess->dev)
		return;
	kobject_put(sess->paths_kobj);
	sess->paths_kobj = NULL;
	device_unregister(sess->dev);
	sess->dev = NULL;
}

/**
 * trs_srv_sysfs_path_add() - create the directory of a path
 * @path: a path that just opened; its session's directory exists if
 *	sysfs had the memory
 */
void trs_srv_sysfs_path_add(struct trs_srv_path *path)
{
	char clt[TRS_ADDR_LEN], srv[TRS_ADDR_LEN], name[2 * TRS_ADDR_LEN];

	if (!path->sess->paths_kobj)
		return;
	trs_addr_print((struct sockaddr *)&path->dst, clt, sizeof(clt));
	trs_addr_print((struct sockaddr *)&path->src, srv, sizeof(srv));
	snprintf(name, sizeof(name), "%s@%s", clt, srv);
	path->kobj = trs_srv_kobj_add(path, &trs_srv_path_ktype,
				      path->sess->paths_kobj, name);
	if (path->kobj)
		path->stats_kobj = trs_srv_kobj_add(path, &trs_srv_stats_ktype,
						    path->kobj, "stats");
	if (path->stats_kobj)
		return;
	/* no directory rather than one without its stats */
	trs_kobj_del(path->kobj);
	path->kobj = NULL;
	pr_warn("%s: no sysfs directory %s\n", path->name, name);
}

/**
 * trs_srv_sysfs_path_del() - delete the directory of a path
 * @path: the path; after this no show() or store() runs on it
 */
void trs_srv_sysfs_path_del(struct trs_srv_path *path)
{
	trs_kobj_del(path->stats_kobj);
	path->stats_kobj = NULL;
	trs_kobj_del(path->kobj);
	path->kobj = NULL;
}
