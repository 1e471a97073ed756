/* extract.c - streaming data.tar entries into staged entries. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <md5.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "extract.h"
#include "io.h"
#include "statoverride.h"

#define TMP_SUFFIX ".dpkg-new"

/* Paths in messages are cut after this many bytes, so that a path near
 * PATH_MAX leaves room in the message for the cause. */
#define MSG_PATH_MAX 200

void unpkg_filelist_init(struct unpkg_filelist *list)
{
	list->files = NULL;
	list->count = 0;
	list->cap = 0;
	unpkg_strmap_init(&list->index);
}

void unpkg_filelist_destroy(struct unpkg_filelist *list)
{
	size_t i;

	for (i = 0; i < list->count; i++)
		free(list->files[i].path);
	free(list->files);
	unpkg_strmap_destroy(&list->index);
	unpkg_filelist_init(list);
}

const struct unpkg_file *unpkg_filelist_get(const struct unpkg_filelist *list,
					    const char *path)
{
	uintptr_t i = (uintptr_t)unpkg_strmap_get(&list->index, path);

	return i != 0 ? &list->files[i - 1] : NULL;
}

int unpkg_filelist_unpacks(const struct unpkg_filelist *list,
			   const char *path)
{
	const struct unpkg_file *f = unpkg_filelist_get(list, path);

	return f != NULL && !f->filtered;
}

/* A user or group name resolved once per run. */
struct idcache_entry {
	char *name;
	long id;		/* -1: unknown name */
};

struct idcache {
	struct idcache_entry *v;
	size_t n;
};

struct extract {
	const struct unpkg_extract_opts *o;
	struct unpkg_deb *deb;
	struct unpkg_filelist *list;
	char *parent;		/* relpath of the directory in `dir` */
	int dir;		/* commit handle of `parent`, -1 if none */
	struct idcache users, groups;
	/* The package ships no md5sums: it is made from the digests of
	 * every file.  Otherwise only conffiles need one. */
	int digest_all;
};

static void idcache_destroy(struct idcache *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->v[i].name);
	free(c->v);
}

/* Look `name` up in the system's user (or group) database, as dpkg
 * does; NULL/"" or an unknown name keep the archive's numeric id. */
static int resolve_id(struct idcache *c, const char *name, int group,
		      long fallback, long *id, struct unpkg_err *err)
{
	struct idcache_entry *grown;
	size_t i;
	long found = -1;

	*id = fallback;
	if (name == NULL || *name == '\0')
		return 0;
	for (i = 0; i < c->n; i++) {
		if (strcmp(c->v[i].name, name) == 0) {
			if (c->v[i].id >= 0)
				*id = c->v[i].id;
			return 0;
		}
	}
	if (group) {
		struct group gr, *res = NULL;
		char buf[4096];

		if (getgrnam_r(name, &gr, buf, sizeof(buf), &res) == 0 &&
		    res != NULL)
			found = (long)gr.gr_gid;
	} else {
		struct passwd pw, *res = NULL;
		char buf[4096];

		if (getpwnam_r(name, &pw, buf, sizeof(buf), &res) == 0 &&
		    res != NULL)
			found = (long)pw.pw_uid;
	}
	grown = realloc(c->v, (c->n + 1) * sizeof(*c->v));
	if (grown == NULL)
		return unpkg_err_nomem(err);
	c->v = grown;
	c->v[c->n].name = strdup(name);
	if (c->v[c->n].name == NULL)
		return unpkg_err_nomem(err);
	c->v[c->n++].id = found;
	if (found >= 0)
		*id = found;
	return 0;
}

static int owner_of(struct extract *x, const struct unpkg_deb_entry *e,
		    uid_t *uid, gid_t *gid, struct unpkg_err *err)
{
	long u, g;

	if (resolve_id(&x->users, e->uname, 0, (long)e->uid, &u, err) < 0 ||
	    resolve_id(&x->groups, e->gname, 1, (long)e->gid, &g, err) < 0)
		return -1;
	*uid = (uid_t)u;
	*gid = (gid_t)g;
	return 0;
}

static int add_file(struct extract *x, const char *path,
		    enum unpkg_entry_type type, const char *md5,
		    struct unpkg_err *err)
{
	struct unpkg_filelist *l = x->list;
	struct unpkg_file *f;
	void *old;
	int r;

	if (l->count == l->cap) {
		size_t cap = l->cap != 0 ? l->cap * 2 : 256;
		struct unpkg_file *v = realloc(l->files, cap * sizeof(*v));

		if (v == NULL)
			return unpkg_err_nomem(err);
		l->files = v;
		l->cap = cap;
	}
	f = &l->files[l->count];
	if (*path == '\0')
		f->path = strdup("/.");
	else if (asprintf(&f->path, "/%s", path) < 0)
		f->path = NULL;
	if (f->path == NULL)
		return unpkg_err_nomem(err);
	f->type = type;
	f->filtered = 0;
	snprintf(f->md5, sizeof(f->md5), "%s", md5 != NULL ? md5 : "");
	r = unpkg_strmap_put(&l->index, f->path,
			     (void *)(uintptr_t)(l->count + 1), &old, err);
	if (r != 0) {
		if (r > 0)
			unpkg_err_set(err, UNPKG_ERR_FORMAT,
				      "'%s' appears twice in the archive",
				      f->path);
		free(f->path);
		return -1;
	}
	l->count++;
	return 0;
}

/* The earlier entry `path` (archive form, no leading slash), or NULL. */
static const struct unpkg_file *find_file(const struct extract *x,
					  const char *path)
{
	char *key;
	uintptr_t i;

	if (asprintf(&key, "/%s", path) < 0)
		return NULL;
	i = (uintptr_t)unpkg_strmap_get(&x->list->index, key);
	free(key);
	return i != 0 ? &x->list->files[i - 1] : NULL;
}

/* Split `path` into the parent's commit handle and the last component.
 * Consecutive entries mostly share a directory: keep the last one. */
static int parent_of(struct extract *x, const char *path, const char **base,
		     struct unpkg_err *err)
{
	const char *slash = strrchr(path, '/');
	size_t plen = slash != NULL ? (size_t)(slash - path) : 0;

	*base = slash != NULL ? slash + 1 : path;
	if (x->dir >= 0 && strlen(x->parent) == plen &&
	    strncmp(x->parent, path, plen) == 0)
		return x->dir;
	free(x->parent);
	x->parent = strndup(path, plen);
	x->dir = -1;
	if (x->parent == NULL)
		return unpkg_err_nomem(err);
	x->dir = unpkg_commit_dir(x->o->commit, x->o->root, x->parent, err);
	return x->dir;
}

/* A failed chown that --force-not-root forgives (the owner stays the
 * user's, as with dpkg). */
static int owner_forgiven(const struct extract *x)
{
	return errno == EPERM && x->o->not_root;
}

/* Create, fill and finish NAME.dpkg-new; returns the open fd. */
static int write_regular(struct extract *x, const struct unpkg_deb_entry *e,
			 int dfd, const char *tmp, uid_t uid, gid_t gid,
			 int digest, char md5[33], struct unpkg_err *err)
{
	const struct unpkg_extract_opts *o = x->o;
	struct timespec times[2] = {
		{ .tv_nsec = UTIME_NOW },
		{ .tv_sec = (time_t)e->mtime },
	};
	MD5_CTX ctx;
	int64_t total = 0;
	int fd;

	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			      O_CLOEXEC, 0);
	if (fd < 0)
		return unpkg_err_sys(err, "cannot create /%s" TMP_SUFFIX,
				     e->path);
#ifdef HAVE_FALLOCATE
	/* Where the filesystem supports it, this reserves the space up
	 * front: ENOSPC now rather than halfway, and less fragmentation. */
	if (e->size > 0 && fallocate(fd, 0, 0, (off_t)e->size) < 0 &&
	    errno != EOPNOTSUPP && errno != ENOSYS && errno != EINVAL) {
		unpkg_err_sys(err, "cannot allocate space for /%s", e->path);
		goto fail;
	}
#endif
	md5[0] = '\0';
	if (digest)
		MD5Init(&ctx);
	for (;;) {
		const void *buf;
		size_t len;
		int r = unpkg_deb_read(x->deb, &buf, &len, err);

		if (r < 0)
			goto fail;
		if (r == 0)
			break;
		if (digest)
			MD5Update(&ctx, buf, len);
		if (unpkg_write_all(fd, buf, len) < 0) {
			unpkg_err_sys(err, "cannot write /%s", e->path);
			goto fail;
		}
		total += (int64_t)len;
	}
	if (total != e->size) {
		unpkg_err_set(err, UNPKG_ERR_CORRUPT,
			      "/%s: archive has %lld bytes instead of %lld",
			      e->path, (long long)total, (long long)e->size);
		goto fail;
	}
	if (digest)
		MD5End(&ctx, md5);
	/* Owner first: chown clears setuid/setgid, the mode restores them. */
	if (fchown(fd, uid, gid) < 0 && !owner_forgiven(x)) {
		unpkg_err_sys(err, "cannot set owner of /%s", e->path);
		goto fail;
	}
	if (fchmod(fd, e->mode & 07777) < 0) {
		unpkg_err_sys(err, "cannot set mode of /%s", e->path);
		goto fail;
	}
	if (futimens(fd, times) < 0) {
		unpkg_err_sys(err, "cannot set modification time of /%s",
			      e->path);
		goto fail;
	}
	o->stats->files++;
	o->stats->bytes += (unsigned long long)total;
	return fd;
fail:
	close(fd);
	unlinkat(dfd, tmp, 0);
	return -1;
}

/* The digest of staged file `name` in `dfd` (a hard link to an earlier
 * file whose digest was not needed then); "" if it is no regular file. */
static int digest_staged(int dfd, const char *name, const char *path,
			 char md5[33], struct unpkg_err *err)
{
	unsigned char buf[64 * 1024];
	struct stat st;
	MD5_CTX ctx;
	ssize_t n;
	int fd, ret = -1;

	md5[0] = '\0';
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return unpkg_err_sys(err, "cannot open /%s" TMP_SUFFIX, path);
	if (fstat(fd, &st) < 0) {
		unpkg_err_sys(err, "cannot stat /%s" TMP_SUFFIX, path);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = 0;
		goto out;
	}
	MD5Init(&ctx);
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			unpkg_err_sys(err, "cannot read /%s" TMP_SUFFIX, path);
			goto out;
		}
		MD5Update(&ctx, buf, (size_t)n);
	}
	MD5End(&ctx, md5);
	ret = 0;
out:
	close(fd);
	return ret;
}

/* The directory handle and temporary name of an earlier entry of the
 * package: everything is still staged under NAME.dpkg-new. */
static int staged_name(struct extract *x, const char *path, int *dir,
		       char **tmp, struct unpkg_err *err)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash != NULL ? slash + 1 : path;
	char *parent = strndup(path, slash != NULL ? (size_t)(slash - path) : 0);

	if (parent == NULL)
		return unpkg_err_nomem(err);
	*dir = unpkg_commit_dir(x->o->commit, x->o->root, parent, err);
	free(parent);
	if (*dir < 0)
		return -1;
	if (asprintf(tmp, "%s" TMP_SUFFIX, base) < 0)
		return unpkg_err_nomem(err);
	return 0;
}

/* Where entry `path` (archive form) of the package is on the file
 * system (archive form): the divert-to path of a diversion that applies
 * to the package, else `path`. */
static const char *use_path(const struct extract *x, const char *path)
{
	const char *use;
	char key[PATH_MAX + 2];

	if (x->o->diversions == NULL ||
	    unpkg_divert_count(x->o->diversions) == 0 ||
	    (size_t)snprintf(key, sizeof(key), "/%s", path) >= sizeof(key))
		return path;
	use = unpkg_divert_use(x->o->diversions, key, x->o->pkgname);
	return use == key ? path : use + 1;
}

static int make_hardlink(struct extract *x, const struct unpkg_deb_entry *e,
			 int dfd, const char *tmp, struct unpkg_err *err)
{
	const struct unpkg_file *t = find_file(x, e->link);
	char *ttmp = NULL;
	int tdir = -1, tfd, ret = -1;

	/* The entry itself is already in the list: a link to itself has no
	 * earlier file to share. */
	if (t == NULL || t == &x->list->files[x->list->count - 1] ||
	    t->type == UNPKG_ENTRY_DIR)
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "/%s: hard link target /%s is not an "
				     "earlier file of the package",
				     e->path, e->link);
	/* dpkg cannot make one either: the target is not there */
	if (t->filtered)
		return unpkg_err_set(err, UNPKG_ERR_UNSUPPORTED,
				     "/%s: hard link target /%s is filtered "
				     "out (--path-exclude)", e->path, e->link);
	/* dpkg cannot make one either (its symlink is not in place yet). */
	if (t->type == UNPKG_ENTRY_SYMLINK)
		return unpkg_err_set(err, UNPKG_ERR_UNSUPPORTED,
				     "/%s: hard link target /%s is a symlink",
				     e->path, e->link);
	if (staged_name(x, use_path(x, e->link), &tdir, &ttmp, err) < 0)
		goto out;
	tfd = unpkg_commit_dirfd(x->o->commit, tdir, err);
	if (tfd < 0)
		goto out;
	if (linkat(tfd, ttmp, dfd, tmp, 0) < 0) {
		unpkg_err_sys(err, "cannot create /%s" TMP_SUFFIX, e->path);
		goto out;
	}
	ret = 0;
out:
	free(ttmp);
	return ret;
}

/* Symlinks, hard links, fifos and devices: created under the temporary
 * name and given owner, mode and time without following links. */
static int create_special(struct extract *x, const struct unpkg_deb_entry *e,
			  int dfd, const char *tmp, uid_t uid, gid_t gid,
			  struct unpkg_err *err)
{
	struct timespec times[2] = {
		{ .tv_nsec = UTIME_NOW },
		{ .tv_sec = (time_t)e->mtime },
	};
	int r;

	switch (e->type) {
	case UNPKG_ENTRY_SYMLINK:
		r = symlinkat(e->link, dfd, tmp);
		break;
	case UNPKG_ENTRY_HARDLINK:
		/* Shares the target's inode, owner, mode and time. */
		return make_hardlink(x, e, dfd, tmp, err);
	case UNPKG_ENTRY_FIFO:
		r = mknodat(dfd, tmp, S_IFIFO, 0);
		break;
	case UNPKG_ENTRY_CHR:
		r = mknodat(dfd, tmp, S_IFCHR, e->rdev);
		break;
	case UNPKG_ENTRY_BLK:
		r = mknodat(dfd, tmp, S_IFBLK, e->rdev);
		break;
	default:
		return unpkg_err_set(err, UNPKG_ERR_UNSUPPORTED,
				     "/%s: unsupported entry type", e->path);
	}
	if (r < 0)
		return unpkg_err_sys(err, "cannot create /%s" TMP_SUFFIX,
				     e->path);
	if (fchownat(dfd, tmp, uid, gid, AT_SYMLINK_NOFOLLOW) < 0 &&
	    !owner_forgiven(x)) {
		unpkg_err_sys(err, "cannot set owner of /%s", e->path);
		goto fail;
	}
	if (e->type != UNPKG_ENTRY_SYMLINK &&
	    fchmodat(dfd, tmp, e->mode & 07777, 0) < 0) {
		unpkg_err_sys(err, "cannot set mode of /%s", e->path);
		goto fail;
	}
	if (utimensat(dfd, tmp, times, AT_SYMLINK_NOFOLLOW) < 0) {
		unpkg_err_sys(err, "cannot set modification time of /%s",
			      e->path);
		goto fail;
	}
	return 0;
fail:
	unlinkat(dfd, tmp, 0);
	return -1;
}

/* "name version" of the database package `key`, for messages. */
static void describe_pkg(const struct unpkg_db *db, const char *key,
			 char *buf, size_t size)
{
	size_t i;

	snprintf(buf, size, "%s", key);
	for (i = 0; i < unpkg_db_count(db); i++) {
		const struct unpkg_db_pkg *p = unpkg_db_at(db, i);
		const char *v = unpkg_para_get(&p->para, "Version");

		if (strcmp(p->key, key) == 0 && v != NULL) {
			snprintf(buf, size, "%s %s", p->name, v);
			return;
		}
	}
}

/* Refuse to replace a file that belongs to another package, with dpkg's
 * words.  `path` is spelled as the file lists spell it.  1 when the owner
 * keeps it (take_over() said so): the entry is skipped. */
static int check_owner(struct extract *x, const char *path,
		       struct unpkg_err *err)
{
	const struct unpkg_extract_opts *o = x->o;
	const char *owner = NULL;
	char who[512];

	if (o->run_files != NULL)
		owner = unpkg_strmap_get(o->run_files, path);
	/* diverted by one of the two: no conflict, as in dpkg */
	if (owner != NULL &&
	    unpkg_divert_by_either(o->diversions, path, o->pkgname, owner,
				   strcspn(owner, " ")))
		return 0;
	if (owner != NULL) {
		snprintf(who, sizeof(who), "%s", owner);
	} else if (o->db != NULL) {
		if (unpkg_db_load_files(o->db, err) < 0)
			return -1;
		owner = unpkg_db_file_owner(o->db, path, o->pkgkey);
		if (owner != NULL &&
		    unpkg_divert_by_either(o->diversions, path, o->pkgname,
					   owner, strcspn(owner, ":")))
			return 0;
		if (owner != NULL && o->take_over != NULL) {
			int r = o->take_over(o->take_over_ctx, owner, path,
					     err);

			if (r != 0)
				return r < 0 ? -1 : r == 2;
		}
		if (owner != NULL)
			describe_pkg(o->db, owner, who, sizeof(who));
	}
	if (owner != NULL)
		return unpkg_err_set(err, UNPKG_ERR_CONFLICT,
				     "trying to overwrite '%s', which is also "
				     "in package %s", path, who);
	return 0;
}

/* A new directory is made as NAME.dpkg-new, given its owner and mode, and
 * only then renamed to NAME, so that a kill never leaves it at its final
 * name with mode 0000.  It is renamed at once, not staged, because the
 * package's files go into it. */
static int extract_dir(struct extract *x, const struct unpkg_deb_entry *e,
		       int dir, int dfd, const char *base, const char *tmp,
		       int exists, const struct stat *st, uid_t uid, gid_t gid,
		       struct unpkg_err *err)
{
	int fd = -1, ret = -1;

	if (exists) {
		/* Kept as it is, like dpkg: an existing directory, or an
		 * in-root symlink to one (merged /usr). */
		if (S_ISDIR(st->st_mode))
			return 0;
		if (S_ISLNK(st->st_mode)) {
			fd = unpkg_root_openat(x->o->root, e->path,
					       O_PATH | O_DIRECTORY, 0, err);
			if (fd >= 0) {
				close(fd);
				return 0;
			}
			unpkg_err_prefix(err, "/%s is a symlink but not to a "
					 "directory", e->path);
			return -1;
		}
		return unpkg_err_set(err, UNPKG_ERR_UNSUPPORTED,
				     "cannot replace /%s with a directory: it "
				     "exists and is not a directory", e->path);
	}
	if (mkdirat(dfd, tmp, 0700) < 0)
		return unpkg_err_sys(err, "cannot create directory /%s"
				     TMP_SUFFIX, e->path);
	fd = openat(dfd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		unpkg_err_sys(err, "cannot open directory /%s" TMP_SUFFIX,
			      e->path);
		goto out;
	}
	if (fchown(fd, uid, gid) < 0 && !owner_forgiven(x)) {
		unpkg_err_sys(err, "cannot set owner of /%s", e->path);
		goto out;
	}
	if (fchmod(fd, e->mode & 07777) < 0) {
		unpkg_err_sys(err, "cannot set mode of /%s", e->path);
		goto out;
	}
	if (renameat(dfd, tmp, dfd, base) < 0) {
		unpkg_err_sys(err, "cannot rename /%s" TMP_SUFFIX " to /%s",
			      e->path, e->path);
		goto out;
	}
	if (unpkg_commit_mkdir(x->o->commit, dir, base, err) < 0) {
		unlinkat(dfd, base, AT_REMOVEDIR);
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	if (ret < 0)
		unlinkat(dfd, tmp, AT_REMOVEDIR);
	return ret;
}

/* 1 if directory `name` in `dfd` has no entries, 0 if it has, -1 on
 * error. */
static int dir_is_empty(int dfd, const char *name, struct unpkg_err *err)
{
	struct dirent *de;
	DIR *dir;
	int fd, empty = 1;

	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return unpkg_err_sys(err, "cannot open directory %s", name);
	dir = fdopendir(fd);
	if (dir == NULL) {
		close(fd);
		return unpkg_err_sys(err, "cannot read directory %s", name);
	}
	while (empty && (de = readdir(dir)) != NULL)
		empty = strcmp(de->d_name, ".") == 0 ||
			strcmp(de->d_name, "..") == 0;
	closedir(dir);
	return empty;
}

/* The directory `path` (relative to the root) leads to, its identity in
 * *st; 0 if it leads to none. */
static int dir_at(struct extract *x, const char *path, struct stat *st)
{
	struct unpkg_err ignored;
	int fd, ok;

	unpkg_err_init(&ignored);
	fd = unpkg_root_openat(x->o->root, path, O_PATH | O_DIRECTORY, 0,
			       &ignored);
	if (fd < 0)
		return 0;
	ok = fstat(fd, st) == 0;
	close(fd);
	return ok;
}

/* dpkg keeps an existing symlink where the package ships a symlink that
 * leads to the same directory: 1 if symlink entry `e` is such a one, 0 if
 * not, -1 on error. */
static int same_dir_link(struct extract *x, const struct unpkg_deb_entry *e,
			 struct unpkg_err *err)
{
	const char *slash = strrchr(e->path, '/');
	struct stat now, then;
	char *target;
	int n, same;

	if (e->link[0] == '/')
		n = asprintf(&target, "%s", e->link + 1);
	else
		n = asprintf(&target, "%.*s%s%s",
			     slash != NULL ? (int)(slash - e->path) : 0,
			     e->path, slash != NULL ? "/" : "", e->link);
	if (n < 0)
		return unpkg_err_nomem(err);
	same = dir_at(x, e->path, &now) && dir_at(x, target, &then) &&
	       now.st_dev == then.st_dev && now.st_ino == then.st_ino;
	free(target);
	return same;
}

/* An interrupted run may have left NAME.dpkg-new (ours, never committed, a
 * file or a directory not yet given its mode:
 * remove it) or NAME.dpkg-tmp without NAME (a backup whose original was
 * already moved away: put it back first, as dpkg does). */
static int clean_leftovers(int dfd, const char *base, const char *tmp,
			   const char *path, int *exists, struct stat *st,
			   struct unpkg_err *err)
{
	char backup[NAME_MAX + 16];

	if (unlinkat(dfd, tmp, 0) < 0 &&
	    (errno != EISDIR || unlinkat(dfd, tmp, AT_REMOVEDIR) < 0) &&
	    errno != ENOENT)
		return unpkg_err_sys(err, "cannot remove stale /%s" TMP_SUFFIX,
				     path);
	if (*exists)
		return 0;
	snprintf(backup, sizeof(backup), "%s.dpkg-tmp", base);
	if (renameat(dfd, backup, dfd, base) < 0) {
		if (errno == ENOENT)
			return 0;
		return unpkg_err_sys(err, "cannot restore /%s.dpkg-tmp", path);
	}
	if (fstatat(dfd, base, st, AT_SYMLINK_NOFOLLOW) < 0)
		return unpkg_err_sys(err, "cannot stat /%s", path);
	*exists = 1;
	return 0;
}

/* The entry of `path` (the archive's name) and `type`, which the path
 * filters leave out, goes into the list as filtered, and is not
 * unpacked. */
static int leave_out(struct extract *x, const char *path,
		     enum unpkg_entry_type type, struct unpkg_err *err)
{
	if (add_file(x, path, type, NULL, err) < 0)
		return -1;
	x->list->files[x->list->count - 1].filtered = 1;
	return 0;
}

/* Whether the directory of `path` (relative to the root) is there. */
static int parent_there(struct extract *x, const char *path)
{
	const char *slash = strrchr(path, '/');
	struct stat st;
	char *parent;
	int there;

	if (slash == NULL)
		return 1;
	parent = strndup(path, (size_t)(slash - path));
	if (parent == NULL)
		return 1;	/* the walk to it reports the error */
	there = dir_at(x, parent, &st);
	free(parent);
	return there;
}

/* A diverted entry: `e` as it is written, at the divert-to path of a
 * diversion that applies to the package (in *moved, e pointed to it).
 * An entry onto another path's divert-to path is refused as dpkg refuses
 * it. */
static int divert_entry(struct extract *x, const struct unpkg_deb_entry **e,
			struct unpkg_deb_entry *moved, struct unpkg_err *err)
{
	const struct unpkg_extract_opts *o = x->o;
	const struct unpkg_diversion *dv;
	char key[PATH_MAX + 2], why[PATH_MAX * 2 + 256];

	if (o->diversions == NULL || unpkg_divert_count(o->diversions) == 0)
		return 0;
	snprintf(key, sizeof(key), "/%s", (*e)->path);
	dv = unpkg_divert_onto(o->diversions, key);
	if (dv != NULL) {
		if (dv->pkg != NULL)
			snprintf(why, sizeof(why), "trying to overwrite '%s', "
				 "which is the diverted version of '%s' "
				 "(package: %s)", key, dv->from, dv->pkg);
		else
			snprintf(why, sizeof(why), "trying to overwrite '%s', "
				 "which is the diverted version of '%s'",
				 key, dv->from);
		if (!o->overwrite_diverted)
			return unpkg_err_set(err, UNPKG_ERR_CONFLICT, "%s",
					     why);
		unpkg_event_emit(o->events, UNPKG_EV_WARNING, o->pkgkey,
				 "overriding problem because --force "
				 "enabled:");
		unpkg_event_emit(o->events, UNPKG_EV_WARNING, o->pkgkey, "%s",
				 why);
	}
	*moved = **e;
	moved->path = use_path(x, (*e)->path);
	*e = moved;
	return 0;
}

static int extract_entry(struct extract *x, const struct unpkg_deb_entry *e,
			 struct unpkg_err *err)
{
	const struct unpkg_extract_opts *o = x->o;
	struct unpkg_deb_entry overridden, moved;
	const char *path = e->path;	/* listed: the archive's name */
	char tmp[NAME_MAX + 1];
	char md5[33] = "";
	struct unpkg_file *f;
	const char *base;
	struct stat st;
	unsigned int flags = 0;
	uid_t uid;
	gid_t gid;
	char listed[PATH_MAX + 2];
	int dir, dfd, fd, exists, conffile, kept, skip;

	if (*e->path == '\0')	/* the root itself: dpkg leaves it alone */
		return add_file(x, "", UNPKG_ENTRY_DIR, NULL, err);
	if ((size_t)snprintf(listed, sizeof(listed), "/%s", e->path) >=
	    sizeof(listed))
		return unpkg_err_set(err, UNPKG_ERR_UNSUPPORTED,
				     "path too long: /%.*s...", MSG_PATH_MAX,
				     e->path);
	skip = unpkg_pathfilter_skip(o->filter, listed,
				     e->type == UNPKG_ENTRY_DIR ||
				     e->type == UNPKG_ENTRY_SYMLINK);
	/* below a directory left out: only the conflicts are checked */
	if (skip && !parent_there(x, e->path)) {
		kept = e->type != UNPKG_ENTRY_DIR ? check_owner(x, listed, err)
						  : 0;
		if (kept != 0)
			return kept < 0 ? -1 : 0;
		return leave_out(x, path, e->type, err);
	}
	if (owner_of(x, e, &uid, &gid, err) < 0)
		return -1;
	/* a symlink gets the owner and group (lchown), as in dpkg; it has
	 * no mode of its own */
	if (o->statoverrides != NULL) {
		const struct unpkg_statoverride *so;
		char key[PATH_MAX + 2];

		snprintf(key, sizeof(key), "/%s", e->path);
		so = unpkg_strmap_get(o->statoverrides, key);
		if (so != NULL) {
			/* dpkg gives the path these, whatever the archive
			 * says */
			overridden = *e;
			overridden.mode = (e->mode & ~(mode_t)07777) | so->mode;
			e = &overridden;
			uid = so->uid;
			gid = so->gid;
		}
	}
	if (divert_entry(x, &e, &moved, err) < 0)
		return -1;
	dir = parent_of(x, e->path, &base, err);
	if (dir < 0) {
		unpkg_err_prefix(err, "cannot unpack /%.*s%s", MSG_PATH_MAX,
				 e->path,
				 strlen(e->path) > MSG_PATH_MAX ? "..." : "");
		return -1;
	}
	dfd = unpkg_commit_dirfd(o->commit, dir, err);
	if (dfd < 0)
		return -1;
	if (strlen(base) + sizeof(TMP_SUFFIX) > sizeof(tmp))
		return unpkg_err_set(err, UNPKG_ERR_UNSUPPORTED,
				     "/%s: file name too long", e->path);
	snprintf(tmp, sizeof(tmp), "%s" TMP_SUFFIX, base);
	exists = fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (!exists && errno != ENOENT)
		return unpkg_err_sys(err, "cannot stat /%s", e->path);

	if (e->type == UNPKG_ENTRY_DIR) {
		if (o->conffiles != NULL &&
		    unpkg_strmap_get(o->conffiles, listed) != NULL)
			return unpkg_err_set(err, UNPKG_ERR_FORMAT,
					     "conffile '%s' is a directory, "
					     "not a plain file", listed);
		if (!exists && clean_leftovers(dfd, base, tmp, e->path,
					       &exists, &st, err) < 0)
			return -1;
		if (skip)
			return leave_out(x, path, e->type, err);
		if (add_file(x, path, e->type, NULL, err) < 0)
			return -1;
		return extract_dir(x, e, dir, dfd, base, tmp, exists, &st, uid,
				   gid, err);
	}
	if (e->type == UNPKG_ENTRY_SYMLINK && exists) {
		/* dpkg never replaces a directory with a symlink */
		int same = S_ISDIR(st.st_mode) ? 1 : same_dir_link(x, e, err);

		if (same < 0)
			return -1;
		if (same && skip)
			return leave_out(x, path, e->type, err);
		if (same)	/* kept as it is, like dpkg */
			return add_file(x, path, e->type, NULL, err);
	}

	kept = check_owner(x, listed, err);
	if (kept != 0)	/* an error, or the owner keeps it: not unpacked */
		return kept < 0 ? -1 : 0;
	if (clean_leftovers(dfd, base, tmp, e->path, &exists, &st, err) < 0)
		return -1;
	/* as in dpkg: after the checks of conflicts, before any change */
	if (skip)
		return leave_out(x, path, e->type, err);
	if (add_file(x, path, e->type, NULL, err) < 0)
		return -1;
	f = &x->list->files[x->list->count - 1];
	conffile = o->conffiles != NULL &&
		   unpkg_strmap_get(o->conffiles, f->path) != NULL;
	if (conffile)
		flags |= UNPKG_STAGE_NORENAME;
	else if (exists && S_ISDIR(st.st_mode))
		flags |= UNPKG_STAGE_DIRBACKUP;
	else if (exists)
		flags |= UNPKG_STAGE_BACKUP;
	/* dpkg replaces an empty directory; a non-empty one would take
	 * files of unknown origin with it. */
	if (exists && S_ISDIR(st.st_mode)) {
		int empty = dir_is_empty(dfd, base, err);

		if (empty < 0)
			return -1;
		if (!empty)
			return unpkg_err_set(err, UNPKG_ERR_CONFLICT,
					     "cannot replace directory /%s with "
					     "a non-directory: it is not empty",
					     e->path);
	}

	if (e->type == UNPKG_ENTRY_FILE) {
		fd = write_regular(x, e, dfd, tmp, uid, gid,
				   x->digest_all || conffile, md5, err);
		if (fd < 0)
			return -1;
		memcpy(f->md5, md5, sizeof(md5));
	} else {
		if (create_special(x, e, dfd, tmp, uid, gid, err) < 0)
			return -1;
		fd = -1;
		if (e->type == UNPKG_ENTRY_HARDLINK)
			memcpy(f->md5, find_file(x, e->link)->md5,
			       sizeof(f->md5));
		if (e->type == UNPKG_ENTRY_HARDLINK && f->md5[0] == '\0' &&
		    conffile &&
		    digest_staged(dfd, tmp, e->path, f->md5, err) < 0) {
			unlinkat(dfd, tmp, 0);
			return -1;
		}
	}
	return unpkg_commit_stage(o->commit, dir, tmp, base, fd, flags, err);
}

int unpkg_extract(struct unpkg_deb *deb, const struct unpkg_extract_opts *o,
		  struct unpkg_filelist *list, struct unpkg_err *err)
{
	struct extract x = {
		.o = o,
		.deb = deb,
		.list = list,
		.dir = -1,
		.digest_all = unpkg_deb_member(deb, "md5sums") == NULL,
	};
	struct unpkg_deb_entry e;
	int r, ret = -1;

	while ((r = unpkg_deb_next(deb, &e, err)) > 0)
		if (extract_entry(&x, &e, err) < 0)
			goto out;
	if (r < 0)
		goto out;
	/* The list lives until the end of the run with every other
	 * package's: give back what doubling left spare (a failed shrink
	 * keeps the larger block). */
	if (list->cap > list->count && list->count > 0) {
		struct unpkg_file *v = realloc(list->files,
					       list->count * sizeof(*v));

		if (v != NULL) {
			list->files = v;
			list->cap = list->count;
		}
	}
	ret = 0;
out:
	free(x.parent);
	idcache_destroy(&x.users);
	idcache_destroy(&x.groups);
	return ret;
}
