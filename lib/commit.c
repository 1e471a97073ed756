/* commit.c - the staging transaction shared by all commit strategies. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "commit-impl.h"
#include "dirmove.h"

/* Leave room for the database, the archive being read and stdio. */
#define RESERVED_FDS 32u
#define MIN_FDS 8u

static unsigned int fd_budget(void)
{
	struct rlimit rl;
	rlim_t n;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return 1024;
	n = rl.rlim_cur > RESERVED_FDS + MIN_FDS ? rl.rlim_cur - RESERVED_FDS
						 : MIN_FDS;
	return n > 65536 ? 65536 : (unsigned int)n;
}

int commit_create(const struct unpkg_commit_ops *ops, unsigned int flags,
		  struct unpkg_stats *stats, const struct unpkg_events *events,
		  unsigned int max_fds, struct unpkg_commit **out,
		  struct unpkg_err *err)
{
	struct unpkg_commit *c;

	if (flags & ~(unsigned int)UNPKG_COMMIT_PER_FS)
		return unpkg_err_set(err, UNPKG_ERR_USAGE,
				     "unknown commit flags %#x", flags);
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return unpkg_err_nomem(err);
	c->ops = ops;
	c->stats = stats != NULL ? stats : &c->own_stats;
	c->events = events;
	c->max_fds = max_fds != 0 ? max_fds : fd_budget();
	if (c->max_fds < MIN_FDS)
		c->max_fds = MIN_FDS;
	c->flags = flags;
	*out = c;
	return 0;
}

const char *unpkg_commit_strategy(const struct unpkg_commit *c)
{
	return c->ops->name;
}

int unpkg_commit_per_run(const struct unpkg_commit *c)
{
	return c->ops->per_run;
}

int unpkg_commit_syncs_whole_fs(const struct unpkg_commit *c)
{
	return c->ops->whole_fs;
}

void unpkg_commit_savepoint(const struct unpkg_commit *c,
			    struct unpkg_commit_savepoint *sp)
{
	sp->entries = c->nents;
	sp->mkdirs = c->nmkdirs;
}

void commit_fallback(struct unpkg_commit *c,
		     const struct unpkg_commit_ops *ops, const char *why)
{
	unpkg_event_emit(c->events, UNPKG_EV_NOTICE, NULL,
			 "%s; using the %s strategy instead of %s", why,
			 ops->name, c->ops->name);
	commit_destroy_state(c);
	c->ops = ops;
}

void commit_destroy_state(struct unpkg_commit *c)
{
	if (c->ops->destroy != NULL)
		c->ops->destroy(c);
	c->state = NULL;
}

static void close_dir_fds(struct unpkg_commit *c)
{
	size_t i;

	for (i = 0; i < c->ndirs; i++) {
		if (c->dirs[i].fd >= 0) {
			close(c->dirs[i].fd);
			c->dirs[i].fd = -1;
			c->open_fds--;
		}
	}
}

int commit_close_fd(struct unpkg_commit *c, struct commit_entry *e,
		    struct unpkg_err *err)
{
	int fd = e->fd;

	if (fd < 0)
		return 0;
	e->fd = -1;
	c->open_fds--;
	if (close(fd) < 0 && errno != EINTR)
		return unpkg_err_sys(err, "cannot close %s", e->tmpname);
	return 0;
}

/* --- directories ---------------------------------------------------------*/

static size_t dir_hash(dev_t dev, ino_t ino)
{
	unsigned long long h = (unsigned long long)ino * 0x9e3779b97f4a7c15ull;

	return (size_t)(h ^ ((unsigned long long)dev << 17) ^ (h >> 29));
}

static int dirhash_find(const struct unpkg_commit *c, dev_t dev, ino_t ino)
{
	size_t i;

	if (c->hashcap == 0)
		return -1;
	for (i = dir_hash(dev, ino) & (c->hashcap - 1);; i = (i + 1) & (c->hashcap - 1)) {
		int d = c->dirhash[i];

		if (d < 0)
			return -1;
		if (c->dirs[d].dev == dev && c->dirs[d].ino == ino)
			return d;
	}
}

static void dirhash_insert(struct unpkg_commit *c, int d)
{
	size_t i = dir_hash(c->dirs[d].dev, c->dirs[d].ino) & (c->hashcap - 1);

	while (c->dirhash[i] >= 0)
		i = (i + 1) & (c->hashcap - 1);
	c->dirhash[i] = d;
}

/* Keep the table at most half full. */
static int dirhash_reserve(struct unpkg_commit *c, struct unpkg_err *err)
{
	size_t cap, i;
	int *table;

	if ((c->ndirs + 1) * 2 <= c->hashcap)
		return 0;
	cap = c->hashcap != 0 ? c->hashcap * 2 : 64;
	table = malloc(cap * sizeof(*table));
	if (table == NULL)
		return unpkg_err_nomem(err);
	for (i = 0; i < cap; i++)
		table[i] = -1;
	free(c->dirhash);
	c->dirhash = table;
	c->hashcap = cap;
	for (i = 0; i < c->ndirs; i++)
		dirhash_insert(c, (int)i);
	return 0;
}

/* Room for `need` elements in the array *arr of *cap (unpkg_grow()). */
static int grow(void **arr, size_t *cap, size_t need, size_t size,
		struct unpkg_err *err)
{
	void *p = unpkg_grow(*arr, cap, need, size, 64);

	if (p == NULL)
		return unpkg_err_nomem(err);
	*arr = p;
	return 0;
}

/* Make room for one more descriptor: flush staged files early, then close
 * directory descriptors (they are reopened on demand). */
/* Run a strategy operation, noting a failed sync. */
static int run_op(struct unpkg_commit *c,
		  int (*op)(struct unpkg_commit *, struct unpkg_err *),
		  struct unpkg_err *err)
{
	if (op(c, err) == 0)
		return 0;
	if (err != NULL && err->code == UNPKG_ERR_SYNC)
		c->sync_failed = 1;
	return -1;
}

/* The barrier, unless nothing handed over since the last one needs it. */
static int barrier(struct unpkg_commit *c, struct unpkg_err *err)
{
	if (c->unsynced == 0 && c->sync_only == 0)
		return 0;
	if (run_op(c, c->ops->barrier, err) < 0)
		return -1;
	c->unsynced = 0;
	c->sync_only = 0;
	return 0;
}

static int reserve_fd(struct unpkg_commit *c, struct unpkg_err *err)
{
	if (c->open_fds < c->max_fds)
		return 0;
	if (barrier(c, err) < 0)
		return -1;
	if (c->open_fds >= c->max_fds)
		close_dir_fds(c);
	return 0;
}

/* Descriptors are only reclaimed in unpkg_commit_stage(), so that those
 * handed out by unpkg_commit_dirfd() stay valid until then. */
static int open_dir(struct unpkg_commit *c, struct unpkg_root *root,
		    const char *relpath, struct unpkg_err *err)
{
	int fd;

	fd = unpkg_root_openat(root, relpath, O_RDONLY | O_DIRECTORY, 0, err);
	if (fd < 0)
		return -1;
	c->open_fds++;
	return fd;
}

int unpkg_commit_name_root(struct unpkg_commit *c,
			   const struct unpkg_root *root, const char *shown,
			   struct unpkg_err *err)
{
	if (c->nnames == sizeof(c->names) / sizeof(c->names[0]))
		return unpkg_err_set(err, UNPKG_ERR_USAGE,
				     "too many named roots");
	c->names[c->nnames].root = root;
	c->names[c->nnames++].shown = shown;
	return 0;
}

void unpkg_commit_database_root(struct unpkg_commit *c,
				const struct unpkg_root *root)
{
	c->db_root = root;
}

/* "" for the installation root, whose paths are shown as /RELPATH. */
static const char *root_name(const struct unpkg_commit *c,
			     const struct unpkg_root *root)
{
	size_t i;

	for (i = 0; i < c->nnames; i++)
		if (c->names[i].root == root)
			return c->names[i].shown;
	return "";
}

/* NAME/RELPATH, or NAME alone (or "/") for the root itself. */
static char *shown_path(const char *name, const char *relpath)
{
	size_t n = strlen(name), r = strlen(relpath);
	char *s = malloc(n + r + 2);

	if (s == NULL)
		return NULL;
	memcpy(s, name, n);
	if (r > 0 || n == 0)
		s[n++] = '/';
	memcpy(s + n, relpath, r + 1);
	return s;
}

int unpkg_commit_dir(struct unpkg_commit *c, struct unpkg_root *root,
		     const char *relpath, struct unpkg_err *err)
{
	struct commit_dir *d;
	struct stat st;
	int fd, found;

	fd = open_dir(c, root, relpath, err);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0) {
		unpkg_err_sys(err, "cannot stat directory %s/%s",
			      root_name(c, root), relpath);
		goto fail;
	}
	found = dirhash_find(c, st.st_dev, st.st_ino);
	if (found >= 0) {
		d = &c->dirs[found];
		if (root == c->db_root)
			d->database = 1;
		if (d->fd < 0) {
			d->fd = fd;
		} else {
			close(fd);
			c->open_fds--;
		}
		return found;
	}
	if (grow((void **)&c->dirs, &c->capdirs, c->ndirs + 1,
		 sizeof(*c->dirs), err) < 0 ||
	    dirhash_reserve(c, err) < 0)
		goto fail;
	d = &c->dirs[c->ndirs];
	d->relpath = strdup(relpath);
	d->shown = shown_path(root_name(c, root), relpath);
	if (d->relpath == NULL || d->shown == NULL) {
		free(d->relpath);
		free(d->shown);
		unpkg_err_nomem(err);
		goto fail;
	}
	d->root = root;
	d->fd = fd;
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	d->touched = 0;
	d->pending = 0;
	d->database = root == c->db_root;
	dirhash_insert(c, (int)c->ndirs);
	return (int)c->ndirs++;
fail:
	close(fd);
	c->open_fds--;
	return -1;
}

int unpkg_commit_dirfd(struct unpkg_commit *c, int dir, struct unpkg_err *err)
{
	struct commit_dir *d = &c->dirs[dir];
	struct stat st;
	int fd;

	if (d->fd >= 0)
		return d->fd;
	fd = open_dir(c, d->root, d->relpath, err);
	if (fd < 0)
		return -1;
	/* The directory must still be the one registered: a symlink swapped
	 * in meanwhile must not redirect the transaction. */
	if (fstat(fd, &st) < 0 || st.st_dev != d->dev || st.st_ino != d->ino) {
		close(fd);
		c->open_fds--;
		return unpkg_err_set(err, UNPKG_ERR_CONFLICT,
				     "directory %s changed during the run",
				     d->shown);
	}
	d->fd = fd;
	return fd;
}

int unpkg_commit_mkdir(struct unpkg_commit *c, int dir, const char *name,
		       struct unpkg_err *err)
{
	struct commit_mkdir *m;

	if (grow((void **)&c->mkdirs, &c->capmkdirs, c->nmkdirs + 1,
		 sizeof(*c->mkdirs), err) < 0)
		return -1;
	m = &c->mkdirs[c->nmkdirs];
	m->name = strdup(name);
	if (m->name == NULL)
		return unpkg_err_nomem(err);
	m->dir = dir;
	c->nmkdirs++;
	c->dirs[dir].touched = 1;
	c->unsynced++;
	return 0;
}

/* Entry flags of commit.c's own, above the UNPKG_STAGE_* bits: the entry
 * is an old file (or directory) moved aside by unpkg_commit_remove(). */
#define ENTRY_REMOVED		(1u << 16)
#define ENTRY_REMOVED_DIR	(1u << 17)

/* --- staging ------------------------------------------------------------*/

static char *suffixed(const char *name, const char *suffix)
{
	char *s;

	if (asprintf(&s, "%s%s", name, suffix) < 0)
		return NULL;
	return s;
}

int unpkg_commit_stage(struct unpkg_commit *c, int dir, const char *tmpname,
		       const char *name, int fd, unsigned int flags,
		       struct unpkg_err *err)
{
	struct commit_entry *e = NULL;
	char *backup = NULL;
	int dfd, ret = -1;

	if (fd >= 0)
		c->open_fds++;	/* the caller opened it; we own it now */
	if (grow((void **)&c->ents, &c->capents, c->nents + 1,
		 sizeof(*c->ents), err) < 0)
		goto out;
	e = &c->ents[c->nents];
	e->dir = dir;
	e->fd = fd;
	e->flags = flags;
	e->state = ENTRY_STAGED;
	e->tmpname = strdup(tmpname);
	e->name = strdup(name);
	if (e->tmpname == NULL || e->name == NULL) {
		free(e->tmpname);
		free(e->name);
		unpkg_err_nomem(err);
		goto out;
	}
	c->nents++;
	fd = -1;		/* now closed through the entry */
	c->dirs[dir].touched = 1;
	/* A file waiting from an earlier transaction is durable already. */
	if (!(flags & UNPKG_STAGE_KEEP))
		c->unsynced++;

	if (flags & UNPKG_STAGE_BACKUP) {
		dfd = unpkg_commit_dirfd(c, dir, err);
		if (dfd < 0)
			goto out;
		backup = suffixed(name, ".dpkg-tmp");
		if (backup == NULL) {
			unpkg_err_nomem(err);
			goto out;
		}
		/* A backup left by an interrupted run is stale: the name it
		 * guards exists, so the current file is the one to keep. */
		if (unlinkat(dfd, backup, 0) < 0 && errno != ENOENT) {
			unpkg_err_sys(err, "cannot remove %s", backup);
			goto out;
		}
		if (linkat(dfd, name, dfd, backup, 0) < 0) {
			unpkg_err_sys(err, "cannot back up %s as %s", name,
				      backup);
			/* Without a backup, abort must not touch `name`. */
			e->flags &= ~(unsigned int)UNPKG_STAGE_BACKUP;
			goto out;
		}
	}
	if (e->fd >= 0) {
		if (c->ops->staged(c, e, err) < 0)
			goto out;
	}
	if (reserve_fd(c, err) < 0)
		goto out;
	ret = 0;
out:
	if (fd >= 0) {
		close(fd);
		c->open_fds--;
	}
	free(backup);
	return ret;
}

int unpkg_commit_remove(struct unpkg_commit *c, int dir, const char *name,
			int is_dir, struct unpkg_err *err)
{
	struct commit_entry *e;
	char *backup;
	int dfd;

	if (grow((void **)&c->ents, &c->capents, c->nents + 1,
		 sizeof(*c->ents), err) < 0)
		return -1;
	dfd = unpkg_commit_dirfd(c, dir, err);
	if (dfd < 0)
		return -1;
	e = &c->ents[c->nents];
	e->name = strdup(name);
	backup = suffixed(name, ".dpkg-tmp");
	if (e->name == NULL || backup == NULL) {
		free(e->name);
		free(backup);
		return unpkg_err_nomem(err);
	}
	c->stats->rename++;
	if ((is_dir ? unpkg_dir_move(dfd, name, backup)
		    : renameat(dfd, name, dfd, backup)) < 0) {
		unpkg_err_sys(err, "cannot move %s aside to %s", name, backup);
		free(e->name);
		free(backup);
		return -1;
	}
	free(backup);
	e->dir = dir;
	e->tmpname = NULL;
	e->fd = -1;
	e->flags = ENTRY_REMOVED | (is_dir ? ENTRY_REMOVED_DIR : 0);
	e->state = ENTRY_RENAMED;
	c->nents++;
	c->dirs[dir].touched = 1;
	return 0;
}

int unpkg_commit_unlink(struct unpkg_commit *c, int dir, const char *name,
			struct unpkg_err *err)
{
	int dfd;

	/* a removal may touch more directories than descriptors allow */
	if (reserve_fd(c, err) < 0)
		return -1;
	dfd = unpkg_commit_dirfd(c, dir, err);
	if (dfd < 0)
		return -1;
	if (unlinkat(dfd, name, 0) < 0)
		return unpkg_err_sys(err, "cannot remove %s", name);
	c->dirs[dir].touched = 1;
	return 0;
}

int unpkg_commit_sync_with(struct unpkg_commit *c, int dir, const char *name,
			   int fd, struct unpkg_err *err)
{
	struct commit_entry *e;

	c->open_fds++;		/* ours now, whatever happens */
	if (grow((void **)&c->ents, &c->capents, c->nents + 1,
		 sizeof(*c->ents), err) < 0)
		goto fail;
	e = &c->ents[c->nents];
	e->tmpname = strdup(name);
	if (e->tmpname == NULL) {
		unpkg_err_nomem(err);
		goto fail;
	}
	e->name = NULL;
	e->dir = dir;
	e->fd = fd;
	e->flags = UNPKG_STAGE_NORENAME | ENTRY_SYNC_ONLY;
	e->state = ENTRY_UNDONE;	/* never renamed, restored or removed */
	c->nents++;
	c->sync_only++;
	return reserve_fd(c, err);
fail:
	close(fd);
	c->open_fds--;
	return -1;
}

/* --- the passes ------------------------------------------------------------*/

int commit_close_all(struct unpkg_commit *c, struct unpkg_err *err)
{
	size_t i;

	for (i = 0; i < c->nents; i++)
		if (commit_close_fd(c, &c->ents[i], err) < 0)
			return -1;
	return 0;
}

int commit_fdatasync_open(struct unpkg_commit *c, struct unpkg_err *err)
{
	size_t i;

	for (i = 0; i < c->nents; i++) {
		struct commit_entry *e = &c->ents[i];

		if (e->fd < 0)
			continue;
		c->stats->fdatasync++;
		if (fdatasync(e->fd) < 0)
			return unpkg_err_sync(err, "cannot fdatasync %s",
					      e->tmpname);
		if (commit_close_fd(c, e, err) < 0)
			return -1;
	}
	return 0;
}

/* The files still open (fdatasync), then the touched directories, or
 * only the database's (fsync). */
static int fsync_dirs(struct unpkg_commit *c, int database_only,
		      struct unpkg_err *err)
{
	size_t i;

	if (commit_fdatasync_open(c, err) < 0)
		return -1;
	for (i = 0; i < c->ndirs; i++) {
		int fd;

		if (!c->dirs[i].touched ||
		    (database_only && !c->dirs[i].database))
			continue;
		fd = unpkg_commit_dirfd(c, (int)i, err);
		if (fd < 0)
			return -1;
		c->stats->fsync++;
		if (fsync(fd) < 0)
			return unpkg_err_sync(err, "cannot fsync directory %s",
					     c->dirs[i].shown);
	}
	return 0;
}

int commit_fsync_touched_dirs(struct unpkg_commit *c, struct unpkg_err *err)
{
	return fsync_dirs(c, 0, err);
}

int commit_fsync_database_dirs(struct unpkg_commit *c, struct unpkg_err *err)
{
	return fsync_dirs(c, 1, err);
}

int commit_syncfs_touched(struct unpkg_commit *c, struct unpkg_err *err)
{
	/* The file systems synced so far; past the first few (never seen
	 * in practice) one may be synced more than once. */
	dev_t done[16];
	size_t i, j, ndone = 0;
	int ret = -1;

	for (i = 0; i < c->nents; i++)
		if (c->ents[i].fd >= 0)
			c->dirs[c->ents[i].dir].pending = 1;
	for (i = 0; i < c->ndirs; i++) {
		struct commit_dir *d = &c->dirs[i];
		int fd;

		if (!d->touched && !d->pending)
			continue;
		for (j = 0; j < ndone && done[j] != d->dev; j++)
			;
		if (j < ndone)
			continue;
		fd = unpkg_commit_dirfd(c, (int)i, err);
		if (fd < 0)
			goto out;
		c->stats->syncfs++;
		if (syncfs(fd) < 0) {
			unpkg_err_sync(err, "cannot sync the filesystem of %s",
				       d->shown);
			goto out;
		}
		if (ndone < sizeof(done) / sizeof(done[0]))
			done[ndone++] = d->dev;
	}
	ret = commit_close_all(c, err);
out:
	for (i = 0; i < c->ndirs; i++)
		c->dirs[i].pending = 0;
	return ret;
}

/* Move the empty directory `name` aside as NAME.dpkg-tmp (or back; a
 * directory built there by unpkg_dir_move() can always be renamed). */
static int swap_dir_backup(struct unpkg_commit *c, int dfd,
			   const struct commit_entry *e, int back,
			   struct unpkg_err *err)
{
	char *backup = suffixed(e->name, ".dpkg-tmp");
	int ret = -1;

	if (backup == NULL)
		return unpkg_err_nomem(err);
	c->stats->rename++;
	if (back)
		ret = renameat(dfd, backup, dfd, e->name);
	else if ((unlinkat(dfd, backup, AT_REMOVEDIR) == 0 || errno == ENOENT))
		ret = unpkg_dir_move(dfd, e->name, backup);
	if (ret < 0)
		unpkg_err_sys(err, "cannot move directory %s %s %s", e->name,
			      back ? "back from" : "aside to", backup);
	free(backup);
	return ret;
}

static int rename_pass(struct unpkg_commit *c, struct unpkg_err *err)
{
	size_t i;

	for (i = 0; i < c->nents; i++) {
		struct commit_entry *e = &c->ents[i];
		int dfd;

		if (e->state != ENTRY_STAGED ||
		    (e->flags & UNPKG_STAGE_NORENAME))
			continue;
		dfd = unpkg_commit_dirfd(c, e->dir, err);
		if (dfd < 0)
			return -1;
		if ((e->flags & UNPKG_STAGE_DIRBACKUP) &&
		    swap_dir_backup(c, dfd, e, 0, err) < 0)
			return -1;
		c->stats->rename++;
		if (renameat(dfd, e->tmpname, dfd, e->name) < 0) {
			unpkg_err_sys(err, "cannot rename %s to %s",
				      e->tmpname, e->name);
			if (e->flags & UNPKG_STAGE_DIRBACKUP)
				swap_dir_backup(c, dfd, e, 1, err);
			return -1;
		}
		e->state = ENTRY_RENAMED;
	}
	return 0;
}

static void clear_touched(struct unpkg_commit *c)
{
	size_t i;

	for (i = 0; i < c->ndirs; i++)
		c->dirs[i].touched = 0;
}

int unpkg_commit_finish_hooked(struct unpkg_commit *c,
			       const struct unpkg_commit_hooks *h,
			       struct unpkg_err *err)
{
	double t0 = unpkg_now(), t1;

#ifdef UNPKG_BROKEN_RENAME_FIRST
	/* A deliberately unsafe build for the power-loss harness's self-test
	 * (tests/crash): renames before the data is durable, breaking I1.
	 * Never defined in a normal build. */
	if (rename_pass(c, err) < 0)
		return -1;
#endif
	if (barrier(c, err) < 0)
		return -1;
	t1 = unpkg_now();
	c->stats->phase_seconds[UNPKG_PHASE_BARRIER] += t1 - t0;
	if ((h != NULL && h->synced != NULL && h->synced(h->ctx, err) < 0) ||
	    rename_pass(c, err) < 0)
		return -1;
	if (h != NULL && h->renamed != NULL) {
		/* What the hook stages gets a barrier and renames of its own;
		 * what it hands to unpkg_commit_sync_with() alone waits for
		 * the final sync. */
		if (h->renamed(h->ctx, err) < 0 ||
		    (c->unsynced > 0 && barrier(c, err) < 0) ||
		    rename_pass(c, err) < 0)
			return -1;
	}
	if (run_op(c, c->ops->renamed, err) < 0)
		return -1;
	c->sync_only = 0;
	c->stats->phase_seconds[UNPKG_PHASE_RENAME] += unpkg_now() - t1;
	/* Durable now: a later finish of the same transaction syncs only
	 * what changes after this one. */
	clear_touched(c);
	return 0;
}

int unpkg_commit_finish(struct unpkg_commit *c, struct unpkg_err *err)
{
	return unpkg_commit_finish_hooked(c, NULL, err);
}

/* Free the entries and created directories from the given indexes on;
 * from the start, the whole transaction is over and nothing is touched. */
static void forget_from(struct unpkg_commit *c, size_t ents, size_t mkdirs)
{
	size_t i;

	for (i = ents; i < c->nents; i++) {
		free(c->ents[i].tmpname);
		free(c->ents[i].name);
	}
	c->nents = ents;
	for (i = mkdirs; i < c->nmkdirs; i++)
		free(c->mkdirs[i].name);
	c->nmkdirs = mkdirs;
	if (ents == 0 && mkdirs == 0)
		clear_touched(c);
}

/* Remove directory `name` in `dfd` and everything in it; 0, or -1 with
 * errno set. */
static int remove_tree(int dfd, const char *name)
{
	struct dirent *de;
	DIR *d;
	int fd, ret = 0, saved = 0;

	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	d = fdopendir(fd);
	if (d == NULL) {
		close(fd);
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (unlinkat(fd, de->d_name, 0) == 0 || errno == ENOENT)
			continue;
		if (errno != EISDIR || remove_tree(fd, de->d_name) < 0) {
			saved = errno;
			ret = -1;
		}
	}
	closedir(d);
	if (unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		return -1;
	errno = saved;
	return ret;
}

/* Newest first: the backups of removed files go before the backup of the
 * file list that names them (a run interrupted in between still finds
 * them through that list), and a removed directory before the entries
 * that were moved aside inside it. */
int unpkg_commit_release(struct unpkg_commit *c, struct unpkg_err *err)
{
	int ret = 0;
	size_t i;

	for (i = c->nents; i-- > 0;) {
		struct commit_entry *e = &c->ents[i];
		struct unpkg_err gone;
		char *backup;
		int dfd, r;

		if (e->state == ENTRY_UNDONE ||
		    !(e->flags & (UNPKG_STAGE_BACKUP | UNPKG_STAGE_DIRBACKUP |
				  ENTRY_REMOVED)))
			continue;
		backup = suffixed(e->name, ".dpkg-tmp");
		if (backup == NULL) {
			ret = unpkg_err_nomem(err);
			continue;
		}
		/* An entry moved aside inside a removed directory went with
		 * that directory. */
		unpkg_err_init(&gone);
		dfd = unpkg_commit_dirfd(c, e->dir,
					 e->flags & ENTRY_REMOVED ? &gone : err);
		if (dfd < 0) {
			if (!(e->flags & ENTRY_REMOVED))
				ret = -1;
			free(backup);
			continue;
		}
		if (e->flags & ENTRY_REMOVED_DIR)
			r = remove_tree(dfd, backup);
		else
			r = unlinkat(dfd, backup, (e->flags &
						   UNPKG_STAGE_DIRBACKUP)
						  ? AT_REMOVEDIR : 0);
		if (r < 0 && errno != ENOENT)
			ret = unpkg_err_sys(err, "cannot remove %s", backup);
		free(backup);
	}
	forget_from(c, 0, 0);
	return ret;
}

/* Undo entries [ents, ents_end) and created directories [mkdirs,
 * mkdirs_end), newest first; then forget them when they are the last
 * ones, else mark them undone. */
static void abort_range(struct unpkg_commit *c, size_t ents, size_t ents_end,
			size_t mkdirs, size_t mkdirs_end)
{
	struct unpkg_err ignored;
	int renamed = 0;
	size_t i;

	unpkg_err_init(&ignored);
	/* Newest first, so hard links and directories unwind in order. */
	for (i = ents_end; i-- > ents;) {
		struct commit_entry *e = &c->ents[i];
		int dfd;

		commit_close_fd(c, e, &ignored);
		if (e->state == ENTRY_UNDONE)
			continue;
		dfd = unpkg_commit_dirfd(c, e->dir, &ignored);
		if (dfd < 0)
			continue;
		if (e->state == ENTRY_STAGED) {
			if (!(e->flags & UNPKG_STAGE_KEEP))
				unlinkat(dfd, e->tmpname, 0);
			if (e->flags & UNPKG_STAGE_BACKUP) {
				char *backup = suffixed(e->name, ".dpkg-tmp");

				if (backup != NULL)
					unlinkat(dfd, backup, 0);
				free(backup);
			}
			continue;
		}
		renamed = 1;
		c->dirs[e->dir].touched = 1;
		if (e->flags & ENTRY_REMOVED) {
			char *backup = suffixed(e->name, ".dpkg-tmp");

			if (backup != NULL)
				renameat(dfd, backup, dfd, e->name);
			free(backup);
			continue;
		}
		if (e->flags & UNPKG_STAGE_KEEP) {
			/* back to where it waited; the file it replaced, if
			 * any, returns below */
			renameat(dfd, e->name, dfd, e->tmpname);
			if (!(e->flags & UNPKG_STAGE_BACKUP))
				continue;
		}
		if (e->flags & UNPKG_STAGE_DIRBACKUP) {
			unlinkat(dfd, e->name, 0);
			swap_dir_backup(c, dfd, e, 1, &ignored);
		} else if (e->flags & UNPKG_STAGE_BACKUP) {
			char *backup = suffixed(e->name, ".dpkg-tmp");

			if (backup != NULL)
				renameat(dfd, backup, dfd, e->name);
			free(backup);
		} else {
			unlinkat(dfd, e->name, 0);
		}
	}
	for (i = mkdirs_end; i-- > mkdirs;) {
		int dfd;

		if (c->mkdirs[i].dir < 0)
			continue;
		dfd = unpkg_commit_dirfd(c, c->mkdirs[i].dir, &ignored);
		if (dfd >= 0)
			unlinkat(dfd, c->mkdirs[i].name, AT_REMOVEDIR);
	}
	/* Restored files must be durable before the caller restores the
	 * database that describes them; but after a failed sync, syncing
	 * again proves nothing. */
	if (renamed && !c->sync_failed)
		c->ops->renamed(c, &ignored);
	if (ents_end == c->nents && mkdirs_end == c->nmkdirs) {
		forget_from(c, ents, mkdirs);
		return;
	}
	for (i = ents; i < ents_end; i++)
		c->ents[i].state = ENTRY_UNDONE;
	for (i = mkdirs; i < mkdirs_end; i++)
		c->mkdirs[i].dir = -1;
}

void unpkg_commit_abort(struct unpkg_commit *c)
{
	abort_range(c, 0, c->nents, 0, c->nmkdirs);
}

void unpkg_commit_rollback(struct unpkg_commit *c,
			   const struct unpkg_commit_savepoint *sp)
{
	abort_range(c, sp->entries, c->nents, sp->mkdirs, c->nmkdirs);
}

void unpkg_commit_undo(struct unpkg_commit *c,
		       const struct unpkg_commit_savepoint *from,
		       const struct unpkg_commit_savepoint *to)
{
	abort_range(c, from->entries, to->entries, from->mkdirs, to->mkdirs);
}

void unpkg_commit_free(struct unpkg_commit *c)
{
	size_t i;

	if (c == NULL)
		return;
	unpkg_commit_abort(c);
	commit_destroy_state(c);
	close_dir_fds(c);
	for (i = 0; i < c->ndirs; i++) {
		free(c->dirs[i].relpath);
		free(c->dirs[i].shown);
	}
	free(c->dirs);
	free(c->dirhash);
	free(c->ents);
	free(c->mkdirs);
	free(c);
}
