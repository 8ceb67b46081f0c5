/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Userspace stand-in for the kernel's <linux/build_bug.h>, for the hostile
 * test tools: BUILD_BUG_ON() as include/rnbd/trs-proto.h and proto.h use it,
 * inside inline functions.  A true @cond makes an array of negative size,
 * which fails the build whether or not the function is ever called.
 */
#ifndef RNBD_HOSTILE_SHIM_LINUX_BUILD_BUG_H
#define RNBD_HOSTILE_SHIM_LINUX_BUILD_BUG_H

#define BUILD_BUG_ON(cond)	((void)sizeof(char[1 - 2 * !!(cond)]))

#endif /* RNBD_HOSTILE_SHIM_LINUX_BUILD_BUG_H */
