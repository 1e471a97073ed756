/* install-opts.h - the options of a run (unpkg_install(), install.h).
 * Plain data, read by every part of the pipeline. */
#ifndef UNPKG_INSTALL_OPTS_H
#define UNPKG_INSTALL_OPTS_H

#include "err.h"
#include "event.h"
#include "pathfilter.h"
#include "stats.h"
#include "strategy.h"

struct unpkg_install_opts {
	const char *instdir;		/* the root, "/" for the system */
	const char *admindir;		/* the database directory */
	enum unpkg_sync_mode sync;
	int sync_auto;			/* pick the strategy for the file
					 * systems of the root and the admin
					 * directory (fsclass.h); `sync` is
					 * then ignored */
	long long dirty_max_kib;	/* with sync_auto: the others' data
					 * waiting to be written above which
					 * syncfs is not used (0: the default,
					 * UNPKG_SYNC_DIRTY_MAX_KIB) */
	int configure;			/* -i: configure after unpacking */
	int no_triggers;		/* --no-triggers: unpkg_configure()
					 * still processes the triggers of
					 * the packages it queued, as dpkg */
	int frontend_lock;		/* take lock-frontend too */
	int auto_deconfigure;		/* deconfigure the packages a new
					 * one Breaks, as dpkg's
					 * --auto-deconfigure */
	unsigned int force;		/* UNPKG_FORCE_* (force.h) */
	unsigned int abort_after;	/* stop after this many failed
					 * packages, as dpkg's --abort-after
					 * (0: dpkg's default, 50) */
	unsigned int root_flags;	/* UNPKG_ROOT_* (fsroot.h) */
	/* dpkg's --path-exclude / --path-include, in order (may be NULL:
	 * every path is unpacked) */
	const struct unpkg_pathfilter *path_filter;
	/* Ask about a conffile both the administrator and the package
	 * changed, where no --force-conf{new,old,def} decides, as dpkg's
	 * prompt does: `path` is its name ("/etc/x"), the package's version
	 * waits beside it as PATH.dpkg-new, both beneath the root.  1:
	 * install the package's version (the local one is kept as
	 * PATH.dpkg-old), 0: keep the local one (the package's is installed
	 * as PATH.dpkg-dist), -1: fail the package, `err` saying why.  NULL:
	 * never ask, keep the local one (dpkg's default answer). */
	int (*conffile_ask)(void *ctx, const char *package, const char *path,
			    struct unpkg_err *err);
	void *conffile_ask_ctx;
	const struct unpkg_events *events;
	struct unpkg_stats *stats;	/* may be NULL */
};

#endif
