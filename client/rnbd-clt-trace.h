/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rnbd client tracepoints (events/rnbd_clt/): maps, unmaps, session state
 * changes, and each request's submission and completion.  The fields are
 * described in Documentation/tracepoints.rst.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rnbd_clt

#if !defined(RNBD_CLT_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define RNBD_CLT_TRACE_H

#include <linux/blk-mq.h>
#include <linux/tracepoint.h>
#include <rnbd-compat.h>

#include "rnbd-clt.h"

#ifndef RNBD_CLT_TRACE_ONCE
#define RNBD_CLT_TRACE_ONCE
/* OPEN and CLOSE go on the session's admin queue, which has no disk */
static inline const char *rnbd_clt_trace_disk(const struct request *rq)
{
	return rq->q->disk ? rq->q->disk->disk_name : "admin";
}
#endif

TRACE_DEFINE_ENUM(RNBD_ACCESS_RO);
TRACE_DEFINE_ENUM(RNBD_ACCESS_RW);
TRACE_DEFINE_ENUM(RNBD_ACCESS_MIGRATION);
TRACE_DEFINE_ENUM(RNBD_CLT_SESS_CONNECTED);
TRACE_DEFINE_ENUM(RNBD_CLT_SESS_RECONNECTING);
TRACE_DEFINE_ENUM(RNBD_CLT_SESS_LOST);
TRACE_DEFINE_ENUM(RNBD_CLT_SESS_DEAD);

#define rnbd_clt_show_access(m)						\
	__print_symbolic(m,						\
			 { RNBD_ACCESS_RO,		"ro" },		\
			 { RNBD_ACCESS_RW,		"rw" },		\
			 { RNBD_ACCESS_MIGRATION,	"migration" })

#define rnbd_clt_show_sess_state(s)					\
	__print_symbolic(s,						\
			 { RNBD_CLT_SESS_CONNECTED,	"connected" },	\
			 { RNBD_CLT_SESS_RECONNECTING,	"reconnecting" }, \
			 { RNBD_CLT_SESS_LOST,		"lost" },	\
			 { RNBD_CLT_SESS_DEAD,		"dead" })

/* the block layer's op numbers (enum req_op), fixed by its ABI */
#define rnbd_clt_show_op(op)						\
	__print_symbolic(op,						\
			 { 0,	"READ" },				\
			 { 1,	"WRITE" },				\
			 { 2,	"FLUSH" },				\
			 { 3,	"DISCARD" },				\
			 { 9,	"WRITE_ZEROES" },			\
			 { 34,	"DRV_IN" },				\
			 { 35,	"DRV_OUT" })

/*
 * A device mapped or unmapped; @val is the map's errno or the unmap's
 * force flag.
 */
DECLARE_EVENT_CLASS(rnbd_clt_dev,
	TP_PROTO(const char *disk, const char *sess, const char *path,
		 enum rnbd_access_mode access_mode, u64 sectors, int val),
	TP_ARGS(disk, sess, path, access_mode, sectors, val),

	TP_STRUCT__entry(
		__array(char,		disk, DISK_NAME_LEN)
		__string(sess,		sess)
		__string(path,		path)
		__field(u8,		access_mode)
		__field(u64,		sectors)
		__field(int,		val)
	),

	TP_fast_assign(
		strscpy(__entry->disk, disk, DISK_NAME_LEN);
		rnbd_assign_str(sess, sess);
		rnbd_assign_str(path, path);
		__entry->access_mode = access_mode;
		__entry->sectors = sectors;
		__entry->val = val;
	),

	TP_printk("disk=%s sess=%s path=%s access_mode=%s sectors=%llu err=%d",
		  __entry->disk, __get_str(sess), __get_str(path),
		  rnbd_clt_show_access(__entry->access_mode),
		  __entry->sectors, __entry->val)
);

DEFINE_EVENT(rnbd_clt_dev, rnbd_clt_map,
	TP_PROTO(const char *disk, const char *sess, const char *path,
		 enum rnbd_access_mode access_mode, u64 sectors, int val),
	TP_ARGS(disk, sess, path, access_mode, sectors, val)
);

DEFINE_EVENT_PRINT(rnbd_clt_dev, rnbd_clt_unmap,
	TP_PROTO(const char *disk, const char *sess, const char *path,
		 enum rnbd_access_mode access_mode, u64 sectors, int val),
	TP_ARGS(disk, sess, path, access_mode, sectors, val),

	TP_printk("disk=%s sess=%s path=%s access_mode=%s sectors=%llu force=%d",
		  __entry->disk, __get_str(sess), __get_str(path),
		  rnbd_clt_show_access(__entry->access_mode),
		  __entry->sectors, __entry->val)
);

TRACE_EVENT(rnbd_clt_sess_state,
	TP_PROTO(const char *sess, enum rnbd_clt_sess_state old,
		 enum rnbd_clt_sess_state new),
	TP_ARGS(sess, old, new),

	TP_STRUCT__entry(
		__string(sess,	sess)
		__field(u8,	old)
		__field(u8,	new)
	),

	TP_fast_assign(
		rnbd_assign_str(sess, sess);
		__entry->old = old;
		__entry->new = new;
	),

	TP_printk("sess=%s old=%s new=%s", __get_str(sess),
		  rnbd_clt_show_sess_state(__entry->old),
		  rnbd_clt_show_sess_state(__entry->new))
);

/* a request, as submitted to the transport and as completed by it */
DECLARE_EVENT_CLASS(rnbd_clt_rq,
	TP_PROTO(struct request *rq, int status),
	TP_ARGS(rq, status),

	TP_STRUCT__entry(
		__array(char,	disk, DISK_NAME_LEN)
		__field(int,	tag)
		__field(u8,	op)
		__field(u32,	hwq)
		__field(u64,	sector)
		__field(u32,	bytes)
		__field(int,	status)
	),

	TP_fast_assign(
		strscpy(__entry->disk, rnbd_clt_trace_disk(rq), DISK_NAME_LEN);
		__entry->tag = rq->tag;
		__entry->op = (__force u32)req_op(rq);
		__entry->hwq = rq->mq_hctx->queue_num;
		__entry->sector = blk_rq_pos(rq);
		__entry->bytes = blk_rq_bytes(rq);
		__entry->status = status;
	),

	TP_printk("disk=%s tag=%d op=%s hwq=%u sector=%llu bytes=%u status=%d",
		  __entry->disk, __entry->tag, rnbd_clt_show_op(__entry->op),
		  __entry->hwq, __entry->sector, __entry->bytes,
		  __entry->status)
);

DEFINE_EVENT_PRINT(rnbd_clt_rq, rnbd_clt_rq_submit,
	TP_PROTO(struct request *rq, int status),
	TP_ARGS(rq, status),

	TP_printk("disk=%s tag=%d op=%s hwq=%u sector=%llu bytes=%u",
		  __entry->disk, __entry->tag, rnbd_clt_show_op(__entry->op),
		  __entry->hwq, __entry->sector, __entry->bytes)
);

DEFINE_EVENT(rnbd_clt_rq, rnbd_clt_rq_complete,
	TP_PROTO(struct request *rq, int status),
	TP_ARGS(rq, status)
);

#endif /* RNBD_CLT_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE rnbd-clt-trace
#include <trace/define_trace.h>
