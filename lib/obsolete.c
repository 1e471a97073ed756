/* obsolete.c - paths moved aside with the transaction (the old version's
 * files the new one lacks, a removed package's files) and put back on
 * failure (see obsolete.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "obsolete.h"

/* A (device, inode) pair of a file the new version installed. */
struct devino {
	dev_t dev;
	ino_t ino;
};


/* Whether a failure to look `path` up says it is not there: it, or a
 * directory above it, is missing or no directory. */
static int absent(const struct unpkg_err *e)
{
	return e->code == UNPKG_ERR_SYS &&
	       (e->errnum == ENOENT || e->errnum == ENOTDIR);
}

int obsolete_lstat(struct run *r, const char *path, struct stat *st,
		   struct unpkg_err *err)
{
	struct unpkg_err e;
	const char *base;
	int dfd, ret = -1;

	unpkg_err_init(&e);
	dfd = unpkg_root_open_parent(r->root, path + 1, &base, &e);
	if (dfd >= 0) {
		ret = fstatat(dfd, base, st, AT_SYMLINK_NOFOLLOW);
		if (ret < 0)
			unpkg_err_sys(&e, "cannot stat %s", path);
		close(dfd);
	}
	if (ret == 0)
		return 1;
	if (absent(&e))
		return 0;
	*err = e;
	return -1;
}

static int is_subdir(int dfd, const struct dirent *de)
{
	struct stat st;

	if (de->d_type != DT_UNKNOWN)
		return de->d_type == DT_DIR;
	return fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISDIR(st.st_mode);
}

static int has_suffix(const char *s, const char *suffix)
{
	size_t len = strlen(s), slen = strlen(suffix);

	return len > slen && strcmp(s + len - slen, suffix) == 0;
}

/* 1 if every entry beneath directory `name` in `dfd` (the old path
 * `path`) is in `gone`, 0 if not, -1 on error. */
int obsolete_all_gone(int dfd, const char *name, const char *path,
		      const struct unpkg_strmap *gone, struct unpkg_err *err)
{
	struct dirent *de;
	DIR *dir;
	int fd, ret = 1;

	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	dir = fd >= 0 ? fdopendir(fd) : NULL;
	if (dir == NULL) {
		if (fd >= 0)
			close(fd);
		return unpkg_err_sys(err, "cannot read directory %s", path);
	}
	while (ret == 1 && (de = readdir(dir)) != NULL) {
		char *full;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (asprintf(&full, "%s/%s", path, de->d_name) < 0) {
			ret = unpkg_err_nomem(err);
			break;
		}
		if (unpkg_strmap_get(gone, full) == NULL)
			ret = 0;
		/* NAME.dpkg-tmp in `gone`: moved aside whole */
		else if (!has_suffix(de->d_name, ".dpkg-tmp") &&
			 is_subdir(dirfd(dir), de))
			ret = obsolete_all_gone(dirfd(dir), de->d_name, full, gone, err);
		free(full);
	}
	closedir(dir);
	return ret;
}

/* 1 if an ancestor of `path` is in `moved`. */
int obsolete_under_moved(const char *path, const struct unpkg_strmap *moved)
{
	char buf[PATH_MAX];
	char *slash;

	if (strlen(path) >= sizeof(buf))
		return 0;
	strcpy(buf, path);
	while ((slash = strrchr(buf, '/')) != NULL && slash != buf) {
		*slash = '\0';
		if (unpkg_strmap_get(moved, buf) != NULL)
			return 1;
	}
	return 0;
}

int obsolete_parent_dir(struct run *r, const char *path, struct unpkg_err *err)
{
	const char *slash = strrchr(path, '/');
	char *parent;
	int dir;

	parent = strndup(path + 1, slash == path ? 0
				   : (size_t)(slash - path - 1));
	if (parent == NULL)
		return unpkg_err_nomem(err);
	dir = unpkg_commit_dir(r->commit, r->root, parent, err);
	free(parent);
	return dir;
}

static void warn_kept(struct run *r, const char *who, const char *path,
		      int is_dir, const struct unpkg_err *why)
{
	unpkg_event_emit(r->o->events, UNPKG_EV_WARNING, who,
			 "unable to delete old %s '%s': %s",
			 is_dir ? "directory" : "file", path, why->msg);
}

int obsolete_move_aside(struct run *r, const char *who, const char *path,
			int dir, int is_dir, struct unpkg_strmap *moved,
			struct unpkg_err *err)
{
	const char *base = strrchr(path, '/') + 1;
	struct unpkg_err why;

	unpkg_err_init(&why);
	if (unpkg_commit_remove(r->commit, dir, base, is_dir, &why) == 0)
		return unpkg_strmap_put(moved, path, (void *)path, NULL, err);
	warn_kept(r, who, path, is_dir, &why);
	return 0;
}

int obsolete_unlink(struct run *r, const char *who, const char *path,
		    int dir, struct unpkg_err *err)
{
	struct unpkg_err why;

	unpkg_err_init(&why);
	if (unpkg_commit_unlink(r->commit, dir, strrchr(path, '/') + 1,
				&why) == 0)
		return 0;
	if (why.code == UNPKG_ERR_SYNC) {
		*err = why;
		return -1;
	}
	warn_kept(r, who, path, 0, &why);
	return 0;
}

static int cmp_devino(const void *a, const void *b)
{
	const struct devino *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return 0;
}

/* The identities of every non-directory the new version installed, sorted:
 * under merged /usr an old path (/lib/x) can name a new file (/usr/lib/x),
 * which must not be removed. */
static int new_identities(struct run *r, const struct pkg *p,
			  struct devino **out, size_t *n, struct unpkg_err *err)
{
	struct devino *v;
	size_t i;

	*n = 0;
	v = malloc((p->files.count + 1) * sizeof(*v));
	if (v == NULL)
		return unpkg_err_nomem(err);
	for (i = 0; i < p->files.count; i++) {
		const struct unpkg_file *f = &p->files.files[i];
		struct stat st;
		int there;

		if (f->type == UNPKG_ENTRY_DIR || f->filtered)
			continue;
		there = obsolete_lstat(r, unpkg_divert_use(r->divs, f->path,
							   p->name), &st, err);
		if (there < 0) {
			free(v);
			return -1;
		}
		if (there) {
			v[*n].dev = st.st_dev;
			v[(*n)++].ino = st.st_ino;
		}
	}
	qsort(v, *n, sizeof(*v), cmp_devino);
	*out = v;
	return 0;
}

/* The old version's paths the new one lacks (or lists but leaves out
 * through the path filters, as dpkg does), but the old and the new
 * version's conffiles (kept, as dpkg keeps them); in the old list's
 * order, parents first. */
int obsolete_find(struct pkg *p, struct unpkg_err *err)
{
	char hash[33];
	size_t i;

	if (p->nold_files == 0)
		return 0;
	p->obsolete = malloc(p->nold_files * sizeof(*p->obsolete));
	if (p->obsolete == NULL)
		return unpkg_err_nomem(err);
	for (i = 0; i < p->nold_files; i++) {
		const char *path = p->old_files[i];

		if (!unpkg_db_listed_below_root(path) ||
		    unpkg_filelist_unpacks(&p->files, path) ||
		    unpkg_strmap_get(&p->confmap, path) != NULL)
			continue;
		run_recorded_hash(p, path, hash);
		if (hash[0] == '\0')
			p->obsolete[p->nobsolete++] = path;
	}
	return 0;
}

/* Whether obsolete `path` (found at `fs`, diverted or not) may go: not
 * when another package lists it, nor a file the new version installed
 * under another name (merged /usr). */
static int may_remove(struct run *r, struct pkg *p, const char *path,
		      const char *fs, struct stat *st, struct devino **ids,
		      size_t *nids, struct unpkg_err *err)
{
	const char *owner = unpkg_strmap_get(&r->run_files, path);
	struct devino key;
	int there;

	/* p's own entry there is one the path filters left out */
	if (owner != NULL && owner != p->label)
		return 0;
	if (unpkg_db_load_files(r->db, err) < 0)
		return -1;
	if (unpkg_db_file_owner(r->db, path, p->key) != NULL)
		return 0;
	there = obsolete_lstat(r, fs, st, err);
	if (there <= 0)
		return there;
	if (S_ISDIR(st->st_mode))
		return 1;
	if (*ids == NULL && new_identities(r, p, ids, nids, err) < 0)
		return -1;
	key.dev = st->st_dev;
	key.ino = st->st_ino;
	return bsearch(&key, *ids, *nids, sizeof(key), cmp_devino) == NULL;
}

/* Remove the obsolete paths as dpkg does after unpacking: not files
 * another package lists, directories only when nothing else is in them.
 * Each goes aside as NAME.dpkg-tmp (a directory whole, with everything
 * beneath it), so that a failure before the record can put it back.
 * What cannot be removed is left with a warning. */
int obsolete_remove(struct run *r, struct pkg *p, struct unpkg_err *err)
{
	struct unpkg_strmap gone, moved;
	struct devino *ids = NULL;
	size_t nids = 0, i;
	int ret = -1;

	unpkg_strmap_init(&gone);
	unpkg_strmap_init(&moved);
	for (i = 0; i < p->nobsolete; i++) {
		/* a diverted file is removed where it is, as dpkg does */
		const char *fs = unpkg_divert_use(r->divs, p->obsolete[i],
						  p->name);
		struct stat st;
		int ok = may_remove(r, p, p->obsolete[i], fs, &st, &ids, &nids,
				    err);

		if (ok < 0 || (ok > 0 && unpkg_strmap_put(&gone, fs, (void *)fs,
							  NULL, err) < 0))
			goto out;
	}
	for (i = 0; i < p->nobsolete; i++) {
		const char *path = unpkg_divert_use(r->divs, p->obsolete[i],
						    p->name);
		const char *slash = strrchr(path, '/');
		struct stat st;
		int dir, dfd, is_dir, there;

		if (unpkg_strmap_get(&gone, path) == NULL ||
		    obsolete_under_moved(path, &moved))
			continue;
		there = obsolete_lstat(r, path, &st, err);
		if (there < 0)
			goto out;
		if (!there)
			continue;
		is_dir = S_ISDIR(st.st_mode);
		dir = obsolete_parent_dir(r, path, err);
		dfd = dir >= 0 ? unpkg_commit_dirfd(r->commit, dir, err) : -1;
		if (dfd < 0)
			goto out;
		if (is_dir) {
			int all = obsolete_all_gone(dfd, slash + 1, path, &gone, err);

			if (all < 0)
				goto out;
			if (all == 0)
				continue;	/* dpkg keeps it too */
		}
		if (obsolete_move_aside(r, p->key, path, dir, is_dir, &moved,
					err) < 0)
			goto out;
	}
	ret = 0;
out:
	unpkg_strmap_destroy(&gone);
	unpkg_strmap_destroy(&moved);
	free(ids);
	return ret;
}
