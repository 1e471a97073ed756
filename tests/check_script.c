/* check_script.c - running maintainer scripts.
 *
 * The scripts run in a minimal root: a static busybox as /bin/busybox and
 * /bin/sh.  They record what they see ($0, arguments, environment, working
 * directory, umask, whether they are chrooted) into files under /out of
 * the root, which the tests read back.  When dpkg is installed, the same
 * scripts are run by dpkg --root and the records compared.
 *
 * Needs root (chroot) and a statically linked busybox (BUSYBOX, default
 * /bin/busybox, from busybox-static); exits 77 otherwise.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dpkgcfg.h"
#include "force.h"
#include "script.h"

/* The things dpkg forces by default (its DPKG_FORCE without one set). */
#define DPKG_DEFAULTS (UNPKG_FORCE_SECURITY_MAC | UNPKG_FORCE_DOWNGRADE)
#include "testutil.h"

extern char **environ;

static const char *busybox;

/* Records $0, the arguments, the environment (NUL-separated), the
 * physical working directory, the umask, whether / is the test root and
 * the ignored signals (where /proc is mounted) into
 * $DPKG_ROOT/out/NAME.*, or $TEST_OUT/NAME.* when that is set (with
 * $TEST_BUSYBOX then). */
static const char record_script[] =
	"#!/bin/sh\n"
	"o=\"${TEST_OUT:-$DPKG_ROOT/out}/$DPKG_MAINTSCRIPT_NAME\"\n"
	"bb=\"${TEST_BUSYBOX:-$DPKG_ROOT/bin/busybox}\"\n"
	"\"$bb\" env -0 > \"$o.env\"\n"
	"printf '%s' \"$0\" > \"$o.0\"\n"
	"printf '%s' \"$#\" > \"$o.argc\"\n"
	"i=0\n"
	"for a in \"$@\"; do i=$((i+1)); printf '%s' \"$a\" > \"$o.arg$i\"; "
	"done\n"
	"pwd -P > \"$o.pwd\"\n"
	"umask > \"$o.umask\"\n"
	"if [ -e /.unpkg-test-root ]; then echo chrooted; else echo host; fi"
	" > \"$o.where\"\n"
	"if [ -r /proc/$$/status ]; then\n"
	"  \"$bb\" grep '^SigIgn:' /proc/$$/status > \"$o.sigign\"\n"
	"fi\n"
	"exit 0\n";

struct captured {
	int warnings;
	char last[1024];
};

static void on_event(void *ctx, const struct unpkg_event *ev)
{
	struct captured *c = ctx;

	if (ev->kind == UNPKG_EV_WARNING) {
		c->warnings++;
		snprintf(c->last, sizeof(c->last), "%s", ev->message);
	}
}

static char *path_of(const char *dir, const char *rel)
{
	size_t n = strlen(dir) + 1 + strlen(rel) + 1;
	char *p = malloc(n);

	ck_assert_ptr_nonnull(p);
	snprintf(p, n, "%s/%s", dir, rel);
	return p;
}

static void copy_file(const char *from, const char *to, mode_t mode)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	ssize_t n;

	ck_assert_msg(in >= 0 && out >= 0, "copy %s: %s", from,
		      strerror(errno));
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ck_assert_int_eq(write(out, buf, (size_t)n), n);
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(fchmod(out, mode), 0);
	close(in);
	ck_assert_int_eq(close(out), 0);
}

static void mkdirs(const char *root, const char *rel, mode_t mode)
{
	char *p = path_of(root, rel);
	char *s;

	for (s = p + strlen(root) + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;

			*s = '\0';
			ck_assert_msg(mkdir(p, mode) == 0 || errno == EEXIST,
				      "mkdir %s: %s", p, strerror(errno));
			chmod(p, mode);
			*s = c;
			if (c == '\0')
				break;
		}
	}
	free(p);
}

/* A fresh root with busybox, /bin/sh, /out and an empty database; the
 * canonical absolute path, malloc'd. */
static char *mkroot(void)
{
	char *tmp = tu_mkdtemp();
	char *root = realpath(tmp, NULL);
	char *p;

	ck_assert_ptr_nonnull(root);
	free(tmp);
	mkdirs(root, "bin", 0755);
	mkdirs(root, "out", 0777);
	mkdirs(root, "var/lib/dpkg/info", 0755);
	mkdirs(root, "var/lib/dpkg/updates", 0755);
	p = path_of(root, "var/lib/dpkg/status");
	tu_write_file(p, "", 0644);
	free(p);
	p = path_of(root, ".unpkg-test-root");
	tu_write_file(p, "", 0644);
	free(p);
	p = path_of(root, "bin/busybox");
	copy_file(busybox, p, 0755);
	free(p);
	p = path_of(root, "bin/sh");
	ck_assert_int_eq(symlink("busybox", p), 0);
	free(p);
	return root;
}

static char *admindir_of(const char *root)
{
	return path_of(root, "var/lib/dpkg");
}

static void put(const char *root, const char *rel, const char *text,
		mode_t mode)
{
	char *p = path_of(root, rel);

	tu_write_file(p, text, mode);
	ck_assert_int_eq(chmod(p, mode), 0);
	free(p);
}

/* The content of ROOT/out/NAME.WHAT, or NULL when missing. */
static char *rec(const char *root, const char *name, const char *what)
{
	char rel[256];
	char *p, *s;

	snprintf(rel, sizeof(rel), "out/%s.%s", name, what);
	p = path_of(root, rel);
	s = tu_read_file(p, NULL);
	free(p);
	return s;
}

static void assert_rec(const char *root, const char *name, const char *what,
		       const char *want)
{
	char *got = rec(root, name, what);

	ck_assert_msg(got != NULL, "%s.%s not recorded", name, what);
	ck_assert_msg(strcmp(got, want) == 0, "%s.%s: got \"%s\", want \"%s\"",
		      name, what, got, want);
	free(got);
}

/* The recorded environment of `name` (NUL-separated entries). */
struct env {
	char *buf;
	size_t len;
};

static struct env rec_env(const char *root, const char *name)
{
	char rel[256];
	struct env e;
	char *p;

	snprintf(rel, sizeof(rel), "out/%s.env", name);
	p = path_of(root, rel);
	e.buf = tu_read_file(p, &e.len);
	ck_assert_msg(e.buf != NULL, "%s: no environment recorded", name);
	free(p);
	return e;
}

static const char *env_get(const struct env *e, const char *name)
{
	size_t off = 0, n = strlen(name);

	while (off < e->len) {
		const char *entry = e->buf + off;

		if (strncmp(entry, name, n) == 0 && entry[n] == '=')
			return entry + n + 1;
		off += strlen(entry) + 1;
	}
	return NULL;
}

static void assert_env(const struct env *e, const char *name,
		       const char *want)
{
	const char *got = env_get(e, name);

	ck_assert_msg(got != NULL, "%s not set", name);
	ck_assert_msg(strcmp(got, want) == 0, "%s: got \"%s\", want \"%s\"",
		      name, got, want);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of the DPKG_* variables, sorted, joined with spaces. */
static void dpkg_names(const struct env *e, char *out, size_t size)
{
	char *names[128];
	size_t n = 0, off = 0, i, len = 0;

	while (off < e->len && n < 128) {
		char *entry = e->buf + off;

		if (strncmp(entry, "DPKG_", 5) == 0)
			names[n++] = strndup(entry, strcspn(entry, "="));
		off += strlen(entry) + 1;
	}
	qsort(names, n, sizeof(names[0]), cmp_str);
	out[0] = '\0';
	for (i = 0; i < n; i++) {
		len += (size_t)snprintf(out + len, size - len, "%s%s",
					i > 0 ? " " : "", names[i]);
		free(names[i]);
	}
}

#define OUR_DPKG_VARS \
	"DPKG_ADMINDIR DPKG_FORCE DPKG_MAINTSCRIPT_ARCH " \
	"DPKG_MAINTSCRIPT_DEBUG DPKG_MAINTSCRIPT_NAME " \
	"DPKG_MAINTSCRIPT_PACKAGE DPKG_MAINTSCRIPT_PACKAGE_REFCOUNT " \
	"DPKG_ROOT DPKG_RUNNING_VERSION"

static void ctx_for(struct unpkg_script_ctx *ctx, const char *instdir,
		    const char *admindir, struct unpkg_events *ev,
		    struct captured *cap)
{
	memset(ctx, 0, sizeof(*ctx));
	memset(cap, 0, sizeof(*cap));
	ev->fn = on_event;
	ev->ctx = cap;
	ctx->instdir = instdir;
	ctx->admindir = admindir;
	ctx->package = "foo";
	ctx->arch = "amd64";
	ctx->events = ev;
}

/* Run and expect the script to have been started. */
static struct unpkg_script_result run_ok(const struct unpkg_script_ctx *ctx,
					 const char *script,
					 const char *const *argv)
{
	struct unpkg_script_result res;
	struct unpkg_err err;
	int r;

	unpkg_err_init(&err);
	r = unpkg_script_run(ctx, script, argv, "test script", &res, &err);
	ck_assert_msg(r == 1, "run %s: %d: %s", script, r, err.msg);
	ck_assert_int_eq(res.ran, 1);
	return res;
}

/* Chrooted: everything a script sees, exactly. */
START_TEST(test_chroot)
{
	char *root = mkroot(), *admin = admindir_of(root);
	const char *argv[] = { "configure", "", NULL };
	struct unpkg_script_ctx ctx;
	struct unpkg_script_result res;
	struct unpkg_events ev;
	struct captured cap;
	char names[1024];
	struct env e;

	put(root, "var/lib/dpkg/info/foo.postinst", record_script, 0755);
	ck_assert_int_eq(setenv("UNPKG_TEST_MARK", "m1", 1), 0);
	ck_assert_int_eq(setenv("DPKG_ROOT", "/overridden", 1), 0);
	umask(077);
	ctx_for(&ctx, root, admin, &ev, &cap);
	res = run_ok(&ctx, "info/foo.postinst", argv);
	ck_assert_int_eq(res.status, 0);
	ck_assert_int_eq(res.signo, 0);
	ck_assert_int_eq(res.child_errno, 0);
	ck_assert_int_eq(cap.warnings, 0);

	assert_rec(root, "postinst", "where", "chrooted\n");
	assert_rec(root, "postinst", "0", "/var/lib/dpkg/info/foo.postinst");
	assert_rec(root, "postinst", "argc", "2");
	assert_rec(root, "postinst", "arg1", "configure");
	assert_rec(root, "postinst", "arg2", "");
	assert_rec(root, "postinst", "pwd", "/\n");
	assert_rec(root, "postinst", "umask", "0022\n");

	e = rec_env(root, "postinst");
	assert_env(&e, "DPKG_MAINTSCRIPT_PACKAGE", "foo");
	assert_env(&e, "DPKG_MAINTSCRIPT_PACKAGE_REFCOUNT", "1");
	assert_env(&e, "DPKG_MAINTSCRIPT_ARCH", "amd64");
	assert_env(&e, "DPKG_MAINTSCRIPT_NAME", "postinst");
	assert_env(&e, "DPKG_MAINTSCRIPT_DEBUG", "0");
	assert_env(&e, "DPKG_RUNNING_VERSION", "1.21.22");
	assert_env(&e, "DPKG_ROOT", "");
	assert_env(&e, "DPKG_ADMINDIR", "/var/lib/dpkg");
	assert_env(&e, "DPKG_FORCE", "security-mac,downgrade");
	assert_env(&e, "UNPKG_TEST_MARK", "m1");
	dpkg_names(&e, names, sizeof(names));
	ck_assert_str_eq(names, OUR_DPKG_VARS);
	free(e.buf);
	tu_rm_rf(root);
	free(root);
	free(admin);
}
END_TEST

/* --force-script-chrootless: host paths everywhere; signal dispositions
 * as the caller had them before the call (SIGINT not ignored). */
START_TEST(test_chrootless)
{
	char *root = mkroot(), *admin = admindir_of(root);
	const char *extra[] = { "UNPKG_EXTRA=x", "DPKG_MAINTSCRIPT_DEBUG=1",
				"UNPKG_EXTRA=y", NULL };
	const char *argv[] = { "upgrade", "1.0", "2.0", NULL };
	struct unpkg_script_ctx ctx;
	struct unpkg_events ev;
	struct captured cap;
	char want[PATH_MAX + 64], force[256], *sig;
	struct env e;

	mkdirs(root, "var/lib/dpkg/tmp.ci", 0755);
	put(root, "var/lib/dpkg/tmp.ci/preinst", record_script, 0755);
	ck_assert_ptr_ne(signal(SIGHUP, SIG_IGN), SIG_ERR);
	ck_assert_ptr_ne(signal(SIGINT, SIG_DFL), SIG_ERR);
	ck_assert_ptr_ne(signal(SIGQUIT, SIG_DFL), SIG_ERR);
	ctx_for(&ctx, root, admin, &ev, &cap);
	ctx.chrootless = 1;
	ctx.refcount = 2;
	ctx.arch = "all";
	ctx.env = extra;
	ctx.force = unpkg_force_names(DPKG_DEFAULTS | UNPKG_FORCE_UNSAFE_IO |
				      UNPKG_FORCE_SCRIPT_CHROOTLESS, force,
				      sizeof(force));
	ck_assert_int_eq(run_ok(&ctx, "tmp.ci/preinst", argv).status, 0);

	assert_rec(root, "preinst", "where", "host\n");
	snprintf(want, sizeof(want), "%s/tmp.ci/preinst", admin);
	assert_rec(root, "preinst", "0", want);
	assert_rec(root, "preinst", "argc", "3");
	assert_rec(root, "preinst", "arg1", "upgrade");
	assert_rec(root, "preinst", "arg2", "1.0");
	assert_rec(root, "preinst", "arg3", "2.0");
	snprintf(want, sizeof(want), "%s\n", root);
	assert_rec(root, "preinst", "pwd", want);
	e = rec_env(root, "preinst");
	assert_env(&e, "DPKG_ROOT", root);
	assert_env(&e, "DPKG_ADMINDIR", admin);
	assert_env(&e, "DPKG_MAINTSCRIPT_NAME", "preinst");
	assert_env(&e, "DPKG_MAINTSCRIPT_ARCH", "all");
	assert_env(&e, "DPKG_MAINTSCRIPT_PACKAGE_REFCOUNT", "2");
	assert_env(&e, "DPKG_MAINTSCRIPT_DEBUG", "1");
	assert_env(&e, "DPKG_FORCE",
		   "security-mac,downgrade,unsafe-io,script-chrootless");
	assert_env(&e, "UNPKG_EXTRA", "y");
	free(e.buf);

	/* SIGHUP (bit 0) passes through as ignored; SIGINT (bit 1) and
	 * SIGQUIT (bit 2) keep their default disposition in the child. */
	sig = rec(root, "preinst", "sigign");
	if (sig != NULL) {
		unsigned long long mask = strtoull(sig + strlen("SigIgn:"),
						   NULL, 16);

		ck_assert_msg((mask & 1ull) != 0, "SIGHUP not ignored: %s", sig);
		ck_assert_msg((mask & 6ull) == 0, "SIGINT/SIGQUIT ignored: %s",
			      sig);
		free(sig);
	}
	tu_rm_rf(root);
	free(root);
	free(admin);
}
END_TEST

/* Root "/": no chroot, the admin directory as given, DPKG_ROOT "". */
START_TEST(test_root_slash)
{
	char *root = mkroot(), *admin = admindir_of(root);
	char *out = path_of(root, "out"), *bb = path_of(root, "bin/busybox");
	struct unpkg_script_ctx ctx;
	struct unpkg_events ev;
	struct captured cap;
	char want[PATH_MAX + 64];
	struct env e;

	put(root, "var/lib/dpkg/info/foo.prerm", record_script, 0755);
	ck_assert_int_eq(setenv("TEST_OUT", out, 1), 0);
	ck_assert_int_eq(setenv("TEST_BUSYBOX", bb, 1), 0);
	ctx_for(&ctx, "/", admin, &ev, &cap);
	ck_assert_int_eq(run_ok(&ctx, "info/foo.prerm", NULL).status, 0);
	assert_rec(root, "prerm", "where", "host\n");
	snprintf(want, sizeof(want), "%s/info/foo.prerm", admin);
	assert_rec(root, "prerm", "0", want);
	assert_rec(root, "prerm", "argc", "0");
	assert_rec(root, "prerm", "pwd", "/\n");
	e = rec_env(root, "prerm");
	assert_env(&e, "DPKG_ROOT", "");
	assert_env(&e, "DPKG_ADMINDIR", admin);
	assert_env(&e, "DPKG_MAINTSCRIPT_NAME", "prerm");
	free(e.buf);
	tu_rm_rf(root);
	free(root);
	free(admin);
	free(out);
	free(bb);
}
END_TEST

/* Exit statuses, death by signal, and dpkg's messages for them. */
START_TEST(test_status)
{
	static const struct {
		const char *body;
		int status, signo;
		const char *msg;
	} cases[] = {
		{ "exit 0", 0, 0, "" },
		{ "exit 1", 1, 0, "returned error exit status 1" },
		{ "exit 42", 42, 0, "returned error exit status 42" },
		{ "exit 143", 143, 0, "returned error exit status 143" },
		{ "kill -TERM $$", 128 + SIGTERM, SIGTERM,
		  "was killed by signal (Terminated)" },
		{ "kill -KILL $$", 128 + SIGKILL, SIGKILL,
		  "was killed by signal (Killed)" },
	};
	char *root = mkroot(), *admin = admindir_of(root);
	struct unpkg_script_ctx ctx;
	struct unpkg_events ev;
	struct captured cap;
	char desc[256], text[512], msg[1024];
	size_t i;

	unpkg_script_desc(desc, sizeof(desc), "new", "foo", "postinst");
	ck_assert_str_eq(desc, "new foo package post-installation script");
	ctx_for(&ctx, root, admin, &ev, &cap);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct unpkg_script_result res;
		struct unpkg_err err;

		snprintf(text, sizeof(text), "#!/bin/sh\n%s\n", cases[i].body);
		put(root, "var/lib/dpkg/info/foo.postinst", text, 0755);
		unpkg_err_init(&err);
		ck_assert_int_eq(unpkg_script_run(&ctx, "info/foo.postinst",
						  NULL, desc, &res, &err), 1);
		ck_assert_int_eq(res.status, cases[i].status);
		ck_assert_int_eq(res.signo, cases[i].signo);
		ck_assert_int_eq(res.child_errno, 0);
		ck_assert_int_eq(unpkg_script_failure(&res, desc, msg,
						      sizeof(msg)),
				 cases[i].status != 0);
		if (cases[i].status != 0) {
			snprintf(text, sizeof(text), "%s subprocess %s", desc,
				 cases[i].msg);
			ck_assert_str_eq(msg, text);
		} else {
			ck_assert_str_eq(msg, "");
		}
	}
	ck_assert_int_eq(cap.warnings, 0);
	tu_rm_rf(root);
	free(root);
	free(admin);
}
END_TEST

/* A missing script is a success that runs nothing. */
START_TEST(test_missing)
{
	char *root = mkroot(), *admin = admindir_of(root);
	struct unpkg_script_ctx ctx;
	struct unpkg_script_result res;
	struct unpkg_events ev;
	struct captured cap;
	struct unpkg_err err;
	char msg[64];

	ctx_for(&ctx, root, admin, &ev, &cap);
	unpkg_err_init(&err);
	res.ran = res.status = 7;
	ck_assert_int_eq(unpkg_script_run(&ctx, "info/foo.postinst", NULL,
					  NULL, &res, &err), 0);
	ck_assert_int_eq(res.ran, 0);
	ck_assert_int_eq(res.status, 0);
	ck_assert_int_eq(unpkg_script_failure(&res, "x", msg, sizeof(msg)), 0);
	/* tmp.ci does not exist at all */
	ck_assert_int_eq(unpkg_script_run(&ctx, "tmp.ci/preinst", NULL, NULL,
					  &res, &err), 0);
	ctx.chrootless = 1;
	ck_assert_int_eq(unpkg_script_run(&ctx, "info/foo.postinst", NULL,
					  NULL, &res, &err), 0);
	ck_assert_int_eq(err.code, UNPKG_ERR_NONE);
	ck_assert_int_eq(cap.warnings, 0);
	tu_rm_rf(root);
	free(root);
	free(admin);
}
END_TEST

/* As dpkg: a script that is not r-x for all is made 0755 and run. */
START_TEST(test_not_executable)
{
	static const mode_t modes[] = { 0644, 0700, 0600, 0711, 0555, 0755 };
	char *root = mkroot(), *admin = admindir_of(root);
	char *path = path_of(admin, "info/foo.postinst");
	struct unpkg_script_ctx ctx;
	struct unpkg_events ev;
	struct captured cap;
	struct stat st;
	size_t i;

	ctx_for(&ctx, root, admin, &ev, &cap);
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		put(root, "var/lib/dpkg/info/foo.postinst",
		    "#!/bin/sh\nexit 3\n", modes[i]);
		ck_assert_int_eq(run_ok(&ctx, "info/foo.postinst",
					NULL).status, 3);
		ck_assert_int_eq(stat(path, &st), 0);
		ck_assert_uint_eq(st.st_mode & 07777,
				  (modes[i] & 0555) == 0555 ? modes[i] : 0755);
	}
	tu_rm_rf(root);
	free(root);
	free(admin);
	free(path);
}
END_TEST

/* A failure between fork and the script: status 2 and a message, as the
 * "dpkg (subprocess)" error of dpkg.  The interpreter is looked up
 * inside the root, so one that exists only on the host is missing. */
START_TEST(test_missing_interpreter)
{
	char *root = mkroot(), *admin = admindir_of(root);
	struct unpkg_script_ctx ctx;
	struct unpkg_script_result res;
	struct unpkg_events ev;
	struct captured cap;
	struct unpkg_err err;
	const char *interp = access("/bin/true", X_OK) == 0 ? "/bin/true" :
			     "/usr/bin/true";
	char text[256], desc[256], msg[512];

	/* An interpreter of the host that the root lacks. */
	ck_assert_int_eq(access(interp, X_OK), 0);
	snprintf(text, sizeof(text), "#!%s\nexit 1\n", interp);
	mkdirs(root, "var/lib/dpkg/tmp.ci", 0755);
	put(root, "var/lib/dpkg/tmp.ci/preinst", text, 0755);
	unpkg_script_desc(desc, sizeof(desc), "new", "foo", "preinst");
	ctx_for(&ctx, root, admin, &ev, &cap);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_script_run(&ctx, "tmp.ci/preinst", NULL, desc,
					  &res, &err), 1);
	ck_assert_int_eq(res.ran, 1);
	ck_assert_int_eq(res.status, 2);
	ck_assert_int_eq(res.child_errno, ENOENT);
	ck_assert_int_eq(cap.warnings, 1);
	ck_assert_str_eq(cap.last, "unable to execute new foo package "
			 "pre-installation script "
			 "(/var/lib/dpkg/tmp.ci/preinst): "
			 "No such file or directory");
	ck_assert_int_eq(unpkg_script_failure(&res, desc, msg, sizeof(msg)),
			 1);
	ck_assert_str_eq(msg, "new foo package pre-installation script "
			 "subprocess returned error exit status 2");

	/* The same script chrootless finds the host's interpreter. */
	ctx.chrootless = 1;
	ck_assert_int_eq(unpkg_script_run(&ctx, "tmp.ci/preinst", NULL, desc,
					  &res, &err), 1);
	ck_assert_int_eq(res.child_errno, 0);
	ck_assert_int_eq(res.status, 0);
	ck_assert_int_eq(cap.warnings, 1);
	tu_rm_rf(root);
	free(root);
	free(admin);
}
END_TEST

/* Without "#!" the kernel refuses (ENOEXEC); /bin/sh of the root runs it,
 * with $0 the script, as glibc's execvp does for dpkg. */
START_TEST(test_no_shebang)
{
	char *root = mkroot(), *admin = admindir_of(root);
	const char *argv[] = { "remove", NULL };
	struct unpkg_script_ctx ctx;
	struct unpkg_events ev;
	struct captured cap;

	put(root, "var/lib/dpkg/info/foo.postrm",
	    "printf '%s %s' \"$0\" \"$*\" > /out/plain\n"
	    "[ -e /.unpkg-test-root ] || exit 9\nexit 5\n", 0755);
	ctx_for(&ctx, root, admin, &ev, &cap);
	ck_assert_int_eq(run_ok(&ctx, "info/foo.postrm", argv).status, 5);
	{
		char *p = path_of(root, "out/plain");
		char *got = tu_read_file(p, NULL);

		ck_assert_ptr_nonnull(got);
		ck_assert_str_eq(got, "/var/lib/dpkg/info/foo.postrm remove");
		free(got);
		free(p);
	}
	tu_rm_rf(root);
	free(root);
	free(admin);
}
END_TEST

/* An admin directory outside the root cannot be chrooted into: dpkg's
 * child fails with status 2; chrootless works. */
START_TEST(test_admindir_outside)
{
	char *root = mkroot(), *other = mkroot(), *admin = admindir_of(other);
	struct unpkg_script_ctx ctx;
	struct unpkg_script_result res;
	struct unpkg_events ev;
	struct captured cap;
	struct unpkg_err err;

	ctx_for(&ctx, root, admin, &ev, &cap);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_script_run(&ctx, "info/foo.postinst", NULL,
					  NULL, &res, &err), 0);
	put(other, "var/lib/dpkg/info/foo.postinst", record_script, 0644);
	ck_assert_int_eq(unpkg_script_run(&ctx, "info/foo.postinst", NULL,
					  NULL, &res, &err), 1);
	ck_assert_int_eq(res.status, 2);
	ck_assert_int_eq(res.child_errno, -1);
	ck_assert_int_eq(cap.warnings, 1);
	ck_assert_str_eq(cap.last, "admindir must be inside instdir for dpkg "
			 "to work properly");
	ck_assert_ptr_null(rec(other, "postinst", "where"));

	/* Chrootless, DPKG_ROOT is the root, so the records go there. */
	ctx.chrootless = 1;
	ck_assert_int_eq(run_ok(&ctx, "info/foo.postinst", NULL).status, 0);
	assert_rec(root, "postinst", "where", "host\n");
	{
		struct env e = rec_env(root, "postinst");

		assert_env(&e, "DPKG_ADMINDIR", admin);
		assert_env(&e, "DPKG_ROOT", root);
		free(e.buf);
	}
	tu_rm_rf(root);
	tu_rm_rf(other);
	free(root);
	free(other);
	free(admin);
}
END_TEST

/* The script is looked up inside the root: a symlink to a host path is
 * resolved beneath the root, and the host file is left alone. */
START_TEST(test_symlink_inside)
{
	char *root = mkroot(), *admin = admindir_of(root);
	char *host = tu_mkdtemp();
	char *hostfile = path_of(host, "script");
	char *link = path_of(admin, "info/foo.postinst");
	struct unpkg_script_ctx ctx;
	struct unpkg_script_result res;
	struct unpkg_events ev;
	struct captured cap;
	struct unpkg_err err;
	struct stat st;

	tu_write_file(hostfile, "#!/bin/sh\nexit 0\n", 0644);
	ck_assert_int_eq(chmod(hostfile, 0644), 0);
	ck_assert_int_eq(symlink(hostfile, link), 0);
	ctx_for(&ctx, root, admin, &ev, &cap);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_script_run(&ctx, "info/foo.postinst", NULL,
					  NULL, &res, &err), 0);
	ck_assert_int_eq(stat(hostfile, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0644);

	/* An absolute symlink inside the root, to a file of the root. */
	ck_assert_int_eq(unlink(link), 0);
	put(root, "real-script", "#!/bin/sh\nexit 6\n", 0600);
	ck_assert_int_eq(symlink("/real-script", link), 0);
	ck_assert_int_eq(run_ok(&ctx, "info/foo.postinst", NULL).status, 6);
	tu_rm_rf(root);
	tu_rm_rf(host);
	free(root);
	free(admin);
	free(host);
	free(hostfile);
	free(link);
}
END_TEST

static volatile sig_atomic_t got_int;

static void on_int(int sig)
{
	(void)sig;
	got_int++;
}

/* SIGINT and SIGQUIT to the caller are ignored while the script runs and
 * the caller's handler is back afterwards. */
START_TEST(test_signals_ignored)
{
	char *root = mkroot(), *admin = admindir_of(root);
	struct unpkg_script_ctx ctx;
	struct unpkg_events ev;
	struct captured cap;
	struct sigaction sa, now;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_int;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGINT, &sa, NULL), 0);
	ck_assert_int_eq(sigaction(SIGQUIT, &sa, NULL), 0);
	got_int = 0;
	put(root, "var/lib/dpkg/info/foo.postinst",
	    "#!/bin/sh\nkill -INT $PPID\nkill -QUIT $PPID\n"
	    "/bin/busybox sleep 0.2\nexit 0\n", 0755);
	ctx_for(&ctx, root, admin, &ev, &cap);
	ck_assert_int_eq(run_ok(&ctx, "info/foo.postinst", NULL).status, 0);
	ck_assert_int_eq(got_int, 0);
	ck_assert_int_eq(sigaction(SIGINT, NULL, &now), 0);
	ck_assert_ptr_eq(now.sa_handler, on_int);
	ck_assert_int_eq(sigaction(SIGQUIT, NULL, &now), 0);
	ck_assert_ptr_eq(now.sa_handler, on_int);
	ck_assert_int_eq(raise(SIGINT), 0);
	ck_assert_int_eq(got_int, 1);
	tu_rm_rf(root);
	free(root);
	free(admin);
}
END_TEST

static volatile sig_atomic_t alarms;
static char *alarms_flag;

/* The third alarm makes the file alarms_flag, which ends the script. */
static void on_alarm(int sig)
{
	int fd;

	(void)sig;
	if (++alarms == 3) {
		fd = open(alarms_flag, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
	}
}

/* Interrupted waits are resumed: the script runs until the caller has had
 * three alarms (however long that takes on a loaded machine; a minute at
 * most). */
START_TEST(test_eintr)
{
	char *root = mkroot(), *admin = admindir_of(root);
	struct unpkg_script_ctx ctx;
	struct unpkg_events ev;
	struct captured cap;
	struct sigaction sa;
	struct itimerval it = { { 0, 50000 }, { 0, 50000 } };
	struct itimerval off = { { 0, 0 }, { 0, 0 } };

	alarms = 0;
	alarms_flag = path_of(root, "alarms");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;	/* no SA_RESTART */
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGALRM, &sa, NULL), 0);
	put(root, "var/lib/dpkg/info/foo.postinst",
	    "#!/bin/sh\ni=0\n"
	    "while [ ! -e /alarms ] && [ $i -lt 1200 ]; do\n"
	    "\t/bin/busybox sleep 0.05; i=$((i + 1))\ndone\n"
	    "[ -e /alarms ] && exit 4\nexit 5\n", 0755);
	ctx_for(&ctx, root, admin, &ev, &cap);
	ck_assert_int_eq(setitimer(ITIMER_REAL, &it, NULL), 0);
	ck_assert_int_eq(run_ok(&ctx, "info/foo.postinst", NULL).status, 4);
	ck_assert_int_eq(setitimer(ITIMER_REAL, &off, NULL), 0);
	ck_assert_int_gt(alarms, 2);
	free(alarms_flag);
	tu_rm_rf(root);
	free(root);
	free(admin);
}
END_TEST

START_TEST(test_usage)
{
	static const char *const bad[] = {
		"", "/var/lib/dpkg/info/foo.postinst", "../foo.postinst",
		"info/../../x", "info/", NULL,
	};
	struct unpkg_script_ctx ctx;
	struct unpkg_script_result res;
	struct unpkg_events ev;
	struct captured cap;
	size_t i;

	ctx_for(&ctx, "/nonexistent", "/nonexistent/var/lib/dpkg", &ev, &cap);
	for (i = 0; bad[i] != NULL; i++) {
		struct unpkg_err err;

		unpkg_err_init(&err);
		ck_assert_int_eq(unpkg_script_run(&ctx, bad[i], NULL, NULL,
						  &res, &err), -1);
		ck_assert_int_eq(err.code, UNPKG_ERR_USAGE);
	}
	{
		struct unpkg_err err;

		/* A root that does not exist cannot be examined. */
		unpkg_err_init(&err);
		ck_assert_int_eq(unpkg_script_run(&ctx, "info/foo.postinst",
						  NULL, NULL, &res, &err), -1);
		ck_assert_int_eq(err.code, UNPKG_ERR_SYS);
	}
}
END_TEST

START_TEST(test_admindir_in_root)
{
	static const struct {
		const char *instdir, *admindir, *want;
	} cases[] = {
		{ "/t", "/t/var/lib/dpkg", "/var/lib/dpkg" },
		{ "/t/", "/t//var/lib/dpkg/", "/var/lib/dpkg" },
		{ "/t/./u", "/t/u/./db", "/db" },
		{ "/t", "/t", "/" },
		{ "/", "/var/lib/dpkg", "/var/lib/dpkg" },
		{ "//", "db", "db" },
		{ "t", "t/var", "/var" },
		{ "/t", "/tt/var", NULL },
		{ "/t/u", "/t", NULL },
		{ "/t", "/x/var", NULL },
		{ "/t", "t/var", NULL },
		{ "t", "/t/var", NULL },
	};
	char buf[256];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct unpkg_err err;
		int r;

		unpkg_err_init(&err);
		r = unpkg_script_admindir_in_root(cases[i].instdir,
						  cases[i].admindir, buf,
						  sizeof(buf), &err);
		if (cases[i].want == NULL) {
			ck_assert_msg(r == -1, "%s %s", cases[i].instdir,
				      cases[i].admindir);
			ck_assert_int_eq(err.code, UNPKG_ERR_USAGE);
		} else {
			ck_assert_msg(r == 0, "%s", err.msg);
			ck_assert_str_eq(buf, cases[i].want);
		}
	}
	{
		struct unpkg_err err;

		unpkg_err_init(&err);
		ck_assert_int_eq(unpkg_script_admindir_in_root(
					 "/t", "/t/var/lib/dpkg", buf, 8,
					 &err), -1);
	}
}
END_TEST

START_TEST(test_strings)
{
	char buf[512];

	ck_assert_str_eq(unpkg_force_names(DPKG_DEFAULTS, buf, sizeof(buf)),
			 "security-mac,downgrade");
	ck_assert_str_eq(unpkg_force_names(0, buf, sizeof(buf)), "");
	ck_assert_str_eq(unpkg_force_names(
				 UNPKG_FORCE_DEPENDS |
				 UNPKG_FORCE_SCRIPT_CHROOTLESS |
				 DPKG_DEFAULTS |
				 UNPKG_FORCE_UNSAFE_IO |
				 UNPKG_FORCE_REMOVE_ESSENTIAL,
				 buf, sizeof(buf)),
			 "security-mac,downgrade,unsafe-io,script-chrootless,"
			 "depends,remove-essential");
	ck_assert_str_eq(unpkg_force_names(DPKG_DEFAULTS, buf, 14),
			 "security-mac");
	ck_assert_str_eq(unpkg_script_desc(buf, sizeof(buf), "old", "foo",
					   "prerm"),
			 "old foo package pre-removal script");
	ck_assert_str_eq(unpkg_script_desc(buf, sizeof(buf), "installed",
					   "foo:amd64", "postrm"),
			 "installed foo:amd64 package post-removal script");
	ck_assert_str_eq(unpkg_script_desc(buf, sizeof(buf), "new", "foo",
					   "preinst"),
			 "new foo package pre-installation script");
	ck_assert_str_eq(unpkg_script_desc(buf, sizeof(buf), "new", "foo",
					   "config"),
			 "new foo package config script");
}
END_TEST

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

/* ADMINDIR/tmp.ci: emptied, written, run from, removed. */
START_TEST(test_tmpci)
{
	char *root = mkroot(), *admin = admindir_of(root);
	char *tmpci = path_of(admin, "tmp.ci");
	char *pre = path_of(admin, "tmp.ci/preinst");
	char *outside = tu_mkdtemp();
	char *keep = path_of(outside, "keep");
	const char *argv[] = { "install", NULL };
	struct unpkg_script_ctx ctx;
	struct unpkg_events ev;
	struct captured cap;
	struct unpkg_err err;
	struct stat st;
	char *s;

	/* Leftovers of an interrupted run, a subdirectory among them. */
	mkdirs(admin, "tmp.ci/sub/deeper", 0755);
	put(root, "var/lib/dpkg/tmp.ci/postrm", "old", 0644);
	put(root, "var/lib/dpkg/tmp.ci/sub/deeper/x", "old", 0644);
	unpkg_err_init(&err);
	ck_assert_msg(unpkg_script_tmp_prepare(admin, &err) == 0, "%s",
		      err.msg);
	ck_assert_int_eq(count_entries(tmpci), 0);
	ck_assert_int_eq(stat(tmpci, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0755);

	umask(077);
	ck_assert_int_eq(unpkg_script_tmp_write(admin, "preinst", "#!/bin/sh\n"
						"exit 1\n", 17, 0755, &err), 0);
	ck_assert_int_eq(unpkg_script_tmp_write(admin, "preinst", "#!/bin/sh\n"
						"exit 8\n", 17, 0755, &err), 0);
	ck_assert_int_eq(stat(pre, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0755);
	s = tu_read_file(pre, NULL);
	ck_assert_str_eq(s, "#!/bin/sh\nexit 8\n");
	free(s);
	ctx_for(&ctx, root, admin, &ev, &cap);
	ck_assert_int_eq(run_ok(&ctx, "tmp.ci/preinst", argv).status, 8);

	ck_assert_int_eq(unpkg_script_tmp_write(admin, "a/b", "", 0, 0644,
						&err), -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_USAGE);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_script_tmp_write(admin, "..", "", 0, 0644,
						&err), -1);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_script_tmp_write(admin, "", "", 0, 0644, &err),
			 -1);

	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_script_tmp_clean(admin, &err), 0);
	ck_assert_int_eq(lstat(tmpci, &st), -1);
	ck_assert_int_eq(unpkg_script_tmp_clean(admin, &err), 0);
	ck_assert_int_eq(unpkg_script_tmp_write(admin, "preinst", "", 0, 0755,
						&err), -1);

	/* tmp.ci as a symlink: the link goes, not what it points to. */
	tu_write_file(keep, "keep", 0644);
	ck_assert_int_eq(symlink(outside, tmpci), 0);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_script_tmp_prepare(admin, &err), 0);
	ck_assert_int_eq(lstat(tmpci, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_int_eq(access(keep, F_OK), 0);
	tu_rm_rf(root);
	tu_rm_rf(outside);
	free(root);
	free(admin);
	free(tmpci);
	free(pre);
	free(outside);
	free(keep);
}
END_TEST

/* --- the same scripts run by dpkg ------------------------------------- */

static char dpkg_version[64];

/* dpkg's version ("1.21.22"), or "" when dpkg cannot be run. */
static void find_dpkg(void)
{
	FILE *p = popen("dpkg --version 2>/dev/null", "r");
	char line[256];

	dpkg_version[0] = '\0';
	if (p == NULL)
		return;
	if (fgets(line, sizeof(line), p) != NULL) {
		const char *v = strstr(line, "version ");

		if (v != NULL)
			sscanf(v + 8, "%63s", dpkg_version);
	}
	pclose(p);
}

/* Replace `root` (a prefix) by "ROOT" in s. */
static char *unroot(const char *s, const char *root)
{
	size_t n = strlen(root);
	char *out = malloc(strlen(s) + 8);
	const char *p = s;
	size_t len = 0;

	ck_assert_ptr_nonnull(out);
	while (*p != '\0') {
		if (strncmp(p, root, n) == 0) {
			memcpy(out + len, "ROOT", 4);
			len += 4;
			p += n;
		} else {
			out[len++] = *p++;
		}
	}
	out[len] = '\0';
	return out;
}

/* The entries of an environment, with the root replaced, sorted. */
static size_t env_list(const struct env *e, const char *root, char **out,
		       size_t max)
{
	size_t n = 0, off = 0;

	while (off < e->len && n < max) {
		out[n++] = unroot(e->buf + off, root);
		off += strlen(e->buf + off) + 1;
	}
	qsort(out, n, sizeof(out[0]), cmp_str);
	return n;
}

/* Whether entries d and u are both DPKG_RUNNING_VERSION, which only the
 * release unpkg emulates sets as unpkg does (Debian's point releases of
 * dpkg move on: the value itself is checked elsewhere). */
static bool other_release(const char *d, const char *u)
{
	static const char var[] = "DPKG_RUNNING_VERSION=";

	return strcmp(dpkg_version, UNPKG_SCRIPT_DPKG_VERSION) != 0 &&
	       strncmp(d, var, sizeof(var) - 1) == 0 &&
	       strncmp(u, var, sizeof(var) - 1) == 0;
}

/* The whole environments are the same: dpkg adds nothing else. */
static void compare_all(const struct env *de, const char *droot,
			const struct env *ue, const char *uroot,
			const char *name)
{
	char *d[512], *u[512];
	size_t nd = env_list(de, droot, d, 512);
	size_t nu = env_list(ue, uroot, u, 512);
	size_t i;

	for (i = 0; i < nd && i < nu; i++)
		ck_assert_msg(strcmp(d[i], u[i]) == 0 ||
				      other_release(d[i], u[i]),
			      "%s: environment: dpkg has \"%s\", unpkg \"%s\"",
			      name, d[i], u[i]);
	ck_assert_msg(nd == nu, "%s: dpkg passes %zu variables, unpkg %zu",
		      name, nd, nu);
	for (i = 0; i < nd; i++)
		free(d[i]);
	for (i = 0; i < nu; i++)
		free(u[i]);
}

static void compare(const char *droot, const char *uroot, const char *name,
		    int exact_set)
{
	static const char *const files[] = {
		"where", "0", "argc", "arg1", "arg2", "pwd", "umask",
	};
	static const char *const vars[] = {
		"DPKG_ROOT", "DPKG_ADMINDIR", "DPKG_MAINTSCRIPT_PACKAGE",
		"DPKG_MAINTSCRIPT_ARCH", "DPKG_MAINTSCRIPT_NAME",
		"DPKG_MAINTSCRIPT_DEBUG", "DPKG_MAINTSCRIPT_PACKAGE_REFCOUNT",
		"DPKG_FORCE",
	};
	struct env de, ue;
	char dnames[1024], unames[1024];
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *d = rec(droot, name, files[i]);
		char *u = rec(uroot, name, files[i]);
		char *dn, *un;

		ck_assert_msg((d == NULL) == (u == NULL), "%s.%s: dpkg %s, "
			      "unpkg %s", name, files[i], d ? "has it" : "not",
			      u ? "has it" : "not");
		if (d == NULL)
			continue;
		dn = unroot(d, droot);
		un = unroot(u, uroot);
		ck_assert_msg(strcmp(dn, un) == 0, "%s.%s: dpkg \"%s\", "
			      "unpkg \"%s\"", name, files[i], dn, un);
		free(d);
		free(u);
		free(dn);
		free(un);
	}
	de = rec_env(droot, name);
	ue = rec_env(uroot, name);
	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *d = env_get(&de, vars[i]);
		const char *u = env_get(&ue, vars[i]);
		char *dn, *un;

		ck_assert_msg(d != NULL && u != NULL, "%s: %s: dpkg %s, unpkg "
			      "%s", name, vars[i], d ? d : "(unset)",
			      u ? u : "(unset)");
		dn = unroot(d, droot);
		un = unroot(u, uroot);
		ck_assert_msg(strcmp(dn, un) == 0, "%s: %s: dpkg \"%s\", "
			      "unpkg \"%s\"", name, vars[i], dn, un);
		free(dn);
		free(un);
	}
	if (strcmp(dpkg_version, UNPKG_SCRIPT_DPKG_VERSION) == 0)
		assert_env(&ue, "DPKG_RUNNING_VERSION",
			   env_get(&de, "DPKG_RUNNING_VERSION"));
	dpkg_names(&de, dnames, sizeof(dnames));
	dpkg_names(&ue, unames, sizeof(unames));
	if (exact_set) {
		ck_assert_msg(strcmp(dnames, unames) == 0,
			      "%s: DPKG_* of dpkg: %s; of unpkg: %s", name,
			      dnames, unames);
		compare_all(&de, droot, &ue, uroot, name);
	}
	else if (strcmp(dnames, unames) != 0)
		fprintf(stderr, "check_script: note: dpkg %s sets %s; unpkg "
			"sets %s\n", dpkg_version, dnames, unames);
	free(de.buf);
	free(ue.buf);
}

/* DPKG_FORCE as dpkg has it here: its defaults, what the system's dpkg
 * configuration forces, and script-chrootless when given. */
static const char *dpkg_force(int chrootless, char *buf, size_t size)
{
	unsigned int bits = DPKG_DEFAULTS;
	struct unpkg_dpkgcfg cfg;
	struct unpkg_err err;
	unsigned int i;

	unpkg_err_init(&err);
	ck_assert_msg(unpkg_dpkgcfg_load(&cfg, "/etc/dpkg", &err) == 0, "%s",
		      err.msg);
	for (i = 0; i < 28; i++) {
		char name[64];

		unpkg_force_names(1u << i, name, sizeof(name));
		if (unpkg_dpkgcfg_force(&cfg, name, NULL))
			bits |= 1u << i;
	}
	unpkg_dpkgcfg_destroy(&cfg);
	if (chrootless)
		bits |= UNPKG_FORCE_SCRIPT_CHROOTLESS;
	return unpkg_force_names(bits, buf, size);
}

static void same_as_dpkg(int chrootless)
{
	static const struct tu_entry control_members[] = {
		{ .type = 'f', .path = "./preinst", .data = record_script,
		  .mode = 0755 },
		{ .type = 'f', .path = "./postinst", .data = record_script,
		  .mode = 0755 },
	};
	static const struct tu_entry entries[] = {
		{ .type = 'd', .path = "./usr/" },
	};
	struct tu_deb spec = {
		.control = "Package: foo\nVersion: 1.0-1\nArchitecture: all\n"
			   "Maintainer: T <t@example.org>\n"
			   "Description: probe\n",
		.control_members = control_members,
		.n_control_members = 2,
		.entries = entries,
		.n_entries = 1,
	};
	char *droot = mkroot(), *uroot = mkroot(), *uadmin = admindir_of(uroot);
	char *deb = path_of(droot, "foo.deb");
	char rootopt[PATH_MAX + 16];
	char *dargv[] = { "dpkg", rootopt, "-i", deb, NULL, NULL };
	const char *pre_argv[] = { "install", NULL };
	const char *post_argv[] = { "configure", "", NULL };
	struct unpkg_script_ctx ctx;
	struct unpkg_events ev;
	struct captured cap;
	struct unpkg_err err;
	char *info, force[512];
	int exact = strncmp(dpkg_version, "1.21.", 5) == 0;

	tu_build_deb(deb, &spec);
	snprintf(rootopt, sizeof(rootopt), "--root=%s", droot);
	if (chrootless) {
		dargv[2] = "--force-script-chrootless";
		dargv[3] = "-i";
		dargv[4] = deb;
	}
	ck_assert_int_eq(tu_run_quiet((const char *const *)dargv), 0);

	ctx_for(&ctx, uroot, uadmin, &ev, &cap);
	ctx.arch = "all";
	ctx.chrootless = chrootless;
	ctx.force = dpkg_force(chrootless, force, sizeof(force));
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_script_tmp_prepare(uadmin, &err), 0);
	ck_assert_int_eq(unpkg_script_tmp_write(uadmin, "preinst",
						record_script,
						strlen(record_script), 0755,
						&err), 0);
	run_ok(&ctx, "tmp.ci/preinst", pre_argv);
	ck_assert_int_eq(unpkg_script_tmp_clean(uadmin, &err), 0);
	info = path_of(uadmin, "info/foo.postinst");
	tu_write_file(info, record_script, 0755);
	run_ok(&ctx, "info/foo.postinst", post_argv);

	compare(droot, uroot, "preinst", exact);
	compare(droot, uroot, "postinst", exact);
	tu_rm_rf(droot);
	tu_rm_rf(uroot);
	free(droot);
	free(uroot);
	free(uadmin);
	free(deb);
	free(info);
}

START_TEST(test_same_as_dpkg)
{
	same_as_dpkg(0);
}
END_TEST

START_TEST(test_same_as_dpkg_chrootless)
{
	same_as_dpkg(1);
}
END_TEST

/* Whether busybox runs in a chroot: it must be statically linked, and
 * the temporary directory not noexec.  Runs outside the tests, so no
 * ck_assert (Check would report it as a failure there). */
static int busybox_works(const char **why)
{
	const char *base = getenv("TMPDIR");
	char root[PATH_MAX], bin[PATH_MAX + 8], bb[PATH_MAX + 16];
	char buf[65536];
	int in, out, status = -1, ok = 1;
	ssize_t n;
	pid_t pid;

	snprintf(root, sizeof(root), "%s/unpkg-test-XXXXXX",
		 base != NULL && base[0] != '\0' ? base : "/tmp");
	if (mkdtemp(root) == NULL) {
		*why = "cannot create a temporary directory";
		return 0;
	}
	snprintf(bin, sizeof(bin), "%s/bin", root);
	snprintf(bb, sizeof(bb), "%s/bin/busybox", root);
	in = open(busybox, O_RDONLY | O_CLOEXEC);
	out = mkdir(bin, 0755) == 0 ?
		open(bb, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755) : -1;
	if (in < 0 || out < 0)
		ok = 0;
	while (ok && (n = read(in, buf, sizeof(buf))) > 0)
		ok = write(out, buf, (size_t)n) == n;
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) < 0)
		ok = 0;
	pid = ok ? fork() : -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if (chroot(root) < 0 || chdir("/") < 0)
			_exit(3);
		execl("/bin/busybox", "busybox", "true", (char *)NULL);
		_exit(4);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	unlink(bb);
	rmdir(bin);
	rmdir(root);
	if (pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 1;
	*why = !ok ? "cannot copy it" :
		pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 3 ?
		"chroot failed" :
		"it cannot run in a chroot (not statically linked, or "
		"TMPDIR is noexec)";
	return 0;
}

int main(void)
{
	Suite *s = suite_create("script");
	TCase *tc = tcase_create("core");
	const char *why = NULL;
	size_t i;

	tu_require_root("chroot");
	busybox = getenv("BUSYBOX");
	if (busybox == NULL || busybox[0] == '\0')
		busybox = "/bin/busybox";
	if (access(busybox, X_OK) != 0)
		tu_skip("no busybox at %s (install busybox-static, or set "
			"BUSYBOX)", busybox);
	if (!busybox_works(&why))
		tu_skip("busybox %s: %s", busybox, why);
	/* The tests define the DPKG_* variables the scripts see. */
	for (i = 0; environ[i] != NULL;) {
		if (strncmp(environ[i], "DPKG_", 5) == 0) {
			char name[256];

			snprintf(name, sizeof(name), "%.*s",
				 (int)strcspn(environ[i], "="), environ[i]);
			unsetenv(name);
		} else {
			i++;
		}
	}

	tcase_add_test(tc, test_chroot);
	tcase_add_test(tc, test_chrootless);
	tcase_add_test(tc, test_root_slash);
	tcase_add_test(tc, test_status);
	tcase_add_test(tc, test_missing);
	tcase_add_test(tc, test_not_executable);
	tcase_add_test(tc, test_missing_interpreter);
	tcase_add_test(tc, test_no_shebang);
	tcase_add_test(tc, test_admindir_outside);
	tcase_add_test(tc, test_symlink_inside);
	tcase_add_test(tc, test_signals_ignored);
	tcase_add_test(tc, test_eintr);
	tcase_add_test(tc, test_usage);
	tcase_add_test(tc, test_admindir_in_root);
	tcase_add_test(tc, test_strings);
	tcase_add_test(tc, test_tmpci);
	find_dpkg();
	if (dpkg_version[0] != '\0') {
		tcase_add_test(tc, test_same_as_dpkg);
		tcase_add_test(tc, test_same_as_dpkg_chrootless);
	} else {
		tu_skip_part("the same scripts run by dpkg",
			     "dpkg --version did not answer");
	}
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
