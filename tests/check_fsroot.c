/* check_fsroot.c - tests for resolving paths beneath a root.
 *
 * Every resolution test runs twice: once with openat2 (when the kernel
 * allows it) and once with the user-space walk.  The root is
 * <tmp>/top/root; <tmp>/etc/passwd, <tmp>/top/etc/passwd and other files
 * beside it are sentinels that a path escaping the root would reach.  Each
 * test checks that every fd it gets back names something inside the root
 * and that nothing outside the root changed.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stddef.h>
#include <sys/wait.h>
#ifdef HAVE_LINUX_OPENAT2_H
#include <linux/openat2.h>
#endif

#include "fsroot.h"
#include "testutil.h"

struct fx {
	char *tmp;		/* from tu_mkdtemp() */
	char real[PATH_MAX];	/* tmp, without symlinks */
	char dir[PATH_MAX];	/* the root directory */
	struct unpkg_root *root;
	char *snap;		/* what lies outside the root, at start */
	int nfds;		/* open fds, at start */
};

static struct fx fx;

/* ---- building trees ------------------------------------------------ */

static void hpath(char *out, const char *base, const char *rel)
{
	int n = snprintf(out, PATH_MAX, "%s/%s", base, rel);

	ck_assert(n > 0 && n < PATH_MAX);
}

static void mk_dir(const char *base, const char *rel)
{
	char p[PATH_MAX];

	hpath(p, base, rel);
	ck_assert_msg(mkdir(p, 0755) == 0, "mkdir %s: %s", p, strerror(errno));
}

static void mk_dirs(const char *base, const char *rel)
{
	char p[PATH_MAX], *s;

	hpath(p, base, rel);
	for (s = p + strlen(base) + 1; ; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;

		*s = '\0';
		ck_assert_msg(mkdir(p, 0755) == 0 || errno == EEXIST,
			      "mkdir %s: %s", p, strerror(errno));
		*s = c;
		if (c == '\0')
			break;
	}
}

static void mk_file(const char *base, const char *rel, const char *data)
{
	char p[PATH_MAX];

	hpath(p, base, rel);
	tu_write_file(p, data, 0644);
}

static void mk_link(const char *base, const char *rel, const char *target)
{
	char p[PATH_MAX];

	hpath(p, base, rel);
	ck_assert_msg(symlink(target, p) == 0, "symlink %s: %s", p,
		      strerror(errno));
}

/* The tree inside a root, shared with the comparison tests. */
static void mk_layout(const char *dir)
{
	char mirror[PATH_MAX];

	mk_dir(dir, "etc");
	mk_file(dir, "etc/passwd", "inside");
	mk_dirs(dir, "a/b");
	mk_dirs(dir, "usr/lib/x");
	mk_dir(dir, "usr/bin");
	mk_file(dir, "usr/lib/x/y", "merged");
	mk_file(dir, "victim", "inside-victim");
	mk_link(dir, "lib", "usr/lib");
	mk_link(dir, "bin", "/usr/bin");
	/* The host's absolute path of the temporary directory, mirrored
	 * inside the root: an absolute symlink to it must land here. */
	hpath(mirror, fx.real + 1, "etc");
	mk_dirs(dir, mirror);
	hpath(mirror, fx.real + 1, "etc/passwd");
	mk_file(dir, mirror, "mirror");
}

/* nftw() has no user pointer, so its callbacks append here. */
static char *listbuf;
static const char *listskip;
static size_t listcut;
static int listtimes;

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list_one(const char *path, const struct stat *st, int type,
		    struct FTW *ftw)
{
	size_t old = listbuf ? strlen(listbuf) : 0;
	char line[PATH_MAX + 128];
	long long size = S_ISDIR(st->st_mode) ? 0 : (long long)st->st_size;
	int n;

	(void)type;
	(void)ftw;
	if (strcmp(path, listskip) == 0)
		return FTW_SKIP_SUBTREE;
	if (listtimes)
		n = snprintf(line, sizeof(line), "%s %o %lld %lld.%09ld\n",
			     path + listcut, (unsigned int)st->st_mode, size,
			     (long long)st->st_mtim.tv_sec,
			     st->st_mtim.tv_nsec);
	else
		n = snprintf(line, sizeof(line), "%s %o %lld\n",
			     path + listcut, (unsigned int)st->st_mode, size);
	ck_assert(n > 0 && (size_t)n < sizeof(line));
	listbuf = realloc(listbuf, old + (size_t)n + 1);
	ck_assert(listbuf != NULL);
	memcpy(listbuf + old, line, (size_t)n + 1);
	return FTW_CONTINUE;
}

/* A sorted listing of the tree at `top`, leaving out the subtree `skip`,
 * with paths relative to `top`; with mtimes when `times`. */
static char *listing(const char *top, const char *skip, int times)
{
	char **lines = NULL, *s, *out, *tok, *save = NULL;
	size_t n = 0, i, len;

	listbuf = NULL;
	listskip = skip;
	listcut = strlen(top);
	listtimes = times;
	ck_assert(nftw(top, list_one, 16, FTW_PHYS | FTW_ACTIONRETVAL) == 0);
	s = listbuf;
	listbuf = NULL;
	ck_assert(s != NULL);
	len = strlen(s);
	for (tok = strtok_r(s, "\n", &save); tok != NULL;
	     tok = strtok_r(NULL, "\n", &save)) {
		lines = realloc(lines, (n + 1) * sizeof(*lines));
		ck_assert(lines != NULL);
		lines[n++] = tok;
	}
	qsort(lines, n, sizeof(*lines), cmp_str);
	out = malloc(len + 1);
	ck_assert(out != NULL);
	out[0] = '\0';
	for (i = 0; i < n; i++) {
		strcat(out, lines[i]);
		strcat(out, "\n");
	}
	free(lines);
	free(s);
	return out;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	ck_assert(d != NULL);
	while ((e = readdir(d)) != NULL)
		n++;
	ck_assert(closedir(d) == 0);
	return n;
}

static void fx_init(int walk)
{
	struct unpkg_err err;

	umask(022);
	memset(&fx, 0, sizeof(fx));
	fx.tmp = tu_mkdtemp();
	ck_assert(realpath(fx.tmp, fx.real) != NULL);
	mk_dir(fx.real, "etc");
	mk_file(fx.real, "etc/passwd", "outside-tmp");
	mk_dir(fx.real, "top");
	mk_dir(fx.real, "top/etc");
	mk_file(fx.real, "top/etc/passwd", "outside-top");
	mk_dir(fx.real, "top/sentinel");
	mk_file(fx.real, "top/victim", "outside-victim");
	mk_dir(fx.real, "top/root");
	hpath(fx.dir, fx.real, "top/root");
	mk_layout(fx.dir);

	unpkg_err_init(&err);
	ck_assert_msg(unpkg_root_open(fx.dir, walk ? UNPKG_ROOT_NO_OPENAT2 : 0,
				      &fx.root, &err) == 0, "%s", err.msg);
	if (walk)
		ck_assert_int_eq(unpkg_root_has_openat2(fx.root), 0);
	fx.snap = listing(fx.real, fx.dir, 1);
	fx.nfds = count_fds();
}

/* Check that nothing outside the root changed, and clean up. */
static void fx_done(void)
{
	char *now = listing(fx.real, fx.dir, 1);

	ck_assert_int_eq(count_fds(), fx.nfds);

	ck_assert_str_eq(now, fx.snap);
	free(now);
	free(fx.snap);
	unpkg_root_free(fx.root);
	tu_rm_rf(fx.real);
	free(fx.tmp);
}

/* ---- assertions ---------------------------------------------------- */

static void assert_inside(int fd)
{
	char link[64], p[PATH_MAX];
	size_t n = strlen(fx.dir);
	ssize_t len;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = readlink(link, p, sizeof(p) - 1);
	ck_assert_msg(len >= 0, "readlink %s: %s", link, strerror(errno));
	p[len] = '\0';
	ck_assert_msg(strncmp(p, fx.dir, n) == 0 &&
		      (p[n] == '/' || p[n] == '\0'),
		      "fd %d is %s, outside the root %s", fd, p, fx.dir);
}

static int ro(const char *path, int flags, int mode)
{
	struct unpkg_err err;
	int fd;

	unpkg_err_init(&err);
	fd = unpkg_root_openat(fx.root, path, flags, mode, &err);
	ck_assert_msg(fd >= 0, "open \"%s\" (flags %#x): %s", path,
		      (unsigned int)flags, err.msg);
	ck_assert_int_eq(err.code, UNPKG_ERR_NONE);
	ck_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_inside(fd);
	return fd;
}

static void ro_fail(const char *path, int flags, int errnum)
{
	struct unpkg_err err;
	int fd;

	unpkg_err_init(&err);
	fd = unpkg_root_openat(fx.root, path, flags, 0644, &err);
	if (fd >= 0)
		assert_inside(fd);
	ck_assert_msg(fd == -1, "open \"%s\" (flags %#x) succeeded",
		      path, (unsigned int)flags);
	ck_assert_int_eq(err.code, UNPKG_ERR_SYS);
	ck_assert_msg(err.errnum == errnum, "open \"%s\": want %s, got: %s",
		      path, strerror(errnum), err.msg);
}

/* `fd` is the file `rel` inside the root (not following a final link). */
static void assert_is(int fd, const char *rel)
{
	struct stat a, b;
	char p[PATH_MAX];

	hpath(p, fx.dir, rel);
	ck_assert(fstat(fd, &a) == 0);
	ck_assert_msg(lstat(p, &b) == 0, "%s: %s", p, strerror(errno));
	ck_assert_msg(a.st_dev == b.st_dev && a.st_ino == b.st_ino,
		      "fd %d is not %s", fd, p);
}

static void expect_data(const char *path, int flags, const char *want)
{
	char buf[256];
	ssize_t n;
	int fd = ro(path, O_RDONLY | flags, 0);

	n = pread(fd, buf, sizeof(buf) - 1, 0);
	ck_assert(n >= 0);
	buf[n] = '\0';
	ck_assert_msg(strcmp(buf, want) == 0, "\"%s\" has \"%s\", not \"%s\"",
		      path, buf, want);
	ck_assert(close(fd) == 0);
}

static void expect_dir(const char *path, int flags, const char *rel)
{
	struct stat st;
	int fd = ro(path, flags, 0);

	ck_assert(fstat(fd, &st) == 0);
	ck_assert(S_ISDIR(st.st_mode));
	assert_is(fd, rel);
	ck_assert(close(fd) == 0);
}

static void expect_host_data(const char *rel, const char *want)
{
	char p[PATH_MAX], *data;

	hpath(p, fx.dir, rel);
	data = tu_read_file(p, NULL);
	ck_assert_msg(data != NULL, "%s is missing", p);
	ck_assert_str_eq(data, want);
	free(data);
}

static void expect_missing(const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	hpath(p, fx.dir, rel);
	ck_assert_msg(lstat(p, &st) < 0 && errno == ENOENT, "%s exists", p);
}

static void create(const char *path, int flags, const char *data)
{
	int fd = ro(path, O_WRONLY | O_CREAT | flags, 0600);
	size_t n = strlen(data);
	struct stat st;

	ck_assert(write(fd, data, n) == (ssize_t)n);
	ck_assert(fstat(fd, &st) == 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert(close(fd) == 0);
}

/* ---- tests --------------------------------------------------------- */

START_TEST(test_plain)
{
	fx_init(_i);
	expect_data("etc/passwd", 0, "inside");
	expect_data("/etc/passwd", 0, "inside");
	expect_data("//etc///passwd", 0, "inside");
	expect_data("./etc/./passwd", 0, "inside");
	expect_data("usr/lib/x/y", O_NOFOLLOW, "merged");
	expect_dir("", O_RDONLY, "");
	expect_dir(".", O_RDONLY, "");
	expect_dir("/", O_PATH, "");
	expect_dir("etc", O_RDONLY | O_DIRECTORY, "etc");
	expect_dir("etc/", O_RDONLY, "etc");
	expect_dir("a/b/.", O_PATH, "a/b");
	expect_dir("a/b/..", O_PATH, "a");
	fx_done();
}
END_TEST

START_TEST(test_dotdot)
{
	fx_init(_i);
	expect_data("../etc/passwd", 0, "inside");
	expect_data("../../etc/passwd", 0, "inside");
	expect_data("../../../../../../../../etc/passwd", 0, "inside");
	expect_data("a/../../etc/passwd", 0, "inside");
	expect_data("a/b/../../../../etc/passwd", 0, "inside");
	expect_data("etc/../../a/../etc/passwd", 0, "inside");
	ro_fail("../root/etc/passwd", O_RDONLY, ENOENT);
	expect_data("/../etc/passwd", 0, "inside");
	ro_fail("../victim/x", O_RDONLY, ENOTDIR);
	ro_fail("../sentinel", O_RDONLY, ENOENT);
	ro_fail("../top/sentinel", O_RDONLY, ENOENT);
	expect_dir("..", O_RDONLY, "");
	expect_dir("../..", O_PATH, "");
	expect_dir("a/../..", O_RDONLY | O_DIRECTORY, "");
	expect_dir("a/b/../../..", O_PATH, "");
	fx_done();
}
END_TEST

START_TEST(test_absolute_links)
{
	char target[PATH_MAX];

	fx_init(_i);
	mk_link(fx.dir, "l", "/");
	mk_link(fx.dir, "e", "/etc");
	mk_link(fx.dir, "a/up", "/..");
	hpath(target, fx.real, "etc");
	mk_link(fx.dir, "host", target);
	hpath(target, fx.real, "top/sentinel");
	mk_link(fx.dir, "sent", target);

	expect_data("l/etc/passwd", 0, "inside");
	expect_data("l/../etc/passwd", 0, "inside");
	expect_data("l/l/l/etc/passwd", 0, "inside");
	expect_data("e/passwd", 0, "inside");
	expect_data("a/up/etc/passwd", 0, "inside");
	expect_data("host/passwd", 0, "mirror");
	ro_fail("sent", O_RDONLY, ENOENT);
	ro_fail("sent/x", O_RDONLY, ENOENT);
	expect_dir("l", O_RDONLY, "");
	expect_dir("l/..", O_RDONLY, "");
	expect_dir("e/", O_PATH, "etc");
	expect_dir("a/up", O_DIRECTORY, "");
	fx_done();
}
END_TEST

START_TEST(test_relative_escapes)
{
	fx_init(_i);
	mk_link(fx.dir, "up3", "../../..");
	mk_link(fx.dir, "a/b/pw", "../../../../etc/passwd");
	mk_link(fx.dir, "a/b/etc", "../../../etc");
	mk_link(fx.dir, "a/vic", "../../victim");
	mk_link(fx.dir, "a/sent", "../../sentinel");

	expect_data("up3/etc/passwd", 0, "inside");
	expect_data("a/b/pw", 0, "inside");
	expect_data("a/b/etc/passwd", 0, "inside");
	expect_data("a/vic", 0, "inside-victim");
	expect_dir("up3", O_RDONLY, "");
	expect_dir("up3/..", O_PATH, "");
	expect_dir("a/b/etc/..", O_PATH, "");
	ro_fail("a/sent", O_RDONLY, ENOENT);
	ro_fail("a/sent/", O_PATH, ENOENT);
	fx_done();
}
END_TEST

START_TEST(test_chains)
{
	char name[32], target[32];
	int i;

	fx_init(_i);
	mk_link(fx.dir, "c1", "c2");
	mk_link(fx.dir, "c2", "a/c3");
	mk_link(fx.dir, "a/c3", "../../etc/passwd");
	mk_link(fx.dir, "d1", "d2/");
	mk_link(fx.dir, "d2", "/e");
	mk_link(fx.dir, "e", "etc");
	expect_data("c1", 0, "inside");
	expect_data("d1/passwd", 0, "inside");
	expect_dir("d1", O_RDONLY, "etc");

	/* n0 -> n1 -> ... -> n40 -> etc/passwd: 41 links from n0. */
	for (i = 0; i <= 40; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		if (i == 40)
			snprintf(target, sizeof(target), "etc/passwd");
		else
			snprintf(target, sizeof(target), "n%d", i + 1);
		mk_link(fx.dir, name, target);
	}
	expect_data("n1", 0, "inside");
	ro_fail("n0", O_RDONLY, ELOOP);
	fx_done();
}
END_TEST

START_TEST(test_loops)
{
	fx_init(_i);
	mk_link(fx.dir, "self", "self");
	mk_link(fx.dir, "p1", "p2");
	mk_link(fx.dir, "p2", "/p1");
	mk_link(fx.dir, "deep", "deep/x");
	mk_link(fx.dir, "dot", "./dot/");
	ro_fail("self", O_RDONLY, ELOOP);
	ro_fail("self/x", O_RDONLY, ELOOP);
	ro_fail("p1", O_PATH, ELOOP);
	ro_fail("a/../p2/", O_RDONLY, ELOOP);
	ro_fail("deep", O_RDONLY, ELOOP);
	ro_fail("dot", O_DIRECTORY, ELOOP);
	ro_fail("self", O_WRONLY | O_CREAT, ELOOP);
	fx_done();
}
END_TEST

START_TEST(test_merged_usr)
{
	struct unpkg_err err;
	const char *base;
	int fd;

	fx_init(_i);
	expect_data("lib/x/y", 0, "merged");
	expect_data("/lib/x/y", 0, "merged");
	expect_data("lib/../lib/x/y", 0, "merged");
	/* ".." after a symlink goes up from where the link leads. */
	expect_dir("lib/..", O_RDONLY, "usr");
	expect_dir("lib/x", O_PATH, "usr/lib/x");
	expect_dir("bin", O_RDONLY, "usr/bin");
	create("lib/x/z", O_EXCL, "new");
	expect_host_data("usr/lib/x/z", "new");
	create("bin/tool", O_TRUNC, "tool");
	expect_host_data("usr/bin/tool", "tool");

	unpkg_err_init(&err);
	fd = unpkg_root_open_parent(fx.root, "lib/x/w", &base, &err);
	ck_assert_msg(fd >= 0, "%s", err.msg);
	assert_inside(fd);
	assert_is(fd, "usr/lib/x");
	ck_assert_str_eq(base, "w");
	ck_assert(mkdirat(fd, base, 0755) == 0);
	ck_assert(close(fd) == 0);
	expect_dir("usr/lib/x/w", O_RDONLY, "usr/lib/x/w");
	fx_done();
}
END_TEST

START_TEST(test_last_symlink)
{
	char buf[64];
	struct stat st;
	ssize_t n;
	int fd;

	fx_init(_i);
	mk_link(fx.dir, "lp", "etc/passwd");
	mk_link(fx.dir, "ld", "/etc");
	expect_data("lp", 0, "inside");
	ro_fail("lp", O_RDONLY | O_NOFOLLOW, ELOOP);
	ro_fail("lp", O_WRONLY | O_TRUNC | O_NOFOLLOW, ELOOP);
	expect_host_data("etc/passwd", "inside");

	fd = ro("lp", O_PATH | O_NOFOLLOW, 0);
	ck_assert(fstat(fd, &st) == 0);
	ck_assert(S_ISLNK(st.st_mode));
	assert_is(fd, "lp");
	n = readlinkat(fd, "", buf, sizeof(buf));
	ck_assert(n == (ssize_t)strlen("etc/passwd"));
	ck_assert(memcmp(buf, "etc/passwd", (size_t)n) == 0);
	ck_assert(close(fd) == 0);

	fd = ro("lp", O_PATH, 0);
	ck_assert(fstat(fd, &st) == 0);
	ck_assert(S_ISREG(st.st_mode));
	assert_is(fd, "etc/passwd");
	ck_assert(close(fd) == 0);

	expect_dir("ld", O_RDONLY | O_DIRECTORY, "etc");
	expect_dir("ld", O_PATH | O_DIRECTORY, "etc");
	ro_fail("ld", O_RDONLY | O_DIRECTORY | O_NOFOLLOW, ENOTDIR);
	ro_fail("ld", O_PATH | O_DIRECTORY | O_NOFOLLOW, ENOTDIR);
	ro_fail("lp", O_RDONLY | O_DIRECTORY, ENOTDIR);
	/* A trailing slash follows the link even with O_NOFOLLOW. */
	expect_dir("ld/", O_RDONLY | O_NOFOLLOW, "etc");
	expect_dir("ld//", O_PATH | O_NOFOLLOW, "etc");
	ro_fail("lp/", O_RDONLY, ENOTDIR);
	ro_fail("lp/", O_PATH | O_NOFOLLOW, ENOTDIR);
	/* Only the last component may stay unfollowed. */
	expect_data("ld/passwd", O_NOFOLLOW, "inside");
	fx_done();
}
END_TEST

START_TEST(test_create_dangling)
{
	char target[PATH_MAX];

	fx_init(_i);
	mk_link(fx.dir, "dang", "newfile");
	mk_link(fx.dir, "a/dabs", "/a/b/new2");
	mk_link(fx.dir, "a/b/desc", "../../../../created");
	hpath(target, fx.real, "etc/created");
	mk_link(fx.dir, "dhost", target);
	hpath(target, fx.real, "top/sentinel/created");
	mk_link(fx.dir, "dsent", target);
	mk_link(fx.dir, "dmiss", "/nodir/x");
	mk_link(fx.dir, "dslash", "newdir/");
	mk_link(fx.dir, "dvic", "../victim");

	/* With O_EXCL or O_NOFOLLOW a final symlink is never followed. */
	ro_fail("dang", O_WRONLY | O_CREAT | O_EXCL, EEXIST);
	ro_fail("dang", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, EEXIST);
	ro_fail("dang", O_WRONLY | O_CREAT | O_NOFOLLOW, ELOOP);
	ro_fail("lib", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, EEXIST);
	expect_missing("newfile");

	/* Otherwise the link's target is created, inside the root. */
	create("dang", 0, "d1");
	expect_host_data("newfile", "d1");
	create("a/dabs", 0, "d2");
	expect_host_data("a/b/new2", "d2");
	create("a/b/desc", 0, "d3");
	expect_host_data("created", "d3");
	create("dhost", 0, "d4");
	hpath(target, fx.real + 1, "etc/created");
	expect_host_data(target, "d4");
	ro_fail("dsent", O_WRONLY | O_CREAT, ENOENT);
	ro_fail("dmiss", O_WRONLY | O_CREAT, ENOENT);
	ro_fail("dslash", O_WRONLY | O_CREAT, EISDIR);
	expect_missing("newdir");
	expect_missing("nodir");

	/* An existing target outside the root is not touched. */
	create("dvic", O_TRUNC, "v");
	expect_host_data("victim", "v");
	fx_done();
}
END_TEST

START_TEST(test_create_plain)
{
	struct stat st;
	char p[PATH_MAX];
	int fd;

	fx_init(_i);
	create("f1", O_EXCL, "one");
	expect_host_data("f1", "one");
	hpath(p, fx.dir, "f1");
	ck_assert(stat(p, &st) == 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	ro_fail("f1", O_WRONLY | O_CREAT | O_EXCL, EEXIST);
	create("../../f2", O_EXCL, "two");
	expect_host_data("f2", "two");
	create("a/b/../../../../a/f3", O_EXCL | O_NOFOLLOW, "three");
	expect_host_data("a/f3", "three");
	ro_fail("etc", O_WRONLY | O_CREAT, EISDIR);
	ro_fail("etc/", O_WRONLY | O_CREAT, EISDIR);
	ro_fail("new/", O_WRONLY | O_CREAT, EISDIR);
	ro_fail(".", O_WRONLY | O_CREAT, EISDIR);
	ro_fail("a/..", O_RDONLY | O_CREAT | O_EXCL, EEXIST);
	ro_fail("nodir/f", O_WRONLY | O_CREAT, ENOENT);
	ro_fail("etc/passwd/f", O_WRONLY | O_CREAT, ENOTDIR);
	expect_missing("new");

	/* The mode goes through, less the umask; O_PATH ignores O_CREAT. */
	fd = ro("f4", O_WRONLY | O_CREAT | O_EXCL, 0640);
	ck_assert(fstat(fd, &st) == 0);
	ck_assert_int_eq(st.st_mode & 07777, 0640 & ~0022);
	ck_assert(close(fd) == 0);
	ro_fail("f5", O_PATH | O_CREAT, ENOENT);
	expect_missing("f5");
	fx_done();
}
END_TEST

START_TEST(test_errors)
{
	char longname[NAME_MAX + 2];

	fx_init(_i);
	mk_link(fx.dir, "dl", "nothere");
	mk_link(fx.dir, "lf", "etc/passwd");
	ro_fail("nope", O_RDONLY, ENOENT);
	ro_fail("nope/x", O_RDONLY, ENOENT);
	ro_fail("nope/..", O_RDONLY, ENOENT);
	ro_fail("dl", O_RDONLY, ENOENT);
	ro_fail("dl", O_PATH, ENOENT);
	ro_fail("dl/x", O_RDONLY, ENOENT);
	ro_fail("etc/passwd/x", O_RDONLY, ENOTDIR);
	ro_fail("etc/passwd/", O_RDONLY, ENOTDIR);
	ro_fail("etc/passwd/.", O_PATH, ENOTDIR);
	ro_fail("etc/passwd/..", O_RDONLY, ENOTDIR);
	ro_fail("lf/x", O_RDONLY, ENOTDIR);
	ro_fail("etc/passwd", O_RDONLY | O_DIRECTORY, ENOTDIR);
	ro_fail("etc", O_WRONLY, EISDIR);
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	ro_fail(longname, O_RDONLY, ENAMETOOLONG);
	fx_done();
}
END_TEST

static void parent_ok(const char *path, const char *dir, const char *base)
{
	struct unpkg_err err;
	const char *b = NULL;
	int fd;

	unpkg_err_init(&err);
	fd = unpkg_root_open_parent(fx.root, path, &b, &err);
	ck_assert_msg(fd >= 0, "parent of \"%s\": %s", path, err.msg);
	assert_inside(fd);
	assert_is(fd, dir);
	/* A real fd, not O_PATH: the caller may fsync the directory. */
	ck_assert(fsync(fd) == 0);
	ck_assert(b >= path && b < path + strlen(path));
	ck_assert_str_eq(b, base);
	ck_assert(close(fd) == 0);
}

static void parent_fail(const char *path, enum unpkg_errcode code,
			int errnum)
{
	struct unpkg_err err;
	const char *b = "x";

	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_root_open_parent(fx.root, path, &b, &err), -1);
	ck_assert_msg(err.code == code && err.errnum == errnum,
		      "parent of \"%s\": %s", path, err.msg);
	ck_assert(b == NULL);
}

START_TEST(test_open_parent)
{
	fx_init(_i);
	mk_link(fx.dir, "l", "/");
	mk_link(fx.dir, "esc", "../../..");
	parent_ok("x", "", "x");
	parent_ok("/x", "", "x");
	parent_ok("passwd", "", "passwd");
	parent_ok("etc/passwd", "etc", "passwd");
	parent_ok("/etc//passwd", "etc", "passwd");
	parent_ok("a/b/", "a", "b/");
	parent_ok("lib/x/new", "usr/lib/x", "new");
	parent_ok("lib", "", "lib");
	parent_ok("../../x", "", "x");
	parent_ok("esc/x", "", "x");
	parent_ok("esc/etc/x", "etc", "x");
	parent_ok("l/l/etc/x", "etc", "x");
	parent_ok("a/b/../../../x", "", "x");
	parent_fail("nope/x", UNPKG_ERR_SYS, ENOENT);
	parent_fail("etc/passwd/x", UNPKG_ERR_SYS, ENOTDIR);
	parent_fail("", UNPKG_ERR_USAGE, 0);
	parent_fail("/", UNPKG_ERR_USAGE, 0);
	parent_fail("//", UNPKG_ERR_USAGE, 0);
	parent_fail(".", UNPKG_ERR_USAGE, 0);
	parent_fail("a/..", UNPKG_ERR_USAGE, 0);
	parent_fail("a/../", UNPKG_ERR_USAGE, 0);
	parent_fail("a/.", UNPKG_ERR_USAGE, 0);
	fx_done();
}
END_TEST

START_TEST(test_trunc_through_link)
{
	int fd;

	fx_init(_i);
	mk_link(fx.dir, "a/t", "../../../victim");
	fd = ro("a/t", O_WRONLY | O_TRUNC, 0);
	ck_assert(write(fd, "x", 1) == 1);
	ck_assert(close(fd) == 0);
	expect_host_data("victim", "x");
	fx_done();
}
END_TEST

START_TEST(test_root_object)
{
	struct unpkg_root *root = (struct unpkg_root *)&fx;
	struct unpkg_err err;
	struct stat st;
	char p[PATH_MAX], buf[16];
	int fd;

	fx_init(_i);
	ck_assert(fstat(unpkg_root_fd(fx.root), &st) == 0);
	ck_assert(S_ISDIR(st.st_mode));
	assert_is(unpkg_root_fd(fx.root), "");
	assert_inside(unpkg_root_fd(fx.root));

	unpkg_err_init(&err);
	hpath(p, fx.dir, "nope");
	ck_assert_int_eq(unpkg_root_open(p, 0, &root, &err), -1);
	ck_assert(root == NULL);
	ck_assert_int_eq(err.code, UNPKG_ERR_SYS);
	ck_assert_int_eq(err.errnum, ENOENT);

	unpkg_err_init(&err);
	hpath(p, fx.dir, "etc/passwd");
	ck_assert_int_eq(unpkg_root_open(p, UNPKG_ROOT_NO_OPENAT2, &root,
					 &err), -1);
	ck_assert_int_eq(err.errnum, ENOTDIR);

	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_root_open(fx.dir, 1u << 7, &root, &err), -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_USAGE);

	/* A root that is a symlink itself is fine: the caller names it. */
	unpkg_err_init(&err);
	hpath(p, fx.dir, "lib");
	ck_assert_int_eq(unpkg_root_open(p, _i ? UNPKG_ROOT_NO_OPENAT2 : 0,
					 &root, &err), 0);
	fd = unpkg_root_openat(root, "/x/y", O_RDONLY, 0, &err);
	ck_assert_msg(fd >= 0, "%s", err.msg);
	ck_assert(read(fd, buf, sizeof(buf)) == 6);
	ck_assert(memcmp(buf, "merged", 6) == 0);
	ck_assert(close(fd) == 0);
	unpkg_root_free(root);
	unpkg_root_free(NULL);
	fx_done();
}
END_TEST

/* Whether this kernel lets us use openat2, asked independently. */
static int kernel_openat2(void)
{
#if defined(HAVE_LINUX_OPENAT2_H) && defined(SYS_openat2)
	struct open_how how;
	int fd;

	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_CLOEXEC;
	how.resolve = RESOLVE_IN_ROOT;
	fd = (int)syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof(how));
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
#else
	return 0;
#endif
}

START_TEST(test_probe)
{
	fx_init(0);
	ck_assert_int_eq(unpkg_root_has_openat2(fx.root), kernel_openat2());
	fx_done();
}
END_TEST

#ifdef SYS_openat2
/* In a child where a seccomp filter makes openat2 fail with `errnum`,
 * the root must fall back to the walk and still resolve in the root.
 * Returns the child's exit status: 0 when all went well. */
static int child_with_filter(int errnum)
{
	struct unpkg_root *root = NULL;
	struct unpkg_err err;
	char buf[16];
	int fd, status;
	pid_t pid;

	pid = fork();
	ck_assert(pid >= 0);
	if (pid == 0) {
		if (tu_deny_syscall(SYS_openat2, errnum) < 0)
			_exit(2);
		unpkg_err_init(&err);
		if (unpkg_root_open(fx.dir, 0, &root, &err) < 0)
			_exit(3);
		if (unpkg_root_has_openat2(root))
			_exit(4);
		fd = unpkg_root_openat(root, "../lib/x/../../../etc/passwd",
				       O_RDONLY, 0, &err);
		if (fd < 0)
			_exit(5);
		if (read(fd, buf, sizeof(buf)) != 6 ||
		    memcmp(buf, "inside", 6) != 0)
			_exit(6);
		unpkg_root_free(root);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0)
		ck_assert(errno == EINTR);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}
#endif

START_TEST(test_seccomp_fallback)
{
	static const int errnums[] = { ENOSYS, EPERM, EACCES };

	fx_init(0);
#ifdef SYS_openat2
	ck_assert_int_eq(child_with_filter(errnums[_i]), 0);
#else
	(void)errnums;
	tu_skip_part("the fallback where openat2 is denied",
		     "no SYS_openat2 in this system's headers");
#endif
	fx_done();
}
END_TEST

/* ---- both resolvers side by side ------------------------------------ */

static const char *const cmp_paths[] = {
	"", ".", "..", "/", "//", "etc", "etc/", "etc/.", "etc/..",
	"etc/passwd", "etc/passwd/", "etc/passwd/.", "etc/passwd/..",
	"/etc/passwd", "../etc/passwd", "../../../etc/passwd", "a/b/../..",
	"a/b/../../..", "lib", "lib/", "lib/.", "lib/..", "lib/x/y",
	"lib/x/y/", "bin", "bin/..", "l", "l/", "l/..", "l/etc/passwd",
	"lp", "lp/", "ld", "ld/", "ld/..", "dang", "dang/", "self", "self/",
	"up", "up/..", "up/etc", "nope", "nope/", "nope/..",
	"a/./b/./", "./a//b//..//", "host", "host/passwd", "chain",
};

static void cmp_layout(const char *dir)
{
	char target[PATH_MAX];

	mk_layout(dir);
	mk_link(dir, "l", "/");
	mk_link(dir, "lp", "etc/passwd");
	mk_link(dir, "ld", "/etc/");
	mk_link(dir, "dang", "nothere");
	mk_link(dir, "self", "self");
	mk_link(dir, "up", "../..");
	mk_link(dir, "chain", "lib/../../lp");
	hpath(target, fx.real, "etc");
	mk_link(dir, "host", target);
}

struct result {
	int errnum;
	dev_t dev;
	ino_t ino;
};

static struct result cmp_open(struct unpkg_root *root, const char *path,
			      int flags)
{
	struct result r = { 0, 0, 0 };
	struct unpkg_err err;
	struct stat st;
	int fd;

	unpkg_err_init(&err);
	fd = unpkg_root_openat(root, path, flags, 0600, &err);
	if (fd >= 0)
		assert_inside(fd);
	if (fd < 0) {
		ck_assert_int_eq(err.code, UNPKG_ERR_SYS);
		r.errnum = err.errnum;
		return r;
	}
	ck_assert(fstat(fd, &st) == 0);
	ck_assert(close(fd) == 0);
	r.dev = st.st_dev;
	r.ino = st.st_ino;
	return r;
}

/* Opens every path of a list with a set of flags through both resolvers,
 * on the same tree, and wants the same file or the same error. */
START_TEST(test_same_lookups)
{
	static const int flagsets[] = {
		O_RDONLY, O_RDONLY | O_NOFOLLOW, O_PATH, O_PATH | O_NOFOLLOW,
		O_RDONLY | O_DIRECTORY, O_PATH | O_DIRECTORY | O_NOFOLLOW,
	};
	struct unpkg_root *walk = NULL, *kern = NULL;
	struct unpkg_err err;
	char dir[PATH_MAX];
	size_t i, j;

	fx_init(0);
	if (!unpkg_root_has_openat2(fx.root)) {
		tu_skip_part("the same lookups through both resolvers",
			     "no openat2(RESOLVE_IN_ROOT) here");
		fx_done();
		return;
	}
	hpath(dir, fx.real, "top/root/cmp");
	mk_dir(fx.real, "top/root/cmp");
	cmp_layout(dir);
	unpkg_err_init(&err);
	ck_assert(unpkg_root_open(dir, 0, &kern, &err) == 0);
	ck_assert(unpkg_root_has_openat2(kern));
	ck_assert(unpkg_root_open(dir, UNPKG_ROOT_NO_OPENAT2, &walk,
				  &err) == 0);
	for (i = 0; i < sizeof(cmp_paths) / sizeof(cmp_paths[0]); i++) {
		for (j = 0; j < sizeof(flagsets) / sizeof(flagsets[0]); j++) {
			struct result a = cmp_open(kern, cmp_paths[i],
						   flagsets[j]);
			struct result b = cmp_open(walk, cmp_paths[i],
						   flagsets[j]);

			ck_assert_msg(a.errnum == b.errnum && a.dev == b.dev &&
				      a.ino == b.ino,
				      "\"%s\" flags %#x: openat2 %s ino %lu, "
				      "walk %s ino %lu", cmp_paths[i],
				      (unsigned int)flagsets[j],
				      strerror(a.errnum), (unsigned long)a.ino,
				      strerror(b.errnum), (unsigned long)b.ino);
		}
	}
	unpkg_root_free(kern);
	unpkg_root_free(walk);
	fx_done();
}
END_TEST

static const struct {
	const char *path;
	int flags;
} cmp_creates[] = {
	{ "dang", O_CREAT }, { "dang", O_CREAT | O_EXCL },
	{ "dang", O_CREAT | O_NOFOLLOW }, { "n1", O_CREAT | O_EXCL },
	{ "n1", O_CREAT | O_EXCL }, { "n2/", O_CREAT }, { "etc/", O_CREAT },
	{ ".", O_CREAT | O_EXCL }, { "..", O_CREAT }, { "l/../n3", O_CREAT },
	{ "up/n4", O_CREAT | O_EXCL }, { "lib/n5", O_CREAT | O_NOFOLLOW },
	{ "lp", O_CREAT | O_TRUNC }, { "nodir/n6", O_CREAT },
	{ "etc/passwd/n7", O_CREAT }, { "self", O_CREAT }, { "ld/", O_CREAT },
	{ "host/n8", O_CREAT | O_EXCL },
};

/* The same creations on two copies of a tree, one per resolver, must give
 * the same errors and leave the same trees. */
START_TEST(test_same_creates)
{
	struct unpkg_root *walk = NULL, *kern = NULL;
	struct unpkg_err err;
	char kdir[PATH_MAX], wdir[PATH_MAX], want[PATH_MAX + 32];
	char *klist, *wlist;
	size_t i;

	fx_init(0);
	if (!unpkg_root_has_openat2(fx.root)) {
		tu_skip_part("the same creations through both resolvers",
			     "no openat2(RESOLVE_IN_ROOT) here");
		fx_done();
		return;
	}
	hpath(kdir, fx.dir, "k");
	hpath(wdir, fx.dir, "w");
	mk_dir(fx.dir, "k");
	mk_dir(fx.dir, "w");
	cmp_layout(kdir);
	cmp_layout(wdir);
	unpkg_err_init(&err);
	ck_assert(unpkg_root_open(kdir, 0, &kern, &err) == 0);
	ck_assert(unpkg_root_open(wdir, UNPKG_ROOT_NO_OPENAT2, &walk, &err)
		  == 0);
	for (i = 0; i < sizeof(cmp_creates) / sizeof(cmp_creates[0]); i++) {
		struct result a = cmp_open(kern, cmp_creates[i].path,
					   O_WRONLY | cmp_creates[i].flags);
		struct result b = cmp_open(walk, cmp_creates[i].path,
					   O_WRONLY | cmp_creates[i].flags);

		ck_assert_msg(a.errnum == b.errnum, "\"%s\" flags %#x: "
			      "openat2 %s, walk %s", cmp_creates[i].path,
			      (unsigned int)cmp_creates[i].flags,
			      strerror(a.errnum), strerror(b.errnum));
	}
	unpkg_root_free(kern);
	unpkg_root_free(walk);
	klist = listing(kdir, "", 0);
	wlist = listing(wdir, "", 0);
	ck_assert_str_eq(klist, wlist);
	/* And the creations did happen, inside. */
	ck_assert_ptr_nonnull(strstr(klist, "\n/nothere 100600 0\n"));
	ck_assert_ptr_nonnull(strstr(klist, "\n/n1 100600 0\n"));
	snprintf(want, sizeof(want), "\n%s/etc/n8 100600 0\n", fx.real);
	ck_assert_ptr_nonnull(strstr(klist, want));
	free(klist);
	free(wlist);
	fx_done();
}
END_TEST

static Suite *fsroot_suite(void)
{
	Suite *s = suite_create("fsroot");
	TCase *both = tcase_create("both");
	TCase *cmp = tcase_create("compare");

	/* _i == 0: openat2 where available; _i == 1: the walk. */
	tcase_add_loop_test(both, test_plain, 0, 2);
	tcase_add_loop_test(both, test_dotdot, 0, 2);
	tcase_add_loop_test(both, test_absolute_links, 0, 2);
	tcase_add_loop_test(both, test_relative_escapes, 0, 2);
	tcase_add_loop_test(both, test_chains, 0, 2);
	tcase_add_loop_test(both, test_loops, 0, 2);
	tcase_add_loop_test(both, test_merged_usr, 0, 2);
	tcase_add_loop_test(both, test_last_symlink, 0, 2);
	tcase_add_loop_test(both, test_create_dangling, 0, 2);
	tcase_add_loop_test(both, test_create_plain, 0, 2);
	tcase_add_loop_test(both, test_errors, 0, 2);
	tcase_add_loop_test(both, test_open_parent, 0, 2);
	tcase_add_loop_test(both, test_trunc_through_link, 0, 2);
	tcase_add_loop_test(both, test_root_object, 0, 2);
	suite_add_tcase(s, both);
	tcase_add_test(cmp, test_probe);
	tcase_add_loop_test(cmp, test_seccomp_fallback, 0, 3);
	tcase_add_test(cmp, test_same_lookups);
	tcase_add_test(cmp, test_same_creates);
	suite_add_tcase(s, cmp);
	return s;
}

int main(void)
{
	return tu_run_suite(fsroot_suite());
}
