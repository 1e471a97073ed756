/* obsolete.h - paths beneath the root moved aside with the transaction (as
 * NAME.dpkg-tmp: the old version's files the new one lacks, a removed
 * package's files), and the directories removed after the record.
 * Private to libunpkg. */
#ifndef UNPKG_OBSOLETE_H
#define UNPKG_OBSOLETE_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "run.h"

/* lstat `path` ("/usr/bin/x") beneath the root; 0 on success. */
int obsolete_lstat(struct run *r, const char *path, struct stat *st);

/* Remove directory `path` of `p` once it is empty, after the record
 * (obsolete_late_rmdirs()): a directory that could not be moved aside whole.
 * `path` is not copied: it must live as long as `p`. */
int obsolete_add_late_rmdir(struct pkg *p, const char *path,
			    struct unpkg_err *err);

/* 1 if every entry beneath directory `name` in `dfd` (the old path
 * `path`) is in `gone`, 0 if not, -1 on error.  An entry NAME.dpkg-tmp
 * in `gone` (moved aside whole) counts without what is beneath it. */
int obsolete_all_gone(int dfd, const char *name, const char *path,
		      const struct unpkg_strmap *gone, struct unpkg_err *err);

/* Register with the commit the directory holding `path` ("/usr/x")
 * beneath the root; its handle, or -1. */
int obsolete_parent_dir(struct run *r, const char *path, struct unpkg_err *err);

/* Move `path` ("/usr/x", of `p`, or of `who`'s removal) aside with the
 * transaction (`dir`: the commit directory holding it; is_dir: a
 * directory, with what is left in it) and note it in `moved`; a
 * directory on another file system than its parent is removed after the
 * record instead (obsolete_add_late_rmdir(): `path` must live as long as
 * `p`); any other failure is only warned about, as dpkg does. */
int obsolete_move_aside(struct run *r, struct pkg *p, const char *who,
			const char *path, int dir, int is_dir,
			struct unpkg_strmap *moved, struct unpkg_err *err);

/* 1 if an ancestor of `path` is in `moved`. */
int obsolete_under_moved(const char *path, const struct unpkg_strmap *moved);

/* The old version's paths the new one lacks, but its conffiles (kept,
 * as dpkg keeps them); in the old list's order, parents first. */
int obsolete_find(struct pkg *p, struct unpkg_err *err);

/* Remove the obsolete paths as dpkg does after unpacking: not files
 * another package lists, directories only when nothing else is in them.
 * Each goes aside as NAME.dpkg-tmp (a directory whole, with everything
 * beneath it), so that a failure before the record can put it back.
 * Where a directory cannot be moved (EXDEV on overlayfs), its entries are
 * moved one by one and the directory itself is removed after the record.
 * What cannot be removed is left with a warning. */
int obsolete_remove(struct run *r, struct pkg *p, struct unpkg_err *err);

/* The directories that could not be moved aside, deepest first, once
 * their entries are gone for good. */
void obsolete_late_rmdirs(struct run *r, struct pkg *p);

#endif
