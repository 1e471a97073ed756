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
 * triggers/); unpkg_triggers_stage() and unpkg_triggers_publish() do the
 * same in two steps, so that a caller can make the NAME.new files durable
 * with other files in one sync. */
#ifndef UNPKG_TRIGGER_H
#define UNPKG_TRIGGER_H

#include <stddef.h>

#include "buf.h"
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

/* Package `pkg`'s interests as the "triggers" member that declares them
 * ("interest NAME", "interest-noawait NAME" lines) in `out` (emptied
 * first; empty without interests): unpkg_triggers_set_interests() with
 * it puts them back. */
int unpkg_triggers_member(const struct unpkg_triggers *t, const char *pkg,
			  struct unpkg_buf *out, struct unpkg_err *err);

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

/* Call `fn` for every interest in a file trigger (its PATH as the
 * trigger). */
int unpkg_triggers_each_file(const struct unpkg_triggers *t,
			     unpkg_trigger_interest_fn *fn, void *ctx,
			     struct unpkg_err *err);

/* Write the interest files, if the interests changed.  Adds the syncs
 * made to *fsyncs. */
int unpkg_triggers_write(struct unpkg_triggers *t, int nosync,
			 unsigned long *fsyncs, struct unpkg_err *err);

/* Make a staged file durable: `fd` is triggers/`name` (a NAME.new),
 * the callee's to close whatever it returns. */
typedef int unpkg_triggers_sync_fn(void *ctx, const char *name, int fd,
				   struct unpkg_err *err);

/* The first half of unpkg_triggers_write(), if the interests changed:
 * the interest files written as NAME.new, each handed to `sync` (NULL:
 * fdatasync'ed here unless `nosync`), a NAME that ends up empty noted
 * for removal.  Staging again replaces what was staged. */
int unpkg_triggers_stage(struct unpkg_triggers *t,
			 unpkg_triggers_sync_fn *sync, void *ctx, int nosync,
			 unsigned long *fsyncs, struct unpkg_err *err);

/* The second half: the staged files renamed in place, the emptied ones
 * removed, triggers/ fsync'ed unless `nosync`.  Nothing staged: nothing
 * to do.  On error, what is not in place yet is removed. */
int unpkg_triggers_publish(struct unpkg_triggers *t, int nosync,
			   unsigned long *fsyncs, struct unpkg_err *err);

/* Remove what was staged and not published (unpkg_triggers_free() does
 * it too). */
void unpkg_triggers_unstage(struct unpkg_triggers *t);

/* A sync that may have covered triggers/ failed: it is never synced again
 * (after a failure Linux may have marked the pages clean, so a retry could
 * lie), as after a failed fsync of triggers/ itself. */
void unpkg_triggers_sync_lost(struct unpkg_triggers *t);

/* 0 once a sync of triggers/ failed: what was written after it is not
 * durable. */
int unpkg_triggers_durable(const struct unpkg_triggers *t);

#endif
