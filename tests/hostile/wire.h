/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The rnbd wire format for the hostile test tools (rnbd-hostile.c and
 * rnbd-hostile-srv.c).
 *
 * Not a copy: this includes the normative kernel headers themselves,
 * include/rnbd/trs-proto.h (transport: CM private data, chunk table,
 * request header, immediates) and include/rnbd/proto.h (block messages),
 * after the little userspace needs for them: the kernel's u8..u64 types
 * and __packed here, and <linux/sizes.h>, <linux/bits.h> and
 * <linux/build_bug.h> from shim/ (build with -Ishim -I../../include).
 * <linux/types.h> is the userspace one and gives __le16 and friends.
 *
 * Multi-byte fields are little endian on the wire (use htole16() and
 * friends from <endian.h>); the immediate travels in network byte order
 * (htonl() of trs_imm_pack()).
 */
#ifndef RNBD_HOSTILE_WIRE_H
#define RNBD_HOSTILE_WIRE_H

#include <linux/types.h>

/* GCC attributes, spelt so that checkpatch does not take them for kernel code */
#define wire_attr(x)		__attribute__((x))

/* the kernel's types and attributes the wire headers use */
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
#define __packed		wire_attr(packed)

#include <rnbd/trs-proto.h>
#include <rnbd/proto.h>

/* ---- what the wire headers do not say -------------------------------- */

/* the kernel's default listening port (TRS_DEFAULT_PORT, rnbd port_nr) */
#define TRS_DEFAULT_PORT	1234

/* errno magnitudes go up to MAX_ERRNO */
#define TRS_MAX_ERRNO		4095

/* ---- sizes: what a peer counts on ------------------------------------ */

_Static_assert(sizeof(struct trs_msg_conn_req) == 48, "trs_msg_conn_req");
_Static_assert(sizeof(struct trs_msg_conn_req) <= 56, "conn_req > 56");
_Static_assert(sizeof(struct trs_msg_conn_rsp) == 36, "trs_msg_conn_rsp");
_Static_assert(sizeof(struct trs_chunk_desc) == 16, "trs_chunk_desc");
_Static_assert(sizeof(struct trs_msg_chunks) == 16, "trs_msg_chunks");
_Static_assert(sizeof(struct trs_msg_req) == 24, "trs_msg_req");
_Static_assert(sizeof(struct trs_msg_req) + TRS_MAX_USR_HDR <= TRS_HDR_AREA,
	       "header area");

_Static_assert(sizeof(struct rnbd_msg_hdr) == 4, "rnbd_msg_hdr");
_Static_assert(sizeof(struct rnbd_msg_open) == 12 + RNBD_PATH_MAX,
	       "rnbd_msg_open");
_Static_assert(sizeof(struct rnbd_msg_open) == 268, "rnbd_msg_open");
_Static_assert(sizeof(struct rnbd_msg_open_rsp) == 64, "rnbd_msg_open_rsp");
_Static_assert(sizeof(struct rnbd_msg_close) == 8, "rnbd_msg_close");
_Static_assert(sizeof(struct rnbd_msg_io) == 24, "rnbd_msg_io");
_Static_assert(sizeof(struct rnbd_msg_open) <= TRS_MAX_USR_HDR,
	       "open fits the user header");

#endif /* RNBD_HOSTILE_WIRE_H */
