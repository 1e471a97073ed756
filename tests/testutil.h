/* testutil.h - helpers shared by the Check test programs.
 *
 * tu_build_deb() writes a .deb from a description, with libarchive's
 * writers, so tests can make well-formed and deliberately broken packages
 * without external tools.
 */
#ifndef UNPKG_TESTUTIL_H
#define UNPKG_TESTUTIL_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

/* One tar entry.  type: 'f' file, 'd' dir, 'l' symlink, 'h' hardlink,
 * 'p' fifo, 'c' char dev, 'b' block dev.  For 'f', `data` is the content
 * (size = strlen(data) unless `size` is non-zero, in which case `size`
 * bytes of a repeating pattern are generated when data is NULL: byte i is
 * i % 251).  For 'l' and 'h', `data` is the link target.  The path is
 * written verbatim (so tests can use "./usr/", "/etc/x" or "../x").
 * mode 0 means 0644 for files and 0755 for dirs; uid/gid default to 0,
 * names to "root". */
struct tu_entry {
	char type;
	const char *path;
	const char *data;
	mode_t mode;
	size_t size;
	uid_t uid;
	gid_t gid;
	const char *uname;
	const char *gname;
	time_t mtime;
	dev_t rdev;
};

/* An extra ar member, written verbatim (for broken-container tests). */
struct tu_member {
	const char *name;
	const void *data;
	size_t size;
};

/* A package.  NULL/0 fields take defaults: debian_binary "2.0\n",
 * compression "gz" for both tars ("none", "gz", "xz", "zst", "bz2").
 * control_members are extra control.tar members (type 'f', or anything to
 * test rejection) after ./control.  If `members` is set, the ar archive
 * consists of exactly those members instead (in that order) and nothing
 * else is generated. */
struct tu_deb {
	const char *control;		/* the control file text */
	const struct tu_entry *control_members;
	size_t n_control_members;
	const struct tu_entry *entries;	/* data.tar */
	size_t n_entries;
	const char *debian_binary;
	const char *control_comp;
	const char *data_comp;
	const struct tu_member *members;
	size_t n_members;
};

/* Write the package to `path`.  Aborts the test (ck_abort) on failure. */
void tu_build_deb(const char *path, const struct tu_deb *spec);

/* Build a compressed tar in memory ("control.tar" / "data.tar" content)
 * from entries; returns malloc'd bytes in *out, their count in *len. */
void tu_build_tar(const struct tu_entry *entries, size_t n, const char *comp,
		  void **out, size_t *len);

/* A fresh temporary directory (malloc'd path); tu_rm_rf() removes a tree. */
char *tu_mkdtemp(void);
void tu_rm_rf(const char *path);

/* Mount an overlayfs at TOP/ovl over TOP/lower (made if missing, else
 * as the caller filled it), with TOP/upper and TOP/work (made) and the
 * further options `extra` (or NULL), in a mount namespace of the calling
 * process's own (Check runs each test in a process of its own: the mount
 * goes with it).  0, or -1 with the reason in *why (not root, no
 * overlayfs here). */
int tu_overlay_mount(const char *top, const char *extra, const char **why);

/* A root to install into: `tmp` a fresh temporary directory, `root`
 * TMP/root (made), `admin` its admindir ROOT/var/lib/dpkg (not made: the
 * first run creates it).  tu_root_destroy() removes TMP. */
struct tu_root {
	char *tmp;
	char root[4096];
	char admin[4200];
};
void tu_root_init(struct tu_root *r);
void tu_root_destroy(struct tu_root *r);

/* ROOT/rel, in one of four static buffers (four may be in use at once). */
const char *tu_root_at(const struct tu_root *r, const char *rel);

/* Is there anything at ROOT/rel (lstat: a dangling link counts)? */
int tu_root_exists(const struct tu_root *r, const char *rel);

/* The package NAME 1.0, Architecture all, with the control lines `extra`
 * (or NULL), data entries `e` and control members `cm`, written to
 * TMP/NAME.deb; its path, in one of four static buffers. */
const char *tu_root_deb(const struct tu_root *r, const char *name,
			const char *extra, const struct tu_entry *e, size_t n,
			const struct tu_entry *cm, size_t ncm);

/* Read a whole file into a malloc'd NUL-terminated buffer (NULL if it
 * cannot be read); *len may be NULL. */
char *tu_read_file(const char *path, size_t *len);

/* Write a file (ck_abort on failure), creating it with `mode`. */
void tu_write_file(const char *path, const char *data, mode_t mode);

/* Run argv[0] (looked up in PATH) with stdout and stderr sent to
 * /dev/null; its exit status, or -1 if it could not be run or did not
 * exit normally. */
int tu_run_quiet(const char *const argv[]);

/* The whole test program cannot run here: prints "PROGRAM: SKIP: WHY"
 * on stderr, the reason run-tests.sh takes from the log (as the shell
 * tests' skip does), and exits 77. */
_Noreturn void tu_skip(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* Unless the caller is root, tu_skip("needs root (WHAT)"): for a test
 * program every test of which needs root (for WHAT). */
void tu_require_root(const char *what);

/* A part of a test program (what) cannot run here; the rest goes on.
 * Prints "PROGRAM: SKIP PART: WHAT: WHY" on stderr, the line run-tests.sh
 * collects from the logs (as the shell tests' skip_part does). */
void tu_skip_part(const char *what, const char *why);

/* Install a seccomp filter in the calling process under which system call
 * `nr` fails with `errnum` (for testing fallbacks; call it in a forked
 * child).  Returns 0, or -1 with errno set. */
int tu_deny_syscall(long nr, int errnum);

/* Run a Check suite and return the process exit status (0 if all passed). */
#include <check.h>
int tu_run_suite(Suite *s);

#endif
