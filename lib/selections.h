/* selections.h - dpkg --set-selections in-process, for the input apt
 * gives it.
 *
 * apt runs `dpkg --set-selections` before it purges packages; stock dpkg
 * rewrites its status file with two flushes of its own each time.  unpkg
 * writes the same status file as one database write of its own (one
 * fsync of the admin directory where the file system orders its
 * commits, unpkg_db_order_writes()).
 *
 * It takes what it is sure to read as dpkg 1.21 reads it: lines of
 * "NAME[:ARCH] SELECTION" (blank lines and lines starting with '#'
 * skipped), a lower-case package name that names exactly one installed
 * instance (or, with ARCH, the installed instance of that architecture),
 * and a selection among install, hold, deinstall and purge.  For
 * anything else -- an unknown or ambiguous package, a malformed line, an
 * unknown selection, a database with packages awaiting triggers (dpkg
 * rewrites those states when it opens the database for writing) -- it
 * changes nothing and says so: stock dpkg then reads the same input and
 * answers with its own warnings and errors. */
#ifndef UNPKG_SELECTIONS_H
#define UNPKG_SELECTIONS_H

#include <stddef.h>

#include "err.h"
#include "install-opts.h"

enum unpkg_selections_result {
	UNPKG_SELECTIONS_SET,	/* written */
	UNPKG_SELECTIONS_DPKG,	/* not taken: for stock dpkg */
};

/* Set the selections that `text` (`len` bytes, the whole of dpkg's
 * standard input) lists in the database at o->admindir (its locks taken
 * as o->frontend_lock says), and write the database.  Returns an enum
 * unpkg_selections_result, with *why (static text) saying what made it
 * UNPKG_SELECTIONS_DPKG; or -1 (`err`) when the database could not be
 * opened or written. */
int unpkg_set_selections(const struct unpkg_install_opts *o,
			 const char *text, size_t len, const char **why,
			 struct unpkg_err *err);

#endif
