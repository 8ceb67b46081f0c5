// SPDX-License-Identifier: GPL-2.0-only
/*
 * trace_assign_str_dst_only: a trace event's __assign_str() takes only
 * the field, its source being the one given to __string() or
 * __string_len(); __assign_str_len() is gone.
 * Changed in: 6.10
 */
#include <linux/trace_events.h>
#include <trace/stages/stage6_event_callback.h>

#define RNBD_PROBE_STR(x)	#x
#define RNBD_PROBE_XSTR(x)	RNBD_PROBE_STR(x)

/* a macro invoked with the wrong number of arguments does not compile */
#ifdef RNBD_PROBE_NEW
const char rnbd_probe[] = RNBD_PROBE_XSTR(__assign_str(f));
#else
const char rnbd_probe[] = RNBD_PROBE_XSTR(__assign_str(f, s))
	RNBD_PROBE_XSTR(__assign_str_len(f, s, 1));
#endif
