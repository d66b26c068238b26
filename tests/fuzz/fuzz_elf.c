// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target: elf_symtab over an arbitrary image (headers, build-id
 * notes, symbol tables, demangling), with lookups at every symbol and at
 * addresses and offsets taken from the input, and every symbol visited by
 * name as the GC probes do (elf_symtab__each_symbol, gc_probes__site_of).
 *
 * Seeds (corpus/fuzz_elf/) come from one small C file with a global, a
 * static, a weak alias, an asm-labelled C++ name and a size-0 asm function:
 *   tiny-exe:       gcc -Os -nostdlib -static -fno-asynchronous-unwind-tables
 *                   -Wl,--build-id -Wl,-z,norelro -Wl,-z,max-page-size=4096
 *   tiny.o:         gcc -Os -c -fno-asynchronous-unwind-tables
 *   tiny-dynsym.so: gcc -Os -shared -fPIC -nostdlib ... -Wl,-z,noseparate-code,
 *                   then objcopy --strip-all (.dynsym only)
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "symbolize/elf_symtab.h"
#include "user/capture/gc_probes.h"

static uint64_t word_at(const uint8_t *data, size_t size, size_t i)
{
	uint64_t v = 0;

	if (size >= 8)
		memcpy(&v, data + (i * 8) % (size - 7), 8);
	return v;
}

/* Keeps reads of every string from being optimized away. */
static volatile size_t sink;

static int visit(void *ctx, const struct elf_named_sym *sym)
{
	(void)ctx;
	sink += strlen(sym->name) + (size_t)gc_probes__site_of(sym->name) + sym->file_offset;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *why = NULL;
	struct elf_symtab *st;
	struct elf_sym sym;
	uint64_t vaddr;
	size_t i, n;

	st = elf_symtab__from_memory(data, size, &why);
	if (!st) {
		if (!why)
			__builtin_trap();
		return 0;
	}
	sink += strlen(elf_symtab__build_id(st));
	/* before loading: the GC probes scan a table they never load */
	elf_symtab__each_symbol(st, visit, NULL);
	if (elf_symtab__load_symbols(st, &why) && !why)
		__builtin_trap();

	n = elf_symtab__count(st);
	for (i = 0; i < n; i++) {
		if (elf_symtab__entry(st, i, &sym))
			__builtin_trap();
		sink += strlen(sym.name);
		sink += strlen(sym.demangled);
		if (elf_symtab__lookup(st, sym.addr, &sym))
			__builtin_trap();
	}
	for (i = 0; i < 16; i++) {
		uint64_t w = word_at(data, size, i);

		elf_symtab__lookup(st, w, &sym);
		if (!elf_symtab__offset_to_vaddr(st, w & 0xffffff, &vaddr))
			elf_symtab__lookup(st, vaddr, &sym);
	}
	elf_symtab__free(st);
	return 0;
}
