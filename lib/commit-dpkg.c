/* commit-dpkg.c - the four-pass recipe: start writeback as each file is
 * written, wait for all of it, fdatasync all of it, then rename.  The
 * dpkg strategy runs it per package; batch runs it once for the run.
 *
 * Waiting for the writeback of the whole batch before the first fdatasync
 * means that when fdatasync runs, the data is already on its way or on the
 * device: the first fdatasync commits the filesystem journal for all of the
 * files and the rest find little left to do.  Interleaving fsync and rename
 * per file, as dpkg does, pays a journal commit per file instead.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "commit-impl.h"
#include "io.h"

int commit_start_writeback(struct unpkg_commit *c, struct commit_entry *e,
			   struct unpkg_err *err)
{
	c->stats->sync_file_range++;
	if (sync_file_range(e->fd, 0, 0, SYNC_FILE_RANGE_WRITE) == 0)
		return 0;
	if (!unpkg_writeback_unsupported(errno))
		return unpkg_err_sys(err, "cannot start writeback of %s",
				     e->tmpname);
	commit_fallback(c, &unpkg_commit_syncfs_ops,
			errno == ENOSYS ? "sync_file_range is not available"
					: "sync_file_range is not supported "
					  "on this filesystem");
	return c->ops->staged(c, e, err);
}

static int dpkg_barrier(struct unpkg_commit *c, struct unpkg_err *err)
{
	size_t i;

	for (i = 0; i < c->nents; i++) {
		struct commit_entry *e = &c->ents[i];

		/* no writeback was started for a file handed over to be
		 * synced: its fdatasync does it all */
		if (e->fd < 0 || (e->flags & ENTRY_SYNC_ONLY))
			continue;
		c->stats->sync_file_range++;
		if (sync_file_range(e->fd, 0, 0,
				    SYNC_FILE_RANGE_WAIT_BEFORE) < 0)
			return unpkg_err_sync(err, "cannot wait for writeback "
					      "of %s", e->tmpname);
	}
	return commit_fdatasync_open(c, err);
}

const struct unpkg_commit_ops unpkg_commit_dpkg_ops = {
	.name = "dpkg",
	.staged = commit_start_writeback,
	.barrier = dpkg_barrier,
	.renamed = commit_fsync_touched_dirs,
};

const struct unpkg_commit_ops unpkg_commit_batch_ops = {
	.name = "batch",
	.per_run = 1,
	.staged = commit_start_writeback,
	.barrier = dpkg_barrier,
	.renamed = commit_fsync_touched_dirs,
};
