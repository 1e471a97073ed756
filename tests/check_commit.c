/* check_commit.c - the staging transaction and the commit strategies. */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commit.h"
#include "fsclass.h"
#include "strategy.h"
#include "fsroot.h"
#include "testutil.h"

struct fixture {
	char *tmp;
	struct unpkg_root *root;
	struct unpkg_commit *c;
	struct unpkg_stats st;
	char notice[512];
	struct unpkg_events ev;
};

static void on_event(void *ctx, const struct unpkg_event *ev)
{
	struct fixture *f = ctx;

	if (ev->kind == UNPKG_EV_NOTICE)
		snprintf(f->notice, sizeof(f->notice), "%s", ev->message);
}

static void setup(struct fixture *f, enum unpkg_sync_mode mode,
		  unsigned int max_fds)
{
	struct unpkg_err err;
	char path[4096];

	memset(f, 0, sizeof(*f));
	unpkg_err_init(&err);
	f->tmp = tu_mkdtemp();
	snprintf(path, sizeof(path), "%s/d", f->tmp);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	f->ev.fn = on_event;
	f->ev.ctx = f;
	ck_assert_msg(unpkg_root_open(f->tmp, 0, &f->root, &err) == 0, "%s",
		      err.msg);
	ck_assert_msg(unpkg_commit_new(mode, &f->st, &f->ev, max_fds, &f->c,
				       &err) == 0, "%s", err.msg);
}

static void teardown(struct fixture *f)
{
	unpkg_commit_free(f->c);
	unpkg_root_free(f->root);
	tu_rm_rf(f->tmp);
	free(f->tmp);
}

static char *at(const struct fixture *f, const char *rel)
{
	static char buf[4][4096];
	static int n;

	n = (n + 1) % 4;
	snprintf(buf[n], sizeof(buf[n]), "%s/%s", f->tmp, rel);
	return buf[n];
}

static int exists(const struct fixture *f, const char *rel)
{
	struct stat st;

	return lstat(at(f, rel), &st) == 0;
}

static void check_content(const struct fixture *f, const char *rel,
			  const char *want)
{
	char *got = tu_read_file(at(f, rel), NULL);

	ck_assert_msg(got != NULL, "%s missing", rel);
	ck_assert_str_eq(got, want);
	free(got);
}

/* Write dir/NAME.dpkg-new with `data` and stage it as dir/NAME. */
static void stage_file(struct fixture *f, int dir, const char *name,
		       const char *data, unsigned int flags)
{
	struct unpkg_err err;
	char tmp[256];
	int dfd, fd;

	unpkg_err_init(&err);
	snprintf(tmp, sizeof(tmp), "%s.dpkg-new", name);
	dfd = unpkg_commit_dirfd(f->c, dir, &err);
	ck_assert_msg(dfd >= 0, "%s", err.msg);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, strlen(data)), (ssize_t)strlen(data));
	ck_assert_msg(unpkg_commit_stage(f->c, dir, tmp, name, fd, flags,
					 &err) == 0, "%s", err.msg);
}

static int dir_handle(struct fixture *f, const char *rel)
{
	struct unpkg_err err;
	int d;

	unpkg_err_init(&err);
	d = unpkg_commit_dir(f->c, f->root, rel, &err);
	ck_assert_msg(d >= 0, "%s", err.msg);
	return d;
}

static void finish(struct fixture *f)
{
	struct unpkg_err err;

	unpkg_err_init(&err);
	ck_assert_msg(unpkg_commit_finish(f->c, &err) == 0, "%s", err.msg);
	ck_assert_msg(unpkg_commit_release(f->c, &err) == 0, "%s", err.msg);
}

/* A file outside the transaction, written and handed over to be synced. */
static void sync_with(struct fixture *f, int dir, const char *name,
		      const char *data)
{
	struct unpkg_err err;
	int dfd, fd;

	unpkg_err_init(&err);
	dfd = unpkg_commit_dirfd(f->c, dir, &err);
	ck_assert_msg(dfd >= 0, "%s", err.msg);
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, strlen(data)), (ssize_t)strlen(data));
	ck_assert_msg(unpkg_commit_sync_with(f->c, dir, name, fd, &err) == 0,
		      "%s", err.msg);
}

struct hook_ctx {
	struct fixture *f;
	int dir;
	int stage_more;		/* the renamed hook stages a file too */
	char log[64];
};

static int hook_synced(void *ctx, struct unpkg_err *err)
{
	struct hook_ctx *h = ctx;

	(void)err;
	/* the staged data is synced, nothing renamed yet */
	ck_assert(!exists(h->f, "d/a"));
	strcat(h->log, "s");
	return 0;
}

static int hook_renamed(void *ctx, struct unpkg_err *err)
{
	struct hook_ctx *h = ctx;

	(void)err;
	ck_assert(exists(h->f, "d/a"));
	sync_with(h->f, h->dir, "late", "late data");
	if (h->stage_more)
		stage_file(h->f, h->dir, "b", "beta", 0);
	strcat(h->log, "r");
	return 0;
}

/* finish_hooked: the hooks between the passes; a file handed over
 * before the finish is synced by the barrier, one handed over from the
 * renamed hook by the sync of the renames, with no extra pass; what the
 * hook stages gets a barrier and renames of its own. */
static void hooked_run(enum unpkg_sync_mode mode, int stage_more,
		       struct unpkg_stats *out)
{
	struct fixture f;
	struct hook_ctx h = { 0 };
	struct unpkg_commit_hooks hooks = {
		.synced = hook_synced,
		.renamed = hook_renamed,
		.ctx = &h,
	};
	struct unpkg_err err;

	setup(&f, mode, 0);
	h.f = &f;
	h.dir = dir_handle(&f, "d");
	h.stage_more = stage_more;
	stage_file(&f, h.dir, "a", "alpha", 0);
	sync_with(&f, h.dir, "early", "early data");
	unpkg_err_init(&err);
	ck_assert_msg(unpkg_commit_finish_hooked(f.c, &hooks, &err) == 0,
		      "%s", err.msg);
	ck_assert_str_eq(h.log, "sr");
	check_content(&f, "d/a", "alpha");
	check_content(&f, "d/early", "early data");
	check_content(&f, "d/late", "late data");
	ck_assert(exists(&f, "d/b") == stage_more);
	*out = f.st;
	/* handed-over files are never renamed or removed, not even by an
	 * abort */
	unpkg_commit_abort(f.c);
	ck_assert(!exists(&f, "d/a"));
	ck_assert(exists(&f, "d/early") && exists(&f, "d/late"));
	teardown(&f);
}

START_TEST(test_hooks)
{
	struct unpkg_stats st;

	hooked_run(UNPKG_SYNC_SYNCFS, 0, &st);
	ck_assert_uint_eq(st.syncfs, 2);
	hooked_run(UNPKG_SYNC_SYNCFS, 1, &st);
	ck_assert_uint_eq(st.syncfs, 3);
	hooked_run(UNPKG_SYNC_DPKG, 0, &st);
	/* a and early at the barrier, late with the directory */
	ck_assert_uint_eq(st.fdatasync, 3);
	ck_assert_uint_eq(st.fsync, 1);
	/* WAIT_BEFORE only where writeback was started: a */
	ck_assert_uint_eq(st.sync_file_range, 2);
	hooked_run(UNPKG_SYNC_DPKG, 1, &st);
	/* late goes with b's barrier */
	ck_assert_uint_eq(st.fdatasync, 4);
	ck_assert_uint_eq(st.fsync, 1);
	hooked_run(UNPKG_SYNC_NONE, 1, &st);
	/* the database's files, early and late, and nothing else: d is not
	 * a directory of the database */
	ck_assert_uint_eq(st.fdatasync, 2);
	ck_assert_uint_eq(st.fsync + st.syncfs + st.sync_file_range, 0);
}
END_TEST

/* No barrier when nothing staged needs one: removals and files waiting
 * from an earlier transaction (UNPKG_STAGE_KEEP). */
START_TEST(test_barrier_skipped)
{
	struct fixture f;
	struct unpkg_err err;
	int d;

	setup(&f, UNPKG_SYNC_SYNCFS, 0);
	unpkg_err_init(&err);
	tu_write_file(at(&f, "d/c.dpkg-new"), "new", 0644);
	tu_write_file(at(&f, "d/gone"), "old", 0644);
	d = dir_handle(&f, "d");
	ck_assert_int_eq(unpkg_commit_stage(f.c, d, "c.dpkg-new", "c", -1,
					    UNPKG_STAGE_KEEP, &err), 0);
	ck_assert_int_eq(unpkg_commit_remove(f.c, d, "gone", 0, &err), 0);
	finish(&f);
	ck_assert_uint_eq(f.st.syncfs, 1);	/* the renames' only */
	check_content(&f, "d/c", "new");
	ck_assert(!exists(&f, "d/gone"));
	stage_file(&f, d, "a", "alpha", 0);
	finish(&f);
	ck_assert_uint_eq(f.st.syncfs, 3);
	teardown(&f);
}
END_TEST

START_TEST(test_mode_names)
{
	ck_assert_int_eq(unpkg_sync_mode_parse("dpkg"), UNPKG_SYNC_DPKG);
	ck_assert_int_eq(unpkg_sync_mode_parse("syncfs"), UNPKG_SYNC_SYNCFS);
	ck_assert_int_eq(unpkg_sync_mode_parse("none"), UNPKG_SYNC_NONE);
	ck_assert_int_eq(unpkg_sync_mode_parse("batch"), UNPKG_SYNC_BATCH);
	ck_assert_int_eq(unpkg_sync_mode_parse("uring"), UNPKG_SYNC_URING);
	ck_assert_int_eq(unpkg_sync_mode_parse("fsync"), -1);
	ck_assert_str_eq(unpkg_sync_mode_name(UNPKG_SYNC_SYNCFS), "syncfs");
}
END_TEST

/* The dpkg recipe: one SYNC_FILE_RANGE_WRITE per file as staged, one
 * WAIT_BEFORE and one fdatasync per file at the barrier, one rename per
 * entry, one fsync per touched directory. */
START_TEST(test_dpkg_counts)
{
	struct fixture f;
	int d;

	setup(&f, UNPKG_SYNC_DPKG, 0);
	d = dir_handle(&f, "d");
	stage_file(&f, d, "a", "alpha", 0);
	stage_file(&f, d, "b", "beta", 0);
	stage_file(&f, d, "c", "gamma", 0);
	ck_assert_uint_eq(f.st.sync_file_range, 3);
	ck_assert_uint_eq(f.st.fdatasync, 0);
	ck_assert(!exists(&f, "d/a"));
	finish(&f);
	ck_assert_uint_eq(f.st.sync_file_range, 6);
	ck_assert_uint_eq(f.st.fdatasync, 3);
	ck_assert_uint_eq(f.st.rename, 3);
	ck_assert_uint_eq(f.st.fsync, 1);
	ck_assert_uint_eq(f.st.syncfs, 0);
	ck_assert_str_eq(unpkg_commit_strategy(f.c), "dpkg");
	check_content(&f, "d/a", "alpha");
	check_content(&f, "d/c", "gamma");
	ck_assert(!exists(&f, "d/a.dpkg-new"));
	teardown(&f);
}
END_TEST

START_TEST(test_syncfs_counts)
{
	struct fixture f;
	int d, e;

	setup(&f, UNPKG_SYNC_SYNCFS, 0);
	ck_assert_int_eq(mkdir(at(&f, "d/e"), 0755), 0);
	d = dir_handle(&f, "d");
	e = dir_handle(&f, "d/e");
	stage_file(&f, d, "a", "alpha", 0);
	stage_file(&f, e, "b", "beta", 0);
	finish(&f);
	/* both directories are on one filesystem: one syncfs per pass */
	ck_assert_uint_eq(f.st.syncfs, 2);
	ck_assert_uint_eq(f.st.fdatasync + f.st.fsync + f.st.sync_file_range,
			  0);
	check_content(&f, "d/e/b", "beta");
	teardown(&f);
}
END_TEST

START_TEST(test_none_counts)
{
	struct fixture f;
	int d;

	setup(&f, UNPKG_SYNC_NONE, 0);
	d = dir_handle(&f, "d");
	stage_file(&f, d, "a", "alpha", 0);
	finish(&f);
	ck_assert_uint_eq(f.st.syncfs + f.st.fdatasync + f.st.fsync +
			  f.st.sync_file_range, 0);
	ck_assert_uint_eq(f.st.rename, 1);
	check_content(&f, "d/a", "alpha");
	teardown(&f);
}
END_TEST

/* none (--force-unsafe-io): the database's files are still synced before
 * their renames, and its directories after; the packages' files are not.
 * The database is a second root here, as in an install, and one of its
 * directories is also reached through the installation root first.
 * Returns 0 if all went as it should, else the number of the first check
 * that failed (for a forked child without Check's asserts). */
static int none_database_run(void)
{
	struct fixture f;
	struct unpkg_root *adm;
	struct unpkg_err err;
	int d, info, plain, bad = 0;

	setup(&f, UNPKG_SYNC_NONE, 0);
	unpkg_err_init(&err);
	ck_assert_int_eq(mkdir(at(&f, "d/admin"), 0755), 0);
	ck_assert_int_eq(mkdir(at(&f, "d/admin/info"), 0755), 0);
	ck_assert_msg(unpkg_root_open(at(&f, "d/admin"), 0, &adm, &err) == 0,
		      "%s", err.msg);
	d = dir_handle(&f, "d");
	/* registered as a package's directory before the commit learns
	 * where the database is: it becomes the database's on sight */
	plain = dir_handle(&f, "d/admin/info");
	unpkg_commit_database_root(f.c, adm);
	info = unpkg_commit_dir(f.c, adm, "info", &err);
	stage_file(&f, d, "a", "alpha", 0);
	stage_file(&f, d, "b", "beta", 0);
	stage_file(&f, info, "pkg.list", "/d/a\n/d/b\n", 0);
	sync_with(&f, unpkg_commit_dir(f.c, adm, "", &err), "status-new",
		  "Package: pkg\n");
	finish(&f);
	if (info != plain)
		bad = 1;
	/* pkg.list and status-new; info/ after the renames */
	else if (f.st.fdatasync != 2 || f.st.fsync != 1)
		bad = 2;
	else if (f.st.syncfs + f.st.sync_file_range != 0)
		bad = 3;
	else if (f.st.rename != 3)
		bad = 4;
	else if (strcmp(unpkg_commit_strategy(f.c), "none") != 0 ||
		 f.notice[0] != '\0')
		bad = 5;
	check_content(&f, "d/admin/info/pkg.list", "/d/a\n/d/b\n");
	check_content(&f, "d/b", "beta");
	teardown(&f);
	unpkg_root_free(adm);
	return bad;
}

START_TEST(test_none_syncs_database)
{
	ck_assert_int_eq(none_database_run(), 0);
}
END_TEST

/* Where io_uring is refused, none makes the same syncs one by one, with
 * no notice and no change of strategy. */
START_TEST(test_none_without_uring)
{
	pid_t pid;
	int status;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (tu_deny_syscall(__NR_io_uring_setup, ENOSYS) < 0)
			_exit(99);
		_exit(none_database_run());
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

/* uring: writeback started per file, then the fdatasyncs of the batch
 * and the directory fsyncs through io_uring; the counts are the same as
 * dpkg's, without the wait pass. */
START_TEST(test_uring_counts)
{
	struct fixture f;
	int d, e;

	setup(&f, UNPKG_SYNC_URING, 0);
	ck_assert_int_eq(mkdir(at(&f, "d/e"), 0755), 0);
	d = dir_handle(&f, "d");
	e = dir_handle(&f, "d/e");
	stage_file(&f, d, "a", "alpha", 0);
	stage_file(&f, e, "b", "beta", 0);
	stage_file(&f, e, "c", "gamma", 0);
	finish(&f);
	ck_assert_str_eq(unpkg_commit_strategy(f.c), "uring");
	ck_assert_uint_eq(f.st.sync_file_range, 3);
	ck_assert_uint_eq(f.st.fdatasync, 3);
	ck_assert_uint_eq(f.st.fsync, 2);
	ck_assert_uint_eq(f.st.rename, 3);
	check_content(&f, "d/a", "alpha");
	check_content(&f, "d/e/c", "gamma");
	ck_assert(unpkg_commit_per_run(f.c));
	teardown(&f);
}
END_TEST

/* Where io_uring cannot be set up, uring becomes batch with a notice and
 * still commits.  Run in a child whose seccomp filter refuses it. */
START_TEST(test_uring_fallback)
{
	pid_t pid;
	int status;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct fixture f;

		if (tu_deny_syscall(__NR_io_uring_setup, ENOSYS) < 0)
			_exit(2);
		setup(&f, UNPKG_SYNC_URING, 0);
		stage_file(&f, dir_handle(&f, "d"), "a", "alpha", 0);
		finish(&f);
		if (strcmp(unpkg_commit_strategy(f.c), "batch") != 0)
			_exit(3);
		if (strstr(f.notice, "io_uring is not available") == NULL)
			_exit(4);
		if (f.st.fdatasync != 1 || f.st.sync_file_range != 2)
			_exit(5);
		check_content(&f, "d/a", "alpha");
		teardown(&f);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

/* A replaced file is kept as NAME.dpkg-tmp until release. */
START_TEST(test_backup_release)
{
	struct fixture f;
	struct unpkg_err err;
	int d;

	setup(&f, UNPKG_SYNC_DPKG, 0);
	unpkg_err_init(&err);
	tu_write_file(at(&f, "d/a"), "old", 0644);
	d = dir_handle(&f, "d");
	stage_file(&f, d, "a", "new", UNPKG_STAGE_BACKUP);
	check_content(&f, "d/a.dpkg-tmp", "old");
	ck_assert_int_eq(unpkg_commit_finish(f.c, &err), 0);
	check_content(&f, "d/a", "new");
	check_content(&f, "d/a.dpkg-tmp", "old");
	ck_assert_int_eq(unpkg_commit_release(f.c, &err), 0);
	ck_assert(!exists(&f, "d/a.dpkg-tmp"));
	teardown(&f);
}
END_TEST

/* Abort before the rename pass: staged names, backups and created
 * directories go; the old files stay. */
START_TEST(test_abort_before_rename)
{
	struct fixture f;
	struct unpkg_err err;
	int d, n;

	setup(&f, UNPKG_SYNC_DPKG, 0);
	unpkg_err_init(&err);
	tu_write_file(at(&f, "d/a"), "old", 0644);
	d = dir_handle(&f, "d");
	ck_assert_int_eq(mkdir(at(&f, "d/new"), 0755), 0);
	ck_assert_int_eq(unpkg_commit_mkdir(f.c, d, "new", &err), 0);
	n = dir_handle(&f, "d/new");
	stage_file(&f, d, "a", "new", UNPKG_STAGE_BACKUP);
	stage_file(&f, n, "b", "bee", 0);
	unpkg_commit_abort(f.c);
	check_content(&f, "d/a", "old");
	ck_assert(!exists(&f, "d/a.dpkg-new"));
	ck_assert(!exists(&f, "d/a.dpkg-tmp"));
	ck_assert(!exists(&f, "d/new"));
	teardown(&f);
}
END_TEST

/* Abort after the rename pass (the database record failed): old files
 * come back from their backups, new ones go. */
START_TEST(test_abort_after_rename)
{
	struct fixture f;
	struct unpkg_err err;
	int d;

	setup(&f, UNPKG_SYNC_DPKG, 0);
	unpkg_err_init(&err);
	tu_write_file(at(&f, "d/a"), "old", 0644);
	d = dir_handle(&f, "d");
	stage_file(&f, d, "a", "new", UNPKG_STAGE_BACKUP);
	stage_file(&f, d, "b", "bee", 0);
	ck_assert_int_eq(unpkg_commit_finish(f.c, &err), 0);
	check_content(&f, "d/a", "new");
	unpkg_commit_abort(f.c);
	check_content(&f, "d/a", "old");
	ck_assert(!exists(&f, "d/b"));
	ck_assert(!exists(&f, "d/a.dpkg-tmp"));
	teardown(&f);
}
END_TEST

/* An empty directory where a file goes is moved aside in the rename
 * pass: kept as NAME.dpkg-tmp until release, put back by abort. */
START_TEST(test_dir_backup)
{
	struct fixture f;
	struct unpkg_err err;
	struct stat st;
	int d;

	setup(&f, UNPKG_SYNC_DPKG, 0);
	unpkg_err_init(&err);
	ck_assert_int_eq(mkdir(at(&f, "d/x"), 0700), 0);
	d = dir_handle(&f, "d");
	stage_file(&f, d, "x", "file", UNPKG_STAGE_DIRBACKUP);
	ck_assert_int_eq(stat(at(&f, "d/x"), &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_int_eq(unpkg_commit_finish(f.c, &err), 0);
	check_content(&f, "d/x", "file");
	ck_assert_int_eq(stat(at(&f, "d/x.dpkg-tmp"), &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	unpkg_commit_abort(f.c);
	ck_assert_int_eq(stat(at(&f, "d/x"), &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	ck_assert(!exists(&f, "d/x.dpkg-tmp"));

	stage_file(&f, d, "x", "file", UNPKG_STAGE_DIRBACKUP);
	finish(&f);
	check_content(&f, "d/x", "file");
	ck_assert(!exists(&f, "d/x.dpkg-tmp"));
	teardown(&f);
}
END_TEST

/* A conffile is made durable but keeps its temporary name. */
START_TEST(test_norename)
{
	struct fixture f;
	int d;

	setup(&f, UNPKG_SYNC_DPKG, 0);
	d = dir_handle(&f, "d");
	stage_file(&f, d, "conf", "c", UNPKG_STAGE_NORENAME);
	finish(&f);
	ck_assert_uint_eq(f.st.fdatasync, 1);
	ck_assert_uint_eq(f.st.rename, 0);
	ck_assert(exists(&f, "d/conf.dpkg-new"));
	ck_assert(!exists(&f, "d/conf"));
	teardown(&f);
}
END_TEST

/* An old file and an old directory tree moved aside: abort puts them
 * back, release deletes them (the directory with what is beneath it). */
START_TEST(test_remove)
{
	struct fixture f;
	struct unpkg_err err;
	int d;

	setup(&f, UNPKG_SYNC_DPKG, 0);
	unpkg_err_init(&err);
	tu_write_file(at(&f, "d/old"), "old", 0644);
	ck_assert_int_eq(mkdir(at(&f, "d/tree"), 0755), 0);
	tu_write_file(at(&f, "d/tree/f"), "f", 0644);
	d = dir_handle(&f, "d");
	ck_assert_msg(unpkg_commit_remove(f.c, d, "old", 0, &err) == 0, "%s",
		      err.msg);
	ck_assert_msg(unpkg_commit_remove(f.c, d, "tree", 1, &err) == 0, "%s",
		      err.msg);
	ck_assert(!exists(&f, "d/old") && !exists(&f, "d/tree"));
	check_content(&f, "d/tree.dpkg-tmp/f", "f");
	ck_assert_int_eq(unpkg_commit_finish(f.c, &err), 0);
	unpkg_commit_abort(f.c);
	check_content(&f, "d/old", "old");
	check_content(&f, "d/tree/f", "f");
	ck_assert(!exists(&f, "d/old.dpkg-tmp"));
	ck_assert(!exists(&f, "d/tree.dpkg-tmp"));

	ck_assert_int_eq(unpkg_commit_remove(f.c, d, "old", 0, &err), 0);
	ck_assert_int_eq(unpkg_commit_remove(f.c, d, "tree", 1, &err), 0);
	finish(&f);
	ck_assert(!exists(&f, "d/old") && !exists(&f, "d/old.dpkg-tmp"));
	ck_assert(!exists(&f, "d/tree") && !exists(&f, "d/tree.dpkg-tmp"));
	teardown(&f);
}
END_TEST

/* A file unlinked at once is gone for good: abort does not bring it back,
 * and its directory is synced with the others (dpkg's strategy: one
 * fsync of it). */
START_TEST(test_unlink)
{
	struct fixture f;
	struct unpkg_err err;
	int d;

	setup(&f, UNPKG_SYNC_DPKG, 0);
	unpkg_err_init(&err);
	tu_write_file(at(&f, "d/old"), "old", 0644);
	d = dir_handle(&f, "d");
	ck_assert_msg(unpkg_commit_unlink(f.c, d, "old", &err) == 0, "%s",
		      err.msg);
	ck_assert(!exists(&f, "d/old") && !exists(&f, "d/old.dpkg-tmp"));
	ck_assert_int_eq(unpkg_commit_finish(f.c, &err), 0);
	ck_assert_uint_eq(f.st.fsync, 1);
	unpkg_commit_abort(f.c);
	ck_assert(!exists(&f, "d/old"));
	ck_assert_int_eq(unpkg_commit_unlink(f.c, d, "old", &err), -1);
	ck_assert_int_eq(err.errnum, ENOENT);
	teardown(&f);
}
END_TEST

/* The same on an overlayfs, where a directory of the lower layer cannot
 * be renamed (redirect_dir off, the kernel's default): the tree, and an
 * empty directory a file replaces, are moved aside all the same, so
 * that they are gone with the rename pass, not after the record. */
START_TEST(test_remove_lower_layer)
{
	struct fixture f;
	struct unpkg_err err;
	const char *why;
	int d;

	setup(&f, UNPKG_SYNC_DPKG, 0);
	unpkg_err_init(&err);
	ck_assert_int_eq(mkdir(at(&f, "lower"), 0755), 0);
	ck_assert_int_eq(mkdir(at(&f, "lower/tree"), 0750), 0);
	ck_assert_int_eq(mkdir(at(&f, "lower/tree/sub"), 0755), 0);
	tu_write_file(at(&f, "lower/tree/sub/f"), "f", 0644);
	ck_assert_int_eq(mkdir(at(&f, "lower/empty"), 0755), 0);
	if (tu_overlay_mount(f.tmp, "redirect_dir=off", &why) < 0) {
		tu_skip_part("moving lower-layer directories aside", why);
		teardown(&f);
		return;
	}
	/* the root opened anew: the old descriptor still sees the mounts
	 * of before the test's mount namespace */
	unpkg_root_free(f.root);
	ck_assert_msg(unpkg_root_open(f.tmp, 0, &f.root, &err) == 0, "%s",
		      err.msg);
	d = dir_handle(&f, "ovl");
	ck_assert_msg(unpkg_commit_remove(f.c, d, "tree", 1, &err) == 0, "%s",
		      err.msg);
	stage_file(&f, d, "empty", "file", UNPKG_STAGE_DIRBACKUP);
	ck_assert_msg(unpkg_commit_finish(f.c, &err) == 0, "%s", err.msg);
	ck_assert(!exists(&f, "ovl/tree"));
	check_content(&f, "ovl/tree.dpkg-tmp/sub/f", "f");
	check_content(&f, "ovl/empty", "file");
	unpkg_commit_abort(f.c);
	check_content(&f, "ovl/tree/sub/f", "f");
	ck_assert(!exists(&f, "ovl/tree.dpkg-tmp"));
	ck_assert(!exists(&f, "ovl/empty.dpkg-tmp"));

	ck_assert_int_eq(unpkg_commit_remove(f.c, d, "tree", 1, &err), 0);
	stage_file(&f, d, "empty", "file", UNPKG_STAGE_DIRBACKUP);
	finish(&f);
	ck_assert(!exists(&f, "ovl/tree") && !exists(&f, "ovl/tree.dpkg-tmp"));
	check_content(&f, "ovl/empty", "file");
	ck_assert(!exists(&f, "ovl/empty.dpkg-tmp"));
	unpkg_commit_free(f.c);
	f.c = NULL;
	ck_assert_int_eq(umount(at(&f, "ovl")), 0);
	teardown(&f);
}
END_TEST

/* One package of a batch undone after the rename pass: its files go
 * back, the others stay and are released as usual. */
START_TEST(test_undo_range)
{
	struct unpkg_commit_savepoint a, b;
	struct fixture f;
	struct unpkg_err err;
	int d;

	setup(&f, UNPKG_SYNC_BATCH, 0);
	unpkg_err_init(&err);
	tu_write_file(at(&f, "d/x"), "old x", 0644);
	tu_write_file(at(&f, "d/y"), "old y", 0644);
	d = dir_handle(&f, "d");
	stage_file(&f, d, "x", "new x", UNPKG_STAGE_BACKUP);
	unpkg_commit_savepoint(f.c, &a);
	stage_file(&f, d, "y", "new y", UNPKG_STAGE_BACKUP);
	stage_file(&f, d, "z", "new z", 0);
	unpkg_commit_savepoint(f.c, &b);
	stage_file(&f, d, "w", "new w", 0);
	ck_assert_int_eq(unpkg_commit_finish(f.c, &err), 0);
	unpkg_commit_undo(f.c, &a, &b);
	check_content(&f, "d/y", "old y");
	ck_assert(!exists(&f, "d/z") && !exists(&f, "d/y.dpkg-tmp"));
	check_content(&f, "d/x", "new x");
	check_content(&f, "d/w", "new w");
	ck_assert_int_eq(unpkg_commit_release(f.c, &err), 0);
	ck_assert(!exists(&f, "d/x.dpkg-tmp"));
	check_content(&f, "d/y", "old y");
	teardown(&f);
}
END_TEST

/* A file staged with KEEP existed before the transaction (a conffile
 * waiting as NAME.dpkg-new): abort moves it back there, and puts back
 * the file it replaced. */
START_TEST(test_keep)
{
	struct fixture f;
	struct unpkg_err err;
	int d;

	setup(&f, UNPKG_SYNC_DPKG, 0);
	unpkg_err_init(&err);
	tu_write_file(at(&f, "d/c.dpkg-new"), "new", 0644);
	tu_write_file(at(&f, "d/c"), "old", 0644);
	tu_write_file(at(&f, "d/n.dpkg-new"), "fresh", 0644);
	d = dir_handle(&f, "d");
	ck_assert_int_eq(unpkg_commit_stage(f.c, d, "c.dpkg-new", "c", -1,
					    UNPKG_STAGE_KEEP |
					    UNPKG_STAGE_BACKUP, &err), 0);
	ck_assert_int_eq(unpkg_commit_stage(f.c, d, "n.dpkg-new", "n", -1,
					    UNPKG_STAGE_KEEP, &err), 0);
	unpkg_commit_abort(f.c);	/* before the renames */
	check_content(&f, "d/c.dpkg-new", "new");
	check_content(&f, "d/n.dpkg-new", "fresh");
	ck_assert_int_eq(unpkg_commit_stage(f.c, d, "c.dpkg-new", "c", -1,
					    UNPKG_STAGE_KEEP |
					    UNPKG_STAGE_BACKUP, &err), 0);
	ck_assert_int_eq(unpkg_commit_stage(f.c, d, "n.dpkg-new", "n", -1,
					    UNPKG_STAGE_KEEP, &err), 0);
	ck_assert_int_eq(unpkg_commit_finish(f.c, &err), 0);
	check_content(&f, "d/c", "new");
	unpkg_commit_abort(f.c);	/* after them */
	check_content(&f, "d/c", "old");
	check_content(&f, "d/c.dpkg-new", "new");
	check_content(&f, "d/n.dpkg-new", "fresh");
	ck_assert(!exists(&f, "d/n"));
	ck_assert(!exists(&f, "d/c.dpkg-tmp"));
	teardown(&f);
}
END_TEST

static int count_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

/* With a descriptor budget, staged files are flushed early and directory
 * descriptors reclaimed; every file is still synced and renamed. */
/* Stage files f0..f(nfiles-1), "x" each, spread over new directories
 * d/s0..d/s(ndirs-1); the most descriptors open at once beyond those
 * open before. */
static int stage_spread(struct fixture *f, int ndirs, int nfiles)
{
	char name[32], rel[64];
	int base, i, max_seen = 0;

	for (i = 0; i < ndirs; i++) {
		snprintf(rel, sizeof(rel), "d/s%d", i);
		ck_assert_int_eq(mkdir(at(f, rel), 0755), 0);
	}
	base = count_open_fds();
	for (i = 0; i < nfiles; i++) {
		int d, n;

		snprintf(rel, sizeof(rel), "d/s%d", i % ndirs);
		d = dir_handle(f, rel);
		snprintf(name, sizeof(name), "f%d", i);
		stage_file(f, d, name, "x", 0);
		n = count_open_fds() - base;
		if (n > max_seen)
			max_seen = n;
	}
	return max_seen;
}

/* After stage_spread() and the finish: every file in place. */
static void check_spread(const struct fixture *f, int ndirs, int nfiles)
{
	char rel[64];
	int i;

	for (i = 0; i < nfiles; i++) {
		snprintf(rel, sizeof(rel), "d/s%d/f%d", i % ndirs, i);
		check_content(f, rel, "x");
	}
}

START_TEST(test_fd_budget)
{
	struct fixture f;
	int max_seen;

	setup(&f, UNPKG_SYNC_DPKG, 8);
	max_seen = stage_spread(&f, 12, 60);
	finish(&f);
	ck_assert_int_le(max_seen, 8 + 1);
	ck_assert_uint_eq(f.st.fdatasync, 60);
	ck_assert_uint_eq(f.st.rename, 60);
	ck_assert_uint_eq(f.st.fsync, 12);
	check_spread(&f, 12, 60);
	teardown(&f);
}
END_TEST

/* Files unlinked in more directories than the budget allows: the
 * directories' descriptors are reclaimed, and each directory is still
 * synced. */
START_TEST(test_unlink_budget)
{
	struct fixture f;
	struct unpkg_err err;
	char rel[64];
	int base, i, max_seen = 0;

	setup(&f, UNPKG_SYNC_DPKG, 8);
	unpkg_err_init(&err);
	for (i = 0; i < 40; i++) {
		snprintf(rel, sizeof(rel), "d/s%d", i);
		ck_assert_int_eq(mkdir(at(&f, rel), 0755), 0);
		snprintf(rel, sizeof(rel), "d/s%d/f", i);
		tu_write_file(at(&f, rel), "x", 0644);
	}
	base = count_open_fds();
	for (i = 0; i < 40; i++) {
		int n;

		snprintf(rel, sizeof(rel), "d/s%d", i);
		ck_assert_msg(unpkg_commit_unlink(f.c, dir_handle(&f, rel), "f",
						  &err) == 0, "%s", err.msg);
		n = count_open_fds() - base;
		if (n > max_seen)
			max_seen = n;
	}
	finish(&f);
	ck_assert_int_le(max_seen, 8 + 1);
	ck_assert_uint_eq(f.st.fsync, 40);
	for (i = 0; i < 40; i++) {
		snprintf(rel, sizeof(rel), "d/s%d/f", i);
		ck_assert(!exists(&f, rel));
	}
	teardown(&f);
}
END_TEST

/* The same directory reached through an in-root symlink is one handle. */
START_TEST(test_dir_dedup)
{
	struct fixture f;

	setup(&f, UNPKG_SYNC_DPKG, 0);
	ck_assert_int_eq(symlink("d", at(&f, "link")), 0);
	ck_assert_int_eq(dir_handle(&f, "d"), dir_handle(&f, "link"));
	ck_assert_int_ne(dir_handle(&f, "d"), dir_handle(&f, ""));
	teardown(&f);
}
END_TEST

/* sync_file_range fails with ESPIPE on a pipe: the dpkg strategy must
 * switch to syncfs with a notice, and still commit. */
START_TEST(test_fallback_to_syncfs)
{
	struct fixture f;
	struct unpkg_err err;
	int d, dfd, fd;

	setup(&f, UNPKG_SYNC_DPKG, 0);
	unpkg_err_init(&err);
	d = dir_handle(&f, "d");
	dfd = unpkg_commit_dirfd(f.c, d, &err);
	ck_assert_int_eq(mkfifoat(dfd, "p.dpkg-new", 0644), 0);
	fd = openat(dfd, "p.dpkg-new", O_RDWR | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_msg(unpkg_commit_stage(f.c, d, "p.dpkg-new", "p", fd, 0,
					 &err) == 0, "%s", err.msg);
	ck_assert_str_eq(unpkg_commit_strategy(f.c), "syncfs");
	ck_assert_ptr_nonnull(strstr(f.notice, "syncfs"));
	stage_file(&f, d, "a", "alpha", 0);
	finish(&f);
	ck_assert_uint_eq(f.st.syncfs, 2);
	ck_assert_uint_eq(f.st.fdatasync, 0);
	check_content(&f, "d/a", "alpha");
	ck_assert(exists(&f, "d/p"));
	teardown(&f);
}
END_TEST

/* A rename that fails (the target is a non-empty directory) fails the
 * commit; abort then puts everything back. */
START_TEST(test_rename_failure_rolls_back)
{
	struct fixture f;
	struct unpkg_err err;
	int d;

	setup(&f, UNPKG_SYNC_DPKG, 0);
	unpkg_err_init(&err);
	tu_write_file(at(&f, "d/a"), "old", 0644);
	ck_assert_int_eq(mkdir(at(&f, "d/z"), 0755), 0);
	tu_write_file(at(&f, "d/z/keep"), "k", 0644);
	d = dir_handle(&f, "d");
	stage_file(&f, d, "a", "new", UNPKG_STAGE_BACKUP);
	stage_file(&f, d, "z", "file", 0);
	ck_assert_int_eq(unpkg_commit_finish(f.c, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "z.dpkg-new"));
	unpkg_commit_abort(f.c);
	check_content(&f, "d/a", "old");
	check_content(&f, "d/z/keep", "k");
	ck_assert(!exists(&f, "d/z.dpkg-new"));
	ck_assert(!exists(&f, "d/a.dpkg-tmp"));
	teardown(&f);
}
END_TEST

/* --- UNPKG_COMMIT_PER_FS ---------------------------------------------------
 * These tests run on the filesystem of the scratch directory ($TMPDIR) and
 * check what the flag does there: where syncfs is a full barrier, nothing
 * changes, but where a commit orders the data (ext4 with a journal, xfs)
 * the barrier before the renames waits for each file's writeback instead
 * of a syncfs; elsewhere, each staged file is fdatasync'ed and each
 * touched directory fsync'ed.  tests/integration/submount.sh runs them again with
 * TMPDIR on an ext2 filesystem, and checks a root with both kinds. */

/* setup() with the flag; prints the class met, and says whether syncfs is
 * a full barrier there (and in *ordered, unless NULL, whether a commit
 * orders the data there: unpkg_fsclass_commit_orders()). */
static int setup_per_fs(struct fixture *f, enum unpkg_sync_mode mode,
			unsigned int max_fds, int *ordered)
{
	enum unpkg_fsclass cls;
	struct unpkg_err err;
	int fd;

	setup(f, mode, max_fds);
	unpkg_err_init(&err);
	unpkg_commit_free(f->c);
	ck_assert_msg(unpkg_commit_new_flags(mode, UNPKG_COMMIT_PER_FS, &f->st,
					     &f->ev, max_fds, &f->c,
					     &err) == 0, "%s", err.msg);
	fd = open(f->tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_msg(unpkg_fsclass_detect(fd, &cls, NULL, &err) == 0, "%s",
		      err.msg);
	printf("per_fs: scratch directory on %s\n", unpkg_fsclass_name(cls));
	fflush(stdout);
	if (ordered != NULL) {
		enum unpkg_wb_path wb;

		*ordered = unpkg_fsclass_commit_orders_fd(fd, &wb, &err) == 1;
	}
	close(fd);
	return unpkg_sync_full(UNPKG_SYNC_SYNCFS, cls);
}

START_TEST(test_per_fs_flags)
{
	struct unpkg_commit *c = NULL;
	struct unpkg_err err;

	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_commit_new_flags(UNPKG_SYNC_SYNCFS, 1u << 7,
						NULL, NULL, 0, &c, &err), -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_USAGE);
	ck_assert_ptr_null(c);
	/* a strategy other than syncfs ignores it */
	ck_assert_int_eq(unpkg_commit_new_flags(UNPKG_SYNC_NONE,
						UNPKG_COMMIT_PER_FS, NULL,
						NULL, 0, &c, &err), 0);
	ck_assert_str_eq(unpkg_commit_strategy(c), "none");
	unpkg_commit_free(c);
}
END_TEST

START_TEST(test_per_fs_counts)
{
	struct fixture f;
	char want[64];
	int d, e, full, ordered, base;

	full = setup_per_fs(&f, UNPKG_SYNC_SYNCFS, 0, &ordered);
	ck_assert_int_eq(mkdir(at(&f, "d/e"), 0755), 0);
	d = dir_handle(&f, "d");
	e = dir_handle(&f, "d/e");
	base = count_open_fds();
	stage_file(&f, d, "a", "alpha", 0);
	stage_file(&f, e, "b", "beta", 0);
	stage_file(&f, e, "c", "gamma", 0);
	/* kept open for the barrier where syncfs cannot serve, or where
	 * the barrier waits for each file's writeback */
	ck_assert_int_eq(count_open_fds() - base, full && !ordered ? 0 : 3);
	ck_assert_int_eq(symlinkat("a", unpkg_commit_dirfd(f.c, d, NULL),
				   "l.dpkg-new"), 0);
	ck_assert_int_eq(unpkg_commit_stage(f.c, d, "l.dpkg-new", "l", -1, 0,
					    NULL), 0);
	finish(&f);
	ck_assert_int_eq(count_open_fds(), base);
	if (ordered) {
		/* writeback started when staged and waited for at the
		 * barrier; after the renames the directories' fsyncs (d and
		 * d/e) commit them, no syncfs writing out others' data */
		ck_assert_uint_eq(f.st.syncfs, 0);
		ck_assert_uint_eq(f.st.sync_file_range, 6);
		ck_assert_uint_eq(f.st.fsync, 2);
		ck_assert_uint_eq(f.st.fdatasync, 0);
	} else if (full) {
		/* exactly the plain syncfs strategy */
		ck_assert_uint_eq(f.st.syncfs, 2);
		ck_assert_uint_eq(f.st.fdatasync + f.st.fsync +
				  f.st.sync_file_range, 0);
	} else {
		ck_assert_uint_eq(f.st.syncfs, 0);
		ck_assert_uint_eq(f.st.sync_file_range, 3);
		ck_assert_uint_eq(f.st.fdatasync, 3);
		ck_assert_uint_eq(f.st.fsync, 2);	/* d and d/e */
	}
	/* the class met, once */
	snprintf(want, sizeof(want), "%s", f.st.fsclass);
	ck_assert_ptr_null(strchr(want, '+'));
	ck_assert_uint_gt(strlen(want), 0);
	check_content(&f, "d/a", "alpha");
	check_content(&f, "d/e/c", "gamma");
	ck_assert_int_eq(readlink(at(&f, "d/l"), want, sizeof(want)), 1);
	teardown(&f);
}
END_TEST

/* Files handed over (the database's) go with the strategy's syncs: the
 * early one with the barrier, the late one with the renames.  Where a
 * commit orders the data, both are only waited for: their owner renames
 * them and fsyncs their directory later, and that commit carries the
 * renames before it too, so the late one takes the syncfs after the
 * renames away. */
START_TEST(test_per_fs_sync_with)
{
	struct fixture f;
	struct hook_ctx h = { 0 };
	struct unpkg_commit_hooks hooks = {
		.synced = hook_synced,
		.renamed = hook_renamed,
		.ctx = &h,
	};
	struct unpkg_err err;
	int full, ordered, base;

	full = setup_per_fs(&f, UNPKG_SYNC_SYNCFS, 0, &ordered);
	h.f = &f;
	h.dir = dir_handle(&f, "d");
	base = count_open_fds();
	stage_file(&f, h.dir, "a", "alpha", 0);
	sync_with(&f, h.dir, "early", "early data");
	unpkg_err_init(&err);
	ck_assert_msg(unpkg_commit_finish_hooked(f.c, &hooks, &err) == 0,
		      "%s", err.msg);
	ck_assert_str_eq(h.log, "sr");
	ck_assert_int_eq(count_open_fds(), base);
	if (ordered) {
		/* a's writeback started and waited for, early and late
		 * waited for; late's owner commits the renames */
		ck_assert_uint_eq(f.st.sync_file_range, 4);
		ck_assert_uint_eq(f.st.syncfs, 0);
		ck_assert_uint_eq(f.st.fdatasync + f.st.fsync, 0);
	} else if (full) {
		ck_assert_uint_eq(f.st.syncfs, 2);
		ck_assert_uint_eq(f.st.fdatasync + f.st.fsync, 0);
	} else {
		/* a and early at the barrier, late with the directory */
		ck_assert_uint_eq(f.st.fdatasync, 3);
		ck_assert_uint_eq(f.st.fsync, 1);
		ck_assert_uint_eq(f.st.syncfs, 0);
	}
	check_content(&f, "d/late", "late data");
	ck_assert_msg(unpkg_commit_release(f.c, &err) == 0, "%s", err.msg);
	teardown(&f);
}
END_TEST

/* A transaction that only hands a file over (the mark's status): the
 * file system is first met in the barrier's pass, and the file is synced
 * there all the same, by the syncfs, by a wait where a commit orders
 * it, or by its fdatasync. */
START_TEST(test_per_fs_sync_only)
{
	struct fixture f;
	int full, ordered, d;

	full = setup_per_fs(&f, UNPKG_SYNC_SYNCFS, 0, &ordered);
	d = dir_handle(&f, "d");
	sync_with(&f, d, "status-new", "the mark");
	finish(&f);
	if (ordered) {
		ck_assert_uint_eq(f.st.sync_file_range, 1);
		ck_assert_uint_eq(f.st.syncfs + f.st.fdatasync + f.st.fsync, 0);
	} else if (full) {
		ck_assert_uint_eq(f.st.syncfs, 1);
		ck_assert_uint_eq(f.st.fdatasync + f.st.fsync +
				  f.st.sync_file_range, 0);
	} else {
		ck_assert_uint_eq(f.st.fdatasync, 1);
		ck_assert_uint_eq(f.st.syncfs, 0);
	}
	teardown(&f);
}
END_TEST

/* Files kept open for the barrier count against the descriptor budget:
 * it fills, an early barrier empties it. */
START_TEST(test_per_fs_budget)
{
	struct fixture f;
	int full, max_seen;

	full = setup_per_fs(&f, UNPKG_SYNC_SYNCFS, 8, NULL);
	max_seen = stage_spread(&f, 4, 40);
	finish(&f);
	ck_assert_int_le(max_seen, 8 + 1);
	ck_assert_uint_eq(f.st.rename, 40);
	if (full) {
		ck_assert_uint_eq(f.st.fdatasync, 0);
	} else {
		ck_assert_uint_eq(f.st.fdatasync, 40);
		ck_assert_uint_eq(f.st.fsync, 4);
	}
	check_spread(&f, 4, 40);
	teardown(&f);
}
END_TEST

static int fail_renamed(void *ctx, struct unpkg_err *err)
{
	(void)ctx;
	return unpkg_err_set(err, UNPKG_ERR_USAGE, "stop");
}

/* An abort after the rename pass puts the old file back and makes that
 * durable the same way. */
START_TEST(test_per_fs_abort)
{
	struct fixture f;
	struct unpkg_commit_hooks hooks = { .renamed = fail_renamed };
	struct unpkg_err err;
	unsigned long syncs;
	int d, full, ordered;

	full = setup_per_fs(&f, UNPKG_SYNC_SYNCFS, 0, &ordered);
	/* (where the commits are ordered, a directory's fsync, not a
	 * syncfs) */
	full = full && !ordered;
	tu_write_file(at(&f, "d/a"), "old", 0644);
	d = dir_handle(&f, "d");
	stage_file(&f, d, "a", "new", UNPKG_STAGE_BACKUP);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_commit_finish_hooked(f.c, &hooks, &err), -1);
	check_content(&f, "d/a", "new");
	syncs = full ? f.st.syncfs : f.st.fsync;
	unpkg_commit_abort(f.c);
	check_content(&f, "d/a", "old");
	ck_assert(!exists(&f, "d/a.dpkg-tmp") && !exists(&f, "d/a.dpkg-new"));
	/* the restored rename was synced */
	ck_assert_uint_eq(full ? f.st.syncfs : f.st.fsync, syncs + 1);
	teardown(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("commit");
	TCase *tc = tcase_create("core");

	/* Fresh heap memory is not zero here: a strategy's state that is
	 * left uninitialised shows (glibc's malloc; AddressSanitizer fills
	 * it on its own). */
	mallopt(M_PERTURB, 0xa5);

	tcase_add_test(tc, test_mode_names);
	tcase_add_test(tc, test_dpkg_counts);
	tcase_add_test(tc, test_syncfs_counts);
	tcase_add_test(tc, test_none_counts);
	tcase_add_test(tc, test_none_syncs_database);
	tcase_add_test(tc, test_none_without_uring);
	tcase_add_test(tc, test_uring_counts);
	tcase_add_test(tc, test_uring_fallback);
	tcase_add_test(tc, test_backup_release);
	tcase_add_test(tc, test_abort_before_rename);
	tcase_add_test(tc, test_abort_after_rename);
	tcase_add_test(tc, test_norename);
	tcase_add_test(tc, test_dir_backup);
	tcase_add_test(tc, test_remove);
	tcase_add_test(tc, test_remove_lower_layer);
	tcase_add_test(tc, test_unlink);
	tcase_add_test(tc, test_unlink_budget);
	tcase_add_test(tc, test_keep);
	tcase_add_test(tc, test_undo_range);
	tcase_add_test(tc, test_fd_budget);
	tcase_add_test(tc, test_dir_dedup);
	tcase_add_test(tc, test_fallback_to_syncfs);
	tcase_add_test(tc, test_rename_failure_rolls_back);
	tcase_add_test(tc, test_hooks);
	tcase_add_test(tc, test_barrier_skipped);
	suite_add_tcase(s, tc);
	tc = tcase_create("per_fs");
	tcase_add_test(tc, test_per_fs_flags);
	tcase_add_test(tc, test_per_fs_counts);
	tcase_add_test(tc, test_per_fs_sync_with);
	tcase_add_test(tc, test_per_fs_sync_only);
	tcase_add_test(tc, test_per_fs_budget);
	tcase_add_test(tc, test_per_fs_abort);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
