/* stanza.h - the status-file stanza of a package, in dpkg's own format.
 *
 * dpkg writes known fields in a fixed order and normalises some of them
 * (relationship fields are reformatted, see relation.h); fields it does not
 * know follow Description in the order the control file had them.  This
 * module produces byte-identical output to dpkg 1.21 for the same input.
 */
#ifndef UNPKG_STANZA_H
#define UNPKG_STANZA_H

#include "control.h"
#include "err.h"
#include "relation.h"

/* What the database knows beyond the control file. */
struct unpkg_stanza_state {
	const char *want;		/* "install", "hold", "deinstall", "purge" */
	const char *flag;		/* "ok" or "reinstreq" */
	const char *status;		/* "not-installed", "half-installed",
					 * "unpacked", "half-configured",
					 * "installed", "config-files", ... */
	const char *conffiles;		/* value of Conffiles: (starts with
					 * "\n"), or NULL for none */
	const char *config_version;	/* Config-Version:, or NULL */
	/* Triggers-Pending: and Triggers-Awaited: (blank-separated), or
	 * NULL; the states triggers-pending and triggers-awaited need the
	 * field of their name */
	const char *triggers_pending;
	const char *triggers_awaited;
};

/* Validate a control paragraph as dpkg does when it installs a package:
 * Package, Version, Architecture, Maintainer and Description present (dpkg
 * only warns for the last two: so do we, via *warning, which is set to a
 * static message or NULL; it also reports an obsolete field alias such as
 * Class); Package a valid name (dpkg's rule: [A-Za-z0-9][A-Za-z0-9+._-]*;
 * upper case is accepted and folded by unpkg_stanza_format); Version
 * parses strictly; no Status, Config-Version, Conffiles, Triggers-Pending
 * or Triggers-Awaited in a .deb's control file (they belong to the
 * database); relationship fields parse; Multi-Arch one of
 * no/same/foreign/allowed and not "same" with Architecture "all";
 * Essential and Protected yes/no; no field name starting with '-' or of
 * one character.  The obsolete Revision field is refused with
 * UNPKG_ERR_UNSUPPORTED. */
int unpkg_stanza_check_control(const struct unpkg_para *control,
			       const char **warning, struct unpkg_err *err);

/* Build the stanza text for the status file, ending in "\n" (no blank line
 * after it; the writer separates stanzas).  Returns a malloc'd string via
 * *out (caller frees).  As dpkg does, Package is written in lower case,
 * Filename/Size/MD5sum/MSDOS-Filename and a control file's own Status,
 * Conffiles and Config-Version are dropped (the state provides those), and
 * empty known fields are left out.  Fails rather than write a stanza dpkg
 * could not read back: bad state strings or Conffiles (UNPKG_ERR_USAGE),
 * status triggers-pending/triggers-awaited, whose trigger fields the state
 * does not carry (UNPKG_ERR_UNSUPPORTED), a missing Package, a missing
 * Version outside not-installed/half-installed, or a value dpkg rejects
 * (UNPKG_ERR_FORMAT); versions and relations are parsed as leniently as
 * dpkg reads its database. */
int unpkg_stanza_format(const struct unpkg_para *control,
			const struct unpkg_stanza_state *state, char **out,
			struct unpkg_err *err);

/* A status-file stanza `stanza` (as the database has it) formatted again
 * with unpkg_stanza_format() under a new Status: `want` (NULL: the
 * stanza's own, "install" without one), `flag` and `status`; its
 * Config-Version becomes `config_version` where that is not NULL; its
 * Conffiles and trigger fields are kept.  So every field stays where dpkg
 * writes it. */
int unpkg_stanza_restate(const struct unpkg_para *stanza, const char *want,
			 const char *flag, const char *status,
			 const char *config_version, char **out,
			 struct unpkg_err *err);

/* One line [line, end) of a Conffiles value, " PATH HASH [FLAG...]": its
 * path begins at *path and ends a blank before *hash, its hash is
 * [*hash, *hend), its flags follow.  A path may hold spaces, so the
 * words are read from the end: the hash is the last one of 32 characters
 * or "newconffile".  0, or -1 if the line has no path and hash. */
int unpkg_conffile_split(const char *line, const char *end, const char **path,
			 const char **hash, const char **hend);

/* The Pre-Depends (rels[UNPKG_DEPENDS_PRE]) and the Depends
 * (rels[UNPKG_DEPENDS_DEP]) of the stanza `para`, parsed with `strict` as
 * a package's control (unpkg_relations_parse()), else leniently as dpkg
 * reads its database.
 * An absent field, or one that does not parse, has no relations; both
 * are read, -1 reports the first error.  Destroy `rels` with
 * unpkg_para_depends_destroy() in either case. */
enum { UNPKG_DEPENDS_PRE, UNPKG_DEPENDS_DEP };
int unpkg_para_depends(const struct unpkg_para *para, int strict,
		       struct unpkg_relations rels[2], struct unpkg_err *err);
void unpkg_para_depends_destroy(struct unpkg_relations rels[2]);

#endif
