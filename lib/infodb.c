/* infodb.c - the info/ files of packages: staged with the transaction,
 * moved aside, put back (see infodb.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "infodb.h"

static int is_script(const char *member)
{
	return strcmp(member, "preinst") == 0 ||
	       strcmp(member, "postinst") == 0 ||
	       strcmp(member, "prerm") == 0 || strcmp(member, "postrm") == 0;
}

/* Write info/KEY.NAME.dpkg-new and stage it to become info/KEY.NAME. */
int infodb_stage(struct run *r, const char *key, int dir,
		    const char *member, const void *data, size_t len,
		    mode_t mode, struct unpkg_err *err)
{
	char *name = NULL, *tmp = NULL;
	const char *s = data;
	struct stat st;
	int dfd, fd = -1, ret = -1;
	unsigned int flags = 0;

	if (asprintf(&name, "%s.%s", key, member) < 0) {
		name = NULL;
		unpkg_err_nomem(err);
		goto out;
	}
	if (asprintf(&tmp, "%s.dpkg-new", name) < 0) {
		tmp = NULL;
		unpkg_err_nomem(err);
		goto out;
	}
	dfd = unpkg_commit_dirfd(r->commit, dir, err);
	if (dfd < 0)
		goto out;
	/* A maintainer script waits as NAME.dpkg-new until the old
	 * version's postrm has run (maint_postrm()); remove_old(), in the
	 * record hook, stages it for a rename pass of its own. */
	if (is_script(member))
		flags |= UNPKG_STAGE_NORENAME;
	else if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		flags |= UNPKG_STAGE_BACKUP;
	else if (errno != ENOENT) {
		unpkg_err_sys(err, "cannot stat info/%s", name);
		goto out;
	}
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
			      O_CLOEXEC, 0600);
	if (fd < 0) {
		unpkg_err_sys(err, "cannot create info/%s", tmp);
		goto out;
	}
	while (len > 0) {
		ssize_t n = write(fd, s, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			unpkg_err_sys(err, "cannot write info/%s", tmp);
			goto out;
		}
		s += n;
		len -= (size_t)n;
	}
	if (fchmod(fd, mode) < 0) {
		unpkg_err_sys(err, "cannot set mode of info/%s", tmp);
		goto out;
	}
	ret = unpkg_commit_stage(r->commit, dir, tmp, name, fd, flags, err);
	fd = -1;		/* owned by the commit object now */
	if (ret < 0)
		goto out;
out:
	if (fd >= 0) {
		close(fd);
		unlinkat(dfd, tmp, 0);
	}
	free(name);
	free(tmp);
	return ret;
}

/* An interrupted run moved an old info/ file aside as NAME.dpkg-tmp:
 * put it back where nothing has taken its name, so that it is removed
 * like the rest.  0, or -1 with errno set. */
int infodb_unmove(int dfd, const char *name)
{
	size_t len = strlen(name);
	char *base;
	int ret = 0;

	if (len <= 9 || strcmp(name + len - 9, ".dpkg-tmp") != 0)
		return 0;
	base = strndup(name, len - 9);
	if (base == NULL)
		return -1;
	if (faccessat(dfd, base, F_OK, AT_SYMLINK_NOFOLLOW) < 0 &&
	    errno == ENOENT && renameat(dfd, name, dfd, base) < 0 &&
	    errno != ENOENT)
		ret = -1;
	free(base);
	return ret;
}

/* Move the info/KEY.* files aside with the transaction (`dir`: the
 * commit's info/), but the members named in `keep` (NULL-terminated, or
 * NULL). */
int infodb_remove(struct run *r, const char *key, int dir,
		     const char *const *keep, struct unpkg_err *err)
{
	size_t klen = strlen(key), nnames = 0, i;
	char **names = NULL;
	struct dirent *de;
	DIR *d;
	int dfd, fd, ret = -1;

	dfd = unpkg_commit_dirfd(r->commit, dir, err);
	fd = dfd >= 0 ? openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
		      : -1;
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (d == NULL) {
		if (fd >= 0)
			close(fd);
		return dfd < 0 ? -1 : unpkg_err_sys(err, "cannot read info/");
	}
	/* the names first: moving them aside changes the directory */
	while ((de = readdir(d)) != NULL) {
		const char *member = de->d_name + klen + 1;
		char **v;

		if (strncmp(de->d_name, key, klen) != 0 ||
		    de->d_name[klen] != '.' || strchr(member, '.') != NULL)
			continue;
		for (i = 0; keep != NULL && keep[i] != NULL &&
			    strcmp(member, keep[i]) != 0; i++)
			;
		if (keep != NULL && keep[i] != NULL)
			continue;
		v = realloc(names, (nnames + 1) * sizeof(*v));
		if (v == NULL || (v[nnames] = strdup(de->d_name)) == NULL) {
			if (v != NULL)
				names = v;
			unpkg_err_nomem(err);
			goto out;
		}
		names = v;
		nnames++;
	}
	for (i = 0; i < nnames; i++)
		if (unpkg_commit_remove(r->commit, dir, names[i], 0, err) < 0)
			goto out;
	ret = 0;
out:
	closedir(d);
	unpkg_db_list_free(names, nnames);
	return ret;
}
