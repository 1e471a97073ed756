/* depends.c - dependency satisfaction against the database and the run (see depends.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "depends.h"
#include "install-impl.h"
#include "stanza.h"

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

/* dpkg's found_status: how well one alternative is met. */
enum found {
	FOUND_NONE,
	FOUND_DEFER,
	FOUND_OK,
};

/* Append to `why` at *used (dpkg's "\n  ..." lines). */
static void why_add(char *why, size_t whylen, size_t *used, const char *fmt,
		    ...) __attribute__((format(printf, 4, 5)));

static void why_add(char *why, size_t whylen, size_t *used, const char *fmt,
		    ...)
{
	va_list ap;
	int n;

	if (*used >= whylen)
		return;
	va_start(ap, fmt);
	n = vsnprintf(why + *used, whylen - *used, fmt, ap);
	va_end(ap);
	if (n > 0)
		*used += (size_t)n;
}

/* One candidate `c` for alternative `alt`, dpkg's deppossi_ok_found(). */
static enum found candidate_found(const struct depends_view *v, int cycle,
				  const struct unpkg_relation_alt *alt,
				  const struct unpkg_candidate *c, char *why,
				  size_t whylen, size_t *used)
{
	int queued = 0;
	enum unpkg_status st = v->state(v->ctx, c->pkg, &queued);
	const char *version = unpkg_para_get(&c->pkg->para, "Version");

	switch (st) {
	case UNPKG_STATUS_UNPACKED:
	case UNPKG_STATUS_HALF_CONFIGURED:
	case UNPKG_STATUS_TRIGGERS_AWAITED:
	case UNPKG_STATUS_TRIGGERS_PENDING:
	case UNPKG_STATUS_INSTALLED:
		if (alt->op != UNPKG_REL_ANY &&
		    (c->version == NULL ||
		     !unpkg_relop_satisfied(alt->op, c->version,
					    alt->version))) {
			if (c->provided)
				why_add(why, whylen, used, "\n  Version of %s "
					"on system, provided by %s, is %s.",
					alt->name, c->pkg->key,
					c->version != NULL ? c->version
							   : "<none>");
			else
				why_add(why, whylen, used, "\n  Version of %s "
					"on system is %s.", c->pkg->key,
					version != NULL ? version : "<none>");
			return FOUND_NONE;
		}
		if (unpkg_status_configured(st))
			return FOUND_OK;
		if (queued)
			return cycle ? FOUND_OK : FOUND_DEFER;
		if (c->provided)
			why_add(why, whylen, used, "\n  Package %s which "
				"provides %s is not configured yet.",
				c->pkg->key, alt->name);
		else
			why_add(why, whylen, used, "\n  Package %s is not "
				"configured yet.", c->pkg->key);
		return FOUND_NONE;
	default:
		if (c->provided)
			why_add(why, whylen, used, "\n  Package %s which "
				"provides %s is not installed.", c->pkg->key,
				alt->name);
		else
			why_add(why, whylen, used, "\n  Package %s is not "
				"installed.", c->pkg->key);
		return FOUND_NONE;
	}
}

/* One relationship (its alternatives) of field `field` of `p`: the best
 * of its candidates, the packages of each name first, then those that
 * provide it, as dpkg tries them; what is wrong with each in `msgs`. */
static enum found relation_found(const struct run *r,
				 const struct depends_view *v, int cycle,
				 const struct unpkg_relation *rel,
				 char *msgs, size_t msgslen, size_t *mused)
{
	enum found found = FOUND_NONE, f;
	size_t j;
	int pass;

	for (j = 0; j < rel->count && found != FOUND_OK; j++) {
		const struct unpkg_relation_alt *alt = &rel->alts[j];
		const struct unpkg_candidate *c;
		int real = 0;

		for (pass = 0; pass < 2 && found != FOUND_OK; pass++) {
			for (c = unpkg_pkgindex_candidates(&r->index,
							   alt->name);
			     c != NULL && found != FOUND_OK; c = c->next) {
				if (c->provided != pass)
					continue;
				real |= !c->provided;
				f = candidate_found(v, cycle, alt, c, msgs,
						    msgslen, mused);
				if (f > found)
					found = f;
			}
			/* a name no package has: dpkg knows it as not
			 * installed */
			if (pass == 0 && !real && found != FOUND_OK)
				why_add(msgs, msgslen, mused, "\n  Package %s "
					"is not installed.", alt->name);
		}
	}
	return found;
}

int depends_configure(struct run *r, const struct pkg *p,
		      const struct depends_view *v, int cycle, char *why,
		      size_t whylen, enum depends_verdict *verdict,
		      struct unpkg_err *err)
{
	struct unpkg_relations rels[2];
	size_t used = strlen(why), i, k;
	int halt = 0, defer = 0;

	if (unpkg_pkgindex_build(&r->index, err) < 0)
		return -1;
	if (unpkg_para_depends(&p->control, 1, rels, err) < 0) {
		unpkg_para_depends_destroy(rels);
		return -1;
	}
	for (k = 0; k < 2; k++) {
		for (i = 0; i < rels[k].count; i++) {
			struct unpkg_relations one = { .rels = &rels[k].rels[i],
						       .count = 1 };
			char msgs[2048] = "";
			size_t mused = 0;
			enum found f;
			char *text;

			f = relation_found(r, v, cycle, &rels[k].rels[i], msgs,
					   sizeof(msgs), &mused);
			if (f == FOUND_DEFER)
				defer = 1;
			if (f != FOUND_NONE)
				continue;
			halt = 1;
			text = unpkg_relations_format(&one);
			why_add(why, whylen, &used, "\n %s depends on %s; "
				"however:%s", p->key, text != NULL ? text : "?",
				msgs);
			free(text);
		}
	}
	unpkg_para_depends_destroy(rels);
	*verdict = halt ? DEPENDS_HALT : defer ? DEPENDS_DEFER : DEPENDS_OK;
	if (*verdict != DEPENDS_DEFER) {
		int b = inst_check_breakers(r, p, why, whylen, err);

		if (b < 0)
			return -1;
		if (b == 0)
			*verdict = DEPENDS_HALT;
	}
	return 0;
}
