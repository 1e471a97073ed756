/* pkgindex.h - the database's packages indexed by the names they answer
 * to: the candidates of a dependency (the packages of that name and those
 * that Provide it) and the Conflicts that name it.
 *
 * Both indexes are built on first use for one state of the database and
 * go stale when a stanza changes: whoever changes one calls
 * unpkg_pkgindex_invalidate() (run.c does, for every change a run makes),
 * and the next lookup rebuilds them.  What the index returns points into
 * the database and into the index: valid until the next invalidation. */
#ifndef UNPKG_PKGINDEX_H
#define UNPKG_PKGINDEX_H

#include <stddef.h>

#include "db.h"
#include "err.h"
#include "relation.h"
#include "strmap.h"

/* One package that answers to a name. */
struct unpkg_candidate {
	const struct unpkg_db_pkg *pkg;
	const char *version;	/* the Version, or the provided version
				 * (NULL for an unversioned Provides) */
	int provided;
	struct unpkg_candidate *next;
};

/* An alternative of a Conflicts field of a package present in the
 * database. */
struct unpkg_conflict_hit {
	const struct unpkg_db_pkg *pkg;
	const struct unpkg_relation_alt *alt;
	size_t dbindex, rel, altindex;	/* where: the order of hits */
};

struct pkgindex_conflicts;

/* Owned by its user, embedded; the database must outlive it. */
struct unpkg_pkgindex {
	const struct unpkg_db *db;
	/* name -> struct unpkg_candidate chain */
	struct unpkg_strmap candidates;
	int valid;
	struct unpkg_candidate **cands;
	size_t ncands, capcands;
	struct unpkg_relations *provides;
	size_t nprovides;
	/* the Conflicts of the database, built on first use */
	struct pkgindex_conflicts *conflicts;
};

void unpkg_pkgindex_init(struct unpkg_pkgindex *x, const struct unpkg_db *db);
void unpkg_pkgindex_destroy(struct unpkg_pkgindex *x);

/* A stanza of the database changed: both indexes are rebuilt when next
 * used. */
void unpkg_pkgindex_invalidate(struct unpkg_pkgindex *x);

/* Build the candidate index if it is stale (and drop a stale Conflicts
 * index). */
int unpkg_pkgindex_build(struct unpkg_pkgindex *x, struct unpkg_err *err);

/* The first candidate for `name` (then ->next), NULL if none; the index
 * must have been built (unpkg_pkgindex_build()). */
const struct unpkg_candidate *
unpkg_pkgindex_candidates(const struct unpkg_pkgindex *x, const char *name);

/* The alternatives of the Conflicts fields of the packages present in the
 * database that name `name` or a name of `provides` (may be NULL), each
 * once, in the order of the database (package, relationship,
 * alternative): a malloc'd array in *hits (the caller frees it), *nhits
 * long.  A Conflicts field dpkg cannot parse forbids nothing. */
int unpkg_pkgindex_conflicts(struct unpkg_pkgindex *x, const char *name,
			     const struct unpkg_relations *provides,
			     struct unpkg_conflict_hit **hits, size_t *nhits,
			     struct unpkg_err *err);

/* The database entry of "name" or "name:arch", or NULL. */
const struct unpkg_db_pkg *unpkg_pkgindex_find_key(const struct unpkg_db *db,
						   const char *key);

/* A package counts as present unless not installed or only its
 * configuration files are left. */
int unpkg_pkg_present(const struct unpkg_db_pkg *dp);

#endif
