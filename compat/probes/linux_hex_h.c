// SPDX-License-Identifier: GPL-2.0-only
/*
 * linux_hex_h: hex2bin() and the other hex helpers are declared in
 * <linux/hex.h>, which <linux/kernel.h> stopped including (7.x); before
 * they were in <linux/kernel.h> itself.
 * Changed in: 6.2 (the header of their own); 7.x (kernel.h without it)
 */
#ifdef RNBD_PROBE_NEW
#include <linux/hex.h>
#else
#include <linux/kernel.h>
#ifdef _LINUX_HEX_H
#error "<linux/kernel.h> includes <linux/hex.h>: the new side"
#endif
#endif

int rnbd_probe(u8 *dst, const char *src);
int rnbd_probe(u8 *dst, const char *src)
{
	return hex2bin(dst, src, 1);
}
