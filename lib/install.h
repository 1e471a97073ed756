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

#include "err.h"
#include "install-opts.h"

/* Install the .deb files `debs[0..n)`.  Returns the number of packages
 * that failed (each reported through an UNPKG_EV_ERROR event), or -1 when
 * the run could not start or had to stop (`err` says why: the database is
 * locked or unreadable, the root cannot be opened, ...). */
int unpkg_install(const struct unpkg_install_opts *o, const char *const *debs,
		  size_t n, struct unpkg_err *err);

#endif
