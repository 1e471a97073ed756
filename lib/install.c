/* install.c - one run of unpkg -i / --unpack: the driver that sequences
 * the phases (install.h): plan (run_open()), open (open.c), mark (here), unpack
 * (unpack.c), record (record.c), configure (configure.c).  What failed is
 * put back here. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "configure.h"
#include "install-impl.h"
#include "install.h"
#include "open.h"
#include "record.h"
#include "strategy.h"
#include "unpack.h"

/* --- the run ----------------------------------------------------------------*/

/* Mark the opened packages half-installed, durably, before any script or
 * file of theirs runs or appears (a new directory appears at once).  The
 * strategy makes the new status durable, as it would the packages' data:
 * one syncfs covers it and a new info/format together. */
static int mark_all(struct run *r, struct unpkg_err *err)
{
	const struct unpkg_commit_hooks hooks = {
		.synced = run_db_publish_hook,
		.ctx = r,
	};
	double t = unpkg_now();
	size_t i;
	int any = 0;

	for (i = 0; i < r->npkgs; i++) {
		struct pkg *p = &r->pkgs[i];

		if (p->state != PKG_OPENED)
			continue;
		if (run_put_state(r, p, "reinstreq",
				  UNPKG_STATUS_HALF_INSTALLED, err) < 0)
			return -1;
		p->state = PKG_MARKED;
		any = 1;
	}
	if (any && (run_db_stage(r, err) < 0 || run_finish(r, &hooks, err) < 0))
		return -1;
	run_timed(r, UNPKG_PHASE_MARK, t);
	return 0;
}

/* dpkg's "processing" line of each opened package, before its scripts
 * run.  An old version that was configured is deconfigured first:
 * half-configured, its prerm, unpacked.  Without a prerm nothing could
 * see those states, so they are not written (maint_prerm() writes them
 * when there is one); their status lines still are, as dpkg's. */
static void announce_all(struct run *r)
{
	size_t i;

	for (i = 0; i < r->npkgs; i++) {
		struct pkg *p = &r->pkgs[i];

		if (p->state != PKG_OPENED)
			continue;
		unpkg_event_processing(r->o->events,
				       p->upgrade ? "upgrade" : "install",
				       p->key, p->arch, p->old_version,
				       p->version);
		if (!maint_configured_before(p) || p->old_prerm)
			continue;
		run_status_event(r, p, p->old_arch, p->old_version,
				 "half-configured");
		run_status_event(r, p, p->old_arch, p->old_version,
				 "unpacked");
	}
}

/* Restore and fail the marked packages from index `from` on. */
static void give_up(struct run *r, size_t from)
{
	struct unpkg_err err;
	size_t i;

	unpkg_err_init(&err);
	unpkg_err_set(&err, UNPKG_ERR_SYNC, "not processed: an earlier sync "
		      "failed");
	for (i = from; i < r->npkgs; i++) {
		struct pkg *p = &r->pkgs[i];

		if (p->state != PKG_MARKED && p->state != PKG_EXTRACTED)
			continue;
		run_restore_pkg(r, p);
		run_fail_pkg(r, p, p->debpath, &err);
	}
}

/* Put back the entries of the packages `p` made disappear. */
static void restore_gone(struct run *r, struct pkg *p)
{
	size_t i;

	for (i = 0; i < p->ngone; i += 2) {
		struct unpkg_err err;

		unpkg_err_init(&err);
		if (run_put(r, p->gone[i], NULL, p->gone[i + 1], &err) < 0)
			unpkg_event_emit(r->o->events, UNPKG_EV_WARNING,
					 p->gone[i], "cannot restore the "
					 "database entry of %s: %s",
					 p->gone[i], err.msg);
	}
}

/* The packages `p` removed whose removal is undone with its files: their
 * postrm ran, they stay half-installed. */
static void restore_removed(struct run *r, struct pkg *p)
{
	size_t i;

	for (i = 0; i < p->nremovals; i++) {
		struct deconf *d = &p->removals[i];
		struct unpkg_err err;

		if (!d->removed)
			continue;
		unpkg_err_init(&err);
		if (maint_other_state(r, d, "half-installed", &err) < 0)
			unpkg_event_emit(r->o->events, UNPKG_EV_WARNING,
					 d->key, "cannot restore the "
					 "database entry of %s: %s",
					 d->key, err.msg);
	}
}

/* The commit of the extracted packages failed: undo it and fail them
 * all; after a failed sync, give up the rest of the run too. */
static void group_failed(struct run *r, const struct unpkg_err *cause)
{
	size_t i;

	unpkg_commit_abort(r->commit);
	for (i = 0; i < r->npkgs; i++) {
		struct pkg *p = &r->pkgs[i];

		if (p->state != PKG_EXTRACTED)
			continue;
		run_restore_pkg(r, p);
		restore_gone(r, p);
		restore_removed(r, p);
		run_fail_pkg(r, p, p->debpath, cause);
	}
	if (cause->code == UNPKG_ERR_SYNC) {
		r->sync_failed = 1;
		give_up(r, 0);
	}
}

/* dpkg's --abort-after: once that many packages failed, the rest of the
 * run is not processed (those marked are put back).  1 when it stops. */
static int too_many_errors(struct run *r, size_t from)
{
	unsigned int limit = r->o->abort_after != 0 ? r->o->abort_after : 50;
	size_t i;

	if ((unsigned int)r->failed < limit)
		return 0;
	for (i = from; i < r->npkgs; i++) {
		struct pkg *p = &r->pkgs[i];

		if (p->state == PKG_MARKED)
			run_restore_pkg(r, p);
		if (p->state == PKG_OPENED || p->state == PKG_MARKED) {
			unpkg_deb_free(p->deb);
			p->deb = NULL;
			p->state = PKG_FAILED;
		}
	}
	unpkg_event_emit(r->o->events, UNPKG_EV_NOTICE, NULL,
			 "too many errors, stopping");
	return 1;
}

/* What the packages waiting after the one being extracted may have
 * decoded ahead of their turn, in all (their decoders' windows hold about
 * as much again), and how many of them may (a thread and a descriptor
 * each).  (Defined at build time to measure other values.) */
#ifndef PREFETCH_BUDGET
#define PREFETCH_BUDGET (4u << 20)
#endif
#define PREFETCH_MAX 4

/* About the size of package p's data.tar: its Installed-Size, with room
 * for the tar headers; the whole budget if it does not say. */
static size_t data_estimate(const struct pkg *p)
{
	const char *v = unpkg_para_get(&p->control, "Installed-Size");
	unsigned long long kib;
	char *end;

	if (v == NULL || *v < '0' || *v > '9')
		return PREFETCH_BUDGET;
	errno = 0;
	kib = strtoull(v, &end, 10);
	if (errno != 0 || *end != '\0' || kib > PREFETCH_BUDGET / 1024)
		return PREFETCH_BUDGET;
	return (size_t)(kib + kib / 8 + 64) * 1024;
}

/* The packages to be extracted after package i start decompressing now,
 * on the second CPU, while package i is extracted (deb.h): as many as the
 * budget covers, the last one perhaps only in part.  Those started for an
 * earlier package are counted again, so the budget bounds them all. */
static void prefetch_after(struct run *r, size_t i)
{
	size_t left = PREFETCH_BUDGET, want, j;
	unsigned started = 0;

	for (j = i + 1; j < r->npkgs && left > 0 && started < PREFETCH_MAX;
	     j++) {
		struct pkg *q = &r->pkgs[j];

		if (q->state != PKG_MARKED)
			continue;
		want = data_estimate(q);
		if (want > left)
			want = left;
		unpkg_deb_prefetch(q->deb, want);
		left -= want;
		started++;
	}
}

int unpkg_install(const struct unpkg_install_opts *o, const char *const *debs,
		  size_t n, struct unpkg_err *err)
{
	struct unpkg_stats own = { 0 };
	struct unpkg_err cleanup;
	struct run r;
	int stopped = 0;
	double t = unpkg_now();
	size_t i;
	int ret = -1;

	unpkg_err_init(&cleanup);
	if (run_open(&r, o, &own, err) < 0)
		goto out;
	run_timed(&r, UNPKG_PHASE_PLAN, t);
	t = unpkg_now();
	r.pkgs = calloc(n != 0 ? n : 1, sizeof(*r.pkgs));
	if (r.pkgs == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	r.npkgs = n;
	for (i = 0; i < n; i++) {
		struct pkg *p = &r.pkgs[i];
		struct unpkg_err perr;

		p->debpath = debs[i];
		unpkg_para_init(&p->control);
		unpkg_strmap_init(&p->confmap);
		unpkg_filelist_init(&p->files);
		unpkg_err_init(&perr);
		if (stopped)
			continue;	/* not processed: stays PKG_FAILED */
		if (open_pkg(&r, p, &perr) < 0)
			run_fail_pkg(&r, p, p->debpath, &perr);
		stopped = too_many_errors(&r, i + 1);
	}
	run_timed(&r, UNPKG_PHASE_OPEN, t);
	inst_sweep_removed(&r);

	unpkg_force_names(o->force, r.force_list, sizeof(r.force_list));
	announce_all(&r);
	/* the lists read for "(Reading database ...)" serve the unpack:
	 * what is written up to the mark puts none in place */
	unpkg_db_hold_lists(r.db, 1);
	if (maint_prerm(&r, err) < 0)
		goto out;
	if (mark_all(&r, err) < 0) {
		/* Nothing was touched: the database goes back too. */
		for (i = 0; i < n; i++)
			if (r.pkgs[i].state == PKG_MARKED)
				run_restore_pkg(&r, &r.pkgs[i]);
		if (r.db_dirty)
			run_write_db(&r, err);
		goto out;
	}
	unpkg_db_hold_lists(r.db, 0);

	for (i = 0; i < n; i++) {
		struct pkg *p = &r.pkgs[i];
		struct unpkg_err perr;
		int ok;

		if (p->state != PKG_MARKED)
			continue;
		if (too_many_errors(&r, i))
			break;
		unpkg_err_init(&perr);
		/* files passing between packages of the run (Replaces) */
		if (inst_replaces_staged(&r, p) && record_group(&r, &perr) < 0) {
			group_failed(&r, &perr);
			unpkg_err_init(&perr);
			if (p->state != PKG_MARKED)
				continue;
		}
		prefetch_after(&r, i);
		ok = maint_preinst(&r, p, err);
		/* dpkg-divert in the scripts so far changes where the
		 * package's files go */
		if (ok < 0 || unpkg_divert_load(r.divs, r.db, err) < 0)
			goto out;
		if (ok == 0)
			continue;
		unpkg_commit_savepoint(r.commit, &p->sp_from);
		ok = unpack_pkg(&r, p, &perr);
		unpkg_commit_savepoint(r.commit, &p->sp_to);
		if (ok < 0) {
			unpkg_commit_rollback(r.commit, &p->sp_from);
			run_fail_pkg(&r, p, p->debpath, &perr);
			run_restore_pkg(&r, p);
			/* After a failed sync (an early barrier) nothing
			 * written since the last good one can be trusted. */
			if (perr.code == UNPKG_ERR_SYNC)
				group_failed(&r, &perr);
			continue;
		}
		if (!unpkg_commit_per_run(r.commit) &&
		    record_group(&r, &perr) < 0)
			group_failed(&r, &perr);
	}
	for (i = 0; i < n; i++) {
		struct unpkg_err perr;

		if (r.pkgs[i].state != PKG_EXTRACTED)
			continue;
		unpkg_err_init(&perr);
		if (record_group(&r, &perr) < 0)
			group_failed(&r, &perr);
		break;
	}
	if (maint_deconfigure_unwind(&r, err) < 0)
		goto out;
	/* Stanzas of failed packages put back since the last write. */
	if (r.db_dirty && run_write_db(&r, err) < 0)
		goto out;
	/* After a failed sync nothing more is committed in this run. */
	if (o->configure && !r.sync_failed && configure_pkgs(&r, err) < 0) {
		if (r.db_dirty)
			run_write_db(&r, err);	/* the first error wins */
		goto out;
	}
	if (o->configure && maint_deconfigured_report(&r, err) < 0)
		goto out;
	ret = r.failed;
out:
	maint_tmp_clean(&r);
	/* no package accepted (the database never written): a fresh root
	 * is left as it was */
	if (r.db != NULL && unpkg_db_remove_made(r.db, &cleanup) < 0)
		unpkg_event_emit(o->events, UNPKG_EV_WARNING, NULL, "%s",
				 cleanup.msg);
	run_close(&r);
	return ret;
}
