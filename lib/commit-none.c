/* commit-none.c - --force-unsafe-io: no syncs.  Renames stay atomic, so a
 * crash leaves each file old or new as far as the filesystem's own
 * ordering allows, but nothing is durable when the database says so. */
#include "config.h"

#include "commit-impl.h"

static int none_staged(struct unpkg_commit *c, struct commit_entry *e,
		       struct unpkg_err *err)
{
	return commit_close_fd(c, e, err);
}

/* Nothing to sync; files handed over to be synced are closed. */
static int none_nothing(struct unpkg_commit *c, struct unpkg_err *err)
{
	return commit_close_all(c, err);
}

const struct unpkg_commit_ops unpkg_commit_none_ops = {
	.name = "none",
	.per_run = 1,
	.staged = none_staged,
	.barrier = none_nothing,
	.renamed = none_nothing,
};
