/* configure.h - the configure phase of -i: conffiles settled as dpkg does,
 * postinsts in dependency order, the packages recorded as installed.
 * Private to libunpkg. */
#ifndef UNPKG_CONFIGURE_H
#define UNPKG_CONFIGURE_H

#include <stddef.h>

#include "run.h"

/* -i: configure the unpacked packages of the run (dependencies checked,
 * conffiles settled and made durable, postinsts in dependency order) and
 * record them as installed. */
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
	/* 1: its dependencies are met by configured packages, 0: not yet,
	 * -1: error */
	int (*ready)(void *ctx, size_t i);
	/* configure it (no longer pending afterwards): 1 done, 0 it failed,
	 * -1 error */
	int (*configure)(void *ctx, size_t i);
};

/* Configure the pending packages whose dependencies are met, in the order
 * given, again and again while that configures any (a package whose
 * Depends are met only by packages of the run not yet configured waits
 * for them); then every package still pending, in the order given, as
 * dpkg breaks a cycle.  0, or -1 at the first error of a step.  Pure: the
 * order alone. */
int configure_order(size_t n, const struct configure_steps *st, void *ctx);

#endif
