/* unpack.h - the unpack phase: a package's data.tar extracted into staged
 * entries, its info/ files staged beside them.
 * Private to libunpkg. */
#ifndef UNPKG_UNPACK_H
#define UNPKG_UNPACK_H

#include <stddef.h>

#include "run.h"

/* Stage everything of `p` in the run's transaction. */
int unpack_pkg(struct run *r, struct pkg *p, struct unpkg_err *err);

#endif
