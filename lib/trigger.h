/* trigger.h - dpkg's records of trigger interests in ADMINDIR/triggers/.
 *
 * dpkg keeps who is interested in which trigger in two kinds of files:
 *   triggers/File    one line per file trigger: "PATH PKG" or
 *                    "PATH PKG/noawait" (a package is interested in
 *                    changes beneath PATH);
 *   triggers/NAME    one line per package interested in the explicit
 *                    trigger NAME: "PKG" or "PKG/noawait".
 * A package declares its interests in the "triggers" member of its
 * control.tar ("interest[-await|-noawait] NAME"); dpkg records them when
 * it unpacks the package, and drops a NAME file that ends up empty.
 * (triggers/Unincorp, where dpkg-trigger leaves activations for dpkg to
 * incorporate, is created empty if missing: dpkg reads a missing one as a
 * trigger database to rebuild.  triggers/Lock is dpkg's.)
 *
 * Activations are recorded in the status file (Triggers-Pending of the
 * interested package, Triggers-Awaited of the package that activated):
 * the caller asks who is interested in a path or a trigger name and
 * writes that.  unpkg_triggers_write() replaces the interest files that
 * changed atomically (NAME.new, fdatasync unless nosync, rename, fsync of
 * triggers/). */
#ifndef UNPKG_TRIGGER_H
#define UNPKG_TRIGGER_H

#include <stddef.h>

#include "err.h"

struct unpkg_triggers;

/* Read the interests of the admin directory open as `admfd` (triggers/
 * missing or empty: none).  `admindir` names it in messages. */
int unpkg_triggers_open(int admfd, const char *admindir,
			struct unpkg_triggers **out, struct unpkg_err *err);
void unpkg_triggers_free(struct unpkg_triggers *t);

/* One directive of a "triggers" member: `activate` 1 for the activate
 * family, 0 for interest; `noawait` for the -noawait variants. */
typedef int unpkg_trigger_directive_fn(void *ctx, int activate,
				       const char *name, int noawait,
				       struct unpkg_err *err);

/* Call `fn` for each directive of a "triggers" member (`len` bytes of
 * `text`; NULL for none): leading and trailing blanks and everything after
 * a '#' are ignored, as are empty lines; an unknown directive or a line
 * without exactly one name is UNPKG_ERR_FORMAT. */
int unpkg_triggers_parse(const char *text, size_t len,
			 unpkg_trigger_directive_fn *fn, void *ctx,
			 struct unpkg_err *err);

/* Package `pkg` (the name dpkg records: "foo", or "foo:arch" for
 * Multi-Arch: same) now has the interests of its "triggers" member (NULL:
 * none); its old ones are dropped. */
int unpkg_triggers_set_interests(struct unpkg_triggers *t, const char *pkg,
				 const char *text, size_t len,
				 struct unpkg_err *err);

/* One interest: package `pkg` is interested in trigger `trigger` (a name,
 * or the PATH of a file trigger), `noawait` if it said so. */
typedef int unpkg_trigger_interest_fn(void *ctx, const char *trigger,
				      const char *pkg, int noawait,
				      struct unpkg_err *err);

/* Call `fn` for every interest `what` activates: for a path
 * ("/usr/share/foo/x"), the file triggers whose PATH is it or one of its
 * parents; for a name, the interests in that trigger. */
int unpkg_triggers_interested(const struct unpkg_triggers *t,
			      const char *what, unpkg_trigger_interest_fn *fn,
			      void *ctx, struct unpkg_err *err);

/* Write the interest files, if the interests changed.  Adds the syncs
 * made to *fsyncs. */
int unpkg_triggers_write(struct unpkg_triggers *t, int nosync,
			 unsigned long *fsyncs, struct unpkg_err *err);

#endif
