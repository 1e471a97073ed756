/* uninstall.h - unpkg --remove and --purge: installed packages removed
 * (and their configuration files purged) in-process, as dpkg 1.21 removes
 * them, at a constant number of syncs per run.
 *
 *   plan      (run.c) the root and the database opened, dpkg's locks
 *             taken, the commit strategy chosen
 *   select    the packages named (or, with `pending`, those selected for
 *             deinstall or purge), their selection set as dpkg sets it;
 *             an order in which no package is removed before those that
 *             depend on it and are removed too (dpkg's deferral)
 *   mark      every package to be removed half-installed in one durable
 *             database write, before any script of theirs runs or any
 *             file goes
 *   remove    per package, in dpkg's order: Essential, Protected and
 *             dependency checks; prerm remove (postinst abort-remove on
 *             failure); its files moved aside with the transaction as
 *             dpkg removes them; postrm remove; its info/ files but the
 *             list and postrm (config-files), or all of them; with
 *             purge, its conffiles and their .dpkg-* variants, then
 *             postrm purge; the states in memory
 *   record    one finish of the transaction: the sync that makes the
 *             removals durable makes the new database durable with them;
 *             the database is put in place after it
 *
 * doc/design.md ("Removal") gives the contract. */
#ifndef UNPKG_UNINSTALL_H
#define UNPKG_UNINSTALL_H

#include <stddef.h>

#include "err.h"
#include "install-opts.h"

/* Remove (purge: purge) the packages `names[0..n)` ("name" or
 * "name:arch"), or with `pending` those whose selection is deinstall or
 * purge (`names` ignored).  Returns the number of packages that failed
 * (each reported through an UNPKG_EV_ERROR event), or -1 when the run could
 * not start or had to stop (`err` says why). */
int unpkg_remove(const struct unpkg_install_opts *o, const char *const *names,
		 size_t n, int purge, int pending, struct unpkg_err *err);

#endif
