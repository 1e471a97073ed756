/* check_control.c - tests for the deb822 paragraph parser. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "control.h"
#include "testutil.h"

static int parse_str(const char *text, struct unpkg_para *para,
		     struct unpkg_err *err)
{
	unpkg_para_init(para);
	unpkg_err_init(err);
	return unpkg_para_parse(text, strlen(text), para, err);
}

START_TEST(test_basic)
{
	struct unpkg_para p;
	struct unpkg_err err;
	const char *text = "Package: foo\n"
			   "Version: 1.0\n"
			   "description: short\n"
			   " long line\n";

	ck_assert_int_eq(parse_str(text, &p, &err), 0);
	ck_assert_int_eq(err.code, UNPKG_ERR_NONE);
	ck_assert_uint_eq(p.count, 3);
	ck_assert_uint_eq(p.line, 1);
	ck_assert_str_eq(p.fields[0].name, "Package");
	ck_assert_str_eq(p.fields[0].value, "foo");
	ck_assert_uint_eq(p.fields[0].line, 1);
	ck_assert_str_eq(p.fields[2].name, "description");
	ck_assert_str_eq(p.fields[2].value, "short\n long line");
	ck_assert_uint_eq(p.fields[2].line, 3);
	ck_assert_str_eq(unpkg_para_get(&p, "DESCRIPTION"), "short\n long line");
	ck_assert_str_eq(unpkg_para_get(&p, "version"), "1.0");
	ck_assert_ptr_null(unpkg_para_get(&p, "Versio"));
	ck_assert_ptr_null(unpkg_para_get(&p, "Version2"));
	unpkg_para_destroy(&p);
	ck_assert_uint_eq(p.count, 0);
	ck_assert_ptr_null(p.fields);
	unpkg_para_destroy(&p);
	unpkg_para_destroy(NULL);
}
END_TEST

/* The value rules below were checked against what dpkg 1.21 writes back
 * into its status file for the same control file. */
START_TEST(test_values_like_dpkg)
{
	struct unpkg_para p;
	struct unpkg_err err;
	const char *text = "X-Trail: hello  world  \t\n"
			   "Description:   A test package   \n"
			   " line one\n"
			   " .\n"
			   "   Indented   line   \n"
			   "\tTab line\t\n"
			   "Conffiles:\n"
			   " /etc/x 0123\n"
			   "X-Empty:\n"
			   "X-Blank:   \t \n"
			   "X-Next:   \n"
			   " a\n"
			   " b  \n"
			   "X-Spaced \t: v\n"
			   "X-Url: http://x:80/\n";

	ck_assert_int_eq(parse_str(text, &p, &err), 0);
	ck_assert_str_eq(unpkg_para_get(&p, "X-Trail"), "hello  world");
	ck_assert_str_eq(unpkg_para_get(&p, "Description"),
			 "A test package   \n line one\n .\n"
			 "   Indented   line   \n\tTab line");
	ck_assert_str_eq(unpkg_para_get(&p, "Conffiles"), "\n /etc/x 0123");
	ck_assert_str_eq(unpkg_para_get(&p, "X-Empty"), "");
	ck_assert_str_eq(unpkg_para_get(&p, "X-Blank"), "");
	ck_assert_str_eq(unpkg_para_get(&p, "X-Next"), "\n a\n b");
	ck_assert_str_eq(p.fields[6].name, "X-Spaced");
	ck_assert_str_eq(p.fields[6].value, "v");
	ck_assert_uint_eq(p.fields[6].line, 14);
	ck_assert_str_eq(unpkg_para_get(&p, "X-Url"), "http://x:80/");
	unpkg_para_destroy(&p);
}
END_TEST

START_TEST(test_blank_lines_around)
{
	struct unpkg_para p;
	struct unpkg_err err;

	ck_assert_int_eq(parse_str("\n\nA: 1\nB: 2\n\n\n", &p, &err), 0);
	ck_assert_uint_eq(p.count, 2);
	ck_assert_uint_eq(p.line, 3);
	ck_assert_uint_eq(p.fields[1].line, 4);
	unpkg_para_destroy(&p);
}
END_TEST

struct bad_case {
	const char *text;
	size_t len;		/* 0: strlen(text) */
	const char *msg;	/* expected message, exactly */
};

static const struct bad_case bad_cases[] = {
	{ "A: 1\nno colon here\n", 0,
	  "line 2: not a field: no ':' in line" },
	{ "# comment\nA: 1\n", 0, "line 1: not a field: no ':' in line" },
	{ "A: 1\n: x\n", 0, "line 2: empty field name" },
	{ "A: 1\nFoo Bar: x\n", 0, "line 2: blank in field name 'Foo Bar'" },
	{ "A: 1\nFo\001o: x\n", 0, "line 2: control character in field name" },
	{ "A: 1\nFo\177o: x\n", 0, "line 2: control character in field name" },
	{ " A: 1\n", 0, "line 1: continuation line before the first field" },
	{ "\n\n\tA: 1\n", 0,
	  "line 3: continuation line before the first field" },
	{ "Version: 1\nA: 1\nversion: 2\n", 0,
	  "line 3: duplicate field 'version'" },
	{ "A: 1\nX-Foo: 1\nx-fOO: 2\n", 0, "line 3: duplicate field 'x-fOO'" },
	{ "A: 1\nB: x\0y\n", 11, "line 2: NUL byte" },
	{ "A: 1\nB: x\n \0\n", 13, "line 3: NUL byte" },
	{ "A: 1\r\nB: x\n", 0,
	  "line 1: carriage return (CR) byte; lines must end in a plain LF" },
	{ "A: 1\nB: x\n more\r\n", 0,
	  "line 3: carriage return (CR) byte; lines must end in a plain LF" },
	{ "A: 1\nB: x", 0, "line 2: missing newline at end of file" },
	{ "A: 1\nB:\n x", 0, "line 3: missing newline at end of file" },
	{ "A: 1\nB", 0, "line 2: missing newline at end of file" },
	{ "A: 1\nDescription: x\n \n y\n", 0,
	  "line 3: blank line in value of field 'Description'" },
	{ "A: 1\nDescription: x\n\t \n", 0,
	  "line 3: blank line in value of field 'Description'" },
	{ "A: 1\n\nB: 2\n", 0,
	  "line 3: a second paragraph; only one is allowed" },
	{ "A: 1\n\n \n", 0, "line 3: continuation line before the first field" },
	{ "A: 1\n\nB\n", 0, "line 3: not a field: no ':' in line" },
	{ "", 0, "line 1: no fields (empty control file)" },
	{ "\n\n\n", 0, "line 4: no fields (empty control file)" },
};

START_TEST(test_parse_errors)
{
	const struct bad_case *c = &bad_cases[_i];
	size_t len = c->len != 0 ? c->len : strlen(c->text);
	struct unpkg_para p;
	struct unpkg_err err;

	unpkg_para_init(&p);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_para_parse(c->text, len, &p, &err), -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_FORMAT);
	ck_assert_str_eq(err.msg, c->msg);
	/* Nothing half-parsed is left behind. */
	ck_assert_uint_eq(p.count, 0);
	ck_assert_ptr_null(p.fields);
}
END_TEST

START_TEST(test_parse_needs_empty_para)
{
	struct unpkg_para p;
	struct unpkg_err err;
	size_t pos = 0, line = 1;

	ck_assert_int_eq(parse_str("A: 1\n", &p, &err), 0);
	ck_assert_int_eq(unpkg_para_parse("B: 2\n", 5, &p, &err), -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_USAGE);
	/* The caller's paragraph is untouched. */
	ck_assert_uint_eq(p.count, 1);
	ck_assert_str_eq(unpkg_para_get(&p, "A"), "1");
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_para_next("B: 2\n", 5, &pos, &line, &p, &err),
			 -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_USAGE);
	ck_assert_uint_eq(p.count, 1);
	ck_assert_uint_eq(pos, 0);
	unpkg_para_destroy(&p);
}
END_TEST

START_TEST(test_next)
{
	const char *text = "\n"
			   "Package: a\n"
			   "Status: install ok installed\n"
			   "\n"
			   "\n"
			   "Package: b\n"
			   "Description: x\n"
			   " \n"		/* dpkg only warns in its database */
			   " y\n"
			   "\n"
			   "Package: c\n";
	size_t len = strlen(text);
	size_t pos = 0, line = 1;
	struct unpkg_para p;
	struct unpkg_err err;

	unpkg_para_init(&p);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_para_next(text, len, &pos, &line, &p, &err), 1);
	ck_assert_uint_eq(p.count, 2);
	ck_assert_uint_eq(p.line, 2);
	ck_assert_str_eq(p.fields[1].value, "install ok installed");
	ck_assert_uint_eq(line, 5);
	unpkg_para_destroy(&p);

	ck_assert_int_eq(unpkg_para_next(text, len, &pos, &line, &p, &err), 1);
	ck_assert_uint_eq(p.line, 6);
	ck_assert_str_eq(unpkg_para_get(&p, "Package"), "b");
	ck_assert_str_eq(unpkg_para_get(&p, "Description"), "x\n \n y");
	ck_assert_uint_eq(p.fields[1].line, 7);
	unpkg_para_destroy(&p);

	ck_assert_int_eq(unpkg_para_next(text, len, &pos, &line, &p, &err), 1);
	ck_assert_uint_eq(p.line, 11);
	ck_assert_str_eq(unpkg_para_get(&p, "Package"), "c");
	unpkg_para_destroy(&p);
	ck_assert_uint_eq(pos, len);
	ck_assert_uint_eq(line, 12);

	ck_assert_int_eq(unpkg_para_next(text, len, &pos, &line, &p, &err), 0);
	ck_assert_int_eq(unpkg_para_next(text, len, &pos, &line, &p, &err), 0);
	ck_assert_int_eq(err.code, UNPKG_ERR_NONE);
	ck_assert_uint_eq(p.count, 0);

	pos = 0;
	line = 1;
	ck_assert_int_eq(unpkg_para_next("", 0, &pos, &line, &p, &err), 0);
	ck_assert_int_eq(unpkg_para_next("\n\n", 2, &pos, &line, &p, &err), 0);
	ck_assert_uint_eq(pos, 2);
	ck_assert_uint_eq(line, 3);
}
END_TEST

START_TEST(test_next_error_lines)
{
	const char *text = "Package: a\n"
			   "\n"
			   "Package: b\n"
			   "Version: 1\n"
			   "Bad line\n";
	size_t len = strlen(text);
	size_t pos = 0, line = 1, pos2;
	struct unpkg_para p;
	struct unpkg_err err;

	unpkg_para_init(&p);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_para_next(text, len, &pos, &line, &p, &err), 1);
	unpkg_para_destroy(&p);
	pos2 = pos;
	ck_assert_int_eq(unpkg_para_next(text, len, &pos, &line, &p, &err),
			 -1);
	ck_assert_str_eq(err.msg, "line 5: not a field: no ':' in line");
	ck_assert_uint_eq(p.count, 0);
	ck_assert_uint_eq(pos, pos2);
	ck_assert_uint_eq(line, 3);

	/* A missing final newline is an error in the database too (dpkg
	 * refuses such a status file). */
	pos = 0;
	line = 1;
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_para_next("A: 1\nB: 2", 9, &pos, &line, &p,
					 &err), -1);
	ck_assert_str_eq(err.msg, "line 2: missing newline at end of file");
}
END_TEST

START_TEST(test_set_unset)
{
	struct unpkg_para p;
	struct unpkg_err err;

	ck_assert_int_eq(parse_str("package: a\nVersion: 1\nX-A: y\n", &p,
				   &err), 0);
	/* Replace: position, spelling and line number stay. */
	ck_assert_int_eq(unpkg_para_set(&p, "PACKAGE", "bb", &err), 0);
	ck_assert_uint_eq(p.count, 3);
	ck_assert_str_eq(p.fields[0].name, "package");
	ck_assert_str_eq(p.fields[0].value, "bb");
	ck_assert_uint_eq(p.fields[0].line, 1);
	/* The new value may be the old one itself. */
	ck_assert_int_eq(unpkg_para_set(&p, "x-a", p.fields[2].value, &err),
			 0);
	ck_assert_str_eq(unpkg_para_get(&p, "X-A"), "y");
	ck_assert_int_eq(unpkg_para_set(&p, "Conffiles",
					"\n /etc/a 1\n /etc/b 2", &err), 0);
	ck_assert_uint_eq(p.count, 4);
	ck_assert_str_eq(p.fields[3].name, "Conffiles");
	ck_assert_uint_eq(p.fields[3].line, 0);
	ck_assert_int_eq(unpkg_para_set(&p, "Empty", "", &err), 0);
	ck_assert_str_eq(unpkg_para_get(&p, "empty"), "");

	unpkg_para_unset(&p, "VERSION");
	ck_assert_uint_eq(p.count, 4);
	ck_assert_ptr_null(unpkg_para_get(&p, "Version"));
	ck_assert_str_eq(p.fields[1].name, "X-A");
	ck_assert_str_eq(p.fields[2].name, "Conffiles");
	unpkg_para_unset(&p, "Version");
	unpkg_para_unset(&p, "Empty");
	ck_assert_uint_eq(p.count, 3);
	ck_assert_int_eq(err.code, UNPKG_ERR_NONE);
	unpkg_para_destroy(&p);
}
END_TEST

START_TEST(test_set_rejects)
{
	static const char *const names[] = { "", "A B", "A:B", "A\tB", "A\nB" };
	static const char *const values[] = {
		"x\n", "x\nStatus: injected", "x\n\n y", "x\r", "\n",
	};
	struct unpkg_para p;
	struct unpkg_err err;
	size_t i;

	unpkg_para_init(&p);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		unpkg_err_init(&err);
		ck_assert_int_eq(unpkg_para_set(&p, names[i], "v", &err), -1);
		ck_assert_int_eq(err.code, UNPKG_ERR_USAGE);
	}
	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		unpkg_err_init(&err);
		ck_assert_int_eq(unpkg_para_set(&p, "X-A", values[i], &err),
				 -1);
		ck_assert_int_eq(err.code, UNPKG_ERR_USAGE);
		ck_assert_str_eq(err.msg, "value of field 'X-A' would not be "
				 "one field");
	}
	ck_assert_uint_eq(p.count, 0);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_para_set(&p, "X-A", "a\n b\n\tc\n .", &err), 0);
	unpkg_para_destroy(&p);
}
END_TEST

START_TEST(test_copy)
{
	struct unpkg_para a, b;
	struct unpkg_err err;

	ck_assert_int_eq(parse_str("\nA: 1\nB: two\n more\n", &a, &err), 0);
	unpkg_para_init(&b);
	ck_assert_int_eq(unpkg_para_copy(&b, &a, &err), 0);
	ck_assert_uint_eq(b.count, 2);
	ck_assert_uint_eq(b.line, 2);
	ck_assert_uint_eq(b.fields[1].line, 3);
	ck_assert_str_eq(b.fields[1].name, "B");
	ck_assert_str_eq(b.fields[1].value, "two\n more");
	ck_assert_ptr_ne(b.fields[1].value, a.fields[1].value);
	/* Deep: changing one leaves the other alone. */
	ck_assert_int_eq(unpkg_para_set(&a, "B", "x", &err), 0);
	ck_assert_str_eq(unpkg_para_get(&b, "B"), "two\n more");
	unpkg_para_destroy(&a);
	ck_assert_str_eq(unpkg_para_get(&b, "A"), "1");

	/* Into a non-empty paragraph: refused, destination untouched. */
	unpkg_para_init(&a);
	ck_assert_int_eq(unpkg_para_copy(&b, &a, &err), -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_USAGE);
	ck_assert_uint_eq(b.count, 2);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_para_copy(&a, &a, &err), 0);
	ck_assert_uint_eq(a.count, 0);
	unpkg_para_destroy(&b);
}
END_TEST

START_TEST(test_name_eq)
{
	ck_assert(unpkg_field_name_eq("Pre-Depends", "pre-depends"));
	ck_assert(unpkg_field_name_eq("", ""));
	ck_assert(!unpkg_field_name_eq("Depends", "Depend"));
	ck_assert(!unpkg_field_name_eq("Depend", "Depends"));
	ck_assert(!unpkg_field_name_eq("Depends", "Pre-Depends"));
	/* ASCII only: no locale folding of other bytes. */
	ck_assert(!unpkg_field_name_eq("X-\xc3\xa9", "X-\xc3\x89"));
	ck_assert(unpkg_field_name_eq("X-\xc3\xa9", "x-\xc3\xa9"));
	/* '@' and '`' differ from 'A'/'a' only in the case bit. */
	ck_assert(!unpkg_field_name_eq("@", "`"));
}
END_TEST

/* A status file the size of a full system: ~1,500 stanzas, 2 MB. */
START_TEST(test_big_status)
{
	size_t cap = 3u << 20, len = 0, i, n = 0, fields = 0;
	char *buf = malloc(cap);
	size_t pos = 0, line = 1;
	struct unpkg_para p;
	struct unpkg_err err;
	int r;

	ck_assert_ptr_nonnull(buf);
	for (i = 0; i < 1500; i++) {
		size_t k;

		len += (size_t)snprintf(buf + len, cap - len,
			"Package: pkg%zu\nStatus: install ok installed\n"
			"Priority: optional\nSection: libs\n"
			"Installed-Size: %zu\nMaintainer: M <m@example.org>\n"
			"Architecture: amd64\nVersion: 1.%zu-1\n"
			"Depends: libc6 (>= 2.34), pkg%zu\n"
			"Conffiles:\n /etc/pkg%zu/a 0123456789abcdef\n"
			"Description: package number %zu\n", i, i * 7, i,
			i + 1, i, i);
		for (k = 0; k < 20; k++)
			len += (size_t)snprintf(buf + len, cap - len,
				" A fairly long line of description text, "
				"number %zu, to make it all 2 MB.\n", k);
		len += (size_t)snprintf(buf + len, cap - len, "\n");
	}
	ck_assert_uint_gt(len, 2000000);
	unpkg_para_init(&p);
	unpkg_err_init(&err);
	while ((r = unpkg_para_next(buf, len, &pos, &line, &p, &err)) == 1) {
		ck_assert_uint_eq(p.count, 11);
		fields += p.count;
		if (n == 1234) {
			ck_assert_str_eq(unpkg_para_get(&p, "Package"),
					 "pkg1234");
			ck_assert_str_eq(unpkg_para_get(&p, "Conffiles"),
					 "\n /etc/pkg1234/a 0123456789abcdef");
			ck_assert_uint_eq(p.line, 1234 * 33 + 1);
		}
		n++;
		unpkg_para_destroy(&p);
	}
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(n, 1500);
	ck_assert_uint_eq(fields, 1500 * 11);
	ck_assert_uint_eq(line, 1500 * 33 + 1);
	free(buf);
}
END_TEST

static Suite *control_suite(void)
{
	Suite *s = suite_create("control");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_basic);
	tcase_add_test(tc, test_values_like_dpkg);
	tcase_add_test(tc, test_blank_lines_around);
	tcase_add_loop_test(tc, test_parse_errors, 0,
			    (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
	tcase_add_test(tc, test_parse_needs_empty_para);
	tcase_add_test(tc, test_next);
	tcase_add_test(tc, test_next_error_lines);
	tcase_add_test(tc, test_set_unset);
	tcase_add_test(tc, test_set_rejects);
	tcase_add_test(tc, test_copy);
	tcase_add_test(tc, test_name_eq);
	tcase_add_test(tc, test_big_status);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(control_suite());
}
