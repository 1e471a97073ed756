/* commit.h - staging files and making them durable (the commit strategy).
 *
 * A commit object is one transaction of staged entries.  The extractor
 * creates every entry under a temporary name (NAME.dpkg-new) in a directory
 * registered with unpkg_commit_dir(), then hands it over with
 * unpkg_commit_stage().  unpkg_commit_finish() then makes all of it durable
 * and visible in separate passes:
 *
 *   barrier        the strategy makes all staged data durable
 *   rename pass    every staged entry is renamed to its final name
 *   dir sync       the strategy makes the renames durable
 *
 * The strategies (DESIGN.md section 2) are const tables of operations:
 *   dpkg    SYNC_FILE_RANGE_WRITE as each file is staged; at the barrier a
 *           SYNC_FILE_RANGE_WAIT_BEFORE pass, then an fdatasync pass; after
 *           the renames an fsync of every touched directory; one
 *           transaction per package
 *   batch   the same passes, one transaction for the whole run
 *   uring   writeback started as in dpkg; at the barrier the fdatasyncs of
 *           the whole run are submitted together through io_uring (a
 *           bounded number in flight) so the filesystem can fold them into
 *           few journal commits; the directory fsyncs after the renames
 *           likewise; falls back to batch, with a notice, where io_uring
 *           cannot be set up (old kernel, kernel.io_uring_disabled)
 *   syncfs  one syncfs() per filesystem at the barrier and again after the
 *           renames; the dpkg strategy falls back to it, with a notice, when
 *           sync_file_range fails with ENOSYS, EINVAL, ESPIPE or EOPNOTSUPP
 *   none    --force-unsafe-io: no syncs for the packages' files, whose
 *           renames stay atomic; the database's files (the directories of
 *           the root given to unpkg_commit_database_root()) are still
 *           fdatasync'ed before their renames and their directories
 *           fsync'ed after, as dpkg keeps its database syncs then
 * Every strategy but dpkg commits once per run (unpkg_commit_per_run).
 * A failed fdatasync/fsync/syncfs is never retried: it fails the commit.
 *
 * A file replaced by a staged entry can be kept as a hard-linked backup
 * (NAME.dpkg-tmp) with UNPKG_STAGE_BACKUP; unpkg_commit_abort() puts the
 * old files back if the rename pass had begun, and removes every staged
 * entry and every directory created in the transaction, so that an error
 * leaves the tree as it was.  unpkg_commit_release() deletes the backups
 * once the caller has recorded the new state durably.
 */
#ifndef UNPKG_COMMIT_H
#define UNPKG_COMMIT_H

#include <stddef.h>

#include "err.h"
#include "event.h"
#include "fsroot.h"
#include "stats.h"

enum unpkg_sync_mode {
	UNPKG_SYNC_DPKG,
	UNPKG_SYNC_BATCH,
	UNPKG_SYNC_URING,
	UNPKG_SYNC_SYNCFS,
	UNPKG_SYNC_NONE,
	UNPKG_SYNC_COUNT
};

/* Parse "dpkg", "batch", "uring", "syncfs", "none"; -1 if unknown.  These
 * two, unpkg_commit_new() and unpkg_commit_new_flags() are strategy.c's:
 * the table of strategies stands above the transaction (commit.c) and the
 * strategies (commit-*.c). */
int unpkg_sync_mode_parse(const char *name);
const char *unpkg_sync_mode_name(enum unpkg_sync_mode mode);

enum {
	/* The final name exists (not as a directory) and must be kept as
	 * NAME.dpkg-tmp until unpkg_commit_release(). */
	UNPKG_STAGE_BACKUP = 1 << 0,
	/* Make durable but do not rename (a conffile stays NAME.dpkg-new
	 * until it is configured). */
	UNPKG_STAGE_NORENAME = 1 << 1,
	/* The final name is an empty directory: the rename pass moves it
	 * aside as NAME.dpkg-tmp just before the entry takes its name; abort
	 * moves it back, release removes it. */
	UNPKG_STAGE_DIRBACKUP = 1 << 2,
	/* The staged file was there before the transaction (a conffile
	 * waiting as NAME.dpkg-new for its configuration): abort never
	 * deletes it, and moves it back to `tmpname` if it was renamed. */
	UNPKG_STAGE_KEEP = 1 << 3,
};

struct unpkg_commit;

/* A new, empty transaction.  `stats` and `events` may be NULL and must
 * outlive the object.  `max_fds` bounds the descriptors kept open (files
 * waiting for the barrier plus directories); 0 picks a bound from
 * RLIMIT_NOFILE. */
int unpkg_commit_new(enum unpkg_sync_mode mode, struct unpkg_stats *stats,
		     const struct unpkg_events *events, unsigned int max_fds,
		     struct unpkg_commit **out, struct unpkg_err *err);

/* Flags of unpkg_commit_new_flags(). */
enum {
	/* Per file system syncs for --sync=auto; no effect unless the
	 * strategy in force is syncfs.  The file system of every directory
	 * the transaction touches is classified once (fsclass.h).  Where
	 * syncfs is a full barrier (unpkg_sync_full()), syncfs serves it as
	 * usual; elsewhere (ext2, vfat, FUSE, NFS mounted below the root)
	 * the regular files staged there stay open until the barrier (within
	 * the descriptor bound, as with the dpkg strategy), which
	 * fdatasyncs them, and the touched directories there are fsync'ed
	 * after the renames.  Every class met is added to stats->fsclass.
	 * An explicit --sync=syncfs goes without it: one syncfs per file
	 * system, as asked. */
	UNPKG_COMMIT_PER_FS = 1 << 0,
};

/* unpkg_commit_new() with UNPKG_COMMIT_* `flags`. */
int unpkg_commit_new_flags(enum unpkg_sync_mode mode, unsigned int flags,
			   struct unpkg_stats *stats,
			   const struct unpkg_events *events,
			   unsigned int max_fds, struct unpkg_commit **out,
			   struct unpkg_err *err);

/* Aborts anything still staged (see unpkg_commit_abort), then frees.
 * NULL-safe. */
void unpkg_commit_free(struct unpkg_commit *c);

/* The name of the strategy in force ("dpkg", "syncfs", "none"); it can
 * change from dpkg to syncfs on fallback. */
const char *unpkg_commit_strategy(const struct unpkg_commit *c);

/* Whether the strategy commits once per run (batch, syncfs, none) rather
 * than once per package (dpkg). */
int unpkg_commit_per_run(const struct unpkg_commit *c);

/* Whether a sync of the strategy in force covers whole file systems
 * (syncfs): a failed one may have been the sync of any file there, the
 * database's included. */
int unpkg_commit_syncs_whole_fs(const struct unpkg_commit *c);

/* A point in the transaction to roll back to: everything staged or
 * created after it is undone by unpkg_commit_rollback(), the rest stays. */
struct unpkg_commit_savepoint {
	size_t entries;
	size_t mkdirs;
};

void unpkg_commit_savepoint(const struct unpkg_commit *c,
			    struct unpkg_commit_savepoint *sp);

/* Undo what was staged after `sp` (not yet committed): like
 * unpkg_commit_abort() for that part only. */
void unpkg_commit_rollback(struct unpkg_commit *c,
			   const struct unpkg_commit_savepoint *sp);

/* Undo the entries staged (and removed) between savepoints `from` and
 * `to` — one package of a batch — even after the rename pass, as abort
 * does; the others stay.  Best effort, never fails. */
void unpkg_commit_undo(struct unpkg_commit *c,
		       const struct unpkg_commit_savepoint *from,
		       const struct unpkg_commit_savepoint *to);

/* Show directories registered beneath `root` as SHOWN/RELPATH in
 * messages (by default, as the installation root's are: /RELPATH).
 * `shown` must outlive the object; at most two roots are named. */
int unpkg_commit_name_root(struct unpkg_commit *c,
			   const struct unpkg_root *root, const char *shown,
			   struct unpkg_err *err);

/* Directories registered beneath `root` hold the dpkg database: their
 * files and renames are made durable by every strategy, none included
 * (unsafe io may lose the packages' files, never the database).  The same
 * directory reached through another root counts as the database's too. */
void unpkg_commit_database_root(struct unpkg_commit *c,
				const struct unpkg_root *root);

/* Register the directory `relpath` beneath `root` (opened with the root's
 * resolver, so symlinks stay inside the root) and return its handle
 * (>= 0).  The same directory reached by another path gets the same
 * handle.  The directory must exist. */
int unpkg_commit_dir(struct unpkg_commit *c, struct unpkg_root *root,
		     const char *relpath, struct unpkg_err *err);

/* An open descriptor of directory `dir`, owned by the commit object and
 * valid until the next unpkg_commit_stage(), _finish(), _release() or
 * _abort() (where descriptors may be reclaimed). */
int unpkg_commit_dirfd(struct unpkg_commit *c, int dir, struct unpkg_err *err);

/* Remove `dir`/`name`, an old file or a directory (then holding nothing
 * but entries this transaction removed), by moving it aside as
 * NAME.dpkg-tmp at once (a directory the file system cannot rename, one
 * of an overlayfs's lower layer, is rebuilt there: unpkg_dir_move()):
 * abort puts it back, release deletes it.  The move is made durable by
 * the next unpkg_commit_finish(). */
int unpkg_commit_remove(struct unpkg_commit *c, int dir, const char *name,
			int is_dir, struct unpkg_err *err);

/* Remove `dir`/`name`, an old file, for good at once: abort cannot bring
 * it back, for a caller that records the loss (a removal whose package is
 * marked half-installed, as dpkg removes files).  The removal is made
 * durable by the next unpkg_commit_finish().  May reclaim descriptors,
 * as unpkg_commit_stage() does. */
int unpkg_commit_unlink(struct unpkg_commit *c, int dir, const char *name,
			struct unpkg_err *err);

/* Record that directory `name` was created in `dir` by this transaction:
 * abort removes it again (it must then be empty of anything not staged). */
int unpkg_commit_mkdir(struct unpkg_commit *c, int dir, const char *name,
		       struct unpkg_err *err);

/* Hand over an entry created as `dir`/`tmpname` that becomes `dir`/`name`.
 * `fd` is the open, fully written regular file (ownership passes to the
 * commit object, which may close it at once or keep it for the barrier),
 * or -1 for other entry types.  flags: UNPKG_STAGE_*.  With
 * UNPKG_STAGE_BACKUP, `name` is first hard-linked to NAME.dpkg-tmp. */
int unpkg_commit_stage(struct unpkg_commit *c, int dir, const char *tmpname,
		       const char *name, int fd, unsigned int flags,
		       struct unpkg_err *err);

/* Barrier, rename pass, directory sync (see above).  On success the
 * transaction's entries are committed (or, after a file was handed over
 * from the `renamed` hook where the commits are ordered, are once the
 * caller's fsync that unpkg_commit_sync_with() asks for is made); the
 * backups remain until
 * unpkg_commit_release(); the object can stage more entries, which a
 * second finish commits (abort then undoes both).  On failure the caller
 * calls unpkg_commit_abort(). */
int unpkg_commit_finish(struct unpkg_commit *c, struct unpkg_err *err);

/* Hand over `fd`, an open regular file in directory `dir` that is not an
 * entry of the transaction (the database's new status file): it is made
 * durable with the staged data at the next barrier, or, handed over from
 * the `renamed` hook of unpkg_commit_finish_hooked(), with the renames.
 * Then it is closed; it is never renamed, restored or removed.  Every
 * strategy syncs it, none included: it belongs to the database.  Where
 * auto's syncfs finds the commits of its file system ordered
 * (commit-syncfs.c), it is only waited for, and the caller must rename it
 * and then fsync a directory of that file system: that commit makes it
 * durable, and, handed over from the `renamed` hook, the transaction's
 * renames there too, whose sync after the renames is left to it.
 * `name` names it in messages.  The descriptor passes to the commit
 * object even on error. */
int unpkg_commit_sync_with(struct unpkg_commit *c, int dir, const char *name,
			   int fd, struct unpkg_err *err);

/* Work of the caller's between the passes of a finish; NULL members are
 * skipped.  A hook's error fails the finish. */
struct unpkg_commit_hooks {
	/* After the barrier, before the rename pass: everything staged (and
	 * handed over, but for the waits of unpkg_commit_sync_with()) is
	 * durable, nothing is renamed yet. */
	int (*synced)(void *ctx, struct unpkg_err *err);
	/* After the rename pass, before the renames are made durable.  What
	 * the hook stages gets a barrier and rename pass of its own; files it
	 * hands over with unpkg_commit_sync_with() are made durable with the
	 * renames, by the same sync. */
	int (*renamed)(void *ctx, struct unpkg_err *err);
	void *ctx;
};

/* unpkg_commit_finish() with the caller's work in between; the barrier is
 * skipped when nothing staged since the last one needs it (only removals,
 * or entries staged with UNPKG_STAGE_KEEP). */
int unpkg_commit_finish_hooked(struct unpkg_commit *c,
			       const struct unpkg_commit_hooks *h,
			       struct unpkg_err *err);

/* Once the caller has recorded the new state durably: remove the
 * NAME.dpkg-tmp backups of committed entries (best effort: a backup
 * that cannot be removed is reported through the error, the rest are
 * still removed) and forgets the committed batch. */
int unpkg_commit_release(struct unpkg_commit *c, struct unpkg_err *err);

/* Undo the transaction: unstaged temporary names are unlinked, renamed
 * entries are put back from their backups (or unlinked if they had none),
 * created directories are removed (newest first), and the restored
 * renames are synced by the strategy, unless a sync of this transaction
 * has failed (it is never retried).  Best effort, never fails; the tree is
 * as before the transaction unless the filesystem refuses. */
void unpkg_commit_abort(struct unpkg_commit *c);

#endif
