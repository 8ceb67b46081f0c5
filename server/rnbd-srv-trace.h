/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rnbd server tracepoints (events/rnbd_srv/): device opens and closes,
 * and each IO request's submission and completion.  The fields are
 * described in Documentation/tracepoints.rst.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rnbd_srv

#if !defined(RNBD_SRV_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define RNBD_SRV_TRACE_H

#include <linux/tracepoint.h>
#include <rnbd-compat.h>

#include "rnbd-srv.h"

TRACE_DEFINE_ENUM(RNBD_ACCESS_RO);
TRACE_DEFINE_ENUM(RNBD_ACCESS_RW);
TRACE_DEFINE_ENUM(RNBD_ACCESS_MIGRATION);
TRACE_DEFINE_ENUM(RNBD_OP_READ);
TRACE_DEFINE_ENUM(RNBD_OP_WRITE);
TRACE_DEFINE_ENUM(RNBD_OP_FLUSH);
TRACE_DEFINE_ENUM(RNBD_OP_DISCARD);
TRACE_DEFINE_ENUM(RNBD_OP_WRITE_ZEROES);

#define rnbd_srv_show_access(m)						\
	__print_symbolic(m,						\
			 { RNBD_ACCESS_RO,		"ro" },		\
			 { RNBD_ACCESS_RW,		"rw" },		\
			 { RNBD_ACCESS_MIGRATION,	"migration" })

#define rnbd_srv_show_op(op)						\
	__print_symbolic(op,						\
			 { RNBD_OP_READ,		"READ" },	\
			 { RNBD_OP_WRITE,		"WRITE" },	\
			 { RNBD_OP_FLUSH,		"FLUSH" },	\
			 { RNBD_OP_DISCARD,		"DISCARD" },	\
			 { RNBD_OP_WRITE_ZEROES,	"WRITE_ZEROES" })

TRACE_EVENT(rnbd_srv_dev_open,
	TP_PROTO(struct rnbd_srv_sess *sess, const struct rnbd_msg_open *msg,
		 u32 dev_id, int err),
	TP_ARGS(sess, msg, dev_id, err),

	TP_STRUCT__entry(
		__string(sess,		trs_srv_sess_name(sess->trs))
		/* from the wire: maybe not terminated when err is set */
		__string_len(path,	msg->path,
			     strnlen(msg->path, RNBD_PATH_MAX))
		__field(u8,		access_mode)
		__field(u32,		dev_id)
		__field(int,		err)
	),

	TP_fast_assign(
		rnbd_assign_str(sess, trs_srv_sess_name(sess->trs));
		rnbd_assign_str_len(path, msg->path,
				    strnlen(msg->path, RNBD_PATH_MAX));
		__entry->access_mode = msg->access_mode;
		__entry->dev_id = dev_id;
		__entry->err = err;
	),

	TP_printk("sess=%s path=%s access_mode=%s dev_id=%u err=%d",
		  __get_str(sess), __get_str(path),
		  rnbd_srv_show_access(__entry->access_mode),
		  __entry->dev_id, __entry->err)
);

TRACE_EVENT(rnbd_srv_dev_close,
	TP_PROTO(struct rnbd_srv_sess *sess, const struct rnbd_srv_dev *dev,
		 bool busy),
	TP_ARGS(sess, dev, busy),

	TP_STRUCT__entry(
		__string(sess,		trs_srv_sess_name(sess->trs))
		__string(path,		dev->path)
		__field(u32,		dev_id)
		__field(dev_t,		devt)
		__field(bool,		busy)
	),

	TP_fast_assign(
		rnbd_assign_str(sess, trs_srv_sess_name(sess->trs));
		rnbd_assign_str(path, dev->path);
		__entry->dev_id = dev->id;
		__entry->devt = dev->bdev ? dev->bdev->bd_dev : 0;
		__entry->busy = busy;
	),

	TP_printk("sess=%s dev_id=%u path=%s devt=%u:%u busy=%d",
		  __get_str(sess), __entry->dev_id, __get_str(path),
		  MAJOR(__entry->devt), MINOR(__entry->devt), __entry->busy)
);

TRACE_EVENT(rnbd_srv_io_submit,
	TP_PROTO(const struct trs_srv_req *req, const struct rnbd_msg_io *msg),
	TP_ARGS(req, msg),

	TP_STRUCT__entry(
		__string(sess,	trs_srv_sess_name(req->sess))
		__field(u32,	dev_id)
		__field(u32,	slot)
		__field(u32,	conn)
		__field(u8,	op)
		__field(u8,	flags)
		__field(u64,	sector)
		__field(u32,	len)
	),

	TP_fast_assign(
		rnbd_assign_str(sess, trs_srv_sess_name(req->sess));
		__entry->dev_id = le32_to_cpu(msg->dev_id);
		__entry->slot = req->slot;
		__entry->conn = req->conn;
		__entry->op = msg->op;
		__entry->flags = msg->flags;
		__entry->sector = le64_to_cpu(msg->sector);
		__entry->len = le32_to_cpu(msg->len);
	),

	TP_printk("sess=%s dev_id=%u slot=%u conn=%u op=%s flags=0x%x sector=%llu len=%u",
		  __get_str(sess), __entry->dev_id, __entry->slot,
		  __entry->conn, rnbd_srv_show_op(__entry->op),
		  __entry->flags, __entry->sector, __entry->len)
);

TRACE_EVENT(rnbd_srv_io_complete,
	TP_PROTO(const struct trs_srv_req *req, u32 dev_id, int err, u32 len),
	TP_ARGS(req, dev_id, err, len),

	TP_STRUCT__entry(
		__string(sess,	trs_srv_sess_name(req->sess))
		__field(u32,	dev_id)
		__field(u32,	slot)
		__field(int,	err)
		__field(u32,	len)
	),

	TP_fast_assign(
		rnbd_assign_str(sess, trs_srv_sess_name(req->sess));
		__entry->dev_id = dev_id;
		__entry->slot = req->slot;
		__entry->err = err;
		__entry->len = len;
	),

	TP_printk("sess=%s dev_id=%u slot=%u err=%d len=%u", __get_str(sess),
		  __entry->dev_id, __entry->slot, __entry->err, __entry->len)
);

#endif /* RNBD_SRV_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE rnbd-srv-trace
#include <trace/define_trace.h>
