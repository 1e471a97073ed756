/* install-impl.h - what the parts of the install pipeline share
 * (install.c: the run; maint.c: the maintainer scripts).  Private to
 * libunpkg. */
#ifndef UNPKG_INSTALL_IMPL_H
#define UNPKG_INSTALL_IMPL_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "commit.h"
#include "control.h"
#include "db.h"
#include "deb.h"
#include "extract.h"
#include "fsroot.h"
#include "install.h"
#include "force.h"
#include "strmap.h"
#include "trigger.h"

/* The maintainer scripts, in maint.c's order. */
#define MAINT_NSCRIPTS 4

struct maint_script {
	unsigned char *data;	/* the new version's, kept for the
				 * fallbacks after its archive is closed */
	size_t size;
	int present;
};

enum pkg_state {
	PKG_FAILED,
	PKG_OPENED,		/* control read and checked */
	PKG_MARKED,		/* half-installed in the database */
	PKG_EXTRACTED,		/* staged in the transaction */
	PKG_UNPACKED,
	PKG_CONFIGURING,	/* conffiles staged, to be configured */
	PKG_INSTALLED,
};

/* An installed package to deconfigure before a package of the run is
 * unpacked (--auto-deconfigure, Breaks), as dpkg does. */
struct deconf {
	char *name, *arch, *key;	/* arch NULL for none */
	char *version;
	char *stanza;		/* its stanza before, to put back */
	int marked;		/* half-configured by this run */
	/* a package removed in favour of the one of the run (Conflicts and
	 * Replaces): its prerm "remove in-favour" was tried (postinst
	 * abort-remove on failure); it was removed (nothing to unwind) */
	int prerm_tried, removed;
};

struct conffile {
	char *path;		/* "/etc/foo.conf" */
	char *flags;		/* "remove-on-upgrade", or NULL */
};

struct pkg {
	const char *debpath;
	struct unpkg_deb *deb;
	char shown[24];		/* the state of its last status line */
	struct unpkg_para control;
	char *name;		/* folded to lower case, as dpkg does */
	const char *version, *arch;
	char *key;		/* info/ prefix and display name */
	char *label;		/* "name version", for conflict messages */
	char *old_stanza;	/* the stanza before the run, or NULL */
	char *old_version;	/* its Version, or NULL */
	char *config_version;	/* the last configured version, or NULL */
	char *old_conffiles;	/* its Conffiles value, or NULL */
	char **old_files;	/* its file list, or NULL */
	size_t nold_files;
	char **obsolete_info;	/* info/ files of the old version the new
				 * one does not ship */
	size_t nobsolete_info;
	/* paths of the old list the new version lacks (not its conffiles) */
	const char **obsolete;
	size_t nobsolete;
	const char **late_rmdir;	/* obsolete directories to remove after
					 * the record */
	size_t nlate_rmdir;
	/* old conffiles the new version does not ship: kept, and recorded
	 * as obsolete with their hash, as dpkg does */
	struct conffile *obsolete_conf;	/* flags holds the hash */
	size_t nobsolete_conf;
	struct conffile *conffiles;
	size_t nconffiles;
	struct unpkg_strmap confmap;	/* path -> struct conffile * */
	struct unpkg_filelist files;
	struct maint_script scripts[MAINT_NSCRIPTS];
	struct maint_script triggers;	/* the "triggers" member */
	char *awaited;		/* Triggers-Awaited: the packages whose
				 * triggers it activated, or NULL */
	/* files it takes over from installed packages (Replaces): pairs of
	 * the owner's key and the path, malloc'd */
	char **taken;
	size_t ntaken;
	/* the stanzas of packages it replaced completely ("disappeared"),
	 * to put back if the package fails */
	char **gone;
	size_t ngone;
	/* what it deconfigures first (freed by maint_free_scripts()) */
	struct deconf *deconf;
	size_t ndeconf;
	/* what it removes after its unpack (Conflicts with Replaces; the
	 * same struct, freed with the others) */
	struct deconf *removals;
	size_t nremovals;
	char **late_paths;	/* the removals' paths in late_rmdir */
	size_t nlate_paths;
	char *removal_failed;	/* why a removal failed (p stays unpacked,
				 * not configured), or NULL */
	char *old_status;	/* the old version's status word, or NULL */
	char *old_arch;		/* its Architecture, or NULL */
	int old_prerm;		/* it has a prerm */
	int prerm_ran;		/* its prerm upgrade ran (step 1) */
	/* the transaction's entries of this package: [sp_from, sp_to) */
	struct unpkg_commit_savepoint sp_from, sp_to;
	int upgrade;		/* a version other than config-files is
				 * installed: dpkg's "upgrade", not "install" */
	enum pkg_state state;
};

struct run {
	const struct unpkg_install_opts *o;
	struct unpkg_stats *stats;
	struct unpkg_db *db;
	struct unpkg_root *root;
	struct unpkg_root *admroot;	/* the admindir, for info/ */
	struct unpkg_commit *commit;
	struct unpkg_strmap run_files;	/* path -> "name version" of this run */
	/* name -> struct candidate chain, for dependency checks */
	struct unpkg_strmap candidates;
	int candidates_valid;
	struct candidate **cands;
	size_t ncands, capcands;
	struct unpkg_relations *provides;
	size_t nprovides;
	/* the Conflicts of the database, indexed once per state of it
	 * (conflicts.c; freed with the candidates) */
	struct conflicts_index *cindex;
	struct pkg *pkgs;
	size_t npkgs;
	int failed;
	int db_dirty;		/* stanzas changed since the last write */
	int db_handed;		/* its new files wait for the commit's sync */
	struct unpkg_triggers *trig;	/* triggers/ of the database */
	struct unpkg_statoverride *overrides;	/* dpkg-statoverride's */
	size_t noverrides;
	struct unpkg_strmap override_map;	/* path -> its override */
	struct pkg *tmp_for;	/* whose scripts are in ADMINDIR/tmp.ci */
	int tmp_used;		/* tmp.ci was made in this run */
	char force_list[512];	/* DPKG_FORCE for the scripts */
	int sync_failed;	/* a sync failed: configure nothing more */
};

/* Everything that answers to one package name: the real packages of
 * that name and every package that Provides it. */
struct candidate {
	const struct unpkg_db_pkg *pkg;
	const char *version;	/* the Version, or the provided version
				 * (NULL for an unversioned Provides) */
	int provided;
	struct candidate *next;
};

/* The candidate index of the database (r->candidates: name -> chain),
 * rebuilt when a stanza changed. */
int inst_build_candidates(struct run *r, struct unpkg_err *err);

/* Conflicts and Breaks of `p` against the installed packages, both ways
 * (conflicts.c): 1 none, 0 some (err says which, as dpkg words it; with
 * --force-conflicts / --force-breaks a warning instead, and 1), -1
 * error. */
int inst_check_conflicts(struct run *r, struct pkg *p, struct unpkg_err *err);

/* Free r->cindex (NULL-safe). */
void inst_conflicts_index_free(struct run *r);

/* At configuration, as dpkg: the Breaks of the other packages present
 * (unpacked or more) that name `p` at its version, appended to `why` in
 * dpkg's words.  1 none, 0 some, -1 error. */
int inst_check_breakers(struct run *r, const struct pkg *p, char *why,
			size_t whylen, struct unpkg_err *err);

/* Is a package of the run staged but not committed yet that `p`
 * Replaces at its version, or that Replaces `p` at p's (any, with
 * --force-overwrite) (conflicts.c)?  dpkg has it unpacked when `p` comes: the caller
 * commits it first, so that the files pass from one to the other as in
 * dpkg. */
int inst_replaces_staged(const struct run *r, const struct pkg *p);

/* Report a failed package and release what it holds. */
void inst_fail_pkg(struct run *r, struct pkg *p, const char *what,
		   const struct unpkg_err *err);

/* Report the state `status` of `p` (version `version`, architecture
 * `arch`) as dpkg's status line, unless it is the state its last status
 * line named: dpkg writes one when the state changes. */
void inst_status_event(struct run *r, struct pkg *p, const char *arch,
		       const char *version, const char *status);

/* Put stanza `text` for `p` into the database in memory and report the
 * state change (of version `version`, architecture `arch`). */
int inst_put_stanza(struct run *r, struct pkg *p, const char *text,
		    const char *arch, const char *version, const char *status,
		    struct unpkg_err *err);

/* Set the package's stanza (the new version's) in memory. */
int inst_put_state(struct run *r, struct pkg *p, const char *flag,
		   const char *status, struct unpkg_err *err);

/* The stanza dpkg leaves for a package new to the system that failed:
 * its name, state, priority, section and architecture (and version unless
 * not-installed), in memory. */
int inst_put_stub(struct run *r, struct pkg *p, const char *flag,
		  const char *status, struct unpkg_err *err);

/* Put the stanza back as it was before the run, in memory. */
void inst_restore_pkg(struct run *r, struct pkg *p);

/* Make the in-memory database durable. */
int inst_write_db(struct run *r, struct unpkg_err *err);

/* Put back the files of `p` renamed in this transaction. */
void inst_undo_files(struct run *r, struct pkg *p);

/* maint.c: the maintainer-script steps of lib/script.h.  Each returns 1
 * to go on, 0 when the package failed (reported, its state set), -1 on a
 * system error. */
int maint_save_scripts(struct pkg *p, struct unpkg_err *err);
void maint_free_scripts(struct pkg *p);
int maint_index(const char *name);
/* The old version was configured (or half-configured, or awaiting
 * triggers): an upgrade deconfigures it first (step 1). */
int maint_configured_before(const struct pkg *p);
int maint_prerm(struct run *r, struct unpkg_err *err);
int maint_preinst(struct run *r, struct pkg *p, struct unpkg_err *err);
int maint_postrm(struct run *r, struct pkg *p, struct unpkg_err *err);
int maint_postinst(struct run *r, struct pkg *p, struct unpkg_err *err);
/* Installed package `d` in state `status`, its stanza as it was with
 * Config-Version (config-files: without Essential and Protected), in
 * memory. */
int maint_other_state(struct run *r, struct deconf *d, const char *status,
		      struct unpkg_err *err);
/* Run script `name` of installed package `d` from info/: 1 success (or no
 * script), 0 failed (*why), -1 error. */
int maint_run_other(struct run *r, const struct deconf *d, const char *name,
		    const char *const *argv, char *why, size_t whysize,
		    struct unpkg_err *err);
int maint_disappear(struct run *r, const struct unpkg_db_pkg *q,
		    const struct pkg *p, struct unpkg_err *err);
void maint_tmp_clean(struct run *r);
/* After the unpack phase: the packages deconfigured for a package that
 * failed get "postinst abort-deconfigure" (back to installed if it
 * works), in memory: the caller writes the database. */
int maint_deconfigure_unwind(struct run *r, struct unpkg_err *err);
/* After the configure phase of -i: the packages deconfigured for a
 * package of the run stay half-configured, each reported as a failed
 * configuration with what breaks it, as dpkg does (it queues them for
 * configuration, which the package that broke them prevents). */
int maint_deconfigured_report(struct run *r, struct unpkg_err *err);


/* --- install.c's helpers shared with remove.c ---------------------------- */

/* A growing string: s is NULL until something is added. */
struct text {
	char *s;
	size_t len, cap;
};

/* Append printf-style to `t`. */
int inst_text_add(struct text *t, struct unpkg_err *err, const char *fmt,
		  ...) __attribute__((format(printf, 3, 4)));

/* Write info/KEY.NAME.dpkg-new (in commit directory `dir`, info/) and
 * stage it to become info/KEY.NAME. */
int inst_stage_info(struct run *r, const char *key, int dir,
		    const char *member, const void *data, size_t len,
		    mode_t mode, struct unpkg_err *err);

/* lstat `path` ("/usr/bin/x") beneath the root; 0 on success. */
int inst_lstat_in_root(struct run *r, const char *path, struct stat *st);

/* Remove directory `path` of `p` once it is empty, after the record
 * (late_rmdirs()): a directory that could not be moved aside whole.
 * `path` is not copied: it must live as long as `p`. */
int inst_add_late_rmdir(struct pkg *p, const char *path,
			struct unpkg_err *err);

/* 1 if every entry beneath directory `name` in `dfd` (the old path
 * `path`) is in `gone`, 0 if not, -1 on error. */
int inst_all_gone(int dfd, const char *name, const char *path,
		  const struct unpkg_strmap *gone, struct unpkg_err *err);

/* Register with the commit the directory holding `path` ("/usr/x")
 * beneath the root; its handle, or -1. */
int inst_parent_dir(struct run *r, const char *path, struct unpkg_err *err);

/* Move `path` ("/usr/x", of `p`, or of `who`'s removal) aside with the
 * transaction (`dir`: the commit directory holding it; is_dir: a
 * directory, with what is left in it) and note it in `moved`; a
 * directory on another file system than its parent is removed after the
 * record instead (inst_add_late_rmdir(): `path` must live as long as
 * `p`); any other failure is only warned about, as dpkg does. */
int inst_move_aside(struct run *r, struct pkg *p, const char *who,
		    const char *path, int dir, int is_dir,
		    struct unpkg_strmap *moved, struct unpkg_err *err);

/* 1 if an ancestor of `path` is in `moved`. */
int inst_under_moved(const char *path, const struct unpkg_strmap *moved);

/* Put back info/NAME, moved aside as NAME.dpkg-tmp by an interrupted
 * run, where nothing has taken its name.  0, or -1 with errno set. */
int inst_unmove_info(int dfd, const char *name);

/* Move the info/KEY.* files aside with the transaction (`dir`: the
 * commit's info/), but the members named in `keep` (NULL-terminated, or
 * NULL). */
int inst_remove_info(struct run *r, const char *key, int dir,
		     const char *const *keep, struct unpkg_err *err);

/* The database entry of "name" or "name:arch", or NULL. */
const struct unpkg_db_pkg *inst_find_key(const struct run *r,
					 const char *key);

/* --- remove.c: a package removed in favour of one it conflicts with ------ */

/* Remove package `d` in favour of `p`, now unpacked, as dpkg does (see
 * remove.c); its new state is put in memory, recorded with p's. */
int inst_remove_one(struct run *r, struct pkg *p, struct deconf *d,
		    struct unpkg_err *err);

/* Delete what a run killed after the record of such a removal left. */
void inst_sweep_removed(struct run *r);

#endif
