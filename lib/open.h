/* open.h - the open phase: each .deb opened and checked, its old version
 * recalled from the database.
 * Private to libunpkg. */
#ifndef UNPKG_OPEN_H
#define UNPKG_OPEN_H

#include <stddef.h>

#include "run.h"

/* Open package `p` (r->pkgs[i]): its .deb read, control checked
 * (architecture, Pre-Depends), its database entry before the run kept,
 * its old version's files, conffiles and scripts recalled.  0 with
 * p->state PKG_OPENED, or -1 (`err`: the package failed). */
int open_pkg(struct run *r, struct pkg *p, struct unpkg_err *err);

#endif
