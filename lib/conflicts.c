/* conflicts.c - the Conflicts and Breaks checks dpkg makes before it
 * unpacks a package: the new package's fields against the packages
 * present, and the fields of the packages present against the new one. */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "install-impl.h"
#include "relation.h"
#include "stanza.h"

/* A Breaks of the new package only concerns a configured package
 * (installed, or with triggers to process): dpkg unpacks over an unpacked
 * or half-configured one, whose configuration then fails. */
static int breakable(const struct unpkg_db_pkg *dp)
{
	return unpkg_status_configured(unpkg_db_pkg_state(dp));
}

/* The state of a package as dpkg words it in "is present and ...". */
static const char *status_words(const struct unpkg_db_pkg *dp)
{
	static const char *const words[][2] = {
		{ "half-installed",
		  "broken due to failed removal or installation" },
		{ "unpacked", "unpacked but not configured" },
		{ "half-configured", "broken due to postinst failure" },
		{ "triggers-awaited",
		  "awaiting trigger processing by another package" },
		{ "triggers-pending", "triggered" },
	};
	const char *want, *flag, *status;
	size_t i;

	if (unpkg_db_pkg_status(dp, &want, &flag, &status) < 0)
		return "installed";
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcmp(status, words[i][0]) == 0)
			return words[i][1];
	return "installed";
}

struct findings {
	char text[4096];	/* dpkg's "regarding" lines */
	size_t len;
	int conflicts, breaks;
	char broken[256];	/* the first package a Breaks names */
	/* the packages the Breaks name, once each (keys, malloc'd) */
	char **victims;
	size_t nvictims;
	int nomem;
};

static void found(struct findings *f, int breaks, const char *broken,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void found(struct findings *f, int breaks, const char *broken,
		  const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(f->text + f->len, sizeof(f->text) - f->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		f->len += (size_t)n < sizeof(f->text) - f->len
				  ? (size_t)n : sizeof(f->text) - f->len - 1;
	if (breaks && f->breaks++ == 0)
		snprintf(f->broken, sizeof(f->broken), "%s", broken);
	else if (!breaks)
		f->conflicts++;
	if (breaks) {
		size_t i;
		char **v;

		for (i = 0; i < f->nvictims; i++)
			if (strcmp(f->victims[i], broken) == 0)
				return;
		v = realloc(f->victims, (f->nvictims + 1) * sizeof(*v));
		if (v == NULL || (v[f->nvictims] = strdup(broken)) == NULL) {
			if (v != NULL)
				f->victims = v;
			f->nomem = 1;
			return;
		}
		f->victims = v;
		f->nvictims++;
	}
}

/* The relation as dpkg shows it: "x", "x (<< 2)". */
static char *spell(const struct unpkg_relation_alt *a)
{
	struct unpkg_relation rel = { (struct unpkg_relation_alt *)a, 1 };
	struct unpkg_relations one = { &rel, 1 };

	return unpkg_relations_format(&one);
}

/* Is `q` planned for removal in favour of `p`? */
static int removing(const struct pkg *p, const struct unpkg_db_pkg *q)
{
	size_t i;

	for (i = 0; i < p->nremovals; i++)
		if (strcmp(p->removals[i].key, q->key) == 0)
			return 1;
	return 0;
}

static int plan_removal(struct run *r, struct pkg *p,
			const struct unpkg_db_pkg *q, struct unpkg_err *err);

/* The new package's own field against the packages present (itself,
 * its other versions, excepted). */
static int forward(struct run *r, struct pkg *p, const char *field,
		   struct findings *f, struct unpkg_err *err)
{
	const char *value = unpkg_para_get(&p->control, field);
	int breaks = strcmp(field, "Breaks") == 0;
	struct unpkg_relations rels;
	size_t i, j;
	int ret = -1;

	if (value == NULL)
		return 0;
	unpkg_relations_init(&rels);
	if (unpkg_relations_parse(&rels, field, value, err) < 0 ||
	    unpkg_pkgindex_build(&r->index, err) < 0)
		goto out;
	for (i = 0; i < rels.count; i++) {
		for (j = 0; j < rels.rels[i].count; j++) {
			const struct unpkg_relation_alt *a =
				&rels.rels[i].alts[j];
			const struct unpkg_candidate *c;

			for (c = unpkg_pkgindex_candidates(&r->index, a->name);
			     c != NULL; c = c->next) {
				const char *v = unpkg_para_get(&c->pkg->para,
							       "Version");
				char *text;

				int fix;

				if (strcmp(c->pkg->name, p->name) == 0 ||
				    !(breaks ? breakable(c->pkg)
					     : unpkg_pkg_present(c->pkg)) ||
				    (a->op != UNPKG_REL_ANY &&
				     (c->version == NULL ||
				      !unpkg_relop_satisfied(a->op, c->version,
							     a->version))) ||
				    removing(p, c->pkg))
					continue;
				if (!breaks) {
					fix = plan_removal(r, p, c->pkg, err);
					if (fix < 0)
						goto out;
					if (fix > 0)
						continue;
				}
				text = spell(a);
				found(f, breaks, c->pkg->key,
				      "\n %s %s %s\n  %s (version %s) "
				      "is present and %s.", p->key,
				      breaks ? "breaks" : "conflicts with",
				      text != NULL ? text : a->name,
				      c->pkg->key, v != NULL ? v : "?",
				      status_words(c->pkg));
				free(text);
			}
		}
	}
	ret = 0;
out:
	unpkg_relations_destroy(&rels);
	return ret;
}

/* Does `a` name the new package, by its name or one of its Provides? */
static int names_new(const struct pkg *p, const struct unpkg_relations *prov,
		     const struct unpkg_relation_alt *a)
{
	size_t i, j;

	if (strcmp(a->name, p->name) == 0)
		return a->op == UNPKG_REL_ANY ||
		       unpkg_relop_satisfied(a->op, p->version, a->version);
	for (i = 0; i < prov->count; i++)
		for (j = 0; j < prov->rels[i].count; j++) {
			const struct unpkg_relation_alt *pv =
				&prov->rels[i].alts[j];

			if (strcmp(pv->name, a->name) != 0)
				continue;
			if (a->op == UNPKG_REL_ANY ||
			    (pv->op == UNPKG_REL_EQ &&
			     unpkg_relop_satisfied(a->op, pv->version,
						   a->version)))
				return 1;
		}
	return 0;
}

/* The Conflicts of the packages present against the new package (dpkg
 * looks at their Breaks only when it configures: see
 * inst_check_breakers()), in the order of the database. */
static int reverse(struct run *r, struct pkg *p, struct findings *f,
		   struct unpkg_err *err)
{
	const char *pv = unpkg_para_get(&p->control, "Provides");
	struct unpkg_conflict_hit *hits = NULL;
	size_t nhits = 0, i;
	struct unpkg_relations prov;
	int ret = -1;

	unpkg_relations_init(&prov);
	if ((pv != NULL &&
	     unpkg_relations_parse(&prov, "Provides", pv, err) < 0) ||
	    unpkg_pkgindex_conflicts(&r->index, p->name, &prov, &hits, &nhits,
				     err) < 0)
		goto out;
	for (i = 0; i < nhits; i++) {
		const struct unpkg_db_pkg *q = hits[i].pkg;
		const struct unpkg_relation_alt *a = hits[i].alt;
		char *text;
		int fix;

		if (strcmp(q->name, p->name) == 0 || !names_new(p, &prov, a) ||
		    removing(p, q))
			continue;
		fix = plan_removal(r, p, q, err);
		if (fix < 0)
			goto out;
		if (fix > 0)
			continue;
		text = spell(a);
		found(f, 0, q->key,
		      "\n %s conflicts with %s\n  %s (version %s) is to be "
		      "installed.", q->key, text != NULL ? text : a->name,
		      p->key, p->version);
		free(text);
	}
	ret = 0;
out:
	free(hits);
	unpkg_relations_destroy(&prov);
	return ret;
}

/* Append installed package `q` (its identity and stanza, to put back) to
 * a list of packages deconfigured or removed for another. */
static int deconf_add(struct deconf **v, size_t *n,
		      const struct unpkg_db_pkg *q, struct unpkg_err *err)
{
	const char *version = unpkg_para_get(&q->para, "Version");
	struct deconf *grown, *d;

	grown = realloc(*v, (*n + 1) * sizeof(*grown));
	if (grown == NULL)
		return unpkg_err_nomem(err);
	*v = grown;
	d = &grown[(*n)++];
	memset(d, 0, sizeof(*d));
	d->name = strdup(q->name);
	d->arch = q->arch[0] != '\0' ? strdup(q->arch) : NULL;
	d->key = strdup(q->key);
	d->version = strdup(version != NULL ? version : "");
	d->stanza = unpkg_para_format(&q->para);
	if (d->name == NULL || (q->arch[0] != '\0' && d->arch == NULL) ||
	    d->key == NULL || d->version == NULL || d->stanza == NULL)
		return unpkg_err_nomem(err);
	return 0;
}

/* --auto-deconfigure: the packages `p` breaks are deconfigured before it
 * is unpacked, as dpkg 1.21 does (essential ones too). */
static int plan_deconfigure(struct run *r, struct pkg *p,
			    const struct findings *f, struct unpkg_err *err)
{
	size_t i;

	for (i = 0; i < f->nvictims; i++) {
		const struct unpkg_db_pkg *q = unpkg_pkgindex_find_key(r->db, f->victims[i]);

		if (q == NULL)
			continue;
		unpkg_event_emit(r->o->events, UNPKG_EV_NOTICE, p->key,
				 "considering deconfiguration of %s, which "
				 "would be broken by installation of %s ...",
				 q->key, p->key);
		if (deconf_add(&p->deconf, &p->ndeconf, q, err) < 0)
			return -1;
		unpkg_event_emit(r->o->events, UNPKG_EV_NOTICE, p->key,
				 "yes, will deconfigure %s (broken by %s)",
				 q->key, p->key);
	}
	return 0;
}

int inst_check_conflicts(struct run *r, struct pkg *p, struct unpkg_err *err)
{
	struct findings f = { .len = 0 };
	int force_c = (r->o->force & UNPKG_FORCE_CONFLICTS) != 0;
	int force_b = (r->o->force & UNPKG_FORCE_BREAKS) != 0;
	int ret = -1;

	if (forward(r, p, "Conflicts", &f, err) < 0 ||
	    forward(r, p, "Breaks", &f, err) < 0 || reverse(r, p, &f, err) < 0)
		goto out;
	if (f.nomem) {
		unpkg_err_nomem(err);
		goto out;
	}
	ret = 1;
	if (f.conflicts == 0 && f.breaks == 0)
		goto out;
	if (f.conflicts == 0 && !force_b && r->o->auto_deconfigure) {
		ret = plan_deconfigure(r, p, &f, err) < 0 ? -1 : 1;
		goto out;
	}
	unpkg_event_emit(r->o->events, UNPKG_EV_NOTICE, p->key,
			 "regarding %s containing %s:%s", p->debshown, p->key,
			 f.text);
	ret = 0;
	if (f.conflicts > 0 && !force_c) {
		unpkg_err_set(err, UNPKG_ERR_CONFLICT,
			      "conflicting packages - not installing %s",
			      p->key);
		goto out;
	}
	if (f.breaks > 0 && !force_b) {
		unpkg_err_set(err, UNPKG_ERR_CONFLICT,
			      "installing %s would break %s, and\n"
			      "deconfiguration is not permitted "
			      "(--auto-deconfigure might help)", p->key,
			      f.broken);
		goto out;
	}
	ret = 1;
	if (f.conflicts > 0)
		unpkg_event_emit(r->o->events, UNPKG_EV_WARNING, p->key,
				 "ignoring conflict, may proceed anyway!");
	if (f.breaks > 0)
		unpkg_event_emit(r->o->events, UNPKG_EV_WARNING, p->key,
				 "ignoring breakage, may proceed anyway!");
out:
	unpkg_db_list_free(f.victims, f.nvictims);
	return ret;
}

/* Does the value of field `value` mention `name` at all (a cheap test
 * before parsing)? */
static int mentions(const char *value, const char *name)
{
	size_t n = strlen(name);
	const char *s;

	for (s = strstr(value, name); s != NULL; s = strstr(s + 1, name))
		if ((s == value || strchr(" ,|\t\n", s[-1]) != NULL) &&
		    strchr(" ,|(:\t\n", s[n]) != NULL)
			return 1;
	return 0;
}

int inst_check_breakers(struct run *r, const struct pkg *p, char *why,
			size_t whylen, struct unpkg_err *err)
{
	const char *pv = unpkg_para_get(&p->control, "Provides");
	size_t n = unpkg_db_count(r->db), i, x, y, used = strlen(why);
	struct unpkg_relations prov, rels;
	int ok = 1;

	unpkg_relations_init(&prov);
	unpkg_relations_init(&rels);
	if (pv != NULL && unpkg_relations_parse(&prov, "Provides", pv, err) < 0) {
		unpkg_relations_destroy(&prov);
		return -1;
	}
	for (i = 0; i < n; i++) {
		const struct unpkg_db_pkg *q = unpkg_db_at(r->db, i);
		const char *value = unpkg_para_get(&q->para, "Breaks");
		const char *v;
		struct unpkg_err ignored;
		size_t j, k, hit;

		if (value == NULL || strcmp(q->name, p->name) == 0 ||
		    !unpkg_status_present(unpkg_db_pkg_state(q)) ||
		    unpkg_db_pkg_state(q) == UNPKG_STATUS_HALF_INSTALLED)
			continue;
		hit = mentions(value, p->name);
		for (j = 0; j < prov.count && !hit; j++)
			for (k = 0; k < prov.rels[j].count && !hit; k++)
				hit = mentions(value, prov.rels[j].alts[k].name);
		if (!hit)
			continue;
		unpkg_err_init(&ignored);
		unpkg_relations_destroy(&rels);
		if (unpkg_relations_parse_lax(&rels, "Breaks", value, &ignored) <
		    0)
			continue;
		v = unpkg_para_get(&q->para, "Version");
		for (x = 0; x < rels.count; x++)
			for (y = 0; y < rels.rels[x].count; y++) {
				const struct unpkg_relation_alt *a =
					&rels.rels[x].alts[y];
				char *text;

				if (!names_new(p, &prov, a))
					continue;
				ok = 0;
				text = spell(a);
				used += (size_t)snprintf(
					why + used, used < whylen ? whylen - used : 0,
					"\n %s (%s) breaks %s and is %s.",
					q->key, v != NULL ? v : "?",
					text != NULL ? text : a->name,
					status_words(q));
				if (a->op != UNPKG_REL_ANY)
					used += (size_t)snprintf(
						why + used,
						used < whylen ? whylen - used : 0,
						"\n  Version of %s to be "
						"configured is %s.", p->key,
						p->version);
				free(text);
			}
	}
	unpkg_relations_destroy(&rels);
	unpkg_relations_destroy(&prov);
	return ok;
}

/* Does Replaces value `value` (may be NULL) replace `name` at `version`?
 * Only then can the two packages share a path. */
static int replaces_version(const char *value, const char *name,
			    const char *version)
{
	struct unpkg_relations rels;
	struct unpkg_err ignored;
	size_t i, j;
	int yes = 0;

	if (value == NULL || !mentions(value, name))
		return 0;
	unpkg_relations_init(&rels);
	unpkg_err_init(&ignored);
	if (unpkg_relations_parse_lax(&rels, "Replaces", value, &ignored) == 0)
		for (i = 0; i < rels.count && !yes; i++)
			for (j = 0; j < rels.rels[i].count && !yes; j++) {
				const struct unpkg_relation_alt *a =
					&rels.rels[i].alts[j];

				yes = strcmp(a->name, name) == 0 &&
				      unpkg_relop_satisfied(a->op, version,
							    a->version);
			}
	unpkg_relations_destroy(&rels);
	return yes;
}

int inst_replaces_staged(const struct run *r, const struct pkg *p)
{
	const char *mine = unpkg_para_get(&p->control, "Replaces");
	size_t i;

	for (i = 0; i < r->npkgs; i++) {
		const struct pkg *q = &r->pkgs[i];

		/* with --force-overwrite any shared path passes, as in
		 * dpkg: the run is committed package by package then */
		if (q->state == PKG_EXTRACTED &&
		    ((r->o->force & UNPKG_FORCE_OVERWRITE) ||
		     replaces_version(mine, q->name, q->version) ||
		     replaces_version(unpkg_para_get(&q->control, "Replaces"),
				      p->name, p->version)))
			return 1;
	}
	return 0;
}

/* Is alternative `a` of a dependency met without `gone` (to be removed):
 * by another package installed, or by the new package `p`? */
static int met_without(const struct run *r, const struct pkg *p,
		       const struct unpkg_relations *prov,
		       const struct unpkg_db_pkg *gone,
		       const struct unpkg_relation_alt *a)
{
	const struct unpkg_candidate *c;

	if (names_new(p, prov, a))
		return 1;
	for (c = unpkg_pkgindex_candidates(&r->index, a->name); c != NULL;
	     c = c->next) {
		if (c->pkg == gone ||
		    !unpkg_status_configured(unpkg_db_pkg_state(c->pkg)))
			continue;
		if (a->op == UNPKG_REL_ANY ||
		    (c->version != NULL &&
		     unpkg_relop_satisfied(a->op, c->version, a->version)))
			return 1;
	}
	return 0;
}

/* The first dependency of a package present that removing `q` breaks,
 * in dpkg's words (" d depends on q\n  q is to be removed."), into
 * `why`: 1 one found, 0 none, -1 error.  First in dpkg's list of the
 * packages depending on `q`, which it builds by putting each relation in
 * front as it reads the status file: the last package first, its
 * Pre-Depends (written after its Depends) before its Depends, the last
 * relation of a field first. */
static int broken_by_removal(struct run *r, const struct pkg *p,
			     const struct unpkg_db_pkg *q,
			     const struct unpkg_relations *prov, char *why,
			     size_t whylen, struct unpkg_err *err)
{
	static const char *const fields[] = { "Pre-Depends", "Depends" };
	static const char *const verbs[] = { "pre-depends on", "depends on" };
	size_t i, f, j, k;
	int found = 0;

	if (unpkg_pkgindex_build(&r->index, err) < 0)
		return -1;
	for (i = unpkg_db_count(r->db); i-- > 0 && !found;) {
		const struct unpkg_db_pkg *d = unpkg_db_at(r->db, i);
		struct unpkg_relations rels[2];
		struct unpkg_err ignored;
		int hit[2];

		if (d == q || !unpkg_pkg_present(d))
			continue;
		for (f = 0; f < 2; f++) {
			const char *value = unpkg_para_get(&d->para, fields[f]);

			hit[f] = value != NULL && mentions(value, q->name);
		}
		if (!hit[0] && !hit[1])
			continue;
		unpkg_err_init(&ignored);
		/* dpkg wrote them; what it cannot read needs nothing */
		(void)unpkg_para_depends(&d->para, 0, rels, &ignored);
		for (f = 0; f < 2 && !found; f++) {
			if (!hit[f])
				continue;
			for (j = rels[f].count; j-- > 0 && !found;) {
				const struct unpkg_relation *g = &rels[f].rels[j];
				struct unpkg_relations one = {
					(struct unpkg_relation *)g, 1
				};
				int names = 0, met = 0;
				size_t used;
				char *text;

				for (k = 0; k < g->count; k++) {
					if (strcmp(g->alts[k].name, q->name) == 0)
						names = 1;
					else if (met_without(r, p, prov, q,
							     &g->alts[k]))
						met = 1;
				}
				if (!names || met)
					continue;
				found = 1;
				text = unpkg_relations_format(&one);
				used = (size_t)snprintf(why, whylen,
							" %s %s %s", d->key,
							verbs[f],
							text != NULL ? text
								     : q->name);
				free(text);
				for (k = 0; k < g->count && used < whylen; k++)
					used += (size_t)snprintf(
						why + used, whylen - used,
						strcmp(g->alts[k].name,
						       q->name) == 0
							? "\n  %s is to be removed."
							: "\n  Package %s is not "
							  "installed.",
						g->alts[k].name);
			}
		}
		unpkg_para_depends_destroy(rels);
	}
	return found;
}

/* A Conflicts between `p` and package `q` present that dpkg resolves by
 * removing `q` after `p` is unpacked: `p` Replaces `q` (or `q` is
 * selected for removal), `q` is neither essential nor protected, nothing
 * that stays depends on it.  1: planned (p->removals), 0: not (a
 * conflict), -1: error. */
static int plan_removal(struct run *r, struct pkg *p,
			const struct unpkg_db_pkg *q, struct unpkg_err *err)
{
	const char *want, *flag, *status, *v, *pv;
	const char *essential = unpkg_para_get(&q->para, "Essential");
	const char *protect = unpkg_para_get(&q->para, "Protected");
	struct unpkg_relations prov;
	char why[2048];
	int broken = 0;

	if (unpkg_db_pkg_status(q, &want, &flag, &status) < 0)
		return 0;
	v = unpkg_para_get(&q->para, "Version");
	if (((strcmp(want, "install") == 0 || strcmp(want, "hold") == 0) &&
	     (v == NULL ||
	      !replaces_version(unpkg_para_get(&p->control, "Replaces"),
				q->name, v))) ||
	    (essential != NULL && strcmp(essential, "yes") == 0 &&
	     !(r->o->force & UNPKG_FORCE_REMOVE_ESSENTIAL)) ||
	    (protect != NULL && strcmp(protect, "yes") == 0 &&
	     !(r->o->force & UNPKG_FORCE_REMOVE_PROTECTED)))
		return 0;
	unpkg_event_emit(r->o->events, UNPKG_EV_NOTICE, p->key,
			 "considering removing %s in favour of %s ...",
			 q->key, p->key);
	if (!unpkg_status_configured(unpkg_db_pkg_state(q))) {
		unpkg_event_emit(r->o->events, UNPKG_EV_NOTICE, p->key,
				 "%s is not properly installed; ignoring any "
				 "dependencies on it", q->key);
	} else {
		pv = unpkg_para_get(&p->control, "Provides");
		unpkg_relations_init(&prov);
		if (pv != NULL &&
		    unpkg_relations_parse(&prov, "Provides", pv, err) < 0) {
			unpkg_relations_destroy(&prov);
			return -1;
		}
		broken = broken_by_removal(r, p, q, &prov, why, sizeof(why),
					   err);
		unpkg_relations_destroy(&prov);
		if (broken < 0)
			return -1;
		if (broken && (r->o->force & UNPKG_FORCE_DEPENDS)) {
			unpkg_event_emit(r->o->events, UNPKG_EV_WARNING,
					 p->key, "ignoring dependency problem "
					 "with removal of %s:\n%s", q->key,
					 why);
			broken = 0;
		}
		if (broken) {
			unpkg_event_emit(r->o->events, UNPKG_EV_NOTICE, p->key,
					 "no, cannot proceed with removal of "
					 "%s (--auto-deconfigure will help):"
					 "\n%s\n", q->key, why);
			return 0;
		}
	}
	if (strcmp(flag, "reinstreq") == 0 &&
	    !(r->o->force & UNPKG_FORCE_REMOVE_REINSTREQ)) {
		unpkg_event_emit(r->o->events, UNPKG_EV_NOTICE, p->key,
				 "package %s requires reinstallation, will "
				 "not remove", q->key);
		return 0;
	}
	if (deconf_add(&p->removals, &p->nremovals, q, err) < 0)
		return -1;
	unpkg_event_emit(r->o->events, UNPKG_EV_NOTICE, p->key,
			 "yes, will remove %s in favour of %s", q->key, p->key);
	return 1;
}
