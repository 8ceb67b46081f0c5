// SPDX-License-Identifier: GPL-2.0-only
/*
 * Run in the guest by the benchmark around each fio run: executes the
 * marker instruction once, so that the insn-count plugin records the
 * instruction counts at this point.  Without the plugin, a NOP.
 */
int main(void)
{
	/* nopl 0x44524e42(%rax): the marker insn-count.c looks for */
	__asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0x42, 0x4e, 0x52, 0x44" ::: "memory");
	return 0;
}
