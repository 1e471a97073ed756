/* obsolete.h - paths beneath the root moved aside with the transaction (as
 * NAME.dpkg-tmp: the old version's files the new one lacks, a removed
 * package's files).  Private to libunpkg. */
#ifndef UNPKG_OBSOLETE_H
#define UNPKG_OBSOLETE_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "run.h"

/* lstat `path` ("/usr/bin/x") beneath the root: 1 if it is there, 0 if
 * it is not (it or a directory above it missing, or that no directory),
 * -1 on any other failure (err set): a path that cannot be looked at is
 * not taken for gone. */
int obsolete_lstat(struct run *r, const char *path, struct stat *st,
		   struct unpkg_err *err);

/* 1 if every entry beneath directory `name` in `dfd` (the old path
 * `path`) is in `gone`, 0 if not, -1 on error.  An entry NAME.dpkg-tmp
 * in `gone` (moved aside whole) counts without what is beneath it. */
int obsolete_all_gone(int dfd, const char *name, const char *path,
		      const struct unpkg_strmap *gone, struct unpkg_err *err);

/* Register with the commit the directory holding `path` ("/usr/x")
 * beneath the root; its handle, or -1. */
int obsolete_parent_dir(struct run *r, const char *path, struct unpkg_err *err);

/* Move `path` ("/usr/x", of package `who`'s old version or removal)
 * aside with the transaction (`dir`: the commit directory holding it;
 * is_dir: a directory, with what is left in it) and note it in `moved`
 * (not copied: it must live as long as `moved`); a failure is only warned
 * about, as dpkg does. */
int obsolete_move_aside(struct run *r, const char *who, const char *path,
			int dir, int is_dir, struct unpkg_strmap *moved,
			struct unpkg_err *err);

/* Remove non-directory `path` of package `who` for good at once
 * (unpkg_commit_unlink()); a failure is only warned about, as dpkg
 * does, but for a failed sync of the transaction (the barrier that made
 * room for a descriptor), which is not the file's: 0, or -1 then. */
int obsolete_unlink(struct run *r, const char *who, const char *path,
		    int dir, struct unpkg_err *err);

/* 1 if an ancestor of `path` is in `moved`. */
int obsolete_under_moved(const char *path, const struct unpkg_strmap *moved);

/* The old version's paths the new one lacks, but its conffiles (kept,
 * as dpkg keeps them); in the old list's order, parents first. */
int obsolete_find(struct pkg *p, struct unpkg_err *err);

/* Remove the obsolete paths as dpkg does after unpacking: not files
 * another package lists, directories only when nothing else is in them.
 * Each goes aside as NAME.dpkg-tmp (a directory whole, with everything
 * beneath it), so that a failure before the record can put it back.
 * What cannot be removed is left with a warning. */
int obsolete_remove(struct run *r, struct pkg *p, struct unpkg_err *err);

#endif
