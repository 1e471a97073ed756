/* commit-impl.h - what the commit strategies share with commit.c.
 * Private to libunpkg. */
#ifndef UNPKG_COMMIT_IMPL_H
#define UNPKG_COMMIT_IMPL_H

#include <sys/types.h>

#include "commit.h"
#include "fsclass.h"

struct commit_dir {
	struct unpkg_root *root;
	char *relpath;
	char *shown;		/* in messages: its root's name, then relpath */
	int fd;			/* -1 while closed to save descriptors */
	dev_t dev;
	ino_t ino;
	int touched;		/* something was created or renamed in it */
	int pending;		/* holds a file still open for a sync */
	int database;		/* beneath unpkg_commit_database_root() */
};

enum entry_state {
	ENTRY_STAGED,		/* exists as tmpname */
	ENTRY_RENAMED,		/* renamed to name, backup (if any) remains */
	ENTRY_UNDONE,		/* undone by unpkg_commit_undo(): ignored */
};

/* A file handed over by unpkg_commit_sync_with(): synced, nothing else
 * (an entry flag above the UNPKG_STAGE_* bits). */
#define ENTRY_SYNC_ONLY		(1u << 18)

struct commit_entry {
	int dir;
	char *tmpname;
	char *name;
	int fd;			/* regular file still open for the barrier */
	unsigned int flags;	/* UNPKG_STAGE_* */
	enum entry_state state;
};

/* A file system the transaction touched, classified on first sight
 * (UNPKG_COMMIT_PER_FS). */
struct commit_fs {
	dev_t dev;
	enum unpkg_fsclass cls;
	int full;		/* syncfs is a full barrier there */
	int synced;		/* syncfs'ed in the current pass */
};

struct commit_mkdir {
	int dir;
	char *name;
};

/* One strategy.  Every operation returns 0 or -1 with `err` set. */
struct unpkg_commit_ops {
	const char *name;
	/* One transaction per run rather than per package. */
	int per_run;
	/* A regular file was staged; e->fd is open.  The operation may
	 * start writeback, and either keep the fd for the barrier or close
	 * it with commit_close_fd(). */
	int (*staged)(struct unpkg_commit *c, struct commit_entry *e,
		      struct unpkg_err *err);
	/* Make the data of every staged file durable; on return no file fd
	 * may remain open. */
	int (*barrier)(struct unpkg_commit *c, struct unpkg_err *err);
	/* Make the renames and created directories durable. */
	int (*renamed)(struct unpkg_commit *c, struct unpkg_err *err);
};

extern const struct unpkg_commit_ops unpkg_commit_dpkg_ops;
extern const struct unpkg_commit_ops unpkg_commit_batch_ops;
extern const struct unpkg_commit_ops unpkg_commit_uring_ops;
extern const struct unpkg_commit_ops unpkg_commit_syncfs_ops;
extern const struct unpkg_commit_ops unpkg_commit_none_ops;

struct unpkg_commit {
	const struct unpkg_commit_ops *ops;
	struct unpkg_stats *stats;
	struct unpkg_stats own_stats;	/* used when the caller gives none */
	const struct unpkg_events *events;
	unsigned int max_fds;
	unsigned int open_fds;

	/* Names of roots in messages (unpkg_commit_name_root()). */
	struct {
		const struct unpkg_root *root;
		const char *shown;
	} names[2];
	size_t nnames;
	const struct unpkg_root *db_root;

	struct commit_dir *dirs;
	size_t ndirs, capdirs;
	int *dirhash;		/* open addressing over dirs by (dev, ino) */
	size_t hashcap;

	struct commit_entry *ents;
	size_t nents, capents;

	struct commit_mkdir *mkdirs;
	size_t nmkdirs, capmkdirs;

	/* Entries staged since the last barrier that need one (new data or
	 * new entries to be renamed). */
	size_t unsynced;
	/* Files handed over by unpkg_commit_sync_with() since then. */
	size_t sync_only;

	unsigned int flags;	/* UNPKG_COMMIT_* of unpkg_commit_new_flags() */
	struct commit_fs *fs;	/* UNPKG_COMMIT_PER_FS: the file systems seen */
	size_t nfs, capfs;

	struct io_uring *ring;	/* commit_ring_pass()'s, once set up */
	int ring_refused;	/* the kernel refused to set one up */
	/* A sync failed: nothing synced since can be trusted, and the same
	 * files or directories must not be synced again (the kernel may have
	 * marked their pages clean, so a second try could lie). */
	int sync_failed;
};

/* The staged operation of the dpkg, batch and uring strategies: start the
 * writeback of the file at once (SYNC_FILE_RANGE_WRITE) and keep its
 * descriptor for the barrier; falls back to syncfs where sync_file_range
 * cannot serve. */
int commit_start_writeback(struct unpkg_commit *c, struct commit_entry *e,
			   struct unpkg_err *err);

/* Free the ring of commit_ring_pass(), if any. */
void commit_uring_free(struct unpkg_commit *c);

/* One pass of syncs submitted together through io_uring (commit-uring.c),
 * so the filesystem can fold them into few journal commits and the block
 * layer merge their flushes: the files still open (fdatasync if `files`;
 * otherwise fsync, with the touched directories, only the database's if
 * `database_only`), then closed.  1 when done; 0 when io_uring cannot be
 * set up here (nothing was synced; `why` says why; it is not tried
 * again); -1 on error. */
int commit_ring_pass(struct unpkg_commit *c, int files, int database_only,
		     char *why, size_t whylen, struct unpkg_err *err);

/* Close a staged file's descriptor (no-op if closed).  A close error is a
 * write error: reported, never ignored. */
int commit_close_fd(struct unpkg_commit *c, struct commit_entry *e,
		    struct unpkg_err *err);

/* Switch strategy (the dpkg strategy's fallback to syncfs), with a
 * notice naming the reason. */
void commit_fallback(struct unpkg_commit *c,
		     const struct unpkg_commit_ops *ops, const char *why);

/* Close every file descriptor still open in the entries. */
int commit_close_all(struct unpkg_commit *c, struct unpkg_err *err);

/* fdatasync, then close, every file still open in the entries. */
int commit_fdatasync_open(struct unpkg_commit *c, struct unpkg_err *err);

/* Helpers for strategies, each also making durable the files still open
 * (those handed over by unpkg_commit_sync_with() after the barrier), and
 * closing them: fdatasync them and fsync every touched directory / syncfs
 * every filesystem holding a touched directory or an open file. */
int commit_fsync_touched_dirs(struct unpkg_commit *c, struct unpkg_err *err);
/* The same, fsyncing only the touched directories of the database. */
int commit_fsync_database_dirs(struct unpkg_commit *c, struct unpkg_err *err);
int commit_syncfs_touched(struct unpkg_commit *c, struct unpkg_err *err);

#endif
