/* uninstall.c - unpkg --remove and --purge: the driver (uninstall.h).
 *
 * Each package goes through dpkg 1.21's steps in dpkg's order (its
 * scripts, status lines and log lines in that order); what changes is
 * when the states become durable: every package to be removed is marked
 * half-installed in one database write before anything of theirs runs,
 * their files go aside with one transaction (remove.c decides what stays,
 * as for a package removed in favour of another), and the end states are
 * written once, made durable by the sync that makes the removals durable
 * (doc/design.md, "Removal"). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "depends.h"
#include "infodb.h"
#include "install-impl.h"
#include "obsolete.h"
#include "activate.h"
#include "stanza.h"
#include "uninstall.h"

/* A package of the run: r->pkgs[i], its installed entry in
 * p->removals[0] (name, arch, key, version and stanza, the selection
 * already changed), whether it is purged in p->upgrade, its state before
 * the run in p->old_state. */
#define RM(p) (&(p)->removals[0])

/* What the run moved aside so far, as "PATH.dpkg-tmp": a directory
 * holding only these is empty for the packages removed after. */
struct aside {
	char **v;
	size_t n;
	struct unpkg_strmap map;	/* the same, for lookups */
};

/* Add PATH.dpkg-tmp, the first `len` bytes of path `path` moved aside
 * (the rest beneath them). */
static int aside_add_at(struct aside *a, const char *path, size_t len,
			struct unpkg_err *err)
{
	char **grown = realloc(a->v, (a->n + 1) * sizeof(*grown));

	if (grown == NULL)
		return unpkg_err_nomem(err);
	a->v = grown;
	if (asprintf(&grown[a->n], "%.*s.dpkg-tmp%s", (int)len, path,
		     path + len) < 0)
		return unpkg_err_nomem(err);
	a->n++;
	return unpkg_strmap_put(&a->map, grown[a->n - 1], grown[a->n - 1],
				NULL, err) < 0 ? -1 : 0;
}

static int aside_add(struct aside *a, const char *path, struct unpkg_err *err)
{
	return aside_add_at(a, path, strlen(path), err);
}

/* Forget what was added from the `n`th entry on (a package's removal
 * undone). */
static int aside_truncate(struct aside *a, size_t n, struct unpkg_err *err)
{
	size_t i;

	while (a->n > n)
		free(a->v[--a->n]);
	unpkg_strmap_destroy(&a->map);
	unpkg_strmap_init(&a->map);
	for (i = 0; i < a->n; i++)
		if (unpkg_strmap_put(&a->map, a->v[i], a->v[i], NULL, err) < 0)
			return -1;
	return 0;
}

/* Path `path` moved aside, or with an ancestor in `moved` (moved whole):
 * the name it has now. */
static int aside_add_under(struct aside *a, const char *path,
			   const struct unpkg_strmap *moved,
			   struct unpkg_err *err)
{
	char buf[PATH_MAX];
	size_t len;

	if (strlen(path) >= sizeof(buf))
		return aside_add(a, path, err);
	strcpy(buf, path);
	for (len = 1; buf[len] != '\0'; len++) {
		int found;

		if (buf[len] != '/')
			continue;
		buf[len] = '\0';
		found = unpkg_strmap_get(moved, buf) != NULL;
		buf[len] = '/';
		if (found)
			return aside_add_at(a, path, len, err);
	}
	return aside_add(a, path, err);
}

/* The conffile variants dpkg 1.21 deletes with a conffile on purge. */
static const char *const conf_exts[] = {
	".dpkg-old", ".dpkg-new", ".dpkg-dist", ".dpkg-tmp", "~", ".bak",
	NULL,
};

/* `stanza` with Status "WANT FLAG STATUS" (want NULL: as it was), and
 * Config-Version `config` unless NULL, in dpkg's order of fields. */
static char *with_status_cv(const char *stanza, const char *want,
			    const char *flag, const char *status,
			    const char *config, struct unpkg_err *err)
{
	struct unpkg_para para;
	char *text = NULL;

	unpkg_para_init(&para);
	if (unpkg_para_parse(stanza, strlen(stanza), &para, err) == 0)
		unpkg_stanza_restate(&para, want, flag, status, config, &text,
				     err);
	unpkg_para_destroy(&para);
	return text;
}

static char *with_status(const char *stanza, const char *want,
			 const char *flag, const char *status,
			 struct unpkg_err *err)
{
	return with_status_cv(stanza, want, flag, status, NULL, err);
}

/* Add installed package `q` to the run (purged or not), its selection
 * changed and reported as dpkg reports it.  0, or -1. */
static int add_pkg(struct run *r, const struct unpkg_db_pkg *q, int purge,
		   struct unpkg_err *err)
{
	struct pkg *p = &r->pkgs[r->npkgs];
	const char *want, *flag, *status;
	struct deconf *d;
	size_t i;

	for (i = 0; i < r->npkgs; i++)
		if (strcmp(r->pkgs[i].key, q->key) == 0)
			return 0;	/* named twice */
	memset(p, 0, sizeof(*p));
	unpkg_para_init(&p->control);
	unpkg_strmap_init(&p->confmap);
	unpkg_filelist_init(&p->files);
	r->npkgs++;
	if (unpkg_db_pkg_status(q, &want, &flag, &status) < 0)
		return unpkg_err_set(err, UNPKG_ERR_FORMAT, "%s: bad Status",
				     q->key);
	p->old_state = unpkg_db_pkg_state(q);
	p->upgrade = purge;
	p->state = PKG_OPENED;
	d = p->removals = calloc(1, sizeof(*d));
	if (d == NULL)
		return unpkg_err_nomem(err);
	p->nremovals = 1;
	if ((p->name = strdup(q->name)) == NULL ||
	    (p->key = strdup(q->key)) == NULL ||
	    (d->name = strdup(q->name)) == NULL ||
	    (d->key = strdup(q->key)) == NULL ||
	    (q->arch[0] != '\0' && (d->arch = strdup(q->arch)) == NULL) ||
	    (unpkg_para_get(&q->para, "Version") != NULL &&
	     (d->version = strdup(unpkg_para_get(&q->para, "Version"))) ==
		     NULL) ||
	    (d->stanza = unpkg_para_format(&q->para)) == NULL)
		return unpkg_err_nomem(err);
	if (unpkg_para_copy(&p->control, &q->para, err) < 0)
		return -1;
	p->arch = d->arch;
	p->version = d->version;
	if (strcmp(want, purge ? "purge" : "deinstall") != 0) {
		char *text = with_status(d->stanza, purge ? "purge"
							  : "deinstall",
					 flag, status, err);

		if (text == NULL)
			return -1;
		free(d->stanza);
		d->stanza = text;
		if (run_put(r, d->name, d->arch, text, err) < 0)
			return -1;
	}
	return 0;
}

/* The package `name` names: its key, or the name of none. */
static const char *named_as(struct run *r, const char *name)
{
	const struct unpkg_db_pkg *q = unpkg_pkgindex_find_key(r->db, name);

	return q != NULL ? q->key : name;
}

/* Is names[i] the first of `names` to name its package? */
static int first_named(struct run *r, const char *const *names, size_t i)
{
	const char *id = named_as(r, names[i]);
	size_t k;

	for (k = 0; k < i; k++)
		if (strcmp(named_as(r, names[k]), id) == 0)
			return 0;
	return 1;
}

/* dpkg's line for each package among `names` named more than once, in
 * the order they are first named. */
static void named_twice(struct run *r, const char *const *names, size_t n)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		const char *id = named_as(r, names[i]);

		if (!first_named(r, names, i))
			continue;
		for (k = i + 1; k < n && strcmp(named_as(r, names[k]), id) != 0;
		     k++)
			;
		if (k < n)
			unpkg_event_emit(r->o->events, UNPKG_EV_PROGRESS, id,
					 "Package %s listed more than once, "
					 "only processing once.", id);
	}
}

/* The packages named, or with `pending` those selected for removal, as
 * dpkg takes them: orig[k] the place among `names` (or in dpkg's walk)
 * of r->pkgs[k]; ignored[i] set for a name of no installed package, the
 * first time it is given (its warning waits for dpkg's queue to reach
 * it: reach()). */
static int select_pkgs(struct run *r, const char *const *names, size_t n,
		       int purge, int pending, size_t *orig, char *ignored,
		       struct unpkg_err *err)
{
	size_t i, k, count = pending ? unpkg_db_count(r->db) : n;
	size_t *order = NULL;
	int ret = -1;

	r->pkgs = calloc(count != 0 ? count : 1, sizeof(*r->pkgs));
	if (r->pkgs == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	if (pending && (order = unpkg_db_walk_order(r->db, err)) == NULL)
		goto out;
	if (!pending)
		named_twice(r, names, n);
	for (i = 0; i < count; i++) {
		const struct unpkg_db_pkg *q;
		const char *want, *flag, *status;

		if (pending) {
			q = unpkg_db_at(r->db, order[i]);
			if (unpkg_db_pkg_status(q, &want, &flag, &status) < 0 ||
			    strcmp(status, "not-installed") == 0 ||
			    (strcmp(want, "purge") != 0 &&
			     (strcmp(want, "deinstall") != 0 ||
			      strcmp(status, "config-files") == 0)))
				continue;
			if (add_pkg(r, q, strcmp(want, "purge") == 0, err) < 0)
				goto out;
			orig[r->npkgs - 1] = r->npkgs - 1;
			continue;
		}
		/* "name", or "name:arch" as apt gives it */
		q = unpkg_pkgindex_find_key(r->db, names[i]);
		if (q == NULL ||
		    unpkg_db_pkg_state(q) == UNPKG_STATUS_NOT_INSTALLED) {
			/* (a name of the same package before is ignored too) */
			ignored[i] = first_named(r, names, i);
			continue;
		}
		k = r->npkgs;
		if (add_pkg(r, q, purge, err) < 0)
			goto out;
		if (r->npkgs > k)	/* (not named twice) */
			orig[k] = i;
	}
	ret = 0;
out:
	free(order);
	return ret;
}

/* The package of the run `key` names that is still to be removed after
 * index `after`, or NULL. */
static struct pkg *queued(struct run *r, const char *key, size_t after)
{
	size_t i;

	for (i = after + 1; i < r->npkgs; i++)
		if (r->pkgs[i].state == PKG_OPENED &&
		    strcmp(r->pkgs[i].key, key) == 0)
			return &r->pkgs[i];
	return NULL;
}

struct usable_ctx {
	struct run *r;
	const struct pkg *gone;	/* the package being removed */
};

/* A package that meets a dependency once `gone` is removed: present,
 * not `gone`. */
static int still_usable(void *ctx, const struct unpkg_db_pkg *dp)
{
	const struct usable_ctx *u = ctx;

	return unpkg_pkg_present(dp) && strcmp(dp->key, u->gone->key) != 0;
}

/* The packages present whose Depends or Pre-Depends the removal of
 * r->pkgs[at] breaks: 1 none, 0 some (dpkg's lines in `why`, in dpkg's
 * order: the reverse of the database's, as dpkg lists the dependencies
 * on a package latest parsed first), 2 only packages queued after it (it
 * waits for them: dpkg defers it), -1 error. */
static int dependents(struct run *r, size_t at, char *why, size_t whylen,
		      struct unpkg_err *err)
{
	const struct pkg *p = &r->pkgs[at];
	struct usable_ctx u = { r, p };
	size_t i, j, k, f, used = 0;
	int broken = 0, later = 0;

	why[0] = '\0';
	if (unpkg_pkgindex_build(&r->index, err) < 0)
		return -1;
	for (i = unpkg_db_count(r->db); i-- > 0;) {
		const struct unpkg_db_pkg *q = unpkg_db_at(r->db, i);
		struct unpkg_relations rels[2];

		if (!unpkg_pkg_present(q) || strcmp(q->key, p->key) == 0)
			continue;
		if (unpkg_para_depends(&q->para, 0, rels, err) < 0) {
			unpkg_para_depends_destroy(rels);
			return -1;
		}
		for (f = 2; f-- > 0;) {
			for (j = rels[f].count; j-- > 0;) {
				const struct unpkg_relation *rel = &rels[f].rels[j];
				struct unpkg_relations one = { .rels = &rels[f].rels[j],
							       .count = 1 };
				int names_p = 0, met = 0;
				char *text;

				for (k = 0; k < rel->count; k++) {
					const struct unpkg_candidate *c =
						unpkg_pkgindex_candidates(&r->index,
									  rel->alts[k].name);

					for (; c != NULL; c = c->next)
						if (strcmp(c->pkg->key, p->key) == 0)
							names_p = 1;
					met = met || depends_alt_met(&rel->alts[k],
						unpkg_pkgindex_candidates(&r->index,
									  rel->alts[k].name),
						still_usable, &u);
				}
				if (!names_p || met)
					continue;
				if (queued(r, q->key, at) != NULL) {
					later = 1;
					continue;
				}
				broken = 1;
				text = unpkg_relations_format(&one);
				used += (size_t)snprintf(why + used,
							 used < whylen ? whylen - used : 0,
							 "\n %s %s %s.", q->key,
							 f == 0 ? "pre-depends on"
								: "depends on",
							 text != NULL ? text : "?");
				free(text);
			}
		}
		unpkg_para_depends_destroy(rels);
	}
	return broken ? 0 : later ? 2 : 1;
}

#define DEFERRED ((size_t)1 << (sizeof(size_t) * 8 - 1))

/* dpkg's deferral: a package others queued after it depend on goes after
 * them (once: a loop is removed in the order given).  orig[i]: the place
 * r->pkgs[i] was given at, DEFERRED set if it moved. */
static int order_pkgs(struct run *r, size_t *orig, struct unpkg_err *err)
{
	char why[64];
	size_t i, moved = 0;

	for (i = 0; i + 1 < r->npkgs && moved < r->npkgs; ) {
		int ok = dependents(r, i, why, sizeof(why), err);
		struct pkg tmp;

		if (ok < 0)
			return -1;
		if (ok != 2) {
			i++;
			continue;
		}
		size_t o = orig[i];

		tmp = r->pkgs[i];
		memmove(&r->pkgs[i], &r->pkgs[i + 1],
			(r->npkgs - i - 1) * sizeof(tmp));
		memmove(&orig[i], &orig[i + 1],
			(r->npkgs - i - 1) * sizeof(*orig));
		r->pkgs[r->npkgs - 1] = tmp;
		orig[r->npkgs - 1] = o | DEFERRED;
		moved++;
	}
	return 0;
}

static int is_yes(const struct pkg *p, const char *field)
{
	const char *v = unpkg_para_get(&p->control, field);

	return v != NULL && strcmp(v, "yes") == 0;
}

/* Fail `p` with dpkg's message. */
static void refuse(struct run *r, struct pkg *p, const char *msg)
{
	struct unpkg_err perr;

	unpkg_err_init(&perr);
	unpkg_err_set(&perr, UNPKG_ERR_DEPENDS, "%s", msg);
	run_fail_pkg(r, p, p->key, &perr);
}

/* A problem `force` overrides: dpkg's two warnings, 1; else refused, 0. */
static int forcible(struct run *r, struct pkg *p, unsigned int force,
		    const char *msg)
{
	if (!(r->o->force & force)) {
		refuse(r, p, msg);
		return 0;
	}
	unpkg_event_emit(r->o->events, UNPKG_EV_WARNING, p->key,
			 "overriding problem because --force enabled:");
	unpkg_event_emit(r->o->events, UNPKG_EV_WARNING, p->key, "%s", msg);
	return 1;
}

/* The checks dpkg makes before it removes r->pkgs[at]: 1 go on, 0
 * refused (reported) or nothing to do, -1 error. */
static int check_pkg(struct run *r, size_t at, struct unpkg_err *err)
{
	struct pkg *p = &r->pkgs[at];
	char why[4096], *msg;
	int ok;

	if (p->old_state == UNPKG_STATUS_CONFIG_FILES) {
		if (p->upgrade)
			return 1;
		unpkg_event_emit(r->o->events, UNPKG_EV_WARNING, p->key,
				 "ignoring request to remove %s, only the "
				 "config\n files of which are on the system; "
				 "use --purge to remove them too", p->key);
		p->state = PKG_FAILED;	/* not counted */
		return 0;
	}
	if (is_yes(p, "Essential") &&
	    !forcible(r, p, UNPKG_FORCE_REMOVE_ESSENTIAL,
		      "this is an essential package; it should not be "
		      "removed"))
		return 0;
	if (is_yes(p, "Protected") &&
	    !forcible(r, p, UNPKG_FORCE_REMOVE_PROTECTED,
		      "this is a protected package; it should not be "
		      "removed"))
		return 0;
	ok = dependents(r, at, why, sizeof(why), err);
	if (ok < 0)
		return -1;
	if (ok != 0)
		return 1;
	if (r->o->force & UNPKG_FORCE_DEPENDS) {
		unpkg_event_emit(r->o->events, UNPKG_EV_WARNING, p->key,
				 "%s: dependency problems, but removing anyway "
				 "as you requested:%s\n", p->key, why);
		return 1;
	}
	/* (the empty line after the list is dpkg's too) */
	if (asprintf(&msg, "dependency problems prevent removal of %s:%s\n",
		     p->key, why) < 0)
		return unpkg_err_nomem(err);
	unpkg_event_emit(r->o->events, UNPKG_EV_NOTICE, p->key, "%s", msg);
	free(msg);
	refuse(r, p, "dependency problems - not removing");
	return 0;
}

/* A run killed before its record moved the files of the packages it
 * removed aside, their lists included: every package of this run gets
 * them back first, so that each sees the others' as dpkg would. */
static int recover_all(struct run *r, struct unpkg_err *err)
{
	size_t i;

	for (i = 0; i < r->npkgs; i++) {
		char **paths = NULL;
		size_t n = 0;
		int ret;

		ret = unpkg_db_read_list(r->db, r->pkgs[i].key, &paths, &n,
					 err);
		if (ret == 0)
			ret = inst_removal_recover(r, r->pkgs[i].key, &paths,
						   &n, err);
		unpkg_db_list_free(paths, n);
		if (ret < 0)
			return -1;
	}
	unpkg_db_files_changed(r->db);
	return 0;
}

/* Every package to be removed half-installed, in one durable write: a
 * run stopped anywhere after it leaves no package recorded as installed
 * whose files or scripts it touched. */
static int mark_all(struct run *r, struct unpkg_err *err)
{
	size_t i;
	int any = 0;

	for (i = 0; i < r->npkgs; i++) {
		struct pkg *p = &r->pkgs[i];
		char *text;

		if (p->state != PKG_OPENED ||
		    p->old_state == UNPKG_STATUS_CONFIG_FILES ||
		    (is_yes(p, "Essential") &&
		     !(r->o->force & UNPKG_FORCE_REMOVE_ESSENTIAL)) ||
		    (is_yes(p, "Protected") &&
		     !(r->o->force & UNPKG_FORCE_REMOVE_PROTECTED)))
			continue;
		/* a configured package keeps its configured version */
		text = with_status_cv(RM(p)->stanza, NULL, "ok",
				      "half-installed",
				      unpkg_status_configured(p->old_state)
				      ? RM(p)->version : NULL, err);
		if (text == NULL ||
		    run_put(r, RM(p)->name, RM(p)->arch, text, err) < 0) {
			free(text);
			return -1;
		}
		free(text);
		any = 1;
	}
	if (!any)
		return 0;
	if (run_write_db(r, err) < 0)
		return -1;
	/* in memory, each package goes through dpkg's states from the
	 * one it had */
	for (i = 0; i < r->npkgs; i++) {
		struct pkg *p = &r->pkgs[i];

		if (p->state == PKG_OPENED &&
		    run_put(r, RM(p)->name, RM(p)->arch, RM(p)->stanza,
			    err) < 0)
			return -1;
	}
	return 0;
}

/* A script of `p` failed: its error, as dpkg reports it. */
static void script_failed(struct run *r, struct pkg *p, const char *why)
{
	struct unpkg_err perr;

	unpkg_err_init(&perr);
	unpkg_err_set(&perr, UNPKG_ERR_SCRIPT, "%s", why);
	run_fail_pkg(r, p, p->key, &perr);
}

/* Does info/KEY.NAME exist? */
static int has_info(struct run *r, int dir, const char *key, const char *name)
{
	char file[NAME_MAX + 1];
	struct unpkg_err ignored;
	struct stat st;
	int dfd;

	unpkg_err_init(&ignored);
	dfd = unpkg_commit_dirfd(r->commit, dir, &ignored);
	snprintf(file, sizeof(file), "%s.%s", key, name);
	return dfd >= 0 && fstatat(dfd, file, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Step 1: half-configured, prerm remove; on failure postinst
 * abort-remove, back to the state before (installed) if it works.  1 go
 * on, 0 failed (reported), -1 error. */
static int prerm(struct run *r, struct pkg *p, struct unpkg_err *err)
{
	const char *rm[] = { "remove", NULL };
	const char *abort_rm[] = { "abort-remove", NULL };
	char why[1024], why2[1024];
	const char *want, *flag, *status;
	const struct unpkg_db_pkg *now;
	int ok;

	if (!unpkg_status_configured(p->old_state) &&
	    p->old_state != UNPKG_STATUS_HALF_CONFIGURED)
		return 1;
	if (maint_other_state(r, RM(p), "half-configured", err) < 0)
		return -1;
	ok = maint_run_other(r, RM(p), "prerm", rm, why, sizeof(why), err);
	/* dpkg reads the diversions again after every script */
	if (ok >= 0 && unpkg_divert_load(r->divs, r->db, err) < 0)
		return -1;
	if (ok != 0)
		return ok;
	script_failed(r, p, why);
	ok = maint_run_other(r, RM(p), "postinst", abort_rm, why2,
			     sizeof(why2), err);
	if (ok < 0)
		return -1;
	if (ok == 0) {
		unpkg_event_emit(r->o->events, UNPKG_EV_WARNING, p->key,
				 "error while cleaning up:\n %s", why2);
		return 0;	/* stays half-configured */
	}
	if (run_put(r, RM(p)->name, RM(p)->arch, RM(p)->stanza, err) < 0)
		return -1;
	now = unpkg_db_find(r->db, RM(p)->name, RM(p)->arch);
	if (now != NULL && unpkg_db_pkg_status(now, &want, &flag,
					       &status) == 0)
		unpkg_event_pkg_status(r->o->events, p->key, RM(p)->arch,
				       RM(p)->version, status);
	return 0;
}

struct gone_ctx {
	struct run *r;
	struct pkg *p;
};

/* The triggers the package's triggers file activates, as dpkg activates
 * them when it starts to remove the package (a library's ldconfig). */
static int activate_declared(struct run *r, struct pkg *p,
			     struct unpkg_err *err)
{
	char *name = NULL, *text = NULL, *shown = NULL;
	size_t len = 0;
	int rc = -1;

	if (asprintf(&name, "info/%s.triggers", p->key) < 0) {
		name = NULL;
		unpkg_err_nomem(err);
		goto out;
	}
	rc = unpkg_db_read_file(r->db, name, &text, &len, &shown, err);
	if (rc > 0)
		rc = activate_directives_removed(r, p, text, len, err);
out:
	free(name);
	free(text);
	free(shown);
	return rc < 0 ? -1 : 0;
}

/* A path of `p` could not be reached (`perr`): the package fails alone,
 * as dpkg fails it, and the run goes on with the others.  What it moved
 * aside since `sp` comes back (what it unlinked stays gone), its list
 * too, and it keeps the state it has (half-installed, or config-files in
 * a purge).  0 (failed, reported), or -1; a failed sync ends the run
 * (nothing done since the last good one can be trusted). */
static int files_unreached(struct run *r, struct pkg *p,
			   const struct unpkg_commit_savepoint *sp,
			   struct aside *aside, size_t naside,
			   const struct unpkg_err *perr, struct unpkg_err *err)
{
	if (perr->code == UNPKG_ERR_SYNC) {
		*err = *perr;
		return -1;
	}
	unpkg_commit_rollback(r->commit, sp);
	unpkg_db_list_changed(r->db, RM(p)->key);
	if (aside_truncate(aside, naside, err) < 0)
		return -1;
	run_fail_pkg(r, p, p->key, perr);
	return 0;
}

/* Steps 2-3: half-installed, its files removed as dpkg removes them
 * (file triggers activated), its list keeping what stays (`purge`: no
 * list, its leftovers in *kept), postrm remove.  1 go on, 0 failed
 * (half-installed, reported), -1 error. */
static int remove_files(struct run *r, struct pkg *p, int dir, int keep,
			struct aside *aside, char ***kept, size_t *nkept,
			struct unpkg_err *err)
{
	const char *argv[] = { "remove", NULL };
	struct deconf *d = RM(p);
	const char *conffiles = unpkg_para_get(&p->control, "Conffiles");
	struct unpkg_buf list = { 0 };
	char **paths = NULL, *fate = NULL, why[1024], listname[NAME_MAX + 1];
	struct unpkg_commit_savepoint sp;
	struct unpkg_strmap gone;
	struct unpkg_err perr;
	size_t n = 0, i, naside = aside->n;
	int ok, ret = -1;

	unpkg_strmap_init(&gone);
	unpkg_commit_savepoint(r->commit, &sp);
	if (maint_other_state(r, d, "half-installed", err) < 0 ||
	    unpkg_db_read_list(r->db, d->key, &paths, &n, err) < 0)
		goto out;
	fate = calloc(n != 0 ? n : 1, 1);
	*kept = calloc(n != 0 ? n : 1, sizeof(**kept));
	if (fate == NULL || *kept == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	unpkg_err_init(&perr);
	/* dpkg warns of a directory not empty when it gives up on it:
	 * here where nothing is kept, else in the purge (purge_dirs()) */
	if (inst_removal_fates(r, d, conffiles, paths, fate, n,
			       INST_FATES_OWN | (keep ? 0 : INST_FATES_WARN),
			       aside->v, aside->n, &perr) < 0) {
		ret = files_unreached(r, p, &sp, aside, naside, &perr, err);
		goto out;
	}
	if (inst_removal_activate(r, p, d, conffiles, paths, n, err) < 0)
		goto out;
	for (i = 0; i < n; i++) {
		if (fate[i] == 2 &&
		    (unpkg_strmap_put(&gone, paths[i], paths[i], NULL,
				      err) < 0 ||
		     aside_add_under(aside, paths[i], &gone, err) < 0))
			goto out;
		if (fate[i] != 1)
			continue;
		if (unpkg_buf_printf(&list, err, "%s\n", paths[i]) < 0 ||
		    ((*kept)[(*nkept)++] = strdup(paths[i])) == NULL)
			goto out;
	}
	/* the old list goes aside at once: the file lists read for the
	 * next package see this one's leftovers only */
	snprintf(listname, sizeof(listname), "%s.list", d->key);
	if (has_info(r, dir, d->key, "list") &&
	    unpkg_commit_remove(r->commit, dir, listname, 0, err) < 0)
		goto out;
	if (keep && !p->upgrade) {
		if (infodb_stage(r, d->key, dir, "list",
				 list.s != NULL ? list.s : "", list.len, 0644,
				 err) < 0 ||
		    unpkg_db_list_staged(r->db, d->key, err) < 0)
			goto out;
	} else {
		unpkg_db_list_changed(r->db, d->key);
	}
	/* marked half-installed (mark_all()): a file need not come back */
	if (inst_removal_files(r, d->key, d->name, paths, fate, n, 1,
			       &perr) < 0) {
		ret = files_unreached(r, p, &sp, aside, naside, &perr, err);
		goto out;
	}
	ok = maint_run_other(r, d, "postrm", argv, why, sizeof(why), err);
	if (ok < 0 || unpkg_divert_load(r->divs, r->db, err) < 0)
		goto out;
	if (ok == 0) {
		script_failed(r, p, why);
		/* half-installed: its list names what is left */
		if (!(keep && !p->upgrade) &&
		    (infodb_stage(r, d->key, dir, "list",
				  list.s != NULL ? list.s : "", list.len, 0644,
				  err) < 0 ||
		     unpkg_db_list_staged(r->db, d->key, err) < 0))
			goto out;
	}
	ret = ok;
out:
	unpkg_strmap_destroy(&gone);
	unpkg_buf_free(&list);
	free(fate);
	unpkg_db_list_free(paths, n);
	return ret;
}

/* Move `path` aside with the transaction if it exists (is_dir: the
 * directory, with what was moved aside in it). */
static int move_path(struct run *r, struct pkg *p, const char *path,
		     int is_dir, struct unpkg_strmap *moved,
		     struct aside *aside, struct unpkg_err *err)
{
	struct stat st;
	int dir, there = obsolete_lstat(r, path, &st, err);

	if (there <= 0 || !S_ISDIR(st.st_mode) != !is_dir)
		return there;
	dir = obsolete_parent_dir(r, path, err);
	if (dir < 0 || obsolete_move_aside(r, p->key, path, dir, is_dir,
					   moved, err) < 0)
		return -1;
	return aside_add(aside, path, err);
}

/* The record of `p` again, config-files without Config-Version, and its
 * Conffiles either dropped or, with `blank`, each with the hash
 * "newconffile": dpkg so forgets the configuration as a purge begins,
 * and drops the conffiles once they are gone. */
static int put_config_files(struct run *r, struct pkg *p, int blank,
			    struct unpkg_err *err)
{
	struct unpkg_para para;
	struct unpkg_buf cf = { 0 };
	const char *s;
	char *text = NULL;
	int ret = -1;

	unpkg_para_init(&para);
	if (unpkg_para_parse(RM(p)->stanza, strlen(RM(p)->stanza), &para,
			     err) < 0)
		goto out;
	s = blank ? unpkg_para_get(&para, "Conffiles") : NULL;
	while (s != NULL && *s != '\0') {
		const char *eol = strchr(s, '\n');
		const char *end = eol != NULL ? eol : s + strlen(s);
		const char *path, *hash, *hend;

		if (unpkg_conffile_split(s, end, &path, &hash, &hend) == 0 &&
		    unpkg_buf_printf(&cf, err, "\n %.*snewconffile%.*s",
				     (int)(hash - path), path,
				     (int)(end - hend), hend) < 0)
			goto out;
		s = eol != NULL ? eol + 1 : end;
	}
	if (cf.s != NULL) {
		if (unpkg_para_set(&para, "Conffiles", cf.s, err) < 0)
			goto out;
	} else {
		unpkg_para_unset(&para, "Conffiles");
	}
	unpkg_para_unset(&para, "Config-Version");
	if ((text = unpkg_para_format(&para)) == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	free(RM(p)->stanza);
	RM(p)->stanza = text;
	text = with_status(RM(p)->stanza, NULL, "ok", "config-files", err);
	if (text == NULL ||
	    run_put(r, RM(p)->name, RM(p)->arch, text, err) < 0)
		goto out;
	ret = 0;
out:
	free(text);
	unpkg_buf_free(&cf);
	unpkg_para_destroy(&para);
	return ret;
}

/* postrm purge of `p` failed after its conffiles went: config-files as
 * dpkg leaves it, its record without Conffiles and Config-Version, its
 * list `kept` without the conffiles (its directories stay). */
static int purge_failed(struct run *r, struct pkg *p, int dir, char **kept,
			size_t nkept, struct unpkg_err *err)
{
	const char *conffiles = unpkg_para_get(&p->control, "Conffiles");
	struct unpkg_buf list = { 0 };
	char listname[NAME_MAX + 1];
	size_t i, len;
	int ret = -1;

	for (i = 0; i < nkept; i++) {
		const char *at = conffiles != NULL ? strstr(conffiles, kept[i])
						   : NULL;

		len = strlen(kept[i]);
		while (at != NULL && !((at == conffiles || at[-1] == ' ') &&
				       at[len] == ' '))
			at = strstr(at + 1, kept[i]);
		if (at == NULL &&
		    unpkg_buf_printf(&list, err, "%s\n", kept[i]) < 0)
			goto out;
	}
	snprintf(listname, sizeof(listname), "%s.list", p->key);
	if ((has_info(r, dir, p->key, "list") &&
	     unpkg_commit_remove(r->commit, dir, listname, 0, err) < 0) ||
	    infodb_stage(r, p->key, dir, "list", list.s != NULL ? list.s : "",
			 list.len, 0644, err) < 0 ||
	    unpkg_db_list_staged(r->db, p->key, err) < 0 ||
	    put_config_files(r, p, 0, err) < 0)
		goto out;
	ret = 0;
out:
	unpkg_buf_free(&list);
	return ret;
}

/* Step 4 begins: the conffiles of `p` that no other package lists, and
 * their variants, moved aside (into `moved`).  0, or -1. */
static int purge_conffiles(struct run *r, struct pkg *p,
			   struct unpkg_strmap *moved, struct aside *aside,
			   struct unpkg_err *err)
{
	const char *s = unpkg_para_get(&p->control, "Conffiles");
	char *path = NULL, *variant = NULL;
	size_t k;
	int ret = -1;

	while (s != NULL && *s != '\0') {
		size_t len;

		s += strspn(s, " \n");
		len = strcspn(s, " \n");
		if (len == 0)
			break;
		free(path);
		if ((path = strndup(s, len)) == NULL) {
			unpkg_err_nomem(err);
			goto out;
		}
		s += len;
		s = strchr(s, '\n');
		if (path[0] != '/' ||
		    unpkg_db_file_owner(r->db, path, p->key) != NULL)
			continue;
		/* (at its own name, diverted or not, as dpkg purges it) */
		for (k = 0; conf_exts[k] != NULL; k++) {
			free(variant);
			if (asprintf(&variant, "%s%s", path, conf_exts[k]) < 0) {
				variant = NULL;
				unpkg_err_nomem(err);
				goto out;
			}
			if (move_path(r, p, variant, 0, moved, aside, err) < 0)
				goto out;
		}
		{
			const char *slash = strrchr(path, '/');

			free(variant);
			if (asprintf(&variant, "%.*s/#%s#", (int)(slash - path),
				     path, slash + 1) < 0) {
				variant = NULL;
				unpkg_err_nomem(err);
				goto out;
			}
		}
		if (move_path(r, p, variant, 0, moved, aside, err) < 0 ||
		    move_path(r, p, path, 0, moved, aside, err) < 0)
			goto out;
	}
	ret = 0;
out:
	/* (dpkg removes the conffile before its variants: it names it) */
	if (ret < 0 && path != NULL)
		inst_err_not_removed(r, path, 1, err);
	free(path);
	free(variant);
	return ret;
}

/* Step 4 ends: the directories left in the list `kept` of `p` that
 * nothing else holds, deepest first, moved aside (into `moved`); dpkg's
 * warning for those not empty, but for one that holds such a directory
 * of its own.  0, or -1. */
static int purge_dirs(struct run *r, struct pkg *p, char **kept, size_t nkept,
		      struct unpkg_strmap *moved, struct aside *aside,
		      struct unpkg_err *err)
{
	char *left;		/* 1: a directory left there */
	const char *at = NULL;	/* the directory being removed */
	size_t i;
	int ret = -1;

	left = calloc(nkept != 0 ? nkept : 1, 1);
	if (left == NULL)
		return unpkg_err_nomem(err);
	for (i = nkept; i-- > 0;) {
		const char *base;
		struct stat st;
		int dfd, empty, there;

		if (strcmp(kept[i], "/.") == 0 ||
		    unpkg_db_file_owner(r->db, kept[i], p->key) != NULL)
			continue;
		at = kept[i];
		there = obsolete_lstat(r, kept[i], &st, err);
		if (there < 0)
			goto out;
		if (!there || !S_ISDIR(st.st_mode))
			continue;
		dfd = unpkg_root_open_parent(r->root, kept[i] + 1, &base, err);
		if (dfd < 0)
			goto out;
		/* empty but for what went aside */
		empty = obsolete_all_gone(dfd, base, kept[i], &aside->map, err);
		close(dfd);
		if (empty < 0)
			goto out;
		if (empty == 0) {
			if (!inst_keeps_below(kept, left, nkept, kept[i]))
				unpkg_event_emit(r->o->events,
						 UNPKG_EV_WARNING, p->key,
						 "while removing %s, directory "
						 "'%s' not empty so not "
						 "removed", p->key, kept[i]);
			left[i] = 1;
			continue;
		}
		if (move_path(r, p, kept[i], 1, moved, aside, err) < 0)
			goto out;
	}
	ret = 0;
out:
	if (ret < 0 && at != NULL)
		inst_err_not_removed(r, at, 0, err);
	free(left);
	return ret;
}

/* Step 4, purge: its conffiles and their variants, postrm purge, then
 * the directories left in its list that nothing else holds (dpkg's
 * warning for those not empty).  1 go on, 0 failed (config-files,
 * reported), -1 error. */
static int purge_files(struct run *r, struct pkg *p, int dir, char **kept,
		       size_t nkept, struct aside *aside, struct unpkg_err *err)
{
	const char *argv[] = { "purge", NULL };
	struct unpkg_commit_savepoint sp;
	struct unpkg_strmap moved;
	struct unpkg_err perr;
	char why[1024];
	size_t naside = aside->n;
	int ok, ret = -1;

	unpkg_strmap_init(&moved);
	unpkg_event_emit(r->o->events, UNPKG_EV_PROGRESS, p->key,
			 "Purging configuration files for %s (%s) ...",
			 p->key, RM(p)->version);
	unpkg_event_processing(r->o->events, "purge", p->key, RM(p)->arch,
			       RM(p)->version, NULL);
	/* dpkg notes a config-files package again as it forgets its
	 * configured version: its first status line of the run unless the
	 * command line named it (--pending) */
	if (p->old_state == UNPKG_STATUS_CONFIG_FILES)
		run_status_event(r, p, RM(p)->arch, RM(p)->version,
				 "config-files");
	if (unpkg_db_load_files(r->db, err) < 0)
		goto out;
	unpkg_commit_savepoint(r->commit, &sp);
	unpkg_err_init(&perr);
	if (purge_conffiles(r, p, &moved, aside, &perr) < 0) {
		/* its configuration forgotten, as dpkg began the purge */
		ret = files_unreached(r, p, &sp, aside, naside, &perr, err);
		if (ret == 0 && put_config_files(r, p, 1, err) < 0)
			ret = -1;
		goto out;
	}
	ok = maint_run_other(r, RM(p), "postrm", argv, why, sizeof(why), err);
	if (ok < 0 || unpkg_divert_load(r->divs, r->db, err) < 0)
		goto out;
	if (ok == 0) {
		script_failed(r, p, why);
		ret = purge_failed(r, p, dir, kept, nkept, err) < 0 ? -1 : 0;
		goto out;
	}
	/* the directories left: what the postrm purge did stays */
	unpkg_commit_savepoint(r->commit, &sp);
	naside = aside->n;
	if (purge_dirs(r, p, kept, nkept, &moved, aside, &perr) < 0) {
		ret = files_unreached(r, p, &sp, aside, naside, &perr, err);
		if (ret == 0 && purge_failed(r, p, dir, kept, nkept, err) < 0)
			ret = -1;
		goto out;
	}
	ret = 1;
out:
	unpkg_strmap_destroy(&moved);
	return ret;
}

/* Remove r->pkgs[at] as dpkg does, its states in memory.  0, or -1 on a
 * system error (a package that fails is reported and counted). */
static int remove_pkg(struct run *r, size_t at, struct aside *aside,
		      struct unpkg_err *err)
{
	static const char *const keep_cf[] = { "list", "postrm", NULL };
	struct pkg *p = &r->pkgs[at];
	struct deconf *d = RM(p);
	char **kept = NULL;
	size_t nkept = 0;
	int ok, dir, ret = -1;

	ok = check_pkg(r, at, err);
	if (ok <= 0)
		return ok;
	if (run_reading_database(r, 0, err) < 0)
		return -1;
	dir = unpkg_commit_dir(r->commit, r->admroot, "info", err);
	if (dir < 0)
		return -1;
	if (p->old_state != UNPKG_STATUS_CONFIG_FILES) {
		const char *conffiles = unpkg_para_get(&p->control,
						       "Conffiles");
		int keep;

		unpkg_event_emit(r->o->events, UNPKG_EV_PROGRESS, p->key,
				 "Removing %s (%s) ...", p->key, d->version);
		unpkg_event_processing(r->o->events, "remove", p->key,
				       d->arch, d->version, NULL);
		keep = (conffiles != NULL &&
			conffiles[strspn(conffiles, " \n")] != '\0') ||
		       has_info(r, dir, d->key, "postrm");
		/* dpkg activates them first, before the prerm */
		if (activate_declared(r, p, err) < 0)
			return -1;
		ok = prerm(r, p, err);
		if (ok <= 0)
			return ok;
		ok = remove_files(r, p, dir, keep, aside, &kept, &nkept, err);
		if (ok <= 0) {
			ret = ok;
			goto out;
		}
		if (infodb_remove(r, d->key, dir, keep_cf, err) < 0 ||
		    unpkg_triggers_set_interests(r->trig, d->key, NULL, 0,
						 err) < 0 ||
		    maint_other_state(r, d, "config-files", err) < 0)
			goto out;
		if (!keep) {
			/* nothing left: forgotten, its selection kept unless
			 * purged (dpkg has no purge step for it) */
			char *text = NULL;

			if (!p->upgrade &&
			    asprintf(&text, "Package: %s\nStatus: deinstall ok "
				     "not-installed\n%s%s%s", d->name,
				     d->arch ? "Architecture: " : "",
				     d->arch ? d->arch : "",
				     d->arch ? "\n" : "") < 0) {
				unpkg_err_nomem(err);
				goto out;
			}
			ok = run_put_reported(r, d->name, d->arch, text,
					      d->key, d->arch, NULL,
					      "not-installed", err);
			free(text);
			if (ok < 0 || infodb_remove(r, d->key, dir, NULL,
						    err) < 0)
				goto out;
			ret = 0;
			goto out;
		}
	} else if (unpkg_db_read_list(r->db, d->key, &kept, &nkept, err) < 0) {
		goto out;
	}
	if (!p->upgrade) {
		ret = 0;
		goto out;
	}
	ok = purge_files(r, p, dir, kept, nkept, aside, err);
	if (ok <= 0) {
		ret = ok;
		goto out;
	}
	if (infodb_remove(r, d->key, dir, NULL, err) < 0 ||
	    run_put_reported(r, d->name, d->arch, NULL, d->key, d->arch, NULL,
			     "not-installed", err) < 0)
		goto out;
	ret = 0;
out:
	unpkg_db_list_free(kept, nkept);
	return ret;
}

struct record_ctx {
	struct run *r;
	int staged;
};

/* The record's hook: the new database handed to the sync of the
 * removals. */
static int stage_db(void *ctx, struct unpkg_err *err)
{
	struct record_ctx *c = ctx;

	if (run_db_stage(c->r, err) < 0)
		return -1;
	c->staged = 1;
	return 0;
}

/* dpkg's queue reaches the places among `names` from *shown up to
 * `limit`: the selection line of each package of the run given there,
 * the warning of each name ignored there. */
static void reach(struct run *r, const char *const *names,
		  const char *ignored, const size_t *orig, size_t *shown,
		  size_t limit)
{
	size_t j;

	for (; *shown < limit; (*shown)++) {
		if (ignored[*shown])
			unpkg_event_emit(r->o->events, UNPKG_EV_WARNING,
					 names[*shown], "ignoring request to "
					 "remove %s which isn't installed",
					 names[*shown]);
		for (j = 0; j < r->npkgs; j++)
			if ((orig[j] & ~DEFERRED) == *shown)
				run_status_event(r, &r->pkgs[j],
						 RM(&r->pkgs[j])->arch,
						 RM(&r->pkgs[j])->version,
						 unpkg_status_name(
							 r->pkgs[j].old_state));
	}
}

int unpkg_remove(const struct unpkg_install_opts *o, const char *const *names,
		 size_t n, int purge, int pending, struct unpkg_err *err)
{
	struct record_ctx c = { NULL, 0 };
	struct aside aside = { NULL, 0, { 0 } };
	size_t *orig = NULL, places, shown = 0;
	char *ignored = NULL;
	const struct unpkg_commit_hooks h = {
		.renamed = stage_db,
		.ctx = &c,
	};
	struct unpkg_stats own = { 0 };
	struct run r;
	double t = unpkg_now();
	size_t i;
	int ret = -1;

	c.r = &r;
	unpkg_strmap_init(&aside.map);
	if (run_open(&r, o, &own, err) < 0)
		goto out;
	run_timed(&r, UNPKG_PHASE_PLAN, t);
	inst_sweep_removed(&r);
	unpkg_force_names(o->force, r.force_list, sizeof(r.force_list));
	places = pending ? unpkg_db_count(r.db) : n;
	orig = calloc(places != 0 ? places : 1, sizeof(*orig));
	ignored = calloc(n != 0 ? n : 1, 1);
	if (orig == NULL || ignored == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	if (select_pkgs(&r, names, n, purge, pending, orig, ignored, err) < 0)
		goto out;
	if (recover_all(&r, err) < 0 || order_pkgs(&r, orig, err) < 0)
		goto out;
	t = unpkg_now();
	if (mark_all(&r, err) < 0)
		goto out;
	run_timed(&r, UNPKG_PHASE_MARK, t);
	t = unpkg_now();
	for (i = 0; i < r.npkgs; i++) {
		/* what dpkg says of the names given, as its queue reaches
		 * them (a deferred package comes after them all) */
		if (!pending)
			reach(&r, names, ignored, orig, &shown,
			      orig[i] & DEFERRED ? n : orig[i] + 1);
		if (remove_pkg(&r, i, &aside, err) < 0)
			goto out;
		if (r.pkgs[i].state == PKG_OPENED)
			r.pkgs[i].state = PKG_INSTALLED;	/* processed */
	}
	if (!pending)
		reach(&r, names, ignored, orig, &shown, n);
	run_timed(&r, UNPKG_PHASE_EXTRACT, t);
	t = unpkg_now();
	/* the interest files that changed go with the record */
	if (r.db_dirty || r.npkgs > 0) {
		if (run_finish(&r, &h, err) < 0)
			goto out;	/* the files come back */
		/* The removals are done from here on (durable, or where
		 * the commits are ordered carried by the record's commit):
		 * a failed sync of the record must not bring the files back
		 * under a status that may already say they are gone (the
		 * mark stays durable: half-installed). */
		if ((c.staged ? run_db_publish(&r, err)
			      : r.db_dirty ? run_write_db(&r, err) : 0) < 0) {
			run_release(&r);
			goto out;
		}
		run_release(&r);
	}
	run_timed(&r, UNPKG_PHASE_RECORD, t);
	ret = r.failed;
out:
	maint_tmp_clean(&r);
	run_close(&r);
	unpkg_strmap_destroy(&aside.map);
	unpkg_db_list_free(aside.v, aside.n);
	free(orig);
	free(ignored);
	return ret;
}
