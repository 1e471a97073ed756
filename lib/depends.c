/* depends.c - dependency satisfaction against the database and the run (see depends.h). */
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

#include "depends.h"
#include "install-impl.h"

/* Is package `dp` usable for dependencies: installed, or (when `run_ok`)
 * unpacked by this run? */
static int usable(const struct run *r, const struct unpkg_db_pkg *dp,
		  int run_ok)
{
	enum unpkg_status st = unpkg_db_pkg_state(dp);
	size_t i;

	if (st == UNPKG_STATUS_INVALID)
		return 0;
	if (st == UNPKG_STATUS_INSTALLED)
		return 1;
	for (i = 0; run_ok && i < r->npkgs; i++)
		if (r->pkgs[i].state >= PKG_UNPACKED &&
		    strcmp(r->pkgs[i].key, dp->key) == 0)
			return 1;
	return 0;
}

int depends_alt_met(const struct unpkg_relation_alt *alt,
		    const struct unpkg_candidate *c,
		    int (*usable_fn)(void *ctx, const struct unpkg_db_pkg *dp),
		    void *ctx)
{
	for (; c != NULL; c = c->next) {
		if (!usable_fn(ctx, c->pkg))
			continue;
		if (alt->op == UNPKG_REL_ANY)
			return 1;
		if (c->version != NULL &&
		    unpkg_relop_satisfied(alt->op, c->version, alt->version))
			return 1;
	}
	return 0;
}

struct usable_ctx {
	const struct run *r;
	int run_ok;
};

static int usable_cb(void *ctx, const struct unpkg_db_pkg *dp)
{
	const struct usable_ctx *u = ctx;

	return usable(u->r, dp, u->run_ok);
}

/* Is `alt` met by a usable package, directly or through Provides? */
static int alt_satisfied(const struct run *r,
			 const struct unpkg_relation_alt *alt, int run_ok)
{
	struct usable_ctx u = { r, run_ok };

	return depends_alt_met(alt,
			       unpkg_pkgindex_candidates(&r->index, alt->name),
			       usable_cb, &u);
}

/* Check one relationship field; describe what is missing in `why`. */
int depends_check(struct run *r, const struct pkg *p,
		  const char *field, const char *verb, int run_ok,
		  char *why, size_t whylen, struct unpkg_err *err)
{
	const char *value = unpkg_para_get(&p->control, field);
	struct unpkg_relations rels;
	size_t i, j, used = strlen(why);
	/* configuring: the Breaks of the others count too, after the
	 * dependencies, as in dpkg */
	int ok = 1, breakers = run_ok && strcmp(field, "Depends") == 0;

	if (value == NULL)
		return breakers ? inst_check_breakers(r, p, why, whylen, err)
				: 1;
	if (unpkg_pkgindex_build(&r->index, err) < 0)
		return -1;
	unpkg_relations_init(&rels);
	if (unpkg_relations_parse(&rels, field, value, err) < 0) {
		unpkg_relations_destroy(&rels);
		return -1;
	}
	for (i = 0; i < rels.count; i++) {
		struct unpkg_relations one = { .rels = &rels.rels[i], .count = 1 };
		char *text;
		int met = 0;

		for (j = 0; j < rels.rels[i].count && !met; j++)
			met = alt_satisfied(r, &rels.rels[i].alts[j], run_ok);
		if (met)
			continue;
		ok = 0;
		text = unpkg_relations_format(&one);
		used += (size_t)snprintf(why + used, used < whylen ? whylen - used : 0,
					 "\n %s %s %s; however:", p->key, verb,
					 text != NULL ? text : "?");
		free(text);
		for (j = 0; j < rels.rels[i].count && used < whylen; j++)
			used += (size_t)snprintf(why + used, whylen - used,
						 "\n  Package %s is not installed.",
						 rels.rels[i].alts[j].name);
	}
	unpkg_relations_destroy(&rels);
	if (breakers) {
		int b = inst_check_breakers(r, p, why, whylen, err);

		if (b <= 0)
			return b;
	}
	return ok;
}
