/* infodb.h - the info/ files of packages (info/KEY.list, md5sums, conffiles,
 * the maintainer scripts...): staged with the transaction as
 * info/KEY.NAME.dpkg-new, moved aside, put back.
 * Private to libunpkg. */
#ifndef UNPKG_INFODB_H
#define UNPKG_INFODB_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "run.h"

/* Write info/KEY.NAME.dpkg-new (in commit directory `dir`, info/) and
 * stage it to become info/KEY.NAME. */
int infodb_stage(struct run *r, const char *key, int dir,
		 const char *member, const void *data, size_t len,
		 mode_t mode, struct unpkg_err *err);

/* Put back info/NAME, moved aside as NAME.dpkg-tmp by an interrupted
 * run, where nothing has taken its name, or with `over` over what took it
 * (an interrupted removal's new list).  0, or -1 with errno set. */
int infodb_unmove(int dfd, const char *name, int over);

/* Move the info/KEY.* files aside with the transaction (`dir`: the
 * commit's info/), but the members named in `keep` (NULL-terminated, or
 * NULL). */
int infodb_remove(struct run *r, const char *key, int dir,
		  const char *const *keep, struct unpkg_err *err);

/* info/KEY.list, info/KEY.md5sums (generated when the package ships
 * none, as dpkg does, even if empty) and every control member but
 * control itself. */
int infodb_stage_pkg(struct run *r, struct pkg *p, struct unpkg_err *err);

/* Note the info/KEY.* files of the old version that the new one does
 * not ship (an old postinst, say); they go once the new one is committed. */
int infodb_find_obsolete(struct run *r, struct pkg *p,
			 struct unpkg_err *err);

/* Move aside the info/ files infodb_find_obsolete() noted, with the
 * transaction. */
int infodb_remove_obsolete(struct run *r, struct pkg *p,
			   struct unpkg_err *err);

#endif
