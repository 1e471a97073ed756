/* takeover.h - files of installed packages a package of the run ships too:
 * taken over under Replaces (or --force-overwrite), kept by an owner
 * that Replaces the package, refused otherwise; the owners' lists
 * rewritten, a package left with no files made to disappear.
 * Private to libunpkg. */
#ifndef UNPKG_TAKEOVER_H
#define UNPKG_TAKEOVER_H

#include <stddef.h>

#include "run.h"

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

#endif
