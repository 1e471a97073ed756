/* run.c - the state of one run and the only writer of a package's
 * database entry (see run.h). */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsclass.h"
#include "run.h"
#include "stanza.h"
#include "strategy.h"

static void conffiles_free(struct conffile *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].path);
		free(v[i].flags);
	}
	free(v);
}

void run_pkg_destroy(struct pkg *p)
{
	unpkg_deb_free(p->deb);
	free(p->debshown);
	unpkg_para_destroy(&p->control);
	free(p->name);
	free(p->key);
	free(p->label);
	free(p->old_stanza);
	free(p->old_version);
	free(p->config_version);
	free(p->old_conffiles);
	free(p->old_arch);
	free(p->awaited);
	free(p->refused);
	unpkg_buf_free(&p->old_interests);
	unpkg_db_list_free(p->taken, p->ntaken);
	unpkg_db_list_free(p->gone, p->ngone);
	run_free_scripts(p);
	unpkg_db_list_free(p->old_files, p->nold_files);
	unpkg_db_list_free(p->obsolete_info, p->nobsolete_info);
	free(p->obsolete);
	conffiles_free(p->obsolete_conf, p->nobsolete_conf);
	conffiles_free(p->conffiles, p->nconffiles);
	unpkg_strmap_destroy(&p->confmap);
	unpkg_filelist_destroy(&p->files);
}

void run_fail_pkg(struct run *r, struct pkg *p, const char *what,
		  const struct unpkg_err *err)
{
	unpkg_event_emit(r->o->events, UNPKG_EV_ERROR, what, "%s", err->msg);
	p->state = PKG_FAILED;
	unpkg_deb_free(p->deb);
	p->deb = NULL;
	r->failed++;
}

/* The hash the database recorded for conffile `path` before the run
 * (from the old Conffiles value " /path hash [flags]" lines), copied into
 * `hash`; "" if none. */
void run_recorded_hash(const struct pkg *p, const char *path,
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

/* Conffiles: field for `p`: until its conffiles are in place (configure
 * puts them there before the postinst runs, so from half-configured on,
 * as dpkg records them), the hash recorded for the old version
 * ("newconffile" for a conffile new to the package); then the hash of the
 * version the package ships, but for a conffile the package lists and
 * does not unpack (not shipped, or filtered out), which keeps the first.  The old conffiles the new version dropped
 * follow, marked obsolete. */
static int conffiles_value(const struct pkg *p, int configured,
			   struct unpkg_buf *v, struct unpkg_err *err)
{
	size_t i;

	for (i = 0; i < p->nconffiles; i++) {
		const struct conffile *cf = &p->conffiles[i];
		const struct unpkg_file *f = unpkg_filelist_get(&p->files,
								cf->path);
		int installed = f != NULL && !f->filtered && f->md5[0];
		const char *hash = "newconffile";
		char old[33];

		run_recorded_hash(p, cf->path, old);
		if (configured && installed)
			hash = f->md5;
		else if (old[0] != '\0')
			hash = old;
		if (unpkg_buf_printf(v, err, "\n %s %s%s%s", cf->path, hash,
				     cf->flags != NULL ? " " : "",
				     cf->flags != NULL ? cf->flags : "") < 0)
			return -1;
	}
	for (i = 0; i < p->nobsolete_conf; i++)
		if (unpkg_buf_printf(v, err, "\n %s %s obsolete",
				     p->obsolete_conf[i].path,
				     p->obsolete_conf[i].flags) < 0)
			return -1;
	return 0;
}

int run_put(struct run *r, const char *name, const char *arch,
	    const char *text, struct unpkg_err *err)
{
	unpkg_pkgindex_invalidate(&r->index);
	r->db_dirty = 1;
	return unpkg_db_put(r->db, name, arch, text, err);
}

int run_put_reported(struct run *r, const char *name, const char *arch,
		     const char *text, const char *key, const char *evarch,
		     const char *version, const char *status,
		     struct unpkg_err *err)
{
	if (run_put(r, name, arch, text, err) < 0)
		return -1;
	unpkg_event_pkg_status(r->o->events, key, evarch, version, status);
	return 0;
}

void run_status_event(struct run *r, struct pkg *p, const char *arch,
		      const char *version, const char *status)
{
	if (strcmp(p->shown, status) == 0)
		return;
	snprintf(p->shown, sizeof(p->shown), "%s", status);
	unpkg_event_pkg_status(r->o->events, p->key, arch, version, status);
}

int run_put_stanza(struct run *r, struct pkg *p, const char *text,
		   const char *arch, const char *version, const char *status,
		   struct unpkg_err *err)
{
	if (run_put(r, p->name, p->arch, text, err) < 0)
		return -1;
	run_status_event(r, p, arch, version, status);
	return 0;
}

/* Set the package's stanza in memory (not yet written). */
int run_put_state(struct run *r, struct pkg *p, const char *flag,
		  enum unpkg_status state, struct unpkg_err *err)
{
	int installed = state == UNPKG_STATUS_INSTALLED;
	/* configured, it waits for the triggers it activated */
	const char *status = unpkg_status_name(installed && p->awaited != NULL
					       ? UNPKG_STATUS_TRIGGERS_AWAITED
					       : state);
	struct unpkg_stanza_state st = {
		.want = "install",
		.flag = flag,
		.status = status,
		.config_version = p->config_version,
		.triggers_awaited = p->awaited,
	};
	struct unpkg_buf conffiles = { 0 };
	char *text = NULL;
	int ret = -1;

	if (conffiles_value(p, installed ||
				   state == UNPKG_STATUS_HALF_CONFIGURED,
			    &conffiles, err) < 0)
		goto out;
	st.conffiles = conffiles.s;
	if (unpkg_stanza_format(&p->control, &st, &text, err) < 0 ||
	    run_put_stanza(r, p, text, p->arch, p->version, status, err) < 0)
		goto out;
	ret = 0;
out:
	unpkg_buf_free(&conffiles);
	free(text);
	return ret;
}

int run_write_db(struct run *r, struct unpkg_err *err)
{
	if (unpkg_triggers_write(r->trig, 0, &r->stats->fsync, err) < 0 ||
	    unpkg_db_write(r->db, &r->stats->fsync, err) < 0) {
		if (err->code == UNPKG_ERR_SYNC)
			r->sync_failed = 1;
		return -1;
	}
	r->db_dirty = 0;
	return 0;
}

/* unpkg_triggers_stage()'s sync: the commit's. */
static int hand_trigger_file(void *ctx, const char *name, int fd,
			     struct unpkg_err *err)
{
	struct run *r = ctx;
	int dir = unpkg_commit_dir(r->commit, r->admroot, "triggers", err);

	if (dir < 0) {
		close(fd);
		return -1;
	}
	return unpkg_commit_sync_with(r->commit, dir, name, fd, err);
}

/* Write the database's new files now and hand them to the commit, whose
 * next sync makes them durable with the package files; run_db_publish() puts
 * them in place after it.  One sync fewer than run_write_db(). */
int run_db_stage(struct run *r, struct unpkg_err *err)
{
	struct unpkg_db_staged s;
	size_t i;
	int dir;

	if (unpkg_triggers_stage(r->trig, hand_trigger_file, r, 0,
				 &r->stats->fsync, err) < 0)
		return -1;
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
int run_db_publish(struct run *r, struct unpkg_err *err)
{
	/* where the commits are ordered, the admindir's fsync below makes
	 * triggers/'s renames before it durable too */
	if (unpkg_triggers_publish(r->trig, unpkg_db_writes_ordered(r->db),
				   &r->stats->fsync, err) < 0 ||
	    unpkg_db_write_end(r->db, &r->stats->fsync, err) < 0) {
		if (err->code == UNPKG_ERR_SYNC)
			r->sync_failed = 1;
		r->db_dirty = 1;
		return -1;
	}
	return 0;
}

int run_db_publish_hook(void *ctx, struct unpkg_err *err)
{
	return run_db_publish(ctx, err);
}

/* A finish of the run's transaction.  If one of its syncs fails, it may
 * have been the one covering the database's files (a syncfs of their
 * file system, or the new status handed over): the database's own syncs
 * must not try again what it could not do. */
int run_finish(struct run *r, const struct unpkg_commit_hooks *h,
	       struct unpkg_err *err)
{
	int ret = unpkg_commit_finish_hooked(r->commit, h, err);

	if (ret < 0 && err->code == UNPKG_ERR_SYNC &&
	    (r->db_handed || unpkg_commit_syncs_whole_fs(r->commit))) {
		unpkg_db_sync_lost(r->db);
		unpkg_triggers_sync_lost(r->trig);
	}
	r->db_handed = 0;
	return ret;
}

/* Put the package's stanza back as it was before the run, in memory: the
 * next database write of the run makes it durable. */
void run_restore_pkg(struct run *r, struct pkg *p)
{
	const struct unpkg_db_pkg *now;
	const char *want, *flag, *status = "not-installed";
	struct unpkg_err err;

	unpkg_err_init(&err);
	if (run_put(r, p->name, p->arch, p->old_stanza, &err) < 0 ||
	    (p->interests_saved &&
	     unpkg_triggers_set_interests(r->trig, p->key, p->old_interests.s,
					  p->old_interests.len, &err) < 0)) {
		unpkg_event_emit(r->o->events, UNPKG_EV_WARNING, p->key,
				 "cannot restore the database entry of %s: %s",
				 p->key, err.msg);
		return;
	}
	now = unpkg_db_find(r->db, p->name, p->arch);
	if (now != NULL && unpkg_db_pkg_status(now, &want, &flag, &status) < 0)
		status = "not-installed";
	run_status_event(r, p, p->arch,
			 now != NULL ? unpkg_para_get(&now->para, "Version")
				     : NULL,
			 status);
}

void run_undo_files(struct run *r, struct pkg *p)
{
	unpkg_commit_undo(r->commit, &p->sp_from, &p->sp_to);
}

int run_put_stub(struct run *r, struct pkg *p, const char *flag,
		 enum unpkg_status state, struct unpkg_err *err)
{
	const char *prio = unpkg_para_get(&p->control, "Priority");
	const char *sect = unpkg_para_get(&p->control, "Section");
	const char *status = unpkg_status_name(state);
	int gone = state == UNPKG_STATUS_NOT_INSTALLED;
	char *text;
	int ret;

	if (asprintf(&text, "Package: %s\nStatus: install %s %s\n%s%s%s"
		     "%s%s%sArchitecture: %s\n%s%s%s", p->name, flag, status,
		     prio ? "Priority: " : "", prio ? prio : "",
		     prio ? "\n" : "", sect ? "Section: " : "",
		     sect ? sect : "", sect ? "\n" : "", p->arch,
		     gone ? "" : "Version: ", gone ? "" : p->version,
		     gone ? "" : "\n") < 0)
		return unpkg_err_nomem(err);
	ret = run_put_stanza(r, p, text, p->arch, p->version, status, err);
	free(text);
	return ret;
}

/* Free a list of other packages' entries (deconfigured or removed). */
static void deconfs_free(struct deconf **v, size_t *n)
{
	size_t i;

	for (i = 0; i < *n; i++) {
		free((*v)[i].name);
		free((*v)[i].arch);
		free((*v)[i].key);
		free((*v)[i].version);
		free((*v)[i].stanza);
	}
	free(*v);
	*v = NULL;
	*n = 0;
}

void run_free_scripts(struct pkg *p)
{
	size_t i;

	for (i = 0; i < MAINT_NSCRIPTS; i++)
		free(p->scripts[i].data);
	free(p->triggers.data);
	deconfs_free(&p->deconf, &p->ndeconf);
	deconfs_free(&p->removals, &p->nremovals);
	free(p->removal_failed);
	p->removal_failed = NULL;
}

void run_timed(struct run *r, enum unpkg_phase phase, double since)
{
	unpkg_stats_timed(r->stats, phase, since);
}

/* The paths dpkg knows that no file list names, each once. */
struct unlisted {
	const struct unpkg_db *db;
	struct unpkg_strmap seen;
};

static int count_unlisted(void *ctx, const char *path, const char *pkg,
			  int noawait, struct unpkg_err *err)
{
	struct unlisted *u = ctx;

	(void)pkg;
	(void)noawait;
	if (unpkg_db_file_owner(u->db, path, NULL) != NULL)
		return 0;
	return unpkg_strmap_put(&u->seen, path, NULL, NULL, err) < 0 ? -1 : 0;
}

int run_reading_database(struct run *r, int overrides, struct unpkg_err *err)
{
	struct unlisted u = { r->db, { 0 } };
	size_t i, n;
	int ret = -1;

	if (r->read_said)
		return 0;
	unpkg_strmap_init(&u.seen);
	if (unpkg_db_load_files(r->db, err) < 0)
		goto out;
	for (i = 0; i < unpkg_divert_count(r->divs); i++) {
		const struct unpkg_diversion *dv = unpkg_divert_at(r->divs, i);

		if (count_unlisted(&u, dv->from, NULL, 0, err) < 0 ||
		    count_unlisted(&u, dv->to, NULL, 0, err) < 0)
			goto out;
	}
	for (i = 0; overrides && i < r->noverrides; i++)
		if (count_unlisted(&u, r->overrides[i].path, NULL, 0, err) < 0)
			goto out;
	if (unpkg_triggers_each_file(r->trig, count_unlisted, &u, err) < 0)
		goto out;
	n = unpkg_db_files_count(r->db) + u.seen.count;
	unpkg_event_emit(r->o->events, UNPKG_EV_PROGRESS, NULL,
			 "(Reading database ... %zu %s currently installed.)",
			 n, n == 1 ? "file or directory"
				   : "files and directories");
	r->read_said = 1;
	ret = 0;
out:
	unpkg_strmap_destroy(&u.seen);
	return ret;
}

/* The new state is durable: the backups can go.  A failure to remove one
 * leaves debris, not damage. */
void run_release(struct run *r)
{
	struct unpkg_err warn;

	unpkg_err_init(&warn);
	if (unpkg_commit_release(r->commit, &warn) < 0)
		unpkg_event_emit(r->o->events, UNPKG_EV_WARNING, NULL, "%s",
				 warn.msg);
}

/* dpkg-statoverride's entries, by path. */
static int load_overrides(struct run *r, struct unpkg_err *err)
{
	size_t i;

	if (unpkg_statoverride_read(r->db, &r->overrides, &r->noverrides,
					err) < 0)
		return -1;
	for (i = 0; i < r->noverrides; i++)
		if (unpkg_strmap_put(&r->override_map, r->overrides[i].path,
				     &r->overrides[i], NULL, err) < 0)
			return -1;
	return 0;
}

int run_open(struct run *r, const struct unpkg_install_opts *o,
	     struct unpkg_stats *own, struct unpkg_err *err)
{
	unsigned int dbflags = UNPKG_DB_CREATE;
	enum unpkg_sync_mode mode = o->sync;

	memset(r, 0, sizeof(*r));
	r->o = o;
	r->stats = o->stats != NULL ? o->stats : own;
	unpkg_strmap_init(&r->run_files);
	unpkg_pkgindex_init(&r->index, NULL);
	unpkg_strmap_init(&r->override_map);
	if (o->frontend_lock)
		dbflags |= UNPKG_DB_LOCK_FRONTEND;
	if (unpkg_root_open(o->instdir, o->root_flags, &r->root, err) < 0 ||
	    (r->root_copies_up = unpkg_fsclass_copies_up(unpkg_root_fd(r->root),
							  err)) < 0 ||
	    unpkg_db_open(o->admindir, dbflags, &r->db, err) < 0 ||
	    unpkg_root_open(o->admindir, o->root_flags, &r->admroot, err) < 0 ||
	    unpkg_triggers_open(unpkg_db_dirfd(r->db), o->admindir, &r->trig,
				err) < 0 ||
	    load_overrides(r, err) < 0 ||
	    unpkg_divert_new(&r->divs, err) < 0 ||
	    unpkg_divert_load(r->divs, r->db, err) < 0 ||
	    (o->sync_auto &&
	     unpkg_sync_choose_auto(unpkg_root_fd(r->root),
				    unpkg_db_dirfd(r->db), o->dirty_max_kib,
				    r->stats, &mode, err) < 0) ||
	    /* auto's database writes wait where the commits are ordered,
	     * and the interest files' renames go with the admindir's fsync
	     * that follows them (run_db_publish()) */
	    (o->sync_auto &&
	     unpkg_db_order_writes_where_ordered(r->db,
						 &r->stats->sync_file_range,
						 err) < 0) ||
	    unpkg_commit_new_flags(mode, o->sync_auto ? UNPKG_COMMIT_PER_FS
						      : 0, r->stats, o->events,
				   0, &r->commit, err) < 0 ||
	    unpkg_commit_name_root(r->commit, r->admroot, o->admindir,
				   err) < 0)
		return -1;
	r->index.db = r->db;
	/* --force-unsafe-io may lose the packages' files, never the
	 * database: its writes are synced in every mode, as dpkg's are. */
	unpkg_commit_database_root(r->commit, r->admroot);
	return 0;
}

void run_close(struct run *r)
{
	size_t i;

	if (r->db != NULL && (!unpkg_db_durable(r->db) ||
			      (r->trig != NULL &&
			       !unpkg_triggers_durable(r->trig))))
		unpkg_event_emit(r->o->events, UNPKG_EV_WARNING, NULL,
				 "a sync of the database failed: what was "
				 "written after it is not durable; check the "
				 "disk, then run unpkg again");
	if (r->commit != NULL)
		snprintf(r->stats->strategy, sizeof(r->stats->strategy), "%s",
			 unpkg_commit_strategy(r->commit));
	for (i = 0; i < r->npkgs; i++)
		run_pkg_destroy(&r->pkgs[i]);
	free(r->pkgs);
	unpkg_strmap_destroy(&r->run_files);
	unpkg_pkgindex_destroy(&r->index);
	unpkg_commit_free(r->commit);
	unpkg_triggers_free(r->trig);
	unpkg_strmap_destroy(&r->override_map);
	unpkg_statoverride_free(r->overrides, r->noverrides);
	unpkg_divert_free(r->divs);
	unpkg_root_free(r->admroot);
	unpkg_root_free(r->root);
	unpkg_db_free(r->db);
}
