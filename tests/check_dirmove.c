/* check_dirmove.c - moving a directory aside where the file system
 * refuses to rename it (an overlayfs's lower-layer directory). */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "dirmove.h"
#include "testutil.h"

struct layers {
	char *top;
	int ovl;		/* the overlay's root, or -1 where none */
};

/* TOP/P, in one of four static buffers. */
static const char *at(const struct layers *l, const char *p)
{
	static char buf[4][4096];
	static int n;

	n = (n + 1) % 4;
	snprintf(buf[n], sizeof(buf[n]), "%s/%s", l->top, p);
	return buf[n];
}

static void make_dir(const struct layers *l, const char *p, mode_t mode,
		     uid_t uid, gid_t gid)
{
	ck_assert_msg(mkdir(at(l, p), mode) == 0, "mkdir %s: %s", p,
		      strerror(errno));
	ck_assert_int_eq(chmod(at(l, p), mode), 0);
	ck_assert_int_eq(lchown(at(l, p), uid, gid), 0);
}

static void set_xattr(const struct layers *l, const char *p,
		      const char *name, const char *value)
{
	ck_assert_msg(lsetxattr(at(l, p), name, value, strlen(value), 0) == 0,
		      "setxattr %s: %s", p, strerror(errno));
}

/* The value of `name` on P, which must have it. */
static void check_xattr(const struct layers *l, const char *p,
			const char *name, const char *want)
{
	char buf[64];
	ssize_t n = lgetxattr(at(l, p), name, buf, sizeof(buf) - 1);

	ck_assert_msg(n >= 0, "%s has no %s: %s", p, name, strerror(errno));
	buf[n] = '\0';
	ck_assert_str_eq(buf, want);
}

/* The image layer: tree/ (0750, 1:2, an extended attribute) with f, a
 * link and sub/g (sub/ 0711, an empty attribute), and tree2/ with a and z/busy; then the overlay over it, mounted
 * with redirect_dir=off (the kernel's default), so that the lower-layer
 * directories cannot be renamed.  0, or -1 where no overlay can be
 * mounted here (the part is reported skipped). */
static int setup(struct layers *l)
{
	const char *why;

	l->top = tu_mkdtemp();
	l->ovl = -1;
	ck_assert_int_eq(mkdir(at(l, "lower"), 0755), 0);
	make_dir(l, "lower/tree", 0750, 1, 2);
	tu_write_file(at(l, "lower/tree/f"), "f", 0640);
	ck_assert_int_eq(symlink("f", at(l, "lower/tree/link")), 0);
	make_dir(l, "lower/tree/sub", 0711, 0, 0);
	tu_write_file(at(l, "lower/tree/sub/g"), "g", 0644);
	set_xattr(l, "lower/tree", "user.unpkg-test", "tree's own");
	set_xattr(l, "lower/tree/sub", "user.unpkg-test", "");
	make_dir(l, "lower/tree2", 0755, 0, 0);
	tu_write_file(at(l, "lower/tree2/a"), "a", 0644);
	make_dir(l, "lower/tree2/z", 0755, 0, 0);
	tu_write_file(at(l, "lower/tree2/z/busy"), "busy", 0644);
	if (tu_overlay_mount(l->top, "redirect_dir=off", &why) < 0) {
		tu_skip_part("moving a lower-layer directory", why);
		return -1;
	}
	l->ovl = open(at(l, "ovl"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(l->ovl, 0);
	/* what the move must work around */
	ck_assert_int_eq(renameat(l->ovl, "tree", l->ovl, "x"), -1);
	ck_assert_int_eq(errno, EXDEV);
	return 0;
}

static void teardown(struct layers *l)
{
	if (l->ovl >= 0) {
		close(l->ovl);
		ck_assert_int_eq(umount(at(l, "ovl")), 0);
	}
	tu_rm_rf(l->top);
	free(l->top);
}

static int exists(const struct layers *l, const char *p)
{
	struct stat st;

	return lstat(at(l, p), &st) == 0;
}

static void check_content(const struct layers *l, const char *p,
			  const char *want)
{
	char *got = tu_read_file(at(l, p), NULL);

	ck_assert_msg(got != NULL, "%s missing", p);
	ck_assert_str_eq(got, want);
	free(got);
}

static void check_dir(const struct layers *l, const char *p, mode_t mode,
		      uid_t uid, gid_t gid)
{
	struct stat st;

	ck_assert_msg(lstat(at(l, p), &st) == 0, "%s missing", p);
	ck_assert_msg(S_ISDIR(st.st_mode), "%s is no directory", p);
	ck_assert_uint_eq(st.st_mode & 07777, mode);
	ck_assert_uint_eq(st.st_uid, uid);
	ck_assert_uint_eq(st.st_gid, gid);
}

/* The entries of ovl/P but . and .., counted. */
static int count_entries(const struct layers *l, const char *p)
{
	char cmd[4200];
	FILE *f;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", at(l, p));
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%d", &n), 1);
	pclose(f);
	return n;
}

/* tree moved whole to tree.dpkg-tmp: owner, mode, extended attributes
 * and entries as they were; and it renames back (what an abort does), with nothing of the
 * lower layer showing through twice. */
static void check_moved_tree(const struct layers *l)
{
	char buf[16];
	ssize_t n;

	ck_assert(!exists(l, "ovl/tree"));
	check_dir(l, "ovl/tree.dpkg-tmp", 0750, 1, 2);
	check_xattr(l, "ovl/tree.dpkg-tmp", "user.unpkg-test", "tree's own");
	check_xattr(l, "ovl/tree.dpkg-tmp/sub", "user.unpkg-test", "");
	check_content(l, "ovl/tree.dpkg-tmp/f", "f");
	n = readlink(at(l, "ovl/tree.dpkg-tmp/link"), buf, sizeof(buf));
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(buf[0], 'f');
	check_dir(l, "ovl/tree.dpkg-tmp/sub", 0711, 0, 0);
	check_content(l, "ovl/tree.dpkg-tmp/sub/g", "g");
	ck_assert_int_eq(count_entries(l, "ovl/tree.dpkg-tmp"), 3);
	ck_assert_int_eq(count_entries(l, "ovl/tree.dpkg-tmp/sub"), 1);

	ck_assert_int_eq(renameat(l->ovl, "tree.dpkg-tmp", l->ovl, "tree"), 0);
	check_dir(l, "ovl/tree", 0750, 1, 2);
	check_content(l, "ovl/tree/sub/g", "g");
	ck_assert_int_eq(count_entries(l, "ovl/tree"), 3);
	ck_assert_int_eq(count_entries(l, "ovl/tree/sub"), 1);
}

/* Where renameat() serves, it is a rename. */
START_TEST(test_plain)
{
	char *top = tu_mkdtemp(), path[4096];
	struct stat before, after;
	int dfd;

	snprintf(path, sizeof(path), "%s/d", top);
	ck_assert_int_eq(mkdir(path, 0750), 0);
	ck_assert_int_eq(stat(path, &before), 0);
	dfd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(dfd, 0);
	ck_assert_int_eq(unpkg_dir_move(dfd, "d", "d.dpkg-tmp"), 0);
	snprintf(path, sizeof(path), "%s/d.dpkg-tmp", top);
	ck_assert_int_eq(stat(path, &after), 0);
	ck_assert_uint_eq(before.st_ino, after.st_ino);
	/* another failure is the caller's */
	ck_assert_int_eq(unpkg_dir_move(dfd, "missing", "m.dpkg-tmp"), -1);
	ck_assert_int_eq(errno, ENOENT);
	close(dfd);
	tu_rm_rf(top);
	free(top);
}
END_TEST

/* A lower-layer directory, with a lower-layer directory in it, is moved
 * by rebuilding it. */
START_TEST(test_lower_layer)
{
	struct layers l;

	if (setup(&l) == 0) {
		ck_assert_msg(unpkg_dir_move(l.ovl, "tree", "tree.dpkg-tmp")
			      == 0, "%s", strerror(errno));
		check_moved_tree(&l);
	}
	teardown(&l);
}
END_TEST

/* A move interrupted half-way (tree.dpkg-tmp holds f and part of sub)
 * is completed by the next one. */
START_TEST(test_interrupted)
{
	struct layers l;

	if (setup(&l) == 0) {
		make_dir(&l, "ovl/tree.dpkg-tmp", 0700, 0, 0);
		make_dir(&l, "ovl/tree.dpkg-tmp/sub", 0700, 0, 0);
		ck_assert_int_eq(rename(at(&l, "ovl/tree/f"),
					at(&l, "ovl/tree.dpkg-tmp/f")), 0);
		ck_assert_int_eq(rename(at(&l, "ovl/tree/sub/g"),
					at(&l, "ovl/tree.dpkg-tmp/sub/g")), 0);
		ck_assert_msg(unpkg_dir_move(l.ovl, "tree", "tree.dpkg-tmp")
			      == 0, "%s", strerror(errno));
		check_moved_tree(&l);
	}
	teardown(&l);
}
END_TEST

/* An entry that cannot be moved (a mount point, deep down) fails the
 * move with its error, and what was moved goes back. */
START_TEST(test_failure_undone)
{
	struct layers l;

	if (setup(&l) == 0) {
		ck_assert_int_eq(mount(at(&l, "lower/tree2/a"),
				       at(&l, "ovl/tree2/z/busy"), NULL,
				       MS_BIND, NULL), 0);
		ck_assert_int_eq(unpkg_dir_move(l.ovl, "tree2",
						"tree2.dpkg-tmp"), -1);
		ck_assert_int_eq(errno, EBUSY);
		ck_assert_int_eq(umount(at(&l, "ovl/tree2/z/busy")), 0);
		ck_assert(!exists(&l, "ovl/tree2.dpkg-tmp"));
		check_content(&l, "ovl/tree2/a", "a");
		check_content(&l, "ovl/tree2/z/busy", "busy");
		ck_assert_int_eq(count_entries(&l, "ovl/tree2"), 2);
		ck_assert_int_eq(count_entries(&l, "ovl/tree2/z"), 1);
		/* and the next try succeeds */
		ck_assert_int_eq(unpkg_dir_move(l.ovl, "tree2",
						"tree2.dpkg-tmp"), 0);
		ck_assert(!exists(&l, "ovl/tree2"));
		check_content(&l, "ovl/tree2.dpkg-tmp/z/busy", "busy");
	}
	teardown(&l);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dirmove");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_plain);
	tcase_add_test(tc, test_lower_layer);
	tcase_add_test(tc, test_interrupted);
	tcase_add_test(tc, test_failure_undone);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
