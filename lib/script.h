/* script.h - running maintainer scripts the way dpkg 1.21 does.
 *
 * How one script is run (checked against dpkg 1.21.22 by running it with
 * scripts that record what they see; tests/check_script.c repeats the
 * comparison when dpkg is installed):
 *
 *   - The scripts live in the admin directory: "info/PKG.NAME" for an
 *     installed version, "tmp.ci/NAME" for the package being unpacked
 *     (dpkg extracts control.tar there).  Callers name them relative to
 *     the admin directory.
 *   - A script that does not exist counts as a successful one and is not
 *     run.  One that is not r-x for everybody is made mode 0755 first.
 *   - The child chroot()s into the root, unless the root is "/" or
 *     --force-script-chrootless is in effect, then chdir("/") (chrootless:
 *     chdir to the root), sets umask 022 and execs the script directly,
 *     so its "#!" line counts; a file without one is run by /bin/sh, as
 *     glibc's execvp does for dpkg.  argv[0] ($0) is the script's path as
 *     the script sees it ("/var/lib/dpkg/info/foo.postinst" when
 *     chrooted, the host path otherwise).
 *   - Environment: the caller's, plus DPKG_MAINTSCRIPT_PACKAGE,
 *     DPKG_MAINTSCRIPT_PACKAGE_REFCOUNT, DPKG_MAINTSCRIPT_ARCH,
 *     DPKG_MAINTSCRIPT_NAME, DPKG_MAINTSCRIPT_DEBUG (0),
 *     DPKG_RUNNING_VERSION, DPKG_ADMINDIR, DPKG_ROOT and DPKG_FORCE.
 *     Chrooted: DPKG_ROOT is "" and DPKG_ADMINDIR the admin directory
 *     inside the root; chrootless: both are the host paths (the root
 *     without trailing slashes); root "/": DPKG_ROOT "", DPKG_ADMINDIR
 *     the admin directory as given.  dpkg sets
 *     nothing else (DPKG_FRONTEND_LOCKED, DPKG_COLORS, ... only pass
 *     through from the caller's environment).
 *   - Signal dispositions and the signal mask are inherited; while waiting
 *     the parent ignores SIGINT and SIGQUIT (a ^C reaches the script, not
 *     the installer).  dpkg starts ignoring them just after the fork;
 *     here it is just before, the child restoring the caller's
 *     dispositions, so a script that signals its parent at once cannot
 *     race with it.
 *   - Anything failing in the child before the script starts (chroot,
 *     chdir, exec: a missing interpreter, ...) makes dpkg's child print
 *     "dpkg (subprocess): ..." and exit with status 2, which dpkg then
 *     handles as a failed script (with the fallbacks below).  The same
 *     holds for an admin directory outside the root when chrooting.
 *
 * The maintainer-script flow of "dpkg --install" (Debian Policy 6.5-6.7,
 * observed with dpkg 1.21.22; OLD is the installed version, NEW the one
 * being installed, CONF the most recently configured version: the
 * Config-Version, "" when never configured).  "old-X" is info/PKG.X of the
 * installed version, "new-X" is tmp.ci/X of the new one.  The [state] is
 * what dpkg has written to the database before the call (scripts calling
 * dpkg-query see it).  dpkg's words for each script, used in its
 * messages, are given as (desc): see unpkg_script_desc().
 *
 *   0. control.tar extracted into ADMINDIR/tmp.ci.
 *
 *   1. Only if the old version is half-configured, triggers-awaited,
 *      triggers-pending or installed:
 *        old-prerm upgrade NEW            [half-configured, reinstreq; OLD]
 *                                         (old PKG package pre-removal)
 *      If it fails: warning "<desc> subprocess returned error exit
 *      status N", notice "trying script from the new package instead ...",
 *        new-prerm failed-upgrade OLD NEW (new ... pre-removal)
 *      (a missing new prerm is an error: "there is no script in the new
 *      version of the package - giving up"); success: notice "... it
 *      looks like that went OK" and go on.  Failure: the package fails;
 *      unwind:
 *        old-postinst abort-upgrade NEW   [half-configured, reinstreq]
 *                                         (installed ... post-installation)
 *      success: installed (even when it was half-configured before);
 *      failure: left half-configured, reinstreq.
 *
 *   2. [half-installed, reinstreq; OLD, or NEW for a new package]
 *      a. The old version is at least half-installed (half-installed,
 *         unpacked, ..., installed):
 *           new-preinst upgrade OLD NEW   (new ... pre-installation)
 *         failure, unwind:
 *           new-postrm abort-upgrade OLD NEW   (new ... post-removal)
 *             failure: left half-installed, reinstreq (OLD);
 *           then, only if step 1 ran, [unpacked, OLD]:
 *           old-postinst abort-upgrade NEW
 *             success: installed; failure: left unpacked;
 *           if step 1 did not run, the state before the run is
 *           restored (seen with unpacked).
 *      b. The package is in config-files state (OLD = its version):
 *           new-preinst install OLD NEW
 *         failure: new-postrm abort-install OLD NEW; success: back to
 *         config-files; failure: half-installed, reinstreq.
 *      c. Otherwise (not installed):
 *           new-preinst install
 *         failure: new-postrm abort-install; success: not-installed;
 *         failure: half-installed, reinstreq.
 *
 *   3. The files are unpacked and renamed into place (.dpkg-tmp backups
 *      of replaced files are kept).
 *
 *   4. Only if there was an old version (case 2a):
 *        old-postrm upgrade NEW           [half-installed, reinstreq; OLD]
 *                                         (old PKG package post-removal)
 *      It runs after the renames, while the backups exist, before the
 *      files only the old version had are removed and before the status
 *      changes.  If it fails: warning + notice as in step 1, then
 *        new-postrm failed-upgrade OLD NEW (new ... post-removal)
 *      success: go on.  Failure: the package fails; unwind, in order:
 *        old-preinst abort-upgrade NEW    (installed ... pre-installation)
 *                                         run with the NEW files in place
 *        the old files are put back from the backups (always)
 *        new-postrm abort-upgrade OLD NEW (only if the previous call
 *                                         worked)
 *        old-postinst abort-upgrade NEW   [unpacked] (only if step 1 ran
 *                                         and the previous call worked)
 *      Final state: installed if all of them worked; half-installed,
 *      reinstreq (OLD) when old-preinst or new-postrm abort-upgrade
 *      failed; unpacked when old-postinst failed or step 1 did not run.
 *      After step 4 dpkg never unwinds.
 *
 *   5. Files of the old version the new one lacks are removed; the files
 *      of tmp.ci become info/PKG.*; status unpacked (NEW); backups
 *      deleted.
 *
 *   6. Configure (-i, or --configure):    [half-configured; NEW]
 *        postinst configure CONF          (installed ... post-installation)
 *      after the conffiles are in place.  CONF is passed even when empty:
 *      argv {"configure", "", NULL}.  No unwinding: on failure the
 *      package stays half-configured and the error is
 *      "<desc> subprocess returned error exit status N".
 *
 *   A reinstall of the same version is an upgrade with OLD = NEW; a
 *   downgrade takes the same path, fallbacks included (newer upstream
 *   dpkg drops the prerm fallback for downgrades; 1.21.22 keeps it).  After
 *   every script dpkg re-reads the diversions and incorporates pending
 *   trigger activations (a script may have run dpkg-divert or
 *   dpkg-trigger).  Conflicts, Breaks and disappearing packages add
 *   further calls (Policy 6.6 steps 2 and 9), not covered here.
 */
#ifndef UNPKG_SCRIPT_H
#define UNPKG_SCRIPT_H

#include <stddef.h>

#include "err.h"
#include "event.h"

/* The dpkg release whose behaviour is emulated: DPKG_RUNNING_VERSION. */
#define UNPKG_SCRIPT_DPKG_VERSION "1.21.22"

/* Everything about the package and the run that a script's environment
 * depends on.  The caller owns all strings; they must outlive the calls
 * that use the context.  One context per package and version (the arch
 * of an old and a new version may differ). */
struct unpkg_script_ctx {
	const char *instdir;	/* the root, as given: "/" for the system */
	const char *admindir;	/* the database directory, as given (host
				 * path); must be inside instdir unless
				 * chrootless or instdir is "/" */
	const char *package;	/* DPKG_MAINTSCRIPT_PACKAGE */
	const char *arch;	/* DPKG_MAINTSCRIPT_ARCH: the Architecture
				 * field of the version the script is from */
	int refcount;		/* DPKG_MAINTSCRIPT_PACKAGE_REFCOUNT: the
				 * installed instances of the package name
				 * (Multi-Arch: same), 0 means 1 */
	const char *force;	/* DPKG_FORCE (unpkg_force_names() of
				 * force.h); NULL: dpkg's defaults,
				 * "security-mac,downgrade" */
	int chrootless;		/* --force-script-chrootless */
	const char *const *env;	/* extra "NAME=VALUE" entries, NULL-
				 * terminated, may be NULL; they override the
				 * caller's environment and the DPKG_*
				 * variables above */
	const struct unpkg_events *events;	/* may be NULL */
};

/* What became of one script. */
struct unpkg_script_result {
	int ran;		/* 1: a child was started (or, for an admin
				 * directory outside the root, would have
				 * been); 0: no such script, nothing run,
				 * status 0 (dpkg counts it as success) */
	int status;		/* 0 success; else the exit status (1-255),
				 * or 128 + N when killed by signal N */
	int signo;		/* N when killed by signal N, else 0 */
	int core_dumped;	/* it dumped core */
	int child_errno;	/* the child failed before the script
				 * started (status 2, as in dpkg): the errno
				 * of chroot, chdir or exec, -1 for an admin
				 * directory outside the root; else 0 */
};

/* Run the maintainer script `script` (a path relative to ctx->admindir
 * such as "info/foo.postinst" or "tmp.ci/preinst"; no "..", not absolute)
 * with the arguments `argv` (NULL-terminated, without the script name,
 * e.g. {"configure", "1.0-1", NULL}; NULL means none).  `desc` names the
 * script in messages the way dpkg does ("new foo package pre-installation
 * script", see unpkg_script_desc()); NULL gives "maintainer script".
 *
 * The script is looked up inside the root with chroot semantics (symlinks
 * resolved beneath it) unless chrootless or the root is "/", in which
 * case the host path ADMINDIR/SCRIPT is used.  DPKG_MAINTSCRIPT_NAME is
 * the part of the script's file name after its last '.'.
 *
 * Returns 1 when the script was run (its outcome in *res: check
 * res->status), 0 when it does not exist (*res zeroed: nothing to do, a
 * success for dpkg), -1 when it could not be run at all: invalid
 * arguments (UNPKG_ERR_USAGE), the root or the script cannot be examined
 * (other than a missing script), its mode cannot be fixed, pipe, fork or
 * waitpid failed, or out of memory (err says which; dpkg stops processing
 * the package in these cases).
 *
 * A failure in the child before the script starts is not -1 but, as in
 * dpkg, a run with status 2 and res->child_errno set; its message ("unable
 * to execute DESC (PATH): ERROR", "failed to chroot to 'DIR': ERROR",
 * "admindir must be inside instdir for dpkg to work properly") is sent to
 * ctx->events as an UNPKG_EV_WARNING for ctx->package: dpkg prints it as
 * "dpkg (subprocess): ...".
 *
 * The script inherits the caller's stdin, stdout and stderr (flush stdio
 * first if the order of output matters) and every descriptor that is not
 * close-on-exec.  While it runs, SIGINT and SIGQUIT are ignored in the
 * calling process; their previous dispositions are restored before the
 * call returns (so this must not race with other threads changing them).
 * Needs root (CAP_SYS_CHROOT) unless chrootless or the root is "/". */
int unpkg_script_run(const struct unpkg_script_ctx *ctx, const char *script,
		     const char *const *argv, const char *desc,
		     struct unpkg_script_result *res, struct unpkg_err *err);

/* dpkg's description of a script, for messages: "<which> <package>
 * package <kind> script", `which` being "new" (the package being
 * installed), "old" (the first attempt of an old prerm or postrm upgrade)
 * or "installed" (any other script of the installed version), `kind`
 * "pre-installation", "post-installation", "pre-removal" or "post-removal"
 * for `name` preinst, postinst, prerm, postrm (anything else is used as
 * is).  `package` is the name dpkg shows: "foo", or "foo:arch" for a
 * Multi-Arch: same package.  Writes into buf (truncated to size) and
 * returns buf. */
char *unpkg_script_desc(char *buf, size_t size, const char *which,
			const char *package, const char *name);

/* dpkg's message for a failed script: "<desc> subprocess returned error
 * exit status N", or "<desc> subprocess was killed by signal (NAME)",
 * with ", core dumped" appended when it did.  Returns 1 and writes buf
 * when res says the script failed, 0 (buf "") when it succeeded or did
 * not run.  dpkg prints it as a warning when a fallback follows (steps 1
 * and 4 above) and as the package's error otherwise. */
int unpkg_script_failure(const struct unpkg_script_result *res,
			 const char *desc, char *buf, size_t size);

/* The admin directory as a chrooted script sees it: `admindir` with the
 * `instdir` prefix removed ("/var/lib/dpkg" for "/t" and
 * "/t/var/lib/dpkg"; "/" when they are the same directory).  Trailing and
 * repeated slashes are ignored; the comparison is by path components.
 * For instdir "/" it is admindir itself.  Returns 0, or -1 when admindir
 * is not below instdir (UNPKG_ERR_USAGE) or does not fit in `size`. */
int unpkg_script_admindir_in_root(const char *instdir, const char *admindir,
				  char *buf, size_t size,
				  struct unpkg_err *err);

/* ADMINDIR/tmp.ci, where the control members of the package being
 * unpacked are put so that its preinst (and, during error unwinding, its
 * prerm and postrm) can run before its info/ files exist.
 *
 * unpkg_script_tmp_prepare() empties it (removing what an interrupted run
 * left there) and creates it, mode 0755.  unpkg_script_tmp_write() writes
 * one member `name` (a plain file name: no '/', not "." or "..") with the
 * `len` bytes at `data`, replacing any file of that name, mode `mode`
 * (0755 for scripts, whatever the umask).  unpkg_script_tmp_clean()
 * removes its files and the directory itself; a missing directory is not
 * an error.  Nothing is synced: the directory only matters while a
 * package is being unpacked.  Each returns 0 or -1 (err). */
int unpkg_script_tmp_prepare(const char *admindir, struct unpkg_err *err);
int unpkg_script_tmp_write(const char *admindir, const char *name,
			   const void *data, size_t len, unsigned int mode,
			   struct unpkg_err *err);
int unpkg_script_tmp_clean(const char *admindir, struct unpkg_err *err);

#endif
