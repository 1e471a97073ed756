/* check_db.c - tests for the dpkg database module. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "db.h"
#include "fsclass.h"
#include "testutil.h"

/* ---- helpers ------------------------------------------------------------ */

/* Strings made by the helpers below are freed at the end of each test, so
 * the tests can build them inline and stay leak-free under sanitizers. */
#define GC_MAX 4096
static void *garbage[GC_MAX];
static size_t ngarbage;

static void *gc(void *p)
{
	if (p != NULL) {
		ck_assert_uint_lt(ngarbage, GC_MAX);
		garbage[ngarbage++] = p;
	}
	return p;
}

static void gc_free(void)
{
	while (ngarbage > 0)
		free(garbage[--ngarbage]);
}

/* Concatenate NULL-terminated arguments into a malloc'd string. */
static char *cat(const char *first, ...)
{
	va_list ap;
	const char *s;
	size_t len = 0;
	char *out;

	va_start(ap, first);
	for (s = first; s != NULL; s = va_arg(ap, const char *))
		len += strlen(s);
	va_end(ap);
	out = malloc(len + 1);
	ck_assert_ptr_nonnull(out);
	out[0] = '\0';
	va_start(ap, first);
	for (s = first; s != NULL; s = va_arg(ap, const char *))
		strcat(out, s);
	va_end(ap);
	return gc(out);
}

/* A stanza in dpkg's field order, without the blank line after it. */
static char *stz(const char *name, const char *arch, const char *ma,
		 const char *status, const char *version)
{
	return cat("Package: ", name, "\nStatus: ", status,
		   "\nMaintainer: Tester <t@example.invalid>\nArchitecture: ",
		   arch, "\n", ma ? "Multi-Arch: " : "", ma ? ma : "",
		   ma ? "\n" : "", "Version: ", version,
		   "\nDescription: test package ", name, "\n", NULL);
}

#define INST "install ok installed"

struct fixture {
	char *tmp;
	char *admin;
};

static void fx_init(struct fixture *fx)
{
	fx->tmp = gc(tu_mkdtemp());
	fx->admin = cat(fx->tmp, "/admin", NULL);
	ck_assert_int_eq(mkdir(fx->admin, 0755), 0);
	ck_assert_int_eq(mkdir(cat(fx->admin, "/info", NULL), 0755), 0);
	ck_assert_int_eq(mkdir(cat(fx->admin, "/updates", NULL), 0755), 0);
	tu_write_file(cat(fx->admin, "/info/format", NULL), "1\n", 0644);
}

static void fx_destroy(struct fixture *fx)
{
	tu_rm_rf(fx->tmp);
}

static char *fx_path(const struct fixture *fx, const char *name)
{
	return cat(fx->admin, "/", name, NULL);
}

static void fx_write(const struct fixture *fx, const char *name,
		     const char *data)
{
	tu_write_file(fx_path(fx, name), data, 0644);
}

static char *fx_read(const struct fixture *fx, const char *name)
{
	return gc(tu_read_file(fx_path(fx, name), NULL));
}

static int fx_exists(const struct fixture *fx, const char *name)
{
	struct stat st;

	return lstat(fx_path(fx, name), &st) == 0;
}

static char *gc_read(const char *path, size_t *len)
{
	return gc(tu_read_file(path, len));
}

static struct unpkg_db *open_ok(const char *admin, unsigned int flags)
{
	struct unpkg_err err;
	struct unpkg_db *db = NULL;

	unpkg_err_init(&err);
	if (unpkg_db_open(admin, flags, &db, &err) != 0)
		ck_abort_msg("unpkg_db_open %s: %s", admin, err.msg);
	ck_assert_ptr_nonnull(db);
	return db;
}

static char *serialise(const struct unpkg_db *db)
{
	struct unpkg_err err;
	char *buf = NULL;
	size_t len = 0;

	unpkg_err_init(&err);
	if (unpkg_db_serialise(db, &buf, &len, &err) != 0)
		ck_abort_msg("serialise: %s", err.msg);
	ck_assert_uint_eq(strlen(buf), len);
	return gc(buf);
}

static const char *version_of(const struct unpkg_db *db, const char *name,
			      const char *arch)
{
	const struct unpkg_db_pkg *p = unpkg_db_find(db, name, arch);

	return p ? unpkg_para_get(&p->para, "Version") : NULL;
}

/* Output of a shell command, or NULL if it failed. */
static char *run(const char *cmd)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	FILE *f = popen(cmd, "r");
	int c;

	if (f == NULL)
		return NULL;
	while ((c = fgetc(f)) != EOF) {
		if (len + 2 > cap) {
			cap = cap ? cap * 2 : 4096;
			buf = realloc(buf, cap);
			ck_assert_ptr_nonnull(buf);
		}
		buf[len++] = (char)c;
	}
	if (buf == NULL)
		buf = calloc(1, 1);
	buf[len] = '\0';
	if (pclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return gc(buf);
}

/* Whether dpkg-query can be run; if not, the part `what` of a test says
 * it is skipped. */
static int have_dpkg_query(const char *what)
{
	if (system("command -v dpkg-query >/dev/null 2>&1") == 0)
		return 1;
	tu_skip_part(what, "dpkg-query not found");
	return 0;
}

/* What dpkg-query makes of a database: the oracle's view. */
static char *query(const char *admin)
{
	const char *cmd = cat("dpkg-query --admindir='", admin,
			"' -W -f '${binary:Package} ${Version} ${Status} "
			"${Multi-Arch}\\n' 2>/dev/null",
			NULL);
	return run(cmd);
}

/* ---- creation and format ------------------------------------------------ */

START_TEST(t_missing_admindir)
{
	char *tmp = gc(tu_mkdtemp());
	char *admin = cat(tmp, "/var/lib/dpkg", NULL);
	struct unpkg_db *db = (struct unpkg_db *)1;
	struct unpkg_err err;

	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_db_open(admin, 0, &db, &err), -1);
	ck_assert_ptr_null(db);
	ck_assert_int_eq(err.code, UNPKG_ERR_SYS);
	ck_assert_int_eq(err.errnum, ENOENT);
	ck_assert_msg(strstr(err.msg, admin) != NULL, "%s", err.msg);
	tu_rm_rf(tmp);
}
END_TEST

START_TEST(t_create)
{
	char *tmp = gc(tu_mkdtemp());
	char *admin = cat(tmp, "/var/lib/dpkg", NULL);
	const char *dirs[] = { "", "/info", "/updates", "/triggers" };
	struct unpkg_db *db;
	struct unpkg_err err;
	unsigned long fs = 0;
	struct stat st;
	char *p, *data;
	size_t i;

	umask(022);
	db = open_ok(admin, UNPKG_DB_CREATE | UNPKG_DB_LOCK_FRONTEND);
	ck_assert_uint_eq(unpkg_db_count(db), 0);
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		p = cat(admin, dirs[i], NULL);
		ck_assert_int_eq(stat(p, &st), 0);
		ck_assert(S_ISDIR(st.st_mode));
		ck_assert_int_eq(st.st_mode & 07777, 0755);
	}
	p = cat(admin, "/status", NULL);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_size, 0);
	/* info/format comes with the first write (below). */
	p = cat(admin, "/info/format", NULL);
	ck_assert_int_eq(access(p, F_OK), -1);
	/* dpkg creates its lock files 0660 less the umask. */
	p = cat(admin, "/lock", NULL);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0640);
	p = cat(admin, "/lock-frontend", NULL);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0640);

	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_db_write(db, &fs, &err), 0);
	/* fdatasync of format-new and status-new, fsync of the admindir
	 * and of info/ */
	ck_assert_uint_eq(fs, 4);
	unpkg_db_free(db);
	p = cat(admin, "/status", NULL);
	data = gc(tu_read_file(p, NULL));
	ck_assert_str_eq(data, "");
	p = cat(admin, "/info/format", NULL);
	data = gc(tu_read_file(p, NULL));
	ck_assert_str_eq(data, "1\n");

	/* A second CREATE on an existing database changes nothing. */
	p = cat(admin, "/status", NULL);
	tu_write_file(p, "Package: a\nStatus: " INST "\nVersion: 1\n\n",
		      0644);
	db = open_ok(admin, UNPKG_DB_CREATE);
	ck_assert_uint_eq(unpkg_db_count(db), 1);
	unpkg_db_free(db);
	tu_rm_rf(tmp);
}
END_TEST

/* What the open created goes again when nothing was written; what was
 * there before stays; after a write nothing goes. */
START_TEST(t_remove_made)
{
	char *tmp = gc(tu_mkdtemp());
	char *var = cat(tmp, "/var", NULL);
	char *admin = cat(tmp, "/var/lib/dpkg", NULL);
	struct unpkg_db *db;
	struct unpkg_err err;
	struct stat st;

	unpkg_err_init(&err);
	db = open_ok(admin, UNPKG_DB_CREATE | UNPKG_DB_LOCK_FRONTEND);
	ck_assert_int_eq(unpkg_db_remove_made(db, &err), 0);
	unpkg_db_free(db);
	ck_assert_int_eq(stat(var, &st), -1);
	ck_assert_int_eq(stat(tmp, &st), 0);

	/* an admindir with info/ and a status of its own */
	ck_assert_int_eq(mkdir(var, 0755), 0);
	ck_assert_int_eq(mkdir(cat(tmp, "/var/lib", NULL), 0755), 0);
	ck_assert_int_eq(mkdir(admin, 0755), 0);
	ck_assert_int_eq(mkdir(cat(admin, "/info", NULL), 0755), 0);
	tu_write_file(cat(admin, "/status", NULL), "", 0644);
	db = open_ok(admin, UNPKG_DB_CREATE);
	ck_assert_int_eq(unpkg_db_remove_made(db, &err), 0);
	unpkg_db_free(db);
	ck_assert_int_eq(stat(cat(admin, "/info", NULL), &st), 0);
	ck_assert_int_eq(stat(cat(admin, "/status", NULL), &st), 0);
	ck_assert_int_eq(stat(cat(admin, "/updates", NULL), &st), -1);
	ck_assert_int_eq(stat(cat(admin, "/lock", NULL), &st), -1);

	/* written: it stays */
	tu_rm_rf(var);
	db = open_ok(admin, UNPKG_DB_CREATE);
	ck_assert_int_eq(unpkg_db_write(db, NULL, &err), 0);
	ck_assert_int_eq(unpkg_db_remove_made(db, &err), 0);
	unpkg_db_free(db);
	ck_assert_int_eq(stat(cat(admin, "/info/format", NULL), &st), 0);
	ck_assert_int_eq(stat(cat(admin, "/lock", NULL), &st), 0);
	tu_rm_rf(tmp);
}
END_TEST

START_TEST(t_format)
{
	struct fixture fx;
	struct unpkg_db *db = NULL;
	struct unpkg_err err;
	char *p, *data;

	fx_init(&fx);
	p = fx_path(&fx, "info/format");
	ck_assert_int_eq(unlink(p), 0);
	/* A query does not write... */
	db = open_ok(fx.admin, UNPKG_DB_READONLY);
	unpkg_db_free(db);
	ck_assert(!fx_exists(&fx, "info/format"));
	/* ...nor does an update that writes nothing... */
	db = open_ok(fx.admin, UNPKG_DB_NOSYNC);
	unpkg_db_free(db);
	ck_assert(!fx_exists(&fx, "info/format"));
	/* ...a write does, as dpkg does. */
	db = open_ok(fx.admin, UNPKG_DB_NOSYNC);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_db_write(db, NULL, &err), 0);
	unpkg_db_free(db);
	data = gc(tu_read_file(p, NULL));
	ck_assert_str_eq(data, "1\n");
	ck_assert(!fx_exists(&fx, "info/format-new"));
	/* The pre-multiarch layout needs dpkg's own conversion. */
	tu_write_file(p, "0\n", 0644);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_db_open(fx.admin, UNPKG_DB_READONLY, &db,
				       &err),
			 -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_UNSUPPORTED);
	fx_destroy(&fx);
}
END_TEST

START_TEST(t_usage)
{
	struct fixture fx;
	struct unpkg_db *db = NULL;
	struct unpkg_err err;
	unsigned long fs = 0;

	fx_init(&fx);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_db_open(fx.admin,
				       UNPKG_DB_READONLY | UNPKG_DB_CREATE,
				       &db, &err),
			 -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_USAGE);
	db = open_ok(fx.admin, UNPKG_DB_READONLY);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_db_write(db, &fs, &err), -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_USAGE);
	ck_assert(!fx_exists(&fx, "status"));
	ck_assert(!fx_exists(&fx, "lock"));
	unpkg_db_free(db);
	unpkg_db_free(NULL);
	fx_destroy(&fx);
}
END_TEST

/* ---- reading ------------------------------------------------------------ */

START_TEST(t_real_status_roundtrip)
{
	static const char sys_status[] = "/var/lib/dpkg/status";
	struct fixture fx;
	struct unpkg_db *db;
	struct unpkg_err err;
	char *orig, *out, *data;
	size_t len, i;
	unsigned long fs = 0;

	orig = gc_read(sys_status, &len);
	/* No dpkg database on this system: nothing to compare with. */
	if (orig == NULL || len == 0) {
		tu_skip_part("the system's status file read and written back",
			     "no /var/lib/dpkg/status here");
		return;
	}
	fx_init(&fx);
	fx_write(&fx, "status", orig);
	db = open_ok(fx.admin, UNPKG_DB_NOSYNC);
	ck_assert_uint_gt(unpkg_db_count(db), 0);
	out = serialise(db);
	ck_assert_uint_eq(strlen(out), len);
	ck_assert_msg(memcmp(out, orig, len) == 0,
		      "serialised status differs from dpkg's");
	for (i = 0; i < unpkg_db_count(db); i++) {
		const struct unpkg_db_pkg *p = unpkg_db_at(db, i);
		const char *w, *f, *s;

		ck_assert_ptr_nonnull(p->name);
		ck_assert_int_eq(unpkg_db_pkg_status(p, &w, &f, &s), 0);
		ck_assert_ptr_eq(unpkg_db_find(db, p->name, p->arch), p);
	}
	ck_assert_ptr_null(unpkg_db_at(db, unpkg_db_count(db)));
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_db_write(db, &fs, &err), 0);
	ck_assert_uint_eq(fs, 0);
	unpkg_db_free(db);
	data = fx_read(&fx, "status");
	ck_assert_str_eq(data, orig);
	data = fx_read(&fx, "status-old");
	ck_assert_str_eq(data, orig);
	fx_destroy(&fx);
}
END_TEST

static const char *multi_arch_line(const struct unpkg_db_pkg *p)
{
	const char *ma = unpkg_para_get(&p->para, "Multi-Arch");

	return ma ? cat("Multi-Arch: ", ma, "\n", NULL) : "";
}

/* The real status with journal entries over it: one package changed, one
 * purged, one added.  dpkg-query must see the same before (reading the
 * journal) and after (reading our status). */
START_TEST(t_real_status_with_updates)
{
	static const char sys_status[] = "/var/lib/dpkg/status";
	struct fixture fx;
	struct unpkg_db *db;
	struct unpkg_err err;
	const struct unpkg_db_pkg *p;
	char *orig, *s0, *s1, *before, *after, *out, *data;
	unsigned long fs = 0;
	size_t n;

	orig = gc_read(sys_status, NULL);
	if (orig == NULL || orig[0] == '\0') {
		tu_skip_part("the system's status file with updates",
			     "no /var/lib/dpkg/status here");
		return;
	}
	if (!have_dpkg_query("the system's status file with updates"))
		return;
	fx_init(&fx);
	fx_write(&fx, "status", orig);
	db = open_ok(fx.admin, UNPKG_DB_READONLY);
	n = unpkg_db_count(db);
	ck_assert_uint_gt(n, 3);
	/* Keep Multi-Arch, so a multiarch system's instances stay apart. */
	p = unpkg_db_at(db, n / 2);
	s0 = cat("Package: ", p->name, "\nStatus: hold ok installed\n",
		 "Architecture: ", p->arch, "\n", multi_arch_line(p),
		 "Version: 99:0-unpkg\nDescription: changed\n\n", NULL);
	p = unpkg_db_at(db, n / 3);
	s1 = cat("Package: ", p->name, "\nStatus: purge ok not-installed\n",
		 "Architecture: ", p->arch, "\n", multi_arch_line(p),
		 "\nPackage: zzz-unpkg-new\nStatus: install ok unpacked\n"
		 "Architecture: all\nVersion: 1\n",
		 NULL);
	unpkg_db_free(db);
	fx_write(&fx, "updates/0000", s0);
	fx_write(&fx, "updates/0001", s1);
	before = query(fx.admin);
	ck_assert_ptr_nonnull(before);

	db = open_ok(fx.admin, 0);
	ck_assert_uint_eq(unpkg_db_count(db), n);
	ck_assert_str_eq(version_of(db, "zzz-unpkg-new", "all"), "1");
	out = serialise(db);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_db_write(db, &fs, &err), 0);
	ck_assert_uint_eq(fs, 3);
	unpkg_db_free(db);
	data = fx_read(&fx, "status");
	ck_assert_str_eq(data, out);
	ck_assert(!fx_exists(&fx, "updates/0000"));
	ck_assert(!fx_exists(&fx, "updates/0001"));
	after = query(fx.admin);
	ck_assert_ptr_nonnull(after);
	ck_assert_str_eq(after, before);
	fx_destroy(&fx);
}
END_TEST

START_TEST(t_updates_order)
{
	struct fixture fx;
	struct unpkg_db *db;
	const char *junk;

	fx_init(&fx);
	fx_write(&fx, "status",
		 cat(stz("foo", "all", NULL, INST, "1"), "\n", NULL));
	/* Created out of order, so directory order is no help. */
	fx_write(&fx, "updates/0010",
		 cat(stz("foo", "all", NULL, INST, "10"), "\n",
		     stz("bar", "all", NULL, INST, "10"), NULL));
	fx_write(&fx, "updates/0009", stz("foo", "all", NULL, INST, "9"));
	fx_write(&fx, "updates/0001", stz("baz", "all", NULL, INST, "1"));
	fx_write(&fx, "updates/0000",
		 cat(stz("baz", "all", NULL, INST, "0"), "\n\n\n",
		     stz("foo", "all", NULL, INST, "0"), NULL));
	/* Not journal entries: dpkg's scratch file and other names. */
	junk = stz("foo", "all", NULL, INST, "666");
	fx_write(&fx, "updates/tmp.i", junk);
	fx_write(&fx, "updates/0011.tmp", junk);
	fx_write(&fx, "updates/x0012", junk);
	db = open_ok(fx.admin, UNPKG_DB_READONLY);
	ck_assert_uint_eq(unpkg_db_count(db), 3);
	ck_assert_str_eq(version_of(db, "foo", "all"), "10");
	ck_assert_str_eq(version_of(db, "bar", NULL), "10");
	ck_assert_str_eq(version_of(db, "baz", NULL), "1");
	ck_assert_str_eq(unpkg_db_at(db, 0)->name, "bar");
	ck_assert_str_eq(unpkg_db_at(db, 1)->name, "baz");
	ck_assert_str_eq(unpkg_db_at(db, 2)->name, "foo");
	unpkg_db_free(db);
	fx_destroy(&fx);
}
END_TEST

START_TEST(t_updates_bad_names)
{
	struct fixture fx;
	struct unpkg_db *db = NULL;
	struct unpkg_err err;
	char *s;

	fx_init(&fx);
	s = stz("foo", "all", NULL, INST, "1");
	fx_write(&fx, "status", "");
	/* dpkg refuses "9" next to "10": its order would not be numeric. */
	fx_write(&fx, "updates/9", s);
	fx_write(&fx, "updates/10", s);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_db_open(fx.admin, UNPKG_DB_READONLY, &db,
				       &err),
			 -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_FORMAT);
	ck_assert_msg(strstr(err.msg, "different length") != NULL, "%s",
		      err.msg);
	ck_assert_int_eq(unlink(fx_path(&fx, "updates/9")), 0);
	ck_assert_int_eq(unlink(fx_path(&fx, "updates/10")), 0);
	fx_write(&fx, "updates/12345678901", s);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_db_open(fx.admin, UNPKG_DB_READONLY, &db,
				       &err),
			 -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_FORMAT);
	ck_assert_msg(strstr(err.msg, "12345678901") != NULL, "%s", err.msg);
	ck_assert_int_eq(unlink(fx_path(&fx, "updates/12345678901")), 0);
	/* Ten digits is dpkg's limit, and an empty entry is fine. */
	fx_write(&fx, "updates/1234567890", s);
	fx_write(&fx, "updates/0000000000", "");
	db = open_ok(fx.admin, UNPKG_DB_READONLY);
	ck_assert_str_eq(version_of(db, "foo", "all"), "1");
	unpkg_db_free(db);
	fx_destroy(&fx);
}
END_TEST

/* Verified with dpkg 1.21.22: a not-installed stanza survives a status
 * rewrite only with a hold selection, the reinstreq flag, or an install
 * selection with an Architecture, whatever other fields it has. */
START_TEST(t_not_installed_dropped)
{
	static const char in[] =
		"Package: q1\nStatus: unknown ok not-installed\n\n"
		"Package: q2\nStatus: unknown ok not-installed\n"
		"Architecture: amd64\nSection: x\nPriority: optional\n\n"
		"Package: q3\nStatus: purge ok not-installed\n\n"
		"Package: q4\nStatus: unknown ok not-installed\nVersion: 1\n\n"
		"Package: q5\nStatus: unknown ok not-installed\nX-Foo: bar\n\n"
		"Package: q9\nStatus: unknown reinstreq not-installed\n\n"
		"Package: q91\nVersion: 1\nArchitecture: all\n\n"
		"Package: r1\nStatus: install ok not-installed\n\n"
		"Package: r2\nStatus: hold ok not-installed\n\n"
		"Package: r3\nStatus: install ok not-installed\n"
		"Architecture: all\n\n"
		"Package: r4\nStatus: purge ok not-installed\nVersion: 2\n"
		"Description: x\nMaintainer: y\n\n"
		"Package: r5\nStatus: deinstall ok not-installed\n"
		"Architecture: all\n\n"
		"Package: r6\nStatus: purge ok not-installed\n"
		"Architecture: all\n\n"
		"Package: s3\nStatus: install ok config-files\nVersion: 2\n\n";
	static const char want[] =
		"Package: q9\nStatus: unknown reinstreq not-installed\n\n"
		"Package: r2\nStatus: hold ok not-installed\n\n"
		"Package: r3\nStatus: install ok not-installed\n"
		"Architecture: all\n\n"
		"Package: s3\nStatus: install ok config-files\nVersion: 2\n\n";
	struct fixture fx;
	struct unpkg_db *db;
	const char *w, *f, *s;
	char *out;

	fx_init(&fx);
	fx_write(&fx, "status", in);
	db = open_ok(fx.admin, UNPKG_DB_READONLY);
	out = serialise(db);
	ck_assert_str_eq(out, want);
	ck_assert_uint_eq(unpkg_db_count(db), 4);
	ck_assert_ptr_null(unpkg_db_find(db, "q3", NULL));
	ck_assert_int_eq(unpkg_db_pkg_status(unpkg_db_find(db, "r2", NULL),
					     &w, &f, &s),
			 0);
	ck_assert_str_eq(w, "hold");
	ck_assert_str_eq(f, "ok");
	ck_assert_str_eq(s, "not-installed");
	unpkg_db_free(db);

	/* A purge is recorded as such a stanza in the journal. */
	fx_write(&fx, "updates/0000",
		 "Package: s3\nStatus: unknown ok not-installed\n");
	db = open_ok(fx.admin, UNPKG_DB_READONLY);
	ck_assert_ptr_null(unpkg_db_find(db, "s3", NULL));
	ck_assert_uint_eq(unpkg_db_count(db), 3);
	unpkg_db_free(db);
	fx_destroy(&fx);
}
END_TEST

/* The order dpkg 1.21.22 wrote for these packages, installed in another
 * order, with i386 and arm64 added as foreign architectures. */
START_TEST(t_multiarch_order)
{
	struct fixture fx;
	struct unpkg_db *db;
	char *in, *want, *out;
	const char *same = "same";

	fx_init(&fx);
	in = cat(stz("zed", "all", NULL, INST, "1"), "\n",
		 stz("foo", "i386", same, INST, "1"), "\n",
		 stz("baz", "arm64", "foreign", INST, "1"), "\n",
		 stz("foo", "amd64", same, INST, "1"), "\n",
		 stz("aaa", "amd64", NULL, INST, "1"), "\n",
		 stz("foo", "arm64", same, INST, "1"), "\n",
		 stz("bar", "i386", NULL, INST, "1"), "\n", NULL);
	want = cat(stz("aaa", "amd64", NULL, INST, "1"), "\n",
		   stz("bar", "i386", NULL, INST, "1"), "\n",
		   stz("baz", "arm64", "foreign", INST, "1"), "\n",
		   stz("foo", "amd64", same, INST, "1"), "\n",
		   stz("foo", "arm64", same, INST, "1"), "\n",
		   stz("foo", "i386", same, INST, "1"), "\n",
		   stz("zed", "all", NULL, INST, "1"), "\n", NULL);
	fx_write(&fx, "status", in);
	db = open_ok(fx.admin, UNPKG_DB_READONLY);
	out = serialise(db);
	ck_assert_str_eq(out, want);
	ck_assert_str_eq(unpkg_db_find(db, "foo", "i386")->key, "foo:i386");
	ck_assert_str_eq(unpkg_db_find(db, "foo", "amd64")->key, "foo:amd64");
	ck_assert_str_eq(unpkg_db_find(db, "foo", NULL)->key, "foo:amd64");
	ck_assert_str_eq(unpkg_db_find(db, "bar", "i386")->key, "bar");
	ck_assert_str_eq(unpkg_db_find(db, "baz", NULL)->key, "baz");
	ck_assert_str_eq(unpkg_db_find(db, "zed", "all")->arch, "all");
	ck_assert_ptr_null(unpkg_db_find(db, "foo", "s390x"));
	ck_assert_ptr_null(unpkg_db_find(db, "fo", NULL));
	ck_assert_ptr_null(unpkg_db_find(db, "zzz", NULL));
	unpkg_db_free(db);
	if (have_dpkg_query("dpkg-query on multi-arch instances")) {
		char *q = query(fx.admin);

		ck_assert_ptr_nonnull(q);
		ck_assert_str_eq(q, "aaa 1 " INST " no\n"
				    "bar:i386 1 " INST " no\n"
				    "baz:arm64 1 " INST " foreign\n"
				    "foo:amd64 1 " INST " same\n"
				    "foo:arm64 1 " INST " same\n"
				    "foo:i386 1 " INST " same\n"
				    "zed 1 " INST " no\n");
	}
	fx_destroy(&fx);
}
END_TEST

/* The bin of a name in dpkg's package table: FNV-1a modulo 65521, as
 * dpkg's str_fnv_hash() with a plain char. */
START_TEST(t_pkg_bin)
{
	ck_assert_uint_eq(unpkg_db_pkg_bin("a"), 34467);
	ck_assert_uint_eq(unpkg_db_pkg_bin("ta"), 33950);
	ck_assert_uint_eq(unpkg_db_pkg_bin("tc"), 25464);
	ck_assert_uint_eq(unpkg_db_pkg_bin("libc6"), 46057);
	/* dpkg widens a byte >= 0x80 through a plain char */
	ck_assert_uint_eq(unpkg_db_pkg_bin("z\xc3\xa9"),
			  CHAR_MIN < 0 ? 40173 : 23568);
}
END_TEST

/* dpkg's walk of its package table: by bin, then in the database's order
 * (p108 and p1773 share bin 15966; foo's two instances bin 29866). */
START_TEST(t_walk_order)
{
	static const char *const want[] = {
		"p108", "p1773", "tc", "foo:amd64", "foo:i386", "ta", "a", "b"
	};
	struct fixture fx;
	struct unpkg_db *db;
	struct unpkg_err err;
	size_t *order, i;

	fx_init(&fx);
	fx_write(&fx, "status",
		 cat(stz("b", "amd64", NULL, INST, "1"), "\n",
		     stz("p1773", "amd64", NULL, INST, "1"), "\n",
		     stz("foo", "i386", "same", INST, "1"), "\n",
		     stz("a", "amd64", NULL, INST, "1"), "\n",
		     stz("tc", "amd64", NULL, INST, "1"), "\n",
		     stz("foo", "amd64", "same", INST, "1"), "\n",
		     stz("ta", "amd64", NULL, INST, "1"), "\n",
		     stz("p108", "amd64", NULL, INST, "1"), "\n", NULL));
	db = open_ok(fx.admin, UNPKG_DB_READONLY);
	unpkg_err_init(&err);
	order = unpkg_db_walk_order(db, &err);
	ck_assert_ptr_nonnull(order);
	ck_assert_uint_eq(unpkg_db_count(db), 8);
	for (i = 0; i < 8; i++)
		ck_assert_str_eq(unpkg_db_at(db, order[i])->key, want[i]);
	free(order);
	unpkg_db_free(db);
	fx_destroy(&fx);
}
END_TEST

/* Orders dpkg 1.21.22 wrote (with amd64 native): the native or "all"
 * instances of a name come first, in the order the database got them, then
 * foreign ones.  Needs dpkg to know the native architecture. */
START_TEST(t_native_order)
{
	struct fixture fx;
	struct unpkg_db *db;
	char *native, *nl;
	const char *hold = "hold ok not-installed";
	const char *a, *b, *c, *d, *e;

	native = run("dpkg --print-architecture 2>/dev/null");
	if (native == NULL || (nl = strchr(native, '\n')) == NULL) {
		tu_skip_part("the order of native and foreign instances",
			     "dpkg --print-architecture did not answer");
		return;
	}
	*nl = '\0';
	if (strcmp(native, "alpha") == 0) {
		/* the fixture's foreign architecture */
		tu_skip_part("the order of native and foreign instances",
			     "the native architecture is alpha");
		return;
	}
	fx_init(&fx);
	a = stz("foo", "alpha", NULL, hold, "1");
	b = stz("foo", native, NULL, INST, "1");
	c = stz("foo", "all", NULL, hold, "1");
	d = stz("bar", "alpha", "same", INST, "1");
	e = stz("bar", "all", NULL, hold, "1");
	fx_write(&fx, "status",
		 cat(a, "\n", b, "\n", c, "\n", d, "\n", e, "\n", NULL));
	db = open_ok(fx.admin, UNPKG_DB_READONLY);
	ck_assert_str_eq(serialise(db), cat(e, "\n", d, "\n", b, "\n", c,
					    "\n", a, "\n", NULL));
	unpkg_db_free(db);

	fx_write(&fx, "status", cat(a, "\n", c, "\n", b, "\n", NULL));
	db = open_ok(fx.admin, UNPKG_DB_READONLY);
	ck_assert_str_eq(serialise(db),
			 cat(c, "\n", b, "\n", a, "\n", NULL));
	unpkg_db_free(db);

	/* The journal entry replaces the one installed instance, even with
	 * a hold on foo:all in the database: dpkg then has foo:all twice. */
	fx_write(&fx, "status", cat(c, "\n", b, "\n", NULL));
	d = stz("foo", "all", NULL, hold, "2");
	fx_write(&fx, "updates/0000", d);
	db = open_ok(fx.admin, UNPKG_DB_READONLY);
	ck_assert_str_eq(serialise(db), cat(c, "\n", d, "\n", NULL));
	unpkg_db_free(db);
	fx_destroy(&fx);
}
END_TEST

/* Journal entries move packages between architectures and Multi-Arch
 * values the way dpkg applies them (each case checked with dpkg-query). */
START_TEST(t_crossgrade)
{
	struct fixture fx;
	struct unpkg_db *db = NULL;
	struct unpkg_err err;
	char *in, *up;

	fx_init(&fx);
	in = cat(stz("a", "amd64", "same", INST, "1"), "\n",
		 stz("b", "amd64", NULL, INST, "1"), "\n",
		 stz("foo", "amd64", NULL, INST, "1"), "\n",
		 stz("lib", "amd64", "same", INST, "1"), "\n", NULL);
	up = cat(stz("a", "i386", NULL, INST, "2"), "\n",
		 stz("b", "amd64", "same", INST, "2"), "\n",
		 stz("foo", "i386", NULL, INST, "2"), "\n",
		 stz("lib", "i386", "same", INST, "2"), "\n", NULL);
	fx_write(&fx, "status", in);
	fx_write(&fx, "updates/0000", up);
	db = open_ok(fx.admin, UNPKG_DB_READONLY);
	ck_assert_uint_eq(unpkg_db_count(db), 5);
	ck_assert_ptr_null(unpkg_db_find(db, "a", "amd64"));
	ck_assert_str_eq(version_of(db, "a", "i386"), "2");
	ck_assert_str_eq(unpkg_db_find(db, "b", "amd64")->key, "b:amd64");
	ck_assert_ptr_null(unpkg_db_find(db, "foo", "amd64"));
	ck_assert_str_eq(version_of(db, "foo", "i386"), "2");
	ck_assert_str_eq(version_of(db, "lib", "amd64"), "1");
	ck_assert_str_eq(version_of(db, "lib", "i386"), "2");
	unpkg_db_free(db);
	/* dpkg reading the journal and dpkg reading our status agree. */
	if (have_dpkg_query("dpkg-query on a journal of foreign instances")) {
		const char *before = query(fx.admin);
		struct unpkg_err werr;

		ck_assert_ptr_nonnull(before);
		db = open_ok(fx.admin, UNPKG_DB_NOSYNC);
		unpkg_err_init(&werr);
		ck_assert_int_eq(unpkg_db_write(db, NULL, &werr), 0);
		unpkg_db_free(db);
		ck_assert(!fx_exists(&fx, "updates/0000"));
		ck_assert_str_eq(query(fx.admin), before);
	}

	/* Not co-installable with two installed instances: refused. */
	up = stz("lib", "arm64", NULL, INST, "3");
	fx_write(&fx, "updates/0001", up);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_db_open(fx.admin, UNPKG_DB_READONLY, &db,
				       &err),
			 -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_FORMAT);
	ck_assert_msg(strstr(err.msg, "updates/0001: line 1:") != NULL &&
			      strstr(err.msg, "multiple installed") != NULL,
		      "%s", err.msg);
	fx_destroy(&fx);
}
END_TEST

START_TEST(t_status_instances)
{
	static const struct {
		const char *ma1, *arch2, *ma2, *status2, *error;
	} cases[] = {
		{ "same", "i386", "same", INST, NULL },
		{ "same", "i386", NULL, INST, "mixed non-coinstallable" },
		{ NULL, "i386", "same", INST, "mixed non-coinstallable" },
		{ NULL, "i386", NULL, "install ok config-files",
		  "multiple non-coinstallable" },
		{ NULL, "amd64", NULL, INST, "multiple non-coinstallable" },
		{ NULL, "i386", NULL, "hold ok not-installed", NULL },
		{ "same", "amd64", "same", INST, NULL },
	};
	struct fixture fx;
	size_t i;

	fx_init(&fx);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct unpkg_db *db = NULL;
		struct unpkg_err err;
		char *in = cat(stz("b", "amd64", cases[i].ma1, INST, "1"),
			       "\n",
			       stz("b", cases[i].arch2, cases[i].ma2,
				   cases[i].status2, "2"),
			       NULL);
		int r;

		fx_write(&fx, "status", in);
		unpkg_err_init(&err);
		r = unpkg_db_open(fx.admin, UNPKG_DB_READONLY, &db, &err);
		if (cases[i].error == NULL) {
			ck_assert_msg(r == 0, "case %zu: %s", i, err.msg);
			ck_assert_str_eq(version_of(db, "b", cases[i].arch2),
					 "2");
			unpkg_db_free(db);
		} else {
			ck_assert_msg(r == -1, "case %zu accepted", i);
			/* The second stanza's first line. */
			ck_assert_msg(strstr(err.msg, cases[i].error) !=
						      NULL &&
					      strstr(err.msg,
						     cases[i].ma1
							     ? "/status: line 9:"
							     : "/status: line 8:") !=
						      NULL,
				      "case %zu: %s", i, err.msg);
		}
	}
	fx_destroy(&fx);
}
END_TEST

START_TEST(t_parse_errors)
{
	struct fixture fx;
	struct unpkg_db *db = NULL;
	struct unpkg_err err;
	char *s, *want;

	fx_init(&fx);
	s = stz("foo", "all", NULL, INST, "1");
	fx_write(&fx, "status",
		 cat(s, "\nPackage: bar\nStatus: " INST "\nbogus line\n",
		     NULL));
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_db_open(fx.admin, UNPKG_DB_READONLY, &db,
				       &err),
			 -1);
	ck_assert_ptr_null(db);
	ck_assert_int_eq(err.code, UNPKG_ERR_FORMAT);
	want = cat(fx.admin, "/status: line 10", NULL);
	ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "%s",
		      err.msg);

	fx_write(&fx, "status", cat(s, "\n", NULL));
	fx_write(&fx, "updates/0000", "\n\nPackage: x\nStatus: " INST "\n");
	fx_write(&fx, "updates/0001",
		 "Package: x\nStatus: " INST "\n\nPackage: y\n"
		 "Status: install ok fine\n");
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_db_open(fx.admin, UNPKG_DB_READONLY, &db,
				       &err),
			 -1);
	want = cat(fx.admin, "/updates/0001: line 5: package 'y': third "
			     "(status) word in 'Status' field: has invalid "
			     "value 'fine'",
		   NULL);
	ck_assert_str_eq(err.msg, want);

	fx_write(&fx, "updates/0001", "Version: 1\nStatus: " INST "\n");
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_db_open(fx.admin, UNPKG_DB_READONLY, &db,
				       &err),
			 -1);
	want = cat(fx.admin, "/updates/0001: line 1: missing 'Package' field",
		   NULL);
	ck_assert_str_eq(err.msg, want);

	fx_write(&fx, "updates/0001", "Package: z\nStatus: hold\n");
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_db_open(fx.admin, UNPKG_DB_READONLY, &db,
				       &err),
			 -1);
	ck_assert_msg(strstr(err.msg, "line 2: package 'z': second (error) "
				      "word in 'Status' field: is missing a "
				      "value") != NULL,
		      "%s", err.msg);

	fx_write(&fx, "updates/0001",
		 "Package: z\nStatus: hold ok installed junk\n");
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_db_open(fx.admin, UNPKG_DB_READONLY, &db,
				       &err),
			 -1);
	ck_assert_msg(strstr(err.msg, "trailing junk") != NULL, "%s",
		      err.msg);

	/* Runs of blanks between the words are fine, as in dpkg. */
	fx_write(&fx, "updates/0001",
		 "Package: z\nStatus: hold  ok\tinstalled\nVersion: 3\n");
	db = open_ok(fx.admin, UNPKG_DB_READONLY);
	ck_assert_str_eq(version_of(db, "z", ""), "3");
	ck_assert_str_eq(unpkg_db_find(db, "z", NULL)->key, "z");
	unpkg_db_free(db);
	fx_destroy(&fx);
}
END_TEST

/* ---- locks -------------------------------------------------------------- */

struct holder {
	pid_t pid;
	int release;	/* closing it lets the child exit */
};

/* Have a child process hold an fcntl write lock on `path`, as dpkg or apt
 * would: fcntl locks belong to processes, so the test cannot hold it. */
static struct holder hold_lock(const char *path)
{
	struct holder h;
	int ready[2], go[2];
	char c;

	ck_assert_int_eq(pipe(ready), 0);
	ck_assert_int_eq(pipe(go), 0);
	h.pid = fork();
	ck_assert_int_ge(h.pid, 0);
	if (h.pid == 0) {
		struct flock fl;
		int fd = open(path, O_RDWR | O_CREAT, 0640);

		memset(&fl, 0, sizeof(fl));
		fl.l_type = F_WRLCK;
		fl.l_whence = SEEK_SET;
		if (fd < 0 || fcntl(fd, F_SETLK, &fl) != 0)
			_exit(1);
		close(go[1]);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		while (read(go[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	ck_assert_int_eq(read(ready[0], &c, 1), 1);
	close(ready[0]);
	h.release = go[1];
	return h;
}

static void release_lock(struct holder h)
{
	int status;

	close(h.release);
	ck_assert_int_eq(waitpid(h.pid, &status, 0), h.pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Can another process lock `path` right now? */
static int lockable_by_child(const char *path)
{
	pid_t pid = fork();
	int status;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct flock fl;
		int fd = open(path, O_RDWR);

		memset(&fl, 0, sizeof(fl));
		fl.l_type = F_WRLCK;
		fl.l_whence = SEEK_SET;
		_exit(fd >= 0 && fcntl(fd, F_SETLK, &fl) == 0 ? 0 : 3);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status) == 0;
}

START_TEST(t_locks)
{
	struct fixture fx;
	struct unpkg_db *db = NULL;
	struct unpkg_err err;
	struct holder h;
	char *lock, *front, *pid;

	fx_init(&fx);
	fx_write(&fx, "status", "");
	lock = fx_path(&fx, "lock");
	front = fx_path(&fx, "lock-frontend");

	h = hold_lock(lock);
	pid = gc(malloc(32));
	snprintf(pid, 32, "pid %ld", (long)h.pid);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_db_open(fx.admin, 0, &db, &err), -1);
	ck_assert_ptr_null(db);
	ck_assert_int_eq(err.code, UNPKG_ERR_LOCKED);
	ck_assert_msg(strstr(err.msg, "dpkg database lock was locked by "
				      "another process with ") != NULL &&
			      strstr(err.msg, pid) != NULL,
		      "%s", err.msg);
	/* A query takes no lock. */
	db = open_ok(fx.admin, UNPKG_DB_READONLY);
	unpkg_db_free(db);
	release_lock(h);

	h = hold_lock(front);
	pid = gc(malloc(32));
	snprintf(pid, 32, "pid %ld", (long)h.pid);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_db_open(fx.admin, UNPKG_DB_LOCK_FRONTEND, &db,
				       &err),
			 -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_LOCKED);
	ck_assert_msg(strstr(err.msg, "dpkg frontend lock was locked by "
				      "another process with ") != NULL &&
			      strstr(err.msg, pid) != NULL,
		      "%s", err.msg);
	/* The frontend (apt, say) holds lock-frontend itself and runs us
	 * without it: only lock is taken. */
	db = open_ok(fx.admin, 0);
	ck_assert(!lockable_by_child(lock));
	unpkg_db_free(db);
	ck_assert(lockable_by_child(lock));
	release_lock(h);

	/* While we hold the database, nobody else gets either lock. */
	db = open_ok(fx.admin, UNPKG_DB_LOCK_FRONTEND);
	ck_assert(!lockable_by_child(front));
	ck_assert(!lockable_by_child(lock));
	unpkg_db_free(db);
	ck_assert(lockable_by_child(front));
	ck_assert(lockable_by_child(lock));
	fx_destroy(&fx);
}
END_TEST

/* ---- writing ------------------------------------------------------------ */

START_TEST(t_write_atomic)
{
	struct fixture fx;
	struct unpkg_db *db;
	struct unpkg_err err;
	struct stat before, st;
	unsigned long fs = 0;
	char *old, *up, *data, *want;

	fx_init(&fx);
	old = cat(stz("a", "all", NULL, INST, "1"), "\n",
		  stz("b", "all", NULL, INST, "1"), "\n", NULL);
	up = stz("b", "all", NULL, "install ok unpacked", "2");
	fx_write(&fx, "status", old);
	fx_write(&fx, "status-old", "stale\n");
	fx_write(&fx, "updates/0000", up);
	fx_write(&fx, "updates/tmp.i", "#padding\n");
	ck_assert_int_eq(stat(fx_path(&fx, "status"), &before), 0);

	umask(077);
	db = open_ok(fx.admin, 0);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_db_write(db, &fs, &err), 0);
	/* status-new, the admindir, updates/. */
	ck_assert_uint_eq(fs, 3);
	want = cat(stz("a", "all", NULL, INST, "1"), "\n", up, "\n", NULL);
	data = fx_read(&fx, "status");
	ck_assert_str_eq(data, want);
	ck_assert_int_eq(stat(fx_path(&fx, "status"), &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0644);
	ck_assert(st.st_ino != before.st_ino);
	/* status-old is the previous status itself, linked. */
	ck_assert_int_eq(stat(fx_path(&fx, "status-old"), &st), 0);
	ck_assert(st.st_ino == before.st_ino);
	data = fx_read(&fx, "status-old");
	ck_assert_str_eq(data, old);
	ck_assert(!fx_exists(&fx, "status-new"));
	ck_assert(!fx_exists(&fx, "updates/0000"));
	/* dpkg's scratch file is dpkg's business. */
	ck_assert(fx_exists(&fx, "updates/tmp.i"));

	/* Nothing left to retire: two fsyncs, and they add up. */
	ck_assert_int_eq(unpkg_db_write(db, &fs, &err), 0);
	ck_assert_uint_eq(fs, 5);
	data = fx_read(&fx, "status-old");
	ck_assert_str_eq(data, want);
	unpkg_db_free(db);

	db = open_ok(fx.admin, UNPKG_DB_NOSYNC);
	fx_write(&fx, "updates/0001", stz("c", "all", NULL, INST, "1"));
	fs = 0;
	ck_assert_int_eq(unpkg_db_write(db, &fs, &err), 0);
	ck_assert_uint_eq(fs, 0);
	/* Only entries read at open are retired. */
	ck_assert(fx_exists(&fx, "updates/0001"));
	unpkg_db_free(db);
	db = open_ok(fx.admin, UNPKG_DB_NOSYNC);
	ck_assert_ptr_nonnull(unpkg_db_find(db, "c", "all"));
	ck_assert_int_eq(unpkg_db_write(db, NULL, &err), 0);
	ck_assert(!fx_exists(&fx, "updates/0001"));
	unpkg_db_free(db);
	fx_destroy(&fx);
}
END_TEST

/* A write of the database with "b" put, ordered (unpkg_db_order_writes()),
 * in a child that first has sync_file_range fail with `deny` (0: not):
 * the child exits 0 if the write returned `ret`, with `fsyncs` fsyncs and
 * `waits` waits, and left the status with "b" exactly if it succeeded. */
static int ordered_write_child(const struct fixture *fx, int deny, int ret,
			       unsigned long fsyncs, unsigned long waits)
{
	struct unpkg_db *db;
	struct unpkg_err err;
	unsigned long fs = 0, w = 0;
	char *data;
	int rc;

	if (deny != 0 && tu_deny_syscall(__NR_sync_file_range, deny) < 0)
		return 99;
	db = open_ok(fx->admin, 0);
	if (unpkg_db_writes_ordered(db))
		return 97;
	unpkg_db_order_writes(db, &w);
	if (!unpkg_db_writes_ordered(db))
		return 96;
	unpkg_err_init(&err);
	if (unpkg_db_put(db, "b", "all", stz("b", "all", NULL, INST, "2"),
			 &err) < 0)
		return 98;
	rc = unpkg_db_write(db, &fs, &err);
	unpkg_db_free(db);
	data = fx_read(fx, "status");
	if (rc != ret || fs != fsyncs || w != waits ||
	    (strstr(data, "Package: b\n") != NULL) != (ret == 0) ||
	    fx_exists(fx, "status-new"))
		return 1;
	if (ret < 0 && err.code != UNPKG_ERR_SYNC)
		return 2;
	return 0;
}

/* Ordered writes: status-new is waited for instead of fdatasync'ed, and
 * the admindir's fsync after the rename is the write's only sync; where
 * sync_file_range is missing, status-new is fdatasync'ed; a failed wait
 * is a failed sync that leaves the status as it was. */
/* --sync=auto's runs order the writes where the admindir's file system
 * orders its commits, and there only. */
START_TEST(t_order_where_ordered)
{
	struct fixture fx;
	struct unpkg_err err;
	struct unpkg_db *db;
	enum unpkg_wb_path wb;
	unsigned long waits = 0;
	int ordered;

	fx_init(&fx);
	db = open_ok(fx.admin, UNPKG_DB_NOSYNC);
	unpkg_err_init(&err);
	ordered = unpkg_fsclass_commit_orders_fd(unpkg_db_dirfd(db), &wb,
						 &err);
	ck_assert_int_ge(ordered, 0);
	printf("order_where_ordered: admindir on %s\n",
	       ordered ? "ordered commits" : "unordered commits");
	ck_assert_int_eq(unpkg_db_writes_ordered(db), 0);
	ck_assert_int_eq(unpkg_db_order_writes_where_ordered(db, &waits,
							     &err), 0);
	ck_assert_int_eq(unpkg_db_writes_ordered(db), ordered);
	unpkg_db_free(db);
	fx_destroy(&fx);
}
END_TEST

START_TEST(t_ordered_writes)
{
	static const struct {
		int deny, ret;
		unsigned long fsyncs, waits;
	} cases[] = {
		{ 0, 0, 1, 1 },
		{ ENOSYS, 0, 2, 1 },
		{ EIO, -1, 0, 1 },
	};
	struct fixture fx;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pid_t pid;
		int status;

		fx_init(&fx);
		fx_write(&fx, "status", stz("a", "all", NULL, INST, "1"));
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0)
			_exit(ordered_write_child(&fx, cases[i].deny,
						  cases[i].ret,
						  cases[i].fsyncs,
						  cases[i].waits));
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert(WIFEXITED(status));
		ck_assert_msg(WEXITSTATUS(status) == 0, "case %zu: exit %d",
			      i, WEXITSTATUS(status));
		fx_destroy(&fx);
	}
}
END_TEST

/* The write in two halves: begin leaves status as it was and hands over
 * status-new (and a missing info/format) unsynced; end puts them in
 * place with the admindir's fsync only. */
START_TEST(t_write_halves)
{
	struct fixture fx;
	struct unpkg_db *db;
	struct unpkg_db_staged st;
	struct unpkg_err err;
	unsigned long fs = 0;
	char *old, *data;
	size_t i;

	fx_init(&fx);
	ck_assert_int_eq(unlink(fx_path(&fx, "info/format")), 0);
	old = cat(stz("a", "all", NULL, INST, "1"), "\n", NULL);
	fx_write(&fx, "status", old);
	db = open_ok(fx.admin, 0);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_db_put(db, "b", "all",
				      stz("b", "all", NULL, INST, "2"), &err),
			 0);
	ck_assert_int_eq(unpkg_db_write_begin(db, &st, &err), 0);
	ck_assert_uint_eq(st.n, 2);
	ck_assert_str_eq(st.name[0], "info/format-new");
	ck_assert_str_eq(st.name[1], "status-new");
	for (i = 0; i < st.n; i++)
		ck_assert_int_ge(fcntl(st.fd[i], F_GETFD), 0);
	ck_assert_str_eq(fx_read(&fx, "status"), old);
	ck_assert(!fx_exists(&fx, "info/format"));
	ck_assert(fx_exists(&fx, "status-new"));
	unpkg_db_staged_close(&st);
	ck_assert_uint_eq(st.n, 0);
	ck_assert_int_eq(unpkg_db_write_end(db, &fs, &err), 0);
	ck_assert_uint_eq(fs, 1);
	data = fx_read(&fx, "status");
	ck_assert_ptr_nonnull(strstr(data, "Package: b\n"));
	ck_assert_str_eq(fx_read(&fx, "status-old"), old);
	ck_assert_str_eq(fx_read(&fx, "info/format"), "1\n");
	ck_assert(!fx_exists(&fx, "status-new"));
	ck_assert(!fx_exists(&fx, "info/format-new"));
	/* Once written, the format is not written again. */
	ck_assert_int_eq(unpkg_db_write_begin(db, &st, &err), 0);
	ck_assert_uint_eq(st.n, 1);
	ck_assert_str_eq(st.name[0], "status-new");
	unpkg_db_staged_close(&st);
	ck_assert_int_eq(unpkg_db_write_end(db, NULL, &err), 0);
	unpkg_db_free(db);
	fx_destroy(&fx);
}
END_TEST

START_TEST(t_put)
{
	struct fixture fx;
	struct unpkg_db *db;
	struct unpkg_err err;
	const struct unpkg_db_pkg *p;
	const char *w, *f, *s;
	char *st, *data, *want;

	fx_init(&fx);
	fx_write(&fx, "status",
		 cat(stz("m", "all", NULL, INST, "1"), "\n", NULL));
	db = open_ok(fx.admin, UNPKG_DB_NOSYNC);
	unpkg_err_init(&err);

	st = stz("lib", "i386", "same", "install reinstreq half-installed",
		 "2");
	ck_assert_int_eq(unpkg_db_put(db, "lib", "i386", st, &err), 0);
	st = stz("lib", "amd64", "same", INST, "2");
	ck_assert_int_eq(unpkg_db_put(db, "lib", "amd64", st, &err), 0);
	st = stz("a", "all", NULL, INST, "1");
	ck_assert_int_eq(unpkg_db_put(db, "a", NULL, st, &err), 0);
	ck_assert_uint_eq(unpkg_db_count(db), 4);
	ck_assert_str_eq(unpkg_db_at(db, 0)->name, "a");
	ck_assert_str_eq(unpkg_db_at(db, 1)->key, "lib:amd64");
	ck_assert_str_eq(unpkg_db_at(db, 2)->key, "lib:i386");
	ck_assert_str_eq(unpkg_db_at(db, 3)->name, "m");
	p = unpkg_db_find(db, "lib", "i386");
	ck_assert_int_eq(unpkg_db_pkg_status(p, &w, &f, &s), 0);
	ck_assert_str_eq(w, "install");
	ck_assert_str_eq(f, "reinstreq");
	ck_assert_str_eq(s, "half-installed");

	/* Replace. */
	st = stz("a", "all", NULL, "install ok unpacked", "2");
	ck_assert_int_eq(unpkg_db_put(db, "a", "all", st, &err), 0);
	ck_assert_uint_eq(unpkg_db_count(db), 4);
	ck_assert_str_eq(version_of(db, "a", NULL), "2");

	/* Stanza for another package than named. */
	ck_assert_int_eq(unpkg_db_put(db, "b", "all", st, &err), -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_USAGE);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_db_put(db, "a", "i386", st, &err), -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_USAGE);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_db_put(db, "a", "all", "Package a\n", &err),
			 -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_FORMAT);
	unpkg_err_init(&err);

	/* Remove, by the stanza dpkg records for a purge or by NULL. */
	ck_assert_int_eq(unpkg_db_put(db, "lib", "i386",
				      "Package: lib\nStatus: purge ok "
				      "not-installed\nArchitecture: i386\n"
				      "Multi-Arch: same\n",
				      &err),
			 0);
	ck_assert_ptr_null(unpkg_db_find(db, "lib", "i386"));
	ck_assert_ptr_nonnull(unpkg_db_find(db, "lib", "amd64"));
	ck_assert_int_eq(unpkg_db_put(db, "m", NULL, NULL, &err), 0);
	ck_assert_int_eq(unpkg_db_put(db, "nothere", NULL, NULL, &err), 0);
	ck_assert_uint_eq(unpkg_db_count(db), 2);

	ck_assert_int_eq(unpkg_db_write(db, NULL, &err), 0);
	unpkg_db_free(db);
	want = cat(stz("a", "all", NULL, "install ok unpacked", "2"), "\n",
		   stz("lib", "amd64", "same", INST, "2"), "\n", NULL);
	data = fx_read(&fx, "status");
	ck_assert_str_eq(data, want);
	fx_destroy(&fx);
}
END_TEST

/* ---- file lists --------------------------------------------------------- */

START_TEST(t_read_list)
{
	struct fixture fx;
	struct unpkg_db *db;
	struct unpkg_err err;
	char **paths = (char **)1;
	size_t n = 99;

	fx_init(&fx);
	fx_write(&fx, "status", "");
	fx_write(&fx, "info/foo:i386.list",
		 "/.\n/usr\n/usr/bin/\n/usr/lib//\n/usr/bin/foo\n");
	fx_write(&fx, "info/empty.list", "");
	fx_write(&fx, "info/nonl.list", "/.\n/usr");
	fx_write(&fx, "info/blank.list", "/.\n\n/usr\n");
	fx_write(&fx, "info/slash.list", "/.\n/\n");
	db = open_ok(fx.admin, UNPKG_DB_READONLY);
	unpkg_err_init(&err);

	ck_assert_int_eq(unpkg_db_read_list(db, "foo:i386", &paths, &n, &err),
			 0);
	ck_assert_uint_eq(n, 5);
	ck_assert_str_eq(paths[0], "/.");
	ck_assert_str_eq(paths[1], "/usr");
	ck_assert_str_eq(paths[2], "/usr/bin");
	ck_assert_str_eq(paths[3], "/usr/lib/");
	ck_assert_str_eq(paths[4], "/usr/bin/foo");
	unpkg_db_list_free(paths, n);

	ck_assert_int_eq(unpkg_db_read_list(db, "missing", &paths, &n, &err),
			 0);
	ck_assert_ptr_null(paths);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(unpkg_db_read_list(db, "empty", &paths, &n, &err),
			 0);
	ck_assert_ptr_nonnull(paths);
	ck_assert_uint_eq(n, 0);
	unpkg_db_list_free(paths, n);
	unpkg_db_list_free(NULL, 0);

	ck_assert_int_eq(unpkg_db_read_list(db, "nonl", &paths, &n, &err), -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_FORMAT);
	ck_assert_msg(strstr(err.msg, "nonl.list") != NULL &&
			      strstr(err.msg, "missing final newline") != NULL,
		      "%s", err.msg);
	ck_assert_ptr_null(paths);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_db_read_list(db, "blank", &paths, &n, &err),
			 -1);
	ck_assert_msg(strstr(err.msg, "contains empty filename") != NULL,
		      "%s", err.msg);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_db_read_list(db, "slash", &paths, &n, &err),
			 -1);
	ck_assert_msg(strstr(err.msg, "contains empty filename") != NULL,
		      "%s", err.msg);
	unpkg_db_free(db);
	fx_destroy(&fx);
}
END_TEST

START_TEST(t_load_files)
{
	enum { NPKG = 2000, NFILE = 50 };
	struct fixture fx;
	struct unpkg_db *db;
	struct unpkg_err err;
	char *status;
	size_t cap = (size_t)NPKG * 300 + 4096, off = 0;
	char *list = gc(malloc((size_t)NFILE * 64 + 256));
	char name[64], path[128];
	const char *o;
	int i, j;

	ck_assert_ptr_nonnull(list);
	fx_init(&fx);
	status = gc(malloc(cap));
	ck_assert_ptr_nonnull(status);
	for (i = 0; i < NPKG; i++) {
		/* Every tenth package is Multi-Arch: same, so its list is
		 * info/name:arch.list. */
		int same = i % 10 == 0;
		size_t lo = 0;

		snprintf(name, sizeof(name), "pkg%04d", i);
		off += (size_t)snprintf(status + off, cap - off,
					"Package: %s\nStatus: %s\n"
					"Architecture: amd64\n%s"
					"Version: 1\n\n",
					name, INST,
					same ? "Multi-Arch: same\n" : "");
		lo += (size_t)sprintf(list + lo, "/.\n/usr\n/usr/share\n"
						 "/usr/share/%s\n", name);
		for (j = 0; j < NFILE - 4; j++)
			lo += (size_t)sprintf(list + lo,
					      "/usr/share/%s/file%02d\n", name,
					      j);
		snprintf(path, sizeof(path), "info/%s%s.list", name,
			 same ? ":amd64" : "");
		if (i != 7)
			fx_write(&fx, path, list);
	}
	/* Lists of packages that are not installed are not read. */
	off += (size_t)snprintf(status + off, cap - off,
				"Package: zgone\nStatus: hold ok "
				"not-installed\n\n");
	fx_write(&fx, "info/zgone.list", "/usr/share/gone\n");
	fx_write(&fx, "status", status);

	db = open_ok(fx.admin, UNPKG_DB_READONLY);
	ck_assert_ptr_null(unpkg_db_file_owner(db, "/usr", NULL));
	ck_assert_uint_eq(unpkg_db_files_count(db), 0);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_db_load_files(db, &err), 0);
	/* "/.", /usr and /usr/share once, then 47 paths of each list but
	 * pkg0007's (missing) and zgone's (not read) */
	ck_assert_uint_eq(unpkg_db_files_count(db), 3 + (NPKG - 1) * (NFILE - 3));

	ck_assert_str_eq(unpkg_db_file_owner(db, "/usr/share/pkg0017/file03",
					     NULL),
			 "pkg0017");
	ck_assert_str_eq(unpkg_db_file_owner(db, "/usr/share/pkg0020/file45",
					     "pkg0017"),
			 "pkg0020:amd64");
	ck_assert_ptr_null(unpkg_db_file_owner(db, "/usr/share/pkg0020/file45",
					       "pkg0020:amd64"));
	ck_assert_str_eq(unpkg_db_file_owner(db, "/usr/share/pkg1999", NULL),
			 "pkg1999");
	ck_assert_ptr_null(unpkg_db_file_owner(db, "/usr/share/pkg1999/",
					       NULL));
	ck_assert_ptr_null(unpkg_db_file_owner(db, "/usr/share/pkg1999/file46",
					       NULL));
	ck_assert_ptr_null(unpkg_db_file_owner(db, "/usr/share/pkg0007/file00",
					       NULL));
	ck_assert_ptr_null(unpkg_db_file_owner(db, "/usr/share/gone", NULL));
	ck_assert_ptr_null(unpkg_db_file_owner(db, "/nope", NULL));
	ck_assert_ptr_null(unpkg_db_file_owner(db, "", NULL));
	/* A directory shared by all: any owner but the one excluded. */
	o = unpkg_db_file_owner(db, "/usr/share", NULL);
	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(o, "pkg0000:amd64");
	o = unpkg_db_file_owner(db, "/usr/share", "pkg0000:amd64");
	ck_assert_ptr_nonnull(o);
	ck_assert_str_ne(o, "pkg0000:amd64");
	ck_assert_ptr_nonnull(unpkg_db_file_owner(db, "/.", "pkg0001"));

	/* Loading again starts over. */
	ck_assert_int_eq(unpkg_db_load_files(db, &err), 0);
	ck_assert_str_eq(unpkg_db_file_owner(db, "/usr/share/pkg0017/file03",
					     NULL),
			 "pkg0017");
	unpkg_db_free(db);

	/* One bad list spoils the load and names the package. */
	fx_write(&fx, "info/pkg0005.list", "/usr\n/usr/share/x");
	db = open_ok(fx.admin, UNPKG_DB_READONLY);
	ck_assert_int_eq(unpkg_db_load_files(db, &err), -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_FORMAT);
	ck_assert_msg(strstr(err.msg, "'pkg0005'") != NULL, "%s", err.msg);
	ck_assert_ptr_null(unpkg_db_file_owner(db, "/usr", NULL));
	unpkg_db_free(db);
	fx_destroy(&fx);
}
END_TEST

/* Packages a and b installed with the lists `alist` and `blist`: the
 * database opened, its lists loaded. */
static struct unpkg_db *open_ab(struct fixture *fx, const char *alist,
				const char *blist)
{
	struct unpkg_db *db;
	struct unpkg_err err;

	fx_init(fx);
	fx_write(fx, "status",
		 cat(stz("a", "all", NULL, INST, "1"), "\n",
		     stz("b", "all", NULL, INST, "1"), "\n", NULL));
	fx_write(fx, "info/a.list", alist);
	fx_write(fx, "info/b.list", blist);
	db = open_ok(fx->admin, 0);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_db_load_files(db, &err), 0);
	return db;
}

/* Callers load before every lookup: the lists are read once, and again
 * only after the database changed or the caller said they did. */
START_TEST(t_load_files_cached)
{
	struct fixture fx;
	struct unpkg_db *db;
	struct unpkg_err err;

	db = open_ab(&fx, "/usr\n/usr/a\n", "/usr\n/usr/b\n");
	unpkg_err_init(&err);
	ck_assert_str_eq(unpkg_db_file_owner(db, "/usr/a", NULL), "a");

	/* Not read again: nothing told the database. */
	fx_write(&fx, "info/a.list", "/usr\n/usr/a2\n");
	ck_assert_int_eq(unpkg_db_load_files(db, &err), 0);
	ck_assert_str_eq(unpkg_db_file_owner(db, "/usr/a", NULL), "a");
	ck_assert_ptr_null(unpkg_db_file_owner(db, "/usr/a2", NULL));

	/* The caller says so. */
	unpkg_db_files_changed(db);
	ck_assert_int_eq(unpkg_db_load_files(db, &err), 0);
	ck_assert_ptr_null(unpkg_db_file_owner(db, "/usr/a", NULL));
	ck_assert_str_eq(unpkg_db_file_owner(db, "/usr/a2", NULL), "a");

	/* A put: b becomes not-installed, its list no longer counts. */
	ck_assert_int_eq(unpkg_db_put(db, "b", NULL,
				      stz("b", "all", NULL,
					  "purge ok not-installed", "1"),
				      &err), 0);
	ck_assert_str_eq(unpkg_db_file_owner(db, "/usr/b", NULL), "b");
	ck_assert_int_eq(unpkg_db_load_files(db, &err), 0);
	ck_assert_ptr_null(unpkg_db_file_owner(db, "/usr/b", NULL));

	/* A write. */
	fx_write(&fx, "info/a.list", "/usr\n/usr/a3\n");
	ck_assert_int_eq(unpkg_db_load_files(db, &err), 0);
	ck_assert_ptr_null(unpkg_db_file_owner(db, "/usr/a3", NULL));
	ck_assert_int_eq(unpkg_db_write(db, NULL, &err), 0);
	ck_assert_int_eq(unpkg_db_load_files(db, &err), 0);
	ck_assert_str_eq(unpkg_db_file_owner(db, "/usr/a3", NULL), "a");
	unpkg_db_free(db);
	fx_destroy(&fx);
}
END_TEST

/* After a put, or unpkg_db_list_changed(), only the lists of the package
 * concerned are read again: a removal run reads each list once, not once
 * per package removed.  Another package's list, spoilt after the load,
 * is not read; shared paths keep their other owners. */
START_TEST(t_load_files_one)
{
	struct fixture fx;
	struct unpkg_db *db;
	struct unpkg_err err;

	fx_init(&fx);
	fx_write(&fx, "status",
		 cat(stz("a", "all", NULL, INST, "1"), "\n",
		     stz("b", "all", NULL, INST, "1"), "\n",
		     stz("c", "all", NULL, INST, "1"), "\n",
		     stz("x", "amd64", NULL, INST, "1"), "\n", NULL));
	fx_write(&fx, "info/a.list", "/usr\n/usr/share\n/usr/a\n");
	fx_write(&fx, "info/b.list", "/usr\n/usr/share\n/usr/b\n");
	fx_write(&fx, "info/c.list", "/usr\n/usr/share\n/usr/c\n");
	fx_write(&fx, "info/x.list", "/usr/x\n");
	fx_write(&fx, "info/x:amd64.list", "/usr/xs\n");
	db = open_ok(fx.admin, 0);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_db_load_files(db, &err), 0);
	fx_write(&fx, "info/c.list", "/usr\n/usr/c-unfinished");

	/* b half-installed, its list changed with it */
	fx_write(&fx, "info/b.list", "/usr\n/usr/share\n/usr/b2\n");
	ck_assert_int_eq(unpkg_db_put(db, "b", NULL,
				      stz("b", "all", NULL,
					  "install reinstreq half-installed",
					  "1"),
				      &err), 0);
	ck_assert_msg(unpkg_db_load_files(db, &err) == 0, "%s", err.msg);
	ck_assert_ptr_null(unpkg_db_file_owner(db, "/usr/b", NULL));
	ck_assert_str_eq(unpkg_db_file_owner(db, "/usr/b2", NULL), "b");
	ck_assert_str_eq(unpkg_db_file_owner(db, "/usr/c", NULL), "c");
	ck_assert_str_eq(unpkg_db_file_owner(db, "/usr/share", NULL), "a");

	/* a (the first owner of the shared paths) goes; b and c keep them */
	ck_assert_int_eq(unpkg_db_put(db, "a", NULL, NULL, &err), 0);
	ck_assert_int_eq(unpkg_db_load_files(db, &err), 0);
	ck_assert_ptr_null(unpkg_db_file_owner(db, "/usr/a", NULL));
	ck_assert_str_ne(unpkg_db_file_owner(db, "/usr/share", NULL), "a");
	ck_assert_ptr_nonnull(unpkg_db_file_owner(db, "/usr/share", "b"));
	ck_assert_ptr_nonnull(unpkg_db_file_owner(db, "/usr/share", "c"));

	/* b's list moved aside: the paths only it had answer to no one,
	 * and /usr to c alone */
	ck_assert_int_eq(unlink(fx_path(&fx, "info/b.list")), 0);
	unpkg_db_list_changed(db, "b");
	ck_assert_int_eq(unpkg_db_load_files(db, &err), 0);
	ck_assert_ptr_null(unpkg_db_file_owner(db, "/usr/b2", NULL));
	ck_assert_str_eq(unpkg_db_file_owner(db, "/usr", NULL), "c");
	ck_assert_ptr_null(unpkg_db_file_owner(db, "/usr", "c"));

	/* ... and to b again when its list comes back */
	fx_write(&fx, "info/b.list", "/usr/b2\n");
	unpkg_db_list_changed(db, "b");
	ck_assert_int_eq(unpkg_db_load_files(db, &err), 0);
	ck_assert_str_eq(unpkg_db_file_owner(db, "/usr/b2", NULL), "b");

	/* x becomes Multi-Arch: same: its key, and so its list, change */
	ck_assert_int_eq(unpkg_db_put(db, "x", "amd64",
				      stz("x", "amd64", "same", INST, "2"),
				      &err), 0);
	ck_assert_int_eq(unpkg_db_load_files(db, &err), 0);
	ck_assert_ptr_null(unpkg_db_file_owner(db, "/usr/x", NULL));
	ck_assert_str_eq(unpkg_db_file_owner(db, "/usr/xs", NULL), "x:amd64");

	/* the spoilt list is met when all are read again */
	unpkg_db_files_changed(db);
	ck_assert_int_eq(unpkg_db_load_files(db, &err), -1);
	ck_assert_msg(strstr(err.msg, "'c'") != NULL, "%s", err.msg);
	unpkg_db_free(db);
	fx_destroy(&fx);
}
END_TEST

/* A list staged in place of one moved aside is the package's list while
 * it waits (a removal keeps what it names), whether all lists are read
 * or that one again; once it is gone (put in place, or undone), the one
 * in place is. */
START_TEST(t_list_staged)
{
	struct fixture fx;
	struct unpkg_db *db;
	struct unpkg_err err;

	db = open_ab(&fx, "/etc\n/etc/a.conf\n/usr\n/usr/a\n", "/etc\n/etc/b\n");
	unpkg_err_init(&err);

	/* a removed, its conffile kept: the old list aside, the new one
	 * staged */
	ck_assert_int_eq(rename(fx_path(&fx, "info/a.list"),
				fx_path(&fx, "info/a.list.dpkg-tmp")), 0);
	fx_write(&fx, "info/a.list.dpkg-new", "/etc\n/etc/a.conf\n");
	ck_assert_int_eq(unpkg_db_list_staged(db, "a", &err), 0);
	ck_assert_int_eq(unpkg_db_list_staged(db, "a", &err), 0);
	ck_assert_int_eq(unpkg_db_load_files(db, &err), 0);
	ck_assert_str_eq(unpkg_db_file_owner(db, "/etc", "b"), "a");
	ck_assert_str_eq(unpkg_db_file_owner(db, "/etc/a.conf", NULL), "a");
	ck_assert_ptr_null(unpkg_db_file_owner(db, "/usr/a", NULL));
	unpkg_db_files_changed(db);
	ck_assert_int_eq(unpkg_db_load_files(db, &err), 0);
	ck_assert_str_eq(unpkg_db_file_owner(db, "/etc", "b"), "a");
	ck_assert_ptr_null(unpkg_db_file_owner(db, "/usr/a", NULL));

	/* put in place by the transaction */
	ck_assert_int_eq(rename(fx_path(&fx, "info/a.list.dpkg-new"),
				fx_path(&fx, "info/a.list")), 0);
	unpkg_db_files_changed(db);
	ck_assert_int_eq(unpkg_db_load_files(db, &err), 0);
	ck_assert_str_eq(unpkg_db_file_owner(db, "/etc/a.conf", NULL), "a");

	/* another removal of a undone: the old list back */
	fx_write(&fx, "info/a.list.dpkg-new", "/etc\n");
	ck_assert_int_eq(unpkg_db_list_staged(db, "a", &err), 0);
	ck_assert_int_eq(unlink(fx_path(&fx, "info/a.list.dpkg-new")), 0);
	ck_assert_int_eq(rename(fx_path(&fx, "info/a.list.dpkg-tmp"),
				fx_path(&fx, "info/a.list")), 0);
	unpkg_db_list_changed(db, "a");
	ck_assert_int_eq(unpkg_db_load_files(db, &err), 0);
	ck_assert_str_eq(unpkg_db_file_owner(db, "/usr/a", NULL), "a");
	unpkg_db_free(db);
	fx_destroy(&fx);
}
END_TEST

/* A package's state as an enum, and the two questions asked of it. */
START_TEST(t_pkg_state)
{
	static const struct {
		const char *status;
		enum unpkg_status want;
		int present, configured;
	} cases[] = {
		{ NULL, UNPKG_STATUS_INVALID, 0, 0 },
		{ "install ok", UNPKG_STATUS_INVALID, 0, 0 },
		{ "install ok bogus", UNPKG_STATUS_INVALID, 0, 0 },
		{ "install ok not-installed", UNPKG_STATUS_NOT_INSTALLED, 0, 0 },
		{ "deinstall ok config-files", UNPKG_STATUS_CONFIG_FILES, 0, 0 },
		{ "install reinstreq half-installed",
		  UNPKG_STATUS_HALF_INSTALLED, 1, 0 },
		{ "install ok unpacked", UNPKG_STATUS_UNPACKED, 1, 0 },
		{ "install ok half-configured", UNPKG_STATUS_HALF_CONFIGURED,
		  1, 0 },
		{ "install ok triggers-awaited",
		  UNPKG_STATUS_TRIGGERS_AWAITED, 1, 1 },
		{ "install ok triggers-pending",
		  UNPKG_STATUS_TRIGGERS_PENDING, 1, 1 },
		{ "hold ok installed", UNPKG_STATUS_INSTALLED, 1, 1 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct unpkg_db_pkg pkg;
		struct unpkg_err err;
		enum unpkg_status st;

		memset(&pkg, 0, sizeof(pkg));
		unpkg_err_init(&err);
		unpkg_para_init(&pkg.para);
		if (cases[i].status != NULL)
			ck_assert_int_eq(unpkg_para_set(&pkg.para, "Status",
							cases[i].status, &err),
					 0);
		st = unpkg_db_pkg_state(&pkg);
		ck_assert_msg(st == cases[i].want, "%s: %d", cases[i].status,
			      (int)st);
		ck_assert_int_eq(unpkg_status_present(st), cases[i].present);
		ck_assert_int_eq(unpkg_status_configured(st),
				 cases[i].configured);
		unpkg_para_destroy(&pkg.para);
	}
}
END_TEST

/* The lines of a file list a removal or an upgrade may touch: not the
 * root's "/.", nor a line that is no absolute path. */
START_TEST(t_listed_below_root)
{
	ck_assert_int_eq(unpkg_db_listed_below_root("/usr"), 1);
	ck_assert_int_eq(unpkg_db_listed_below_root("/usr/bin/foo"), 1);
	ck_assert_int_eq(unpkg_db_listed_below_root("/.x"), 1);
	ck_assert_int_eq(unpkg_db_listed_below_root("/./usr"), 1);
	ck_assert_int_eq(unpkg_db_listed_below_root("/."), 0);
	ck_assert_int_eq(unpkg_db_listed_below_root("usr/bin/foo"), 0);
	ck_assert_int_eq(unpkg_db_listed_below_root("./usr"), 0);
	ck_assert_int_eq(unpkg_db_listed_below_root(""), 0);
}
END_TEST

static Suite *db_suite(void)
{
	Suite *s = suite_create("db");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, NULL, gc_free);
	tcase_add_test(tc, t_missing_admindir);
	tcase_add_test(tc, t_pkg_state);
	tcase_add_test(tc, t_pkg_bin);
	tcase_add_test(tc, t_walk_order);
	tcase_add_test(tc, t_create);
	tcase_add_test(tc, t_remove_made);
	tcase_add_test(tc, t_format);
	tcase_add_test(tc, t_usage);
	tcase_add_test(tc, t_real_status_roundtrip);
	tcase_add_test(tc, t_real_status_with_updates);
	tcase_add_test(tc, t_updates_order);
	tcase_add_test(tc, t_updates_bad_names);
	tcase_add_test(tc, t_not_installed_dropped);
	tcase_add_test(tc, t_multiarch_order);
	tcase_add_test(tc, t_native_order);
	tcase_add_test(tc, t_crossgrade);
	tcase_add_test(tc, t_status_instances);
	tcase_add_test(tc, t_parse_errors);
	tcase_add_test(tc, t_locks);
	tcase_add_test(tc, t_write_atomic);
	tcase_add_test(tc, t_write_halves);
	tcase_add_test(tc, t_ordered_writes);
	tcase_add_test(tc, t_order_where_ordered);
	tcase_add_test(tc, t_put);
	tcase_add_test(tc, t_read_list);
	tcase_add_test(tc, t_listed_below_root);
	tcase_add_test(tc, t_load_files);
	tcase_add_test(tc, t_load_files_cached);
	tcase_add_test(tc, t_load_files_one);
	tcase_add_test(tc, t_list_staged);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(db_suite());
}
