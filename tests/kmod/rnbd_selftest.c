// SPDX-License-Identifier: GPL-2.0-only
/*
 * Test-only module for the test bed's own tests: on load it provokes the
 * kernel problem its "fault" parameter names, so the runner can prove that
 * it notices.  Never load it outside the test guest.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/bug.h>
#include <linux/compiler.h>

static char *fault = "warn";
module_param(fault, charp, 0444);
MODULE_PARM_DESC(fault, "problem to provoke on load: warn (a WARNING) or slub (a heap red zone overwrite)");

static int __init rnbd_selftest_init(void)
{
	if (!strcmp(fault, "warn")) {
		WARN(1, "rnbd_selftest: deliberate warning\n");
	} else if (!strcmp(fault, "slub")) {
		size_t i, len = 32;
		char *p = kmalloc(len, GFP_KERNEL);

		if (!p)
			return -ENOMEM;
		/* Write past the object on purpose, byte by byte so that
		 * FORTIFY_SOURCE does not catch it before SLUB does.
		 */
		OPTIMIZER_HIDE_VAR(len);
		for (i = 0; i < len + 8; i++)
			WRITE_ONCE(p[i], 0x5a);
		kfree(p);
	} else {
		pr_err("unknown fault '%s'\n", fault);
		return -EINVAL;
	}
	/* Refuse to stay loaded: the fault is all this module is for. */
	return -EAGAIN;
}
module_init(rnbd_selftest_init);

MODULE_DESCRIPTION("rnbd test bed self-test: provokes kernel problem reports");
MODULE_LICENSE("GPL");
