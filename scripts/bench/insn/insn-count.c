// SPDX-License-Identifier: GPL-2.0-only
/*
 * QEMU TCG plugin for the benchmark (scripts/bench/run --insn): count the
 * instructions each vCPU executes, and each time the guest executes the
 * marker instruction (mark.c) append the counts so far to the output file:
 *
 *	mark SEQ VCPU COUNT0 COUNT1 ... COUNT15
 *
 * SEQ numbers the marks from 1.  A halted vCPU executes nothing, so the
 * difference between two marks is the work done between them, whatever
 * the host's speed.  Counted per translation block as it starts (a block
 * cut short by an interrupt counts whole).
 *
 * Arguments: out=PATH (default insn-count.txt in QEMU's directory).
 */
#include <stdio.h>
#include <string.h>
#include "qemu-plugin-api.h"

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define MAX_VCPUS 16

/* one cache line per vCPU: each is written by its vCPU thread only */
static struct {
	unsigned long long n;
	char pad[56];
} counts[MAX_VCPUS];

static FILE *out;
static unsigned long seq;

/* nopl 0x44524e42(%rax): "BNRD", a NOP nothing else emits */
static const unsigned char marker[7] = { 0x0f, 0x1f, 0x80, 'B', 'N', 'R', 'D' };

static void tb_exec(unsigned int vcpu, void *udata)
{
	if (vcpu < MAX_VCPUS)
		counts[vcpu].n += (uintptr_t)udata;
}

static void mark_exec(unsigned int vcpu, void *udata)
{
	unsigned long s = __atomic_add_fetch(&seq, 1, __ATOMIC_SEQ_CST);
	int i;

	fprintf(out, "mark %lu %u", s, vcpu);
	for (i = 0; i < MAX_VCPUS; i++)
		fprintf(out, " %llu",
			__atomic_load_n(&counts[i].n, __ATOMIC_RELAXED));
	fputc('\n', out);
	fflush(out);
}

static void tb_trans(unsigned long long id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;

	qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, RNBD_QEMU_CB_NO_REGS,
					     (void *)(uintptr_t)n);
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		if (qemu_plugin_insn_size(insn) == sizeof(marker) &&
		    !memcmp(qemu_plugin_insn_data(insn), marker, sizeof(marker)))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, mark_exec,
							       RNBD_QEMU_CB_NO_REGS,
							       NULL);
	}
}

__attribute__((visibility("default")))
int qemu_plugin_install(unsigned long long id, const struct qemu_info_t *info,
			int argc, char **argv)
{
	const char *path = "insn-count.txt";
	int i;

	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			path = argv[i] + 4;
	out = fopen(path, "w");
	if (!out)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	return 0;
}
