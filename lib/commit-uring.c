/* commit-uring.c - the fdatasyncs of a whole run submitted at once.
 *
 * Issued one after another, each fdatasync waits for its own journal
 * commit and device flush.  Issued together, the filesystem can fold many
 * of them into one commit, and the block layer can merge their flushes.
 * io_uring's IORING_OP_FSYNC (with IORING_FSYNC_DATASYNC) is the way to
 * have them all in flight from one thread.  At most RING_DEPTH operations
 * are in flight; the rest wait for a completion.
 */
#include "config.h"

#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commit-impl.h"

#define RING_DEPTH 64u

void commit_uring_free(struct unpkg_commit *c)
{
	if (c->ring == NULL)
		return;
	io_uring_queue_exit(c->ring);
	free(c->ring);
	c->ring = NULL;
}

/* Set up the ring on first use.  0 where the kernel refuses (no io_uring,
 * kernel.io_uring_disabled, a seccomp policy), with the reason in `why`;
 * it is not tried again. */
static int ring_ready(struct unpkg_commit *c, char *why, size_t whylen,
		      struct unpkg_err *err)
{
	struct io_uring *ring;
	int r;

	if (c->ring != NULL)
		return 1;
	if (c->ring_refused) {
		snprintf(why, whylen, "io_uring is not available");
		return 0;
	}
	ring = calloc(1, sizeof(*ring));
	if (ring == NULL)
		return unpkg_err_nomem(err);
	r = io_uring_queue_init(RING_DEPTH, ring, 0);
	if (r < 0) {
		free(ring);
		snprintf(why, whylen, "io_uring is not available (%s)",
			 strerror(-r));
		c->ring_refused = 1;
		return 0;
	}
	c->ring = ring;
	return 1;
}

/* One item to sync: the descriptor and how to name it in messages. */
struct sync_item {
	int fd;
	const char *name;
};

/* Sync every item through the ring, at most RING_DEPTH at a time.  After
 * the first failure nothing more is submitted, but everything in flight
 * is reaped before returning: descriptors must not be closed under a
 * pending operation. */
static int sync_items(struct unpkg_commit *c, const struct sync_item *items,
		      size_t n, int datasync, struct unpkg_err *err)
{
	size_t next = 0, inflight = 0;
	int failed = 0;

	while (next < n || inflight > 0) {
		struct io_uring_cqe *cqe;
		int r;

		while (!failed && next < n && inflight < RING_DEPTH) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(c->ring);

			if (sqe == NULL)
				break;
			io_uring_prep_fsync(sqe, items[next].fd,
					    datasync ? IORING_FSYNC_DATASYNC : 0);
			io_uring_sqe_set_data64(sqe, next);
			next++;
			inflight++;
			if (datasync)
				c->stats->fdatasync++;
			else
				c->stats->fsync++;
		}
		if (inflight == 0)
			break;
		/* All in flight together: the point is that they
		 * overlap, so wait for the whole window at once. */
		r = io_uring_submit_and_wait(c->ring, (unsigned int)inflight);
		if (r < 0 && r != -EINTR) {
			errno = -r;
			if (!failed)
				unpkg_err_sys(err, "cannot submit syncs to "
					      "io_uring");
			/* Nothing could be submitted: nothing is pending
			 * beyond what completes below. */
			failed = 1;
		}
		while (io_uring_peek_cqe(c->ring, &cqe) == 0) {
			const struct sync_item *it =
				&items[io_uring_cqe_get_data64(cqe)];

			if (cqe->res < 0 && !failed) {
				errno = -cqe->res;
				unpkg_err_sync(err, "cannot %s %s",
					       datasync ? "fdatasync" : "fsync",
					       it->name);
				failed = 1;
			}
			io_uring_cqe_seen(c->ring, cqe);
			inflight--;
		}
		if (r < 0 && r != -EINTR && inflight > 0) {
			/* Submission failed with operations in flight:
			 * wait for them before giving up. */
			while (inflight > 0 &&
			       io_uring_wait_cqe(c->ring, &cqe) == 0) {
				io_uring_cqe_seen(c->ring, cqe);
				inflight--;
			}
			break;
		}
	}
	return failed ? -1 : 0;
}

int commit_ring_pass(struct unpkg_commit *c, int files, int database_only,
		     char *why, size_t whylen, struct unpkg_err *err)
{
	struct sync_item *items = NULL;
	size_t n = 0, i;
	int r, ret = -1;

	r = ring_ready(c, why, whylen, err);
	if (r <= 0)
		return r;
	items = malloc((c->nents + c->ndirs + 1) * sizeof(*items));
	if (items == NULL)
		return unpkg_err_nomem(err);
	for (i = 0; i < c->nents; i++) {
		if (c->ents[i].fd >= 0) {
			items[n].fd = c->ents[i].fd;
			items[n++].name = c->ents[i].tmpname;
		}
	}
	for (i = 0; !files && i < c->ndirs; i++) {
		if (c->dirs[i].touched &&
		    (!database_only || c->dirs[i].database)) {
			items[n].fd = unpkg_commit_dirfd(c, (int)i, err);
			if (items[n].fd < 0)
				goto out;
			items[n++].name = c->dirs[i].shown;
		}
	}
	if (sync_items(c, items, n, files, err) < 0 ||
	    commit_close_all(c, err) < 0)
		goto out;
	ret = 1;
out:
	free(items);
	return ret;
}

/* Where the ring cannot be set up, batch takes over: the same passes with
 * plain system calls. */
static int uring_pass(struct unpkg_commit *c, int files,
		      struct unpkg_err *err)
{
	char why[128];
	int r = commit_ring_pass(c, files, 0, why, sizeof(why), err);

	if (r != 0)
		return r < 0 ? -1 : 0;
	commit_fallback(c, &unpkg_commit_batch_ops, why);
	return files ? c->ops->barrier(c, err) : c->ops->renamed(c, err);
}

static int uring_barrier(struct unpkg_commit *c, struct unpkg_err *err)
{
	return uring_pass(c, 1, err);
}

static int uring_renamed(struct unpkg_commit *c, struct unpkg_err *err)
{
	return uring_pass(c, 0, err);
}

const struct unpkg_commit_ops unpkg_commit_uring_ops = {
	.name = "uring",
	.per_run = 1,
	.staged = commit_start_writeback,
	.barrier = uring_barrier,
	.renamed = uring_renamed,
};
