/* check_configure.c - the pure decisions of the configure phase: what
 * becomes of a conffile (dpkg's rules) and the order of configuration. */
#include "config.h"

#include <check.h>
#include <string.h>

#include "configure.h"
#include "force.h"
#include "testutil.h"

#define A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"	/* hashes */
#define B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define C "cccccccccccccccccccccccccccccccc"

START_TEST(test_conffile_action)
{
	static const struct {
		const char *have, *recorded, *shipped;
		unsigned int force;
		enum conffile_action want;
	} cases[] = {
		/* missing on disk: removed by the administrator, unless the
		 * package never had it (or --force-confmiss) */
		{ NULL, A, A, 0, CONF_MISSING },
		{ NULL, A, B, UNPKG_FORCE_CONFMISS, CONF_INSTALL },
		{ NULL, "", A, 0, CONF_INSTALL },
		{ NULL, "newconffile", A, 0, CONF_INSTALL },
		/* unchanged locally, or already the new version */
		{ A, A, B, 0, CONF_INSTALL },
		{ B, A, B, 0, CONF_INSTALL },
		/* new to the package, a different file already there */
		{ A, "newconffile", B, 0, CONF_KEEP_DIST },
		{ A, "", B, 0, CONF_KEEP_DIST },
		{ A, "newconffile", A, 0, CONF_INSTALL },
		/* changed locally, the distributor changed nothing */
		{ C, A, A, 0, CONF_DROP },
		{ C, A, A, UNPKG_FORCE_CONFNEW, CONF_DROP },
		/* both changed: ask, or what --force-conf* says */
		{ C, A, B, 0, CONF_ASK },
		{ C, A, B, UNPKG_FORCE_CONFNEW, CONF_NEW_OLD },
		{ C, A, B, UNPKG_FORCE_CONFOLD, CONF_KEEP_DIST },
		{ C, A, B, UNPKG_FORCE_CONFNEW | UNPKG_FORCE_CONFOLD,
		  CONF_KEEP_DIST },
		{ C, A, B, UNPKG_FORCE_CONFDEF, CONF_KEEP_DIST },
		{ C, A, B, UNPKG_FORCE_CONFNEW | UNPKG_FORCE_CONFDEF,
		  CONF_NEW_OLD },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(conffile_action(cases[i].have, cases[i].recorded,
					      cases[i].shipped,
					      cases[i].force) == cases[i].want,
			      "case %zu: got %d, want %d", i,
			      (int)conffile_action(cases[i].have,
						   cases[i].recorded,
						   cases[i].shipped,
						   cases[i].force),
			      (int)cases[i].want);
}
END_TEST

/* A fake run: dep[i] is the package i waits for (-1: none); fail[i] a
 * package whose configuration fails (it is no longer pending either). */
struct fake {
	size_t n;
	int pending[8];
	int dep[8];
	int fail[8];
	int error_at;		/* step that errs, or -1 */
	size_t order[8], norder;
};

static int f_pending(void *ctx, size_t i)
{
	return ((struct fake *)ctx)->pending[i];
}

static int f_ready(void *ctx, size_t i, int level)
{
	struct fake *f = ctx;

	if (f->error_at == (int)i)
		return -1;
	return level > 0 || f->dep[i] < 0 || !f->pending[f->dep[i]];
}

static int f_configure(void *ctx, size_t i, int level)
{
	struct fake *f = ctx;

	(void)level;
	f->order[f->norder++] = i;
	f->pending[i] = 0;
	return 0;
}

static const struct configure_steps steps = { f_pending, f_ready,
					      f_configure, NULL };

/* breaking a cycle: package 1 instead of the one at its turn */
static size_t f_pick(void *ctx, size_t i)
{
	(void)ctx;
	(void)i;
	return 1;
}

static void run_fake(struct fake *f, const size_t *want, size_t nwant)
{
	size_t i;

	ck_assert_int_eq(configure_order(f->n, &steps, f), 0);
	ck_assert_uint_eq(f->norder, nwant);
	for (i = 0; i < nwant; i++)
		ck_assert_uint_eq(f->order[i], want[i]);
}

START_TEST(test_order_dependencies_first)
{
	/* 0 depends on 1, 1 on 2: configured 2, 1, 0; 3 not pending */
	struct fake f = { .n = 4, .pending = { 1, 1, 1, 0 },
			  .dep = { 1, 2, -1, -1 }, .error_at = -1 };
	static const size_t want[] = { 2, 1, 0 };

	run_fake(&f, want, 3);
}
END_TEST

START_TEST(test_order_cycle)
{
	/* 0 and 1 wait for each other, 2 is ready: 2 first, then the cycle
	 * in the order given */
	struct fake f = { .n = 3, .pending = { 1, 1, 1 },
			  .dep = { 1, 0, -1 }, .error_at = -1 };
	static const size_t want[] = { 2, 0, 1 };

	run_fake(&f, want, 3);
}
END_TEST

START_TEST(test_order_failure_goes_on)
{
	/* a failed configuration still frees its dependants' turn (they
	 * find their dependency not configured and fail there) */
	struct fake f = { .n = 3, .pending = { 1, 1, 1 },
			  .dep = { 2, -1, -1 }, .fail = { 0, 1, 0 },
			  .error_at = -1 };
	static const size_t want[] = { 1, 2, 0 };

	run_fake(&f, want, 3);
}
END_TEST

START_TEST(test_order_dpkg_queue)
{
	/* dpkg's queue on "a c e f d b", a depending on b, c and d on each
	 * other, e and f failing (not pending once configured): b, a, then
	 * the cycle broken at c, the first of it in the queue */
	struct fake f = { .n = 6, .pending = { 1, 1, 1, 1, 1, 1 },
			  .dep = { 5, 4, -1, -1, 1, -1 }, .error_at = -1 };
	static const size_t want[] = { 2, 3, 5, 0, 1, 4 };

	run_fake(&f, want, 6);
}
END_TEST

START_TEST(test_order_cycle_pick)
{
	/* 0 -> 1 -> 2 -> 0: the cycle broken at 1 (picked), 0 back to the
	 * end of the queue: 1, then 2 waits for 0, 0, 2 */
	static const struct configure_steps picking = { f_pending, f_ready,
							f_configure, f_pick };
	struct fake f = { .n = 3, .pending = { 1, 1, 1 },
			  .dep = { 1, 2, 0 }, .error_at = -1 };
	static const size_t want[] = { 1, 0, 2 };
	size_t i;

	ck_assert_int_eq(configure_order(f.n, &picking, &f), 0);
	ck_assert_uint_eq(f.norder, 3);
	for (i = 0; i < 3; i++)
		ck_assert_uint_eq(f.order[i], want[i]);
}
END_TEST

START_TEST(test_order_error)
{
	struct fake f = { .n = 2, .pending = { 1, 1 }, .dep = { -1, -1 },
			  .error_at = 1 };

	ck_assert_int_eq(configure_order(f.n, &steps, &f), -1);
	ck_assert_uint_eq(f.norder, 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("configure");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_conffile_action);
	tcase_add_test(tc, test_order_dependencies_first);
	tcase_add_test(tc, test_order_cycle);
	tcase_add_test(tc, test_order_failure_goes_on);
	tcase_add_test(tc, test_order_dpkg_queue);
	tcase_add_test(tc, test_order_cycle_pick);
	tcase_add_test(tc, test_order_error);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
