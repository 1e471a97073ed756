/* pathtab.c - paths and the packages that list them (see pathtab.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "pathtab.h"

#define NONE UINT32_MAX

struct pathtab_slot {
	uint32_t hash;
	uint32_t path;		/* arena offset; 0 = empty slot */
	uint32_t owner;		/* arena offset of the first owner's key;
				 * 0: its owners were dropped */
	uint32_t more;		/* index into the chain, or NONE */
};

struct pathtab_more {
	uint32_t owner;
	uint32_t next;
};

void unpkg_pathtab_destroy(struct unpkg_pathtab *t)
{
	free(t->arena);
	free(t->slots);
	free(t->more);
	memset(t, 0, sizeof(*t));
}

static uint32_t hash_path(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

/* Copy a string into the arena; returns its offset or 0 on failure.
 * Offset 0 is a NUL of its own: it stands for an empty slot. */
static uint32_t arena_add(struct unpkg_pathtab *t, const char *s, size_t n,
			  struct unpkg_err *err)
{
	size_t start = t->alen != 0 ? t->alen : 1;
	uint32_t off;
	char *na;

	if (start + n + 1 > UINT32_MAX) {
		unpkg_err_set(err, UNPKG_ERR_NOMEM,
			      "file lists too large to index");
		return 0;
	}
	na = unpkg_grow(t->arena, &t->acap, start + n + 1, 1, 1 << 20);
	if (na == NULL) {
		unpkg_err_nomem(err);
		return 0;
	}
	t->arena = na;
	t->arena[0] = '\0';
	off = (uint32_t)start;
	memcpy(t->arena + off, s, n);
	t->arena[off + n] = '\0';
	t->alen = start + n + 1;
	return off;
}

static int rehash(struct unpkg_pathtab *t, size_t ncap,
		  struct unpkg_err *err)
{
	struct pathtab_slot *ns;
	size_t i;

	ns = calloc(ncap, sizeof(*ns));
	if (ns == NULL)
		return unpkg_err_nomem(err);
	for (i = 0; i < t->cap; i++) {
		size_t j;

		if (t->slots[i].path == 0)
			continue;
		j = t->slots[i].hash & (ncap - 1);
		while (ns[j].path != 0)
			j = (j + 1) & (ncap - 1);
		ns[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = ns;
	t->cap = ncap;
	return 0;
}

static struct pathtab_slot *lookup(const struct unpkg_pathtab *t,
				   const char *path, size_t n, uint32_t h)
{
	size_t j;

	if (t->cap == 0)
		return NULL;
	for (j = h & (t->cap - 1); t->slots[j].path != 0;
	     j = (j + 1) & (t->cap - 1)) {
		const struct pathtab_slot *s = &t->slots[j];

		if (s->hash == h && strncmp(t->arena + s->path, path, n) == 0 &&
		    t->arena[s->path + n] == '\0')
			return &t->slots[j];
	}
	return NULL;
}

uint32_t unpkg_pathtab_owner(struct unpkg_pathtab *t, const char *key,
			     struct unpkg_err *err)
{
	return arena_add(t, key, strlen(key), err);
}

int unpkg_pathtab_add(struct unpkg_pathtab *t, const char *path, size_t n,
		      uint32_t owner, struct unpkg_err *err)
{
	uint32_t h = hash_path(path, n);
	struct pathtab_slot *s = lookup(t, path, n, h);
	struct pathtab_more *nm;
	size_t j;

	if (s != NULL && s->owner == 0) {
		s->owner = owner;
		return 0;
	}
	if (s != NULL) {
		/* A list naming a path twice adds nothing. */
		if (s->owner == owner ||
		    (s->more != NONE && t->more[s->more].owner == owner))
			return 0;
		if (t->mlen >= NONE)
			return unpkg_err_nomem(err);
		nm = unpkg_grow(t->more, &t->mcap, t->mlen + 1,
				sizeof(*t->more), 1024);
		if (nm == NULL)
			return unpkg_err_nomem(err);
		t->more = nm;
		t->more[t->mlen].owner = owner;
		t->more[t->mlen].next = s->more;
		s->more = (uint32_t)t->mlen++;
		return 0;
	}
	if ((t->used + 1) * 2 > t->cap &&
	    rehash(t, t->cap ? t->cap * 2 : 1 << 14, err) < 0)
		return -1;
	j = h & (t->cap - 1);
	while (t->slots[j].path != 0)
		j = (j + 1) & (t->cap - 1);
	t->slots[j].path = arena_add(t, path, n, err);
	if (t->slots[j].path == 0)
		return -1;
	t->slots[j].hash = h;
	t->slots[j].owner = owner;
	t->slots[j].more = NONE;
	t->used++;
	return 0;
}

void unpkg_pathtab_drop(struct unpkg_pathtab *t,
			const struct unpkg_strmap *keys)
{
	size_t i;

	for (i = 0; i < t->cap; i++) {
		struct pathtab_slot *s = &t->slots[i];
		uint32_t *link;

		if (s->path == 0 || s->owner == 0)
			continue;
		link = &s->more;
		while (*link != NONE) {
			if (unpkg_strmap_get(keys, t->arena +
					     t->more[*link].owner) != NULL)
				*link = t->more[*link].next;
			else
				link = &t->more[*link].next;
		}
		if (unpkg_strmap_get(keys, t->arena + s->owner) == NULL)
			continue;
		/* a path left without owners keeps its slot: the probe
		 * sequences of others pass through it */
		if (s->more == NONE) {
			s->owner = 0;
		} else {
			s->owner = t->more[s->more].owner;
			s->more = t->more[s->more].next;
		}
	}
}

size_t unpkg_pathtab_count(const struct unpkg_pathtab *t)
{
	size_t i, n = 0;

	for (i = 0; i < t->cap; i++)
		n += t->slots[i].path != 0 && t->slots[i].owner != 0;
	return n;
}

const char *unpkg_pathtab_find(const struct unpkg_pathtab *t,
			       const char *path, const char *except_key)
{
	size_t n = strlen(path);
	const struct pathtab_slot *s = lookup(t, path, n, hash_path(path, n));
	uint32_t m;

	if (s == NULL || s->owner == 0)
		return NULL;
	if (except_key == NULL || strcmp(t->arena + s->owner, except_key) != 0)
		return t->arena + s->owner;
	for (m = s->more; m != NONE; m = t->more[m].next) {
		if (strcmp(t->arena + t->more[m].owner, except_key) != 0)
			return t->arena + t->more[m].owner;
	}
	return NULL;
}
