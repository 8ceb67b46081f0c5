/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rnbd client: remote block devices over the rnbd transport (trs).
 *
 * Objects and their owners:
 *  - struct rnbd_clt_sess: one per session name, on rnbd_clt_sessions.
 *    Refcounted; every device holds one reference, a map in progress holds
 *    one.  The last put unlinks it and tears it down (single release path).
 *  - struct rnbd_clt_dev: one per mapped remote device, on its session's
 *    list.  Its state field decides who may tear it down: whoever moves it
 *    to RNBD_CLT_DEV_UNMAPPING.  Refcounted: the map holds one reference
 *    until unmap, the session's works one while they use it.  Its sysfs
 *    files (/sys/block/rnbdN/rnbd/) are a group of the disk, gone with it.
 *    Unmap does not wait for the works: the disk may go while one holds
 *    the device, so they use dev->disk only under sess->lock, with the
 *    device MAPPED; and the session's release waits for them before it
 *    closes the transport, which they use.
 */

/* The locks below: their order and rules in Documentation/locking.rst */
#ifndef RNBD_CLT_H
#define RNBD_CLT_H

#include <linux/blk-mq.h>
#include <linux/kref.h>
#include <linux/limits.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/socket.h>

#include <rnbd/fault-inject.h>
#include <rnbd/proto.h>
#include <rnbd/trs.h>

#define RNBD_CLT_PART_BITS	6	/* 64 minors per disk, as upstream */
#define RNBD_CLT_SESSNAME_MAX	(NAME_MAX - 1)	/* the transport's limit */
#define RNBD_CLT_RESERVED_TAGS	2	/* tags kept for OPEN and CLOSE */
#define RNBD_CLT_MAX_PATHS	8	/* path= options of one map_device */
#define RNBD_CLT_INLINE_SG_CNT	2	/* sg entries inside each request */

/**
 * enum rnbd_clt_dev_state - life cycle of a mapped device
 * @RNBD_CLT_DEV_MAPPING: OPEN sent, no gendisk yet
 * @RNBD_CLT_DEV_MAPPED: open on the server: IO flows, or fails while the
 *	session is lost
 * @RNBD_CLT_DEV_HELD: its requests wait in blk-mq (failfast ones fail)
 *	while the session reconnects, or until it is open again on the
 *	server's new session
 * @RNBD_CLT_DEV_DISCONNECTED: closed for good (the server refused to open
 *	it again after a reconnect, or the session gave up): IO fails
 * @RNBD_CLT_DEV_UNMAPPING: being torn down: IO fails, opens fail
 *
 * Every change goes through rnbd_clt_dev_change_state():
 *
 *   MAPPING -> MAPPED <-> HELD (the session reconnects; the reopen)
 *   MAPPED, HELD -> DISCONNECTED -> MAPPED (remap_device)
 *   MAPPED, HELD, DISCONNECTED -> UNMAPPING
 */
enum rnbd_clt_dev_state {
	RNBD_CLT_DEV_MAPPING,
	RNBD_CLT_DEV_MAPPED,
	RNBD_CLT_DEV_HELD,
	RNBD_CLT_DEV_DISCONNECTED,
	RNBD_CLT_DEV_UNMAPPING,
};

/**
 * enum rnbd_clt_sess_state - what happens to the IO of a session
 * @RNBD_CLT_SESS_CONNECTED: IO flows (devices still held wait for their
 *	re-open)
 * @RNBD_CLT_SESS_RECONNECTING: the transport reconnects: IO is held
 * @RNBD_CLT_SESS_LOST: the loss timeout passed: IO fails until the
 *	transport reconnects
 * @RNBD_CLT_SESS_DEAD: the transport gave up: IO fails until unmapped
 */
enum rnbd_clt_sess_state {
	RNBD_CLT_SESS_CONNECTED,
	RNBD_CLT_SESS_RECONNECTING,
	RNBD_CLT_SESS_LOST,
	RNBD_CLT_SESS_DEAD,
};

/**
 * struct rnbd_clt_map_opts - a parsed write to map_device
 * @sessname: session name
 * @path: device path on the server, NUL terminated
 * @paths: the path= options: server address and port, and local
 *	address if given; duplicates removed
 * @nr_paths: entries in @paths
 * @access_mode: RNBD_ACCESS_RO, RNBD_ACCESS_RW or RNBD_ACCESS_MIGRATION
 */
struct rnbd_clt_map_opts {
	char			sessname[RNBD_CLT_SESSNAME_MAX + 1];
	char			path[RNBD_PATH_MAX];
	struct trs_clt_path_addr paths[RNBD_CLT_MAX_PATHS];
	unsigned int		nr_paths;
	enum rnbd_access_mode	access_mode;
};

/**
 * struct rnbd_clt_sess - a session to one server
 * @node: entry in rnbd_clt_sessions, under rnbd_clt_sess_mutex
 * @ref: one per device plus one per map in progress
 * @trs: transport session
 * @attrs: limits negotiated by the transport
 * @tag_set: shared by every disk of the session and @admin_q; a tag is
 *	the transport slot of its request
 * @admin_q: queue for OPEN and CLOSE, using the reserved tags
 * @lock: guards @devs, @state, and every rnbd_clt_dev.state
 *	change
 * @devs: devices of this session (rnbd_clt_dev.node)
 * @state: enum rnbd_clt_sess_state; written under @lock, read locklessly
 *	on the IO path
 * @epoch: sessions the server made for us so far (RECONNECTED events);
 *	under @lock.  A device id the server gave in an earlier epoch means
 *	nothing to the server now.
 * @reopen_work: opens the held devices again after a reconnect
 * @size_work: asks the server about the size of every device after a
 *	notice of its transport.  The works hold a reference on the device
 *	they work on, not on the session: its release waits for them.
 * @trs_ops: callbacks given to the transport
 * @dst: server address
 * @name: session name
 */
struct rnbd_clt_sess {
	struct list_head	node;
	struct kref		ref;
	struct trs_clt_sess	*trs;
	struct trs_clt_attrs	attrs;
	struct blk_mq_tag_set	tag_set;
	struct request_queue	*admin_q;
	struct mutex		lock;	/* see above */
	struct list_head	devs;
	enum rnbd_clt_sess_state state;
	u32			epoch;
	struct work_struct	reopen_work;
	struct work_struct	size_work;
	struct trs_clt_ops	trs_ops;
	struct sockaddr_storage	dst;
	char			name[RNBD_CLT_SESSNAME_MAX + 1];
};

/**
 * struct rnbd_clt_dev - a mapped remote device
 * @ref: one from map until unmap, plus one per work using the device;
 *	the last frees the structure
 * @node: entry in the session's devs list, under sess->lock
 * @sess: session, referenced until the device is freed
 * @disk: gendisk, from the MAPPED state until unmap; set and cleared
 *	under sess->lock.  Unmap moves the device out of MAPPED (under that
 *	lock) before the disk goes, so under sess->lock a MAPPED device's
 *	disk, if set, is alive.
 * @state: enum rnbd_clt_dev_state; written under sess->lock, read
 *	locklessly on the IO path
 * @ready: map_device() is done with the device, so unmap may free it;
 *	under sess->lock
 * @size_check: the size work is to ask about it; under sess->lock
 * @epoch: the session's epoch of @dev_id; under sess->lock
 * @idx: N of /dev/rnbdN
 * @dev_id: device id the server gave in its open response
 * @srv_sectors: size of the device on the server, in 512-byte sectors, as
 *	its open response said; the disk may show less (resize)
 * @access_mode: RNBD_ACCESS_RO, RNBD_ACCESS_RW or RNBD_ACCESS_MIGRATION
 * @path: device path on the server
 * @link_name: name of the link in /sys/class/rnbd-client/ctl/devices/,
 *	empty if there is none
 */
struct rnbd_clt_dev {
	struct kref		ref;
	struct list_head	node;
	struct rnbd_clt_sess	*sess;
	struct gendisk		*disk;
	enum rnbd_clt_dev_state	state;
	bool			ready;
	bool			size_check;
	u32			epoch;
	int			idx;
	u32			dev_id;
	u64			srv_sectors;
	enum rnbd_access_mode	access_mode;
	char			path[RNBD_PATH_MAX];
	char			link_name[NAME_MAX + 1];
};

/**
 * struct rnbd_clt_iu - blk-mq request payload (pdu)
 * @trs: the transport request; its slot is the blk-mq tag
 * @msg: IO message header (admin requests point @trs at their own, and
 *	keep their type here for the timeout handler)
 * @status: errno reported by the transport
 * @timed_out: admin requests: blk-mq timed it out
 * @sgt: data mapping of READ and WRITE requests
 * @first_sgl: inline part of @sgt
 */
struct rnbd_clt_iu {
	struct trs_clt_io	trs;
	struct rnbd_msg_io	msg;
	int			status;
	bool			timed_out;
	struct sg_table		sgt;
	struct scatterlist	first_sgl[];
};

/* rnbd-clt-host.c: the host's name and key */
extern struct device_attribute dev_attr_host_key;
void rnbd_clt_host_name(char *buf);
int rnbd_clt_host_key(void *priv, u8 *key);
void rnbd_clt_host_exit(void);

/* rnbd-clt-main.c: sessions and control messages */
struct rnbd_clt_sess *rnbd_clt_sess_get(const struct rnbd_clt_map_opts *opts);
void rnbd_clt_sess_put(struct rnbd_clt_sess *sess);
void rnbd_clt_admin_timeout(struct rnbd_clt_sess *sess, struct request *rq);
int rnbd_clt_send_open(struct rnbd_clt_dev *dev,
		       struct rnbd_msg_open_rsp *rsp);
void rnbd_clt_send_close(struct rnbd_clt_dev *dev, u32 dev_id);
int rnbd_clt_send_info(struct rnbd_clt_dev *dev, u32 dev_id,
		       struct rnbd_msg_open_rsp *rsp);

/* rnbd-clt-recovery.c: IO across transport reconnects */
void rnbd_clt_sess_event(void *priv, enum trs_clt_event ev);
void rnbd_clt_reopen_work(struct work_struct *work);
bool rnbd_clt_dev_waits(const struct rnbd_clt_dev *dev);
blk_status_t rnbd_clt_held_sts(const struct request *rq);
bool rnbd_clt_dev_change_state(struct rnbd_clt_dev *dev,
			       enum rnbd_clt_dev_state new);
int rnbd_clt_dev_remap(struct rnbd_clt_dev *dev);

/* rnbd-clt-dev.c: block devices */
extern const struct blk_mq_ops rnbd_clt_mq_ops;
void rnbd_clt_io_done(struct trs_clt_io *io, int status);
int rnbd_clt_map_device(const struct rnbd_clt_map_opts *opts);
int rnbd_clt_check_open_rsp(struct rnbd_clt_dev *dev,
			    const struct rnbd_msg_open_rsp *rsp);
int rnbd_clt_unmap_device(struct rnbd_clt_dev *dev, bool force,
			  const struct attribute *self);
void rnbd_clt_dev_get(struct rnbd_clt_dev *dev);
void rnbd_clt_dev_put(struct rnbd_clt_dev *dev);
int rnbd_clt_dev_init(void);
void rnbd_clt_dev_exit(void);

/* rnbd-clt-size.c: device sizes */
int rnbd_clt_dev_resize(struct rnbd_clt_dev *dev, u64 sectors);
void __rnbd_clt_dev_srv_resized(struct rnbd_clt_dev *dev, u64 sectors);
void rnbd_clt_size_work(struct work_struct *work);

/* rnbd-clt-sysfs.c: control device and per-device attributes */
int rnbd_clt_parse_map_opts(const char *buf, size_t count,
			    struct rnbd_clt_map_opts *opts);
extern const struct attribute_group *rnbd_clt_disk_groups[];
void rnbd_clt_dev_sysfs_add(struct rnbd_clt_dev *dev);
void rnbd_clt_dev_sysfs_remove(struct rnbd_clt_dev *dev,
			       const struct attribute *self);
int rnbd_clt_sysfs_init(void);
void rnbd_clt_sysfs_exit(void);

#endif /* RNBD_CLT_H */
