// SPDX-License-Identifier: GPL-2.0-only
/*
 * rnbd server: instantiates the tracepoints of rnbd-srv-trace.h.
 */
#define CREATE_TRACE_POINTS
#include "rnbd-srv-trace.h"
