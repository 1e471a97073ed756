/* install.h - one run of unpkg: the pipeline of DESIGN.md section 2,
 * sequenced by install.c, one file per phase.
 *
 *   plan      (run.c) the root and the database opened, dpkg's locks
 *             taken, the commit strategy chosen (strategy.c)
 *   open      (open.c) every .deb opened, its control.tar read and
 *             checked (architecture, Pre-Depends, Conflicts and Breaks),
 *             its database entry before the run kept
 *   mark      (install.c) every package of the run half-installed
 *             (reinstreq) in one durable database write, before any file
 *             is touched
 *   unpack    (unpack.c) per package: data.tar extracted into staged
 *             entries, files of installed packages taken over under
 *             Replaces (takeover.c), info/ files staged (infodb.c)
 *   record    (record.c) the commit of the run: with the dpkg strategy
 *             one per package, with every other strategy a single
 *             transaction for the whole run (one barrier, one rename pass);
 *             the old versions' leftovers moved aside (obsolete.c),
 *             trigger activations, and the packages recorded as unpacked,
 *             made durable by the sync of the renames
 *   configure (configure.c, -i) dependencies checked (depends.c),
 *             conffiles settled and made durable, postinsts in dependency
 *             order, the packages recorded as installed
 *
 * The run's state (struct run, struct pkg) is run.c's, the only writer of
 * a package's database entry.  A package that fails before its record
 * leaves the root as it was: its staged entries are removed (the
 * transaction rolled back to its savepoint), replaced files are put back,
 * and its database stanza is restored.  Other packages of the run go on,
 * as in dpkg; the failure is reported as an UNPKG_EV_ERROR event.
 */
#ifndef UNPKG_INSTALL_H
#define UNPKG_INSTALL_H

#include <stddef.h>

#include "err.h"
#include "install-opts.h"

/* Install the .deb files `debs[0..n)`.  Returns the number of packages
 * that failed (each reported through an UNPKG_EV_ERROR event), or -1 when
 * the run could not start or had to stop (`err` says why: the database is
 * locked or unreadable, the root cannot be opened, ...). */
int unpkg_install(const struct unpkg_install_opts *o, const char *const *debs,
		  size_t n, struct unpkg_err *err);

#endif
