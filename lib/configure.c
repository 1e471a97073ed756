/* configure.c - the configure phase of -i and --configure: conffiles settled, postinsts in dependency order, the record (see configure.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include "stanza.h"



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

/* Remove the package's copy `tmp` (NAME.dpkg-new) of conffile `base`,
 * and NAME.dpkg-tmp if an interrupted configuration left one. */
static int drop_copies(int dfd, const char *tmp, const char *base,
		       struct unpkg_err *err)
{
	char bak[NAME_MAX + 1];

	if ((size_t)snprintf(bak, sizeof(bak), "%s.dpkg-tmp", base) >=
	    sizeof(bak))
		return unpkg_err_set(err, UNPKG_ERR_UNSUPPORTED,
				     "%s.dpkg-tmp: name too long", base);
	if (unlinkat(dfd, tmp, 0) < 0 && errno != ENOENT)
		return unpkg_err_sys(err, "cannot remove %s", tmp);
	if (unlinkat(dfd, bak, 0) < 0 && errno != ENOENT)
		return unpkg_err_sys(err, "cannot remove %s", bak);
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

/* dpkg's line, on its standard output, for a conffile whose new version
 * replaces the one in place. */
static void installing_new(struct run *r, struct pkg *p, const char *name)
{
	unpkg_event_emit(r->o->events, UNPKG_EV_PROGRESS, p->key,
			 "Installing new version of config file %s ...", name);
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
		const struct unpkg_file *f = unpkg_filelist_get(&p->files, name);
		const char *shipped = f != NULL ? f->md5 : "";
		char *tmp = NULL, *dist = NULL, *old = NULL;
		char have[33], recorded[33];
		enum conffile_action action;
		struct stat st;
		int dir, dfd, exists, ret = -1;

		if (parent == NULL)
			return unpkg_err_nomem(err);
		if (f == NULL || f->filtered) {
			/* listed but not shipped, or filtered out: there
			 * is no NAME.dpkg-new, dpkg keeps the hash it
			 * recorded and installs nothing */
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
		/* no NAME.dpkg-new: settled by an earlier run, as dpkg
		 * assumes */
		if (fstatat(dfd, tmp, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				ret = 0;
			else
				unpkg_err_sys(err, "cannot stat %s.dpkg-new",
					      name);
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
			/* the package changed it, the administrator did not:
			 * dpkg says so on its standard output (not of a new
			 * one, nor of one already the same) */
			if (exists && strcmp(have, shipped) != 0)
				installing_new(r, p, name);
			/* the same as the package's: dpkg keeps the file
			 * (and its times) and drops the new copy, and a
			 * backup an interrupted configuration left beside
			 * it goes too (either state is a settled one) */
			if (exists && strcmp(have, shipped) == 0)
				ret = drop_copies(dfd, tmp, base, err);
			else
				ret = unpkg_commit_stage(r->commit, dir, tmp,
							 base, -1,
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
			installing_new(r, p, name);
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

/* Rename `from` back to `to` in `dfd`. */
static int put_back(int dfd, const char *from, const char *to,
		    struct unpkg_err *err)
{
	if (renameat(dfd, from, dfd, to) < 0)
		return unpkg_err_sys(err, "cannot put %s back as %s", from,
				     to);
	return 0;
}

/* A configuration killed between renaming a conffile's NAME.dpkg-new into
 * place and recording its hash leaves NAME (the package's version), the
 * commit's backup NAME.dpkg-tmp (the file before) and no NAME.dpkg-new;
 * kept so, the old hash would stay recorded for the new file (dpkg's own
 * window).  Unless NAME has the hash `recorded` (the record was made, only
 * the backup was left), both are put back: the package's version waits
 * again as NAME.dpkg-new beside the file before, and this run decides as
 * the interrupted one did.  Each step leaves a state this function takes
 * up again.  1 when something was put back, 0 when nothing was left. */
static int resume_conffile(int dfd, const char *base, const char *recorded,
			   struct unpkg_err *err)
{
	char *bak = NULL, *tmp = NULL, have[33];
	struct stat sb, sn;
	int named, ret = -1;

	if (asprintf(&bak, "%s.dpkg-tmp", base) < 0 ||
	    asprintf(&tmp, "%s.dpkg-new", base) < 0) {
		bak = tmp = NULL;
		unpkg_err_nomem(err);
		goto out;
	}
	if (fstatat(dfd, bak, &sb, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT)
			ret = 0;
		else
			unpkg_err_sys(err, "cannot stat %s", bak);
		goto out;
	}
	if (!S_ISREG(sb.st_mode)) {
		ret = 0;
		goto out;
	}
	named = fstatat(dfd, base, &sn, AT_SYMLINK_NOFOLLOW) == 0;
	if (!named && errno != ENOENT) {
		unpkg_err_sys(err, "cannot stat %s", base);
		goto out;
	}
	if (named && sn.st_dev == sb.st_dev && sn.st_ino == sb.st_ino) {
		/* the backup linked, nothing renamed yet */
		if (unlinkat(dfd, bak, 0) < 0) {
			unpkg_err_sys(err, "cannot remove %s", bak);
			goto out;
		}
		ret = 1;
		goto out;
	}
	if (named && faccessat(dfd, tmp, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
		ret = 0;	/* not a state a configuration leaves */
		goto out;
	}
	if (named) {
		if (file_md5(dfd, base, have, err) < 0)
			goto out;
		if (strcmp(have, recorded) == 0) {
			if (unlinkat(dfd, bak, 0) < 0) {
				unpkg_err_sys(err, "cannot remove %s", bak);
				goto out;
			}
			ret = 1;
			goto out;
		}
		if (put_back(dfd, base, tmp, err) < 0)
			goto out;
	}
	if (put_back(dfd, bak, base, err) < 0)
		goto out;
	ret = 1;
out:
	free(bak);
	free(tmp);
	return ret;
}

/* Is `name` in `dfd` a regular file (not followed if a symlink)? */
static int regular_at(int dfd, const char *name)
{
	struct stat sb;

	return fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISREG(sb.st_mode);
}

/* A configuration killed between renaming a modified conffile's
 * NAME.dpkg-new to NAME.dpkg-dist (the administrator's file kept) and
 * recording the new version's hash leaves no NAME.dpkg-new and a
 * NAME.dpkg-dist with a hash other than the one `recorded` (a settled
 * keep records the hash of the NAME.dpkg-dist it leaves, as dpkg does);
 * kept so, the old hash would stay recorded, as after dpkg's own window.
 * The package's version waits again as NAME.dpkg-new, the NAME.dpkg-dist
 * of an earlier configuration that the commit kept as its backup
 * (NAME.dpkg-dist.dpkg-tmp) is put back, and this run decides again; a
 * kill between those two renames leaves NAME.dpkg-new, the backup and no
 * NAME.dpkg-dist (no configuration leaves that), and the backup goes back;
 * one killed after its record, before the backups went, leaves the backup
 * beside the recorded NAME.dpkg-dist, and it goes.
 * 1 when something was put back, 0 when nothing was left. */
static int resume_dist(int dfd, const char *base, const char *recorded,
		       struct unpkg_err *err)
{
	char *dist = NULL, *tmp = NULL, *bak = NULL, have[33];
	int ret = -1;

	if (strlen(recorded) != 32)
		return 0;	/* a new conffile, or none recorded */
	if (asprintf(&dist, "%s.dpkg-dist", base) < 0)
		dist = NULL;
	if (asprintf(&tmp, "%s.dpkg-new", base) < 0)
		tmp = NULL;
	if (asprintf(&bak, "%s.dpkg-dist.dpkg-tmp", base) < 0)
		bak = NULL;
	if (dist == NULL || tmp == NULL || bak == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	if (faccessat(dfd, tmp, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
		/* killed between this function's two renames: the earlier
		 * NAME.dpkg-dist goes back as it was before the run */
		ret = 0;
		if (faccessat(dfd, dist, F_OK, AT_SYMLINK_NOFOLLOW) < 0 &&
		    errno == ENOENT && regular_at(dfd, bak))
			ret = put_back(dfd, bak, dist, err) < 0 ? -1 : 1;
		goto out;
	}
	if (!regular_at(dfd, dist)) {
		ret = 0;
		goto out;
	}
	if (file_md5(dfd, dist, have, err) < 0)
		goto out;
	if (strcmp(have, recorded) == 0) {
		/* recorded; a kill before the backups went left this one */
		if (unlinkat(dfd, bak, 0) == 0)
			ret = 1;
		else if (errno == ENOENT)
			ret = 0;
		else
			unpkg_err_sys(err, "cannot remove %s", bak);
		goto out;
	}
	if (put_back(dfd, dist, tmp, err) < 0 ||
	    (regular_at(dfd, bak) && put_back(dfd, bak, dist, err) < 0))
		goto out;
	ret = 1;
out:
	free(dist);
	free(tmp);
	free(bak);
	return ret;
}

int configure_shipped_hashes(struct run *r, struct pkg *p,
			     struct unpkg_err *err)
{
	struct unpkg_filelist *l = &p->files;
	size_t i;

	l->files = calloc(p->nconffiles != 0 ? p->nconffiles : 1,
			  sizeof(*l->files));
	if (l->files == NULL)
		return unpkg_err_nomem(err);
	l->cap = p->nconffiles;
	for (i = 0; i < p->nconffiles; i++) {
		struct unpkg_file *f = &l->files[l->count];
		const char *path = p->conffiles[i].path, *base;
		char *tmp = NULL;
		int dfd, ret = -1;

		f->path = strdup(path);
		if (f->path == NULL)
			return unpkg_err_nomem(err);
		f->type = UNPKG_ENTRY_FILE;
		l->count++;
		if (unpkg_strmap_put(&l->index, f->path,
				     (void *)(uintptr_t)l->count, NULL,
				     err) < 0)
			return -1;
		/* without NAME.dpkg-new (settled already), the hash
		 * recorded stays */
		run_recorded_hash(p, path, f->md5);
		dfd = unpkg_root_open_parent(r->root,
					     unpkg_divert_use(r->divs, path,
							      p->name) + 1,
					     &base, err);
		if (dfd < 0) {
			if (err->errnum != ENOENT)
				return -1;
			unpkg_err_init(err);
			continue;
		}
		if (asprintf(&tmp, "%s.dpkg-new", base) < 0) {
			tmp = NULL;
			unpkg_err_nomem(err);
		} else if (resume_conffile(dfd, base, f->md5, err) < 0 ||
			   resume_dist(dfd, base, f->md5, err) < 0) {
			ret = -1;
		} else if (faccessat(dfd, tmp, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
			ret = file_md5(dfd, tmp, f->md5, err);
		} else if (errno != ENOENT) {
			unpkg_err_sys(err, "cannot stat %s", tmp);
		} else if (strcmp(f->md5, "newconffile") == 0 &&
			   faccessat(dfd, base, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
			/* a new conffile renamed into place by a run killed
			 * before its record: its hash is the file's */
			ret = file_md5(dfd, base, f->md5, err);
		} else {
			ret = 0;
		}
		free(tmp);
		close(dfd);
		if (ret < 0)
			return -1;
	}
	return 0;
}

/* dpkg's "processing: configure" line and log line of `p`.  dpkg's log
 * line names the installed version and the available one: the archive's
 * with -i, none from the database (unless ADMINDIR/available, which
 * unpkg does not read, lists it). */
static void configure_processing(struct run *r, struct pkg *p)
{
	unpkg_event_processing(r->o->events, "configure", p->key, p->arch,
			       p->version,
			       p->debpath != NULL ? p->version : NULL);
}

/* Was `p` half-configured when the run began (a failed postinst of an
 * earlier run, or an interrupted one)?  Its conffiles are settled. */
static int settled(const struct pkg *p)
{
	return p->debpath == NULL &&
	       p->old_state == UNPKG_STATUS_HALF_CONFIGURED;
}

/* Put state `status` of `p` in memory without its status line: the line
 * comes at the package's turn, as dpkg writes it. */
static int put_quietly(struct run *r, struct pkg *p, enum unpkg_status status,
		       struct unpkg_err *err)
{
	char shown[sizeof(p->shown)];
	int ret;

	memcpy(shown, p->shown, sizeof(shown));
	snprintf(p->shown, sizeof(p->shown), "%s", unpkg_status_name(status));
	ret = run_put_state(r, p, "ok", status, err);
	memcpy(p->shown, shown, sizeof(shown));
	return ret;
}

/* The events of a package held back until its turn: the run settles
 * the conffiles of every package before the first postinst, dpkg each
 * package's at its turn, between its unpacked and half-configured
 * lines. */
struct held_event {
	enum unpkg_event_kind kind;
	char *package, *message, *action;
};

struct held {
	struct held_event *v;
	size_t n;
};

static char *dup_or_null(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

static void hold_event(void *ctx, const struct unpkg_event *ev)
{
	struct held *h = ctx;
	struct held_event *grown = realloc(h->v, (h->n + 1) * sizeof(*grown));

	if (grown == NULL)
		return;		/* a message lost, nothing else */
	h->v = grown;
	grown[h->n].kind = ev->kind;
	grown[h->n].package = dup_or_null(ev->package);
	grown[h->n].message = dup_or_null(ev->message);
	grown[h->n].action = dup_or_null(ev->action);
	h->n++;
}

/* Deliver the held events to `to` (may be NULL: discarded) and free
 * them. */
static void replay_held(const struct unpkg_events *to, struct held *h)
{
	size_t i;

	for (i = 0; h != NULL && i < h->n; i++) {
		struct held_event *e = &h->v[i];
		struct unpkg_event ev = {
			.kind = e->kind,
			.package = e->package,
			.message = e->message,
			.action = e->action,
		};

		if (to != NULL && to->fn != NULL)
			to->fn(to->ctx, &ev);
		free(e->package);
		free(e->message);
		free(e->action);
	}
	if (h != NULL) {
		free(h->v);
		h->v = NULL;
		h->n = 0;
	}
}

/* "Setting up": its held events, half-configured, the postinst if it has
 * one, then installed, in memory, each with its status line. */
static int configure_one(struct run *r, struct pkg *p, struct held *held,
			 struct unpkg_err *err)
{
	int ok = 1;

	unpkg_event_emit(r->o->events, UNPKG_EV_PROGRESS, p->key,
			 "Setting up %s (%s) ...", p->key, p->version);
	configure_processing(r, p);
	run_status_event(r, p, p->arch, p->version,
			 settled(p) ? "half-configured" : "unpacked");
	replay_held(r->o->events, held);
	if (run_put_state(r, p, "ok", UNPKG_STATUS_HALF_CONFIGURED, err) < 0)
		return -1;
	if (p->scripts[maint_index("postinst")].present)
		ok = maint_postinst(r, p, err);
	if (ok <= 0)
		return ok;
	p->state = PKG_INSTALLED;
	return run_put_state(r, p, "ok", UNPKG_STATUS_INSTALLED, err);
}

int configure_order(size_t n, const struct configure_steps *st, void *ctx)
{
	size_t *queue, head = 0, tail = 0, cap = n + 1, waited = 0, i;
	int level = 0, ret = -1, ok;

	queue = malloc(cap * sizeof(*queue));
	if (queue == NULL)
		return -1;
	for (i = 0; i < n; i++)
		if (st->pending(ctx, i))
			queue[tail++ % cap] = i;
	while (head != tail) {
		i = queue[head++ % cap];
		if (!st->pending(ctx, i))
			continue;
		ok = st->ready(ctx, i, level);
		if (ok < 0)
			goto out;
		if (ok == 0) {
			/* to the end of the queue; a whole round without
			 * progress raises the level */
			queue[tail++ % cap] = i;
			if (++waited >= tail - head) {
				level++;
				waited = 0;
			}
			continue;
		}
		if (level > 0 && st->pick != NULL) {
			size_t c = st->pick(ctx, i);

			if (c != i) {
				queue[tail++ % cap] = i;
				i = c;
			}
		}
		if (st->configure(ctx, i, level) < 0)
			goto out;
		waited = 0;
		level = 0;
	}
	ret = 0;
out:
	free(queue);
	return ret;
}

/* --- the phase -------------------------------------------------------------- */

/* The configuration of the run, planned (the outcome of each postinst
 * taken as success) or carried out. */
struct plan {
	struct run *r;
	struct unpkg_err *err;
	int real;		/* carrying out, not planning */
	/* planning: the package is to be configured (1), or fails (2) */
	unsigned char *fate;
	/* the transaction's entries of each package's conffiles */
	struct unpkg_commit_savepoint *sp;
	unsigned char *staged;
	struct held *held;	/* each package's events until its turn */
};

/* The package of the run that `dp` is, or NULL. */
static struct pkg *run_pkg(struct run *r, const struct unpkg_db_pkg *dp,
			   size_t *index)
{
	size_t i;

	for (i = 0; i < r->npkgs; i++)
		if (r->pkgs[i].key != NULL && r->pkgs[i].refused == NULL &&
		    (r->pkgs[i].state == PKG_CONFIGURING ||
		     r->pkgs[i].state == PKG_INSTALLED ||
		     r->pkgs[i].state == PKG_FAILED) &&
		    strcmp(r->pkgs[i].key, dp->key) == 0) {
			*index = i;
			return &r->pkgs[i];
		}
	return NULL;
}

static enum unpkg_status plan_state(void *ctx, const struct unpkg_db_pkg *dp,
				    int *queued)
{
	struct plan *pl = ctx;
	size_t i;
	struct pkg *p = run_pkg(pl->r, dp, &i);
	enum unpkg_status st = unpkg_db_pkg_state(dp);

	*queued = 0;
	if (p == NULL)
		return st;
	if (!pl->real) {
		if (pl->fate[i] == 1)
			return UNPKG_STATUS_INSTALLED;
		*queued = pl->fate[i] == 0 && p->state == PKG_CONFIGURING;
		return st;
	}
	*queued = p->state == PKG_CONFIGURING;
	return st;
}

static int plan_pending(void *ctx, size_t i)
{
	const struct plan *pl = ctx;

	if (pl->r->pkgs[i].state != PKG_CONFIGURING)
		return 0;
	return pl->real || pl->fate[i] == 0;
}

/* The verdict on the dependencies of package i at `level` (above 0: a
 * cycle is broken at it), its reasons in `why`. */
static int plan_verdict(struct plan *pl, size_t i, int level, char *why,
			size_t whylen, enum depends_verdict *v)
{
	const struct depends_view view = { plan_state, pl };

	why[0] = '\0';
	return depends_configure(pl->r, &pl->r->pkgs[i], &view, level > 0,
				 why, whylen, v, pl->err);
}

static int plan_ready(void *ctx, size_t i, int level)
{
	struct plan *pl = ctx;
	enum depends_verdict v;
	char why[4096];

	if (pl->r->pkgs[i].refused != NULL)
		return 1;
	if (plan_verdict(pl, i, level, why, sizeof(why), &v) < 0)
		return -1;
	if (level > 0)
		return 1;
	/* with --force-depends, what cannot be met waits for the rest,
	 * as in dpkg */
	return v == DEPENDS_OK ||
	       (v == DEPENDS_HALT && !(pl->r->o->force & UNPKG_FORCE_DEPENDS));
}

/* A package of the run that will not be configured now: its conffiles
 * back to NAME.dpkg-new, unpacked again (both as before the run). */
static int unconfigure(struct plan *pl, size_t i, struct unpkg_err *err)
{
	struct pkg *p = &pl->r->pkgs[i];

	if (!pl->staged[i])
		return 0;
	unpkg_commit_undo(pl->r->commit, &pl->sp[2 * i], &pl->sp[2 * i + 1]);
	pl->staged[i] = 0;
	return put_quietly(pl->r, p, UNPKG_STATUS_UNPACKED, err);
}

/* dpkg's --abort-after: too many packages failed; the rest stays as it
 * was.  1 when it stops. */
static int too_many(struct plan *pl)
{
	struct run *r = pl->r;
	unsigned int limit = r->o->abort_after != 0 ? r->o->abort_after : 50;
	size_t i;

	if ((unsigned int)r->failed < limit)
		return 0;
	for (i = 0; i < r->npkgs; i++) {
		if (r->pkgs[i].state != PKG_CONFIGURING)
			continue;
		if (unconfigure(pl, i, pl->err) < 0)
			return -1;
		r->pkgs[i].state = PKG_UNPACKED;
	}
	unpkg_event_emit(r->o->events, UNPKG_EV_NOTICE, NULL,
			 "too many errors, stopping");
	return 1;
}

static int plan_configure(void *ctx, size_t i, int level)
{
	struct plan *pl = ctx;
	struct run *r = pl->r;
	struct pkg *p = &r->pkgs[i];
	enum depends_verdict v;
	struct unpkg_err perr;
	char why[4096];
	int ok;

	if (p->refused != NULL) {
		/* a name --configure cannot configure, at its turn */
		if (!pl->real) {
			pl->fate[i] = 2;
			return 0;
		}
		unpkg_err_init(&perr);
		unpkg_err_set(&perr, UNPKG_ERR_USAGE, "%s", p->refused);
		run_fail_pkg(r, p, p->key, &perr);
		return too_many(pl) < 0 ? -1 : 0;
	}
	if (plan_verdict(pl, i, level, why, sizeof(why), &v) < 0)
		return -1;
	if (v != DEPENDS_OK && (r->o->force & UNPKG_FORCE_DEPENDS)) {
		if (pl->real)
			unpkg_event_emit(r->o->events, UNPKG_EV_WARNING,
					 p->key, "%s: dependency problems, "
					 "but configuring anyway as you "
					 "requested:%s\n", p->key, why);
		v = DEPENDS_OK;
	}
	if (!pl->real) {
		pl->fate[i] = v == DEPENDS_HALT ? 2 : 1;
		return 0;
	}
	if (v == DEPENDS_HALT) {
		unpkg_event_emit(r->o->events, UNPKG_EV_NOTICE, p->key,
				 "dependency problems prevent configuration "
				 "of %s:%s\n", p->key, why);
		unpkg_err_init(&perr);
		unpkg_err_set(&perr, UNPKG_ERR_DEPENDS, "dependency problems "
			      "- leaving unconfigured");
		replay_held(NULL, &pl->held[i]);
		if (unconfigure(pl, i, pl->err) < 0)
			return -1;
		run_fail_pkg(r, p, p->key, &perr);
	} else {
		ok = configure_one(r, p, &pl->held[i], pl->err);
		if (ok < 0)
			return -1;
	}
	return too_many(pl) < 0 ? -1 : 0;
}

/* The packages of the run pending configuration that package k's
 * Pre-Depends and Depends name (providers aside): the edges of dpkg's
 * search for a cycle.  Their indexes in `out` (r->npkgs long); how
 * many. */
static size_t pending_deps(struct plan *pl, size_t k, size_t *out)
{
	struct run *r = pl->r;
	struct unpkg_relations rels[2];
	struct unpkg_err ignored;
	size_t n = 0, f, a, b, j;

	unpkg_err_init(&ignored);
	/* a field that does not parse names none */
	(void)unpkg_para_depends(&r->pkgs[k].control, 1, rels, &ignored);
	for (f = 0; f < 2; f++)
		for (a = 0; a < rels[f].count; a++)
			for (b = 0; b < rels[f].rels[a].count; b++)
				for (j = 0; j < r->npkgs; j++)
					if (n < r->npkgs &&
					    plan_pending(pl, j) &&
					    r->pkgs[j].name != NULL &&
					    strcmp(r->pkgs[j].name,
						   rels[f].rels[a].alts[b].name) == 0)
						out[n++] = j;
	unpkg_para_depends_destroy(rels);
	return n;
}

static int has_postinst(const struct pkg *p)
{
	return p->scripts[maint_index("postinst")].present;
}

/* dpkg's findbreakcycle() from package k at depth `depth` of `path`:
 * on the first cycle found, the package whose dependency dpkg breaks:
 * walking back from the last package of the cycle, the first without a
 * postinst, else the one the cycle closes on.  SIZE_MAX: none found. */
static size_t find_cycle(struct plan *pl, size_t k, size_t *path,
			 size_t depth, unsigned char *mark)
{
	size_t n = pl->r->npkgs, *deps = calloc(n != 0 ? n : 1, sizeof(*deps));
	size_t nd, d, j, found = SIZE_MAX;

	if (deps == NULL)
		return SIZE_MAX;
	path[depth] = k;
	mark[k] = 1;		/* on the path */
	nd = pending_deps(pl, k, deps);
	for (d = 0; d < nd && found == SIZE_MAX; d++) {
		size_t t = deps[d];

		if (mark[t] == 1) {
			for (j = depth + 1; j-- > 0 && path[j] != t;)
				if (!has_postinst(&pl->r->pkgs[path[j]]))
					break;
			found = j != SIZE_MAX && path[j] != t ? path[j] : t;
		} else if (mark[t] == 0 && depth + 1 < n) {
			found = find_cycle(pl, t, path, depth + 1, mark);
		}
	}
	mark[k] = 2;		/* searched */
	free(deps);
	return found;
}

static size_t plan_pick(void *ctx, size_t i)
{
	struct plan *pl = ctx;
	size_t n = pl->r->npkgs, *path = calloc(n, sizeof(*path)), c;
	unsigned char *mark = calloc(n, 1);

	c = path != NULL && mark != NULL ? find_cycle(pl, i, path, 0, mark)
					 : SIZE_MAX;
	free(path);
	free(mark);
	return c != SIZE_MAX ? c : i;
}

static const struct configure_steps plan_steps = {
	plan_pending, plan_ready, plan_configure, plan_pick,
};

/* stage_conffiles() for package i, its events held until its turn;
 * not where the administrator is asked (the question comes with its
 * status line). */
static int stage_held(struct plan *pl, size_t i, struct unpkg_err *err)
{
	struct run *r = pl->r;
	const struct unpkg_install_opts *o = r->o;
	struct unpkg_install_opts quiet = *o;
	struct unpkg_events sink = { hold_event, &pl->held[i] };
	int ret;

	if (o->conffile_ask != NULL)
		return stage_conffiles(r, &r->pkgs[i], err);
	quiet.events = &sink;
	r->o = &quiet;
	ret = stage_conffiles(r, &r->pkgs[i], err);
	r->o = o;
	return ret;
}

/* Stage the conffiles of the packages the plan configures, each between
 * its savepoints.  1: some entries staged; 0: none; -1: error. */
static int stage_planned(struct plan *pl, struct unpkg_err *err)
{
	struct run *r = pl->r;
	size_t i;
	int any = 0;

	for (i = 0; i < r->npkgs; i++) {
		struct pkg *p = &r->pkgs[i];
		struct unpkg_err perr;
		int ok;

		if (p->state != PKG_CONFIGURING || pl->fate[i] != 1 ||
		    settled(p) || p->nconffiles == 0)
			continue;
		unpkg_err_init(&perr);
		unpkg_commit_savepoint(r->commit, &pl->sp[2 * i]);
		ok = stage_held(pl, i, &perr);
		if (ok < 0) {
			*err = perr;
			return -1;
		}
		if (ok == 0) {
			/* the answer failed it: it stays unpacked, its
			 * conffiles waiting as NAME.dpkg-new, as dpkg
			 * leaves it */
			unpkg_commit_rollback(r->commit, &pl->sp[2 * i]);
			run_fail_pkg(r, p, p->key, &perr);
			continue;
		}
		unpkg_commit_savepoint(r->commit, &pl->sp[2 * i + 1]);
		pl->staged[i] = 1;
		any = 1;
	}
	return any;
}

/* The record hook of the conffiles' commit: the packages whose
 * conffiles were staged half-configured with their new hashes, handed to
 * the commit's sync with the renames. */
static int record_settled(void *ctx, struct unpkg_err *err)
{
	struct plan *pl = ctx;
	size_t i;

	for (i = 0; i < pl->r->npkgs; i++)
		if (pl->staged[i] &&
		    put_quietly(pl->r, &pl->r->pkgs[i],
				UNPKG_STATUS_HALF_CONFIGURED, err) < 0)
			return -1;
	return run_db_stage(pl->r, err);
}

/* The same hook when no postinst is to run: nothing can fail or see a
 * state between the renames and the end, so the packages are configured
 * here and their end states handed to the sync instead. */
static int record_unscripted(void *ctx, struct unpkg_err *err)
{
	struct plan *pl = ctx;

	pl->real = 1;
	if (configure_order(pl->r->npkgs, &plan_steps, pl) < 0)
		return -1;
	return run_db_stage(pl->r, err);
}

/* Has a package about to be configured a postinst? */
static int any_postinst(const struct run *r)
{
	size_t i;

	for (i = 0; i < r->npkgs; i++)
		if (r->pkgs[i].state == PKG_CONFIGURING &&
		    r->pkgs[i].scripts[maint_index("postinst")].present)
			return 1;
	return 0;
}

int configure_pkgs(struct run *r, struct unpkg_err *err)
{
	const struct unpkg_commit_hooks hooks = {
		.renamed = record_settled,
		.ctx = NULL,
	};
	struct unpkg_commit_hooks h = hooks;
	struct plan pl = { r, err, 0, NULL, NULL, NULL, NULL };
	double t = unpkg_now();
	size_t i;
	int any = 0, staged, ret = -1;

	for (i = 0; i < r->npkgs; i++)
		if (r->pkgs[i].state == PKG_UNPACKED) {
			r->pkgs[i].state = PKG_CONFIGURING;
			any = 1;
		}
	if (!any)
		goto done;
	pl.fate = calloc(r->npkgs, 1);
	pl.staged = calloc(r->npkgs, 1);
	pl.sp = calloc(2 * r->npkgs, sizeof(*pl.sp));
	pl.held = calloc(r->npkgs, sizeof(*pl.held));
	if (pl.fate == NULL || pl.staged == NULL || pl.sp == NULL ||
	    pl.held == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	/* The plan, every postinst taken to succeed: whose conffiles are
	 * settled before any postinst runs. */
	if (configure_order(r->npkgs, &plan_steps, &pl) < 0)
		goto fail;
	staged = stage_planned(&pl, err);
	if (staged < 0)
		goto fail;
	/* The conffiles' renames and the half-configured state recording
	 * their new hashes are made durable by one sync: the status is
	 * written after the renames, put in place after the sync.  Nothing
	 * else need be durable before the postinsts: unpacked and
	 * half-configured both have the next run run them again. */
	if (staged || !any_postinst(r)) {
		h.ctx = &pl;
		/* Nothing renamed and no postinst: the end states go with
		 * this sync.  Conffiles renamed leave backups, which may go
		 * only once the new hashes are durable, and must go before
		 * the end states are: a run killed while removing them finds
		 * the packages half-configured and removes the rest
		 * (resume_conffile()). */
		if (!staged)
			h.renamed = record_unscripted;
		if (run_finish(r, &h, err) < 0 || run_db_publish(r, err) < 0)
			goto fail;
		run_release(r);
	}
	if (!pl.real) {
		pl.real = 1;
		if (configure_order(r->npkgs, &plan_steps, &pl) < 0)
			goto keep;
	}
	/* One durable write for the end states of every package. */
	if (r->db_dirty && run_write_db(r, err) < 0)
		goto keep;
	run_release(r);
done:
	run_timed(r, UNPKG_PHASE_CONFIGURE, t);
	ret = 0;
	goto out;
keep:
	/* From the first postinst on the conffiles stay: a script may
	 * have used them. */
	run_release(r);
	goto out;
fail:
	/* Back to unpacked, conffiles waiting as NAME.dpkg-new: the caller
	 * writes the database once more, without retrying a failed sync. */
	unpkg_commit_abort(r->commit);
	for (i = 0; i < r->npkgs; i++) {
		struct pkg *p = &r->pkgs[i];
		struct unpkg_err ignored;

		if ((p->state != PKG_CONFIGURING &&
		     p->state != PKG_INSTALLED) || p->refused != NULL)
			continue;
		unpkg_err_init(&ignored);
		p->state = PKG_UNPACKED;
		if (p->debpath == NULL ||
		    run_put_state(r, p, "ok", UNPKG_STATUS_UNPACKED,
				  &ignored) < 0)
			run_restore_pkg(r, p);
		r->db_dirty = 1;
	}
out:
	for (i = 0; pl.held != NULL && i < r->npkgs; i++)
		replay_held(NULL, &pl.held[i]);	/* what never got a turn */
	free(pl.held);
	free(pl.fate);
	free(pl.staged);
	free(pl.sp);
	return ret;
}
