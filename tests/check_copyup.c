/* check_copyup.c - copying an overlayfs's lower-layer files up ahead of
 * time. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "copyup.h"
#include "fsroot.h"
#include "testutil.h"

/* TOP/P, in one of four static buffers. */
static const char *at(const char *top, const char *p)
{
	static char buf[4][4096];
	static int n;

	n = (n + 1) % 4;
	snprintf(buf[n], sizeof(buf[n]), "%s/%s", top, p);
	return buf[n];
}

/* A file of `content`, mode 0640, its times set to distinct old values
 * with nanoseconds. */
static void old_file(const char *path, const char *content)
{
	struct timespec t[2] = { { 1000000000, 123456789 },
				 { 1100000000, 987654321 } };

	tu_write_file(path, content, 0640);
	ck_assert_int_eq(chmod(path, 0640), 0);
	ck_assert_int_eq(utimensat(AT_FDCWD, path, t, 0), 0);
}

static void check_old_times(const char *path)
{
	struct stat st;

	ck_assert_msg(lstat(path, &st) == 0, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(st.st_atim.tv_sec, 1000000000);
	ck_assert_int_eq(st.st_atim.tv_nsec, 123456789);
	ck_assert_int_eq(st.st_mtim.tv_sec, 1100000000);
	ck_assert_int_eq(st.st_mtim.tv_nsec, 987654321);
	ck_assert_uint_eq(st.st_mode & 07777, 0640);
}

static int exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* The lower layer: d/a, d/b, d/sub/c (regular files), d/link (a
 * symlink to a), d/fifo; many/f0..f199. */
static void make_lower(const char *top)
{
	char name[64];
	int i;

	ck_assert_int_eq(mkdir(at(top, "lower"), 0755), 0);
	ck_assert_int_eq(mkdir(at(top, "lower/d"), 0755), 0);
	ck_assert_int_eq(mkdir(at(top, "lower/d/sub"), 0755), 0);
	ck_assert_int_eq(mkdir(at(top, "lower/many"), 0755), 0);
	old_file(at(top, "lower/d/a"), "a's content");
	old_file(at(top, "lower/d/b"), "b");
	old_file(at(top, "lower/d/sub/c"), "c");
	ck_assert_int_eq(symlink("a", at(top, "lower/d/link")), 0);
	ck_assert_int_eq(mkfifo(at(top, "lower/d/fifo"), 0644), 0);
	for (i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "lower/many/f%d", i);
		old_file(at(top, name), name);
	}
}

/* The lower layer under TOP (make_lower()), the overlay over it mounted
 * and opened as a root: NULL where no overlay can be mounted here (the
 * part `what` is reported skipped). */
static struct unpkg_root *overlay_root(const char *top, const char *what)
{
	struct unpkg_root *root = NULL;
	struct unpkg_err err;
	const char *why;

	make_lower(top);
	if (tu_overlay_mount(top, NULL, &why) < 0) {
		tu_skip_part(what, why);
		return NULL;
	}
	unpkg_err_init(&err);
	ck_assert_msg(unpkg_root_open(at(top, "ovl"), 0, &root, &err) == 0,
		      "%s", err.msg);
	return root;
}

/* On an overlay: the regular files named are copied up, whole, with
 * their times, mode and content; a symlink, a fifo and a missing path
 * are left as they are; the count is of the regular files. */
START_TEST(test_overlay)
{
	static const char *const paths[] = {
		"/d/a", "/d/sub/c", "/d/link", "/d/fifo", "/d/missing",
		"/nodir/x",
	};
	char *top = tu_mkdtemp(), *got;
	struct unpkg_root *root = overlay_root(top, "copying up");

	if (root == NULL)
		goto out;
	ck_assert_uint_eq(unpkg_copyup(root, paths, 6), 2);
	/* in the upper layer now, as they were */
	check_old_times(at(top, "upper/d/a"));
	check_old_times(at(top, "upper/d/sub/c"));
	check_old_times(at(top, "ovl/d/a"));
	got = tu_read_file(at(top, "upper/d/a"), NULL);
	ck_assert_str_eq(got, "a's content");
	free(got);
	/* the rest untouched */
	ck_assert(!exists(at(top, "upper/d/b")));
	ck_assert(!exists(at(top, "upper/d/link")));
	ck_assert(!exists(at(top, "upper/d/fifo")));
	ck_assert(!exists(at(top, "upper/d/missing")));
	ck_assert(!exists(at(top, "upper/nodir")));
	unpkg_root_free(root);
	ck_assert_int_eq(umount(at(top, "ovl")), 0);
out:
	tu_rm_rf(top);
	free(top);
}
END_TEST

/* More files than threads: every one is copied up, once. */
START_TEST(test_many)
{
	char *top = tu_mkdtemp(), *names[200], upper[4200];
	const char *paths[200];
	struct unpkg_root *root;
	size_t i;

	for (i = 0; i < 200; i++) {
		ck_assert_int_gt(asprintf(&names[i], "/many/f%zu", i), 0);
		paths[i] = names[i];
	}
	root = overlay_root(top, "copying up many files");
	if (root == NULL)
		goto out;
	ck_assert_uint_eq(unpkg_copyup(root, paths, 200), 200);
	for (i = 0; i < 200; i++) {
		snprintf(upper, sizeof(upper), "%s/upper%s", top, names[i]);
		check_old_times(upper);
	}
	/* again: already in the upper layer, still counted */
	ck_assert_uint_eq(unpkg_copyup(root, paths, 200), 200);
	ck_assert_uint_eq(unpkg_copyup(root, paths, 0), 0);
	unpkg_root_free(root);
	ck_assert_int_eq(umount(at(top, "ovl")), 0);
out:
	for (i = 0; i < 200; i++)
		free(names[i]);
	tu_rm_rf(top);
	free(top);
}
END_TEST

/* Elsewhere it changes nothing a reader sees. */
START_TEST(test_plain)
{
	static const char *const paths[] = { "/lower/d/a", "/lower/d/link" };
	char *top = tu_mkdtemp();
	struct unpkg_root *root = NULL;
	struct unpkg_err err;

	make_lower(top);
	unpkg_err_init(&err);
	ck_assert_msg(unpkg_root_open(top, 0, &root, &err) == 0, "%s",
		      err.msg);
	ck_assert_uint_eq(unpkg_copyup(root, paths, 2), 1);
	check_old_times(at(top, "lower/d/a"));
	unpkg_root_free(root);
	tu_rm_rf(top);
	free(top);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("copyup");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_overlay);
	tcase_add_test(tc, test_many);
	tcase_add_test(tc, test_plain);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
