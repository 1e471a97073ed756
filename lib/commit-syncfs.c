/* commit-syncfs.c - one syncfs() per filesystem instead of per-file syncs.
 *
 * syncfs writes back and flushes a whole filesystem with one call: the
 * fallback where sync_file_range cannot serve (tmpfs, FUSE, network and
 * overlay filesystems), and a strategy of its own where few device cache
 * flushes matter more than not writing back unrelated dirty data.
 */
#include "config.h"

#include "commit-impl.h"

/* The data reaches the disk through the filesystem-wide sync: the
 * descriptor is not needed any more. */
static int syncfs_staged(struct unpkg_commit *c, struct commit_entry *e,
			 struct unpkg_err *err)
{
	return commit_close_fd(c, e, err);
}

const struct unpkg_commit_ops unpkg_commit_syncfs_ops = {
	.name = "syncfs",
	.per_run = 1,
	.staged = syncfs_staged,
	.barrier = commit_syncfs_touched,
	.renamed = commit_syncfs_touched,
};
