/* statoverride.h - dpkg-statoverride's entries, read from the database
 * directory: the owner, group and mode dpkg gives a path whenever it
 * installs it (extract.c applies them). */
#ifndef UNPKG_STATOVERRIDE_H
#define UNPKG_STATOVERRIDE_H

#include <stddef.h>
#include <sys/types.h>

#include "db.h"
#include "err.h"

/* One line of ADMINDIR/statoverride (dpkg-statoverride): the owner,
 * group and mode dpkg gives `path` whenever it installs it. */
struct unpkg_statoverride {
	char *path;		/* "/usr/bin/crontab" */
	uid_t uid;
	gid_t gid;
	mode_t mode;		/* permission bits */
};

/* Read ADMINDIR/statoverride: "USER GROUP MODE PATH" lines, USER and GROUP
 * names (looked up in the system's user database, as dpkg does) or
 * "#ID", MODE octal.  A missing file is none; a malformed line or an
 * unknown name is UNPKG_ERR_FORMAT, as dpkg refuses them. */
int unpkg_statoverride_read(const struct unpkg_db *db,
			    struct unpkg_statoverride **v, size_t *n,
			    struct unpkg_err *err);

/* Free what unpkg_statoverride_read() returned (NULL: nothing). */
void unpkg_statoverride_free(struct unpkg_statoverride *v, size_t n);

#endif
