/* check_relation.c - unit tests of relationship fields. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "relation.h"
#include "testutil.h"

#define DPKG "/usr/bin/dpkg"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

struct canon {
	const char *field;
	const char *value;
	const char *want;	/* what dpkg writes to its status file */
};

/* Each expected spelling was read from a status file written by
 * dpkg --unpack (and is checked again by test_format_against_dpkg). */
static const struct canon canon[] = {
	{ "Depends", "libc6(>=2.3),bar|baz ( << 1:2.0-1 ) ,  qux:any",
	  "libc6 (>= 2.3), bar | baz (<< 1:2.0-1), qux:any" },
	{ "Depends", "Quux (<2), q2 (>3), q3 (=1), q4(<=  1.0 )",
	  "quux (<= 2), q2 (>= 3), q3 (= 1), q4 (<= 1.0)" },
	{ "Depends", "q5 ( >> 2~a ), q6 (< 1.0), q7 (>1.0)",
	  "q5 (>> 2~a), q6 (<= 1.0), q7 (>= 1.0)" },
	{ "Suggests", "s1 (>= 0:1.0), s2 (>= 00001:1), s3 (= 1.0-0)",
	  "s1 (>= 1.0), s2 (>= 1:1), s3 (= 1.0-0)" },
	{ "Depends", "ab (1.0), cd(=1), ef (>= +1:2)",
	  "ab (= 1.0), cd (= 1), ef (>= 1:2)" },
	{ "Depends", "AB, Cd:Any, ef:native, gh:amd64, ij:x-, kl:0",
	  "ab, cd:Any, ef:native, gh:amd64, ij:x-, kl:0" },
	{ "Depends", "a, a1, 1a, a_b, ab+, a.., 0, ab.c-d+e",
	  "a, a1, 1a, a_b, ab+, a.., 0, ab.c-d+e" },
	{ "Depends", "ab,\n cd,\n ef (>= 1)", "ab, cd, ef (>= 1)" },
	{ "Depends", "ab\t(>=\t1),\tcd", "ab (>= 1), cd" },
	{ "Depends", "ab(>> 1.0)|cd", "ab (>> 1.0) | cd" },
	{ "Depends", "ab:any(>=1) | cd:any (<< 2)",
	  "ab:any (>= 1) | cd:any (<< 2)" },
	{ "Depends", "ab (>= 1.0-1-2), cd (>= 1:2:3-4)",
	  "ab (>= 1.0-1-2), cd (>= 1:2:3-4)" },
	{ "Pre-Depends", "dpkg (>= 1.15.6~)", "dpkg (>= 1.15.6~)" },
	{ "Recommends", "r1 | r2:native", "r1 | r2:native" },
	{ "Enhances", "c | d", "c | d" },
	{ "Breaks", "b1 (<< 2), b2:any", "b1 (<< 2), b2:any" },
	{ "Conflicts", "c1 (<< 2), c2:native", "c1 (<< 2), c2:native" },
	{ "Replaces", "rp1 (<< 1.1)", "rp1 (<< 1.1)" },
	{ "Provides", "p1 (= 1.0), p2, p3 (=2:1.0-1), p4:any",
	  "p1 (= 1.0), p2, p3 (= 2:1.0-1), p4:any" },
	/* dpkg only warns about inexact Provides versions. */
	{ "Provides", "p (>= 1), q (1.0)", "p (>= 1), q (= 1.0)" },
	{ "Depends", "", "" },
};

START_TEST(test_format_canonical)
{
	size_t i;

	for (i = 0; i < N_ELEMS(canon); i++) {
		const struct canon *c = &canon[i];
		struct unpkg_relations r;
		struct unpkg_err err;
		char *s;

		unpkg_relations_init(&r);
		unpkg_err_init(&err);
		ck_assert_msg(unpkg_relations_parse(&r, c->field, c->value,
						    &err) == 0,
			      "%s: %s: %s", c->field, c->value, err.msg);
		s = unpkg_relations_format(&r);
		ck_assert_ptr_nonnull(s);
		ck_assert_str_eq(s, c->want);
		free(s);
		unpkg_relations_destroy(&r);
		ck_assert_ptr_null(r.rels);
		ck_assert_uint_eq(r.count, 0);
	}
}
END_TEST

START_TEST(test_parse_structure)
{
	struct unpkg_relations r;
	struct unpkg_err err;
	const struct unpkg_relation_alt *a;

	unpkg_relations_init(&r);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_relations_parse(&r, "Depends",
		"libc6 (>= 2.3), Bar:any | baz (<< 0:2.0-1), qux (<1)", &err),
		0);
	ck_assert_uint_eq(r.count, 3);

	ck_assert_uint_eq(r.rels[0].count, 1);
	a = &r.rels[0].alts[0];
	ck_assert_str_eq(a->name, "libc6");
	ck_assert_ptr_null(a->archqual);
	ck_assert_int_eq(a->op, UNPKG_REL_GE);
	ck_assert_str_eq(a->version, "2.3");

	ck_assert_uint_eq(r.rels[1].count, 2);
	a = &r.rels[1].alts[0];
	ck_assert_str_eq(a->name, "bar");
	ck_assert_str_eq(a->archqual, "any");
	ck_assert_int_eq(a->op, UNPKG_REL_ANY);
	ck_assert_ptr_null(a->version);
	a = &r.rels[1].alts[1];
	ck_assert_str_eq(a->name, "baz");
	ck_assert_int_eq(a->op, UNPKG_REL_LT);
	ck_assert_str_eq(a->version, "2.0-1");

	a = &r.rels[2].alts[0];
	ck_assert_str_eq(a->name, "qux");
	ck_assert_int_eq(a->op, UNPKG_REL_LE);
	ck_assert_str_eq(a->version, "1");
	unpkg_relations_destroy(&r);
	unpkg_relations_destroy(&r);

	/* Nothing but blanks: no relations. */
	ck_assert_int_eq(unpkg_relations_parse(&r, "Depends", " \t", &err), 0);
	ck_assert_uint_eq(r.count, 0);
	unpkg_relations_destroy(&r);
	unpkg_relations_destroy(NULL);
}
END_TEST

START_TEST(test_many)
{
	struct unpkg_relations r;
	struct unpkg_err err;
	char *value, *s;
	size_t i, len = 0;

	/* Enough relations and alternatives to make the arrays grow. */
	value = malloc(200 * 40);
	ck_assert_ptr_nonnull(value);
	for (i = 0; i < 200; i++)
		len += (size_t)sprintf(value + len, "%sp%zu (>= %zu) | q%zu",
				       i ? ", " : "", i, i, i);
	unpkg_relations_init(&r);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_relations_parse(&r, "Depends", value, &err), 0);
	ck_assert_uint_eq(r.count, 200);
	ck_assert_str_eq(r.rels[199].alts[1].name, "q199");
	s = unpkg_relations_format(&r);
	ck_assert_str_eq(s, value);
	free(s);
	free(value);
	unpkg_relations_destroy(&r);
}
END_TEST

struct bad {
	const char *field;
	const char *value;
	const char *why;	/* part of the message */
};

/* dpkg-deb --build and dpkg --unpack refuse all of these (checked again
 * by test_rejections_against_dpkg). */
static const struct bad bad[] = {
	{ "Depends", "_ab", "invalid package name '_ab': must start" },
	{ "Depends", "+ab", "invalid package name '+ab'" },
	{ "Depends", "a/b", "'a/b': character '/' not allowed" },
	{ "Depends", "ab)", "'ab)': character ')' not allowed" },
	{ "Depends", "ab[amd64]", "character '[' not allowed" },
	{ "Depends", "ab#", "character '#' not allowed" },
	{ "Depends", "ab\x7f", "character '\\x7f' not allowed" },
	{ "Depends", "ab:foo_bar", "architecture name 'foo_bar'" },
	{ "Depends", "ab:-x", "architecture name '-x'" },
	{ "Depends", "ab:any:any", "architecture name 'any:any'" },
	{ "Depends", "ab:", "missing architecture name" },
	{ "Depends", "ab: any", "missing architecture name" },
	{ "Depends", "ab|cd:", "reference to 'cd': missing architecture" },
	{ "Depends", "ab :any", "after reference to package 'ab': ':any'" },
	{ "Depends", "ab (>= a1)", "'a1': version number does not start" },
	{ "Depends", "ab (>= ~1)", "'~1': version number does not start" },
	{ "Depends", "ab (>= 1_0)", "invalid character in version" },
	{ "Depends", "ab (>= 1.0-1%)", "invalid character in revision" },
	{ "Depends", "ab (>= 1.0-1:2)", "not number" },
	{ "Depends", "ab (>= 1.0-)", "revision number is empty" },
	{ "Depends", "ab (>= 1 0)", "'0)' after version '1' instead of ')'" },
	{ "Depends", "ab (=< 1)", "'1)' after version '<' instead of ')'" },
	{ "Depends", "ab (== 1)", "instead of ')'" },
	{ "Depends", "ab (==1)", "'=1': version number does not start" },
	{ "Depends", "ab (< <1)", "'<1'" },
	{ "Depends", "ab (<<<1)", "'<1'" },
	{ "Depends", "ab ()", "version string is empty" },
	{ "Depends", "ab (>=)", "version string is empty" },
	{ "Depends", "ab (>= 1", "reference to 'ab': version unterminated" },
	{ "Depends", "ab(", "version unterminated" },
	{ "Depends", "ab [amd64]", "reference to package 'ab': '[amd64]'" },
	{ "Depends", "ab <!nocheck>", "'<!nocheck>'" },
	{ "Depends", "ab,,cd", "missing package name, or garbage where "
	  "package name expected: ',cd'" },
	{ "Depends", "ab,", "missing package name at the end" },
	{ "Depends", ",ab", "missing package name" },
	{ "Depends", "ab||cd", "'|cd'" },
	{ "Depends", "ab|", "missing package name" },
	{ "Depends", "ab(>=1)cd", "after reference to package 'ab': 'cd'" },
	{ "Depends", "ab cd", "after reference to package 'ab': 'cd'" },
	{ "Depends", "ab (>= 1))", "')'" },
	{ "Depends", "ab (>=1)(<<2)", "'(<<2)'" },
	/* dpkg does not skip blanks at the start of the value. */
	{ "Depends", "\n ab", "missing package name" },
	{ "Pre-Depends", "ab (>= 1.0-)", "'Pre-Depends' field" },
	{ "Conflicts", "c | d", "alternatives ('|') not allowed: '| d'" },
	{ "Breaks", "c, d | e", "alternatives" },
	{ "Replaces", "c|d", "alternatives" },
	{ "Provides", "p | q", "alternatives" },
	{ "Enhances", "e (>= 1.0-1:2)", "'Enhances' field" },
};

START_TEST(test_parse_bad)
{
	size_t i;

	for (i = 0; i < N_ELEMS(bad); i++) {
		const struct bad *b = &bad[i];
		struct unpkg_relations r;
		struct unpkg_err err;
		char field[64];

		unpkg_relations_init(&r);
		unpkg_err_init(&err);
		ck_assert_msg(unpkg_relations_parse(&r, b->field, b->value,
						    &err) == -1,
			      "%s: '%s' should be rejected", b->field,
			      b->value);
		ck_assert_int_eq(err.code, UNPKG_ERR_FORMAT);
		ck_assert_msg(strstr(err.msg, b->why) != NULL,
			      "%s: '%s': message \"%s\" lacks \"%s\"",
			      b->field, b->value, err.msg, b->why);
		snprintf(field, sizeof(field), "'%s' field", b->field);
		ck_assert_msg(strstr(err.msg, field) != NULL,
			      "message \"%s\" does not name the field",
			      err.msg);
		/* A failed parse leaves nothing behind. */
		ck_assert_ptr_null(r.rels);
		ck_assert_uint_eq(r.count, 0);
		unpkg_relations_destroy(&r);
	}
}
END_TEST

/* Field names are case-insensitive, for the alternatives rule too. */
START_TEST(test_field_case)
{
	struct unpkg_relations r;
	struct unpkg_err err;

	unpkg_relations_init(&r);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_relations_parse(&r, "conflicts", "a | b", &err),
			 -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "'conflicts' field"));
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_relations_parse(&r, "PROVIDES", "a|b", &err),
			 -1);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_relations_parse(&r, "Conflicts-X", "a | b",
					       &err), 0);
	unpkg_relations_destroy(&r);
}
END_TEST

/* dpkg reads its own database leniently; what it writes back is what
 * unpkg must write (taken from a status file dpkg rewrote). */
START_TEST(test_lax)
{
	static const char value[] = "Zed (< 1_0), q (>= ~1), r (>= 0:1)";
	struct unpkg_relations r;
	struct unpkg_err err;
	char *s;

	unpkg_relations_init(&r);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_relations_parse(&r, "Depends", value, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "'1_0'"));
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_relations_parse_lax(&r, "Depends", value, &err),
			 0);
	s = unpkg_relations_format(&r);
	ck_assert_str_eq(s, "zed (<= 1_0), q (>= ~1), r (>= 1)");
	free(s);
	unpkg_relations_destroy(&r);

	/* The hard errors stay errors. */
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_relations_parse_lax(&r, "Depends",
						   "a (>= 1.0-)", &err), -1);
	ck_assert_int_eq(unpkg_relations_parse_lax(&r, "Breaks", "a | b",
						   &err), -1);
	ck_assert_ptr_null(r.rels);
}
END_TEST

struct sat {
	enum unpkg_relop op;
	const char *have;
	const char *want;
	int ok;
};

static const struct sat sats[] = {
	{ UNPKG_REL_ANY, "1.0", NULL, 1 },
	{ UNPKG_REL_ANY, NULL, NULL, 1 },
	{ UNPKG_REL_GE, NULL, "1.0", 0 },
	{ UNPKG_REL_EQ, NULL, "1.0", 0 },
	{ UNPKG_REL_LT, "1.0", "1.0", 0 },
	{ UNPKG_REL_LT, "1.0~", "1.0", 1 },
	{ UNPKG_REL_LT, "1.0", "1.0.1", 1 },
	{ UNPKG_REL_LE, "1.0", "1.0", 1 },
	{ UNPKG_REL_LE, "1.0-0", "1.0", 1 },
	{ UNPKG_REL_LE, "1.0-1", "1.0", 0 },
	{ UNPKG_REL_LE, "0:1.0", "1.0", 1 },
	{ UNPKG_REL_EQ, "1.0", "1.0", 1 },
	{ UNPKG_REL_EQ, "1.0", "0:1.0-0", 1 },
	{ UNPKG_REL_EQ, "1.0", "1.00", 1 },
	{ UNPKG_REL_EQ, "1.0", "1.0+b1", 0 },
	{ UNPKG_REL_GE, "1.0", "1.0", 1 },
	{ UNPKG_REL_GE, "1:0.1", "9.9", 1 },
	{ UNPKG_REL_GE, "1.15.5", "1.15.6~", 0 },
	{ UNPKG_REL_GE, "1.15.6~rc1", "1.15.6~", 1 },
	{ UNPKG_REL_GT, "1.0", "1.0", 0 },
	{ UNPKG_REL_GT, "1.0+b1", "1.0", 1 },
	{ UNPKG_REL_GT, "1.0-1", "1.0-1~", 1 },
	{ UNPKG_REL_GT, "2.30", "2.4", 1 },
};

START_TEST(test_satisfied)
{
	size_t i;

	for (i = 0; i < N_ELEMS(sats); i++) {
		const struct sat *t = &sats[i];

		ck_assert_msg(unpkg_relop_satisfied(t->op, t->have, t->want) ==
			      t->ok, "%s op %d %s should be %d",
			      t->have ? t->have : "(null)", (int)t->op,
			      t->want ? t->want : "(null)", t->ok);
	}
}
END_TEST

/* --- against dpkg -------------------------------------------------------- */

/* Unpack a package whose control file has "field: value" into a fresh
 * root.  Returns dpkg's exit status; on success, *written is what dpkg
 * wrote for the field in its status file ("" if it wrote none). */
static int dpkg_unpack(const char *field, const char *value, char **written)
{
	static const struct tu_entry data[] = { { .type = 'd', .path = "./" } };
	char control[1024], root[4096], deb[4096];
	char path[sizeof(root) + 64], arg[sizeof(root) + 64];
	const char *argv[] = { DPKG, arg, "--log=/dev/null",
			       "--force-not-root", "--force-script-chrootless",
			       "--force-depends", "--force-conflicts",
			       "--force-unsafe-io", "--unpack", deb, NULL };
	struct tu_deb spec = { 0 };
	char *dir = tu_mkdtemp();
	char *status, *line;
	int rc;

	snprintf(control, sizeof(control),
		 "Package: reltest\nVersion: 1.0\nArchitecture: all\n"
		 "Maintainer: t <t@example.invalid>\n%s:%s%s\n"
		 "Description: t\n", field, value[0] == '\n' ? "" : " ",
		 value);
	spec.control = control;
	spec.entries = data;
	spec.n_entries = N_ELEMS(data);
	snprintf(deb, sizeof(deb), "%s/t.deb", dir);
	tu_build_deb(deb, &spec);

	snprintf(root, sizeof(root), "%s/root", dir);
	snprintf(arg, sizeof(arg), "--root=%s", root);
	ck_assert_int_eq(mkdir(root, 0755), 0);
	snprintf(path, sizeof(path), "%s/var", root);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	strcat(path, "/lib");
	ck_assert_int_eq(mkdir(path, 0755), 0);
	strcat(path, "/dpkg");
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/var/lib/dpkg/info", root);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/var/lib/dpkg/updates", root);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/var/lib/dpkg/status", root);
	tu_write_file(path, "", 0644);

	rc = tu_run_quiet(argv);
	ck_assert_int_ge(rc, 0);
	*written = NULL;
	if (rc == 0) {
		status = tu_read_file(path, NULL);
		ck_assert_ptr_nonnull(status);
		snprintf(arg, sizeof(arg), "\n%s: ", field);
		line = strstr(status, arg);
		if (line != NULL) {
			line += strlen(arg);
			line[strcspn(line, "\n")] = '\0';
			*written = strdup(line);
		} else {
			*written = strdup("");
		}
		ck_assert_ptr_nonnull(*written);
		free(status);
	}
	tu_rm_rf(dir);
	free(dir);
	return rc;
}

START_TEST(test_format_against_dpkg)
{
	size_t i;

	if (access(DPKG, X_OK) != 0) {
		tu_skip_part("relations formatted as dpkg formats them",
			     DPKG " not found");
		return;
	}
	for (i = 0; i < N_ELEMS(canon); i++) {
		const struct canon *c = &canon[i];
		struct unpkg_relations r;
		struct unpkg_err err;
		char *theirs, *mine;

		ck_assert_msg(dpkg_unpack(c->field, c->value, &theirs) == 0,
			      "dpkg refuses %s: %s", c->field, c->value);
		unpkg_relations_init(&r);
		unpkg_err_init(&err);
		ck_assert_int_eq(unpkg_relations_parse(&r, c->field, c->value,
						       &err), 0);
		mine = unpkg_relations_format(&r);
		ck_assert_msg(strcmp(mine, theirs) == 0,
			      "%s: '%s': unpkg writes '%s', dpkg '%s'",
			      c->field, c->value, mine, theirs);
		free(mine);
		free(theirs);
		unpkg_relations_destroy(&r);
	}
}
END_TEST

START_TEST(test_rejections_against_dpkg)
{
	size_t i;

	if (access(DPKG, X_OK) != 0) {
		tu_skip_part("relations dpkg rejects", DPKG " not found");
		return;
	}
	for (i = 0; i < N_ELEMS(bad); i++) {
		char *theirs = NULL;

		ck_assert_msg(dpkg_unpack(bad[i].field, bad[i].value,
					  &theirs) != 0,
			      "dpkg accepts %s: '%s' as '%s'", bad[i].field,
			      bad[i].value, theirs);
	}
}
END_TEST

static Suite *relation_suite(void)
{
	Suite *s = suite_create("relation");
	TCase *tc = tcase_create("core");
	TCase *oracle = tcase_create("dpkg");

	tcase_add_test(tc, test_format_canonical);
	tcase_add_test(tc, test_parse_structure);
	tcase_add_test(tc, test_many);
	tcase_add_test(tc, test_parse_bad);
	tcase_add_test(tc, test_field_case);
	tcase_add_test(tc, test_lax);
	tcase_add_test(tc, test_satisfied);
	suite_add_tcase(s, tc);

	tcase_set_timeout(oracle, 120);
	tcase_add_test(oracle, test_format_against_dpkg);
	tcase_add_test(oracle, test_rejections_against_dpkg);
	suite_add_tcase(s, oracle);
	return s;
}

int main(void)
{
	return tu_run_suite(relation_suite());
}
