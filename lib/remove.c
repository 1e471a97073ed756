/* remove.c - a package removed in favour of one that conflicts with it
 * and replaces it, as dpkg removes it.
 *
 * conflicts.c decides that the installed package goes and maint.c runs
 * its prerm before the mark; what is here runs in the record hook of the
 * commit (remove_old() in install.c), after the new package's rename
 * pass: the old package's files go aside with the transaction (dpkg's
 * rules for what stays: conffiles, directories holding them or anything
 * else, directories other packages list), its postrm is called with
 * "remove", and its new state (config-files, or forgotten) is recorded
 * with the new package's.  A crash before the record is undone by
 * removal_recover(); one after it leaves backups inst_sweep_removed()
 * deletes. */
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

#include "activate.h"
#include "fsclass.h"
#include "infodb.h"
#include "install-impl.h"
#include "obsolete.h"

int inst_conffile_in(const char *value, const char *path, int dir)
{
	size_t len = strlen(path);
	const char *s = value;

	while (s != NULL && *s != '\0') {
		const char *end;

		while (*s == '\n' || *s == ' ')
			s++;
		end = s + strcspn(s, " \n");
		if (dir ? ((size_t)(end - s) > len + 1 &&
			   strncmp(s, path, len) == 0 && s[len] == '/')
			: ((size_t)(end - s) == len &&
			   strncmp(s, path, len) == 0))
			return 1;
		s = strchr(s, '\n');
	}
	return 0;
}

/* Whether `path` (beneath the root) leads to a directory, its symlinks
 * followed inside the root. */
static int link_to_dir(struct run *r, const char *path)
{
	struct unpkg_err ignored;
	int fd;

	unpkg_err_init(&ignored);
	fd = unpkg_root_openat(r->root, path + 1, O_RDONLY | O_DIRECTORY, 0,
			       &ignored);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

int inst_keeps_below(char *const *paths, const char *fate, size_t n,
		     const char *dir)
{
	size_t len = strlen(dir), i;

	for (i = 0; i < n; i++)
		if (fate[i] == 1 && strncmp(paths[i], dir, len) == 0 &&
		    paths[i][len] == '/')
			return 1;
	return 0;
}

void inst_err_not_removed(const struct run *r, const char *path,
			  int conffile, struct unpkg_err *err)
{
	const char *root = r->o->instdir;
	size_t len = strlen(root);
	int errnum = err->errnum;

	if (err->code != UNPKG_ERR_SYS)
		return;
	while (len > 0 && root[len - 1] == '/')
		len--;
	unpkg_err_init(err);
	if (conffile)
		unpkg_err_errno(err, errnum, "cannot remove old config file "
				"'%s' (= '%.*s%s')", path, (int)len, root,
				path);
	else
		unpkg_err_errno(err, errnum, "cannot remove '%.*s%s'",
				(int)len, root, path);
}

int inst_removal_fates(struct run *r, const struct deconf *d,
		       const char *conffiles, char **paths, char *fate,
		       size_t n, unsigned int how, char *const *aside,
		       size_t naside, struct unpkg_err *err)
{
	struct unpkg_strmap gone;
	const char *at = NULL;	/* the path being looked at */
	size_t i;
	int ret = -1;

	unpkg_strmap_init(&gone);
	for (i = 0; i < naside; i++)
		if (unpkg_strmap_put(&gone, aside[i], aside[i], NULL, err) < 0)
			goto out;
	if (unpkg_db_load_files(r->db, err) < 0)
		goto out;
	for (i = n; i-- > 0;) {
		const char *path = paths[i], *base;
		/* a diverted file is where the diversion put it */
		const char *fs = unpkg_divert_use(r->divs, path, d->name);
		struct stat st;
		int dfd, all, there;

		at = fs;
		fate[i] = 0;
		if ((how & INST_FATES_OWN) && strcmp(path, "/.") == 0) {
			/* dpkg keeps it unless another package lists it */
			fate[i] = unpkg_db_file_owner(r->db, path,
						      d->key) == NULL;
			continue;
		}
		if (!unpkg_db_listed_below_root(path))
			continue;
		if (conffiles != NULL && inst_conffile_in(conffiles, path, 0)) {
			fate[i] = 1;
			continue;
		}
		there = obsolete_lstat(r, fs, &st, err);
		if (there < 0)
			goto out;
		if (!there)
			continue;
		/* a symlink to a directory that other packages list (merged
		 * /usr's /lib): kept, as dpkg, which looks through it, keeps
		 * a directory others use */
		if (S_ISLNK(st.st_mode) &&
		    unpkg_db_file_owner(r->db, path, d->key) != NULL &&
		    link_to_dir(r, fs))
			continue;
		if (S_ISDIR(st.st_mode)) {
			if (inst_keeps_below(paths, fate, n, path)) {
				fate[i] = 1;
				continue;
			}
			if (unpkg_db_file_owner(r->db, path, d->key) != NULL)
				continue;
			if (conffiles != NULL &&
			    inst_conffile_in(conffiles, path, 1)) {
				fate[i] = 1;
				continue;
			}
			dfd = unpkg_root_open_parent(r->root, fs + 1, &base,
						     err);
			if (dfd < 0)
				goto out;
			all = obsolete_all_gone(dfd, base, fs, &gone, err);
			close(dfd);
			if (all < 0)
				goto out;
			if (all == 0) {
				fate[i] = 1;	/* not empty */
				if (how & INST_FATES_WARN)
					unpkg_event_emit(r->o->events,
							 UNPKG_EV_WARNING,
							 d->key, "while "
							 "removing %s, "
							 "directory '%s' not "
							 "empty so not removed",
							 d->key, path);
				continue;
			}
		}
		fate[i] = 2;
		if (unpkg_strmap_put(&gone, fs, paths[i], NULL, err) < 0)
			goto out;
	}
	ret = 0;
out:
	if (ret < 0 && at != NULL)
		inst_err_not_removed(r, at, 0, err);
	unpkg_strmap_destroy(&gone);
	return ret;
}

int inst_removal_activate(struct run *r, struct pkg *by,
			  const struct deconf *d, const char *conffiles,
			  char *const *paths, size_t n, struct unpkg_err *err)
{
	size_t i;

	for (i = n; i-- > 0;)
		if (paths[i][0] != '\0' &&
		    !inst_conffile_in(conffiles, paths[i], 0) &&
		    activate_path(r, by,
				  unpkg_divert_use(r->divs, paths[i], d->name),
				  err) < 0)
			return -1;
	return 0;
}

/* Move the paths of fate 2 of package `name` (key `key`) aside (a
 * directory whole) with the transaction, as obsolete_remove() does; a
 * diverted one where the diversion put it.  With `unlink_copied`, a file
 * that moving aside would copy whole (on an overlayfs) is unlinked at
 * once instead, as dpkg removes it. */
int inst_removal_files(struct run *r, const char *key, const char *name,
		       char **paths, const char *fate, size_t n,
		       int unlink_copied, struct unpkg_err *err)
{
	struct unpkg_strmap moved;
	const char *at = NULL;	/* the path being removed */
	size_t i;
	int pass, last = -1, copied = 0, ret = -1;

	unpkg_strmap_init(&moved);
	/* (where the root is not such a file system, neither are the rest:
	 * at worst a file is moved aside) */
	unlink_copied = unlink_copied && r->root_copies_up;
	/* 0: the files unlinked at once, before a directory would take them
	 * aside with it; 1: the rest; 2: a symlink to a directory last: the
	 * package's paths below it are reached through it (merged /usr's
	 * /lib), as dpkg removes them */
	for (pass = unlink_copied ? 0 : 1; pass < 3; pass++)
	for (i = 0; i < n; i++) {
		const char *path = unpkg_divert_use(r->divs, paths[i], name);
		struct stat st;
		int dir, dfd, is_dir, link_dir, there;

		if (fate[i] != 2 || obsolete_under_moved(path, &moved))
			continue;
		at = path;
		there = obsolete_lstat(r, path, &st, err);
		if (there < 0)
			goto out;
		if (!there)
			continue;
		is_dir = S_ISDIR(st.st_mode);
		link_dir = S_ISLNK(st.st_mode) && link_to_dir(r, path);
		if (pass == 0 ? is_dir || link_dir : link_dir != (pass == 2))
			continue;
		dir = obsolete_parent_dir(r, path, err);
		if (dir < 0)
			goto out;
		if (pass > 0) {
			if (obsolete_move_aside(r, key, path, dir, is_dir,
						&moved, err) < 0)
				goto out;
			continue;
		}
		if (dir != last) {	/* a list holds a directory's together */
			dfd = unpkg_commit_dirfd(r->commit, dir, err);
			copied = dfd < 0 ? -1
				 : unpkg_fsclass_copies_up(dfd, err);
			if (copied < 0)
				goto out;
			last = dir;
		}
		if (copied && obsolete_unlink(r, key, path, dir, err) < 0)
			goto out;
	}
	ret = 0;
out:
	if (ret < 0 && at != NULL)
		inst_err_not_removed(r, at, 0, err);
	unpkg_strmap_destroy(&moved);
	return ret;
}

/* Put back what an interrupted removal of `key` moved aside before its
 * record (NAME.dpkg-tmp without NAME: its files, parents first, and its
 * info/ files), and add the paths only its list backup names, unless
 * another package lists them, to *paths. */
int inst_removal_recover(struct run *r, const char *key, char ***paths,
			 size_t *n, struct unpkg_err *err)
{
	size_t klen = strlen(key), nprev = 0, i, j;
	char **prev = NULL, **grown;
	struct dirent *de;
	DIR *dir;
	int fd, ret = -1;

	if (unpkg_db_read_list_backup(r->db, key, &prev, &nprev, err) < 0 ||
	    unpkg_db_load_files(r->db, err) < 0)
		goto out;
	grown = realloc(*paths, (*n + nprev + 1) * sizeof(*grown));
	if (grown == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	*paths = grown;
	for (i = 0; i < nprev; i++) {
		for (j = 0; j < *n && strcmp(grown[j], prev[i]) != 0; j++)
			;
		if (j == *n && unpkg_db_file_owner(r->db, prev[i], key) == NULL) {
			grown[(*n)++] = prev[i];
			prev[i] = NULL;
		}
	}
	for (i = 0; i < *n; i++) {
		struct unpkg_err ignored;
		const char *base;
		char *backup = NULL;
		struct stat st;
		int dfd;

		unpkg_err_init(&ignored);
		dfd = unpkg_root_open_parent(r->root,
					     unpkg_divert_use(r->divs, grown[i],
							      key) + 1,
					     &base, &ignored);
		if (dfd < 0)
			continue;
		if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
		    errno == ENOENT &&
		    asprintf(&backup, "%s.dpkg-tmp", base) >= 0) {
			if (renameat(dfd, backup, dfd, base) < 0 &&
			    errno != ENOENT) {
				unpkg_err_sys(err, "cannot restore %s.dpkg-tmp",
					      grown[i]);
				free(backup);
				close(dfd);
				goto out;
			}
			free(backup);
		}
		close(dfd);
	}
	fd = unpkg_root_openat(r->admroot, "info", O_RDONLY | O_DIRECTORY, 0,
			       err);
	if (fd < 0)
		goto out;
	dir = fdopendir(fd);
	if (dir == NULL) {
		close(fd);
		unpkg_err_sys(err, "cannot read info/");
		goto out;
	}
	while ((de = readdir(dir)) != NULL)
		if (strncmp(de->d_name, key, klen) == 0 &&
		    de->d_name[klen] == '.' &&
		    infodb_unmove(dirfd(dir), de->d_name, 1) < 0) {
			closedir(dir);
			unpkg_err_sys(err, "cannot restore info/%s", de->d_name);
			goto out;
		}
	closedir(dir);
	ret = 0;
out:
	unpkg_db_list_free(prev, nprev);
	return ret;
}

/* Remove package `d` in favour of `p`, now unpacked, as dpkg does: its
 * files but conffiles (and the directories holding them, or something
 * else) go aside with the transaction, its list keeps the rest, its
 * postrm is called with "remove"; then it is config-files (with
 * conffiles or a postrm: its list and postrm stay) or forgotten.  Its
 * new state is recorded with p's.  A failed postrm leaves it
 * half-installed, and p unpacked but failed, as dpkg does. */
int inst_remove_one(struct run *r, struct pkg *p, struct deconf *d,
		    struct unpkg_err *err)
{
	static const char *const keep_gone[] = { "list", NULL };
	static const char *const keep_cf[] = { "list", "postrm", NULL };
	const char *argv[] = { "remove", NULL };
	const struct unpkg_db_pkg *q = unpkg_pkgindex_find_key(r->db, d->key);
	struct unpkg_para para;
	const char *conffiles = NULL;
	struct unpkg_buf list = { 0 };
	char **paths = NULL, *fate = NULL, why[1024], postrm[NAME_MAX + 1];
	char listname[NAME_MAX + 1];
	size_t n = 0, i, j;
	struct stat st;
	int dir, dfd, keep, ok, ret = -1;

	unpkg_para_init(&para);
	unpkg_event_emit(r->o->events, UNPKG_EV_PROGRESS, d->key,
			 "Removing %s (%s), to allow configuration of %s "
			 "(%s) ...", d->key, d->version, p->key, p->version);
	if (unpkg_para_parse(d->stanza, strlen(d->stanza), &para, err) < 0)
		goto out;
	conffiles = unpkg_para_get(&para, "Conffiles");
	if ((q != NULL && unpkg_db_read_list(r->db, d->key, &paths, &n,
					     err) < 0) ||
	    inst_removal_recover(r, d->key, &paths, &n, err) < 0)
		goto out;
	/* what p took is no longer its */
	for (i = 0; i < n; i++)
		for (j = 0; j < p->ntaken; j += 2)
			if (strcmp(p->taken[j], d->key) == 0 &&
			    strcmp(p->taken[j + 1], paths[i]) == 0) {
				paths[i][0] = '\0';
				break;
			}
	fate = calloc(n != 0 ? n : 1, 1);
	if (fate == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	dir = unpkg_commit_dir(r->commit, r->admroot, "info", err);
	dfd = dir >= 0 ? unpkg_commit_dirfd(r->commit, dir, err) : -1;
	if (dfd < 0)
		goto out;
	snprintf(postrm, sizeof(postrm), "%s.postrm", d->key);
	snprintf(listname, sizeof(listname), "%s.list", d->key);
	keep = (conffiles != NULL && conffiles[strspn(conffiles, " \n")] !=
				     '\0') ||
	       fstatat(dfd, postrm, &st, AT_SYMLINK_NOFOLLOW) == 0;
	/* with nothing to keep, dpkg's removal is its purge: it warns */
	if (inst_removal_fates(r, d, conffiles, paths, fate, n,
			       keep ? 0 : INST_FATES_WARN, NULL, 0, err) < 0 ||
	    inst_removal_activate(r, p, d, conffiles, paths, n, err) < 0)
		goto out;
	for (i = 0; i < n; i++)
		if (fate[i] == 1 && unpkg_buf_printf(&list, err, "%s\n", paths[i]) < 0)
			goto out;
	/* The list first: the commit releases the backups in reverse, so
	 * the old list (which names the files moved aside, for
	 * inst_sweep_removed() after a crash) goes last. */
	if (keep ? infodb_stage(r, d->key, dir, "list",
				list.s != NULL ? list.s : "", list.len, 0644,
				err) < 0
		 : (fstatat(dfd, listname, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    unpkg_commit_remove(r->commit, dir, listname, 0, err) < 0))
		goto out;
	if (inst_removal_files(r, d->key, d->name, paths, fate, n, 0, err) < 0)
		goto out;
	d->marked = 0;		/* nothing to unwind from here on */
	d->removed = 1;
	ok = maint_run_other(r, d, "postrm", argv, why, sizeof(why), err);
	if (ok < 0)
		goto out;
	if (ok == 0) {
		if (p->removal_failed == NULL &&
		    (p->removal_failed = strdup(why)) == NULL) {
			unpkg_err_nomem(err);
			goto out;
		}
		ret = maint_other_state(r, d, "half-installed", err);
		goto out;
	}
	if (infodb_remove(r, d->key, dir, keep ? keep_cf : keep_gone,
			  err) < 0 ||
	    unpkg_triggers_set_interests(r->trig, d->key, NULL, 0, err) < 0)
		goto out;
	if (keep) {
		ret = maint_other_state(r, d, "config-files", err);
		goto out;
	}
	if (run_put_reported(r, d->name, d->arch, NULL, d->key, d->arch,
			     d->version, "not-installed", err) < 0)
		goto out;
	ret = 0;
out:
	unpkg_buf_free(&list);
	free(fate);
	unpkg_db_list_free(paths, n);
	unpkg_para_destroy(&para);
	return ret;
}

/* Remove `name` in `dfd`: a file, or a directory with everything
 * beneath it. */
static int remove_path(int dfd, const char *name)
{
	struct dirent *de;
	DIR *d;
	int fd, ret = 0;

	if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -1;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (d == NULL) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (ret == 0 && (de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			ret = remove_path(dirfd(d), de->d_name);
	closedir(d);
	if (ret == 0 && unlinkat(dfd, name, AT_REMOVEDIR) < 0)
		ret = -1;
	return ret;
}

/* A run killed after the record of a removal (inst_remove_one()) left the
 * backups its release had to delete: info/KEY.list.dpkg-tmp of a package
 * now config-files or gone, the paths only that list names moved aside
 * as NAME.dpkg-tmp, and its info/ files as KEY.NAME.dpkg-tmp.  The new
 * state is recorded: they go.  (Packages of the run, and those a package
 * of the run removes, recover on their own.)  Failures leave debris and
 * warn. */
void inst_sweep_removed(struct run *r)
{
	struct unpkg_err err;
	char **keys = NULL;
	size_t nkeys = 0, i, j, k;
	struct dirent *de;
	DIR *dir = NULL;
	int fd;

	unpkg_err_init(&err);
	fd = unpkg_root_openat(r->admroot, "info", O_RDONLY | O_DIRECTORY, 0,
			       &err);
	dir = fd >= 0 ? fdopendir(fd) : NULL;
	if (dir == NULL) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(dir)) != NULL) {
		size_t len = strlen(de->d_name);
		char **v;

		if (len <= 14 ||
		    strcmp(de->d_name + len - 14, ".list.dpkg-tmp") != 0)
			continue;
		v = realloc(keys, (nkeys + 1) * sizeof(*v));
		if (v == NULL ||
		    (v[nkeys] = strndup(de->d_name, len - 14)) == NULL) {
			if (v != NULL)
				keys = v;
			goto out;
		}
		keys = v;
		nkeys++;
	}
	for (i = 0; i < nkeys; i++) {
		const struct unpkg_db_pkg *q = unpkg_pkgindex_find_key(r->db, keys[i]);
		const char *want, *flag, *status;
		char **prev = NULL, **now = NULL;
		size_t nprev = 0, nnow = 0, klen = strlen(keys[i]);
		int skip = 0;

		for (j = 0; j < r->npkgs && !skip; j++) {
			const struct pkg *p = &r->pkgs[j];

			skip = p->key != NULL && strcmp(p->key, keys[i]) == 0;
			for (k = 0; k < p->nremovals && !skip; k++)
				skip = strcmp(p->removals[k].key, keys[i]) == 0;
		}
		if (skip || (q != NULL &&
			     (unpkg_db_pkg_status(q, &want, &flag, &status) < 0 ||
			      strcmp(status, "config-files") != 0)))
			continue;
		unpkg_err_init(&err);
		if (unpkg_db_read_list_backup(r->db, keys[i], &prev, &nprev,
					      &err) < 0 ||
		    (q != NULL && unpkg_db_read_list(r->db, keys[i], &now,
						     &nnow, &err) < 0) ||
		    unpkg_db_load_files(r->db, &err) < 0) {
			unpkg_db_list_free(prev, nprev);
			unpkg_db_list_free(now, nnow);
			continue;
		}
		for (j = 0; j < nprev; j++) {
			const char *base;
			char backup[NAME_MAX + 16];
			struct stat st;
			int dfd;

			for (k = 0; k < nnow && strcmp(now[k], prev[j]) != 0; k++)
				;
			if (k < nnow || strcmp(prev[j], "/.") == 0 ||
			    unpkg_db_file_owner(r->db, prev[j], keys[i]) != NULL)
				continue;
			unpkg_err_init(&err);
			dfd = unpkg_root_open_parent(
				r->root, unpkg_divert_use(r->divs, prev[j],
							  keys[i]) + 1,
				&base, &err);
			if (dfd < 0)
				continue;
			snprintf(backup, sizeof(backup), "%s.dpkg-tmp", base);
			if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
			    errno == ENOENT && remove_path(dfd, backup) < 0)
				unpkg_event_emit(r->o->events,
						 UNPKG_EV_WARNING, keys[i],
						 "cannot remove %s.dpkg-tmp: %s",
						 prev[j], strerror(errno));
			close(dfd);
		}
		unpkg_db_list_free(prev, nprev);
		unpkg_db_list_free(now, nnow);
		/* its info/ backups whose originals are gone */
		rewinddir(dir);
		while ((de = readdir(dir)) != NULL) {
			size_t len = strlen(de->d_name);
			char orig[NAME_MAX + 1];
			struct stat st;

			if (strncmp(de->d_name, keys[i], klen) != 0 ||
			    de->d_name[klen] != '.' || len <= klen + 10 ||
			    strcmp(de->d_name + len - 9, ".dpkg-tmp") != 0)
				continue;
			snprintf(orig, sizeof(orig), "%.*s", (int)(len - 9),
				 de->d_name);
			if (strchr(orig + klen + 1, '.') != NULL)
				continue;
			if ((strcmp(orig + klen + 1, "list") == 0 ||
			     (fstatat(dirfd(dir), orig, &st,
				      AT_SYMLINK_NOFOLLOW) < 0 &&
			      errno == ENOENT)) &&
			    unlinkat(dirfd(dir), de->d_name, 0) < 0 &&
			    errno != ENOENT)
				unpkg_event_emit(r->o->events,
						 UNPKG_EV_WARNING, keys[i],
						 "cannot remove info/%s: %s",
						 de->d_name, strerror(errno));
		}
	}
out:
	closedir(dir);
	unpkg_db_list_free(keys, nkeys);
}
