/* takeover.h - files of installed packages a package of the run ships too:
 * taken over under Replaces (or --force-overwrite), kept by an owner
 * that Replaces the package, refused otherwise; the owners' lists
 * rewritten, a package left with no files made to disappear.
 * Private to libunpkg. */
#ifndef UNPKG_TAKEOVER_H
#define UNPKG_TAKEOVER_H

#include <stddef.h>

#include "relation.h"
#include "run.h"

/* What happens to the files of one installed package that `p` ships too,
 * decided at the first one (dpkg's "replacingfilesandsaid"). */
enum take_verdict {
	TAKE_REFUSE = 1,	/* a conflict (or --force-overwrite) */
	TAKE_REPLACE,		/* p Replaces the owner: p takes them */
	TAKE_KEEP,		/* the owner Replaces p: it keeps them */
	TAKE_REMOVED,		/* the owner is removed in favour of p: p
				 * takes them, as dpkg does, silently */
};

/* The state of one package's extraction for takeover_file(): zero it
 * but for r and p, then unpkg_relations_init(&repl) and
 * unpkg_strmap_init(&verdicts); takeover_ctx_destroy() after. */
struct take_ctx {
	struct run *r;
	struct pkg *p;
	struct unpkg_relations repl;	/* p's Replaces, parsed once */
	int parsed;
	struct unpkg_strmap verdicts;	/* owner key -> enum take_verdict */
	char **owners;			/* the keys of `verdicts` */
	size_t nowners;
};

/* The extractor found `path` in installed package `owner`: dpkg lets a
 * package that Replaces the owner take it, and with --force-overwrite
 * any package, with a warning; the owner's list loses it.  If the owner
 * Replaces the package instead, the owner keeps it (2). */
int takeover_file(void *ctx, const char *owner, const char *path,
		  struct unpkg_err *err);

/* Free what a take_ctx gathered. */
void takeover_ctx_destroy(struct take_ctx *c);

/* The owners of the files `p` took over lose them from their lists, as
 * in dpkg; the new lists are staged in the record hook (a barrier and
 * rename pass of their own). */
int takeover_stage_taken(struct run *r, struct pkg *p, struct unpkg_err *err);

/* The verdict on the files of installed package `owner` (at
 * `owner_version`) that package `name` (at `version`) ships too, dpkg's
 * rules: TAKE_REMOVED when the owner is removed in favour of the package
 * (`removed`), TAKE_REPLACE when the package's Replaces (`ours`, NULL for
 * none) names the owner at its version, else TAKE_KEEP when the owner's
 * Replaces (`theirs`) names the package at its new version, else
 * TAKE_REFUSE.  Pure: the decision alone. */
enum take_verdict takeover_verdict(const struct unpkg_relations *ours,
				   const char *owner, const char *owner_version,
				   const struct unpkg_relations *theirs,
				   const char *name, const char *version,
				   int removed);

#endif
