/* check_deb.c - unit tests of the .deb container reader. */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <lzma.h>
#include <malloc.h>
#include <signal.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "deb.h"
#include "decomp.h"
#include "testutil.h"

#define PATTERN_PERIOD 251

static char *tmp;

static void setup(void)
{
	tmp = tu_mkdtemp();
}

static void teardown(void)
{
	tu_rm_rf(tmp);
	free(tmp);
	tmp = NULL;
}

/* A path inside the test's temporary directory, in a static slot (a few
 * are live at once). */
static const char *tp(const char *name)
{
	static char slots[4][PATH_MAX];
	static unsigned next;
	char *p = slots[next++ % 4];

	snprintf(p, PATH_MAX, "%s/%s", tmp, name);
	return p;
}

/* Whether dpkg-deb can be run; if not, the part `what` of a test says it
 * is skipped. */
static bool have_dpkg_deb(const char *what)
{
	if (system("command -v dpkg-deb >/dev/null 2>&1") == 0)
		return true;
	tu_skip_part(what, "dpkg-deb not found");
	return false;
}

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static struct unpkg_deb *open_ok(const char *path)
{
	struct unpkg_deb *deb = NULL;
	struct unpkg_err err;

	unpkg_err_init(&err);
	ck_assert_msg(unpkg_deb_open(path, &deb, &err) == 0, "open %s: %s",
		      path, err.msg);
	ck_assert_ptr_nonnull(deb);
	ck_assert_int_eq(err.code, UNPKG_ERR_NONE);
	return deb;
}

/* Read every entry and all content.  Returns 0 or -1 (err set). */
static int drain(struct unpkg_deb *deb, struct unpkg_err *err)
{
	struct unpkg_deb_entry e;
	int r;

	while ((r = unpkg_deb_next(deb, &e, err)) == 1) {
		const void *buf;
		size_t len;
		int64_t total = 0;

		while ((r = unpkg_deb_read(deb, &buf, &len, err)) == 1) {
			ck_assert_uint_gt(len, 0);
			total += (int64_t)len;
		}
		if (r < 0)
			return -1;
		ck_assert_int_eq(total, e.size);
	}
	return r;
}

/* The whole .deb must be refused, at open or while streaming, with
 * `code` and a message naming the file and containing each of the
 * NULL-terminated substrings. */
static void refused(const char *path, enum unpkg_errcode code, ...)
{
	struct unpkg_deb *deb = NULL;
	struct unpkg_err err;
	const char *want[8];
	size_t n = 0, i;
	va_list ap;
	int r;

	va_start(ap, code);
	while (n < 8 && (want[n] = va_arg(ap, const char *)) != NULL)
		n++;
	va_end(ap);
	unpkg_err_init(&err);
	r = unpkg_deb_open(path, &deb, &err);
	if (r == 0) {
		ck_assert_ptr_nonnull(deb);
		r = drain(deb, &err);
		unpkg_deb_free(deb);
	} else {
		ck_assert_ptr_null(deb);
	}
	ck_assert_msg(r == -1, "%s was accepted (expected '%s' '%s')", path,
		      n > 0 ? want[0] : "", n > 1 ? want[1] : "");
	ck_assert_msg(err.code == code, "%s: code %d, want %d (%s)", path,
		      err.code, code, err.msg);
	ck_assert_msg(strncmp(err.msg, path, strlen(path)) == 0,
		      "message does not start with the file name: %s", err.msg);
	for (i = 0; i < n; i++)
		ck_assert_msg(strstr(err.msg, want[i]) != NULL,
			      "message '%s' lacks '%s'", err.msg, want[i]);
}

static void accepted(const char *path)
{
	struct unpkg_deb *deb = open_ok(path);
	struct unpkg_err err;

	unpkg_err_init(&err);
	ck_assert_msg(drain(deb, &err) == 0, "%s: %s", path, err.msg);
	unpkg_deb_free(deb);
}

/* The current entry's content, malloc'd and NUL-terminated. */
static char *slurp(struct unpkg_deb *deb, size_t *out_len)
{
	struct unpkg_err err;
	const void *buf;
	size_t len;
	char *all = NULL;
	size_t n = 0;
	int r;

	unpkg_err_init(&err);
	while ((r = unpkg_deb_read(deb, &buf, &len, &err)) == 1) {
		all = realloc(all, n + len + 1);
		ck_assert_ptr_nonnull(all);
		memcpy(all + n, buf, len);
		n += len;
	}
	ck_assert_msg(r == 0, "read: %s", err.msg);
	if (all == NULL)
		all = calloc(1, 1);
	ck_assert_ptr_nonnull(all);
	all[n] = '\0';
	if (out_len != NULL)
		*out_len = n;
	return all;
}

static void next_ok(struct unpkg_deb *deb, struct unpkg_deb_entry *e)
{
	struct unpkg_err err;
	int r;

	unpkg_err_init(&err);
	r = unpkg_deb_next(deb, e, &err);
	ck_assert_msg(r == 1, "next returned %d: %s", r, err.msg);
}

static void at_end(struct unpkg_deb *deb)
{
	struct unpkg_deb_entry e;
	struct unpkg_err err;

	unpkg_err_init(&err);
	ck_assert_msg(unpkg_deb_next(deb, &e, &err) == 0, "not at end: %s",
		      err.msg);
	/* Idempotent at the end. */
	ck_assert_int_eq(unpkg_deb_next(deb, &e, &err), 0);
}

static void build_simple(const char *path, const char *ccomp,
			 const char *dcomp)
{
	static const struct tu_entry ents[] = {
		{ .type = 'd', .path = "./" },
		{ .type = 'd', .path = "./usr/" },
		{ .type = 'f', .path = "./usr/hello", .data = "hello world\n" },
		{ .type = 'f', .path = "./usr/big", .size = 100000 },
	};
	static const struct tu_entry cm[] = {
		{ .type = 'f', .path = "./postinst", .data = "#!/bin/sh\n",
		  .mode = 0755 },
	};
	struct tu_deb d = {
		.control = "Package: p\nVersion: 1\n",
		.control_members = cm, .n_control_members = 1,
		.entries = ents, .n_entries = 4,
		.control_comp = ccomp, .data_comp = dcomp,
	};

	tu_build_deb(path, &d);
}

static void check_pattern(const unsigned char *buf, size_t len,
			  int64_t offset)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != (unsigned char)((offset + (int64_t)i) %
					      PATTERN_PERIOD))
			ck_abort_msg("content differs at offset %lld",
				     (long long)(offset + (int64_t)i));
}

/* Check what build_simple() wrote. */
static void check_simple(const char *path, const char *cname,
			 const char *dname)
{
	struct unpkg_deb *deb = open_ok(path);
	const struct unpkg_deb_member *m;
	struct unpkg_deb_entry e;
	size_t len;
	char *s;

	ck_assert_str_eq(unpkg_deb_format(deb), "2.0");
	ck_assert_str_eq(unpkg_deb_control_name(deb), cname);
	ck_assert_str_eq(unpkg_deb_data_name(deb), dname);
	ck_assert_uint_eq(unpkg_deb_member_count(deb), 2);
	m = unpkg_deb_member_at(deb, 0);
	ck_assert_str_eq(m->name, "control");
	ck_assert_str_eq((const char *)m->data, "Package: p\nVersion: 1\n");
	ck_assert_uint_eq(m->size, strlen("Package: p\nVersion: 1\n"));
	ck_assert_int_eq(m->data[m->size], 0);
	ck_assert_int_eq(m->mode, 0644);
	m = unpkg_deb_member_at(deb, 1);
	ck_assert_str_eq(m->name, "postinst");
	ck_assert_int_eq(m->mode, 0755);
	ck_assert_ptr_eq(unpkg_deb_member(deb, "postinst"), m);
	ck_assert_ptr_null(unpkg_deb_member_at(deb, 2));
	ck_assert_ptr_null(unpkg_deb_member(deb, "preinst"));

	next_ok(deb, &e);
	ck_assert_str_eq(e.path, "");
	ck_assert_int_eq(e.type, UNPKG_ENTRY_DIR);
	next_ok(deb, &e);
	ck_assert_str_eq(e.path, "usr");
	next_ok(deb, &e);
	ck_assert_str_eq(e.path, "usr/hello");
	ck_assert_int_eq(e.size, 12);
	s = slurp(deb, &len);
	ck_assert_str_eq(s, "hello world\n");
	free(s);
	next_ok(deb, &e);
	ck_assert_str_eq(e.path, "usr/big");
	s = slurp(deb, &len);
	ck_assert_uint_eq(len, 100000);
	check_pattern((unsigned char *)s, len, 0);
	free(s);
	at_end(deb);
	unpkg_deb_free(deb);
}

static const char *const comps[] = { "none", "gz", "xz", "zst", "bz2" };

START_TEST(test_all_compressions)
{
	size_t i, j;

	for (i = 0; i < 5; i++) {
		for (j = 0; j < 5; j++) {
			char cname[32], dname[32];
			const char *p = tp("c.deb");

			build_simple(p, comps[i], comps[j]);
			snprintf(cname, sizeof(cname), "control.tar%s%s",
				 i ? "." : "", i ? comps[i] : "");
			snprintf(dname, sizeof(dname), "data.tar%s%s",
				 j ? "." : "", j ? comps[j] : "");
			check_simple(p, cname, dname);
		}
	}
}
END_TEST

static const struct tu_entry all_types[] = {
	{ .type = 'd', .path = "./" },
	{ .type = 'd', .path = "./usr/", .mode = 0755, .mtime = 1000 },
	{ .type = 'd', .path = "./tmp/", .mode = 01777 },
	{ .type = 'f', .path = "./usr/suid", .data = "#!/bin/sh\n",
	  .mode = 04755, .uid = 1234, .gid = 5678, .uname = "alice",
	  .gname = "staff", .mtime = 1700000000 },
	{ .type = 'f', .path = "./usr/sgid", .data = "x", .mode = 02711 },
	{ .type = 'f', .path = "./usr/empty", .data = "" },
	{ .type = 'h', .path = "./usr/hard", .data = "./usr/suid" },
	{ .type = 'l', .path = "./usr/sym", .data = "../tmp/x" },
	{ .type = 'p', .path = "./usr/fifo", .mode = 0600 },
	{ .type = 'c', .path = "./usr/null", .mode = 0666 },
	{ .type = 'b', .path = "./usr/sda", .mode = 0660, .gid = 6,
	  .gname = "disk" },
};

START_TEST(test_entry_types)
{
	struct tu_entry ents[sizeof(all_types) / sizeof(all_types[0])];
	const char *p = tp("t.deb");
	struct tu_deb d = { .entries = ents,
			    .n_entries = sizeof(ents) / sizeof(ents[0]) };
	struct unpkg_deb *deb;
	struct unpkg_deb_entry e;
	char *s;

	memcpy(ents, all_types, sizeof(ents));
	ents[9].rdev = makedev(1, 3);
	ents[10].rdev = makedev(8, 1);
	tu_build_deb(p, &d);
	deb = open_ok(p);

	next_ok(deb, &e);
	ck_assert_str_eq(e.path, "");
	ck_assert_int_eq(e.type, UNPKG_ENTRY_DIR);
	ck_assert_int_eq(e.mode, 0755);

	next_ok(deb, &e);
	ck_assert_str_eq(e.path, "usr");
	ck_assert_int_eq(e.type, UNPKG_ENTRY_DIR);
	ck_assert_int_eq(e.mtime, 1000);
	ck_assert_ptr_null(e.link);
	ck_assert_int_eq(e.size, 0);

	next_ok(deb, &e);
	ck_assert_str_eq(e.path, "tmp");
	ck_assert_int_eq(e.mode, 01777);

	next_ok(deb, &e);
	ck_assert_str_eq(e.path, "usr/suid");
	ck_assert_int_eq(e.type, UNPKG_ENTRY_FILE);
	ck_assert_int_eq(e.mode, 04755);
	ck_assert_int_eq(e.uid, 1234);
	ck_assert_int_eq(e.gid, 5678);
	ck_assert_str_eq(e.uname, "alice");
	ck_assert_str_eq(e.gname, "staff");
	ck_assert_int_eq(e.mtime, 1700000000);
	ck_assert_int_eq(e.size, 10);
	s = slurp(deb, NULL);
	ck_assert_str_eq(s, "#!/bin/sh\n");
	free(s);

	next_ok(deb, &e);
	ck_assert_str_eq(e.path, "usr/sgid");
	ck_assert_int_eq(e.mode, 02711);
	ck_assert_str_eq(e.uname, "root");
	ck_assert_str_eq(e.gname, "root");
	ck_assert_int_eq(e.uid, 0);

	next_ok(deb, &e);
	ck_assert_str_eq(e.path, "usr/empty");
	ck_assert_int_eq(e.type, UNPKG_ENTRY_FILE);
	ck_assert_int_eq(e.size, 0);
	s = slurp(deb, NULL);
	ck_assert_str_eq(s, "");
	free(s);

	next_ok(deb, &e);
	ck_assert_str_eq(e.path, "usr/hard");
	ck_assert_int_eq(e.type, UNPKG_ENTRY_HARDLINK);
	ck_assert_str_eq(e.link, "usr/suid");
	ck_assert_int_eq(e.size, 0);
	s = slurp(deb, NULL);
	ck_assert_str_eq(s, "");
	free(s);

	next_ok(deb, &e);
	ck_assert_str_eq(e.path, "usr/sym");
	ck_assert_int_eq(e.type, UNPKG_ENTRY_SYMLINK);
	ck_assert_str_eq(e.link, "../tmp/x");

	next_ok(deb, &e);
	ck_assert_str_eq(e.path, "usr/fifo");
	ck_assert_int_eq(e.type, UNPKG_ENTRY_FIFO);
	ck_assert_int_eq(e.mode, 0600);

	next_ok(deb, &e);
	ck_assert_str_eq(e.path, "usr/null");
	ck_assert_int_eq(e.type, UNPKG_ENTRY_CHR);
	ck_assert_int_eq(major(e.rdev), 1);
	ck_assert_int_eq(minor(e.rdev), 3);
	ck_assert_int_eq(e.mode, 0666);

	next_ok(deb, &e);
	ck_assert_str_eq(e.path, "usr/sda");
	ck_assert_int_eq(e.type, UNPKG_ENTRY_BLK);
	ck_assert_int_eq(major(e.rdev), 8);
	ck_assert_int_eq(minor(e.rdev), 1);
	ck_assert_int_eq(e.gid, 6);
	ck_assert_str_eq(e.gname, "disk");

	at_end(deb);
	unpkg_deb_free(deb);
}
END_TEST

/* dpkg-deb is the oracle for what a .deb is: it must accept what
 * tu_build_deb() writes, in every compression dpkg 1.21 knows. */
START_TEST(test_dpkg_deb_accepts_built)
{
	struct tu_entry ents[sizeof(all_types) / sizeof(all_types[0])];
	static const char *const dpkg_comps[] = { "none", "gz", "xz", "zst" };
	const char *p = tp("o.deb");
	const char *list = tp("list");
	size_t i;
	char *s;

	if (!have_dpkg_deb("dpkg-deb reads the packages tu_build_deb() makes"))
		return;
	memcpy(ents, all_types, sizeof(ents));
	for (i = 0; i < 4; i++) {
		struct tu_deb d = {
			.entries = ents,
			.n_entries = sizeof(ents) / sizeof(ents[0]),
			.control_comp = dpkg_comps[i],
			.data_comp = dpkg_comps[3 - i],
		};

		tu_build_deb(p, &d);
		ck_assert_int_eq(run("dpkg-deb --info '%s' >/dev/null", p), 0);
		ck_assert_int_eq(run("dpkg-deb --field '%s' Package | grep -qx unpkg-test",
				     p), 0);
		ck_assert_int_eq(run("dpkg-deb --contents '%s' >'%s'", p, list),
				 0);
		s = tu_read_file(list, NULL);
		ck_assert_ptr_nonnull(s);
		ck_assert_ptr_nonnull(strstr(s, "./usr/hard link to ./usr/suid"));
		ck_assert_ptr_nonnull(strstr(s, "./usr/sym -> ../tmp/x"));
		ck_assert_ptr_nonnull(strstr(s, "-rwsr-xr-x alice/staff"));
		free(s);
	}
}
END_TEST

START_TEST(test_large_file_streamed)
{
	const size_t size = 20u << 20;
	struct tu_entry ents[] = {
		{ .type = 'f', .path = "./big", .size = size },
		{ .type = 'f', .path = "./after", .data = "tail" },
	};
	struct tu_deb d = { .entries = ents, .n_entries = 2,
			    .data_comp = "zst" };
	const char *p = tp("big.deb");
	struct unpkg_deb *deb;
	struct unpkg_deb_entry e;
	struct unpkg_err err;
	const void *buf;
	size_t len, maxblock = 0;
	int64_t off = 0;
	int r;
	char *s;

	tu_build_deb(p, &d);
	deb = open_ok(p);
	next_ok(deb, &e);
	ck_assert_int_eq(e.size, (int64_t)size);
	unpkg_err_init(&err);
	while ((r = unpkg_deb_read(deb, &buf, &len, &err)) == 1) {
		check_pattern(buf, len, off);
		off += (int64_t)len;
		if (len > maxblock)
			maxblock = len;
	}
	ck_assert_msg(r == 0, "%s", err.msg);
	ck_assert_int_eq(off, (int64_t)size);
	/* Streamed in blocks, not handed out whole. */
	ck_assert_uint_le(maxblock, 1u << 20);
	ck_assert_int_eq(unpkg_deb_read(deb, &buf, &len, &err), 0);
	next_ok(deb, &e);
	ck_assert_str_eq(e.path, "after");
	s = slurp(deb, NULL);
	ck_assert_str_eq(s, "tail");
	free(s);
	at_end(deb);
	unpkg_deb_free(deb);
}
END_TEST

START_TEST(test_skip_unread_data)
{
	struct tu_entry ents[] = {
		{ .type = 'f', .path = "./a", .size = 3u << 20 },
		{ .type = 'f', .path = "./b", .size = 1u << 20 },
		{ .type = 'f', .path = "./c", .data = "see" },
		{ .type = 'f', .path = "./d", .size = 70000 },
	};
	const char *p = tp("skip.deb");
	size_t i;

	for (i = 0; i < 5; i++) {
		struct tu_deb d = { .entries = ents, .n_entries = 4,
				    .data_comp = comps[i] };
		struct unpkg_deb *deb;
		struct unpkg_deb_entry e;
		struct unpkg_err err;
		const void *buf;
		size_t len;
		char *s;

		tu_build_deb(p, &d);
		deb = open_ok(p);
		unpkg_err_init(&err);
		next_ok(deb, &e);
		ck_assert_str_eq(e.path, "a");
		/* Nothing read. */
		next_ok(deb, &e);
		ck_assert_str_eq(e.path, "b");
		/* One block read. */
		ck_assert_int_eq(unpkg_deb_read(deb, &buf, &len, &err), 1);
		check_pattern(buf, len, 0);
		next_ok(deb, &e);
		ck_assert_str_eq(e.path, "c");
		s = slurp(deb, NULL);
		ck_assert_str_eq(s, "see");
		free(s);
		next_ok(deb, &e);
		ck_assert_str_eq(e.path, "d");
		at_end(deb);
		/* Reading past the end is harmless. */
		ck_assert_int_eq(unpkg_deb_read(deb, &buf, &len, &err), 0);
		unpkg_deb_free(deb);
	}
}
END_TEST

/* A pax archive with GNU sparse 1.0 entries (libarchive's writer makes
 * them), wrapped in a .deb by hand. */
static void build_sparse_deb(const char *path, int64_t size,
			     const int64_t (*map)[2], size_t nmap,
			     const char *file_name)
{
	struct archive *a = archive_write_new();
	struct archive_entry *ae = archive_entry_new();
	unsigned char *content;
	char *tarpath = malloc(strlen(path) + 5);
	char *tar, *ctl;
	size_t tarlen, ctllen;
	size_t i;
	static const struct tu_entry cent[] = {
		{ .type = 'd', .path = "./" },
		{ .type = 'f', .path = "./control", .data = "Package: s\n" },
	};

	ck_assert_ptr_nonnull(tarpath);
	sprintf(tarpath, "%s.tar", path);
	content = calloc(1, (size_t)size);
	ck_assert_ptr_nonnull(content);
	for (i = 0; i < nmap; i++)
		memset(content + map[i][0], 'a' + (int)i, (size_t)map[i][1]);
	ck_assert_int_eq(archive_write_set_format_pax(a), ARCHIVE_OK);
	ck_assert_int_eq(archive_write_open_filename(a, tarpath), ARCHIVE_OK);
	archive_entry_set_pathname(ae, file_name);
	archive_entry_set_filetype(ae, AE_IFREG);
	archive_entry_set_perm(ae, 0644);
	archive_entry_set_size(ae, size);
	for (i = 0; i < nmap; i++)
		archive_entry_sparse_add_entry(ae, map[i][0], map[i][1]);
	ck_assert_int_eq(archive_write_header(a, ae), ARCHIVE_OK);
	ck_assert_int_eq(archive_write_data(a, content, (size_t)size), size);
	archive_entry_clear(ae);
	archive_entry_set_pathname(ae, "./after");
	archive_entry_set_filetype(ae, AE_IFREG);
	archive_entry_set_perm(ae, 0644);
	archive_entry_set_size(ae, 5);
	ck_assert_int_eq(archive_write_header(a, ae), ARCHIVE_OK);
	ck_assert_int_eq(archive_write_data(a, "after", 5), 5);
	ck_assert_int_eq(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
	archive_entry_free(ae);
	free(content);

	tar = tu_read_file(tarpath, &tarlen);
	ck_assert_ptr_nonnull(tar);
	/* Really sparse: far smaller than the file it holds. */
	ck_assert_uint_lt(tarlen, (size_t)size / 2);
	tu_build_tar(cent, 2, "none", (void **)&ctl, &ctllen);
	{
		const struct tu_member mem[] = {
			{ "debian-binary", "2.0\n", 4 },
			{ "control.tar", ctl, ctllen },
			{ "data.tar", tar, tarlen },
		};
		struct tu_deb d = { .members = mem, .n_members = 3 };

		tu_build_deb(path, &d);
	}
	free(tar);
	free(ctl);
	unlink(tarpath);
	free(tarpath);
}

static void check_sparse(const char *path, int64_t size,
			 const int64_t (*map)[2], size_t nmap)
{
	struct unpkg_deb *deb = open_ok(path);
	struct unpkg_deb_entry e;
	size_t len, i;
	int64_t k;
	char *s;

	next_ok(deb, &e);
	ck_assert_str_eq(e.path, "sparse");
	ck_assert_int_eq(e.size, size);
	s = slurp(deb, &len);
	ck_assert_uint_eq(len, (size_t)size);
	for (k = 0; k < size; k++) {
		char want = 0;

		for (i = 0; i < nmap; i++)
			if (k >= map[i][0] && k < map[i][0] + map[i][1])
				want = (char)('a' + (int)i);
		if (s[k] != want)
			ck_abort_msg("sparse content differs at %lld",
				     (long long)k);
	}
	free(s);
	next_ok(deb, &e);
	ck_assert_str_eq(e.path, "after");
	s = slurp(deb, NULL);
	ck_assert_str_eq(s, "after");
	free(s);
	at_end(deb);
	unpkg_deb_free(deb);
}

START_TEST(test_sparse_files)
{
	/* Holes at the start, between and at the end. */
	static const int64_t map1[][2] = {
		{ 1 << 20, 4096 }, { 2 << 20, 100 },
	};
	/* Data at the start, a hole, data up to the end. */
	static const int64_t map2[][2] = {
		{ 0, 70000 }, { (3 << 20) - 5000, 5000 },
	};
	const char *p = tp("sparse.deb");

	build_sparse_deb(p, 3 << 20, map1, 2, "./sparse");
	check_sparse(p, 3 << 20, map1, 2);
	build_sparse_deb(p, 3 << 20, map2, 2, "sparse");
	check_sparse(p, 3 << 20, map2, 2);
	if (have_dpkg_deb("dpkg-deb reads the sparse package"))
		ck_assert_int_eq(run("dpkg-deb --fsys-tarfile '%s' | tar -tf - >/dev/null",
				     p), 0);
}
END_TEST

START_TEST(test_path_normalisation)
{
	static const struct tu_entry ents[] = {
		{ .type = 'd', .path = "." },
		{ .type = 'd', .path = "./usr/bin/" },
		{ .type = 'd', .path = "./" },
		{ .type = 'f', .path = "/etc/x", .data = "x" },
		{ .type = 'f', .path = "a//b/./c", .data = "c" },
		{ .type = 'd', .path = "//" },
		{ .type = 'f', .path = "./.hidden/..x/x..", .data = "y" },
		{ .type = 'h', .path = "./usr/bin/h", .data = "/a//b/./c" },
		{ .type = 'h', .path = "./usr/bin/h2", .data = "./etc/x" },
		{ .type = 'l', .path = "usr/l", .data = "/abs//path/../x" },
		{ .type = 'd', .path = "usr/./bin/.//" },
	};
	static const char *const want[] = {
		"", "usr/bin", "", "etc/x", "a/b/c", "", ".hidden/..x/x..",
		"usr/bin/h", "usr/bin/h2", "usr/l", "usr/bin",
	};
	struct tu_deb d = { .entries = ents, .n_entries = 11 };
	const char *p = tp("n.deb");
	struct unpkg_deb *deb;
	struct unpkg_deb_entry e;
	size_t i;

	tu_build_deb(p, &d);
	deb = open_ok(p);
	for (i = 0; i < 11; i++) {
		next_ok(deb, &e);
		ck_assert_str_eq(e.path, want[i]);
		if (i == 7)
			ck_assert_str_eq(e.link, "a/b/c");
		if (i == 8)
			ck_assert_str_eq(e.link, "etc/x");
		/* Symlink targets are kept verbatim. */
		if (i == 9)
			ck_assert_str_eq(e.link, "/abs//path/../x");
	}
	at_end(deb);
	unpkg_deb_free(deb);
}
END_TEST

static void one_entry_refused(const struct tu_entry *ent, const char *raw,
			      enum unpkg_errcode code, const char *why)
{
	struct tu_entry ents[] = {
		{ .type = 'd', .path = "./" },
		*ent,
	};
	struct tu_deb d = { .entries = ents, .n_entries = 2 };
	const char *p = tp("u.deb");

	tu_build_deb(p, &d);
	refused(p, code, "data.tar.gz", raw, why, NULL);
}

START_TEST(test_unsafe_paths)
{
	static const struct {
		struct tu_entry e;
		const char *why;
	} cases[] = {
		{ { .type = 'f', .path = "../x", .data = "" }, "'..'" },
		{ { .type = 'f', .path = "./a/../b", .data = "" }, "'..'" },
		{ { .type = 'd', .path = "./a/.." }, "'..'" },
		{ { .type = 'd', .path = "/.." }, "'..'" },
		{ { .type = 'f', .path = "./a\nb", .data = "" }, "newline" },
		{ { .type = 'f', .path = ".", .data = "" }, "root" },
		{ { .type = 'l', .path = ".", .data = "x" }, "root" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		one_entry_refused(&cases[i].e, cases[i].e.path,
				  UNPKG_ERR_UNSAFE, cases[i].why);
}
END_TEST

START_TEST(test_unsafe_hardlinks)
{
	static const struct tu_entry cases[] = {
		{ .type = 'h', .path = "./x", .data = "../etc/passwd" },
		{ .type = 'h', .path = "./x", .data = "a/../../b" },
		{ .type = 'h', .path = "./x", .data = "./" },
		{ .type = 'h', .path = "./x", .data = "a\nb" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		one_entry_refused(&cases[i], cases[i].data, UNPKG_ERR_UNSAFE,
				  "unsafe hardlink target");
}
END_TEST

START_TEST(test_bad_entries)
{
	static const struct tu_entry nolink = {
		.type = 'l', .path = "./l", .data = "",
	};
	static const struct tu_entry baduid = {
		.type = 'f', .path = "./u", .data = "", .uid = (uid_t)-1,
	};
	static const struct tu_entry badgid = {
		.type = 'd', .path = "./g", .gid = (gid_t)-1,
	};

	one_entry_refused(&nolink, ": l: ", UNPKG_ERR_FORMAT, "empty target");
	one_entry_refused(&baduid, "u", UNPKG_ERR_FORMAT, "invalid owner");
	one_entry_refused(&badgid, "g", UNPKG_ERR_FORMAT, "invalid owner");
}
END_TEST

/* A ustar header with any name, even an empty one, which libarchive's
 * writers refuse to produce. */
static void raw_tar_header(unsigned char *h, const char *name, char type)
{
	unsigned sum = 0;
	size_t i;

	memset(h, 0, 512);
	memcpy(h, name, strlen(name));
	memcpy(h + 100, "0000644", 8);
	memcpy(h + 108, "0000000", 8);
	memcpy(h + 116, "0000000", 8);
	memcpy(h + 124, "00000000000", 12);
	memcpy(h + 136, "00000000000", 12);
	h[156] = (unsigned char)type;
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8);
	for (i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
}

START_TEST(test_empty_name)
{
	unsigned char tar[512 * 4];
	char *ctl;
	size_t ctllen;
	const char *p = tp("e.deb");
	static const struct tu_entry cent[] = {
		{ .type = 'f', .path = "./control", .data = "Package: e\n" },
	};

	memset(tar, 0, sizeof(tar));
	raw_tar_header(tar, "./", '5');
	raw_tar_header(tar + 512, "", '0');
	tu_build_tar(cent, 1, "none", (void **)&ctl, &ctllen);
	{
		const struct tu_member mem[] = {
			{ "debian-binary", "2.0\n", 4 },
			{ "control.tar", ctl, ctllen },
			{ "data.tar", tar, sizeof(tar) },
		};
		struct tu_deb d = { .members = mem, .n_members = 3 };

		tu_build_deb(p, &d);
	}
	free(ctl);
	refused(p, UNPKG_ERR_UNSAFE, "data.tar", "empty name", NULL);

	/* The same archive with a proper name is fine, so the refusal above
	 * is about the name. */
	raw_tar_header(tar + 512, "./ok", '0');
	tu_build_tar(cent, 1, "none", (void **)&ctl, &ctllen);
	{
		const struct tu_member mem[] = {
			{ "debian-binary", "2.0\n", 4 },
			{ "control.tar", ctl, ctllen },
			{ "data.tar", tar, sizeof(tar) },
		};
		struct tu_deb d = { .members = mem, .n_members = 3 };

		tu_build_deb(p, &d);
	}
	free(ctl);
	accepted(p);
}
END_TEST

static void build_with_db(const char *path, const char *db, size_t dblen)
{
	static const struct tu_entry cent[] = {
		{ .type = 'd', .path = "./" },
		{ .type = 'f', .path = "./control", .data = "Package: v\n" },
	};
	static const struct tu_entry dent[] = {
		{ .type = 'f', .path = "./f", .data = "f" },
	};
	char *ctl, *data;
	size_t ctllen, datalen;

	tu_build_tar(cent, 2, "gz", (void **)&ctl, &ctllen);
	tu_build_tar(dent, 1, "xz", (void **)&data, &datalen);
	{
		const struct tu_member mem[] = {
			{ "debian-binary", db, dblen },
			{ "control.tar.gz", ctl, ctllen },
			{ "data.tar.xz", data, datalen },
		};
		struct tu_deb d = { .members = mem, .n_members = 3 };

		tu_build_deb(path, &d);
	}
	free(ctl);
	free(data);
}

START_TEST(test_debian_binary)
{
	static const struct {
		const char *db;
		const char *format;	/* NULL: refused */
		enum unpkg_errcode code;
		const char *why;
	} cases[] = {
		{ "2.0\n", "2.0", 0, NULL },
		{ "2.1\n", "2.1", 0, NULL },
		{ "2.10\n", "2.10", 0, NULL },
		{ "02.0\n", "02.0", 0, NULL },
		/* dpkg-deb reads only the first line. */
		{ "2.0\nextra", "2.0", 0, NULL },
		{ "2.0\n\n", "2.0", 0, NULL },
		{ "3.0\n", NULL, UNPKG_ERR_UNSUPPORTED,
		  "debian-binary: unsupported format version '3.0'" },
		{ "1.0\n", NULL, UNPKG_ERR_UNSUPPORTED,
		  "unsupported format version '1.0'" },
		{ "0.939000\n", NULL, UNPKG_ERR_UNSUPPORTED, "0.939000" },
		{ "20.0\n", NULL, UNPKG_ERR_UNSUPPORTED, "'20.0'" },
		{ "2.0", NULL, UNPKG_ERR_FORMAT, "missing newline" },
		{ "", NULL, UNPKG_ERR_FORMAT, "missing newline" },
		{ "2\n", NULL, UNPKG_ERR_FORMAT, "invalid format version" },
		{ "2.\n", NULL, UNPKG_ERR_FORMAT, "invalid format version" },
		{ "2.x\n", NULL, UNPKG_ERR_FORMAT, "invalid format version" },
		{ "2.0 \n", NULL, UNPKG_ERR_FORMAT, "invalid format version" },
		{ "2.0\r\n", NULL, UNPKG_ERR_FORMAT, "invalid format version" },
		{ "2.0.1\n", NULL, UNPKG_ERR_FORMAT, "invalid format version" },
		{ " 2.0\n", NULL, UNPKG_ERR_FORMAT, "invalid format version" },
		{ "\n", NULL, UNPKG_ERR_FORMAT, "invalid format version" },
		{ "2.99999999999999999999\n", NULL, UNPKG_ERR_FORMAT,
		  "invalid format version" },
		{ "2.000000000000000000000000000000000000000000000001\n", NULL,
		  UNPKG_ERR_FORMAT, "too long" },
	};
	const char *p = tp("v.deb");
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		build_with_db(p, cases[i].db, strlen(cases[i].db));
		if (cases[i].format != NULL) {
			struct unpkg_deb *deb = open_ok(p);

			ck_assert_str_eq(unpkg_deb_format(deb),
					 cases[i].format);
			unpkg_deb_free(deb);
		} else {
			refused(p, cases[i].code, cases[i].why, NULL);
		}
	}

	/* A NUL byte in the version line. */
	build_with_db(p, "2\0.0\n", 5);
	refused(p, UNPKG_ERR_FORMAT, "debian-binary", NULL);
	/* Exact wording for the common case. */
	{
		char want[PATH_MAX + 64];

		build_with_db(p, "3.0\n", 4);
		snprintf(want, sizeof(want),
			 "%s: debian-binary: unsupported format version '3.0'",
			 p);
		refused(p, UNPKG_ERR_UNSUPPORTED, want, NULL);
	}
}
END_TEST

/* The pieces of a valid package, to assemble in any order. */
struct parts {
	char *ctl;
	size_t ctllen;
	char *data;
	size_t datalen;
};

static void make_parts(struct parts *pt, const char *ccomp, const char *dcomp)
{
	static const struct tu_entry cent[] = {
		{ .type = 'd', .path = "./" },
		{ .type = 'f', .path = "./control", .data = "Package: m\n" },
	};
	static const struct tu_entry dent[] = {
		{ .type = 'd', .path = "./" },
		{ .type = 'f', .path = "./f", .data = "content" },
	};

	tu_build_tar(cent, 2, ccomp, (void **)&pt->ctl, &pt->ctllen);
	tu_build_tar(dent, 2, dcomp, (void **)&pt->data, &pt->datalen);
}

static void free_parts(struct parts *pt)
{
	free(pt->ctl);
	free(pt->data);
}

static void build_members(const char *path, const struct tu_member *m,
			  size_t n)
{
	struct tu_deb d = { .members = m, .n_members = n };

	tu_build_deb(path, &d);
}

START_TEST(test_member_order)
{
	struct parts pt;
	const char *p = tp("m.deb");

	make_parts(&pt, "gz", "gz");
#define DB { "debian-binary", "2.0\n", 4 }
#define CTL { "control.tar.gz", pt.ctl, pt.ctllen }
#define DATA { "data.tar.gz", pt.data, pt.datalen }
	{
		const struct tu_member m[] = { DB, CTL, DATA };

		build_members(p, m, 3);
		accepted(p);
	}
	{
		const struct tu_member m[] = {
			DB, { "_a", "x", 1 }, CTL, { "_bb", "yy", 2 }, DATA,
			{ "_c", "", 0 },
		};

		build_members(p, m, 6);
		accepted(p);
	}
	{
		const struct tu_member m[] = { CTL, DATA };

		build_members(p, m, 2);
		refused(p, UNPKG_ERR_FORMAT,
			"first member is 'control.tar.gz', not debian-binary",
			NULL);
	}
	{
		/* Not even '_' members may come before debian-binary. */
		const struct tu_member m[] = { { "_x", "x", 1 }, DB, CTL, DATA };

		build_members(p, m, 4);
		refused(p, UNPKG_ERR_FORMAT, "'_x'", NULL);
	}
	{
		const struct tu_member m[] = { DB, DATA };

		build_members(p, m, 2);
		refused(p, UNPKG_ERR_FORMAT,
			"unexpected member 'data.tar.gz' before control.tar",
			NULL);
	}
	{
		const struct tu_member m[] = { DB, DATA, CTL };

		build_members(p, m, 3);
		refused(p, UNPKG_ERR_FORMAT,
			"unexpected member 'data.tar.gz' before control.tar",
			NULL);
	}
	{
		const struct tu_member m[] = { DB };

		build_members(p, m, 1);
		refused(p, UNPKG_ERR_FORMAT, "missing control.tar member",
			NULL);
	}
	{
		const struct tu_member m[] = { DB, CTL };

		build_members(p, m, 2);
		refused(p, UNPKG_ERR_FORMAT, "missing data.tar member", NULL);
	}
	{
		const struct tu_member m[] = { DB, CTL, { "_x", "x", 1 } };

		build_members(p, m, 3);
		refused(p, UNPKG_ERR_FORMAT, "missing data.tar member", NULL);
	}
	{
		const struct tu_member none[1] = { { "unused", "", 0 } };

		build_members(p, none, 0);
		refused(p, UNPKG_ERR_FORMAT, "missing debian-binary", NULL);
	}
	{
		const struct tu_member m[] = { DB, CTL, CTL, DATA };

		build_members(p, m, 4);
		refused(p, UNPKG_ERR_FORMAT,
			"duplicate control.tar member 'control.tar.gz'", NULL);
	}
	{
		const struct tu_member m[] = { DB, { "foo", "x", 1 }, CTL, DATA };

		build_members(p, m, 4);
		refused(p, UNPKG_ERR_FORMAT,
			"unexpected member 'foo' before control.tar", NULL);
	}
	{
		const struct tu_member m[] = { DB, CTL, { "foo", "x", 1 }, DATA };

		build_members(p, m, 4);
		refused(p, UNPKG_ERR_FORMAT,
			"unexpected member 'foo' before data.tar", NULL);
	}
	{
		const struct tu_member m[] = { DB, DB, CTL, DATA };

		build_members(p, m, 4);
		refused(p, UNPKG_ERR_FORMAT,
			"unexpected member 'debian-binary' before control.tar",
			NULL);
	}
	/* After data.tar (dpkg-deb ignores these; we refuse them). */
	{
		const struct tu_member m[] = { DB, CTL, DATA, DATA };

		build_members(p, m, 4);
		refused(p, UNPKG_ERR_FORMAT,
			"unexpected member 'data.tar.gz' after data.tar.gz",
			NULL);
	}
	{
		const struct tu_member m[] = { DB, CTL, DATA, { "foo", "x", 1 } };

		build_members(p, m, 4);
		refused(p, UNPKG_ERR_FORMAT,
			"unexpected member 'foo' after data.tar.gz", NULL);
	}
	{
		const struct tu_member m[] = { DB, CTL, DATA, CTL };

		build_members(p, m, 4);
		refused(p, UNPKG_ERR_FORMAT,
			"unexpected member 'control.tar.gz' after", NULL);
	}
#undef DB
#undef CTL
#undef DATA
	free_parts(&pt);
}
END_TEST

/* binutils ar writes System V names ending in '/'; dpkg-deb reads them
 * (checked against dpkg-deb when it is installed). */
START_TEST(test_sysv_ar_names)
{
	struct parts pt;
	const char *p = tp("sysv.deb");
	const struct tu_member m[] = {
		{ "debian-binary", "2.0\n", 4 },
		{ "control.tar.gz", NULL, 0 },
		{ "data.tar.gz", NULL, 0 },
	};
	const void *data[3];
	size_t size[3];
	FILE *f;
	size_t i;

	make_parts(&pt, "gz", "gz");
	data[0] = m[0].data;
	size[0] = m[0].size;
	data[1] = pt.ctl;
	size[1] = pt.ctllen;
	data[2] = pt.data;
	size[2] = pt.datalen;
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs("!<arch>\n", f);
	for (i = 0; i < 3; i++) {
		char name[17];

		snprintf(name, sizeof(name), "%s/", m[i].name);
		fprintf(f, "%-16s%-12d%-6d%-6d%-8s%-10zu`\n", name, 0, 0, 0,
			"100644", size[i]);
		ck_assert_uint_eq(fwrite(data[i], 1, size[i], f), size[i]);
		if (size[i] & 1)
			fputc('\n', f);
	}
	ck_assert_int_eq(fclose(f), 0);
	{
		struct unpkg_deb *deb = open_ok(p);

		ck_assert_str_eq(unpkg_deb_control_name(deb), "control.tar.gz");
		ck_assert_str_eq(unpkg_deb_data_name(deb), "data.tar.gz");
		unpkg_deb_free(deb);
	}
	accepted(p);
	if (have_dpkg_deb("dpkg-deb lists the package"))
		ck_assert_int_eq(run("dpkg-deb --contents '%s' >/dev/null", p), 0);
	free_parts(&pt);
}
END_TEST

START_TEST(test_unsupported_compression)
{
	static const char *const bad[] = {
		"data.tar.lzma", "data.tar.foo", "data.tar.gz2", "data.tarx",
		"data.tar.", "data.tar.GZ",
	};
	struct parts pt;
	const char *p = tp("z.deb");
	size_t i;

	make_parts(&pt, "gz", "gz");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const struct tu_member m[] = {
			{ "debian-binary", "2.0\n", 4 },
			{ "control.tar.gz", pt.ctl, pt.ctllen },
			{ bad[i], pt.data, pt.datalen },
		};
		char want[64];

		build_members(p, m, 3);
		snprintf(want, sizeof(want), "%s: unsupported compression",
			 bad[i]);
		refused(p, UNPKG_ERR_UNSUPPORTED, want, NULL);
	}
	{
		const struct tu_member m[] = {
			{ "debian-binary", "2.0\n", 4 },
			{ "control.tar.lzma", pt.ctl, pt.ctllen },
			{ "data.tar.gz", pt.data, pt.datalen },
		};

		build_members(p, m, 3);
		refused(p, UNPKG_ERR_UNSUPPORTED,
			"control.tar.lzma: unsupported compression", NULL);
	}
	free_parts(&pt);

	/* A real lzma stream under a refused name, built by testutil. */
	{
		struct tu_deb d = { .data_comp = "lzma" };

		tu_build_deb(p, &d);
		refused(p, UNPKG_ERR_UNSUPPORTED,
			"data.tar.lzma: unsupported compression", NULL);
	}
}
END_TEST

/* The member name announces the one filter enabled: gzip data under an
 * .xz name, or a compressed tar under the plain name, is refused. */
START_TEST(test_compression_mismatch)
{
	struct parts pt;
	const char *p = tp("mm.deb");

	make_parts(&pt, "gz", "gz");
	{
		const struct tu_member m[] = {
			{ "debian-binary", "2.0\n", 4 },
			{ "control.tar.gz", pt.ctl, pt.ctllen },
			{ "data.tar.xz", pt.data, pt.datalen },
		};

		build_members(p, m, 3);
		refused(p, UNPKG_ERR_CORRUPT, "data.tar.xz", NULL);
	}
	{
		const struct tu_member m[] = {
			{ "debian-binary", "2.0\n", 4 },
			{ "control.tar", pt.ctl, pt.ctllen },
			{ "data.tar.gz", pt.data, pt.datalen },
		};

		build_members(p, m, 3);
		refused(p, UNPKG_ERR_CORRUPT, "control.tar", NULL);
	}
	free_parts(&pt);
}
END_TEST

/* Offsets of each ar member's header in a file. */
static size_t ar_headers(const unsigned char *buf, size_t len, size_t *hdr,
			 size_t max)
{
	size_t off = 8, n = 0;

	while (off + 60 <= len && n < max) {
		char sz[11];

		hdr[n++] = off;
		memcpy(sz, buf + off + 48, 10);
		sz[10] = '\0';
		off += 60 + (size_t)strtoul(sz, NULL, 10);
		off += off & 1;
	}
	return n;
}

static void write_bytes(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	size_t done = 0;

	ck_assert_int_ge(fd, 0);
	while (done < len) {
		ssize_t w = write(fd, (const char *)buf + done, len - done);

		ck_assert_int_gt(w, 0);
		done += (size_t)w;
	}
	ck_assert_int_eq(close(fd), 0);
}

START_TEST(test_truncated)
{
	const char *p = tp("full.deb");
	const char *q = tp("cut.deb");
	size_t len, hdr[8], n, i, c;
	char *buf;

	for (c = 0; c < 5; c++) {
		build_simple(p, comps[c], comps[c]);
		buf = tu_read_file(p, &len);
		ck_assert_ptr_nonnull(buf);
		n = ar_headers((unsigned char *)buf, len, hdr, 8);
		ck_assert_uint_eq(n, 3);
		{
			const size_t ctl = hdr[1], data = hdr[2];
			char cname[32], dname[32];
			struct {
				size_t off;
				enum unpkg_errcode code;
				const char *what;
			} cuts[] = {
				{ 0, UNPKG_ERR_FORMAT, "not an ar archive" },
				{ 5, UNPKG_ERR_FORMAT, "not an ar archive" },
				{ 8 + 30, UNPKG_ERR_CORRUPT, "truncated" },
				{ 8 + 60 + 2, UNPKG_ERR_CORRUPT,
				  "debian-binary: truncated" },
				{ ctl, UNPKG_ERR_FORMAT, "missing control.tar" },
				{ ctl + 59, UNPKG_ERR_CORRUPT, "truncated" },
				{ ctl + 60, UNPKG_ERR_CORRUPT, cname },
				{ ctl + 61, UNPKG_ERR_CORRUPT, cname },
				{ ctl + 60 + (data - ctl - 60) / 2,
				  UNPKG_ERR_CORRUPT, cname },
				{ data - 1, UNPKG_ERR_CORRUPT, cname },
				{ data, UNPKG_ERR_FORMAT, "missing data.tar" },
				{ data + 10, UNPKG_ERR_CORRUPT, "truncated" },
				{ data + 60, UNPKG_ERR_CORRUPT, dname },
				{ data + 100, UNPKG_ERR_CORRUPT, dname },
				{ data + 60 + (len - data - 60) / 2,
				  UNPKG_ERR_CORRUPT, dname },
				{ len - 1, UNPKG_ERR_CORRUPT, dname },
			};

			snprintf(cname, sizeof(cname), "control.tar%s%s: truncated",
				 c ? "." : "", c ? comps[c] : "");
			snprintf(dname, sizeof(dname), "data.tar%s%s: ",
				 c ? "." : "", c ? comps[c] : "");
			for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
				write_bytes(q, buf, cuts[i].off);
				refused(q, cuts[i].code, cuts[i].what, NULL);
				if (cuts[i].what == dname)
					refused(q, cuts[i].code, "truncated",
						NULL);
			}
		}
		free(buf);
	}
}
END_TEST

/* The ar member is whole but the tar inside it stops in the middle of an
 * entry's content. */
START_TEST(test_short_entry)
{
	static const struct tu_entry cent[] = {
		{ .type = 'f', .path = "./control", .data = "Package: s\n" },
	};
	static const struct tu_entry dent[] = {
		{ .type = 'f', .path = "./first", .data = "1" },
		{ .type = 'f', .path = "./short", .size = 100000 },
	};
	const char *p = tp("short.deb");
	char *ctl, *data;
	size_t ctllen, datalen;

	tu_build_tar(cent, 1, "none", (void **)&ctl, &ctllen);
	tu_build_tar(dent, 2, "none", (void **)&data, &datalen);
	{
		const struct tu_member m[] = {
			{ "debian-binary", "2.0\n", 4 },
			{ "control.tar", ctl, ctllen },
			{ "data.tar", data, 3 * 512 + 50000 },
		};

		build_members(p, m, 3);
	}
	refused(p, UNPKG_ERR_CORRUPT, "data.tar: short: truncated", NULL);
	free(ctl);
	free(data);
}
END_TEST

START_TEST(test_trailing_garbage)
{
	const char *p = tp("g.deb");
	size_t len, hdr[8];
	char *buf, *mid;

	build_simple(p, "gz", "xz");
	buf = tu_read_file(p, &len);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(ar_headers((unsigned char *)buf, len, hdr, 8), 3);
	buf = realloc(buf, len + 60);
	ck_assert_ptr_nonnull(buf);
	memcpy(buf + len, "garbage\n", 8);
	write_bytes(p, buf, len + 8);
	refused(p, UNPKG_ERR_CORRUPT, "truncated member header after data.tar.xz",
		NULL);

	/* A whole member header, intact: a '_' member, which is fine. */
	memset(buf + len, ' ', 60);
	memcpy(buf + len, "_junk", 5);
	memcpy(buf + len + 48, "0", 1);
	memcpy(buf + len + 58, "`\n", 2);
	write_bytes(p, buf, len + 60);
	accepted(p);
	/* Its signature damaged. */
	memcpy(buf + len + 58, "XX", 2);
	write_bytes(p, buf, len + 60);
	refused(p, UNPKG_ERR_CORRUPT, "data.tar.xz", NULL);

	/* The same damaged header before data.tar. */
	mid = malloc(len + 60);
	ck_assert_ptr_nonnull(mid);
	memcpy(mid, buf, hdr[2]);
	memcpy(mid + hdr[2], buf + len, 60);
	memcpy(mid + hdr[2] + 60, buf + hdr[2], len - hdr[2]);
	write_bytes(p, mid, len + 60);
	refused(p, UNPKG_ERR_CORRUPT,
		"damaged ar member header after control.tar.gz", NULL);
	free(mid);
	free(buf);
}
END_TEST

/* Members nobody reads are skipped with lseek() in a regular file; a file
 * that ends inside one is still refused as truncated, before data.tar and
 * after it, and is accepted whole. */
START_TEST(test_truncated_skipped)
{
	const size_t big = 1 << 20;
	const char *p = tp("skip.deb");
	struct parts pt;
	size_t len, hdr[8];
	char *pad, *buf;

	pad = calloc(1, big);
	ck_assert_ptr_nonnull(pad);
	make_parts(&pt, "gz", "xz");
	{
		const struct tu_member m[] = {
			{ "debian-binary", "2.0\n", 4 },
			{ "_before", pad, big },
			{ "control.tar.gz", pt.ctl, pt.ctllen },
			{ "data.tar.xz", pt.data, pt.datalen },
			{ "_after", pad, big },
		};

		build_members(p, m, 5);
	}
	accepted(p);
	buf = tu_read_file(p, &len);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(ar_headers((unsigned char *)buf, len, hdr, 8), 5);
	write_bytes(p, buf, hdr[1] + 60 + big / 2);
	refused(p, UNPKG_ERR_CORRUPT, "_before: truncated", NULL);
	write_bytes(p, buf, hdr[4] + 60 + big / 2);
	refused(p, UNPKG_ERR_CORRUPT, "_after: truncated", NULL);
	write_bytes(p, buf, len - 1);
	refused(p, UNPKG_ERR_CORRUPT, "_after: truncated", NULL);
	free(buf);
	free(pad);
	free_parts(&pt);
}
END_TEST

START_TEST(test_corrupt_compressed)
{
	static const char *const cz[] = { "gz", "xz", "zst", "bz2" };
	const char *p = tp("x.deb");
	size_t len, hdr[8], i, k;
	char *buf;

	for (i = 0; i < 4; i++) {
		struct tu_entry ents[] = {
			{ .type = 'f', .path = "./f", .size = 1u << 20 },
		};
		struct tu_deb d = { .entries = ents, .n_entries = 1,
				    .data_comp = cz[i], .control_comp = cz[i] };
		char dname[32];
		size_t start, size;

		tu_build_deb(p, &d);
		buf = tu_read_file(p, &len);
		ck_assert_ptr_nonnull(buf);
		ck_assert_uint_eq(ar_headers((unsigned char *)buf, len, hdr, 8),
				  3);
		/* Damage data.tar's compressed stream.  zstd frames written
		 * by libarchive carry no checksum, so damaged literals would
		 * go unnoticed there: hit its frame and block headers. */
		start = hdr[2] + 60;
		size = len - start;
		if (strcmp(cz[i], "zst") != 0)
			start += size / 3;
		else
			start += 4;
		for (k = start; k < start + 16 && k < len; k++)
			buf[k] = (char)(buf[k] ^ 0x55);
		write_bytes(p, buf, len);
		snprintf(dname, sizeof(dname), "data.tar.%s", cz[i]);
		refused(p, UNPKG_ERR_CORRUPT, dname, NULL);
		free(buf);

		/* And control.tar's. */
		tu_build_deb(p, &d);
		buf = tu_read_file(p, &len);
		ck_assert_ptr_nonnull(buf);
		ck_assert_uint_eq(ar_headers((unsigned char *)buf, len, hdr, 8),
				  3);
		for (k = hdr[1] + 60 + 10; k < hdr[2] - 8; k++)
			buf[k] = (char)(buf[k] ^ 0x55);
		write_bytes(p, buf, len);
		snprintf(dname, sizeof(dname), "control.tar.%s", cz[i]);
		refused(p, UNPKG_ERR_CORRUPT, dname, NULL);
		free(buf);
	}
}
END_TEST

START_TEST(test_control_members)
{
	static const struct {
		struct tu_entry e;
		enum unpkg_errcode code;
		const char *why;
	} bad[] = {
		{ { .type = 'd', .path = "./sub/" }, UNPKG_ERR_FORMAT,
		  "'./sub/' is not directly under ./" },
		{ { .type = 'f', .path = "./sub/x", .data = "" },
		  UNPKG_ERR_FORMAT, "not directly under ./" },
		{ { .type = 'l', .path = "./postinst", .data = "/bin/sh" },
		  UNPKG_ERR_FORMAT, "'./postinst' is not a regular file" },
		{ { .type = 'h', .path = "./preinst", .data = "./control" },
		  UNPKG_ERR_FORMAT, "'./preinst' is not a regular file" },
		{ { .type = 'p', .path = "./fifo" }, UNPKG_ERR_FORMAT,
		  "not a regular file" },
		{ { .type = 'c', .path = "./dev" }, UNPKG_ERR_FORMAT,
		  "not a regular file" },
		{ { .type = 'f', .path = "../x", .data = "" }, UNPKG_ERR_UNSAFE,
		  "unsafe member name '../x'" },
		{ { .type = 'f', .path = "./a/../x", .data = "" },
		  UNPKG_ERR_UNSAFE, "'..'" },
		{ { .type = 'f', .path = "/etc/passwd", .data = "" },
		  UNPKG_ERR_UNSAFE, "absolute" },
		{ { .type = 'f', .path = "./con\ntrol", .data = "" },
		  UNPKG_ERR_UNSAFE, "newline" },
		{ { .type = 'f', .path = "./control", .data = "again" },
		  UNPKG_ERR_FORMAT, "duplicate member 'control'" },
		{ { .type = 'f', .path = ".", .data = "" }, UNPKG_ERR_FORMAT,
		  "not directly under" },
	};
	const char *p = tp("cm.deb");
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tu_deb d = { .control_members = &bad[i].e,
				    .n_control_members = 1,
				    .control_comp = "xz" };

		tu_build_deb(p, &d);
		refused(p, bad[i].code, "control.tar.xz", bad[i].why, NULL);
	}

	/* Bare names and "./" names both count; the duplicate check sees
	 * through the spelling. */
	{
		static const struct tu_entry ok[] = {
			{ .type = 'f', .path = "md5sums", .data = "m" },
			{ .type = 'f', .path = "./conffiles", .data = "" },
			{ .type = 'f', .path = "./postinst", .data = "#!/bin/sh\n",
			  .mode = 04755 },
		};
		struct tu_deb d = { .control_members = ok,
				    .n_control_members = 3 };
		struct unpkg_deb *deb;
		const struct unpkg_deb_member *m;

		tu_build_deb(p, &d);
		deb = open_ok(p);
		ck_assert_uint_eq(unpkg_deb_member_count(deb), 4);
		ck_assert_str_eq(unpkg_deb_member_at(deb, 1)->name, "md5sums");
		m = unpkg_deb_member(deb, "conffiles");
		ck_assert_ptr_nonnull(m);
		ck_assert_uint_eq(m->size, 0);
		ck_assert_ptr_nonnull(m->data);
		ck_assert_int_eq(m->data[0], 0);
		ck_assert_int_eq(unpkg_deb_member(deb, "postinst")->mode, 04755);
		unpkg_deb_free(deb);
	}
	{
		static const struct tu_entry dup[] = {
			{ .type = 'f', .path = "md5sums", .data = "m" },
			{ .type = 'f', .path = "./md5sums", .data = "m" },
		};
		struct tu_deb d = { .control_members = dup,
				    .n_control_members = 2 };

		tu_build_deb(p, &d);
		refused(p, UNPKG_ERR_FORMAT, "duplicate member 'md5sums'", NULL);
	}
	/* No control file at all. */
	{
		static const struct tu_entry cent[] = {
			{ .type = 'd', .path = "./" },
			{ .type = 'f', .path = "./postinst", .data = "" },
		};
		char *ctl;
		size_t ctllen;

		tu_build_tar(cent, 2, "gz", (void **)&ctl, &ctllen);
		{
			const struct tu_member m[] = {
				{ "debian-binary", "2.0\n", 4 },
				{ "control.tar.gz", ctl, ctllen },
				{ "data.tar.gz", ctl, ctllen },
			};

			build_members(p, m, 3);
		}
		free(ctl);
		refused(p, UNPKG_ERR_FORMAT,
			"control.tar.gz: missing control file", NULL);
	}
}
END_TEST

START_TEST(test_control_size_limit)
{
	static const char ctl[] = "Package: big\n";
	const char *p = tp("big.deb");
	struct tu_entry extra = { .type = 'f', .path = "./md5sums" };
	struct tu_deb d = { .control = ctl, .control_members = &extra,
			    .n_control_members = 1, .control_comp = "zst" };

	/* Each member is below the limit; together they are one byte over. */
	extra.size = UNPKG_DEB_CONTROL_MAX - (sizeof(ctl) - 1) + 1;
	tu_build_deb(p, &d);
	refused(p, UNPKG_ERR_FORMAT, "control.tar.zst", "exceed", NULL);
	/* Exactly at the limit is fine. */
	extra.size--;
	tu_build_deb(p, &d);
	{
		struct unpkg_deb *deb = open_ok(p);
		const struct unpkg_deb_member *m;

		m = unpkg_deb_member(deb, "md5sums");
		ck_assert_ptr_nonnull(m);
		ck_assert_uint_eq(m->size, extra.size);
		check_pattern(m->data, m->size, 0);
		unpkg_deb_free(deb);
	}
}
END_TEST

START_TEST(test_open_errors)
{
	struct unpkg_deb *deb = NULL;
	struct unpkg_err err;
	const char *p = tp("nope.deb");

	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_deb_open(p, &deb, &err), -1);
	ck_assert_ptr_null(deb);
	ck_assert_int_eq(err.code, UNPKG_ERR_SYS);
	ck_assert_int_eq(err.errnum, ENOENT);
	ck_assert_ptr_nonnull(strstr(err.msg, p));

	tu_write_file(p, "", 0644);
	refused(p, UNPKG_ERR_FORMAT, "not an ar archive", NULL);
	tu_write_file(p, "This is not a package at all, just some text.\n",
		      0644);
	refused(p, UNPKG_ERR_FORMAT, "not an ar archive", NULL);
	/* Only the magic. */
	tu_write_file(p, "!<arch>\n", 0644);
	refused(p, UNPKG_ERR_FORMAT, "missing debian-binary", NULL);

	/* A directory cannot be read. */
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_deb_open(tmp, &deb, &err), -1);
	ck_assert_ptr_null(deb);
	ck_assert_int_eq(err.code, UNPKG_ERR_SYS);
	ck_assert_int_eq(err.errnum, EISDIR);
	ck_assert_ptr_nonnull(strstr(err.msg, tmp));

	/* NULL err is allowed. */
	ck_assert_int_eq(unpkg_deb_open(p, &deb, NULL), -1);
	unpkg_deb_free(NULL);
}
END_TEST

START_TEST(test_open_fd)
{
	const char *p = tp("fd.deb");
	struct unpkg_deb *deb = NULL;
	struct unpkg_deb_entry e;
	struct unpkg_err err;
	int fd, pfd[2];
	pid_t pid;
	int st;
	char *s;

	build_simple(p, "xz", "zst");
	fd = open(p, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_deb_open_fd(fd, "pkg.deb", &deb, &err), 0);
	ck_assert_int_eq(drain(deb, &err), 0);
	unpkg_deb_free(deb);
	/* Not closed by us. */
	ck_assert_int_ge(fcntl(fd, F_GETFD), 0);
	ck_assert_int_eq(close(fd), 0);

	/* Messages use the given name. */
	tu_write_file(p, "junk", 0644);
	fd = open(p, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	deb = NULL;
	ck_assert_int_eq(unpkg_deb_open_fd(fd, "pkg.deb", &deb, &err), -1);
	ck_assert_ptr_null(deb);
	ck_assert_str_eq(err.msg, "pkg.deb: not a Debian package (not an ar archive)");
	ck_assert_int_ge(fcntl(fd, F_GETFD), 0);
	ck_assert_int_eq(close(fd), 0);

	/* A pipe works: nothing needs seeking. */
	build_simple(p, "gz", "bz2");
	s = tu_read_file(p, NULL);
	ck_assert_ptr_nonnull(s);
	free(s);
	ck_assert_int_eq(pipe(pfd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		size_t len, done = 0;
		char *b = tu_read_file(p, &len);

		close(pfd[0]);
		while (b != NULL && done < len) {
			ssize_t w = write(pfd[1], b + done, len - done);

			if (w <= 0)
				_exit(1);
			done += (size_t)w;
		}
		_exit(b == NULL);
	}
	close(pfd[1]);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_deb_open_fd(pfd[0], "pipe", &deb, &err), 0);
	next_ok(deb, &e);
	ck_assert_str_eq(e.path, "");
	ck_assert_int_eq(drain(deb, &err), 0);
	unpkg_deb_free(deb);
	close(pfd[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}
END_TEST

START_TEST(test_error_state_sticks)
{
	struct tu_entry ents[] = {
		{ .type = 'f', .path = "./ok", .data = "ok" },
		{ .type = 'f', .path = "../bad", .data = "" },
		{ .type = 'f', .path = "./later", .data = "" },
	};
	struct tu_deb d = { .entries = ents, .n_entries = 3 };
	const char *p = tp("s.deb");
	struct unpkg_deb *deb;
	struct unpkg_deb_entry e;
	struct unpkg_err err;
	const void *buf;
	size_t len;

	tu_build_deb(p, &d);
	deb = open_ok(p);
	next_ok(deb, &e);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_deb_next(deb, &e, &err), -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_UNSAFE);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_deb_next(deb, &e, &err), -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_USAGE);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_deb_read(deb, &buf, &len, &err), -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_USAGE);
	unpkg_deb_free(deb);
}
END_TEST

/* A package from the real dpkg-deb --build, in each compression. */
START_TEST(test_real_dpkg_deb_build)
{
	static const char *const z[] = { "xz", "gzip", "zstd", "none" };
	static const char *const dname[] = {
		"data.tar.xz", "data.tar.gz", "data.tar.zst", "data.tar",
	};
	char root[PATH_MAX], out[PATH_MAX], blob[PATH_MAX];
	size_t i;

	if (!have_dpkg_deb("packages built by dpkg-deb --build"))
		return;
	snprintf(root, sizeof(root), "%s", tp("pkgroot"));
	snprintf(out, sizeof(out), "%s", tp("real.deb"));
	snprintf(blob, sizeof(blob), "%s",
		 tp("pkgroot/usr/share/doc/real/blob"));
	ck_assert_int_eq(run("set -e; cd '%s'; mkdir -p pkgroot/DEBIAN pkgroot/usr/bin pkgroot/usr/share/doc/real;"
			     "printf 'Package: real\\nVersion: 1.0-1\\nArchitecture: all\\nMaintainer: T <t@example.invalid>\\nDescription: real\\n' > pkgroot/DEBIAN/control;"
			     "printf '#!/bin/sh\\nexit 0\\n' > pkgroot/DEBIAN/postinst; chmod 0755 pkgroot/DEBIAN/postinst;"
			     "printf 'tool\\n' > pkgroot/usr/bin/tool; chmod 4755 pkgroot/usr/bin/tool;"
			     "ln pkgroot/usr/bin/tool pkgroot/usr/bin/tool2;"
			     "ln -s tool pkgroot/usr/bin/link;"
			     "head -c 300000 /dev/urandom > pkgroot/usr/share/doc/real/blob",
			     tmp), 0);
	for (i = 0; i < 4; i++) {
		struct unpkg_deb *deb;
		struct unpkg_deb_entry e;
		struct unpkg_err err;
		bool seen_hard = false, seen_sym = false, seen_tool = false;
		bool seen_blob = false;
		int r;

		ck_assert_int_eq(run("dpkg-deb --root-owner-group -Z%s --build '%s' '%s' >/dev/null",
				     z[i], root, out), 0);
		deb = open_ok(out);
		ck_assert_str_eq(unpkg_deb_data_name(deb), dname[i]);
		ck_assert_ptr_nonnull(unpkg_deb_member(deb, "control"));
		ck_assert_ptr_nonnull(strstr((const char *)unpkg_deb_member(deb, "control")->data,
					     "Package: real\n"));
		ck_assert_int_eq(unpkg_deb_member(deb, "postinst")->mode, 0755);
		next_ok(deb, &e);
		ck_assert_str_eq(e.path, "");
		ck_assert_int_eq(e.type, UNPKG_ENTRY_DIR);
		unpkg_err_init(&err);
		while ((r = unpkg_deb_next(deb, &e, &err)) == 1) {
			ck_assert_str_eq(e.uname, "root");
			ck_assert_int_eq(e.uid, 0);
			if (e.type == UNPKG_ENTRY_HARDLINK) {
				seen_hard = true;
				ck_assert(strcmp(e.link, "usr/bin/tool") == 0 ||
					  strcmp(e.link, "usr/bin/tool2") == 0);
			} else if (e.type == UNPKG_ENTRY_SYMLINK) {
				seen_sym = true;
				ck_assert_str_eq(e.path, "usr/bin/link");
				ck_assert_str_eq(e.link, "tool");
			} else if (e.type == UNPKG_ENTRY_FILE &&
				   strncmp(e.path, "usr/bin/tool", 12) == 0) {
				char *s = slurp(deb, NULL);

				ck_assert_str_eq(s, "tool\n");
				ck_assert_int_eq(e.mode, 04755);
				free(s);
				seen_tool = true;
			} else if (e.type == UNPKG_ENTRY_FILE) {
				size_t len;
				char *s = slurp(deb, &len);
				char *want = tu_read_file(blob, NULL);

				ck_assert_str_eq(e.path,
						 "usr/share/doc/real/blob");
				ck_assert_uint_eq(len, 300000);
				ck_assert_ptr_nonnull(want);
				ck_assert_mem_eq(s, want, len);
				free(s);
				free(want);
				seen_blob = true;
			}
		}
		ck_assert_msg(r == 0, "%s", err.msg);
		ck_assert(seen_hard && seen_sym && seen_tool && seen_blob);
		unpkg_deb_free(deb);
	}
}
END_TEST

/* Entries of directory `path`, "." and ".." aside. */
static int count_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Descriptors open in this process. */
static int count_fds(void)
{
	return count_entries("/proc/self/fd");
}

/* Heap in use, as the allocator counts it (mmapped blocks included). */
static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/* Whether heap_in_use() sees allocations (a sanitizer's allocator may
 * replace the one mallinfo2() describes). */
static bool heap_measurable(void)
{
	size_t before = heap_in_use();
	char *p = malloc(4u << 20);
	bool ok;

	ck_assert_ptr_nonnull(p);
	ok = heap_in_use() - before >= (4u << 20);
	free(p);
	return ok;
}

/* An installer opens every package of a run before it extracts the first
 * one.  What an open package holds must not depend on its data.tar: no
 * decompressor (an xz decoder reserves its whole dictionary, 8 MiB), no
 * read buffers, no descriptor.  Each package must then still stream its
 * whole content. */
START_TEST(test_open_many_bounded)
{
	enum { N = 40 };
	static const char *const cz[] = { "xz", "zst", "bz2", "gz" };
	static const struct tu_entry ents[] = {
		{ .type = 'd', .path = "./" },
		{ .type = 'f', .path = "./big", .size = 3u << 20 },
		{ .type = 'f', .path = "./small", .data = "small\n" },
	};
	struct tu_deb d = { .entries = ents, .n_entries = 3 };
	bool measurable = heap_measurable();
	size_t c, i;

	if (!measurable)
		tu_skip_part("heap bound of many open packages",
			     "mallinfo2() does not see this allocator");
	for (c = 0; c < sizeof(cz) / sizeof(cz[0]); c++) {
		struct unpkg_deb *debs[N];
		const char *p = tp("many.deb");
		size_t before, per;
		int fds_before, fds_after;

		d.data_comp = cz[c];
		tu_build_deb(p, &d);
		/* Once, so that lazily built library state is not counted. */
		accepted(p);
		fds_before = count_fds();
		before = heap_in_use();
		for (i = 0; i < N; i++)
			debs[i] = open_ok(p);
		per = (heap_in_use() - before) / N;
		fds_after = count_fds();
		ck_assert_msg(!measurable || per < 16 * 1024,
			      "data.tar.%s: %zu bytes per open package",
			      cz[c], per);
		ck_assert_msg(fds_after == fds_before,
			      "data.tar.%s: %d descriptors held by %d open "
			      "packages", cz[c], fds_after - fds_before, N);
		for (i = 0; i < N; i++) {
			struct unpkg_deb_entry e;
			size_t len;
			char *s;

			next_ok(debs[i], &e);
			ck_assert_str_eq(e.path, "");
			next_ok(debs[i], &e);
			ck_assert_str_eq(e.path, "big");
			s = slurp(debs[i], &len);
			ck_assert_uint_eq(len, 3u << 20);
			check_pattern((unsigned char *)s, len, 0);
			free(s);
			next_ok(debs[i], &e);
			ck_assert_str_eq(e.path, "small");
			at_end(debs[i]);
			unpkg_deb_free(debs[i]);
		}
	}
}
END_TEST

/* A package is read again for its data.tar: a file replaced or rewritten
 * after the open is refused rather than mixed with the first one's
 * control members. */
START_TEST(test_changed_after_open)
{
	static const struct tu_entry ents[] = {
		{ .type = 'f', .path = "./f", .data = "one\n" },
	};
	struct tu_deb d = { .entries = ents, .n_entries = 1 };
	const char *p = tp("ch.deb");
	const char *q = tp("other.deb");
	struct unpkg_deb *deb;
	struct unpkg_deb_entry e;
	struct unpkg_err err;
	struct timespec ts[2];
	struct stat st;

	/* Replaced by another file. */
	tu_build_deb(p, &d);
	deb = open_ok(p);
	tu_build_deb(q, &d);
	ck_assert_int_eq(rename(q, p), 0);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_deb_next(deb, &e, &err), -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_CORRUPT);
	ck_assert_msg(strstr(err.msg, "changed") != NULL, "%s", err.msg);
	ck_assert_msg(strncmp(err.msg, p, strlen(p)) == 0, "%s", err.msg);
	unpkg_deb_free(deb);

	/* Rewritten in place, same size, another time stamp. */
	deb = open_ok(p);
	ck_assert_int_eq(stat(p, &st), 0);
	ts[0] = st.st_atim;
	ts[1] = st.st_mtim;
	ts[1].tv_sec -= 10;
	ck_assert_int_eq(utimensat(AT_FDCWD, p, ts, 0), 0);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_deb_next(deb, &e, &err), -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_CORRUPT);
	unpkg_deb_free(deb);

	/* Gone. */
	deb = open_ok(p);
	ck_assert_int_eq(unlink(p), 0);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_deb_next(deb, &e, &err), -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_SYS);
	ck_assert_int_eq(err.errnum, ENOENT);
	unpkg_deb_free(deb);

	/* A caller's descriptor is seeked back to where the container
	 * started, which need not be offset 0. */
	{
		char *body, *buf;
		size_t len;
		int fd;

		tu_build_deb(p, &d);
		body = tu_read_file(p, &len);
		ck_assert_ptr_nonnull(body);
		buf = malloc(len + 7);
		ck_assert_ptr_nonnull(buf);
		memcpy(buf, "prefix\n", 7);
		memcpy(buf + 7, body, len);
		write_bytes(q, buf, len + 7);
		fd = open(q, O_RDONLY);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(lseek(fd, 7, SEEK_SET), 7);
		unpkg_err_init(&err);
		ck_assert_int_eq(unpkg_deb_open_fd(fd, "q.deb", &deb, &err), 0);
		ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
		next_ok(deb, &e);
		ck_assert_str_eq(e.path, "f");
		at_end(deb);
		unpkg_deb_free(deb);
		ck_assert_int_eq(close(fd), 0);
		free(body);
		free(buf);
	}
}
END_TEST


/* --- data.tar decompressed in a thread of its own (lib/decomp.c) -------- */

/* Threads of this process beyond those it had when the test started
 * (a sanitizer's runtime may have one of its own). */
static int threads_at_start;

/* The ids of those threads (the first ones, if there are more). */
#define MAX_BASE_THREADS 64
static pid_t base_tids[MAX_BASE_THREADS];
static int n_base_tids;

/* How long a test waits for a condition that must come true (a thread
 * gone, a thread asleep) before it calls it a failure: only a condition
 * that never holds takes that long, however loaded the machine is. */
#define WAIT_LIMIT_SECONDS 60

static int count_all_threads(void)
{
	return count_entries("/proc/self/task");
}

/* Call first, while no reader is open. */
static void threads_baseline(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;

	ck_assert_ptr_nonnull(d);
	n_base_tids = 0;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.' && n_base_tids < MAX_BASE_THREADS)
			base_tids[n_base_tids++] = (pid_t)atoi(de->d_name);
	closedir(d);
	threads_at_start = count_all_threads();
}

static int count_threads(void)
{
	ck_assert_int_gt(threads_at_start, 0);
	return count_all_threads() - threads_at_start + 1;
}

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

/* The number of threads once those that were joined are gone (a joined
 * thread may linger in /proc for a moment). */
static int settled_threads(int want)
{
	struct timespec t0, now;
	int n = count_threads();

	ck_assert_int_eq(clock_gettime(CLOCK_MONOTONIC, &t0), 0);
	while (n != want) {
		ck_assert_int_eq(clock_gettime(CLOCK_MONOTONIC, &now), 0);
		if (now.tv_sec - t0.tv_sec > WAIT_LIMIT_SECONDS)
			break;
		pause_ms(10);
		n = count_threads();
	}
	return n;
}

/* Whether thread `tid` sleeps in a futex wait (a condition variable: the
 * decoder waits for room in its queue); its voluntary context switches
 * so far in *switches.  A thread that is merely not scheduled, however
 * long, is runnable ("R"), never asleep. */
static bool thread_asleep(pid_t tid, long long *switches)
{
	char path[64], *text, *p;
	bool asleep;
	long nr;

	*switches = -1;
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	text = tu_read_file(path, NULL);
	if (text == NULL)
		return true;		/* gone: it will not read any more */
	p = strrchr(text, ')');
	ck_assert_ptr_nonnull(p);
	/* exited (not yet reaped: "Z", "X") is as good as gone */
	if (p[2] == 'Z' || p[2] == 'X') {
		free(text);
		return true;
	}
	asleep = p[2] == 'S';
	free(text);
	if (!asleep)
		return false;
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	text = tu_read_file(path, NULL);
	if (text != NULL) {
		/* "running", or the number of the call it is blocked in */
		nr = strtol(text, &p, 10);
		asleep = p != text && (nr == SYS_futex
#ifdef SYS_futex_time64
				       || nr == SYS_futex_time64
#endif
				      );
		free(text);
	}
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	text = tu_read_file(path, NULL);
	if (text != NULL && (p = strstr(text, "\nvoluntary_ctxt_switches:")))
		*switches = strtoll(p + 26, NULL, 10);
	free(text);
	return asleep;
}

/* The threads started since threads_baseline() (at most 8); their
 * number. */
static int new_threads(pid_t *tids)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0, i;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL) {
		pid_t tid = (pid_t)atoi(de->d_name);

		if (de->d_name[0] == '.')
			continue;
		for (i = 0; i < n_base_tids && base_tids[i] != tid; i++)
			;
		if (i == n_base_tids && n < 8)
			tids[n++] = tid;
	}
	closedir(d);
	return n;
}

/* Whether every thread started since threads_baseline() sleeps in a futex
 * wait, or is gone; their context switches in sw[8], their ids in tids. */
static bool all_asleep(pid_t *tids, int *n, long long *sw)
{
	int i;

	*n = new_threads(tids);
	for (i = 0; i < *n; i++)
		if (!thread_asleep(tids[i], &sw[i]))
			return false;
	return true;
}

/* Wait until the threads started since threads_baseline() have stopped:
 * each asleep in a futex wait (or gone) at two looks with nothing in
 * between (no wake-up: its voluntary context switches unchanged), and
 * `still`, if not NULL, called between the two looks.  A loaded machine
 * only makes this take longer; it fails the test after
 * WAIT_LIMIT_SECONDS. */
static void wait_stopped(void (*still)(void *), void *arg)
{
	struct timespec t0, now;
	pid_t t1[8], t2[8];
	long long s1[8], s2[8];
	int n1, n2;

	ck_assert_int_eq(clock_gettime(CLOCK_MONOTONIC, &t0), 0);
	for (;;) {
		if (all_asleep(t1, &n1, s1)) {
			if (still != NULL)
				still(arg);
			if (all_asleep(t2, &n2, s2) && n1 == n2 &&
			    memcmp(t1, t2, sizeof(t1[0]) * (size_t)n1) == 0 &&
			    memcmp(s1, s2, sizeof(s1[0]) * (size_t)n1) == 0)
				return;
		}
		ck_assert_int_eq(clock_gettime(CLOCK_MONOTONIC, &now), 0);
		ck_assert_msg(now.tv_sec - t0.tv_sec <= WAIT_LIMIT_SECONDS,
			      "a decoder thread did not stop in %d s",
			      WAIT_LIMIT_SECONDS);
		pause_ms(1);
	}
}

/* Incompressible bytes, the same for the same seed. */
static char *random_bytes(size_t n, uint32_t seed)
{
	char *b = malloc(n);
	uint32_t x = seed | 1;
	size_t i;

	ck_assert_ptr_nonnull(b);
	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		b[i] = (char)(x >> 24);
	}
	return b;
}

/* Incompressible content that makes data.tar large enough to be given a
 * thread (DATA_THREAD_MIN in deb.c). */
#define RANDOM_SIZE (256u * 1024)

/* While data.tar is read, a compressed one has its decompressor in a
 * second thread, an uncompressed one none; the thread is gone once the
 * end is reached, and no package holds one before its first entry.  A
 * small data.tar gets no thread. */
START_TEST(test_thread_lifecycle)
{
	char *rnd = random_bytes(RANDOM_SIZE, 5);
	const struct tu_entry ents[] = {
		{ .type = 'd', .path = "./" },
		{ .type = 'f', .path = "./big", .size = 4u << 20 },
		{ .type = 'f', .path = "./rnd", .data = rnd,
		  .size = RANDOM_SIZE },
		{ .type = 'f', .path = "./small", .data = "small\n" },
	};
	struct tu_deb d = { .entries = ents, .n_entries = 4 };
	size_t c;

	threads_baseline();
	for (c = 0; c < sizeof(comps) / sizeof(comps[0]); c++) {
		const char *p = tp("t.deb");
		struct unpkg_deb *deb;
		struct unpkg_deb_entry e;
		bool threaded = strcmp(comps[c], "none") != 0;
		char *s;
		size_t len;

		d.data_comp = comps[c];
		tu_build_deb(p, &d);
		deb = open_ok(p);
		ck_assert_int_eq(count_threads(), 1);
		next_ok(deb, &e);
		ck_assert_int_eq(count_threads(), threaded ? 2 : 1);
		next_ok(deb, &e);
		ck_assert_str_eq(e.path, "big");
		s = slurp(deb, &len);
		ck_assert_uint_eq(len, 4u << 20);
		check_pattern((unsigned char *)s, len, 0);
		free(s);
		next_ok(deb, &e);
		ck_assert_str_eq(e.path, "rnd");
		s = slurp(deb, &len);
		ck_assert_uint_eq(len, RANDOM_SIZE);
		ck_assert_int_eq(memcmp(s, rnd, len), 0);
		free(s);
		next_ok(deb, &e);
		ck_assert_str_eq(e.path, "small");
		s = slurp(deb, NULL);
		ck_assert_str_eq(s, "small\n");
		free(s);
		at_end(deb);
		ck_assert_msg(settled_threads(1) == 1, "data.tar.%s: thread "
			      "still there at the end", comps[c]);
		unpkg_deb_free(deb);
	}
	free(rnd);

	/* Small: read here. */
	d.data_comp = "xz";
	d.n_entries = 2;
	tu_build_deb(tp("small.deb"), &d);
	{
		struct unpkg_deb *deb = open_ok(tp("small.deb"));
		struct unpkg_deb_entry e;

		next_ok(deb, &e);
		ck_assert_int_eq(count_threads(), 1);
		unpkg_deb_free(deb);
	}
}
END_TEST

/* The caller may stop reading at any point (an error while writing, a
 * package rolled back): unpkg_deb_free() stops and joins the thread, which
 * may be blocked on a full queue or still decompressing, and leaks
 * nothing (the sanitizer build checks that). */
START_TEST(test_thread_early_stop)
{
	char *rnd = random_bytes(RANDOM_SIZE, 6);
	const struct tu_entry ents[] = {
		{ .type = 'd', .path = "./" },
		{ .type = 'f', .path = "./big", .size = 16u << 20 },
		{ .type = 'f', .path = "./rnd", .data = rnd,
		  .size = RANDOM_SIZE },
	};
	static const char *const cz[] = { "xz", "gz", "zst", "bz2" };
	struct tu_deb d = { .entries = ents, .n_entries = 3 };
	int fds = count_fds();
	size_t c;
	int k;

	threads_baseline();
	for (c = 0; c < sizeof(cz) / sizeof(cz[0]); c++) {
		const char *p = tp("stop.deb");

		d.data_comp = cz[c];
		tu_build_deb(p, &d);
		for (k = 0; k < 8; k++) {
			struct unpkg_deb *deb = open_ok(p);
			struct unpkg_deb_entry e;
			struct unpkg_err err;
			const void *buf;
			size_t len;
			int i;

			next_ok(deb, &e);
			if (k >= 1)
				next_ok(deb, &e);
			/* Read k - 1 blocks of big (k = 7: wait for the
			 * queue to fill up first). */
			unpkg_err_init(&err);
			for (i = 1; i < k; i++)
				ck_assert_int_eq(unpkg_deb_read(deb, &buf, &len,
								&err), 1);
			if (k == 7)
				wait_stopped(NULL, NULL);
			unpkg_deb_free(deb);
			ck_assert_msg(settled_threads(1) == 1,
				      "data.tar.%s: thread left after stop %d",
				      cz[c], k);
			ck_assert_int_eq(count_fds(), fds);
		}
	}
	free(rnd);
}
END_TEST

/* The tar reader refuses an entry while the thread has read ahead: the
 * thread is stopped at once, not left running until the free. */
START_TEST(test_thread_stops_on_error)
{
	char *rnd = random_bytes(RANDOM_SIZE, 7);
	const struct tu_entry ents[] = {
		{ .type = 'f', .path = "./ok", .data = "ok" },
		{ .type = 'f', .path = "../bad", .data = "" },
		{ .type = 'f', .path = "./big", .size = 8u << 20 },
		{ .type = 'f', .path = "./rnd", .data = rnd,
		  .size = RANDOM_SIZE },
	};
	struct tu_deb d = { .entries = ents, .n_entries = 4,
			    .data_comp = "xz" };
	const char *p = tp("e.deb");
	struct unpkg_deb *deb;
	struct unpkg_deb_entry e;
	struct unpkg_err err;

	threads_baseline();
	tu_build_deb(p, &d);
	deb = open_ok(p);
	next_ok(deb, &e);
	ck_assert_int_eq(count_threads(), 2);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_deb_next(deb, &e, &err), -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_UNSAFE);
	ck_assert_msg(strstr(err.msg, "../bad") != NULL, "%s", err.msg);
	ck_assert_int_eq(settled_threads(1), 1);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_deb_next(deb, &e, &err), -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_USAGE);
	unpkg_deb_free(deb);
	free(rnd);
}
END_TEST

/* A data.tar whose content is partly incompressible, so that damage at
 * different places of the compressed stream hits different entries. */
static void build_mixed(const char *path, const char *comp)
{
	char *r1 = random_bytes(300000, 1);
	char *r2 = random_bytes(200000, 2);
	const struct tu_entry ents[] = {
		{ .type = 'd', .path = "./" },
		{ .type = 'f', .path = "./a", .size = 300000 },
		{ .type = 'f', .path = "./b", .data = r1, .size = 300000 },
		{ .type = 'f', .path = "./c", .data = "c\n" },
		{ .type = 'f', .path = "./d", .data = r2, .size = 200000 },
		{ .type = 'f', .path = "./e", .size = 100000 },
	};
	struct tu_deb d = { .entries = ents, .n_entries = 6,
			    .data_comp = comp };

	tu_build_deb(path, &d);
	free(r1);
	free(r2);
}

/* Open `path` (a regular file: data.tar is read by the thread) or the
 * same bytes through a pipe (no thread: a pipe is read once, in the
 * caller's thread), under the same name, and read everything.  Returns
 * 1 if all was read, 0 if the open failed, -1 if the stream did. */
static int read_all(const char *path, bool via_pipe, struct unpkg_err *err)
{
	struct unpkg_deb *deb = NULL;
	int pfd[2] = { -1, -1 };
	pid_t pid = -1;
	int r, st;

	unpkg_err_init(err);
	if (!via_pipe) {
		r = unpkg_deb_open(path, &deb, err);
	} else {
		ck_assert_int_eq(pipe(pfd), 0);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			size_t len, done = 0;
			char *b = tu_read_file(path, &len);

			close(pfd[0]);
			signal(SIGPIPE, SIG_DFL);
			while (b != NULL && done < len) {
				ssize_t w = write(pfd[1], b + done,
						  len - done);

				if (w <= 0)
					_exit(1);
				done += (size_t)w;
			}
			_exit(0);
		}
		close(pfd[1]);
		r = unpkg_deb_open_fd(pfd[0], path, &deb, err);
	}
	if (r < 0) {
		r = 0;
	} else {
		if (via_pipe)
			ck_assert_int_eq(count_threads(), 1);
		r = drain(deb, err) < 0 ? -1 : 1;
	}
	unpkg_deb_free(deb);
	if (via_pipe) {
		close(pfd[0]);
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	}
	return r;
}

/* Damage anywhere in the compressed data.tar is reported by the threaded
 * reader at the same entry, with the same code and message, as by the
 * single-threaded one: the thread passes on everything it decompressed
 * before the failure, then the failure.  (What a pipe's reader finds at
 * open, in the first block of data.tar, a parked package's finds at its
 * first entry: its open decompresses nothing.) */
START_TEST(test_thread_same_errors)
{
	static const char *const cz[] = { "xz", "gz", "zst", "bz2" };
	const char *p = tp("mixed.deb");
	const char *q = tp("bad.deb");
	size_t c, k;
	int streamed = 0, differs = 0;

	threads_baseline();
	for (c = 0; c < sizeof(cz) / sizeof(cz[0]); c++) {
		size_t len, hdr[8], start, size;
		char *buf;

		build_mixed(p, cz[c]);
		buf = tu_read_file(p, &len);
		ck_assert_ptr_nonnull(buf);
		ck_assert_uint_eq(ar_headers((unsigned char *)buf, len, hdr, 8),
				  3);
		start = hdr[2] + 60;
		size = len - start;
		for (k = 0; k < 3 * 10; k++) {
			size_t off = start + size * (k % 10) / 10 + 7 * k;
			struct unpkg_err e1, e2;
			int r1, r2;
			char *mod = malloc(len);

			ck_assert_ptr_nonnull(mod);
			memcpy(mod, buf, len);
			if (off >= len)
				off = len - 1;
			if (k < 10) {
				/* Bytes damaged. */
				size_t i;

				for (i = off; i < off + 8 && i < len; i++)
					mod[i] = (char)(mod[i] ^ 0x5a);
				write_bytes(q, mod, len);
			} else if (k < 20) {
				/* The file cut short. */
				write_bytes(q, mod, off);
			} else {
				/* One bit. */
				mod[off] = (char)(mod[off] ^ 0x10);
				write_bytes(q, mod, len);
			}
			free(mod);
			r1 = read_all(q, false, &e1);
			r2 = read_all(q, true, &e2);
			streamed += r1 < 0;
			if ((r1 > 0) != (r2 > 0) || e1.code != e2.code ||
			    strcmp(e1.msg, e2.msg) != 0) {
				fprintf(stderr, "data.tar.%s, case %zu: "
					"thread %d '%s', no thread %d '%s'\n",
					cz[c], k, r1, e1.msg, r2, e2.msg);
				differs++;
			}
		}
		free(buf);
	}
	ck_assert_int_eq(differs, 0);
	/* Most damage is found while streaming, through the thread. */
	ck_assert_int_ge(streamed, 40);
}
END_TEST

/* A read error in the thread is reported as the failed system call, as
 * without it.  The error is injected into every thread with a seccomp
 * filter once the thread runs (only it reads the file then), in a child
 * process of our own. */
static int deny_read_everywhere(void)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_read, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EIO),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(insns) / sizeof(insns[0]),
		.filter = insns,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			    SECCOMP_FILTER_FLAG_TSYNC, &prog);
}

START_TEST(test_thread_read_error)
{
	char *rnd = random_bytes(6u << 20, 3);
	const struct tu_entry ents[] = {
		{ .type = 'd', .path = "./" },
		{ .type = 'f', .path = "./big", .data = rnd,
		  .size = 6u << 20 },
	};
	struct tu_deb d = { .entries = ents, .n_entries = 2,
			    .data_comp = "gz" };
	const char *p = tp("eio.deb");
	pid_t pid;
	int st;

	tu_build_deb(p, &d);
	free(rnd);
	fflush(NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct unpkg_deb *deb = NULL;
		struct unpkg_deb_entry e;
		struct unpkg_err err;
		const void *buf;
		size_t len;
		int r;

		threads_baseline();
		unpkg_err_init(&err);
		if (unpkg_deb_open(p, &deb, &err) < 0 ||
		    unpkg_deb_next(deb, &e, &err) != 1 ||
		    unpkg_deb_next(deb, &e, &err) != 1) {
			fprintf(stderr, "setup: %s\n", err.msg);
			_exit(1);
		}
		if (deny_read_everywhere() < 0) {
			char why[200];

			snprintf(why, sizeof(why), "seccomp with TSYNC: %s",
				 strerror(errno));
			tu_skip_part("a read error in the decoder thread", why);
			_exit(77);
		}
		while ((r = unpkg_deb_read(deb, &buf, &len, &err)) == 1)
			;
		if (r != -1 || err.code != UNPKG_ERR_SYS ||
		    err.errnum != EIO ||
		    strstr(err.msg, "eio.deb: data.tar.gz: big: ") == NULL) {
			fprintf(stderr, "got %d, code %d, errnum %d: %s\n", r,
				err.code, err.errnum, err.msg);
			_exit(2);
		}
		unpkg_deb_free(deb);
		/* Not exit(): the sanitizers' exit handlers read files. */
		_exit(count_threads() == 1 ? 0 : 3);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	ck_assert_msg(WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 77,
		      "child exited with %d", WEXITSTATUS(st));
}
END_TEST

/* No thread can be started (clone denied): the reader decompresses in
 * the caller's thread, through the same code, with the same results. */
START_TEST(test_thread_unavailable)
{
	const char *p = tp("mixed.deb");
	const char *q = tp("bad.deb");
	struct unpkg_err e1, e2;
	size_t len, hdr[8];
	char *buf;
	pid_t pid;
	int st, r2;

	build_mixed(p, "xz");
	buf = tu_read_file(p, &len);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(ar_headers((unsigned char *)buf, len, hdr, 8), 3);
	buf[hdr[2] + 60 + (len - hdr[2] - 60) / 2] ^= 0x21;
	write_bytes(q, buf, len);
	free(buf);
	threads_baseline();
	r2 = read_all(q, true, &e2);
	ck_assert_int_eq(r2, -1);
	fflush(NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (tu_deny_syscall(SYS_clone, EAGAIN) < 0 ||
		    tu_deny_syscall(SYS_clone3, ENOSYS) < 0) {
			char why[200];

			snprintf(why, sizeof(why), "seccomp: %s",
				 strerror(errno));
			tu_skip_part("reading where no thread can be started",
				     why);
			_exit(77);
		}
		if (read_all(p, false, &e1) != 1) {
			fprintf(stderr, "%s\n", e1.msg);
			_exit(1);
		}
		if (read_all(q, false, &e1) != -1 || e1.code != e2.code ||
		    strcmp(e1.msg, e2.msg) != 0) {
			fprintf(stderr, "got '%s', want '%s'\n", e1.msg,
				e2.msg);
			_exit(2);
		}
		_exit(count_threads() == 1 ? 0 : 3);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	ck_assert_msg(WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 77,
		      "child exited with %d", WEXITSTATUS(st));
}
END_TEST

/* xz streams, concatenated: libarchive reads them as one. */
static void xz_append(char **buf, size_t *len, const void *in, size_t n)
{
	size_t cap = *len + lzma_stream_buffer_bound(n);
	size_t pos = *len;

	*buf = realloc(*buf, cap);
	ck_assert_ptr_nonnull(*buf);
	ck_assert_int_eq(lzma_easy_buffer_encode(0, LZMA_CHECK_CRC64, NULL,
						 in, n, (uint8_t *)*buf, &pos,
						 cap),
			 LZMA_OK);
	*len = pos;
}

/* The tar reader may fail for a reason of its own (a damaged header)
 * while the thread, ahead of it, has already met a failure of its own (the
 * file ends early).  The tar reader's complaint is the one reported, as
 * without the thread, which would never have read that far. */
START_TEST(test_thread_own_error_first)
{
	static const struct tu_entry cent[] = {
		{ .type = 'f', .path = "./control", .data = "Package: t\n" },
	};
	char *rnd = random_bytes(RANDOM_SIZE, 4);
	const struct tu_entry dent[] = {
		{ .type = 'f', .path = "./a", .data = "a\n" },
		{ .type = 'f', .path = "./b", .data = "b\n" },
		{ .type = 'f', .path = "./c", .data = rnd,
		  .size = RANDOM_SIZE },
	};
	const char *p = tp("own.deb");
	char *ctl, *tar, *data = NULL, *buf;
	size_t ctllen, tarlen, datalen = 0, len, hdr[8];
	struct unpkg_err e1, e2;

	threads_baseline();
	tu_build_tar(cent, 1, "none", (void **)&ctl, &ctllen);
	tu_build_tar(dent, 3, "none", (void **)&tar, &tarlen);
	free(rnd);
	/* b's header: its checksum no longer matches. */
	ck_assert_uint_gt(tarlen, 3 * 512);
	ck_assert_int_eq(tar[2 * 512], '.');
	tar[2 * 512] = 'X';
	xz_append(&data, &datalen, tar, tarlen);
	{
		const struct tu_member m[] = {
			{ "debian-binary", "2.0\n", 4 },
			{ "control.tar", ctl, ctllen },
			{ "data.tar.xz", data, datalen },
		};

		build_members(p, m, 3);
	}
	buf = tu_read_file(p, &len);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(ar_headers((unsigned char *)buf, len, hdr, 8), 3);
	/* Cut where the single-threaded reader, which decompresses 64 KiB
	 * blocks, has given the tar reader the first block, and the thread,
	 * which reads the same blocks ahead, surely meets the end. */
	ck_assert_uint_gt(datalen, 200000);
	write_bytes(p, buf, hdr[2] + 60 + 100000);
	ck_assert_int_eq(read_all(p, false, &e1), -1);
	ck_assert_int_eq(read_all(p, true, &e2), -1);
	ck_assert_str_eq(e1.msg, e2.msg);
	ck_assert_int_eq(e1.code, UNPKG_ERR_CORRUPT);
	ck_assert_msg(strstr(e1.msg, "truncated") == NULL, "%s", e1.msg);
	free(buf);
	free(ctl);
	free(tar);
	free(data);
}
END_TEST

/* After the end of the tar archive, the thread reads the rest of the
 * stream (a few MiB at most) and refuses damage there, as dpkg-deb's
 * decompressor does; beyond that, what follows is not read. */
START_TEST(test_thread_after_tar_end)
{
	static const struct tu_entry cent[] = {
		{ .type = 'f', .path = "./control", .data = "Package: t\n" },
	};
	char *rnd = random_bytes(RANDOM_SIZE, 8);
	const struct tu_entry dent[] = {
		{ .type = 'f', .path = "./f", .size = 70000 },
		{ .type = 'f', .path = "./r", .data = rnd,
		  .size = RANDOM_SIZE },
	};
	static const size_t tails[] = { 100000, 16u << 20 };
	const char *p = tp("tail.deb");
	char *ctl, *tar;
	size_t ctllen, tarlen, i;

	tu_build_tar(cent, 1, "none", (void **)&ctl, &ctllen);
	tu_build_tar(dent, 2, "none", (void **)&tar, &tarlen);
	free(rnd);
	for (i = 0; i < 2; i++) {
		char *zeros = calloc(1, tails[i]);
		char *data = NULL;
		size_t datalen = 0, first;
		int bad;

		ck_assert_ptr_nonnull(zeros);
		xz_append(&data, &datalen, tar, tarlen);
		first = datalen;
		xz_append(&data, &datalen, zeros, tails[i]);
		free(zeros);
		for (bad = 0; bad < 2; bad++) {
			const struct tu_member m[] = {
				{ "debian-binary", "2.0\n", 4 },
				{ "control.tar", ctl, ctllen },
				{ "data.tar.xz", data, datalen },
			};

			/* The second stream's footer magic. */
			if (bad)
				data[datalen - 1] ^= 0x40;
			build_members(p, m, 3);
			if (bad && i == 0)
				refused(p, UNPKG_ERR_CORRUPT,
					"data.tar.xz: corrupt after the end of the tar archive",
					NULL);
			else
				accepted(p);
		}
		ck_assert_uint_gt(datalen, first);
		free(data);
	}
	free(ctl);
	free(tar);
}
END_TEST

/* --- gzip trailers ------------------------------------------------------- */

/* A gzip member of `in` appended to *buf, made by zlib. */
static void gz_append(char **buf, size_t *len, const void *in, size_t n)
{
	z_stream z;
	size_t cap;

	memset(&z, 0, sizeof(z));
	ck_assert_int_eq(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8,
				      Z_DEFAULT_STRATEGY), Z_OK);
	cap = *len + deflateBound(&z, (uLong)n) + 64;
	*buf = realloc(*buf, cap);
	ck_assert_ptr_nonnull(*buf);
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)n;
	z.next_out = (Bytef *)*buf + *len;
	z.avail_out = (uInt)(cap - *len);
	ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
	*len += z.total_out;
	ck_assert_int_eq(deflateEnd(&z), Z_OK);
}

/* libarchive's gzip filter does not look at a member's trailer (CRC-32
 * and length), which the tar reader never reaches anyway; dpkg-deb
 * checks it, and so must unpkg, for a small data.tar.gz read in the
 * caller's thread and a large one given a thread (DATA_THREAD_MIN in
 * deb.c), or read from a pipe. */
START_TEST(test_gzip_trailer)
{
	static const struct tu_entry cent[] = {
		{ .type = 'f', .path = "./control", .data = "Package: z\n" },
	};
	char *rnd = random_bytes(RANDOM_SIZE, 9);
	const struct tu_entry small[] = {
		{ .type = 'd', .path = "./" },
		{ .type = 'f', .path = "./f", .size = 100000 },
	};
	/* Large: compressed, past DATA_THREAD_MIN; decompressed, more
	 * than the thread's queue holds, so that it is still there to be
	 * counted after the first entry. */
	const struct tu_entry large[] = {
		{ .type = 'f', .path = "./f", .size = 100000 },
		{ .type = 'f', .path = "./r", .data = rnd,
		  .size = RANDOM_SIZE },
		{ .type = 'f', .path = "./big", .size = 4u << 20 },
	};
	static const char *const what[] = { "CRC-32", "length" };
	/* A byte of the trailer's CRC-32, of its length: from the end. */
	static const size_t at[] = { 7, 4 };
	const char *p = tp("trailer.deb");
	char *ctl, *data;
	size_t ctllen, datalen;
	bool dpkg = have_dpkg_deb("dpkg-deb on damaged gzip trailers");
	int big, where;

	threads_baseline();
	tu_build_tar(cent, 1, "none", (void **)&ctl, &ctllen);
	for (big = 0; big < 2; big++) {
		for (where = 0; where < 2; where++) {
			const struct tu_member m[] = {
				{ "debian-binary", "2.0\n", 4 },
				{ "control.tar", ctl, ctllen },
				{ "data.tar.gz", NULL, 0 },
			};
			struct tu_member mm[3];
			struct unpkg_deb *deb;
			struct unpkg_deb_entry e;
			struct unpkg_err e1;

			tu_build_tar(big ? large : small, big ? 3 : 2, "gz",
				     (void **)&data, &datalen);
			if (big)
				ck_assert_uint_ge(datalen, 128 * 1024);
			else
				ck_assert_uint_lt(datalen, 128 * 1024);
			memcpy(mm, m, sizeof(mm));
			mm[2].data = data;
			mm[2].size = datalen;
			build_members(p, mm, 3);
			accepted(p);
			/* The reader this test means (once the thread of the
			 * last reader is gone). */
			ck_assert_int_eq(settled_threads(1), 1);
			deb = open_ok(p);
			next_ok(deb, &e);
			ck_assert_int_eq(count_threads(), big ? 2 : 1);
			unpkg_deb_free(deb);

			/* A byte of the trailer's CRC-32 or length. */
			data[datalen - at[where]] ^= 0xff;
			build_members(p, mm, 3);
			if (dpkg)
				ck_assert_msg(run("dpkg-deb --fsys-tarfile %s "
						  ">/dev/null 2>&1", p) != 0,
					      "dpkg-deb accepts a damaged %s",
					      what[where]);
			refused(p, UNPKG_ERR_CORRUPT, "data.tar.gz: ",
				"corrupt", NULL);
			if (big) {
				ck_assert_int_eq(settled_threads(1), 1);
				ck_assert_int_eq(read_all(p, true, &e1), -1);
				ck_assert_int_eq(e1.code, UNPKG_ERR_CORRUPT);
				ck_assert_msg(strstr(e1.msg, "corrupt") != NULL,
					      "%s", e1.msg);
			}
			free(data);
		}
	}
	free(ctl);
	free(rnd);
}
END_TEST

/* control.tar.gz is read whole at open, its trailer too. */
START_TEST(test_gzip_control_trailer)
{
	static const struct tu_entry cent[] = {
		{ .type = 'f', .path = "./control", .data = "Package: z\n" },
		{ .type = 'f', .path = "./postinst", .data = "#!/bin/sh\n",
		  .mode = 0755 },
	};
	static const struct tu_entry dent[] = {
		{ .type = 'f', .path = "./f", .data = "f\n" },
	};
	static const size_t at[] = { 7, 4 };
	const char *p = tp("ctrailer.deb");
	char *ctl, *data;
	size_t ctllen, datalen;
	int where;

	tu_build_tar(dent, 1, "gz", (void **)&data, &datalen);
	for (where = 0; where < 2; where++) {
		const struct tu_member m[] = {
			{ "debian-binary", "2.0\n", 4 },
			{ "control.tar.gz", NULL, 0 },
			{ "data.tar.gz", data, datalen },
		};
		struct tu_member mm[3];
		struct unpkg_deb *deb = NULL;
		struct unpkg_err err;

		tu_build_tar(cent, 2, "gz", (void **)&ctl, &ctllen);
		memcpy(mm, m, sizeof(mm));
		mm[1].data = ctl;
		mm[1].size = ctllen;
		build_members(p, mm, 3);
		accepted(p);
		ctl[ctllen - at[where]] ^= 0x01;
		build_members(p, mm, 3);
		unpkg_err_init(&err);
		ck_assert_int_eq(unpkg_deb_open(p, &deb, &err), -1);
		ck_assert_ptr_null(deb);
		ck_assert_int_eq(err.code, UNPKG_ERR_CORRUPT);
		ck_assert_msg(strstr(err.msg, "control.tar.gz: ") != NULL &&
			      strstr(err.msg, "corrupt") != NULL, "%s",
			      err.msg);
		free(ctl);
	}
	free(data);
}
END_TEST

/* A data.tar.gz of two gzip members, as gzip and dpkg-deb read it: one
 * stream, whose halves are split inside an entry's content. */
START_TEST(test_gzip_members)
{
	static const struct tu_entry cent[] = {
		{ .type = 'f', .path = "./control", .data = "Package: z\n" },
	};
	char *rnd = random_bytes(RANDOM_SIZE, 10);
	const struct tu_entry dent[] = {
		{ .type = 'd', .path = "./" },
		{ .type = 'f', .path = "./f", .size = 100000 },
		{ .type = 'f', .path = "./g", .data = "hello\n" },
		{ .type = 'f', .path = "./r", .data = rnd,
		  .size = RANDOM_SIZE },
		{ .type = 'f', .path = "./big", .size = 4u << 20 },
	};
	const char *p = tp("members.deb");
	bool dpkg = have_dpkg_deb("dpkg-deb on the same members");
	char *ctl, *tar;
	size_t ctllen, tarlen;
	int big;

	threads_baseline();
	tu_build_tar(cent, 1, "none", (void **)&ctl, &ctllen);
	for (big = 0; big < 2; big++) {
		/* Small: without ./r and ./big (and in the caller's
		 * thread); large: with them (given a thread, which the
		 * queue's worth of ./big keeps there to be counted). */
		size_t n = big ? 5 : 3;
		char *data = NULL;
		size_t datalen = 0, len, first;
		struct unpkg_deb *deb;
		struct unpkg_deb_entry e;
		char *s;

		tu_build_tar(dent, n, "none", (void **)&tar, &tarlen);
		gz_append(&data, &datalen, tar, 50000);
		first = datalen;
		gz_append(&data, &datalen, tar + 50000, tarlen - 50000);
		{
			const struct tu_member m[] = {
				{ "debian-binary", "2.0\n", 4 },
				{ "control.tar", ctl, ctllen },
				{ "data.tar.gz", data, datalen },
			};

			build_members(p, m, 3);
		}
		ck_assert(big ? datalen >= 128 * 1024 : datalen < 128 * 1024);
		if (dpkg)
			ck_assert_int_eq(run("dpkg-deb --fsys-tarfile %s "
					     ">/dev/null", p), 0);
		ck_assert_int_eq(settled_threads(1), 1);
		deb = open_ok(p);
		next_ok(deb, &e);
		ck_assert_int_eq(count_threads(), big ? 2 : 1);
		ck_assert_str_eq(e.path, "");
		next_ok(deb, &e);
		ck_assert_str_eq(e.path, "f");
		s = slurp(deb, &len);
		ck_assert_uint_eq(len, 100000);
		check_pattern((unsigned char *)s, len, 0);
		free(s);
		next_ok(deb, &e);
		ck_assert_str_eq(e.path, "g");
		s = slurp(deb, &len);
		ck_assert_str_eq(s, "hello\n");
		free(s);
		if (big) {
			next_ok(deb, &e);
			ck_assert_str_eq(e.path, "r");
			s = slurp(deb, &len);
			ck_assert_uint_eq(len, RANDOM_SIZE);
			ck_assert_mem_eq(s, rnd, RANDOM_SIZE);
			free(s);
			next_ok(deb, &e);
			ck_assert_str_eq(e.path, "big");
			s = slurp(deb, &len);
			ck_assert_uint_eq(len, 4u << 20);
			check_pattern((unsigned char *)s, len, 0);
			free(s);
		}
		at_end(deb);
		unpkg_deb_free(deb);
		/* The first member's CRC-32, in the middle of the stream. */
		data[first - 6] ^= 0x08;
		{
			const struct tu_member m[] = {
				{ "debian-binary", "2.0\n", 4 },
				{ "control.tar", ctl, ctllen },
				{ "data.tar.gz", data, datalen },
			};

			build_members(p, m, 3);
		}
		refused(p, UNPKG_ERR_CORRUPT, "data.tar.gz: ", "corrupt",
			NULL);
		free(data);
		free(tar);
	}
	free(ctl);
	free(rnd);
}
END_TEST

/* Opening a package that is parked decompresses none of its data.tar: it
 * checks the magic number only, so damage just after it is found at the
 * first entry, where a pipe's reader, which opens data.tar at once, finds
 * it at open.  A wrong magic number is refused at open, in the words of
 * the reader. */
START_TEST(test_open_decodes_nothing)
{
	const char *p = tp("dn.deb");
	const char *q = tp("dn-bad.deb");
	size_t len, hdr[8], c;
	char *buf;

	for (c = 1; c < sizeof(comps) / sizeof(comps[0]); c++) {
		struct unpkg_err e1, e2;
		size_t start;

		build_simple(p, "gz", comps[c]);
		buf = tu_read_file(p, &len);
		ck_assert_ptr_nonnull(buf);
		ck_assert_uint_eq(ar_headers((unsigned char *)buf, len, hdr, 8),
				  3);
		start = hdr[2] + 60;
		/* Past the magic number and the stream header. */
		memset(buf + start + 14, 0x5a, 32);
		write_bytes(q, buf, len);
		ck_assert_int_eq(read_all(q, false, &e1), -1);
		ck_assert_int_eq(read_all(q, true, &e2), 0);
		ck_assert_int_eq(e1.code, UNPKG_ERR_CORRUPT);
		ck_assert_str_eq(e1.msg, e2.msg);
		/* The magic number. */
		buf[start + 1] ^= 0x01;
		write_bytes(q, buf, len);
		ck_assert_int_eq(read_all(q, false, &e1), 0);
		ck_assert_int_eq(read_all(q, true, &e2), 0);
		ck_assert_str_eq(e1.msg, e2.msg);
		free(buf);
	}
}
END_TEST

/* --- data.tar started early (unpkg_deb_prefetch()) ----------------------- */

/* Read the whole of two readers of the same data.tar side by side: the
 * same entries with the same content. */
static void same_stream(struct unpkg_deb *a, struct unpkg_deb *b)
{
	struct unpkg_deb_entry ea, eb;
	struct unpkg_err err;
	int ra, rb;

	for (;;) {
		unpkg_err_init(&err);
		ra = unpkg_deb_next(a, &ea, &err);
		ck_assert_msg(ra >= 0, "%s", err.msg);
		rb = unpkg_deb_next(b, &eb, &err);
		ck_assert_msg(rb >= 0, "%s", err.msg);
		ck_assert_int_eq(ra, rb);
		if (ra == 0)
			return;
		ck_assert_str_eq(ea.path, eb.path);
		ck_assert_int_eq(ea.type, eb.type);
		ck_assert_int_eq(ea.size, eb.size);
		if (ea.type == UNPKG_ENTRY_FILE) {
			size_t la, lb;
			char *ca = slurp(a, &la), *cb = slurp(b, &lb);

			ck_assert_uint_eq(la, lb);
			ck_assert_int_eq(memcmp(ca, cb, la), 0);
			free(ca);
			free(cb);
		}
	}
}

/* Started early, a compressed data.tar, however small, is opened (its
 * descriptor) and decoded before the first entry is asked for, by a
 * thread that waits once it is as far ahead as allowed (a small one may
 * be done already); what is read is what a reader started at its turn
 * reads.  An uncompressed one starts nothing. */
START_TEST(test_prefetch_same_entries)
{
	char *rnd = random_bytes(RANDOM_SIZE, 7);
	const struct tu_entry ents[] = {
		{ .type = 'd', .path = "./" },
		{ .type = 'f', .path = "./small", .data = "small\n" },
		{ .type = 'f', .path = "./rnd", .data = rnd,
		  .size = RANDOM_SIZE },
		{ .type = 'f', .path = "./big", .size = 4u << 20 },
	};
	struct tu_deb d = { .entries = ents };
	bool two = unpkg_decomp_two_cpus();
	size_t c, n;

	threads_baseline();
	for (c = 0; c < sizeof(comps) / sizeof(comps[0]); c++)
		for (n = 2; n <= 4; n += 2) {
			const char *p = tp("pf.deb");
			bool comp = strcmp(comps[c], "none") != 0;
			struct unpkg_deb *plain, *early;
			int fds;

			d.data_comp = comps[c];
			d.n_entries = n;
			tu_build_deb(p, &d);
			plain = open_ok(p);
			early = open_ok(p);
			fds = count_fds();
			unpkg_deb_prefetch(early, 1u << 20);
			ck_assert_int_eq(count_fds(), fds + (comp && two));
			if (n == 4)
				ck_assert_msg(count_threads() ==
						      (comp && two ? 2 : 1),
					      "data.tar.%s: %d threads",
					      comps[c], count_threads());
			/* Twice is once. */
			unpkg_deb_prefetch(early, 1u << 20);
			ck_assert_int_eq(count_fds(), fds + (comp && two));
			same_stream(early, plain);
			ck_assert_int_eq(settled_threads(1), 1);
			unpkg_deb_free(plain);
			unpkg_deb_free(early);
		}
	free(rnd);
}
END_TEST

/* The read offset of the descriptor this process has open on `path`
 * (exactly one). */
static long long fd_pos(const char *path)
{
	char link[PATH_MAX], want[PATH_MAX], info[300], *text, *pos;
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *de;
	long long off = -1;
	int found = 0;

	ck_assert_ptr_nonnull(dir);
	ck_assert_ptr_nonnull(realpath(path, want));
	while ((de = readdir(dir)) != NULL) {
		char name[300];
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(name, sizeof(name), "/proc/self/fd/%s", de->d_name);
		n = readlink(name, link, sizeof(link) - 1);
		if (n < 0)
			continue;
		link[n] = '\0';
		if (strcmp(link, want) != 0)
			continue;
		found++;
		snprintf(info, sizeof(info), "/proc/self/fdinfo/%s",
			 de->d_name);
		text = tu_read_file(info, NULL);
		ck_assert_ptr_nonnull(text);
		pos = strstr(text, "pos:");
		ck_assert_ptr_nonnull(pos);
		off = strtoll(pos + 4, NULL, 10);
		free(text);
	}
	closedir(dir);
	ck_assert_int_eq(found, 1);
	return off;
}

struct pos_look {
	const char *path;
	long long pos;
};

static void note_pos(void *arg)
{
	struct pos_look *a = arg;

	a->pos = fd_pos(a->path);
}

/* fd_pos() once the reading has stopped: the thread that reads asleep in
 * its wait for room in the queue, before and after the look. */
static long long settled_pos(const char *path)
{
	struct pos_look a = { path, -1 };

	wait_stopped(note_pos, &a);
	return a.pos;
}

/* The thread of a package started early decodes as many bytes as it was
 * allowed ahead, and then waits: with incompressible content, about as
 * many bytes of the file are read. */
START_TEST(test_prefetch_reads_ahead)
{
	const size_t size = 6u << 20;
	char *rnd;
	const struct tu_entry ents[] = {
		{ .type = 'd', .path = "./" },
		{ .type = 'f', .path = "./rnd", .size = size },
	};
	struct tu_deb d = { .entries = ents, .n_entries = 2,
			    .data_comp = "zst" };
	const char *p = tp("ahead.deb");
	struct unpkg_deb *deb;
	long long pos;

	if (!unpkg_decomp_two_cpus()) {
		/* nothing is started on one CPU */
		tu_skip_part("how far a package started early reads ahead",
			     "this process may use only one CPU");
		return;
	}
	threads_baseline();
	rnd = random_bytes(size, 8);
	((struct tu_entry *)ents)[1].data = rnd;
	tu_build_deb(p, &d);

	deb = open_ok(p);
	unpkg_deb_prefetch(deb, 3u << 20);
	pos = settled_pos(p);
	ck_assert_msg(pos > (2ll << 20) + (512ll << 10) &&
		      pos < (4ll << 20), "read %lld bytes ahead", pos);
	unpkg_deb_free(deb);

	/* Asked for less than the least queue: that queue. */
	deb = open_ok(p);
	unpkg_deb_prefetch(deb, 1);
	pos = settled_pos(p);
	ck_assert_msg(pos > (256ll << 10) && pos < (2ll << 20),
		      "read %lld bytes ahead", pos);
	/* And the rest at its turn. */
	{
		struct unpkg_deb_entry e;
		size_t len;
		char *s;

		next_ok(deb, &e);
		next_ok(deb, &e);
		s = slurp(deb, &len);
		ck_assert_uint_eq(len, size);
		ck_assert_int_eq(memcmp(s, rnd, size), 0);
		free(s);
		at_end(deb);
	}
	unpkg_deb_free(deb);
	free(rnd);
}
END_TEST

/* Nothing is reported by the early start: the first unpkg_deb_next()
 * finds and reports what a reader started at its turn would. */
START_TEST(test_prefetch_errors)
{
	char *rnd = random_bytes(RANDOM_SIZE, 9);
	const struct tu_entry ents[] = {
		{ .type = 'd', .path = "./" },
		{ .type = 'f', .path = "./rnd", .data = rnd,
		  .size = RANDOM_SIZE },
		{ .type = 'f', .path = "./big", .size = 2u << 20 },
	};
	struct tu_deb d = { .entries = ents, .n_entries = 3,
			    .data_comp = "xz" };
	const char *p = tp("e.deb");
	const char *q = tp("e2.deb");
	struct unpkg_err e1, e2;
	char *body;
	size_t len;
	int k;

	threads_baseline();
	/* The file replaced, or gone, before the early start. */
	for (k = 0; k < 2; k++) {
		struct unpkg_deb *deb;
		struct unpkg_deb_entry e;

		tu_build_deb(p, &d);
		deb = open_ok(p);
		if (k == 0) {
			tu_build_deb(q, &d);
			ck_assert_int_eq(rename(q, p), 0);
		} else {
			ck_assert_int_eq(unlink(p), 0);
		}
		unpkg_deb_prefetch(deb, 1u << 20);
		ck_assert_int_eq(count_threads(), 1);
		unpkg_err_init(&e1);
		ck_assert_int_eq(unpkg_deb_next(deb, &e, &e1), -1);
		if (k == 0)
			ck_assert_msg(strstr(e1.msg, "changed") != NULL, "%s",
				      e1.msg);
		else
			ck_assert_int_eq(e1.errnum, ENOENT);
		unpkg_deb_free(deb);
	}

	/* Damage in the middle of the stream: the same error at the same
	 * entry. */
	tu_build_deb(p, &d);
	body = tu_read_file(p, &len);
	ck_assert_ptr_nonnull(body);
	body[len - 200000] ^= 0x55;
	write_bytes(p, body, len);
	free(body);
	for (k = 0; k < 2; k++) {
		struct unpkg_deb *deb = open_ok(p);
		struct unpkg_err *err = k == 0 ? &e1 : &e2;

		unpkg_err_init(err);
		if (k == 1)
			unpkg_deb_prefetch(deb, 4u << 20);
		ck_assert_int_eq(drain(deb, err), -1);
		unpkg_deb_free(deb);
	}
	ck_assert_int_eq(e1.code, e2.code);
	ck_assert_str_eq(e1.msg, e2.msg);
	free(rnd);
}
END_TEST

/* A package started early and freed unread, its thread waiting on a full
 * queue or finished, leaves nothing behind (the sanitizer build checks the
 * memory). */
START_TEST(test_prefetch_freed_unread)
{
	char *rnd = random_bytes(RANDOM_SIZE, 10);
	const struct tu_entry ents[] = {
		{ .type = 'd', .path = "./" },
		{ .type = 'f', .path = "./rnd", .data = rnd,
		  .size = RANDOM_SIZE },
		{ .type = 'f', .path = "./big", .size = 8u << 20 },
	};
	struct tu_deb d = { .entries = ents, .data_comp = "gz" };
	int fds = count_fds();
	size_t n;

	threads_baseline();
	for (n = 2; n <= 3; n++) {
		struct unpkg_deb *deb;

		d.n_entries = n;
		tu_build_deb(tp("f.deb"), &d);
		deb = open_ok(tp("f.deb"));
		unpkg_deb_prefetch(deb, 1u << 20);
		wait_stopped(NULL, NULL);
		unpkg_deb_free(deb);
		ck_assert_int_eq(settled_threads(1), 1);
		ck_assert_int_eq(count_fds(), fds);
	}
	free(rnd);
}
END_TEST

/* Read system calls this process has made so far. */
static long long read_calls(void)
{
	char *text = tu_read_file("/proc/self/io", NULL), *p;
	long long n;

	ck_assert_ptr_nonnull(text);
	p = strstr(text, "syscr:");
	ck_assert_ptr_nonnull(p);
	n = strtoll(p + 6, NULL, 10);
	free(text);
	return n;
}

/* An xz stream of several blocks is not started early: its two decoders
 * start at its turn.  Asked again (before each package ahead of it), the
 * early start is not tried again: the file is not read again. */
START_TEST(test_prefetch_leaves_blocks)
{
	char *rnd = random_bytes(1u << 20, 11);
	const struct tu_entry ents[] = {
		{ .type = 'd', .path = "./" },
		{ .type = 'f', .path = "./rnd", .data = rnd, .size = 1u << 20 },
	};
	static const struct tu_entry cent[] = {
		{ .type = 'd', .path = "./" },
		{ .type = 'f', .path = "./control", .data = "Package: b\n" },
	};
	struct tu_deb d = { .entries = ents, .n_entries = 2 };
	const char *p = tp("blocks.deb");
	void *ctl, *tar;
	size_t ctllen, tarlen, xzlen;
	char *xz;
	struct unpkg_deb *deb;
	struct unpkg_deb_entry e;
	int fds;

	if (!unpkg_decomp_two_cpus()) {
		tu_skip_part("an xz stream of several blocks started early",
			     "this process may use only one CPU");
		return;
	}
	threads_baseline();
	tu_build_tar(cent, 2, "gz", &ctl, &ctllen);
	tu_build_tar(d.entries, d.n_entries, "none", &tar, &tarlen);
	write_bytes(tp("data.tar"), tar, tarlen);
	ck_assert_int_eq(run("xz -0 --block-size=262144 -c '%s' > '%s'",
			     tp("data.tar"), tp("data.tar.xz")), 0);
	xz = tu_read_file(tp("data.tar.xz"), &xzlen);
	ck_assert_ptr_nonnull(xz);
	{
		const struct tu_member m[] = {
			{ "debian-binary", "2.0\n", 4 },
			{ "control.tar.gz", ctl, ctllen },
			{ "data.tar.xz", xz, xzlen },
		};

		build_members(p, m, 3);
	}
	deb = open_ok(p);
	fds = count_fds();
	unpkg_deb_prefetch(deb, 1u << 20);
	ck_assert_int_eq(count_threads(), 1);
	ck_assert_int_eq(count_fds(), fds);
	{
		long long r1 = read_calls(), r2 = read_calls(), r3;

		unpkg_deb_prefetch(deb, 1u << 20);
		r3 = read_calls();
		ck_assert_msg(r3 - r2 == r2 - r1, "%lld reads by a second "
			      "early start", (r3 - r2) - (r2 - r1));
	}
	next_ok(deb, &e);
	ck_assert_int_eq(count_threads(), 3);
	next_ok(deb, &e);
	ck_assert_str_eq(e.path, "rnd");
	{
		size_t len;
		char *s = slurp(deb, &len);

		ck_assert_uint_eq(len, 1u << 20);
		ck_assert_int_eq(memcmp(s, rnd, len), 0);
		free(s);
	}
	at_end(deb);
	unpkg_deb_free(deb);
	free(rnd);
	free(xz);
	free(tar);
	free(ctl);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("deb");
	TCase *tc = tcase_create("deb");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_all_compressions);
	tcase_add_test(tc, test_entry_types);
	tcase_add_test(tc, test_dpkg_deb_accepts_built);
	tcase_add_test(tc, test_large_file_streamed);
	tcase_add_test(tc, test_skip_unread_data);
	tcase_add_test(tc, test_sparse_files);
	tcase_add_test(tc, test_path_normalisation);
	tcase_add_test(tc, test_unsafe_paths);
	tcase_add_test(tc, test_unsafe_hardlinks);
	tcase_add_test(tc, test_bad_entries);
	tcase_add_test(tc, test_empty_name);
	tcase_add_test(tc, test_debian_binary);
	tcase_add_test(tc, test_member_order);
	tcase_add_test(tc, test_sysv_ar_names);
	tcase_add_test(tc, test_unsupported_compression);
	tcase_add_test(tc, test_compression_mismatch);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_short_entry);
	tcase_add_test(tc, test_trailing_garbage);
	tcase_add_test(tc, test_truncated_skipped);
	tcase_add_test(tc, test_corrupt_compressed);
	tcase_add_test(tc, test_control_members);
	tcase_add_test(tc, test_control_size_limit);
	tcase_add_test(tc, test_open_errors);
	tcase_add_test(tc, test_open_fd);
	tcase_add_test(tc, test_error_state_sticks);
	tcase_add_test(tc, test_real_dpkg_deb_build);
	tcase_add_test(tc, test_open_many_bounded);
	tcase_add_test(tc, test_changed_after_open);
	tcase_add_test(tc, test_thread_lifecycle);
	tcase_add_test(tc, test_thread_early_stop);
	tcase_add_test(tc, test_thread_stops_on_error);
	tcase_add_test(tc, test_thread_same_errors);
	tcase_add_test(tc, test_thread_read_error);
	tcase_add_test(tc, test_thread_after_tar_end);
	tcase_add_test(tc, test_thread_own_error_first);
	tcase_add_test(tc, test_thread_unavailable);
	tcase_add_test(tc, test_gzip_trailer);
	tcase_add_test(tc, test_gzip_control_trailer);
	tcase_add_test(tc, test_gzip_members);
	tcase_add_test(tc, test_open_decodes_nothing);
	tcase_add_test(tc, test_prefetch_same_entries);
	tcase_add_test(tc, test_prefetch_reads_ahead);
	tcase_add_test(tc, test_prefetch_errors);
	tcase_add_test(tc, test_prefetch_freed_unread);
	tcase_add_test(tc, test_prefetch_leaves_blocks);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
