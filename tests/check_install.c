/* check_install.c - the pipeline of a run, and --configure of what it
 * unpacked, through the library API. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "configure-run.h"
#include "force.h"
#include "install.h"
#include "testutil.h"

struct fx {
	struct tu_root r;
	struct unpkg_stats st;
	enum unpkg_sync_mode sync;	/* UNPKG_SYNC_DPKG unless a test says */
	unsigned int force;		/* more UNPKG_FORCE_* for every run */
	int errors, warnings;
	char last_error[2048];
	char last_notice[2048];
};

static void on_event(void *ctx, const struct unpkg_event *ev)
{
	struct fx *f = ctx;

	if (ev->kind == UNPKG_EV_ERROR) {
		f->errors++;
		snprintf(f->last_error, sizeof(f->last_error), "%s",
			 ev->message);
	} else if (ev->kind == UNPKG_EV_WARNING) {
		f->warnings++;
	} else if (ev->kind == UNPKG_EV_NOTICE) {
		snprintf(f->last_notice, sizeof(f->last_notice), "%s",
			 ev->message);
	}
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

static char *slurp(const struct fx *f, const char *rel)
{
	char *s = tu_read_file(at(f, rel), NULL);

	ck_assert_msg(s != NULL, "cannot read %s", rel);
	return s;
}

static int exists(const struct fx *f, const char *rel)
{
	return tu_root_exists(&f->r, rel);
}

/* File `rel` of the root holds `want`. */
static void assert_file(const struct fx *f, const char *rel, const char *want)
{
	char *s = slurp(f, rel);

	ck_assert_str_eq(s, want);
	free(s);
}

/* A package "NAME" with the given control extras, entries and control
 * members, written to TMP/NAME.deb; returns its path (static). */
static const char *make_pkg(const struct fx *f, const char *name,
			    const char *extra, const struct tu_entry *e,
			    size_t n, const struct tu_entry *cm, size_t ncm)
{
	return tu_root_deb(&f->r, name, extra, e, n, cm, ncm);
}

static int install(struct fx *f, int configure, int force_depends,
		   const char *const *debs, size_t n)
{
	struct unpkg_events ev = { .fn = on_event, .ctx = f };
	struct unpkg_install_opts o = {
		.instdir = f->r.root,
		.admindir = f->r.admin,
		.sync = f->sync,
		.configure = configure,
		.frontend_lock = 1,
		.force = f->force | (force_depends ? UNPKG_FORCE_DEPENDS : 0),
		.events = &ev,
		.stats = &f->st,
	};
	struct unpkg_err err;
	int r;

	unpkg_err_init(&err);
	r = unpkg_install(&o, debs, n, &err);
	ck_assert_msg(r >= 0, "run failed: %s", err.msg);
	return r;
}

/* --configure of `names` (NULL: --pending): the number of packages that
 * failed. */
static int configure(struct fx *f, const char *const *names, size_t n)
{
	struct unpkg_events ev = { .fn = on_event, .ctx = f };
	struct unpkg_install_opts o = {
		.instdir = f->r.root,
		.admindir = f->r.admin,
		.sync = f->sync,
		.frontend_lock = 1,
		.force = f->force,
		.events = &ev,
		.stats = &f->st,
	};
	struct unpkg_err err;
	int r;

	unpkg_err_init(&err);
	r = unpkg_configure(&o, names, n, names == NULL, &err);
	ck_assert_msg(r >= 0, "run failed: %s", err.msg);
	return r;
}

/* The sync calls counted in the statistics since they were cleared. */
static unsigned long syncs(const struct fx *f)
{
	return f->st.fdatasync + f->st.fsync + f->st.syncfs;
}

/* Everything under the root but the lock files and status-old, with
 * contents: what "the root as it was" means. */
static char *snapshot(const struct fx *f)
{
	char cmd[16384], out[4200];
	char *s;

	snprintf(out, sizeof(out), "%s/snap", f->r.tmp);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && find . ! -name lock ! -name lock-frontend "
		 "! -name status-old -printf '%%p %%y %%m %%s %%l\\n' | "
		 "LC_ALL=C sort > '%s' && find . -type f ! -name 'lock*' "
		 "! -name status-old -exec md5sum {} + | LC_ALL=C sort >> '%s'",
		 f->r.root, out, out);
	ck_assert_int_eq(system(cmd), 0);
	s = tu_read_file(out, NULL);
	ck_assert_ptr_nonnull(s);
	return s;
}

static const struct tu_entry files_a[] = {
	{ .type = 'd', .path = "./" },
	{ .type = 'd', .path = "./usr/" },
	{ .type = 'd', .path = "./usr/share/" },
	{ .type = 'f', .path = "./usr/share/a", .data = "aaa\n" },
	{ .type = 'd', .path = "./etc/" },
	{ .type = 'f', .path = "./etc/a.conf", .data = "x=1\n" },
};

static const struct tu_entry conffiles_a[] = {
	{ .type = 'f', .path = "./conffiles", .data = "/etc/a.conf\n" },
};

START_TEST(test_unpack_then_configure)
{
	struct fx f;
	const char *deb;
	char *s;

	fx_init(&f);
	deb = make_pkg(&f, "pa", NULL, files_a, 6, conffiles_a, 1);
	ck_assert_int_eq(install(&f, 0, 0, &deb, 1), 0);
	s = slurp(&f, "var/lib/dpkg/status");
	ck_assert_ptr_nonnull(strstr(s, "Package: pa\nStatus: install ok "
				     "unpacked\n"));
	ck_assert_ptr_nonnull(strstr(s, "Conffiles:\n /etc/a.conf "
				     "newconffile\n"));
	free(s);
	ck_assert(exists(&f, "etc/a.conf.dpkg-new"));
	ck_assert(!exists(&f, "etc/a.conf"));
	assert_file(&f, "var/lib/dpkg/info/pa.list",
		    "/.\n/usr\n/usr/share\n/usr/share/a\n/etc\n/etc/a.conf\n");
	/* generated, as dpkg does for packages without md5sums */
	assert_file(&f, "var/lib/dpkg/info/pa.md5sums",
		    "5c9597f3c8245907ea71a89d9d39d08e  usr/share/a\n"
		    "f968f33f844c98de1d3b4fe70f2e1a0f  etc/a.conf\n");
	assert_file(&f, "var/lib/dpkg/info/pa.conffiles", "/etc/a.conf\n");

	/* -i of the same package: configured, conffile in place */
	ck_assert_int_eq(install(&f, 1, 0, &deb, 1), 0);
	s = slurp(&f, "var/lib/dpkg/status");
	ck_assert_ptr_nonnull(strstr(s, "Status: install ok installed\n"));
	ck_assert_ptr_null(strstr(s, "newconffile"));
	free(s);
	ck_assert(exists(&f, "etc/a.conf"));
	ck_assert(!exists(&f, "etc/a.conf.dpkg-new"));
	ck_assert_int_eq(f.errors, 0);
	fx_destroy(&f);
}
END_TEST

/* A damaged archive fails alone; the root and database stay as they
 * were, byte for byte. */
START_TEST(test_corrupt_archive_changes_nothing)
{
	static const struct tu_entry big[] = {
		{ .type = 'd', .path = "./opt/" },
		{ .type = 'f', .path = "./opt/big", .size = 1 << 20 },
		{ .type = 'f', .path = "./opt/after", .data = "z" },
	};
	struct fx f;
	const char *deb;
	char *before, *after;
	struct stat st;

	fx_init(&f);
	deb = make_pkg(&f, "pa", NULL, files_a, 6, conffiles_a, 1);
	ck_assert_int_eq(install(&f, 1, 0, &deb, 1), 0);
	before = snapshot(&f);
	deb = make_pkg(&f, "broken", NULL, big, 3, NULL, 0);
	ck_assert_int_eq(stat(deb, &st), 0);
	ck_assert_int_eq(truncate(deb, st.st_size * 2 / 3), 0);
	ck_assert_int_eq(install(&f, 1, 0, &deb, 1), 1);
	ck_assert_int_eq(f.errors, 1);
	after = snapshot(&f);
	ck_assert_str_eq(after, before);
	free(before);
	free(after);
	fx_destroy(&f);
}
END_TEST

/* Two packages shipping one file: the second is refused, the first is
 * installed, and the second leaves nothing behind. */
START_TEST(test_conflict_in_one_run)
{
	static const struct tu_entry files_b[] = {
		{ .type = 'd', .path = "./usr/" },
		{ .type = 'd', .path = "./usr/share/" },
		{ .type = 'f', .path = "./usr/share/b", .data = "b" },
		{ .type = 'f', .path = "./usr/share/a", .data = "other" },
	};
	struct fx f;
	const char *debs[2];
	char *s;

	fx_init(&f);
	debs[0] = make_pkg(&f, "pa", NULL, files_a, 6, conffiles_a, 1);
	debs[1] = make_pkg(&f, "pb", NULL, files_b, 4, NULL, 0);
	ck_assert_int_eq(install(&f, 1, 0, debs, 2), 1);
	ck_assert_str_eq(f.last_error, "trying to overwrite '/usr/share/a', "
			 "which is also in package pa 1.0");
	assert_file(&f, "usr/share/a", "aaa\n");
	ck_assert(!exists(&f, "usr/share/b"));
	ck_assert(!exists(&f, "usr/share/b.dpkg-new"));
	ck_assert(!exists(&f, "var/lib/dpkg/info/pb.list"));
	s = slurp(&f, "var/lib/dpkg/status");
	ck_assert_ptr_null(strstr(s, "Package: pb"));
	ck_assert_ptr_nonnull(strstr(s, "Package: pa\nStatus: install ok "
				     "installed"));
	free(s);
	fx_destroy(&f);
}
END_TEST

/* Unmet Depends leave the package unpacked; --force-depends configures
 * it with a warning. */
START_TEST(test_depends)
{
	static const struct tu_entry e[] = {
		{ .type = 'd', .path = "./usr/" },
	};
	struct fx f;
	const char *deb;
	char *s;

	fx_init(&f);
	deb = make_pkg(&f, "needy", "Depends: pa (>= 2.0) | pz\n", e, 1,
		       NULL, 0);
	ck_assert_int_eq(install(&f, 1, 0, &deb, 1), 1);
	/* dpkg's notice with the reasons, then its error */
	ck_assert_ptr_nonnull(strstr(f.last_notice, "needy depends on pa "
				     "(>= 2.0) | pz; however:\n  Package pa "
				     "is not installed.\n  Package pz is not "
				     "installed."));
	ck_assert_str_eq(f.last_error, "dependency problems - leaving "
			 "unconfigured");
	s = slurp(&f, "var/lib/dpkg/status");
	ck_assert_ptr_nonnull(strstr(s, "Status: install ok unpacked"));
	free(s);
	/* satisfied by a package of the same run */
	f.errors = 0;
	{
		const char *debs[2] = {
			deb, make_pkg(&f, "pz", NULL, e, 1, NULL, 0),
		};

		ck_assert_int_eq(install(&f, 1, 0, debs, 2), 0);
	}
	fx_destroy(&f);

	fx_init(&f);
	deb = make_pkg(&f, "needy", "Depends: nothere\n", e, 1, NULL, 0);
	ck_assert_int_eq(install(&f, 1, 1, &deb, 1), 0);
	ck_assert_int_eq(f.warnings, 1);
	s = slurp(&f, "var/lib/dpkg/status");
	ck_assert_ptr_nonnull(strstr(s, "Status: install ok installed"));
	free(s);
	fx_destroy(&f);
}
END_TEST

/* Provides: a versioned one meets a versioned need, an unversioned one
 * only an unversioned need. */
START_TEST(test_provides)
{
	static const struct tu_entry e[] = {
		{ .type = 'd', .path = "./usr/" },
	};
	struct fx f;
	const char *deb;

	fx_init(&f);
	deb = make_pkg(&f, "impl", "Provides: virt (= 2.0), plain\n", e, 1,
		       NULL, 0);
	ck_assert_int_eq(install(&f, 1, 0, &deb, 1), 0);
	deb = make_pkg(&f, "user1", "Depends: virt (>= 1.5), plain\n", e, 1,
		       NULL, 0);
	ck_assert_int_eq(install(&f, 1, 0, &deb, 1), 0);
	deb = make_pkg(&f, "user2", "Depends: virt (>= 3)\n", e, 1, NULL, 0);
	ck_assert_int_eq(install(&f, 1, 0, &deb, 1), 1);
	deb = make_pkg(&f, "user3", "Depends: plain (>= 1)\n", e, 1, NULL, 0);
	ck_assert_int_eq(install(&f, 1, 0, &deb, 1), 1);
	ck_assert_int_eq(f.errors, 2);
	fx_destroy(&f);
}
END_TEST

/* Maintainer scripts are not run yet: a preinst is refused before
 * anything changes; a postinst leaves the package unpacked. */
/* Maintainer scripts run (chrootless here: the test root has no shell):
 * a failing preinst leaves the root and the database as they were; a
 * postinst runs once the package's files and info/ files are in place
 * and the package ends installed; a failing one leaves it
 * half-configured.  tests/integration/scripts.sh compares the whole flow
 * with dpkg. */
START_TEST(test_scripts)
{
	static const struct tu_entry pre[] = {
		{ .type = 'f', .path = "./preinst",
		  .data = "#!/bin/sh\necho \"$*\" >\"$DPKG_ROOT/pre-ran\"\n"
			  "exit 1\n", .mode = 0755 },
	};
	static const struct tu_entry post[] = {
		{ .type = 'f', .path = "./postinst",
		  .data = "#!/bin/sh\n[ -e \"$DPKG_ADMINDIR/info/post.list\" ] "
			  "&& echo \"$*\" >\"$DPKG_ROOT/post-ran\"\n"
			  "[ ! -e \"$DPKG_ROOT/fail\" ]\n", .mode = 0755 },
	};
	struct fx f;
	const char *deb;
	char *before, *after, *s;

	fx_init(&f);
	f.force = UNPKG_FORCE_SCRIPT_CHROOTLESS;
	deb = make_pkg(&f, "pa", NULL, files_a, 6, conffiles_a, 1);
	ck_assert_int_eq(install(&f, 1, 0, &deb, 1), 0);
	before = snapshot(&f);
	deb = make_pkg(&f, "pre", NULL, files_a + 1, 1, pre, 1);
	ck_assert_int_eq(install(&f, 1, 0, &deb, 1), 1);
	ck_assert_ptr_nonnull(strstr(f.last_error, "pre-installation script "
				     "subprocess returned error exit status 1"));
	assert_file(&f, "pre-ran", "install\n");
	ck_assert_int_eq(unlink(at(&f, "pre-ran")), 0);
	after = snapshot(&f);
	ck_assert_str_eq(after, before);
	free(before);
	free(after);

	deb = make_pkg(&f, "post", NULL, files_a + 1, 1, post, 1);
	ck_assert_int_eq(install(&f, 1, 0, &deb, 1), 0);
	assert_file(&f, "post-ran", "configure \n");
	s = slurp(&f, "var/lib/dpkg/status");
	ck_assert_ptr_nonnull(strstr(s, "Package: post\nStatus: install ok "
				     "installed"));
	free(s);
	ck_assert(exists(&f, "var/lib/dpkg/info/post.postinst"));
	ck_assert(!exists(&f, "var/lib/dpkg/info/post.postinst.dpkg-new"));
	ck_assert(!exists(&f, "var/lib/dpkg/tmp.ci"));

	tu_write_file(at(&f, "fail"), "", 0644);
	ck_assert_int_eq(install(&f, 1, 0, &deb, 1), 1);
	s = slurp(&f, "var/lib/dpkg/status");
	ck_assert_ptr_nonnull(strstr(s, "Package: post\nStatus: install ok "
				     "half-configured"));
	free(s);
	fx_destroy(&f);
}
END_TEST

/* dpkg's file list puts symlinks after everything else; a package with
 * no regular file still gets an (empty) md5sums. */
START_TEST(test_list_order_and_empty_md5sums)
{
	static const struct tu_entry e[] = {
		{ .type = 'd', .path = "./d/" },
		{ .type = 'l', .path = "./d/a-link", .data = "z" },
		{ .type = 'p', .path = "./d/b-fifo" },
		{ .type = 'l', .path = "./d/c-link", .data = "/abs" },
		{ .type = 'd', .path = "./d/sub/" },
	};
	struct fx f;
	const char *deb;

	fx_init(&f);
	deb = make_pkg(&f, "links", NULL, e, 5, NULL, 0);
	ck_assert_int_eq(install(&f, 0, 0, &deb, 1), 0);
	assert_file(&f, "var/lib/dpkg/info/links.list",
		    "/d\n/d/b-fifo\n/d/sub\n/d/a-link\n/d/c-link\n");
	assert_file(&f, "var/lib/dpkg/info/links.md5sums", "");
	fx_destroy(&f);
}
END_TEST

/* One transaction for the run: a package failing in the middle is rolled
 * back to its savepoint, the others are committed together. */
START_TEST(test_batch_with_a_failure)
{
	static const struct tu_entry files_c[] = {
		{ .type = 'd', .path = "./opt/" },
		{ .type = 'f', .path = "./opt/c", .data = "c" },
	};
	/* fails after staging a directory and a file: it ships a file
	 * of pa, the package before it in the run */
	static const struct tu_entry clash[] = {
		{ .type = 'd', .path = "./srv/" },
		{ .type = 'f', .path = "./srv/early", .data = "e" },
		{ .type = 'd', .path = "./usr/" },
		{ .type = 'd', .path = "./usr/share/" },
		{ .type = 'f', .path = "./usr/share/a", .data = "mine" },
	};
	struct fx f;
	const char *debs[3];
	char *s;

	fx_init(&f);
	f.sync = UNPKG_SYNC_BATCH;
	debs[0] = make_pkg(&f, "pa", NULL, files_a, 6, conffiles_a, 1);
	debs[1] = make_pkg(&f, "broken", NULL, clash, 5, NULL, 0);
	debs[2] = make_pkg(&f, "pc", NULL, files_c, 2, NULL, 0);
	ck_assert_int_eq(install(&f, 1, 0, debs, 3), 1);
	ck_assert_ptr_nonnull(strstr(f.last_error, "trying to overwrite "
				     "'/usr/share/a'"));
	ck_assert_int_eq(f.errors, 1);
	assert_file(&f, "usr/share/a", "aaa\n");
	ck_assert(exists(&f, "etc/a.conf"));
	ck_assert(exists(&f, "opt/c"));
	/* nothing of the damaged one, not even its directory */
	ck_assert(!exists(&f, "srv"));
	ck_assert(!exists(&f, "var/lib/dpkg/info/broken.list"));
	s = slurp(&f, "var/lib/dpkg/status");
	ck_assert_ptr_null(strstr(s, "Package: broken"));
	ck_assert_ptr_nonnull(strstr(s, "Package: pa\nStatus: install ok "
				     "installed"));
	ck_assert_ptr_nonnull(strstr(s, "Package: pc\nStatus: install ok "
				     "installed"));
	free(s);
	ck_assert_str_eq(f.st.strategy, "batch");
	fx_destroy(&f);
}
END_TEST

/* Replaces between packages of one batched run: the earlier one is
 * committed before the later one takes its file, as dpkg has it unpacked
 * by then; the other way round, the file stays with the package that
 * Replaces. */
START_TEST(test_replaces_in_one_run)
{
	static const struct tu_entry files_b[] = {
		{ .type = 'd', .path = "./usr/" },
		{ .type = 'd', .path = "./usr/share/" },
		{ .type = 'f', .path = "./usr/share/b", .data = "b" },
		{ .type = 'f', .path = "./usr/share/a", .data = "mine" },
	};
	struct fx f;
	const char *debs[2];
	char *s;
	int order;

	for (order = 0; order < 2; order++) {
		fx_init(&f);
		f.sync = UNPKG_SYNC_BATCH;
		debs[order] = make_pkg(&f, "pa", NULL, files_a, 6,
				       conffiles_a, 1);
		debs[1 - order] = make_pkg(&f, "pb", "Replaces: pa\n",
					   files_b, 4, NULL, 0);
		ck_assert_int_eq(install(&f, 1, 0, debs, 2), 0);
		ck_assert_int_eq(f.errors, 0);
		assert_file(&f, "usr/share/a", "mine");
		s = slurp(&f, "var/lib/dpkg/info/pa.list");
		ck_assert_ptr_null(strstr(s, "/usr/share/a\n"));
		ck_assert_ptr_nonnull(strstr(s, "/etc/a.conf\n"));
		free(s);
		s = slurp(&f, "var/lib/dpkg/info/pb.list");
		ck_assert_ptr_nonnull(strstr(s, "/usr/share/a\n"));
		free(s);
		s = slurp(&f, "var/lib/dpkg/status");
		ck_assert_ptr_nonnull(strstr(s, "Package: pa\nStatus: install "
					     "ok installed"));
		ck_assert_ptr_nonnull(strstr(s, "Package: pb\nStatus: install "
					     "ok installed"));
		free(s);
		ck_assert(!exists(&f, "usr/share/a.dpkg-new"));
		ck_assert(!exists(&f, "usr/share/a.dpkg-tmp"));
		fx_destroy(&f);
	}
}
END_TEST

/* Running the same install again changes nothing but what it must. */
START_TEST(test_rerun_converges)
{
	struct fx f;
	const char *deb;
	char *first, *second;

	fx_init(&f);
	deb = make_pkg(&f, "pa", NULL, files_a, 6, conffiles_a, 1);
	ck_assert_int_eq(install(&f, 1, 0, &deb, 1), 0);
	first = snapshot(&f);
	ck_assert_int_eq(install(&f, 1, 0, &deb, 1), 0);
	second = snapshot(&f);
	ck_assert_str_eq(second, first);
	free(first);
	free(second);
	fx_destroy(&f);
}
END_TEST

/* --configure: the packages unpacked before configured in dependency
 * order, their conffiles in place with the hash recorded; a package
 * already configured, a name not installed and a missing dependency
 * each fail alone, in dpkg's words. */
START_TEST(test_configure_named)
{
	static const struct tu_entry files_b[] = {
		{ .type = 'd', .path = "./" },
		{ .type = 'f', .path = "./b", .data = "b\n" },
	};
	static const struct tu_entry files_c[] = {
		{ .type = 'd', .path = "./" },
		{ .type = 'f', .path = "./c", .data = "c\n" },
	};
	struct fx f;
	const char *debs[3], *names[] = { "pb", "pa" };
	char *s;

	fx_init(&f);
	debs[0] = make_pkg(&f, "pa", NULL, files_a, 6, conffiles_a, 1);
	debs[1] = make_pkg(&f, "pb", "Depends: pa\n", files_b, 2, NULL, 0);
	debs[2] = make_pkg(&f, "pc", "Depends: nosuch\n", files_c, 2, NULL, 0);
	ck_assert_int_eq(install(&f, 0, 0, debs, 3), 0);
	ck_assert_int_eq(configure(&f, names, 2), 0);
	s = slurp(&f, "var/lib/dpkg/status");
	ck_assert_ptr_nonnull(strstr(s, "Package: pa\nStatus: install ok "
				     "installed\n"));
	ck_assert_ptr_nonnull(strstr(s, "Package: pb\nStatus: install ok "
				     "installed\n"));
	ck_assert_ptr_nonnull(strstr(s, "Conffiles:\n /etc/a.conf "
				     "f968f33f844c98de1d3b4fe70f2e1a0f\n"));
	free(s);
	ck_assert(exists(&f, "etc/a.conf"));
	ck_assert(!exists(&f, "etc/a.conf.dpkg-new"));

	names[0] = "pa";
	ck_assert_int_eq(configure(&f, names, 1), 1);
	ck_assert_str_eq(f.last_error, "package pa is already installed and "
			 "configured");
	names[0] = "nosuch";
	ck_assert_int_eq(configure(&f, names, 1), 1);
	ck_assert_str_eq(f.last_error, "no package named 'nosuch' is "
			 "installed, cannot configure");
	ck_assert_int_eq(configure(&f, NULL, 0), 1);
	ck_assert_str_eq(f.last_error, "dependency problems - leaving "
			 "unconfigured");
	s = slurp(&f, "var/lib/dpkg/status");
	ck_assert_ptr_nonnull(strstr(s, "Package: pc\nStatus: install ok "
				     "unpacked\n"));
	free(s);
	fx_destroy(&f);
}
END_TEST

/* The syncs of --configure do not grow with the number of packages
 * (doc/design.md, "Configure"): one package, then four, each with a
 * conffile in a directory of its own, with --sync=syncfs. */
START_TEST(test_configure_constant_syncs)
{
	static const char *const pkgs[] = { "q1", "q2", "q3", "q4", "q5" };
	struct tu_entry e[3] = {
		{ .type = 'd', .path = "./" },
		{ .type = 'd' },
		{ .type = 'f', .data = "setting\n" },
	};
	struct tu_entry cm[1] = { { .type = 'f', .path = "./conffiles" } };
	char dir[5][64], file[5][64], list[5][64];
	const char *debs[5];
	unsigned long one;
	size_t i;
	struct fx f;

	fx_init(&f);
	f.sync = UNPKG_SYNC_SYNCFS;
	for (i = 0; i < 5; i++) {
		snprintf(dir[i], sizeof(dir[i]), "./%s/", pkgs[i]);
		snprintf(file[i], sizeof(file[i]), "./%s/%s.conf", pkgs[i],
			 pkgs[i]);
		snprintf(list[i], sizeof(list[i]), "/%s/%s.conf\n", pkgs[i],
			 pkgs[i]);
		e[1].path = dir[i];
		e[2].path = file[i];
		cm[0].data = list[i];
		debs[i] = strdup(make_pkg(&f, pkgs[i], NULL, e, 3, cm, 1));
		ck_assert_ptr_nonnull(debs[i]);
	}
	ck_assert_int_eq(install(&f, 0, 0, debs, 1), 0);
	memset(&f.st, 0, sizeof(f.st));
	ck_assert_int_eq(configure(&f, NULL, 0), 0);
	one = syncs(&f);
	ck_assert_uint_gt(one, 0);
	ck_assert_int_eq(install(&f, 0, 0, debs + 1, 4), 0);
	memset(&f.st, 0, sizeof(f.st));
	ck_assert_int_eq(configure(&f, NULL, 0), 0);
	ck_assert_uint_eq(syncs(&f), one);
	for (i = 0; i < 5; i++) {
		ck_assert(exists(&f, file[i] + 2));
		free((char *)debs[i]);
	}
	ck_assert_int_eq(f.errors, 0);
	fx_destroy(&f);
}
END_TEST

/* The interest files of a package's triggers go with the record: an
 * --unpack of a package interested in three triggers and a path costs
 * the syncs of one without interests and one fsync of triggers/, not an
 * fdatasync per interest file (doc/design.md, "The pipeline of one
 * run"). */
START_TEST(test_unpack_trigger_interests_syncs)
{
	struct tu_entry e[2] = {
		{ .type = 'd', .path = "./usr/" },
		{ .type = 'f', .data = "x\n" },
	};
	struct tu_entry cm[1] = {
		{ .type = 'f', .path = "./triggers",
		  .data = "interest t-one\ninterest-noawait t-two\n"
			  "interest-await t-three\ninterest /usr/share/ti\n" },
	};
	const char *deb;
	unsigned long plain;
	struct fx f;

	fx_init(&f);
	f.sync = UNPKG_SYNC_SYNCFS;
	e[1].path = "./usr/plain";
	deb = make_pkg(&f, "plain", NULL, e, 2, NULL, 0);
	ck_assert_int_eq(install(&f, 0, 0, &deb, 1), 0);
	/* the first run also makes triggers/ and its Unincorp */
	deb = make_pkg(&f, "early", NULL, e, 0, cm, 1);
	ck_assert_int_eq(install(&f, 0, 0, &deb, 1), 0);
	e[1].path = "./usr/plain2";
	deb = make_pkg(&f, "plain2", NULL, e, 2, NULL, 0);
	memset(&f.st, 0, sizeof(f.st));
	ck_assert_int_eq(install(&f, 0, 0, &deb, 1), 0);
	plain = syncs(&f);
	e[1].path = "./usr/ti";
	deb = make_pkg(&f, "ti", NULL, e, 2, cm, 1);
	memset(&f.st, 0, sizeof(f.st));
	ck_assert_int_eq(install(&f, 0, 0, &deb, 1), 0);
	ck_assert_uint_eq(syncs(&f), plain + 1);
	assert_file(&f, "var/lib/dpkg/triggers/File",
		    "/usr/share/ti early\n/usr/share/ti ti\n");
	assert_file(&f, "var/lib/dpkg/triggers/t-two", "early/noawait\nti/noawait\n");
	ck_assert(!exists(&f, "var/lib/dpkg/triggers/File.new"));
	ck_assert(!exists(&f, "var/lib/dpkg/triggers/t-one.new"));
	ck_assert_int_eq(f.errors, 0);
	fx_destroy(&f);
}
END_TEST

int main(void)
{
	Suite *s;
	TCase *tc;

	/* Entries get owners other than the caller. */
	tu_require_root("chown");
	s = suite_create("install");
	tc = tcase_create("core");
	tcase_add_test(tc, test_unpack_then_configure);
	tcase_add_test(tc, test_corrupt_archive_changes_nothing);
	tcase_add_test(tc, test_conflict_in_one_run);
	tcase_add_test(tc, test_depends);
	tcase_add_test(tc, test_provides);
	tcase_add_test(tc, test_scripts);
	tcase_add_test(tc, test_rerun_converges);
	tcase_add_test(tc, test_list_order_and_empty_md5sums);
	tcase_add_test(tc, test_batch_with_a_failure);
	tcase_add_test(tc, test_replaces_in_one_run);
	tcase_add_test(tc, test_configure_named);
	tcase_add_test(tc, test_configure_constant_syncs);
	tcase_add_test(tc, test_unpack_trigger_interests_syncs);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
