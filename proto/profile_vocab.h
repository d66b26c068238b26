/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * profile_vocab: the words isoprof's profiles carry, spelled once.  Every
 * writer (cpu_profile, record_v8, v8profile) and every reader (top,
 * crosscheck, flame, the web page's pprof.js by the same spelling) uses
 * these, so a label or class renamed here is renamed everywhere.
 * docs/isolates-and-classes.md describes what they mean.
 */
#ifndef ISOPROF_PROTO_PROFILE_VOCAB_H
#define ISOPROF_PROTO_PROFILE_VOCAB_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* Sample labels. */
#define LABEL_PID "pid"
#define LABEL_TID "tid"
#define LABEL_THREAD "thread"		/* the thread's name (comm) */
#define LABEL_CLASS "class"		/* a sample_class name */
#define LABEL_ISOLATE "isolate"		/* 0x-prefixed isolate address */
#define LABEL_SCRIPT "script"
#define LABEL_VERSION "version"

/* Sample types and units. */
#define SAMPLE_TYPE_SAMPLES "samples"
#define SAMPLE_TYPE_CPU "cpu"
#define UNIT_COUNT "count"
#define UNIT_NANOSECONDS "nanoseconds"
/* Heap profiles, as Go's pprof names allocation samples. */
#define SAMPLE_TYPE_ALLOC_OBJECTS "alloc_objects"
#define SAMPLE_TYPE_ALLOC_SPACE "alloc_space"
#define PERIOD_TYPE_SPACE "space"
#define UNIT_BYTES "bytes"

/*
 * Synthetic frames, named as V8's profiler names them, so that the two
 * sides of a cross-check line up: the root of a .cpuprofile, and the roots
 * isoprof puts above samples that have no JS frame to stand under.
 */
#define FRAME_NAME_ROOT "(root)"
#define FRAME_NAME_GC "(garbage collector)"
#define FRAME_NAME_IDLE "(idle)"
#define FRAME_NAME_PROGRAM "(program)"
/* V8's name for a function without one; pprof shows it as the name. */
#define FRAME_NAME_ANONYMOUS "(anonymous)"

/* Where a sample's cost goes (docs/isolates-and-classes.md); the class label's values. */
enum sample_class {
	CLASS_JS = 0,
	CLASS_V8_BUILTIN,
	CLASS_GC,
	CLASS_V8_RUNTIME,
	CLASS_RUNTIME_NATIVE,
	CLASS_KERNEL,
	CLASS_IDLE,
	CLASS_NATIVE_ALLOC,	/* heap profiles: an allocation the malloc sampled (docs/heap.md) */
	NR_SAMPLE_CLASSES,
};

static const char *const sample_class_names[NR_SAMPLE_CLASSES] = {
	[CLASS_JS] = "js",
	[CLASS_V8_BUILTIN] = "v8-builtin",
	[CLASS_GC] = "gc",
	[CLASS_V8_RUNTIME] = "v8-runtime",
	[CLASS_RUNTIME_NATIVE] = "runtime-native",
	[CLASS_KERNEL] = "kernel",
	[CLASS_IDLE] = "idle",
	[CLASS_NATIVE_ALLOC] = "native-alloc",
};

/* "js", "v8-builtin", "gc", "v8-runtime", "runtime-native", "kernel", "idle", "native-alloc" */
static inline const char *sample_class__str(enum sample_class cls)
{
	return (unsigned)cls < NR_SAMPLE_CLASSES ? sample_class_names[cls] : "unknown";
}

/* The class a label value names: true and *cls, or false for none. */
static inline bool sample_class__parse(const char *s, enum sample_class *cls)
{
	for (size_t i = 0; s && i < NR_SAMPLE_CLASSES; i++) {
		if (!strcmp(s, sample_class_names[i])) {
			*cls = (enum sample_class)i;
			return true;
		}
	}
	return false;
}

/*
 * A class only profiles converted from V8's own profiler carry: V8's
 * "(program)", time outside JS that isoprof splits into v8-builtin,
 * v8-runtime, runtime-native and kernel.
 */
#define CLASS_NAME_V8_PROGRAM "program"

/*
 * Profile comments on GC (docs/attribution.md, "GC"): an isolate's
 * stop-the-world pauses during the window as V8 counts them (its
 * observable pause), count then total and longest in milliseconds with one
 * decimal; or why they were not measured.  Then the whole
 * Heap::CollectGarbage calls, the time the isolate's thread lost.
 */
#define COMMENT_GC_PAUSES "gc: %llu pauses, %.1f ms total, %.1f ms max"
#define COMMENT_GC_OFF "gc: pauses not measured (%s)"
#define COMMENT_GC_STOP "gc stop: %.1f ms total, %.1f ms max"

/* The file name part of samples outside any isolate (--out-dir). */
#define NO_ISOLATE_NAME "no-isolate"

#endif /* ISOPROF_PROTO_PROFILE_VOCAB_H */
