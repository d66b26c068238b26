// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* record: helpers that the stages of `isoprof record` share; see record.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fileio.h"
#include "lib/textescape.h"
#include "proto/pprof_builder.h"
#include "proto/profile_vocab.h"
#include "user/record/record.h"

char *record__asprintf(const char *fmt, ...)
{
	va_list ap;
	char *str;

	va_start(ap, fmt);
	if (vasprintf(&str, fmt, ap) < 0)
		str = NULL;
	va_end(ap);
	return str;
}

void record__set_exit(struct capture *c, enum record_exit status)
{
	if (c->exit_status == RECORD_EXIT_OK || c->exit_status == RECORD_EXIT_FAILED)
		c->exit_status = status;
}

int record__group_path(const struct capture *c, const struct isolate_group *g, const char *suffix,
		       char *path, size_t len)
{
	char script[128], version[64];
	int n;

	fileio__name_part(isolate_group__script(g), script, sizeof(script));
	fileio__name_part(isolate_group__version(g), version, sizeof(version));
	n = snprintf(path, len, "%s/%s-%s-%s-%s", c->env->out_dir ? c->env->out_dir : ".", script,
		     version, g->isolate_str, suffix);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/*
 * A function's few deoptimizations while its types settle cost well under
 * 1% of an isolate's samples; from 1% on, code is deoptimized over and over.
 */
#define DEOPT_LOOP_PERCENT 1

bool record__is_deopt_loop(const struct isolate_group *g)
{
	return g->samples && g->deopt_samples * 100 >= g->samples * DEOPT_LOOP_PERCENT;
}

static const struct target_state *target_by_pid(const struct capture *c, uint32_t pid)
{
	for (int i = 0; i < c->ntargets; i++)
		if ((uint32_t)c->targets[i].pid == pid)
			return &c->targets[i];
	return NULL;
}

bool record__gc_pauses(const struct capture *c, const struct isolate_group *g, char *buf,
		       size_t len)
{
	const struct target_state *t = target_by_pid(c, g->pid);
	struct isoprof_gc_pauses p;

	if (!g->isolate)
		return false;
	if (c->env->no_gc_probes)
		snprintf(buf, len, COMMENT_GC_OFF, "--no-gc-probes");
	else if (!c->gc || !t || !t->gc_probed)
		snprintf(buf, len, COMMENT_GC_OFF,
			 t && t->gc_why ? t->gc_why : "the GC probes could not be attached");
	else if (!gc_probes__observable(c->gc, g->pid))
		snprintf(buf, len, COMMENT_GC_OFF,
			 "no GCTracer::StartObservablePause and StopObservablePause symbols "
			 "of a known signature in its executable");
	else if (gc_probes__pauses(c->gc, g->pid, g->isolate, &p))
		snprintf(buf, len, COMMENT_GC_PAUSES, 0ull, 0.0, 0.0);
	else
		snprintf(buf, len, COMMENT_GC_PAUSES, (unsigned long long)p.obs_count,
			 p.obs_total_ns / 1e6, p.obs_max_ns / 1e6);
	return true;
}

bool record__gc_stop(const struct capture *c, const struct isolate_group *g, char *buf,
		     size_t len)
{
	const struct target_state *t = target_by_pid(c, g->pid);
	struct isoprof_gc_pauses p;

	if (!g->isolate || !c->gc || !t || !t->gc_probed)
		return false;
	if (gc_probes__pauses(c->gc, g->pid, g->isolate, &p))
		memset(&p, 0, sizeof(p));
	snprintf(buf, len, COMMENT_GC_STOP, p.total_ns / 1e6, p.max_ns / 1e6);
	return true;
}

int record__gc_tally(struct capture *c)
{
	const struct stored_sample *samples = sample_store__samples(c->store);
	size_t n = sample_store__count(c->store);
	uint32_t *own;

	c->gc_off_thread = calloc(c->attr.ngroups + 1, sizeof(*c->gc_off_thread));
	own = calloc(c->attr.ngroups + 1, sizeof(*own));
	if (!c->gc_off_thread || !own) {
		free(own);
		return -ENOMEM;
	}
	/* each isolate's own thread: where its latest pause ran (0: none seen) */
	for (size_t i = 0; i < c->attr.ngroups; i++) {
		const struct isolate_group *g = &c->attr.groups[i];
		struct isoprof_gc_pauses p;

		if (g->isolate && c->gc && !gc_probes__pauses(c->gc, g->pid, g->isolate, &p))
			own[i] = p.tid;
	}
	for (size_t i = 0; i < n; i++) {
		const struct stored_sample *s = &samples[i];
		size_t gi = attribution__group_of(&c->attr, s) - c->attr.groups;
		bool off;

		if (!s->isolate)
			continue;
		off = own[gi] ? s->tid != own[gi] : (s->flags & ISOPROF_SAMPLE_ISOLATE_FROM_JOB);
		if (off && stack_view__class(frame_table__stack(c->ft, s->stack_id), true) == CLASS_GC)
			c->gc_off_thread[gi]++;
	}
	free(own);
	return 0;
}

void record__gc_share(const struct capture *c, const struct isolate_group *g, uint64_t *gc,
		      uint64_t *off_thread)
{
	*gc = g->class_samples[CLASS_GC];
	*off_thread = c->gc_off_thread ? c->gc_off_thread[g - c->attr.groups] : g->job_gc_samples;
}

/* Outputs go into the one directory opened and checked before the window. */
static const char *name_in_dir(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

int record__write_file(const struct capture *c, const char *path, const void *data, size_t len)
{
	if (!c->out_dirfd)
		return -EBADF;
	return fileio__write_atomic_at(c->out_dirfd - 1, &c->out_owner, name_in_dir(path), data,
				       len, 0644);
}

int record__write_profile(const struct capture *c, const char *path, struct pprof_builder *b)
{
	uint8_t *data;
	size_t len;
	int err;

	err = pprof_builder__serialize(b, !c->env->raw, &data, &len);
	if (err)
		return err;
	err = record__write_file(c, path, data, len);
	free(data);
	return err;
}

int record__open_file(const struct capture *c, const char *path, struct atomic_file *af)
{
	if (!c->out_dirfd)
		return -EBADF;
	return atomic_file__openat(af, c->out_dirfd - 1, &c->out_owner, name_in_dir(path), 0644);
}

const char *record__esc(const char *s)
{
	static char bufs[8][TEXTESCAPE_SIZE(512)];
	static unsigned int next;

	return textescape(s, bufs[next++ % 8], sizeof(bufs[0]));
}
