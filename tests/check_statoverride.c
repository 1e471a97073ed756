/* check_statoverride.c - dpkg-statoverride's file read from a database
 * directory (statoverride.h). */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "statoverride.h"
#include "testutil.h"

/* A database directory holding `statoverride` with `text` (NULL: none),
 * opened read-only; its path in *dir. */
static struct unpkg_db *open_with(const char *text, char **dir)
{
	struct unpkg_err err;
	struct unpkg_db *db = NULL;
	char path[4096];

	*dir = tu_mkdtemp();
	snprintf(path, sizeof(path), "%s/info", *dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/updates", *dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/info/format", *dir);
	tu_write_file(path, "1\n", 0644);
	if (text != NULL) {
		snprintf(path, sizeof(path), "%s/statoverride", *dir);
		tu_write_file(path, text, 0644);
	}
	unpkg_err_init(&err);
	ck_assert_msg(unpkg_db_open(*dir, UNPKG_DB_READONLY, &db, &err) == 0,
		      "%s", err.msg);
	return db;
}

static void close_db(struct unpkg_db *db, char *dir)
{
	unpkg_db_free(db);
	tu_rm_rf(dir);
	free(dir);
}

/* No file is no override. */
START_TEST(t_missing)
{
	struct unpkg_statoverride *v = NULL;
	struct unpkg_err err;
	char *dir;
	struct unpkg_db *db = open_with(NULL, &dir);
	size_t n = 1;

	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_statoverride_read(db, &v, &n, &err), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_null(v);
	close_db(db, dir);
}
END_TEST

/* Names and #ids, octal modes. */
START_TEST(t_entries)
{
	struct unpkg_statoverride *v;
	struct unpkg_err err;
	char *dir;
	struct unpkg_db *db = open_with("root root 4755 /usr/bin/a\n"
					"#7 #8 0640 /etc/b\n", &dir);
	size_t n;

	unpkg_err_init(&err);
	ck_assert_msg(unpkg_statoverride_read(db, &v, &n, &err) == 0, "%s",
		      err.msg);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(v[0].path, "/usr/bin/a");
	ck_assert_uint_eq(v[0].uid, 0);
	ck_assert_uint_eq(v[0].gid, 0);
	ck_assert_uint_eq(v[0].mode, 04755);
	ck_assert_str_eq(v[1].path, "/etc/b");
	ck_assert_uint_eq(v[1].uid, 7);
	ck_assert_uint_eq(v[1].gid, 8);
	ck_assert_uint_eq(v[1].mode, 0640);
	unpkg_statoverride_free(v, n);
	close_db(db, dir);
}
END_TEST

/* What dpkg refuses: a mode that is not octal or too large, a short line,
 * an unknown user; the error names the file and the line. */
START_TEST(t_errors)
{
	static const char *const bad[] = {
		"root root 9999 /x\n",
		"root root 17777 /x\n",
		"root root 0644\n",
		"root root 0644 /ok\nno-such-user-here root 0644 /x\n",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct unpkg_statoverride *v = NULL;
		struct unpkg_err err;
		char *dir;
		struct unpkg_db *db = open_with(bad[i], &dir);
		size_t n = 0;

		unpkg_err_init(&err);
		ck_assert_int_eq(unpkg_statoverride_read(db, &v, &n, &err), -1);
		ck_assert_int_eq(err.code, UNPKG_ERR_FORMAT);
		ck_assert_msg(strstr(err.msg, "statoverride: line ") != NULL,
			      "%s", err.msg);
		ck_assert_ptr_null(v);
		ck_assert_uint_eq(n, 0);
		close_db(db, dir);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("statoverride");
	TCase *tc = tcase_create("read");

	tcase_add_test(tc, t_missing);
	tcase_add_test(tc, t_entries);
	tcase_add_test(tc, t_errors);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
