/* db.h - dpkg's database under the admin directory, in dpkg's own format.
 *
 * Layout (dpkg 1.21):  ADMINDIR/status        all package stanzas, sorted
 *                      ADMINDIR/updates/NNNN  journal, applied over status
 *                      ADMINDIR/info/KEY.*    per-package files
 *                      ADMINDIR/info/format   "1\n"
 *                      ADMINDIR/lock, lock-frontend, triggers/
 * KEY is the package name, or "name:arch" for a Multi-Arch: same package.
 *
 * unpkg_db_open() takes dpkg's locks (fcntl write locks, as dpkg and apt
 * take them, so the three never run at once) and reads status, then every
 * all-digit file in updates/ in numeric order, each stanza replacing the
 * package's earlier one (as dpkg, refusing names of different lengths or
 * longer than 10 digits).  A stanza that is not-installed with flag ok and
 * a want other than hold is dropped, as dpkg drops it.  Changes are made
 * in memory with unpkg_db_put() and become visible on disk only through
 * unpkg_db_write(), which rewrites status atomically and then retires the
 * applied updates/ files.
 */
#ifndef UNPKG_DB_H
#define UNPKG_DB_H

#include <stddef.h>
#include <sys/types.h>

#include "control.h"
#include "err.h"

enum {
	UNPKG_DB_CREATE = 1 << 0,	  /* create a missing admindir skeleton:
					   * ADMINDIR (mkdir -p), info/,
					   * updates/, triggers/, empty status */
	UNPKG_DB_LOCK_FRONTEND = 1 << 1, /* also take lock-frontend (first) */
	/* No fsyncs: a database that need not survive a crash (tests).
	 * --force-unsafe-io keeps the database's syncs, as dpkg does. */
	UNPKG_DB_NOSYNC = 1 << 2,
	UNPKG_DB_READONLY = 1 << 3,	  /* no locks, no writes (queries) */
};

/* One package of the database.  `para` is the parsed stanza; `key` is the
 * info/ file prefix. */
struct unpkg_db_pkg {
	char *name;
	char *arch;		/* Architecture: value, "" if absent */
	char *key;		/* "name" or "name:arch" (Multi-Arch: same) */
	struct unpkg_para para;
};

struct unpkg_db;

/* Open (and lock) the database at `admindir`.  A missing admindir is an
 * error naming it unless UNPKG_DB_CREATE.  A lock held by another process
 * gives UNPKG_ERR_LOCKED with dpkg's wording ("dpkg frontend lock was
 * locked by another process with pid N" / "dpkg database lock was locked
 * by another process with pid N").  fcntl locks belong to the process: two
 * opens in one process do not exclude each other.  Writes info/format
 * ("1\n") if it is missing. */
int unpkg_db_open(const char *admindir, unsigned int flags,
		  struct unpkg_db **out, struct unpkg_err *err);

/* Releases the locks.  NULL-safe. */
void unpkg_db_free(struct unpkg_db *db);

/* Remove what unpkg_db_open() created (UNPKG_DB_CREATE's skeleton, the
 * lock files), newest first, unless the database was written since: a
 * run that accepted no package leaves a fresh root as it found it.
 * Directories go only when empty, status only while empty.  Call before
 * unpkg_db_free(), with the locks still held; the open does it itself
 * when it fails.  0, or -1 if something could not be removed. */
int unpkg_db_remove_made(struct unpkg_db *db, struct unpkg_err *err);

/* The admindir's directory fd (owned by db). */
int unpkg_db_dirfd(const struct unpkg_db *db);

/* Packages in the order the status file will be written (by name, then
 * arch). */
size_t unpkg_db_count(const struct unpkg_db *db);
const struct unpkg_db_pkg *unpkg_db_at(const struct unpkg_db *db, size_t i);

/* The bin of package name `name` in dpkg's package table: 32-bit FNV-1a
 * of its bytes modulo the table's 65521 bins.  Each byte is a plain char
 * widened to unsigned int, as dpkg's str_fnv_hash() takes it, so that a
 * byte >= 0x80 hashes as dpkg built for the same machine hashes it. */
unsigned int unpkg_db_pkg_bin(const char *name);

/* The indices (for unpkg_db_at()) of every package of `db`, in the order
 * dpkg walks its package table, the order of its --pending: by bin, and
 * within a bin in the order of the database (dpkg chains a bin's
 * packages in the order it read them from the status file).  A malloc'd
 * array of unpkg_db_count() entries (not NULL when empty), or NULL on
 * error. */
size_t *unpkg_db_walk_order(const struct unpkg_db *db, struct unpkg_err *err);

/* The index (for unpkg_db_at()) of the first package named `name`, its
 * other instances right after it; unpkg_db_count() if there is none. */
size_t unpkg_db_find_first(const struct unpkg_db *db, const char *name);

/* Look a package up by name and architecture; arch NULL matches the first
 * package with that name.  NULL if absent. */
const struct unpkg_db_pkg *unpkg_db_find(const struct unpkg_db *db,
					 const char *name, const char *arch);

/* Insert or replace the stanza of (name, arch), parsed from `stanza`
 * (as produced by unpkg_stanza_format()); stanza NULL removes the package.
 * The key is derived from the stanza's Multi-Arch field.  The stanza's
 * Package and Architecture must be `name` and `arch` (if not NULL).  As a
 * dpkg journal entry does, it replaces the package's only installed
 * instance whatever its architecture (a crossgrade), unless both are
 * Multi-Arch: same; a not-installed stanza (ok, not hold) removes it. */
int unpkg_db_put(struct unpkg_db *db, const char *name, const char *arch,
		 const char *stanza, struct unpkg_err *err);

/* Split a package's Status: field into its three words.  Returns -1 if the
 * field is missing or malformed. Pointers are to static strings. */
int unpkg_db_pkg_status(const struct unpkg_db_pkg *pkg, const char **want,
			const char **flag, const char **status);

/* The third word of a package's Status: field, dpkg's package states in
 * dpkg's order. */
enum unpkg_status {
	UNPKG_STATUS_INVALID,	/* no Status field dpkg would read */
	UNPKG_STATUS_NOT_INSTALLED,
	UNPKG_STATUS_CONFIG_FILES,
	UNPKG_STATUS_HALF_INSTALLED,
	UNPKG_STATUS_UNPACKED,
	UNPKG_STATUS_HALF_CONFIGURED,
	UNPKG_STATUS_TRIGGERS_AWAITED,
	UNPKG_STATUS_TRIGGERS_PENDING,
	UNPKG_STATUS_INSTALLED,
};

/* The state of `pkg` (UNPKG_STATUS_INVALID where unpkg_db_pkg_status()
 * fails). */
enum unpkg_status unpkg_db_pkg_state(const struct unpkg_db_pkg *pkg);

/* The word of state `st` in a Status field ("half-configured"), NULL for
 * UNPKG_STATUS_INVALID or a value out of range.  Static storage. */
const char *unpkg_status_name(enum unpkg_status st);

/* Configured: installed, or with triggers to process (awaited, pending). */
int unpkg_status_configured(enum unpkg_status st);

/* Present: a valid state but not-installed and config-files. */
int unpkg_status_present(enum unpkg_status st);

/* Serialise the database in dpkg's layout: every stanza followed by a
 * blank line, sorted by (name, arch). Returns a malloc'd buffer. */
int unpkg_db_serialise(const struct unpkg_db *db, char **out, size_t *len,
		       struct unpkg_err *err);

/* Make the in-memory state the on-disk state, atomically: write
 * status-new, fdatasync it (or wait for it: unpkg_db_order_writes()),
 * keep the previous status as status-old (hard link), rename status-new
 * over status, fsync the admindir; then unlink the updates/ files that
 * were applied and fsync updates/ (so they cannot reappear after a crash
 * and roll the status back).  A missing
 * info/format is written the same way, in the same write.  With
 * UNPKG_DB_NOSYNC the fsyncs are skipped, and so is a directory fsync that
 * failed before (see unpkg_db_durable()).  Adds the number of fsync-family
 * calls made to *fsyncs if not NULL. */
int unpkg_db_write(struct unpkg_db *db, unsigned long *fsyncs,
		   struct unpkg_err *err);

/* The admindir's file system commits its changes in order, each commit
 * after a flush of the disk's cache (fsclass.h,
 * unpkg_fsclass_commit_orders_dev()): unpkg_db_write() then waits for the
 * writeback of status-new (sync_file_range; through an overlayfs, as
 * unpkg_db_order_writes_where_ordered() finds) instead of fdatasync'ing it,
 * and the fsync of the admindir after the rename makes the file and the
 * rename durable together, one flush fewer a write.  Each wait is counted
 * in *waits, which must outlive the database. */
void unpkg_db_order_writes(struct unpkg_db *db, unsigned long *waits);

/* unpkg_db_order_writes() where the admindir's file system orders its
 * commits (unpkg_fsclass_commit_orders_fd()), nothing elsewhere: what
 * --sync=auto's runs do.  0, or -1. */
int unpkg_db_order_writes_where_ordered(struct unpkg_db *db,
					unsigned long *waits,
					struct unpkg_err *err);

/* 1 after unpkg_db_order_writes(): a later fsync of the admindir then
 * commits the changes made before it under the admindir too (triggers/'s
 * renames); 0 otherwise. */
int unpkg_db_writes_ordered(const struct unpkg_db *db);

/* The new files of a write, under their temporary names, not synced. */
struct unpkg_db_staged {
	int fd[2];
	const char *name[2];	/* relative to the admindir */
	size_t n;
};

/* unpkg_db_write() in two halves, for a caller that makes the new status
 * durable together with other files (one barrier for all):
 * unpkg_db_write_begin() writes the files into `s` and hands their
 * descriptors over (the caller must make them durable, fdatasync, a
 * syncfs of their filesystem or, where the commits are ordered, a wait
 * for their writeback before the fsync of the admindir that
 * unpkg_db_write_end() makes, and close them); unpkg_db_write_end() then
 * puts them in place as unpkg_db_write() does, with the same fsyncs but
 * one: the rename of a new info/format is left to the caller's next sync
 * of info/ (a crash before it leaves no info/format, which dpkg and the
 * next run write again).  Nothing between the two may change the
 * database. */
int unpkg_db_write_begin(struct unpkg_db *db, struct unpkg_db_staged *s,
			 struct unpkg_err *err);
int unpkg_db_write_end(struct unpkg_db *db, unsigned long *fsyncs,
		       struct unpkg_err *err);

/* Close the descriptors of `s` that are still open. */
void unpkg_db_staged_close(struct unpkg_db_staged *s);

/* A sync the caller made on the database's behalf failed (a syncfs of
 * its file system, or of files from unpkg_db_write_begin()): as after a
 * failed fsync of the admindir, it is not tried again. */
void unpkg_db_sync_lost(struct unpkg_db *db);

/* 0 once an fsync of the admindir or of updates/ failed: such an fsync is
 * never tried again (after a failed fsync the kernel may have dropped the
 * data and report the next one as a success), so the writes that follow
 * change what is visible but are not durable.  1 otherwise. */
int unpkg_db_durable(const struct unpkg_db *db);

/* Load the file lists (info/KEY.list) of every package in the database,
 * for unpkg_db_file_owner().  A package whose Status is not-installed has
 * no list; a missing list of another package counts as empty (dpkg only
 * warns).  A malformed list is an error.  Callers may call this before
 * every lookup: it reads again only what may have changed since the last
 * load: every list after unpkg_db_write() or unpkg_db_files_changed(),
 * the lists of the instances of the package put after unpkg_db_put(), the
 * one list named after unpkg_db_list_changed(). */
int unpkg_db_load_files(struct unpkg_db *db, struct unpkg_err *err);

/* With `held`, the writes of the database that follow (until it is
 * released) keep the file lists loaded: the caller puts no list in place
 * meanwhile (an install's writes before its mark, and the mark).  Lists
 * changed otherwise still go through unpkg_db_files_changed() and
 * unpkg_db_list_changed(). */
void unpkg_db_hold_lists(struct unpkg_db *db, int held);

/* The caller changed lists on disk (renamed new ones into place) without
 * a put or a write yet: the next unpkg_db_load_files() reads them. */
void unpkg_db_files_changed(struct unpkg_db *db);

/* The caller changed the list of package `key` alone (moved it aside, say)
 * without a put yet: the next unpkg_db_load_files() reads it again. */
void unpkg_db_list_changed(struct unpkg_db *db, const char *key);

/* The caller moved the list of package `key` aside and staged its new
 * one as info/KEY.list.dpkg-new, which its transaction puts in place
 * later: until then (while that file is there), unpkg_db_load_files()
 * reads that one as the package's list, so that the packages removed
 * after it see what it keeps.  0, or -1 (memory). */
int unpkg_db_list_staged(struct unpkg_db *db, const char *key,
			 struct unpkg_err *err);

/* The number of paths the lists loaded by unpkg_db_load_files() name,
 * each once (0 before they are loaded). */
size_t unpkg_db_files_count(const struct unpkg_db *db);

/* A package key other than `except_key` (may be NULL) whose list contains
 * `path` ("/usr/bin/foo" form, as in .list files), or NULL.  Directories
 * are listed by many packages; callers decide what sharing means.  The
 * string lives until the next unpkg_db_load_files() that reads the lists
 * again, or unpkg_db_free(). */
const char *unpkg_db_file_owner(const struct unpkg_db *db, const char *path,
				const char *except_key);

/* 1 if `path`, a line of a package's file list, names something below the
 * root: an absolute path other than "/.", the root itself, which every
 * list has and no removal touches.  0 otherwise. */
int unpkg_db_listed_below_root(const char *path);

/* Read info/KEY.list into a malloc'd array of malloc'd paths.  A missing
 * list gives *paths NULL, *count 0 and success; an empty one a non-NULL
 * array and *count 0.  One trailing '/' is dropped, as dpkg does.  Free
 * with unpkg_db_list_free(). */
int unpkg_db_read_list(const struct unpkg_db *db, const char *key,
		       char ***paths, size_t *count, struct unpkg_err *err);
/* The same for info/KEY.list.dpkg-tmp, the backup of the list an
 * interrupted run was replacing; NULL and 0 when there is none. */
int unpkg_db_read_list_backup(const struct unpkg_db *db, const char *key,
			      char ***paths, size_t *count,
			      struct unpkg_err *err);
void unpkg_db_list_free(char **paths, size_t count);

/* Read file `name` of the admindir ("diversions") into a malloc'd,
 * NUL-terminated `buf` of `len` bytes; `shown` (malloc'd) names it in
 * messages, "ADMINDIR/name".  Returns 1, 0 (and buf NULL) when the file
 * does not exist, -1 on error (nothing to free then). */
int unpkg_db_read_file(const struct unpkg_db *db, const char *name,
		       char **buf, size_t *len, char **shown,
		       struct unpkg_err *err);


#endif
