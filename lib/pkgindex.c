/* pkgindex.c - the candidate and Conflicts indexes of the database (see
 * pkgindex.h). */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "pkgindex.h"

int unpkg_pkg_present(const struct unpkg_db_pkg *dp)
{
	return unpkg_status_present(unpkg_db_pkg_state(dp));
}

const struct unpkg_db_pkg *unpkg_pkgindex_find_key(const struct unpkg_db *db,
						   const char *key)
{
	const char *colon = strchr(key, ':');
	char name[256];

	if (colon == NULL)
		return unpkg_db_find(db, key, NULL);
	snprintf(name, sizeof(name), "%.*s", (int)(colon - key), key);
	return unpkg_db_find(db, name, colon + 1);
}

/* --- the Conflicts index ------------------------------------------------- */

/* The Conflicts of every package present, parsed once per state of the
 * database (dropped with the candidates): name -> chain of entries. */
struct cindex_entry {
	size_t pkg;		/* database index of the package */
	size_t rels;		/* its parsed field in index->rels */
	size_t rel, alt;	/* the alternative naming `name` */
	size_t next;		/* the next entry of the chain + 1, or 0 */
};

struct pkgindex_conflicts {
	struct unpkg_strmap names;	/* name -> first entry + 1 */
	struct cindex_entry *v;
	size_t n, cap;
	struct unpkg_relations *rels;
	size_t nrels;
};

static void conflicts_free(struct unpkg_pkgindex *ix)
{
	struct pkgindex_conflicts *x = ix->conflicts;
	size_t i;

	if (x == NULL)
		return;
	unpkg_strmap_destroy(&x->names);
	for (i = 0; i < x->nrels; i++)
		unpkg_relations_destroy(&x->rels[i]);
	free(x->rels);
	free(x->v);
	free(x);
	ix->conflicts = NULL;
}

static int index_add(struct pkgindex_conflicts *x, size_t pkg, size_t rels,
		     size_t rel, size_t alt, struct unpkg_err *err)
{
	const char *name = x->rels[rels].rels[rel].alts[alt].name;
	struct cindex_entry *e;
	void *head = NULL;
	int ret;

	e = unpkg_grow(x->v, &x->cap, x->n + 1, sizeof(*e), 64);
	if (e == NULL)
		return unpkg_err_nomem(err);
	x->v = e;
	e = &x->v[x->n];
	e->pkg = pkg;
	e->rels = rels;
	e->rel = rel;
	e->alt = alt;
	e->next = 0;
	ret = unpkg_strmap_put(&x->names, name, (void *)(uintptr_t)(x->n + 1),
			       &head, err);
	if (ret < 0)
		return -1;
	if (ret > 0) {	/* after the head: the order does not matter */
		struct cindex_entry *h = &x->v[(uintptr_t)head - 1];

		e->next = h->next;
		h->next = x->n + 1;
	}
	x->n++;
	return 0;
}

static int build_conflicts(struct unpkg_pkgindex *ix, struct unpkg_err *err)
{
	size_t n = unpkg_db_count(ix->db), i, j, k;
	struct pkgindex_conflicts *x;

	if (ix->conflicts != NULL)
		return 0;
	x = calloc(1, sizeof(*x));
	if (x == NULL)
		return unpkg_err_nomem(err);
	unpkg_strmap_init(&x->names);
	ix->conflicts = x;
	x->rels = calloc(n != 0 ? n : 1, sizeof(*x->rels));
	if (x->rels == NULL)
		return unpkg_err_nomem(err);
	for (i = 0; i < n; i++) {
		const struct unpkg_db_pkg *q = unpkg_db_at(ix->db, i);
		const char *value = unpkg_para_get(&q->para, "Conflicts");
		struct unpkg_relations *rels = &x->rels[x->nrels];
		struct unpkg_err ignored;

		if (value == NULL || !unpkg_pkg_present(q))
			continue;
		unpkg_err_init(&ignored);
		unpkg_relations_init(rels);
		/* dpkg wrote it; what it cannot read forbids nothing */
		if (unpkg_relations_parse_lax(rels, "Conflicts", value,
					      &ignored) < 0)
			continue;
		x->nrels++;
		for (j = 0; j < rels->count; j++)
			for (k = 0; k < rels->rels[j].count; k++)
				if (index_add(x, i, x->nrels - 1, j, k, err) < 0)
					return -1;
	}
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct cindex_entry *x = *(const struct cindex_entry *const *)a;
	const struct cindex_entry *y = *(const struct cindex_entry *const *)b;

	if (x->pkg != y->pkg)
		return x->pkg < y->pkg ? -1 : 1;
	if (x->rel != y->rel)
		return x->rel < y->rel ? -1 : 1;
	return x->alt < y->alt ? -1 : x->alt > y->alt;
}

/* Collect the entries of the chain of `name` into *hits. */
static int collect(const struct pkgindex_conflicts *x, const char *name,
		   const struct cindex_entry ***hits, size_t *nhits,
		   size_t *cap, struct unpkg_err *err)
{
	uintptr_t i = (uintptr_t)unpkg_strmap_get(&x->names, name);

	for (; i != 0; i = x->v[i - 1].next) {
		const struct cindex_entry **v =
			unpkg_grow(*hits, cap, *nhits + 1, sizeof(*v), 16);

		if (v == NULL)
			return unpkg_err_nomem(err);
		*hits = v;
		(*hits)[(*nhits)++] = &x->v[i - 1];
	}
	return 0;
}

int unpkg_pkgindex_conflicts(struct unpkg_pkgindex *ix, const char *name,
			     const struct unpkg_relations *provides,
			     struct unpkg_conflict_hit **out, size_t *nout,
			     struct unpkg_err *err)
{
	const struct cindex_entry **hits = NULL;
	struct unpkg_conflict_hit *v = NULL;
	size_t nhits = 0, cap = 0, i, j, n = 0;
	int ret = -1;

	*out = NULL;
	*nout = 0;
	/* a stale index goes with the candidates */
	if (unpkg_pkgindex_build(ix, err) < 0 ||
	    build_conflicts(ix, err) < 0 ||
	    collect(ix->conflicts, name, &hits, &nhits, &cap, err) < 0)
		goto out;
	for (i = 0; provides != NULL && i < provides->count; i++)
		for (j = 0; j < provides->rels[i].count; j++)
			if (collect(ix->conflicts,
				    provides->rels[i].alts[j].name, &hits,
				    &nhits, &cap, err) < 0)
				goto out;
	if (nhits > 1)
		qsort(hits, nhits, sizeof(*hits), cmp_entry);
	v = calloc(nhits != 0 ? nhits : 1, sizeof(*v));
	if (v == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	for (i = 0; i < nhits; i++) {
		const struct cindex_entry *e = hits[i];

		if (i > 0 && hits[i - 1] == e)
			continue;
		v[n].pkg = unpkg_db_at(ix->db, e->pkg);
		v[n].alt = &ix->conflicts->rels[e->rels].rels[e->rel]
				    .alts[e->alt];
		v[n].dbindex = e->pkg;
		v[n].rel = e->rel;
		v[n].altindex = e->alt;
		n++;
	}
	*out = v;
	*nout = n;
	v = NULL;
	ret = 0;
out:
	free(v);
	free(hits);
	return ret;
}

/* --- the candidate index ------------------------------------------------- */

void unpkg_pkgindex_init(struct unpkg_pkgindex *x, const struct unpkg_db *db)
{
	memset(x, 0, sizeof(*x));
	x->db = db;
	unpkg_strmap_init(&x->candidates);
}

void unpkg_pkgindex_invalidate(struct unpkg_pkgindex *x)
{
	x->valid = 0;
}

void unpkg_pkgindex_destroy(struct unpkg_pkgindex *x)
{
	size_t i;

	unpkg_strmap_destroy(&x->candidates);
	for (i = 0; i < x->ncands; i++)
		free(x->cands[i]);
	free(x->cands);
	x->cands = NULL;
	x->ncands = 0;
	x->capcands = 0;
	for (i = 0; i < x->nprovides; i++)
		unpkg_relations_destroy(&x->provides[i]);
	free(x->provides);
	x->provides = NULL;
	x->nprovides = 0;
	conflicts_free(x);
}

static int add_candidate(struct unpkg_pkgindex *x, const char *name,
			 const struct unpkg_db_pkg *pkg, const char *version,
			 int provided, struct unpkg_err *err)
{
	struct unpkg_candidate *c, **grown;
	void *head = NULL;
	int ret;

	grown = unpkg_grow(x->cands, &x->capcands, x->ncands + 1,
			   sizeof(*grown), 256);
	if (grown == NULL)
		return unpkg_err_nomem(err);
	x->cands = grown;
	c = malloc(sizeof(*c));
	if (c == NULL)
		return unpkg_err_nomem(err);
	x->cands[x->ncands++] = c;
	c->pkg = pkg;
	c->version = version;
	c->provided = provided;
	ret = unpkg_strmap_put(&x->candidates, name, c, &head, err);
	if (ret < 0)
		return -1;
	/* an existing chain: link in after its head (the key stays) */
	c->next = NULL;
	if (ret > 0) {
		struct unpkg_candidate *h = head;

		c->next = h->next;
		h->next = c;
	}
	return 0;
}

int unpkg_pkgindex_build(struct unpkg_pkgindex *x, struct unpkg_err *err)
{
	size_t n = unpkg_db_count(x->db), i, j, k;

	if (x->valid)
		return 0;
	unpkg_pkgindex_destroy(x);
	x->provides = calloc(n != 0 ? n : 1, sizeof(*x->provides));
	if (x->provides == NULL)
		return unpkg_err_nomem(err);
	for (i = 0; i < n; i++) {
		const struct unpkg_db_pkg *dp = unpkg_db_at(x->db, i);
		const char *value = unpkg_para_get(&dp->para, "Provides");
		struct unpkg_relations *prov = &x->provides[x->nprovides];
		struct unpkg_err ignored;

		if (add_candidate(x, dp->name, dp,
				  unpkg_para_get(&dp->para, "Version"), 0,
				  err) < 0)
			return -1;
		if (value == NULL)
			continue;
		unpkg_err_init(&ignored);
		unpkg_relations_init(prov);
		/* dpkg wrote it; one it cannot read provides nothing */
		if (unpkg_relations_parse(prov, "Provides", value, &ignored) < 0)
			continue;
		x->nprovides++;
		for (j = 0; j < prov->count; j++)
			for (k = 0; k < prov->rels[j].count; k++) {
				const struct unpkg_relation_alt *a =
					&prov->rels[j].alts[k];

				if (add_candidate(x, a->name, dp,
						  a->op == UNPKG_REL_EQ
							  ? a->version : NULL,
						  1, err) < 0)
					return -1;
			}
	}
	x->valid = 1;
	return 0;
}

const struct unpkg_candidate *
unpkg_pkgindex_candidates(const struct unpkg_pkgindex *x, const char *name)
{
	return unpkg_strmap_get(&x->candidates, name);
}
