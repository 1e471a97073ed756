/* version.h - Debian version numbers: [epoch:]upstream[-revision].
 *
 * Syntax and ordering follow Debian Policy 5.6.12 as dpkg implements them:
 * the epoch is a decimal number, upstream must start with a digit, '~'
 * sorts before everything, letters before non-letters.
 *
 * Two strictness levels, as in dpkg: a package's control file (dpkg-deb
 * --build, dpkg --unpack) is parsed strictly; dpkg's own database is
 * parsed leniently, because dpkg only warns there about an upstream not
 * starting with a digit and about characters outside the allowed sets.
 */
#ifndef UNPKG_VERSION_H
#define UNPKG_VERSION_H

#include "err.h"

/* Embedded object; the strings point into one allocation owned by it. */
struct unpkg_version {
	unsigned int epoch;
	char *upstream;
	char *revision;		/* "" when absent */
	char *buf_;		/* private */
};

/* Parse `str` strictly.  Surrounding blanks are ignored.  The epoch is
 * everything before the first ':', the revision everything after the last
 * '-'.  Errors (UNPKG_ERR_FORMAT, message naming the text): empty,
 * embedded blank, bad epoch (empty, not a number, negative, above
 * INT_MAX; a '+' sign is accepted, as dpkg does), nothing after the epoch,
 * empty upstream, empty revision after '-', upstream not starting with a
 * digit, characters outside [A-Za-z0-9.+~:-] in upstream or [A-Za-z0-9.+~]
 * in revision.  On failure `v` is left empty (destroy is a no-op). */
int unpkg_version_parse(struct unpkg_version *v, const char *str,
			struct unpkg_err *err);

/* Same, but accepting what dpkg accepts in its database with a warning:
 * an upstream not starting with a digit and invalid characters. */
int unpkg_version_parse_lax(struct unpkg_version *v, const char *str,
			    struct unpkg_err *err);

/* Leaves `v` empty; safe on an empty or failed-parse version. */
void unpkg_version_destroy(struct unpkg_version *v);

/* <0, 0, >0 like strcmp, in dpkg's order. */
int unpkg_version_compare(const struct unpkg_version *a,
			  const struct unpkg_version *b);

/* Compare two version strings; an unparsable one sorts as a parse of the
 * raw text would (never fails), an empty one before all others, as in
 * dpkg --compare-versions.  Parsing is lax.  For tests and convenience. */
int unpkg_version_compare_str(const char *a, const char *b);

/* The canonical spelling dpkg writes: "EPOCH:" only for a non-zero epoch
 * (without leading zeros), "-REVISION" only when there is one.  Returns a
 * malloc'd string (caller frees), or NULL on allocation failure. */
char *unpkg_version_format(const struct unpkg_version *v);

#endif
