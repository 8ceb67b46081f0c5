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
 *
 * trs_should_delay() is the same kind of target for a race a test must
 * widen: TRS_FI_DELAY() sleeps TRS_FI_DELAY_MS where it is made to return
 * true, at the sites that document the race they open.  Process context
 * only.  Without CONFIG_FUNCTION_ERROR_INJECTION it compiles away too.
 */
#ifndef RNBD_FAULT_INJECT_H
#define RNBD_FAULT_INJECT_H

#include <linux/delay.h>
#include <linux/types.h>

#ifdef CONFIG_FUNCTION_ERROR_INJECTION
bool trs_should_fail_alloc(void);
bool trs_should_delay(void);
#else
static inline bool trs_should_fail_alloc(void)
{
	return false;
}

static inline bool trs_should_delay(void)
{
	return false;
}
#endif

/* @failed if a failure is injected at this site, else the value of @expr */
#define TRS_FI(expr, failed)	(trs_should_fail_alloc() ? (failed) : (expr))

/* How long TRS_FI_DELAY() sleeps where a test arms it */
#define TRS_FI_DELAY_MS		3000

/* Sleep here if a test arms trs_should_delay(); may sleep */
#define TRS_FI_DELAY()						\
	do {							\
		if (trs_should_delay())				\
			msleep(TRS_FI_DELAY_MS);		\
	} while (0)

#endif /* RNBD_FAULT_INJECT_H */
