// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport client: sysfs (Documentation/ABI/testing/
 * sysfs-class-rtrs-client).
 *
 *   /sys/class/rtrs-client/<sessname>/{reconnect_delay_sec,...}
 *   /sys/class/rtrs-client/<sessname>/paths/<src@dst>/{state,hca_name,...}
 *   /sys/class/rtrs-client/<sessname>/paths/<src@dst>/stats/{rdma,...}
 *   /sys/class/rtrs-client/<sessname>/paths/<src@dst>/conns/<i>/{cpu,...}
 *
 * The sysfs objects only point at the session, its path and its
 * connections and own nothing of them.  trs_clt_sysfs_del() deletes them,
 * which waits for running show() calls, before the session is freed.  The
 * path keeps its directory across reconnects; hca_name, hca_port and
 * src_addr show the last connect.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/slab.h>
#include "trs-clt.h"

struct class trs_clt_class = {
	.name	= "rtrs-client",
};

/**
 * struct trs_clt_kobj - a sysfs directory showing a path or connection
 * @kobj: the directory; its release frees only this struct
 * @path: path shown
 * @conn: connection shown (conns/<i>), else NULL
 */
struct trs_clt_kobj {
	struct kobject		kobj;
	struct trs_clt_path	*path;
	struct trs_clt_conn	*conn;
};

static struct trs_clt_kobj *to_trs_clt_kobj(struct kobject *kobj)
{
	return container_of(kobj, struct trs_clt_kobj, kobj);
}

static ssize_t state_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	struct trs_clt_path *path = to_trs_clt_kobj(kobj)->path;

	return sysfs_emit(buf, "%s\n",
			  trs_clt_path_state_name(trs_clt_path_state(path)));
}

static ssize_t hca_name_show(struct kobject *kobj,
			     struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", to_trs_clt_kobj(kobj)->path->hca_name);
}

static ssize_t hca_port_show(struct kobject *kobj,
			     struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", to_trs_clt_kobj(kobj)->path->hca_port);
}

static ssize_t src_addr_show(struct kobject *kobj,
			     struct kobj_attribute *attr, char *buf)
{
	struct trs_clt_path *path = to_trs_clt_kobj(kobj)->path;
	struct sockaddr_storage src;

	spin_lock_irq(&path->state_lock);
	src = path->src;
	spin_unlock_irq(&path->state_lock);
	return trs_addr_show(&src, buf);
}

static ssize_t dst_addr_show(struct kobject *kobj,
			     struct kobj_attribute *attr, char *buf)
{
	return trs_addr_show(&to_trs_clt_kobj(kobj)->path->dst, buf);
}

/* Mean of the connections' reply latencies (min-latency policy), in ns. */
static ssize_t cur_latency_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	struct trs_clt_path *path = to_trs_clt_kobj(kobj)->path;
	u64 sum = 0;
	u32 i, n = 0;

	for (i = 0; i < path->nr_conns; i++) {
		u64 ns = READ_ONCE(path->conns[i].lat_ns);

		if (ns) {
			sum += ns;
			n++;
		}
	}
	return sysfs_emit(buf, "%llu\n", n ? div_u64(sum, n) : 0);
}

/* disconnect, reconnect and remove_path: "1" does it */
static ssize_t trs_clt_path_cmd_store(struct kobject *kobj,
				      struct kobj_attribute *attr,
				      const char *buf, size_t count)
{
	struct trs_clt_path *path = to_trs_clt_kobj(kobj)->path;
	int err;

	if (!sysfs_streq(buf, "1"))
		return -EINVAL;
	if (!strcmp(attr->attr.name, "disconnect"))
		err = trs_clt_path_disconnect(path);
	else if (!strcmp(attr->attr.name, "reconnect"))
		err = trs_clt_path_reconnect(path);
	else if (!strcmp(attr->attr.name, "remove_path"))
		err = trs_clt_remove_path(path, kobj, attr);
	else
		err = -EINVAL;
	return err ?: count;
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
	TRS_CLT_STAT(write_ack_waits),
};

/*
 * paths/<src@dst>/stats/: upstream RTRS's formats, so that its tools read
 * them.  rdma: reads, bytes read, writes, bytes written, requests in
 * flight, requests moved to another path (none: one path per session).
 */
static ssize_t rdma_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	struct trs_clt_path *path = to_trs_clt_kobj(kobj)->path;
	u64 reads = 0, writes = 0, rbytes = 0, wbytes = 0;
	struct trs_clt_conn *conn;
	unsigned long flags;
	u32 i, inflight = 0;

	for (i = 0; i < path->nr_conns; i++) {
		conn = &path->conns[i];
		spin_lock_irqsave(&conn->lock, flags);
		reads += conn->stats.reads;
		rbytes += conn->stats.bytes_read;
		writes += conn->stats.writes;
		wbytes += conn->stats.bytes_written;
		inflight += conn->inflight;
		spin_unlock_irqrestore(&conn->lock, flags);
	}
	return sysfs_emit(buf, "%llu %llu %llu %llu %u %u\n", reads, rbytes,
			  writes, wbytes, inflight, READ_ONCE(path->failovers));
}

/*
 * Upstream's table: a header of CPUs, then per CPU the replies to its
 * requests that completed elsewhere ("from") and the replies it completed
 * for other CPUs ("to").
 */
static ssize_t cpu_migration_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	struct trs_clt_path *path = to_trs_clt_kobj(kobj)->path;
	unsigned long flags;
	int cpu, len = 0;
	u64 from;

	len += sysfs_emit_at(buf, len, "    ");
	for_each_possible_cpu(cpu)
		len += sysfs_emit_at(buf, len, " CPU%u", cpu);
	len += sysfs_emit_at(buf, len, "\nfrom:");
	for_each_possible_cpu(cpu) {
		from = 0;
		if (cpu < path->nr_conns) {
			spin_lock_irqsave(&path->conns[cpu].lock, flags);
			from = path->conns[cpu].stats.cpu_migr_from;
			spin_unlock_irqrestore(&path->conns[cpu].lock, flags);
		}
		len += sysfs_emit_at(buf, len, " %llu", from);
	}
	len += sysfs_emit_at(buf, len, "\nto  :");
	for_each_possible_cpu(cpu)
		len += sysfs_emit_at(buf, len, " %u",
				     READ_ONCE(*per_cpu_ptr(path->cpu_migr_to,
							    cpu)));
	len += sysfs_emit_at(buf, len, "\n");
	return len;
}

/* reconnects: successful ones, then failed attempts */
static ssize_t reconnects_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	struct trs_clt_path *path = to_trs_clt_kobj(kobj)->path;

	return sysfs_emit(buf, "%u %u\n", READ_ONCE(path->reconnects),
			  READ_ONCE(path->reconnect_fails));
}

static ssize_t reset_all_show(struct kobject *kobj,
			      struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "echo 1 to reset all statistics\n");
}

/* Writing 1 zeroes the path's counters and its connections'. */
static ssize_t trs_clt_stats_reset(struct kobject *kobj,
				   struct kobj_attribute *attr,
				   const char *buf, size_t count)
{
	struct trs_clt_path *path = to_trs_clt_kobj(kobj)->path;
	struct trs_clt_conn *conn;
	unsigned long flags;
	bool on;
	int cpu;
	u32 i;

	if (kstrtobool(buf, &on) || !on)
		return -EINVAL;
	for (i = 0; i < path->nr_conns; i++) {
		conn = &path->conns[i];
		spin_lock_irqsave(&conn->lock, flags);
		memset(&conn->stats, 0, sizeof(conn->stats));
		spin_unlock_irqrestore(&conn->lock, flags);
	}
	WRITE_ONCE(path->reconnects, 0);
	WRITE_ONCE(path->reconnect_fails, 0);
	WRITE_ONCE(path->failovers, 0);
	for_each_possible_cpu(cpu)
		WRITE_ONCE(*per_cpu_ptr(path->cpu_migr_to, cpu), 0);
	return count;
}

static struct kobj_attribute trs_clt_attr_rdma =
	__ATTR(rdma, 0644, rdma_show, trs_clt_stats_reset);
static struct kobj_attribute trs_clt_attr_reconnects =
	__ATTR(reconnects, 0644, reconnects_show, trs_clt_stats_reset);
static struct kobj_attribute trs_clt_attr_cpu_migration =
	__ATTR(cpu_migration, 0644, cpu_migration_show, trs_clt_stats_reset);
static struct kobj_attribute trs_clt_attr_reset_all =
	__ATTR(reset_all, 0644, reset_all_show, trs_clt_stats_reset);

static struct attribute *trs_clt_stats_attrs[] = {
	&trs_clt_attr_rdma.attr,
	&trs_clt_attr_reconnects.attr,
	&trs_clt_attr_cpu_migration.attr,
	&trs_clt_attr_reset_all.attr,
	NULL,
};
ATTRIBUTE_GROUPS(trs_clt_stats);

static struct kobj_attribute trs_clt_attr_state = __ATTR_RO(state);
static struct kobj_attribute trs_clt_attr_hca_name = __ATTR_RO(hca_name);
static struct kobj_attribute trs_clt_attr_hca_port = __ATTR_RO(hca_port);
static struct kobj_attribute trs_clt_attr_src_addr = __ATTR_RO(src_addr);
static struct kobj_attribute trs_clt_attr_dst_addr = __ATTR_RO(dst_addr);
static struct kobj_attribute trs_clt_attr_cur_latency =
	__ATTR_RO(cur_latency);
static struct kobj_attribute trs_clt_attr_disconnect =
	__ATTR(disconnect, 0644, trs_usage_show, trs_clt_path_cmd_store);
static struct kobj_attribute trs_clt_attr_reconnect =
	__ATTR(reconnect, 0644, trs_usage_show, trs_clt_path_cmd_store);
static struct kobj_attribute trs_clt_attr_remove_path =
	__ATTR(remove_path, 0644, trs_usage_show, trs_clt_path_cmd_store);
static struct kobj_attribute trs_clt_attr_cpu = __ATTR_RO(cpu);

static struct attribute *trs_clt_path_attrs[] = {
	&trs_clt_attr_state.attr,
	&trs_clt_attr_hca_name.attr,
	&trs_clt_attr_hca_port.attr,
	&trs_clt_attr_src_addr.attr,
	&trs_clt_attr_dst_addr.attr,
	&trs_clt_attr_cur_latency.attr,
	&trs_clt_attr_disconnect.attr,
	&trs_clt_attr_reconnect.attr,
	&trs_clt_attr_remove_path.attr,
	NULL,
};
ATTRIBUTE_GROUPS(trs_clt_path);

static struct attribute *trs_clt_conn_attrs[] = {
	&trs_clt_attr_cpu.attr,
	&trs_clt_stat_attrs[0].kattr.attr,
	&trs_clt_stat_attrs[1].kattr.attr,
	&trs_clt_stat_attrs[2].kattr.attr,
	&trs_clt_stat_attrs[3].kattr.attr,
	&trs_clt_stat_attrs[4].kattr.attr,
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

static const struct kobj_type trs_clt_stats_ktype = {
	.release	= trs_clt_kobj_release,
	.sysfs_ops	= &kobj_sysfs_ops,
	.default_groups	= trs_clt_stats_groups,
};

static const struct kobj_type trs_clt_conn_ktype = {
	.release	= trs_clt_kobj_release,
	.sysfs_ops	= &kobj_sysfs_ops,
	.default_groups	= trs_clt_conn_groups,
};

static struct trs_clt_kobj *trs_clt_kobj_add(struct trs_clt_path *path,
					     struct trs_clt_conn *conn,
					     const struct kobj_type *ktype,
					     struct kobject *parent,
					     const char *name)
{
	struct trs_clt_kobj *tk;

	tk = TRS_FI(kzalloc(sizeof(*tk), GFP_KERNEL), NULL);
	if (!tk)
		return NULL;
	tk->path = path;
	tk->conn = conn;
	if (kobject_init_and_add(&tk->kobj, ktype, parent, "%s", name)) {
		kobject_put(&tk->kobj);
		return NULL;
	}
	return tk;
}

/*
 * The session's recovery tunables: seconds, 1 up to a day, and
 * max_reconnect_attempts, -1 (never give up) or 0..INT_MAX.
 */
#define TRS_CLT_MAX_TUNABLE_SEC	(24 * 3600)

/**
 * struct trs_clt_sec_attr - a seconds tunable of the session directory
 * @attr: the file
 * @offset: the u32 in struct trs_clt_sess
 */
struct trs_clt_sec_attr {
	struct device_attribute	attr;
	size_t			offset;
};

static u32 *trs_clt_sec_field(struct device *dev,
			      struct device_attribute *attr)
{
	struct trs_clt_sess *sess = dev_get_drvdata(dev);
	size_t offset = container_of(attr, struct trs_clt_sec_attr,
				     attr)->offset;

	return (u32 *)((char *)sess + offset);
}

static ssize_t trs_clt_sec_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(*trs_clt_sec_field(dev, attr)));
}

static ssize_t trs_clt_sec_store(struct device *dev,
				 struct device_attribute *attr,
				 const char *buf, size_t count)
{
	u32 sec;
	int err;

	err = kstrtou32(buf, 0, &sec);
	if (err)
		return err;
	if (!sec || sec > TRS_CLT_MAX_TUNABLE_SEC)
		return -EINVAL;
	WRITE_ONCE(*trs_clt_sec_field(dev, attr), sec);
	return count;
}

#define TRS_CLT_SEC_ATTR(_name) {					\
	.attr	= __ATTR(_name, 0644, trs_clt_sec_show, trs_clt_sec_store),	\
	.offset	= offsetof(struct trs_clt_sess, _name),			\
}

static struct trs_clt_sec_attr trs_clt_sec_attrs[] = {
	TRS_CLT_SEC_ATTR(reconnect_delay_sec),
	TRS_CLT_SEC_ATTR(loss_timeout_sec),
};

/* trs_clt_sess_attrs lists each by its index */
static_assert(ARRAY_SIZE(trs_clt_sec_attrs) == 2);

static ssize_t max_reconnect_attempts_show(struct device *dev,
					   struct device_attribute *attr,
					   char *buf)
{
	struct trs_clt_sess *sess = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%d\n", READ_ONCE(sess->max_reconnect_attempts));
}

static ssize_t max_reconnect_attempts_store(struct device *dev,
					    struct device_attribute *attr,
					    const char *buf, size_t count)
{
	struct trs_clt_sess *sess = dev_get_drvdata(dev);
	int val, err;

	err = kstrtoint(buf, 0, &val);
	if (err)
		return err;
	if (val < -1)
		return -EINVAL;
	WRITE_ONCE(sess->max_reconnect_attempts, val);
	return count;
}

static DEVICE_ATTR_RW(max_reconnect_attempts);

static const char *const trs_clt_mp_names[] = {
	[TRS_CLT_MP_RR]			= "round-robin (RR: 0)",
	[TRS_CLT_MP_MIN_INFLIGHT]	= "min-inflight (MI: 1)",
	[TRS_CLT_MP_MIN_LATENCY]	= "min-latency (ML: 2)",
};

static ssize_t mpath_policy_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	struct trs_clt_sess *sess = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%s\n",
			  trs_clt_mp_names[READ_ONCE(sess->mp_policy)]);
}

/* Takes a policy's number or its name, as upstream. */
static ssize_t mpath_policy_store(struct device *dev,
				  struct device_attribute *attr,
				  const char *buf, size_t count)
{
	static const char *const names[] = {
		[TRS_CLT_MP_RR]			= "round-robin",
		[TRS_CLT_MP_MIN_INFLIGHT]	= "min-inflight",
		[TRS_CLT_MP_MIN_LATENCY]	= "min-latency",
	};
	struct trs_clt_sess *sess = dev_get_drvdata(dev);
	int policy, i;

	policy = sysfs_match_string(names, buf);
	if (policy < 0) {
		if (kstrtoint(buf, 0, &i) || i < 0 || i >= ARRAY_SIZE(names))
			return -EINVAL;
		policy = i;
	}
	WRITE_ONCE(sess->mp_policy, policy);
	return count;
}

static DEVICE_ATTR_RW(mpath_policy);

/* "[SRC@|SRC,]DST", each "ip:ADDR[%IF]" */
static int trs_clt_parse_path(const char *buf, struct trs_clt_path_addr *addr)
{
	char *str, *dst, *sep;
	int err = 0;

	memset(addr, 0, sizeof(*addr));
	str = kstrndup(buf, PAGE_SIZE, GFP_KERNEL);
	if (!str)
		return -ENOMEM;
	dst = strim(str);
	sep = strpbrk(dst, "@,");
	if (sep) {
		*sep = '\0';
		err = trs_addr_parse(dst, &addr->src);
		dst = sep + 1;
	}
	err = err ?: trs_addr_parse(dst, &addr->dst);
	kfree(str);
	return err;
}

static ssize_t add_path_show(struct device *dev,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "Usage: echo [<source addr>@]<destination addr> > %s\n%s\n",
			  attr->attr.name,
			  "<addr> ::= ip:<ipv4> | ip:<ipv6>[%<interface>]");
}

static ssize_t add_path_store(struct device *dev,
			      struct device_attribute *attr,
			      const char *buf, size_t count)
{
	struct trs_clt_sess *sess = dev_get_drvdata(dev);
	struct trs_clt_path_addr addr;
	int err;

	err = trs_clt_parse_path(buf, &addr);
	if (err) {
		pr_err("%s: add_path: cannot parse '%s'\n", sess->name, buf);
		return err;
	}
	err = trs_clt_add_path(sess, &addr);
	return err ?: count;
}

static DEVICE_ATTR_RW(add_path);

static struct attribute *trs_clt_sess_attrs[] = {
	&trs_clt_sec_attrs[0].attr.attr,
	&trs_clt_sec_attrs[1].attr.attr,
	&dev_attr_max_reconnect_attempts.attr,
	&dev_attr_mpath_policy.attr,
	&dev_attr_add_path.attr,
	NULL,
};
ATTRIBUTE_GROUPS(trs_clt_sess);

/**
 * trs_clt_path_sysfs_add() - create the sysfs directories of a path
 * @path: a path that was set up, of a session in sysfs
 *
 * Undo with trs_clt_path_sysfs_del(), also after a failure.
 *
 * Return: 0 or a negative errno.
 */
int trs_clt_path_sysfs_add(struct trs_clt_path *path)
{
	char src[TRS_ADDR_LEN], dst[TRS_ADDR_LEN], name[2 * TRS_ADDR_LEN];
	u32 i;

	trs_addr_print((struct sockaddr *)&path->src, src, sizeof(src));
	trs_addr_print((struct sockaddr *)&path->dst, dst, sizeof(dst));
	snprintf(name, sizeof(name), "%s@%s", src, dst);
	path->kobj = trs_clt_kobj_add(path, NULL, &trs_clt_path_ktype,
				      path->sess->paths_kobj, name);
	if (!path->kobj)
		return -ENOMEM;
	path->stats_kobj = trs_clt_kobj_add(path, NULL, &trs_clt_stats_ktype,
					    &path->kobj->kobj, "stats");
	if (!path->stats_kobj)
		return -ENOMEM;
	path->conns_kobj = kobject_create_and_add("conns", &path->kobj->kobj);
	path->conn_kobjs = TRS_FI(kcalloc(path->nr_conns,
					  sizeof(*path->conn_kobjs), GFP_KERNEL),
				  NULL);
	if (!path->conns_kobj || !path->conn_kobjs)
		return -ENOMEM;
	for (i = 0; i < path->nr_conns; i++) {
		snprintf(name, sizeof(name), "%u", i);
		path->conn_kobjs[i] = trs_clt_kobj_add(path, &path->conns[i],
						       &trs_clt_conn_ktype,
						       path->conns_kobj, name);
		if (!path->conn_kobjs[i])
			return -ENOMEM;
	}
	return 0;
}

/**
 * trs_clt_path_sysfs_del() - delete the sysfs directories of a path
 * @path: the path; after this no show() or store() runs on it
 */
void trs_clt_path_sysfs_del(struct trs_clt_path *path)
{
	u32 i;

	if (path->conn_kobjs) {
		for (i = 0; i < path->nr_conns; i++)
			if (path->conn_kobjs[i])
				trs_kobj_del(&path->conn_kobjs[i]->kobj);
		kfree(path->conn_kobjs);
		path->conn_kobjs = NULL;
	}
	trs_kobj_del(path->conns_kobj);
	path->conns_kobj = NULL;
	if (path->stats_kobj)
		trs_kobj_del(&path->stats_kobj->kobj);
	path->stats_kobj = NULL;
	if (path->kobj)
		trs_kobj_del(&path->kobj->kobj);
	path->kobj = NULL;
}

/**
 * trs_clt_sysfs_add() - create the sysfs directory of a session
 * @sess: session whose first path is up
 *
 * Undo with trs_clt_sysfs_del(), also after a failure, and not under
 * paths_mutex: the removal waits for an add_path store, which waits for
 * that mutex.
 *
 * Return: 0 or a negative errno.
 */
int trs_clt_sysfs_add(struct trs_clt_sess *sess)
{
	int err;

	sess->dev = TRS_FI(device_create_with_groups(&trs_clt_class, NULL,
						     MKDEV(0, 0), sess,
						     trs_clt_sess_groups, "%s",
						     sess->name),
			   ERR_PTR(-ENOMEM));
	if (IS_ERR(sess->dev)) {
		err = PTR_ERR(sess->dev);
		sess->dev = NULL;
		return err;
	}
	/* a test's window for an add_path store: session-sysfs-fail-race */
	TRS_FI_DELAY();
	sess->paths_kobj =
		TRS_FI(kobject_create_and_add("paths", &sess->dev->kobj), NULL);
	return sess->paths_kobj ? 0 : -ENOMEM;
}

/**
 * trs_clt_sysfs_del() - delete the sysfs directory of a session
 * @sess: session whose paths left sysfs; after this no show() or store()
 *	runs on it
 */
void trs_clt_sysfs_del(struct trs_clt_sess *sess)
{
	trs_kobj_del(sess->paths_kobj);
	sess->paths_kobj = NULL;
	if (sess->dev)
		device_unregister(sess->dev);
	sess->dev = NULL;
}
