/* pathtab.h - the paths of the file lists and the packages that list
 * them: an open-addressing table (linear probing) whose strings, paths and
 * the owners' keys, live in one arena addressed by 32-bit offsets.  A path
 * usually has one owner, kept in its slot; further owners (directories
 * shared by packages) are chained.  Private to libunpkg: the database's
 * index of info/KEY.list (db.c). */
#ifndef UNPKG_PATHTAB_H
#define UNPKG_PATHTAB_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "strmap.h"

struct pathtab_slot;
struct pathtab_more;

/* Owned by its user, embedded; all zero is an empty table. */
struct unpkg_pathtab {
	char *arena;
	size_t alen, acap;
	struct pathtab_slot *slots;
	size_t cap, used;	/* cap is a power of two */
	struct pathtab_more *more;
	size_t mlen, mcap;
};

void unpkg_pathtab_destroy(struct unpkg_pathtab *t);

/* A handle for owner `key`, to add its paths with; 0 (err set) when
 * memory runs out.  Each call makes a new handle. */
uint32_t unpkg_pathtab_owner(struct unpkg_pathtab *t, const char *key,
			     struct unpkg_err *err);

/* `owner` lists the path of `n` bytes at `path` (not NUL-terminated).
 * Listing a path twice adds nothing. */
int unpkg_pathtab_add(struct unpkg_pathtab *t, const char *path, size_t n,
		      uint32_t owner, struct unpkg_err *err);

/* Every owner whose key is one of those of `keys` (the values do not
 * matter) lists nothing any more: one pass over the table. */
void unpkg_pathtab_drop(struct unpkg_pathtab *t,
			const struct unpkg_strmap *keys);

/* The number of paths with an owner left. */
size_t unpkg_pathtab_count(const struct unpkg_pathtab *t);

/* The key of an owner of `path` other than `except_key` (may be NULL),
 * or NULL; the first one added unless it was dropped.  Valid until the
 * table is destroyed. */
const char *unpkg_pathtab_find(const struct unpkg_pathtab *t,
			       const char *path, const char *except_key);

#endif
