/* check_pathfilter.c - dpkg's --path-exclude / --path-include rules. */
#include "config.h"

#include <check.h>
#include <stddef.h>

#include "pathfilter.h"
#include "testutil.h"

/* Debian's slim container images (/etc/dpkg/dpkg.cfg.d/docker), plus
 * groff, which older ones exclude too. */
static const struct {
	const char *pattern;
	int include;
} slim[] = {
	{ "/usr/share/doc/*", 0 },
	{ "/usr/share/doc/kde/HTML/*/*", 0 },
	{ "/usr/share/gnome/help/*/*", 0 },
	{ "/usr/share/groff/*", 0 },
	{ "/usr/share/info/*", 0 },
	{ "/usr/share/linda/*", 0 },
	{ "/usr/share/lintian/overrides/*", 0 },
	{ "/usr/share/locale/*", 0 },
	{ "/usr/share/man/*", 0 },
	{ "/usr/share/omf/*/*-*.emf", 0 },
	{ "/usr/share/doc/*/copyright", 1 },
	{ "/usr/share/doc/kde/HTML/C/*", 1 },
	{ "/usr/share/gnome/help/*/C/*", 1 },
	{ "/usr/share/locale/all_languages", 1 },
	{ "/usr/share/locale/currency/*", 1 },
	{ "/usr/share/locale/l10n/*", 1 },
	{ "/usr/share/locale/languages", 1 },
	{ "/usr/share/locale/locale.alias", 1 },
	{ "/usr/share/omf/*/*-C.emf", 1 },
};

static void add_slim(struct unpkg_pathfilter *f)
{
	struct unpkg_err err;
	size_t i;

	unpkg_err_init(&err);
	for (i = 0; i < sizeof(slim) / sizeof(slim[0]); i++)
		ck_assert_int_eq(unpkg_pathfilter_add(f, slim[i].pattern,
						      slim[i].include, &err),
				 0);
}

START_TEST(test_no_rules)
{
	struct unpkg_pathfilter f;

	unpkg_pathfilter_init(&f);
	ck_assert_int_eq(unpkg_pathfilter_skip(&f, "/usr/share/doc/x", 0), 0);
	ck_assert_int_eq(unpkg_pathfilter_skip(NULL, "/usr/share/doc/x", 0), 0);
	unpkg_pathfilter_destroy(&f);
}
END_TEST

START_TEST(test_slim_files)
{
	struct unpkg_pathfilter f;

	unpkg_pathfilter_init(&f);
	add_slim(&f);
	ck_assert_int_eq(unpkg_pathfilter_skip(&f, "/usr/bin/foo", 0), 0);
	ck_assert_int_eq(unpkg_pathfilter_skip(&f, "/usr/share/doc/foo/changelog.gz", 0), 1);
	/* '*' crosses '/' (fnmatch without FNM_PATHNAME) */
	ck_assert_int_eq(unpkg_pathfilter_skip(&f, "/usr/share/doc/foo/examples/a/b", 0), 1);
	ck_assert_int_eq(unpkg_pathfilter_skip(&f, "/usr/share/doc/foo/copyright", 0), 0);
	ck_assert_int_eq(unpkg_pathfilter_skip(&f, "/usr/share/man/man1/foo.1.gz", 0), 1);
	ck_assert_int_eq(unpkg_pathfilter_skip(&f, "/usr/share/locale/de/LC_MESSAGES/foo.mo", 0), 1);
	ck_assert_int_eq(unpkg_pathfilter_skip(&f, "/usr/share/locale/locale.alias", 0), 0);
	/* the directories themselves are not matched by "DIR/ *" */
	ck_assert_int_eq(unpkg_pathfilter_skip(&f, "/usr/share/doc", 1), 0);
	ck_assert_int_eq(unpkg_pathfilter_skip(&f, "/usr/share/man", 1), 0);
	ck_assert_int_eq(unpkg_pathfilter_skip(&f, "", 1), 0);
	unpkg_pathfilter_destroy(&f);
}
END_TEST

/* Excluded directories and symlinks come back under an include's fixed
 * start, byte for byte as in dpkg; files do not. */
START_TEST(test_parents_kept)
{
	struct unpkg_pathfilter f;
	struct unpkg_err err;

	unpkg_err_init(&err);
	unpkg_pathfilter_init(&f);
	add_slim(&f);
	ck_assert_int_eq(unpkg_pathfilter_skip(&f, "/usr/share/doc/foo", 1), 0);
	ck_assert_int_eq(unpkg_pathfilter_skip(&f, "/usr/share/doc/foo/examples", 1), 0);
	ck_assert_int_eq(unpkg_pathfilter_skip(&f, "/usr/share/doc/foo", 0), 1);
	/* "/usr/share/locale/locale.alias" has no wildcard: its whole
	 * text is the prefix */
	ck_assert_int_eq(unpkg_pathfilter_skip(&f, "/usr/share/locale/de", 1), 1);
	ck_assert_int_eq(unpkg_pathfilter_skip(&f, "/usr/share/locale/currency", 1), 0);
	ck_assert_int_eq(unpkg_pathfilter_skip(&f, "/usr/share/locale/currency", 0), 1);
	ck_assert_int_eq(unpkg_pathfilter_skip(&f, "/usr/share/locale/currency/x", 0), 0);
	ck_assert_int_eq(unpkg_pathfilter_skip(&f, "/usr/share/man/man1", 1), 1);
	ck_assert_int_eq(unpkg_pathfilter_skip(&f, "/usr/share/gnome/help/foo", 1), 0);
	unpkg_pathfilter_destroy(&f);

	unpkg_pathfilter_init(&f);
	ck_assert_int_eq(unpkg_pathfilter_add(&f, "/opt/*", 0, &err), 0);
	ck_assert_int_eq(unpkg_pathfilter_add(&f, "/opt/keep//", 1, &err), 0);
	/* trailing slashes dropped; no boundary at the end of the prefix */
	ck_assert_int_eq(unpkg_pathfilter_skip(&f, "/opt/keep", 1), 0);
	ck_assert_int_eq(unpkg_pathfilter_skip(&f, "/opt/keeper", 1), 0);
	ck_assert_int_eq(unpkg_pathfilter_skip(&f, "/opt/other", 1), 1);
	/* a path shorter than the prefix is not kept by it */
	ck_assert_int_eq(unpkg_pathfilter_skip(&f, "/opt/kee", 1), 1);
	unpkg_pathfilter_destroy(&f);
}
END_TEST

/* The last matching rule wins, whatever its kind. */
START_TEST(test_last_match_wins)
{
	struct unpkg_pathfilter f;
	struct unpkg_err err;

	unpkg_err_init(&err);
	unpkg_pathfilter_init(&f);
	ck_assert_int_eq(unpkg_pathfilter_add(&f, "/etc/*.conf", 1, &err), 0);
	ck_assert_int_eq(unpkg_pathfilter_add(&f, "/etc/*", 0, &err), 0);
	ck_assert_int_eq(unpkg_pathfilter_skip(&f, "/etc/a.conf", 0), 1);
	ck_assert_int_eq(unpkg_pathfilter_add(&f, "/etc/a.[c]onf", 1, &err), 0);
	ck_assert_int_eq(unpkg_pathfilter_skip(&f, "/etc/a.conf", 0), 0);
	ck_assert_int_eq(unpkg_pathfilter_skip(&f, "/etc/b.conf", 0), 1);
	/* a rule that matches nothing changes nothing */
	ck_assert_int_eq(unpkg_pathfilter_add(&f, "/usr/?", 1, &err), 0);
	ck_assert_int_eq(unpkg_pathfilter_skip(&f, "/etc/b.conf", 0), 1);
	unpkg_pathfilter_destroy(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pathfilter");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_no_rules);
	tcase_add_test(tc, test_slim_files);
	tcase_add_test(tc, test_parents_kept);
	tcase_add_test(tc, test_last_match_wins);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
