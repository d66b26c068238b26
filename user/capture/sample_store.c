// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* sample_store: every sample of a capture, stacks and names interned; see sample_store.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/hash.h"
#include "lib/index_table.h"
#include "user/capture/sample_store.h"

/*
 * A stack's words in st->ips: nkernel + nuser addresses, then, only when
 * nfunctions > 0, nuser function words (zero from nfunctions on).  Stacks
 * without functions, all of them without a V8 layout, cost nothing more.
 */
struct stack_entry {
	uint64_t ips_offset;	/* into st->ips */
	uint32_t pid;
	uint16_t nkernel;
	uint16_t nuser;
	uint32_t hash;		/* also in the index; here it saves a cache miss per probe */
	uint16_t nfunctions;	/* up to the last non-zero function word */
	uint16_t pad;
};

struct sample_store {
	struct stored_sample *samples;
	size_t nsamples, samples_cap;

	__u64 *ips;
	size_t nips, ips_cap;

	struct stack_entry *stacks;
	size_t nstacks, stacks_cap;
	struct index_table stack_index;

	char (*comms)[ISOPROF_COMM_LEN + 1];
	size_t ncomms, comms_cap;
	struct index_table comm_index;
};

/* What a stack is interned by: sample_store__add() hashes it once. */
struct stack_key {
	uint32_t pid;
	const __u64 *k, *u, *f;
	size_t nk, nu, nf;	/* nf <= nu, and f[nf - 1] != 0 */
};

static uint32_t stack_hash(const struct stack_key *key)
{
	/* nk, nu <= 127 and nf <= 64: each has its own bits */
	uint64_t h = hash__word(HASH_SEED, ((uint64_t)key->pid << 32) | (key->nf << 24) |
						   (key->nk << 16) | key->nu);

	for (size_t i = 0; i < key->nk; i++)
		h = hash__word(h, key->k[i]);
	for (size_t i = 0; i < key->nu; i++)
		h = hash__word(h, key->u[i]);
	for (size_t i = 0; i < key->nf; i++)
		h = hash__word(h, key->f[i]);
	return hash__fold32(h);
}

struct sample_store *sample_store__new(void)
{
	struct sample_store *st = calloc(1, sizeof(*st));

	if (!st)
		errno = ENOMEM;
	return st;
}

void sample_store__free(struct sample_store *st)
{
	if (!st)
		return;
	free(st->samples);
	free(st->ips);
	free(st->stacks);
	index_table__release(&st->stack_index);
	free(st->comms);
	index_table__release(&st->comm_index);
	free(st);
}

/*
 * Every sample is interned (the sampling hot path): probe inline, with the
 * comparison inlined, and make room only for a new entry.  The probe reads
 * the slot's index and then the entry, whose hash settles most mismatches:
 * the index's own hash array would be one more cache miss per sample.
 */
static bool stack_is(const struct sample_store *st, uint32_t index, uint32_t h,
		     const struct stack_key *key)
{
	const struct stack_entry *e = &st->stacks[index];
	const __u64 *ips = st->ips + e->ips_offset;

	return e->hash == h && e->pid == key->pid && e->nkernel == key->nk &&
	       e->nuser == key->nu && e->nfunctions == key->nf &&
	       !memcmp(ips, key->k, key->nk * sizeof(*key->k)) &&
	       !memcmp(ips + key->nk, key->u, key->nu * sizeof(*key->u)) &&
	       !memcmp(ips + key->nk + key->nu, key->f, key->nf * sizeof(*key->f));
}

/* The stack's id, or -1 and *slot: the empty slot it belongs in. */
static inline long find_stack(const struct sample_store *st, uint32_t h,
			      const struct stack_key *key, size_t *slot)
{
	const struct index_table *t = &st->stack_index;
	size_t k;

	if (!t->mask)
		return -1;
	for (k = index_table__first(t, h); t->idx1[k]; k = index_table__next(t, k))
		if (stack_is(st, t->idx1[k] - 1, h, key))
			return (long)t->idx1[k] - 1;
	*slot = k;
	return -1;
}

static int intern_stack(struct sample_store *st, const struct stack_key *key, uint32_t *id)
{
	uint32_t h = stack_hash(key);
	size_t words = key->nk + key->nu + (key->nf ? key->nu : 0);
	struct stack_entry *e;
	size_t slot = 0, mask;
	__u64 *out;
	long i;

	i = find_stack(st, h, key, &slot);
	if (i >= 0) {
		*id = (uint32_t)i;
		return 0;
	}
	mask = st->stack_index.mask;
	if (index_table__reserve(&st->stack_index) ||
	    array_grow(&st->stacks, &st->stacks_cap, st->nstacks + 1) ||
	    array_grow(&st->ips, &st->ips_cap, st->nips + words))
		return -ENOMEM;
	if (st->stack_index.mask != mask)
		find_stack(st, h, key, &slot);
	e = &st->stacks[st->nstacks];
	e->ips_offset = st->nips;
	e->pid = key->pid;
	e->nkernel = key->nk;
	e->nuser = key->nu;
	e->hash = h;
	e->nfunctions = key->nf;
	e->pad = 0;
	out = st->ips + st->nips;
	memcpy(out, key->k, key->nk * sizeof(*key->k));
	memcpy(out + key->nk, key->u, key->nu * sizeof(*key->u));
	if (key->nf) {
		out += key->nk + key->nu;
		memcpy(out, key->f, key->nf * sizeof(*key->f));
		memset(out + key->nf, 0, (key->nu - key->nf) * sizeof(*out));
	}
	st->nips += words;
	index_table__set(&st->stack_index, slot, h, (uint32_t)st->nstacks);
	*id = st->nstacks++;
	return 0;
}

/* The name's id, or -1 and *slot: the empty slot it belongs in. */
static inline long find_comm(const struct sample_store *st, uint32_t h, const char *comm,
			     size_t *slot)
{
	const struct index_table *t = &st->comm_index;
	size_t k;

	if (!t->mask)
		return -1;
	for (k = index_table__first(t, h); t->idx1[k]; k = index_table__next(t, k))
		if (t->hash[k] == h && !strcmp(st->comms[t->idx1[k] - 1], comm))
			return (long)t->idx1[k] - 1;
	*slot = k;
	return -1;
}

static int intern_comm(struct sample_store *st, const char *raw, uint32_t *id)
{
	char comm[ISOPROF_COMM_LEN + 1];
	size_t slot = 0, mask;
	uint32_t h;
	long i;

	memcpy(comm, raw, ISOPROF_COMM_LEN);
	comm[ISOPROF_COMM_LEN] = '\0';
	h = hash__fold32(hash__str(HASH_SEED, comm));
	i = find_comm(st, h, comm, &slot);
	if (i >= 0) {
		*id = (uint32_t)i;
		return 0;
	}
	mask = st->comm_index.mask;
	if (index_table__reserve(&st->comm_index) ||
	    array_grow(&st->comms, &st->comms_cap, st->ncomms + 1))
		return -ENOMEM;
	if (st->comm_index.mask != mask)
		find_comm(st, h, comm, &slot);
	memcpy(st->comms[st->ncomms], comm, sizeof(comm));
	index_table__set(&st->comm_index, slot, h, (uint32_t)st->ncomms);
	*id = st->ncomms++;
	return 0;
}

static size_t depth(__s32 bytes)
{
	if (bytes <= 0)
		return 0;
	if ((size_t)bytes > ISOPROF_MAX_STACK_DEPTH * sizeof(__u64))
		return ISOPROF_MAX_STACK_DEPTH;
	return bytes / sizeof(__u64);
}

/* Function words up to the last non-zero one among the walked frames. */
static size_t functions(const struct isoprof_sample *s, size_t nuser)
{
	size_t n = s->user_walked;

	if (n > ISOPROF_MAX_JS_WALK)
		n = ISOPROF_MAX_JS_WALK;
	if (n > nuser)
		n = nuser;
	while (n && !s->user_function[n - 1])
		n--;
	return n;
}

int sample_store__add(struct sample_store *st, const struct isoprof_sample *s)
{
	struct stack_key key = {
		.pid = s->pid,
		.k = s->kernel_stack,
		.nk = depth(s->kernel_stack_bytes),
		.u = s->user_stack,
		.nu = depth(s->user_stack_bytes),
		.f = s->user_function,
	};
	struct stored_sample *out;
	uint32_t stack_id, comm_id;
	int err;

	key.nf = functions(s, key.nu);
	if (array_grow(&st->samples, &st->samples_cap, st->nsamples + 1))
		return -ENOMEM;
	err = intern_stack(st, &key, &stack_id);
	if (!err)
		err = intern_comm(st, s->comm, &comm_id);
	if (err)
		return err;
	out = &st->samples[st->nsamples++];
	out->time_ns = s->time_ns;
	out->isolate = s->isolate;
	out->pid = s->pid;
	out->tid = s->tid;
	out->cpu = s->cpu;
	out->flags = s->flags;
	out->alloc_size = s->alloc_size;
	out->pad = 0;
	out->stack_id = stack_id;
	out->comm_id = comm_id;
	return 0;
}

size_t sample_store__count(const struct sample_store *st)
{
	return st->nsamples;
}

const struct stored_sample *sample_store__samples(const struct sample_store *st)
{
	return st->samples;
}

size_t sample_store__stack_count(const struct sample_store *st)
{
	return st->nstacks;
}

void sample_store__stack(const struct sample_store *st, uint32_t id, struct stored_stack *out)
{
	const struct stack_entry *e = &st->stacks[id];

	out->pid = e->pid;
	out->nkernel = e->nkernel;
	out->nuser = e->nuser;
	out->ips = st->ips + e->ips_offset;
	out->functions = e->nfunctions ? out->ips + e->nkernel + e->nuser : NULL;
}

const char *sample_store__comm(const struct sample_store *st, uint32_t id)
{
	return st->comms[id];
}
