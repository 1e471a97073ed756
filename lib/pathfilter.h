/* pathfilter.h - dpkg's path filters: --path-exclude=GLOB and
 * --path-include=GLOB, from dpkg's configuration files and the command
 * line, in that order.
 *
 * A path of a package is matched against every rule with fnmatch(3),
 * flags 0 (so '*' also matches '/'), spelled as dpkg's .list files spell
 * it ("/usr/share/doc/foo/copyright"); the last rule that matches decides.
 * A directory or symlink that a rule excludes is kept all the same when
 * the fixed start of an include pattern (up to its first '*', '?', '['
 * or '\', trailing slashes dropped) is a prefix of its path, so that the
 * directories leading to an included file are still made: with Debian's
 * slim image rules (all below /usr/share/doc excluded, the copyright files
 * there included, an include whose fixed start is /usr/share/doc), the
 * directories and symlinks below /usr/share/doc are kept.  This
 * is dpkg 1.21's rule (src/main/filters.c), quirks included: the prefix
 * is compared byte by byte, so an excluded directory /usr/share/docs
 * would be kept too.
 *
 * What dpkg does with a filtered path, and unpkg with it (extract.h):
 * it is not unpacked, but it is listed in info/PKG.list; it gets no line
 * in a generated info/PKG.md5sums; a conffile keeps the hash recorded for
 * it; on upgrade, what the old version installed there is removed as if
 * the new version did not ship it.
 */
#ifndef UNPKG_PATHFILTER_H
#define UNPKG_PATHFILTER_H

#include <stddef.h>

#include "err.h"

struct unpkg_pathfilter_rule {
	char *pattern;
	int include;		/* 1: --path-include, 0: --path-exclude */
};

/* Embedded object: init / destroy.  No rules: nothing is filtered. */
struct unpkg_pathfilter {
	struct unpkg_pathfilter_rule *rules;
	size_t count;
};

void unpkg_pathfilter_init(struct unpkg_pathfilter *f);
void unpkg_pathfilter_destroy(struct unpkg_pathfilter *f);

/* Append a rule (the pattern is copied).  Applied after those added
 * before it. */
int unpkg_pathfilter_add(struct unpkg_pathfilter *f, const char *pattern,
			 int include, struct unpkg_err *err);

/* 1 if the entry `path` ("/usr/bin/foo"; "" for the root entry "./") is
 * filtered out, 0 if it is unpacked.  `dir_or_symlink`: the entry is a
 * directory or a symlink (the only ones an include can keep for its
 * prefix).  `f` may be NULL: nothing is filtered. */
int unpkg_pathfilter_skip(const struct unpkg_pathfilter *f, const char *path,
			  int dir_or_symlink);

#endif
