/* fuzz_extract.c - libFuzzer target for the whole unpack path: the
 * container reader, path resolution beneath the root and extraction into
 * staged entries, then an abort.
 *
 * The input is a .deb file, put in a memory file.  Each input is extracted
 * twice into the same throwaway root, once with the kernel's openat2()
 * resolver and once with the user-space walk, through a commit object
 * with UNPKG_SYNC_NONE that is then aborted.  The root is prepared with
 * the things hostile packages aim at: files and directories that already
 * exist, a merged-/usr style symlink, and symlinks that point out of it
 * ("/", "../..", "../sentinel").  Beside the root lie a sentinel directory
 * and the working directory of the process while an input runs.
 *
 * After every extraction, before the abort, everything beside the root
 * (the sentinel and the working directory) must be exactly as it was; after
 * the abort, the root too: an abort puts the root back, and nothing may
 * ever be written beside it, not even for a while.  Any
 * difference aborts the process with the two listings.  A failure must
 * come with an error code and a message.
 *
 * The scratch directory is made under $UNPKG_FUZZ_DIR, else $TMPDIR, else
 * /tmp, and removed at exit.  RLIMIT_FSIZE caps files at 8 MiB (SIGXFSZ
 * ignored, so a larger one fails with EFBIG), since an entry may claim any
 * size.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commit.h"
#include "deb.h"
#include "err.h"
#include "extract.h"
#include "fsroot.h"
#include "strmap.h"

#include "deb_mutator.h"
#include "fuzz-common.h"

#define FILE_CAP (8 << 20)

const char fuzz_target_name[] = "fuzz_extract";

static int memfd = -1;
static char base[4096];
static char rootpath[4096 + 8];
static char *expected;		/* the listing of `base` after setup */
static char *expected_outside;	/* the same without the root */
/* The working directory while an input runs (base/cwd: a path resolved
 * against it by mistake lands where the listing sees it), and libFuzzer's
 * own, restored after each input for its corpus and artifact paths. */
static int cwd_fd = -1, home_fd = -1;

struct sbuf {
	char *s;
	size_t len, cap;
};

static void sb_add(struct sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sb_add(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s != NULL ? b->s + b->len : NULL,
			      b->s != NULL ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0)
			FAIL("vsnprintf failed");
		if (b->s != NULL && (size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		b->cap = b->cap * 2 + (size_t)n + 256;
		b->s = realloc(b->s, b->cap);
		if (b->s == NULL)
			FAIL("out of memory");
	}
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Append one line per entry under directory fd `dfd` (named `rel`), sorted
 * by name, recursing into directories: type, mode, owner, size, link
 * target, and for non-directories the inode and a hash of the content. */
static void list_dir(struct sbuf *b, int dfd, const char *rel, int skip_root)
{
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	DIR *d;
	int fd = dup(dfd);

	if (fd < 0 || (d = fdopendir(fd)) == NULL)
		FAIL("cannot read %s/%s: %s", base, rel, strerror(errno));
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (n == cap) {
			cap = cap * 2 + 16;
			names = realloc(names, cap * sizeof(*names));
			if (names == NULL)
				FAIL("out of memory");
		}
		names[n] = strdup(de->d_name);
		if (names[n++] == NULL)
			FAIL("out of memory");
	}
	closedir(d);
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_names);
	for (i = 0; i < n; i++) {
		struct stat st;
		char link[4096];
		char sub[8192];

		snprintf(sub, sizeof(sub), "%s/%s", rel, names[i]);
		if (skip_root && strcmp(sub, "./root") == 0) {
			free(names[i]);
			continue;
		}
		if (fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
			FAIL("stat %s: %s", sub, strerror(errno));
		sb_add(b, "%s %o %u:%u", sub, (unsigned)st.st_mode,
		       (unsigned)st.st_uid, (unsigned)st.st_gid);
		if (S_ISLNK(st.st_mode)) {
			ssize_t l = readlinkat(dfd, names[i], link,
					       sizeof(link) - 1);

			if (l < 0)
				FAIL("readlink %s: %s", sub, strerror(errno));
			link[l] = '\0';
			sb_add(b, " -> %s", link);
		}
		if (!S_ISDIR(st.st_mode))
			sb_add(b, " ino=%llu size=%lld nlink=%lu",
			       (unsigned long long)st.st_ino,
			       (long long)st.st_size,
			       (unsigned long)st.st_nlink);
		if (S_ISREG(st.st_mode)) {
			unsigned long h = 5381;
			unsigned char buf[4096];
			ssize_t r;
			int f = openat(dfd, names[i], O_RDONLY | O_NOFOLLOW |
						      O_CLOEXEC);

			if (f < 0)
				FAIL("open %s: %s", sub, strerror(errno));
			while ((r = read(f, buf, sizeof(buf))) > 0) {
				ssize_t k;

				for (k = 0; k < r; k++)
					h = h * 33 + buf[k];
			}
			close(f);
			sb_add(b, " hash=%lx", h);
		}
		sb_add(b, "\n");
		if (S_ISDIR(st.st_mode)) {
			int sfd = openat(dfd, names[i], O_RDONLY | O_DIRECTORY |
							O_NOFOLLOW | O_CLOEXEC);

			if (sfd < 0)
				FAIL("open %s: %s", sub, strerror(errno));
			list_dir(b, sfd, sub, skip_root);
			close(sfd);
		}
		free(names[i]);
	}
	free(names);
}

/* The scratch directory, or (skip_root) all of it but the root. */
static char *listing(int skip_root)
{
	struct sbuf b = { 0 };
	int fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		FAIL("open %s: %s", base, strerror(errno));
	sb_add(&b, "%s", "");
	list_dir(&b, fd, ".", skip_root);
	close(fd);
	return b.s;
}

static void put_file(const char *rel, const char *content)
{
	char path[8192];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, content, strlen(content)) !=
			      (ssize_t)strlen(content) ||
	    close(fd) < 0)
		FAIL("cannot create %s: %s", path, strerror(errno));
}

static void put_dir(const char *rel)
{
	char path[8192];

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	if (mkdir(path, 0755) < 0)
		FAIL("cannot create %s: %s", path, strerror(errno));
}

static void put_link(const char *rel, const char *target)
{
	char path[8192];

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	if (symlink(target, path) < 0)
		FAIL("cannot create %s: %s", path, strerror(errno));
}

static void remove_tree(int dfd, const char *name)
{
	struct dirent *de;
	DIR *d;
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
				   O_CLOEXEC);

	if (fd < 0) {
		unlinkat(dfd, name, 0);
		return;
	}
	d = fdopendir(fd);
	if (d == NULL) {
		close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			remove_tree(fd, de->d_name);
	closedir(d);
	unlinkat(dfd, name, AT_REMOVEDIR);
}

static void cleanup(void)
{
	if (base[0] != '\0') {
		if (chdir("/") < 0)
			return;
		remove_tree(AT_FDCWD, base);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("UNPKG_FUZZ_DIR");
	struct rlimit rl = { FILE_CAP, FILE_CAP };
	char cwd[8192];

	(void)argc;
	(void)argv;
	if (tmp == NULL || *tmp == '\0')
		tmp = getenv("TMPDIR");
	if (tmp == NULL || *tmp == '\0')
		tmp = "/tmp";
	snprintf(base, sizeof(base), "%s/unpkg-fuzz-extract.XXXXXX", tmp);
	if (mkdtemp(base) == NULL)
		FAIL("mkdtemp %s: %s", base, strerror(errno));
	atexit(cleanup);
	snprintf(rootpath, sizeof(rootpath), "%s/root", base);
	put_dir("cwd");
	put_dir("sentinel");
	put_file("sentinel/keep", "outside the root\n");
	put_dir("root");
	put_dir("root/etc");
	put_file("root/etc/existing", "old content\n");
	put_dir("root/etc/empty");
	put_dir("root/usr");
	put_dir("root/usr/bin");
	put_file("root/usr/bin/tool", "#!/bin/sh\n");
	put_link("root/bin", "usr/bin");
	put_link("root/lnk", "/");
	put_link("root/up", "../..");
	put_link("root/out", "../sentinel");
	put_link("root/etc/dangling", "/nowhere/file");
	expected = listing(0);
	expected_outside = listing(1);
	snprintf(cwd, sizeof(cwd), "%s/cwd", base);
	cwd_fd = open(cwd, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	home_fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cwd_fd < 0 || home_fd < 0)
		FAIL("cannot open %s or the working directory: %s", cwd,
		     strerror(errno));
	signal(SIGXFSZ, SIG_IGN);
	if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
		FAIL("setrlimit: %s", strerror(errno));
	memfd = fuzz_memfd("fuzz.deb");
	return 0;
}

/* The conffiles of the package, as install.c reads them: absolute paths,
 * one per line (flags after a blank ignored here). */
static void read_conffiles(const struct unpkg_deb *deb,
			   struct unpkg_strmap *map, char ***keys, size_t *n)
{
	const struct unpkg_deb_member *m = unpkg_deb_member(deb, "conffiles");
	const char *s, *end;

	if (m == NULL)
		return;
	s = (const char *)m->data;
	end = s + m->size;
	while (s < end) {
		const char *eol = memchr(s, '\n', (size_t)(end - s));
		size_t len;
		char *key;

		if (eol == NULL)
			eol = end;
		len = strcspn(s, " \n");
		if (len > (size_t)(eol - s))
			len = (size_t)(eol - s);
		if (len > 1 && s[0] == '/') {
			key = strndup(s, len);
			*keys = realloc(*keys, (*n + 1) * sizeof(**keys));
			if (key == NULL || *keys == NULL)
				FAIL("out of memory");
			(*keys)[(*n)++] = key;
			if (unpkg_strmap_put(map, key, key, NULL, NULL) < 0)
				FAIL("out of memory");
		}
		s = eol + 1;
	}
}

static void extract_once(unsigned int root_flags)
{
	struct unpkg_root *root = NULL;
	struct unpkg_commit *commit = NULL;
	struct unpkg_deb *deb = NULL;
	struct unpkg_filelist list;
	struct unpkg_stats stats;
	struct unpkg_strmap conffiles;
	struct unpkg_err err;
	char **keys = NULL;
	size_t nkeys = 0, i;
	char *now;

	memset(&stats, 0, sizeof(stats));
	unpkg_strmap_init(&conffiles);
	unpkg_filelist_init(&list);
	unpkg_err_init(&err);
	if (lseek(memfd, 0, SEEK_SET) != 0)
		FAIL("lseek: %s", strerror(errno));
	if (unpkg_root_open(rootpath, root_flags, &root, &err) < 0)
		FAIL("cannot open the root: %s", err.msg);
	if (unpkg_commit_new(UNPKG_SYNC_NONE, &stats, NULL, 0, &commit,
			     &err) < 0)
		FAIL("cannot make a commit object: %s", err.msg);
	if (unpkg_deb_open_fd(memfd, "fuzz.deb", &deb, &err) == 0) {
		struct unpkg_extract_opts o = {
			.root = root,
			.commit = commit,
			.conffiles = &conffiles,
			.stats = &stats,
		};

		read_conffiles(deb, &conffiles, &keys, &nkeys);
		if (unpkg_extract(deb, &o, &list, &err) < 0) {
			fuzz_check_err(&err, "unpkg_extract");
		} else {
			for (i = 0; i < list.count; i++)
				if (list.files[i].path[0] != '/')
					FAIL("file list entry '%s'",
					     list.files[i].path);
		}
	} else {
		fuzz_check_err(&err, "unpkg_deb_open_fd");
	}
	/* Before the abort: an entry staged outside the root would be
	 * removed by it again, so look now. */
	now = listing(1);
	if (strcmp(now, expected_outside) != 0) {
		fprintf(stderr, "fuzz_extract: something was written beside "
			"the root (%s resolver; last error: %s)\n--- expected"
			"\n%s--- found\n%s", root_flags ? "user-space" :
			"openat2", err.msg, expected_outside, now);
		abort();
	}
	free(now);
	unpkg_commit_abort(commit);
	unpkg_commit_free(commit);
	unpkg_deb_free(deb);
	unpkg_root_free(root);
	unpkg_filelist_destroy(&list);
	unpkg_strmap_destroy(&conffiles);
	for (i = 0; i < nkeys; i++)
		free(keys[i]);
	free(keys);

	now = listing(0);
	if (strcmp(now, expected) != 0) {
		fprintf(stderr, "fuzz_extract: the scratch directory changed "
			"(%s resolver; last error: %s)\n--- expected\n%s--- "
			"found\n%s", root_flags ? "user-space" : "openat2",
			err.msg, expected, now);
		abort();
	}
	free(now);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_load(memfd, data, size);
	/* libFuzzer installs its own SIGXFSZ handler after initialisation;
	 * a file past RLIMIT_FSIZE must fail with EFBIG instead. */
	signal(SIGXFSZ, SIG_IGN);
	if (fchdir(cwd_fd) < 0)
		FAIL("fchdir: %s", strerror(errno));
	extract_once(0);
	extract_once(UNPKG_ROOT_NO_OPENAT2);
	if (fchdir(home_fd) < 0)
		FAIL("fchdir: %s", strerror(errno));
	return 0;
}
