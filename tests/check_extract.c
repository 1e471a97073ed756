/* check_extract.c - streaming data.tar into staged entries. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commit.h"
#include "deb.h"
#include "extract.h"
#include "fsroot.h"
#include "strmap.h"
#include "testutil.h"

static const char control[] =
	"Package: x\nVersion: 1\nArchitecture: all\n"
	"Maintainer: t <t@example.org>\nDescription: d\n";

struct fx {
	char *tmp;
	char root[4096];
	struct unpkg_root *r;
	struct unpkg_commit *c;
	struct unpkg_stats st;
	struct unpkg_filelist list;
	struct unpkg_strmap conffiles;
	struct unpkg_strmap run_files;
	struct unpkg_err err;
};

static void fx_init(struct fx *f)
{
	memset(f, 0, sizeof(*f));
	f->tmp = tu_mkdtemp();
	snprintf(f->root, sizeof(f->root), "%s/root", f->tmp);
	ck_assert_int_eq(mkdir(f->root, 0755), 0);
	unpkg_err_init(&f->err);
	ck_assert_int_eq(unpkg_root_open(f->root, 0, &f->r, &f->err), 0);
	ck_assert_int_eq(unpkg_commit_new(UNPKG_SYNC_DPKG, &f->st, NULL, 0,
					  &f->c, &f->err), 0);
	unpkg_filelist_init(&f->list);
	unpkg_strmap_init(&f->conffiles);
	unpkg_strmap_init(&f->run_files);
}

static void fx_destroy(struct fx *f)
{
	unpkg_commit_free(f->c);
	unpkg_root_free(f->r);
	unpkg_filelist_destroy(&f->list);
	unpkg_strmap_destroy(&f->conffiles);
	unpkg_strmap_destroy(&f->run_files);
	tu_rm_rf(f->tmp);
	free(f->tmp);
}

static const char *in_root(const struct fx *f, const char *rel)
{
	static char buf[4][8192];
	static int n;

	n = (n + 1) % 4;
	snprintf(buf[n], sizeof(buf[n]), "%s/%s", f->root, rel);
	return buf[n];
}

/* Build a package from entries and extract it; returns unpkg_extract's
 * result (the error is in f->err). */
static int extract(struct fx *f, const struct tu_entry *e, size_t n)
{
	struct tu_deb spec = { .control = control, .entries = e, .n_entries = n };
	struct unpkg_extract_opts o = {
		.root = f->r,
		.commit = f->c,
		.pkgkey = "x",
		.conffiles = &f->conffiles,
		.run_files = &f->run_files,
		.stats = &f->st,
	};
	struct unpkg_deb *deb = NULL;
	char path[4096];
	int ret;

	snprintf(path, sizeof(path), "%s/x.deb", f->tmp);
	tu_build_deb(path, &spec);
	ck_assert_msg(unpkg_deb_open(path, &deb, &f->err) == 0, "%s",
		      f->err.msg);
	ret = unpkg_extract(deb, &o, &f->list, &f->err);
	unpkg_deb_free(deb);
	return ret;
}

static void commit(struct fx *f)
{
	ck_assert_msg(unpkg_commit_finish(f->c, &f->err) == 0, "%s", f->err.msg);
	ck_assert_msg(unpkg_commit_release(f->c, &f->err) == 0, "%s",
		      f->err.msg);
}

static int lexists(const struct fx *f, const char *rel)
{
	struct stat st;

	return lstat(in_root(f, rel), &st) == 0;
}

/* Nothing but these paths (sorted, relative) exists under the root. */
static void only(const struct fx *f, const char *want)
{
	char cmd[8192], *got;
	size_t len;

	snprintf(cmd, sizeof(cmd), "cd '%s' && find . -mindepth 1 | LC_ALL=C sort "
		 "| tr '\\n' ' ' > '%s/ls'", f->root, f->tmp);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/ls", f->tmp);
	got = tu_read_file(cmd, &len);
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, want);
	free(got);
}

START_TEST(test_every_type)
{
	static const struct tu_entry e[] = {
		{ .type = 'd', .path = "./" },
		{ .type = 'd', .path = "./usr/", .mode = 0755 },
		{ .type = 'd', .path = "./usr/bin/", .mode = 0750, .uid = 12,
		  .gid = 34, .uname = "", .gname = "" },
		{ .type = 'f', .path = "./usr/bin/tool", .data = "#!/bin/sh\n",
		  .mode = 04755, .mtime = 1577836800 },
		{ .type = 'h', .path = "./usr/bin/tool2",
		  .data = "./usr/bin/tool" },
		{ .type = 'f', .path = "./usr/bin/empty", .data = "",
		  .mode = 0600, .uid = 1234, .gid = 4321, .uname = "",
		  .gname = "" },
		{ .type = 'l', .path = "./usr/bin/rel", .data = "tool",
		  .mtime = 1546300800 },
		{ .type = 'l', .path = "./usr/bin/abs",
		  .data = "/usr/bin/tool" },
		{ .type = 'p', .path = "./usr/bin/fifo", .mode = 0640 },
	};
	struct fx f;
	struct stat a, b;
	char target[64];
	ssize_t n;

	fx_init(&f);
	ck_assert_msg(extract(&f, e, sizeof(e) / sizeof(*e)) == 0, "%s",
		      f.err.msg);
	/* nothing visible before the commit, but directories */
	ck_assert(!lexists(&f, "usr/bin/tool"));
	ck_assert(lexists(&f, "usr/bin/tool.dpkg-new"));
	commit(&f);
	only(&f, "./usr ./usr/bin ./usr/bin/abs ./usr/bin/empty "
	     "./usr/bin/fifo ./usr/bin/rel ./usr/bin/tool ./usr/bin/tool2 ");
	ck_assert_int_eq(stat(in_root(&f, "usr/bin"), &a), 0);
	ck_assert_uint_eq(a.st_mode & 07777, 0750);
	ck_assert_uint_eq(a.st_uid, 12);
	ck_assert_uint_eq(a.st_gid, 34);
	ck_assert_int_eq(stat(in_root(&f, "usr/bin/tool"), &a), 0);
	ck_assert_uint_eq(a.st_mode & 07777, 04755);
	ck_assert_int_eq(a.st_mtime, 1577836800);
	ck_assert_int_eq(stat(in_root(&f, "usr/bin/tool2"), &b), 0);
	ck_assert_uint_eq(a.st_ino, b.st_ino);
	ck_assert_int_eq(stat(in_root(&f, "usr/bin/empty"), &a), 0);
	ck_assert_uint_eq(a.st_size, 0);
	ck_assert_uint_eq(a.st_uid, 1234);
	ck_assert_uint_eq(a.st_gid, 4321);
	ck_assert_uint_eq(a.st_mode & 07777, 0600);
	ck_assert_int_eq(lstat(in_root(&f, "usr/bin/rel"), &a), 0);
	ck_assert(S_ISLNK(a.st_mode));
	ck_assert_int_eq(a.st_mtime, 1546300800);
	n = readlink(in_root(&f, "usr/bin/abs"), target, sizeof(target));
	ck_assert_int_eq(n, 13);
	ck_assert(memcmp(target, "/usr/bin/tool", 13) == 0);
	ck_assert_int_eq(lstat(in_root(&f, "usr/bin/fifo"), &a), 0);
	ck_assert(S_ISFIFO(a.st_mode));
	ck_assert_uint_eq(a.st_mode & 07777, 0640);

	/* the list, in archive order, with the hashes md5sums needs */
	ck_assert_uint_eq(f.list.count, 9);
	ck_assert_str_eq(f.list.files[0].path, "/.");
	ck_assert_str_eq(f.list.files[3].path, "/usr/bin/tool");
	ck_assert_str_eq(f.list.files[3].md5, "3e2b31c72181b87149ff995e7202c0e3");
	ck_assert_str_eq(f.list.files[4].md5, f.list.files[3].md5);
	ck_assert_str_eq(f.list.files[5].md5, "d41d8cd98f00b204e9800998ecf8427e");
	ck_assert_str_eq(f.list.files[6].md5, "");
	ck_assert_uint_eq(f.st.files, 2);
	fx_destroy(&f);
}
END_TEST

/* A conffile is synced but keeps its temporary name. */
START_TEST(test_conffile_stays_new)
{
	static const struct tu_entry e[] = {
		{ .type = 'd', .path = "./etc/" },
		{ .type = 'f', .path = "./etc/x.conf", .data = "a=1\n" },
	};
	struct fx f;

	fx_init(&f);
	ck_assert_int_eq(unpkg_strmap_put(&f.conffiles, "/etc/x.conf",
					  (void *)1, NULL, &f.err), 0);
	ck_assert_msg(extract(&f, e, 2) == 0, "%s", f.err.msg);
	commit(&f);
	only(&f, "./etc ./etc/x.conf.dpkg-new ");
	fx_destroy(&f);
}
END_TEST

/* An existing directory, or an in-root symlink to one, is kept as is. */
START_TEST(test_existing_dirs_kept)
{
	static const struct tu_entry e[] = {
		{ .type = 'd', .path = "./lib/", .mode = 0700 },
		{ .type = 'f', .path = "./lib/libx.so", .data = "elf" },
		{ .type = 'd', .path = "./opt/", .mode = 0700 },
	};
	struct fx f;
	struct stat st;

	fx_init(&f);
	ck_assert_int_eq(mkdir(in_root(&f, "usr"), 0755), 0);
	ck_assert_int_eq(mkdir(in_root(&f, "usr/lib"), 0755), 0);
	ck_assert_int_eq(symlink("usr/lib", in_root(&f, "lib")), 0);
	ck_assert_int_eq(mkdir(in_root(&f, "opt"), 0711), 0);
	ck_assert_msg(extract(&f, e, 3) == 0, "%s", f.err.msg);
	commit(&f);
	ck_assert_int_eq(lstat(in_root(&f, "lib"), &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert(lexists(&f, "usr/lib/libx.so"));
	ck_assert_int_eq(stat(in_root(&f, "opt"), &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0711);
	/* the list records the package's path, not the resolved one */
	ck_assert_str_eq(f.list.files[1].path, "/lib/libx.so");
	fx_destroy(&f);
}
END_TEST

/* A symlink where the package has a directory must lead to a directory. */
START_TEST(test_symlink_to_file_as_dir)
{
	static const struct tu_entry e[] = {
		{ .type = 'd', .path = "./lib/" },
		{ .type = 'f', .path = "./lib/y", .data = "y" },
	};
	struct fx f;

	fx_init(&f);
	tu_write_file(in_root(&f, "file"), "", 0644);
	ck_assert_int_eq(symlink("file", in_root(&f, "lib")), 0);
	ck_assert_int_eq(extract(&f, e, 2), -1);
	ck_assert_ptr_nonnull(strstr(f.err.msg, "/lib"));
	unpkg_commit_abort(f.c);
	only(&f, "./file ./lib ");
	fx_destroy(&f);
}
END_TEST

/* A replaced file gets a backup; abort puts it back. */
START_TEST(test_replace_and_abort)
{
	static const struct tu_entry e[] = {
		{ .type = 'd', .path = "./etc/" },
		{ .type = 'f', .path = "./etc/motd", .data = "new\n" },
		{ .type = 'd', .path = "./etc/new.d/" },
		{ .type = 'f', .path = "./etc/new.d/a", .data = "a" },
	};
	struct fx f;
	char *got;

	fx_init(&f);
	ck_assert_int_eq(mkdir(in_root(&f, "etc"), 0755), 0);
	tu_write_file(in_root(&f, "etc/motd"), "old\n", 0644);
	ck_assert_msg(extract(&f, e, 4) == 0, "%s", f.err.msg);
	ck_assert(lexists(&f, "etc/motd.dpkg-tmp"));
	ck_assert_int_eq(unpkg_commit_finish(f.c, &f.err), 0);
	got = tu_read_file(in_root(&f, "etc/motd"), NULL);
	ck_assert_str_eq(got, "new\n");
	free(got);
	unpkg_commit_abort(f.c);
	got = tu_read_file(in_root(&f, "etc/motd"), NULL);
	ck_assert_str_eq(got, "old\n");
	free(got);
	only(&f, "./etc ./etc/motd ");
	fx_destroy(&f);
}
END_TEST

/* Errors in the middle of the archive: each leaves, after abort, the root
 * as it was. */
START_TEST(test_errors_leave_no_debris)
{
	static const struct tu_entry dup[] = {
		{ .type = 'd', .path = "./a/" }, { .type = 'f',
		  .path = "./a/x", .data = "1" }, { .type = 'f',
		  .path = "./a/x", .data = "2" },
	};
	static const struct tu_entry badlink[] = {
		{ .type = 'd', .path = "./a/" }, { .type = 'f',
		  .path = "./a/x", .data = "1" }, { .type = 'h',
		  .path = "./a/y", .data = "./a/nope" },
	};
	static const struct tu_entry dirlink[] = {
		{ .type = 'd', .path = "./a/" }, { .type = 'f',
		  .path = "./a/x", .data = "1" }, { .type = 'h',
		  .path = "./a/y", .data = "./a" },
	};
	/* A hard link to itself: the entry is not an earlier file. */
	static const struct tu_entry selflink[] = {
		{ .type = 'd', .path = "./a/" }, { .type = 'f',
		  .path = "./a/x", .data = "1" }, { .type = 'h',
		  .path = "./a/y", .data = "./a/y" },
	};
	/* A hard link to a symlink: dpkg cannot make one. */
	static const struct tu_entry symlink_target[] = {
		{ .type = 'd', .path = "./a/" }, { .type = 'l',
		  .path = "./a/s", .data = "x" }, { .type = 'h',
		  .path = "./a/y", .data = "./a/s" },
	};
	static const struct tu_entry noparent[] = {
		{ .type = 'd', .path = "./a/" }, { .type = 'f',
		  .path = "./a/x", .data = "1" }, { .type = 'f',
		  .path = "./b/c/d", .data = "2" },
	};
	static const struct tu_entry overdir[] = {
		{ .type = 'd', .path = "./a/" }, { .type = 'f',
		  .path = "./a/x", .data = "1" }, { .type = 'f',
		  .path = "./keep", .data = "2" },
	};
	static const struct {
		const struct tu_entry *e;
		size_t n;
		const char *msg;
	} cases[] = {
		{ dup, 3, "appears twice" },
		{ badlink, 3, "not an earlier file" },
		{ dirlink, 3, "not an earlier file" },
		{ selflink, 3, "hard link target /a/y is not an earlier file" },
		{ symlink_target, 3, "hard link target /a/s is a symlink" },
		{ noparent, 3, "/b/c/d" },
		{ overdir, 3, "cannot replace directory /keep with a "
			      "non-directory: it is not empty" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct fx f;

		fx_init(&f);
		ck_assert_int_eq(mkdir(in_root(&f, "keep"), 0755), 0);
		tu_write_file(in_root(&f, "keep/inner"), "i", 0644);
		ck_assert_int_eq(extract(&f, cases[i].e, cases[i].n), -1);
		ck_assert_msg(strstr(f.err.msg, cases[i].msg) != NULL,
			      "case %zu: '%s' lacks '%s'", i, f.err.msg,
			      cases[i].msg);
		unpkg_commit_abort(f.c);
		only(&f, "./keep ./keep/inner ");
		fx_destroy(&f);
	}
}
END_TEST

/* An empty directory where the package has a file is replaced, as dpkg
 * does. */
START_TEST(test_file_over_empty_dir)
{
	static const struct tu_entry e[] = {
		{ .type = 'f', .path = "./slot", .data = "file" },
	};
	struct fx f;
	struct stat st;

	fx_init(&f);
	ck_assert_int_eq(mkdir(in_root(&f, "slot"), 0755), 0);
	ck_assert_msg(extract(&f, e, 1) == 0, "%s", f.err.msg);
	commit(&f);
	ck_assert_int_eq(lstat(in_root(&f, "slot"), &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	only(&f, "./slot ");
	fx_destroy(&f);
}
END_TEST

/* A file owned by another package of the run is refused. */
START_TEST(test_conflict_with_run_package)
{
	static const struct tu_entry e[] = {
		{ .type = 'd', .path = "./bin/" }, { .type = 'f',
		  .path = "./bin/sh", .data = "x" },
	};
	struct fx f;

	fx_init(&f);
	ck_assert_int_eq(mkdir(in_root(&f, "bin"), 0755), 0);
	tu_write_file(in_root(&f, "bin/sh"), "dash", 0755);
	ck_assert_int_eq(unpkg_strmap_put(&f.run_files, "/bin/sh",
					  "dash 0.5.12-2", NULL, &f.err), 0);
	ck_assert_int_eq(extract(&f, e, 2), -1);
	ck_assert_int_eq(f.err.code, UNPKG_ERR_CONFLICT);
	ck_assert_str_eq(f.err.msg, "trying to overwrite '/bin/sh', which is "
			 "also in package dash 0.5.12-2");
	unpkg_commit_abort(f.c);
	only(&f, "./bin ./bin/sh ");
	fx_destroy(&f);
}
END_TEST

/* Leftovers of an interrupted run: a stale NAME.dpkg-new is replaced, a
 * NAME.dpkg-tmp whose NAME is gone is put back first (then backed up
 * again, since the package replaces it). */
START_TEST(test_leftovers)
{
	static const struct tu_entry e[] = {
		{ .type = 'd', .path = "./d/" }, { .type = 'f',
		  .path = "./d/a", .data = "new-a" }, { .type = 'f',
		  .path = "./d/b", .data = "new-b" },
	};
	struct fx f;
	char *got;

	fx_init(&f);
	ck_assert_int_eq(mkdir(in_root(&f, "d"), 0755), 0);
	tu_write_file(in_root(&f, "d/a.dpkg-new"), "half", 0644);
	tu_write_file(in_root(&f, "d/b.dpkg-tmp"), "old-b", 0644);
	ck_assert_msg(extract(&f, e, 3) == 0, "%s", f.err.msg);
	got = tu_read_file(in_root(&f, "d/b.dpkg-tmp"), NULL);
	ck_assert_str_eq(got, "old-b");
	free(got);
	commit(&f);
	got = tu_read_file(in_root(&f, "d/a"), NULL);
	ck_assert_str_eq(got, "new-a");
	free(got);
	got = tu_read_file(in_root(&f, "d/b"), NULL);
	ck_assert_str_eq(got, "new-b");
	free(got);
	only(&f, "./d ./d/a ./d/b ");
	fx_destroy(&f);
}
END_TEST

/* Paths escaping the root land inside it (absolute) or are refused. */
START_TEST(test_absolute_lands_inside)
{
	static const struct tu_entry e[] = {
		{ .type = 'd', .path = "/etc/" }, { .type = 'f',
		  .path = "/etc/x", .data = "x" },
	};
	struct fx f;

	fx_init(&f);
	ck_assert_msg(extract(&f, e, 2) == 0, "%s", f.err.msg);
	commit(&f);
	only(&f, "./etc ./etc/x ");
	fx_destroy(&f);
}
END_TEST

/* Through a symlink shipped as l -> /, a later entry still lands inside. */
START_TEST(test_symlink_to_slash)
{
	static const struct tu_entry e[] = {
		{ .type = 'l', .path = "./l", .data = "/" }, { .type = 'd',
		  .path = "./etc/" }, { .type = 'f', .path = "./l/etc/x",
		  .data = "x" },
	};
	struct fx f;

	fx_init(&f);
	/* the symlink is still l.dpkg-new: l/etc has no parent yet */
	ck_assert_int_eq(extract(&f, e, 3), -1);
	unpkg_commit_abort(f.c);
	only(&f, "");
	fx_destroy(&f);
	/* once l exists in the root, it resolves inside the root */
	fx_init(&f);
	ck_assert_int_eq(symlink("/", in_root(&f, "l")), 0);
	ck_assert_msg(extract(&f, e + 1, 2) == 0, "%s", f.err.msg);
	commit(&f);
	only(&f, "./etc ./etc/x ./l ");
	fx_destroy(&f);
}
END_TEST

/* Digests cost as much CPU as a fast decompressor: they are computed only
 * where they are used.  A package that ships md5sums needs them for its
 * conffiles only (a conffile hard-linked to another file included); one
 * without md5sums needs every file's, to generate the list. */
START_TEST(test_digests_where_needed)
{
	static const struct tu_entry e[] = {
		{ .type = 'd', .path = "./" },
		{ .type = 'd', .path = "./usr/" },
		{ .type = 'f', .path = "./usr/a", .data = "data of a\n" },
		{ .type = 'd', .path = "./etc/" },
		{ .type = 'f', .path = "./etc/c.conf", .data = "conf\n" },
		{ .type = 'h', .path = "./etc/hl.conf", .data = "./usr/a" },
	};
	static const struct tu_entry sums[] = {
		{ .type = 'f', .path = "./md5sums",
		  .data = "5d2cfb941f15f67e7921e4ff9e5a8624  usr/a\n" },
	};
	int with_sums;

	for (with_sums = 0; with_sums <= 1; with_sums++) {
		struct tu_deb spec = {
			.control = control, .entries = e,
			.n_entries = sizeof(e) / sizeof(*e),
			.control_members = with_sums ? sums : NULL,
			.n_control_members = with_sums ? 1 : 0,
		};
		struct unpkg_extract_opts o;
		struct unpkg_deb *deb = NULL;
		char path[4096];
		struct fx f;

		fx_init(&f);
		o = (struct unpkg_extract_opts){
			.root = f.r, .commit = f.c, .pkgkey = "x",
			.conffiles = &f.conffiles, .run_files = &f.run_files,
			.stats = &f.st,
		};
		ck_assert_int_eq(unpkg_strmap_put(&f.conffiles, "/etc/c.conf",
						  "", NULL, &f.err), 0);
		ck_assert_int_eq(unpkg_strmap_put(&f.conffiles,
						  "/etc/hl.conf", "", NULL,
						  &f.err), 0);
		snprintf(path, sizeof(path), "%s/x.deb", f.tmp);
		tu_build_deb(path, &spec);
		ck_assert_msg(unpkg_deb_open(path, &deb, &f.err) == 0, "%s",
			      f.err.msg);
		ck_assert_msg(unpkg_extract(deb, &o, &f.list, &f.err) == 0,
			      "%s", f.err.msg);
		unpkg_deb_free(deb);
		ck_assert_uint_eq(f.list.count, 6);
		/* No spare capacity kept for the rest of the run. */
		ck_assert_uint_eq(f.list.cap, 6);
		ck_assert_str_eq(f.list.files[2].path, "/usr/a");
		ck_assert_str_eq(f.list.files[2].md5,
				 with_sums ? ""
					   : "5d2cfb941f15f67e7921e4ff9e5a8624");
		ck_assert_str_eq(f.list.files[4].path, "/etc/c.conf");
		ck_assert_str_eq(f.list.files[4].md5,
				 "b9a771b420047cfaa3543e66c78f44f6");
		ck_assert_str_eq(f.list.files[5].path, "/etc/hl.conf");
		ck_assert_str_eq(f.list.files[5].md5,
				 "5d2cfb941f15f67e7921e4ff9e5a8624");
		commit(&f);
		fx_destroy(&f);
	}
}
END_TEST

int main(void)
{
	Suite *s;
	TCase *tc;

	/* Entries get owners other than the caller. */
	tu_require_root("chown");
	s = suite_create("extract");
	tc = tcase_create("core");
	tcase_add_test(tc, test_every_type);
	tcase_add_test(tc, test_conffile_stays_new);
	tcase_add_test(tc, test_existing_dirs_kept);
	tcase_add_test(tc, test_symlink_to_file_as_dir);
	tcase_add_test(tc, test_replace_and_abort);
	tcase_add_test(tc, test_errors_leave_no_debris);
	tcase_add_test(tc, test_conflict_with_run_package);
	tcase_add_test(tc, test_leftovers);
	tcase_add_test(tc, test_file_over_empty_dir);
	tcase_add_test(tc, test_absolute_lands_inside);
	tcase_add_test(tc, test_symlink_to_slash);
	tcase_add_test(tc, test_digests_where_needed);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
