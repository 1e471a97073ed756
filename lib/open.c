/* open.c - the open phase: each .deb read and checked, its old version recalled (see open.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "depends.h"
#include "install-impl.h"
#include "open.h"
#include "script.h"
#include "stanza.h"

/* The conffiles member: one absolute path per line, optionally followed
 * by flags ("remove-on-upgrade"). */
static int parse_conffiles(struct pkg *p, const struct unpkg_deb_member *m,
			   struct unpkg_err *err)
{
	const char *s = (const char *)m->data, *end = s + m->size;

	while (s < end) {
		const char *eol = memchr(s, '\n', (size_t)(end - s));
		const char *sp;
		struct conffile *cf, *grown;
		size_t len;
		int r;

		if (eol == NULL)
			eol = end;
		len = (size_t)(eol - s);
		while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
			len--;
		if (len == 0) {
			s = eol + 1;
			continue;
		}
		if (*s != '/')
			return unpkg_err_set(err, UNPKG_ERR_FORMAT,
					     "conffiles: '%.*s' is not an "
					     "absolute path", (int)len, s);
		grown = realloc(p->conffiles,
				(p->nconffiles + 1) * sizeof(*grown));
		if (grown == NULL)
			return unpkg_err_nomem(err);
		p->conffiles = grown;
		cf = &grown[p->nconffiles];
		sp = memchr(s, ' ', len);
		cf->path = strndup(s, sp != NULL ? (size_t)(sp - s) : len);
		cf->flags = sp != NULL ? strndup(sp + 1, len - (size_t)(sp + 1 - s))
				       : NULL;
		if (cf->path == NULL || (sp != NULL && cf->flags == NULL)) {
			free(cf->path);
			free(cf->flags);
			return unpkg_err_nomem(err);
		}
		p->nconffiles++;
		r = unpkg_strmap_put(&p->confmap, cf->path, cf, NULL, err);
		if (r < 0)
			return -1;
		if (r > 0)
			return unpkg_err_set(err, UNPKG_ERR_FORMAT,
					     "conffiles: '%s' listed twice",
					     cf->path);
		s = eol + 1;
	}
	return 0;
}

static int is_conffile_flag(const char *w, size_t n)
{
	return (n == 8 && memcmp(w, "obsolete", 8) == 0) ||
	       (n == 17 && memcmp(w, "remove-on-upgrade", 17) == 0);
}

/* The old version's conffiles that the new one does not ship, from the
 * old Conffiles value: " PATH HASH [FLAG...]" lines, read from the end
 * since a path may hold spaces. */
static int find_obsolete_conffiles(struct pkg *p, struct unpkg_err *err)
{
	const char *s = p->old_conffiles;

	while (s != NULL && *s != '\0') {
		const char *eol = strchr(s, '\n');
		const char *path = s, *end = eol != NULL ? eol : s + strlen(s);
		const char *word;
		struct conffile cf, *grown;

		s = eol != NULL ? eol + 1 : end;
		while (path < end && *path == ' ')
			path++;
		for (;;) {
			while (end > path && end[-1] == ' ')
				end--;
			word = end;
			while (word > path && word[-1] != ' ')
				word--;
			if (word == end || !is_conffile_flag(word, (size_t)(end - word)))
				break;
			end = word;
		}
		if (word == path || word == end)
			continue;	/* no path and hash */
		cf.path = strndup(path, (size_t)(word - 1 - path));
		cf.flags = strndup(word, (size_t)(end - word));
		if (cf.path == NULL || cf.flags == NULL) {
			free(cf.path);
			free(cf.flags);
			return unpkg_err_nomem(err);
		}
		if (unpkg_strmap_get(&p->confmap, cf.path) != NULL) {
			free(cf.path);
			free(cf.flags);
			continue;
		}
		grown = realloc(p->obsolete_conf,
				(p->nobsolete_conf + 1) * sizeof(*grown));
		if (grown == NULL) {
			free(cf.path);
			free(cf.flags);
			return unpkg_err_nomem(err);
		}
		p->obsolete_conf = grown;
		grown[p->nobsolete_conf++] = cf;
	}
	return 0;
}

/* An interrupted run of this package may have left info/KEY.list.dpkg-tmp,
 * the list it was replacing: the paths only that one names were moved
 * aside as NAME.dpkg-tmp (or are already gone).  Put such files back and
 * add those paths to the old list, so that this run removes them. */
static int recover_old_files(struct run *r, struct pkg *p, const char *key,
			     struct unpkg_err *err)
{
	struct unpkg_strmap known;
	char **prev = NULL, **grown;
	size_t nprev = 0, i;
	int ret = -1;

	unpkg_strmap_init(&known);
	if (unpkg_db_read_list_backup(r->db, key, &prev, &nprev, err) < 0)
		goto out;
	if (nprev == 0) {
		ret = 0;
		goto out;
	}
	grown = realloc(p->old_files, (p->nold_files + nprev) * sizeof(*grown));
	if (grown == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	p->old_files = grown;
	for (i = 0; i < p->nold_files; i++)
		if (unpkg_strmap_put(&known, p->old_files[i], p, NULL, err) < 0)
			goto out;
	for (i = 0; i < nprev; i++) {
		struct unpkg_err ignored;
		const char *base;
		char *backup = NULL;
		struct stat st;
		int dfd;

		if (unpkg_strmap_get(&known, prev[i]) != NULL)
			continue;
		/* parents first, as the list names them */
		unpkg_err_init(&ignored);
		dfd = unpkg_root_open_parent(r->root,
					     unpkg_divert_use(r->divs, prev[i],
							      key) + 1,
					     &base, &ignored);
		if (dfd >= 0 && fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
		    errno == ENOENT && asprintf(&backup, "%s.dpkg-tmp", base) >= 0) {
			if (renameat(dfd, backup, dfd, base) < 0 &&
			    errno != ENOENT) {
				unpkg_err_sys(err, "cannot restore %s.dpkg-tmp",
					      prev[i]);
				free(backup);
				close(dfd);
				goto out;
			}
			free(backup);
		}
		if (dfd >= 0)
			close(dfd);
		p->old_files[p->nold_files++] = prev[i];
		prev[i] = NULL;
	}
	ret = 0;
out:
	unpkg_strmap_destroy(&known);
	unpkg_db_list_free(prev, nprev);
	return ret;
}

/* dpkg installs packages of its native architecture, "all", and the
 * foreign architectures the database lists (ADMINDIR/arch, written by
 * dpkg --add-architecture); another one only with --force-architecture. */
static int check_arch(struct run *r, struct pkg *p, struct unpkg_err *err)
{
	char buf[4096];
	const char *s;
	ssize_t n = 0;
	int fd;

	if (strcmp(p->arch, "all") == 0 ||
	    strcmp(p->arch, UNPKG_NATIVE_ARCH) == 0)
		return 0;
	fd = openat(unpkg_db_dirfd(r->db), "arch", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	buf[n > 0 ? n : 0] = '\0';
	for (s = strstr(buf, p->arch); s != NULL; s = strstr(s + 1, p->arch))
		if ((s == buf || s[-1] == '\n') &&
		    (s[strlen(p->arch)] == '\n' || s[strlen(p->arch)] == '\0'))
			return 0;
	if (r->o->force & UNPKG_FORCE_ARCHITECTURE) {
		unpkg_event_emit(r->o->events, UNPKG_EV_WARNING, p->key,
				 "package architecture (%s) does not match "
				 "system (%s)", p->arch, UNPKG_NATIVE_ARCH);
		return 0;
	}
	return unpkg_err_set(err, UNPKG_ERR_UNSUPPORTED,
			     "package architecture (%s) does not match system "
			     "(%s)", p->arch, UNPKG_NATIVE_ARCH);
}

/* What the maintainer-script steps need to know of the installed
 * version: its status word, its architecture, whether it has a prerm. */
static int old_script_facts(struct run *r, struct pkg *p,
			    const struct unpkg_db_pkg *old,
			    struct unpkg_err *err)
{
	const char *arch;
	struct unpkg_err probe;
	char *prerm;
	int fd;

	arch = unpkg_para_get(&old->para, "Architecture");
	p->old_state = unpkg_db_pkg_state(old);
	if (arch != NULL && (p->old_arch = strdup(arch)) == NULL)
		return unpkg_err_nomem(err);
	if (asprintf(&prerm, "info/%s.prerm", old->key) < 0)
		return unpkg_err_nomem(err);
	unpkg_err_init(&probe);
	fd = unpkg_root_openat(r->admroot, prerm, O_PATH | O_NOFOLLOW, 0,
			       &probe);
	free(prerm);
	if (fd >= 0) {
		close(fd);
		p->old_prerm = 1;
	} else if (probe.errnum != ENOENT) {
		return unpkg_err_set(err, probe.code, "%s", probe.msg);
	}
	return 0;
}

/* dpkg's short form of an archive's path in its progress lines: the
 * rest of the path after its first slashes, as far as needed for at most
 * 30 characters to be left, as ".../REST" (apt's archives show so as
 * ".../NAME_VERSION_ARCH.deb"); the path itself when short enough. */
static char *shown_path(const char *path)
{
	const char *rest = path, *slash;
	char *s;

	while (strlen(rest) > 30 && (slash = strchr(rest, '/')) != NULL)
		rest = slash + 1;
	if (rest == path)
		return strdup(path);
	return asprintf(&s, ".../%s", rest) < 0 ? NULL : s;
}

int open_pkg(struct run *r, struct pkg *p, struct unpkg_err *err)
{
	const struct unpkg_deb_member *m;
	const struct unpkg_db_pkg *old;
	const char *warning = NULL, *ma;
	char why[2048] = "";
	size_t i;
	int ok;

	if ((p->debshown = shown_path(p->debpath)) == NULL)
		return unpkg_err_nomem(err);
	if (unpkg_deb_open(p->debpath, &p->deb, err) < 0)
		return -1;
	m = unpkg_deb_member(p->deb, "control");
	if (m == NULL)
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "%s: control.tar has no control file",
				     p->debpath);
	if (unpkg_para_parse((const char *)m->data, m->size, &p->control,
			     err) < 0 ||
	    unpkg_stanza_check_control(&p->control, &warning, err) < 0) {
		unpkg_err_prefix(err, "%s: control", p->debpath);
		return -1;
	}
	if (warning != NULL)
		unpkg_event_emit(r->o->events, UNPKG_EV_WARNING, p->debpath,
				 "%s: %s", p->debpath, warning);
	p->name = strdup(unpkg_para_get(&p->control, "Package"));
	if (p->name == NULL)
		return unpkg_err_nomem(err);
	for (i = 0; p->name[i] != '\0'; i++)
		if (p->name[i] >= 'A' && p->name[i] <= 'Z')
			p->name[i] = (char)(p->name[i] - 'A' + 'a');
	p->version = unpkg_para_get(&p->control, "Version");
	p->arch = unpkg_para_get(&p->control, "Architecture");
	ma = unpkg_para_get(&p->control, "Multi-Arch");
	if (ma != NULL && strcmp(ma, "same") == 0)
		ok = asprintf(&p->key, "%s:%s", p->name, p->arch);
	else
		ok = asprintf(&p->key, "%s", p->name);
	if (ok < 0) {
		p->key = NULL;
		return unpkg_err_nomem(err);
	}
	if (asprintf(&p->label, "%s %s", p->name, p->version) < 0) {
		p->label = NULL;
		return unpkg_err_nomem(err);
	}
	if (check_arch(r, p, err) < 0)
		return -1;
	/* Given twice, as dpkg would unpack one over the other: the later
	 * one is the one installed (dpkg also runs the scripts of both). */
	for (i = 0; i < r->npkgs && &r->pkgs[i] != p; i++) {
		struct pkg *q = &r->pkgs[i];

		if (q->state == PKG_FAILED || strcmp(q->key, p->key) != 0)
			continue;
		unpkg_event_emit(r->o->events, UNPKG_EV_NOTICE, q->key,
				 "%s: package %s is given again later (%s): "
				 "that one is installed", q->debpath, q->key,
				 p->debpath);
		q->state = PKG_FAILED;	/* superseded, not a failure */
		unpkg_deb_free(q->deb);
		q->deb = NULL;
	}
	if (maint_save_scripts(p, err) < 0)
		return -1;
	m = unpkg_deb_member(p->deb, "conffiles");
	if (m != NULL && parse_conffiles(p, m, err) < 0) {
		unpkg_err_prefix(err, "%s", p->debpath);
		return -1;
	}
	ok = depends_check(r, p, "Pre-Depends", "pre-depends on", 0, why,
			   sizeof(why), err);
	if (ok < 0)
		return -1;
	if (!ok && !(r->o->force & UNPKG_FORCE_DEPENDS))
		return unpkg_err_set(err, UNPKG_ERR_DEPENDS,
				     "pre-dependency problem - not installing "
				     "%s:%s", p->key, why);
	if (!ok)
		unpkg_event_emit(r->o->events, UNPKG_EV_WARNING, p->key,
				 "%s: dependency problems, but processing "
				 "anyway as you requested:%s", p->key, why);

	old = unpkg_db_find(r->db, p->name, p->arch);
	if (old != NULL &&
	    unpkg_db_pkg_state(old) == UNPKG_STATUS_NOT_INSTALLED)
		old = NULL;
	if (old != NULL) {
		const char *v = unpkg_para_get(&old->para, "Version");
		const char *cf = unpkg_para_get(&old->para, "Conffiles");
		const char *cv;

		p->upgrade = unpkg_db_pkg_state(old) !=
			     UNPKG_STATUS_CONFIG_FILES;
		if (old_script_facts(r, p, old, err) < 0)
			return -1;
		p->old_stanza = unpkg_para_format(&old->para);
		p->old_version = v != NULL ? strdup(v) : NULL;
		p->old_conffiles = cf != NULL ? strdup(cf) : NULL;
		if (p->old_stanza == NULL || (v != NULL && !p->old_version) ||
		    (cf != NULL && !p->old_conffiles))
			return unpkg_err_nomem(err);
		if (find_obsolete_conffiles(p, err) < 0)
			return -1;
		/* dpkg remembers the last configured version until the new
		 * one is configured. */
		if (unpkg_db_pkg_state(old) == UNPKG_STATUS_INSTALLED)
			cv = v;
		else
			cv = unpkg_para_get(&old->para, "Config-Version");
		if (cv != NULL && (p->config_version = strdup(cv)) == NULL)
			return unpkg_err_nomem(err);
		/* Read now: the new list replaces it during the commit. */
		if (unpkg_db_read_list(r->db, old->key, &p->old_files,
				       &p->nold_files, err) < 0 ||
		    recover_old_files(r, p, old->key, err) < 0)
			return -1;
	} else {
		unpkg_event_emit(r->o->events, UNPKG_EV_PROGRESS, p->key,
				 "Selecting previously unselected package %s.",
				 p->key);
	}
	if (inst_check_conflicts(r, p, err) <= 0 ||
	    run_reading_database(r, 1, err) < 0)
		return -1;
	unpkg_event_emit(r->o->events, UNPKG_EV_PROGRESS, p->key,
			 "Preparing to unpack %s ...", p->debshown);
	p->state = PKG_OPENED;
	return 0;
}
