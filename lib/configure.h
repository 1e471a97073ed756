/* configure.h - the configure phase of -i and --configure: conffiles
 * settled as dpkg does, postinsts in dependency order, the packages
 * recorded as installed.
 * Private to libunpkg. */
#ifndef UNPKG_CONFIGURE_H
#define UNPKG_CONFIGURE_H

#include <stddef.h>

#include "run.h"

/* Configure the unpacked packages of the run, those of -i and those
 * --configure loaded from the database (`debpath` NULL; `old_state` their
 * state, unpacked or half-configured), as dpkg does: in dpkg's queue
 * order (configure_order()), each checked at its turn (depends.h), its
 * conffiles settled, its postinst run, recorded as installed.  Durable
 * at a fixed cost (doc/design.md, "Configure"): the conffiles of every
 * package the plan configures renamed together, made durable by one sync
 * with the state half-configured; the end states in one database
 * write. */
int configure_pkgs(struct run *r, struct unpkg_err *err);

/* What becomes of a conffile at configuration, dpkg's rules.  `have`
 * is the hash of the file on disk (NULL: missing), `recorded` the one the
 * database holds for the installed version ("" for none, or a conffile
 * new to the package), `shipped` the new version's. */
enum conffile_action {
	CONF_INSTALL,		/* the package's version takes the name */
	CONF_DROP,		/* the local file stays as it is */
	CONF_KEEP_DIST,		/* local kept, package's as NAME.dpkg-dist */
	CONF_NEW_OLD,		/* package's installed, local as NAME.dpkg-old */
	CONF_MISSING,		/* removed by the administrator: stays gone */
	CONF_ASK,		/* both changed: the administrator decides
				 * (CONF_NEW_OLD or CONF_KEEP_DIST) */
};

enum conffile_action conffile_action(const char *have, const char *recorded,
				     const char *shipped, unsigned int force);

/* The order of configuration: the steps of configure_order() on package
 * i of n. */
struct configure_steps {
	/* 1: package i is to be configured (and not yet) */
	int (*pending)(void *ctx, size_t i);
	/* 1: its turn (its dependencies are met, or can never be), 0: it
	 * waits for packages still pending, -1: error.  `level` above 0:
	 * a round went by without progress, a cycle is to be broken. */
	int (*ready)(void *ctx, size_t i, int level);
	/* configure it or fail it (no longer pending afterwards): 0, or -1
	 * on error */
	int (*configure)(void *ctx, size_t i, int level);
	/* breaking a cycle at package i: the package to configure instead
	 * (i then goes back to the end of the queue), or i; NULL: i */
	size_t (*pick)(void *ctx, size_t i);
};

/* dpkg's queue: the pending packages in the order given, each configured
 * at its turn when it is ready, else put at the end of the queue; a
 * whole round of the queue without progress raises the level, and the
 * next package, or the one st->pick() chooses in its stead, is then
 * configured whatever it waits for (dpkg breaking a cycle), the level
 * going back to 0 after each configuration.  0, or -1
 * at the first error of a step (or of memory).  Pure: the order alone. */
int configure_order(size_t n, const struct configure_steps *st, void *ctx);

/* For a package configured from the database (`debpath` NULL): the hash
 * of each conffile's NAME.dpkg-new in p->files (the hash it records once
 * configured), or the one recorded where there is none (settled by an
 * earlier run). */
int configure_shipped_hashes(struct run *r, struct pkg *p,
			     struct unpkg_err *err);

#endif
