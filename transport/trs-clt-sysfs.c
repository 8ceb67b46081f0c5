// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport client: sysfs (Documentation/ABI/testing/
 * sysfs-class-rtrs-client).
 *
 *   /sys/class/rtrs-client/<sessname>/paths/<src@dst>/{state,hca_name,...}
 *   /sys/class/rtrs-client/<sessname>/paths/<src@dst>/conns/<i>/{cpu,...}
 *
 * The sysfs objects only point at the session and its connections and own
 * nothing of them.  trs_clt_sysfs_del() deletes them, which waits for
 * running show() calls, before the session is freed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/slab.h>
#include "trs-clt.h"

static struct class *trs_clt_class;

/**
 * struct trs_clt_kobj - a sysfs directory showing a session or connection
 * @kobj: the directory; its release frees only this struct
 * @sess: session shown
 * @conn: connection shown (conns/<i>), else NULL
 */
struct trs_clt_kobj {
	struct kobject		kobj;
	struct trs_clt_sess	*sess;
	struct trs_clt_conn	*conn;
};

static struct trs_clt_kobj *to_trs_clt_kobj(struct kobject *kobj)
{
	return container_of(kobj, struct trs_clt_kobj, kobj);
}

static ssize_t state_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	static const char * const names[] = {
		[TRS_CLT_CONNECTING]	= "connecting",
		[TRS_CLT_CONNECTED]	= "connected",
		[TRS_CLT_DISCONNECTED]	= "disconnected",
	};

	return sysfs_emit(buf, "%s\n",
			  names[READ_ONCE(to_trs_clt_kobj(kobj)->sess->state)]);
}

static ssize_t hca_name_show(struct kobject *kobj,
			     struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", to_trs_clt_kobj(kobj)->sess->hca_name);
}

static ssize_t hca_port_show(struct kobject *kobj,
			     struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", to_trs_clt_kobj(kobj)->sess->hca_port);
}

static ssize_t trs_clt_addr_show(const struct sockaddr_storage *addr,
				 char *buf)
{
	char str[TRS_ADDR_LEN];

	trs_addr_print((const struct sockaddr *)addr, str, sizeof(str));
	return sysfs_emit(buf, "%s\n", str);
}

static ssize_t src_addr_show(struct kobject *kobj,
			     struct kobj_attribute *attr, char *buf)
{
	return trs_clt_addr_show(&to_trs_clt_kobj(kobj)->sess->src, buf);
}

static ssize_t dst_addr_show(struct kobject *kobj,
			     struct kobj_attribute *attr, char *buf)
{
	return trs_clt_addr_show(&to_trs_clt_kobj(kobj)->sess->dst, buf);
}

static ssize_t cpu_show(struct kobject *kobj, struct kobj_attribute *attr,
			char *buf)
{
	return sysfs_emit(buf, "%u\n", to_trs_clt_kobj(kobj)->conn->idx);
}

/**
 * struct trs_clt_stat_attr - a counter file of conns/<i>
 * @kattr: the file
 * @offset: the counter in struct trs_clt_stats
 */
struct trs_clt_stat_attr {
	struct kobj_attribute	kattr;
	size_t			offset;
};

static ssize_t trs_clt_stat_show(struct kobject *kobj,
				 struct kobj_attribute *attr, char *buf)
{
	struct trs_clt_conn *conn = to_trs_clt_kobj(kobj)->conn;
	size_t offset = container_of(attr, struct trs_clt_stat_attr,
				     kattr)->offset;
	unsigned long flags;
	u64 val;

	spin_lock_irqsave(&conn->lock, flags);
	val = *(u64 *)((char *)&conn->stats + offset);
	spin_unlock_irqrestore(&conn->lock, flags);
	return sysfs_emit(buf, "%llu\n", val);
}

#define TRS_CLT_STAT(_name) {						\
	.kattr = {							\
		.attr	= { .name = __stringify(_name), .mode = 0444 },	\
		.show	= trs_clt_stat_show,				\
	},								\
	.offset = offsetof(struct trs_clt_stats, _name),		\
}

static struct trs_clt_stat_attr trs_clt_stat_attrs[] = {
	TRS_CLT_STAT(requests),
	TRS_CLT_STAT(bytes_read),
	TRS_CLT_STAT(bytes_written),
	TRS_CLT_STAT(wrs_posted),
};

static struct kobj_attribute trs_clt_attr_state = __ATTR_RO(state);
static struct kobj_attribute trs_clt_attr_hca_name = __ATTR_RO(hca_name);
static struct kobj_attribute trs_clt_attr_hca_port = __ATTR_RO(hca_port);
static struct kobj_attribute trs_clt_attr_src_addr = __ATTR_RO(src_addr);
static struct kobj_attribute trs_clt_attr_dst_addr = __ATTR_RO(dst_addr);
static struct kobj_attribute trs_clt_attr_cpu = __ATTR_RO(cpu);

static struct attribute *trs_clt_path_attrs[] = {
	&trs_clt_attr_state.attr,
	&trs_clt_attr_hca_name.attr,
	&trs_clt_attr_hca_port.attr,
	&trs_clt_attr_src_addr.attr,
	&trs_clt_attr_dst_addr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(trs_clt_path);

static struct attribute *trs_clt_conn_attrs[] = {
	&trs_clt_attr_cpu.attr,
	&trs_clt_stat_attrs[0].kattr.attr,
	&trs_clt_stat_attrs[1].kattr.attr,
	&trs_clt_stat_attrs[2].kattr.attr,
	&trs_clt_stat_attrs[3].kattr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(trs_clt_conn);

static void trs_clt_kobj_release(struct kobject *kobj)
{
	kfree(to_trs_clt_kobj(kobj));
}

static const struct kobj_type trs_clt_path_ktype = {
	.release	= trs_clt_kobj_release,
	.sysfs_ops	= &kobj_sysfs_ops,
	.default_groups	= trs_clt_path_groups,
};

static const struct kobj_type trs_clt_conn_ktype = {
	.release	= trs_clt_kobj_release,
	.sysfs_ops	= &kobj_sysfs_ops,
	.default_groups	= trs_clt_conn_groups,
};

static struct trs_clt_kobj *trs_clt_kobj_add(struct trs_clt_sess *sess,
					     struct trs_clt_conn *conn,
					     const struct kobj_type *ktype,
					     struct kobject *parent,
					     const char *name)
{
	struct trs_clt_kobj *tk;

	tk = TRS_FI(kzalloc(sizeof(*tk), GFP_KERNEL), NULL);
	if (!tk)
		return NULL;
	tk->sess = sess;
	tk->conn = conn;
	if (kobject_init_and_add(&tk->kobj, ktype, parent, "%s", name)) {
		kobject_put(&tk->kobj);
		return NULL;
	}
	return tk;
}

static void trs_clt_kobj_del(struct kobject *kobj)
{
	if (!kobj)
		return;
	kobject_del(kobj);
	kobject_put(kobj);
}

/**
 * trs_clt_sysfs_add() - create the sysfs directories of a session
 * @sess: session whose connections are up
 *
 * Undo with trs_clt_sysfs_del(), also after a failure.
 *
 * Return: 0 or a negative errno.
 */
int trs_clt_sysfs_add(struct trs_clt_sess *sess)
{
	char src[TRS_ADDR_LEN], dst[TRS_ADDR_LEN], name[2 * TRS_ADDR_LEN];
	u32 i;

	sess->dev = TRS_FI(device_create(trs_clt_class, NULL, MKDEV(0, 0),
					 NULL, "%s", sess->name),
			   ERR_PTR(-ENOMEM));
	if (IS_ERR(sess->dev)) {
		int err = PTR_ERR(sess->dev);

		sess->dev = NULL;
		return err;
	}
	sess->paths_kobj =
		TRS_FI(kobject_create_and_add("paths", &sess->dev->kobj), NULL);
	if (!sess->paths_kobj)
		goto remove;

	trs_addr_print((struct sockaddr *)&sess->src, src, sizeof(src));
	trs_addr_print((struct sockaddr *)&sess->dst, dst, sizeof(dst));
	snprintf(name, sizeof(name), "%s@%s", src, dst);
	sess->path_kobj = trs_clt_kobj_add(sess, NULL, &trs_clt_path_ktype,
					   sess->paths_kobj, name);
	if (!sess->path_kobj)
		goto remove;
	sess->conns_kobj = kobject_create_and_add("conns",
						  &sess->path_kobj->kobj);
	sess->conn_kobjs = TRS_FI(kcalloc(sess->nr_conns,
					  sizeof(*sess->conn_kobjs), GFP_KERNEL),
				  NULL);
	if (!sess->conns_kobj || !sess->conn_kobjs)
		goto remove;
	for (i = 0; i < sess->nr_conns; i++) {
		snprintf(name, sizeof(name), "%u", i);
		sess->conn_kobjs[i] = trs_clt_kobj_add(sess, &sess->conns[i],
						       &trs_clt_conn_ktype,
						       sess->conns_kobj, name);
		if (!sess->conn_kobjs[i])
			goto remove;
	}
	return 0;

remove:
	trs_clt_sysfs_del(sess);
	return -ENOMEM;
}

/**
 * trs_clt_sysfs_del() - delete the sysfs directories of a session
 * @sess: session; after this no show() runs on it
 */
void trs_clt_sysfs_del(struct trs_clt_sess *sess)
{
	u32 i;

	if (sess->conn_kobjs) {
		for (i = 0; i < sess->nr_conns; i++)
			if (sess->conn_kobjs[i])
				trs_clt_kobj_del(&sess->conn_kobjs[i]->kobj);
		kfree(sess->conn_kobjs);
		sess->conn_kobjs = NULL;
	}
	trs_clt_kobj_del(sess->conns_kobj);
	sess->conns_kobj = NULL;
	if (sess->path_kobj)
		trs_clt_kobj_del(&sess->path_kobj->kobj);
	sess->path_kobj = NULL;
	trs_clt_kobj_del(sess->paths_kobj);
	sess->paths_kobj = NULL;
	if (sess->dev)
		device_unregister(sess->dev);
	sess->dev = NULL;
}

/**
 * trs_clt_sysfs_init() - register the rtrs-client class
 *
 * Return: 0 or a negative errno.
 */
int trs_clt_sysfs_init(void)
{
	trs_clt_class = class_create(THIS_MODULE, "rtrs-client");
	return PTR_ERR_OR_ZERO(trs_clt_class);
}

/**
 * trs_clt_sysfs_exit() - unregister the rtrs-client class
 */
void trs_clt_sysfs_exit(void)
{
	class_destroy(trs_clt_class);
}
