/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The part of QEMU's TCG plugin API (version 1, QEMU 7.2) that
 * insn-count.c uses, declared from its documentation: Debian ships no
 * qemu-plugin.h.  A plugin is a shared object QEMU loads with -plugin; the
 * functions below are resolved in the QEMU binary.  qemu_plugin_id_t is a
 * 64-bit unsigned integer (unsigned long long here).
 */
#ifndef RNBD_BENCH_QEMU_PLUGIN_API_H
#define RNBD_BENCH_QEMU_PLUGIN_API_H

#include <stddef.h>
#include <stdint.h>

struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_info_t;

/* QEMU_PLUGIN_CB_NO_REGS: the callback reads no guest register */
#define RNBD_QEMU_CB_NO_REGS 0

void qemu_plugin_register_vcpu_tb_trans_cb(unsigned long long id,
					   void (*cb)(unsigned long long id,
						      struct qemu_plugin_tb *tb));
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
					  void (*cb)(unsigned int vcpu,
						     void *udata),
					  int flags, void *udata);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    void (*cb)(unsigned int vcpu,
						       void *udata),
					    int flags, void *udata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);

#endif
