/* check_buf.c - the growing string and growing arrays, and the run's
 * statistics helpers. */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "stats.h"
#include "testutil.h"

START_TEST(test_buf_add)
{
	struct unpkg_buf b = { 0 };
	struct unpkg_err err;
	size_t i;

	unpkg_err_init(&err);
	ck_assert_ptr_null(b.s);
	ck_assert_int_eq(unpkg_buf_adds(&b, "ab"), 0);
	ck_assert_int_eq(unpkg_buf_add(&b, "cdef", 2), 0);
	ck_assert_str_eq(b.s, "abcd");
	ck_assert_uint_eq(b.len, 4);
	ck_assert_int_eq(unpkg_buf_printf(&b, &err, " %s=%d\n", "x", 42), 0);
	ck_assert_str_eq(b.s, "abcd x=42\n");
	ck_assert_uint_eq(b.len, 10);
	/* through many reallocations, every byte kept */
	for (i = 0; i < 10000; i++)
		ck_assert_int_eq(unpkg_buf_printf(&b, &err, "%zu,", i % 10), 0);
	ck_assert_uint_eq(b.len, 10 + 20000);
	ck_assert_uint_eq(strlen(b.s), b.len);
	ck_assert_int_eq(memcmp(b.s + 10, "0,1,2,", 6), 0);
	ck_assert_int_eq(b.oom, 0);
	unpkg_buf_free(&b);
	ck_assert_ptr_null(b.s);
	ck_assert_uint_eq(b.len, 0);
}
END_TEST

/* Out of memory is remembered: later appends fail, the contents stay. */
START_TEST(test_buf_oom)
{
	struct unpkg_buf b = { 0 };
	struct unpkg_err err;

	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_buf_adds(&b, "keep"), 0);
	ck_assert_int_eq(unpkg_buf_add(&b, "x", SIZE_MAX - 2), -1);
	ck_assert_int_eq(b.oom, 1);
	ck_assert_int_eq(unpkg_buf_adds(&b, "more"), -1);
	ck_assert_int_eq(unpkg_buf_printf(&b, &err, "%s", "more"), -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_NOMEM);
	ck_assert_str_eq(b.s, "keep");
	unpkg_buf_free(&b);
	ck_assert_int_eq(b.oom, 0);
}
END_TEST

START_TEST(test_grow)
{
	int *v = NULL, *g;
	size_t cap = 0, i;

	g = unpkg_grow(v, &cap, 1, sizeof(*v), 4);
	ck_assert_ptr_nonnull(g);
	ck_assert_uint_eq(cap, 4);
	v = g;
	/* enough room already: the same array, the same capacity */
	ck_assert_ptr_eq(unpkg_grow(v, &cap, 4, sizeof(*v), 4), v);
	ck_assert_uint_eq(cap, 4);
	for (i = 0; i < 4; i++)
		v[i] = (int)i;
	v = unpkg_grow(v, &cap, 9, sizeof(*v), 4);
	ck_assert_ptr_nonnull(v);
	ck_assert_uint_eq(cap, 16);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(v[i], (int)i);
	/* too big: NULL, the array and its capacity untouched */
	ck_assert_ptr_null(unpkg_grow(v, &cap, SIZE_MAX / 2, sizeof(*v), 4));
	ck_assert_uint_eq(cap, 16);
	ck_assert_int_eq(v[3], 3);
	free(v);
}
END_TEST

START_TEST(test_stats_fsclass)
{
	struct unpkg_stats st = { 0 };

	unpkg_stats_add_fsclass(&st, "ext4");
	unpkg_stats_add_fsclass(&st, "ext2");
	unpkg_stats_add_fsclass(&st, "ext4");
	unpkg_stats_add_fsclass(&st, "ext");
	ck_assert_str_eq(st.fsclass, "ext4+ext2+ext");
	/* a name that does not fit is left out */
	unpkg_stats_add_fsclass(&st, "0123456789012345678901234567890123456");
	ck_assert_str_eq(st.fsclass, "ext4+ext2+ext");
	ck_assert_str_eq(unpkg_phase_name(UNPKG_PHASE_RECORD), "record");
	unpkg_stats_timed(&st, UNPKG_PHASE_PLAN, unpkg_now());
	ck_assert(st.phase_seconds[UNPKG_PHASE_PLAN] >= 0.0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("buf");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_buf_add);
	tcase_add_test(tc, test_buf_oom);
	tcase_add_test(tc, test_grow);
	tcase_add_test(tc, test_stats_fsclass);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
