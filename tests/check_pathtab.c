/* check_pathtab.c - paths and the packages that list them. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "pathtab.h"
#include "testutil.h"

static uint32_t owner(struct unpkg_pathtab *t, const char *key)
{
	struct unpkg_err err;
	uint32_t o;

	unpkg_err_init(&err);
	o = unpkg_pathtab_owner(t, key, &err);
	ck_assert_uint_ne(o, 0);
	return o;
}

/* Drop the owners named `keys` (NULL-terminated). */
static void drop(struct unpkg_pathtab *t, const char *const *keys)
{
	struct unpkg_strmap m;
	struct unpkg_err err;

	unpkg_err_init(&err);
	unpkg_strmap_init(&m);
	for (; *keys != NULL; keys++)
		ck_assert_int_ge(unpkg_strmap_put(&m, *keys, (void *)*keys, NULL,
						  &err), 0);
	unpkg_pathtab_drop(t, &m);
	unpkg_strmap_destroy(&m);
}

static void add(struct unpkg_pathtab *t, const char *path, uint32_t o)
{
	struct unpkg_err err;

	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_pathtab_add(t, path, strlen(path), o, &err), 0);
}

/* One owner, several, the one left out; a path given with its length. */
START_TEST(t_owners)
{
	struct unpkg_pathtab t;
	struct unpkg_err err;
	uint32_t a, b, c;
	const char *o;

	memset(&t, 0, sizeof(t));
	unpkg_err_init(&err);
	ck_assert_ptr_null(unpkg_pathtab_find(&t, "/usr", NULL));
	a = owner(&t, "a");
	b = owner(&t, "b:amd64");
	c = owner(&t, "c");
	add(&t, "/usr", a);
	add(&t, "/usr", b);
	add(&t, "/usr", c);
	add(&t, "/usr", c);
	add(&t, "/usr/a", a);
	ck_assert_int_eq(unpkg_pathtab_add(&t, "/usr/bin/", 8, b, &err), 0);
	ck_assert_str_eq(unpkg_pathtab_find(&t, "/usr/a", NULL), "a");
	ck_assert_ptr_null(unpkg_pathtab_find(&t, "/usr/a", "a"));
	ck_assert_str_eq(unpkg_pathtab_find(&t, "/usr/bin", "a"), "b:amd64");
	ck_assert_ptr_null(unpkg_pathtab_find(&t, "/usr/bin/", NULL));
	ck_assert_ptr_null(unpkg_pathtab_find(&t, "/usr/b", NULL));
	ck_assert_ptr_null(unpkg_pathtab_find(&t, "", NULL));
	ck_assert_str_eq(unpkg_pathtab_find(&t, "/usr", NULL), "a");
	o = unpkg_pathtab_find(&t, "/usr", "a");
	ck_assert_ptr_nonnull(o);
	ck_assert_str_ne(o, "a");
	/* each path once, whoever lists it */
	ck_assert_uint_eq(unpkg_pathtab_count(&t), 3);
	unpkg_pathtab_destroy(&t);
	ck_assert_uint_eq(unpkg_pathtab_count(&t), 0);
	ck_assert_ptr_null(unpkg_pathtab_find(&t, "/usr", NULL));
}
END_TEST

/* Dropping the owner held in the slot, one in the chain, the only one;
 * a path without owners answers to none until one lists it again. */
START_TEST(t_drop)
{
	struct unpkg_pathtab t;
	uint32_t a, b, c;

	memset(&t, 0, sizeof(t));
	a = owner(&t, "a");
	b = owner(&t, "b");
	c = owner(&t, "c");
	add(&t, "/usr", a);
	add(&t, "/usr", b);
	add(&t, "/usr", c);
	add(&t, "/usr/a", a);
	add(&t, "/usr/b", b);

	ck_assert_uint_eq(unpkg_pathtab_count(&t), 3);
	drop(&t, (const char *[]){ "a", NULL });
	/* a path no owner lists any more is not counted */
	ck_assert_uint_eq(unpkg_pathtab_count(&t), 2);
	ck_assert_ptr_null(unpkg_pathtab_find(&t, "/usr/a", NULL));
	ck_assert_str_ne(unpkg_pathtab_find(&t, "/usr", NULL), "a");
	ck_assert_ptr_nonnull(unpkg_pathtab_find(&t, "/usr", "b"));
	ck_assert_ptr_nonnull(unpkg_pathtab_find(&t, "/usr", "c"));

	drop(&t, (const char *[]){ "c", NULL });
	ck_assert_str_eq(unpkg_pathtab_find(&t, "/usr", NULL), "b");
	ck_assert_ptr_null(unpkg_pathtab_find(&t, "/usr", "b"));

	drop(&t, (const char *[]){ "b", NULL });
	ck_assert_ptr_null(unpkg_pathtab_find(&t, "/usr", NULL));
	ck_assert_ptr_null(unpkg_pathtab_find(&t, "/usr/b", NULL));
	drop(&t, (const char *[]){ "nobody", NULL });

	c = owner(&t, "c");
	add(&t, "/usr/b", c);
	add(&t, "/usr", c);
	add(&t, "/usr", owner(&t, "d"));
	ck_assert_str_eq(unpkg_pathtab_find(&t, "/usr/b", NULL), "c");
	ck_assert_str_eq(unpkg_pathtab_find(&t, "/usr", NULL), "c");
	ck_assert_str_eq(unpkg_pathtab_find(&t, "/usr", "c"), "d");
	drop(&t, (const char *[]){ "c", "d", NULL });
	ck_assert_ptr_null(unpkg_pathtab_find(&t, "/usr", NULL));
	ck_assert_ptr_null(unpkg_pathtab_find(&t, "/usr/b", NULL));
	unpkg_pathtab_destroy(&t);
}
END_TEST

/* Many paths through several resizes, some of them dropped: every one
 * found with its owner, no false hits. */
START_TEST(t_many)
{
	enum { N = 60000 };
	struct unpkg_pathtab t;
	uint32_t o[3];
	char path[64];
	size_t i;

	memset(&t, 0, sizeof(t));
	o[0] = owner(&t, "p0");
	o[1] = owner(&t, "p1");
	o[2] = owner(&t, "p2");
	for (i = 0; i < N; i++) {
		snprintf(path, sizeof(path), "/usr/share/doc/f%zu", i);
		add(&t, path, o[i % 3]);
	}
	drop(&t, (const char *[]){ "p1", "p3", NULL });
	for (i = 0; i < N; i++) {
		char key[8];

		snprintf(path, sizeof(path), "/usr/share/doc/f%zu", i);
		snprintf(key, sizeof(key), "p%zu", i % 3);
		if (i % 3 == 1)
			ck_assert_ptr_null(unpkg_pathtab_find(&t, path, NULL));
		else
			ck_assert_str_eq(unpkg_pathtab_find(&t, path, NULL),
					 key);
		snprintf(path, sizeof(path), "/usr/share/doc/g%zu", i);
		ck_assert_ptr_null(unpkg_pathtab_find(&t, path, NULL));
	}
	unpkg_pathtab_destroy(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pathtab");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, t_owners);
	tcase_add_test(tc, t_drop);
	tcase_add_test(tc, t_many);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
