/* check_pkgindex.c - the candidate and Conflicts indexes of the database. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pkgindex.h"
#include "testutil.h"

static const char status[] =
	"Package: a\nStatus: install ok installed\nVersion: 2\n"
	"Architecture: all\nProvides: v (= 1), w\nConflicts: x\n\n"
	"Package: b\nStatus: install ok installed\nVersion: 1\n"
	"Architecture: all\nConflicts: c, v, x (<< 3)\n\n"
	"Package: c\nStatus: deinstall ok config-files\nVersion: 1\n"
	"Architecture: all\nConflicts: x\n\n";

struct fixture {
	char *tmp;
	struct unpkg_db *db;
	struct unpkg_pkgindex ix;
	struct unpkg_err err;
};

static void fx_init(struct fixture *fx)
{
	char path[4096];

	fx->tmp = tu_mkdtemp();
	snprintf(path, sizeof(path), "%s/info", fx->tmp);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/updates", fx->tmp);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/status", fx->tmp);
	tu_write_file(path, status, 0644);
	unpkg_err_init(&fx->err);
	ck_assert_msg(unpkg_db_open(fx->tmp, 0, &fx->db, &fx->err) == 0, "%s",
		      fx->err.msg);
	unpkg_pkgindex_init(&fx->ix, fx->db);
}

static void fx_destroy(struct fixture *fx)
{
	unpkg_pkgindex_destroy(&fx->ix);
	unpkg_db_free(fx->db);
	tu_rm_rf(fx->tmp);
	free(fx->tmp);
}

START_TEST(test_candidates)
{
	struct fixture fx;
	const struct unpkg_candidate *c;

	fx_init(&fx);
	ck_assert_int_eq(unpkg_pkgindex_build(&fx.ix, &fx.err), 0);
	/* the package itself, with its version */
	c = unpkg_pkgindex_candidates(&fx.ix, "a");
	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(c->pkg->name, "a");
	ck_assert_str_eq(c->version, "2");
	ck_assert_int_eq(c->provided, 0);
	ck_assert_ptr_null(c->next);
	/* a versioned Provides answers with the provided version */
	c = unpkg_pkgindex_candidates(&fx.ix, "v");
	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(c->pkg->name, "a");
	ck_assert_str_eq(c->version, "1");
	ck_assert_int_eq(c->provided, 1);
	/* an unversioned one with none */
	c = unpkg_pkgindex_candidates(&fx.ix, "w");
	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_null(c->version);
	ck_assert_ptr_null(unpkg_pkgindex_candidates(&fx.ix, "nothing"));
	/* a package whose configuration files are left still answers */
	ck_assert_ptr_nonnull(unpkg_pkgindex_candidates(&fx.ix, "c"));
	fx_destroy(&fx);
}
END_TEST

START_TEST(test_conflicts)
{
	struct fixture fx;
	struct unpkg_conflict_hit *hits;
	struct unpkg_relations prov;
	size_t n;

	fx_init(&fx);
	/* x: a's and b's, in the order of the database; c's is not there
	 * (only its configuration files are) */
	ck_assert_int_eq(unpkg_pkgindex_conflicts(&fx.ix, "x", NULL, &hits,
						  &n, &fx.err), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(hits[0].pkg->name, "a");
	ck_assert_str_eq(hits[1].pkg->name, "b");
	ck_assert_int_eq(hits[1].alt->op, UNPKG_REL_LT);
	free(hits);
	/* a name and what it provides: b's "c" and "v" found through both
	 * names, each once, in the order of b's field */
	unpkg_relations_init(&prov);
	ck_assert_int_eq(unpkg_relations_parse(&prov, "Provides", "v, c, v",
					       &fx.err), 0);
	ck_assert_int_eq(unpkg_pkgindex_conflicts(&fx.ix, "y", &prov, &hits,
						  &n, &fx.err), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(hits[0].pkg->name, "b");
	ck_assert_str_eq(hits[0].alt->name, "c");
	ck_assert_str_eq(hits[1].alt->name, "v");
	ck_assert_uint_lt(hits[0].rel, hits[1].rel);
	free(hits);
	unpkg_relations_destroy(&prov);
	/* a change of the database: rebuilt on the next use */
	unpkg_pkgindex_invalidate(&fx.ix);
	ck_assert_int_eq(fx.ix.valid, 0);
	ck_assert_int_eq(unpkg_pkgindex_conflicts(&fx.ix, "x", NULL, &hits,
						  &n, &fx.err), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(fx.ix.valid, 1);
	free(hits);
	fx_destroy(&fx);
}
END_TEST

START_TEST(test_find_key)
{
	struct fixture fx;

	fx_init(&fx);
	ck_assert_str_eq(unpkg_pkgindex_find_key(fx.db, "b")->name, "b");
	ck_assert_ptr_null(unpkg_pkgindex_find_key(fx.db, "z"));
	ck_assert_int_eq(unpkg_pkg_present(unpkg_pkgindex_find_key(fx.db, "a")),
			 1);
	ck_assert_int_eq(unpkg_pkg_present(unpkg_pkgindex_find_key(fx.db, "c")),
			 0);
	fx_destroy(&fx);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pkgindex");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_candidates);
	tcase_add_test(tc, test_conflicts);
	tcase_add_test(tc, test_find_key);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
