/* strmap.h - a string-keyed hash map (open addressing, linear probing).
 *
 * Keys are not copied: they must outlive the map (callers keep them in
 * their own arrays or arenas).  Values are pointers.  Embedded object:
 * unpkg_strmap_init() / unpkg_strmap_destroy().
 */
#ifndef UNPKG_STRMAP_H
#define UNPKG_STRMAP_H

#include <stddef.h>

#include "err.h"

struct unpkg_strmap_slot {
	const char *key;
	void *value;
};

struct unpkg_strmap {
	struct unpkg_strmap_slot *slots;
	size_t cap;		/* a power of two, or 0 */
	size_t count;
};

void unpkg_strmap_init(struct unpkg_strmap *map);
void unpkg_strmap_destroy(struct unpkg_strmap *map);

/* The value stored under `key`, or NULL. */
void *unpkg_strmap_get(const struct unpkg_strmap *map, const char *key);

/* Store `value` (not NULL) under `key`.  If the key is present, its value
 * is left alone and *old (if not NULL) receives it; returns 1 then, 0
 * after inserting, -1 on allocation failure. */
int unpkg_strmap_put(struct unpkg_strmap *map, const char *key, void *value,
		     void **old, struct unpkg_err *err);

#endif
