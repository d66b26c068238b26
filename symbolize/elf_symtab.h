/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * elf_symtab: what the symbolizer needs from one ELF file.
 *
 * - The GNU build-id (lowercase hex, "" when the file has none).
 * - The PT_LOAD segments, to turn a file offset into an ELF virtual address.
 *   With a mapping's start and offset from /proc/PID/maps this covers PIE and
 *   shared-library load bias:
 *	elf_symtab__offset_to_vaddr(st, ip - map.start + map.offset, &vaddr)
 * - Function symbols (STT_FUNC, STT_GNU_IFUNC) from .symtab, or from .dynsym
 *   when there is no usable .symtab, sorted for binary search.  At one
 *   address one symbol is kept: one with a size over a size-0 one, GLOBAL
 *   over WEAK over LOCAL, then the name with fewer leading underscores, then
 *   the shorter one.  A size-0 symbol covers up to the next symbol (within
 *   its section).  Names stay in the file's string table (mapped, not
 *   copied); C++ (and Rust v0) names are demangled on first lookup and
 *   cached.
 *
 * - Any defined symbol by name (elf_symtab__find_symbol()), e.g. a TLS
 *   variable, and the PT_TLS segment, from which a TLS variable's offset
 *   from the thread pointer follows.
 *
 * Opening reads the headers, program headers and build-id only; symbols are
 * read by elf_symtab__load_symbols() or the first lookup, so a cache keyed
 * by build-id can drop a duplicate before paying for its symbols.
 *
 * Errors: constructors return NULL with errno set (EISDIR, ENOEXEC for a
 * file that is not a usable ELF: empty, not ELF, truncated, corrupt;
 * ENOMEM; or the errno of open/read) and, when reason is not NULL, a short
 * static description such as "truncated ELF (section headers past end of
 * file)" that a caller can put in a note.  Nothing here prints.
 *
 * Ownership: all strings and entries handed out stay valid until
 * elf_symtab__free().  Not thread-safe.
 *
 * Files that change under us: a mapped file that is truncated in place
 * kills its reader with SIGBUS, and isoprof reads files that other users
 * own.  So a file is mapped only when nobody but root can shrink it: owned
 * by root, not writable by group or others, not on FUSE.  Any other file
 * is read with pread() as libelf needs it (headers when opened, a symbol
 * table when loaded): a truncated file then reads short and is reported
 * as a truncated ELF, never a signal.  Such a file must be at most
 * SAFE_OPEN_ELF_MAX bytes (-EFBIG otherwise), and the elf_symtab holds a
 * duplicate of its descriptor until elf_symtab__load_symbols() has read
 * both symbol tables, then closes it.  Replacing a file (write a new one,
 * rename), as package managers and linkers do, is safe either way.
 */
#ifndef ISOPROF_SYMBOLIZE_ELF_SYMTAB_H
#define ISOPROF_SYMBOLIZE_ELF_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_symtab;

struct elf_sym {
	uint64_t addr;		/* ELF virtual address of the symbol */
	uint64_t size;		/* bytes covered (see above for size-0 symbols) */
	const char *name;	/* as in the file (mangled) */
	const char *demangled;	/* demangled; == name when not mangled */
};

/* Open path (a regular file); mapped or read as said above. */
struct elf_symtab *elf_symtab__open(const char *path, const char **reason);

/* Same from an open descriptor, which the caller keeps and closes. */
struct elf_symtab *elf_symtab__open_fd(int fd, const char **reason);

/* Same from bytes in memory (fuzzing, images read from elsewhere); copied. */
struct elf_symtab *elf_symtab__from_memory(const void *buf, size_t len, const char **reason);

void elf_symtab__free(struct elf_symtab *st);

/* Lowercase hex build-id, "" when there is none. */
const char *elf_symtab__build_id(const struct elf_symtab *st);

/* Size of the file or image in bytes. */
uint64_t elf_symtab__file_size(const struct elf_symtab *st);

/*
 * The ELF virtual address of file offset off, from the PT_LOAD segment whose
 * file bytes contain it.  -ENOENT when no segment does.
 */
int elf_symtab__offset_to_vaddr(const struct elf_symtab *st, uint64_t off, uint64_t *vaddr);

/*
 * Read the function symbols; does nothing the second time.  A file with no
 * symbol table at all is not an error (elf_symtab__count() is then 0).
 * -ENOEXEC with *reason set when the tables are corrupt or truncated (the
 * failure is remembered and returned again), -ENOMEM.
 */
int elf_symtab__load_symbols(struct elf_symtab *st, const char **reason);

/* Function symbols kept; 0 before loading or when the file has none. */
size_t elf_symtab__count(const struct elf_symtab *st);

/* ".symtab", ".dynsym", or NULL when no table was used. */
const char *elf_symtab__table(const struct elf_symtab *st);

/*
 * The symbol covering vaddr, loading the symbols first if needed.
 * 0 and *out filled; -ENOENT when no symbol covers vaddr; -ENODATA when the
 * file has no function symbols; -ENOEXEC or -ENOMEM from loading.
 */
int elf_symtab__lookup(struct elf_symtab *st, uint64_t vaddr, struct elf_sym *out);

/* The i-th symbol in address order (demangled too); -ENOENT when out of range. */
int elf_symtab__entry(struct elf_symtab *st, size_t i, struct elf_sym *out);

/* One symbol of any type, as found by name. */
struct elf_named_sym {
	const char *name;	/* as in the file (mangled) */
	uint64_t value;		/* st_value: an address; for STT_TLS, the offset in the TLS segment */
	uint64_t size;		/* st_size */
	uint64_t file_offset;	/* where the bytes at value are in the file; UINT64_MAX
				 * when they are not in it (.bss, TLS, absolute) */
	unsigned char type;	/* STT_* */
	unsigned char bind;	/* STB_* */
	const char *table;	/* ".symtab" or ".dynsym" */
};

/*
 * The first defined (not SHN_UNDEF) symbol named exactly name, of any type
 * and binding, from .symtab, then from .dynsym.  A linear scan that does not
 * load the function symbols.  0 and *out filled; -ENOENT when no readable
 * table has it; -ENOEXEC when the tables exist but none can be read;
 * -EINVAL for an empty name.
 */
int elf_symtab__find_symbol(struct elf_symtab *st, const char *name, struct elf_named_sym *out);

/* Same, for the first symbol whose name starts with prefix ("_ZN7workerd"). */
int elf_symtab__find_symbol_prefix(struct elf_symtab *st, const char *prefix,
				   struct elf_named_sym *out);

/* One name elf_symtab__find_symbols() looks for. */
struct elf_symbol_query {
	const char *name;		/* in: not empty */
	bool prefix;			/* in: name is a prefix of the symbol's */
	unsigned int types;		/* in: 0, or only these (1u << STT_*) */
	unsigned int unless;		/* in: 0, or 1 + the index of a query whose
					 * answer makes this one moot */
	int err;			/* out: 0 found, -ENOENT, -ENOEXEC as above,
					 * -ECANCELED when moot */
	struct elf_named_sym sym;	/* out, when found */
};

#define ELF_SYMBOL_QUERY_MAX 16

/*
 * Several names at once, each answered as elf_symtab__find_symbol() (or
 * _prefix) would, in one pass per table rather than one per name, which
 * ends once every query is answered or moot.  Most of the cost is reading
 * names (a cache miss each, in workerd's 38 MB string table): a name is
 * read only for a symbol of a type some open query takes.  0 with each
 * q[i].err set; -EINVAL for an empty name or a bad unless, -E2BIG for
 * more than ELF_SYMBOL_QUERY_MAX.
 */
int elf_symtab__find_symbols(struct elf_symtab *st, struct elf_symbol_query *q, size_t n);

/*
 * Every defined symbol of .symtab (of .dynsym when there is no .symtab), in
 * table order, to fn until it returns non-zero; the name and the rest are
 * valid until elf_symtab__free().  A linear scan that does not load the
 * function symbols, for callers that match names by pattern.  0, fn's
 * non-zero value, -ENOEXEC when no table can be read.
 */
int elf_symtab__each_symbol(struct elf_symtab *st,
			    int (*fn)(void *ctx, const struct elf_named_sym *sym), void *ctx);

/*
 * The PT_TLS segment: its size in memory, alignment and virtual address.
 * -ENOENT when the file has none.  On x86-64 (TLS variant II) the variable
 * at offset v of an executable's TLS segment sits at
 *	thread pointer - round_up(memsz, align) + v
 * (glibc's formula, assuming vaddr is a multiple of align as linkers make it).
 */
int elf_symtab__tls_segment(const struct elf_symtab *st, uint64_t *memsz, uint64_t *align,
			    uint64_t *vaddr);

#endif /* ISOPROF_SYMBOLIZE_ELF_SYMTAB_H */
