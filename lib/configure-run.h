/* configure-run.h - `--configure PKG...` and `--configure --pending`
 * carried out in-process: the packages unpacked (or half-configured) in
 * the database configured as dpkg 1.21 configures them.
 *
 * The driver (configure-run.c) opens the run (run_open()), loads the
 * packages asked for from the database into the run, and hands them to
 * the configure phase that `-i` uses too (configure.h): dpkg's queue
 * order and cycle breaking, the dependency checks in dpkg's words,
 * conffiles settled with dpkg's rules and questions, postinsts with
 * dpkg's arguments and environment, failures leaving the states dpkg
 * leaves.  Durable at a fixed number of syncs whatever the number of
 * packages (doc/design.md, "Configure").  Trigger processing is not
 * part of it: the caller runs it after, as after an install; but with
 * o->no_triggers, the triggers of the packages it queued (named, or with
 * --pending every one whose selection is install or hold) that were
 * pending as it started are processed at its end (trigproc.h), as dpkg
 * processes a queued package's. */
#ifndef UNPKG_CONFIGURE_RUN_H
#define UNPKG_CONFIGURE_RUN_H

#include <stddef.h>

#include "err.h"
#include "install-opts.h"

/* Configure packages `names[0..n)` ("name" or "name:arch"), or with
 * `pending` (n must be 0) every package the database has unpacked or
 * half-configured, in the order of dpkg's package table (the order
 * dpkg's --pending takes them in).  A name that is not
 * installed, or a package already configured or not ready, is an error
 * of that package in dpkg's words; a package with triggers to process
 * (triggers-pending, triggers-awaited) is left to the trigger processing
 * that follows.  Returns the number of packages that failed (each
 * reported through an UNPKG_EV_ERROR event), or -1 when the run could
 * not start or had to stop (`err` says why).  Sets
 * o->stats->triggers_activated when triggers are to be processed after
 * it: a package it configured awaits triggers, or with `pending` any
 * trigger waits in the database. */
int unpkg_configure(const struct unpkg_install_opts *o,
		    const char *const *names, size_t n, int pending,
		    struct unpkg_err *err);

#endif
