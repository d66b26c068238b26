/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * sample_store: every sample of a capture, kept compactly.
 *
 * Each sample keeps its own time, pid, tid, cpu, isolate and thread name,
 * so later stages can split by isolate or by time; stacks (kernel + user
 * addresses and the user frames' V8 functions, per process) and thread
 * names are interned, so memory grows with distinct stacks, not with
 * samples.  Adding is amortized O(depth).
 *
 * Errors: -ENOMEM.  Pointers returned stay valid until the next add.
 */
#ifndef ISOPROF_CAPTURE_SAMPLE_STORE_H
#define ISOPROF_CAPTURE_SAMPLE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/isoprof.h"

struct stored_sample {
	uint64_t time_ns;	/* CLOCK_MONOTONIC */
	uint64_t isolate;
	uint32_t pid;
	uint32_t tid;
	uint32_t cpu;
	uint32_t flags;		/* ISOPROF_SAMPLE_* */
	uint32_t stack_id;
	uint32_t comm_id;
	uint32_t alloc_size;	/* ISOPROF_SAMPLE_ALLOC: bytes asked for; else 0 */
	uint32_t pad;
};

struct stored_stack {
	uint32_t pid;
	uint16_t nkernel;	/* kernel frames, leaf first */
	uint16_t nuser;		/* then user frames, leaf first */
	const __u64 *ips;	/* nkernel + nuser addresses */
	/*
	 * NULL when the sample's isoprof_sample.user_function had no non-zero
	 * entry; else nuser words, functions[i] for the frame at ips[nkernel + i]
	 * (0 past user_walked).  Part of the stack's identity: the same
	 * addresses with other functions are another stack.
	 */
	const __u64 *functions;
};

struct sample_store;

struct sample_store *sample_store__new(void);
void sample_store__free(struct sample_store *st);

int sample_store__add(struct sample_store *st, const struct isoprof_sample *s);

size_t sample_store__count(const struct sample_store *st);
const struct stored_sample *sample_store__samples(const struct sample_store *st);
size_t sample_store__stack_count(const struct sample_store *st);
void sample_store__stack(const struct sample_store *st, uint32_t id, struct stored_stack *out);
const char *sample_store__comm(const struct sample_store *st, uint32_t id);

#endif
