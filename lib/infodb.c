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
#include "io.h"

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
	if (unpkg_write_all(fd, s, len) < 0) {
		unpkg_err_sys(err, "cannot write info/%s", tmp);
		goto out;
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
 * put it back where nothing has taken its name (with `over`, over what
 * took it), so that it is removed like the rest.  0, or -1 with errno
 * set. */
int infodb_unmove(int dfd, const char *name, int over)
{
	size_t len = strlen(name);
	char *base;
	int ret = 0;

	if (len <= 9 || strcmp(name + len - 9, ".dpkg-tmp") != 0)
		return 0;
	base = strndup(name, len - 9);
	if (base == NULL)
		return -1;
	if ((over || (faccessat(dfd, base, F_OK, AT_SYMLINK_NOFOLLOW) < 0 &&
		      errno == ENOENT)) &&
	    renameat(dfd, name, dfd, base) < 0 && errno != ENOENT)
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

/* info/KEY.list: the new version's paths, symlinks after everything else
 * (each group in archive order, as dpkg lists them), then its obsolete
 * conffiles. */
static int list_text(const struct pkg *p, struct unpkg_buf *list,
		     struct unpkg_err *err)
{
	size_t i;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < p->files.count; i++) {
			const struct unpkg_file *f = &p->files.files[i];

			if ((f->type == UNPKG_ENTRY_SYMLINK) == pass &&
			    unpkg_buf_printf(list, err, "%s\n", f->path) < 0)
				return -1;
		}
	}
	for (i = 0; i < p->nobsolete_conf; i++)
		if (unpkg_strmap_get(&p->files.index,
				     p->obsolete_conf[i].path) == NULL &&
		    unpkg_buf_printf(list, err, "%s\n", p->obsolete_conf[i].path) < 0)
			return -1;
	return 0;
}

/* info/KEY.list, info/KEY.md5sums (generated when the package ships
 * none, as dpkg does, even if empty) and every control member but
 * control itself. */
int infodb_stage_pkg(struct run *r, struct pkg *p, struct unpkg_err *err)
{
	struct unpkg_buf list = { 0 }, sums = { 0 };
	size_t i;
	int dir, ret = -1;

	dir = unpkg_commit_dir(r->commit, r->admroot, "info", err);
	if (dir < 0)
		return -1;
	for (i = 0; i < unpkg_deb_member_count(p->deb); i++) {
		const struct unpkg_deb_member *m = unpkg_deb_member_at(p->deb, i);

		if (strcmp(m->name, "control") == 0)
			continue;
		if (infodb_stage(r, p->key, dir, m->name, m->data, m->size,
				 m->mode & 0777, err) < 0)
			goto out;
	}
	if (list_text(p, &list, err) < 0 ||
	    infodb_stage(r, p->key, dir, "list", list.s, list.len, 0644, err) < 0)
		goto out;
	if (unpkg_deb_member(p->deb, "md5sums") == NULL) {
		for (i = 0; i < p->files.count; i++) {
			const struct unpkg_file *f = &p->files.files[i];

			if (f->md5[0] != '\0' &&
			    unpkg_buf_printf(&sums, err, "%s  %s\n", f->md5,
					     f->path + 1) < 0)
				goto out;
		}
		/* Even empty: dpkg --audit asks for a reinstall otherwise. */
		if (infodb_stage(r, p->key, dir, "md5sums", sums.s, sums.len, 0644,
				 err) < 0)
			goto out;
	}
	ret = 0;
out:
	unpkg_buf_free(&list);
	unpkg_buf_free(&sums);
	return ret;
}

/* Note the info/KEY.* files of the old version that the new one does
 * not ship (an old postinst, say); they go once the new one is committed. */
int infodb_find_obsolete(struct run *r, struct pkg *p,
			 struct unpkg_err *err)
{
	size_t klen = strlen(p->key);
	struct dirent *de;
	DIR *dir;
	int fd;

	fd = unpkg_root_openat(r->admroot, "info", O_RDONLY | O_DIRECTORY, 0,
			       err);
	if (fd < 0)
		return -1;
	dir = fdopendir(fd);
	if (dir == NULL) {
		close(fd);
		return unpkg_err_sys(err, "cannot read info/");
	}
	/* first what an interrupted run moved aside, then the scan */
	while ((de = readdir(dir)) != NULL)
		if (strncmp(de->d_name, p->key, klen) == 0 &&
		    de->d_name[klen] == '.' &&
		    infodb_unmove(dirfd(dir), de->d_name, 0) < 0) {
			closedir(dir);
			return unpkg_err_sys(err, "cannot restore info/%s",
					     de->d_name);
		}
	rewinddir(dir);
	while ((de = readdir(dir)) != NULL) {
		const char *member = de->d_name + klen + 1;
		char **grown;

		if (strncmp(de->d_name, p->key, klen) != 0 ||
		    de->d_name[klen] != '.' || strchr(member, '.') != NULL ||
		    strcmp(member, "list") == 0 ||
		    strcmp(member, "md5sums") == 0 ||
		    (strcmp(member, "control") != 0 &&
		     unpkg_deb_member(p->deb, member) != NULL))
			continue;
		grown = realloc(p->obsolete_info,
				(p->nobsolete_info + 1) * sizeof(*grown));
		if (grown == NULL)
			goto nomem;
		p->obsolete_info = grown;
		grown[p->nobsolete_info] = strdup(de->d_name);
		if (grown[p->nobsolete_info] == NULL)
			goto nomem;
		p->nobsolete_info++;
	}
	closedir(dir);
	return 0;
nomem:
	closedir(dir);
	return unpkg_err_nomem(err);
}

int infodb_remove_obsolete(struct run *r, struct pkg *p,
			   struct unpkg_err *err)
{
	size_t i;
	int dir;

	if (p->nobsolete_info == 0)
		return 0;
	dir = unpkg_commit_dir(r->commit, r->admroot, "info", err);
	if (dir < 0)
		return -1;
	for (i = 0; i < p->nobsolete_info; i++)
		if (unpkg_commit_remove(r->commit, dir, p->obsolete_info[i], 0,
					err) < 0)
			return -1;
	return 0;
}
