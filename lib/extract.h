/* extract.h - streaming a package's data.tar into staged entries.
 *
 * Every entry is created beneath the root under a temporary name and handed
 * to the commit object (commit.h); nothing is visible under its final name
 * until the commit's rename pass.  Directories are the exception, as in
 * dpkg: they are created at once (mode 0700, so that their creator, root
 * or the user of --force-not-root, can open them; then owner and mode on
 * the open directory) and recorded so an abort can remove them; an
 * existing directory, or an in-root symlink to one, is kept as it is.
 *
 * Regular files: NAME.dpkg-new created O_CREAT|O_EXCL|O_NOFOLLOW with mode
 * 0, preallocated, written (with its MD5 where one is needed), owner, mode
 * and mtime set on the descriptor, then staged (the commit strategy starts
 * writeback).
 * Symlinks, hard links, fifos and device nodes are created as NAME.dpkg-new
 * too and renamed with the rest.  Owners: the tar header's user and group
 * names are looked up in the system's user database, as dpkg does; the
 * numeric ids are used where a name is absent or unknown.
 */
#ifndef UNPKG_EXTRACT_H
#define UNPKG_EXTRACT_H

#include <stddef.h>

#include "commit.h"
#include "db.h"
#include "deb.h"
#include "divert.h"
#include "err.h"
#include "event.h"
#include "fsroot.h"
#include "pathfilter.h"
#include "strmap.h"

/* One path of the package, in archive order. */
struct unpkg_file {
	char *path;		/* "/usr/bin/foo"; "/." for the root */
	enum unpkg_entry_type type;
	char md5[33];		/* hex digest for FILE and HARDLINK to a file,
				 * else "".  When the package ships an
				 * md5sums member (nothing to generate),
				 * only conffiles get one. */
	int filtered;		/* excluded by the path filters: listed,
				 * not unpacked (pathfilter.h) */
};

/* Embedded object: init / destroy. */
struct unpkg_filelist {
	struct unpkg_file *files;
	size_t count, cap;
	struct unpkg_strmap index;	/* path -> struct unpkg_file * index+1 */
};

void unpkg_filelist_init(struct unpkg_filelist *list);
void unpkg_filelist_destroy(struct unpkg_filelist *list);

/* The entry of the list spelled `path` ("/usr/bin/foo"), NULL if none. */
const struct unpkg_file *unpkg_filelist_get(const struct unpkg_filelist *list,
					    const char *path);

/* Whether the list's package puts something at `path`: it has an entry
 * there that the path filters did not leave out. */
int unpkg_filelist_unpacks(const struct unpkg_filelist *list,
			   const char *path);

struct unpkg_extract_opts {
	struct unpkg_root *root;
	struct unpkg_commit *commit;
	/* For file conflicts: files owned by a package other than
	 * `pkgkey` are refused.  May be NULL (no check). */
	struct unpkg_db *db;
	const char *pkgkey;
	/* Files of packages extracted earlier in the same run: path -> the
	 * owner as messages name it, "name version" (may be NULL). */
	const struct unpkg_strmap *run_files;
	/* A file of the installed package `owner` (its key) that the package
	 * ships too: take_over() returns 1 when the package may take it
	 * (Replaces, --force-overwrite), 2 when the owner keeps it (it
	 * Replaces the package: the entry is skipped, neither unpacked nor
	 * listed, as dpkg does), 0 to refuse it as a conflict, -1 on error.
	 * May be NULL (always refused). */
	int (*take_over)(void *ctx, const char *owner, const char *path,
			 struct unpkg_err *err);
	void *take_over_ctx;
	/* dpkg-statoverride's entries: "/path" -> struct
	 * unpkg_statoverride * (db.h), whose owner, group and mode replace
	 * the archive's (a symlink's owner and group: it has no mode).  May
	 * be NULL. */
	const struct unpkg_strmap *statoverrides;
	/* dpkg's --path-exclude / --path-include: an entry they filter out
	 * is decided as dpkg decides it (conflicts with other packages'
	 * files included), then listed with `filtered` set and not
	 * unpacked.  May be NULL. */
	const struct unpkg_pathfilter *filter;
	/* dpkg-divert's diversions (may be NULL) and the package's name: a
	 * path diverted by another package or by the administrator is
	 * written at its divert-to path and listed under its own name; a
	 * path both the package and an owner ship is no conflict when one
	 * of them diverts it; a divert-to path is refused (with a warning
	 * instead when `overwrite_diverted`, --force-overwrite-diverted). */
	const struct unpkg_diversions *diversions;
	const char *pkgname;
	int overwrite_diverted;
	/* Conffiles of the package ("/etc/foo.conf"): staged but not renamed
	 * (they stay NAME.dpkg-new until configured). */
	const struct unpkg_strmap *conffiles;
	/* --force-not-root: an owner that cannot be given (EPERM: not
	 * root) is left as it is, as dpkg does; the mode is still set. */
	int not_root;
	struct unpkg_stats *stats;
	const struct unpkg_events *events;
};

/* Extract the rest of `deb` (positioned at data.tar) into staged entries
 * and fill `list` (initialised, empty).  On error the caller aborts the
 * commit, which removes everything this created. */
int unpkg_extract(struct unpkg_deb *deb, const struct unpkg_extract_opts *o,
		  struct unpkg_filelist *list, struct unpkg_err *err);

#endif
