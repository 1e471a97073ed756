/* record.c - the record phase: the old versions' leftovers, trigger activations and the record of the unpacked packages (see record.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "activate.h"
#include "infodb.h"
#include "install-impl.h"
#include "obsolete.h"
#include "record.h"
#include "takeover.h"

static int activate_declared(void *ctx, int act, const char *name,
			     int noawait, struct unpkg_err *err)
{
	struct activation *c = ctx;

	if (!act)
		return 0;
	/* dpkg records these before the package leaves its old state: one
	 * new to the system (not-installed, config-files) awaits nothing
	 * (its await is dropped with that state), unless -i configures it,
	 * where dpkg activates them again and it awaits them */
	c->noawait = noawait ||
		     (c->p->old_state <= UNPKG_STATUS_CONFIG_FILES &&
		      !c->r->o->configure);
	return unpkg_triggers_interested(c->r->trig, name, activate_interest,
					 c, err);
}

/* What the packages of the group change for dpkg's triggers, as dpkg
 * records it when it unpacks: their interests (triggers/), and the
 * triggers their paths (new and removed) and their activate directives
 * activate (in the database, written with the record). */
static int record_triggers(struct run *r, struct unpkg_err *err)
{
	size_t i, j;

	for (i = 0; i < r->npkgs; i++) {
		struct pkg *p = &r->pkgs[i];
		const char *text = (const char *)p->triggers.data;
		struct activation c = { r, p, 0 };

		if (p->state != PKG_EXTRACTED)
			continue;
		/* what a failure puts back (run_restore_pkg()) */
		if (!p->interests_saved &&
		    unpkg_triggers_member(r->trig, p->key, &p->old_interests,
					  err) < 0)
			return -1;
		p->interests_saved = 1;
		if (unpkg_triggers_set_interests(r->trig, p->key, text,
						 p->triggers.size, err) < 0 ||
		    unpkg_triggers_parse(text, p->triggers.size,
					 activate_declared, &c, err) < 0)
			return -1;
		c.noawait = 0;
		/* a diverted path activates by the name it is at, as in
		 * dpkg */
		for (j = 0; j < p->files.count; j++)
			if (unpkg_triggers_interested(
				    r->trig, unpkg_divert_use(
					    r->divs, p->files.files[j].path,
					    p->name),
				    activate_interest, &c, err) < 0)
				return -1;
		for (j = 0; j < p->nobsolete; j++)
			if (unpkg_triggers_interested(
				    r->trig, unpkg_divert_use(
					    r->divs, p->obsolete[j], p->name),
				    activate_interest, &c, err) < 0)
				return -1;
	}
	/* the interest files go with the record (run_db_stage()) */
	return 0;
}


/* The new version's maintainer scripts, staged as info/KEY.NAME.dpkg-new,
 * take their names. */
static int stage_scripts(struct run *r, struct pkg *p, struct unpkg_err *err)
{
	static const char *const names[] = {
		"preinst", "postinst", "prerm", "postrm",
	};
	char tmp[NAME_MAX + 16], name[NAME_MAX + 1];
	struct stat st;
	size_t i;
	int dir, dfd;

	dir = unpkg_commit_dir(r->commit, r->admroot, "info", err);
	dfd = dir >= 0 ? unpkg_commit_dirfd(r->commit, dir, err) : -1;
	if (dfd < 0)
		return -1;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		unsigned int flags = UNPKG_STAGE_KEEP;

		if (!p->scripts[maint_index(names[i])].present)
			continue;
		snprintf(name, sizeof(name), "%s.%s", p->key, names[i]);
		snprintf(tmp, sizeof(tmp), "%s.dpkg-new", name);
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			flags |= UNPKG_STAGE_BACKUP;
		if (unpkg_commit_stage(r->commit, dir, tmp, name, -1, flags,
				       err) < 0)
			return -1;
	}
	return 0;
}

/* The old versions' leftovers go once the new files are in place, moved
 * aside until the record; the finish under way makes that durable first. */
static int remove_old(struct run *r, struct unpkg_err *err)
{
	size_t i, j;

	for (i = 0; i < r->npkgs; i++) {
		struct pkg *p = &r->pkgs[i];
		int ok;

		if (p->state != PKG_EXTRACTED)
			continue;
		ok = maint_postrm(r, p, err);
		if (ok < 0)
			return -1;
		if (ok == 0)
			continue;	/* unwound and failed */
		if (stage_scripts(r, p, err) < 0 || takeover_stage_taken(r, p, err) < 0 ||
		    (p->old_stanza != NULL &&
		     (obsolete_remove(r, p, err) < 0 ||
		      infodb_remove_obsolete(r, p, err) < 0)))
			return -1;
		for (j = 0; j < p->nremovals; j++)
			if (p->removals[j].marked &&
			    inst_remove_one(r, p, &p->removals[j], err) < 0)
				return -1;
	}
	return 0;
}

/* After the rename pass of the extracted packages: the old versions'
 * leftovers, then the record of them all as unpacked, handed to the
 * commit so that the sync of the renames makes it durable too. */
static int record_unpacked(void *ctx, struct unpkg_err *err)
{
	struct run *r = ctx;
	size_t i;

	/* The rename pass put the new info/KEY.list files in place: the
	 * file lists the database caches are out of date. */
	unpkg_db_files_changed(r->db);
	if (remove_old(r, err) < 0 || record_triggers(r, err) < 0)
		return -1;
	for (i = 0; i < r->npkgs; i++) {
		struct pkg *p = &r->pkgs[i];

		if (p->state == PKG_EXTRACTED &&
		    run_put_state(r, p, "ok", UNPKG_STATUS_UNPACKED, err) < 0)
			return -1;
	}
	return run_db_stage(r, err);
}

/* Commit every extracted package: one barrier, one rename pass, the old
 * versions' leftovers removed, and one sync making the renames and the
 * record of them all as unpacked durable; the record is put in place
 * after it.  Then the backups can go. */
int record_group(struct run *r, struct unpkg_err *err)
{
	const struct unpkg_commit_hooks hooks = {
		.renamed = record_unpacked,
		.ctx = r,
	};
	double t;
	size_t i;

	if (run_finish(r, &hooks, err) < 0)
		return -1;
	t = unpkg_now();
	if (run_db_publish(r, err) < 0)
		return -1;
	for (i = 0; i < r->npkgs; i++)
		if (r->pkgs[i].state == PKG_EXTRACTED)
			r->pkgs[i].state = PKG_UNPACKED;
	run_timed(r, UNPKG_PHASE_RECORD, t);
	/* a removal's postrm failed: unpacked, not configured (dpkg) */
	for (i = 0; i < r->npkgs; i++) {
		struct pkg *p = &r->pkgs[i];
		struct unpkg_err perr;

		if (p->state != PKG_UNPACKED || p->removal_failed == NULL)
			continue;
		unpkg_err_init(&perr);
		unpkg_err_set(&perr, UNPKG_ERR_SCRIPT, "%s", p->removal_failed);
		run_fail_pkg(r, p, p->debpath, &perr);
	}
	run_release(r);
	return 0;
}
