/* activate.h - trigger activations recorded in the run's database, as
 * dpkg records them: for the paths a run unpacks or removes and for the
 * "activate" directives of a package's triggers file.  Used by the
 * record phase (record.c), a removal (uninstall.c) and a removal in
 * favour of another package (remove.c).
 * Private to libunpkg. */
#ifndef UNPKG_ACTIVATE_H
#define UNPKG_ACTIVATE_H

#include <stddef.h>

#include "run.h"

struct activation {
	struct run *r;
	struct pkg *p;		/* the package that activates */
	int noawait;		/* the activation does not await */
};

/* An unpkg_trigger_interest_fn, `ctx` a struct activation: trigger
 * `trigger` of package `key` is activated by c->p, as dpkg records it:
 * pending for `key` if it is configured (prepended to its
 * Triggers-Pending, state triggers-pending), awaited by c->p unless
 * either side said noawait. */
int activate_interest(void *ctx, const char *trigger, const char *key,
		      int noawait, struct unpkg_err *err);

/* The file triggers `path` activates, recorded as pending for the
 * interested packages that are configured (in memory, a status line for
 * each that becomes triggers-pending), awaited by nobody: what dpkg does
 * for a path of a package it removes (`p`). */
int activate_path(struct run *r, struct pkg *p, const char *path,
		  struct unpkg_err *err);

/* The triggers the "activate" directives of `text` (`len` bytes, a
 * package's triggers file) name, recorded the same way: what dpkg does
 * when it removes the files of `p` (libraries' ldconfig trigger). */
int activate_directives_removed(struct run *r, struct pkg *p,
				const char *text, size_t len,
				struct unpkg_err *err);

#endif
