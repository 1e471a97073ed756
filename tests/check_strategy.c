/* check_strategy.c - the table of strategies and the --sync=auto choice. */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strategy.h"
#include "testutil.h"

START_TEST(test_names)
{
	int m;

	for (m = 0; m < UNPKG_SYNC_COUNT; m++)
		ck_assert_int_eq(unpkg_sync_mode_parse(
				 unpkg_sync_mode_name((enum unpkg_sync_mode)m)), m);
	ck_assert_int_eq(unpkg_sync_mode_parse("auto"), -1);
	ck_assert_int_eq(unpkg_sync_mode_parse("fsync"), -1);
}
END_TEST

/* The choice for a run whose files lie on several file systems. */
START_TEST(test_auto_set)
{
	static const enum unpkg_fsclass ext4_xfs[] = {
		UNPKG_FSCLASS_EXT4, UNPKG_FSCLASS_XFS, UNPKG_FSCLASS_EXT4 };
	static const enum unpkg_fsclass ext4_ext2[] = {
		UNPKG_FSCLASS_EXT4, UNPKG_FSCLASS_EXT2 };
	static const enum unpkg_fsclass tmpfs_other[] = {
		UNPKG_FSCLASS_TMPFS, UNPKG_FSCLASS_OTHER };
	static const enum unpkg_fsclass ext2[] = { UNPKG_FSCLASS_EXT2 };

	/* agreeing classes: their choice */
	ck_assert_int_eq(unpkg_sync_auto_set(ext4_xfs, 3), UNPKG_SYNC_SYNCFS);
	ck_assert_int_eq(unpkg_sync_auto_set(ext2, 1), UNPKG_SYNC_URING);
	/* syncfs is not a full barrier on ext2 or other: uring */
	ck_assert_int_eq(unpkg_sync_auto_set(ext4_ext2, 2), UNPKG_SYNC_URING);
	ck_assert_int_eq(unpkg_sync_auto_set(tmpfs_other, 2),
			 UNPKG_SYNC_URING);
	/* nothing known: the choice for other */
	ck_assert_int_eq(unpkg_sync_auto_set(NULL, 0),
			 unpkg_sync_auto(UNPKG_FSCLASS_OTHER));
	/* never none, whatever the class */
	ck_assert_int_ne(unpkg_sync_auto(UNPKG_FSCLASS_TMPFS), UNPKG_SYNC_NONE);
	/* syncfs is full exactly where fsclass says */
	ck_assert_int_eq(unpkg_sync_full(UNPKG_SYNC_SYNCFS, UNPKG_FSCLASS_EXT2),
			 unpkg_fsclass_syncfs_full(UNPKG_FSCLASS_EXT2));
	ck_assert_int_eq(unpkg_sync_full(UNPKG_SYNC_SYNCFS, UNPKG_FSCLASS_XFS),
			 1);
}
END_TEST

/* The choice for the root and the admin directory, both here: their
 * class's, named once in the statistics. */
START_TEST(test_choose_auto)
{
	struct unpkg_stats st;
	struct unpkg_err err;
	enum unpkg_sync_mode mode;
	enum unpkg_fsclass cls;
	char *dir = tu_mkdtemp();
	int fd = open(dir, O_RDONLY | O_DIRECTORY);

	memset(&st, 0, sizeof(st));
	unpkg_err_init(&err);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(unpkg_fsclass_detect(fd, &cls, NULL, &err), 0);
	/* a bound out of reach: the class decides, whatever the machine
	 * has dirty */
	ck_assert_msg(unpkg_sync_choose_auto(fd, fd, 1LL << 40, &st, &mode,
					     &err) == 0, "%s", err.msg);
	ck_assert_int_eq(mode, unpkg_sync_auto(cls));
	ck_assert_int_eq(st.dirty_avoided, 0);
	ck_assert_str_eq(st.fsclass, unpkg_fsclass_name(cls));
	close(fd);
	tu_rm_rf(dir);
	free(dir);
}
END_TEST

/* Beside other programs' unwritten data, auto leaves syncfs (which would
 * write all of it out and wait) for uring; the figure is meminfo's Dirty
 * plus Writeback. */
START_TEST(test_dirty)
{
	char *dir = tu_mkdtemp(), path[4096];
	long long kib = -5;

	ck_assert_int_eq(unpkg_sync_auto_beside(UNPKG_SYNC_SYNCFS, 0, 0),
			 UNPKG_SYNC_SYNCFS);
	ck_assert_int_eq(unpkg_sync_auto_beside(UNPKG_SYNC_SYNCFS,
						UNPKG_SYNC_DIRTY_MAX_KIB, 0),
			 UNPKG_SYNC_SYNCFS);
	ck_assert_int_eq(unpkg_sync_auto_beside(UNPKG_SYNC_SYNCFS,
						UNPKG_SYNC_DIRTY_MAX_KIB + 1, 0),
			 UNPKG_SYNC_URING);
	/* a bound of the caller's */
	ck_assert_int_eq(unpkg_sync_auto_beside(UNPKG_SYNC_SYNCFS, 2048, 1024),
			 UNPKG_SYNC_URING);
	ck_assert_int_eq(unpkg_sync_auto_beside(UNPKG_SYNC_SYNCFS,
						UNPKG_SYNC_DIRTY_MAX_KIB + 1,
						1LL << 40),
			 UNPKG_SYNC_SYNCFS);
	/* unknown: the file systems' choice stands */
	ck_assert_int_eq(unpkg_sync_auto_beside(UNPKG_SYNC_SYNCFS, -1, 0),
			 UNPKG_SYNC_SYNCFS);
	/* only syncfs is affected */
	ck_assert_int_eq(unpkg_sync_auto_beside(UNPKG_SYNC_URING, 1LL << 30, 0),
			 UNPKG_SYNC_URING);

	ck_assert_int_eq(unpkg_sync_dirty_kib(dir, &kib), 1);
	snprintf(path, sizeof(path), "%s/meminfo", dir);
	tu_write_file(path,
		      "MemTotal:       24576000 kB\n"
		      "Dirty:             40960 kB\n"
		      "Writeback:          1024 kB\n"
		      "WritebackTmp:     999999 kB\n", 0644);
	ck_assert_int_eq(unpkg_sync_dirty_kib(dir, &kib), 0);
	ck_assert_int_eq(kib, 41984);
	/* a meminfo without Writeback: is not understood */
	tu_write_file(path, "Dirty:  12 kB\n", 0644);
	ck_assert_int_eq(unpkg_sync_dirty_kib(dir, &kib), 1);
	/* the real one can be read */
	ck_assert_int_eq(unpkg_sync_dirty_kib("/proc", &kib), 0);
	ck_assert_int_ge(kib, 0);
	tu_rm_rf(dir);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("strategy");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_auto_set);
	tcase_add_test(tc, test_choose_auto);
	tcase_add_test(tc, test_dirty);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
