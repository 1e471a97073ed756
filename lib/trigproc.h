/* trigproc.h - trigger processing, dpkg 1.21's: the postinst of each
 * package with Triggers-Pending run as "postinst triggered 'NAMES'", the
 * packages that awaited it set free, the activations maintainer scripts
 * leave in triggers/Unincorp (dpkg-trigger) incorporated, and dpkg's
 * trigger cycle detection.
 *
 * Per package (dpkg's trigproc()): its dependencies are checked (installed
 * or triggers-pending packages satisfy them); it is recorded
 * half-configured, its Triggers-Pending cleared and the packages awaiting
 * it (Triggers-Awaited) installed, or triggers-pending if they have
 * triggers of their own; then its postinst runs.  If it succeeds the
 * package is installed (triggers-awaited or triggers-pending if a script
 * activated something meanwhile); if it fails it stays half-configured.
 * A package whose triggers keep coming back (dpkg's tortoise and hare over
 * the pending triggers of the whole database) is given up:
 * half-configured, "triggers looping, abandoned".
 *
 * Durability: the database changes of the whole processing are made
 * durable by one database write at the end (doc/design.md, "Trigger
 * processing"), and one more for each maintainer script that left
 * activations in triggers/Unincorp, before that file is emptied. */
#ifndef UNPKG_TRIGPROC_H
#define UNPKG_TRIGPROC_H

#include <stddef.h>

#include "err.h"
#include "install-opts.h"

enum unpkg_trigproc_mode {
	/* --triggers-only PKG...: those packages, in dpkg's order; each
	 * must have triggers pending; what their scripts activate is left
	 * pending (dpkg's --no-triggers default for named packages) */
	UNPKG_TRIGPROC_NAMES,
	/* --triggers-only --pending: every package with triggers pending
	 * (want install or hold), and what their scripts activate */
	UNPKG_TRIGPROC_PENDING,
	/* the end of an action (dpkg's deferred processing): the packages
	 * `names[0..n)` (the action activated their triggers, in that
	 * order: its UNPKG_EV_TRIGGERED events), or with `names` NULL every package with triggers
	 * pending (the end of --configure), and what their scripts
	 * activate; a package whose dependencies are not satisfied is
	 * left pending without an error */
	UNPKG_TRIGPROC_DEFERRED,
	/* the end of a --no-triggers --configure (configure-run.c): the
	 * packages `names[0..n)` (keys; those it queued with triggers
	 * pending, which dpkg processes even under --no-triggers) whose
	 * triggers are still pending, in that order; what their scripts
	 * activate is left pending */
	UNPKG_TRIGPROC_QUEUED,
};

/* Process triggers as `mode` says.  Returns the number of packages that failed
 * (each reported through an UNPKG_EV_ERROR event), or -1 when the
 * processing could not start or had to stop (`err` says why). */
int unpkg_trigproc(const struct unpkg_install_opts *o,
		   const char *const *names, size_t n,
		   enum unpkg_trigproc_mode mode, struct unpkg_err *err);

/* One line of triggers/Unincorp: trigger `trigger` activated, awaited by
 * `awaiter` (NULL for "-", no awaiter).  Called once per package named on
 * the line. */
typedef int unpkg_unincorp_fn(void *ctx, const char *trigger,
			      const char *awaiter, struct unpkg_err *err);

/* Parse `len` bytes of a triggers/Unincorp file, dpkg's syntax ("TRIGGER
 * PKG...", '#' comments); a malformed line is UNPKG_ERR_FORMAT. */
int unpkg_unincorp_parse(const char *text, size_t len, unpkg_unincorp_fn *fn,
			 void *ctx, struct unpkg_err *err);

#endif
