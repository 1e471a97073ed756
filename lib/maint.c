/* maint.c - the maintainer scripts of an install run, in dpkg 1.21's order
 * with its fallbacks and unwinding (lib/script.h describes the flow; the
 * step numbers below are its). */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "install-impl.h"
#include "script.h"
#include "stanza.h"

static const char *const script_names[MAINT_NSCRIPTS] = {
	"preinst", "postinst", "prerm", "postrm",
};

/* Keep a copy of control member `m` (NULL: none) in `dst`. */
static int save_member(struct maint_script *dst,
		       const struct unpkg_deb_member *m, struct unpkg_err *err)
{
	if (m == NULL)
		return 0;
	dst->data = malloc(m->size != 0 ? m->size : 1);
	if (dst->data == NULL)
		return unpkg_err_nomem(err);
	memcpy(dst->data, m->data, m->size);
	dst->size = m->size;
	dst->present = 1;
	return 0;
}

int maint_save_scripts(struct pkg *p, struct unpkg_err *err)
{
	size_t i;

	for (i = 0; i < MAINT_NSCRIPTS; i++)
		if (save_member(&p->scripts[i],
				unpkg_deb_member(p->deb, script_names[i]),
				err) < 0)
			return -1;
	return save_member(&p->triggers, unpkg_deb_member(p->deb, "triggers"),
			   err);
}

/* Put the new version's scripts into ADMINDIR/tmp.ci, where dpkg runs
 * them from before they become info/ files (the whole control.tar while
 * the archive is open). */
static int load_tmp(struct run *r, struct pkg *p, struct unpkg_err *err)
{
	const char *admindir = r->o->admindir;
	size_t i;

	if (r->tmp_for == p)
		return 0;
	r->tmp_for = NULL;
	if (unpkg_script_tmp_prepare(admindir, err) < 0)
		return -1;
	if (p->deb != NULL) {
		for (i = 0; i < unpkg_deb_member_count(p->deb); i++) {
			const struct unpkg_deb_member *m =
				unpkg_deb_member_at(p->deb, i);

			if (unpkg_script_tmp_write(admindir, m->name, m->data,
						   m->size, m->mode & 0777,
						   err) < 0)
				return -1;
		}
	} else {
		for (i = 0; i < MAINT_NSCRIPTS; i++)
			if (p->scripts[i].present &&
			    unpkg_script_tmp_write(admindir, script_names[i],
						   p->scripts[i].data,
						   p->scripts[i].size, 0755,
						   err) < 0)
				return -1;
	}
	r->tmp_for = p;
	return 0;
}

void maint_tmp_clean(struct run *r)
{
	struct unpkg_err ignored;

	unpkg_err_init(&ignored);
	if (r->tmp_for != NULL || r->tmp_used)
		unpkg_script_tmp_clean(r->o->admindir, &ignored);
	r->tmp_for = NULL;
}

static void script_ctx(const struct run *r, const char *name,
		       const char *arch, struct unpkg_script_ctx *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->instdir = r->o->instdir;
	ctx->admindir = r->o->admindir;
	ctx->package = name;
	ctx->arch = arch;
	ctx->chrootless = (r->o->force & UNPKG_FORCE_SCRIPT_CHROOTLESS) != 0;
	ctx->force = r->force_list;
	ctx->events = r->o->events;
}

/* Run script `name` of package `key` (`pkgname` and `arch` for its
 * environment), from tmp.ci when `from_tmp`, else from info/, described
 * as `which`'s.  Returns as run(). */
static int run_script(struct run *r, const char *pkgname, const char *arch,
		      const char *key, const char *which, const char *name,
		      int from_tmp, const char *const *argv, char *why,
		      size_t whysize, struct unpkg_err *err)
{
	struct unpkg_script_result res;
	struct unpkg_script_ctx ctx;
	char path[NAME_MAX + 16], desc[512];
	int n;

	script_ctx(r, pkgname, arch, &ctx);
	why[0] = '\0';
	n = from_tmp ? snprintf(path, sizeof(path), "tmp.ci/%s", name)
		     : snprintf(path, sizeof(path), "info/%s.%s", key, name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return unpkg_err_set(err, UNPKG_ERR_UNSUPPORTED,
				     "%s: package name too long", key);
	unpkg_script_desc(desc, sizeof(desc), which, key, name);
	if (unpkg_script_run(&ctx, path, argv, desc, &res, err) < 0)
		return -1;
	return !unpkg_script_failure(&res, desc, why, whysize);
}

/* Run a script of `p`: `which` "new" (from tmp.ci), "old" or "installed"
 * (from info/).  Returns 1 on success (or no such script), 0 when it
 * failed (*why has dpkg's message), -1 when it could not be run. */
static int run(struct run *r, struct pkg *p, const char *which,
	       const char *name, const char *const *argv, char *why,
	       size_t whysize, struct unpkg_err *err)
{
	int new = strcmp(which, "new") == 0;

	if (new) {
		why[0] = '\0';
		if (!p->scripts[maint_index(name)].present)
			return 1;
		if (load_tmp(r, p, err) < 0)
			return -1;
		r->tmp_used = 1;
	}
	return run_script(r, p->name,
			  !new && p->old_arch != NULL ? p->old_arch : p->arch,
			  p->key, which, name, new, argv, why, whysize, err);
}

int maint_index(const char *name)
{
	int i;

	for (i = 0; i < MAINT_NSCRIPTS; i++)
		if (strcmp(script_names[i], name) == 0)
			return i;
	return 0;
}

/* The state the old version's stanza is put in, in memory: its fields
 * as they were, formatted again in dpkg's order with the new state. */
static int old_state(struct run *r, struct pkg *p, const char *flag,
		     enum unpkg_status state, struct unpkg_err *err)
{
	const char *status = unpkg_status_name(state);
	struct unpkg_stanza_state st = {
		.want = "install",
		.flag = flag,
		.status = status,
		.conffiles = p->old_conffiles,
		.config_version = state != UNPKG_STATUS_INSTALLED
					  ? p->config_version : NULL,
	};
	struct unpkg_para para;
	char want[32];
	const char *old;
	char *text = NULL;
	int ret = -1;

	unpkg_para_init(&para);
	if (unpkg_para_parse(p->old_stanza, strlen(p->old_stanza), &para,
			     err) < 0)
		goto out;
	old = unpkg_para_get(&para, "Status");
	if (old != NULL && sscanf(old, "%31s", want) == 1)
		st.want = want;
	st.triggers_pending = unpkg_para_get(&para, "Triggers-Pending");
	st.triggers_awaited = unpkg_para_get(&para, "Triggers-Awaited");
	unpkg_para_unset(&para, "Status");
	unpkg_para_unset(&para, "Config-Version");
	unpkg_para_unset(&para, "Conffiles");
	if (unpkg_stanza_format(&para, &st, &text, err) < 0 ||
	    run_put_stanza(r, p, text, p->old_arch, p->old_version, status,
			   err) < 0)
		goto out;
	ret = 0;
out:
	free(text);
	unpkg_para_destroy(&para);
	return ret;
}

/* A script of the package failed and the unwinding is over: report it
 * (the error first, then the state it leaves, as dpkg reports them). */
static void report_failure(struct run *r, struct pkg *p, const char *why)
{
	struct unpkg_err perr;

	unpkg_err_init(&perr);
	unpkg_err_set(&perr, UNPKG_ERR_SCRIPT, "%s", why);
	run_fail_pkg(r, p, p->debpath, &perr);
}

/* report_failure(), and the database entry as before the run. */
static int give_up_restored(struct run *r, struct pkg *p, const char *why)
{
	report_failure(r, p, why);
	run_restore_pkg(r, p);
	return 0;
}

/* report_failure(), and the state the unwinding reached, the old
 * version's. */
static int give_up_pkg(struct run *r, struct pkg *p, const char *why,
		       const char *flag, enum unpkg_status state,
		       struct unpkg_err *err)
{
	report_failure(r, p, why);
	return old_state(r, p, flag, state, err);
}

/* A script failed where dpkg tries another one: its warning, then its
 * notice. */
static void fallback_notice(struct run *r, struct pkg *p, const char *why)
{
	unpkg_event_emit(r->o->events, UNPKG_EV_WARNING, p->key, "%s", why);
	unpkg_event_emit(r->o->events, UNPKG_EV_NOTICE, p->key,
			 "trying script from the new package instead ...");
}

int maint_configured_before(const struct pkg *p)
{
	return unpkg_status_configured(p->old_state) ||
	       p->old_state == UNPKG_STATUS_HALF_CONFIGURED;
}

/* --- --auto-deconfigure --------------------------------------------------- */

/* Run script `name` of deconfigured package `d` from info/, as
 * run() does. */
static int run_deconf(struct run *r, const struct deconf *d,
		      const char *name, const char *const *argv, char *why,
		      size_t whysize, struct unpkg_err *err)
{
	return run_script(r, d->name, d->arch != NULL ? d->arch : "", d->key,
			  "installed", name, 0, argv, why, whysize, err);
}

int maint_run_other(struct run *r, const struct deconf *d, const char *name,
		    const char *const *argv, char *why, size_t whysize,
		    struct unpkg_err *err)
{
	return run_deconf(r, d, name, argv, why, whysize, err);
}

int maint_other_state(struct run *r, struct deconf *d, const char *status,
		      struct unpkg_err *err)
{
	struct unpkg_para para;
	const char *old, *config = NULL;
	char *text = NULL;
	int ret = -1;

	unpkg_para_init(&para);
	if (unpkg_para_parse(d->stanza, strlen(d->stanza), &para, err) < 0)
		goto out;
	/* the configured version: recorded, or the version of a package
	 * configured now; a package never configured has none */
	old = unpkg_para_get(&para, "Status");
	if (unpkg_para_get(&para, "Config-Version") == NULL && old != NULL &&
	    (strstr(old, " installed") || strstr(old, " triggers-")))
		config = d->version;
	if (strcmp(status, "config-files") == 0) {
		unpkg_para_unset(&para, "Essential");
		unpkg_para_unset(&para, "Protected");
	}
	if (unpkg_stanza_restate(&para, NULL, "ok", status, config, &text,
				 err) < 0 ||
	    run_put_reported(r, d->name, d->arch, text, d->key, d->arch,
			     d->version, status, err) < 0)
		goto out;
	ret = 0;
out:
	free(text);
	unpkg_para_destroy(&para);
	return ret;
}

/* Deconfigured package `d` half-configured, in memory: its stanza as it
 * was, with the configured version kept as Config-Version. */
static int deconf_half(struct run *r, struct deconf *d, struct unpkg_err *err)
{
	if (maint_other_state(r, d, "half-configured", err) < 0)
		return -1;
	d->marked = 1;
	return 0;
}

/* Put deconfigured package `d` back as it was (its postinst
 * abort-deconfigure worked), in memory. */
static int deconf_restore(struct run *r, struct deconf *d,
			  struct unpkg_err *err)
{
	const struct unpkg_db_pkg *now;
	const char *want, *flag, *status = "installed";

	if (run_put(r, d->name, d->arch, d->stanza, err) < 0)
		return -1;
	d->marked = 0;
	now = unpkg_db_find(r->db, d->name, d->arch);
	if (now != NULL)
		unpkg_db_pkg_status(now, &want, &flag, &status);
	unpkg_event_pkg_status(r->o->events, d->key, d->arch, d->version,
			       status);
	return 0;
}

/* Is `d` still configured (an earlier package of the run may have
 * deconfigured it already)? */
static int still_configured(const struct run *r, const struct deconf *d)
{
	const struct unpkg_db_pkg *q = unpkg_db_find(r->db, d->name, d->arch);
	return q != NULL && unpkg_status_configured(unpkg_db_pkg_state(q));
}

/* The packages `p` deconfigured go back where their postinst
 * abort-deconfigure works (dpkg's unwinding when `p` fails). */
static int deconf_unwind(struct run *r, struct pkg *p, struct unpkg_err *err)
{
	const char *argv[] = { "abort-deconfigure", "in-favour", p->name,
			       p->version, NULL };
	char why[1024];
	size_t i;
	int ok;

	for (i = p->ndeconf; i-- > 0;) {
		struct deconf *d = &p->deconf[i];

		if (!d->marked)
			continue;
		ok = run_deconf(r, d, "postinst", argv, why, sizeof(why), err);
		if (ok < 0)
			return -1;
		if (ok == 0) {
			unpkg_event_emit(r->o->events, UNPKG_EV_WARNING,
					 d->key, "%s", why);
			d->marked = 0;	/* stays half-configured */
			continue;
		}
		if (deconf_restore(r, d, err) < 0)
			return -1;
	}
	return 0;
}

/* The packages `p` was to remove and has not removed go back: where
 * their prerm "remove in-favour" was tried, with their postinst
 * "abort-remove in-favour P VERSION" (back to installed if it works, as
 * dpkg does); else as they were. */
static int removal_unwind(struct run *r, struct pkg *p, struct unpkg_err *err)
{
	const char *argv[] = { "abort-remove", "in-favour", p->name,
			       p->version, NULL };
	char why[1024];
	size_t i;

	for (i = p->nremovals; i-- > 0;) {
		struct deconf *d = &p->removals[i];
		int ok = 1;

		if (!d->marked)
			continue;
		if (d->prerm_tried)
			ok = run_deconf(r, d, "postinst", argv, why,
					sizeof(why), err);
		if (ok < 0)
			return -1;
		if (ok == 0) {
			unpkg_event_emit(r->o->events, UNPKG_EV_WARNING,
					 d->key, "%s", why);
			d->marked = 0;	/* stays as it is */
			continue;
		}
		if (deconf_restore(r, d, err) < 0)
			return -1;
	}
	return 0;
}

/* What breaks deconfigured package `d` now, in dpkg's words. */
static int dc_breakers(struct run *r, const struct deconf *d, char *why,
		       size_t whylen, struct unpkg_err *err)
{
	struct pkg q;
	int ret;

	memset(&q, 0, sizeof(q));
	unpkg_para_init(&q.control);
	q.name = d->name;
	q.key = d->key;
	q.version = d->version;
	ret = unpkg_para_parse(d->stanza, strlen(d->stanza), &q.control, err);
	if (ret == 0)
		ret = inst_check_breakers(r, &q, why, whylen, err);
	unpkg_para_destroy(&q.control);
	return ret < 0 ? -1 : 0;
}

int maint_deconfigure_unwind(struct run *r, struct unpkg_err *err)
{
	size_t i;

	for (i = 0; i < r->npkgs; i++)
		if (r->pkgs[i].state == PKG_FAILED &&
		    (removal_unwind(r, &r->pkgs[i], err) < 0 ||
		     deconf_unwind(r, &r->pkgs[i], err) < 0))
			return -1;
	return 0;
}

int maint_deconfigured_report(struct run *r, struct unpkg_err *err)
{
	size_t i, j, k;

	for (i = 0; i < r->npkgs; i++) {
		struct pkg *p = &r->pkgs[i];

		for (j = 0; p->state != PKG_FAILED && j < p->ndeconf; j++) {
			struct deconf *d = &p->deconf[j];
			char why[4096] = "";
			const struct pkg *same = NULL;
			struct unpkg_err perr;

			if (!d->marked)
				continue;
			d->marked = 0;	/* reported once */
			for (k = 0; k < r->npkgs && same == NULL; k++)
				if (r->pkgs[k].state != PKG_FAILED &&
				    strcmp(r->pkgs[k].key, d->key) == 0)
					same = &r->pkgs[k];
			if (same != NULL)
				continue;	/* configured with the run */
			/* dpkg queues it for configuration, which fails:
			 * what deconfigured it breaks it */
			if (dc_breakers(r, d, why, sizeof(why), err) < 0)
				return -1;
			unpkg_err_init(&perr);
			unpkg_err_set(&perr, UNPKG_ERR_DEPENDS,
				      "dependency problems prevent "
				      "configuration of %s:%s\n"
				      "dependency problems - leaving "
				      "unconfigured", d->key, why);
			unpkg_event_emit(r->o->events, UNPKG_EV_ERROR, d->key,
					 "%s", perr.msg);
			r->failed++;
		}
	}
	return 0;
}

/* Step 1 for every opened package whose old version was configured: the
 * old prerm, with its fallback and unwinding; then, with
 * --auto-deconfigure, the prerm of each package it breaks
 * ("deconfigure in-favour P VERSION"), which is half-configured first. */
int maint_prerm(struct run *r, struct unpkg_err *err)
{
	char why[1024], why2[1024];
	size_t i, j;
	int any = 0;

	for (i = 0; i < r->npkgs; i++) {
		struct pkg *p = &r->pkgs[i];

		if (p->state != PKG_OPENED)
			continue;
		if (maint_configured_before(p) && p->old_prerm) {
			if (old_state(r, p, "reinstreq",
				      UNPKG_STATUS_HALF_CONFIGURED,
				      err) < 0)
				return -1;
			any = 1;
		}
		for (j = 0; j < p->ndeconf; j++) {
			struct deconf *d = &p->deconf[j];

			if (!still_configured(r, d))
				continue;
			unpkg_event_emit(r->o->events, UNPKG_EV_PROGRESS,
					 d->key, "De-configuring %s (%s), to "
					 "allow installation of %s (%s) ...",
					 d->key, d->version, p->key,
					 p->version);
			if (deconf_half(r, d, err) < 0)
				return -1;
			any = 1;
		}
		for (j = 0; j < p->nremovals; j++) {
			struct deconf *d = &p->removals[j];

			d->marked = 1;	/* to put back if p fails */
			if (!still_configured(r, d))
				continue;
			if (maint_other_state(r, d, "half-configured", err) < 0)
				return -1;
			d->prerm_tried = 1;	/* below */
			any = 1;
		}
	}
	if (any && run_write_db(r, err) < 0)
		return -1;
	for (i = 0; any && i < r->npkgs; i++) {
		struct pkg *p = &r->pkgs[i];
		const char *up[] = { "upgrade", p->version, NULL };
		const char *failed[] = { "failed-upgrade", p->old_version,
					 p->version, NULL };
		const char *abort_up[] = { "abort-upgrade", p->version, NULL };
		const char *deconf[] = { "deconfigure", "in-favour", p->name,
					 p->version, NULL };
		const char *rm[] = { "remove", "in-favour", p->name,
				     p->version, NULL };
		int ok = 1, own;

		if (p->state != PKG_OPENED)
			continue;
		own = maint_configured_before(p) && p->old_prerm;
		if (own)
			ok = run(r, p, "old", "prerm", up, why, sizeof(why),
				 err);
		if (ok == 0) {
			fallback_notice(r, p, why);
			if (!p->scripts[maint_index("prerm")].present) {
				size_t l = strlen(why);

				snprintf(why + l, sizeof(why) - l, ": there is "
					 "no script in the new version of the "
					 "package - giving up");
				ok = 0;
			} else {
				ok = run(r, p, "new", "prerm", failed, why,
					 sizeof(why), err);
				if (ok > 0)
					unpkg_event_emit(r->o->events,
							 UNPKG_EV_NOTICE,
							 p->key, "... it looks "
							 "like that went OK");
			}
		}
		if (ok < 0)
			return -1;
		if (ok > 0 && own) {
			p->prerm_ran = 1;
			/* deconfigured, as dpkg notes it; the run's mark
			 * follows at once, so it is not written */
			run_status_event(r, p, p->old_arch, p->old_version,
					 "unpacked");
		}
		for (j = 0; ok > 0 && j < p->ndeconf; j++) {
			struct deconf *d = &p->deconf[j];

			if (!d->marked)
				continue;
			ok = run_deconf(r, d, "prerm", deconf, why,
					sizeof(why), err);
			if (ok < 0)
				return -1;
		}
		/* the packages to remove: prerm "remove in-favour P V", then
		 * half-installed (written with the run's mark) */
		for (j = 0; j < p->nremovals; j++) {
			struct deconf *d = &p->removals[j];

			if (!d->prerm_tried)
				continue;
			if (ok <= 0) {
				d->prerm_tried = 0;	/* not tried */
				continue;
			}
			ok = run_deconf(r, d, "prerm", rm, why, sizeof(why),
					err);
			if (ok < 0 ||
			    (ok > 0 && maint_other_state(r, d, "half-installed",
							 err) < 0))
				return -1;
		}
		if (ok > 0)
			continue;
		/* unwind: the packages to remove and the deconfigured
		 * first, then p's own prerm */
		if (removal_unwind(r, p, err) < 0 ||
		    deconf_unwind(r, p, err) < 0)
			return -1;
		if (!own) {
			give_up_restored(r, p, why);
			continue;
		}
		ok = run(r, p, "installed", "postinst", abort_up, why2,
			 sizeof(why2), err);
		if (ok < 0)
			return -1;
		if (give_up_pkg(r, p, why, ok ? "ok" : "reinstreq",
				ok ? UNPKG_STATUS_INSTALLED
				   : UNPKG_STATUS_HALF_CONFIGURED, err) < 0)
			return -1;
	}
	return 0;
}

/* Step 2: the new preinst, before p's files are staged.  1: go on; 0:
 * the package failed (reported, its state set); -1: error. */
int maint_preinst(struct run *r, struct pkg *p, struct unpkg_err *err)
{
	const char *abort_up[] = { "abort-upgrade", p->version, NULL };
	const char *argv[5], *undo[5];
	char why[1024], why2[1024];
	int ok, at_least_half = unpkg_status_present(p->old_state);

	if (!p->scripts[maint_index("preinst")].present)
		return 1;
	if (at_least_half) {
		argv[0] = "upgrade", argv[1] = p->old_version;
		argv[2] = p->version, argv[3] = NULL;
		undo[0] = "abort-upgrade", undo[1] = p->old_version;
		undo[2] = p->version, undo[3] = NULL;
	} else if (p->old_state != UNPKG_STATUS_INVALID) { /* config-files */
		argv[0] = "install", argv[1] = p->old_version;
		argv[2] = p->version, argv[3] = NULL;
		undo[0] = "abort-install", undo[1] = p->old_version;
		undo[2] = p->version, undo[3] = NULL;
	} else {
		argv[0] = "install", argv[1] = NULL;
		undo[0] = "abort-install", undo[1] = NULL;
	}
	ok = run(r, p, "new", "preinst", argv, why, sizeof(why), err);
	if (ok != 0)
		return ok;
	ok = run(r, p, "new", "postrm", undo, why2, sizeof(why2), err);
	if (ok < 0)
		return -1;
	if (p->old_stanza == NULL) {
		/* forgotten (an error before the rename pass changes
		 * nothing: dpkg keeps an "install ok not-installed"
		 * selection), or left half-installed as dpkg leaves it */
		if (ok)
			return give_up_restored(r, p, why);
		if (run_put_stub(r, p, "reinstreq",
				 UNPKG_STATUS_HALF_INSTALLED, err) < 0)
			return -1;
		report_failure(r, p, why);
		return 0;
	}
	if (ok == 0)
		return give_up_pkg(r, p, why, "reinstreq",
				   UNPKG_STATUS_HALF_INSTALLED,
				   err) < 0 ? -1 : 0;
	if (at_least_half && p->prerm_ran) {
		ok = run(r, p, "installed", "postinst", abort_up, why2,
			 sizeof(why2), err);
		if (ok < 0)
			return -1;
		/* back to unpacked, then, if that postinst worked,
		 * installed: dpkg's two steps */
		if (give_up_pkg(r, p, why, "ok", UNPKG_STATUS_UNPACKED,
				err) < 0 ||
		    (ok && old_state(r, p, "ok", UNPKG_STATUS_INSTALLED,
				     err) < 0))
			return -1;
		return 0;
	}
	return give_up_restored(r, p, why);
}

/* Step 4: the old postrm, once p's files are in place (the new version's
 * scripts still waiting as info/KEY.NAME.dpkg-new, so info/KEY.postrm is
 * the old one).  On failure, the unwinding: old preinst abort-upgrade
 * with the new files, then the files put back (run_undo_files()), then
 * new postrm and old postinst abort-upgrade.  1: go on; 0: p failed and
 * was unwound; -1: error. */
int maint_postrm(struct run *r, struct pkg *p, struct unpkg_err *err)
{
	const char *up[] = { "upgrade", p->version, NULL };
	const char *failed[] = { "failed-upgrade", p->old_version, p->version,
				 NULL };
	const char *abort_old[] = { "abort-upgrade", p->version, NULL };
	const char *abort_new[] = { "abort-upgrade", p->old_version,
				    p->version, NULL };
	char why[1024], why2[1024];
	int ok;

	if (p->old_stanza == NULL || !unpkg_status_present(p->old_state))
		return 1;
	ok = run(r, p, "old", "postrm", up, why, sizeof(why), err);
	if (ok != 0)
		return ok;
	fallback_notice(r, p, why);
	ok = run(r, p, "new", "postrm", failed, why2, sizeof(why2), err);
	if (ok < 0)
		return -1;
	if (ok > 0) {
		unpkg_event_emit(r->o->events, UNPKG_EV_NOTICE, p->key,
				 "... it looks like that went OK");
		return 1;
	}
	snprintf(why, sizeof(why), "%s", why2);
	ok = run(r, p, "installed", "preinst", abort_old, why2, sizeof(why2),
		 err);
	if (ok < 0)
		return -1;
	run_undo_files(r, p);
	if (ok == 0)
		return give_up_pkg(r, p, why, "reinstreq",
				   UNPKG_STATUS_HALF_INSTALLED,
				   err) < 0 ? -1 : 0;
	ok = run(r, p, "new", "postrm", abort_new, why2, sizeof(why2), err);
	if (ok < 0)
		return -1;
	if (ok == 0)
		return give_up_pkg(r, p, why, "reinstreq",
				   UNPKG_STATUS_HALF_INSTALLED,
				   err) < 0 ? -1 : 0;
	if (!p->prerm_ran)
		return give_up_pkg(r, p, why, "ok", UNPKG_STATUS_UNPACKED,
				   err) < 0 ? -1 : 0;
	ok = run(r, p, "installed", "postinst", abort_old, why2, sizeof(why2),
		 err);
	if (ok < 0)
		return -1;
	return give_up_pkg(r, p, why, "ok", ok ? UNPKG_STATUS_INSTALLED
						: UNPKG_STATUS_UNPACKED,
			   err) < 0 ? -1 : 0;
}

/* An installed package all of whose files `p` took over disappears, as
 * in dpkg: its postrm is called with "disappear P VERSION" (a failure
 * only warns). */
int maint_disappear(struct run *r, const struct unpkg_db_pkg *q,
		    const struct pkg *p, struct unpkg_err *err)
{
	const char *argv[] = { "disappear", p->name, p->version, NULL };
	struct unpkg_script_result res;
	struct unpkg_script_ctx ctx;
	char path[NAME_MAX + 16], desc[512], why[1024];

	script_ctx(r, q->name, q->arch, &ctx);
	if ((size_t)snprintf(path, sizeof(path), "info/%s.postrm", q->key) >=
	    sizeof(path))
		return unpkg_err_set(err, UNPKG_ERR_UNSUPPORTED,
				     "%s: package name too long", q->key);
	unpkg_script_desc(desc, sizeof(desc), "installed", q->key, "postrm");
	if (unpkg_script_run(&ctx, path, argv, desc, &res, err) < 0)
		return -1;
	if (unpkg_script_failure(&res, desc, why, sizeof(why)))
		unpkg_event_emit(r->o->events, UNPKG_EV_WARNING, q->key, "%s",
				 why);
	return 0;
}

/* Step 6: postinst configure CONF, the state half-configured (made
 * durable by the caller).  1: configured; 0: failed, left half-configured
 * (reported); -1: error. */
int maint_postinst(struct run *r, struct pkg *p, struct unpkg_err *err)
{
	const char *argv[] = { "configure",
			       p->config_version != NULL ? p->config_version
							 : "",
			       NULL };
	struct unpkg_err perr;
	char why[1024];
	int ok;

	ok = run(r, p, "installed", "postinst", argv, why, sizeof(why), err);
	if (ok != 0)
		return ok;
	unpkg_err_init(&perr);
	unpkg_err_set(&perr, UNPKG_ERR_SCRIPT, "%s", why);
	run_fail_pkg(r, p, p->key, &perr);
	return 0;
}
