// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * workerd_config: a parser for the Cap'n Proto text subset of workerd
 * configs, and the services read from its tree; see workerd_config.h.
 *
 * Each file is parsed whole into a tree of nodes in one arena; references
 * (".name", "Alias.name") and embeds stay unresolved until the services
 * are read, so only what a service uses is followed or read.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "lib/index_table.h"
#include "symbolize/workerd_config.h"

enum wc_kind {
	WC_STRUCT,
	WC_LIST,
	WC_STRING,
	WC_DATA,
	WC_NUMBER,
	WC_IDENT,
	WC_REF,		/* s: "name" (leading dot) or "Alias.name" */
	WC_EMBED,	/* s: the path as written */
};

struct wc_node;

struct wc_field {
	const char *name;
	struct wc_node *value;
};

struct wc_node {
	enum wc_kind kind;
	unsigned int file;
	unsigned int line, col;
	bool dotted;		/* WC_REF: ".name" */
	const char *s;		/* STRING, DATA: bytes (NUL after); IDENT, REF, EMBED: text */
	size_t len;
	struct wc_field *fields;	/* WC_STRUCT */
	struct wc_node **items;		/* WC_LIST */
	size_t nr;
};

struct wc_const {
	const char *name;
	const char *type;	/* the last component of its type: "Config", "Worker" */
	struct wc_node *value;
	unsigned int line, col;
};

struct wc_alias {
	const char *name;
	const char *path;	/* the import's path as written */
	int file;		/* parsed file index, -1 until needed */
	bool schema;		/* WORKERD_CONFIG_SCHEMA: nothing to read */
};

struct wc_file {
	char *path;		/* as given to read() */
	struct wc_const *consts;
	size_t nr_consts, cap_consts;
	struct index_table by_name;	/* consts, by name (a config of 1000 workers) */
	struct wc_alias *aliases;
	size_t nr_aliases, cap_aliases;
};

struct arena_block {
	struct arena_block *next;
	size_t used, cap;
	max_align_t data[];
};

struct wc {
	struct arena_block *arena;
	struct wc_file files[WORKERD_CONFIG_MAX_FILES];
	unsigned int nr_files;
	workerd_config_read_fn read;
	void *ctx;
	char *err;
	size_t errlen;
};

/* ---- arena ---------------------------------------------------------------- */

static void *arena_alloc(struct wc *wc, size_t n)
{
	struct arena_block *b = wc->arena;
	size_t align = sizeof(max_align_t);

	n = (n + align - 1) / align * align;
	if (!b || b->cap - b->used < n) {
		size_t cap = n > 65536 ? n : 65536;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->cap = cap;
		b->used = 0;
		b->next = wc->arena;
		wc->arena = b;
	}
	b->used += n;
	return (char *)b->data + b->used - n;
}

static char *arena_strndup(struct wc *wc, const char *s, size_t n)
{
	char *p = arena_alloc(wc, n + 1);

	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

static void arena_free(struct wc *wc)
{
	for (unsigned int i = 0; i < wc->nr_files; i++)
		index_table__release(&wc->files[i].by_name);
	while (wc->arena) {
		struct arena_block *next = wc->arena->next;

		free(wc->arena);
		wc->arena = next;
	}
}

/* ---- errors --------------------------------------------------------------- */

__attribute__((format(printf, 5, 6))) static int fail_at(struct wc *wc, unsigned int file,
							 unsigned int line, unsigned int col,
							 const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (wc->errlen) {
		if (file < wc->nr_files)
			n = snprintf(wc->err, wc->errlen, "%s:%u:%u: ", wc->files[file].path, line,
				     col);
		if (n < 0 || (size_t)n >= wc->errlen)
			n = 0;
		va_start(ap, fmt);
		vsnprintf(wc->err + n, wc->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int fail_oom(struct wc *wc)
{
	if (wc->errlen)
		snprintf(wc->err, wc->errlen, "out of memory");
	return -ENOMEM;
}

/* ---- lexer ---------------------------------------------------------------- */

enum tok_kind {
	T_EOF,
	T_IDENT,
	T_NUMBER,
	T_STRING,
	T_DATA,		/* 0x"..." */
	T_PUNCT,	/* ( ) [ ] , = ; : . @ - */
};

struct tok {
	enum tok_kind kind;
	unsigned int line, col;
	const char *s;		/* T_IDENT, T_NUMBER: in the text; T_STRING, T_DATA: decoded */
	size_t len;
	char c;			/* T_PUNCT */
};

struct lexer {
	struct wc *wc;
	unsigned int file;
	const char *p, *end;
	unsigned int line, col;
	struct tok tok;		/* the current token */
	int depth;
};

static void lex_advance(struct lexer *lx, size_t n)
{
	for (size_t i = 0; i < n && lx->p < lx->end; i++, lx->p++) {
		if (*lx->p == '\n') {
			lx->line++;
			lx->col = 1;
		} else {
			lx->col++;
		}
	}
}

static bool is_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A string literal at lx->p ('"'), decoded into the arena. */
static int lex_string(struct lexer *lx, struct tok *t)
{
	const char *q = lx->p + 1;
	size_t n = 0;
	char *out;

	/* the literal's extent (to its quote, a newline or the end): the decoded text is never longer */
	while (q < lx->end && *q != '"' && *q != '\n')
		q += *q == '\\' && q + 1 < lx->end ? 2 : 1;
	out = arena_alloc(lx->wc, (size_t)(q - lx->p) + 1);
	q = lx->p + 1;
	if (!out)
		return fail_oom(lx->wc);
	for (;;) {
		char c;

		if (q >= lx->end)
			return fail_at(lx->wc, lx->file, t->line, t->col, "unterminated string");
		c = *q++;
		if (c == '"')
			break;
		if (c == '\n')
			return fail_at(lx->wc, lx->file, t->line, t->col,
				       "newline in a string (escape it as \\n)");
		if (c != '\\') {
			out[n++] = c;
			continue;
		}
		if (q >= lx->end)
			return fail_at(lx->wc, lx->file, t->line, t->col, "unterminated string");
		c = *q++;
		switch (c) {
		case 'n': out[n++] = '\n'; break;
		case 't': out[n++] = '\t'; break;
		case 'r': out[n++] = '\r'; break;
		case 'a': out[n++] = '\a'; break;
		case 'b': out[n++] = '\b'; break;
		case 'f': out[n++] = '\f'; break;
		case 'v': out[n++] = '\v'; break;
		case '\\': case '\'': case '"': case '?': out[n++] = c; break;
		case 'x': {
			int v = 0, k = 0;

			while (k < 2 && q < lx->end && hexval(*q) >= 0)
				v = v * 16 + hexval(*q++), k++;
			if (!k)
				return fail_at(lx->wc, lx->file, t->line, t->col,
					       "\\x without hex digits in a string");
			out[n++] = (char)v;
			break;
		}
		default:
			if (c >= '0' && c <= '7') {
				int v = c - '0', k = 1;

				while (k < 3 && q < lx->end && *q >= '0' && *q <= '7')
					v = v * 8 + (*q++ - '0'), k++;
				out[n++] = (char)(v & 0xff);
				break;
			}
			return fail_at(lx->wc, lx->file, t->line, t->col,
				       "unknown escape in a string");
		}
	}
	out[n] = '\0';
	t->kind = T_STRING;
	t->s = out;
	t->len = n;
	lex_advance(lx, (size_t)(q - lx->p));
	return 0;
}

/* 0x"hex bytes": the bytes, decoded. */
static int lex_data(struct lexer *lx, struct tok *t)
{
	const char *q = lx->p + 3, *close = memchr(q, '"', (size_t)(lx->end - q));
	size_t n = 0;
	/* at most a byte per two digits up to the closing quote (or the end) */
	char *out = arena_alloc(lx->wc, (size_t)((close ? close : lx->end) - q) / 2 + 1);
	int hi = -1;

	if (!out)
		return fail_oom(lx->wc);
	for (;; q++) {
		if (q >= lx->end || *q == '\n')
			return fail_at(lx->wc, lx->file, t->line, t->col, "unterminated data literal");
		if (*q == '"')
			break;
		if (*q == ' ')
			continue;
		if (hexval(*q) < 0)
			return fail_at(lx->wc, lx->file, t->line, t->col,
				       "a data literal holds hex digits only");
		if (hi < 0) {
			hi = hexval(*q);
		} else {
			out[n++] = (char)(hi * 16 + hexval(*q));
			hi = -1;
		}
	}
	if (hi >= 0)
		return fail_at(lx->wc, lx->file, t->line, t->col,
			       "a data literal holds whole bytes (an even count of hex digits)");
	out[n] = '\0';
	t->kind = T_DATA;
	t->s = out;
	t->len = n;
	lex_advance(lx, (size_t)(q + 1 - lx->p));
	return 0;
}

static int lex_next(struct lexer *lx)
{
	struct tok *t = &lx->tok;

	for (;;) {
		while (lx->p < lx->end && (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\n' ||
					   *lx->p == '\r'))
			lex_advance(lx, 1);
		if (lx->p < lx->end && *lx->p == '#') {
			while (lx->p < lx->end && *lx->p != '\n')
				lex_advance(lx, 1);
			continue;
		}
		break;
	}
	memset(t, 0, sizeof(*t));
	t->line = lx->line;
	t->col = lx->col;
	if (lx->p >= lx->end) {
		t->kind = T_EOF;
		return 0;
	}
	if (*lx->p == '"')
		return lex_string(lx, t);
	if (lx->end - lx->p >= 3 && lx->p[0] == '0' && lx->p[1] == 'x' && lx->p[2] == '"')
		return lex_data(lx, t);
	if (is_ident_start(*lx->p)) {
		const char *q = lx->p;

		while (q < lx->end && (is_ident_start(*q) || is_digit(*q)))
			q++;
		t->kind = T_IDENT;
		t->s = lx->p;
		t->len = (size_t)(q - lx->p);
		lex_advance(lx, t->len);
		return 0;
	}
	if (is_digit(*lx->p)) {
		const char *q = lx->p;

		/* digits, hex, a fraction, an exponent: numbers are never used, only skipped */
		while (q < lx->end && (is_digit(*q) || is_ident_start(*q) || *q == '.' ||
				       ((*q == '+' || *q == '-') && (q[-1] == 'e' || q[-1] == 'E'))))
			q++;
		t->kind = T_NUMBER;
		t->s = lx->p;
		t->len = (size_t)(q - lx->p);
		lex_advance(lx, t->len);
		return 0;
	}
	if (strchr("()[],=;:.@-", *lx->p) && *lx->p) {
		t->kind = T_PUNCT;
		t->c = *lx->p;
		lex_advance(lx, 1);
		return 0;
	}
	return fail_at(lx->wc, lx->file, t->line, t->col, "unexpected character 0x%02x",
		       (unsigned char)*lx->p);
}

static bool tok_is(const struct tok *t, char c)
{
	return t->kind == T_PUNCT && t->c == c;
}

static bool tok_word(const struct tok *t, const char *w)
{
	return t->kind == T_IDENT && t->len == strlen(w) && !memcmp(t->s, w, t->len);
}

static const char *tok_what(const struct tok *t)
{
	switch (t->kind) {
	case T_EOF: return "the end of the file";
	case T_IDENT: return "a name";
	case T_NUMBER: return "a number";
	case T_STRING: return "a string";
	case T_DATA: return "a data literal";
	case T_PUNCT: break;
	}
	switch (t->c) {
	case '(': return "'('";
	case ')': return "')'";
	case '[': return "'['";
	case ']': return "']'";
	case ',': return "','";
	case '=': return "'='";
	case ';': return "';'";
	case ':': return "':'";
	case '.': return "'.'";
	case '@': return "'@'";
	default: return "'-'";
	}
}

static int expect(struct lexer *lx, char c, const char *what)
{
	if (!tok_is(&lx->tok, c))
		return fail_at(lx->wc, lx->file, lx->tok.line, lx->tok.col, "expected %s, found %s",
			       what, tok_what(&lx->tok));
	return lex_next(lx);
}

/* ---- parser --------------------------------------------------------------- */

static struct wc_node *new_node(struct lexer *lx, enum wc_kind kind, const struct tok *at)
{
	struct wc_node *n = arena_alloc(lx->wc, sizeof(*n));

	if (n) {
		memset(n, 0, sizeof(*n));
		n->kind = kind;
		n->file = lx->file;
		n->line = at->line;
		n->col = at->col;
	}
	return n;
}

/* A dotted name: IDENT ('.' IDENT)*, the first IDENT current; into the arena. */
static int parse_qualified(struct lexer *lx, const char **out)
{
	char buf[1024];
	size_t n = 0;
	int err;

	for (;;) {
		if (lx->tok.kind != T_IDENT)
			return fail_at(lx->wc, lx->file, lx->tok.line, lx->tok.col,
				       "expected a name, found %s", tok_what(&lx->tok));
		if (n + lx->tok.len + 2 > sizeof(buf))
			return fail_at(lx->wc, lx->file, lx->tok.line, lx->tok.col,
				       "name too long");
		if (n)
			buf[n++] = '.';
		memcpy(buf + n, lx->tok.s, lx->tok.len);
		n += lx->tok.len;
		err = lex_next(lx);
		if (err)
			return err;
		if (!tok_is(&lx->tok, '.'))
			break;
		err = lex_next(lx);
		if (err)
			return err;
	}
	*out = arena_strndup(lx->wc, buf, n);
	return *out ? 0 : fail_oom(lx->wc);
}

static int parse_value(struct lexer *lx, struct wc_node **out);

static uint32_t name_hash(const char *name)
{
	return hash__fold32(hash__str(HASH_SEED, name));
}

static bool const_is(const void *ctx, uint32_t i, const void *key)
{
	const struct wc_file *f = ctx;

	return !strcmp(f->consts[i].name, key);
}

static const struct wc_const *find_const(const struct wc_file *f, const char *name)
{
	long i = index_table__lookup(&f->by_name, name_hash(name), const_is, f, name, NULL);

	return i < 0 ? NULL : &f->consts[i];
}

static int grow(struct wc *wc, void **v, size_t nr, size_t *cap, size_t size)
{
	void *nv;

	if (nr < *cap)
		return 0;
	*cap = *cap ? *cap * 2 : 8;
	nv = arena_alloc(wc, *cap * size);
	if (!nv)
		return fail_oom(wc);
	if (nr)
		memcpy(nv, *v, nr * size);
	*v = nv;
	return 0;
}

static int parse_struct(struct lexer *lx, struct wc_node *n)
{
	size_t cap = 0;
	int err = lex_next(lx);

	while (!err && !tok_is(&lx->tok, ')')) {
		struct wc_field f;

		if (lx->tok.kind != T_IDENT)
			return fail_at(lx->wc, lx->file, lx->tok.line, lx->tok.col,
				       "expected a field name or ')', found %s",
				       tok_what(&lx->tok));
		f.name = arena_strndup(lx->wc, lx->tok.s, lx->tok.len);
		if (!f.name)
			return fail_oom(lx->wc);
		err = lex_next(lx);
		if (!err && tok_is(&lx->tok, '(')) {
			/* a group or union member written without '=': field (...) */
			err = parse_value(lx, &f.value);
		} else {
			if (!err)
				err = expect(lx, '=', "'=' after the field name");
			if (!err)
				err = parse_value(lx, &f.value);
		}
		if (!err)
			err = grow(lx->wc, (void **)&n->fields, n->nr, &cap, sizeof(f));
		if (err)
			return err;
		n->fields[n->nr++] = f;
		if (tok_is(&lx->tok, ','))
			err = lex_next(lx);
		else if (!tok_is(&lx->tok, ')'))
			return fail_at(lx->wc, lx->file, lx->tok.line, lx->tok.col,
				       "expected ',' or ')' after a field, found %s",
				       tok_what(&lx->tok));
	}
	return err ? err : lex_next(lx);
}

static int parse_list(struct lexer *lx, struct wc_node *n)
{
	size_t cap = 0;
	int err = lex_next(lx);

	while (!err && !tok_is(&lx->tok, ']')) {
		struct wc_node *item;

		err = parse_value(lx, &item);
		if (!err)
			err = grow(lx->wc, (void **)&n->items, n->nr, &cap, sizeof(item));
		if (err)
			return err;
		n->items[n->nr++] = item;
		if (tok_is(&lx->tok, ','))
			err = lex_next(lx);
		else if (!tok_is(&lx->tok, ']'))
			return fail_at(lx->wc, lx->file, lx->tok.line, lx->tok.col,
				       "expected ',' or ']' after a list item, found %s",
				       tok_what(&lx->tok));
	}
	return err ? err : lex_next(lx);
}

static int parse_value(struct lexer *lx, struct wc_node **out)
{
	struct tok at = lx->tok;
	struct wc_node *n;
	int err;

	if (++lx->depth > WORKERD_CONFIG_MAX_DEPTH)
		return fail_at(lx->wc, lx->file, at.line, at.col, "nested deeper than %d levels",
			       WORKERD_CONFIG_MAX_DEPTH);
	if (tok_is(&at, '(')) {
		n = new_node(lx, WC_STRUCT, &at);
		err = n ? parse_struct(lx, n) : fail_oom(lx->wc);
	} else if (tok_is(&at, '[')) {
		n = new_node(lx, WC_LIST, &at);
		err = n ? parse_list(lx, n) : fail_oom(lx->wc);
	} else if (at.kind == T_STRING || at.kind == T_DATA) {
		n = new_node(lx, at.kind == T_STRING ? WC_STRING : WC_DATA, &at);
		if (n) {
			n->s = at.s;
			n->len = at.len;
		}
		err = n ? lex_next(lx) : fail_oom(lx->wc);
	} else if (at.kind == T_NUMBER || tok_is(&at, '-')) {
		n = new_node(lx, WC_NUMBER, &at);
		err = n ? lex_next(lx) : fail_oom(lx->wc);
		if (!err && tok_is(&at, '-')) {
			if (lx->tok.kind != T_NUMBER && !tok_word(&lx->tok, "inf"))
				return fail_at(lx->wc, lx->file, lx->tok.line, lx->tok.col,
					       "expected a number after '-'");
			err = lex_next(lx);
		}
	} else if (tok_is(&at, '.')) {
		n = new_node(lx, WC_REF, &at);
		if (!n)
			return fail_oom(lx->wc);
		n->dotted = true;
		err = lex_next(lx);
		if (!err)
			err = parse_qualified(lx, &n->s);
	} else if (tok_word(&at, "embed")) {
		n = new_node(lx, WC_EMBED, &at);
		if (!n)
			return fail_oom(lx->wc);
		err = lex_next(lx);
		if (!err && lx->tok.kind != T_STRING)
			return fail_at(lx->wc, lx->file, lx->tok.line, lx->tok.col,
				       "expected a file name after embed, found %s",
				       tok_what(&lx->tok));
		if (!err) {
			n->s = lx->tok.s;
			n->len = lx->tok.len;
			if (strlen(n->s) != n->len || !n->len)
				return fail_at(lx->wc, lx->file, lx->tok.line, lx->tok.col,
					       "an embedded file's name is empty or holds NUL");
			err = lex_next(lx);
		}
	} else if (at.kind == T_IDENT) {
		n = new_node(lx, WC_IDENT, &at);
		if (!n)
			return fail_oom(lx->wc);
		err = parse_qualified(lx, &n->s);
		/* Alias.name: a const of an imported file */
		if (!err && strchr(n->s, '.'))
			n->kind = WC_REF;
	} else {
		return fail_at(lx->wc, lx->file, at.line, at.col, "expected a value, found %s",
			       tok_what(&at));
	}
	lx->depth--;
	if (!err)
		*out = n;
	return err;
}

/* TYPE after ':': a qualified name, with generic parameters List(Text). */
static int parse_type(struct lexer *lx, const char **last)
{
	const char *name, *dot;
	int err, parens = 0;

	if (tok_is(&lx->tok, '.')) {
		err = lex_next(lx);
		if (err)
			return err;
	}
	err = parse_qualified(lx, &name);
	if (err)
		return err;
	dot = strrchr(name, '.');
	*last = dot ? dot + 1 : name;
	while (tok_is(&lx->tok, '(') || parens) {
		if (lx->tok.kind == T_EOF)
			return fail_at(lx->wc, lx->file, lx->tok.line, lx->tok.col,
				       "unterminated type parameters");
		if (tok_is(&lx->tok, '('))
			parens++;
		else if (tok_is(&lx->tok, ')'))
			parens--;
		if (parens > WORKERD_CONFIG_MAX_DEPTH)
			return fail_at(lx->wc, lx->file, lx->tok.line, lx->tok.col,
				       "type nested too deep");
		err = lex_next(lx);
		if (err)
			return err;
	}
	return 0;
}

static int parse_file(struct wc *wc, unsigned int idx, const char *text, size_t len)
{
	struct wc_file *f = &wc->files[idx];
	struct lexer lx = {
		.wc = wc, .file = idx, .p = text, .end = text + len, .line = 1, .col = 1,
	};
	int err = lex_next(&lx);

	while (!err && lx.tok.kind != T_EOF) {
		struct tok at = lx.tok;

		if (tok_is(&at, '@')) {
			/* the file id: @0x...; */
			err = lex_next(&lx);
			if (!err && lx.tok.kind != T_NUMBER)
				return fail_at(wc, idx, lx.tok.line, lx.tok.col,
					       "expected a file id after '@'");
			if (!err)
				err = lex_next(&lx);
			if (!err)
				err = expect(&lx, ';', "';' after the file id");
		} else if (tok_word(&at, "using")) {
			struct wc_alias a = { .file = -1 };

			err = lex_next(&lx);
			if (!err && lx.tok.kind != T_IDENT)
				return fail_at(wc, idx, lx.tok.line, lx.tok.col,
					       "expected a name after using (using X = import \"...\")");
			if (!err) {
				a.name = arena_strndup(wc, lx.tok.s, lx.tok.len);
				if (!a.name)
					return fail_oom(wc);
				err = lex_next(&lx);
			}
			if (!err)
				err = expect(&lx, '=', "'='");
			if (!err && !tok_word(&lx.tok, "import"))
				return fail_at(wc, idx, lx.tok.line, lx.tok.col,
					       "only 'using NAME = import \"FILE\"' is supported");
			if (!err)
				err = lex_next(&lx);
			if (!err && (lx.tok.kind != T_STRING || !lx.tok.len ||
				     strlen(lx.tok.s) != lx.tok.len))
				return fail_at(wc, idx, lx.tok.line, lx.tok.col,
					       "expected a file name after import");
			if (!err) {
				a.path = lx.tok.s;
				a.schema = !strcmp(a.path, WORKERD_CONFIG_SCHEMA);
				err = lex_next(&lx);
			}
			if (!err)
				err = expect(&lx, ';', "';' after the import");
			if (!err)
				err = grow(wc, (void **)&f->aliases, f->nr_aliases, &f->cap_aliases,
					   sizeof(a));
			if (!err)
				f->aliases[f->nr_aliases++] = a;
		} else if (tok_word(&at, "const")) {
			struct wc_const c = { .line = at.line, .col = at.col };

			err = lex_next(&lx);
			if (!err && lx.tok.kind != T_IDENT)
				return fail_at(wc, idx, lx.tok.line, lx.tok.col,
					       "expected the const's name");
			if (!err) {
				c.name = arena_strndup(wc, lx.tok.s, lx.tok.len);
				if (!c.name)
					return fail_oom(wc);
				err = lex_next(&lx);
			}
			if (!err)
				err = expect(&lx, ':', "':' and the const's type");
			if (!err)
				err = parse_type(&lx, &c.type);
			if (!err)
				err = expect(&lx, '=', "'=' and the const's value");
			if (!err)
				err = parse_value(&lx, &c.value);
			if (!err)
				err = expect(&lx, ';', "';' after the const");
			if (!err && find_const(f, c.name))
				return fail_at(wc, idx, c.line, c.col,
					       "a second const of the same name");
			if (!err && index_table__reserve(&f->by_name))
				return fail_oom(wc);
			if (!err)
				err = grow(wc, (void **)&f->consts, f->nr_consts, &f->cap_consts,
					   sizeof(c));
			if (!err) {
				size_t slot;

				index_table__lookup(&f->by_name, name_hash(c.name), const_is, f,
						    c.name, &slot);
				index_table__set(&f->by_name, slot, name_hash(c.name),
						 (uint32_t)f->nr_consts);
				f->consts[f->nr_consts++] = c;
			}
		} else {
			return fail_at(wc, idx, at.line, at.col,
				       "expected using or const (struct, enum and interface "
				       "declarations are not read), found %s", tok_what(&at));
		}
	}
	return err;
}

/* ---- files ---------------------------------------------------------------- */

/* A file named in file `from`: relative to its directory, or as written when absolute. */
static char *join_path(struct wc *wc, unsigned int from, const char *name)
{
	const char *base = wc->files[from].path, *slash = strrchr(base, '/');
	size_t dl = slash ? (size_t)(slash - base) + 1 : 0, nl = strlen(name);
	char *p;

	if (name[0] == '/')
		dl = 0;
	p = arena_alloc(wc, dl + nl + 1);
	if (p) {
		memcpy(p, base, dl);
		memcpy(p + dl, name, nl + 1);
	}
	return p;
}

static int read_file(struct wc *wc, const char *path, bool import_path, unsigned int file,
		     unsigned int line, unsigned int col, char **data, size_t *len)
{
	char why[160] = "";
	int err = wc->read(wc->ctx, path, import_path, data, len, why, sizeof(why));

	if (err) {
		if (err == -ENOMEM)
			return fail_oom(wc);
		if (file < wc->nr_files)
			fail_at(wc, file, line, col, "%s: %s", path, why[0] ? why : strerror(-err));
		else if (wc->errlen)
			snprintf(wc->err, wc->errlen, "%s: %s", path, why[0] ? why : strerror(-err));
		return err;
	}
	return 0;
}

static int add_file(struct wc *wc, const char *path, const char *text, size_t len,
		    unsigned int *idx)
{
	struct wc_file *f;

	if (wc->nr_files == WORKERD_CONFIG_MAX_FILES)
		return -E2BIG;
	f = &wc->files[wc->nr_files];
	memset(f, 0, sizeof(*f));
	f->path = arena_strndup(wc, path, strlen(path));
	if (!f->path)
		return fail_oom(wc);
	*idx = wc->nr_files++;
	return parse_file(wc, *idx, text, len);
}

/* ---- resolving ------------------------------------------------------------ */


/* The alias's file, parsed on first use. */
static int alias_file(struct wc *wc, const struct wc_node *at, struct wc_alias *a,
		      unsigned int *out)
{
	char *data = NULL, *path;
	size_t len = 0;
	unsigned int idx;
	int err;

	if (a->file >= 0) {
		*out = (unsigned int)a->file;
		return 0;
	}
	if (a->schema)
		return fail_at(wc, at->file, at->line, at->col,
			       "a reference into workerd's own schema");
	path = join_path(wc, at->file, a->path);
	if (!path)
		return fail_oom(wc);
	for (unsigned int i = 0; i < wc->nr_files; i++) {
		if (!strcmp(wc->files[i].path, path)) {
			a->file = (int)i;
			*out = i;
			return 0;
		}
	}
	if (wc->nr_files == WORKERD_CONFIG_MAX_FILES)
		return fail_at(wc, at->file, at->line, at->col, "more than %d files imported",
			       WORKERD_CONFIG_MAX_FILES - 1);
	err = read_file(wc, path, a->path[0] == '/', at->file, at->line, at->col, &data, &len);
	if (err)
		return err;
	err = add_file(wc, path, data, len, &idx);
	free(data);
	if (err)
		return err;
	a->file = (int)idx;
	*out = idx;
	return 0;
}

/* Follow references until a value that is not one. */
static int resolve(struct wc *wc, const struct wc_node *n, const struct wc_node **out)
{
	for (int hops = 0; n->kind == WC_REF; hops++) {
		const struct wc_file *f = &wc->files[n->file];
		const struct wc_const *c;
		const char *name = n->s, *dot = strchr(n->s, '.');
		unsigned int file = n->file;
		int err;

		if (hops == WORKERD_CONFIG_MAX_DEPTH)
			return fail_at(wc, n->file, n->line, n->col,
				       "references chained more than %d deep (a cycle?)",
				       WORKERD_CONFIG_MAX_DEPTH);
		if (dot && n->dotted)
			return fail_at(wc, n->file, n->line, n->col,
				       "nested scopes are not read: refer to a const at file scope");
		if (dot) {
			struct wc_alias *a = NULL;

			for (size_t i = 0; i < f->nr_aliases; i++)
				if (strlen(f->aliases[i].name) == (size_t)(dot - n->s) &&
				    !memcmp(f->aliases[i].name, n->s, (size_t)(dot - n->s)))
					a = &f->aliases[i];
			if (!a)
				return fail_at(wc, n->file, n->line, n->col,
					       "no import of that name for this reference");
			if (strchr(dot + 1, '.'))
				return fail_at(wc, n->file, n->line, n->col,
					       "nested scopes are not read: refer to a const at "
					       "file scope");
			err = alias_file(wc, n, a, &file);
			if (err)
				return err;
			name = dot + 1;
		}
		c = find_const(&wc->files[file], name);
		if (!c)
			return fail_at(wc, n->file, n->line, n->col, "no such const");
		n = c->value;
	}
	*out = n;
	return 0;
}

static int field(struct wc *wc, const struct wc_node *st, const char *name,
		 const struct wc_node **out)
{
	*out = NULL;
	for (size_t i = 0; i < st->nr; i++)
		if (!strcmp(st->fields[i].name, name))
			return resolve(wc, st->fields[i].value, out);
	return 0;
}

static int want(struct wc *wc, const struct wc_node *n, enum wc_kind kind, const char *what)
{
	if (n->kind != kind)
		return fail_at(wc, n->file, n->line, n->col, "%s", what);
	return 0;
}

static char *dup_text(struct wc *wc, const struct wc_node *n, const char *what)
{
	char *s;

	if (want(wc, n, WC_STRING, what))
		return NULL;
	if (strlen(n->s) != n->len) {
		fail_at(wc, n->file, n->line, n->col, "%s: holds a NUL byte", what);
		return NULL;
	}
	s = strdup(n->s);
	if (!s)
		fail_oom(wc);
	return s;
}

/*
 * A JavaScript module's content: a string or data (its bytes), or an
 * embedded file (its path, for the caller to read if it needs it).
 */
static int content(struct wc *wc, const struct wc_node *n, struct workerd_module *m)
{
	char *path;

	if (n->kind == WC_STRING || n->kind == WC_DATA) {
		m->source = malloc(n->len + 1);
		if (!m->source)
			return fail_oom(wc);
		memcpy(m->source, n->s, n->len);
		m->source[n->len] = '\0';
		m->len = n->len;
		return 0;
	}
	if (n->kind != WC_EMBED)
		return fail_at(wc, n->file, n->line, n->col,
			       "expected a string or embed \"FILE\" for a module");
	path = join_path(wc, n->file, n->s);
	if (!path)
		return fail_oom(wc);
	m->embed = strdup(path);
	if (!m->embed)
		return fail_oom(wc);
	m->embed_import_path = n->s[0] == '/';
	return 0;
}

static const char *const js_kinds[] = { "esModule", "commonJsModule" };

static int read_module(struct wc *wc, const struct wc_node *m, struct workerd_module *out)
{
	const struct wc_node *name, *v;
	int err;

	if (want(wc, m, WC_STRUCT, "a module is a struct (name = ..., esModule = ...)"))
		return -EINVAL;
	err = field(wc, m, "name", &name);
	if (err)
		return err;
	if (!name)
		return fail_at(wc, m->file, m->line, m->col, "a module without a name");
	out->name = dup_text(wc, name, "a module's name is a string");
	if (!out->name)
		return -EINVAL;
	out->kind = WORKERD_MODULE_OTHER;
	for (size_t k = 0; k < 2; k++) {
		err = field(wc, m, js_kinds[k], &v);
		if (err)
			return err;
		if (!v)
			continue;
		out->kind = k ? WORKERD_MODULE_COMMONJS : WORKERD_MODULE_ES;
		return content(wc, v, out);
	}
	return 0;
}

static int read_namespace(struct wc *wc, const struct wc_node *d, struct workerd_do_namespace *out)
{
	const struct wc_node *cls, *key;
	int err;

	if (want(wc, d, WC_STRUCT, "a Durable Object namespace is a struct (className = ...)"))
		return -EINVAL;
	err = field(wc, d, "className", &cls);
	if (!err)
		err = field(wc, d, "uniqueKey", &key);
	if (err)
		return err;
	if (!cls)
		return fail_at(wc, d->file, d->line, d->col,
			       "a Durable Object namespace without a className");
	out->class_name = dup_text(wc, cls, "className is a string");
	if (!out->class_name)
		return -EINVAL;
	if (key) {
		out->unique_key = dup_text(wc, key, "uniqueKey is a string");
		if (!out->unique_key)
			return -EINVAL;
	}
	return 0;
}

static int read_worker(struct wc *wc, const struct wc_node *w, struct workerd_service *s)
{
	const struct wc_node *mods, *sw, *ns;
	int err;

	if (want(wc, w, WC_STRUCT, "a worker is a struct (modules = [...], ...)"))
		return -EINVAL;
	s->is_worker = true;
	err = field(wc, w, "modules", &mods);
	if (!err)
		err = field(wc, w, "serviceWorkerScript", &sw);
	if (!err)
		err = field(wc, w, "durableObjectNamespaces", &ns);
	if (err)
		return err;
	if (mods) {
		if (want(wc, mods, WC_LIST, "modules is a list"))
			return -EINVAL;
		s->modules = calloc(mods->nr ? mods->nr : 1, sizeof(*s->modules));
		if (!s->modules)
			return fail_oom(wc);
		for (size_t i = 0; i < mods->nr; i++) {
			const struct wc_node *m;

			err = resolve(wc, mods->items[i], &m);
			if (!err)
				err = read_module(wc, m, &s->modules[i]);
			s->nr_modules = i + 1;
			if (err)
				return err;
		}
	} else if (sw) {
		/* V8 names a service worker script after the service (docs/attribution.md) */
		s->modules = calloc(1, sizeof(*s->modules));
		if (!s->modules)
			return fail_oom(wc);
		s->nr_modules = 1;
		s->service_worker = true;
		s->modules[0].kind = WORKERD_MODULE_COMMONJS;
		s->modules[0].name = strdup(s->name);
		if (!s->modules[0].name)
			return fail_oom(wc);
		err = content(wc, sw, &s->modules[0]);
		if (err)
			return err;
	}
	if (ns) {
		if (want(wc, ns, WC_LIST, "durableObjectNamespaces is a list"))
			return -EINVAL;
		s->namespaces = calloc(ns->nr ? ns->nr : 1, sizeof(*s->namespaces));
		if (!s->namespaces)
			return fail_oom(wc);
		for (size_t i = 0; i < ns->nr; i++) {
			const struct wc_node *d;

			err = resolve(wc, ns->items[i], &d);
			if (!err)
				err = read_namespace(wc, d, &s->namespaces[i]);
			s->nr_namespaces = i + 1;
			if (err)
				return err;
		}
	}
	return 0;
}

static bool service_is(const void *ctx, uint32_t i, const void *key)
{
	const struct workerd_config *cfg = ctx;

	return !strcmp(cfg->services[i].name, key);
}

/* The services of the config root; names indexes them to refuse a name twice. */
static int read_services_in(struct wc *wc, const struct wc_node *root, struct workerd_config *cfg,
			    struct index_table *names)
{
	const struct wc_node *svcs;
	size_t slot;
	int err;

	if (want(wc, root, WC_STRUCT, "the config is a struct (services = [...], ...)"))
		return -EINVAL;
	err = field(wc, root, "services", &svcs);
	if (err || !svcs)
		return err;
	if (want(wc, svcs, WC_LIST, "services is a list"))
		return -EINVAL;
	cfg->services = calloc(svcs->nr ? svcs->nr : 1, sizeof(*cfg->services));
	if (!cfg->services)
		return fail_oom(wc);
	for (size_t i = 0; i < svcs->nr; i++) {
		struct workerd_service *s = &cfg->services[i];
		const struct wc_node *sv, *name, *worker;

		cfg->nr_services = i + 1;
		err = resolve(wc, svcs->items[i], &sv);
		if (err)
			return err;
		if (want(wc, sv, WC_STRUCT, "a service is a struct (name = ..., worker = ...)"))
			return -EINVAL;
		err = field(wc, sv, "name", &name);
		if (!err)
			err = field(wc, sv, "worker", &worker);
		if (err)
			return err;
		if (!name)
			return fail_at(wc, sv->file, sv->line, sv->col, "a service without a name");
		s->name = dup_text(wc, name, "a service's name is a string");
		if (!s->name)
			return -EINVAL;
		if (index_table__reserve(names))
			return fail_oom(wc);
		if (index_table__lookup(names, name_hash(s->name), service_is, cfg, s->name,
					&slot) >= 0)
			return fail_at(wc, name->file, name->line, name->col,
				       "a second service of the same name");
		index_table__set(names, slot, name_hash(s->name), (uint32_t)i);
		if (worker) {
			err = read_worker(wc, worker, s);
			if (err)
				return err;
		}
	}
	return 0;
}

static int read_services(struct wc *wc, const struct wc_node *root, struct workerd_config *cfg)
{
	struct index_table names = { 0 };
	int err = read_services_in(wc, root, cfg, &names);

	index_table__release(&names);
	return err;
}

void workerd_config__free(struct workerd_config *cfg)
{
	if (!cfg)
		return;
	for (size_t i = 0; i < cfg->nr_services; i++) {
		struct workerd_service *s = &cfg->services[i];

		for (size_t j = 0; j < s->nr_modules; j++) {
			free(s->modules[j].name);
			free(s->modules[j].source);
			free(s->modules[j].embed);
		}
		for (size_t j = 0; j < s->nr_namespaces; j++) {
			free(s->namespaces[j].class_name);
			free(s->namespaces[j].unique_key);
		}
		free(s->name);
		free(s->modules);
		free(s->namespaces);
	}
	free(cfg->services);
	free(cfg);
}

int workerd_config__parse_text(const char *path, const char *text, size_t len,
			       const char *const_name, workerd_config_read_fn read, void *ctx,
			       struct workerd_config **out, char *err, size_t errlen)
{
	struct wc wc = { .read = read, .ctx = ctx, .err = err, .errlen = errlen };
	const struct wc_const *root = NULL;
	const struct wc_node *value;
	struct workerd_config *cfg = NULL;
	unsigned int idx;
	int ret;

	*out = NULL;
	if (errlen)
		err[0] = '\0';
	ret = add_file(&wc, path, text, len, &idx);
	if (ret)
		goto done;
	if (const_name) {
		root = find_const(&wc.files[0], const_name);
		if (!root) {
			snprintf(err, errlen, "%s: no const named in the command line", path);
			ret = -EINVAL;
			goto done;
		}
	} else {
		for (size_t i = 0; i < wc.files[0].nr_consts; i++) {
			if (strcmp(wc.files[0].consts[i].type, "Config"))
				continue;
			if (root) {
				ret = fail_at(&wc, 0, wc.files[0].consts[i].line,
					      wc.files[0].consts[i].col,
					      "a second Config const (workerd needs its name)");
				goto done;
			}
			root = &wc.files[0].consts[i];
		}
		if (!root) {
			snprintf(err, errlen, "%s: no const of type Config", path);
			ret = -EINVAL;
			goto done;
		}
	}
	cfg = calloc(1, sizeof(*cfg));
	if (!cfg) {
		ret = fail_oom(&wc);
		goto done;
	}
	ret = resolve(&wc, root->value, &value);
	if (!ret)
		ret = read_services(&wc, value, cfg);
done:
	arena_free(&wc);
	if (ret) {
		workerd_config__free(cfg);
		return ret;
	}
	*out = cfg;
	return 0;
}

int workerd_config__parse(const char *path, const char *const_name, workerd_config_read_fn read,
			  void *ctx, struct workerd_config **out, char *err, size_t errlen)
{
	char *data = NULL, why[160] = "";
	size_t len = 0;
	int ret;

	*out = NULL;
	ret = read(ctx, path, false, &data, &len, why, sizeof(why));
	if (ret) {
		snprintf(err, errlen, "%s: %s", path, why[0] ? why : strerror(-ret));
		return ret;
	}
	ret = workerd_config__parse_text(path, data, len, const_name, read, ctx, out, err, errlen);
	free(data);
	return ret;
}
