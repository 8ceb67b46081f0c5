// SPDX-License-Identifier: GPL-2.0-only
/*
 * Test-only module for the test bed's own tests: on load it provokes the
 * kernel problem its "fault" parameter names, so the runner can prove that
 * it notices.  Never load it outside the test guest.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/bug.h>
#include <linux/compiler.h>

static char *fault = "warn";
module_param(fault, charp, 0444);
MODULE_PARM_DESC(fault, "problem to provoke on load: warn (a WARNING), slub (a heap red zone overwrite), uaf (a use after free), abba (two locks taken in both orders), leak (a filled object nobody points to; the module stays loaded), or none (the same steps without the bug; stays loaded)");

/* Two locks for the lock order test; each guards nothing else. */
static DEFINE_MUTEX(rnbd_selftest_a);
static DEFINE_MUTEX(rnbd_selftest_b);

/* Where the "none" case keeps its object until unload. */
static void *rnbd_selftest_kept;

/* Read a freed object (KASAN), or with @bug false before freeing it. */
static int rnbd_selftest_uaf(bool bug)
{
	size_t len = 64;
	char *p = kmalloc(len, GFP_KERNEL);
	char c;

	if (!p)
		return -ENOMEM;
	memset(p, 0x5a, len);
	if (bug) {
		kfree(p);
		OPTIMIZER_HIDE_VAR(p);
		c = READ_ONCE(p[8]);
	} else {
		c = READ_ONCE(p[8]);
		kfree(p);
	}
	pr_info("read %#x\n", c);
	return 0;
}

/* A then B, then B then A (lockdep), or with @bug false A then B twice. */
static void rnbd_selftest_abba(bool bug)
{
	struct mutex *first = bug ? &rnbd_selftest_b : &rnbd_selftest_a;
	struct mutex *second = bug ? &rnbd_selftest_a : &rnbd_selftest_b;

	mutex_lock(&rnbd_selftest_a);
	mutex_lock(&rnbd_selftest_b);
	mutex_unlock(&rnbd_selftest_b);
	mutex_unlock(&rnbd_selftest_a);

	mutex_lock(first);
	mutex_lock(second);
	mutex_unlock(second);
	mutex_unlock(first);
}

/*
 * Lose the only pointer to an object (kmemleak), or with @bug false keep
 * it.  The object is filled (no pointer in it): kmemleak reports an object
 * only once its checksum is the same in two scans in a row, and a zeroed
 * one already matches the initial checksum at the first scan, so only a
 * filled one proves that the runner scans twice.
 */
static int rnbd_selftest_leak(bool bug)
{
	void *p = kmalloc(256, GFP_KERNEL);

	if (!p)
		return -ENOMEM;
	memset(p, 0x5a, 256);
	if (!bug)
		rnbd_selftest_kept = p;
	/* else: p is forgotten on return; nothing frees it */
	return 0;
}

static int __init rnbd_selftest_init(void)
{
	/* These two stay loaded, so that a leak report names the module. */
	if (!strcmp(fault, "leak"))
		return rnbd_selftest_leak(true);
	if (!strcmp(fault, "none")) {
		/* Every step of the others without its bug. */
		rnbd_selftest_abba(false);
		return rnbd_selftest_uaf(false) ?: rnbd_selftest_leak(false);
	}

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
	} else if (!strcmp(fault, "uaf")) {
		if (rnbd_selftest_uaf(true))
			return -ENOMEM;
	} else if (!strcmp(fault, "abba")) {
		rnbd_selftest_abba(true);
	} else {
		pr_err("unknown fault '%s'\n", fault);
		return -EINVAL;
	}
	/* Refuse to stay loaded: the fault is all this module is for. */
	return -EAGAIN;
}
module_init(rnbd_selftest_init);

static void __exit rnbd_selftest_exit(void)
{
	kfree(rnbd_selftest_kept);
}
module_exit(rnbd_selftest_exit);

MODULE_DESCRIPTION("rnbd test bed self-test: provokes kernel problem reports");
MODULE_LICENSE("GPL");
