/* check_strmap.c - the string hash map. */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "strmap.h"
#include "testutil.h"

START_TEST(test_put_get)
{
	struct unpkg_strmap m;
	struct unpkg_err err;
	void *old = NULL;
	int a = 1, b = 2;

	unpkg_err_init(&err);
	unpkg_strmap_init(&m);
	ck_assert_ptr_null(unpkg_strmap_get(&m, "x"));
	ck_assert_int_eq(unpkg_strmap_put(&m, "x", &a, NULL, &err), 0);
	ck_assert_ptr_eq(unpkg_strmap_get(&m, "x"), &a);
	/* an existing key keeps its value and reports it */
	ck_assert_int_eq(unpkg_strmap_put(&m, "x", &b, &old, &err), 1);
	ck_assert_ptr_eq(old, &a);
	ck_assert_ptr_eq(unpkg_strmap_get(&m, "x"), &a);
	ck_assert_ptr_null(unpkg_strmap_get(&m, "y"));
	ck_assert_ptr_null(unpkg_strmap_get(&m, ""));
	ck_assert_uint_eq(m.count, 1);
	unpkg_strmap_destroy(&m);
	ck_assert_ptr_null(unpkg_strmap_get(&m, "x"));
}
END_TEST

/* Many keys through several resizes, every one found, no false hits. */
START_TEST(test_many)
{
	enum { N = 50000 };
	struct unpkg_strmap m;
	struct unpkg_err err;
	char (*keys)[32] = malloc(N * sizeof(*keys));
	char probe[32];
	size_t i;

	ck_assert_ptr_nonnull(keys);
	unpkg_err_init(&err);
	unpkg_strmap_init(&m);
	for (i = 0; i < N; i++) {
		snprintf(keys[i], sizeof(keys[i]), "/usr/share/doc/p%zu", i);
		ck_assert_int_eq(unpkg_strmap_put(&m, keys[i],
						  (void *)(uintptr_t)(i + 1),
						  NULL, &err), 0);
	}
	ck_assert_uint_eq(m.count, N);
	ck_assert_uint_le(m.count * 2, m.cap);
	for (i = 0; i < N; i++) {
		snprintf(probe, sizeof(probe), "/usr/share/doc/p%zu", i);
		ck_assert_uint_eq((uintptr_t)unpkg_strmap_get(&m, probe), i + 1);
		snprintf(probe, sizeof(probe), "/usr/share/doc/q%zu", i);
		ck_assert_ptr_null(unpkg_strmap_get(&m, probe));
	}
	unpkg_strmap_destroy(&m);
	free(keys);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("strmap");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_put_get);
	tcase_add_test(tc, test_many);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
