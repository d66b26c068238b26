// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for symbolize/x86_insn: lengths and control flow of single
 * instructions (encodings V8 emits, objdump's reading of them), and every
 * instruction of this test's own .text, walked linearly, against objdump
 * (binutils), a third-party decoder.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/x86_insn.h"

struct want {
	const char *what;
	uint8_t bytes[16];
	uint8_t len;
	enum x86_flow flow;
	int64_t target;
};

static const struct want cases[] = {
	{ "push rbp", { 0x55 }, 1, X86_FLOW_NEXT, 0 },
	{ "mov rbp,rsp", { 0x48, 0x8b, 0xec }, 3, X86_FLOW_NEXT, 0 },
	{ "cmp rsp,[r13-0x60]", { 0x49, 0x3b, 0x65, 0xa0 }, 4, X86_FLOW_NEXT, 0 },
	{ "jae +0xa", { 0x73, 0x0a }, 2, X86_FLOW_JCC, 12 },
	{ "mov eax,0x1b0", { 0xb8, 0xb0, 0x01, 0x00, 0x00 }, 5, X86_FLOW_NEXT, 0 },
	{ "call rel32", { 0xe8, 0xa5, 0x59, 0x01, 0xa0 }, 5, X86_FLOW_CALL, 5 + (int32_t)0xa00159a5 },
	{ "jo rel32", { 0x0f, 0x80, 0xc3, 0x04, 0x00, 0x00 }, 6, X86_FLOW_JCC, 6 + 0x4c3 },
	{ "jmp rel32 back", { 0xe9, 0x5a, 0xff, 0xff, 0xff }, 5, X86_FLOW_JMP, 5 - 0xa6 },
	{ "jmp rel8", { 0xeb, 0x06 }, 2, X86_FLOW_JMP, 8 },
	{ "div edi", { 0xf7, 0xf7 }, 2, X86_FLOW_NEXT, 0 },
	{ "test edi,imm32", { 0xf7, 0xc7, 0x01, 0x00, 0x00, 0x00 }, 6, X86_FLOW_NEXT, 0 },
	{ "test byte [rax],imm8", { 0xf6, 0x00, 0x01 }, 3, X86_FLOW_NEXT, 0 },
	{ "cmpb [r13-0x4f],0", { 0x41, 0x80, 0x7d, 0xb1, 0x00 }, 5, X86_FLOW_NEXT, 0 },
	{ "movabs rax,imm64", { 0x48, 0xb8, 0x9d, 0xf3, 0x83, 0x00, 0x3d, 0x20, 0x00, 0x00 }, 10,
	  X86_FLOW_NEXT, 0 },
	{ "mov rbx,[rip-0x54]", { 0x48, 0x8b, 0x1d, 0xac, 0xff, 0xff, 0xff }, 7, X86_FLOW_NEXT, 0 },
	{ "nopw 0(rax,rax)", { 0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 }, 9,
	  X86_FLOW_NEXT, 0 },
	{ "call [r13-0x28] (exit stub)", { 0x41, 0xff, 0x55, 0xd8 }, 4, X86_FLOW_CALL_INDIRECT, 0 },
	{ "jmp [r10+rcx*8]", { 0x43, 0xff, 0x24, 0xca }, 4, X86_FLOW_JMP_INDIRECT, 0 },
	{ "ret 0x10", { 0xc2, 0x10, 0x00 }, 3, X86_FLOW_RET, 0 },
	{ "ret", { 0xc3 }, 1, X86_FLOW_RET, 0 },
	{ "int3", { 0xcc }, 1, X86_FLOW_STOP, 0 },
	{ "ud2", { 0x0f, 0x0b }, 2, X86_FLOW_STOP, 0 },
	{ "vmovsd [rax+3],xmm15 (VEX2)", { 0xc5, 0x7b, 0x11, 0x78, 0x03 }, 5, X86_FLOW_NEXT, 0 },
	{ "vcvtsi2sd (VEX2)", { 0xc5, 0x03, 0x2a, 0xfa }, 4, X86_FLOW_NEXT, 0 },
	{ "vpshufd imm8 (VEX3 map1)", { 0xc4, 0xe1, 0x79, 0x70, 0xc1, 0x1b }, 6, X86_FLOW_NEXT, 0 },
	{ "vroundsd (VEX3 map3)", { 0xc4, 0xe3, 0x79, 0x0b, 0xc1, 0x09 }, 6, X86_FLOW_NEXT, 0 },
	{ "vzeroupper", { 0xc5, 0xf8, 0x77 }, 3, X86_FLOW_NEXT, 0 },
	{ "pshufb (0F38)", { 0x66, 0x0f, 0x38, 0x00, 0xc1 }, 5, X86_FLOW_NEXT, 0 },
	{ "roundsd (0F3A)", { 0x66, 0x0f, 0x3a, 0x0b, 0xc1, 0x04 }, 6, X86_FLOW_NEXT, 0 },
	{ "mov ax,imm16", { 0x66, 0xb8, 0x34, 0x12 }, 4, X86_FLOW_NEXT, 0 },
	{ "add ax,imm16", { 0x66, 0x05, 0x34, 0x12 }, 4, X86_FLOW_NEXT, 0 },
	{ "mov al,[moffs64]", { 0xa0, 1, 2, 3, 4, 5, 6, 7, 8 }, 9, X86_FLOW_NEXT, 0 },
	{ "enter", { 0xc8, 0x10, 0x00, 0x01 }, 4, X86_FLOW_NEXT, 0 },
	{ "lock cmpxchg [rdi],ecx", { 0xf0, 0x0f, 0xb1, 0x0f }, 4, X86_FLOW_NEXT, 0 },
	{ "imul eax,[rbx+rcx*4+0x10],imm32", { 0x69, 0x44, 0x8b, 0x10, 1, 2, 3, 4 }, 8,
	  X86_FLOW_NEXT, 0 },
	{ "xbegin", { 0xc7, 0xf8, 0, 0, 0, 0 }, 6, X86_FLOW_NEXT, 0 },
	{ "EVEX vaddps zmm", { 0x62, 0xf1, 0x7c, 0x48, 0x58, 0xc2 }, 6, X86_FLOW_NEXT, 0 },
};

static void test_encodings(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct want *w = &cases[i];
		struct x86_insn in;

		if (x86_insn__decode(w->bytes, w->len, &in))
			fail_msg("%s: refused", w->what);
		if (in.length != w->len || in.flow != w->flow || in.target != w->target)
			fail_msg("%s: length %u flow %d target %lld, want %u %d %lld", w->what,
				 in.length, in.flow, (long long)in.target, w->len, w->flow,
				 (long long)w->target);
		/* one byte short: refused, never read past */
		assert_int_equal(x86_insn__decode(w->bytes, w->len - 1u, &in), -EINVAL);
	}
}

static void test_refused(void **state)
{
	static const uint8_t invalid[][4] = {
		{ 0x06 },		/* push es: not in 64-bit mode */
		{ 0x62 },		/* EVEX cut short */
		{ 0xc6, 0x48, 0 },	/* c6 /1 */
		{ 0xff, 0xf8 },		/* ff /7 */
		{ 0x0f, 0x04 },
	};
	/* 15 prefixes and an opcode: longer than any instruction */
	uint8_t prefixes[20];
	struct x86_insn in;
	(void)state;

	for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++)
		assert_int_equal(x86_insn__decode(invalid[i], sizeof(invalid[i]), &in), -EINVAL);
	memset(prefixes, 0x66, sizeof(prefixes));
	prefixes[15] = 0x90;
	assert_int_equal(x86_insn__decode(prefixes, sizeof(prefixes), &in), -EINVAL);
	assert_int_equal(x86_insn__decode(prefixes, 0, &in), -EINVAL);
}

static char self[4096];

/* The file offset and address of this executable's .text, from objdump -h. */
static int text_section(uint64_t *vma, uint64_t *offset, uint64_t *size)
{
	char line[512], cmd[4200];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	FILE *p;
	int ok = -1;

	/* objdump's own /proc/self/exe would be objdump */
	if (len <= 0 || strchr(self, '\''))
		return -1;
	self[len] = '\0';
	snprintf(cmd, sizeof(cmd), "objdump -h '%s' 2>/dev/null", self);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long s, v, l, o;
		char name[64];

		if (sscanf(line, " %*d %63s %llx %llx %llx %llx", name, &s, &v, &l, &o) == 5 &&
		    !strcmp(name, ".text")) {
			*size = s;
			*vma = v;
			*offset = o;
			ok = 0;
		}
	}
	pclose(p);
	return ok;
}

/*
 * objdump's instruction starts in .text, and this decoder's, walked from
 * each function's first instruction: equal wherever objdump decoded.
 */
static void test_against_objdump(void **state)
{
	uint64_t vma, offset, size, checked = 0, differ = 0;
	uint64_t *starts = NULL;
	size_t n = 0, cap = 0;
	uint8_t *text;
	char line[512], cmd[4200];
	FILE *f, *p;
	(void)state;

	if (text_section(&vma, &offset, &size)) {
		skip();
		return;
	}
	text = malloc(size);
	assert_non_null(text);
	f = fopen(self, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, (long)offset, SEEK_SET), 0);
	assert_int_equal(fread(text, 1, size, f), size);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "objdump -d --no-show-raw-insn -j .text '%s'", self);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a;
		char rest[16];

		/* "  401234:\tmov ..." (a line of its own per instruction) */
		if (sscanf(line, " %llx:\t%15s", &a, rest) == 2 && a >= vma && a < vma + size) {
			if (n == cap) {
				cap = cap ? cap * 2 : 4096;
				starts = realloc(starts, cap * sizeof(*starts));
				assert_non_null(starts);
			}
			starts[n++] = a;
		}
	}
	pclose(p);
	assert_true(n > 1000);
	for (size_t i = 0; i + 1 < n; i++) {
		struct x86_insn in;
		uint64_t at = starts[i] - vma;

		if (x86_insn__decode(text + at, size - at, &in)) {
			differ++;
			continue;
		}
		checked++;
		differ += starts[i] + in.length != starts[i + 1];
	}
	printf("objdump: %zu instructions, %llu decoded, %llu not alike\n", n,
	       (unsigned long long)checked, (unsigned long long)differ);
	/* padding objdump prints as one line ("...", data in code) may differ; nothing else */
	assert_true(differ * 1000 <= n);
	free(starts);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encodings),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_against_objdump),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
