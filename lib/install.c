/* install.c - one run of unpkg -i / --unpack. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <md5.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsclass.h"
#include "install-impl.h"
#include "relation.h"
#include "script.h"
#include "stanza.h"

static void conffiles_free(struct conffile *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].path);
		free(v[i].flags);
	}
	free(v);
}

static void pkg_destroy(struct pkg *p)
{
	unpkg_deb_free(p->deb);
	unpkg_para_destroy(&p->control);
	free(p->name);
	free(p->key);
	free(p->label);
	free(p->old_stanza);
	free(p->old_version);
	free(p->config_version);
	free(p->old_conffiles);
	free(p->old_status);
	free(p->old_arch);
	free(p->awaited);
	unpkg_db_list_free(p->taken, p->ntaken);
	unpkg_db_list_free(p->gone, p->ngone);
	maint_free_scripts(p);
	unpkg_db_list_free(p->old_files, p->nold_files);
	unpkg_db_list_free(p->obsolete_info, p->nobsolete_info);
	free(p->obsolete);
	free(p->late_rmdir);
	unpkg_db_list_free(p->late_paths, p->nlate_paths);
	conffiles_free(p->obsolete_conf, p->nobsolete_conf);
	conffiles_free(p->conffiles, p->nconffiles);
	unpkg_strmap_destroy(&p->confmap);
	unpkg_filelist_destroy(&p->files);
}

void inst_fail_pkg(struct run *r, struct pkg *p, const char *what,
		     const struct unpkg_err *err)
{
	unpkg_event_emit(r->o->events, UNPKG_EV_ERROR, what, "%s", err->msg);
	p->state = PKG_FAILED;
	unpkg_deb_free(p->deb);
	p->deb = NULL;
	r->failed++;
}

static void timed(struct run *r, enum unpkg_phase phase, double since)
{
	r->stats->phase_seconds[phase] += unpkg_now() - since;
}

int inst_text_add(struct text *t, struct unpkg_err *err, const char *fmt,
		  ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return unpkg_err_set(err, UNPKG_ERR_USAGE, "bad format");
	if (t->len + (size_t)n + 1 > t->cap) {
		size_t cap = (t->len + (size_t)n + 1) * 2;
		char *s = realloc(t->s, cap);

		if (s == NULL)
			return unpkg_err_nomem(err);
		t->s = s;
		t->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
	return 0;
}

/* --- open --------------------------------------------------------------- */

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

static void candidates_destroy(struct run *r)
{
	size_t i;

	unpkg_strmap_destroy(&r->candidates);
	for (i = 0; i < r->ncands; i++)
		free(r->cands[i]);
	free(r->cands);
	r->cands = NULL;
	r->ncands = 0;
	r->capcands = 0;
	for (i = 0; i < r->nprovides; i++)
		unpkg_relations_destroy(&r->provides[i]);
	free(r->provides);
	r->provides = NULL;
	r->nprovides = 0;
	inst_conflicts_index_free(r);
}

static int add_candidate(struct run *r, const char *name,
			 const struct unpkg_db_pkg *pkg, const char *version,
			 int provided, struct unpkg_err *err)
{
	struct candidate *c, **grown;
	void *head = NULL;
	int ret;

	if (r->ncands == r->capcands) {
		size_t cap = r->capcands != 0 ? r->capcands * 2 : 256;

		grown = realloc(r->cands, cap * sizeof(*grown));
		if (grown == NULL)
			return unpkg_err_nomem(err);
		r->cands = grown;
		r->capcands = cap;
	}
	c = malloc(sizeof(*c));
	if (c == NULL)
		return unpkg_err_nomem(err);
	r->cands[r->ncands++] = c;
	c->pkg = pkg;
	c->version = version;
	c->provided = provided;
	ret = unpkg_strmap_put(&r->candidates, name, c, &head, err);
	if (ret < 0)
		return -1;
	/* an existing chain: link in after its head (the key stays) */
	c->next = NULL;
	if (ret > 0) {
		struct candidate *h = head;

		c->next = h->next;
		h->next = c;
	}
	return 0;
}

/* Index the database once per state of it; a put invalidates it. */
int inst_build_candidates(struct run *r, struct unpkg_err *err)
{
	size_t n = unpkg_db_count(r->db), i, j, k;

	if (r->candidates_valid)
		return 0;
	candidates_destroy(r);
	r->provides = calloc(n != 0 ? n : 1, sizeof(*r->provides));
	if (r->provides == NULL)
		return unpkg_err_nomem(err);
	for (i = 0; i < n; i++) {
		const struct unpkg_db_pkg *dp = unpkg_db_at(r->db, i);
		const char *value = unpkg_para_get(&dp->para, "Provides");
		struct unpkg_relations *prov = &r->provides[r->nprovides];
		struct unpkg_err ignored;

		if (add_candidate(r, dp->name, dp,
				  unpkg_para_get(&dp->para, "Version"), 0,
				  err) < 0)
			return -1;
		if (value == NULL)
			continue;
		unpkg_err_init(&ignored);
		unpkg_relations_init(prov);
		/* dpkg wrote it; one it cannot read provides nothing */
		if (unpkg_relations_parse(prov, "Provides", value, &ignored) < 0)
			continue;
		r->nprovides++;
		for (j = 0; j < prov->count; j++)
			for (k = 0; k < prov->rels[j].count; k++) {
				const struct unpkg_relation_alt *a =
					&prov->rels[j].alts[k];

				if (add_candidate(r, a->name, dp,
						  a->op == UNPKG_REL_EQ
							  ? a->version : NULL,
						  1, err) < 0)
					return -1;
			}
	}
	r->candidates_valid = 1;
	return 0;
}

/* Is package `dp` usable for dependencies: installed, or (when `run_ok`)
 * unpacked by this run? */
static int usable(const struct run *r, const struct unpkg_db_pkg *dp,
		  int run_ok)
{
	const char *want, *flag, *status;
	size_t i;

	if (unpkg_db_pkg_status(dp, &want, &flag, &status) < 0)
		return 0;
	if (strcmp(status, "installed") == 0)
		return 1;
	for (i = 0; run_ok && i < r->npkgs; i++)
		if (r->pkgs[i].state >= PKG_UNPACKED &&
		    strcmp(r->pkgs[i].key, dp->key) == 0)
			return 1;
	return 0;
}

/* Is `alt` met by a usable package, directly or through Provides?  An
 * unversioned Provides only meets an unversioned need, as in dpkg. */
static int alt_satisfied(const struct run *r,
			 const struct unpkg_relation_alt *alt, int run_ok)
{
	const struct candidate *c;

	for (c = unpkg_strmap_get(&r->candidates, alt->name); c != NULL;
	     c = c->next) {
		if (!usable(r, c->pkg, run_ok))
			continue;
		if (alt->op == UNPKG_REL_ANY)
			return 1;
		if (c->version != NULL &&
		    unpkg_relop_satisfied(alt->op, c->version, alt->version))
			return 1;
	}
	return 0;
}

/* Check one relationship field; describe what is missing in `why`. */
static int check_relations(struct run *r, const struct pkg *p,
			   const char *field, const char *verb, int run_ok,
			   char *why, size_t whylen, struct unpkg_err *err)
{
	const char *value = unpkg_para_get(&p->control, field);
	struct unpkg_relations rels;
	size_t i, j, used = strlen(why);
	/* configuring: the Breaks of the others count too, after the
	 * dependencies, as in dpkg */
	int ok = 1, breakers = run_ok && strcmp(field, "Depends") == 0;

	if (value == NULL)
		return breakers ? inst_check_breakers(r, p, why, whylen, err)
				: 1;
	if (inst_build_candidates(r, err) < 0)
		return -1;
	unpkg_relations_init(&rels);
	if (unpkg_relations_parse(&rels, field, value, err) < 0) {
		unpkg_relations_destroy(&rels);
		return -1;
	}
	for (i = 0; i < rels.count; i++) {
		struct unpkg_relations one = { .rels = &rels.rels[i], .count = 1 };
		char *text;
		int met = 0;

		for (j = 0; j < rels.rels[i].count && !met; j++)
			met = alt_satisfied(r, &rels.rels[i].alts[j], run_ok);
		if (met)
			continue;
		ok = 0;
		text = unpkg_relations_format(&one);
		used += (size_t)snprintf(why + used, used < whylen ? whylen - used : 0,
					 "\n %s %s %s; however:", p->key, verb,
					 text != NULL ? text : "?");
		free(text);
		for (j = 0; j < rels.rels[i].count && used < whylen; j++)
			used += (size_t)snprintf(why + used, whylen - used,
						 "\n  Package %s is not installed.",
						 rels.rels[i].alts[j].name);
	}
	unpkg_relations_destroy(&rels);
	if (breakers) {
		int b = inst_check_breakers(r, p, why, whylen, err);

		if (b <= 0)
			return b;
	}
	return ok;
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
		dfd = unpkg_root_open_parent(r->root, prev[i] + 1, &base,
					     &ignored);
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
	const char *want, *flag, *status, *arch;
	struct unpkg_err probe;
	char *prerm;
	int fd;

	arch = unpkg_para_get(&old->para, "Architecture");
	if (unpkg_db_pkg_status(old, &want, &flag, &status) == 0 &&
	    (p->old_status = strdup(status)) == NULL)
		return unpkg_err_nomem(err);
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

static int open_pkg(struct run *r, struct pkg *p, struct unpkg_err *err)
{
	const struct unpkg_deb_member *m;
	const struct unpkg_db_pkg *old;
	const char *warning = NULL, *ma;
	char why[2048] = "";
	size_t i;
	int ok;

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
	ok = check_relations(r, p, "Pre-Depends", "pre-depends on", 0, why,
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
	if (old != NULL) {
		const char *want, *flag, *status;

		if (unpkg_db_pkg_status(old, &want, &flag, &status) == 0 &&
		    strcmp(status, "not-installed") == 0)
			old = NULL;
	}
	if (old != NULL) {
		const char *v = unpkg_para_get(&old->para, "Version");
		const char *cf = unpkg_para_get(&old->para, "Conffiles");
		const char *want, *flag, *status, *cv;

		p->upgrade = unpkg_db_pkg_status(old, &want, &flag,
						 &status) != 0 ||
			     strcmp(status, "config-files") != 0;
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
		if (unpkg_db_pkg_status(old, &want, &flag, &status) == 0 &&
		    strcmp(status, "installed") == 0)
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
	if (inst_check_conflicts(r, p, err) <= 0)
		return -1;
	unpkg_event_emit(r->o->events, UNPKG_EV_PROGRESS, p->key,
			 "Preparing to unpack %s ...", p->debpath);
	p->state = PKG_OPENED;
	return 0;
}

/* The hash the database recorded for conffile `path` before the run
 * (from the old Conffiles value " /path hash [flags]" lines), copied into
 * `hash`; "" if none. */
static void recorded_hash(const struct pkg *p, const char *path,
			  char hash[33])
{
	const char *s = p->old_conffiles;
	size_t plen = strlen(path);

	hash[0] = '\0';
	while (s != NULL && (s = strstr(s, path)) != NULL) {
		if ((s == p->old_conffiles || s[-1] == ' ') && s[plen] == ' ') {
			sscanf(s + plen + 1, "%32s", hash);
			return;
		}
		s += plen;
	}
}

/* MD5 of the regular file `name` in `dfd`, "" if it is not one. */
static int file_md5(int dfd, const char *name, char hex[33],
		    struct unpkg_err *err)
{
	unsigned char buf[65536];
	MD5_CTX ctx;
	ssize_t n;
	int fd;

	hex[0] = '\0';
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP ? 0 : unpkg_err_sys(err, "cannot open %s", name);
	MD5Init(&ctx);
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			unpkg_err_sys(err, "cannot read %s", name);
			close(fd);
			return -1;
		}
		MD5Update(&ctx, buf, (size_t)n);
	}
	close(fd);
	MD5End(&ctx, hex);
	return 0;
}


static int is_script(const char *member)
{
	return strcmp(member, "preinst") == 0 ||
	       strcmp(member, "postinst") == 0 ||
	       strcmp(member, "prerm") == 0 || strcmp(member, "postrm") == 0;
}

/* Write info/KEY.NAME.dpkg-new and stage it to become info/KEY.NAME. */
int inst_stage_info(struct run *r, const char *key, int dir,
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

/* info/KEY.list: the new version's paths, symlinks after everything else
 * (each group in archive order, as dpkg lists them), then its obsolete
 * conffiles. */
static int list_text(const struct pkg *p, struct text *list,
		     struct unpkg_err *err)
{
	size_t i;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < p->files.count; i++) {
			const struct unpkg_file *f = &p->files.files[i];

			if ((f->type == UNPKG_ENTRY_SYMLINK) == pass &&
			    inst_text_add(list, err, "%s\n", f->path) < 0)
				return -1;
		}
	}
	for (i = 0; i < p->nobsolete_conf; i++)
		if (unpkg_strmap_get(&p->files.index,
				     p->obsolete_conf[i].path) == NULL &&
		    inst_text_add(list, err, "%s\n", p->obsolete_conf[i].path) < 0)
			return -1;
	return 0;
}

/* info/KEY.list, info/KEY.md5sums (generated when the package ships
 * none, as dpkg does, even if empty) and every control member but
 * control itself. */
static int stage_infodb(struct run *r, struct pkg *p, struct unpkg_err *err)
{
	struct text list = { 0 }, sums = { 0 };
	size_t i;
	int dir, ret = -1;

	dir = unpkg_commit_dir(r->commit, r->admroot, "info", err);
	if (dir < 0)
		return -1;
	for (i = 0; i < unpkg_deb_member_count(p->deb); i++) {
		const struct unpkg_deb_member *m = unpkg_deb_member_at(p->deb, i);

		if (strcmp(m->name, "control") == 0)
			continue;
		if (inst_stage_info(r, p->key, dir, m->name, m->data, m->size,
			       m->mode & 0777, err) < 0)
			goto out;
	}
	if (list_text(p, &list, err) < 0 ||
	    inst_stage_info(r, p->key, dir, "list", list.s, list.len, 0644, err) < 0)
		goto out;
	if (unpkg_deb_member(p->deb, "md5sums") == NULL) {
		for (i = 0; i < p->files.count; i++) {
			const struct unpkg_file *f = &p->files.files[i];

			if (f->md5[0] != '\0' &&
			    inst_text_add(&sums, err, "%s  %s\n", f->md5,
				     f->path + 1) < 0)
				goto out;
		}
		/* Even empty: dpkg --audit asks for a reinstall otherwise. */
		if (inst_stage_info(r, p->key, dir, "md5sums", sums.s, sums.len, 0644,
			       err) < 0)
			goto out;
	}
	ret = 0;
out:
	free(list.s);
	free(sums.s);
	return ret;
}

/* --- database records ----------------------------------------------------- */

/* Conffiles: field for `p`: until configured, the hash recorded for the
 * old version ("newconffile" for a conffile new to the package); once
 * configured, the hash of the version the package ships.  The old
 * conffiles the new version dropped follow, marked obsolete. */
static int conffiles_value(const struct pkg *p, int configured,
			   struct text *v, struct unpkg_err *err)
{
	size_t i;

	for (i = 0; i < p->nconffiles; i++) {
		const struct conffile *cf = &p->conffiles[i];
		uintptr_t idx = (uintptr_t)unpkg_strmap_get(&p->files.index,
							    cf->path);
		const char *hash = "newconffile";
		char old[33];

		recorded_hash(p, cf->path, old);
		if (configured && idx != 0 && p->files.files[idx - 1].md5[0])
			hash = p->files.files[idx - 1].md5;
		else if (!configured && old[0] != '\0')
			hash = old;
		if (inst_text_add(v, err, "\n %s %s%s%s", cf->path, hash,
			     cf->flags != NULL ? " " : "",
			     cf->flags != NULL ? cf->flags : "") < 0)
			return -1;
	}
	for (i = 0; i < p->nobsolete_conf; i++)
		if (inst_text_add(v, err, "\n %s %s obsolete",
			     p->obsolete_conf[i].path,
			     p->obsolete_conf[i].flags) < 0)
			return -1;
	return 0;
}

int inst_put_stanza(struct run *r, struct pkg *p, const char *text,
		    const char *arch, const char *version, const char *status,
		    struct unpkg_err *err)
{
	if (unpkg_db_put(r->db, p->name, p->arch, text, err) < 0)
		return -1;
	r->candidates_valid = 0;
	r->db_dirty = 1;
	unpkg_event_pkg_status(r->o->events, p->key, arch, version, status);
	return 0;
}

/* Set the package's stanza in memory (not yet written). */
int inst_put_state(struct run *r, struct pkg *p, const char *flag,
		     const char *status, struct unpkg_err *err)
{
	struct unpkg_stanza_state st = {
		.want = "install",
		.flag = flag,
		.status = status,
		.config_version = p->config_version,
	};
	struct text conffiles = { 0 };
	char *text = NULL;
	int ret = -1;

	if (conffiles_value(p, strcmp(status, "installed") == 0, &conffiles,
			    err) < 0)
		goto out;
	st.conffiles = conffiles.s;
	/* configured, it waits for the triggers it activated */
	if (p->awaited != NULL && strcmp(status, "installed") == 0)
		st.status = status = "triggers-awaited";
	st.triggers_awaited = p->awaited;
	if (unpkg_stanza_format(&p->control, &st, &text, err) < 0 ||
	    inst_put_stanza(r, p, text, p->arch, p->version, status, err) < 0)
		goto out;
	ret = 0;
out:
	free(conffiles.s);
	free(text);
	return ret;
}

int inst_write_db(struct run *r, struct unpkg_err *err)
{
	if (unpkg_db_write(r->db, &r->stats->fsync, err) < 0) {
		if (err->code == UNPKG_ERR_SYNC)
			r->sync_failed = 1;
		return -1;
	}
	r->db_dirty = 0;
	return 0;
}

/* Write the database's new files now and hand them to the commit, whose
 * next sync makes them durable with the package files; db_publish() puts
 * them in place after it.  One sync fewer than inst_write_db(). */
static int db_stage(struct run *r, struct unpkg_err *err)
{
	struct unpkg_db_staged s;
	size_t i;
	int dir;

	dir = unpkg_commit_dir(r->commit, r->admroot, "", err);
	if (dir < 0 || unpkg_db_write_begin(r->db, &s, err) < 0)
		return -1;
	for (i = 0; i < s.n; i++) {
		int fd = s.fd[i];

		s.fd[i] = -1;	/* the commit's now, even on error */
		if (unpkg_commit_sync_with(r->commit, dir, s.name[i], fd,
					   err) < 0) {
			unpkg_db_staged_close(&s);
			return -1;
		}
	}
	r->db_dirty = 0;	/* until the next change */
	r->db_handed = 1;
	return 0;
}

/* Put the staged write in place. */
static int db_publish(struct run *r, struct unpkg_err *err)
{
	if (unpkg_db_write_end(r->db, &r->stats->fsync, err) < 0) {
		if (err->code == UNPKG_ERR_SYNC)
			r->sync_failed = 1;
		r->db_dirty = 1;
		return -1;
	}
	return 0;
}

static int db_publish_hook(void *ctx, struct unpkg_err *err)
{
	return db_publish(ctx, err);
}

/* A finish of the run's transaction.  If one of its syncs fails, it may
 * have been the one covering the database's files (a syncfs of their
 * file system, or the new status handed over): the database's own syncs
 * must not try again what it could not do. */
static int finish(struct run *r, const struct unpkg_commit_hooks *h,
		  struct unpkg_err *err)
{
	int ret = unpkg_commit_finish_hooked(r->commit, h, err);

	if (ret < 0 && err->code == UNPKG_ERR_SYNC &&
	    (r->db_handed ||
	     strcmp(unpkg_commit_strategy(r->commit), "syncfs") == 0))
		unpkg_db_sync_lost(r->db);
	r->db_handed = 0;
	return ret;
}

/* Put the package's stanza back as it was before the run, in memory: the
 * next database write of the run makes it durable. */
void inst_restore_pkg(struct run *r, struct pkg *p)
{
	const struct unpkg_db_pkg *now;
	const char *want, *flag, *status = "not-installed";
	struct unpkg_err err;

	unpkg_err_init(&err);
	r->candidates_valid = 0;
	r->db_dirty = 1;
	if (unpkg_db_put(r->db, p->name, p->arch, p->old_stanza, &err) < 0) {
		unpkg_event_emit(r->o->events, UNPKG_EV_WARNING, p->key,
				 "cannot restore the database entry of %s: %s",
				 p->key, err.msg);
		return;
	}
	now = unpkg_db_find(r->db, p->name, p->arch);
	if (now != NULL && unpkg_db_pkg_status(now, &want, &flag, &status) < 0)
		status = "not-installed";
	unpkg_event_pkg_status(r->o->events, p->key, p->arch,
			       now != NULL ? unpkg_para_get(&now->para,
							    "Version") : NULL,
			       status);
}
/* --- unpack -------------------------------------------------------------- */

/* A (device, inode) pair of a file the new version installed. */
struct devino {
	dev_t dev;
	ino_t ino;
};

static int cmp_devino(const void *a, const void *b)
{
	const struct devino *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return 0;
}

/* lstat `path` ("/usr/bin/x") beneath the root; 0 on success. */
int inst_lstat_in_root(struct run *r, const char *path, struct stat *st)
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
		struct stat st;

		if (p->files.files[i].type == UNPKG_ENTRY_DIR ||
		    inst_lstat_in_root(r, p->files.files[i].path, &st) < 0)
			continue;
		v[*n].dev = st.st_dev;
		v[(*n)++].ino = st.st_ino;
	}
	qsort(v, *n, sizeof(*v), cmp_devino);
	*out = v;
	return 0;
}

/* The old version's paths the new one lacks, but its conffiles (kept,
 * as dpkg keeps them); in the old list's order, parents first. */
static int find_obsolete(struct pkg *p, struct unpkg_err *err)
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

		if (strcmp(path, "/.") == 0 || path[0] != '/' ||
		    unpkg_strmap_get(&p->files.index, path) != NULL)
			continue;
		recorded_hash(p, path, hash);
		if (hash[0] == '\0')
			p->obsolete[p->nobsolete++] = path;
	}
	return 0;
}

int inst_add_late_rmdir(struct pkg *p, const char *path,
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
int inst_all_gone(int dfd, const char *name, const char *path,
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
			ret = inst_all_gone(dirfd(dir), de->d_name, full, gone, err);
		free(full);
	}
	closedir(dir);
	return ret;
}

/* 1 if an ancestor of `path` is in `moved`. */
int inst_under_moved(const char *path, const struct unpkg_strmap *moved)
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

/* Whether obsolete `path` may go: not when another package lists it, nor
 * a file the new version installed under another name (merged /usr). */
static int may_remove(struct run *r, struct pkg *p, const char *path,
		      struct stat *st, struct devino **ids, size_t *nids,
		      struct unpkg_err *err)
{
	struct devino key;

	if (unpkg_strmap_get(&r->run_files, path) != NULL)
		return 0;
	if (unpkg_db_load_files(r->db, err) < 0)
		return -1;
	if (unpkg_db_file_owner(r->db, path, p->key) != NULL ||
	    inst_lstat_in_root(r, path, st) < 0)
		return 0;
	if (S_ISDIR(st->st_mode))
		return 1;
	if (*ids == NULL && new_identities(r, p, ids, nids, err) < 0)
		return -1;
	key.dev = st->st_dev;
	key.ino = st->st_ino;
	return bsearch(&key, *ids, *nids, sizeof(key), cmp_devino) == NULL;
}

int inst_parent_dir(struct run *r, const char *path, struct unpkg_err *err)
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

int inst_move_aside(struct run *r, struct pkg *p, const char *who,
		    const char *path, int dir, int is_dir,
		    struct unpkg_strmap *moved, struct unpkg_err *err)
{
	const char *base = strrchr(path, '/') + 1;
	struct unpkg_err why;

	unpkg_err_init(&why);
	if (unpkg_commit_remove(r->commit, dir, base, is_dir, &why) == 0)
		return unpkg_strmap_put(moved, path, (void *)path, NULL, err);
	if (is_dir && why.errnum == EXDEV)
		return inst_add_late_rmdir(p, path, err);
	unpkg_event_emit(r->o->events, UNPKG_EV_WARNING, who,
			 "unable to delete old %s '%s': %s",
			 is_dir ? "directory" : "file", path, why.msg);
	return 0;
}

/* Remove the obsolete paths as dpkg does after unpacking: not files
 * another package lists, directories only when nothing else is in them.
 * Each goes aside as NAME.dpkg-tmp (a directory whole, with everything
 * beneath it), so that a failure before the record can put it back.
 * Where a directory cannot be moved (EXDEV on overlayfs), its entries are
 * moved one by one and the directory itself is removed after the record.
 * What cannot be removed is left with a warning. */
static int remove_obsolete(struct run *r, struct pkg *p, struct unpkg_err *err)
{
	struct unpkg_strmap gone, moved;
	struct devino *ids = NULL;
	size_t nids = 0, i;
	int ret = -1;

	unpkg_strmap_init(&gone);
	unpkg_strmap_init(&moved);
	for (i = 0; i < p->nobsolete; i++) {
		struct stat st;
		int ok = may_remove(r, p, p->obsolete[i], &st, &ids, &nids,
				    err);

		if (ok < 0 || (ok > 0 &&
			       unpkg_strmap_put(&gone, p->obsolete[i],
						(void *)p->obsolete[i], NULL,
						err) < 0))
			goto out;
	}
	for (i = 0; i < p->nobsolete; i++) {
		const char *path = p->obsolete[i];
		const char *slash = strrchr(path, '/');
		struct stat st;
		int dir, dfd, is_dir;

		if (unpkg_strmap_get(&gone, path) == NULL ||
		    inst_under_moved(path, &moved) ||
		    inst_lstat_in_root(r, path, &st) < 0)
			continue;
		is_dir = S_ISDIR(st.st_mode);
		dir = inst_parent_dir(r, path, err);
		dfd = dir >= 0 ? unpkg_commit_dirfd(r->commit, dir, err) : -1;
		if (dfd < 0)
			goto out;
		if (is_dir) {
			int all = inst_all_gone(dfd, slash + 1, path, &gone, err);

			if (all < 0)
				goto out;
			if (all == 0)
				continue;	/* dpkg keeps it too */
		}
		if (inst_move_aside(r, p, p->key, path, dir, is_dir, &moved,
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

/* The directories that could not be moved aside, deepest first, once
 * their entries are gone for good. */
static void late_rmdirs(struct run *r, struct pkg *p)
{
	size_t i;

	for (i = p->nlate_rmdir; i-- > 0;) {
		struct unpkg_err ignored;
		const char *base;
		int dfd;

		unpkg_err_init(&ignored);
		dfd = unpkg_root_open_parent(r->root, p->late_rmdir[i] + 1,
					     &base, &ignored);
		if (dfd < 0)
			continue;
		if (unlinkat(dfd, base, AT_REMOVEDIR) < 0 && errno != ENOENT &&
		    errno != ENOTEMPTY && errno != EEXIST)
			unpkg_event_emit(r->o->events, UNPKG_EV_WARNING, p->key,
					 "unable to delete old directory "
					 "'%s': %s", p->late_rmdir[i],
					 strerror(errno));
		close(dfd);
	}
	p->nlate_rmdir = 0;
}

/* An interrupted run moved an old info/ file aside as NAME.dpkg-tmp:
 * put it back where nothing has taken its name, so that it is removed
 * like the rest.  0, or -1 with errno set. */
int inst_unmove_info(int dfd, const char *name)
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

/* Note the info/KEY.* files of the old version that the new one does
 * not ship (an old postinst, say); they go once the new one is committed. */
static int find_obsolete_info(struct run *r, struct pkg *p,
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
		    inst_unmove_info(dirfd(dir), de->d_name) < 0) {
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

static int remove_obsolete_info(struct run *r, struct pkg *p,
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

/* The database entry of "name" or "name:arch", or NULL. */
const struct unpkg_db_pkg *inst_find_key(const struct run *r,
					 const char *key)
{
	const char *colon = strchr(key, ':');
	char name[256];

	if (colon == NULL)
		return unpkg_db_find(r->db, key, NULL);
	snprintf(name, sizeof(name), "%.*s", (int)(colon - key), key);
	return unpkg_db_find(r->db, name, colon + 1);
}

/* What happens to the files of one installed package that `p` ships too,
 * decided at the first one (dpkg's "replacingfilesandsaid"). */
enum take_verdict {
	TAKE_REFUSE = 1,	/* a conflict (or --force-overwrite) */
	TAKE_REPLACE,		/* p Replaces the owner: p takes them */
	TAKE_KEEP,		/* the owner Replaces p: it keeps them */
	TAKE_REMOVED,		/* the owner is removed in favour of p: p
				 * takes them, as dpkg does, silently */
};

/* Is `key` a package `p` removes (Conflicts with Replaces)? */
static int is_removal(const struct pkg *p, const char *key)
{
	size_t i;

	for (i = 0; i < p->nremovals; i++)
		if (strcmp(p->removals[i].key, key) == 0)
			return 1;
	return 0;
}

struct take_ctx {
	struct run *r;
	struct pkg *p;
	struct unpkg_relations repl;	/* p's Replaces, parsed once */
	int parsed;
	struct unpkg_strmap verdicts;	/* owner key -> enum take_verdict */
	char **owners;			/* the keys of `verdicts` */
	size_t nowners;
};

/* Does a Replaces field `rels` name package `name` at version `version`
 * (dpkg's does_replace: the version is the replaced package's)? */
static int rels_replace(const struct unpkg_relations *rels, const char *name,
			const char *version)
{
	size_t i, j;

	for (i = 0; i < rels->count; i++)
		for (j = 0; j < rels->rels[i].count; j++) {
			const struct unpkg_relation_alt *a =
				&rels->rels[i].alts[j];

			if (strcmp(a->name, name) == 0 &&
			    (a->op == UNPKG_REL_ANY ||
			     (version != NULL &&
			      unpkg_relop_satisfied(a->op, version,
						    a->version))))
				return 1;
		}
	return 0;
}

/* Does `p` replace installed package `owner` (by name, its version
 * satisfied)?  Does `owner` replace `p` (at p's new version)? */
static int replaces(struct take_ctx *c, const char *owner,
		    enum take_verdict *v, struct unpkg_err *err)
{
	const char *value = unpkg_para_get(&c->p->control, "Replaces");
	const struct unpkg_db_pkg *q = inst_find_key(c->r, owner);
	const char *have = q != NULL ? unpkg_para_get(&q->para, "Version")
				     : NULL;
	const char *theirs = q != NULL ? unpkg_para_get(&q->para, "Replaces")
				       : NULL;
	struct unpkg_relations rels;
	struct unpkg_err ignored;

	*v = TAKE_REFUSE;
	if (q == NULL)
		return 0;
	if (value != NULL && !c->parsed) {
		if (unpkg_relations_parse(&c->repl, "Replaces", value, err) < 0)
			return -1;
		c->parsed = 1;
	}
	if (c->parsed && rels_replace(&c->repl, q->name, have)) {
		*v = TAKE_REPLACE;
		return 0;
	}
	if (theirs == NULL)
		return 0;
	unpkg_relations_init(&rels);
	unpkg_err_init(&ignored);
	/* dpkg wrote it; what it cannot read replaces nothing */
	if (unpkg_relations_parse_lax(&rels, "Replaces", theirs, &ignored) == 0 &&
	    rels_replace(&rels, c->p->name, c->p->version))
		*v = TAKE_KEEP;
	unpkg_relations_destroy(&rels);
	return 0;
}

static const char *version_of(struct run *r, const char *key)
{
	const struct unpkg_db_pkg *q = inst_find_key(r, key);
	const char *v = q != NULL ? unpkg_para_get(&q->para, "Version") : NULL;

	return v != NULL ? v : "";
}

/* The verdict for `owner`, decided (and announced, as dpkg does) the
 * first time one of its files turns up. */
static int verdict(struct take_ctx *c, const char *owner,
		   enum take_verdict *v, struct unpkg_err *err)
{
	uintptr_t known = (uintptr_t)unpkg_strmap_get(&c->verdicts, owner);
	char **grown, *key;

	if (known != 0) {
		*v = (enum take_verdict)known;
		return 0;
	}
	if (replaces(c, owner, v, err) < 0)
		return -1;
	if (is_removal(c->p, owner))
		*v = TAKE_REMOVED;
	grown = realloc(c->owners, (c->nowners + 1) * sizeof(*grown));
	if (grown == NULL)
		return unpkg_err_nomem(err);
	c->owners = grown;
	if ((key = strdup(owner)) == NULL)
		return unpkg_err_nomem(err);
	grown[c->nowners++] = key;
	if (unpkg_strmap_put(&c->verdicts, key, (void *)(uintptr_t)*v, NULL,
			     err) < 0)
		return -1;
	if (*v == TAKE_REPLACE)
		unpkg_event_emit(c->r->o->events, UNPKG_EV_PROGRESS, c->p->key,
				 "Replacing files in old package %s (%s) ...",
				 owner, version_of(c->r, owner));
	else if (*v == TAKE_KEEP)
		unpkg_event_emit(c->r->o->events, UNPKG_EV_PROGRESS, c->p->key,
				 "Replaced by files in installed package %s "
				 "(%s) ...", owner, version_of(c->r, owner));
	return 0;
}

static void take_ctx_destroy(struct take_ctx *c)
{
	unpkg_relations_destroy(&c->repl);
	unpkg_strmap_destroy(&c->verdicts);
	unpkg_db_list_free(c->owners, c->nowners);
}

/* The extractor found `path` in installed package `owner`: dpkg lets a
 * package that Replaces the owner take it, and with --force-overwrite
 * any package, with a warning; the owner's list loses it.  If the owner
 * Replaces the package instead, the owner keeps it (2). */
static int take_over(void *ctx, const char *owner, const char *path,
		     struct unpkg_err *err)
{
	struct take_ctx *c = ctx;
	struct pkg *p = c->p;
	enum take_verdict v;
	char **grown;

	if (verdict(c, owner, &v, err) < 0)
		return -1;
	if (v == TAKE_KEEP)
		return 2;
	if (v == TAKE_REFUSE) {
		if (!(c->r->o->force & UNPKG_FORCE_OVERWRITE))
			return 0;
		unpkg_event_emit(c->r->o->events, UNPKG_EV_WARNING, p->key,
				 "overriding problem because --force "
				 "enabled:");
		unpkg_event_emit(c->r->o->events, UNPKG_EV_WARNING, p->key,
				 "trying to overwrite '%s', which is also in "
				 "package %s %s", path, owner,
				 version_of(c->r, owner));
	}
	grown = realloc(p->taken, (p->ntaken + 2) * sizeof(*grown));
	if (grown == NULL)
		return unpkg_err_nomem(err);
	p->taken = grown;
	grown[p->ntaken] = strdup(owner);
	grown[p->ntaken + 1] = strdup(path);
	p->ntaken += 2;
	if (grown[p->ntaken - 2] == NULL || grown[p->ntaken - 1] == NULL)
		return unpkg_err_nomem(err);
	return 1;
}

/* Move the info/KEY.* files aside with the transaction (`dir`: the
 * commit's info/), but the members named in `keep` (NULL-terminated, or
 * NULL). */
int inst_remove_info(struct run *r, const char *key, int dir,
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

/* Installed package `owner` has nothing left but directories: as in dpkg
 * it disappears (postrm disappear; its info/ files moved aside with the
 * transaction; its entry dropped, to be put back if `p` fails). */
static int disappear(struct run *r, struct pkg *p, const char *owner, int dir,
		     struct unpkg_err *err)
{
	const struct unpkg_db_pkg *q = inst_find_key(r, owner);
	char **grown, *text, *arch;
	size_t i;
	int ret;

	if (q == NULL)
		return 0;
	unpkg_event_emit(r->o->events, UNPKG_EV_PROGRESS, owner,
			 "(Noting disappearance of %s, which has been "
			 "completely replaced.)", owner);
	if (maint_disappear(r, q, p, err) < 0)
		return -1;
	q = inst_find_key(r, owner);
	text = q != NULL ? unpkg_para_format(&q->para) : NULL;
	grown = realloc(p->gone, (p->ngone + 2) * sizeof(*grown));
	if (q == NULL || text == NULL || grown == NULL) {
		free(text);
		if (grown != NULL)
			p->gone = grown;
		return unpkg_err_nomem(err);
	}
	p->gone = grown;
	grown[p->ngone] = strdup(q->name);
	grown[p->ngone + 1] = text;
	p->ngone += 2;
	if (grown[p->ngone - 2] == NULL)
		return unpkg_err_nomem(err);
	/* q goes with its entry: its name and arch are copied first */
	arch = q->arch[0] != '\0' ? strdup(q->arch) : NULL;
	if (q->arch[0] != '\0' && arch == NULL)
		return unpkg_err_nomem(err);
	ret = unpkg_db_put(r->db, p->gone[p->ngone - 2], arch, NULL, err);
	free(arch);
	if (ret < 0 ||
	    unpkg_triggers_set_interests(r->trig, owner, NULL, 0, err) < 0)
		return -1;
	r->candidates_valid = 0;
	r->db_dirty = 1;
	/* unpacked earlier in this run: gone, it is not configured (it was
	 * committed on its own before `p` was staged) */
	for (i = 0; i < r->npkgs; i++)
		if (r->pkgs[i].state == PKG_UNPACKED &&
		    strcmp(r->pkgs[i].key, owner) == 0)
			r->pkgs[i].state = PKG_FAILED;
	return inst_remove_info(r, owner, dir, NULL, err);
}

/* The owners of the files `p` took over lose them from their lists, as
 * in dpkg; the new lists are staged in the record hook (a barrier and
 * rename pass of their own). */
static int stage_taken(struct run *r, struct pkg *p, struct unpkg_err *err)
{
	size_t i, j, k;
	int dir = -1;

	for (i = 0; i < p->ntaken; i += 2) {
		const char *owner = p->taken[i];
		struct text list = { 0 };
		char **paths = NULL;
		size_t n = 0;
		int ret = 0, keeps = 0;

		for (j = 0; j < i && strcmp(p->taken[j], owner) != 0; j += 2)
			;
		if (j < i || is_removal(p, owner))
			continue;	/* done, or its removal lists it */
		if (dir < 0)
			dir = unpkg_commit_dir(r->commit, r->admroot, "info",
					       err);
		if (dir < 0 ||
		    unpkg_db_read_list(r->db, owner, &paths, &n, err) < 0)
			return -1;
		for (k = 0; k < n && ret == 0; k++) {
			int gone = 0;

			for (j = i; j < p->ntaken && !gone; j += 2)
				gone = strcmp(p->taken[j], owner) == 0 &&
				       strcmp(p->taken[j + 1], paths[k]) == 0;
			if (gone)
				continue;
			ret = inst_text_add(&list, err, "%s\n", paths[k]);
			/* as in dpkg, any path `p` does not ship keeps the
			 * owner (a directory of its own, a file deleted by
			 * the administrator, a conffile not configured yet);
			 * what is left in common are directories */
			if (strcmp(paths[k], "/.") != 0 &&
			    unpkg_strmap_get(&p->files.index, paths[k]) == NULL)
				keeps = 1;
		}
		if (ret == 0 && !keeps)
			ret = disappear(r, p, owner, dir, err);
		else if (ret == 0)
			ret = inst_stage_info(r, owner, dir, "list",
					 list.s != NULL ? list.s : "", list.len,
					 0644, err);
		free(list.s);
		unpkg_db_list_free(paths, n);
		if (ret < 0)
			return -1;
	}
	return 0;
}

/* Stage everything of `p` in the run's transaction. */
static int extract_pkg(struct run *r, struct pkg *p, struct unpkg_err *err)
{
	struct take_ctx tc = { .r = r, .p = p };
	struct unpkg_extract_opts xo = {
		.root = r->root,
		.commit = r->commit,
		.db = r->db,
		.pkgkey = p->key,
		.run_files = &r->run_files,
		.conffiles = &p->confmap,
		.stats = r->stats,
		.events = r->o->events,
		.take_over = take_over,
		.take_over_ctx = &tc,
		.statoverrides = &r->override_map,
	};
	double t = unpkg_now();
	size_t i;
	int ok;

	/* The files of the packages of the run already committed are in
	 * the database's lists, where a package that Replaces them (or that
	 * they replace) finds them: the run's own map only has to hold the
	 * staged ones. */
	for (i = 0; i < r->npkgs && r->pkgs[i].state != PKG_EXTRACTED; i++)
		;
	if (i == r->npkgs) {
		unpkg_strmap_destroy(&r->run_files);
		unpkg_strmap_init(&r->run_files);
	}
	if (p->old_version != NULL)
		unpkg_event_emit(r->o->events, UNPKG_EV_PROGRESS, p->key,
				 "Unpacking %s (%s) over (%s) ...", p->key,
				 p->version, p->old_version);
	else
		unpkg_event_emit(r->o->events, UNPKG_EV_PROGRESS, p->key,
				 "Unpacking %s (%s) ...", p->key, p->version);
	unpkg_relations_init(&tc.repl);
	unpkg_strmap_init(&tc.verdicts);
	ok = unpkg_extract(p->deb, &xo, &p->files, err);
	take_ctx_destroy(&tc);
	if (ok < 0 || find_obsolete(p, err) < 0 ||
	    stage_infodb(r, p, err) < 0 ||
	    (p->old_stanza != NULL && find_obsolete_info(r, p, err) < 0))
		return -1;
	unpkg_deb_free(p->deb);
	p->deb = NULL;
	for (i = 0; i < p->files.count; i++)
		if (p->files.files[i].type != UNPKG_ENTRY_DIR &&
		    unpkg_strmap_put(&r->run_files, p->files.files[i].path,
				     p->label, NULL, err) < 0)
			return -1;
	p->state = PKG_EXTRACTED;
	timed(r, UNPKG_PHASE_EXTRACT, t);
	return 0;
}

/* The new version's maintainer scripts, staged as info/KEY.NAME.dpkg-new,
 * take their names. */
static int stage_scripts(struct run *r, struct pkg *p, struct unpkg_err *err)
{
	static const char *const names[] = {
		"preinst", "postinst", "prerm", "postrm",
	};
	char tmp[NAME_MAX + 16], name[NAME_MAX + 1];
	struct stat st;
	size_t i;
	int dir, dfd;

	dir = unpkg_commit_dir(r->commit, r->admroot, "info", err);
	dfd = dir >= 0 ? unpkg_commit_dirfd(r->commit, dir, err) : -1;
	if (dfd < 0)
		return -1;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		unsigned int flags = UNPKG_STAGE_KEEP;

		if (!p->scripts[maint_index(names[i])].present)
			continue;
		snprintf(name, sizeof(name), "%s.%s", p->key, names[i]);
		snprintf(tmp, sizeof(tmp), "%s.dpkg-new", name);
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			flags |= UNPKG_STAGE_BACKUP;
		if (unpkg_commit_stage(r->commit, dir, tmp, name, -1, flags,
				       err) < 0)
			return -1;
	}
	return 0;
}

void inst_undo_files(struct run *r, struct pkg *p)
{
	unpkg_commit_undo(r->commit, &p->sp_from, &p->sp_to);
}

/* The old versions' leftovers go once the new files are in place, moved
 * aside until the record; the finish under way makes that durable first. */
static int remove_old(struct run *r, struct unpkg_err *err)
{
	size_t i, j;

	for (i = 0; i < r->npkgs; i++) {
		struct pkg *p = &r->pkgs[i];
		int ok;

		if (p->state != PKG_EXTRACTED)
			continue;
		ok = maint_postrm(r, p, err);
		if (ok < 0)
			return -1;
		if (ok == 0)
			continue;	/* unwound and failed */
		if (stage_scripts(r, p, err) < 0 || stage_taken(r, p, err) < 0 ||
		    (p->old_stanza != NULL &&
		     (remove_obsolete(r, p, err) < 0 ||
		      remove_obsolete_info(r, p, err) < 0)))
			return -1;
		for (j = 0; j < p->nremovals; j++)
			if (p->removals[j].marked &&
			    inst_remove_one(r, p, &p->removals[j], err) < 0)
				return -1;
	}
	return 0;
}

/* The new state is durable: the backups can go.  A failure to remove one
 * leaves debris, not damage. */
static void release(struct run *r)
{
	struct unpkg_err warn;

	unpkg_err_init(&warn);
	if (unpkg_commit_release(r->commit, &warn) < 0)
		unpkg_event_emit(r->o->events, UNPKG_EV_WARNING, NULL, "%s",
				 warn.msg);
}

/* 1 if `word` is one of the blank-separated words of `list`. */
static int word_in(const char *list, const char *word)
{
	size_t l = strlen(word);
	const char *s = list;

	while ((s = strstr(s, word)) != NULL) {
		if ((s == list || s[-1] == ' ') && (s[l] == '\0' || s[l] == ' '))
			return 1;
		s += l;
	}
	return 0;
}

/* Add `key` to the packages whose triggers `p` awaits. */
static int add_awaited(struct pkg *p, const char *key, struct unpkg_err *err)
{
	char *list;

	if (p->awaited != NULL && word_in(p->awaited, key))
		return 0;
	if (asprintf(&list, "%s%s%s", p->awaited != NULL ? p->awaited : "",
		     p->awaited != NULL ? " " : "", key) < 0)
		return unpkg_err_nomem(err);
	free(p->awaited);
	p->awaited = list;
	return 0;
}


struct activation {
	struct run *r;
	struct pkg *p;		/* the package that activates */
	int noawait;		/* the activation does not await */
};

/* Trigger `trigger` of package `key` is activated by c->p, as dpkg
 * records it: pending for `key` if it is configured (prepended to its
 * Triggers-Pending, state triggers-pending), awaited by c->p unless
 * either side said noawait. */
static int activate(void *ctx, const char *trigger, const char *key,
		    int noawait, struct unpkg_err *err)
{
	struct activation *c = ctx;
	const struct unpkg_db_pkg *ip = inst_find_key(c->r, key);
	const char *want, *flag, *status, *pending;
	struct unpkg_para para;
	char value[64], *list = NULL, *text = NULL, *name = NULL;
	int ret = -1;

	if (ip == NULL || unpkg_db_pkg_status(ip, &want, &flag, &status) < 0 ||
	    (strcmp(status, "installed") != 0 &&
	     strcmp(status, "triggers-awaited") != 0 &&
	     strcmp(status, "triggers-pending") != 0))
		return 0;	/* not configured: not interested yet */
	c->r->stats->triggers_activated = 1;
	if (!noawait && !c->noawait && strcmp(key, c->p->key) != 0 &&
	    add_awaited(c->p, key, err) < 0)
		return -1;
	pending = unpkg_para_get(&ip->para, "Triggers-Pending");
	if (pending != NULL && word_in(pending, trigger))
		return 0;
	unpkg_para_init(&para);
	snprintf(value, sizeof(value), "%s %s triggers-pending", want, flag);
	if (unpkg_para_copy(&para, &ip->para, err) < 0 ||
	    (name = strdup(ip->name)) == NULL ||
	    asprintf(&list, "%s%s%s", trigger, pending != NULL ? " " : "",
		     pending != NULL ? pending : "") < 0 ||
	    unpkg_para_set(&para, "Status", value, err) < 0 ||
	    unpkg_para_set(&para, "Triggers-Pending", list, err) < 0 ||
	    (text = unpkg_para_format(&para)) == NULL) {
		if (err->code == UNPKG_ERR_NONE)
			unpkg_err_nomem(err);
		goto out;
	}
	ret = unpkg_db_put(c->r->db, name, ip->arch[0] != '\0' ? ip->arch
							       : NULL,
			   text, err);
	c->r->candidates_valid = 0;
	c->r->db_dirty = 1;
out:
	free(name);
	free(list);
	free(text);
	unpkg_para_destroy(&para);
	return ret;
}

static int activate_declared(void *ctx, int act, const char *name,
			     int noawait, struct unpkg_err *err)
{
	struct activation *c = ctx;

	if (!act)
		return 0;
	c->noawait = noawait;
	return unpkg_triggers_interested(c->r->trig, name, activate, c, err);
}

/* What the packages of the group change for dpkg's triggers, as dpkg
 * records it when it unpacks: their interests (triggers/), and the
 * triggers their paths (new and removed) and their activate directives
 * activate (in the database, written with the record). */
static int record_triggers(struct run *r, struct unpkg_err *err)
{
	size_t i, j;

	for (i = 0; i < r->npkgs; i++) {
		struct pkg *p = &r->pkgs[i];
		const char *text = (const char *)p->triggers.data;
		struct activation c = { r, p, 0 };

		if (p->state != PKG_EXTRACTED)
			continue;
		if (unpkg_triggers_set_interests(r->trig, p->key, text,
						 p->triggers.size, err) < 0 ||
		    unpkg_triggers_parse(text, p->triggers.size,
					 activate_declared, &c, err) < 0)
			return -1;
		c.noawait = 0;
		for (j = 0; j < p->files.count; j++)
			if (unpkg_triggers_interested(r->trig,
						      p->files.files[j].path,
						      activate, &c, err) < 0)
				return -1;
		for (j = 0; j < p->nobsolete; j++)
			if (unpkg_triggers_interested(r->trig, p->obsolete[j],
						      activate, &c, err) < 0)
				return -1;
	}
	/* the database: synced even with --force-unsafe-io */
	return unpkg_triggers_write(r->trig, 0,
				    &r->stats->fsync, err);
}

/* After the rename pass of the extracted packages: the old versions'
 * leftovers, then the record of them all as unpacked, handed to the
 * commit so that the sync of the renames makes it durable too. */
static int record_unpacked(void *ctx, struct unpkg_err *err)
{
	struct run *r = ctx;
	size_t i;

	/* The rename pass put the new info/KEY.list files in place: the
	 * file lists the database caches are out of date. */
	unpkg_db_files_changed(r->db);
	if (remove_old(r, err) < 0 || record_triggers(r, err) < 0)
		return -1;
	for (i = 0; i < r->npkgs; i++) {
		struct pkg *p = &r->pkgs[i];

		if (p->state == PKG_EXTRACTED &&
		    inst_put_state(r, p, "ok", "unpacked", err) < 0)
			return -1;
	}
	return db_stage(r, err);
}

/* Commit every extracted package: one barrier, one rename pass, the old
 * versions' leftovers removed, and one sync making the renames and the
 * record of them all as unpacked durable; the record is put in place
 * after it.  Then the backups can go. */
static int commit_group(struct run *r, struct unpkg_err *err)
{
	const struct unpkg_commit_hooks hooks = {
		.renamed = record_unpacked,
		.ctx = r,
	};
	double t;
	size_t i;

	if (finish(r, &hooks, err) < 0)
		return -1;
	t = unpkg_now();
	if (db_publish(r, err) < 0)
		return -1;
	for (i = 0; i < r->npkgs; i++)
		if (r->pkgs[i].state == PKG_EXTRACTED)
			r->pkgs[i].state = PKG_UNPACKED;
	timed(r, UNPKG_PHASE_RECORD, t);
	/* a removal's postrm failed: unpacked, not configured (dpkg) */
	for (i = 0; i < r->npkgs; i++) {
		struct pkg *p = &r->pkgs[i];
		struct unpkg_err perr;

		if (p->state != PKG_UNPACKED || p->removal_failed == NULL)
			continue;
		unpkg_err_init(&perr);
		unpkg_err_set(&perr, UNPKG_ERR_SCRIPT, "%s", p->removal_failed);
		inst_fail_pkg(r, p, p->debpath, &perr);
	}
	release(r);
	for (i = 0; i < r->npkgs; i++)
		late_rmdirs(r, &r->pkgs[i]);
	return 0;
}
/* --- configure ------------------------------------------------------------ */

/* What becomes of a conffile at configuration, dpkg's rules.  `have`
 * is the hash of the file on disk (NULL: missing), `recorded` the one the
 * database holds for the installed version ("" for none, or a conffile
 * new to the package), `shipped` the new version's. */
enum conffile_action {
	CONF_INSTALL,		/* the package's version takes the name */
	CONF_DROP,		/* the local file stays as it is */
	CONF_KEEP_DIST,		/* local kept, package's as NAME.dpkg-dist */
	CONF_NEW_OLD,		/* package's installed, local as NAME.dpkg-old */
	CONF_MISSING,		/* removed by the administrator: stays gone */
	CONF_ASK,		/* both changed: the administrator decides
				 * (CONF_NEW_OLD or CONF_KEEP_DIST) */
};

static enum conffile_action conffile_action(const char *have,
					    const char *recorded,
					    const char *shipped,
					    unsigned int force)
{
	int known = recorded[0] != '\0' && strcmp(recorded, "newconffile") != 0;

	if (have == NULL)
		return known && !(force & UNPKG_FORCE_CONFMISS) ? CONF_MISSING
								 : CONF_INSTALL;
	if (strcmp(have, shipped) == 0 || !known || strcmp(have, recorded) == 0)
		return known || strcmp(have, shipped) == 0 ? CONF_INSTALL
							    : CONF_KEEP_DIST;
	if (strcmp(recorded, shipped) == 0)
		return CONF_DROP;	/* the distributor changed nothing */
	if ((force & UNPKG_FORCE_CONFNEW) && !(force & UNPKG_FORCE_CONFOLD))
		return CONF_NEW_OLD;
	if (!(force & (UNPKG_FORCE_CONFOLD | UNPKG_FORCE_CONFDEF)))
		return CONF_ASK;
	return CONF_KEEP_DIST;
}

/* Rename each conffile NAME.dpkg-new into place, or keep the local file,
 * as conffile_action() says; what is not installed goes aside with the
 * transaction.  A file both the administrator and the package changed
 * is asked about through o->conffile_ask (without it, and in the CLI
 * without a terminal, the local file is kept, dpkg's default answer).
 * 1: done; 0: the answer failed the package (`err` says why); -1: an
 * error of the system. */
static int stage_conffiles(struct run *r, struct pkg *p, struct unpkg_err *err)
{
	int refused = 0;
	size_t i;

	for (i = 0; i < p->nconffiles; i++) {
		const char *name = p->conffiles[i].path;
		const char *path = name + 1;
		const char *slash = strrchr(path, '/');
		const char *base = slash != NULL ? slash + 1 : path;
		char *parent = strndup(path, slash != NULL ? (size_t)(slash - path) : 0);
		uintptr_t idx = (uintptr_t)unpkg_strmap_get(&p->files.index,
							    name);
		const char *shipped = idx != 0 ? p->files.files[idx - 1].md5 : "";
		char *tmp = NULL, *dist = NULL, *old = NULL;
		char have[33], recorded[33];
		enum conffile_action action;
		struct stat st;
		int dir, dfd, exists, ret = -1;

		if (parent == NULL)
			return unpkg_err_nomem(err);
		if (idx == 0) {
			/* listed but not shipped: dpkg records it as
			 * newconffile and installs nothing */
			free(parent);
			continue;
		}
		dir = unpkg_commit_dir(r->commit, r->root, parent, err);
		if (dir < 0)
			goto next;
		dfd = unpkg_commit_dirfd(r->commit, dir, err);
		if (dfd < 0)
			goto next;
		if (asprintf(&tmp, "%s.dpkg-new", base) < 0 ||
		    asprintf(&dist, "%s.dpkg-dist", base) < 0 ||
		    asprintf(&old, "%s.dpkg-old", base) < 0) {
			unpkg_err_nomem(err);
			goto next;
		}
		exists = fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0;
		if (!exists && errno != ENOENT) {
			unpkg_err_sys(err, "cannot stat %s", name);
			goto next;
		}
		if (exists && file_md5(dfd, base, have, err) < 0)
			goto next;
		recorded_hash(p, name, recorded);
		action = conffile_action(exists ? have : NULL, recorded,
					 shipped, r->o->force);
		if (action == CONF_ASK) {
			int yes = 0;

			if (r->o->conffile_ask != NULL &&
			    (yes = r->o->conffile_ask(r->o->conffile_ask_ctx,
						      p->key, name, err)) < 0) {
				refused = 1;	/* the package fails */
				ret = 0;
				goto next;
			}
			action = yes ? CONF_NEW_OLD : CONF_KEEP_DIST;
		}
		switch (action) {
		case CONF_INSTALL:
			if (!exists && (r->o->force & UNPKG_FORCE_CONFMISS) &&
			    recorded[0] != '\0')
				unpkg_event_emit(r->o->events, UNPKG_EV_NOTICE,
						 p->key, "Configuration file "
						 "'%s', does not exist on "
						 "system.\nInstalling new "
						 "config file as you "
						 "requested.", name);
			ret = unpkg_commit_stage(r->commit, dir, tmp, base, -1,
						 UNPKG_STAGE_KEEP |
						 (exists ? UNPKG_STAGE_BACKUP
							 : 0), err);
			break;
		case CONF_MISSING:
		case CONF_DROP:
			ret = unpkg_commit_remove(r->commit, dir, tmp, 0, err);
			break;
		case CONF_ASK:	/* answered above */
			break;
		case CONF_NEW_OLD:
			unpkg_event_emit(r->o->events, UNPKG_EV_NOTICE, p->key,
					 "Installing new version of config "
					 "file %s ...", name);
			unpkg_event_conffile(r->o->events, p->key, name,
					     "install");
			if ((unlinkat(dfd, old, 0) < 0 && errno != ENOENT) ||
			    linkat(dfd, base, dfd, old, 0) < 0) {
				unpkg_err_sys(err, "cannot keep %s as %s.dpkg-old",
					      name, name);
				break;
			}
			ret = unpkg_commit_stage(r->commit, dir, tmp, base, -1,
						 UNPKG_STAGE_KEEP |
						 UNPKG_STAGE_BACKUP, err);
			break;
		case CONF_KEEP_DIST:
			unpkg_event_emit(r->o->events, UNPKG_EV_NOTICE, p->key,
					 "Configuration file '%s' was modified "
					 "and is kept; the package's version "
					 "is installed as '%s.dpkg-dist'", name,
					 name);
			unpkg_event_conffile(r->o->events, p->key, name,
					     "keep");
			ret = unpkg_commit_stage(r->commit, dir, tmp, dist, -1,
						 UNPKG_STAGE_KEEP |
						 (fstatat(dfd, dist, &st,
							  AT_SYMLINK_NOFOLLOW) == 0
							  ? UNPKG_STAGE_BACKUP
							  : 0),
						 err);
			break;
		}
next:
		free(parent);
		free(tmp);
		free(dist);
		free(old);
		if (ret < 0)
			return -1;
		if (refused)
			return 0;
	}
	return 1;
}

/* "Setting up": the postinst of `p` if it has one (the state
 * half-configured is durable), then installed, in memory. */
static int configure_one(struct run *r, struct pkg *p, struct unpkg_err *err)
{
	int ok = 1;

	unpkg_event_processing(r->o->events, "configure", p->key, p->arch,
			       p->version, p->version);
	unpkg_event_emit(r->o->events, UNPKG_EV_PROGRESS, p->key,
			 "Setting up %s (%s) ...", p->key, p->version);
	if (p->scripts[maint_index("postinst")].present)
		ok = maint_postinst(r, p, err);
	if (ok <= 0)
		return ok;
	p->state = PKG_INSTALLED;
	return inst_put_state(r, p, "ok", "installed", err);
}

/* Run configure_one() for the packages ready for it, those whose
 * dependencies are configured first (a package whose Depends are met
 * only by packages of the run that are not configured yet waits), then
 * the rest in the order given. */
static int configure_in_order(struct run *r, struct unpkg_err *err)
{
	int pass, progress;
	size_t i;

	for (pass = 0; pass < 2; pass++) {
		do {
			progress = 0;
			for (i = 0; i < r->npkgs; i++) {
				struct pkg *p = &r->pkgs[i];
				char why[4096] = "";
				int ok = 1;

				if (p->state != PKG_CONFIGURING)
					continue;
				if (pass == 0)
					ok = check_relations(r, p, "Depends",
							     "depends on", 0,
							     why, sizeof(why),
							     err);
				if (ok < 0)
					return -1;
				if (ok == 0)
					continue;
				if (configure_one(r, p, err) < 0)
					return -1;
				progress = 1;
			}
		} while (progress && pass == 0);
	}
	return 0;
}

/* After the conffiles' renames, when no postinst is to run: configure,
 * and hand the record to the commit. */
static int configure_unscripted(void *ctx, struct unpkg_err *err)
{
	struct run *r = ctx;

	return configure_in_order(r, err) < 0 ? -1 : db_stage(r, err);
}

static int configure_pkgs(struct run *r, struct unpkg_err *err)
{
	double t = unpkg_now();
	size_t i;
	int any = 0, scripts = 0;

	for (i = 0; i < r->npkgs; i++) {
		struct pkg *p = &r->pkgs[i];
		struct unpkg_err perr;
		char why[4096] = "";
		int ok;

		if (p->state != PKG_UNPACKED)
			continue;
		unpkg_err_init(&perr);
		ok = check_relations(r, p, "Depends", "depends on", 1, why,
				     sizeof(why), &perr);
		if (ok == 0 && (r->o->force & UNPKG_FORCE_DEPENDS)) {
			unpkg_event_emit(r->o->events, UNPKG_EV_WARNING, p->key,
					 "%s: dependency problems, but "
					 "configuring anyway as you requested:%s",
					 p->key, why);
			ok = 1;
		}
		if (ok == 0)
			unpkg_err_set(&perr, UNPKG_ERR_DEPENDS,
				      "dependency problems prevent "
				      "configuration of %s:%s\n"
				      "dependency problems - leaving "
				      "unconfigured", p->key, why);
		/* A failure to stage is the system's, not the package's:
		 * it ends the configure phase.  An answer that fails the
		 * package leaves it unpacked, its conffiles waiting as
		 * NAME.dpkg-new, as dpkg does. */
		if (ok > 0) {
			struct unpkg_commit_savepoint sp;

			unpkg_commit_savepoint(r->commit, &sp);
			ok = stage_conffiles(r, p, &perr);
			if (ok < 0) {
				*err = perr;
				goto fail;
			}
			if (ok == 0) {
				unpkg_commit_rollback(r->commit, &sp);
				p->state = PKG_FAILED;
			}
		}
		if (ok <= 0) {
			unpkg_event_emit(r->o->events, UNPKG_EV_ERROR, p->key,
					 "%s", perr.msg);
			r->failed++;
			continue;
		}
		p->state = PKG_CONFIGURING;
		any = 1;
	}
	if (!any)
		goto done;
	for (i = 0; i < r->npkgs; i++)
		if (r->pkgs[i].state == PKG_CONFIGURING &&
		    r->pkgs[i].scripts[maint_index("postinst")].present)
			scripts = 1;
	if (!scripts) {
		/* Nothing runs between the conffiles' renames and the
		 * record: one sync makes both durable. */
		const struct unpkg_commit_hooks hooks = {
			.renamed = configure_unscripted,
			.ctx = r,
		};

		if (finish(r, &hooks, err) < 0 || db_publish(r, err) < 0)
			goto fail;
		release(r);
		goto done;
	}
	if (finish(r, NULL, err) < 0)
		goto fail;
	/* The postinsts see their packages half-configured, conffiles in
	 * place. */
	for (i = 0; i < r->npkgs; i++) {
		struct pkg *p = &r->pkgs[i];

		if (p->state == PKG_CONFIGURING &&
		    p->scripts[maint_index("postinst")].present &&
		    inst_put_state(r, p, "ok", "half-configured", err) < 0)
			goto fail;
	}
	if (inst_write_db(r, err) < 0)
		goto fail;
	/* From here on the conffiles stay: a script may have used them. */
	if (configure_in_order(r, err) < 0 || inst_write_db(r, err) < 0) {
		if (scripts) {
			release(r);
			return -1;
		}
		goto fail;
	}
	release(r);
done:
	timed(r, UNPKG_PHASE_CONFIGURE, t);
	return 0;
fail:
	/* Back to unpacked, conffiles waiting as NAME.dpkg-new: the caller
	 * writes the database once more, without retrying a failed sync. */
	unpkg_commit_abort(r->commit);
	for (i = 0; i < r->npkgs; i++) {
		struct pkg *p = &r->pkgs[i];
		struct unpkg_err ignored;

		if (p->state != PKG_CONFIGURING && p->state != PKG_INSTALLED)
			continue;
		unpkg_err_init(&ignored);
		p->state = PKG_UNPACKED;
		if (inst_put_state(r, p, "ok", "unpacked", &ignored) < 0)
			inst_restore_pkg(r, p);
		r->db_dirty = 1;
	}
	return -1;
}

/* --- the run ----------------------------------------------------------------*/

/* Mark the opened packages half-installed, durably, before any script or
 * file of theirs runs or appears (a new directory appears at once).  The
 * strategy makes the new status durable, as it would the packages' data:
 * one syncfs covers it and a new info/format together. */
static int mark_all(struct run *r, struct unpkg_err *err)
{
	const struct unpkg_commit_hooks hooks = {
		.synced = db_publish_hook,
		.ctx = r,
	};
	double t = unpkg_now();
	size_t i;
	int any = 0;

	for (i = 0; i < r->npkgs; i++) {
		struct pkg *p = &r->pkgs[i];

		if (p->state != PKG_OPENED)
			continue;
		unpkg_event_processing(r->o->events,
				       p->upgrade ? "upgrade" : "install",
				       p->key, p->arch, p->old_version,
				       p->version);
		if (inst_put_state(r, p, "reinstreq", "half-installed", err) < 0)
			return -1;
		p->state = PKG_MARKED;
		any = 1;
	}
	if (any && (db_stage(r, err) < 0 || finish(r, &hooks, err) < 0))
		return -1;
	timed(r, UNPKG_PHASE_MARK, t);
	return 0;
}

/* Restore and fail the marked packages from index `from` on. */
static void give_up(struct run *r, size_t from)
{
	struct unpkg_err err;
	size_t i;

	unpkg_err_init(&err);
	unpkg_err_set(&err, UNPKG_ERR_SYNC, "not processed: an earlier sync "
		      "failed");
	for (i = from; i < r->npkgs; i++) {
		struct pkg *p = &r->pkgs[i];

		if (p->state != PKG_MARKED && p->state != PKG_EXTRACTED)
			continue;
		inst_restore_pkg(r, p);
		inst_fail_pkg(r, p, p->debpath, &err);
	}
}

/* Put back the entries of the packages `p` made disappear. */
static void restore_gone(struct run *r, struct pkg *p)
{
	size_t i;

	for (i = 0; i < p->ngone; i += 2) {
		struct unpkg_err err;

		unpkg_err_init(&err);
		r->candidates_valid = 0;
		r->db_dirty = 1;
		if (unpkg_db_put(r->db, p->gone[i], NULL, p->gone[i + 1],
				 &err) < 0)
			unpkg_event_emit(r->o->events, UNPKG_EV_WARNING,
					 p->gone[i], "cannot restore the "
					 "database entry of %s: %s",
					 p->gone[i], err.msg);
	}
}

/* The packages `p` removed whose removal is undone with its files: their
 * postrm ran, they stay half-installed. */
static void restore_removed(struct run *r, struct pkg *p)
{
	size_t i;

	for (i = 0; i < p->nremovals; i++) {
		struct deconf *d = &p->removals[i];
		struct unpkg_err err;

		if (!d->removed)
			continue;
		unpkg_err_init(&err);
		if (maint_other_state(r, d, "half-installed", &err) < 0)
			unpkg_event_emit(r->o->events, UNPKG_EV_WARNING,
					 d->key, "cannot restore the "
					 "database entry of %s: %s",
					 d->key, err.msg);
	}
}

/* The commit of the extracted packages failed: undo it and fail them
 * all; after a failed sync, give up the rest of the run too. */
static void group_failed(struct run *r, const struct unpkg_err *cause)
{
	size_t i;

	unpkg_commit_abort(r->commit);
	for (i = 0; i < r->npkgs; i++) {
		struct pkg *p = &r->pkgs[i];

		if (p->state != PKG_EXTRACTED)
			continue;
		inst_restore_pkg(r, p);
		restore_gone(r, p);
		restore_removed(r, p);
		inst_fail_pkg(r, p, p->debpath, cause);
	}
	if (cause->code == UNPKG_ERR_SYNC) {
		r->sync_failed = 1;
		give_up(r, 0);
	}
}

static void run_destroy(struct run *r)
{
	size_t i;

	for (i = 0; i < r->npkgs; i++)
		pkg_destroy(&r->pkgs[i]);
	free(r->pkgs);
	unpkg_strmap_destroy(&r->run_files);
	candidates_destroy(r);
	unpkg_commit_free(r->commit);
	unpkg_triggers_free(r->trig);
	unpkg_strmap_destroy(&r->override_map);
	unpkg_db_statoverrides_free(r->overrides, r->noverrides);
	unpkg_root_free(r->admroot);
	unpkg_root_free(r->root);
	unpkg_db_free(r->db);
}

/* dpkg-statoverride's entries, by path. */
static int load_overrides(struct run *r, struct unpkg_err *err)
{
	size_t i;

	if (unpkg_db_read_statoverrides(r->db, &r->overrides, &r->noverrides,
					err) < 0)
		return -1;
	for (i = 0; i < r->noverrides; i++)
		if (unpkg_strmap_put(&r->override_map, r->overrides[i].path,
				     &r->overrides[i], NULL, err) < 0)
			return -1;
	return 0;
}

/* dpkg's --abort-after: once that many packages failed, the rest of the
 * run is not processed (those marked are put back).  1 when it stops. */
static int too_many_errors(struct run *r, size_t from)
{
	unsigned int limit = r->o->abort_after != 0 ? r->o->abort_after : 50;
	size_t i;

	if ((unsigned int)r->failed < limit)
		return 0;
	for (i = from; i < r->npkgs; i++) {
		struct pkg *p = &r->pkgs[i];

		if (p->state == PKG_MARKED)
			inst_restore_pkg(r, p);
		if (p->state == PKG_OPENED || p->state == PKG_MARKED) {
			unpkg_deb_free(p->deb);
			p->deb = NULL;
			p->state = PKG_FAILED;
		}
	}
	unpkg_event_emit(r->o->events, UNPKG_EV_NOTICE, NULL,
			 "too many errors, stopping");
	return 1;
}

/* --sync=auto: the strategy for the file systems of the root and of the
 * admin directory (fsclass.h, doc/benchmarks.md).  File systems mounted
 * below the root are the commit object's (UNPKG_COMMIT_PER_FS). */
static int choose_auto(struct run *r, enum unpkg_sync_mode *mode,
		       struct unpkg_err *err)
{
	enum unpkg_fsclass cls[2];

	if (unpkg_fsclass_detect(unpkg_root_fd(r->root), &cls[0], err) < 0 ||
	    unpkg_fsclass_detect(unpkg_db_dirfd(r->db), &cls[1], err) < 0)
		return -1;
	*mode = unpkg_sync_auto_set(cls, 2);
	if (cls[0] == cls[1])
		snprintf(r->stats->fsclass, sizeof(r->stats->fsclass), "%s",
			 unpkg_fsclass_name(cls[0]));
	else
		snprintf(r->stats->fsclass, sizeof(r->stats->fsclass), "%s+%s",
			 unpkg_fsclass_name(cls[0]),
			 unpkg_fsclass_name(cls[1]));
	return 0;
}

/* What the packages waiting after the one being extracted may have
 * decoded ahead of their turn, in all (their decoders' windows hold about
 * as much again), and how many of them may (a thread and a descriptor
 * each).  (Defined at build time to measure other values.) */
#ifndef PREFETCH_BUDGET
#define PREFETCH_BUDGET (4u << 20)
#endif
#define PREFETCH_MAX 4

/* About the size of package p's data.tar: its Installed-Size, with room
 * for the tar headers; the whole budget if it does not say. */
static size_t data_estimate(const struct pkg *p)
{
	const char *v = unpkg_para_get(&p->control, "Installed-Size");
	unsigned long long kib;
	char *end;

	if (v == NULL || *v < '0' || *v > '9')
		return PREFETCH_BUDGET;
	errno = 0;
	kib = strtoull(v, &end, 10);
	if (errno != 0 || *end != '\0' || kib > PREFETCH_BUDGET / 1024)
		return PREFETCH_BUDGET;
	return (size_t)(kib + kib / 8 + 64) * 1024;
}

/* The packages to be extracted after package i start decompressing now,
 * on the second CPU, while package i is extracted (deb.h): as many as the
 * budget covers, the last one perhaps only in part.  Those started for an
 * earlier package are counted again, so the budget bounds them all. */
static void prefetch_after(struct run *r, size_t i)
{
	size_t left = PREFETCH_BUDGET, want, j;
	unsigned started = 0;

	for (j = i + 1; j < r->npkgs && left > 0 && started < PREFETCH_MAX;
	     j++) {
		struct pkg *q = &r->pkgs[j];

		if (q->state != PKG_MARKED)
			continue;
		want = data_estimate(q);
		if (want > left)
			want = left;
		unpkg_deb_prefetch(q->deb, want);
		left -= want;
		started++;
	}
}

int unpkg_install(const struct unpkg_install_opts *o, const char *const *debs,
		  size_t n, struct unpkg_err *err)
{
	struct unpkg_stats own = { 0 };
	struct run r = {
		.o = o,
		.stats = o->stats != NULL ? o->stats : &own,
	};
	unsigned int dbflags = UNPKG_DB_CREATE;
	int stopped = 0;
	enum unpkg_sync_mode mode = o->sync;
	double t = unpkg_now();
	size_t i;
	int ret = -1;

	unpkg_strmap_init(&r.run_files);
	unpkg_strmap_init(&r.candidates);
	unpkg_strmap_init(&r.override_map);
	if (o->frontend_lock)
		dbflags |= UNPKG_DB_LOCK_FRONTEND;
	if (unpkg_root_open(o->instdir, o->root_flags, &r.root, err) < 0 ||
	    unpkg_db_open(o->admindir, dbflags, &r.db, err) < 0 ||
	    unpkg_root_open(o->admindir, o->root_flags, &r.admroot, err) < 0 ||
	    unpkg_triggers_open(unpkg_db_dirfd(r.db), o->admindir, &r.trig,
				err) < 0 ||
	    load_overrides(&r, err) < 0 ||
	    (o->sync_auto && choose_auto(&r, &mode, err) < 0) ||
	    unpkg_commit_new_flags(mode, o->sync_auto ? UNPKG_COMMIT_PER_FS
						      : 0, r.stats, o->events,
				   0, &r.commit, err) < 0 ||
	    unpkg_commit_name_root(r.commit, r.admroot, o->admindir, err) < 0)
		goto out;
	/* --force-unsafe-io may lose the packages' files, never the
	 * database: its writes are synced in every mode, as dpkg's are. */
	unpkg_commit_database_root(r.commit, r.admroot);
	timed(&r, UNPKG_PHASE_PLAN, t);
	t = unpkg_now();
	r.pkgs = calloc(n != 0 ? n : 1, sizeof(*r.pkgs));
	if (r.pkgs == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	r.npkgs = n;
	for (i = 0; i < n; i++) {
		struct pkg *p = &r.pkgs[i];
		struct unpkg_err perr;

		p->debpath = debs[i];
		unpkg_para_init(&p->control);
		unpkg_strmap_init(&p->confmap);
		unpkg_filelist_init(&p->files);
		unpkg_err_init(&perr);
		if (stopped)
			continue;	/* not processed: stays PKG_FAILED */
		if (open_pkg(&r, p, &perr) < 0)
			inst_fail_pkg(&r, p, p->debpath, &perr);
		stopped = too_many_errors(&r, i + 1);
	}
	timed(&r, UNPKG_PHASE_OPEN, t);
	inst_sweep_removed(&r);

	unpkg_force_names(o->force, r.force_list, sizeof(r.force_list));
	if (maint_prerm(&r, err) < 0)
		goto out;
	if (mark_all(&r, err) < 0) {
		/* Nothing was touched: the database goes back too. */
		for (i = 0; i < n; i++)
			if (r.pkgs[i].state == PKG_MARKED)
				inst_restore_pkg(&r, &r.pkgs[i]);
		if (r.db_dirty)
			inst_write_db(&r, err);
		goto out;
	}

	for (i = 0; i < n; i++) {
		struct pkg *p = &r.pkgs[i];
		struct unpkg_err perr;
		int ok;

		if (p->state != PKG_MARKED)
			continue;
		if (too_many_errors(&r, i))
			break;
		unpkg_err_init(&perr);
		/* files passing between packages of the run (Replaces) */
		if (inst_replaces_staged(&r, p) && commit_group(&r, &perr) < 0) {
			group_failed(&r, &perr);
			unpkg_err_init(&perr);
			if (p->state != PKG_MARKED)
				continue;
		}
		prefetch_after(&r, i);
		ok = maint_preinst(&r, p, err);
		if (ok < 0)
			goto out;
		if (ok == 0)
			continue;
		unpkg_commit_savepoint(r.commit, &p->sp_from);
		ok = extract_pkg(&r, p, &perr);
		unpkg_commit_savepoint(r.commit, &p->sp_to);
		if (ok < 0) {
			unpkg_commit_rollback(r.commit, &p->sp_from);
			inst_restore_pkg(&r, p);
			inst_fail_pkg(&r, p, p->debpath, &perr);
			/* After a failed sync (an early barrier) nothing
			 * written since the last good one can be trusted. */
			if (perr.code == UNPKG_ERR_SYNC)
				group_failed(&r, &perr);
			continue;
		}
		if (!unpkg_commit_per_run(r.commit) &&
		    commit_group(&r, &perr) < 0)
			group_failed(&r, &perr);
	}
	for (i = 0; i < n; i++) {
		struct unpkg_err perr;

		if (r.pkgs[i].state != PKG_EXTRACTED)
			continue;
		unpkg_err_init(&perr);
		if (commit_group(&r, &perr) < 0)
			group_failed(&r, &perr);
		break;
	}
	if (maint_deconfigure_unwind(&r, err) < 0)
		goto out;
	/* Stanzas of failed packages put back since the last write. */
	if (r.db_dirty && inst_write_db(&r, err) < 0)
		goto out;
	/* After a failed sync nothing more is committed in this run. */
	if (o->configure && !r.sync_failed && configure_pkgs(&r, err) < 0) {
		if (r.db_dirty)
			inst_write_db(&r, err);	/* the first error wins */
		goto out;
	}
	if (o->configure && maint_deconfigured_report(&r, err) < 0)
		goto out;
	ret = r.failed;
out:
	maint_tmp_clean(&r);
	if (r.db != NULL && !unpkg_db_durable(r.db))
		unpkg_event_emit(o->events, UNPKG_EV_WARNING, NULL,
				 "a sync of the database failed: what was "
				 "written after it is not durable; check the "
				 "disk, then run unpkg again");
	if (r.commit != NULL)
		snprintf(r.stats->strategy, sizeof(r.stats->strategy), "%s",
			 unpkg_commit_strategy(r.commit));
	run_destroy(&r);
	return ret;
}
