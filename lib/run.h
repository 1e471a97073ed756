/* run.h - the state of one run (struct run, struct pkg), and the only
 * place that changes a package's database entry.
 *
 * A run's phases (install.c's pipeline) read this state and change it;
 * a package's stanza in the database changes only through run_put() and
 * the functions below built on it, which mark the candidate and Conflicts
 * indexes stale and the database dirty (to be written) with every change,
 * and report the package's new state through an UNPKG_EV_PKG_STATUS
 * event where they say so.  Private to libunpkg. */
#ifndef UNPKG_RUN_H
#define UNPKG_RUN_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "buf.h"
#include "commit.h"
#include "control.h"
#include "db.h"
#include "statoverride.h"
#include "deb.h"
#include "divert.h"
#include "extract.h"
#include "force.h"
#include "fsroot.h"
#include "install-opts.h"
#include "pkgindex.h"
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
	char *debshown;		/* debpath as dpkg's progress lines show it */
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
	/* its interests before the record changed them ("triggers"
	 * member text), for run_restore_pkg(); set with interests_saved */
	struct unpkg_buf old_interests;
	int interests_saved;
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
	/* what it deconfigures first (freed by run_free_scripts()) */
	struct deconf *deconf;
	size_t ndeconf;
	/* what it removes after its unpack (Conflicts with Replaces; the
	 * same struct, freed with the others) */
	struct deconf *removals;
	size_t nremovals;
	char *removal_failed;	/* why a removal failed (p stays unpacked,
				 * not configured), or NULL */
	char *refused;		/* --configure: why the package named
				 * cannot be configured, reported at its
				 * turn, or NULL */
	enum unpkg_status old_state;	/* the old version's state, or
					 * UNPKG_STATUS_INVALID without one */
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
	/* environment: what the run works on, opened by the plan */
	const struct unpkg_install_opts *o;
	struct unpkg_stats *stats;
	struct unpkg_db *db;
	struct unpkg_root *root;
	struct unpkg_root *admroot;	/* the admindir, for info/ */
	struct unpkg_commit *commit;
	struct unpkg_triggers *trig;	/* triggers/ of the database */
	struct unpkg_statoverride *overrides;	/* dpkg-statoverride's */
	size_t noverrides;
	/* dpkg-divert's, read again after each preinst */
	struct unpkg_diversions *divs;
	/* the root is an overlayfs: moving a file of its image aside first
	 * copies the file up (unpkg_fsclass_copies_up()) */
	int root_copies_up;
	char force_list[512];	/* DPKG_FORCE for the scripts */

	/* the packages of the run, in the order given */
	struct pkg *pkgs;
	size_t npkgs;

	/* indexes */
	struct unpkg_strmap run_files;	/* path -> "name version" of this run */
	/* the candidates and Conflicts of the database, for the relation
	 * checks; invalidated by every change of a stanza (run_put()) */
	struct unpkg_pkgindex index;
	struct unpkg_strmap override_map;	/* path -> its override */

	/* flags and counts */
	int failed;		/* packages failed so far */
	int db_dirty;		/* stanzas changed since the last write */
	int db_handed;		/* its new files wait for the commit's sync */
	int sync_failed;	/* a sync failed: configure nothing more */
	struct pkg *tmp_for;	/* whose scripts are in ADMINDIR/tmp.ci */
	int tmp_used;		/* tmp.ci was made in this run */
	int read_said;		/* "(Reading database ...)" was said */
};

/* Put `text` (NULL: remove the entry) as the stanza of package `name`
 * (`arch`, or NULL for none) in the database in memory: the candidate and
 * Conflicts indexes go stale and the database is marked dirty (the next
 * database write of the run makes it durable).  No event. */
int run_put(struct run *r, const char *name, const char *arch,
	    const char *text, struct unpkg_err *err);

/* run_put(), then report package `key` in state `status` (of version
 * `version`, architecture `evarch`) through an UNPKG_EV_PKG_STATUS event. */
int run_put_reported(struct run *r, const char *name, const char *arch,
		     const char *text, const char *key, const char *evarch,
		     const char *version, const char *status,
		     struct unpkg_err *err);

/* Report a failed package and release what it holds. */
void run_fail_pkg(struct run *r, struct pkg *p, const char *what,
		  const struct unpkg_err *err);

/* Report the state `status` of `p` (version `version`, architecture
 * `arch`) as dpkg's status line, unless it is the state its last status
 * line named: dpkg writes one when the state changes. */
void run_status_event(struct run *r, struct pkg *p, const char *arch,
		      const char *version, const char *status);

/* Put stanza `text` for `p` into the database in memory and report the
 * state change (of version `version`, architecture `arch`). */
int run_put_stanza(struct run *r, struct pkg *p, const char *text,
		   const char *arch, const char *version, const char *status,
		   struct unpkg_err *err);

/* Set the package's stanza (the new version's) in memory. */
int run_put_state(struct run *r, struct pkg *p, const char *flag,
		  enum unpkg_status status, struct unpkg_err *err);

/* The stanza dpkg leaves for a package new to the system that failed:
 * its name, state, priority, section and architecture (and version unless
 * not-installed), in memory. */
int run_put_stub(struct run *r, struct pkg *p, const char *flag,
		 enum unpkg_status status, struct unpkg_err *err);

/* Put the stanza, and the trigger interests the record changed, back as
 * they were before the run, in memory. */
void run_restore_pkg(struct run *r, struct pkg *p);

/* Make the in-memory database durable. */
int run_write_db(struct run *r, struct unpkg_err *err);

/* Put back the files of `p` renamed in this transaction. */
void run_undo_files(struct run *r, struct pkg *p);

/* Free the scripts `p` keeps and its lists of packages deconfigured and
 * removed for it. */
void run_free_scripts(struct pkg *p);

/* Free what package `p` holds. */
void run_pkg_destroy(struct pkg *p);

/* The hash recorded for conffile `path` of the old version of `p` (its
 * Conffiles value), or "" in `hash`. */
void run_recorded_hash(const struct pkg *p, const char *path, char hash[33]);

/* Write the database's new files now (status-new, a new info/format and
 * the trigger interest files that changed) and hand them to the commit,
 * whose next sync makes them durable with the package files;
 * run_db_publish() puts them in place after it (the interest files first,
 * triggers/ fsync'ed before status is renamed).  One sync fewer than
 * run_write_db(), and none per interest file. */
int run_db_stage(struct run *r, struct unpkg_err *err);

/* Put the staged write in place. */
int run_db_publish(struct run *r, struct unpkg_err *err);

/* run_db_publish() as a hook of unpkg_commit_finish_hooked() (ctx: the
		  * run). */
int run_db_publish_hook(void *ctx, struct unpkg_err *err);

/* A finish of the run's transaction.  If one of its syncs fails, it may
 * have been the one covering the database's files (a sync of their whole
 * file system, or the new status handed over): the database's own syncs
 * must not try again what it could not do. */
int run_finish(struct run *r, const struct unpkg_commit_hooks *h,
	       struct unpkg_err *err);

/* Add the time since `since` to phase `phase` of the run's statistics. */
void run_timed(struct run *r, enum unpkg_phase phase, double since);

/* dpkg's "(Reading database ... N files and directories currently
 * installed.)", once per run, as the first package goes ahead: N the
 * paths dpkg knows by then, each once, those the file lists name, the
 * diversions divert and file triggers watch, and with `overrides` (an
 * unpack; a removal reads no statoverrides before it) those
 * dpkg-statoverride names.  The file lists are loaded. */
int run_reading_database(struct run *r, int overrides,
			 struct unpkg_err *err);

/* Open what a run works on (options `o`): the root, the database with
 * dpkg's locks, triggers/, the statoverrides, the commit with the chosen
 * strategy, syncing the database in every mode.  Statistics go to
 * o->stats, or to `own` where that is NULL.  `r` is initialised first:
 * run_close() releases it whether this succeeds or not. */
int run_open(struct run *r, const struct unpkg_install_opts *o,
	     struct unpkg_stats *own, struct unpkg_err *err);

/* Release what the run holds, warning once if a sync of the database
 * failed, and record the strategy in its statistics. */
void run_close(struct run *r);

/* The new state is durable: the backups can go.  A failure to remove one
 * leaves debris, not damage. */
void run_release(struct run *r);

#endif
