/* obsolete.c - paths moved aside with the transaction (the old version's
 * files the new one lacks, a removed package's files) and put back on
 * failure (see obsolete.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "obsolete.h"

/* lstat `path` ("/usr/bin/x") beneath the root; 0 on success. */
int obsolete_lstat(struct run *r, const char *path, struct stat *st)
{
	struct unpkg_err ignored;
	const char *base;
	int dfd, ret;

	unpkg_err_init(&ignored);
	dfd = unpkg_root_open_parent(r->root, path + 1, &base, &ignored);
	if (dfd < 0)
		return -1;
	ret = fstatat(dfd, base, st, AT_SYMLINK_NOFOLLOW);
	close(dfd);
	return ret;
}

int obsolete_add_late_rmdir(struct pkg *p, const char *path,
			struct unpkg_err *err)
{
	const char **grown = realloc(p->late_rmdir, (p->nlate_rmdir + 1) *
						    sizeof(*grown));

	if (grown == NULL)
		return unpkg_err_nomem(err);
	p->late_rmdir = grown;
	grown[p->nlate_rmdir++] = path;
	return 0;
}

static int is_subdir(int dfd, const struct dirent *de)
{
	struct stat st;

	if (de->d_type != DT_UNKNOWN)
		return de->d_type == DT_DIR;
	return fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISDIR(st.st_mode);
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
		else if (is_subdir(dirfd(dir), de))
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

int obsolete_move_aside(struct run *r, struct pkg *p, const char *who,
		    const char *path, int dir, int is_dir,
		    struct unpkg_strmap *moved, struct unpkg_err *err)
{
	const char *base = strrchr(path, '/') + 1;
	struct unpkg_err why;

	unpkg_err_init(&why);
	if (unpkg_commit_remove(r->commit, dir, base, is_dir, &why) == 0)
		return unpkg_strmap_put(moved, path, (void *)path, NULL, err);
	if (is_dir && why.errnum == EXDEV)
		return obsolete_add_late_rmdir(p, path, err);
	unpkg_event_emit(r->o->events, UNPKG_EV_WARNING, who,
			 "unable to delete old %s '%s': %s",
			 is_dir ? "directory" : "file", path, why.msg);
	return 0;
}
