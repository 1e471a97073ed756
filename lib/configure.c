/* configure.c - the configure phase of -i: conffiles settled, postinsts in dependency order, the record (see configure.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <md5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "configure.h"
#include "depends.h"
#include "install-impl.h"
#include "script.h"



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

enum conffile_action conffile_action(const char *have, const char *recorded,
				     const char *shipped, unsigned int force)
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

/* Both the administrator and the package changed the conffile: dpkg's
 * question, asked unless an option answers it. */
static int conffile_both_changed(const char *have, const char *recorded,
				 const char *shipped)
{
	return have != NULL && recorded[0] != '\0' &&
	       strcmp(recorded, "newconffile") != 0 &&
	       strcmp(have, shipped) != 0 && strcmp(have, recorded) != 0 &&
	       strcmp(recorded, shipped) != 0;
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
		/* where it was unpacked: diverted, or not */
		const char *path = unpkg_divert_use(r->divs, name, p->name) + 1;
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
		run_recorded_hash(p, name, recorded);
		action = conffile_action(exists ? have : NULL, recorded,
					 shipped, r->o->force);
		if (conffile_both_changed(exists ? have : NULL, recorded,
					  shipped))
			unpkg_event_conffile(r->o->events, p->key, name,
					     "prompt");
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

/* dpkg's "processing: configure" line and log line of `p`. */
static void configure_processing(struct run *r, struct pkg *p)
{
	unpkg_event_processing(r->o->events, "configure", p->key, p->arch,
			       p->version, p->version);
}

/* "Setting up": the postinst of `p` if it has one (the state
 * half-configured is durable), then installed, in memory.  Without a
 * postinst nothing could see the state half-configured, so it is not
 * written; its status line still is, as dpkg's (apt's progress counts a
 * configuration as half-configured, then installed). */
static int configure_one(struct run *r, struct pkg *p, struct unpkg_err *err)
{
	int ok = 1, postinst = p->scripts[maint_index("postinst")].present;

	if (!postinst)	/* else when it was made half-configured */
		configure_processing(r, p);
	unpkg_event_emit(r->o->events, UNPKG_EV_PROGRESS, p->key,
			 "Setting up %s (%s) ...", p->key, p->version);
	if (postinst)
		ok = maint_postinst(r, p, err);
	else
		run_status_event(r, p, p->arch, p->version,
				 "half-configured");
	if (ok <= 0)
		return ok;
	p->state = PKG_INSTALLED;
	return run_put_state(r, p, "ok", UNPKG_STATUS_INSTALLED, err);
}

int configure_order(size_t n, const struct configure_steps *st, void *ctx)
{
	int pass, progress, ok;
	size_t i;

	for (pass = 0; pass < 2; pass++) {
		do {
			progress = 0;
			for (i = 0; i < n; i++) {
				if (!st->pending(ctx, i))
					continue;
				ok = pass == 0 ? st->ready(ctx, i) : 1;
				if (ok < 0)
					return -1;
				if (ok == 0)
					continue;
				if (st->configure(ctx, i) < 0)
					return -1;
				progress = 1;
			}
		} while (progress && pass == 0);
	}
	return 0;
}

struct order_ctx {
	struct run *r;
	struct unpkg_err *err;
};

static int order_pending(void *ctx, size_t i)
{
	const struct order_ctx *o = ctx;

	return o->r->pkgs[i].state == PKG_CONFIGURING;
}

static int order_ready(void *ctx, size_t i)
{
	const struct order_ctx *o = ctx;
	char why[4096] = "";

	return depends_check(o->r, &o->r->pkgs[i], "Depends", "depends on", 0,
			     why, sizeof(why), o->err);
}

static int order_configure(void *ctx, size_t i)
{
	const struct order_ctx *o = ctx;

	return configure_one(o->r, &o->r->pkgs[i], o->err);
}

/* configure_one() for the packages of the run in configure_order(). */
static int configure_in_order(struct run *r, struct unpkg_err *err)
{
	static const struct configure_steps steps = {
		order_pending, order_ready, order_configure,
	};
	struct order_ctx o = { r, err };

	return configure_order(r->npkgs, &steps, &o);
}

/* After the conffiles' renames, when no postinst is to run: configure,
 * and hand the record to the commit. */
static int configure_unscripted(void *ctx, struct unpkg_err *err)
{
	struct run *r = ctx;

	return configure_in_order(r, err) < 0 ? -1 : run_db_stage(r, err);
}

int configure_pkgs(struct run *r, struct unpkg_err *err)
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
		ok = depends_check(r, p, "Depends", "depends on", 1, why,
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

		if (run_finish(r, &hooks, err) < 0 || run_db_publish(r, err) < 0)
			goto fail;
		run_release(r);
		goto done;
	}
	if (run_finish(r, NULL, err) < 0)
		goto fail;
	/* The postinsts see their packages half-configured, conffiles in
	 * place. */
	for (i = 0; i < r->npkgs; i++) {
		struct pkg *p = &r->pkgs[i];

		if (p->state != PKG_CONFIGURING ||
		    !p->scripts[maint_index("postinst")].present)
			continue;
		configure_processing(r, p);
		if (run_put_state(r, p, "ok", UNPKG_STATUS_HALF_CONFIGURED,
				  err) < 0)
			goto fail;
	}
	if (run_write_db(r, err) < 0)
		goto fail;
	/* From here on the conffiles stay: a script may have used them. */
	if (configure_in_order(r, err) < 0 || run_write_db(r, err) < 0) {
		if (scripts) {
			run_release(r);
			return -1;
		}
		goto fail;
	}
	run_release(r);
done:
	run_timed(r, UNPKG_PHASE_CONFIGURE, t);
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
		if (run_put_state(r, p, "ok", UNPKG_STATUS_UNPACKED,
				  &ignored) < 0)
			run_restore_pkg(r, p);
		r->db_dirty = 1;
	}
	return -1;
}
