/* configure-run.c - the driver of --configure (see configure-run.h): the
 * run opened, the packages loaded from the database, the configure
 * phase of configure.c. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "configure-run.h"
#include "configure.h"
#include "install-impl.h"
#include "stanza.h"
#include "trigproc.h"

/* The Conffiles value of the database, " PATH HASH [FLAG...]" lines:
 * the conffiles of `p` (path, flags after the hash), and those marked
 * obsolete (path, hash), as open.c keeps them for an unpack.  A path may
 * hold spaces: the words are read from the end. */
static int load_conffiles(struct pkg *p, struct unpkg_err *err)
{
	const char *s = p->old_conffiles;

	while (s != NULL && *s != '\0') {
		const char *line = s, *eol = strchr(s, '\n');
		const char *end = eol != NULL ? eol : s + strlen(s);
		const char *path, *hash, *hend, *flags;
		struct conffile cf = { NULL, NULL }, **v, *grown;
		size_t *n;
		int obsolete = 0;

		s = eol != NULL ? eol + 1 : end;
		if (unpkg_conffile_split(line, end, &path, &hash, &hend) < 0)
			continue;	/* no path and hash */
		/* the flags after the hash */
		flags = hend;
		while (flags < end && *flags == ' ')
			flags++;
		while (end > flags && end[-1] == ' ')
			end--;
		for (const char *w = flags; w < end; w += strspn(w, " ")) {
			size_t len = strcspn(w, " \n");

			if (len == 8 && memcmp(w, "obsolete", 8) == 0)
				obsolete = 1;
			w += len;
		}
		cf.path = strndup(path, (size_t)(hash - 1 - path));
		if (obsolete)
			cf.flags = strndup(hash, (size_t)(hend - hash));
		else if (flags < end)
			cf.flags = strndup(flags, (size_t)(end - flags));
		if (cf.path == NULL ||
		    ((obsolete || flags < end) && cf.flags == NULL))
			goto nomem;
		v = obsolete ? &p->obsolete_conf : &p->conffiles;
		n = obsolete ? &p->nobsolete_conf : &p->nconffiles;
		grown = realloc(*v, (*n + 1) * sizeof(*grown));
		if (grown == NULL)
			goto nomem;
		*v = grown;
		grown[(*n)++] = cf;
		if (!obsolete &&
		    unpkg_strmap_put(&p->confmap, grown[*n - 1].path,
				     &grown[*n - 1], NULL, err) < 0)
			return -1;
		continue;
nomem:
		free(cf.path);
		free(cf.flags);
		return unpkg_err_nomem(err);
	}
	return 0;
}

/* Has installed package `key` a postinst in info/? */
static int has_postinst(struct run *r, const char *key, int *yes,
			struct unpkg_err *err)
{
	struct unpkg_err probe;
	char *path;
	int fd;

	if (asprintf(&path, "info/%s.postinst", key) < 0)
		return unpkg_err_nomem(err);
	unpkg_err_init(&probe);
	fd = unpkg_root_openat(r->admroot, path, O_PATH | O_NOFOLLOW, 0,
			       &probe);
	free(path);
	*yes = fd >= 0;
	if (fd >= 0)
		close(fd);
	else if (probe.errnum != ENOENT)
		return unpkg_err_set(err, probe.code, "%s", probe.msg);
	return 0;
}

/* Package `p` of the run from its database entry `dp`, unpacked or
 * half-configured: its control fields, its state and what configure
 * needs of it. */
static int load_pkg(struct run *r, struct pkg *p, const struct unpkg_db_pkg *dp,
		    struct unpkg_err *err)
{
	static const char *const db_fields[] = {
		"Status", "Config-Version", "Conffiles", "Triggers-Pending",
		"Triggers-Awaited",
	};
	const char *v;
	size_t i;
	int postinst;

	if (unpkg_para_copy(&p->control, &dp->para, err) < 0)
		return -1;
	for (i = 0; i < sizeof(db_fields) / sizeof(db_fields[0]); i++)
		unpkg_para_unset(&p->control, db_fields[i]);
	p->name = strdup(dp->name);
	p->key = strdup(dp->key);
	p->old_stanza = unpkg_para_format(&dp->para);
	if (p->name == NULL || p->key == NULL || p->old_stanza == NULL)
		return unpkg_err_nomem(err);
	p->version = unpkg_para_get(&p->control, "Version");
	p->arch = unpkg_para_get(&p->control, "Architecture");
	if (p->arch == NULL)
		p->arch = "";
	if (p->version == NULL)
		return unpkg_err_set(err, UNPKG_ERR_FORMAT, "package %s has "
				     "no version in the database", p->key);
	if (asprintf(&p->label, "%s %s", p->name, p->version) < 0) {
		p->label = NULL;
		return unpkg_err_nomem(err);
	}
	p->old_state = unpkg_db_pkg_state(dp);
	p->upgrade = 1;
	if ((v = unpkg_para_get(&dp->para, "Version")) != NULL &&
	    (p->old_version = strdup(v)) == NULL)
		return unpkg_err_nomem(err);
	if ((v = unpkg_para_get(&dp->para, "Conffiles")) != NULL &&
	    (p->old_conffiles = strdup(v)) == NULL)
		return unpkg_err_nomem(err);
	if ((v = unpkg_para_get(&dp->para, "Config-Version")) != NULL &&
	    (p->config_version = strdup(v)) == NULL)
		return unpkg_err_nomem(err);
	if ((v = unpkg_para_get(&dp->para, "Triggers-Awaited")) != NULL &&
	    (p->awaited = strdup(v)) == NULL)
		return unpkg_err_nomem(err);
	if (load_conffiles(p, err) < 0 ||
	    configure_shipped_hashes(r, p, err) < 0 ||
	    has_postinst(r, p->key, &postinst, err) < 0)
		return -1;
	p->scripts[maint_index("postinst")].present = postinst;
	p->state = PKG_UNPACKED;
	return 0;
}

/* The entry of `spec` ("name" or "name:arch") in the database, or NULL. */
static const struct unpkg_db_pkg *find_spec(const struct unpkg_db *db,
					    const char *spec)
{
	const struct unpkg_db_pkg *dp = unpkg_pkgindex_find_key(db, spec);
	const char *colon = strchr(spec, ':');
	char *name;

	if (dp != NULL || colon == NULL)
		return dp != NULL ? dp : unpkg_db_find(db, spec, NULL);
	name = strndup(spec, (size_t)(colon - spec));
	if (name == NULL)
		return NULL;
	dp = unpkg_db_find(db, name, colon + 1);
	free(name);
	return dp;
}

/* Why package `dp` asked for by name cannot be configured, in dpkg's
 * words (NULL: it can; *later: it is left to trigger processing). */
static const char *refusal(const struct unpkg_db_pkg *dp, int *later,
			   char *buf, size_t len)
{
	enum unpkg_status st = dp != NULL ? unpkg_db_pkg_state(dp)
					  : UNPKG_STATUS_NOT_INSTALLED;

	*later = 0;
	switch (st) {
	case UNPKG_STATUS_UNPACKED:
	case UNPKG_STATUS_HALF_CONFIGURED:
		return NULL;
	case UNPKG_STATUS_TRIGGERS_AWAITED:
	case UNPKG_STATUS_TRIGGERS_PENDING:
		*later = 1;
		return NULL;
	case UNPKG_STATUS_INSTALLED:
		snprintf(buf, len, "package %s is already installed and "
			 "configured", dp->key);
		return buf;
	case UNPKG_STATUS_INVALID:
	case UNPKG_STATUS_NOT_INSTALLED:
		return NULL;	/* below: it has no entry */
	default:
		snprintf(buf, len, "package %s is not ready for "
			 "configuration\n cannot configure (current status "
			 "'%s')", dp->key, unpkg_status_name(st));
		return buf;
	}
}

/* Add the database's package `dp` to the run (once). */
static int add_pkg(struct run *r, const struct unpkg_db_pkg *dp,
		   struct unpkg_err *err)
{
	struct pkg *p;
	size_t i;

	for (i = 0; i < r->npkgs; i++)
		if (strcmp(r->pkgs[i].key, dp->key) == 0)
			return 0;	/* named twice: configured once */
	p = &r->pkgs[r->npkgs++];
	unpkg_para_init(&p->control);
	unpkg_strmap_init(&p->confmap);
	unpkg_filelist_init(&p->files);
	return load_pkg(r, p, dp, err);
}

/* The packages the run queues whose triggers are pending as it starts
 * (dpkg processes their triggers even under --no-triggers). */
struct queued_triggers {
	char **keys;
	size_t n, cap;
};

/* Note `dp` (once) if its triggers are pending; with `pending`, only if
 * its selection is install or hold, as dpkg's --pending queues it. */
static int note_triggered(struct queued_triggers *qt,
			  const struct unpkg_db_pkg *dp, int pending,
			  struct unpkg_err *err)
{
	const char *want, *flag, *status;
	char **grown;
	size_t i;

	if (unpkg_para_get(&dp->para, "Triggers-Pending") == NULL ||
	    unpkg_db_pkg_status(dp, &want, &flag, &status) < 0 ||
	    (pending && strcmp(want, "install") != 0 &&
	     strcmp(want, "hold") != 0))
		return 0;
	for (i = 0; i < qt->n; i++)
		if (strcmp(qt->keys[i], dp->key) == 0)
			return 0;
	grown = unpkg_grow(qt->keys, &qt->cap, qt->n + 1, sizeof(*grown), 16);
	if (grown == NULL)
		return unpkg_err_nomem(err);
	qt->keys = grown;
	if ((qt->keys[qt->n] = strdup(dp->key)) == NULL)
		return unpkg_err_nomem(err);
	qt->n++;
	return 0;
}

/* Every package the database has unpacked or half-configured, in the
 * order dpkg's --pending takes them (and in `qt` those whose triggers
 * are pending). */
static int add_pending(struct run *r, struct queued_triggers *qt,
		       struct unpkg_err *err)
{
	size_t n = unpkg_db_count(r->db), i;
	size_t *order = unpkg_db_walk_order(r->db, err);
	int ret = -1;

	if (order == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		const struct unpkg_db_pkg *dp = unpkg_db_at(r->db, order[i]);
		enum unpkg_status st = unpkg_db_pkg_state(dp);

		if (note_triggered(qt, dp, 1, err) < 0)
			goto out;
		if (st != UNPKG_STATUS_UNPACKED &&
		    st != UNPKG_STATUS_HALF_CONFIGURED)
			continue;
		if (add_pkg(r, dp, err) < 0)
			goto out;
	}
	ret = 0;
out:
	free(order);
	return ret;
}

/* Are triggers waiting to be processed: a package awaiting or pending
 * them, or activations not yet incorporated (triggers/Unincorp)? */
static int triggers_waiting(const struct run *r)
{
	struct stat st;
	size_t i;

	for (i = 0; i < unpkg_db_count(r->db); i++) {
		enum unpkg_status s = unpkg_db_pkg_state(unpkg_db_at(r->db, i));

		if (s == UNPKG_STATUS_TRIGGERS_AWAITED ||
		    s == UNPKG_STATUS_TRIGGERS_PENDING)
			return 1;
	}
	return fstatat(unpkg_db_dirfd(r->db), "triggers/Unincorp", &st, 0) == 0 &&
	       st.st_size > 0;
}

/* A name the run cannot configure: in the queue with its error, which
 * the configure phase reports at its turn, as dpkg does. */
static int refuse(struct run *r, const char *what, const char *msg,
		  struct unpkg_err *err)
{
	struct pkg *p = &r->pkgs[r->npkgs++];

	unpkg_para_init(&p->control);
	unpkg_strmap_init(&p->confmap);
	unpkg_filelist_init(&p->files);
	p->key = strdup(what);
	p->refused = strdup(msg);
	if (p->key == NULL || p->refused == NULL)
		return unpkg_err_nomem(err);
	p->state = PKG_UNPACKED;
	return 0;
}

int unpkg_configure(const struct unpkg_install_opts *o,
		    const char *const *names, size_t n, int pending,
		    struct unpkg_err *err)
{
	struct unpkg_stats own = { 0 };
	struct queued_triggers qt = { NULL, 0, 0 };
	struct run r;
	double t = unpkg_now();
	size_t i, cap;
	int ret = -1, more;

	if (run_open(&r, o, &own, err) < 0)
		goto out;
	run_timed(&r, UNPKG_PHASE_PLAN, t);
	cap = pending ? unpkg_db_count(r.db) : n;
	r.pkgs = calloc(cap != 0 ? cap : 1, sizeof(*r.pkgs));
	if (r.pkgs == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	if (pending && add_pending(&r, &qt, err) < 0)
		goto out;
	for (i = 0; !pending && i < n; i++) {
		const struct unpkg_db_pkg *dp = find_spec(r.db, names[i]);
		char buf[512];
		const char *why;
		int later;

		if (dp != NULL &&
		    unpkg_db_pkg_state(dp) == UNPKG_STATUS_NOT_INSTALLED)
			dp = NULL;
		why = refusal(dp, &later, buf, sizeof(buf));
		if (dp == NULL) {
			snprintf(buf, sizeof(buf), "no package named '%s' is "
				 "installed, cannot configure", names[i]);
			why = buf;
		}
		if (why != NULL) {
			if (refuse(&r, dp != NULL ? dp->key : names[i], why,
				   err) < 0)
				goto out;
		} else if (later ? note_triggered(&qt, dp, 0, err) < 0
				 : add_pkg(&r, dp, err) < 0) {
			goto out;
		}
	}
	unpkg_force_names(o->force, r.force_list, sizeof(r.force_list));
	if (configure_pkgs(&r, err) < 0) {
		if (r.db_dirty)
			run_write_db(&r, err);	/* the first error wins */
		goto out;
	}
	for (i = 0; i < r.npkgs; i++)
		if (r.pkgs[i].state == PKG_INSTALLED &&
		    r.pkgs[i].awaited != NULL)
			r.stats->triggers_activated = 1;
	if (pending && triggers_waiting(&r))
		r.stats->triggers_activated = 1;
	ret = r.failed;
out:
	maint_tmp_clean(&r);
	run_close(&r);
	/* with --no-triggers, the triggers of the packages queued, once
	 * the configuring is over, as dpkg processes them */
	if (ret >= 0 && o->no_triggers && qt.n > 0) {
		more = unpkg_trigproc(o, (const char *const *)qt.keys, qt.n,
				      UNPKG_TRIGPROC_QUEUED, err);
		ret = more < 0 ? -1 : ret + more;
	}
	for (i = 0; i < qt.n; i++)
		free(qt.keys[i]);
	free(qt.keys);
	return ret;
}
