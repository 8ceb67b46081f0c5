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
 * With prof=PATH, it also counts the instructions of each translation
 * block by its guest address, and at each mark appends to PATH what every
 * block executed since the previous mark (scripts/bench/insn-prof.py maps
 * the addresses to the guest's symbols):
 *
 *	mark SEQ
 *	ADDR COUNT		(hexadecimal address, blocks that ran only)
 *
 * Arguments: out=PATH (default insn-count.txt in QEMU's directory),
 * prof=PATH (no profile by default).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
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

/* one per translation of a block (prof=) */
struct block {
	unsigned long long vaddr;
	unsigned long long n;		/* instructions in the block */
	unsigned long long count;	/* instructions executed, all vCPUs */
	unsigned long long dumped;	/* count at the last mark */
};

static FILE *prof;
/* guards blocks, nblocks, cap and every block's dumped (any vCPU thread) */
static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct block **blocks;
static size_t nblocks, cap;

/* nopl 0x44524e42(%rax): "BNRD", a NOP nothing else emits */
static const unsigned char marker[7] = { 0x0f, 0x1f, 0x80, 'B', 'N', 'R', 'D' };

static void tb_exec(unsigned int vcpu, void *udata)
{
	if (vcpu < MAX_VCPUS)
		counts[vcpu].n += (uintptr_t)udata;
}

static void block_exec(unsigned int vcpu, void *udata)
{
	struct block *b = udata;

	if (vcpu < MAX_VCPUS)
		counts[vcpu].n += b->n;
	__atomic_fetch_add(&b->count, b->n, __ATOMIC_RELAXED);
}

static void prof_dump(unsigned long s)
{
	size_t i;

	pthread_mutex_lock(&blocks_lock);
	fprintf(prof, "mark %lu\n", s);
	for (i = 0; i < nblocks; i++) {
		struct block *b = blocks[i];
		unsigned long long c = __atomic_load_n(&b->count,
						       __ATOMIC_RELAXED);

		if (c != b->dumped) {
			fprintf(prof, "%llx %llu\n",
				b->vaddr, c - b->dumped);
			b->dumped = c;
		}
	}
	fflush(prof);
	pthread_mutex_unlock(&blocks_lock);
}

/* a new block to count, or NULL when out of memory */
static struct block *block_new(unsigned long long vaddr, size_t n)
{
	struct block *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->vaddr = vaddr;
	b->n = n;
	pthread_mutex_lock(&blocks_lock);
	if (nblocks == cap) {
		size_t ncap = cap ? 2 * cap : 65536;
		struct block **nb = realloc(blocks, ncap * sizeof(*nb));

		if (!nb) {
			pthread_mutex_unlock(&blocks_lock);
			free(b);
			return NULL;
		}
		blocks = nb;
		cap = ncap;
	}
	blocks[nblocks++] = b;
	pthread_mutex_unlock(&blocks_lock);
	return b;
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
	if (prof)
		prof_dump(s);
}

static void tb_trans(unsigned long long id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	struct block *b = prof ? block_new(qemu_plugin_tb_vaddr(tb), n) : NULL;

	if (b)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, block_exec,
						     RNBD_QEMU_CB_NO_REGS, b);
	else
		qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec,
						     RNBD_QEMU_CB_NO_REGS,
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
	const char *path = "insn-count.txt", *prof_path = NULL;
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4))
			path = argv[i] + 4;
		else if (!strncmp(argv[i], "prof=", 5))
			prof_path = argv[i] + 5;
	}
	out = fopen(path, "w");
	if (!out)
		return -1;
	if (prof_path) {
		prof = fopen(prof_path, "w");
		if (!prof)
			return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	return 0;
}
