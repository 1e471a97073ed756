/* divert.h - dpkg-divert's diversions: ADMINDIR/diversions.
 *
 * The file holds triplets of lines, as dpkg-divert writes them: the
 * diverted path, the path it is diverted to, and the diverting package's
 * name, or ":" for a local diversion (--local).  A path of a package is
 * unpacked at the divert-to path, unless the package is the diverting one
 * (a package's own diversion does not apply to its own files): the path
 * stays what the file lists record, only the file system sees the other
 * name, as in dpkg.
 *
 * Maintainer scripts change the file while a run goes on (dpkg-divert in a
 * preinst): unpkg_divert_load() reads it again, and the strings of an
 * earlier load stay valid until unpkg_divert_free(), so callers may keep
 * what a lookup returned for the whole run.
 */
#ifndef UNPKG_DIVERT_H
#define UNPKG_DIVERT_H

#include <stddef.h>

#include "db.h"
#include "err.h"

struct unpkg_diversion {
	const char *from;	/* "/usr/bin/hello" */
	const char *to;		/* "/usr/bin/hello.distrib" */
	const char *pkg;	/* the diverting package, NULL: local */
};

struct unpkg_diversions;

/* An empty set of diversions. */
int unpkg_divert_new(struct unpkg_diversions **out, struct unpkg_err *err);

/* Free `d` and every string a lookup returned.  NULL-safe. */
void unpkg_divert_free(struct unpkg_diversions *d);

/* Replace the set with the diversions of `buf[0..len)`, the contents of
 * a diversions file (`shown` names it in messages).  As dpkg refuses
 * them, an incomplete triplet ("unexpected end of file"), a last line
 * without a newline, and two diversions of one path or onto one path
 * ("conflicting diversions") are UNPKG_ERR_FORMAT; the set is left as it
 * was then.  Paths are kept as dpkg keeps them: with one leading '/',
 * leading "./" and '/' runs dropped. */
int unpkg_divert_parse(struct unpkg_diversions *d, const char *buf,
		       size_t len, const char *shown, struct unpkg_err *err);

/* Read ADMINDIR/diversions of `db` into `d` (unpkg_divert_parse()); a
 * missing file is no diversions. */
int unpkg_divert_load(struct unpkg_diversions *d, const struct unpkg_db *db,
		      struct unpkg_err *err);

/* The diversions in the file's order. */
size_t unpkg_divert_count(const struct unpkg_diversions *d);
const struct unpkg_diversion *unpkg_divert_at(const struct unpkg_diversions *d,
					      size_t i);

/* The diversion of `path` ("/usr/bin/hello"), or NULL. */
const struct unpkg_diversion *unpkg_divert_of(const struct unpkg_diversions *d,
					      const char *path);

/* The diversion whose divert-to path is `path`, or NULL. */
const struct unpkg_diversion *
unpkg_divert_onto(const struct unpkg_diversions *d, const char *path);

/* 1 if diversion `dv` applies to the files of package `pkgname` (any
 * architecture; a key, "name:arch", names the package too): it is local
 * or another package's. */
int unpkg_divert_applies(const struct unpkg_diversion *dv, const char *pkgname);

/* 1 if `path` is diverted by package `a` (may be NULL) or by the package
 * the first `blen` bytes of `b` name ("name:arch" or "name version" give
 * the length of "name"): both may ship it, the diverter's file standing
 * in for the other one's, as in dpkg. */
int unpkg_divert_by_either(const struct unpkg_diversions *d, const char *path,
			   const char *a, const char *b, size_t blen);

/* Where package `pkgname` (or key) finds its path `path` on the file
 * system: the divert-to path if a diversion applies to it, else `path`
 * itself.  `d` may be NULL (none). */
const char *unpkg_divert_use(const struct unpkg_diversions *d,
			     const char *path, const char *pkgname);

#endif
