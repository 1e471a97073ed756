/* testutil.c - helpers shared by the Check test programs. */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/seccomp.h>

#include "testutil.h"

/* Pattern used for generated file content: byte i is (i % 251).  A prime
 * period keeps it from lining up with any block size, so a block dropped
 * or repeated by a reader shows up as a mismatch. */
#define PATTERN_PERIOD 251

static const char default_control[] =
	"Package: unpkg-test\n"
	"Version: 1.0\n"
	"Architecture: all\n"
	"Maintainer: unpkg tests <tests@example.invalid>\n"
	"Description: package built by the unpkg test suite\n";

struct membuf {
	unsigned char *data;
	size_t len;
	size_t cap;
};

static la_ssize_t membuf_write(struct archive *a, void *client,
			       const void *buf, size_t n)
{
	struct membuf *mb = client;

	if (n > SIZE_MAX - mb->len) {
		archive_set_error(a, ENOMEM, "buffer too large");
		return -1;
	}
	if (mb->len + n > mb->cap) {
		size_t cap = mb->cap ? mb->cap : 4096;
		unsigned char *p;

		while (cap < mb->len + n)
			cap *= 2;
		p = realloc(mb->data, cap);
		if (p == NULL) {
			archive_set_error(a, ENOMEM, "out of memory");
			return -1;
		}
		mb->data = p;
		mb->cap = cap;
	}
	memcpy(mb->data + mb->len, buf, n);
	mb->len += n;
	return (la_ssize_t)n;
}

static void check_ar(struct archive *a, int r, const char *what)
{
	if (r < ARCHIVE_WARN)
		ck_abort_msg("testutil: %s: %s", what,
			     archive_error_string(a) ? archive_error_string(a)
						     : "(no message)");
}

/* Returns the member name suffix for `comp` ("" for none). */
static const char *comp_suffix(const char *comp)
{
	if (comp == NULL)
		comp = "gz";
	if (strcmp(comp, "none") == 0)
		return "";
	if (strcmp(comp, "gz") == 0)
		return ".gz";
	if (strcmp(comp, "xz") == 0)
		return ".xz";
	if (strcmp(comp, "zst") == 0)
		return ".zst";
	if (strcmp(comp, "bz2") == 0)
		return ".bz2";
	if (strcmp(comp, "lzma") == 0)
		return ".lzma";
	ck_abort_msg("testutil: unknown compression '%s'", comp);
	return NULL;
}

static void add_filter(struct archive *a, const char *comp)
{
	int r;

	if (comp == NULL)
		comp = "gz";
	if (strcmp(comp, "none") == 0)
		r = archive_write_add_filter_none(a);
	else if (strcmp(comp, "gz") == 0)
		r = archive_write_add_filter_gzip(a);
	else if (strcmp(comp, "xz") == 0)
		r = archive_write_add_filter_xz(a);
	else if (strcmp(comp, "zst") == 0)
		r = archive_write_add_filter_zstd(a);
	else if (strcmp(comp, "bz2") == 0)
		r = archive_write_add_filter_bzip2(a);
	else if (strcmp(comp, "lzma") == 0)
		r = archive_write_add_filter_lzma(a);
	else {
		ck_abort_msg("testutil: unknown compression '%s'", comp);
		return;
	}
	check_ar(a, r, comp);
}

static void write_pattern(struct archive *a, size_t size)
{
	unsigned char buf[PATTERN_PERIOD * 256];
	size_t done = 0;
	size_t i;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i % PATTERN_PERIOD);
	/* Chunks are whole periods, so each starts at pattern phase 0. */
	while (done < size) {
		size_t n = size - done < sizeof(buf) ? size - done : sizeof(buf);
		la_ssize_t w = archive_write_data(a, buf, n);

		if (w < 0 || (size_t)w != n)
			check_ar(a, ARCHIVE_FATAL, "write data");
		done += n;
	}
}

static void write_entry(struct archive *a, const struct tu_entry *e)
{
	struct archive_entry *ae = archive_entry_new();
	mode_t perm = e->mode & 07777;
	size_t size = 0;
	const char *content = NULL;
	int r;

	ck_assert_msg(ae != NULL, "testutil: archive_entry_new failed");
	ck_assert_msg(e->path != NULL, "testutil: entry without path");
	archive_entry_copy_pathname(ae, e->path);
	switch (e->type) {
	case 'f':
		archive_entry_set_filetype(ae, AE_IFREG);
		content = e->data;
		if (e->size != 0)
			size = e->size;
		else if (content != NULL)
			size = strlen(content);
		if (perm == 0)
			perm = 0644;
		break;
	case 'd':
		archive_entry_set_filetype(ae, AE_IFDIR);
		if (perm == 0)
			perm = 0755;
		break;
	case 'l':
		ck_assert_msg(e->data != NULL, "testutil: symlink without target");
		archive_entry_set_filetype(ae, AE_IFLNK);
		archive_entry_copy_symlink(ae, e->data);
		if (perm == 0)
			perm = 0777;
		break;
	case 'h':
		ck_assert_msg(e->data != NULL, "testutil: hardlink without target");
		archive_entry_set_filetype(ae, AE_IFREG);
		archive_entry_copy_hardlink(ae, e->data);
		if (perm == 0)
			perm = 0644;
		break;
	case 'p':
		archive_entry_set_filetype(ae, AE_IFIFO);
		if (perm == 0)
			perm = 0644;
		break;
	case 'c':
	case 'b':
		archive_entry_set_filetype(ae, e->type == 'c' ? AE_IFCHR
							       : AE_IFBLK);
		archive_entry_set_rdev(ae, e->rdev);
		if (perm == 0)
			perm = 0644;
		break;
	default:
		archive_entry_free(ae);
		ck_abort_msg("testutil: unknown entry type '%c'", e->type);
		return;
	}
	archive_entry_set_perm(ae, perm);
	archive_entry_set_size(ae, (la_int64_t)size);
	archive_entry_set_uid(ae, e->uid);
	archive_entry_set_gid(ae, e->gid);
	archive_entry_copy_uname(ae, e->uname ? e->uname : "root");
	archive_entry_copy_gname(ae, e->gname ? e->gname : "root");
	archive_entry_set_mtime(ae, e->mtime, 0);
	r = archive_write_header(a, ae);
	archive_entry_free(ae);
	check_ar(a, r, e->path);
	if (size == 0)
		return;
	if (content != NULL) {
		la_ssize_t w = archive_write_data(a, content, size);

		if (w < 0 || (size_t)w != size)
			check_ar(a, ARCHIVE_FATAL, e->path);
	} else {
		write_pattern(a, size);
	}
}

void tu_build_tar(const struct tu_entry *entries, size_t n, const char *comp,
		  void **out, size_t *len)
{
	struct membuf mb = { NULL, 0, 0 };
	struct archive *a = archive_write_new();
	size_t i;

	ck_assert_msg(a != NULL, "testutil: archive_write_new failed");
	/* dpkg-deb writes GNU tar; so do we. */
	check_ar(a, archive_write_set_format_gnutar(a), "gnutar");
	add_filter(a, comp);
	/* No padding of the (compressed) stream beyond the tar end marker. */
	check_ar(a, archive_write_set_bytes_per_block(a, 0), "block size");
	check_ar(a, archive_write_open(a, &mb, NULL, membuf_write, NULL),
		 "open");
	for (i = 0; i < n; i++)
		write_entry(a, &entries[i]);
	check_ar(a, archive_write_close(a), "close");
	archive_write_free(a);
	if (mb.data == NULL) {
		mb.data = malloc(1);
		ck_assert_msg(mb.data != NULL, "testutil: out of memory");
	}
	*out = mb.data;
	*len = mb.len;
}

static void add_ar_member(struct archive *a, const char *name,
			  const void *data, size_t size)
{
	struct archive_entry *ae = archive_entry_new();
	int r;

	ck_assert_msg(ae != NULL, "testutil: archive_entry_new failed");
	archive_entry_copy_pathname(ae, name);
	archive_entry_set_filetype(ae, AE_IFREG);
	archive_entry_set_perm(ae, 0644);
	archive_entry_set_size(ae, (la_int64_t)size);
	archive_entry_set_mtime(ae, 0, 0);
	r = archive_write_header(a, ae);
	archive_entry_free(ae);
	check_ar(a, r, name);
	if (size > 0) {
		la_ssize_t w = archive_write_data(a, data, size);

		if (w < 0 || (size_t)w != size)
			check_ar(a, ARCHIVE_FATAL, name);
	}
}

void tu_build_deb(const char *path, const struct tu_deb *spec)
{
	struct archive *a = archive_write_new();
	size_t i;

	ck_assert_msg(a != NULL, "testutil: archive_write_new failed");
	/* The BSD variant writes short names space-padded without the SysV
	 * "/" terminator: byte for byte what dpkg-deb writes. */
	check_ar(a, archive_write_set_format_ar_bsd(a), "ar");
	check_ar(a, archive_write_add_filter_none(a), "ar filter");
	check_ar(a, archive_write_set_bytes_per_block(a, 0), "block size");
	check_ar(a, archive_write_open_filename(a, path), path);

	if (spec->members != NULL) {
		for (i = 0; i < spec->n_members; i++)
			add_ar_member(a, spec->members[i].name,
				      spec->members[i].data,
				      spec->members[i].size);
	} else {
		const char *db = spec->debian_binary ? spec->debian_binary
						     : "2.0\n";
		size_t nctl = 2 + spec->n_control_members;
		struct tu_entry *ctl = calloc(nctl, sizeof(*ctl));
		char name[64];
		void *buf = NULL;
		size_t len = 0;

		ck_assert_msg(ctl != NULL, "testutil: out of memory");
		ctl[0].type = 'd';
		ctl[0].path = "./";
		ctl[1].type = 'f';
		ctl[1].path = "./control";
		ctl[1].data = spec->control ? spec->control : default_control;
		for (i = 0; i < spec->n_control_members; i++)
			ctl[2 + i] = spec->control_members[i];

		add_ar_member(a, "debian-binary", db, strlen(db));

		tu_build_tar(ctl, nctl, spec->control_comp, &buf, &len);
		free(ctl);
		snprintf(name, sizeof(name), "control.tar%s",
			 comp_suffix(spec->control_comp));
		add_ar_member(a, name, buf, len);
		free(buf);

		tu_build_tar(spec->entries, spec->n_entries, spec->data_comp,
			     &buf, &len);
		snprintf(name, sizeof(name), "data.tar%s",
			 comp_suffix(spec->data_comp));
		add_ar_member(a, name, buf, len);
		free(buf);
	}
	check_ar(a, archive_write_close(a), path);
	archive_write_free(a);
}

char *tu_mkdtemp(void)
{
	const char *base = getenv("TMPDIR");
	char *path;
	size_t n;

	if (base == NULL || base[0] == '\0')
		base = "/tmp";
	n = strlen(base) + sizeof("/unpkg-test-XXXXXX");
	path = malloc(n);
	ck_assert_msg(path != NULL, "testutil: out of memory");
	snprintf(path, n, "%s/unpkg-test-XXXXXX", base);
	if (mkdtemp(path) == NULL)
		ck_abort_msg("testutil: mkdtemp %s: %s", path, strerror(errno));
	return path;
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	/* A directory we may not traverse (mode 0 in a permission test) is
	 * made traversable and walked again by the caller's retry. */
	if (flag == FTW_DNR) {
		if (chmod(path, 0700) != 0)
			return -1;
		return 1;
	}
	if (remove(path) != 0 && errno != ENOENT)
		return -1;
	return 0;
}

int tu_overlay_mount(const char *top, const char *extra, const char **why)
{
	static const char *const names[] = { "lower", "upper", "work", "ovl" };
	char dirs[4][4096], opts[3 * 4096 + 128];
	int i;

	for (i = 0; i < 4; i++) {
		snprintf(dirs[i], sizeof(dirs[i]), "%s/%s", top, names[i]);
		if (mkdir(dirs[i], 0755) < 0 && errno != EEXIST)
			ck_abort_msg("mkdir %s: %s", dirs[i], strerror(errno));
	}
	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s%s%s",
		 dirs[0], dirs[1], dirs[2], extra != NULL ? "," : "",
		 extra != NULL ? extra : "");
	if (geteuid() != 0) {
		*why = "not root";
		return -1;
	}
	/* in a mount namespace of the test's own process, so that the
	 * overlay goes with it even where a failed check ends it early */
	if (unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		*why = "cannot make a mount namespace";
		return -1;
	}
	if (mount("overlay", dirs[3], "overlay", 0, opts) < 0) {
		*why = "cannot mount an overlayfs here";
		return -1;
	}
	return 0;
}

void tu_rm_rf(const char *path)
{
	int tries;
	int r = 0;

	if (path == NULL)
		return;
	for (tries = 0; tries < 8; tries++) {
		r = nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
		if (r == 0 || (r < 0 && errno == ENOENT))
			return;
		if (r < 0)
			break;
	}
	ck_abort_msg("testutil: cannot remove %s: %s", path,
		     r < 0 ? strerror(errno) : "unreadable directory");
}

void tu_root_init(struct tu_root *r)
{
	memset(r, 0, sizeof(*r));
	r->tmp = tu_mkdtemp();
	snprintf(r->root, sizeof(r->root), "%s/root", r->tmp);
	snprintf(r->admin, sizeof(r->admin), "%s/var/lib/dpkg", r->root);
	ck_assert_int_eq(mkdir(r->root, 0755), 0);
}

void tu_root_destroy(struct tu_root *r)
{
	tu_rm_rf(r->tmp);
	free(r->tmp);
	r->tmp = NULL;
}

const char *tu_root_at(const struct tu_root *r, const char *rel)
{
	static char buf[4][8192];
	static int n;

	n = (n + 1) % 4;
	snprintf(buf[n], sizeof(buf[n]), "%s/%s", r->root, rel);
	return buf[n];
}

int tu_root_exists(const struct tu_root *r, const char *rel)
{
	struct stat st;

	return lstat(tu_root_at(r, rel), &st) == 0;
}

const char *tu_root_deb(const struct tu_root *r, const char *name,
			const char *extra, const struct tu_entry *e, size_t n,
			const struct tu_entry *cm, size_t ncm)
{
	static char path[4][4096];
	static int k;
	char control[1024];
	struct tu_deb spec = { .control = control, .entries = e,
			       .n_entries = n, .control_members = cm,
			       .n_control_members = ncm };

	k = (k + 1) % 4;
	snprintf(control, sizeof(control),
		 "Package: %s\nVersion: 1.0\nArchitecture: all\n"
		 "Maintainer: t <t@example.org>\n%sDescription: d\n",
		 name, extra != NULL ? extra : "");
	snprintf(path[k], sizeof(path[k]), "%s/%s.deb", r->tmp, name);
	tu_build_deb(path[k], &spec);
	return path[k];
}

char *tu_read_file(const char *path, size_t *len)
{
	char *buf = NULL;
	size_t cap = 0;
	size_t n = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	for (;;) {
		ssize_t r;

		if (cap - n < 2) {
			size_t ncap = cap ? cap * 2 : 4096;
			char *p = realloc(buf, ncap);

			if (p == NULL)
				goto fail;
			buf = p;
			cap = ncap;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	if (len != NULL)
		*len = n;
	return buf;
fail:
	free(buf);
	close(fd);
	return NULL;
}

void tu_write_file(const char *path, const char *data, mode_t mode)
{
	size_t len = data ? strlen(data) : 0;
	size_t done = 0;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		ck_abort_msg("testutil: open %s: %s", path, strerror(errno));
	while (done < len) {
		ssize_t w = write(fd, data + done, len - done);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			ck_abort_msg("testutil: write %s: %s", path,
				     strerror(errno));
		}
		done += (size_t)w;
	}
	/* The umask must not change what the test asked for. */
	if (fchmod(fd, mode) != 0)
		ck_abort_msg("testutil: chmod %s: %s", path, strerror(errno));
	if (close(fd) != 0)
		ck_abort_msg("testutil: close %s: %s", path, strerror(errno));
}

int tu_run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

void tu_skip(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: SKIP: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(77);
}

void tu_require_root(const char *what)
{
	if (geteuid() != 0)
		tu_skip("needs root (%s)", what);
}

void tu_skip_part(const char *what, const char *why)
{
	/* Check forks each test; flush so the line is not lost or doubled. */
	fprintf(stderr, "%s: SKIP PART: %s: %s\n", program_invocation_short_name,
		what, why);
	fflush(stderr);
}

int tu_deny_syscall(long nr, int errnum)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO |
			 ((unsigned int)errnum & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(insns) / sizeof(insns[0]),
		.filter = insns,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		return -1;
	return 0;
}

int tu_run_quiet(const char *const argv[])
{
	pid_t pid;
	int status;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
