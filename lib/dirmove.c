/* dirmove.c - moving a directory within its parent where the file system
 * refuses to rename it (see dirmove.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "dirmove.h"

static void free_names(char **names, size_t n)
{
	while (n > 0)
		free(names[--n]);
	free(names);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of directory `fd` but . and .., sorted (a failure undoes
 * the same moves whatever the order readdir() gives); NULL with errno
 * set on failure. */
static char **list_names(int fd, size_t *n)
{
	char **names = NULL, **grown;
	struct dirent *de;
	DIR *d;
	int own, saved;

	*n = 0;
	own = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (own < 0)
		return NULL;
	d = fdopendir(own);
	if (d == NULL) {
		saved = errno;
		close(own);
		errno = saved;
		return NULL;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (de == NULL)
			break;
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		grown = realloc(names, (*n + 1) * sizeof(*grown));
		if (grown == NULL)
			break;
		names = grown;
		if ((names[*n] = strdup(de->d_name)) == NULL)
			break;
		(*n)++;
	}
	saved = errno;
	closedir(d);
	if (saved != 0) {
		free_names(names, *n);
		errno = saved;
		return NULL;
	}
	if (names == NULL && (names = malloc(sizeof(*names))) == NULL)
		return NULL;
	qsort(names, *n, sizeof(*names), cmp_names);
	return names;
}

/* Put every entry of `to` back into `from`: the undoing of a failed
 * rebuild.  Failures are ignored (the caller reports the first one). */
static void move_back(int to, int from)
{
	char **names;
	size_t n, i;

	names = list_names(to, &n);
	if (names == NULL)
		return;
	for (i = 0; i < n; i++)
		renameat(to, names[i], from, names[i]);
	free_names(names, n);
}

static int is_dir_at(int dfd, const char *name)
{
	struct stat st;

	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISDIR(st.st_mode);
}

/* Extended attribute `name` of `fd`, or with `name` NULL the list of
 * their names, in *buf (grown as needed, *size its size); its length, or
 * -1. */
static ssize_t read_xattr(int fd, const char *name, char **buf, size_t *size)
{
	ssize_t len;
	char *grown;

	do {
		len = name != NULL ? fgetxattr(fd, name, NULL, 0)
				   : flistxattr(fd, NULL, 0);
		if (len < 0)
			return -1;
		if ((size_t)len >= *size) {
			grown = realloc(*buf, (size_t)len + 1);
			if (grown == NULL)
				return -1;
			*buf = grown;
			*size = (size_t)len + 1;
		}
		len = name != NULL ? fgetxattr(fd, name, *buf, *size)
				   : flistxattr(fd, *buf, *size);
	} while (len < 0 && errno == ERANGE);	/* it grew meanwhile */
	return len;
}

/* The extended attributes of directory `src` (ACLs, security labels, the
 * user's) set on `dst`, so that the rebuilt directory keeps them; a file
 * system without them has none to copy. */
static int copy_xattrs(int src, int dst)
{
	char *names = NULL, *value = NULL;
	size_t size = 0, vsize = 0;
	ssize_t len, vlen;
	const char *name;
	int ret = -1;

	len = read_xattr(src, NULL, &names, &size);
	if (len < 0) {
		ret = errno == ENOTSUP ? 0 : -1;
		goto out;
	}
	for (name = names; name < names + len; name += strlen(name) + 1) {
		vlen = read_xattr(src, name, &value, &vsize);
		if (vlen < 0 ||
		    fsetxattr(dst, name, value, (size_t)vlen, 0) < 0)
			goto out;
	}
	ret = 0;
out:
	free(names);
	free(value);
	return ret;
}

/* Build `to` in directory `tdir` as directory `from` in `fdir`, entry by
 * entry, and remove `from`. */
static int rebuild(int fdir, const char *from, int tdir, const char *to)
{
	char **names = NULL;
	struct stat st;
	size_t n = 0, i;
	int src, dst = -1, made = 0, saved;

	src = openat(fdir, from, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
				 O_CLOEXEC);
	if (src < 0)
		return -1;
	if (fstat(src, &st) < 0)
		goto fail;
	if (mkdirat(tdir, to, 0700) == 0)
		made = 1;
	else if (errno != EEXIST)
		goto fail;
	dst = openat(tdir, to, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dst < 0 || fchown(dst, st.st_uid, st.st_gid) < 0 ||
	    fchmod(dst, st.st_mode & 07777) < 0 || copy_xattrs(src, dst) < 0)
		goto fail;
	names = list_names(src, &n);
	if (names == NULL)
		goto fail;
	for (i = 0; i < n; i++) {
		if (renameat(src, names[i], dst, names[i]) == 0)
			continue;
		if (errno != EXDEV || !is_dir_at(src, names[i]))
			goto fail;
		if (rebuild(src, names[i], dst, names[i]) < 0)
			goto fail;
	}
	if (unlinkat(fdir, from, AT_REMOVEDIR) < 0)
		goto fail;
	free_names(names, n);
	close(dst);
	close(src);
	return 0;
fail:
	saved = errno;
	if (dst >= 0)
		move_back(dst, src);
	/* only if empty: a directory an interrupted move left keeps what
	 * went back, and one that was there for another reason is kept */
	if (dst >= 0 || made)
		unlinkat(tdir, to, AT_REMOVEDIR);
	if (names != NULL)
		free_names(names, n);
	if (dst >= 0)
		close(dst);
	close(src);
	errno = saved;
	return -1;
}

int unpkg_dir_move(int dfd, const char *from, const char *to)
{
	if (renameat(dfd, from, dfd, to) == 0)
		return 0;
	if (errno != EXDEV)
		return -1;
	return rebuild(dfd, from, dfd, to);
}
