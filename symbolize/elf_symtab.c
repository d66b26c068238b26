// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* elf_symtab: function symbols of one ELF file; see elf_symtab.h. */
#include "symbolize/elf_symtab.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <libelf.h>
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "lib/safe_open.h"

/* Longer build-ids do not exist in practice; such a note is ignored. */
#define BUILD_ID_MAX 64

/*
 * How far lookup walks back from the nearest symbol looking for an enclosing
 * one.  Sized symbols nest only around the odd assembly label, so a short
 * walk does what an interval tree would.
 */
#define LOOKUP_BACKTRACK 16

struct elf_load {
	uint64_t offset;
	uint64_t filesz;
	uint64_t vaddr;
};

struct esym {
	uint64_t addr;
	uint64_t end;		/* exclusive; 0 until a size-0 symbol is bounded */
	uint32_t name;		/* offset in the string table */
	uint32_t idx;		/* index in the ELF table: stable order, shndx */
	uint8_t rank;		/* see sym_rank() */
};

struct elf_symtab {
	Elf *elf;
	int fd;			/* read, not mapped: ours until the symbols are in; else -1 */
	void *image;		/* our copy, for from_memory */
	uint64_t size;
	char build_id[2 * BUILD_ID_MAX + 1];

	struct elf_load *loads;
	size_t nr_loads;

	bool has_tls;		/* PT_TLS, for elf_symtab__tls_segment() */
	uint64_t tls_memsz, tls_align, tls_vaddr;

	Elf_Scn *symtab_scn;
	Elf_Scn *dynsym_scn;

	bool loaded;
	int load_err;
	const char *load_reason;
	const char *table;

	struct esym *syms;
	size_t nr;
	const char *strtab;	/* in the mapping: names are never copied */
	char **demangled;	/* per symbol, allocated on first mangled name */
};

/* Marks "cplus_demangle() failed" in the cache, so it is not retried. */
static char demangle_failed[1];

static void set_reason(const char **reason, const char *why)
{
	if (reason)
		*reason = why;
}

static void *fail(struct elf_symtab *st, int err, const char **reason, const char *why)
{
	elf_symtab__free(st);
	set_reason(reason, why);
	errno = err;
	return NULL;
}

static uint64_t rd(const unsigned char *p, size_t n, bool msb)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[msb ? i : n - 1 - i] << (8 * (n - 1 - i));
	return v;
}

static bool table_fits(uint64_t off, uint64_t nr, uint64_t entsize, uint64_t size)
{
	if (off > size || !entsize)
		return false;
	return (size - off) / entsize >= nr;
}

/*
 * Check the ELF header against the file size before libelf sees it, so a
 * damaged file gets a reason a person understands instead of "invalid ELF".
 * hdr holds the first hlen bytes of a file of size bytes.
 */
static const char *check_header(const unsigned char *hdr, size_t hlen, uint64_t size)
{
	uint64_t phoff, shoff, phnum, shnum, phentsize, shentsize;
	bool is64, msb;

	if (!size)
		return "empty file";
	if (hlen < SELFMAG || memcmp(hdr, ELFMAG, SELFMAG))
		return "not an ELF file";
	if (hlen < EI_NIDENT)
		return "truncated ELF (header)";
	if (hdr[EI_CLASS] != ELFCLASS32 && hdr[EI_CLASS] != ELFCLASS64)
		return "unsupported ELF class";
	if (hdr[EI_DATA] != ELFDATA2LSB && hdr[EI_DATA] != ELFDATA2MSB)
		return "unsupported ELF byte order";
	is64 = hdr[EI_CLASS] == ELFCLASS64;
	msb = hdr[EI_DATA] == ELFDATA2MSB;
	if (hlen < (is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)))
		return "truncated ELF (header)";

#define FIELD(T, f) rd(hdr + offsetof(T, f), sizeof(((T *)0)->f), msb)
	if (is64) {
		phoff = FIELD(Elf64_Ehdr, e_phoff);
		shoff = FIELD(Elf64_Ehdr, e_shoff);
		phnum = FIELD(Elf64_Ehdr, e_phnum);
		shnum = FIELD(Elf64_Ehdr, e_shnum);
		phentsize = FIELD(Elf64_Ehdr, e_phentsize);
		shentsize = FIELD(Elf64_Ehdr, e_shentsize);
	} else {
		phoff = FIELD(Elf32_Ehdr, e_phoff);
		shoff = FIELD(Elf32_Ehdr, e_shoff);
		phnum = FIELD(Elf32_Ehdr, e_phnum);
		shnum = FIELD(Elf32_Ehdr, e_shnum);
		phentsize = FIELD(Elf32_Ehdr, e_phentsize);
		shentsize = FIELD(Elf32_Ehdr, e_shentsize);
	}
#undef FIELD

	/* A count of 0 with an offset means "the real count is in shdr 0". */
	if (shoff) {
		if (shentsize != (is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr)))
			return "corrupt ELF (section header size)";
		if (!table_fits(shoff, shnum ? shnum : 1, shentsize, size))
			return "truncated ELF (section headers past end of file)";
	}
	if (phoff && phnum) {
		if (phentsize != (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
			return "corrupt ELF (program header size)";
		if (!table_fits(phoff, phnum == PN_XNUM ? 1 : phnum, phentsize, size))
			return "truncated ELF (program headers past end of file)";
	}
	return NULL;
}

static bool note_build_id(Elf_Data *data, char *out)
{
	static const char hex[] = "0123456789abcdef";
	size_t off = 0, next, name_off, desc_off, i;
	GElf_Nhdr nh;

	if (!data || !data->d_buf)
		return false;
	while ((next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const unsigned char *desc = (const unsigned char *)data->d_buf + desc_off;

		off = next;
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != sizeof(ELF_NOTE_GNU) ||
		    memcmp((const char *)data->d_buf + name_off, ELF_NOTE_GNU,
			   sizeof(ELF_NOTE_GNU)) ||
		    !nh.n_descsz || nh.n_descsz > BUILD_ID_MAX)
			continue;
		for (i = 0; i < nh.n_descsz; i++) {
			out[2 * i] = hex[desc[i] >> 4];
			out[2 * i + 1] = hex[desc[i] & 0xf];
		}
		out[2 * i] = '\0';
		return true;
	}
	return false;
}

/* Headers, PT_LOADs, build-id and where the symbol tables are. */
static int read_headers(struct elf_symtab *st, const char **why)
{
	size_t phnum, i, nr_notes = 0;
	Elf_Scn *scn = NULL;
	GElf_Ehdr ehdr;
	GElf_Shdr sh;
	GElf_Phdr ph;

	*why = "corrupt ELF (header)";
	if (elf_kind(st->elf) != ELF_K_ELF) {
		*why = "not an ELF file";
		return -ENOEXEC;
	}
	if (!gelf_getehdr(st->elf, &ehdr))
		return -ENOEXEC;
	*why = "corrupt ELF (program headers)";
	if (elf_getphdrnum(st->elf, &phnum))
		return -ENOEXEC;

	if (phnum) {
		st->loads = calloc(phnum, sizeof(*st->loads));
		if (!st->loads) {
			*why = "out of memory";
			return -ENOMEM;
		}
	}
	for (i = 0; i < phnum; i++) {
		if (!gelf_getphdr(st->elf, (int)i, &ph))
			return -ENOEXEC;
		if (ph.p_type == PT_NOTE)
			nr_notes++;
		if (ph.p_type == PT_TLS && !st->has_tls) {
			st->has_tls = true;
			st->tls_memsz = ph.p_memsz;
			st->tls_align = ph.p_align;
			st->tls_vaddr = ph.p_vaddr;
		}
		if (ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		st->loads[st->nr_loads].offset = ph.p_offset;
		st->loads[st->nr_loads].filesz = ph.p_filesz;
		st->loads[st->nr_loads].vaddr = ph.p_vaddr;
		st->nr_loads++;
	}

	while ((scn = elf_nextscn(st->elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB && !st->symtab_scn)
			st->symtab_scn = scn;
		else if (sh.sh_type == SHT_DYNSYM && !st->dynsym_scn)
			st->dynsym_scn = scn;
		else if (sh.sh_type == SHT_NOTE && !st->build_id[0] &&
			 table_fits(sh.sh_offset, 1, sh.sh_size, st->size))
			note_build_id(elf_getdata(scn, NULL), st->build_id);
	}

	/* Section headers can be stripped; the note segment cannot. */
	for (i = 0; i < phnum && nr_notes && !st->build_id[0]; i++) {
		if (!gelf_getphdr(st->elf, (int)i, &ph) || ph.p_type != PT_NOTE ||
		    !ph.p_filesz || !table_fits(ph.p_offset, 1, ph.p_filesz, st->size))
			continue;
		/* Notes in an 8-aligned segment have 8-aligned fields. */
		note_build_id(elf_getdata_rawchunk(st->elf, (int64_t)ph.p_offset, ph.p_filesz,
						   ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR),
			      st->build_id);
	}
	*why = NULL;
	return 0;
}

/* Common tail of the constructors: st->elf and st->size are set. */
static struct elf_symtab *finish_open(struct elf_symtab *st, const char **reason)
{
	const char *why;
	int err;

	err = read_headers(st, &why);
	if (err)
		return fail(st, -err, reason, why);
	return st;
}

/*
 * Common head of the constructors: the header of an image of size bytes,
 * whose first hlen bytes are at hdr, checked, and the struct allocated.
 * NULL with errno and *reason set.
 */
static struct elf_symtab *symtab_begin(const void *hdr, size_t hlen, uint64_t size,
				       const char **reason)
{
	const char *why = check_header(hdr, hlen, size);
	struct elf_symtab *st;

	if (why) {
		set_reason(reason, why);
		errno = ENOEXEC;
		return NULL;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		set_reason(reason, "libelf version mismatch");
		errno = ENOEXEC;
		return NULL;
	}
	st = calloc(1, sizeof(*st));
	if (!st) {
		set_reason(reason, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	st->size = size;
	return st;
}

/* FUSE: a user's file system can claim any owner and shrink a file at will. */
#define FUSE_MAGIC 0x65735546

/*
 * May the file be mapped?  A mapped file that shrinks kills the reader with
 * SIGBUS.  Only root can shrink a file that root owns and nobody else may
 * write (on a file system the kernel, not a user, answers for), so such a
 * file (system libraries, a root-installed runtime: nearly every byte a
 * host maps) is mapped; any other is read with pread(), which a shrinking
 * file answers with a short read, never a signal.
 */
static bool may_map(int fd, const struct stat *stb)
{
	struct statfs sfs;

	if (stb->st_uid != 0 || (stb->st_mode & (S_IWGRP | S_IWOTH)))
		return false;
	return !fstatfs(fd, &sfs) && sfs.f_type != FUSE_MAGIC;
}

/*
 * A file read, not mapped: once its symbol tables are in memory, libelf
 * needs the descriptor no more.  Both tables and their strings are read
 * first, so a later elf_symtab__find_symbol() still has them.
 */
static void release_fd(struct elf_symtab *st)
{
	Elf_Scn *scns[2] = { st->symtab_scn, st->dynsym_scn };
	GElf_Shdr sh;

	if (st->fd < 0)
		return;
	for (size_t i = 0; i < 2; i++) {
		if (!scns[i] || !gelf_getshdr(scns[i], &sh))
			continue;
		elf_getdata(scns[i], NULL);
		if (sh.sh_link)
			elf_getdata(elf_getscn(st->elf, sh.sh_link), NULL);
	}
	elf_cntl(st->elf, ELF_C_FDDONE);
	close(st->fd);
	st->fd = -1;
}

struct elf_symtab *elf_symtab__open_fd(int fd, const char **reason)
{
	unsigned char hdr[sizeof(Elf64_Ehdr)];
	struct elf_symtab *st;
	struct stat stb;
	ssize_t n;
	bool map;

	if (fstat(fd, &stb)) {
		set_reason(reason, "cannot stat file");
		return NULL;
	}
	if (S_ISDIR(stb.st_mode)) {
		set_reason(reason, "is a directory");
		errno = EISDIR;
		return NULL;
	}
	if (!S_ISREG(stb.st_mode)) {
		set_reason(reason, "not a regular file");
		errno = ENOEXEC;
		return NULL;
	}
	do
		n = pread(fd, hdr, sizeof(hdr), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		set_reason(reason, "cannot read file");
		return NULL;
	}
	map = may_map(fd, &stb);
	if (!map && (uint64_t)stb.st_size > SAFE_OPEN_ELF_MAX) {
		set_reason(reason, "larger than the 4 GiB cap for a file read, not mapped");
		errno = EFBIG;
		return NULL;
	}
	st = symtab_begin(hdr, (size_t)n, (uint64_t)stb.st_size, reason);
	if (!st)
		return NULL;
	st->fd = -1;
	if (map) {
		st->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		if (!st->elf)
			return fail(st, ENOEXEC, reason, elf_errmsg(-1));
		/*
		 * Done with fd: a mapped file needs nothing more from it, and
		 * one that could not be mapped is read whole now.
		 */
		if (elf_cntl(st->elf, ELF_C_FDREAD))
			return fail(st, ENOEXEC, reason, elf_errmsg(-1));
		return finish_open(st, reason);
	}
	/* libelf reads what is asked for, when asked: headers now, tables later. */
	st->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (st->fd < 0)
		return fail(st, errno, reason, "cannot duplicate the descriptor");
	st->elf = elf_begin(st->fd, ELF_C_READ, NULL);
	if (!st->elf)
		return fail(st, ENOEXEC, reason, elf_errmsg(-1));
	return finish_open(st, reason);
}

struct elf_symtab *elf_symtab__open(const char *path, const char **reason)
{
	struct elf_symtab *st;
	int fd, err;

	/* O_NONBLOCK: a FIFO at the path must not hang the profiler. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		err = errno;
		set_reason(reason, err == ENOENT ? "no such file" :
			   err == EACCES ? "permission denied" : "cannot open file");
		errno = err;
		return NULL;
	}
	st = elf_symtab__open_fd(fd, reason);
	err = errno;
	close(fd);
	errno = err;
	return st;
}

struct elf_symtab *elf_symtab__from_memory(const void *buf, size_t len, const char **reason)
{
	struct elf_symtab *st;

	st = symtab_begin(buf, len, len, reason);
	if (!st)
		return NULL;
	st->fd = -1;
	/* libelf wants a writable image and the caller's buffer may go away. */
	st->image = malloc(len);
	if (!st->image)
		return fail(st, ENOMEM, reason, "out of memory");
	memcpy(st->image, buf, len);
	st->elf = elf_memory(st->image, len);
	if (!st->elf)
		return fail(st, ENOEXEC, reason, elf_errmsg(-1));
	return finish_open(st, reason);
}

void elf_symtab__free(struct elf_symtab *st)
{
	size_t i;

	if (!st)
		return;
	if (st->demangled) {
		for (i = 0; i < st->nr; i++)
			if (st->demangled[i] != demangle_failed)
				free(st->demangled[i]);
		free(st->demangled);
	}
	free(st->syms);
	free(st->loads);
	if (st->elf)
		elf_end(st->elf);
	if (st->fd >= 0)
		close(st->fd);
	free(st->image);
	free(st);
}

const char *elf_symtab__build_id(const struct elf_symtab *st)
{
	return st->build_id;
}

uint64_t elf_symtab__file_size(const struct elf_symtab *st)
{
	return st->size;
}

/*
 * Through the PT_LOAD holding x in its file bytes: a file offset to a
 * vaddr (to_vaddr) or back.  false when no PT_LOAD holds it.
 */
static bool load_translate(const struct elf_symtab *st, uint64_t x, bool to_vaddr, uint64_t *out)
{
	size_t i;

	for (i = 0; i < st->nr_loads; i++) {
		const struct elf_load *l = &st->loads[i];
		uint64_t from = to_vaddr ? l->offset : l->vaddr;

		if (x >= from && x - from < l->filesz) {
			*out = x - from + (to_vaddr ? l->vaddr : l->offset);
			return true;
		}
	}
	return false;
}

int elf_symtab__offset_to_vaddr(const struct elf_symtab *st, uint64_t off, uint64_t *vaddr)
{
	return load_translate(st, off, true, vaddr) ? 0 : -ENOENT;
}

/* Higher is preferred at one address: sized, then GLOBAL, WEAK, LOCAL. */
static uint8_t sym_rank(const GElf_Sym *sym)
{
	uint8_t rank = sym->st_size ? 4 : 0;

	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		return rank | 2;
	case STB_WEAK:
		return rank | 1;
	default:
		return rank;
	}
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

static int esym_cmp(const void *a, const void *b, void *arg)
{
	const struct esym *x = a, *y = b;
	const char *strtab = arg, *xn, *yn;
	size_t xu, yu, xl, yl;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	/* Aliases are few; only they pay for looking at names. */
	xn = strtab + x->name;
	yn = strtab + y->name;
	xu = leading_underscores(xn);
	yu = leading_underscores(yn);
	if (xu != yu)
		return xu < yu ? -1 : 1;
	xl = strlen(xn);
	yl = strlen(yn);
	if (xl != yl)
		return xl < yl ? -1 : 1;
	if (x->idx != y->idx)
		return x->idx < y->idx ? -1 : 1;
	return 0;
}

/* The addresses of allocated section shndx; an empty range when unknown. */
static void section_range(Elf *elf, size_t shndx, uint64_t *lo, uint64_t *hi)
{
	GElf_Shdr sh;
	Elf_Scn *scn;

	*lo = *hi = 0;
	if (shndx == SHN_UNDEF || shndx >= SHN_LORESERVE)
		return;
	scn = elf_getscn(elf, shndx);
	if (!scn || !gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC))
		return;
	*lo = sh.sh_addr;
	*hi = sh.sh_addr > UINT64_MAX - sh.sh_size ? UINT64_MAX : sh.sh_addr + sh.sh_size;
}

/*
 * The entries and string table of one symbol table, checked so that every
 * in-range st_name is a C string.  0, or -ENOEXEC with *why set.
 */
static int table_data(struct elf_symtab *st, Elf_Scn *scn, Elf_Data **symdata,
		      Elf_Data **strdata, size_t *entsize, const char **why)
{
	GElf_Shdr sh, strsh;
	Elf_Scn *strscn;

	if (!gelf_getshdr(scn, &sh)) {
		*why = "corrupt ELF (symbol table header)";
		return -ENOEXEC;
	}
	if (sh.sh_flags & SHF_COMPRESSED) {
		*why = "compressed symbol table";
		return -ENOEXEC;
	}
	if (!table_fits(sh.sh_offset, 1, sh.sh_size, st->size)) {
		*why = "truncated ELF (symbol table past end of file)";
		return -ENOEXEC;
	}
	*entsize = gelf_fsize(st->elf, ELF_T_SYM, 1, EV_CURRENT);
	if (!*entsize || sh.sh_entsize != *entsize) {
		*why = "corrupt ELF (symbol entry size)";
		return -ENOEXEC;
	}
	strscn = sh.sh_link && sh.sh_link != elf_ndxscn(scn) ?
		 elf_getscn(st->elf, sh.sh_link) : NULL;
	if (!strscn || !gelf_getshdr(strscn, &strsh) || strsh.sh_type != SHT_STRTAB ||
	    (strsh.sh_flags & SHF_COMPRESSED)) {
		*why = "corrupt ELF (symbol table's string table link is invalid)";
		return -ENOEXEC;
	}
	if (!table_fits(strsh.sh_offset, 1, strsh.sh_size, st->size)) {
		*why = "truncated ELF (string table past end of file)";
		return -ENOEXEC;
	}
	*strdata = elf_getdata(strscn, NULL);
	/* A terminating NUL lets every in-range st_name be used as a C string. */
	if (!*strdata || !(*strdata)->d_buf || !(*strdata)->d_size ||
	    ((const char *)(*strdata)->d_buf)[(*strdata)->d_size - 1] != '\0') {
		*why = "corrupt ELF (string table not terminated)";
		return -ENOEXEC;
	}
	*symdata = elf_getdata(scn, NULL);
	if (!*symdata) {
		*why = "corrupt ELF (symbol table data)";
		return -ENOEXEC;
	}
	return 0;
}

/*
 * Read the functions of one symbol table into st->syms.  0 with st->nr
 * possibly 0, or -ENOEXEC with *why set, or -ENOMEM.
 */
static int load_table(struct elf_symtab *st, Elf_Scn *scn, const char **why)
{
	Elf_Data *symdata, *strdata;
	struct esym *syms, *shrunk;
	size_t entsize, n, i, j, nr = 0, last_shndx = SIZE_MAX;
	uint64_t sec_lo = 0, sec_hi = 0;
	const char *strtab;
	bool sorted = true;
	GElf_Sym sym;
	int err;

	err = table_data(st, scn, &symdata, &strdata, &entsize, why);
	if (err)
		return err;
	strtab = strdata->d_buf;
	n = symdata->d_size / entsize;
	if (n <= 1)
		return 0;
	if (n > UINT32_MAX) {
		*why = "corrupt ELF (symbol table too large)";
		return -ENOEXEC;
	}

	syms = malloc(n * sizeof(*syms));
	if (!syms)
		return -ENOMEM;
	/* Entry 0 is the reserved null symbol. */
	for (i = 1; i < n; i++) {
		unsigned int type;
		struct esym *e;

		if (!gelf_getsym(symdata, (int)i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		/* UINT64_MAX could not cover even itself with an exclusive end. */
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
		    sym.st_shndx == SHN_UNDEF || sym.st_shndx == SHN_ABS ||
		    !sym.st_name || sym.st_name >= strdata->d_size ||
		    sym.st_value == UINT64_MAX)
			continue;
		e = &syms[nr++];
		e->addr = sym.st_value;
		e->end = !sym.st_size ? 0 :
			 sym.st_value > UINT64_MAX - sym.st_size ? UINT64_MAX :
			 sym.st_value + sym.st_size;
		e->name = (uint32_t)sym.st_name;
		e->idx = (uint32_t)i;
		e->rank = sym_rank(&sym);
		if (nr > 1 && esym_cmp(&syms[nr - 2], e, (void *)strtab) > 0)
			sorted = false;
	}
	if (!nr) {
		free(syms);
		return 0;
	}
	if (!sorted)
		qsort_r(syms, nr, sizeof(*syms), esym_cmp, (void *)strtab);

	/* Keep the first, best, symbol of each address. */
	for (i = 0, j = 0; i < nr; i++)
		if (!j || syms[i].addr != syms[j - 1].addr)
			syms[j++] = syms[i];
	nr = j;

	for (i = 0; i < nr; i++) {
		struct esym *e = &syms[i];
		uint64_t end;

		if (e->end)
			continue;
		end = i + 1 < nr ? syms[i + 1].addr : UINT64_MAX;
		if (gelf_getsym(symdata, (int)e->idx, &sym)) {
			if (sym.st_shndx != last_shndx) {
				last_shndx = sym.st_shndx;
				section_range(st->elf, sym.st_shndx, &sec_lo, &sec_hi);
			}
			if (e->addr >= sec_lo && e->addr < sec_hi && sec_hi < end)
				end = sec_hi;
		}
		/* Nothing bounds it: claim only its own address. */
		e->end = end == UINT64_MAX ? e->addr + 1 : end;
		if (e->end <= e->addr)
			e->end = e->addr + 1;
	}

	shrunk = realloc(syms, nr * sizeof(*syms));
	st->syms = shrunk ? shrunk : syms;
	st->nr = nr;
	st->strtab = strtab;
	return 0;
}

int elf_symtab__load_symbols(struct elf_symtab *st, const char **reason)
{
	const char *why = NULL, *why2 = NULL;
	int err = 0, err2;

	if (st->loaded) {
		if (st->load_err)
			set_reason(reason, st->load_reason);
		return st->load_err;
	}

	if (st->symtab_scn) {
		err = load_table(st, st->symtab_scn, &why);
		if (!err && st->nr) {
			st->table = ".symtab";
			goto done;
		}
	}
	/* .dynsym only when .symtab is missing, broken or has no function. */
	if (st->dynsym_scn) {
		err2 = load_table(st, st->dynsym_scn, &why2);
		if (!err2 && st->nr) {
			st->table = ".dynsym";
			err = 0;
			goto done;
		}
		if (!err) {
			err = err2;
			why = why2;
		}
	}
	if (err == -ENOMEM) {
		set_reason(reason, "out of memory");
		return err;
	}
	if (err) {
		st->load_err = err;
		st->load_reason = why;
		set_reason(reason, why);
	}
done:
	st->loaded = true;
	release_fd(st);
	return err;
}

size_t elf_symtab__count(const struct elf_symtab *st)
{
	return st->nr;
}

const char *elf_symtab__table(const struct elf_symtab *st)
{
	return st->table;
}

/*
 * Drop template argument lists in place ("kj::Own<Foo>::get" -> "kj::Own::get"),
 * as pprof's default C++ simplification does: a deep template signature
 * makes every table row and flame frame unreadable, and the mangled name
 * (the pprof system name) keeps the full signature.  "operator<" and
 * friends keep their '<'.
 */
static void drop_template_args(char *name)
{
	char *out = name;
	int depth = 0;

	for (char *p = name; *p; p++) {
		if (*p == '<' && !depth && out - name >= 8 && !strncmp(out - 8, "operator", 8)) {
			*out++ = *p;
			if (p[1] == '<' || p[1] == '=')
				*out++ = *++p;
			continue;
		}
		if (*p == '<') {
			depth++;
			continue;
		}
		if (*p == '>' && depth) {
			depth--;
			continue;
		}
		if (!depth)
			*out++ = *p;
	}
	*out = '\0';
}

static const char *demangle(struct elf_symtab *st, size_t i, const char *name)
{
	char *d;

	/*
	 * Itanium C++ (_Z) and Rust v0 (_R) names, which cplus_demangle()'s
	 * default (auto) style both handles; C names pass through untouched.
	 */
	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return name;
	if (!st->demangled) {
		st->demangled = calloc(st->nr, sizeof(*st->demangled));
		if (!st->demangled)
			return name;
	}
	if (!st->demangled[i]) {
		/* no parameter lists either, like pprof's simplified names */
		d = cplus_demangle(name, DMGL_ANSI);
		if (d && name[1] == 'Z')
			drop_template_args(d);
		st->demangled[i] = d ? d : demangle_failed;
	}
	return st->demangled[i] == demangle_failed ? name : st->demangled[i];
}

static void fill(struct elf_symtab *st, size_t i, struct elf_sym *out)
{
	const struct esym *e = &st->syms[i];

	out->addr = e->addr;
	out->size = e->end - e->addr;
	out->name = st->strtab + e->name;
	out->demangled = demangle(st, i, out->name);
}

int elf_symtab__lookup(struct elf_symtab *st, uint64_t vaddr, struct elf_sym *out)
{
	size_t lo = 0, hi, k;
	int err;

	err = elf_symtab__load_symbols(st, NULL);
	if (err)
		return err;
	if (!st->nr)
		return -ENODATA;

	hi = st->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (k = lo; k > 0 && lo - k < LOOKUP_BACKTRACK; k--) {
		if (vaddr < st->syms[k - 1].end) {
			fill(st, k - 1, out);
			return 0;
		}
	}
	return -ENOENT;
}

int elf_symtab__entry(struct elf_symtab *st, size_t i, struct elf_sym *out)
{
	if (i >= st->nr)
		return -ENOENT;
	fill(st, i, out);
	return 0;
}

int elf_symtab__tls_segment(const struct elf_symtab *st, uint64_t *memsz, uint64_t *align,
			    uint64_t *vaddr)
{
	if (!st->has_tls)
		return -ENOENT;
	if (memsz)
		*memsz = st->tls_memsz;
	if (align)
		*align = st->tls_align;
	if (vaddr)
		*vaddr = st->tls_vaddr;
	return 0;
}

/* Where the bytes at vaddr are in the file; UINT64_MAX when in no PT_LOAD's file bytes. */
static uint64_t vaddr_to_offset(const struct elf_symtab *st, uint64_t vaddr)
{
	uint64_t off;

	return load_translate(st, vaddr, false, &off) ? off : UINT64_MAX;
}

static bool query_matches(const struct elf_symbol_query *q, size_t len, const char *s)
{
	return s[0] == q->name[0] && !strncmp(s, q->name, len) && (q->prefix || !s[len]);
}

/* Queries made moot by the answer to q[found]; how many were still open. */
static size_t queries_cancel(struct elf_symbol_query *q, size_t n, size_t found)
{
	size_t j, nr = 0;

	for (j = 0; j < n; j++) {
		if (q[j].unless == found + 1 && q[j].err == -ENOENT) {
			q[j].err = -ECANCELED;
			nr++;
		}
	}
	return nr;
}

/* The symbol types the open queries take (0: any), and how many are open. */
static size_t queries_open(const struct elf_symbol_query *q, size_t n, unsigned int *types)
{
	size_t j, nr = 0;

	*types = 0;
	for (j = 0; j < n; j++) {
		if (q[j].err != -ENOENT)
			continue;
		nr++;
		*types |= q[j].types ? q[j].types : ~0u;
	}
	return nr;
}

/*
 * The first defined symbol of table scn for each query of q[0..n) still
 * open, in one pass that ends when none is.  0, or -ENOEXEC when the
 * table cannot be read.
 */
static int scan_table(struct elf_symtab *st, Elf_Scn *scn, const char *table,
		      struct elf_symbol_query *q, size_t n)
{
	size_t entsize, nr, i, j, left, len[ELF_SYMBOL_QUERY_MAX];
	Elf_Data *symdata, *strdata;
	const char *strtab, *why;
	unsigned int types;
	GElf_Sym sym;
	int err;

	err = table_data(st, scn, &symdata, &strdata, &entsize, &why);
	if (err)
		return err;
	strtab = strdata->d_buf;
	nr = symdata->d_size / entsize;
	if (nr > INT_MAX)
		return -ENOEXEC;
	for (j = 0; j < n; j++)
		len[j] = strlen(q[j].name);
	left = queries_open(q, n, &types);
	/*
	 * A linear scan, cheaper than any index would be to build for the
	 * handful of names a caller asks about.  Its cost is reading the
	 * names (workerd: 283k symbols, 38 MB of names), so the symbol's type
	 * is looked at first.
	 */
	for (i = 1; left && i < nr; i++) {
		const char *s;

		if (!gelf_getsym(symdata, (int)i, &sym))
			break;
		if (!sym.st_name || sym.st_name >= strdata->d_size || sym.st_shndx == SHN_UNDEF ||
		    !(types & (1u << GELF_ST_TYPE(sym.st_info))))
			continue;
		s = strtab + sym.st_name;
		for (j = 0; j < n; j++) {
			struct elf_named_sym *out = &q[j].sym;

			if (q[j].err != -ENOENT ||
			    (q[j].types && !(q[j].types & (1u << GELF_ST_TYPE(sym.st_info)))) ||
			    !query_matches(&q[j], len[j], s))
				continue;
			out->name = s;
			out->value = sym.st_value;
			out->size = sym.st_size;
			out->type = GELF_ST_TYPE(sym.st_info);
			out->bind = GELF_ST_BIND(sym.st_info);
			out->table = table;
			out->file_offset = out->type == STT_TLS || sym.st_shndx == SHN_ABS ?
					   UINT64_MAX : vaddr_to_offset(st, sym.st_value);
			q[j].err = 0;
			queries_cancel(q, n, j);
			left = queries_open(q, n, &types);
		}
	}
	return 0;
}

int elf_symtab__find_symbols(struct elf_symtab *st, struct elf_symbol_query *q, size_t n)
{
	Elf_Scn *scns[2] = { st->symtab_scn, st->dynsym_scn };
	const char *names[2] = { ".symtab", ".dynsym" };
	bool readable = false;
	unsigned int types;
	size_t i, j;

	if (n > ELF_SYMBOL_QUERY_MAX)
		return -E2BIG;
	for (j = 0; j < n; j++) {
		if (!q[j].name || !q[j].name[0] || q[j].unless > n || q[j].unless == j + 1)
			return -EINVAL;
		q[j].err = -ENOENT;
	}
	for (i = 0; i < 2; i++) {
		if (!queries_open(q, n, &types))
			break;
		if (scns[i] && !scan_table(st, scns[i], names[i], q, n))
			readable = true;
	}
	/* Not found is the answer when either table could be read. */
	for (j = 0; j < n && !readable; j++)
		if (q[j].err == -ENOENT && (st->symtab_scn || st->dynsym_scn))
			q[j].err = -ENOEXEC;
	return 0;
}

static int each_in_table(struct elf_symtab *st, Elf_Scn *scn, const char *table,
			 int (*fn)(void *ctx, const struct elf_named_sym *sym), void *ctx)
{
	struct elf_named_sym out;
	Elf_Data *symdata, *strdata;
	size_t entsize, n, i;
	const char *why;
	GElf_Sym sym;
	int err;

	err = table_data(st, scn, &symdata, &strdata, &entsize, &why);
	if (err)
		return err;
	n = symdata->d_size / entsize;
	if (n > INT_MAX)
		return -ENOEXEC;
	for (i = 1; i < n; i++) {
		if (!gelf_getsym(symdata, (int)i, &sym))
			break;
		if (!sym.st_name || sym.st_name >= strdata->d_size || sym.st_shndx == SHN_UNDEF)
			continue;
		out.name = (const char *)strdata->d_buf + sym.st_name;
		out.value = sym.st_value;
		out.size = sym.st_size;
		out.type = GELF_ST_TYPE(sym.st_info);
		out.bind = GELF_ST_BIND(sym.st_info);
		out.table = table;
		out.file_offset = out.type == STT_TLS || sym.st_shndx == SHN_ABS ?
				  UINT64_MAX : vaddr_to_offset(st, sym.st_value);
		err = fn(ctx, &out);
		if (err)
			return err;
	}
	return 0;
}

int elf_symtab__each_symbol(struct elf_symtab *st,
			    int (*fn)(void *ctx, const struct elf_named_sym *sym), void *ctx)
{
	if (st->symtab_scn)
		return each_in_table(st, st->symtab_scn, ".symtab", fn, ctx);
	if (st->dynsym_scn)
		return each_in_table(st, st->dynsym_scn, ".dynsym", fn, ctx);
	return -ENOEXEC;
}

static int find_symbol(struct elf_symtab *st, const char *name, bool prefix,
		       struct elf_named_sym *out)
{
	struct elf_symbol_query q = { .name = name, .prefix = prefix };
	int err = elf_symtab__find_symbols(st, &q, 1);

	if (err)
		return err;
	if (!q.err)
		*out = q.sym;
	return q.err;
}

int elf_symtab__find_symbol(struct elf_symtab *st, const char *name, struct elf_named_sym *out)
{
	return find_symbol(st, name, false, out);
}

int elf_symtab__find_symbol_prefix(struct elf_symtab *st, const char *prefix,
				   struct elf_named_sym *out)
{
	return find_symbol(st, prefix, true, out);
}
