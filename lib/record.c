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

#include "infodb.h"
#include "install-impl.h"
#include "obsolete.h"
#include "record.h"
#include "takeover.h"

struct activation {
	struct run *r;
	struct pkg *p;		/* the package that activates */
	int noawait;		/* the activation does not await */
};


/* 1 if `word` is one of the blank-separated words of `list`. */
static int word_in(const char *list, const char *word)
{
	size_t l = strlen(word);
	const char *s = list;

	while ((s = strstr(s, word)) != NULL) {
		if ((s == list || s[-1] == ' ') && (s[l] == '\0' || s[l] == ' '))
			return 1;
		s += l;
	}
	return 0;
}

/* Add `key` to the packages whose triggers `p` awaits. */
static int add_awaited(struct pkg *p, const char *key, struct unpkg_err *err)
{
	char *list;

	if (p->awaited != NULL && word_in(p->awaited, key))
		return 0;
	if (asprintf(&list, "%s%s%s", p->awaited != NULL ? p->awaited : "",
		     p->awaited != NULL ? " " : "", key) < 0)
		return unpkg_err_nomem(err);
	free(p->awaited);
	p->awaited = list;
	return 0;
}

/* Trigger `trigger` of package `key` is activated by c->p, as dpkg
 * records it: pending for `key` if it is configured (prepended to its
 * Triggers-Pending, state triggers-pending), awaited by c->p unless
 * either side said noawait. */
static int activate(void *ctx, const char *trigger, const char *key,
		    int noawait, struct unpkg_err *err)
{
	struct activation *c = ctx;
	const struct unpkg_db_pkg *ip = unpkg_pkgindex_find_key(c->r->db, key);
	const char *want, *flag, *status, *pending, *state;
	struct unpkg_para para;
	char value[64], *list = NULL, *text = NULL, *name = NULL, *arch = NULL;
	int ret = -1;

	if (ip == NULL || unpkg_db_pkg_status(ip, &want, &flag, &status) < 0 ||
	    !unpkg_status_configured(unpkg_db_pkg_state(ip)))
		return 0;	/* not configured: not interested yet */
	c->r->stats->triggers_activated = 1;
	unpkg_event_emit(c->r->o->events, UNPKG_EV_TRIGGERED, key, "%s",
			 trigger);
	if (!noawait && !c->noawait && strcmp(key, c->p->key) != 0 &&
	    add_awaited(c->p, key, err) < 0)
		return -1;
	pending = unpkg_para_get(&ip->para, "Triggers-Pending");
	if (pending != NULL && word_in(pending, trigger))
		return 0;
	unpkg_para_init(&para);
	/* triggers-awaited if it awaits triggers itself, as dpkg records it */
	state = unpkg_para_get(&ip->para, "Triggers-Awaited") != NULL
		? "triggers-awaited" : "triggers-pending";
	snprintf(value, sizeof(value), "%s %s %s", want, flag, state);
	if (unpkg_para_copy(&para, &ip->para, err) < 0 ||
	    (name = strdup(ip->name)) == NULL ||
	    (arch = strdup(ip->arch)) == NULL ||
	    asprintf(&list, "%s%s%s", trigger, pending != NULL ? " " : "",
		     pending != NULL ? pending : "") < 0 ||
	    unpkg_para_set(&para, "Status", value, err) < 0 ||
	    unpkg_para_set(&para, "Triggers-Pending", list, err) < 0 ||
	    (text = unpkg_para_format(&para)) == NULL) {
		if (err->code == UNPKG_ERR_NONE)
			unpkg_err_nomem(err);
		goto out;
	}
	/* a new state is reported, as dpkg reports it */
	ret = strcmp(status, state) == 0
	      ? run_put(c->r, name, arch[0] != '\0' ? arch : NULL, text, err)
	      : run_put_reported(c->r, name, arch[0] != '\0' ? arch : NULL,
				 text, key, arch,
				 unpkg_para_get(&para, "Version"), state,
				 err);
out:
	free(name);
	free(arch);
	free(list);
	free(text);
	unpkg_para_destroy(&para);
	return ret;
}

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
	return unpkg_triggers_interested(c->r->trig, name, activate, c, err);
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
					    p->name), activate, &c, err) < 0)
				return -1;
		for (j = 0; j < p->nobsolete; j++)
			if (unpkg_triggers_interested(
				    r->trig, unpkg_divert_use(
					    r->divs, p->obsolete[j], p->name),
				    activate, &c, err) < 0)
				return -1;
	}
	/* the interest files go with the record (run_db_stage()) */
	return 0;
}

int record_activate_path(struct run *r, struct pkg *p, const char *path,
			 struct unpkg_err *err)
{
	struct activation c = { r, p, 1 };

	return unpkg_triggers_interested(r->trig, path, activate, &c, err);
}

/* An "activate" directive of a package being removed: awaited by
 * nobody. */
static int activate_removed(void *ctx, int act, const char *name,
			    int noawait, struct unpkg_err *err)
{
	struct activation *c = ctx;

	(void)noawait;
	if (!act)
		return 0;
	return unpkg_triggers_interested(c->r->trig, name, activate, c, err);
}

int record_activate_declared(struct run *r, struct pkg *p, const char *text,
			     size_t len, struct unpkg_err *err)
{
	struct activation c = { r, p, 1 };

	return unpkg_triggers_parse(text, len, activate_removed, &c, err);
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
