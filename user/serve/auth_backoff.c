// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * auth_backoff: per-client delays after failed bearer tokens; see
 * auth_backoff.h.  A linear table: it holds a few hundred keys and is
 * looked at once per request that carries a token.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/serve/auth_backoff.h"

struct backoff_entry {
	bool used;
	char key[AUTH_BACKOFF_KEY_MAX + 1];
	unsigned int fails;
	uint64_t last_ms;		/* last failure */
	uint64_t until_ms;		/* blocked before this */
};

struct auth_backoff {
	pthread_mutex_t lock;
	unsigned int n;
	struct backoff_entry *e;
};

struct auth_backoff *auth_backoff__new(unsigned int entries)
{
	struct auth_backoff *b;

	if (!entries) {
		errno = EINVAL;
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->e = calloc(entries, sizeof(*b->e));
	if (!b->e) {
		free(b);
		errno = ENOMEM;
		return NULL;
	}
	b->n = entries;
	pthread_mutex_init(&b->lock, NULL);
	return b;
}

void auth_backoff__free(struct auth_backoff *b)
{
	if (!b)
		return;
	pthread_mutex_destroy(&b->lock);
	free(b->e);
	free(b);
}

static bool expired(const struct backoff_entry *e, uint64_t now_ms)
{
	return now_ms > e->last_ms && now_ms - e->last_ms > AUTH_BACKOFF_FORGET_S * 1000ULL &&
	       now_ms >= e->until_ms;
}

/* The key's entry, or NULL; with create, a free (or the oldest) one made its. */
static struct backoff_entry *find(struct auth_backoff *b, const char *key, uint64_t now_ms,
				  bool create)
{
	struct backoff_entry *free_e = NULL, *oldest = NULL;
	char k[AUTH_BACKOFF_KEY_MAX + 1];

	snprintf(k, sizeof(k), "%s", key ? key : "");
	for (unsigned int i = 0; i < b->n; i++) {
		struct backoff_entry *e = &b->e[i];

		if (e->used && expired(e, now_ms))
			e->used = false;
		if (!e->used) {
			if (!free_e)
				free_e = e;
			continue;
		}
		if (!strcmp(e->key, k))
			return e;
		if (!oldest || e->last_ms < oldest->last_ms)
			oldest = e;
	}
	if (!create)
		return NULL;
	if (!free_e)
		free_e = oldest;
	if (!free_e)
		return NULL;
	memset(free_e, 0, sizeof(*free_e));
	free_e->used = true;
	memcpy(free_e->key, k, sizeof(k));
	return free_e;
}

unsigned int auth_backoff__check(struct auth_backoff *b, const char *key, uint64_t now_ms)
{
	struct backoff_entry *e;
	unsigned int s = 0;

	pthread_mutex_lock(&b->lock);
	e = find(b, key, now_ms, false);
	if (e && e->until_ms > now_ms)
		s = (unsigned int)((e->until_ms - now_ms + 999) / 1000);
	pthread_mutex_unlock(&b->lock);
	return s;
}

void auth_backoff__fail(struct auth_backoff *b, const char *key, uint64_t now_ms)
{
	struct backoff_entry *e;

	pthread_mutex_lock(&b->lock);
	e = find(b, key, now_ms, true);
	if (!e) {
		pthread_mutex_unlock(&b->lock);
		return;
	}
	e->fails++;
	e->last_ms = now_ms;
	if (e->fails >= AUTH_BACKOFF_FREE) {
		unsigned int step = e->fails - AUTH_BACKOFF_FREE;
		uint64_t ms = 1000ULL << (step > 9 ? 9 : step);

		if (ms > AUTH_BACKOFF_MAX_S * 1000ULL)
			ms = AUTH_BACKOFF_MAX_S * 1000ULL;
		e->until_ms = now_ms + ms;
	}
	pthread_mutex_unlock(&b->lock);
}

void auth_backoff__success(struct auth_backoff *b, const char *key)
{
	struct backoff_entry *e;

	pthread_mutex_lock(&b->lock);
	e = find(b, key, 0, false);
	if (e)
		memset(e, 0, sizeof(*e));
	pthread_mutex_unlock(&b->lock);
}
