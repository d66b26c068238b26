// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for symbolize/elf_symtab, over the symfix fixture
 * (tests/fixtures/symfix.c), copies of it that the test damages, the
 * system's libc (stripped to .dynsym on Debian), and the tlsfix fixture
 * (tests/fixtures/tlsfix.c), which prints where its TLS variables are.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/elf_symtab.h"
#include "symbolize/proc_maps.h"

static char fixture[4096];

/* Test paths are short; a truncated one is a broken test, not a warning. */
static void fmt_ok(int n, size_t size)
{
	assert_true(n >= 0 && (size_t)n < size);
}
static char tmpdir[] = "/tmp/test_elf_symtab.XXXXXX";

struct nm_sym {
	const char *name;
	uint64_t addr;
};

/* What nm says about the fixture, read at test time. */
static struct nm_sym known[] = {
	{ "symfix_alpha", 0 }, { "symfix_beta", 0 }, { "symfix_local", 0 },
	{ "_ZN6symfix7mangledEi", 0 }, { "_RNvCs1_6symfix4rust", 0 },
	{ "symfix_nosize", 0 }, { "main", 0 },
};

static uint64_t known_addr(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(known[i].name, name))
			return known[i].addr;
	fail_msg("unknown symbol %s", name);
	return 0;
}

static bool find_fixture(char *out, size_t len)
{
	const char *env = getenv("FIXTURES"), *build = getenv("BUILD");
	const char *fmts[] = { "%s/symfix", "%s/fixtures/symfix", "%s/../fixtures/symfix" };
	const char *bases[] = { env, build, build };
	size_t i;

	for (i = 0; i < 3; i++) {
		if (!bases[i])
			continue;
		snprintf(out, len, fmts[i], bases[i]);
		if (!access(out, X_OK))
			return true;
	}
	snprintf(out, len, "build/fixtures/symfix");
	return !access(out, X_OK);
}

static int setup(void **state)
{
	char cmd[8192], line[512], type, name[256];
	unsigned long long addr;
	size_t i, found = 0;
	FILE *f;

	(void)state;
	if (!find_fixture(fixture, sizeof(fixture))) {
		fprintf(stderr, "symfix fixture not found: set FIXTURES or BUILD\n");
		return -1;
	}
	if (!mkdtemp(tmpdir))
		return -1;
	fmt_ok(snprintf(cmd, sizeof(cmd), "nm --defined-only '%s'", fixture), sizeof(cmd));
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
			if (!strcmp(known[i].name, name) && !known[i].addr) {
				known[i].addr = addr;
				found++;
			}
		}
	}
	pclose(f);
	return found == sizeof(known) / sizeof(known[0]) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[256];

	(void)state;
	fmt_ok(snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir), sizeof(cmd));
	return system(cmd) == 0 ? 0 : -1;
}

static void *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	void *buf;

	assert_non_null(f);
	assert_int_equal(fstat(fileno(f), &st), 0);
	*len = (size_t)st.st_size;
	buf = malloc(*len ? *len : 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, *len, f), *len);
	fclose(f);
	return buf;
}

static void spit(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void expect_lookup(struct elf_symtab *st, uint64_t vaddr, const char *name,
			  const char *demangled, uint64_t sym_addr)
{
	struct elf_sym sym;
	int err = elf_symtab__lookup(st, vaddr, &sym);

	if (err)
		fail_msg("%#llx: lookup failed (%d), expected %s",
			 (unsigned long long)vaddr, err, name);
	assert_string_equal(sym.name, name);
	assert_string_equal(sym.demangled, demangled ? demangled : name);
	assert_int_equal(sym.addr, sym_addr);
	assert_true(vaddr - sym.addr < sym.size);
}

static void check_fixture_symbols(struct elf_symtab *st)
{
	uint64_t alpha = known_addr("symfix_alpha"), nosize = known_addr("symfix_nosize");
	uint64_t mangled = known_addr("_ZN6symfix7mangledEi");
	struct elf_sym a, b;

	assert_int_equal(elf_symtab__load_symbols(st, NULL), 0);
	assert_string_equal(elf_symtab__table(st), ".symtab");
	assert_true(elf_symtab__count(st) >= 6);

	/* The weak alias at the same address loses to the global name. */
	expect_lookup(st, alpha, "symfix_alpha", NULL, alpha);
	expect_lookup(st, alpha + 4, "symfix_alpha", NULL, alpha);
	expect_lookup(st, known_addr("symfix_beta") + 1, "symfix_beta", NULL,
		      known_addr("symfix_beta"));
	expect_lookup(st, known_addr("symfix_local"), "symfix_local", NULL,
		      known_addr("symfix_local"));
	expect_lookup(st, mangled + 3, "_ZN6symfix7mangledEi", "symfix::mangled", mangled);
	expect_lookup(st, known_addr("_RNvCs1_6symfix4rust") + 1, "_RNvCs1_6symfix4rust",
		      "symfix::rust", known_addr("_RNvCs1_6symfix4rust"));
	expect_lookup(st, known_addr("main"), "main", NULL, known_addr("main"));
	/* Size 0: covers up to the next symbol, which is symfix_alpha here. */
	expect_lookup(st, nosize, "symfix_nosize", NULL, nosize);
	expect_lookup(st, nosize + 2, "symfix_nosize", NULL, nosize);
	assert_int_equal(alpha - nosize, 5);

	/* The demangled name is made once and kept. */
	assert_int_equal(elf_symtab__lookup(st, mangled, &a), 0);
	assert_int_equal(elf_symtab__lookup(st, mangled + 1, &b), 0);
	assert_ptr_equal(a.demangled, b.demangled);

	assert_int_equal(elf_symtab__lookup(st, 0, &a), -ENOENT);
	assert_int_equal(elf_symtab__lookup(st, UINT64_MAX, &a), -ENOENT);
}

static void test_fixture_file(void **state)
{
	const char *why = NULL;
	struct elf_symtab *st;
	struct elf_sym sym, prev;
	uint64_t vaddr;
	size_t i;

	(void)state;
	st = elf_symtab__open(fixture, &why);
	if (!st)
		fail_msg("open %s: %s", fixture, why);
	/* gcc on Debian always links a 20-byte GNU build-id. */
	assert_int_equal(strlen(elf_symtab__build_id(st)), 40);
	assert_int_equal(strspn(elf_symtab__build_id(st), "0123456789abcdef"), 40);
	check_fixture_symbols(st);

	/* Sorted, unique addresses. */
	for (i = 0; i < elf_symtab__count(st); i++) {
		assert_int_equal(elf_symtab__entry(st, i, &sym), 0);
		if (i)
			assert_true(prev.addr < sym.addr);
		prev = sym;
	}
	assert_int_equal(elf_symtab__entry(st, i, &sym), -ENOENT);

	/* gcc's default layout: the text segment's offset equals its address. */
	assert_int_equal(elf_symtab__offset_to_vaddr(st, known_addr("main"), &vaddr), 0);
	assert_int_equal(vaddr, known_addr("main"));
	assert_int_equal(elf_symtab__offset_to_vaddr(st, elf_symtab__file_size(st) + 4096,
						     &vaddr), -ENOENT);
	elf_symtab__free(st);
	elf_symtab__free(NULL);
}

static void test_fixture_memory(void **state)
{
	const char *why = NULL;
	struct elf_symtab *st;
	size_t len;
	void *buf;

	(void)state;
	buf = slurp(fixture, &len);
	st = elf_symtab__from_memory(buf, len, &why);
	if (!st)
		fail_msg("from_memory: %s", why);
	/* The image is copied: the caller's buffer may go. */
	memset(buf, 0, len);
	free(buf);
	assert_int_equal(elf_symtab__file_size(st), len);
	check_fixture_symbols(st);
	elf_symtab__free(st);
}

static void expect_open_error(const char *path, int err, const char *reason_part)
{
	const char *why = NULL;
	struct elf_symtab *st;

	errno = 0;
	st = elf_symtab__open(path, &why);
	if (st)
		fail_msg("%s: opened, expected \"%s\"", path, reason_part);
	assert_int_equal(errno, err);
	assert_non_null(why);
	if (!strstr(why, reason_part))
		fail_msg("%s: reason \"%s\", expected \"%s\"", path, why, reason_part);
}

static void test_truncated(void **state)
{
	size_t len, cuts[] = { 1, 3, 10, 52, 63, 64, 65, 1000, 4096 }, i;
	char path[4200];
	void *buf;

	(void)state;
	buf = slurp(fixture, &len);
	fmt_ok(snprintf(path, sizeof(path), "%s/truncated", tmpdir), sizeof(path));

	spit(path, buf, 0);
	expect_open_error(path, ENOEXEC, "empty file");
	spit(path, buf, 3);
	expect_open_error(path, ENOEXEC, "not an ELF file");
	spit(path, buf, 10);
	expect_open_error(path, ENOEXEC, "truncated ELF (header)");
	spit(path, buf, 63);
	expect_open_error(path, ENOEXEC, "truncated ELF (header)");
	/* Section headers come last in the file: any later cut loses them. */
	spit(path, buf, len / 2);
	expect_open_error(path, ENOEXEC, "section headers past end of file");
	spit(path, buf, len - 1);
	expect_open_error(path, ENOEXEC, "section headers past end of file");

	/* And none of these crash in memory either. */
	for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		const char *why = NULL;

		assert_null(elf_symtab__from_memory(buf, cuts[i], &why));
		assert_int_equal(errno, ENOEXEC);
		assert_non_null(why);
	}
	free(buf);
}

static void test_not_elf(void **state)
{
	static const char text[] = "#!/bin/sh\necho this is not an ELF file\n";
	char path[4200];

	(void)state;
	fmt_ok(snprintf(path, sizeof(path), "%s/script", tmpdir), sizeof(path));
	spit(path, text, sizeof(text) - 1);
	expect_open_error(path, ENOEXEC, "not an ELF file");
	expect_open_error(tmpdir, EISDIR, "is a directory");
	expect_open_error("/dev/null", ENOEXEC, "not a regular file");
	fmt_ok(snprintf(path, sizeof(path), "%s/nonexistent", tmpdir), sizeof(path));
	expect_open_error(path, ENOENT, "no such file");
}

/* The section header of the first section of type, in a copy of the fixture. */
static Elf64_Shdr *find_shdr(void *buf, size_t len, uint32_t type)
{
	Elf64_Ehdr *eh = buf;
	Elf64_Shdr *sh;
	size_t i;

	assert_true(len > sizeof(*eh));
	assert_int_equal(eh->e_ident[EI_CLASS], ELFCLASS64);
	assert_true(eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(*sh) <= len);
	sh = (Elf64_Shdr *)((char *)buf + eh->e_shoff);
	for (i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type == type)
			return &sh[i];
	fail_msg("no section of type %u", type);
	return NULL;
}

static void expect_load_error(void *buf, size_t len, const char *name, const char *reason_part)
{
	const char *why = NULL;
	struct elf_symtab *st;
	struct elf_sym sym;
	char path[4200];

	fmt_ok(snprintf(path, sizeof(path), "%s/%s", tmpdir, name), sizeof(path));
	spit(path, buf, len);
	st = elf_symtab__open(path, &why);
	if (!st)
		fail_msg("%s: open failed: %s", name, why);
	assert_int_equal(elf_symtab__load_symbols(st, &why), -ENOEXEC);
	if (!strstr(why, reason_part))
		fail_msg("%s: reason \"%s\", expected \"%s\"", name, why, reason_part);
	/* Remembered, not retried. */
	why = NULL;
	assert_int_equal(elf_symtab__load_symbols(st, &why), -ENOEXEC);
	assert_non_null(why);
	assert_int_equal(elf_symtab__lookup(st, known_addr("main"), &sym), -ENOEXEC);
	elf_symtab__free(st);
}

static void test_corrupt_tables(void **state)
{
	Elf64_Shdr *sh;
	size_t len;
	void *buf;

	(void)state;
	buf = slurp(fixture, &len);
	sh = find_shdr(buf, len, SHT_SYMTAB);
	sh->sh_link = 9999;
	expect_load_error(buf, len, "bad_link", "string table link");
	sh->sh_link = 0;
	expect_load_error(buf, len, "zero_link", "string table link");
	/* Section 1 is .interp, a PROGBITS section, not strings. */
	sh->sh_link = 1;
	expect_load_error(buf, len, "progbits_link", "string table link");
	free(buf);

	buf = slurp(fixture, &len);
	sh = find_shdr(buf, len, SHT_SYMTAB);
	sh->sh_offset = len - 8;
	expect_load_error(buf, len, "symtab_past_eof", "symbol table past end of file");
	free(buf);

	buf = slurp(fixture, &len);
	sh = find_shdr(buf, len, SHT_SYMTAB);
	sh->sh_entsize = 7;
	expect_load_error(buf, len, "bad_entsize", "symbol entry size");
	free(buf);

	buf = slurp(fixture, &len);
	((Elf64_Ehdr *)buf)->e_shoff = (Elf64_Off)len * 4;
	{
		char path[4200];

		fmt_ok(snprintf(path, sizeof(path), "%s/shoff_past_eof", tmpdir), sizeof(path));
		spit(path, buf, len);
		expect_open_error(path, ENOEXEC, "section headers past end of file");
	}
	free(buf);
}

static void test_stripped(void **state)
{
	char path[4200], cmd[9000];
	const char *why = NULL;
	struct elf_symtab *st;
	struct elf_sym sym;

	(void)state;
	fmt_ok(snprintf(path, sizeof(path), "%s/stripped", tmpdir), sizeof(path));
	fmt_ok(snprintf(cmd, sizeof(cmd), "objcopy --strip-all '%s' '%s'", fixture, path),
	       sizeof(cmd));
	assert_int_equal(system(cmd), 0);
	st = elf_symtab__open(path, &why);
	assert_non_null(st);
	assert_int_equal(strlen(elf_symtab__build_id(st)), 40);
	/* .dynsym holds only imports: no function of the program's own. */
	assert_int_equal(elf_symtab__load_symbols(st, &why), 0);
	assert_int_equal(elf_symtab__count(st), 0);
	assert_null(elf_symtab__table(st));
	assert_int_equal(elf_symtab__lookup(st, known_addr("main"), &sym), -ENODATA);
	elf_symtab__free(st);
}

/* Debian's libc.so.6 has no .symtab: its .dynsym must do. */
static void test_dynsym_libc(void **state)
{
	uint64_t ip = (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "getpid"), vaddr;
	const struct proc_map *m;
	struct proc_maps *maps;
	struct elf_symtab *st;
	const char *why = NULL;
	struct elf_sym sym;
	size_t n;

	(void)state;
	assert_true(ip != 0);
	maps = proc_maps__read(NULL, getpid());
	assert_non_null(maps);
	m = proc_maps__find(maps, ip);
	assert_non_null(m);
	st = elf_symtab__open(m->path, &why);
	if (!st)
		fail_msg("%s: %s", m->path, why);
	assert_int_equal(elf_symtab__load_symbols(st, NULL), 0);
	if (strcmp(elf_symtab__table(st), ".dynsym")) {
		elf_symtab__free(st);
		proc_maps__free(maps);
		skip(); /* a libc with full symbols: covered by the fixture */
	}
	assert_int_equal(elf_symtab__offset_to_vaddr(st, ip - m->start + m->offset, &vaddr), 0);
	assert_int_equal(elf_symtab__lookup(st, vaddr, &sym), 0);
	n = strlen(sym.name);
	assert_true(n >= 6 && !strcmp(sym.name + n - 6, "getpid"));
	assert_int_equal(sym.addr, vaddr);
	elf_symtab__free(st);
	proc_maps__free(maps);
}

static void expect_named(struct elf_symtab *st, const char *name, unsigned char type,
			 unsigned char bind, const char *table, struct elf_named_sym *out)
{
	int err = elf_symtab__find_symbol(st, name, out);

	if (err)
		fail_msg("%s: find_symbol failed (%d)", name, err);
	assert_string_equal(out->name, name);
	assert_int_equal(out->type, type);
	assert_int_equal(out->bind, bind);
	assert_string_equal(out->table, table);
}

/* Several names in one pass: each answered as one lookup would. */
static void test_find_symbols(void **state)
{
	struct elf_symbol_query q[] = {
		{ .name = "symfix_alpha" },
		{ .name = "symfix_be", .prefix = true },
		{ .name = "symfix_alph" },	/* a prefix is not the name */
		{ .name = "symfix_local" },
		{ .name = "_ZN6symfix", .prefix = true },
		{ .name = "no_such_symbol" },
	};
	struct elf_symbol_query many[ELF_SYMBOL_QUERY_MAX + 1], empty = { .name = "" };
	const char *why = NULL;
	struct elf_symtab *st;

	(void)state;
	st = elf_symtab__open(fixture, &why);
	if (!st)
		fail_msg("open %s: %s", fixture, why);
	assert_int_equal(elf_symtab__find_symbols(st, q, 6), 0);
	assert_int_equal(q[0].err, 0);
	assert_string_equal(q[0].sym.name, "symfix_alpha");
	assert_int_equal(q[0].sym.value, known_addr("symfix_alpha"));
	assert_int_equal(q[0].sym.file_offset, q[0].sym.value);
	assert_int_equal(q[1].err, 0);
	assert_string_equal(q[1].sym.name, "symfix_beta");
	assert_int_equal(q[2].err, -ENOENT);
	assert_int_equal(q[3].err, 0);
	assert_int_equal(q[3].sym.bind, STB_LOCAL);
	assert_int_equal(q[4].err, 0);
	assert_string_equal(q[4].sym.name, "_ZN6symfix7mangledEi");
	assert_int_equal(q[5].err, -ENOENT);
	assert_int_equal(elf_symtab__count(st), 0);
	/* The same query twice: answers again, not left over. */
	assert_int_equal(elf_symtab__find_symbols(st, q, 6), 0);
	assert_int_equal(q[0].err, 0);
	assert_int_equal(q[5].err, -ENOENT);
	assert_int_equal(elf_symtab__find_symbols(st, &empty, 1), -EINVAL);

	/* By type: a function is not found as an object; a moot query is not looked for. */
	q[0] = (struct elf_symbol_query){ .name = "symfix_alpha", .types = 1u << STT_OBJECT };
	q[1] = (struct elf_symbol_query){ .name = "symfix_alpha", .types = 1u << STT_FUNC };
	q[2] = (struct elf_symbol_query){ .name = "symfix_be", .prefix = true, .unless = 2 };
	q[3] = (struct elf_symbol_query){ .name = "no_such_symbol", .unless = 2 };
	q[4] = (struct elf_symbol_query){ .name = "no_such_symbol", .unless = 1 };
	assert_int_equal(elf_symtab__find_symbols(st, q, 5), 0);
	assert_int_equal(q[0].err, -ENOENT);
	assert_int_equal(q[1].err, 0);
	assert_int_equal(q[1].sym.type, STT_FUNC);
	assert_true(q[2].err == 0 || q[2].err == -ECANCELED);
	assert_int_equal(q[3].err, -ECANCELED);
	assert_int_equal(q[4].err, -ENOENT);
	/* unless names another query, not itself nor one past the end */
	q[0].unless = 1;
	assert_int_equal(elf_symtab__find_symbols(st, q, 1), -EINVAL);
	q[0].unless = 3;
	assert_int_equal(elf_symtab__find_symbols(st, q, 2), -EINVAL);
	for (size_t i = 0; i < ELF_SYMBOL_QUERY_MAX + 1; i++)
		many[i] = (struct elf_symbol_query){ .name = "symfix_alpha" };
	assert_int_equal(elf_symtab__find_symbols(st, many, ELF_SYMBOL_QUERY_MAX + 1), -E2BIG);
	assert_int_equal(elf_symtab__find_symbols(st, many, ELF_SYMBOL_QUERY_MAX), 0);
	assert_int_equal(many[ELF_SYMBOL_QUERY_MAX - 1].err, 0);
	elf_symtab__free(st);
}

static void test_find_symbol(void **state)
{
	char path[4200], cmd[9000];
	const char *why = NULL;
	struct elf_named_sym ns;
	struct elf_symtab *st;
	Elf64_Shdr *sh;
	size_t len;
	void *buf;

	(void)state;
	st = elf_symtab__open(fixture, &why);
	if (!st)
		fail_msg("open %s: %s", fixture, why);
	expect_named(st, "symfix_alpha", STT_FUNC, STB_GLOBAL, ".symtab", &ns);
	assert_int_equal(ns.value, known_addr("symfix_alpha"));
	assert_true(ns.size > 0);
	/* gcc's default layout: text file offsets equal addresses. */
	assert_int_equal(ns.file_offset, ns.value);
	expect_named(st, "symfix_alpha_weak", STT_FUNC, STB_WEAK, ".symtab", &ns);
	assert_int_equal(ns.value, known_addr("symfix_alpha"));
	expect_named(st, "symfix_local", STT_FUNC, STB_LOCAL, ".symtab", &ns);
	expect_named(st, "_ZN6symfix7mangledEi", STT_FUNC, STB_GLOBAL, ".symtab", &ns);
	assert_int_equal(ns.value, known_addr("_ZN6symfix7mangledEi"));
	/* Not only functions: the file-name symbol and a linker-made object. */
	expect_named(st, "symfix.c", STT_FILE, STB_LOCAL, ".symtab", &ns);
	expect_named(st, "_DYNAMIC", STT_OBJECT, STB_LOCAL, ".symtab", &ns);
	/* Exact: a prefix of a name is not the name. */
	assert_int_equal(elf_symtab__find_symbol(st, "symfix_alph", &ns), -ENOENT);
	assert_int_equal(elf_symtab__find_symbol(st, "symfix_alpha_weakest", &ns), -ENOENT);
	assert_int_equal(elf_symtab__find_symbol(st, "", &ns), -EINVAL);
	assert_int_equal(elf_symtab__find_symbol_prefix(st, "symfix_be", &ns), 0);
	assert_string_equal(ns.name, "symfix_beta");
	assert_int_equal(elf_symtab__find_symbol_prefix(st, "no_such_prefix_", &ns), -ENOENT);
	/* Finding does not load the function symbols. */
	assert_int_equal(elf_symtab__count(st), 0);
	elf_symtab__free(st);

	/* Stripped: .dynsym holds imports only, and an import is not a definition. */
	fmt_ok(snprintf(path, sizeof(path), "%s/find_stripped", tmpdir), sizeof(path));
	fmt_ok(snprintf(cmd, sizeof(cmd), "objcopy --strip-all '%s' '%s'", fixture, path),
	       sizeof(cmd));
	assert_int_equal(system(cmd), 0);
	st = elf_symtab__open(path, &why);
	assert_non_null(st);
	assert_int_equal(elf_symtab__find_symbol(st, "symfix_alpha", &ns), -ENOENT);
	assert_int_equal(elf_symtab__find_symbol(st, "printf", &ns), -ENOENT);
	elf_symtab__free(st);

	/* A broken .symtab and no .dynsym entry: not found, no crash. */
	buf = slurp(fixture, &len);
	sh = find_shdr(buf, len, SHT_SYMTAB);
	sh->sh_link = 9999;
	fmt_ok(snprintf(path, sizeof(path), "%s/find_bad_link", tmpdir), sizeof(path));
	spit(path, buf, len);
	free(buf);
	st = elf_symtab__open(path, &why);
	assert_non_null(st);
	assert_int_equal(elf_symtab__find_symbol(st, "symfix_alpha", &ns), -ENOENT);
	elf_symtab__free(st);
}

/* Debian's libc has only .dynsym, and a PT_TLS segment (errno and friends). */
static void test_find_symbol_libc(void **state)
{
	uint64_t ip = (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "getpid"), memsz, align, vaddr;
	const struct proc_map *m;
	struct proc_maps *maps;
	struct elf_named_sym ns;
	struct elf_symtab *st;
	const char *why = NULL;

	(void)state;
	maps = proc_maps__read(NULL, getpid());
	assert_non_null(maps);
	m = proc_maps__find(maps, ip);
	assert_non_null(m);
	st = elf_symtab__open(m->path, &why);
	if (!st)
		fail_msg("%s: %s", m->path, why);
	assert_int_equal(elf_symtab__find_symbol(st, "getpid", &ns), 0);
	assert_int_equal(ns.type, STT_FUNC);
	assert_string_equal(ns.table, ".dynsym");
	/* file_offset is what /proc/PID/maps relates to a running address. */
	assert_int_equal(ns.file_offset - m->offset + m->start, ip);
	assert_int_equal(elf_symtab__tls_segment(st, &memsz, &align, &vaddr), 0);
	assert_true(memsz > 0 && align > 0);
	elf_symtab__free(st);
	proc_maps__free(maps);
}

static uint64_t round_up(uint64_t v, uint64_t align)
{
	return align > 1 ? (v + align - 1) / align * align : v;
}

/* The offsets tlsfix prints, recomputed from its file alone. */
static void test_tls_offsets(void **state)
{
	char tlsfix[4200], cmd[8400], line[256], who[16], name[64];
	uint64_t memsz, align, vaddr;
	struct elf_named_sym ns;
	const char *why = NULL;
	struct elf_symtab *st;
	size_t checked = 0;
	long offset;
	FILE *f;

	(void)state;
	fmt_ok(snprintf(tlsfix, sizeof(tlsfix), "%s", fixture), sizeof(tlsfix));
	assert_non_null(strrchr(tlsfix, '/'));
	strcpy(strrchr(tlsfix, '/') + 1, "tlsfix");
	if (access(tlsfix, X_OK))
		fail_msg("%s not found: make fixtures", tlsfix);

	st = elf_symtab__open(tlsfix, &why);
	if (!st)
		fail_msg("open %s: %s", tlsfix, why);
	assert_int_equal(elf_symtab__tls_segment(st, &memsz, &align, &vaddr), 0);
	assert_int_equal(align, 64);
	/* The fixture makes memsz not a multiple of align: rounding matters. */
	assert_true(memsz % align != 0);
	assert_int_equal(vaddr % align, 0);

	fmt_ok(snprintf(cmd, sizeof(cmd), "'%s'", tlsfix), sizeof(cmd));
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%15s %63s %ld", who, name, &offset) != 3)
			continue;
		expect_named(st, name, STT_TLS,
			     strcmp(name, "tlsfix_bss") ? STB_GLOBAL : STB_LOCAL, ".symtab", &ns);
		assert_int_equal(ns.file_offset, UINT64_MAX);
		if ((int64_t)(ns.value - round_up(memsz, align)) != offset)
			fail_msg("%s %s: st_value %#llx, memsz %#llx, align %llu: computed %lld, "
				 "the program says %ld", who, name, (unsigned long long)ns.value,
				 (unsigned long long)memsz, (unsigned long long)align,
				 (long long)(ns.value - round_up(memsz, align)), offset);
		checked++;
	}
	assert_int_equal(pclose(f), 0);
	assert_int_equal(checked, 6);
	elf_symtab__free(st);

	/* symfix has no thread-local data. */
	st = elf_symtab__open(fixture, &why);
	assert_non_null(st);
	assert_int_equal(elf_symtab__tls_segment(st, &memsz, &align, &vaddr), -ENOENT);
	elf_symtab__free(st);
}

/*
 * A file another user owns is read, not mapped: its symbols load the same,
 * and truncating it while it is open (before its tables are read) gives a
 * truncated-ELF error, not SIGBUS.
 */
static void test_shrinking_file(void **state)
{
	char path[4200];
	const char *why = NULL;
	struct elf_symtab *st;
	void *buf;
	size_t len;

	(void)state;
	buf = slurp(fixture, &len);
	fmt_ok(snprintf(path, sizeof(path), "%s/users.so", tmpdir), sizeof(path));
	spit(path, buf, len);
	free(buf);
	/* As root, make it another user's (the test user's own file already is). */
	if (!geteuid())
		assert_int_equal(chown(path, 65534, 65534), 0);

	st = elf_symtab__open(path, &why);
	assert_non_null(st);
	check_fixture_symbols(st);
	elf_symtab__free(st);

	st = elf_symtab__open(path, &why);
	assert_non_null(st);
	assert_int_equal(truncate(path, 4096), 0);
	assert_int_equal(elf_symtab__load_symbols(st, &why), -ENOEXEC);
	assert_non_null(why);
	elf_symtab__free(st);
}

struct visit {
	int seen_alpha, seen_mangled, calls, stop_at;
	uint64_t alpha;
};

static int visit_symbol(void *ctx, const struct elf_named_sym *sym)
{
	struct visit *v = ctx;

	v->calls++;
	if (!strcmp(sym->name, "symfix_alpha")) {
		v->seen_alpha++;
		v->alpha = sym->file_offset;
	}
	v->seen_mangled += !strcmp(sym->name, "_ZN6symfix7mangledEi");
	return v->stop_at && v->calls == v->stop_at ? 42 : 0;
}

/* Every defined symbol once, as find_symbol() names it; the visitor can stop the walk. */
static void test_each_symbol(void **state)
{
	struct visit v = { 0 };
	struct elf_named_sym ns;
	struct elf_symtab *st;
	const char *why = NULL;

	(void)state;
	st = elf_symtab__open(fixture, &why);
	if (!st)
		fail_msg("open %s: %s", fixture, why);
	assert_int_equal(elf_symtab__each_symbol(st, visit_symbol, &v), 0);
	assert_int_equal(v.seen_alpha, 1);
	assert_int_equal(v.seen_mangled, 1);
	assert_int_equal(elf_symtab__find_symbol(st, "symfix_alpha", &ns), 0);
	assert_int_equal(v.alpha, ns.file_offset);
	v = (struct visit){ .stop_at = 3 };
	assert_int_equal(elf_symtab__each_symbol(st, visit_symbol, &v), 42);
	assert_int_equal(v.calls, 3);
	elf_symtab__free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_file),
		cmocka_unit_test(test_fixture_memory),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_corrupt_tables),
		cmocka_unit_test(test_stripped),
		cmocka_unit_test(test_dynsym_libc),
		cmocka_unit_test(test_find_symbol),
		cmocka_unit_test(test_find_symbols),
		cmocka_unit_test(test_each_symbol),
		cmocka_unit_test(test_find_symbol_libc),
		cmocka_unit_test(test_tls_offsets),
		cmocka_unit_test(test_shrinking_file),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
