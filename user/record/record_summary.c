// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * record's summary: what a capture wrote and how it went, on stderr after
 * the profiles, and with --json on stdout; see record.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/textescape.h"
#include "proto/profile_vocab.h"
#include "symbolize/v8code.h"
#include "symbolize/v8log.h"
#include "user/record/record.h"

/* What was written, and what the sampler lost on the way. */
static void print_totals(const struct capture *c, const struct isoprof_counters *cnt,
			 double process_ms)
{
	const struct cpu_profile_stats *stats = &c->stats;
	size_t total = sample_store__count(c->store);
	char whose[64] = "";

	if (c->nwritten == 1)
		fprintf(stderr, "isoprof: wrote %s", c->first_written);
	else
		fprintf(stderr, "isoprof: wrote %zu profiles to %s", c->nwritten,
			c->env->out_dir ? c->env->out_dir : ".");
	/* written for another user (record_profiles__open_output()): say whose */
	if (c->out_owner.how != FILEIO_OWNER_SELF)
		snprintf(whose, sizeof(whose), ", owned by %u:%u", (unsigned int)c->out_owner.uid,
			 (unsigned int)c->out_owner.gid);
	fprintf(stderr,
		" (%s%s): %llu of %zu samples over %.2f s at %ld Hz on %d CPUs, "
		"armed %.0f ms after launch (symbols loaded at %.0f ms), post-processing %.0f ms\n",
		c->env->raw ? "pprof, raw protobuf" : "pprof, gzip", whose,
		(unsigned long long)stats->samples, total,
		(c->window_end_ns - c->window_start_ns) / 1e9, c->env->frequency_hz, c->ncpus,
		(c->armed_ns - c->launch_ns) / 1e6, (c->symbols_ns - c->launch_ns) / 1e6,
		process_ms);
	fprintf(stderr,
		"isoprof: lost %llu samples (ring buffer full); truncated stacks: user %llu, "
		"kernel %llu; stack read errors: user %llu, kernel %llu; unnamed frames %llu of %llu\n",
		(unsigned long long)cnt->lost_ringbuf_full,
		(unsigned long long)cnt->user_truncated, (unsigned long long)cnt->kernel_truncated,
		(unsigned long long)cnt->user_stack_errors,
		(unsigned long long)cnt->kernel_stack_errors,
		(unsigned long long)stats->unsymbolized_frames, (unsigned long long)stats->frames);
}

static void print_targets(const struct capture *c, size_t total)
{
	for (int i = 0; i < c->ntargets; i++) {
		const struct target_state *t = &c->targets[i];
		char comm[TEXTESCAPE_SIZE(sizeof(t->comm))];

		fprintf(stderr, "  pid %-7d %-16s %7llu samples %5.1f%%  %s%s\n", t->pid,
			textescape(t->comm, comm, sizeof(comm)),
			(unsigned long long)t->samples, total ? 100.0 * t->samples / total : 0.0,
			t->v8 ? discover__runtime_name(t->v8->runtime) : "not a V8 runtime",
			t->v8 && !t->v8->tls.supported ? " (isolates not readable)" : "");
	}
}

static void print_classes(const uint64_t *class_samples, uint64_t total)
{
	for (int k = 0; k < NR_SAMPLE_CLASSES; k++)
		if (class_samples[k])
			fprintf(stderr, " %s %.1f%%", sample_class__str(k),
				100.0 * class_samples[k] / total);
	fputc('\n', stderr);
}

/*
 * An isolate's GC: its pauses (the profile comment's words), and how much
 * of its GC CPU time ran on V8's platform threads.  Outside isolates: the
 * GC that platform threads did for jobs nobody could be named for.
 */
static void print_gc(const struct capture *c, const struct isolate_group *g)
{
	double period_ms = sampler__period_ns(c->sampler) / 1e6;
	uint64_t gc = g->class_samples[CLASS_GC], off;
	char line[160], stop[80] = "";

	if (!g->isolate) {
		if (gc && c->gc)
			fprintf(stderr,
				"    gc outside isolates: %.0f ms (V8 jobs posted before the probes "
				"were on, or not through V8's job API)\n",
				gc * period_ms);
		return;
	}
	record__gc_pauses(c, g, line, sizeof(line));
	if (record__gc_stop(c, g, stop + 2, sizeof(stop) - 2))
		memcpy(stop, "; ", 2);
	record__gc_share(c, g, &gc, &off);
	if (c->gc && gc)
		fprintf(stderr, "    %s%s; gc off-thread: %.0f%% of %.0f ms\n", line, stop,
			100.0 * off / gc, gc * period_ms);
	else
		fprintf(stderr, "    %s%s\n", line, stop);
}

/*
 * Who placed the isolate's JIT-leaf samples among the functions their
 * code inlined (docs/v8-frames.md): only when some code inlined.
 */
static void print_placed(const struct isolate_group *g)
{
	uint64_t inlining = 0;
	const char *sep = "";

	for (int k = FRAME_PLACED_NONE + 1; k < NR_FRAME_PLACEMENTS; k++)
		inlining += g->placed_samples[k];
	if (!inlining)
		return;
	fprintf(stderr, "    inlined code: %llu JIT-leaf samples placed by", (unsigned long long)inlining);
	for (int k = FRAME_PLACED_NONE + 1; k < NR_FRAME_PLACEMENTS; k++) {
		if (!g->placed_samples[k])
			continue;
		fprintf(stderr, "%s %s %llu", sep, frame_placement__str(k),
			(unsigned long long)g->placed_samples[k]);
		sep = ",";
	}
	fprintf(stderr, "\n");
}

/* The selected isolates (and what ran outside any), with their classes. */
static void print_groups(const struct capture *c, size_t total)
{
	for (size_t i = 0; i < c->attr.ngroups; i++) {
		const struct isolate_group *g = &c->attr.groups[i];
		char script[TEXTESCAPE_SIZE(128)], version[TEXTESCAPE_SIZE(64)];

		if (!c->selected[i])
			continue;
		if (g->isolate)
			fprintf(stderr, "  isolate %s %s version %s (pid %u%s): %llu samples %.1f%%:",
				g->isolate_str,
				textescape(isolate_group__script(g), script, sizeof(script)),
				textescape(isolate_group__version(g), version, sizeof(version)),
				g->pid,
				g->info && g->info->version_from == ISOLATE_VERSION_FROM_FILES
					? ", version from its files" : "",
				(unsigned long long)g->samples, 100.0 * g->samples / total);
		else
			fprintf(stderr, "  outside isolates (pid %u): %llu samples %.1f%%:", g->pid,
				(unsigned long long)g->samples, 100.0 * g->samples / total);
		print_classes(g->class_samples, g->samples);
		print_gc(c, g);
		print_placed(g);
		if (g->isolate && record__is_deopt_loop(g))
			fprintf(stderr,
				"    %.1f%% of its samples in V8's deoptimizer: code is deoptimized "
				"over and over (a deopt loop; V8's --trace-deopt names the function "
				"and the reason)\n",
				100.0 * g->deopt_samples / g->samples);
	}
}

/* What one V8 target's flags gave this capture. */
struct flag_view {
	bool perf_map;		/* --perf-basic-prof */
	bool code_log;		/* --log-code --logfile-per-isolate --logfile= */
	bool sources;		/* some logged isolate has a version id (script sources) */
	uint64_t samples;
	uint64_t interpreter;	/* samples through V8's shared interpreter trampoline */
	uint64_t code_log_named; /* JIT frames only the code log named */
};

static bool is_shared_trampoline(const struct frame *f)
{
	return !f->kernel && f->sym.kind != SYM_FRAME_JIT && f->sym.name &&
	       strstr(f->sym.name, "InterpreterEntryTrampoline");
}

/*
 * V8 opens its per-isolate logs even without --log-code (they then hold
 * only heap events), so a code log counts when it names sampled JIT code
 * or gave a version id, not when it exists.
 */
static void flag_view__fill(const struct capture *c, const struct target_state *t,
			    struct flag_view *fv)
{
	const struct stored_sample *samples = sample_store__samples(c->store);
	size_t n = sample_store__count(c->store), niso = 0;
	const struct isolate_info *const *iso = NULL;

	memset(fv, 0, sizeof(*fv));
	fv->perf_map = symbolizer__has_perfmap(c->sym, t->pid);
	if (c->isolates)
		iso = isolate_registry__list(c->isolates, &niso);
	for (size_t i = 0; i < niso; i++)
		if (iso[i]->pid == t->pid && iso[i]->version_from == ISOLATE_VERSION_FROM_CODE_LOG)
			fv->sources = fv->code_log = true;
	for (size_t i = 0; c->ft && i < n; i++) {
		const struct stack_view *v;
		bool interp = false;

		if (samples[i].pid != (uint32_t)t->pid)
			continue;
		fv->samples++;
		v = frame_table__stack(c->ft, samples[i].stack_id);
		for (uint32_t k = 0; k < v->nframes; k++)
			interp |= is_shared_trampoline(frame_table__frame(c->ft, v->frames[k]));
		fv->interpreter += interp;
	}
	for (size_t i = 0; c->ft && i < frame_table__count(c->ft); i++) {
		const struct frame *f = frame_table__frame(c->ft, i);
		struct v8log_sym code;

		if (f->pid != (uint32_t)t->pid || f->sym.kind != SYM_FRAME_JIT)
			continue;
		fv->code_log_named += f->sym.source == SYM_SOURCE_CODE_LOG;
		if (!fv->code_log && c->isolates)
			fv->code_log = f->sym.source == SYM_SOURCE_CODE_LOG ||
				       !isolate_registry__code_at(c->isolates, t->pid, f->addr, &code);
	}
}

/* The selected isolates of pid: with a version from their files (files), or all. */
static size_t count_versions(const struct capture *c, int pid, bool files)
{
	size_t n = 0;

	for (size_t i = 0; i < c->attr.ngroups; i++) {
		const struct isolate_info *info = c->attr.groups[i].info;

		if (c->selected[i] && info && info->pid == pid &&
		    (!files || info->version_from == ISOLATE_VERSION_FROM_FILES))
			n++;
	}
	return n;
}

/* Why the files gave a selected isolate of pid no version (node_script.h, services.h). */
static void print_version_whys(const struct capture *c, int pid)
{
	for (size_t i = 0; i < c->attr.ngroups; i++) {
		const struct isolate_group *g = &c->attr.groups[i];

		if (c->selected[i] && g->info && g->info->pid == pid && g->info->version_why &&
		    !g->info->version_full[0])
			fprintf(stderr, "isoprof: note: pid %d: isolate %s (%s): no version id: %s\n",
				pid, g->isolate_str, record__esc(isolate_group__script(g)),
				record__esc(g->info->version_why));
	}
}

/*
 * Which of the V8 flags isoprof asks for (docs/v8-frames.md) a target runs
 * without, and what the profile lacks for it: one line per capability.
 */
static void print_flag_notes(const struct capture *c)
{
	for (int i = 0; i < c->ntargets; i++) {
		const struct target_state *t = &c->targets[i];
		struct flag_view fv;

		if (!t->v8)
			continue;
		flag_view__fill(c, t, &fv);
		if (!fv.perf_map && t->layout)
			fprintf(stderr, "isoprof: note: pid %d: no V8 perf map (--perf-basic-prof): JS "
				"frames named from V8's heap, with the layout calibrated for its "
				"binary\n", t->pid);
		else if (!fv.perf_map && fv.code_log)
			fprintf(stderr, "isoprof: note: pid %d: no V8 perf map (--perf-basic-prof): JS "
				"frames named from the code logs (%llu frames); code they do not "
				"cover stays [jit]\n", t->pid,
				(unsigned long long)fv.code_log_named);
		else if (!fv.perf_map)
			fprintf(stderr, "isoprof: note: pid %d: no V8 perf map (--perf-basic-prof) "
				"and no code logs: JS frames are not named (shown as [jit])\n",
				t->pid);
		if (!fv.code_log) {
			fprintf(stderr, "isoprof: note: pid %d: no per-isolate code logs (--log-code "
				"--logfile-per-isolate --logfile=DIR/v8.log): isolates%s by address, "
				"scripts only as named in their JS frames, version ids only from the "
				"scripts' own files (%zu of %zu isolates), inlined frames only from the "
				"code objects in memory\n",
				t->pid, t->v8->tls.supported ? "" : " (not readable here anyway)",
				count_versions(c, t->pid, true), count_versions(c, t->pid, false));
			print_version_whys(c, t->pid);
		} else if (!fv.sources) {
			fprintf(stderr, "isoprof: note: pid %d: code logs without script sources "
				"(--log-source-code): no scripts or version ids per isolate, inlined "
				"frames without lines\n", t->pid);
		}
		/* a stray sample at a first call is no reason to restart a runtime */
		if (fv.interpreter * 200 >= fv.samples && fv.interpreter)
			fprintf(stderr, "isoprof: note: pid %d: %.1f%% of its samples run interpreted "
				"JS shown as V8's shared InterpreterEntryTrampoline, not by function "
				"(--interpreted-frames-native-stack)\n", t->pid,
				100.0 * fv.interpreter / fv.samples);
	}
}

static bool has_flag_notes(const struct capture *c, uint32_t pid)
{
	for (int i = 0; i < c->ntargets; i++)
		if (c->targets[i].v8 && (uint32_t)c->targets[i].pid == pid)
			return true;
	return false;
}

/*
 * JS frames named from V8's heap (docs/v8-frames.md): how many the sampler
 * read and validated, how the names compare with the perf map's where both
 * named a frame, and why a V8 target had no layout.
 */
static void print_heap_names(const struct capture *c, const struct isoprof_counters *cnt)
{
	struct frame_heap_stats hs = { 0 };

	if (c->ft)
		frame_table__heap_stats(c->ft, &hs);
	if (cnt->js_frames)
		fprintf(stderr,
			"isoprof: JS frames read from V8's heap: %llu, function validated %.1f%%; "
			"frames named from it %zu%s",
			(unsigned long long)cnt->js_frames,
			100.0 * (cnt->js_frames - cnt->js_unnamed) / cnt->js_frames, hs.named,
			hs.refused ? "" : "\n");
	if (cnt->js_frames && hs.refused)
		fprintf(stderr, " (%zu refused on reading)\n", hs.refused);
	if (hs.checked)
		fprintf(stderr, "isoprof: heap names agree with the perf map on %zu of %zu frames\n",
			hs.agree, hs.checked);
	for (int i = 0; i < c->ntargets; i++) {
		const struct target_state *t = &c->targets[i];

		if (t->layout_off)
			fprintf(stderr, "isoprof: pid %d: JS not named from V8's heap: %llu of %llu "
				"JS frames did not validate against the layout of build-id %s; "
				"recalibrate it (isoprof calibrate)\n", t->pid,
				(unsigned long long)t->js_bad, (unsigned long long)t->js_frames,
				t->v8->build_id);
		else if (t->v8 && !t->layout && t->layout_why && !t->v8->perf_map_exists &&
			 !symbolizer__has_perfmap(c->sym, t->pid))
			fprintf(stderr, "isoprof: pid %d: JS not named from V8's heap: %s\n", t->pid,
				t->layout_why);
	}
}

/*
 * Inlined functions: how many samples ran inside one, and who said so, the
 * code log or the code object read from memory (docs/v8-frames.md).
 */
static void print_inlined(const struct capture *c, const struct cpu_profile_stats *stats)
{
	uint64_t by_log = stats->jit_leaf_inlined_by[SYM_SOURCE_CODE_LOG];
	uint64_t by_code = stats->jit_leaf_inlined_by[SYM_SOURCE_HEAP];
	struct frame_heap_stats hs = { 0 };

	if (c->ft)
		frame_table__heap_stats(c->ft, &hs);
	if (by_log || by_code)
		fprintf(stderr, "isoprof: JIT-leaf samples inside inlined functions: %llu: from the "
			"code log %llu, from the code objects in memory %llu\n",
			(unsigned long long)(by_log + by_code), (unsigned long long)by_log,
			(unsigned long long)by_code);
	if (hs.inline_checked)
		fprintf(stderr, "isoprof: inlined functions: the code log and the code objects "
			"agree on %zu of %zu frames%s\n", hs.inline_agree, hs.inline_checked,
			hs.inline_agree < hs.inline_checked ?
				" (where they differ, the code objects, read while the code ran, "
				"are used: the log's table was older code's)" : "");
	for (int i = 0; i < c->ntargets; i++) {
		struct v8code_stats cs;

		symbolizer__v8_code_stats(c->sym, c->targets[i].pid, &cs);
		if (cs.deopt_checked)
			fprintf(stderr, "isoprof: pid %d: where V8 kept source positions, the "
				"deoptimization data places %llu of %llu sampled pcs in the same "
				"inlined function (%.1f%%)\n", c->targets[i].pid,
				(unsigned long long)cs.deopt_agree,
				(unsigned long long)cs.deopt_checked,
				100.0 * cs.deopt_agree / cs.deopt_checked);
		if (cs.no_positions > cs.deopt_placed)
		{
			const struct target_state *t = &c->targets[i];
			uint64_t left = cs.no_positions - cs.deopt_placed;
			bool learnt = t->layout && c->layouts[t->layout - 1].deopt_format;

			fprintf(stderr, "isoprof: note: pid %d: %llu optimized code object%s inlined "
				"functions that neither source positions (V8 keeps them when "
				"profiling, logging code or writing a perf map) nor deoptimization "
				"data placed (%s): those samples stay with the function they were "
				"inlined into\n", t->pid, (unsigned long long)left, left > 1 ? "s" : "",
				learnt ? "it did not read" : "the binary's calibration has none; "
				"isoprof calibrate learns it where it can");
		}
	}
}

static struct json_object *source_maps_json(const struct capture *c)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; a && i < source_maps__count(c->maps); i++) {
		struct source_map_status st;
		struct json_object *o = json_object_new_object();
		int err = 0;

		source_maps__status(c->maps, i, &st);
		if (!o) {
			json_object_put(a);
			return NULL;
		}
		err |= json__put(o, "pid", json_object_new_int64(st.pid));
		err |= json__put(o, "script", json__text(st.script));
		if (st.where)
			err |= json__put(o, "map", json__text(st.where));
		else
			json_object_object_add(o, "map", NULL);
		err |= json__put(o, "checked", json_object_new_boolean(st.checked));
		err |= json__put(o, "sources", json_object_new_uint64(st.sources));
		err |= json__put(o, "functions_mapped", json_object_new_uint64(st.mapped));
		err |= json__put(o, "functions_outside", json_object_new_uint64(st.unmapped));
		if (st.problem)
			err |= json__put(o, "problem", json__text(st.problem));
		else
			json_object_object_add(o, "problem", NULL);
		if (err || json_object_array_add(a, o)) {
			json_object_put(o);
			json_object_put(a);
			return NULL;
		}
	}
	return a;
}

/* What print_heap_names() says, for --json. */
static struct json_object *js_names_json(const struct capture *c, const struct isoprof_counters *cnt)
{
	struct json_object *o = json_object_new_object(), *no = json_object_new_array();
	struct frame_heap_stats hs = { 0 };
	int err = 0;

	if (!o || !no) {
		json_object_put(o);
		json_object_put(no);
		return NULL;
	}
	if (c->ft)
		frame_table__heap_stats(c->ft, &hs);
	err |= json__put(o, "jit_leaf_samples", json_object_new_uint64(c->stats.jit_leaf_samples));
	err |= json__put(o, "jit_leaf_named", json_object_new_uint64(c->stats.jit_leaf_named));
	err |= json__put(o, "jit_leaf_by_perf_map",
			 json_object_new_uint64(c->stats.jit_leaf_by[SYM_SOURCE_PERF_MAP]));
	err |= json__put(o, "jit_leaf_by_code_log",
			 json_object_new_uint64(c->stats.jit_leaf_by[SYM_SOURCE_CODE_LOG]));
	err |= json__put(o, "jit_leaf_by_heap",
			 json_object_new_uint64(c->stats.jit_leaf_by[SYM_SOURCE_HEAP]));
	err |= json__put(o, "jit_leaf_inlined_by_code_log",
			 json_object_new_uint64(c->stats.jit_leaf_inlined_by[SYM_SOURCE_CODE_LOG]));
	err |= json__put(o, "jit_leaf_inlined_by_code_objects",
			 json_object_new_uint64(c->stats.jit_leaf_inlined_by[SYM_SOURCE_HEAP]));
	{
		struct v8code_stats sum = { 0 }, one;

		for (int i = 0; i < c->ntargets; i++) {
			symbolizer__v8_code_stats(c->sym, c->targets[i].pid, &one);
			sum.pcs += one.pcs;
			sum.decoded += one.decoded;
			sum.no_positions += one.no_positions;
			sum.reads += one.reads;
			sum.bytes += one.bytes;
			sum.ns += one.ns;
			sum.revalidated += one.revalidated;
			sum.replaced += one.replaced;
			sum.not_optimized += one.not_optimized;
			sum.deopt_placed += one.deopt_placed;
			sum.deopt_failed += one.deopt_failed;
			sum.deopt_entries += one.deopt_entries;
			sum.deopt_instructions += one.deopt_instructions;
			sum.deopt_checked += one.deopt_checked;
			sum.deopt_agree += one.deopt_agree;
		}
		err |= json__put(o, "code_objects_placed_by_deopt",
				 json_object_new_uint64(sum.deopt_placed));
		err |= json__put(o, "code_objects_deopt_unread", json_object_new_uint64(sum.deopt_failed));
		err |= json__put(o, "deopt_entries_decoded", json_object_new_uint64(sum.deopt_entries));
		err |= json__put(o, "deopt_instructions_walked",
				 json_object_new_uint64(sum.deopt_instructions));
		err |= json__put(o, "deopt_pcs_checked", json_object_new_uint64(sum.deopt_checked));
		err |= json__put(o, "deopt_pcs_agree", json_object_new_uint64(sum.deopt_agree));
		err |= json__put(o, "code_objects_revalidated", json_object_new_uint64(sum.revalidated));
		err |= json__put(o, "code_objects_replaced", json_object_new_uint64(sum.replaced));
		err |= json__put(o, "code_object_pcs_not_optimized",
				 json_object_new_uint64(sum.not_optimized));
		err |= json__put(o, "code_objects_decoded", json_object_new_uint64(sum.decoded));
		err |= json__put(o, "code_objects_without_positions",
				 json_object_new_uint64(sum.no_positions));
		err |= json__put(o, "code_object_pcs", json_object_new_uint64(sum.pcs));
		err |= json__put(o, "code_object_reads", json_object_new_uint64(sum.reads));
		err |= json__put(o, "code_object_read_bytes", json_object_new_uint64(sum.bytes));
		err |= json__put(o, "code_object_read_ms", json_object_new_double(sum.ns / 1e6));
	}
	err |= json__put(o, "inline_frames_checked", json_object_new_uint64(hs.inline_checked));
	err |= json__put(o, "inline_frames_agree", json_object_new_uint64(hs.inline_agree));
	err |= json__put(o, "heap_js_frames", json_object_new_uint64(cnt->js_frames));
	err |= json__put(o, "heap_js_frames_validated",
			 json_object_new_uint64(cnt->js_frames - cnt->js_unnamed));
	err |= json__put(o, "heap_named_frames", json_object_new_uint64(hs.named));
	err |= json__put(o, "heap_refused_frames", json_object_new_uint64(hs.refused));
	err |= json__put(o, "perf_map_checked_frames", json_object_new_uint64(hs.checked));
	err |= json__put(o, "perf_map_agreeing_frames", json_object_new_uint64(hs.agree));
	err |= json__put(o, "services_by_module_names",
			 json_object_new_uint64(c->services_by_module));
	for (int i = 0; i < c->ntargets; i++) {
		const struct target_state *t = &c->targets[i];
		struct json_object *e;

		if (!t->v8 || t->layout || !t->layout_why)
			continue;
		e = json_object_new_object();
		if (!e) {
			err = -ENOMEM;
			break;
		}
		err |= json__put(e, "pid", json_object_new_int64(t->pid));
		err |= json__put(e, "why", json__text(t->layout_why));
		err |= json__append(no, e);
	}
	err |= json__put(o, "no_layout", no);
	if (err) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* How well JIT code was named, what to fix when it was not, targets that exited. */
static void print_notes(const struct capture *c, const struct isoprof_counters *cnt)
{
	const struct cpu_profile_stats *stats = &c->stats;
	const char *const *notes;
	size_t nnotes;

	if (stats->jit_leaf_samples)
		fprintf(stderr, "isoprof: JIT-leaf samples: %llu, named %llu (%.1f%%): perf map %llu, "
			"code log %llu, V8's heap %llu (code neither log covers)\n",
			(unsigned long long)stats->jit_leaf_samples,
			(unsigned long long)stats->jit_leaf_named,
			100.0 * stats->jit_leaf_named / stats->jit_leaf_samples,
			(unsigned long long)stats->jit_leaf_by[SYM_SOURCE_PERF_MAP],
			(unsigned long long)stats->jit_leaf_by[SYM_SOURCE_CODE_LOG],
			(unsigned long long)stats->jit_leaf_by[SYM_SOURCE_HEAP]);
	print_inlined(c, stats);
	source_maps__print_notes(c->maps);
	print_heap_names(c, cnt);
	if (c->services_by_module)
		fprintf(stderr, "isoprof: note: %zu isolate%s named after %s workerd service by the "
			"module names in %s JS frames: no code log to match %s content\n",
			c->services_by_module, c->services_by_module > 1 ? "s" : "",
			c->services_by_module > 1 ? "their" : "its",
			c->services_by_module > 1 ? "their" : "its",
			c->services_by_module > 1 ? "their" : "its");
	print_flag_notes(c);
	for (size_t i = 0; i < stats->nr_no_perfmap_pids; i++) {
		char hint[400];

		/* a V8 target's missing flags are in its own notes */
		if (has_flag_notes(c, stats->no_perfmap_pids[i]))
			continue;
		cpu_profile__no_perfmap_hint(stats->no_perfmap_pids[i], hint, sizeof(hint));
		fprintf(stderr, "isoprof: %s\n", record__esc(hint));
	}
	for (int i = 0; i < c->ntargets; i++) {
		const struct target_state *t = &c->targets[i];

		if (t->exited && t->reused)
			fprintf(stderr,
				"isoprof: note: pid %d exited %.2f s into the window and its pid now "
				"names another process; the profile holds what was collected before, "
				"and nothing of the newcomer (%llu samples left out)\n",
				t->pid, t->exited_after_ns / 1e9, (unsigned long long)t->dropped);
		else if (t->exited)
			fprintf(stderr,
				"isoprof: note: pid %d exited %.2f s into the window; the profile "
				"holds what was collected before\n",
				t->pid, t->exited_after_ns / 1e9);
		if (t->maps_suspect)
			fprintf(stderr,
				"isoprof: note: pid %d exited while its memory maps were re-read; "
				"names from its last maps may be wrong\n", t->pid);
	}
	nnotes = symbolizer__notes(c->sym, &notes);
	for (size_t i = 0; i < nnotes; i++)
		fprintf(stderr, "isoprof: note: %s\n", record__esc(notes[i]));
	/* Code logs refused (not the target's, not a regular file) or cut at a cap. */
	nnotes = c->isolates ? isolate_registry__notes(c->isolates, &notes) : 0;
	for (size_t i = 0; i < nnotes; i++)
		fprintf(stderr, "isoprof: note: %s\n", record__esc(notes[i]));
	if (c->read_budget.spent)
		fprintf(stderr, "isoprof: note: stopped reading target files (perf maps, code "
			"logs) at the capture's cap of %llu GiB; names from what was read\n",
			(unsigned long long)(c->read_budget.limit >> 30));
}

void record_summary__print(const struct capture *c, const struct isoprof_counters *cnt,
			   double process_ms)
{
	size_t total = sample_store__count(c->store);

	print_totals(c, cnt, process_ms);
	print_targets(c, total);
	print_groups(c, total);
	print_notes(c, cnt);
}

void record_summary__print_bpf_stats(const struct capture *c, const struct isoprof_counters *cnt)
{
	unsigned long long run_ns, runs;

	if (sampler__prog_stats(c->sampler, &run_ns, &runs) || !runs) {
		fprintf(stderr, "isoprof: BPF run-time stats unavailable\n");
		return;
	}
	/* Runs that are not on a target return after one hash lookup. */
	fprintf(stderr,
		"isoprof: BPF sampler: %llu runs, %llu ns total, %.0f ns per run; "
		"%llu on targets, at most %.0f ns per target sample\n",
		runs, run_ns, (double)run_ns / runs, (unsigned long long)cnt->events,
		cnt->events ? (double)run_ns / cnt->events : 0.0);
}

/* JSON null as member key (json__put() takes NULL for a failed allocation). */
static int put_null(struct json_object *o, const char *key)
{
	return json_object_object_add(o, key, NULL) ? -ENOMEM : 0;
}

/*
 * Where an isolate's version came from: "code_log", "files" (no log) or
 * null; version_why: why the files gave none, else null.
 */
static int put_version_from(struct json_object *o, const struct isolate_info *info)
{
	const char *from = info ? isolate_version_from__str(info->version_from) : NULL;
	const char *why = info && !info->version_full[0] ? info->version_why : NULL;
	int err;

	err = from ? json__put(o, "version_from", json__text(from)) : put_null(o, "version_from");
	err |= why ? json__put(o, "version_why", json__text(why)) : put_null(o, "version_why");
	return err;
}

/* The gc member of an isolate: pauses, or why none were measured, and its GC CPU time. */
static struct json_object *gc_json(const struct capture *c, const struct isolate_group *g)
{
	double period_ms = sampler__period_ns(c->sampler) / 1e6;
	struct json_object *o = json_object_new_object();
	struct isoprof_gc_pauses p = { 0 };
	uint64_t gc, off;
	char why[160];
	int err = 0;

	if (!o)
		return NULL;
	record__gc_share(c, g, &gc, &off);
	record__gc_pauses(c, g, why, sizeof(why));
	if (c->gc && !strncmp(why, "gc: ", 4) && strstr(why, " pauses, ")) {
		gc_probes__pauses(c->gc, g->pid, g->isolate, &p);
		err |= json__put(o, "pauses", json_object_new_uint64(p.obs_count));
		err |= json__put(o, "pause_total_ms", json_object_new_double(p.obs_total_ns / 1e6));
		err |= json__put(o, "pause_max_ms", json_object_new_double(p.obs_max_ns / 1e6));
	} else {
		err |= put_null(o, "pauses");
		/* "gc: pauses not measured (why)": the why */
		err |= json__put(o, "not_measured", json__text(why));
	}
	if (c->gc && record__gc_stop(c, g, why, sizeof(why))) {
		/* the whole calls: measured even where V8's pause is not */
		gc_probes__pauses(c->gc, g->pid, g->isolate, &p);
		err |= json__put(o, "stops", json_object_new_uint64(p.count));
		err |= json__put(o, "stop_total_ms", json_object_new_double(p.total_ns / 1e6));
		err |= json__put(o, "stop_max_ms", json_object_new_double(p.max_ns / 1e6));
	}
	err |= json__put(o, "cpu_ms", json_object_new_double(gc * period_ms));
	err |= json__put(o, "off_thread_cpu_ms", json_object_new_double(off * period_ms));
	if (err) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* print_placed() for --json: every placement, 0 included, for scripts to read */
static struct json_object *placed_json(const struct isolate_group *g)
{
	struct json_object *o = json_object_new_object();

	for (int k = 0; o && k < NR_FRAME_PLACEMENTS; k++) {
		if (json__put(o, frame_placement__key(k),
			      json_object_new_uint64(g->placed_samples[k]))) {
			json_object_put(o);
			return NULL;
		}
	}
	return o;
}

int record_summary__print_json(const struct capture *c, const struct isoprof_counters *cnt)
{
	struct json_object *root = json_object_new_object(), *groups = json_object_new_array();
	int err = 0;

	if (!root || !groups) {
		json_object_put(root);
		json_object_put(groups);
		return -ENOMEM;
	}
	err |= json__put(root, "type", json_object_new_string("cpu"));
	err |= json__put(root, "window_s",
			 json_object_new_double((c->window_end_ns - c->window_start_ns) / 1e9));
	err |= json__put(root, "frequency_hz", json_object_new_int64(c->env->frequency_hz));
	err |= json__put(root, "samples", json_object_new_uint64(sample_store__count(c->store)));
	err |= json__put(root, "lost", json_object_new_uint64(cnt->lost_ringbuf_full));
	err |= json__put(root, "gc_probes", json_object_new_boolean(c->gc != NULL));
	err |= json__put(root, "js_names", js_names_json(c, cnt));
	err |= json__put(root, "source_maps", source_maps_json(c));
	for (size_t i = 0; i < c->attr.ngroups && !err; i++) {
		const struct isolate_group *g = &c->attr.groups[i];
		struct json_object *o, *classes;

		if (!c->selected[i])
			continue;
		o = json_object_new_object();
		classes = json_object_new_object();
		if (!o || !classes) {
			json_object_put(o);
			json_object_put(classes);
			err = -ENOMEM;
			break;
		}
		err |= json__put(o, "pid", json_object_new_int64(g->pid));
		if (g->isolate) {
			err |= json__put(o, "isolate", json__text(g->isolate_str));
			err |= json__put(o, "script", json__text(isolate_group__script(g)));
			/* workerd's service name (services.h), null when not known */
			err |= g->info && g->info->service_name
				       ? json__put(o, "service", json__text(g->info->service_name))
				       : put_null(o, "service");
			err |= json__put(o, "version", json__text(isolate_group__version(g)));
			err |= put_version_from(o, g->info);
		} else {
			err |= put_null(o, "isolate");
		}
		err |= json__put(o, "samples", json_object_new_uint64(g->samples));
		for (int k = 0; k < NR_SAMPLE_CLASSES; k++)
			if (g->class_samples[k])
				err |= json__put(classes, sample_class__str(k),
						 json_object_new_uint64(g->class_samples[k]));
		err |= json__put(o, "classes", classes);
		if (g->isolate)
			err |= json__put(o, "gc", gc_json(c, g));
		err |= json__put(o, "jit_placed_by", placed_json(g));
		err |= json__append(groups, o);
	}
	err |= json__put(root, "isolates", groups);
	/* V8's side (--v8): its profilers' answers, files and cross-checks */
	if (c->v8)
		err |= json__put(root, "v8", record_v8__json(c));
	if (!err)
		err = json__write(stdout, root, true);
	json_object_put(root);
	return err ? (err < 0 ? err : -ENOMEM) : 0;
}

/* Bytes as a person reads them: "512 KiB", "41.3 MiB", "880 B". */
static const char *human_bytes(int64_t v, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double x = (double)v;
	size_t u = 0;

	while ((x >= 1024 || x <= -1024) && u + 1 < sizeof(units) / sizeof(units[0])) {
		x /= 1024;
		u++;
	}
	if (!u || x == (int64_t)x)
		snprintf(buf, len, "%.0f %s", x, units[u]);
	else
		snprintf(buf, len, "%.1f %s", x, units[u]);
	return buf;
}

/* Heap outcomes by bytes, largest first; ties in V8's target order. */
static int heap_cmp(const void *pa, const void *pb, void *arg)
{
	const struct v8_outcome *o = arg;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;

	if (o[a].heap.bytes != o[b].heap.bytes)
		return o[a].heap.bytes > o[b].heap.bytes ? -1 : 1;
	return a < b ? -1 : a > b;
}

/*
 * The V8 targets whose heap profile was written, largest first, and the
 * totals: a malloc()ed list (NULL and *n 0 when there is none or on ENOMEM).
 */
static size_t *heap_order(const struct capture *c, size_t *n, int64_t *bytes, int64_t *objects)
{
	size_t *order = NULL;

	*n = 0;
	*bytes = *objects = 0;
	if (!c->v8 || !c->v8_outcomes)
		return NULL;
	order = calloc(c->v8->ntargets + 1, sizeof(*order));
	for (size_t k = 0; order && k < c->v8->ntargets; k++) {
		const struct v8_outcome *o = &c->v8_outcomes[k];

		if (!o->has_heap)
			continue;
		order[(*n)++] = k;
		*bytes += o->heap.bytes;
		*objects += o->heap.objects;
	}
	if (order)
		qsort_r(order, *n, sizeof(*order), heap_cmp, c->v8_outcomes);
	return order;
}

static double share_of(int64_t part, int64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

/* One isolate (or one unmapped inspector target) of the heap summary. */
static void print_heap_line(const struct capture *c, size_t k, int64_t total)
{
	const struct v8_target *t = &c->v8->targets[k];
	const struct v8_outcome *o = &c->v8_outcomes[k];
	const struct isolate_group *g = o->group;
	const char *service = g && g->info ? g->info->service_name : NULL;
	const struct heap_summary *h = &o->heap;
	char bytes[32], top[32], where[64] = "";

	/* workerd names isolates by service: said once when it is the script's name */
	if (service && !strcmp(service, isolate_group__script(g)))
		service = NULL;
	if (g)
		fprintf(stderr, "  isolate %s %s%s%s version %s (pid %u): ", g->isolate_str,
			record__esc(isolate_group__script(g)), service ? ", service " : "",
			service ? record__esc(service) : "", record__esc(isolate_group__version(g)),
			g->pid);
	else
		fprintf(stderr, "  inspector target '%s' (pid %d), no isolate: ",
			record__esc(t->id), t->pid);
	fprintf(stderr, "%s %.1f%%, %" PRId64 " %sobject%s",
		human_bytes(h->bytes, bytes, sizeof(bytes)), share_of(h->bytes, total), h->objects,
		o->own_path ? "" : "sampled ", h->objects == 1 ? "" : "s");
	if (!h->top_name) {
		fputc('\n', stderr);
		return;
	}
	if (h->top_file[0] && h->top_line)
		snprintf(where, sizeof(where), " (%s:%" PRId64 ")", record__esc(h->top_file),
			 h->top_line);
	else if (h->top_file[0])
		snprintf(where, sizeof(where), " (%s)", record__esc(h->top_file));
	fprintf(stderr, "; top %s%s: %s, %.1f%% of its bytes\n", record__esc(h->top_name), where,
		human_bytes(h->top_bytes, top, sizeof(top)), share_of(h->top_bytes, h->bytes));
}

void record_summary__print_heap(const struct capture *c)
{
	int64_t bytes, objects;
	size_t n, *order = heap_order(c, &n, &bytes, &objects);
	char total[32], interval[32] = "an unknown interval";
	int64_t every = n ? c->v8_outcomes[order[0]].heap.interval : 0;

	if (!n) {
		free(order);
		return;
	}
	if (every)
		human_bytes(every, interval, sizeof(interval));
	/*
	 * What V8 reports (proto/heapprofile.h): a node's bytes are V8's
	 * estimate, each sample scaled by its size against the interval; the
	 * objects are the samples themselves.  v8capture.c asks V8 to keep the
	 * samples of objects the GC has collected since (node 20's V8 11.3
	 * and workerd's do: a 3 s window of node allocating 64 KiB arrays
	 * reports 7 GiB), so this is what was allocated, not what is alive.
	 */
	if (c->heap_written)
		fprintf(stderr,
			"isoprof: heap: %zu profile%s over %.2f s, sampled where the runtime samples "
			"(JS heap: V8's sampling heap profiler, a sample every %s on average; "
			"native heap: the malloc's own sampler): bytes and objects allocated in the "
			"window, estimated from the samples (not retained memory); largest first\n",
			n, n > 1 ? "s" : "", (c->window_end_ns - c->window_start_ns) / 1e9, interval);
	else
		fprintf(stderr,
			"isoprof: heap: %zu profile%s over %.2f s from V8's sampling heap profiler, "
			"a sample every %s on average: bytes allocated in the window as V8 "
			"estimates them from its samples (objects collected since included), and "
			"the objects it sampled; largest first\n",
			n, n > 1 ? "s" : "", (c->window_end_ns - c->window_start_ns) / 1e9,
			interval);
	for (size_t i = 0; i < n; i++)
		print_heap_line(c, order[i], bytes);
	fprintf(stderr, "  total: %s, %" PRId64 " %sobjects\n",
		human_bytes(bytes, total, sizeof(total)), objects, c->heap_written ? "" : "sampled ");
	free(order);
}

/* JSON text, or null for NULL. */
static int put_text_or_null(struct json_object *o, const char *key, const char *s)
{
	return s ? json__put(o, key, json__text(s)) : put_null(o, key);
}

static struct json_object *heap_top_json(const struct heap_summary *h)
{
	struct json_object *o = json_object_new_object();
	int err = 0;

	if (!o)
		return NULL;
	err |= json__put(o, "name", json__text(h->top_name));
	err |= json__put(o, "file", json__text(h->top_file));
	err |= h->top_line ? json__put(o, "line", json_object_new_int64(h->top_line))
			   : put_null(o, "line");
	err |= json__put(o, "bytes", json_object_new_int64(h->top_bytes));
	err |= json__put(o, "share",
			 json_object_new_double(share_of(h->top_bytes, h->bytes) / 100));
	if (err) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static struct json_object *heap_isolate_json(const struct capture *c, size_t k, int64_t total)
{
	const struct v8_target *t = &c->v8->targets[k];
	const struct v8_outcome *out = &c->v8_outcomes[k];
	const struct isolate_group *g = out->group;
	struct json_object *o = json_object_new_object();
	int err = 0;

	if (!o)
		return NULL;
	err |= json__put(o, "pid", json_object_new_int64(t->pid));
	err |= put_text_or_null(o, "isolate", g ? g->isolate_str : NULL);
	err |= put_text_or_null(o, "script", g ? isolate_group__script(g) : NULL);
	err |= put_text_or_null(o, "service", g && g->info ? g->info->service_name : NULL);
	err |= put_text_or_null(o, "version", g ? isolate_group__version(g) : NULL);
	err |= put_version_from(o, g ? g->info : NULL);
	err |= json__put(o, "target", json__text(t->id));
	err |= json__put(o, "bytes", json_object_new_int64(out->heap.bytes));
	err |= json__put(o, "sampled_objects", json_object_new_int64(out->heap.objects));
	err |= json__put(o, "share",
			 json_object_new_double(share_of(out->heap.bytes, total) / 100));
	err |= out->heap.top_name ? json__put(o, "top", heap_top_json(&out->heap))
				  : put_null(o, "top");
	/* file: the heap profile to read (isoprof's own when written), v8_file: V8's */
	err |= json__put(o, "file", json__text(out->own_path ? out->own_path : out->path));
	err |= json__put(o, "v8_file", json__text(out->path));
	err |= json__put(o, "from", json__text(out->own_path ? "isoprof" : "v8"));
	err |= put_text_or_null(o, "raw_file", out->raw_path);
	if (err) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

int record_summary__print_heap_json(const struct capture *c)
{
	struct json_object *root = json_object_new_object(), *list = json_object_new_array();
	struct json_object *totals = json_object_new_object();
	int64_t bytes, objects;
	size_t n, *order = heap_order(c, &n, &bytes, &objects);
	int err = 0;

	if (!root || !list || !totals || (!order && c->v8 && c->v8_outcomes)) {
		json_object_put(root);
		json_object_put(list);
		json_object_put(totals);
		free(order);
		return -ENOMEM;
	}
	err |= json__put(root, "type", json_object_new_string("heap"));
	err |= json__put(root, "window_s",
			 json_object_new_double((c->window_end_ns - c->window_start_ns) / 1e9));
	err |= n && c->v8_outcomes[order[0]].heap.interval
		       ? json__put(root, "sampling_interval_bytes",
				   json_object_new_int64(c->v8_outcomes[order[0]].heap.interval))
		       : put_null(root, "sampling_interval_bytes");
	err |= json__put(totals, "bytes", json_object_new_int64(bytes));
	err |= json__put(totals, "sampled_objects", json_object_new_int64(objects));
	err |= json__put(root, "total", totals);
	for (size_t i = 0; i < n && !err; i++)
		err |= json__append(list, heap_isolate_json(c, order[i], bytes));
	err |= json__put(root, "isolates", list);
	if (c->v8)
		err |= json__put(root, "v8", record_v8__json(c));
	free(order);
	if (!err)
		err = json__write(stdout, root, true);
	json_object_put(root);
	return err ? (err < 0 ? err : -ENOMEM) : 0;
}
