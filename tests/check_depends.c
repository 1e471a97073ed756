/* check_depends.c - dependency satisfaction: one alternative against the
 * packages of its name and those that Provide it. */
#include "config.h"

#include <check.h>
#include <string.h>

#include "depends.h"
#include "testutil.h"

static struct unpkg_db_pkg real, provider, unusable;

/* Usable: every package but `unusable` (not installed, say). */
static int usable(void *ctx, const struct unpkg_db_pkg *dp)
{
	(void)ctx;
	return dp != &unusable;
}

static struct unpkg_relation_alt alt(enum unpkg_relop op, const char *v)
{
	struct unpkg_relation_alt a;

	memset(&a, 0, sizeof(a));
	a.name = (char *)"x";
	a.op = op;
	a.version = (char *)v;
	return a;
}

START_TEST(test_alt_met)
{
	/* x 2 itself; y provides x (= 3); z provides x unversioned */
	struct unpkg_candidate unver = { &provider, NULL, 1, NULL };
	struct unpkg_candidate prov = { &provider, "3", 1, &unver };
	struct unpkg_candidate self = { &real, "2", 0, &prov };
	struct unpkg_candidate only_unver = { &provider, NULL, 1, NULL };
	struct unpkg_candidate bad = { &unusable, "9", 0, NULL };
	struct unpkg_relation_alt a;

	a = alt(UNPKG_REL_ANY, NULL);
	ck_assert_int_eq(depends_alt_met(&a, &self, usable, NULL), 1);
	ck_assert_int_eq(depends_alt_met(&a, NULL, usable, NULL), 0);
	/* an unversioned Provides meets an unversioned need only */
	ck_assert_int_eq(depends_alt_met(&a, &only_unver, usable, NULL), 1);
	a = alt(UNPKG_REL_GE, "1");
	ck_assert_int_eq(depends_alt_met(&a, &only_unver, usable, NULL), 0);
	/* the real package's version, or a provided one */
	a = alt(UNPKG_REL_GE, "2");
	ck_assert_int_eq(depends_alt_met(&a, &self, usable, NULL), 1);
	a = alt(UNPKG_REL_GE, "3");
	ck_assert_int_eq(depends_alt_met(&a, &self, usable, NULL), 1);
	a = alt(UNPKG_REL_GT, "3");
	ck_assert_int_eq(depends_alt_met(&a, &self, usable, NULL), 0);
	a = alt(UNPKG_REL_EQ, "2");
	ck_assert_int_eq(depends_alt_met(&a, &prov, usable, NULL), 0);
	/* a package that is not usable meets nothing */
	a = alt(UNPKG_REL_ANY, NULL);
	ck_assert_int_eq(depends_alt_met(&a, &bad, usable, NULL), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("depends");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_alt_met);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
