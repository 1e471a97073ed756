/* commit-syncfs.c - one syncfs() per filesystem instead of per-file syncs.
 *
 * syncfs writes back and flushes a whole filesystem with one call: the
 * fallback where sync_file_range cannot serve (tmpfs, FUSE, network and
 * overlay filesystems), and a strategy of its own where few device cache
 * flushes matter more than not writing back unrelated dirty data.
 *
 * With UNPKG_COMMIT_PER_FS (--sync=auto chose syncfs), syncfs serves only
 * the filesystems where it is a full barrier (fsclass.h).  The others
 * (ext2, vfat, FUSE, NFS... mounted below the root) get what the uring
 * strategy does there: every regular file staged on them is kept open,
 * its writeback started at once, and fdatasync'ed at the barrier; every
 * directory touched on them is fsync'ed after the renames.  Each
 * filesystem is classified once, by the device number of a directory the
 * transaction registered, when the first file is staged there or when a
 * pass first meets it.
 *
 * Where a journal commit flushes the disk's cache before it and commits
 * metadata in order (ext4 with a journal and barriers, xfs, an overlayfs
 * whose upper layer is one of them: unpkg_fsclass_commit_orders_of()),
 * the barrier before the renames needs no flush of its own: a staged file
 * is kept open, its writeback started at once, and the barrier waits for
 * that writeback to complete (sync_file_range with WAIT_AFTER, or through
 * the overlay the calls of io.h's UNPKG_WB_OVERLAY).  No rename can reach
 * the disk before a commit that carries it, whose flush makes the data
 * completed before durable first; the sync after the renames is that
 * commit: an fsync of each directory touched there, never a syncfs,
 * which would write out every other program's dirty data on the file
 * system as well.  Files handed over with unpkg_commit_sync_with() are
 * waited for the same way: whoever renames them later fsyncs their
 * directory after the rename (the database's new status,
 * unpkg_db_write_end()), and that commit carries them.  It carries the
 * renames of the pass before them too, since a journal commits its
 * changes in order: where such a file is handed over after the renames,
 * the fsyncs after them are left to its owner's.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commit-impl.h"
#include "fsclass.h"
#include "io.h"

/* A file system the transaction touched, classified on first sight
 * (UNPKG_COMMIT_PER_FS). */
struct commit_fs {
	dev_t dev;
	enum unpkg_fsclass cls;
	int full;		/* syncfs is a full barrier there */
	int ordered;		/* a commit flushes completed writes first */
	enum unpkg_wb_path wb;	/* how its files' writeback is reached */
	int synced;		/* syncfs'ed in the current pass */
	/* after the renames, a file handed over lies here: its owner's
	 * fsync after its rename commits the renames too */
	int deferred;
};

/* The strategy's state (c->state), made on first use: the file systems
 * seen. */
struct syncfs_state {
	struct commit_fs *fs;
	size_t nfs, capfs;
};

static void syncfs_destroy(struct unpkg_commit *c)
{
	struct syncfs_state *st = c->state;

	if (st == NULL)
		return;
	free(st->fs);
	free(st);
}

/* The index in the state of the filesystem of directory `dir`, classified on
 * first sight; -1 on error. */
static int dir_fs(struct unpkg_commit *c, int dir, struct unpkg_err *err)
{
	const struct commit_dir *d = &c->dirs[dir];
	struct syncfs_state *st = c->state;
	enum unpkg_fsclass cls;
	enum unpkg_wb_path wb;
	struct commit_fs *fs;
	size_t i;
	int fd, ordered;

	if (st == NULL) {
		st = calloc(1, sizeof(*st));
		if (st == NULL)
			return unpkg_err_nomem(err);
		c->state = st;
	}
	for (i = 0; i < st->nfs; i++)
		if (st->fs[i].dev == d->dev)
			return (int)i;
	fd = unpkg_commit_dirfd(c, dir, err);
	if (fd < 0 || unpkg_fsclass_detect(fd, &cls, NULL, err) < 0)
		return -1;
	ordered = unpkg_fsclass_commit_orders_of(fd, cls, d->dev, "/sys",
						 "/proc", &wb, err);
	if (ordered < 0)
		return -1;
	if (st->nfs == st->capfs) {
		size_t cap = st->capfs != 0 ? st->capfs * 2 : 4;

		fs = realloc(st->fs, cap * sizeof(*fs));
		if (fs == NULL)
			return unpkg_err_nomem(err);
		st->fs = fs;
		st->capfs = cap;
	}
	fs = &st->fs[st->nfs];
	*fs = (struct commit_fs){
		.dev = d->dev,
		.cls = cls,
		.full = unpkg_fsclass_syncfs_full(cls),
		.ordered = ordered,
		.wb = wb,
	};
	unpkg_stats_add_fsclass(c->stats, unpkg_fsclass_name(cls));
	return (int)st->nfs++;
}

/* The file system of index k (dir_fs()). */
static struct commit_fs *fs_at(struct unpkg_commit *c, int k)
{
	return &((struct syncfs_state *)c->state)->fs[k];
}

/* The data reaches the disk through the filesystem-wide sync: the
 * descriptor is not needed any more, unless (UNPKG_COMMIT_PER_FS) the
 * file lies where syncfs is not a full barrier, or where the barrier
 * waits for each file's writeback instead (`ordered`). */
static int syncfs_staged(struct unpkg_commit *c, struct commit_entry *e,
			 struct unpkg_err *err)
{
	int k;

	if (!(c->flags & UNPKG_COMMIT_PER_FS))
		return commit_close_fd(c, e, err);
	k = dir_fs(c, e->dir, err);
	if (k < 0)
		return -1;
	if (fs_at(c, k)->full && !fs_at(c, k)->ordered)
		return commit_close_fd(c, e, err);
	/* Kept for the barrier's wait or fdatasync, which then finds the
	 * data on its way.  Where writeback cannot be started this way,
	 * the barrier does it all. */
	c->stats->sync_file_range++;
	if (unpkg_writeback_start(e->fd, fs_at(c, k)->wb) < 0 &&
	    !unpkg_writeback_unsupported(errno))
		return unpkg_err_sys(err, "cannot start writeback of %s/%s",
				     c->dirs[e->dir].shown, e->tmpname);
	return 0;
}

/* The barrier of a file staged where a commit orders its data
 * (`ordered`): its writeback started again and waited for, no flush; a
 * writeback error is the file's sync failing.  Where neither
 * sync_file_range nor the overlay's calls can serve, fdatasync. */
static int wait_written(struct unpkg_commit *c, struct commit_entry *e,
			enum unpkg_wb_path wb, struct unpkg_err *err)
{
	const char *failed;

	if (unpkg_wait_written(e->fd, wb, &c->stats->sync_file_range,
			       &c->stats->fdatasync, &failed) < 0)
		return unpkg_err_sync(err, "cannot %s %s/%s", failed,
				      c->dirs[e->dir].shown, e->tmpname);
	return 0;
}

/* One pass of UNPKG_COMMIT_PER_FS: the files still open on filesystems
 * where syncfs is not a full barrier are fdatasync'ed and closed, after
 * the renames (`renamed`) the directories touched there are fsync'ed;
 * where a commit orders their data, every file still open is only waited
 * for, and after the renames the directories touched there are fsync'ed
 * unless a file handed over with unpkg_commit_sync_with() leaves that
 * commit to its owner; and every other filesystem holding a touched
 * directory or an open file gets one syncfs. */
static int per_fs_pass(struct unpkg_commit *c, int renamed,
		       struct unpkg_err *err)
{
	struct syncfs_state *st = c->state;
	size_t i;
	int ret = -1;

	for (i = 0; st != NULL && i < st->nfs; i++)
		st->fs[i].synced = st->fs[i].deferred = 0;
	for (i = 0; i < c->nents; i++) {
		struct commit_entry *e = &c->ents[i];
		int k;

		if (e->fd < 0)
			continue;
		k = dir_fs(c, e->dir, err);
		if (k < 0)
			goto out;
		/* where a commit orders them, every file is waited for:
		 * the commit after it makes it durable; after the renames,
		 * for one handed over to be renamed later by its owner, the
		 * owner's fsync of its directory is that commit */
		if (fs_at(c, k)->ordered) {
			if (wait_written(c, e, fs_at(c, k)->wb, err) < 0 ||
			    commit_close_fd(c, e, err) < 0)
				goto out;
			fs_at(c, k)->deferred |= renamed &&
						 (e->flags & ENTRY_SYNC_ONLY);
			continue;
		}
		if (fs_at(c, k)->full) {
			c->dirs[e->dir].pending = 1;
			continue;
		}
		c->stats->fdatasync++;
		if (fdatasync(e->fd) < 0) {
			unpkg_err_sync(err, "cannot fdatasync %s/%s",
				       c->dirs[e->dir].shown, e->tmpname);
			goto out;
		}
		if (commit_close_fd(c, e, err) < 0)
			goto out;
	}
	for (i = 0; i < c->ndirs; i++) {
		struct commit_dir *d = &c->dirs[i];
		int k, fd;

		if (!d->touched && !d->pending)
			continue;
		k = dir_fs(c, (int)i, err);
		if (k < 0)
			goto out;
		if (!fs_at(c, k)->full && !(renamed && d->touched))
			continue;
		/* before the renames, what was staged where a commit orders
		 * it (entries, directories, backups) reaches the disk with
		 * the commit that carries the renames, or before it (no file
		 * is pending there: each was waited for above) */
		if (fs_at(c, k)->ordered && !renamed)
			continue;
		/* after them, the commit of a file handed over carries
		 * them (a journal commits its changes in order) */
		if (fs_at(c, k)->deferred)
			continue;
		if (fs_at(c, k)->full && fs_at(c, k)->synced)
			continue;
		fd = unpkg_commit_dirfd(c, (int)i, err);
		if (fd < 0)
			goto out;
		/* the directories' own commits where the commits are
		 * ordered: nobody else's data written out */
		if (!fs_at(c, k)->full || fs_at(c, k)->ordered) {
			c->stats->fsync++;
			if (fsync(fd) < 0) {
				unpkg_err_sync(err, "cannot fsync directory %s",
					       d->shown);
				goto out;
			}
			continue;
		}
		c->stats->syncfs++;
		if (syncfs(fd) < 0) {
			unpkg_err_sync(err, "cannot sync the filesystem of %s",
				       d->shown);
			goto out;
		}
		fs_at(c, k)->synced = 1;
	}
	ret = commit_close_all(c, err);
out:
	for (i = 0; i < c->ndirs; i++)
		c->dirs[i].pending = 0;
	return ret;
}

static int syncfs_barrier(struct unpkg_commit *c, struct unpkg_err *err)
{
	if (c->flags & UNPKG_COMMIT_PER_FS)
		return per_fs_pass(c, 0, err);
	return commit_syncfs_touched(c, err);
}

static int syncfs_renamed(struct unpkg_commit *c, struct unpkg_err *err)
{
	if (c->flags & UNPKG_COMMIT_PER_FS)
		return per_fs_pass(c, 1, err);
	return commit_syncfs_touched(c, err);
}

const struct unpkg_commit_ops unpkg_commit_syncfs_ops = {
	.name = "syncfs",
	.per_run = 1,
	.staged = syncfs_staged,
	.barrier = syncfs_barrier,
	.renamed = syncfs_renamed,
	.destroy = syncfs_destroy,
	.whole_fs = 1,
};
