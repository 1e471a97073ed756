/* conflicts.c - the Conflicts and Breaks checks dpkg makes before it
 * unpacks a package: the new package's fields against the packages
 * present, and the fields of the packages present against the new one. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "install-impl.h"
#include "relation.h"

/* A package counts as present unless not installed or only its
 * configuration files are left. */
static int present(const struct unpkg_db_pkg *dp)
{
	const char *want, *flag, *status;

	return unpkg_db_pkg_status(dp, &want, &flag, &status) == 0 &&
	       strcmp(status, "not-installed") != 0 &&
	       strcmp(status, "config-files") != 0;
}

struct findings {
	char text[4096];	/* dpkg's "regarding" lines */
	size_t len;
	int conflicts, breaks;
	char broken[256];	/* the first package a Breaks names */
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
}

/* The relation as dpkg shows it: "x", "x (<< 2)". */
static char *spell(const struct unpkg_relation_alt *a)
{
	struct unpkg_relation rel = { (struct unpkg_relation_alt *)a, 1 };
	struct unpkg_relations one = { &rel, 1 };

	return unpkg_relations_format(&one);
}

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
	    inst_build_candidates(r, err) < 0)
		goto out;
	for (i = 0; i < rels.count; i++) {
		for (j = 0; j < rels.rels[i].count; j++) {
			const struct unpkg_relation_alt *a =
				&rels.rels[i].alts[j];
			const struct candidate *c;

			for (c = unpkg_strmap_get(&r->candidates, a->name);
			     c != NULL; c = c->next) {
				const char *v = unpkg_para_get(&c->pkg->para,
							       "Version");
				char *text;

				if (strcmp(c->pkg->name, p->name) == 0 ||
				    !present(c->pkg) ||
				    (a->op != UNPKG_REL_ANY &&
				     (c->version == NULL ||
				      !unpkg_relop_satisfied(a->op, c->version,
							     a->version))))
					continue;
				text = spell(a);
				found(f, breaks, c->pkg->key,
				      "\n %s %s %s\n  %s (version %s) "
				      "is present and installed.", p->key,
				      breaks ? "breaks" : "conflicts with",
				      text != NULL ? text : a->name,
				      c->pkg->key, v != NULL ? v : "?");
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

/* The fields of the packages present against the new package. */
static int reverse(struct run *r, struct pkg *p, struct findings *f,
		   struct unpkg_err *err)
{
	static const char *const fields[] = { "Conflicts", "Breaks" };
	const char *pv = unpkg_para_get(&p->control, "Provides");
	struct unpkg_relations prov, rels;
	size_t n = unpkg_db_count(r->db), i, k, x, y;
	int ret = -1;

	unpkg_relations_init(&prov);
	unpkg_relations_init(&rels);
	if (pv != NULL && unpkg_relations_parse(&prov, "Provides", pv, err) < 0)
		goto out;
	for (i = 0; i < n; i++) {
		const struct unpkg_db_pkg *q = unpkg_db_at(r->db, i);

		if (strcmp(q->name, p->name) == 0 || !present(q))
			continue;
		for (k = 0; k < 2; k++) {
			const char *value = unpkg_para_get(&q->para, fields[k]);
			struct unpkg_err ignored;

			if (value == NULL)
				continue;
			unpkg_err_init(&ignored);
			unpkg_relations_destroy(&rels);
			/* dpkg wrote it; what it cannot read forbids nothing */
			if (unpkg_relations_parse_lax(&rels, fields[k], value,
						      &ignored) < 0)
				continue;
			for (x = 0; x < rels.count; x++)
				for (y = 0; y < rels.rels[x].count; y++) {
					const struct unpkg_relation_alt *a =
						&rels.rels[x].alts[y];
					char *text;

					if (!names_new(p, &prov, a))
						continue;
					text = spell(a);
					found(f, k == 1, q->key,
					      "\n %s %s %s\n  %s "
					      "(version %s) is to be installed.",
					      q->key, k == 1 ? "breaks"
							     : "conflicts with",
					      text != NULL ? text : a->name,
					      p->key, p->version);
					free(text);
				}
		}
	}
	ret = 0;
out:
	unpkg_relations_destroy(&prov);
	unpkg_relations_destroy(&rels);
	return ret;
}

int inst_check_conflicts(struct run *r, struct pkg *p, struct unpkg_err *err)
{
	struct findings f = { .len = 0 };
	int force_c = (r->o->force & UNPKG_FORCE_CONFLICTS) != 0;
	int force_b = (r->o->force & UNPKG_FORCE_BREAKS) != 0;

	if (forward(r, p, "Conflicts", &f, err) < 0 ||
	    forward(r, p, "Breaks", &f, err) < 0 || reverse(r, p, &f, err) < 0)
		return -1;
	if (f.conflicts == 0 && f.breaks == 0)
		return 1;
	unpkg_event_emit(r->o->events, UNPKG_EV_NOTICE, p->key,
			 "regarding %s containing %s:%s", p->debpath, p->key,
			 f.text);
	if (f.conflicts > 0 && !force_c) {
		unpkg_err_set(err, UNPKG_ERR_CONFLICT,
			      "conflicting packages - not installing %s",
			      p->key);
		return 0;
	}
	if (f.breaks > 0 && !force_b) {
		unpkg_err_set(err, UNPKG_ERR_CONFLICT,
			      "installing %s would break %s, and\n"
			      "deconfiguration is not permitted "
			      "(--auto-deconfigure might help)", p->key,
			      f.broken);
		return 0;
	}
	if (f.conflicts > 0)
		unpkg_event_emit(r->o->events, UNPKG_EV_WARNING, p->key,
				 "ignoring conflict, may proceed anyway!");
	if (f.breaks > 0)
		unpkg_event_emit(r->o->events, UNPKG_EV_WARNING, p->key,
				 "ignoring breakage, may proceed anyway!");
	return 1;
}
