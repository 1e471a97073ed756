/* relation.h - package relationship fields (Depends, Pre-Depends,
 * Recommends, Suggests, Breaks, Conflicts, Enhances, Replaces, Provides).
 *
 *   value := rel ("," rel)*      rel := alt ("|" alt)*
 *   alt   := name [":" archqual] ["(" [op] version ")"]
 *   op    := "<<" | "<=" | "=" | ">=" | ">>"   (and the obsolete "<" / ">",
 *            which dpkg reads as "<=" / ">=")
 * A missing op means "=", as in dpkg.  Blanks are allowed around every
 * token except before ":" and, as in dpkg, at the very start of the value;
 * an empty value has no relations.  Architecture restrictions "[...]" and
 * build profiles "<...>" are not allowed in binary packages and are
 * rejected, as dpkg does for installed packages.  Alternatives are
 * rejected in Breaks, Conflicts, Replaces and Provides.
 */
#ifndef UNPKG_RELATION_H
#define UNPKG_RELATION_H

#include <stddef.h>

#include "err.h"
#include "version.h"

enum unpkg_relop {
	UNPKG_REL_ANY = 0,	/* no version constraint */
	UNPKG_REL_LT,		/* << */
	UNPKG_REL_LE,		/* <= */
	UNPKG_REL_EQ,		/* =  */
	UNPKG_REL_GE,		/* >= */
	UNPKG_REL_GT,		/* >> */
};

struct unpkg_relation_alt {
	char *name;		/* lowercased, as dpkg stores it */
	char *archqual;		/* "any", "native", an arch, or NULL */
	enum unpkg_relop op;
	char *version;		/* the version in canonical spelling (see
				 * unpkg_version_format), NULL with
				 * UNPKG_REL_ANY */
};

struct unpkg_relation {
	struct unpkg_relation_alt *alts;
	size_t count;
};

/* Embedded object: init / destroy. */
struct unpkg_relations {
	struct unpkg_relation *rels;
	size_t count;
};

void unpkg_relations_init(struct unpkg_relations *r);
/* Leaves `r` empty; a second call is a no-op. */
void unpkg_relations_destroy(struct unpkg_relations *r);

/* Parse a field value into `r`, which must be initialised and empty; on
 * failure it is left empty.  `field` names the field in error messages
 * (UNPKG_ERR_FORMAT), which also show the offending text.  Package names
 * follow dpkg: [A-Za-z0-9][A-Za-z0-9+._-]*, folded to lowercase;
 * architecture qualifiers [A-Za-z0-9][A-Za-z0-9-]*, kept as written.
 * Versions must parse with unpkg_version_parse(). */
int unpkg_relations_parse(struct unpkg_relations *r, const char *field,
			  const char *value, struct unpkg_err *err);

/* Same for fields read from dpkg's database: versions are parsed with
 * unpkg_version_parse_lax(). */
int unpkg_relations_parse_lax(struct unpkg_relations *r, const char *field,
			      const char *value, struct unpkg_err *err);

/* Format in dpkg's canonical spelling: "a (>= 1.0), b:any | c".
 * Returns a malloc'd string (caller frees), or NULL on allocation failure. */
char *unpkg_relations_format(const struct unpkg_relations *r);

/* Does version `have` satisfy `op want`?  UNPKG_REL_ANY is always
 * satisfied; any other op is never satisfied by a NULL `have` (an
 * unversioned Provides, as in dpkg). */
int unpkg_relop_satisfied(enum unpkg_relop op, const char *have,
			  const char *want);

#endif
