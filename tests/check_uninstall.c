/* check_uninstall.c - unpkg_remove() (--remove, --purge) through the
 * library API: what stays and what goes, the refusals, the selections of
 * --pending, the number of syncs, and the state a failed sync leaves. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "force.h"
#include "install.h"
#include "testutil.h"
#include "uninstall.h"

struct fx {
	struct tu_root r;
	struct unpkg_stats st;
	unsigned int force;
	int errors, warnings;
};

static void on_event(void *ctx, const struct unpkg_event *ev)
{
	struct fx *f = ctx;

	if (ev->kind == UNPKG_EV_ERROR)
		f->errors++;
	else if (ev->kind == UNPKG_EV_WARNING)
		f->warnings++;
}

static void fx_init(struct fx *f)
{
	memset(f, 0, sizeof(*f));
	tu_root_init(&f->r);
}

static void fx_destroy(struct fx *f)
{
	tu_root_destroy(&f->r);
}

static const char *at(const struct fx *f, const char *rel)
{
	return tu_root_at(&f->r, rel);
}

static int exists(const struct fx *f, const char *rel)
{
	return tu_root_exists(&f->r, rel);
}

static char *status_file(const struct fx *f)
{
	char *s = tu_read_file(at(f, "var/lib/dpkg/status"), NULL);

	ck_assert_ptr_nonnull(s);
	return s;
}

/* A package NAME (extra control fields `extra`, a "triggers" member
 * `triggers` unless NULL) shipping /usr/share/NAME/file,
 * /usr/share/common/NAME and the conffile /etc/NAME.conf (unless
 * `noconf`), installed and configured. */
static void add_pkg_triggers(struct fx *f, const char *name,
			     const char *extra, int noconf,
			     const char *triggers)
{
	char dir[64], file[64], common[64], conf[64], conflist[80];
	const struct tu_entry e[] = {
		{ .type = 'd', .path = "./" },
		{ .type = 'd', .path = "./usr/" },
		{ .type = 'd', .path = "./usr/share/" },
		{ .type = 'd', .path = dir },
		{ .type = 'f', .path = file, .data = "x\n" },
		{ .type = 'd', .path = "./usr/share/common/" },
		{ .type = 'f', .path = common, .data = "y\n" },
		{ .type = 'd', .path = "./etc/" },
		{ .type = 'f', .path = conf, .data = "z=1\n" },
	};
	struct tu_entry cm[] = {
		{ .type = 'f', .path = "./conffiles", .data = conflist },
		{ .type = 'f', .path = "./triggers", .data = triggers },
	};
	struct unpkg_events ev = { .fn = on_event, .ctx = f };
	struct unpkg_install_opts o = {
		.instdir = f->r.root, .admindir = f->r.admin,
		.sync = UNPKG_SYNC_SYNCFS, .configure = 1,
		.force = UNPKG_FORCE_DEPENDS, .events = &ev,
	};
	struct unpkg_err err;
	const char *debs[1];

	snprintf(dir, sizeof(dir), "./usr/share/%s/", name);
	snprintf(file, sizeof(file), "./usr/share/%s/file", name);
	snprintf(common, sizeof(common), "./usr/share/common/%s", name);
	snprintf(conf, sizeof(conf), "./etc/%s.conf", name);
	snprintf(conflist, sizeof(conflist), "/etc/%s.conf\n", name);
	if (noconf)
		cm[0] = cm[1];
	debs[0] = tu_root_deb(&f->r, name, extra, e, noconf ? 7 : 9, cm,
			      (noconf ? 0 : 1) + (triggers != NULL));
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_install(&o, debs, 1, &err), 0);
}

static void add_pkg(struct fx *f, const char *name, const char *extra,
		    int noconf)
{
	add_pkg_triggers(f, name, extra, noconf, NULL);
}

static int run_remove(struct fx *f, int purge, int pending,
		      const char *const *names, size_t n)
{
	struct unpkg_events ev = { .fn = on_event, .ctx = f };
	struct unpkg_install_opts o = {
		.instdir = f->r.root, .admindir = f->r.admin,
		.sync = UNPKG_SYNC_SYNCFS, .frontend_lock = 1,
		.force = f->force, .events = &ev, .stats = &f->st,
	};
	struct unpkg_err err;
	int r;

	memset(&f->st, 0, sizeof(f->st));
	unpkg_err_init(&err);
	r = unpkg_remove(&o, names, n, purge, pending, &err);
	ck_assert_msg(r >= 0, "run failed: %s", err.msg);
	return r;
}

START_TEST(test_remove_then_purge)
{
	const char *names[] = { "a" };
	struct fx f;
	char *s;

	fx_init(&f);
	add_pkg(&f, "a", NULL, 0);
	add_pkg(&f, "b", NULL, 0);
	ck_assert_int_eq(run_remove(&f, 0, 0, names, 1), 0);
	ck_assert(!exists(&f, "usr/share/a"));
	ck_assert(!exists(&f, "usr/share/common/a"));
	ck_assert(exists(&f, "usr/share/common/b"));	/* shared: kept */
	ck_assert(exists(&f, "etc/a.conf"));		/* a conffile */
	s = status_file(&f);
	ck_assert_ptr_nonnull(strstr(s, "Package: a\nStatus: deinstall ok "
				     "config-files\n"));
	free(s);
	s = tu_read_file(at(&f, "var/lib/dpkg/info/a.list"), NULL);
	ck_assert_str_eq(s, "/etc\n/etc/a.conf\n");
	free(s);
	ck_assert(!exists(&f, "var/lib/dpkg/info/a.md5sums"));
	ck_assert(!exists(&f, "usr/share/a.dpkg-tmp"));	/* released */

	tu_write_file(at(&f, "etc/a.conf.dpkg-old"), "old\n", 0644);
	tu_write_file(at(&f, "etc/a.conf.orig"), "kept\n", 0644);
	ck_assert_int_eq(run_remove(&f, 1, 0, names, 1), 0);
	ck_assert(!exists(&f, "etc/a.conf"));
	ck_assert(!exists(&f, "etc/a.conf.dpkg-old"));
	ck_assert(exists(&f, "etc/a.conf.orig"));	/* not dpkg's */
	ck_assert(!exists(&f, "var/lib/dpkg/info/a.list"));
	s = status_file(&f);
	ck_assert_ptr_null(strstr(s, "Package: a\n"));
	ck_assert_ptr_nonnull(strstr(s, "Package: b\n"));
	free(s);
	fx_destroy(&f);
}
END_TEST

START_TEST(test_not_installed)
{
	const char *names[] = { "zz" };
	struct fx f;

	fx_init(&f);
	add_pkg(&f, "a", NULL, 0);
	ck_assert_int_eq(run_remove(&f, 0, 0, names, 1), 0);
	ck_assert_int_eq(f.warnings, 1);
	ck_assert_int_eq(f.errors, 0);
	fx_destroy(&f);
}
END_TEST

START_TEST(test_refusals)
{
	const char *a[] = { "a" }, *e[] = { "e" }, *p[] = { "p" };
	struct fx f;
	char *s;

	fx_init(&f);
	add_pkg(&f, "a", NULL, 0);
	add_pkg(&f, "b", "Depends: a\n", 0);
	add_pkg(&f, "e", "Essential: yes\n", 0);
	add_pkg(&f, "p", "Protected: yes\n", 0);
	ck_assert_int_eq(run_remove(&f, 0, 0, a, 1), 1);
	ck_assert_int_eq(run_remove(&f, 0, 0, e, 1), 1);
	ck_assert_int_eq(run_remove(&f, 0, 0, p, 1), 1);
	ck_assert(exists(&f, "usr/share/a/file"));
	ck_assert(exists(&f, "usr/share/e/file"));
	ck_assert(exists(&f, "usr/share/p/file"));
	s = status_file(&f);	/* the selection changes, as in dpkg */
	ck_assert_ptr_nonnull(strstr(s, "Package: a\nStatus: deinstall ok "
				     "installed\n"));
	free(s);
	f.force = UNPKG_FORCE_DEPENDS | UNPKG_FORCE_REMOVE_ESSENTIAL |
		  UNPKG_FORCE_REMOVE_PROTECTED;
	ck_assert_int_eq(run_remove(&f, 0, 0, a, 1), 0);
	ck_assert_int_eq(run_remove(&f, 0, 0, e, 1), 0);
	ck_assert_int_eq(run_remove(&f, 0, 0, p, 1), 0);
	ck_assert(!exists(&f, "usr/share/a/file"));
	ck_assert(!exists(&f, "usr/share/e/file"));
	ck_assert(!exists(&f, "usr/share/p/file"));
	fx_destroy(&f);
}
END_TEST

/* With --pending: the selections; b (which depends on a) goes first. */
START_TEST(test_pending)
{
	char cmd[8192];
	struct fx f;
	char *s;

	fx_init(&f);
	add_pkg(&f, "a", NULL, 0);
	add_pkg(&f, "b", "Depends: a\n", 0);
	add_pkg(&f, "c", NULL, 0);
	snprintf(cmd, sizeof(cmd), "sed -i 's/^Status: install ok installed/"
		 "Status: purge ok installed/' '%s'",
		 at(&f, "var/lib/dpkg/status"));
	ck_assert_int_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "sed -i '/^Package: c$/{n;s/purge/install/}' "
		 "'%s'", at(&f, "var/lib/dpkg/status"));
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(run_remove(&f, 0, 1, NULL, 0), 0);
	ck_assert(!exists(&f, "usr/share/a"));
	ck_assert(!exists(&f, "usr/share/b"));
	ck_assert(!exists(&f, "etc/a.conf"));	/* want purge: purged */
	ck_assert(exists(&f, "usr/share/c/file"));
	s = status_file(&f);
	ck_assert_ptr_null(strstr(s, "Package: a\n"));
	ck_assert_ptr_nonnull(strstr(s, "Package: c\nStatus: install ok "
				     "installed\n"));
	free(s);
	fx_destroy(&f);
}
END_TEST

/* The same syncs for 1 package as for 6. */
START_TEST(test_constant_syncs)
{
	const char *one[] = { "p0" };
	const char *six[] = { "p1", "p2", "p3", "p4", "p5", "p6" };
	unsigned long syncs[2][2];
	int purge, k;
	char name[8];

	for (purge = 0; purge < 2; purge++) {
		for (k = 0; k < 2; k++) {
			struct fx f;
			int i;

			fx_init(&f);
			for (i = 0; i < 7; i++) {
				snprintf(name, sizeof(name), "p%d", i);
				add_pkg(&f, name, NULL, i % 2);
			}
			ck_assert_int_eq(run_remove(&f, purge, 0,
						    k ? six : one,
						    k ? 6 : 1), 0);
			syncs[purge][k] = f.st.fsync + f.st.fdatasync +
					  f.st.syncfs + f.st.sync_file_range;
			fx_destroy(&f);
		}
		ck_assert_uint_eq(syncs[purge][0], syncs[purge][1]);
		ck_assert_uint_le(syncs[purge][1], 6);
	}
}
END_TEST

/* A removal drops the package's interest files with the record: the
 * syncs of a package without interests and one fsync of triggers/. */
START_TEST(test_trigger_interests_syncs)
{
	const char *plain[] = { "plain" }, *ti[] = { "ti" };
	unsigned long without;
	struct fx f;
	char *s;

	fx_init(&f);
	add_pkg_triggers(&f, "early", NULL, 1, "interest /usr/share/ti\n");
	add_pkg(&f, "plain", NULL, 0);
	add_pkg_triggers(&f, "ti", NULL, 0,
			 "interest t-one\ninterest-noawait t-two\n"
			 "interest /usr/share/ti\n");
	ck_assert_int_eq(run_remove(&f, 1, 0, plain, 1), 0);
	without = f.st.fsync + f.st.fdatasync + f.st.syncfs;
	ck_assert_int_eq(run_remove(&f, 1, 0, ti, 1), 0);
	ck_assert_uint_eq(f.st.fsync + f.st.fdatasync + f.st.syncfs,
			  without + 1);
	s = tu_read_file(at(&f, "var/lib/dpkg/triggers/File"), NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s, "/usr/share/ti early\n");
	free(s);
	ck_assert(!exists(&f, "var/lib/dpkg/triggers/t-one"));
	ck_assert(!exists(&f, "var/lib/dpkg/triggers/File.new"));
	fx_destroy(&f);
}
END_TEST

/* The sync that makes the removals durable fails: the package is not
 * recorded as removed, its files are back, and it stays half-installed
 * (the mark, durable before anything was touched). */
START_TEST(test_failed_sync)
{
	const char *names[] = { "a" };
	struct fx f;
	pid_t pid;
	int status;
	char *s;

	fx_init(&f);
	add_pkg(&f, "a", NULL, 0);
	fflush(NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct unpkg_install_opts o = {
			.instdir = f.r.root, .admindir = f.r.admin,
			.sync = UNPKG_SYNC_SYNCFS,
		};
		struct unpkg_err err;

		unpkg_err_init(&err);
		if (tu_deny_syscall(SYS_syncfs, EIO) < 0)
			_exit(3);
		_exit(unpkg_remove(&o, names, 1, 1, 0, &err) < 0 ? 0 : 4);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert(exists(&f, "usr/share/a/file"));
	ck_assert(exists(&f, "etc/a.conf"));
	s = status_file(&f);
	ck_assert_ptr_nonnull(strstr(s, "Package: a\nStatus: purge ok "
				     "half-installed\n"));
	free(s);
	fx_destroy(&f);
}
END_TEST

int main(void)
{
	Suite *s;
	TCase *tc;

	/* Entries get owners other than the caller. */
	tu_require_root("chown");
	s = suite_create("uninstall");
	tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_remove_then_purge);
	tcase_add_test(tc, test_not_installed);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_pending);
	tcase_add_test(tc, test_constant_syncs);
	tcase_add_test(tc, test_trigger_interests_syncs);
	tcase_add_test(tc, test_failed_sync);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
