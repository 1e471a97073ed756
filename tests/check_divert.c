/* check_divert.c - the diversions file: parse, lookups, the package a
 * diversion applies to, reloads. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "divert.h"
#include "testutil.h"

static struct unpkg_diversions *parsed(const char *text)
{
	struct unpkg_diversions *d;
	struct unpkg_err err;

	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_divert_new(&d, &err), 0);
	ck_assert_msg(unpkg_divert_parse(d, text, strlen(text), "diversions",
					 &err) == 0, "%s", err.msg);
	return d;
}

START_TEST(test_parse_lookup)
{
	struct unpkg_diversions *d = parsed(
		"/usr/bin/hello\n/usr/bin/hello.distrib\n:\n"
		"/bin/sh\n/bin/sh.distrib\ndash\n"
		"usr/share/x\n.//usr/share/x.real\nfoo\n");
	const struct unpkg_diversion *dv;

	ck_assert_uint_eq(unpkg_divert_count(d), 3);
	dv = unpkg_divert_at(d, 0);
	ck_assert_str_eq(dv->from, "/usr/bin/hello");
	ck_assert_str_eq(dv->to, "/usr/bin/hello.distrib");
	ck_assert_ptr_null(dv->pkg);
	ck_assert_ptr_eq(unpkg_divert_of(d, "/bin/sh"), unpkg_divert_at(d, 1));
	ck_assert_str_eq(unpkg_divert_at(d, 1)->pkg, "dash");
	/* paths as dpkg names them */
	dv = unpkg_divert_of(d, "/usr/share/x");
	ck_assert_ptr_nonnull(dv);
	ck_assert_str_eq(dv->to, "/usr/share/x.real");
	ck_assert_ptr_eq(unpkg_divert_onto(d, "/usr/share/x.real"), dv);
	ck_assert_ptr_null(unpkg_divert_of(d, "/usr/share/x.real"));
	ck_assert_ptr_null(unpkg_divert_onto(d, "/usr/share/x"));
	ck_assert_ptr_null(unpkg_divert_of(d, "/bin/bash"));
	ck_assert_uint_eq(unpkg_divert_at(d, 3) == NULL, 1);
	unpkg_divert_free(d);
}
END_TEST

START_TEST(test_applies)
{
	struct unpkg_diversions *d = parsed(
		"/usr/bin/hello\n/usr/bin/hello.distrib\n:\n"
		"/bin/sh\n/bin/sh.distrib\ndash\n");

	/* a local diversion applies to every package */
	ck_assert_str_eq(unpkg_divert_use(d, "/usr/bin/hello", "hello"),
			 "/usr/bin/hello.distrib");
	/* a package's own diversion does not apply to its own files */
	ck_assert_int_eq(unpkg_divert_applies(unpkg_divert_of(d, "/bin/sh"),
					      "dash"), 0);
	ck_assert_str_eq(unpkg_divert_use(d, "/bin/sh", "dash"), "/bin/sh");
	ck_assert_str_eq(unpkg_divert_use(d, "/bin/sh", "dash:amd64"),
			 "/bin/sh");
	ck_assert_str_eq(unpkg_divert_use(d, "/bin/sh", "dashy"),
			 "/bin/sh.distrib");
	ck_assert_str_eq(unpkg_divert_use(d, "/bin/sh", "das"),
			 "/bin/sh.distrib");
	ck_assert_str_eq(unpkg_divert_use(d, "/bin/sh", "bash"),
			 "/bin/sh.distrib");
	ck_assert_str_eq(unpkg_divert_use(d, "/bin/ls", "bash"), "/bin/ls");
	ck_assert_str_eq(unpkg_divert_use(NULL, "/bin/sh", "bash"), "/bin/sh");
	/* both may ship a path one of them diverts ("name:arch" and
	 * "name version" owners); a local diversion excuses nobody */
	ck_assert_int_eq(unpkg_divert_by_either(d, "/bin/sh", "dash", "bash",
						4), 1);
	ck_assert_int_eq(unpkg_divert_by_either(d, "/bin/sh", "bash",
						"dash:amd64", 4), 1);
	ck_assert_int_eq(unpkg_divert_by_either(d, "/bin/sh", NULL,
						"dash 0.5", 4), 1);
	ck_assert_int_eq(unpkg_divert_by_either(d, "/bin/sh", "bash",
						"dashy", 5), 0);
	ck_assert_int_eq(unpkg_divert_by_either(d, "/usr/bin/hello", "hello",
						"other", 5), 0);
	ck_assert_int_eq(unpkg_divert_by_either(d, "/bin/ls", "dash", "dash",
						4), 0);
	unpkg_divert_free(d);
}
END_TEST

static void refused(const char *text, const char *why)
{
	struct unpkg_diversions *d = parsed("/a\n/a.d\n:\n");
	struct unpkg_err err;

	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_divert_parse(d, text, strlen(text), "div", &err),
			 -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_FORMAT);
	ck_assert_msg(strstr(err.msg, why) != NULL, "%s", err.msg);
	/* the set before stays */
	ck_assert_uint_eq(unpkg_divert_count(d), 1);
	ck_assert_ptr_nonnull(unpkg_divert_of(d, "/a"));
	unpkg_divert_free(d);
}

START_TEST(test_refused)
{
	refused("/x\n/x.d\n", "unexpected end of file reading 'div'");
	refused("/x\n/x.d\n:", "missing newline");
	refused("/x\n/x.d\n:\n/x\n/y\np\n", "conflicting diversions");
	refused("/x\n/x.d\n:\n/x.d\n/y\np\n", "conflicting diversions");
	refused("/x\n/x.d\n:\n/z\n/x.d\np\n", "conflicting diversions");
	refused("/x\n/x.d\n:\n/z\n/x\np\n", "conflicting diversions");
}
END_TEST

START_TEST(test_reload)
{
	struct unpkg_diversions *d = parsed("/a\n/a.d\npkg\n");
	const char *kept = unpkg_divert_use(d, "/a", "other");
	struct unpkg_err err;

	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_divert_parse(d, "", 0, "div", &err), 0);
	ck_assert_uint_eq(unpkg_divert_count(d), 0);
	ck_assert_str_eq(unpkg_divert_use(d, "/a", "other"), "/a");
	/* a string of an earlier load lives on */
	ck_assert_str_eq(kept, "/a.d");
	unpkg_divert_free(d);
}
END_TEST

START_TEST(test_load)
{
	char *dir = tu_mkdtemp(), *admin, *file;
	struct unpkg_diversions *d;
	struct unpkg_db *db;
	struct unpkg_err err;

	unpkg_err_init(&err);
	ck_assert_int_ne(asprintf(&admin, "%s/admin", dir), -1);
	ck_assert_int_ne(asprintf(&file, "%s/diversions", admin), -1);
	ck_assert_msg(unpkg_db_open(admin, UNPKG_DB_CREATE | UNPKG_DB_NOSYNC,
				    &db, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(unpkg_divert_new(&d, &err), 0);
	/* none */
	ck_assert_int_eq(unpkg_divert_load(d, db, &err), 0);
	ck_assert_uint_eq(unpkg_divert_count(d), 0);
	tu_write_file(file, "/usr/bin/hello\n/usr/bin/hello.distrib\n:\n",
		      0644);
	ck_assert_int_eq(unpkg_divert_load(d, db, &err), 0);
	ck_assert_str_eq(unpkg_divert_use(d, "/usr/bin/hello", "hello"),
			 "/usr/bin/hello.distrib");
	tu_write_file(file, "/usr/bin/hello\n", 0644);
	ck_assert_int_eq(unpkg_divert_load(d, db, &err), -1);
	ck_assert_msg(strstr(err.msg, "/admin/diversions") != NULL, "%s",
		      err.msg);
	unpkg_divert_free(d);
	unpkg_db_free(db);
	tu_rm_rf(dir);
	free(file);
	free(admin);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("divert");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_parse_lookup);
	tcase_add_test(tc, test_applies);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_reload);
	tcase_add_test(tc, test_load);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
