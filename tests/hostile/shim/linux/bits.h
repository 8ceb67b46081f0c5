/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Userspace stand-in for the kernel's <linux/bits.h>, for the hostile test
 * tools: only what include/rnbd/proto.h uses.
 */
#ifndef RNBD_HOSTILE_SHIM_LINUX_BITS_H
#define RNBD_HOSTILE_SHIM_LINUX_BITS_H

#define BIT(nr)			(1UL << (nr))

#endif /* RNBD_HOSTILE_SHIM_LINUX_BITS_H */
