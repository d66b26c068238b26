// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "user/capture/sample_store.h"

struct stack_entry {
	uint64_t ips_offset;	/* into st->ips */
	uint32_t pid;
	uint16_t nkernel;
	uint16_t nuser;
	uint64_t hash;
};

struct sample_store {
	struct stored_sample *samples;
	size_t nsamples, samples_cap;

	__u64 *ips;
	size_t nips, ips_cap;

	struct stack_entry *stacks;
	size_t nstacks, stacks_cap;
	uint32_t *stack_slots;	/* open addressing: stack id + 1, 0 = empty */
	size_t stack_slots_cap;	/* power of two */

	char (*comms)[ISOPROF_COMM_LEN + 1];
	size_t ncomms, comms_cap;
	uint32_t *comm_slots;
	size_t comm_slots_cap;
};

static int grow(void **buf, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 64;
	void *p;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*buf, ncap * elem);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = ncap;
	return 0;
}

static uint64_t mix64(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 31);
}

static uint64_t hash_stack(uint32_t pid, const __u64 *k, size_t nk, const __u64 *u, size_t nu)
{
	uint64_t h = mix64(0x51ed27u, ((uint64_t)pid << 32) | (nk << 16) | nu);

	for (size_t i = 0; i < nk; i++)
		h = mix64(h, k[i]);
	for (size_t i = 0; i < nu; i++)
		h = mix64(h, u[i]);
	return h;
}

struct sample_store *sample_store__new(void)
{
	struct sample_store *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->stack_slots_cap = 1024;
	st->stack_slots = calloc(st->stack_slots_cap, sizeof(*st->stack_slots));
	st->comm_slots_cap = 64;
	st->comm_slots = calloc(st->comm_slots_cap, sizeof(*st->comm_slots));
	if (!st->stack_slots || !st->comm_slots) {
		sample_store__free(st);
		errno = ENOMEM;
		return NULL;
	}
	return st;
}

void sample_store__free(struct sample_store *st)
{
	if (!st)
		return;
	free(st->samples);
	free(st->ips);
	free(st->stacks);
	free(st->stack_slots);
	free(st->comms);
	free(st->comm_slots);
	free(st);
}

static int rehash_stacks(struct sample_store *st)
{
	size_t cap = st->stack_slots_cap * 2;
	uint32_t *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t id = 0; id < st->nstacks; id++) {
		size_t i = st->stacks[id].hash & (cap - 1);

		while (slots[i])
			i = (i + 1) & (cap - 1);
		slots[i] = id + 1;
	}
	free(st->stack_slots);
	st->stack_slots = slots;
	st->stack_slots_cap = cap;
	return 0;
}

static bool stack_equal(const struct sample_store *st, const struct stack_entry *e, uint32_t pid,
			const __u64 *k, size_t nk, const __u64 *u, size_t nu)
{
	const __u64 *ips = st->ips + e->ips_offset;

	return e->pid == pid && e->nkernel == nk && e->nuser == nu &&
	       !memcmp(ips, k, nk * sizeof(*k)) && !memcmp(ips + nk, u, nu * sizeof(*u));
}

static int intern_stack(struct sample_store *st, uint32_t pid, const __u64 *k, size_t nk,
			const __u64 *u, size_t nu, uint32_t *id)
{
	uint64_t h = hash_stack(pid, k, nk, u, nu);
	size_t mask = st->stack_slots_cap - 1;
	struct stack_entry *e;
	size_t i = h & mask;
	int err;

	for (; st->stack_slots[i]; i = (i + 1) & mask) {
		e = &st->stacks[st->stack_slots[i] - 1];
		if (e->hash == h && stack_equal(st, e, pid, k, nk, u, nu)) {
			*id = st->stack_slots[i] - 1;
			return 0;
		}
	}
	if (grow((void **)&st->stacks, &st->stacks_cap, st->nstacks + 1, sizeof(*st->stacks)) ||
	    grow((void **)&st->ips, &st->ips_cap, st->nips + nk + nu, sizeof(*st->ips)))
		return -ENOMEM;
	e = &st->stacks[st->nstacks];
	e->ips_offset = st->nips;
	e->pid = pid;
	e->nkernel = nk;
	e->nuser = nu;
	e->hash = h;
	memcpy(st->ips + st->nips, k, nk * sizeof(*k));
	memcpy(st->ips + st->nips + nk, u, nu * sizeof(*u));
	st->nips += nk + nu;
	st->stack_slots[i] = ++st->nstacks;
	*id = st->nstacks - 1;
	/* keep the load factor under one half */
	if (st->nstacks * 2 > st->stack_slots_cap) {
		err = rehash_stacks(st);
		if (err)
			return err;
	}
	return 0;
}

static uint64_t hash_comm(const char *comm)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < ISOPROF_COMM_LEN && comm[i]; i++)
		h = (h ^ (unsigned char)comm[i]) * 1099511628211ull;
	return h;
}

static int intern_comm(struct sample_store *st, const char *raw, uint32_t *id)
{
	char comm[ISOPROF_COMM_LEN + 1];
	size_t mask, i;

	memcpy(comm, raw, ISOPROF_COMM_LEN);
	comm[ISOPROF_COMM_LEN] = '\0';
	if (st->ncomms * 2 >= st->comm_slots_cap) {
		size_t cap = st->comm_slots_cap * 2;
		uint32_t *slots = calloc(cap, sizeof(*slots));

		if (!slots)
			return -ENOMEM;
		for (size_t c = 0; c < st->ncomms; c++) {
			i = hash_comm(st->comms[c]) & (cap - 1);
			while (slots[i])
				i = (i + 1) & (cap - 1);
			slots[i] = c + 1;
		}
		free(st->comm_slots);
		st->comm_slots = slots;
		st->comm_slots_cap = cap;
	}
	mask = st->comm_slots_cap - 1;
	for (i = hash_comm(comm) & mask; st->comm_slots[i]; i = (i + 1) & mask) {
		if (!strcmp(st->comms[st->comm_slots[i] - 1], comm)) {
			*id = st->comm_slots[i] - 1;
			return 0;
		}
	}
	if (grow((void **)&st->comms, &st->comms_cap, st->ncomms + 1, sizeof(*st->comms)))
		return -ENOMEM;
	memcpy(st->comms[st->ncomms], comm, sizeof(comm));
	st->comm_slots[i] = ++st->ncomms;
	*id = st->ncomms - 1;
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

int sample_store__add(struct sample_store *st, const struct isoprof_sample *s)
{
	struct stored_sample *out;
	uint32_t stack_id, comm_id;
	int err;

	if (grow((void **)&st->samples, &st->samples_cap, st->nsamples + 1, sizeof(*st->samples)))
		return -ENOMEM;
	err = intern_stack(st, s->pid, s->kernel_stack, depth(s->kernel_stack_bytes),
			   s->user_stack, depth(s->user_stack_bytes), &stack_id);
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
}

const char *sample_store__comm(const struct sample_store *st, uint32_t id)
{
	return st->comms[id];
}
