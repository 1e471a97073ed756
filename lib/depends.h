/* depends.h - dependency satisfaction: a relationship field of a package of
 * the run checked against the packages present (through the candidate
 * index) and those the run unpacked.
 * Private to libunpkg. */
#ifndef UNPKG_DEPENDS_H
#define UNPKG_DEPENDS_H

#include <stddef.h>

#include "pkgindex.h"
#include "relation.h"
#include "run.h"

/* Check one relationship field; describe what is missing in `why`. */
int depends_check(struct run *r, const struct pkg *p,
		  const char *field, const char *verb, int run_ok,
		  char *why, size_t whylen, struct unpkg_err *err);

/* Is `alt` met by one of the candidates of chain `c` (the packages of
 * its name and those that Provide it, unpkg_pkgindex_candidates()) that
 * usable_fn(ctx, pkg) accepts?  An unversioned Provides only meets an
 * unversioned need, as in dpkg.  Pure: the decision alone. */
int depends_alt_met(const struct unpkg_relation_alt *alt,
		    const struct unpkg_candidate *c,
		    int (*usable_fn)(void *ctx, const struct unpkg_db_pkg *dp),
		    void *ctx);

#endif
