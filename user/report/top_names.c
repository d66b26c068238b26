// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* top_names: names and paths as pprof prints them; see top_names.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "proto/pprof_reader.h"
#include "user/report/top_names.h"

/* Go's filepath.Clean, so --lines keys and prints files exactly like pprof. */
char *top_names__path_clean(const char *path)
{
	size_t n = strlen(path), r = 0, w = 0, dotdot = 0;
	bool rooted = path[0] == '/';
	char *out = malloc(2 * n + 2);

	if (!out)
		return NULL;
	if (rooted) {
		out[w++] = '/';
		r = dotdot = 1;
	}
	while (r < n) {
		if (path[r] == '/') {
			r++;
		} else if (path[r] == '.' && (r + 1 == n || path[r + 1] == '/')) {
			r++;
		} else if (path[r] == '.' && path[r + 1] == '.' &&
			   (r + 2 == n || path[r + 2] == '/')) {
			r += 2;
			if (w > dotdot) {
				w--;
				while (w > dotdot && out[w] != '/')
					w--;
			} else if (!rooted) {
				if (w > 0)
					out[w++] = '/';
				out[w++] = '.';
				out[w++] = '.';
				dotdot = w;
			}
		} else {
			if ((rooted && w != 1) || (!rooted && w != 0))
				out[w++] = '/';
			for (; r < n && path[r] != '/'; r++)
				out[w++] = path[r];
		}
	}
	if (!w)
		out[w++] = '.';
	out[w] = '\0';
	return out;
}

/* Go's filepath.Base into buf. */
const char *top_names__path_base(const char *path, char *buf, size_t size)
{
	size_t len = strlen(path);
	const char *start;

	if (!len)
		return ".";
	while (len > 1 && path[len - 1] == '/')
		len--;
	if (len == 1 && path[0] == '/')
		return "/";
	start = path;
	for (size_t i = 0; i < len; i++)
		if (path[i] == '/')
			start = path + i + 1;
	len -= (size_t)(start - path);
	snprintf(buf, size, "%.*s", (int)len, start);
	return buf;
}

/* pprof's report.trimPath with no -trim_path/-source_path: the /proc/self/cwd prefixes. */
const char *top_names__trim_path(const char *path)
{
	static const char *const prefixes[] = { "/proc/self/cwd/./", "/proc/self/cwd/" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(path, prefixes[i], strlen(prefixes[i])))
			return path + strlen(prefixes[i]);
	return path;
}

/*
 * Function names as pprof shows them.  go tool pprof "demangles" every
 * function whose name is empty or equal to its system name: a mangled
 * C++ name is demangled without parameters or template arguments, and a
 * name that looks like demangled C++ loses its (...) and <...> groups
 * (symbolizer.demangleSingleFunction).  Mangled names go through
 * libiberty here, Go's demangler there; the two agree on the 45k symbols
 * of libstdc++, libLLVM and node we compared.  Rust names are left alone.
 */

/* Go's symbolizer.removeMatching: drop nested start..end groups; stop at a mismatch. */
static void remove_matching(char *name, char start, char end)
{
	size_t cur = 0, first = 0;
	int nesting = 0;

	while (name[cur]) {
		if (name[cur] == start) {
			if (++nesting == 1)
				first = cur;
		} else if (name[cur] == end) {
			if (--nesting < 0)
				return;
			if (!nesting) {
				memmove(name + first, name + cur + 1, strlen(name + cur + 1) + 1);
				cur = first;
				continue;
			}
		}
		cur++;
	}
}

static bool looks_like_demangled_cpp(const char *s)
{
	if (strstr(s, ".<") || strstr(s, "]).")) /* Java "class.<init>", Go "(*T[...]).M" */
		return false;
	return strpbrk(s, "<>[]") || strstr(s, "::");
}

/* Template argument lists out of a demangled name; operator<, operator<< stay. */
static void strip_templates(char *s)
{
	size_t w = 0, depth = 0;

	for (size_t r = 0; s[r]; r++) {
		if (s[r] == '<' && !depth && r >= 8 && !strncmp(s + r - 8, "operator", 8)) {
			s[w++] = s[r];
			if (s[r + 1] == '<' || s[r + 1] == '=')
				s[w++] = s[++r];
			continue;
		}
		if (s[r] == '<') {
			/* libiberty separates "operator<< <T>" with a space Go does not print */
			if (!depth++ && w && s[w - 1] == ' ')
				w--;
			continue;
		}
		if (s[r] == '>' && depth) {
			depth--;
			continue;
		}
		if (!depth)
			s[w++] = s[r];
	}
	s[w] = '\0';
}

/* NULL when pprof shows the name unchanged; otherwise a malloc()ed name, or -ENOMEM. */
int top_names__frame(const struct pprof_frame *f, char **out)
{
	char *d;

	*out = NULL;
	if (!f->has_function || (*f->name && strcmp(f->name, f->system_name)))
		return 0;
	if (!strncmp(f->system_name, "_Z", 2)) {
		d = cplus_demangle(f->system_name, 0);
		if (d) {
			strip_templates(d);
			if (strcmp(d, f->system_name)) {
				*out = d;
				return 0;
			}
			free(d);
		}
	}
	if (!looks_like_demangled_cpp(f->system_name)) {
		if (!strcmp(f->name, f->system_name))
			return 0;
		*out = strdup(f->system_name);	/* empty name: pprof shows the system name */
		return *out ? 0 : -ENOMEM;
	}
	d = strdup(f->system_name);
	if (!d)
		return -ENOMEM;
	remove_matching(d, '(', ')');
	remove_matching(d, '<', '>');
	if (!strcmp(d, f->name)) {
		free(d);
		return 0;
	}
	*out = d;
	return 0;
}
