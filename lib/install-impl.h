/* install-impl.h - the declarations of the run core's files without a
 * header of their own, shared by the phases and the driver:
 * conflicts.c (Conflicts, Breaks, Replaces of the run), maint.c (the
 * maintainer-script steps) and remove.c (a package removed in favour of
 * one of the run).  Private to libunpkg. */
#ifndef UNPKG_INSTALL_IMPL_H
#define UNPKG_INSTALL_IMPL_H

#include <stddef.h>

#include "run.h"

/* Conflicts and Breaks of `p` against the installed packages, both ways
 * (conflicts.c): 1 none, 0 some (err says which, as dpkg words it; with
 * --force-conflicts / --force-breaks a warning instead, and 1), -1
 * error. */
int inst_check_conflicts(struct run *r, struct pkg *p, struct unpkg_err *err);

/* At configuration, as dpkg: the Breaks of the other packages present
 * (unpacked or more) that name `p` at its version, appended to `why` in
 * dpkg's words.  1 none, 0 some, -1 error. */
int inst_check_breakers(struct run *r, const struct pkg *p, char *why,
			size_t whylen, struct unpkg_err *err);

/* Is a package of the run staged but not committed yet that `p`
 * Replaces at its version, or that Replaces `p` at p's (any, with
 * --force-overwrite) (conflicts.c)?  dpkg has it unpacked when `p` comes: the caller
 * commits it first, so that the files pass from one to the other as in
 * dpkg. */
int inst_replaces_staged(const struct run *r, const struct pkg *p);

/* maint.c: the maintainer-script steps of lib/script.h.  Each returns 1
 * to go on, 0 when the package failed (reported, its state set), -1 on a
 * system error. */
int maint_save_scripts(struct pkg *p, struct unpkg_err *err);
int maint_index(const char *name);
/* The old version was configured (or half-configured, or awaiting
 * triggers): an upgrade deconfigures it first (step 1). */
int maint_configured_before(const struct pkg *p);
int maint_prerm(struct run *r, struct unpkg_err *err);
int maint_preinst(struct run *r, struct pkg *p, struct unpkg_err *err);
int maint_postrm(struct run *r, struct pkg *p, struct unpkg_err *err);
int maint_postinst(struct run *r, struct pkg *p, struct unpkg_err *err);
/* Installed package `d` in state `status`, its stanza as it was with
 * Config-Version (the recorded one, or its version if it is configured;
 * config-files: without Essential and Protected), in
 * memory. */
int maint_other_state(struct run *r, struct deconf *d, const char *status,
		      struct unpkg_err *err);
/* Run script `name` of installed package `d` from info/: 1 success (or no
 * script), 0 failed (*why), -1 error. */
int maint_run_other(struct run *r, const struct deconf *d, const char *name,
		    const char *const *argv, char *why, size_t whysize,
		    struct unpkg_err *err);
int maint_disappear(struct run *r, const struct unpkg_db_pkg *q,
		    const struct pkg *p, struct unpkg_err *err);
void maint_tmp_clean(struct run *r);
/* After the unpack phase: the packages deconfigured for a package that
 * failed get "postinst abort-deconfigure" (back to installed if it
 * works), in memory: the caller writes the database. */
int maint_deconfigure_unwind(struct run *r, struct unpkg_err *err);
/* After the configure phase of -i: the packages deconfigured for a
 * package of the run stay half-configured, each reported as a failed
 * configuration with what breaks it, as dpkg does (it queues them for
 * configuration, which the package that broke them prevents). */
int maint_deconfigured_report(struct run *r, struct unpkg_err *err);


/* --- remove.c: a package removed in favour of one it conflicts with ------ */

/* Remove package `d` in favour of `p`, now unpacked, as dpkg does (see
 * remove.c); its new state is put in memory, recorded with p's. */
int inst_remove_one(struct run *r, struct pkg *p, struct deconf *d,
		    struct unpkg_err *err);

/* Is `path` one of the conffiles of Conffiles value `value` (may be
 * NULL; dir: one beneath directory `path`)? */
int inst_conffile_in(const char *value, const char *path, int dir);

/* Is a kept entry of `paths[0..n)` (fate 1) beneath directory `dir`? */
int inst_keeps_below(char *const *paths, const char *fate, size_t n,
		     const char *dir);

/* dpkg's words for a path of a package it could not remove: a failed
 * system call in `err` (looking at, opening or moving `path`, as the file
 * system has it) becomes "cannot remove 'ROOT/PATH': REASON", for a
 * conffile "cannot remove old config file 'PATH' (= 'ROOT/PATH'):
 * REASON"; any other error is left as it is. */
void inst_err_not_removed(const struct run *r, const char *path,
			  int conffile, struct unpkg_err *err);

/* dpkg's file trigger activations for the removal of installed package
 * `d`: every path of its list `paths[0..n)` ("" skipped) but its
 * conffiles (Conffiles value `conffiles`), children first, whether it
 * goes, stays or is missing; `by` is the package of the run whose
 * removal or favour it is (it awaits none of them). */
int inst_removal_activate(struct run *r, struct pkg *by,
			  const struct deconf *d, const char *conffiles,
			  char *const *paths, size_t n, struct unpkg_err *err);

/* inst_removal_fates()'s `how`: */
enum {
	/* dpkg's removal of the package itself: "/." kept in its list
	 * unless another package lists it */
	INST_FATES_OWN = 1,
	/* dpkg's warning for a directory not empty, where nothing comes
	 * back to it (the package keeps neither a conffile nor a postrm,
	 * so its removal is its purge) */
	INST_FATES_WARN = 2,
};

/* The fate of each path of the list `paths[0..n)` of installed package
 * `d` (its Conffiles value `conffiles`) when it is removed, as dpkg's
 * removal decides it, children first: 0 left alone (another package's
 * directory, missing, "/."), 1 kept in its list (a conffile, a directory
 * holding one or something else; "/." with INST_FATES_OWN), 2 removed.
 * The paths `aside[0..naside)` ("/x/y.dpkg-tmp", moved aside earlier in
 * the run) count as gone. */
int inst_removal_fates(struct run *r, const struct deconf *d,
		       const char *conffiles, char **paths, char *fate,
		       size_t n, unsigned int how, char *const *aside,
		       size_t naside, struct unpkg_err *err);

/* Move the paths of fate 2 of package `name` aside with the transaction
 * (a directory whole), as obsolete_remove() does, a diverted one where
 * the diversion put it; `key` names the package in warnings.  With
 * `unlink_copied`, a file that moving aside would copy whole (a file of
 * an overlayfs) is unlinked at once instead, as dpkg removes it: for a
 * caller that leaves the package half-installed if it fails. */
int inst_removal_files(struct run *r, const char *key, const char *name,
		       char **paths, const char *fate, size_t n,
		       int unlink_copied, struct unpkg_err *err);

/* Put back what an interrupted removal of `key` moved aside before its
 * record (NAME.dpkg-tmp without NAME: its files, parents first, and its
 * info/ files), and add the paths only its list backup names, unless
 * another package lists them, to *paths (*n of them). */
int inst_removal_recover(struct run *r, const char *key, char ***paths,
			 size_t *n, struct unpkg_err *err);

/* Delete what a run killed after the record of such a removal left. */
void inst_sweep_removed(struct run *r);

#endif
