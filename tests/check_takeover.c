/* check_takeover.c - the Replaces verdict on files two packages ship. */
#include "config.h"

#include <check.h>

#include "takeover.h"
#include "testutil.h"

static struct unpkg_relations rels(const char *value)
{
	struct unpkg_relations r;
	struct unpkg_err err;

	unpkg_relations_init(&r);
	unpkg_err_init(&err);
	ck_assert_msg(unpkg_relations_parse(&r, "Replaces", value, &err) == 0,
		      "%s", err.msg);
	return r;
}

START_TEST(test_verdict)
{
	struct unpkg_relations ours = rels("old (<< 2), other");
	struct unpkg_relations theirs = rels("new (<< 5)");
	struct unpkg_relations none = rels("unrelated");

	/* the package Replaces the owner at the owner's version */
	ck_assert_int_eq(takeover_verdict(&ours, "old", "1", NULL, "new", "3",
					  0), TAKE_REPLACE);
	/* not at this version: refused */
	ck_assert_int_eq(takeover_verdict(&ours, "old", "2", NULL, "new", "3",
					  0), TAKE_REFUSE);
	/* unversioned: any version, even none known */
	ck_assert_int_eq(takeover_verdict(&ours, "other", NULL, NULL, "new",
					  "3", 0), TAKE_REPLACE);
	/* a versioned Replaces needs the owner's version */
	ck_assert_int_eq(takeover_verdict(&ours, "old", NULL, NULL, "new", "3",
					  0), TAKE_REFUSE);
	/* the owner Replaces the package at its new version: it keeps
	 * them */
	ck_assert_int_eq(takeover_verdict(&none, "old", "1", &theirs, "new",
					  "3", 0), TAKE_KEEP);
	ck_assert_int_eq(takeover_verdict(NULL, "old", "1", &theirs, "new",
					  "5", 0), TAKE_REFUSE);
	/* both: the package's Replaces wins */
	ck_assert_int_eq(takeover_verdict(&ours, "old", "1", &theirs, "new",
					  "3", 0), TAKE_REPLACE);
	/* removed in favour of the package: taken, whatever the fields */
	ck_assert_int_eq(takeover_verdict(NULL, "old", "1", &theirs, "new",
					  "3", 1), TAKE_REMOVED);
	ck_assert_int_eq(takeover_verdict(NULL, NULL, NULL, NULL, NULL, NULL,
					  1), TAKE_REMOVED);
	ck_assert_int_eq(takeover_verdict(NULL, NULL, NULL, NULL, NULL, NULL,
					  0), TAKE_REFUSE);
	unpkg_relations_destroy(&ours);
	unpkg_relations_destroy(&theirs);
	unpkg_relations_destroy(&none);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("takeover");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_verdict);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
