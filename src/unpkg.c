/* unpkg - install Debian packages like dpkg, made durable with few device
 * cache flushes.  This file is the command line: it parses dpkg's options
 * (from dpkg's configuration files, then from the command line), hands the
 * actions unpkg does not implement to stock dpkg, renders libunpkg's
 * events (as progress lines, --status-fd lines and --log lines) and sets
 * the exit status.  The work is done by libunpkg (lib/). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "commit.h"
#include "dpkgcfg.h"
#include "force.h"
#include "configure-run.h"
#include "install.h"
#include "pathfilter.h"
#include "selections.h"
#include "uninstall.h"
#include "trigproc.h"

enum {
	EXIT_PKG_ERROR = 1,	/* a package failed, as in dpkg */
	EXIT_FATAL = 2,		/* usage error or the run could not start */
};

#define DEFAULT_DPKG "/usr/bin/dpkg"

/* --- the option table --------------------------------------------------- */

enum arg {
	ARG_NONE,		/* --foo */
	ARG_VALUE,		/* --foo=V, --foo V, -fV, -f V */
	ARG_SUFFIX,		/* --foo-V (--force-<thing>) */
};

/* Who carries out an action. */
enum handler {
	BY_UNPKG_INSTALL,	/* -i: unpack and configure in-process */
	BY_UNPKG_UNPACK,	/* --unpack in-process */
	BY_UNPKG_CONFIGURE,	/* --configure in-process */
	BY_UNPKG_REMOVE,	/* --remove, --purge in-process */
	BY_UNPKG_TRIGGERS,	/* --triggers-only in-process */
	BY_UNPKG_SELECTIONS,	/* --set-selections in-process, for what
				 * unpkg takes (selections.h) */
	BY_DPKG,		/* stock dpkg, with the same arguments */
};

enum opt_id {
	/* actions */
	A_INSTALL, A_UNPACK, A_CONFIGURE, A_TRIGGERS, A_REMOVE, A_PURGE,
	A_SET_SELECTIONS, A_DPKG,
	/* answered at once */
	I_HELP, I_VERSION,
	/* options */
	OPT_ADMINDIR, OPT_ROOT, OPT_INSTDIR, OPT_SYNC, OPT_STATS, OPT_FORCE, OPT_NO_FORCE,
	OPT_REFUSE, OPT_STATUS_FD, OPT_STATUS_LOGGER, OPT_LOG, OPT_ABORT_AFTER,
	OPT_RECURSIVE, OPT_PENDING, OPT_NO_TRIGGERS, OPT_TRIGGERS,
	OPT_AUTO_DECONFIGURE, OPT_DEBUG, OPT_PRE_INVOKE, OPT_POST_INVOKE,
	OPT_PATH_EXCLUDE, OPT_PATH_INCLUDE, OPT_SELECTED_ONLY, OPT_SKIP_SAME_VERSION,
	OPT_REFUSE_DOWNGRADE, OPT_NO_ACT, OPT_IGNORE_DEPENDS, OPT_NO_DEBSIG,
	OPT_NO_PAGER, OPT_ROBOT, OPT_VERIFY_FORMAT,
};

struct opt_info {
	const char *name;	/* long name without "--"; for a prefix
				 * entry (prefix set) the part before the
				 * variable rest: "assert-" */
	char letter;		/* short option, 0 if none */
	unsigned char arg;	/* enum arg */
	unsigned char prefix;	/* name is a prefix: --assert-<feature> */
	unsigned char id;	/* enum opt_id */
	unsigned char handler;	/* actions: enum handler */
};

#define ACT(n, l, id, h) { n, l, ARG_NONE, 0, id, h }
#define DPKG_ACT(n, l) { n, l, ARG_NONE, 0, A_DPKG, BY_DPKG }
#define OPT(n, l, a, id) { n, l, a, 0, id, 0 }

/* dpkg 1.21's command line.  The dispatch of the actions: those that
 * unpkg implements (-i, --unpack, --configure, --triggers-only, -r, -P,
 * and --set-selections for the input apt gives it), and the rest, which
 * stock dpkg carries out on the same database (dpkg itself hands
 * -l/-s/-L/-S/-p to dpkg-query and -b/-c/-e/-I/-f/-x/-X/--*-tarfile to
 * dpkg-deb).  To take over another action, give it a handler of its own
 * here and in main(). */
static const struct opt_info opts[] = {
	ACT("install", 'i', A_INSTALL, BY_UNPKG_INSTALL),
	ACT("unpack", 0, A_UNPACK, BY_UNPKG_UNPACK),
	DPKG_ACT("record-avail", 'A'),
	ACT("configure", 0, A_CONFIGURE, BY_UNPKG_CONFIGURE),
	ACT("triggers-only", 0, A_TRIGGERS, BY_UNPKG_TRIGGERS),
	ACT("remove", 'r', A_REMOVE, BY_UNPKG_REMOVE),
	ACT("purge", 'P', A_PURGE, BY_UNPKG_REMOVE),
	DPKG_ACT("verify", 'V'),
	DPKG_ACT("get-selections", 0),
	ACT("set-selections", 0, A_SET_SELECTIONS, BY_UNPKG_SELECTIONS),
	DPKG_ACT("clear-selections", 0),
	DPKG_ACT("update-avail", 0),
	DPKG_ACT("merge-avail", 0),
	DPKG_ACT("clear-avail", 0),
	DPKG_ACT("forget-old-unavail", 0),
	DPKG_ACT("status", 's'),
	DPKG_ACT("print-avail", 'p'),
	DPKG_ACT("listfiles", 'L'),
	DPKG_ACT("list", 'l'),
	DPKG_ACT("search", 'S'),
	DPKG_ACT("audit", 'C'),
	DPKG_ACT("yet-to-unpack", 0),
	DPKG_ACT("predep-package", 0),
	DPKG_ACT("add-architecture", 0),
	DPKG_ACT("remove-architecture", 0),
	DPKG_ACT("print-architecture", 0),
	DPKG_ACT("print-foreign-architectures", 0),
	DPKG_ACT("compare-versions", 0),
	DPKG_ACT("build", 'b'),
	DPKG_ACT("contents", 'c'),
	DPKG_ACT("control", 'e'),
	DPKG_ACT("info", 'I'),
	DPKG_ACT("field", 'f'),
	DPKG_ACT("extract", 'x'),
	DPKG_ACT("vextract", 'X'),
	DPKG_ACT("ctrl-tarfile", 0),
	DPKG_ACT("fsys-tarfile", 0),
	{ "command-fd", 0, ARG_VALUE, 0, A_DPKG, BY_DPKG },
	{ "assert-", 0, ARG_NONE, 1, A_DPKG, BY_DPKG },
	{ "validate-", 0, ARG_NONE, 1, A_DPKG, BY_DPKG },
	OPT("help", '?', ARG_NONE, I_HELP),
	OPT("help", 'h', ARG_NONE, I_HELP),
	OPT("version", 0, ARG_NONE, I_VERSION),
	OPT("admindir", 0, ARG_VALUE, OPT_ADMINDIR),
	OPT("root", 0, ARG_VALUE, OPT_ROOT),
	OPT("instdir", 0, ARG_VALUE, OPT_INSTDIR),
	OPT("sync", 0, ARG_VALUE, OPT_SYNC),
	OPT("stats", 0, ARG_NONE, OPT_STATS),
	/* exact names before the force prefixes they start with */
	OPT("refuse-downgrade", 'G', ARG_NONE, OPT_REFUSE_DOWNGRADE),
	OPT("force", 0, ARG_SUFFIX, OPT_FORCE),
	OPT("no-force", 0, ARG_SUFFIX, OPT_NO_FORCE),
	OPT("refuse", 0, ARG_SUFFIX, OPT_REFUSE),
	OPT("status-fd", 0, ARG_VALUE, OPT_STATUS_FD),
	OPT("status-logger", 0, ARG_VALUE, OPT_STATUS_LOGGER),
	OPT("log", 0, ARG_VALUE, OPT_LOG),
	OPT("abort-after", 0, ARG_VALUE, OPT_ABORT_AFTER),
	OPT("recursive", 'R', ARG_NONE, OPT_RECURSIVE),
	OPT("pending", 'a', ARG_NONE, OPT_PENDING),
	OPT("no-triggers", 0, ARG_NONE, OPT_NO_TRIGGERS),
	OPT("triggers", 0, ARG_NONE, OPT_TRIGGERS),
	OPT("auto-deconfigure", 'B', ARG_NONE, OPT_AUTO_DECONFIGURE),
	OPT("debug", 'D', ARG_VALUE, OPT_DEBUG),
	OPT("pre-invoke", 0, ARG_VALUE, OPT_PRE_INVOKE),
	OPT("post-invoke", 0, ARG_VALUE, OPT_POST_INVOKE),
	OPT("path-exclude", 0, ARG_VALUE, OPT_PATH_EXCLUDE),
	OPT("path-include", 0, ARG_VALUE, OPT_PATH_INCLUDE),
	OPT("selected-only", 'O', ARG_NONE, OPT_SELECTED_ONLY),
	OPT("skip-same-version", 'E', ARG_NONE, OPT_SKIP_SAME_VERSION),
	OPT("no-act", 0, ARG_NONE, OPT_NO_ACT),
	OPT("dry-run", 0, ARG_NONE, OPT_NO_ACT),
	OPT("simulate", 0, ARG_NONE, OPT_NO_ACT),
	OPT("ignore-depends", 0, ARG_VALUE, OPT_IGNORE_DEPENDS),
	OPT("no-debsig", 0, ARG_NONE, OPT_NO_DEBSIG),
	OPT("no-pager", 0, ARG_NONE, OPT_NO_PAGER),
	OPT("robot", 0, ARG_NONE, OPT_ROBOT),
	OPT("verify-format", 0, ARG_VALUE, OPT_VERIFY_FORMAT),
};

#define NOPTS (sizeof(opts) / sizeof(opts[0]))

static int is_action(const struct opt_info *oi)
{
	return oi->id <= A_DPKG;
}

/* One option as given: on the command line or in a configuration file. */
struct item {
	const struct opt_info *oi;
	char *name;		/* as written, for messages: "--foo", "-f" */
	char *value;		/* value or suffix, or NULL */
	const char *file;	/* configuration file, NULL: command line */
};

struct items {
	struct item *v;
	size_t n;
};

/* --- the state of a run --------------------------------------------------- */

struct strlist {
	char **v;
	size_t n;
};

struct cli {
	const struct item *action;	/* NULL until one is given */
	const char *action_name;	/* "--install", for messages */
	int recursive;
	int pending;			/* -a, --pending */
	char *instdir;
	char *admindir;
	int sync;
	char sync_reason[512];
	int stats;
	unsigned int force;		/* UNPKG_FORCE_* in force */
	unsigned int force_named;	/* ... of them switched on by name */
	int abort_after;
	int no_triggers;
	int auto_deconfigure;
	const char *needs_dpkg;		/* an option only dpkg implements */
	struct strlist pre_invoke, post_invoke, status_loggers;
	struct unpkg_pathfilter path_filter;	/* --path-exclude/-include */
	/* outputs */
	int *status_fds;
	size_t nstatus_fds;
	pid_t *loggers;
	size_t nloggers;
	char *logfile;
	int log_fd;
	int status_broken;		/* a status write failed */
	/* the packages whose triggers the action activated, in the order
	 * of their activations, for the processing at its end */
	struct strlist activated;
	struct strlist run_pkgs;	/* the packages it processed */
	/* names of what failed, for dpkg's closing summary */
	char **failed;
	size_t nfailed;
};

static const char usage_text[] =
	"Usage: unpkg [<option>...] -i|--install <file.deb>... | -R <dir>...\n"
	"       unpkg [<option>...] --unpack <file.deb>... | -R <dir>...\n"
	"       unpkg [<option>...] --configure <package>... | -a|--pending\n"
	"       unpkg [<option>...] -r|--remove|-P|--purge <package>... | -a\n"
	"       unpkg [<option>...] --triggers-only <package>... | -a\n"
	"       unpkg [<option>...] <any other dpkg action>...\n"
	"\n"
	"Install Debian packages the way dpkg does, into the same database,\n"
	"made durable with a few device cache flushes per run.  unpkg takes\n"
	"dpkg's command line; it carries out --install, --unpack,\n"
	"--configure, --triggers-only, --remove, --purge and apt's\n"
	"--set-selections itself (and the trigger processing at the end of a\n"
	"run) and hands every other action (-l, -s, -L, -S,\n"
	"--print-architecture, ...) to stock dpkg ($UNPKG_DPKG, default\n"
	DEFAULT_DPKG ") with the same arguments but --sync and --stats.\n"
	"\n"
	"Actions carried out by unpkg:\n"
	"  -i, --install <file.deb>...  unpack and configure the packages\n"
	"      --unpack <file.deb>...   unpack only (status \"unpacked\")\n"
	"      --configure <package>... configure unpacked packages\n"
	"      --configure -a|--pending configure every unpacked package\n"
	"  -r, --remove <package>...    remove the packages (their conffiles\n"
	"                               stay: status \"config-files\")\n"
	"  -P, --purge <package>...     remove them and their conffiles\n"
	"  -a, --pending                with -r or -P: the packages selected\n"
	"                               for deinstall or purge\n"
	"      --triggers-only <package>... | -a, --pending\n"
	"                               process the pending triggers of\n"
	"                               the packages, or of all\n"
	"      --set-selections         set the selections read from stdin\n"
	"                               (\"<package>[:<arch>] <selection>\"\n"
	"                               lines of installed packages; stock\n"
	"                               dpkg reads any other input)\n"
	"\n"
	"Options:\n"
	"      --root=<dir>        install under <dir>, database in\n"
	"                          <dir>/var/lib/dpkg (created if missing)\n"
	"      --instdir=<dir>     install under <dir>\n"
	"      --admindir=<dir>    use the database in <dir>\n"
	"      --sync=<strategy>   how files are made durable:\n"
	"                            auto   the fastest safe one for the file\n"
	"                                   systems of the root and the\n"
	"                                   database (default)\n"
	"                            dpkg   per package: start writeback per\n"
	"                                   file, one wait pass, one fdatasync\n"
	"                                   pass, one rename pass\n"
	"                            batch  the same passes once for the run\n"
	"                            uring  as batch, the syncs submitted\n"
	"                                   together through io_uring\n"
	"                            syncfs one syncfs() per filesystem\n"
	"                            none   sync only the database (as\n"
	"                                   --force-unsafe-io)\n"
	"      --force-unsafe-io   do not sync the packages' files (also read\n"
	"                          from dpkg's config); the database still is\n"
	"      --refuse-unsafe-io  sync even if force-unsafe-io is configured\n"
	"      --force-depends     turn dependency problems into warnings\n"
	"      --force-remove-essential, --force-remove-protected\n"
	"                          remove an Essential or Protected package\n"
	"      --refuse-depends    undo --force-depends (the default)\n"
	"      --force-<thing>,... --no-force-<thing>,... --refuse-<thing>,...\n"
	"                          dpkg's force options (see --force-help)\n"
	"  -R, --recursive         the arguments are directories: install\n"
	"                          every *.deb below them\n"
	"      --status-fd=<n>     write dpkg's status lines to descriptor <n>\n"
	"      --status-logger=<command>  ... and to <command>'s stdin\n"
	"      --log=<file>        log status changes and actions to <file>\n"
	"      --stats             print phase times and sync call counts\n"
	"  -h, -?, --help          show this help and exit\n"
	"      --version           show the version and exit\n"
	"\n"
	"      --no-triggers       leave the triggers the run activates pending\n"
	"                          (else unpkg processes them at its end)\n"
	"      --abort-after=<n>   stop after n failed packages (default 50)\n"
	"  -B, --auto-deconfigure  deconfigure a package the new one Breaks\n"
	"      --path-exclude=<glob>  do not unpack the paths matching <glob>\n"
	"      --path-include=<glob>  unpack them after all; as in dpkg, the\n"
	"                          last matching filter decides\n"
	"\n"
	"Also accepted as in dpkg: --triggers,\n"
	"-D/--debug, --pre-invoke, --post-invoke, --no-debsig, --no-pager,\n"
	"and -O, -E, -G, --no-act, --ignore-depends (these make unpkg hand the\n"
	"run to dpkg).\n"
	"\n"
	"Exit status: 0 success, 1 a package failed, 2 usage or fatal error.\n";

/* --- small helpers ---------------------------------------------------------- */

static void error_line(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static void die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
static void die_usage(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

/* "unpkg: error: MESSAGE" on stderr, after what stdout holds. */
static void verror_line(const char *fmt, va_list ap)
{
	fflush(stdout);
	fputs("unpkg: error: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

static void error_line(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror_line(fmt, ap);
	va_end(ap);
}

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror_line(fmt, ap);
	va_end(ap);
	exit(EXIT_FATAL);
}

static void die_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror_line(fmt, ap);
	va_end(ap);
	fputs("\nType unpkg --help for help.\n", stderr);
	exit(EXIT_FATAL);
}

static void *xrealloc(void *p, size_t n, size_t size)
{
	void *q = n > SIZE_MAX / size ? NULL : realloc(p, n * size);

	if (q == NULL)
		die("out of memory");
	return q;
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (d == NULL)
		die("out of memory");
	return d;
}

static char *xasprintf(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		die("out of memory");
	return s;
}

static void set_path(char **dst, const char *val)
{
	free(*dst);
	*dst = xstrdup(val);
}

static void strlist_add(struct strlist *l, const char *s)
{
	l->v = xrealloc(l->v, l->n + 1, sizeof(*l->v));
	l->v[l->n++] = xstrdup(s);
}

static void strlist_free(struct strlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* dpkg's integer options: decimal, 0 to INT_MAX. */
static int parse_count(const char *opt, const char *value)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(value, &end, 10);
	if (*value == '\0' || *end != '\0' || errno != 0 || v < 0 ||
	    v > INT_MAX)
		die_usage("invalid integer for --%s: '%s'", opt, value);
	return (int)v;
}

/* --sync=auto, the default: the library picks the strategy per file
 * system.  Not one of enum unpkg_sync_mode. */
#define SYNC_AUTO UNPKG_SYNC_COUNT

/* --- handing an action to stock dpkg -------------------------------------- */

/* Set while unpkg execs dpkg: if the program that starts is unpkg again
 * (the same process id survives exec), dpkg's path leads back to unpkg. */
#define EXEC_GUARD "UNPKG_EXEC_PID"

static const char *dpkg_path(void)
{
	const char *p = getenv("UNPKG_DPKG");

	return p != NULL && p[0] != '\0' ? p : DEFAULT_DPKG;
}

static void recursion_stop(const char *dpkg)
	__attribute__((noreturn));

static void recursion_stop(const char *dpkg)
{
	die("%s is unpkg itself, not stock dpkg: unpkg hands this action "
	    "to dpkg and would call itself forever (set UNPKG_DPKG to the "
	    "path of stock dpkg)", dpkg);
}

static void check_exec_guard(void)
{
	const char *g = getenv(EXEC_GUARD);
	char buf[32];

	if (g == NULL)
		return;
	snprintf(buf, sizeof(buf), "%ld", (long)getpid());
	if (strcmp(g, buf) == 0)
		recursion_stop(dpkg_path());
	unsetenv(EXEC_GUARD);
}

static void exec_dpkg(char **argv) __attribute__((noreturn));

static void exec_dpkg(char **argv)
{
	const char *dpkg = dpkg_path();
	struct stat self, target;
	char pid[32];

	if (stat("/proc/self/exe", &self) == 0 && stat(dpkg, &target) == 0 &&
	    self.st_dev == target.st_dev && self.st_ino == target.st_ino)
		recursion_stop(dpkg);
	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	if (setenv(EXEC_GUARD, pid, 1) < 0)
		die("cannot set %s: %s", EXEC_GUARD, strerror(errno));
	argv[0] = (char *)dpkg;
	fflush(NULL);
	execv(dpkg, argv);
	die("cannot run dpkg (%s): %s", dpkg, strerror(errno));
}

/* --- parsing ----------------------------------------------------------------- */

static void items_add(struct items *it, const struct opt_info *oi,
		      const char *name, const char *value, const char *file)
{
	struct item *x;

	it->v = xrealloc(it->v, it->n + 1, sizeof(*it->v));
	x = &it->v[it->n++];
	x->oi = oi;
	x->name = xstrdup(name);
	x->value = value != NULL ? xstrdup(value) : NULL;
	x->file = file;
}

static void items_free(struct items *it)
{
	size_t i;

	for (i = 0; i < it->n; i++) {
		free(it->v[i].name);
		free(it->v[i].value);
	}
	free(it->v);
}

/* The entry for long option `p` (without "--"), and where its attached
 * value starts (*value, NULL if none), as dpkg matches them: the exact
 * name, NAME=VALUE, NAME-SUFFIX for the force prefixes, or a prefix
 * entry. */
static const struct opt_info *find_long(const char *p, const char **value)
{
	size_t i;

	*value = NULL;
	for (i = 0; i < NOPTS; i++) {
		const struct opt_info *oi = &opts[i];
		size_t l = strlen(oi->name);

		if (oi->prefix) {
			if (strncmp(p, oi->name, l) == 0 && p[l] != '\0')
				return oi;
			continue;
		}
		if (strcmp(p, oi->name) == 0)
			return oi;
		if (strncmp(p, oi->name, l) == 0 &&
		    p[l] == (oi->arg == ARG_SUFFIX ? '-' : '=')) {
			*value = p + l + 1;
			return oi;
		}
	}
	return NULL;
}

static const struct opt_info *find_short(char c)
{
	size_t i;

	for (i = 0; i < NOPTS; i++)
		if (opts[i].letter == c)
			return &opts[i];
	return NULL;
}

static void apply_debug(const char *value);

static void show_help(void) __attribute__((noreturn));

static void show_help(void)
{
	fputs(usage_text, stdout);
	exit(0);
}

static void show_version(void) __attribute__((noreturn));

/* As dpkg --version: program, version and architecture, then the
 * copyright and the licence (debian/copyright). */
static void show_version(void)
{
	printf("unpkg %s (%s), a crash-safe installer of Debian packages.\n"
	       "Copyright (C) 2026 unpkg developers.\n"
	       "This is free software; see the GNU General Public License version 2 or\n"
	       "later for copying conditions. There is NO warranty.\n",
	       PACKAGE_VERSION, UNPKG_NATIVE_ARCH);
	exit(0);
}

/* The command line, as dpkg reads it: options up to the first argument
 * that does not start with '-' (or up to "--"); short options may be
 * bundled ("-iR").  unpkg's own options (--sync, --stats) are taken out
 * of argv (*argc shrinks), so that an action handed to dpkg gets the
 * rest.  Returns the index of the first operand. */
static int collect_argv(int *argc, char **argv, struct items *it)
{
	int i;

	for (i = 1; i < *argc; i++) {
		const char *p = argv[i], *value;
		const struct opt_info *oi;
		int at = i;

		if (p[0] != '-' || p[1] == '\0')
			break;
		if (strcmp(p, "--") == 0) {
			i++;
			break;
		}
		if (p[1] == '-') {
			char *name;

			oi = find_long(p + 2, &value);
			if (oi == NULL)
				die_usage("unknown option %s", p);
			if (oi->arg == ARG_NONE && value != NULL)
				die_usage("--%s option does not take a value",
					  oi->name);
			if (oi->arg == ARG_VALUE && value == NULL) {
				value = argv[++i];
				if (value == NULL)
					die_usage("--%s option takes a value",
						  oi->name);
			}
			if (oi->arg == ARG_SUFFIX && value == NULL)
				die_usage("unknown option %s", p);
			if (oi->id == I_HELP)
				show_help();
			if (oi->id == I_VERSION)
				show_version();
			if (oi->id == OPT_DEBUG && value[0] == 'h')
				apply_debug(value);
			name = xasprintf("--%s", oi->prefix ? p + 2 : oi->name);
			items_add(it, oi, name, value, NULL);
			free(name);
			if (oi->id == OPT_SYNC || oi->id == OPT_STATS) {
				/* (with argv's closing NULL) */
				memmove(&argv[at], &argv[i + 1],
					(size_t)(*argc - i) * sizeof(*argv));
				*argc -= i + 1 - at;
				i = at - 1;
			}
			continue;
		}
		for (p++; *p != '\0'; p++) {
			char name[3] = { '-', *p, '\0' };

			oi = find_short(*p);
			if (oi == NULL)
				die_usage("unknown option -%c", *p);
			value = NULL;
			if (oi->arg == ARG_VALUE) {
				if (p[1] != '\0') {
					value = p[1] == '=' ? p + 2 : p + 1;
				} else {
					value = argv[++i];
					if (value == NULL)
						die_usage("-%c option takes a "
							  "value", *p);
				}
			}
			if (oi->id == I_HELP)
				show_help();
			if (oi->id == I_VERSION)
				show_version();
			if (oi->id == OPT_DEBUG && value[0] == 'h')
				apply_debug(value);
			items_add(it, oi, name, value, NULL);
			if (value != NULL)
				break;
		}
	}
	return i;
}

/* dpkg strips one pair of quotes around a configuration value. */
static char *unquote(char *v)
{
	size_t len = v != NULL ? strlen(v) : 0;

	if (len >= 2 && (v[0] == '"' || v[0] == '\'') && v[len - 1] == v[0]) {
		v[len - 1] = '\0';
		return v + 1;
	}
	return v;
}

/* dpkg's configuration files: each line an option without its "--".
 * Errors are kept for when the options are applied: an action handed to
 * dpkg leaves them to dpkg.  Files that cannot be read are a warning
 * (*unreadable), as they were before unpkg took dpkg's whole syntax: the
 * system's make unpkg ignore the whole configuration, $HOME/.dpkg.cfg (read
 * last, as dpkg reads it, wherever $HOME is set) only itself. */
static void collect_config(struct unpkg_dpkgcfg *cfg, struct items *it,
			   char **error, char **unreadable)
{
	const char *confdir = getenv("UNPKG_CONFDIR");
	const char *home = getenv("HOME");
	struct unpkg_err err;
	size_t i;

	unpkg_err_init(&err);
	if (unpkg_dpkgcfg_load(cfg, confdir != NULL ? confdir : "/etc/dpkg",
			       &err) < 0) {
		*unreadable = xasprintf("ignoring dpkg's configuration: %s",
					err.msg);
		return;
	}
	if (home != NULL && unpkg_dpkgcfg_load_user(cfg, home, &err) < 0)
		*unreadable = xasprintf("ignoring the user's configuration: %s",
					err.msg);
	for (i = 0; i < cfg->count && *error == NULL; i++) {
		struct unpkg_dpkgcfg_opt *o = &cfg->opts[i];
		const char *attached;
		const struct opt_info *oi = find_long(o->name, &attached);
		char *value = unquote(o->value);
		char *name;

		if (oi == NULL || (oi->arg == ARG_SUFFIX && attached == NULL) ||
		    (oi->arg != ARG_SUFFIX && attached != NULL)) {
			*error = xasprintf("configuration error: %s: unknown "
					   "option '%s'", o->file, o->name);
			break;
		}
		if (oi->arg == ARG_VALUE && value == NULL) {
			*error = xasprintf("configuration error: %s: '%s' "
					   "needs a value", o->file, o->name);
			break;
		}
		if (oi->arg != ARG_VALUE && value != NULL) {
			*error = xasprintf("configuration error: %s: '%s' "
					   "does not take a value", o->file,
					   o->name);
			break;
		}
		if (oi->id == I_HELP || oi->id == I_VERSION)
			continue;
		name = xasprintf("%s in %s", o->name, o->file);
		items_add(it, oi, name, oi->arg == ARG_SUFFIX ? attached : value,
			  o->file);
		free(name);
	}
}

/* The action of a list of items: the last one; two different ones are a
 * usage error, as in dpkg. */
static const struct item *find_action(const struct items *it)
{
	const struct item *a = NULL;
	size_t i;

	for (i = 0; i < it->n; i++) {
		const struct item *x = &it->v[i];

		if (!is_action(x->oi))
			continue;
		if (a != NULL && (a->oi != x->oi ||
				  (x->oi->prefix && strcmp(a->name, x->name))))
			die_usage("conflicting actions %s and %s", x->name,
				  a->name);
		a = x;
	}
	return a;
}

/* --- applying options ------------------------------------------------------- */

static void set_unsafe_io(struct cli *cli, int on, const struct item *x)
{
	if (on) {
		cli->sync = UNPKG_SYNC_NONE;
	} else if (cli->sync == UNPKG_SYNC_NONE) {
		cli->sync = SYNC_AUTO;
	} else {
		return;
	}
	if (x == NULL)
		snprintf(cli->sync_reason, sizeof(cli->sync_reason),
			 "DPKG_FORCE");
	else if (x->file != NULL)
		snprintf(cli->sync_reason, sizeof(cli->sync_reason), "%s",
			 x->name);
	else
		snprintf(cli->sync_reason, sizeof(cli->sync_reason), "%s%s%s",
			 x->name, x->oi->arg == ARG_SUFFIX ? "-" : "",
			 x->oi->arg == ARG_SUFFIX ? x->value : "");
}

static void apply_force(struct cli *cli, const struct item *x, int on)
{
	unsigned int before = cli->force;
	struct unpkg_err err;

	if (strcmp(x->value, "help") == 0) {
		size_t n, i;
		const struct unpkg_force_info *t = unpkg_force_table(&n);
		char names[1024];

		printf("unpkg forcing options - control behaviour when problems "
		       "found:\n"
		       "  warn but continue:  --force-<thing>,<thing>,...\n"
		       "  stop with error:    --refuse-<thing>,<thing>,... | "
		       "--no-force-<thing>,...\n"
		       " Forcing things (dpkg's names):\n");
		for (i = 0; i < n; i++)
			printf("  %s %-19s %s%s\n",
			       t[i].by_default ? "[*]" : t[i].damage ? "[!]"
			       : "   ", t[i].name, t[i].help,
			       t[i].use == UNPKG_FORCE_STRICT
			       ? " (not in unpkg yet)" : "");
		printf("\nWARNING - use of options marked [!] can seriously "
		       "damage your installation.\n"
		       "Forcing options marked [*] are enabled by default.\n"
		       "Things marked \"not in unpkg yet\" are accepted; unpkg "
		       "acts as if they were off.\n"
		       "\nCurrently enabled options:\n %s\n",
		       unpkg_force_names(cli->force, names, sizeof(names)));
		exit(0);
	}
	unpkg_err_init(&err);
	if (unpkg_force_apply(&cli->force, x->value, on, &cli->force_named,
			      &err) < 0)
		die_usage("%s", err.msg);
	if ((before ^ cli->force) & UNPKG_FORCE_UNSAFE_IO)
		set_unsafe_io(cli, on, x);
}

/* --debug: octal, or "help". */
static void apply_debug(const char *value)
{
	char *end;

	if (value[0] == 'h') {
		printf("unpkg accepts dpkg's -D<octal> (--debug=<octal>) and "
		       "prints no debugging output.\n");
		exit(0);
	}
	errno = 0;
	(void)strtoul(value, &end, 8);
	if (*value == '\0' || *end != '\0' || errno != 0)
		die_usage("--debug requires a positive octal argument");
}

/* The descriptor is checked now and made close-on-exec in open_outputs(),
 * once the run is certain to be unpkg's: dpkg must inherit it otherwise. */
static void add_status_fd(struct cli *cli, const char *value)
{
	int fd = parse_count("status-fd", value);

	if (fcntl(fd, F_GETFD) < 0)
		die("unable to read filedescriptor flags for <package status "
		    "and progress file descriptor>: %s", strerror(errno));
	cli->status_fds = xrealloc(cli->status_fds, cli->nstatus_fds + 1,
				   sizeof(*cli->status_fds));
	cli->status_fds[cli->nstatus_fds++] = fd;
}

/* --status-logger: dpkg runs the command with sh -c and writes the status
 * lines to its standard input. */
static void add_status_logger(struct cli *cli, const char *cmd)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		die("cannot create a pipe for --status-logger: %s",
		    strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("cannot fork for --status-logger: %s", strerror(errno));
	if (pid == 0) {
		if (dup2(p[0], 0) < 0)
			_exit(127);
		execl("/bin/sh", "sh", "-c", "--", cmd, (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	cli->status_fds = xrealloc(cli->status_fds, cli->nstatus_fds + 1,
				   sizeof(*cli->status_fds));
	cli->status_fds[cli->nstatus_fds++] = p[1];
	cli->loggers = xrealloc(cli->loggers, cli->nloggers + 1,
				sizeof(*cli->loggers));
	cli->loggers[cli->nloggers++] = pid;
}

static void add_path_filter(struct cli *cli, const char *glob, int include)
{
	struct unpkg_err err;

	unpkg_err_init(&err);
	if (unpkg_pathfilter_add(&cli->path_filter, glob, include, &err) < 0)
		die("%s", err.msg);
}

static void apply_item(struct cli *cli, const struct item *x)
{
	const char *v = x->value;

	switch ((enum opt_id)x->oi->id) {
	case A_INSTALL:
	case A_UNPACK:
	case A_CONFIGURE:
	case A_REMOVE:
	case A_PURGE:
	case A_TRIGGERS:
	case A_SET_SELECTIONS:
	case A_DPKG:
	case I_HELP:
	case I_VERSION:
		break;
	case OPT_ROOT:
		set_path(&cli->instdir, v);
		free(cli->admindir);
		cli->admindir = xasprintf("%s/var/lib/dpkg", v);
		break;
	case OPT_INSTDIR:
		set_path(&cli->instdir, v);
		break;
	case OPT_ADMINDIR:
		set_path(&cli->admindir, v);
		break;
	case OPT_SYNC:
		cli->sync = strcmp(v, "auto") == 0 ? SYNC_AUTO
						   : unpkg_sync_mode_parse(v);
		if (cli->sync < 0)
			die_usage("unknown sync strategy '%s' (use auto, "
				  "dpkg, batch, uring, syncfs or none)", v);
		snprintf(cli->sync_reason, sizeof(cli->sync_reason),
			 "--sync=%s", v);
		break;
	case OPT_STATS:
		cli->stats = 1;
		break;
	case OPT_FORCE:
		apply_force(cli, x, 1);
		break;
	case OPT_NO_FORCE:
	case OPT_REFUSE:
		apply_force(cli, x, 0);
		break;
	case OPT_REFUSE_DOWNGRADE:
		cli->force &= ~UNPKG_FORCE_DOWNGRADE;
		break;
	case OPT_STATUS_FD:
		add_status_fd(cli, v);
		break;
	case OPT_STATUS_LOGGER:
		strlist_add(&cli->status_loggers, v);
		break;
	case OPT_LOG:
		set_path(&cli->logfile, v);
		break;
	case OPT_ABORT_AFTER:
		cli->abort_after = parse_count("abort-after", v);
		break;
	case OPT_RECURSIVE:
		cli->recursive = 1;
		break;
	case OPT_PENDING:
		cli->pending = 1;
		break;
	case OPT_NO_TRIGGERS:
		cli->no_triggers = 1;
		break;
	case OPT_TRIGGERS:
		cli->no_triggers = 0;
		break;
	case OPT_AUTO_DECONFIGURE:
		cli->auto_deconfigure = 1;
		break;
	case OPT_DEBUG:
		apply_debug(v);
		break;
	case OPT_PRE_INVOKE:
		strlist_add(&cli->pre_invoke, v);
		break;
	case OPT_POST_INVOKE:
		strlist_add(&cli->post_invoke, v);
		break;
	case OPT_PATH_EXCLUDE:
	case OPT_PATH_INCLUDE:
		add_path_filter(cli, v, x->oi->id == OPT_PATH_INCLUDE);
		break;
	case OPT_SELECTED_ONLY:
	case OPT_SKIP_SAME_VERSION:
	case OPT_NO_ACT:
	case OPT_IGNORE_DEPENDS:
		if (cli->needs_dpkg == NULL)
			cli->needs_dpkg = x->oi->name;
		break;
	case OPT_NO_DEBSIG:
	case OPT_NO_PAGER:
	case OPT_ROBOT:
	case OPT_VERIFY_FORMAT:
		break;
	}
}

/* --- --status-fd and --log output ------------------------------------------- */

/* Write all of buf to fd without being killed by SIGPIPE when the reader
 * went away (the signal is blocked, and a pending one consumed). */
static int write_all(int fd, const char *buf, size_t len)
{
	sigset_t pipe_set, old;
	int ret = 0, saved = 0;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigprocmask(SIG_BLOCK, &pipe_set, &old);
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			saved = errno;
			ret = -1;
			break;
		}
		buf += n;
		len -= (size_t)n;
	}
	if (saved == EPIPE) {
		struct timespec zero = { 0, 0 };

		while (sigtimedwait(&pipe_set, NULL, &zero) == SIGPIPE)
			;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return ret;
}

static void status_line(struct cli *cli, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* One line to every --status-fd and --status-logger; newlines in it
 * become spaces, as dpkg leaves word wrapping to the front-end. */
static void status_line(struct cli *cli, const char *fmt, ...)
{
	va_list ap;
	char *line, *s;
	size_t i;
	int n;

	if (cli->nstatus_fds == 0)
		return;
	va_start(ap, fmt);
	n = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	for (s = line; *s != '\0'; s++)
		if (*s == '\n')
			*s = ' ';
	s = xasprintf("%s\n", line);
	free(line);
	for (i = 0; i < cli->nstatus_fds; i++)
		if (write_all(cli->status_fds[i], s, strlen(s)) < 0 &&
		    !cli->status_broken) {
			fprintf(stderr, "unpkg: error: unable to write to "
				"status fd %d: %s\n", cli->status_fds[i],
				strerror(errno));
			cli->status_broken = 1;
		}
	free(s);
}

static void log_line(struct cli *cli, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* One line of the --log file: "YYYY-MM-DD HH:MM:SS " and the text. */
static void log_line(struct cli *cli, const char *fmt, ...)
{
	char stamp[32], *text, *line;
	struct tm tm;
	time_t now;
	va_list ap;

	if (cli->log_fd < 0)
		return;
	now = time(NULL);
	if (localtime_r(&now, &tm) == NULL ||
	    strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm) == 0)
		stamp[0] = '\0';
	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0) {
		va_end(ap);
		return;
	}
	va_end(ap);
	line = xasprintf("%s %s\n", stamp, text);
	free(text);
	if (write_all(cli->log_fd, line, strlen(line)) < 0)
		fprintf(stderr, "unpkg: warning: cannot write to log '%s': "
			"%s\n", cli->logfile, strerror(errno));
	free(line);
}

/* The --status-fd descriptors close-on-exec (as in dpkg, maintainer
 * scripts do not get them), the --status-logger commands started, the
 * --log file opened. */
static void open_outputs(struct cli *cli)
{
	size_t i;

	for (i = 0; i < cli->nstatus_fds; i++) {
		int fd = cli->status_fds[i];
		int flags = fcntl(fd, F_GETFD);

		if (flags < 0 || fcntl(fd, F_SETFD, flags | FD_CLOEXEC) < 0)
			die("unable to set close-on-exec flag for --status-fd "
			    "%d: %s", fd, strerror(errno));
	}
	for (i = 0; i < cli->status_loggers.n; i++)
		add_status_logger(cli, cli->status_loggers.v[i]);
	if (cli->logfile == NULL)
		return;
	cli->log_fd = open(cli->logfile,
			   O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (cli->log_fd < 0)
		fprintf(stderr, "unpkg: could not open log '%s': %s\n",
			cli->logfile, strerror(errno));
}

/* The name dpkg's log gives a package: always with its architecture. */
static char *log_name(const struct unpkg_event *ev)
{
	if (ev->arch == NULL || ev->arch[0] == '\0' ||
	    strchr(ev->package, ':') != NULL)
		return xstrdup(ev->package);
	return xasprintf("%s:%s", ev->package, ev->arch);
}

#define OR_NONE(s) ((s) != NULL && (s)[0] != '\0' ? (s) : "<none>")

/* --- events ------------------------------------------------------------------- */

/* Where conffile `path` is on this system: below the root, if any. */
static char *real_path(const struct cli *cli, const char *path)
{
	return xasprintf("%s%s", strcmp(cli->instdir, "/") != 0
					 ? cli->instdir : "", path);
}

static void note_failure(struct cli *cli, const char *name)
{
	cli->failed = xrealloc(cli->failed, cli->nfailed + 1,
			       sizeof(*cli->failed));
	cli->failed[cli->nfailed++] = xstrdup(name);
}

/* dpkg's layout for errors: a headline naming the archive or package,
 * then the cause, each line indented by one space. */
static void print_error(struct cli *cli, const char *what, const char *msg)
{
	const char *kind = strstr(what, ".deb") != NULL ||
				   strchr(what, '/') != NULL
			   ? "archive" : "package";

	fprintf(stderr, "unpkg: error processing %s %s (%s):\n", kind, what,
		cli->action_name);
	while (*msg != '\0') {
		size_t len = strcspn(msg, "\n");

		fprintf(stderr, " %.*s\n", (int)len, msg);
		msg += len;
		if (*msg == '\n')
			msg++;
	}
	note_failure(cli, what);
}

/* Is `pkg` a package this action installed or configured? */
static int in_run(const struct cli *cli, const char *pkg)
{
	size_t i;

	for (i = 0; i < cli->run_pkgs.n; i++)
		if (strcmp(cli->run_pkgs.v[i], pkg) == 0)
			return 1;
	return 0;
}

/* A package whose triggers were activated, once. */
static void note_activated(struct cli *cli, const char *pkg)
{
	size_t i;

	for (i = 0; i < cli->activated.n; i++)
		if (strcmp(cli->activated.v[i], pkg) == 0)
			return;
	strlist_add(&cli->activated, pkg);
}

static void on_event(void *ctx, const struct unpkg_event *ev)
{
	struct cli *cli = ctx;
	char *name;

	switch (ev->kind) {
	case UNPKG_EV_PROGRESS:
		printf("%s\n", ev->message);
		fflush(stdout);
		break;
	case UNPKG_EV_NOTICE:
		fflush(stdout);
		fprintf(stderr, "unpkg: %s\n", ev->message);
		break;
	case UNPKG_EV_WARNING:
		fflush(stdout);
		fprintf(stderr, "unpkg: warning: %s\n", ev->message);
		break;
	case UNPKG_EV_ERROR:
		fflush(stdout);
		print_error(cli, ev->package != NULL ? ev->package : "?",
			    ev->message);
		status_line(cli, "status: %s : error : %s",
			    ev->package != NULL ? ev->package : "?",
			    ev->message);
		break;
	case UNPKG_EV_STATUS:
		if (ev->package == NULL || ev->status == NULL)
			break;
		status_line(cli, "status: %s: %s", ev->package, ev->status);
		name = log_name(ev);
		log_line(cli, "status %s %s %s", ev->status, name,
			 OR_NONE(ev->version));
		free(name);
		break;
	case UNPKG_EV_PROCESSING:
		if (ev->package == NULL || ev->action == NULL)
			break;
		status_line(cli, "processing: %s: %s", ev->action,
			    ev->package);
		name = log_name(ev);
		/* dpkg logs the version of the archive of a package of the
		 * run as its available one */
		log_line(cli, "%s %s %s %s", ev->action, name,
			 OR_NONE(ev->old_version),
			 ev->version == NULL && in_run(cli, ev->package)
			 ? OR_NONE(ev->old_version) : OR_NONE(ev->version));
		if ((strcmp(ev->action, "install") == 0 ||
		     strcmp(ev->action, "upgrade") == 0) &&
		    !in_run(cli, ev->package))
			strlist_add(&cli->run_pkgs, ev->package);
		free(name);
		break;
	case UNPKG_EV_TRIGGERED:
		if (ev->package != NULL)
			note_activated(cli, ev->package);
		break;
	case UNPKG_EV_CONFFILE:
		if (ev->message == NULL || ev->action == NULL)
			break;
		if (strcmp(ev->action, "prompt") != 0) {
			log_line(cli, "conffile %s %s", ev->message,
				 ev->action);
			break;
		}
		/* dpkg's line before its question, even when an option
		 * answers it */
		name = real_path(cli, ev->message);
		status_line(cli, "status: %s : conffile-prompt : '%s' "
			    "'%s.dpkg-new' 1 1 ", ev->message, name, name);
		free(name);
		break;
	}
}

/* --- the conffile prompt -------------------------------------------------- */

/* Run argv[0] (found in PATH) with the terminal, in directory `dir` (or
 * here), and wait for it; its failure is its own business. */
static void run_interactive(char *const *argv, const char *dir)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "unpkg: cannot fork: %s\n", strerror(errno));
		return;
	}
	if (pid == 0) {
		if (dir != NULL && chdir(dir) < 0)
			_exit(127);
		execvp(argv[0], argv);
		fprintf(stderr, "unpkg: cannot run %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* dpkg's question about a conffile both the administrator and the
 * package changed, on the terminal: 1 install the package's version, 0
 * keep the local one, -1 (end of input) fail the package. */
static int ask_conffile(void *ctx, const char *package, const char *path,
			struct unpkg_err *err)
{
	struct cli *cli = ctx;
	int in_root = strcmp(cli->instdir, "/") != 0;
	char *real = real_path(cli, path);
	char *real_new = xasprintf("%s.dpkg-new", real);
	const char *base = strrchr(path, '/') + 1;
	char *line = NULL, *dir;
	size_t cap = 0;
	int answer = -1;

	(void)package;	/* (the status line came with the "prompt" event) */
	while (answer < 0) {
		const char *c;

		printf("\nConfiguration file '%s'", path);
		if (in_root)
			printf(" (actually '%s')", real);
		printf("\n"
		       " ==> Modified (by you or by a script) since installation.\n"
		       " ==> Package distributor has shipped an updated version.\n"
		       "   What would you like to do about it ?  Your options are:\n"
		       "    Y or I  : install the package maintainer's version\n"
		       "    N or O  : keep your currently-installed version\n"
		       "      D     : show the differences between the versions\n"
		       "      Z     : start a shell to examine the situation\n"
		       " The default action is to keep your current version.\n"
		       "*** %s (Y/I/N/O/D/Z) [default=N] ? ", base);
		fflush(stdout);
		if (getline(&line, &cap, stdin) < 0) {
			printf("\n");
			unpkg_err_set(err, UNPKG_ERR_USAGE, "end of file on "
				      "stdin at conffile prompt");
			break;
		}
		for (c = line; *c == ' ' || *c == '\t'; c++)
			;
		switch (*c) {
		case 'y': case 'Y': case 'i': case 'I':
			answer = 1;
			break;
		case 'n': case 'N': case 'o': case 'O': case '\n': case '\0':
			answer = 0;
			break;
		case 'd': case 'D':
			run_interactive((char *[]){ "diff", "-u", real,
						    real_new, NULL }, NULL);
			break;
		case 'z': case 'Z':
			printf("Type 'exit' when you're done.\n");
			setenv("DPKG_SHELL_REASON", "conffile-prompt", 1);
			setenv("DPKG_CONFFILE_OLD", real, 1);
			setenv("DPKG_CONFFILE_NEW", real_new, 1);
			dir = xstrdup(real);
			*strrchr(dir, '/') = '\0';
			run_interactive((char *[]){ getenv("SHELL") != NULL ?
						    getenv("SHELL") : "sh",
						    NULL },
					*dir != '\0' ? dir : "/");
			free(dir);
			break;
		}
	}
	free(line);
	free(real);
	free(real_new);
	return answer;
}

/* --- --recursive --------------------------------------------------------------- */

struct devino_chain {
	dev_t dev;
	ino_t ino;
	const struct devino_chain *up;
};

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_deb_name(const char *name)
{
	size_t len = strlen(name);

	return len >= 4 && strcmp(name + len - 4, ".deb") == 0;
}

/* Add the *.deb regular files below `dir` to `out` the way dpkg's
 * --recursive finds them: symbolic links followed, each directory's
 * entries in byte order, depth first. */
static void find_debs(const char *dir, const struct devino_chain *up,
		      struct strlist *out)
{
	struct strlist names = { 0 };
	struct devino_chain here;
	struct dirent *de;
	struct stat st;
	const struct devino_chain *c;
	DIR *d;
	size_t i;

	if (stat(dir, &st) < 0)
		die("cannot stat pathname '%s': %s", dir, strerror(errno));
	for (c = up; c != NULL; c = c->up)
		if (c->dev == st.st_dev && c->ino == st.st_ino)
			return;		/* a symbolic link loop */
	here = (struct devino_chain){ st.st_dev, st.st_ino, up };
	d = opendir(dir);
	if (d == NULL)
		die("cannot open directory '%s': %s", dir, strerror(errno));
	while ((errno = 0, de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			strlist_add(&names, de->d_name);
	if (errno != 0)
		die("cannot read directory '%s': %s", dir, strerror(errno));
	closedir(d);
	if (names.n > 0)
		qsort(names.v, names.n, sizeof(*names.v), cmp_names);
	for (i = 0; i < names.n; i++) {
		char *path = xasprintf("%s/%s", dir, names.v[i]);

		if (stat(path, &st) < 0) {
			if (errno != ENOENT && errno != ELOOP)
				die("cannot stat pathname '%s': %s", path,
				    strerror(errno));
		} else if (S_ISDIR(st.st_mode)) {
			find_debs(path, &here, out);
		} else if (S_ISREG(st.st_mode) && is_deb_name(names.v[i])) {
			strlist_add(out, path);
		}
		free(path);
	}
	strlist_free(&names);
}

/* --- hooks ---------------------------------------------------------------------- */

/* What dpkg exports to the programs it runs. */
static void export_env(const struct cli *cli)
{
	char names[1024];
	char *root = xstrdup(cli->instdir);
	size_t len = strlen(root);

	while (len > 0 && root[len - 1] == '/')
		root[--len] = '\0';
	if (setenv("DPKG_ROOT", root, 1) < 0 ||
	    setenv("DPKG_ADMINDIR", cli->admindir, 1) < 0 ||
	    setenv("DPKG_FORCE", unpkg_force_names(cli->force, names,
						    sizeof(names)), 1) < 0)
		die("cannot set the environment: %s", strerror(errno));
	free(root);
}

/* --pre-invoke / --post-invoke: each command through sh -c, with
 * DPKG_HOOK_ACTION; a failure ends the run, as in dpkg. */
static void run_hooks(const struct strlist *hooks, const char *action)
{
	size_t i;

	if (hooks->n == 0)
		return;
	if (setenv("DPKG_HOOK_ACTION", action, 1) < 0)
		die("cannot set the environment: %s", strerror(errno));
	fflush(NULL);
	for (i = 0; i < hooks->n; i++) {
		int rc = system(hooks->v[i]);

		if (rc != 0)
			die("error executing hook '%s', exit code %d",
			    hooks->v[i], rc);
	}
	unsetenv("DPKG_HOOK_ACTION");
}

/* --- the run ---------------------------------------------------------------------- */

/* Descriptors are cheap and the commit keeps files open until its
 * barrier: use all the process may have. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* The phases of a run (commit.h) as --stats names them; the library's
 * own identifier for a phase this list does not know yet. */
static const char *phase_label(enum unpkg_phase phase)
{
	switch (phase) {
	case UNPKG_PHASE_PLAN: return "preparing the run";
	case UNPKG_PHASE_OPEN: return "reading the packages";
	case UNPKG_PHASE_MARK: return "marking half-installed";
	case UNPKG_PHASE_EXTRACT: return "writing the files";
	case UNPKG_PHASE_BARRIER: return "waiting for the disk";
	case UNPKG_PHASE_RENAME: return "renaming into place";
	case UNPKG_PHASE_RECORD: return "updating the database";
	case UNPKG_PHASE_CONFIGURE: return "configuring";
	default: break;
	}
	return unpkg_phase_name(phase);
}

/* The file system classes of fsclass.h as users know the file systems:
 * the class ext2 is any ext2, ext3 or ext4 file system without a journal,
 * the class ext4 one with a journal. */
static const struct {
	const char *cls, *label;
} fs_labels[] = {
	{ "ext2", "ext2/ext4 without a journal" },
	{ "ext4", "ext4 with a journal" },
	{ "overlay", "overlayfs" },
	{ "other", "an unrecognised file system" },
};

/* Print the classes of `list` ("ext4+ext2", unpkg_stats.fsclass) by
 * their labels, joined with " and ". */
static void print_fsclasses(const char *list)
{
	const char *p = list, *end;
	size_t n, i;
	const char *label;

	while (*p != '\0') {
		end = strchr(p, '+');
		n = end != NULL ? (size_t)(end - p) : strlen(p);
		label = NULL;
		for (i = 0; i < sizeof(fs_labels) / sizeof(fs_labels[0]); i++)
			if (strlen(fs_labels[i].cls) == n &&
			    strncmp(fs_labels[i].cls, p, n) == 0)
				label = fs_labels[i].label;
		if (p != list)
			fputs(" and ", stdout);
		if (label != NULL)
			fputs(label, stdout);
		else
			printf("%.*s", (int)n, p);
		p += n + (end != NULL);
	}
}

#define STATS_ROW "stats: %-28s %10.6f s\n"

/* `seconds`: the whole run, installs and the trigger run that follows
 * them.  The phases do not add up to it: the barriers and renames of a
 * commit are timed on their own and also within the phase that commits
 * (marking, updating the database, configuring). */
/* UNPKG_AUTO_DIRTY_MAX_MIB: where auto stops using syncfs beside other
 * programs' unwritten data (0: the library's default). */
static long long dirty_max_kib(void)
{
	const char *v = getenv("UNPKG_AUTO_DIRTY_MAX_MIB");
	char *end;
	long long mib;

	if (v == NULL || *v == '\0')
		return 0;
	errno = 0;
	mib = strtoll(v, &end, 10);
	if (errno != 0 || *end != '\0' || mib <= 0 || mib > (1LL << 40)) {
		fprintf(stderr, "unpkg: warning: UNPKG_AUTO_DIRTY_MAX_MIB=%s "
			"is not a number of MiB; using the default\n", v);
		return 0;
	}
	return mib * 1024;
}

/* Where auto would sync whole file systems: the other programs' data it
 * saw waiting to be written, where it saw it, and whether that made it
 * sync file by file. */
static void print_dirty(const struct unpkg_stats *st)
{
	if (!st->dirty_avoided && strcmp(st->strategy, "syncfs") != 0)
		return;
	printf("stats: data waiting to be written before the run: ");
	switch (st->dirty_scope) {
	case UNPKG_DIRTY_DEVICES:
		printf("%lld MiB on its file systems (",
		       (st->others_dirty_kib + 1023) / 1024);
		if (st->dirty_devices[0] != '\0')
			printf("the writeback statistics of device%s %s%s",
			       strchr(st->dirty_devices, ' ') != NULL ? "s"
								       : "",
			       st->dirty_devices,
			       st->dirty_in_memory ? "; " : "");
		printf("%s)", st->dirty_in_memory
		       ? "nothing to write back on tmpfs" : "");
		break;
	case UNPKG_DIRTY_MACHINE:
		printf("%lld MiB on the whole machine (/proc/meminfo)",
		       (st->others_dirty_kib + 1023) / 1024);
		break;
	case UNPKG_DIRTY_UNCOUNTED:
		printf("not counted: its file systems order their commits%s, "
		       "where it writes out nobody else's data\n",
		       st->ordered_overlay ? " (an overlayfs through its "
		       "upper layer's)" : "");
		return;
	default:
		printf("unknown (neither the devices' writeback statistics nor "
		       "/proc/meminfo could be read)\n");
		return;
	}
	printf("%s\n", st->dirty_avoided ? ", more than auto lets syncfs "
		"write out: file by file instead" : "");
}

static void print_stats(const struct cli *cli, const struct unpkg_stats *st,
			double seconds)
{
	char row[64];
	int i;

	if (st->strategy[0] == '\0' && cli->sync == SYNC_AUTO) {
		/* no package's files: the database's writes alone */
		printf("stats: sync mode: none chosen (the database only)\n");
	} else if (cli->sync == SYNC_AUTO) {
		printf("stats: sync mode: %s (auto for ", st->strategy);
		print_fsclasses(st->fsclass);
		printf(", %s)\n", cli->sync_reason);
		printf("stats: file systems recognised by: %s\n",
		       st->fsclass_source);
		print_dirty(st);
	} else {
		printf("stats: sync mode: %s (%s)\n", st->strategy[0] != '\0'
		       ? st->strategy : unpkg_sync_mode_name(cli->sync),
		       cli->sync_reason);
	}
	for (i = 0; i < UNPKG_PHASE_COUNT; i++) {
		snprintf(row, sizeof(row), "phase %s",
			 phase_label((enum unpkg_phase)i));
		printf(STATS_ROW, row, st->phase_seconds[i]);
	}
	printf(STATS_ROW, "total", seconds);
	printf("stats: calls sync_file_range=%lu fdatasync=%lu fsync=%lu "
	       "syncfs=%lu rename=%lu\n", st->sync_file_range, st->fdatasync,
	       st->fsync, st->syncfs, st->rename);
	printf("stats: written files=%lu bytes=%llu\n", st->files, st->bytes);
	if (st->copied_up > 0)
		printf("stats: copy-up ahead of time: %lu files of the old "
		       "versions (an overlayfs root)\n", st->copied_up);
}

/* Forces the command named that unpkg does not implement yet: say so,
 * once, since the run may fail where dpkg's would go through. */
static void warn_strict_forces(const struct cli *cli)
{
	size_t n, i;
	const struct unpkg_force_info *t = unpkg_force_table(&n);

	for (i = 0; i < n; i++)
		if (t[i].use == UNPKG_FORCE_STRICT &&
		    t[i].flag != UNPKG_FORCE_ALL &&
		    (cli->force_named & cli->force & t[i].flag))
			fprintf(stderr, "unpkg: warning: --force-%s is not "
				"implemented by unpkg yet; it is ignored\n",
				t[i].name);
}

static void finish_outputs(struct cli *cli)
{
	size_t i;

	for (i = 0; i < cli->nloggers; i++)
		close(cli->status_fds[cli->nstatus_fds - cli->nloggers + i]);
	for (i = 0; i < cli->nloggers; i++)
		while (waitpid(cli->loggers[i], NULL, 0) < 0 && errno == EINTR)
			;
	if (cli->log_fd >= 0)
		close(cli->log_fd);
}

/* The options of the library's run from the command line's. */
static void fill_opts(struct cli *cli, struct unpkg_install_opts *o,
		      struct unpkg_stats *stats)
{
	static struct unpkg_events events;

	events.fn = on_event;
	events.ctx = cli;
	o->instdir = cli->instdir;
	o->admindir = cli->admindir;
	o->sync_auto = cli->sync == SYNC_AUTO;
	o->sync = o->sync_auto ? UNPKG_SYNC_DPKG
			       : (enum unpkg_sync_mode)cli->sync;
	o->dirty_max_kib = dirty_max_kib();
	o->frontend_lock = getenv("DPKG_FRONTEND_LOCKED") == NULL;
	o->force = cli->force;
	o->abort_after = (unsigned int)cli->abort_after;
	o->auto_deconfigure = cli->auto_deconfigure;
	o->no_triggers = cli->no_triggers;
	o->path_filter = &cli->path_filter;
	/* asked on a terminal, as dpkg asks; without one the local file is
	 * kept (dpkg would read the answer from stdin, or fail) */
	if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)) {
		o->conffile_ask = ask_conffile;
		o->conffile_ask_ctx = cli;
	}
	o->events = &events;
	o->stats = stats;
}

/* dpkg's closing summary of what failed. */
static void print_failed(struct cli *cli)
{
	size_t k;

	if (cli->nfailed == 0)
		return;
	fputs("Errors were encountered while processing:\n", stderr);
	for (k = 0; k < cli->nfailed; k++)
		fprintf(stderr, " %s\n", cli->failed[k]);
	for (k = 0; k < cli->nfailed; k++)
		free(cli->failed[k]);
	cli->nfailed = 0;
}

/* The trigger processing at the end of an action that activated triggers
 * or whose scripts did (dpkg's deferred processing), in-process: of the
 * packages the action activated, or with `all` (the end of --configure,
 * as dpkg) of every package with triggers pending.  `failed` packages
 * failed before it; returns the new count, or -1. */
static int process_triggers(struct cli *cli,
			    const struct unpkg_install_opts *o, int all,
			    int failed)
{
	static const char *const none[1];
	struct unpkg_err err;
	struct stat st;
	char *unincorp;
	int n, scripts;

	/* nothing activated, and nothing from dpkg-trigger: no run */
	unincorp = xasprintf("%s/triggers/Unincorp", cli->admindir);
	scripts = stat(unincorp, &st) == 0 && st.st_size > 0;
	free(unincorp);
	if (cli->activated.n == 0 && !scripts && !all)
		return failed;
	unpkg_err_init(&err);
	n = unpkg_trigproc(o, all ? NULL : cli->activated.n > 0
			   ? (const char *const *)cli->activated.v : none,
			   cli->activated.n, UNPKG_TRIGPROC_DEFERRED, &err);
	if (n < 0) {
		error_line("processing triggers: %s", err.msg);
		return -1;
	}
	return failed + n;
}

/* --triggers-only PKG... | -a: dpkg's action, in-process. */
static int triggers_only(struct cli *cli, const struct unpkg_install_opts *o,
			 const char *const *names, size_t n)
{
	struct unpkg_err err;
	double started;
	int failed;

	if (cli->pending && n > 0)
		die_usage("--triggers-only --pending does not take any "
			  "non-option arguments");
	if (!cli->pending && n == 0)
		die_usage("--triggers-only needs at least one package name "
			  "argument");
	if (geteuid() != 0 && !(cli->force & UNPKG_FORCE_NOT_ROOT))
		die("requested operation requires superuser privilege");
	export_env(cli);
	open_outputs(cli);
	run_hooks(&cli->pre_invoke, "triggers-only");
	log_line(cli, "startup packages triggers-only");
	unpkg_err_init(&err);
	started = unpkg_now();
	failed = unpkg_trigproc(o, names, n, cli->pending
				? UNPKG_TRIGPROC_PENDING : UNPKG_TRIGPROC_NAMES,
				&err);
	if (cli->stats)
		print_stats(cli, o->stats, unpkg_now() - started);
	if (failed < 0) {
		error_line("%s", err.msg);
		return EXIT_FATAL;
	}
	print_failed(cli);
	run_hooks(&cli->post_invoke, "triggers-only");
	return cli->status_broken ? EXIT_FATAL : failed > 0 ? EXIT_PKG_ERROR : 0;
}

/* Standard input, whole, in a malloc'd buffer. */
static char *read_stdin(size_t *len)
{
	size_t size = 4096, n = 0;
	char *buf = xrealloc(NULL, size, 1);
	ssize_t r;

	for (;;) {
		if (n == size) {
			size *= 2;
			buf = xrealloc(buf, size, 1);
		}
		r = read(STDIN_FILENO, buf + n, size - n);
		if (r == 0)
			break;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die("read error on standard input: %s", strerror(errno));
		n += (size_t)r;
	}
	*len = n;
	return buf;
}

/* --set-selections: in-process where unpkg takes the input, else stock
 * dpkg with the same arguments, reading the same input from a copy. */
static int set_selections(struct cli *cli, const struct unpkg_install_opts *o,
			  char **argv, int first, int argc)
{
	struct unpkg_err err;
	const char *why;
	double started;
	size_t len;
	char *text;
	int r, fd;

	/* (dpkg's usage errors and the check of write access in its words) */
	if (first < argc || geteuid() != 0)
		exec_dpkg(argv);
	text = read_stdin(&len);
	unpkg_err_init(&err);
	started = unpkg_now();
	r = unpkg_set_selections(o, text, len, &why, &err);
	if (r == UNPKG_SELECTIONS_DPKG) {
		if (cli->stats)
			printf("stats: --set-selections handed to dpkg: %s\n",
			       why);
		fd = memfd_create("selections", 0);
		if (fd < 0 || write_all(fd, text, len) < 0 ||
		    lseek(fd, 0, SEEK_SET) < 0 ||
		    dup2(fd, STDIN_FILENO) < 0)
			die("cannot hand the selections to dpkg: %s",
			    strerror(errno));
		close(fd);
		exec_dpkg(argv);
	}
	free(text);
	if (cli->stats)
		print_stats(cli, o->stats, unpkg_now() - started);
	if (r < 0) {
		error_line("%s", err.msg);
		return EXIT_FATAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct cli cli = {
		.sync = SYNC_AUTO,
		.sync_reason = "default",
		.abort_after = 50,
		.log_fd = -1,
	};
	struct items args = { 0 }, conf = { 0 };
	struct unpkg_dpkgcfg cfg = { 0 };
	struct unpkg_stats stats = { 0 };
	struct unpkg_install_opts o = { 0 };
	struct strlist debs = { 0 };
	const struct item *action;
	char *conf_error = NULL, *conf_warning = NULL;
	const char *env;
	struct unpkg_err err;
	int first, failed, i, ret, configure, removing;
	size_t k;
	double started;

	check_exec_guard();
#ifdef M_MMAP_THRESHOLD
	/* Decompressors allocate windows of several MiB, one per package and
	 * a few at once when packages are decoded ahead (deb.h).  Mapped,
	 * each goes back whole when it is freed; glibc's default raises the
	 * threshold past that size the first time one is freed, and the next
	 * ones then come from the heap, whose pages stay resident: the peak
	 * RSS of 100 packages went from 30 to 43 MiB.  A failure only leaves
	 * the default. */
	(void)mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
	first = collect_argv(&argc, argv, &args);
	collect_config(&cfg, &conf, &conf_error, &conf_warning);
	action = find_action(&args);
	if (action == NULL && conf_error == NULL)
		action = find_action(&conf);
	if (action != NULL && action->oi->handler == BY_DPKG)
		exec_dpkg(argv);

	/* unpkg's own action (or none: --force-help, or a usage error): the
	 * options apply in dpkg's order, the environment, then the
	 * configuration files, then the command line */
	if (conf_error != NULL)
		die("%s", conf_error);
	if (conf_warning != NULL)
		fprintf(stderr, "unpkg: warning: %s\n", conf_warning);
	unpkg_err_init(&err);
	if (unpkg_force_initial(getenv("DPKG_FORCE"), &cli.force, &err) < 0)
		die_usage("%s", err.msg);
	if (cli.force & UNPKG_FORCE_UNSAFE_IO)
		set_unsafe_io(&cli, 1, NULL);
	env = getenv("DPKG_ROOT");
	cli.instdir = xstrdup(env != NULL && env[0] != '\0' ? env : "/");
	env = getenv("DPKG_ADMINDIR");
	cli.admindir = env != NULL && env[0] != '\0' ? xstrdup(env)
		: xasprintf("%s/var/lib/dpkg",
			    strcmp(cli.instdir, "/") == 0 ? "" : cli.instdir);
	for (k = 0; k < conf.n; k++)
		apply_item(&cli, &conf.v[k]);
	for (k = 0; k < args.n; k++)
		apply_item(&cli, &args.v[k]);
	if (action == NULL)
		die_usage("need an action option");
	cli.action = action;
	cli.action_name = action->oi->id == A_INSTALL ? "--install"
			  : action->oi->id == A_CONFIGURE ? "--configure"
			  : action->oi->id == A_TRIGGERS ? "--triggers-only"
			  : action->oi->id == A_REMOVE ? "--remove"
			  : action->oi->id == A_PURGE ? "--purge" : "--unpack";
	configure = action->oi->id == A_CONFIGURE;
	removing = action->oi->handler == BY_UNPKG_REMOVE;
	if (!configure && !removing && action->oi->id != A_TRIGGERS &&
	    action->oi->id != A_SET_SELECTIONS && cli.needs_dpkg == NULL && !(cli.force & UNPKG_FORCE_DOWNGRADE))
		cli.needs_dpkg = "refuse-downgrade";
	if (cli.needs_dpkg != NULL)
		exec_dpkg(argv);
	/* dpkg's usage errors of --configure in dpkg's words */
	if (action->oi->id == A_CONFIGURE &&
	    (cli.pending ? first < argc : first >= argc))
		exec_dpkg(argv);
	warn_strict_forces(&cli);
	fill_opts(&cli, &o, &stats);
	if (action->oi->id == A_SET_SELECTIONS) {
		ret = set_selections(&cli, &o, argv, first, argc);
		goto done;
	}
	if (action->oi->id == A_TRIGGERS) {
		ret = triggers_only(&cli, &o, (const char *const *)argv + first,
				    (size_t)(argc - first));
		goto done;
	}

	if (removing && cli.pending && first < argc)
		die_usage("%s --pending does not take any non-option "
			  "arguments", cli.action_name);
	if (removing && !cli.pending && first >= argc)
		die_usage("%s needs at least one package name argument",
			  cli.action_name);
	if (!configure && !removing && first >= argc)
		die_usage(cli.recursive ? "%s --recursive needs at least one "
			  "path argument" : "%s needs at least one package "
			  "archive file argument", cli.action_name);
	for (i = first; !configure && i < argc; i++) {
		if (!cli.recursive || removing) {
			strlist_add(&debs, argv[i]);
			continue;
		}
		struct stat st;

		if (stat(argv[i], &st) < 0)
			die("cannot stat pathname '%s': %s", argv[i],
			    strerror(errno));
		if (!S_ISDIR(st.st_mode))
			die("--recursive: '%s' is not a directory", argv[i]);
		find_debs(argv[i], NULL, &debs);
	}
	if (!configure && !removing && debs.n == 0)
		die("searched, but found no packages (files matching *.deb)");
	if (geteuid() != 0 && !(cli.force & UNPKG_FORCE_NOT_ROOT))
		die("requested operation requires superuser privilege");
	/* Like dpkg: every archive must be there before anything starts. */
	for (k = 0; !removing && k < debs.n; k++) {
		struct stat st;

		if (stat(debs.v[k], &st) < 0)
			die("cannot access archive '%s': %s", debs.v[k],
			    strerror(errno));
		if (!S_ISREG(st.st_mode))
			die("archive '%s' is not a regular file", debs.v[k]);
	}
	raise_fd_limit();
	export_env(&cli);
	open_outputs(&cli);
	run_hooks(&cli.pre_invoke, action->oi->name);
	log_line(&cli, "startup %s %s",
		 configure || removing ? "packages" : "archives",
		 action->oi->name);

	o.configure = action->oi->id == A_INSTALL;
	unpkg_err_init(&err);
	started = unpkg_now();
	failed = configure
		 ? unpkg_configure(&o, (const char *const *)argv + first,
				   (size_t)(argc - first), cli.pending, &err)
		 : removing
		 ? unpkg_remove(&o, (const char *const *)debs.v, debs.n,
				action->oi->id == A_PURGE, cli.pending, &err)
		 : unpkg_install(&o, (const char *const *)debs.v, debs.n,
				 &err);
	if (failed < 0)
		error_line("%s", err.msg);
	/* (--configure processes every trigger waiting in the database
	 * too, as dpkg's does) */
	if (failed >= 0 && !cli.no_triggers)
		failed = process_triggers(&cli, &o, configure, failed);
	if (failed >= 0)
		print_failed(&cli);
	if (cli.stats)
		print_stats(&cli, &stats, unpkg_now() - started);
	if (failed >= 0)
		run_hooks(&cli.post_invoke, action->oi->name);
	ret = failed < 0 || cli.status_broken ? EXIT_FATAL
	      : failed > 0 ? EXIT_PKG_ERROR : 0;

done:
	finish_outputs(&cli);
	for (k = 0; k < cli.nfailed; k++)
		free(cli.failed[k]);
	free(cli.failed);
	free(cli.instdir);
	free(cli.admindir);
	free(cli.logfile);
	free(cli.status_fds);
	free(cli.loggers);
	strlist_free(&cli.pre_invoke);
	strlist_free(&cli.post_invoke);
	unpkg_pathfilter_destroy(&cli.path_filter);
	strlist_free(&cli.status_loggers);
	strlist_free(&cli.activated);
	strlist_free(&cli.run_pkgs);
	strlist_free(&debs);
	items_free(&args);
	items_free(&conf);
	unpkg_dpkgcfg_destroy(&cfg);
	free(conf_error);
	free(conf_warning);
	return ret;
}
