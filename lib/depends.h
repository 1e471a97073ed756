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

/* The outcome of depends_configure(), dpkg's for a package to configure. */
enum depends_verdict {
	DEPENDS_HALT,		/* a dependency cannot be met: it fails */
	DEPENDS_OK,		/* met: it can be configured now */
	DEPENDS_DEFER,		/* met only by packages still waiting in the
				 * queue: it waits for them */
};

/* How depends_configure() sees the packages: the state of `dp` now
 * (during a plan, the one it will have), and whether it waits in the
 * queue to be configured. */
struct depends_view {
	enum unpkg_status (*state)(void *ctx, const struct unpkg_db_pkg *dp,
				   int *queued);
	void *ctx;
};

/* The Depends and Pre-Depends of `p`, which is to be configured, as
 * dpkg 1.21 checks them: an alternative is met by a package present in
 * a configured state (installed, triggers-pending or triggers-awaited)
 * whose version fits; one waiting in the queue defers `p`; anything else
 * fails it, each in dpkg's words appended to `why` ("Package X is not
 * installed.", "Package X is not configured yet.", "Version of X on
 * system is V.", and the same for a package providing X).  With
 * `cycle`, a package waiting in the queue counts as configured (dpkg
 * breaking a dependency cycle).  Unless the verdict is to wait, the
 * Breaks of the others present are checked too (inst_check_breakers()).
 * -1 on error. */
int depends_configure(struct run *r, const struct pkg *p,
		      const struct depends_view *v, int cycle, char *why,
		      size_t whylen, enum depends_verdict *verdict,
		      struct unpkg_err *err);

/* Is `alt` met by one of the candidates of chain `c` (the packages of
 * its name and those that Provide it, unpkg_pkgindex_candidates()) that
 * usable_fn(ctx, pkg) accepts?  An unversioned Provides only meets an
 * unversioned need, as in dpkg.  Pure: the decision alone. */
int depends_alt_met(const struct unpkg_relation_alt *alt,
		    const struct unpkg_candidate *c,
		    int (*usable_fn)(void *ctx, const struct unpkg_db_pkg *dp),
		    void *ctx);

#endif
