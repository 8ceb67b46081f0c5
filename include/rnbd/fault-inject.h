/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Allocation failure injection, for the tests on the debug kernel.
 *
 * Every allocation site of the rnbd modules asks trs_should_fail_alloc()
 * first, through TRS_FI().  With CONFIG_FUNCTION_ERROR_INJECTION the
 * function is a fail_function target: a test writes its name to
 * /sys/kernel/debug/fail_function/inject, sets its retval to 1 and the
 * usual probability, interval and times, and the sites picked fail as if
 * memory were short, in whatever context they run (a CM handler, a
 * completion, the task that maps).  Without it the check compiles away.
 */
#ifndef RNBD_FAULT_INJECT_H
#define RNBD_FAULT_INJECT_H

#include <linux/types.h>

#ifdef CONFIG_FUNCTION_ERROR_INJECTION
bool trs_should_fail_alloc(void);
#else
static inline bool trs_should_fail_alloc(void)
{
	return false;
}
#endif

/* @failed if a failure is injected at this site, else the value of @expr */
#define TRS_FI(expr, failed)	(trs_should_fail_alloc() ? (failed) : (expr))

#endif /* RNBD_FAULT_INJECT_H */
