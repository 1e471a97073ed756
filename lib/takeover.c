/* takeover.c - files of installed packages taken over under Replaces (see takeover.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "infodb.h"
#include "install-impl.h"
#include "takeover.h"



/* Is `key` a package `p` removes (Conflicts with Replaces)? */
static int is_removal(const struct pkg *p, const char *key)
{
	size_t i;

	for (i = 0; i < p->nremovals; i++)
		if (strcmp(p->removals[i].key, key) == 0)
			return 1;
	return 0;
}

/* Does a Replaces field `rels` name package `name` at version `version`
 * (dpkg's does_replace: the version is the replaced package's)? */
static int rels_replace(const struct unpkg_relations *rels, const char *name,
			const char *version)
{
	size_t i, j;

	for (i = 0; i < rels->count; i++)
		for (j = 0; j < rels->rels[i].count; j++) {
			const struct unpkg_relation_alt *a =
				&rels->rels[i].alts[j];

			if (strcmp(a->name, name) == 0 &&
			    (a->op == UNPKG_REL_ANY ||
			     (version != NULL &&
			      unpkg_relop_satisfied(a->op, version,
						    a->version))))
				return 1;
		}
	return 0;
}

enum take_verdict takeover_verdict(const struct unpkg_relations *ours,
				   const char *owner, const char *owner_version,
				   const struct unpkg_relations *theirs,
				   const char *name, const char *version,
				   int removed)
{
	if (removed)
		return TAKE_REMOVED;
	if (ours != NULL && rels_replace(ours, owner, owner_version))
		return TAKE_REPLACE;
	if (theirs != NULL && rels_replace(theirs, name, version))
		return TAKE_KEEP;
	return TAKE_REFUSE;
}

/* Does `p` replace installed package `owner` (by name, its version
 * satisfied)?  Does `owner` replace `p` (at p's new version)?  Is it
 * removed in favour of `p`? */
static int replaces(struct take_ctx *c, const char *owner,
		    enum take_verdict *v, struct unpkg_err *err)
{
	const char *value = unpkg_para_get(&c->p->control, "Replaces");
	const struct unpkg_db_pkg *q = unpkg_pkgindex_find_key(c->r->db, owner);
	const char *have = q != NULL ? unpkg_para_get(&q->para, "Version")
				     : NULL;
	const char *theirs = q != NULL ? unpkg_para_get(&q->para, "Replaces")
				       : NULL;
	int removed = is_removal(c->p, owner), parsed = 0;
	struct unpkg_relations rels;
	struct unpkg_err ignored;

	*v = takeover_verdict(NULL, NULL, NULL, NULL, NULL, NULL, removed);
	if (q == NULL)
		return 0;
	if (value != NULL && !c->parsed) {
		if (unpkg_relations_parse(&c->repl, "Replaces", value, err) < 0)
			return -1;
		c->parsed = 1;
	}
	unpkg_relations_init(&rels);
	unpkg_err_init(&ignored);
	/* dpkg wrote it; what it cannot read replaces nothing */
	if (theirs != NULL &&
	    unpkg_relations_parse_lax(&rels, "Replaces", theirs, &ignored) == 0)
		parsed = 1;
	*v = takeover_verdict(c->parsed ? &c->repl : NULL, q->name, have,
			      parsed ? &rels : NULL, c->p->name, c->p->version,
			      removed);
	unpkg_relations_destroy(&rels);
	return 0;
}

static const char *version_of(struct run *r, const char *key)
{
	const struct unpkg_db_pkg *q = unpkg_pkgindex_find_key(r->db, key);
	const char *v = q != NULL ? unpkg_para_get(&q->para, "Version") : NULL;

	return v != NULL ? v : "";
}

/* The verdict for `owner`, decided (and announced, as dpkg does) the
 * first time one of its files turns up. */
static int verdict(struct take_ctx *c, const char *owner,
		   enum take_verdict *v, struct unpkg_err *err)
{
	uintptr_t known = (uintptr_t)unpkg_strmap_get(&c->verdicts, owner);
	char **grown, *key;

	if (known != 0) {
		*v = (enum take_verdict)known;
		return 0;
	}
	if (replaces(c, owner, v, err) < 0)
		return -1;
	grown = realloc(c->owners, (c->nowners + 1) * sizeof(*grown));
	if (grown == NULL)
		return unpkg_err_nomem(err);
	c->owners = grown;
	if ((key = strdup(owner)) == NULL)
		return unpkg_err_nomem(err);
	grown[c->nowners++] = key;
	if (unpkg_strmap_put(&c->verdicts, key, (void *)(uintptr_t)*v, NULL,
			     err) < 0)
		return -1;
	if (*v == TAKE_REPLACE)
		unpkg_event_emit(c->r->o->events, UNPKG_EV_PROGRESS, c->p->key,
				 "Replacing files in old package %s (%s) ...",
				 owner, version_of(c->r, owner));
	else if (*v == TAKE_KEEP)
		unpkg_event_emit(c->r->o->events, UNPKG_EV_PROGRESS, c->p->key,
				 "Replaced by files in installed package %s "
				 "(%s) ...", owner, version_of(c->r, owner));
	return 0;
}

void takeover_ctx_destroy(struct take_ctx *c)
{
	unpkg_relations_destroy(&c->repl);
	unpkg_strmap_destroy(&c->verdicts);
	unpkg_db_list_free(c->owners, c->nowners);
}

/* The extractor found `path` in installed package `owner`: dpkg lets a
 * package that Replaces the owner take it, and with --force-overwrite
 * any package, with a warning; the owner's list loses it.  If the owner
 * Replaces the package instead, the owner keeps it (2). */
int takeover_file(void *ctx, const char *owner, const char *path,
		  struct unpkg_err *err)
{
	struct take_ctx *c = ctx;
	struct pkg *p = c->p;
	enum take_verdict v;
	char **grown;

	if (verdict(c, owner, &v, err) < 0)
		return -1;
	if (v == TAKE_KEEP)
		return 2;
	if (v == TAKE_REFUSE) {
		if (!(c->r->o->force & UNPKG_FORCE_OVERWRITE))
			return 0;
		unpkg_event_emit(c->r->o->events, UNPKG_EV_WARNING, p->key,
				 "overriding problem because --force "
				 "enabled:");
		unpkg_event_emit(c->r->o->events, UNPKG_EV_WARNING, p->key,
				 "trying to overwrite '%s', which is also in "
				 "package %s %s", path, owner,
				 version_of(c->r, owner));
	}
	grown = realloc(p->taken, (p->ntaken + 2) * sizeof(*grown));
	if (grown == NULL)
		return unpkg_err_nomem(err);
	p->taken = grown;
	grown[p->ntaken] = strdup(owner);
	grown[p->ntaken + 1] = strdup(path);
	p->ntaken += 2;
	if (grown[p->ntaken - 2] == NULL || grown[p->ntaken - 1] == NULL)
		return unpkg_err_nomem(err);
	return 1;
}

/* 1 if `p` unpacked `path` (not a directory) and `p` or `owner` (a key)
 * diverts it. */
static int diverted_shared(const struct run *r, const struct pkg *p,
			   const char *owner, const char *path)
{
	uintptr_t i = (uintptr_t)unpkg_strmap_get(&p->files.index, path);

	return i != 0 && p->files.files[i - 1].type != UNPKG_ENTRY_DIR &&
	       unpkg_divert_by_either(r->divs, path, p->name, owner,
				      strcspn(owner, ":"));
}

/* Installed package `owner` has nothing left but directories: as in dpkg
 * it disappears (postrm disappear; its info/ files moved aside with the
 * transaction; its entry dropped, to be put back if `p` fails). */
static int disappear(struct run *r, struct pkg *p, const char *owner, int dir,
		     struct unpkg_err *err)
{
	const struct unpkg_db_pkg *q = unpkg_pkgindex_find_key(r->db, owner);
	char **grown, *text, *arch;
	size_t i;
	int ret;

	if (q == NULL)
		return 0;
	unpkg_event_emit(r->o->events, UNPKG_EV_PROGRESS, owner,
			 "(Noting disappearance of %s, which has been "
			 "completely replaced.)", owner);
	if (maint_disappear(r, q, p, err) < 0)
		return -1;
	q = unpkg_pkgindex_find_key(r->db, owner);
	text = q != NULL ? unpkg_para_format(&q->para) : NULL;
	grown = realloc(p->gone, (p->ngone + 2) * sizeof(*grown));
	if (q == NULL || text == NULL || grown == NULL) {
		free(text);
		if (grown != NULL)
			p->gone = grown;
		return unpkg_err_nomem(err);
	}
	p->gone = grown;
	grown[p->ngone] = strdup(q->name);
	grown[p->ngone + 1] = text;
	p->ngone += 2;
	if (grown[p->ngone - 2] == NULL)
		return unpkg_err_nomem(err);
	/* q goes with its entry: its name and arch are copied first */
	arch = q->arch[0] != '\0' ? strdup(q->arch) : NULL;
	if (q->arch[0] != '\0' && arch == NULL)
		return unpkg_err_nomem(err);
	ret = run_put(r, p->gone[p->ngone - 2], arch, NULL, err);
	free(arch);
	if (ret < 0 ||
	    unpkg_triggers_set_interests(r->trig, owner, NULL, 0, err) < 0)
		return -1;
	/* unpacked earlier in this run: gone, it is not configured (it was
	 * committed on its own before `p` was staged) */
	for (i = 0; i < r->npkgs; i++)
		if (r->pkgs[i].state == PKG_UNPACKED &&
		    strcmp(r->pkgs[i].key, owner) == 0)
			r->pkgs[i].state = PKG_FAILED;
	return infodb_remove(r, owner, dir, NULL, err);
}

/* The owners of the files `p` took over lose them from their lists, as
 * in dpkg; the new lists are staged in the record hook (a barrier and
 * rename pass of their own). */
int takeover_stage_taken(struct run *r, struct pkg *p, struct unpkg_err *err)
{
	size_t i, j, k;
	int dir = -1;

	for (i = 0; i < p->ntaken; i += 2) {
		const char *owner = p->taken[i];
		struct unpkg_buf list = { 0 };
		char **paths = NULL;
		size_t n = 0;
		int ret = 0, keeps = 0;

		for (j = 0; j < i && strcmp(p->taken[j], owner) != 0; j += 2)
			;
		if (j < i || is_removal(p, owner))
			continue;	/* done, or its removal lists it */
		if (dir < 0)
			dir = unpkg_commit_dir(r->commit, r->admroot, "info",
					       err);
		if (dir < 0 ||
		    unpkg_db_read_list(r->db, owner, &paths, &n, err) < 0)
			return -1;
		for (k = 0; k < n && ret == 0; k++) {
			int gone = 0;

			for (j = i; j < p->ntaken && !gone; j += 2)
				gone = strcmp(p->taken[j], owner) == 0 &&
				       strcmp(p->taken[j + 1], paths[k]) == 0;
			/* a file of p's that one of them diverts: dpkg
			 * drops it from the list it rewrites, but it is
			 * not the same file and keeps the owner */
			if (!gone && diverted_shared(r, p, owner, paths[k])) {
				keeps = 1;
				continue;
			}
			if (gone)
				continue;
			ret = unpkg_buf_printf(&list, err, "%s\n", paths[k]);
			/* as in dpkg, any path `p` does not ship keeps the
			 * owner (a directory of its own, a file deleted by
			 * the administrator, a conffile not configured yet);
			 * what is left in common are directories */
			if (strcmp(paths[k], "/.") != 0 &&
			    unpkg_strmap_get(&p->files.index, paths[k]) == NULL)
				keeps = 1;
		}
		if (ret == 0 && !keeps)
			ret = disappear(r, p, owner, dir, err);
		else if (ret == 0)
			ret = infodb_stage(r, owner, dir, "list",
					   list.s != NULL ? list.s : "", list.len,
					   0644, err);
		unpkg_buf_free(&list);
		unpkg_db_list_free(paths, n);
		if (ret < 0)
			return -1;
	}
	return 0;
}
