/* check_err.c - unit tests of the error records. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "testutil.h"

START_TEST(test_init_clears)
{
	struct unpkg_err err;

	memset(&err, 0x5a, sizeof(err));
	unpkg_err_init(&err);
	ck_assert_int_eq(err.code, UNPKG_ERR_NONE);
	ck_assert_int_eq(err.errnum, 0);
	ck_assert_str_eq(err.msg, "");
}
END_TEST

START_TEST(test_set_formats)
{
	struct unpkg_err err;

	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_err_set(&err, UNPKG_ERR_FORMAT, "%s: bad %d",
				       "foo.deb", 42), -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_FORMAT);
	ck_assert_int_eq(err.errnum, 0);
	ck_assert_str_eq(err.msg, "foo.deb: bad 42");
}
END_TEST

START_TEST(test_first_error_wins)
{
	struct unpkg_err err;

	unpkg_err_init(&err);
	unpkg_err_set(&err, UNPKG_ERR_CORRUPT, "first");
	ck_assert_int_eq(unpkg_err_set(&err, UNPKG_ERR_FORMAT, "second"), -1);
	errno = ENOENT;
	ck_assert_int_eq(unpkg_err_sys(&err, "third"), -1);
	ck_assert_int_eq(unpkg_err_errno(&err, EIO, "fourth"), -1);
	ck_assert_int_eq(unpkg_err_nomem(&err), -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_CORRUPT);
	ck_assert_int_eq(err.errnum, 0);
	ck_assert_str_eq(err.msg, "first");
}
END_TEST

START_TEST(test_sys_message)
{
	struct unpkg_err err;
	char want[UNPKG_ERR_MSG_MAX];

	unpkg_err_init(&err);
	errno = EACCES;
	ck_assert_int_eq(unpkg_err_sys(&err, "open %s", "/x"), -1);
	ck_assert_int_eq(errno, EACCES);
	ck_assert_int_eq(err.code, UNPKG_ERR_SYS);
	ck_assert_int_eq(err.errnum, EACCES);
	snprintf(want, sizeof(want), "open /x: %s", strerror(EACCES));
	ck_assert_str_eq(err.msg, want);
}
END_TEST

START_TEST(test_errno_explicit)
{
	struct unpkg_err err;
	char want[UNPKG_ERR_MSG_MAX];

	unpkg_err_init(&err);
	errno = 0;
	ck_assert_int_eq(unpkg_err_errno(&err, ENOSPC, "write %d", 3), -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_SYS);
	ck_assert_int_eq(err.errnum, ENOSPC);
	snprintf(want, sizeof(want), "write 3: %s", strerror(ENOSPC));
	ck_assert_str_eq(err.msg, want);
}
END_TEST

START_TEST(test_prefix)
{
	struct unpkg_err err;

	unpkg_err_init(&err);
	unpkg_err_set(&err, UNPKG_ERR_CONFLICT, "inner");
	unpkg_err_prefix(&err, "middle %d", 2);
	unpkg_err_prefix(&err, "outer");
	ck_assert_str_eq(err.msg, "outer: middle 2: inner");
	ck_assert_int_eq(err.code, UNPKG_ERR_CONFLICT);
}
END_TEST

START_TEST(test_prefix_without_error)
{
	struct unpkg_err err;

	unpkg_err_init(&err);
	unpkg_err_prefix(&err, "context");
	ck_assert_int_eq(err.code, UNPKG_ERR_NONE);
	ck_assert_str_eq(err.msg, "");
}
END_TEST

START_TEST(test_prefix_truncates)
{
	struct unpkg_err err;
	char big[2 * UNPKG_ERR_MSG_MAX];

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	unpkg_err_init(&err);
	unpkg_err_set(&err, UNPKG_ERR_FORMAT, "%s", big);
	ck_assert_uint_eq(strlen(err.msg), UNPKG_ERR_MSG_MAX - 1);
	unpkg_err_prefix(&err, "ctx");
	ck_assert_uint_eq(strlen(err.msg), UNPKG_ERR_MSG_MAX - 1);
	ck_assert(strncmp(err.msg, "ctx: aaa", 8) == 0);
}
END_TEST

START_TEST(test_nomem)
{
	struct unpkg_err err;

	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_err_nomem(&err), -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_NOMEM);
	ck_assert_str_eq(err.msg, "out of memory");
}
END_TEST

START_TEST(test_null_err)
{
	errno = EPERM;
	ck_assert_int_eq(unpkg_err_set(NULL, UNPKG_ERR_FORMAT, "x %d", 1), -1);
	ck_assert_int_eq(unpkg_err_sys(NULL, "y"), -1);
	ck_assert_int_eq(errno, EPERM);
	ck_assert_int_eq(unpkg_err_errno(NULL, EIO, "z"), -1);
	ck_assert_int_eq(unpkg_err_nomem(NULL), -1);
	unpkg_err_prefix(NULL, "p");
}
END_TEST

/* A sync error without an errno (a consequence, not a failed call) has
 * no ": Success" appended. */
START_TEST(test_sync_without_errno)
{
	struct unpkg_err err;

	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_err_set(&err, UNPKG_ERR_SYNC, "not processed"),
			 -1);
	ck_assert_str_eq(err.msg, "not processed");
	ck_assert_int_eq(err.errnum, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("err");
	TCase *tc = tcase_create("err");

	tcase_add_test(tc, test_init_clears);
	tcase_add_test(tc, test_sync_without_errno);
	tcase_add_test(tc, test_set_formats);
	tcase_add_test(tc, test_first_error_wins);
	tcase_add_test(tc, test_sys_message);
	tcase_add_test(tc, test_errno_explicit);
	tcase_add_test(tc, test_prefix);
	tcase_add_test(tc, test_prefix_without_error);
	tcase_add_test(tc, test_prefix_truncates);
	tcase_add_test(tc, test_nomem);
	tcase_add_test(tc, test_null_err);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
