/* commit-none.c - --force-unsafe-io: no syncs for the packages' files.
 * Renames stay atomic, so a crash leaves each file old or new as far as
 * the filesystem's own ordering allows, but nothing of the packages is
 * durable when the database says so.
 *
 * The database is another matter: dpkg's unsafe io skips only the syncs
 * of the files it unpacks, and so does this strategy.  A file of the
 * database (a directory beneath unpkg_commit_database_root(), or a file
 * handed over with unpkg_commit_sync_with()) is fdatasync'ed before it is
 * renamed over the old one, and the database directories it touched are
 * fsync'ed after the renames: after a crash the status file and info/
 * hold complete old or new contents, never the empty file a rename of
 * unwritten data leaves behind.  The syncs of a pass go through io_uring
 * together, as the uring strategy's do, so that a run's database files
 * cost a few device flushes whatever their number. */
#include "config.h"

#include "commit-impl.h"

static int none_staged(struct unpkg_commit *c, struct commit_entry *e,
		       struct unpkg_err *err)
{
	if (c->dirs[e->dir].database)
		return 0;	/* kept for the barrier's fdatasync */
	return commit_close_fd(c, e, err);
}

/* The database's files still open (the barrier), or those and the
 * database's touched directories (after the renames): submitted together
 * through io_uring where it can be set up, one after another elsewhere. */
static int none_pass(struct unpkg_commit *c, int files,
		     struct unpkg_err *err)
{
	char why[128];
	int r = commit_ring_pass(c, files, 1, why, sizeof(why), err);

	if (r != 0)
		return r < 0 ? -1 : 0;
	return files ? commit_fdatasync_open(c, err)
		     : commit_fsync_database_dirs(c, err);
}

static int none_barrier(struct unpkg_commit *c, struct unpkg_err *err)
{
	return none_pass(c, 1, err);
}

static int none_renamed(struct unpkg_commit *c, struct unpkg_err *err)
{
	return none_pass(c, 0, err);
}

const struct unpkg_commit_ops unpkg_commit_none_ops = {
	.name = "none",
	.per_run = 1,
	.staged = none_staged,
	.barrier = none_barrier,
	.renamed = none_renamed,
};
