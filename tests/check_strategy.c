/* check_strategy.c - the table of strategies and the --sync=auto choice. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
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

/* A fake tree for the kernel's files: TOP/debugfs, TOP/sys, TOP/proc. */
struct fake {
	char top[4096], debugfs[4200], sys[4200], proc[4200];
	struct unpkg_dirty_paths paths;
};

static void fake_path(const struct fake *f, const char *rel, char *out,
		      size_t size)
{
	char dir[8192], *slash;

	snprintf(out, size, "%s/%s", f->top, rel);
	/* make the directories leading to it */
	snprintf(dir, sizeof(dir), "%s", out);
	for (slash = strchr(dir + strlen(f->top) + 1, '/'); slash != NULL;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		ck_assert_msg(mkdir(dir, 0755) == 0 || errno == EEXIST,
			      "mkdir %s: %s", dir, strerror(errno));
		*slash = '/';
	}
}

static void fake_file(const struct fake *f, const char *rel, const char *text)
{
	char path[8192];

	fake_path(f, rel, path, sizeof(path));
	tu_write_file(path, text, 0644);
}

/* DEBUGFS/bdi/MAJ:MIN/stats with `dirty` and `wb` KiB (and wb_stats
 * beside it, as Linux 6.10 and later have it, unless `old`). */
static void fake_bdi(const struct fake *f, dev_t dev, long long dirty,
		     long long wb, int old)
{
	char rel[256], text[512];

	snprintf(rel, sizeof(rel), "debugfs/bdi/%u:%u/stats", major(dev),
		 minor(dev));
	snprintf(text, sizeof(text),
		 "BdiWriteback:       %10lld kB\n"
		 "BdiReclaimable:     %10lld kB\n"
		 "BdiDirtyThresh:        4805692 kB\n"
		 "DirtyThresh:           4805692 kB\n"
		 "BdiDirtied:         1059234184 kB\n", wb, dirty);
	fake_file(f, rel, text);
	if (!old) {
		snprintf(rel, sizeof(rel), "debugfs/bdi/%u:%u/wb_stats",
			 major(dev), minor(dev));
		fake_file(f, rel, "WbCgIno:    1\n");
	}
}

static void fake_init(struct fake *f)
{
	char *dir = tu_mkdtemp();

	snprintf(f->top, sizeof(f->top), "%s", dir);
	free(dir);
	snprintf(f->debugfs, sizeof(f->debugfs), "%s/debugfs", f->top);
	snprintf(f->sys, sizeof(f->sys), "%s/sys", f->top);
	snprintf(f->proc, sizeof(f->proc), "%s/proc", f->top);
	f->paths.debugfs = f->debugfs;
	f->paths.sys = f->sys;
	f->paths.proc = f->proc;
	fake_file(f, "proc/meminfo",
		  "MemTotal:       24576000 kB\n"
		  "Dirty:            262144 kB\n"
		  "Writeback:          1024 kB\n");
}

/* unpkg_sync_dirty_for() of `n` devices: its figure, scope and names. */
static long long dirty_for(const struct fake *f, const dev_t *devs, size_t n,
			   enum unpkg_dirty_scope *scope, char *names,
			   size_t size)
{
	struct unpkg_err err;
	long long kib = -5;

	unpkg_err_init(&err);
	ck_assert_msg(unpkg_sync_dirty_for(&f->paths, devs, n, &kib, scope,
					   names, size, &err) == 0,
		      "%s", err.msg);
	return kib;
}

/* The figure per file system: the backing devices' writeback statistics
 * in debugfs, each device counted once; the machine's (meminfo) wherever
 * one of the file systems has none. */
START_TEST(test_dirty_devices)
{
	struct fake f;
	enum unpkg_dirty_scope scope;
	char names[48];
	dev_t devs[2];

	fake_init(&f);
	fake_bdi(&f, makedev(254, 0), 3072, 8, 0);
	fake_bdi(&f, makedev(7, 3), 100000, 2000, 0);

	/* the root and the database on one device: its figure, once */
	devs[0] = devs[1] = makedev(254, 0);
	ck_assert_int_eq(dirty_for(&f, devs, 2, &scope, names, sizeof(names)),
			 3080);
	ck_assert_int_eq(scope, UNPKG_DIRTY_DEVICES);
	ck_assert_str_eq(names, "254:0");
	/* on two devices: the sum, both named */
	devs[1] = makedev(7, 3);
	ck_assert_int_eq(dirty_for(&f, devs, 2, &scope, names, sizeof(names)),
			 3080 + 102000);
	ck_assert_int_eq(scope, UNPKG_DIRTY_DEVICES);
	ck_assert_str_eq(names, "254:0 7:3");
	/* a device without statistics (btrfs, tmpfs: anonymous): the
	 * machine's figure, which counts every file system */
	devs[1] = makedev(0, 50);
	ck_assert_int_eq(dirty_for(&f, devs, 2, &scope, names, sizeof(names)),
			 262144 + 1024);
	ck_assert_int_eq(scope, UNPKG_DIRTY_MACHINE);
	ck_assert_str_eq(names, "");
	/* a kernel before 6.10 (no wb_stats): its statistics count the root
	 * cgroup's writeback only, so they are not used */
	fake_bdi(&f, makedev(9, 0), 0, 0, 1);
	devs[0] = devs[1] = makedev(9, 0);
	ck_assert_int_eq(dirty_for(&f, devs, 2, &scope, names, sizeof(names)),
			 262144 + 1024);
	ck_assert_int_eq(scope, UNPKG_DIRTY_MACHINE);
	/* statistics missing a field are not understood */
	fake_bdi(&f, makedev(9, 1), 0, 0, 0);
	fake_file(&f, "debugfs/bdi/9:1/stats", "BdiReclaimable:  12 kB\n");
	devs[0] = devs[1] = makedev(9, 1);
	ck_assert_int_eq(dirty_for(&f, devs, 2, &scope, names, sizeof(names)),
			 262144 + 1024);
	/* debugfs not mounted, no meminfo: unknown */
	devs[0] = devs[1] = makedev(254, 0);
	f.paths.debugfs = "/nonexistent";
	f.paths.proc = "/nonexistent";
	ck_assert_int_eq(dirty_for(&f, devs, 2, &scope, names, sizeof(names)),
			 -1);
	ck_assert_int_eq(scope, UNPKG_DIRTY_UNKNOWN);
	tu_rm_rf(f.top);
}
END_TEST

/* A partition's pages are its disk's: the statistics of the disk that
 * sysfs names as its parent. */
START_TEST(test_dirty_partition)
{
	struct fake f;
	enum unpkg_dirty_scope scope;
	char names[48], path[8192];
	dev_t dev = makedev(8, 1);

	fake_init(&f);
	fake_bdi(&f, makedev(8, 0), 40960, 0, 0);
	fake_file(&f, "sys/devices/pci0/block/sda/dev", "8:0\n");
	fake_file(&f, "sys/devices/pci0/block/sda/sda1/partition", "1\n");
	fake_file(&f, "sys/devices/pci0/block/sda/sda1/dev", "8:1\n");
	fake_path(&f, "sys/dev/block/8:1", path, sizeof(path));
	ck_assert_int_eq(symlink("../../devices/pci0/block/sda/sda1", path),
			 0);
	ck_assert_int_eq(dirty_for(&f, &dev, 1, &scope, names, sizeof(names)),
			 40960);
	ck_assert_int_eq(scope, UNPKG_DIRTY_DEVICES);
	ck_assert_str_eq(names, "8:0");
	/* a whole disk without statistics is not taken for its parent */
	dev = makedev(8, 16);
	fake_file(&f, "sys/devices/pci0/block/sdb/dev", "8:16\n");
	fake_path(&f, "sys/dev/block/8:16", path, sizeof(path));
	ck_assert_int_eq(symlink("../../devices/pci0/block/sdb", path), 0);
	ck_assert_int_eq(dirty_for(&f, &dev, 1, &scope, names, sizeof(names)),
			 262144 + 1024);
	ck_assert_int_eq(scope, UNPKG_DIRTY_MACHINE);
	tu_rm_rf(f.top);
}
END_TEST

/* An overlayfs's pages wait on its upper layer's file system: the device
 * of the directory its mountinfo line names as upperdir (escaped as the
 * kernel escapes it). */
START_TEST(test_dirty_overlay)
{
	struct fake f;
	struct unpkg_err err;
	enum unpkg_dirty_scope scope;
	char names[48], upper[8192], line[8192 * 2], got[4096];
	struct stat st;
	dev_t ov = makedev(0, 42);

	unpkg_err_init(&err);
	fake_init(&f);
	snprintf(upper, sizeof(upper), "%s/up per,x", f.top);
	ck_assert_int_eq(mkdir(upper, 0755), 0);
	ck_assert_int_eq(stat(upper, &st), 0);
	fake_bdi(&f, st.st_dev, 65536, 0, 0);
	snprintf(line, sizeof(line),
		 "27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
		 "78 27 0:42 / /ov rw,relatime shared:7 - overlay overlay "
		 "rw,lowerdir=/l1:/l2,upperdir=%s/up\\040per\\054x,"
		 "workdir=/w,uuid=on\n"
		 "79 27 0:43 / /ro rw - overlay overlay ro,lowerdir=/a:/b\n"
		 "80 27 0:44 / /rel rw - overlay overlay rw,upperdir=up,"
		 "workdir=w\n", f.top);
	fake_file(&f, "proc/self/mountinfo", line);

	ck_assert_int_eq(unpkg_fsclass_overlay_upper(f.proc, ov, got,
						     sizeof(got), &err), 0);
	ck_assert_str_eq(got, upper);
	ck_assert_int_eq(dirty_for(&f, &ov, 1, &scope, names, sizeof(names)),
			 65536);
	ck_assert_int_eq(scope, UNPKG_DIRTY_DEVICES);
	/* no upper layer (read-only), a relative upperdir, no overlayfs:
	 * nothing found, the machine's figure */
	ck_assert_int_eq(unpkg_fsclass_overlay_upper(f.proc, makedev(0, 43),
						     got, sizeof(got), &err), 1);
	ck_assert_int_eq(unpkg_fsclass_overlay_upper(f.proc, makedev(0, 44),
						     got, sizeof(got), &err), 1);
	ck_assert_int_eq(unpkg_fsclass_overlay_upper(f.proc, makedev(254, 0),
						     got, sizeof(got), &err), 1);
	ov = makedev(0, 44);
	ck_assert_int_eq(dirty_for(&f, &ov, 1, &scope, names, sizeof(names)),
			 262144 + 1024);
	ck_assert_int_eq(scope, UNPKG_DIRTY_MACHINE);
	/* an upper directory that is not there (another mount namespace) */
	ck_assert_int_eq(rmdir(upper), 0);
	ov = makedev(0, 42);
	ck_assert_int_eq(dirty_for(&f, &ov, 1, &scope, names, sizeof(names)),
			 262144 + 1024);
	ck_assert_int_eq(scope, UNPKG_DIRTY_MACHINE);
	tu_rm_rf(f.top);
}
END_TEST

/* The whole choice on a file system whose class takes syncfs (a tmpfs):
 * its own device's dirty data above the bound makes it uring, the
 * machine's beside it does not. */
START_TEST(test_choose_auto_devices)
{
	struct fake f;
	struct unpkg_stats st;
	struct unpkg_err err;
	struct stat sb;
	enum unpkg_sync_mode mode;
	enum unpkg_fsclass cls;
	char dir[] = "/dev/shm/unpkg-test-XXXXXX";
	int fd;

	if (mkdtemp(dir) == NULL) {
		tu_skip_part("auto beside the file systems' dirty data",
			     "no /dev/shm to make a directory in");
		return;
	}
	unpkg_err_init(&err);
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &sb), 0);
	ck_assert_int_eq(unpkg_fsclass_detect(fd, &cls, NULL, &err), 0);
	if (unpkg_sync_auto(cls) != UNPKG_SYNC_SYNCFS) {
		tu_skip_part("auto beside the file systems' dirty data",
			     "auto does not take syncfs on /dev/shm");
		goto out;
	}
	fake_init(&f);		/* 257 MiB dirty on the machine */
	fake_bdi(&f, sb.st_dev, 1024, 0, 0);
	memset(&st, 0, sizeof(st));
	ck_assert_msg(unpkg_sync_choose_auto_at(&f.paths, fd, fd, 32 * 1024,
						&st, &mode, &err) == 0,
		      "%s", err.msg);
	ck_assert_int_eq(mode, UNPKG_SYNC_SYNCFS);
	ck_assert_int_eq(st.others_dirty_kib, 1024);
	ck_assert_int_eq(st.dirty_scope, UNPKG_DIRTY_DEVICES);
	ck_assert_int_eq(st.dirty_avoided, 0);

	fake_bdi(&f, sb.st_dev, 64 * 1024, 0, 0);
	memset(&st, 0, sizeof(st));
	ck_assert_msg(unpkg_sync_choose_auto_at(&f.paths, fd, fd, 32 * 1024,
						&st, &mode, &err) == 0,
		      "%s", err.msg);
	ck_assert_int_eq(mode, UNPKG_SYNC_URING);
	ck_assert_int_eq(st.others_dirty_kib, 64 * 1024);
	ck_assert_int_eq(st.dirty_avoided, 1);
	tu_rm_rf(f.top);
out:
	close(fd);
	rmdir(dir);
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
	tcase_add_test(tc, test_dirty_devices);
	tcase_add_test(tc, test_dirty_partition);
	tcase_add_test(tc, test_dirty_overlay);
	tcase_add_test(tc, test_choose_auto_devices);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
