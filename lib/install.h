/* install.h - the pipeline of one run: open, plan, mark, extract, barrier,
 * rename, record, configure (DESIGN.md section 2).
 *
 *   plan      the root and the database are opened, the locks taken
 *   open      every .deb is opened, its control.tar read and checked
 *   mark      all packages of the run become half-installed (reinstreq)
 *             in one durable database write, before any file is touched
 *   unpack    per package: extract into staged entries, stage the info/
 *             files, commit (barrier, renames, directory sync), record
 *             the package as unpacked (one durable database write)
 *   configure (-i) per run: dependencies checked, conffiles renamed into
 *             place and made durable, then every configured package
 *             recorded as installed in one durable database write
 *
 * A package that fails before its record leaves the root as it was: its
 * staged entries are removed, replaced files are put back, and its
 * database stanza is restored.  Other packages of the run go on, as in
 * dpkg; the failure is reported as an UNPKG_EV_ERROR event.
 */
#ifndef UNPKG_INSTALL_H
#define UNPKG_INSTALL_H

#include <stddef.h>

#include "commit.h"
#include "err.h"
#include "event.h"

struct unpkg_install_opts {
	const char *instdir;		/* the root, "/" for the system */
	const char *admindir;		/* the database directory */
	enum unpkg_sync_mode sync;
	int sync_auto;			/* pick the strategy for the file
					 * systems of the root and the admin
					 * directory (fsclass.h); `sync` is
					 * then ignored */
	int configure;			/* -i: configure after unpacking */
	int frontend_lock;		/* take lock-frontend too */
	int auto_deconfigure;		/* deconfigure the packages a new
					 * one Breaks, as dpkg's
					 * --auto-deconfigure */
	unsigned int force;		/* UNPKG_FORCE_* (force.h) */
	unsigned int abort_after;	/* stop after this many failed
					 * packages, as dpkg's --abort-after
					 * (0: dpkg's default, 50) */
	unsigned int root_flags;	/* UNPKG_ROOT_* (fsroot.h) */
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

/* Install the .deb files `debs[0..n)`.  Returns the number of packages
 * that failed (each reported through an UNPKG_EV_ERROR event), or -1 when
 * the run could not start or had to stop (`err` says why: the database is
 * locked or unreadable, the root cannot be opened, ...). */
int unpkg_install(const struct unpkg_install_opts *o, const char *const *debs,
		  size_t n, struct unpkg_err *err);

#endif
