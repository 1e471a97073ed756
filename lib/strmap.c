/* strmap.c - string-keyed open-addressing hash map. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strmap.h"

/* FNV-1a: short keys (paths), good spread, no state. */
static size_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return (size_t)(h ^ (h >> 32));
}

void unpkg_strmap_init(struct unpkg_strmap *map)
{
	map->slots = NULL;
	map->cap = 0;
	map->count = 0;
}

void unpkg_strmap_destroy(struct unpkg_strmap *map)
{
	free(map->slots);
	unpkg_strmap_init(map);
}

static struct unpkg_strmap_slot *find(const struct unpkg_strmap *map,
				      const char *key)
{
	size_t mask = map->cap - 1;
	size_t i;

	for (i = hash_str(key) & mask;; i = (i + 1) & mask) {
		struct unpkg_strmap_slot *s = &map->slots[i];

		if (s->key == NULL || strcmp(s->key, key) == 0)
			return s;
	}
}

void *unpkg_strmap_get(const struct unpkg_strmap *map, const char *key)
{
	if (map->cap == 0)
		return NULL;
	return find(map, key)->value;
}

static int rehash(struct unpkg_strmap *map, size_t cap, struct unpkg_err *err)
{
	struct unpkg_strmap old = *map;
	size_t i;

	map->slots = calloc(cap, sizeof(*map->slots));
	if (map->slots == NULL) {
		*map = old;
		return unpkg_err_nomem(err);
	}
	map->cap = cap;
	for (i = 0; i < old.cap; i++)
		if (old.slots[i].key != NULL)
			*find(map, old.slots[i].key) = old.slots[i];
	free(old.slots);
	return 0;
}

int unpkg_strmap_put(struct unpkg_strmap *map, const char *key, void *value,
		     void **old, struct unpkg_err *err)
{
	struct unpkg_strmap_slot *s;

	/* Keep the load factor at or below one half. */
	if ((map->count + 1) * 2 > map->cap &&
	    rehash(map, map->cap != 0 ? map->cap * 2 : 64, err) < 0)
		return -1;
	s = find(map, key);
	if (s->key != NULL) {
		if (old != NULL)
			*old = s->value;
		return 1;
	}
	s->key = key;
	s->value = value;
	map->count++;
	return 0;
}
