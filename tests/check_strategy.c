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

#include "fsclass.h"
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

/* DEBUGFS/bdi/NAME/stats with `dirty` and `wb` KiB (and wb_stats beside
 * it, as Linux 6.10 and later have it, unless `old`). */
static void fake_bdi_named(const struct fake *f, const char *name,
			   long long dirty, long long wb, int old)
{
	char rel[256], text[512];

	snprintf(rel, sizeof(rel), "debugfs/bdi/%s/stats", name);
	snprintf(text, sizeof(text),
		 "BdiWriteback:       %10lld kB\n"
		 "BdiReclaimable:     %10lld kB\n"
		 "BdiDirtyThresh:        4805692 kB\n"
		 "DirtyThresh:           4805692 kB\n"
		 "BdiDirtied:         1059234184 kB\n", wb, dirty);
	fake_file(f, rel, text);
	if (!old) {
		snprintf(rel, sizeof(rel), "debugfs/bdi/%s/wb_stats", name);
		fake_file(f, rel, "WbCgIno:    1\n");
	}
}

/* The same for block device `dev` (NAME "MAJ:MIN"). */
static void fake_bdi(const struct fake *f, dev_t dev, long long dirty,
		     long long wb, int old)
{
	char name[64];

	snprintf(name, sizeof(name), "%u:%u", major(dev), minor(dev));
	fake_bdi_named(f, name, dirty, wb, old);
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

/* A file system of class `cls` on device `dev` (no btrfs fsid). */
static struct unpkg_dirty_fs on_dev(dev_t dev, enum unpkg_fsclass cls)
{
	struct unpkg_dirty_fs fs;

	memset(&fs, 0, sizeof(fs));
	fs.dev = dev;
	fs.cls = cls;
	return fs;
}

/* unpkg_sync_dirty_for() of `n` file systems: its figure, scope, names
 * and whether it met a tmpfs. */
static long long dirty_mem(const struct fake *f,
			   const struct unpkg_dirty_fs *fs, size_t n,
			   enum unpkg_dirty_scope *scope, char *names,
			   size_t size, int *in_memory)
{
	struct unpkg_err err;
	long long kib = -5;

	unpkg_err_init(&err);
	ck_assert_msg(unpkg_sync_dirty_for(&f->paths, fs, n, &kib, scope,
					   names, size, in_memory, &err) == 0,
		      "%s", err.msg);
	return kib;
}

/* The same where no tmpfs is expected. */
static long long dirty_for(const struct fake *f,
			   const struct unpkg_dirty_fs *fs, size_t n,
			   enum unpkg_dirty_scope *scope, char *names,
			   size_t size)
{
	int in_memory = -1;
	long long kib = dirty_mem(f, fs, n, scope, names, size, &in_memory);

	ck_assert_int_eq(in_memory, 0);
	return kib;
}

/* unpkg_sync_dirty_for() of `n` file systems gives the figure `kib`,
 * `scope`, `names` and `in_memory`. */
static void check_dirty(const struct fake *f, const struct unpkg_dirty_fs *fs,
			size_t n, long long kib, enum unpkg_dirty_scope scope,
			const char *names, int in_memory)
{
	enum unpkg_dirty_scope got_scope;
	char got_names[48];
	int got_memory = -1;

	ck_assert_int_eq(dirty_mem(f, fs, n, &got_scope, got_names,
				   sizeof(got_names), &got_memory), kib);
	ck_assert_int_eq(got_scope, scope);
	ck_assert_str_eq(got_names, names);
	ck_assert_int_eq(got_memory, in_memory);
}

/* The class of the file system of directory `dir`. */
static enum unpkg_fsclass class_of(const char *dir)
{
	struct unpkg_err err;
	enum unpkg_fsclass cls;
	int fd = open(dir, O_RDONLY | O_DIRECTORY);

	unpkg_err_init(&err);
	ck_assert_msg(fd >= 0, "open %s: %s", dir, strerror(errno));
	ck_assert_msg(unpkg_fsclass_detect(fd, &cls, NULL, &err) == 0, "%s",
		      err.msg);
	close(fd);
	return cls;
}

/* The figure per file system: the backing devices' writeback statistics
 * in debugfs, each device counted once; the machine's (meminfo) wherever
 * one of the file systems has none. */
START_TEST(test_dirty_devices)
{
	struct fake f;
	enum unpkg_dirty_scope scope;
	char names[48];
	struct unpkg_dirty_fs fs[2];

	fake_init(&f);
	fake_bdi(&f, makedev(254, 0), 3072, 8, 0);
	fake_bdi(&f, makedev(7, 3), 100000, 2000, 0);

	/* the root and the database on one device: its figure, once */
	fs[0] = fs[1] = on_dev(makedev(254, 0), UNPKG_FSCLASS_EXT4);
	ck_assert_int_eq(dirty_for(&f, fs, 2, &scope, names, sizeof(names)),
			 3080);
	ck_assert_int_eq(scope, UNPKG_DIRTY_DEVICES);
	ck_assert_str_eq(names, "254:0");
	/* on two devices: the sum, both named */
	fs[1] = on_dev(makedev(7, 3), UNPKG_FSCLASS_XFS);
	ck_assert_int_eq(dirty_for(&f, fs, 2, &scope, names, sizeof(names)),
			 3080 + 102000);
	ck_assert_int_eq(scope, UNPKG_DIRTY_DEVICES);
	ck_assert_str_eq(names, "254:0 7:3");
	/* a device without statistics (NFS, FUSE: anonymous): the
	 * machine's figure, which counts every file system */
	fs[1] = on_dev(makedev(0, 50), UNPKG_FSCLASS_OTHER);
	ck_assert_int_eq(dirty_for(&f, fs, 2, &scope, names, sizeof(names)),
			 262144 + 1024);
	ck_assert_int_eq(scope, UNPKG_DIRTY_MACHINE);
	ck_assert_str_eq(names, "");
	/* a kernel before 6.10 (no wb_stats): its statistics count the root
	 * cgroup's writeback only, so they are not used */
	fake_bdi(&f, makedev(9, 0), 0, 0, 1);
	fs[0] = fs[1] = on_dev(makedev(9, 0), UNPKG_FSCLASS_EXT4);
	ck_assert_int_eq(dirty_for(&f, fs, 2, &scope, names, sizeof(names)),
			 262144 + 1024);
	ck_assert_int_eq(scope, UNPKG_DIRTY_MACHINE);
	/* statistics missing a field are not understood */
	fake_bdi(&f, makedev(9, 1), 0, 0, 0);
	fake_file(&f, "debugfs/bdi/9:1/stats", "BdiReclaimable:  12 kB\n");
	fs[0] = fs[1] = on_dev(makedev(9, 1), UNPKG_FSCLASS_EXT4);
	ck_assert_int_eq(dirty_for(&f, fs, 2, &scope, names, sizeof(names)),
			 262144 + 1024);
	/* debugfs not mounted, no meminfo: unknown */
	fs[0] = fs[1] = on_dev(makedev(254, 0), UNPKG_FSCLASS_EXT4);
	f.paths.debugfs = "/nonexistent";
	f.paths.proc = "/nonexistent";
	ck_assert_int_eq(dirty_for(&f, fs, 2, &scope, names, sizeof(names)),
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
	struct unpkg_dirty_fs fs = on_dev(makedev(8, 1), UNPKG_FSCLASS_EXT4);

	fake_init(&f);
	fake_bdi(&f, makedev(8, 0), 40960, 0, 0);
	fake_file(&f, "sys/devices/pci0/block/sda/dev", "8:0\n");
	fake_file(&f, "sys/devices/pci0/block/sda/sda1/partition", "1\n");
	fake_file(&f, "sys/devices/pci0/block/sda/sda1/dev", "8:1\n");
	fake_path(&f, "sys/dev/block/8:1", path, sizeof(path));
	ck_assert_int_eq(symlink("../../devices/pci0/block/sda/sda1", path),
			 0);
	ck_assert_int_eq(dirty_for(&f, &fs, 1, &scope, names, sizeof(names)),
			 40960);
	ck_assert_int_eq(scope, UNPKG_DIRTY_DEVICES);
	ck_assert_str_eq(names, "8:0");
	/* a whole disk without statistics is not taken for its parent */
	fs.dev = makedev(8, 16);
	fake_file(&f, "sys/devices/pci0/block/sdb/dev", "8:16\n");
	fake_path(&f, "sys/dev/block/8:16", path, sizeof(path));
	ck_assert_int_eq(symlink("../../devices/pci0/block/sdb", path), 0);
	ck_assert_int_eq(dirty_for(&f, &fs, 1, &scope, names, sizeof(names)),
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
	struct unpkg_dirty_fs ov = on_dev(makedev(0, 42),
					  UNPKG_FSCLASS_OVERLAY);

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

	ck_assert_int_eq(unpkg_fsclass_overlay_upper(f.proc, ov.dev, got,
						     sizeof(got), &err), 0);
	ck_assert_str_eq(got, upper);
	if (class_of(upper) == UNPKG_FSCLASS_TMPFS) {
		/* $TMPDIR on a tmpfs: nothing to write back there (as in
		 * test_dirty_overlay_tmpfs) */
		check_dirty(&f, &ov, 1, 0, UNPKG_DIRTY_DEVICES, "", 1);
	} else {
		ck_assert_int_eq(dirty_for(&f, &ov, 1, &scope, names,
					   sizeof(names)), 65536);
		ck_assert_int_eq(scope, UNPKG_DIRTY_DEVICES);
	}
	/* no upper layer (read-only), a relative upperdir, no overlayfs:
	 * nothing found, the machine's figure */
	ck_assert_int_eq(unpkg_fsclass_overlay_upper(f.proc, makedev(0, 43),
						     got, sizeof(got), &err), 1);
	ck_assert_int_eq(unpkg_fsclass_overlay_upper(f.proc, makedev(0, 44),
						     got, sizeof(got), &err), 1);
	ck_assert_int_eq(unpkg_fsclass_overlay_upper(f.proc, makedev(254, 0),
						     got, sizeof(got), &err), 1);
	ov.dev = makedev(0, 44);
	ck_assert_int_eq(dirty_for(&f, &ov, 1, &scope, names, sizeof(names)),
			 262144 + 1024);
	ck_assert_int_eq(scope, UNPKG_DIRTY_MACHINE);
	/* an upper directory that is not there (another mount namespace) */
	ck_assert_int_eq(rmdir(upper), 0);
	ov.dev = makedev(0, 42);
	ck_assert_int_eq(dirty_for(&f, &ov, 1, &scope, names, sizeof(names)),
			 262144 + 1024);
	ck_assert_int_eq(scope, UNPKG_DIRTY_MACHINE);
	tu_rm_rf(f.top);
}
END_TEST

/* SYS/fs/btrfs/FSID/bdi, a link to the bdi `bdi` as sysfs has it. */
static void fake_btrfs_link(const struct fake *f, const char *fsid,
			    const char *bdi)
{
	char rel[128], path[8192], target[128];

	snprintf(rel, sizeof(rel), "sys/fs/btrfs/%s/bdi", fsid);
	fake_path(f, rel, path, sizeof(path));
	snprintf(target, sizeof(target), "../../../devices/virtual/bdi/%s",
		 bdi);
	ck_assert_int_eq(symlink(target, path), 0);
}

/* A btrfs's pages wait on the file system's own backing device, whatever
 * subvolume (an anonymous st_dev each): the bdi that SYS/fs/btrfs/FSID/bdi
 * links to, DEBUGFS/bdi/btrfs-N/stats, named so in --stats. */
START_TEST(test_dirty_btrfs)
{
	static const char fsid[] = "4a3f0c2e-9b1d-4e6f-8a7b-0c1d2e3f4a5b";
	static const char fsid2[] = "00112233-4455-6677-8899-aabbccddeeff";
	const long long machine = 262144 + 1024;
	struct fake f;
	struct unpkg_dirty_fs fs[2];

	fake_init(&f);
	fake_bdi_named(&f, "btrfs-7", 40960, 1024, 0);
	fake_bdi(&f, makedev(254, 0), 3072, 0, 0);
	fake_btrfs_link(&f, fsid, "btrfs-7");

	fs[0] = on_dev(makedev(0, 50), UNPKG_FSCLASS_BTRFS);
	snprintf(fs[0].btrfs_fsid, sizeof(fs[0].btrfs_fsid), "%s", fsid);
	check_dirty(&f, fs, 1, 40960 + 1024, UNPKG_DIRTY_DEVICES, "btrfs-7", 0);
	/* the root and the database on two subvolumes: one file system,
	 * counted once */
	fs[1] = fs[0];
	fs[1].dev = makedev(0, 51);
	check_dirty(&f, fs, 2, 40960 + 1024, UNPKG_DIRTY_DEVICES, "btrfs-7", 0);
	/* beside an ext4: both */
	fs[1] = on_dev(makedev(254, 0), UNPKG_FSCLASS_EXT4);
	check_dirty(&f, fs, 2, 40960 + 1024 + 3072, UNPKG_DIRTY_DEVICES,
		    "btrfs-7 254:0", 0);
	/* no fsid (the ioctl failed): the machine's figure */
	fs[0].btrfs_fsid[0] = '\0';
	check_dirty(&f, fs, 2, machine, UNPKG_DIRTY_MACHINE, "", 0);
	/* no SYS/fs/btrfs/FSID/bdi link (a kernel without it, or sysfs not
	 * mounted): the machine's figure */
	snprintf(fs[0].btrfs_fsid, sizeof(fs[0].btrfs_fsid), "%s", fsid2);
	check_dirty(&f, fs, 2, machine, UNPKG_DIRTY_MACHINE, "", 0);
	/* a link to a bdi without wb_stats (before Linux 6.10) */
	fake_bdi_named(&f, "btrfs-8", 0, 0, 1);
	fake_btrfs_link(&f, fsid2, "btrfs-8");
	check_dirty(&f, fs, 2, machine, UNPKG_DIRTY_MACHINE, "", 0);
	/* the device's own statistics come first (a btrfs has none; a file
	 * system on a block device that says btrfs has) */
	fake_bdi(&f, makedev(0, 50), 512, 0, 0);
	check_dirty(&f, fs, 2, 512 + 3072, UNPKG_DIRTY_DEVICES, "0:50 254:0",
		    0);
	tu_rm_rf(f.top);
}
END_TEST

/* A tmpfs's pages are never written back: syncfs neither waits for other
 * programs' data there nor forces it out, so its figure is 0, whatever
 * its device's statistics or the machine say, and --stats says why. */
START_TEST(test_dirty_tmpfs)
{
	struct fake f;
	struct unpkg_dirty_fs fs[2];

	fake_init(&f);			/* 257 MiB dirty on the machine */
	fake_bdi(&f, makedev(0, 30), 65536, 0, 0);
	fake_bdi(&f, makedev(254, 0), 3072, 0, 0);
	fs[0] = fs[1] = on_dev(makedev(0, 30), UNPKG_FSCLASS_TMPFS);
	check_dirty(&f, fs, 2, 0, UNPKG_DIRTY_DEVICES, "", 1);
	/* beside an ext4: the ext4's figure */
	fs[1] = on_dev(makedev(254, 0), UNPKG_FSCLASS_EXT4);
	check_dirty(&f, fs, 2, 3072, UNPKG_DIRTY_DEVICES, "254:0", 1);
	/* beside a file system without a figure: the machine's */
	fs[1] = on_dev(makedev(0, 31), UNPKG_FSCLASS_OTHER);
	check_dirty(&f, fs, 2, 262144 + 1024, UNPKG_DIRTY_MACHINE, "", 0);
	/* without debugfs, procfs or sysfs alike */
	fs[1] = fs[0];
	f.paths.debugfs = f.paths.sys = f.paths.proc = "/nonexistent";
	check_dirty(&f, fs, 2, 0, UNPKG_DIRTY_DEVICES, "", 1);
	tu_rm_rf(f.top);
}
END_TEST

/* A directory in /dev/shm, in dir, if it is a tmpfs: 1, else 0 (a part
 * skipped, named `what`). */
static int shm_dir(char *dir, const char *what)
{
	if (mkdtemp(dir) == NULL) {
		tu_skip_part(what, "no /dev/shm to make a directory in");
		return 0;
	}
	if (class_of(dir) != UNPKG_FSCLASS_TMPFS) {
		tu_skip_part(what, "/dev/shm is not a tmpfs");
		rmdir(dir);
		return 0;
	}
	return 1;
}

/* An overlayfs whose upper layer is a tmpfs (a live system, a container
 * with a tmpfs upper layer): nothing to write back either. */
START_TEST(test_dirty_overlay_tmpfs)
{
	struct fake f;
	char line[8192], dir[] = "/dev/shm/unpkg-test-XXXXXX";
	struct unpkg_dirty_fs ov = on_dev(makedev(0, 42),
					  UNPKG_FSCLASS_OVERLAY);
	struct stat st;

	if (!shm_dir(dir, "an overlayfs on a tmpfs"))
		return;
	fake_init(&f);
	ck_assert_int_eq(stat(dir, &st), 0);
	fake_bdi(&f, st.st_dev, 65536, 0, 0);
	snprintf(line, sizeof(line),
		 "78 27 0:42 / /ov rw - overlay overlay rw,lowerdir=/l,"
		 "upperdir=%s,workdir=/w\n", dir);
	fake_file(&f, "proc/self/mountinfo", line);
	check_dirty(&f, &ov, 1, 0, UNPKG_DIRTY_DEVICES, "", 1);
	tu_rm_rf(f.top);
	rmdir(dir);
}
END_TEST

/* choose_auto_at() on the directory `dir` with the fake tree: its mode,
 * the statistics in *st. */
static enum unpkg_sync_mode choose_at(const struct fake *f, const char *dir,
				      struct unpkg_stats *st)
{
	struct unpkg_err err;
	enum unpkg_sync_mode mode;
	int fd = open(dir, O_RDONLY | O_DIRECTORY);

	ck_assert_int_ge(fd, 0);
	unpkg_err_init(&err);
	memset(st, 0, sizeof(*st));
	ck_assert_msg(unpkg_sync_choose_auto_at(&f->paths, fd, fd, 32 * 1024,
						st, &mode, &err) == 0,
		      "%s", err.msg);
	close(fd);
	return mode;
}

/* The whole choice on a tmpfs: syncfs, whatever its device's statistics
 * and the machine's figure say. */
START_TEST(test_choose_auto_tmpfs)
{
	struct fake f;
	struct unpkg_stats st;
	struct stat sb;
	char dir[] = "/dev/shm/unpkg-test-XXXXXX";

	if (!shm_dir(dir, "auto on a tmpfs beside dirty data"))
		return;
	ck_assert_int_eq(stat(dir, &sb), 0);
	fake_init(&f);		/* 257 MiB dirty on the machine */
	fake_bdi(&f, sb.st_dev, 64 * 1024, 0, 0);
	ck_assert_int_eq(choose_at(&f, dir, &st), UNPKG_SYNC_SYNCFS);
	ck_assert_int_eq(st.others_dirty_kib, 0);
	ck_assert_int_eq(st.dirty_scope, UNPKG_DIRTY_DEVICES);
	ck_assert_str_eq(st.dirty_devices, "");
	ck_assert_int_eq(st.dirty_in_memory, 1);
	ck_assert_int_eq(st.dirty_avoided, 0);
	tu_rm_rf(f.top);
	rmdir(dir);
}
END_TEST

/* auto's choice for `dir` by the system's own files: where they say its
 * file system orders its commits, syncfs with nothing counted. */
static void check_system_choice(const char *dir)
{
	struct unpkg_err err;
	struct unpkg_stats st;
	enum unpkg_sync_mode mode;
	enum unpkg_wb_path wb;
	int fd = open(dir, O_RDONLY | O_DIRECTORY), ordered;

	ck_assert_int_ge(fd, 0);
	unpkg_err_init(&err);
	ordered = unpkg_fsclass_commit_orders_fd(fd, &wb, &err);
	ck_assert_int_ge(ordered, 0);
	memset(&st, 0, sizeof(st));
	ck_assert_int_eq(unpkg_sync_choose_auto(fd, fd, 0, &st, &mode, &err),
			 0);
	if (ordered) {
		ck_assert_int_eq(mode, UNPKG_SYNC_SYNCFS);
		ck_assert_int_eq(st.dirty_scope, UNPKG_DIRTY_UNCOUNTED);
	} else {
		ck_assert_int_ne(st.dirty_scope, UNPKG_DIRTY_UNCOUNTED);
	}
	close(fd);
}

/* The whole choice on $TMPDIR's file system, where its class takes syncfs
 * and has a device: its own device's dirty data above the bound makes it
 * uring, the machine's beside it does not, unless the file system orders
 * its commits (xfs here; an ext4 only where procfs lists "barrier" for
 * it, which the fake tree does not), where nothing is counted.  A case of
 * its own ("devices"): integration/submount.sh runs it with $TMPDIR on
 * ext4 and xfs, so it runs wherever the suite's own $TMPDIR is not such a
 * file system. */
START_TEST(test_choose_auto_devices)
{
	struct fake f;
	struct unpkg_stats st;
	struct stat sb;
	enum unpkg_fsclass cls;
	char *dir = tu_mkdtemp();

	cls = class_of(dir);
	printf("devices: scratch directory on %s\n", unpkg_fsclass_name(cls));
	fflush(stdout);
	if (unpkg_sync_auto(cls) != UNPKG_SYNC_SYNCFS ||
	    cls == UNPKG_FSCLASS_TMPFS) {
		tu_skip_part("auto beside a device's dirty data",
			     "$TMPDIR is on a tmpfs, or a file system where "
			     "auto does not take syncfs");
		goto out;
	}
	ck_assert_int_eq(stat(dir, &sb), 0);
	fake_init(&f);		/* 257 MiB dirty on the machine */
	fake_bdi(&f, sb.st_dev, 1024, 0, 0);
	if (cls == UNPKG_FSCLASS_XFS) {
		fake_bdi(&f, sb.st_dev, 64 * 1024, 0, 0);
		ck_assert_int_eq(choose_at(&f, dir, &st), UNPKG_SYNC_SYNCFS);
		ck_assert_int_eq(st.dirty_scope, UNPKG_DIRTY_UNCOUNTED);
		ck_assert_int_eq(st.dirty_avoided, 0);
	} else {
		ck_assert_int_eq(choose_at(&f, dir, &st), UNPKG_SYNC_SYNCFS);
		ck_assert_int_eq(st.others_dirty_kib, 1024);
		ck_assert_int_eq(st.dirty_scope, UNPKG_DIRTY_DEVICES);
		ck_assert_int_eq(st.dirty_in_memory, 0);
		ck_assert_int_eq(st.dirty_avoided, 0);

		fake_bdi(&f, sb.st_dev, 64 * 1024, 0, 0);
		ck_assert_int_eq(choose_at(&f, dir, &st), UNPKG_SYNC_URING);
		ck_assert_int_eq(st.others_dirty_kib, 64 * 1024);
		ck_assert_int_eq(st.dirty_avoided, 1);
	}
	check_system_choice(dir);
	tu_rm_rf(f.top);
out:
	tu_rm_rf(dir);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("strategy");
	TCase *tc = tcase_create("core");
	TCase *devices;

	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_auto_set);
	tcase_add_test(tc, test_choose_auto);
	tcase_add_test(tc, test_dirty);
	tcase_add_test(tc, test_dirty_devices);
	tcase_add_test(tc, test_dirty_partition);
	tcase_add_test(tc, test_dirty_overlay);
	tcase_add_test(tc, test_dirty_btrfs);
	tcase_add_test(tc, test_dirty_tmpfs);
	tcase_add_test(tc, test_dirty_overlay_tmpfs);
	tcase_add_test(tc, test_choose_auto_tmpfs);
	suite_add_tcase(s, tc);
	devices = tcase_create("devices");
	tcase_add_test(devices, test_choose_auto_devices);
	suite_add_tcase(s, devices);
	return tu_run_suite(s);
}
