/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Userspace stand-in for the kernel's <linux/sizes.h>, for the hostile test
 * tools: only the sizes include/rnbd/trs-proto.h uses.
 */
#ifndef RNBD_HOSTILE_SHIM_LINUX_SIZES_H
#define RNBD_HOSTILE_SHIM_LINUX_SIZES_H

#define SZ_1M			0x00100000

#endif /* RNBD_HOSTILE_SHIM_LINUX_SIZES_H */
