/* check_fsclass.c - recognising filesystems, and the --sync=auto table.
 *
 * The table and the classification rules are tested everywhere, the ext
 * family's journal detection on fake sysfs/procfs trees.  As root, with
 * loop devices and the mkfs programs, real filesystems are made on loop
 * images in a temporary directory and classified: ext4, ext4 without a
 * journal, ext3, ext2, xfs, btrfs, tmpfs and an overlay.  A filesystem that
 * cannot be made or mounted here is reported as a skipped part
 * (tu_skip_part) and the rest goes on.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "fsclass.h"
#include "strategy.h"
#include "testutil.h"

/* ---- the table -------------------------------------------------------- */

START_TEST(test_names)
{
	int i, j;

	for (i = 0; i < UNPKG_FSCLASS_COUNT; i++) {
		const char *a = unpkg_fsclass_name((enum unpkg_fsclass)i);

		ck_assert_ptr_nonnull(a);
		ck_assert_str_ne(a, "");
		ck_assert_str_ne(a, "?");
		for (j = 0; j < i; j++)
			ck_assert_str_ne(a, unpkg_fsclass_name((enum unpkg_fsclass)j));
	}
	ck_assert_str_eq(unpkg_fsclass_name(UNPKG_FSCLASS_EXT4), "ext4");
	ck_assert_str_eq(unpkg_fsclass_name(UNPKG_FSCLASS_EXT2), "ext2");
	ck_assert_str_eq(unpkg_fsclass_name(UNPKG_FSCLASS_COUNT), "?");
	ck_assert_str_eq(unpkg_fsclass_name((enum unpkg_fsclass)-1), "?");
}
END_TEST

/* The measured choices of doc/benchmarks.md; a change of the table must
 * come with new measurements and a change here. */
START_TEST(test_table)
{
	static const struct {
		enum unpkg_fsclass cls;
		enum unpkg_sync_mode mode;
	} want[] = {
		{ UNPKG_FSCLASS_EXT4, UNPKG_SYNC_SYNCFS },
		{ UNPKG_FSCLASS_EXT2, UNPKG_SYNC_URING },
		{ UNPKG_FSCLASS_XFS, UNPKG_SYNC_SYNCFS },
		{ UNPKG_FSCLASS_BTRFS, UNPKG_SYNC_SYNCFS },
		{ UNPKG_FSCLASS_TMPFS, UNPKG_SYNC_SYNCFS },
		{ UNPKG_FSCLASS_OVERLAY, UNPKG_SYNC_SYNCFS },
		{ UNPKG_FSCLASS_OTHER, UNPKG_SYNC_URING },
	};
	size_t i;

	ck_assert_uint_eq(sizeof(want) / sizeof(want[0]), UNPKG_FSCLASS_COUNT);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_msg(unpkg_sync_auto(want[i].cls) == want[i].mode,
			      "auto on %s: %s, expected %s",
			      unpkg_fsclass_name(want[i].cls),
			      unpkg_sync_mode_name(unpkg_sync_auto(want[i].cls)),
			      unpkg_sync_mode_name(want[i].mode));
	ck_assert_int_eq(unpkg_sync_auto(UNPKG_FSCLASS_COUNT),
			 unpkg_sync_auto(UNPKG_FSCLASS_OTHER));
	ck_assert_int_eq(unpkg_sync_auto((enum unpkg_fsclass)-1),
			 unpkg_sync_auto(UNPKG_FSCLASS_OTHER));
}
END_TEST

/* Whatever the table says, it must keep the guarantees and never be
 * --force-unsafe-io. */
START_TEST(test_table_is_safe)
{
	int i;

	for (i = 0; i < UNPKG_FSCLASS_COUNT; i++) {
		enum unpkg_sync_mode m = unpkg_sync_auto((enum unpkg_fsclass)i);

		ck_assert_int_ne(m, UNPKG_SYNC_NONE);
		ck_assert_int_lt(m, UNPKG_SYNC_COUNT);
		ck_assert_msg(unpkg_sync_full(m, (enum unpkg_fsclass)i),
			      "auto picks %s on %s, which is not safe there",
			      unpkg_sync_mode_name(m),
			      unpkg_fsclass_name((enum unpkg_fsclass)i));
	}
}
END_TEST

START_TEST(test_full)
{
	int i;

	for (i = 0; i < UNPKG_FSCLASS_COUNT; i++) {
		enum unpkg_fsclass c = (enum unpkg_fsclass)i;

		ck_assert_int_eq(unpkg_sync_full(UNPKG_SYNC_DPKG, c), 1);
		ck_assert_int_eq(unpkg_sync_full(UNPKG_SYNC_BATCH, c), 1);
		ck_assert_int_eq(unpkg_sync_full(UNPKG_SYNC_URING, c), 1);
		ck_assert_int_eq(unpkg_sync_full(UNPKG_SYNC_NONE, c),
				 c == UNPKG_FSCLASS_TMPFS);
		ck_assert_int_eq(unpkg_sync_full(UNPKG_SYNC_SYNCFS, c),
				 c != UNPKG_FSCLASS_EXT2 && c != UNPKG_FSCLASS_OTHER);
		ck_assert_int_eq(unpkg_sync_full(UNPKG_SYNC_COUNT, c), 0);
	}
	/* Out of range counts as other. */
	ck_assert_int_eq(unpkg_sync_full(UNPKG_SYNC_SYNCFS, UNPKG_FSCLASS_COUNT), 0);
	ck_assert_int_eq(unpkg_sync_full(UNPKG_SYNC_URING, UNPKG_FSCLASS_COUNT), 1);
}
END_TEST

/* Where a commit orders the data before it: ext4 with a journal and xfs
 * only (not btrfs, nor ext2, tmpfs, overlayfs, other, nor out of range). */
START_TEST(test_commit_orders)
{
	int i;

	for (i = 0; i <= UNPKG_FSCLASS_COUNT; i++)
		ck_assert_int_eq(unpkg_fsclass_commit_orders(
					 (enum unpkg_fsclass)i),
				 i == UNPKG_FSCLASS_EXT4 ||
				 i == UNPKG_FSCLASS_XFS);
}
END_TEST

START_TEST(test_set)
{
	static const enum unpkg_fsclass
		ext4[] = { UNPKG_FSCLASS_EXT4, UNPKG_FSCLASS_EXT4 },
		ext4_xfs[] = { UNPKG_FSCLASS_EXT4, UNPKG_FSCLASS_XFS },
		tmpfs_btrfs[] = { UNPKG_FSCLASS_TMPFS, UNPKG_FSCLASS_BTRFS },
		ext4_ext2[] = { UNPKG_FSCLASS_EXT4, UNPKG_FSCLASS_EXT2 },
		ovl_other[] = { UNPKG_FSCLASS_OVERLAY, UNPKG_FSCLASS_OTHER },
		ext2_other[] = { UNPKG_FSCLASS_EXT2, UNPKG_FSCLASS_OTHER },
		xfs_ext2_xfs[] = { UNPKG_FSCLASS_XFS, UNPKG_FSCLASS_EXT2,
				   UNPKG_FSCLASS_XFS };
	enum unpkg_sync_mode m;
	size_t i, j;

	ck_assert_int_eq(unpkg_sync_auto_set(ext4, 2), UNPKG_SYNC_SYNCFS);
	ck_assert_int_eq(unpkg_sync_auto_set(ext4, 1), UNPKG_SYNC_SYNCFS);
	ck_assert_int_eq(unpkg_sync_auto_set(ext4_xfs, 2), UNPKG_SYNC_SYNCFS);
	ck_assert_int_eq(unpkg_sync_auto_set(tmpfs_btrfs, 2), UNPKG_SYNC_SYNCFS);
	ck_assert_int_eq(unpkg_sync_auto_set(ext4_ext2, 2), UNPKG_SYNC_URING);
	ck_assert_int_eq(unpkg_sync_auto_set(ovl_other, 2), UNPKG_SYNC_URING);
	ck_assert_int_eq(unpkg_sync_auto_set(ext2_other, 2), UNPKG_SYNC_URING);
	ck_assert_int_eq(unpkg_sync_auto_set(xfs_ext2_xfs, 3), UNPKG_SYNC_URING);
	ck_assert_int_eq(unpkg_sync_auto_set(NULL, 0),
			 unpkg_sync_auto(UNPKG_FSCLASS_OTHER));

	/* Every pair: the choice is safe on both, and a single class gives
	 * the table's choice. */
	for (i = 0; i < UNPKG_FSCLASS_COUNT; i++) {
		for (j = 0; j < UNPKG_FSCLASS_COUNT; j++) {
			enum unpkg_fsclass pair[2] = {
				(enum unpkg_fsclass)i, (enum unpkg_fsclass)j
			};

			m = unpkg_sync_auto_set(pair, 2);
			ck_assert_int_eq(unpkg_sync_full(m, pair[0]), 1);
			ck_assert_int_eq(unpkg_sync_full(m, pair[1]), 1);
			ck_assert_int_ne(m, UNPKG_SYNC_NONE);
		}
		m = unpkg_sync_auto_set((enum unpkg_fsclass[]){
						(enum unpkg_fsclass)i }, 1);
		ck_assert_int_eq(m, unpkg_sync_auto((enum unpkg_fsclass)i));
	}
}
END_TEST

/* ---- classification from the magic number ------------------------------ */

#define EXT_MAGIC 0xEF53UL

START_TEST(test_magic)
{
	static const struct {
		unsigned long magic;
		enum unpkg_fsclass cls;
	} cases[] = {
		{ 0x58465342UL, UNPKG_FSCLASS_XFS },
		{ 0x9123683EUL, UNPKG_FSCLASS_BTRFS },
		/* f_type sign-extended from a 32-bit signed word */
		{ 0xFFFFFFFF9123683EULL & ~0UL, UNPKG_FSCLASS_BTRFS },
		{ 0x01021994UL, UNPKG_FSCLASS_TMPFS },
		{ 0x858458F6UL, UNPKG_FSCLASS_TMPFS },	/* ramfs */
		{ 0x794C7630UL, UNPKG_FSCLASS_OVERLAY },
		{ 0x6969UL, UNPKG_FSCLASS_OTHER },	/* nfs */
		{ 0x65735546UL, UNPKG_FSCLASS_OTHER },	/* fuse */
		{ 0x4D44UL, UNPKG_FSCLASS_OTHER },	/* vfat */
		{ 0x9FA0UL, UNPKG_FSCLASS_OTHER },	/* proc */
		{ 0UL, UNPKG_FSCLASS_OTHER },
	};
	struct unpkg_err err;
	enum unpkg_fsclass c;
	const char *source;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unpkg_err_init(&err);
		c = UNPKG_FSCLASS_COUNT;
		ck_assert_int_eq(unpkg_fsclass_classify(cases[i].magic,
							makedev(8, 1),
							"/nonexistent/sys",
							"/nonexistent/proc",
							&c, &source, &err), 0);
		ck_assert_msg(c == cases[i].cls, "magic %#lx: %s, expected %s",
			      cases[i].magic, unpkg_fsclass_name(c),
			      unpkg_fsclass_name(cases[i].cls));
		if (cases[i].magic != EXT_MAGIC)
			ck_assert_str_eq(source, "statfs");
	}
}
END_TEST

/* ---- the ext family on fake sysfs and procfs trees --------------------- */


struct fake {
	char *top;
	char sys[PATH_MAX];
	char proc[PATH_MAX];
};

static void mkdirs(const char *path)
{
	char buf[PATH_MAX], *p;

	ck_assert_uint_lt(strlen(path), sizeof(buf));
	strcpy(buf, path);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		ck_assert_msg(mkdir(buf, 0755) == 0 || errno == EEXIST,
			      "mkdir %s: %s", buf, strerror(errno));
		*p = '/';
	}
	ck_assert_msg(mkdir(buf, 0755) == 0 || errno == EEXIST, "mkdir %s: %s",
		      buf, strerror(errno));
}

static void fake_put(const char *base, const char *rel, const char *text)
{
	char path[PATH_MAX], dir[PATH_MAX], *slash;

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	strcpy(dir, path);
	slash = strrchr(dir, '/');
	*slash = '\0';
	mkdirs(dir);
	tu_write_file(path, text, 0644);
}

/* A fake tree in which block device 8:1 is "sda1". */
static void fake_init(struct fake *f)
{
	char link[PATH_MAX];

	f->top = tu_mkdtemp();
	snprintf(f->sys, sizeof(f->sys), "%s/sys", f->top);
	snprintf(f->proc, sizeof(f->proc), "%s/proc", f->top);
	ck_assert_int_lt(snprintf(link, sizeof(link), "%s/dev/block", f->top),
			 (int)sizeof(link) - 16);
	snprintf(link, sizeof(link), "%s/sys/dev/block", f->top);
	mkdirs(link);
	mkdirs(f->proc);
	strcat(link, "/8:1");
	ck_assert_int_eq(symlink("../../devices/pci0000:00/0000:00:1f.2/"
				 "ata1/host0/target0:0:0/0:0:0:0/block/sda/sda1",
				 link), 0);
}

static void fake_free(struct fake *f)
{
	tu_rm_rf(f->top);
	free(f->top);
}

/* The class of an ext file system on `dev` in the fake trees; what told
 * it goes to *source unless that is NULL. */
static enum unpkg_fsclass fake_classify_by(const struct fake *f, dev_t dev,
					   const char **source)
{
	struct unpkg_err err;
	enum unpkg_fsclass c = UNPKG_FSCLASS_COUNT;

	unpkg_err_init(&err);
	ck_assert_msg(unpkg_fsclass_classify(EXT_MAGIC, dev, f->sys, f->proc,
					     &c, source, &err) == 0, "%s",
		      err.msg);
	return c;
}

static enum unpkg_fsclass fake_classify(const struct fake *f, dev_t dev)
{
	return fake_classify_by(f, dev, NULL);
}

/* What told the class of `dev`, as --stats shows it. */
static const char *fake_source(const struct fake *f, dev_t dev)
{
	const char *source = NULL;

	fake_classify_by(f, dev, &source);
	ck_assert_ptr_nonnull(source);
	return source;
}

static const char options_journal[] =
	"rw\nbsddf\nnogrpid\nblock_validity\ndelalloc\nbarrier\n"
	"user_xattr\nacl\nerrors=continue\ncommit=5\ndata=ordered\n"
	"inode_readahead_blks=32\n";
static const char options_nojournal[] =
	"rw\nbsddf\nnogrpid\nblock_validity\nnodelalloc\nbarrier\n"
	"user_xattr\nacl\nerrors=continue\ndata_err=ignore\ncommit=5\n"
	"inode_readahead_blks=32\n";

START_TEST(test_ext_journal_task)
{
	struct fake f;

	fake_init(&f);
	/* Options that say the opposite: journal_task comes first. */
	fake_put(f.proc, "fs/ext4/sda1/options", options_nojournal);
	fake_put(f.sys, "fs/ext4/sda1/journal_task", "1234\n");
	ck_assert_int_eq(fake_classify(&f, makedev(8, 1)), UNPKG_FSCLASS_EXT4);
	ck_assert_str_eq(fake_source(&f, makedev(8, 1)),
			 "/sys/dev/block, /sys/fs/ext4/DEV/journal_task");
	fake_put(f.sys, "fs/ext4/sda1/journal_task", "<none>\n");
	fake_put(f.proc, "fs/ext4/sda1/options", options_journal);
	ck_assert_int_eq(fake_classify(&f, makedev(8, 1)), UNPKG_FSCLASS_EXT2);
	fake_free(&f);
}
END_TEST

/* ext4 orders the data before a commit with barriers on and
 * journal_async_commit off, as its options say; without them, or where
 * they cannot be read, it counts as not ordering. */
START_TEST(test_commit_orders_options)
{
	struct unpkg_err err;
	struct fake f;
	dev_t d = makedev(8, 1);

	fake_init(&f);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_fsclass_commit_orders_dev(UNPKG_FSCLASS_EXT4,
			 d, f.sys, f.proc, &err), 0);
	fake_put(f.proc, "fs/ext4/sda1/options", options_journal);
	ck_assert_int_eq(unpkg_fsclass_commit_orders_dev(UNPKG_FSCLASS_EXT4,
			 d, f.sys, f.proc, &err), 1);
	fake_put(f.proc, "fs/ext4/sda1/options",
		 "rw\nnobarrier\ndata=ordered\n");
	ck_assert_int_eq(unpkg_fsclass_commit_orders_dev(UNPKG_FSCLASS_EXT4,
			 d, f.sys, f.proc, &err), 0);
	fake_put(f.proc, "fs/ext4/sda1/options",
		 "rw\nbarrier\njournal_async_commit\ndata=ordered\n");
	ck_assert_int_eq(unpkg_fsclass_commit_orders_dev(UNPKG_FSCLASS_EXT4,
			 d, f.sys, f.proc, &err), 0);
	/* the others by their class alone */
	ck_assert_int_eq(unpkg_fsclass_commit_orders_dev(UNPKG_FSCLASS_XFS,
			 d, f.sys, f.proc, &err), 1);
	ck_assert_int_eq(unpkg_fsclass_commit_orders_dev(UNPKG_FSCLASS_BTRFS,
			 d, f.sys, f.proc, &err), 0);
	ck_assert_int_eq(unpkg_fsclass_commit_orders_dev(UNPKG_FSCLASS_EXT2,
			 d, f.sys, f.proc, &err), 0);
	fake_free(&f);
}
END_TEST

START_TEST(test_ext_options)
{
	struct fake f;

	fake_init(&f);
	fake_put(f.proc, "fs/ext4/sda1/options", options_journal);
	ck_assert_int_eq(fake_classify(&f, makedev(8, 1)), UNPKG_FSCLASS_EXT4);
	ck_assert_str_eq(fake_source(&f, makedev(8, 1)),
			 "/sys/dev/block, /proc/fs/ext4/DEV/options");
	/* data_err= is not data=. */
	fake_put(f.proc, "fs/ext4/sda1/options", options_nojournal);
	ck_assert_int_eq(fake_classify(&f, makedev(8, 1)), UNPKG_FSCLASS_EXT2);
	/* Comma-separated, as in mount options. */
	fake_put(f.proc, "fs/ext4/sda1/options", "rw,data=writeback,commit=5");
	ck_assert_int_eq(fake_classify(&f, makedev(8, 1)), UNPKG_FSCLASS_EXT4);
	/* An unreadable journal_task (neither number nor <none>) falls
	 * through to the options. */
	fake_put(f.sys, "fs/ext4/sda1/journal_task", "?\n");
	ck_assert_int_eq(fake_classify(&f, makedev(8, 1)), UNPKG_FSCLASS_EXT4);
	fake_free(&f);
}
END_TEST

START_TEST(test_ext_mountinfo)
{
	struct fake f;

	fake_init(&f);
	/* The ext4 driver does not know sda1: the old drivers, by type.
	 * 8:10 comes first and must not be taken for 8:1. */
	fake_put(f.proc, "self/mountinfo",
		 "22 1 0:21 / /proc rw,nosuid shared:5 - proc proc rw\n"
		 "30 1 8:10 / /data rw,relatime shared:1 - ext3 /dev/sda10 rw\n"
		 "31 1 8:1 / / rw,relatime shared:1 master:2 - ext2 /dev/sda1 rw\n");
	ck_assert_int_eq(fake_classify(&f, makedev(8, 1)), UNPKG_FSCLASS_EXT2);
	ck_assert_int_eq(fake_classify(&f, makedev(8, 10)), UNPKG_FSCLASS_EXT4);
	ck_assert_str_eq(fake_source(&f, makedev(8, 10)),
			 "/proc/self/mountinfo");
	/* A device mounted nowhere, and one the ext4 driver would have to
	 * know: other (the strategy safe either way). */
	ck_assert_int_eq(fake_classify(&f, makedev(8, 2)), UNPKG_FSCLASS_OTHER);
	ck_assert_str_eq(fake_source(&f, makedev(8, 2)),
			 "nothing readable under /sys or /proc");
	fake_put(f.proc, "self/mountinfo",
		 "31 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n");
	ck_assert_int_eq(fake_classify(&f, makedev(8, 1)), UNPKG_FSCLASS_OTHER);
	/* The ext4 driver's view wins over the mount type. */
	fake_put(f.sys, "fs/ext4/sda1/journal_task", "<none>\n");
	ck_assert_int_eq(fake_classify(&f, makedev(8, 1)), UNPKG_FSCLASS_EXT2);
	fake_free(&f);
}
END_TEST

/* No sysfs, as in a chroot: the kernel's name of the device comes from
 * /proc/partitions, and the ext4 driver's options under /proc tell the
 * journal. */
START_TEST(test_ext_no_sys)
{
	struct fake f;

	fake_init(&f);
	snprintf(f.sys, sizeof(f.sys), "%s/no-sys", f.top);
	fake_put(f.proc, "partitions",
		 "major minor  #blocks  name\n\n"
		 "   8       10      1024 sda10\n"
		 "   8        1   1048576 sda1\n"
		 " 254        0 268435456 vda\n");
	fake_put(f.proc, "fs/ext4/sda1/options", options_journal);
	fake_put(f.proc, "fs/ext4/sda10/options", options_nojournal);
	ck_assert_int_eq(fake_classify(&f, makedev(8, 1)), UNPKG_FSCLASS_EXT4);
	ck_assert_str_eq(fake_source(&f, makedev(8, 1)),
			 "/proc/partitions, /proc/fs/ext4/DEV/options");
	ck_assert_int_eq(fake_classify(&f, makedev(8, 10)), UNPKG_FSCLASS_EXT2);
	/* not listed: the mount type, then other */
	ck_assert_int_eq(fake_classify(&f, makedev(8, 2)), UNPKG_FSCLASS_OTHER);
	fake_free(&f);
}
END_TEST

START_TEST(test_ext_nothing)
{
	struct unpkg_err err;
	enum unpkg_fsclass c = UNPKG_FSCLASS_COUNT;

	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_fsclass_classify(EXT_MAGIC, makedev(8, 1),
						"/nonexistent/sys",
						"/nonexistent/proc", &c, NULL,
						&err), 0);
	ck_assert_int_eq(c, UNPKG_FSCLASS_OTHER);
	ck_assert_int_eq(err.code, UNPKG_ERR_NONE);
}
END_TEST

START_TEST(test_detect_errors)
{
	struct unpkg_err err;
	enum unpkg_fsclass c;
	enum unpkg_wb_path wb;
	int fd;

	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_fsclass_detect(-1, &c, NULL, &err), -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_SYS);
	ck_assert_int_eq(err.errnum, EBADF);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_fsclass_commit_orders_fd(-1, &wb, &err), -1);
	ck_assert_int_eq(err.errnum, EBADF);

	/* procfs is "other". */
	fd = open("/proc", O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		tu_skip_part("procfs classified as other", "no /proc");
		return;
	}
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_fsclass_detect(fd, &c, NULL, &err), 0);
	ck_assert_int_eq(c, UNPKG_FSCLASS_OTHER);
	close(fd);
}
END_TEST

/* ---- real filesystems on loop images (root) ----------------------------- */

struct realfs {
	const char *label;
	const char *mkfs[8];	/* the image path is appended */
	const char *type;	/* mount -t */
	const char *size;	/* image size */
	enum unpkg_fsclass want;
	char mnt[PATH_MAX];
	int ok;
	/* an overlay: the realfs whose mount holds its upper and work
	 * directories (NULL: the scratch directory), and its upper
	 * directory */
	const char *upper_on;
	char upper[PATH_MAX];
};

static struct realfs realfs[] = {
	{ "ext4", { "mkfs.ext4", "-q", "-F" }, "ext4", "64M",
	  UNPKG_FSCLASS_EXT4, "", 0, NULL, "" },
	{ "ext4-nojournal", { "mkfs.ext4", "-q", "-F", "-O", "^has_journal" },
	  "ext4", "64M", UNPKG_FSCLASS_EXT2, "", 0, NULL, "" },
	{ "ext3", { "mkfs.ext3", "-q", "-F" }, "ext3", "64M",
	  UNPKG_FSCLASS_EXT4, "", 0, NULL, "" },
	{ "ext2", { "mkfs.ext2", "-q", "-F" }, "ext2", "64M",
	  UNPKG_FSCLASS_EXT2, "", 0, NULL, "" },
	{ "xfs", { "mkfs.xfs", "-q", "-f" }, "xfs", "320M",
	  UNPKG_FSCLASS_XFS, "", 0, NULL, "" },
	{ "btrfs", { "mkfs.btrfs", "-q", "-f" }, "btrfs", "256M",
	  UNPKG_FSCLASS_BTRFS, "", 0, NULL, "" },
	{ "tmpfs", { NULL }, "tmpfs", NULL,
	  UNPKG_FSCLASS_TMPFS, "", 0, NULL, "" },
	{ "overlay", { NULL }, "overlay", NULL,
	  UNPKG_FSCLASS_OVERLAY, "", 0, NULL, "" },
	{ "overlay-ext4", { NULL }, "overlay", NULL,
	  UNPKG_FSCLASS_OVERLAY, "", 0, "ext4", "" },
	{ "overlay-xfs", { NULL }, "overlay", NULL,
	  UNPKG_FSCLASS_OVERLAY, "", 0, "xfs", "" },
	{ "overlay-btrfs", { NULL }, "overlay", NULL,
	  UNPKG_FSCLASS_OVERLAY, "", 0, "btrfs", "" },
};
#define N_REALFS (sizeof(realfs) / sizeof(realfs[0]))

static char *scratch;

static const struct realfs *realfs_named(const char *label)
{
	size_t i;

	for (i = 0; i < N_REALFS; i++)
		if (strcmp(realfs[i].label, label) == 0)
			return &realfs[i];
	return NULL;
}

static int in_path(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (!path || !*path)
		path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, prog);
		if (access(buf, X_OK) == 0)
			return 1;
		path += n;
		if (*path == ':')
			path++;
	}
	return 0;
}

/* Make and mount realfs[i]; 0 on success, else prints why not. */
static int realfs_up(struct realfs *r)
{
	char img[PATH_MAX], dirs[3][PATH_MAX], opts[4 * PATH_MAX];
	const char *argv[12];
	int i, n;

	snprintf(r->mnt, sizeof(r->mnt), "%s/%s", scratch, r->label);
	if (mkdir(r->mnt, 0755) != 0) {
		fprintf(stderr, "check_fsclass: mkdir %s: %s\n", r->mnt,
			strerror(errno));
		return -1;
	}
	if (strcmp(r->type, "tmpfs") == 0) {
		const char *mnt[] = { "mount", "-t", "tmpfs", "-o", "size=16m",
				      "unpkg-test", r->mnt, NULL };

		if (tu_run_quiet(mnt) != 0) {
			fprintf(stderr, "check_fsclass: cannot mount tmpfs\n");
			return -1;
		}
		return 0;
	}
	if (strcmp(r->type, "overlay") == 0) {
		/* lower on the scratch directory's fs, upper and work there
		 * too or on the file system named */
		static const char *names[] = { "lower", "upper", "work" };
		const char *base = scratch;

		if (r->upper_on != NULL) {
			const struct realfs *u = realfs_named(r->upper_on);

			if (u == NULL || !u->ok) {
				fprintf(stderr, "check_fsclass: no %s for the "
					"upper layer\n", r->upper_on);
				return -1;
			}
			base = u->mnt;
		}
		for (i = 0; i < 3; i++) {
			snprintf(dirs[i], sizeof(dirs[i]), "%s/%s-%s",
				 i == 0 ? scratch : base, r->label, names[i]);
			if (mkdir(dirs[i], 0755) != 0)
				return -1;
		}
		/* a directory of the lower layer, merged in the overlay, as
		 * a container's /var/lib/dpkg */
		snprintf(opts, sizeof(opts), "%s/merged", dirs[0]);
		if (mkdir(opts, 0755) != 0)
			return -1;
		snprintf(r->upper, sizeof(r->upper), "%s", dirs[1]);
		snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s",
			 dirs[0], dirs[1], dirs[2]);
		const char *mnt[] = { "mount", "-t", "overlay", "-o", opts,
				      "unpkg-test", r->mnt, NULL };
		if (tu_run_quiet(mnt) != 0) {
			fprintf(stderr, "check_fsclass: cannot mount an overlay "
				"(no overlay module, or the scratch filesystem "
				"cannot be an upper directory)\n");
			return -1;
		}
		return 0;
	}
	if (!in_path(r->mkfs[0])) {
		fprintf(stderr, "check_fsclass: %s not found\n", r->mkfs[0]);
		return -1;
	}
	snprintf(img, sizeof(img), "%s/%s.img", scratch, r->label);
	{
		const char *trunc[] = { "truncate", "-s", r->size, img, NULL };

		if (tu_run_quiet(trunc) != 0) {
			fprintf(stderr, "check_fsclass: cannot create %s\n", img);
			return -1;
		}
	}
	for (n = 0; r->mkfs[n]; n++)
		argv[n] = r->mkfs[n];
	argv[n++] = img;
	argv[n] = NULL;
	if (tu_run_quiet(argv) != 0) {
		fprintf(stderr, "check_fsclass: %s failed\n", r->mkfs[0]);
		return -1;
	}
	{
		const char *mnt[] = { "mount", "-o", "loop", "-t", r->type, img,
				      r->mnt, NULL };

		if (tu_run_quiet(mnt) != 0) {
			fprintf(stderr, "check_fsclass: cannot mount %s as %s "
				"(no loop device, or no %s in this kernel)\n",
				img, r->type, r->type);
			return -1;
		}
	}
	return 0;
}

static void realfs_down(struct realfs *r)
{
	const char *umnt[] = { "umount", r->mnt, NULL };

	if (r->ok && tu_run_quiet(umnt) != 0)
		fprintf(stderr, "check_fsclass: umount %s failed\n", r->mnt);
	r->ok = 0;
}

static enum unpkg_fsclass detect_path(const char *path)
{
	struct unpkg_err err;
	enum unpkg_fsclass c = UNPKG_FSCLASS_COUNT;
	int fd;

	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
	unpkg_err_init(&err);
	ck_assert_msg(unpkg_fsclass_detect(fd, &c, NULL, &err) == 0, "%s", err.msg);
	close(fd);
	return c;
}

/* unpkg_fsclass_commit_orders_at() on the directory `path` with sysfs
 * and procfs under `sys` and `proc`, how in *wb. */
static int orders_path_at(const char *path, const char *sys,
			  const char *proc, enum unpkg_wb_path *wb)
{
	struct unpkg_err err;
	int fd, ordered;

	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
	unpkg_err_init(&err);
	ordered = unpkg_fsclass_commit_orders_at(fd, sys, proc, wb, &err);
	ck_assert_msg(ordered >= 0, "%s", err.msg);
	close(fd);
	return ordered;
}

/* The same with the system's /sys and /proc, which must say the files'
 * writeback is reached through an overlay exactly where `path` is one
 * that orders its commits. */
static int orders_path(const char *path)
{
	enum unpkg_wb_path wb;
	int ordered = orders_path_at(path, "/sys", "/proc", &wb);

	ck_assert_int_eq(wb, ordered && detect_path(path) ==
					       UNPKG_FSCLASS_OVERLAY
				     ? UNPKG_WB_OVERLAY : UNPKG_WB_RANGE);
	return ordered;
}

static int copies_up_path(const char *path)
{
	struct unpkg_err err;
	int fd, copies;

	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
	unpkg_err_init(&err);
	copies = unpkg_fsclass_copies_up(fd, &err);
	ck_assert_msg(copies >= 0, "%s", err.msg);
	close(fd);
	ck_assert_int_eq(unpkg_fsclass_copies_up(-1, &err), -1);
	return copies;
}

START_TEST(test_real)
{
	struct realfs *r = &realfs[_i];
	char sub[PATH_MAX];
	enum unpkg_fsclass c;

	if (!r->ok)
		return;
	c = detect_path(r->mnt);
	ck_assert_msg(c == r->want, "%s: %s, expected %s", r->label,
		      unpkg_fsclass_name(c), unpkg_fsclass_name(r->want));
	/* A directory below the mount point is on the same filesystem. */
	snprintf(sub, sizeof(sub), "%s/var-lib-dpkg", r->mnt);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	ck_assert_int_eq(detect_path(sub), r->want);
	ck_assert_int_eq(rmdir(sub), 0);
	/* ordered commits: ext4 with a journal (made with barriers) and
	 * xfs alone, and an overlay where its upper layer's file system
	 * orders them */
	if (r->want == UNPKG_FSCLASS_OVERLAY)
		ck_assert_int_eq(orders_path(r->mnt), orders_path(r->upper));
	else
		ck_assert_int_eq(orders_path(r->mnt),
				 r->want == UNPKG_FSCLASS_EXT4 ||
					 r->want == UNPKG_FSCLASS_XFS);
	/* only an overlay copies a file up to move it */
	ck_assert_int_eq(copies_up_path(r->mnt),
			 r->want == UNPKG_FSCLASS_OVERLAY);
}
END_TEST

/* A fake tree for an overlay's checks: procfs's fs/ and partitions the
 * real ones (the ext4 driver's options), mountinfo written by
 * orders_with(). */
static void fake_overlay_init(struct fake *f)
{
	char link[PATH_MAX + 16];

	fake_init(f);
	snprintf(link, sizeof(link), "%s/fs", f->proc);
	ck_assert_int_eq(symlink("/proc/fs", link), 0);
	snprintf(link, sizeof(link), "%s/partitions", f->proc);
	ck_assert_int_eq(symlink("/proc/partitions", link), 0);
}

/* orders_path_at() of the overlay mounted on `ovl` with the fake tree,
 * whose mountinfo names `upper` as the overlay's upper directory and
 * holds the line `more` after it ("" for none); how in *wb. */
static int orders_with(const struct fake *f, const char *ovl,
		       const char *upper, const char *more,
		       enum unpkg_wb_path *wb)
{
	char line[4 * PATH_MAX];
	struct stat st;

	ck_assert_int_eq(stat(ovl, &st), 0);
	snprintf(line, sizeof(line), "99 1 %u:%u / /ov rw - overlay overlay "
		 "rw,lowerdir=/l,upperdir=%s,workdir=/w\n%s",
		 major(st.st_dev), minor(st.st_dev), upper, more);
	fake_put(f->proc, "self/mountinfo", line);
	return orders_path_at(ovl, "/sys", f->proc, wb);
}

/* An overlay on xfs, with mountinfo faked to name its upper directory:
 * where it names its own, the overlay orders its commits; where it names
 * another file system's directory, even one whose commits are ordered
 * (an ext4's, whose options the fake procfs shows through a link to the
 * real one), or a path that does not exist, it does not. */
START_TEST(test_overlay_upper_named)
{
	const struct realfs *ov = realfs_named("overlay-xfs");
	const struct realfs *ext4 = realfs_named("ext4");
	struct fake f;
	enum unpkg_wb_path wb;
	char gone[PATH_MAX + 8];

	if (!ov->ok || !ext4->ok) {
		tu_skip_part("an overlay's upper directory as mountinfo names "
			     "it", "no overlay on xfs, or no ext4 (above)");
		return;
	}
	fake_overlay_init(&f);
	ck_assert_int_eq(orders_path_at(ext4->mnt, "/sys", f.proc, &wb), 1);
	ck_assert_int_eq(orders_with(&f, ov->mnt, ov->upper, "", &wb), 1);
	ck_assert_int_eq(wb, UNPKG_WB_OVERLAY);
	ck_assert_int_eq(orders_with(&f, ov->mnt, ext4->mnt, "", &wb), 0);
	ck_assert_int_eq(wb, UNPKG_WB_RANGE);
	snprintf(gone, sizeof(gone), "%s/gone", ov->upper);
	ck_assert_int_eq(orders_with(&f, ov->mnt, gone, "", &wb), 0);
	fake_free(&f);
}
END_TEST

/* Whether this kernel tells an overlay's upper file system by its uuid:
 * the overlay's handle of `dir` (AT_HANDLE_FID, Linux 6.5) and the uuid
 * of the file system of `other` (FS_IOC_GETFSUUID, Linux 6.8). */
static int uuid_supported(const char *dir, const char *other)
{
	union {
		struct file_handle h;
		unsigned char raw[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} fh;
	struct {
		unsigned char len, uuid[16];
	} u;
	int mount_id, fd, ok;

	fh.h.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(AT_FDCWD, dir, &fh.h, &mount_id, 0x200) != 0)
		return 0;
	fd = open(other, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ok = ioctl(fd, _IOR(0x15, 0, u), &u) == 0;
	close(fd);
	return ok;
}

/* An overlay on ext4 whose upper directory is out of sight, as from inside
 * a container (mountinfo names a path that does not exist): its upper
 * layer's file system is found by the uuid in the overlay's handle among
 * the mounts in view, there the ext4 the layers lie on; where only the
 * xfs is in view, or no mount, it is not, and the overlay does not
 * order its commits. */
START_TEST(test_overlay_upper_hidden)
{
	const struct realfs *ov = realfs_named("overlay-ext4");
	const struct realfs *ext4 = realfs_named("ext4");
	const struct realfs *xfs = realfs_named("xfs");
	struct fake f;
	enum unpkg_wb_path wb;
	char more[PATH_MAX + 64], merged[PATH_MAX + 8];

	if (!ov->ok || !ext4->ok || !xfs->ok) {
		tu_skip_part("an overlay's upper layer found by its uuid",
			     "no overlay on ext4, or no ext4 or xfs (above)");
		return;
	}
	if (!uuid_supported(ov->mnt, ext4->mnt)) {
		tu_skip_part("an overlay's upper layer found by its uuid",
			     "the kernel has no AT_HANDLE_FID (Linux 6.5) or "
			     "FS_IOC_GETFSUUID (Linux 6.8)");
		return;
	}
	fake_overlay_init(&f);
	snprintf(more, sizeof(more), "100 1 7:1 / %s rw - ext4 /dev/loop1 rw\n",
		 ext4->mnt);
	ck_assert_int_eq(orders_with(&f, ov->mnt, "/gone/upper", more, &wb), 1);
	ck_assert_int_eq(wb, UNPKG_WB_OVERLAY);
	/* a directory of the lower layer, whose handle stands for its lower
	 * inode: found through the overlay's root */
	snprintf(merged, sizeof(merged), "%s/merged", ov->mnt);
	ck_assert_int_eq(orders_with(&f, merged, "/gone/upper", more, &wb), 1);
	ck_assert_int_eq(wb, UNPKG_WB_OVERLAY);
	snprintf(more, sizeof(more), "100 1 7:2 / %s rw - xfs /dev/loop2 rw\n",
		 xfs->mnt);
	ck_assert_int_eq(orders_with(&f, ov->mnt, "/gone/upper", more, &wb), 0);
	ck_assert_int_eq(wb, UNPKG_WB_RANGE);
	ck_assert_int_eq(orders_with(&f, ov->mnt, "/gone/upper", "", &wb), 0);
	fake_free(&f);
}
END_TEST

/* The fallbacks on the real /proc: with sysfs hidden (a chroot without
 * /sys), /proc/partitions names the device and the ext4 driver's options
 * under /proc decide, as they do with the ext4 driver's sysfs directory
 * hidden (a kernel without journal_task). */
START_TEST(test_real_fallbacks)
{
	struct realfs *r = &realfs[_i];
	struct unpkg_err err;
	struct statfs sfs;
	struct stat st;
	char link[PATH_MAX], target[PATH_MAX], fake[PATH_MAX];
	enum unpkg_fsclass c;
	ssize_t n;
	int fd;

	if (!r->ok)
		return;
	fd = open(r->mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstatfs(fd, &sfs), 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	close(fd);

	unpkg_err_init(&err);
	c = UNPKG_FSCLASS_COUNT;
	ck_assert_int_eq(unpkg_fsclass_classify((unsigned long)sfs.f_type,
						st.st_dev, "/nonexistent/sys",
						"/proc", &c, NULL, &err), 0);
	ck_assert_msg(c == r->want, "%s without sysfs: %s, expected %s",
		      r->label, unpkg_fsclass_name(c),
		      unpkg_fsclass_name(r->want));

	if (((unsigned long)sfs.f_type & 0xFFFFFFFFUL) != EXT_MAGIC)
		return;
	/* A sysfs with the device link but no fs/ext4. */
	snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", major(st.st_dev),
		 minor(st.st_dev));
	n = readlink(link, target, sizeof(target) - 1);
	ck_assert_msg(n > 0, "readlink %s: %s", link, strerror(errno));
	target[n] = '\0';
	snprintf(fake, sizeof(fake), "%s/fakesys-%s/dev/block", scratch, r->label);
	mkdirs(fake);
	snprintf(fake + strlen(fake), sizeof(fake) - strlen(fake), "/%u:%u",
		 major(st.st_dev), minor(st.st_dev));
	ck_assert_int_eq(symlink(target, fake), 0);
	snprintf(fake, sizeof(fake), "%s/fakesys-%s", scratch, r->label);
	unpkg_err_init(&err);
	c = UNPKG_FSCLASS_COUNT;
	ck_assert_int_eq(unpkg_fsclass_classify((unsigned long)sfs.f_type,
						st.st_dev, fake, "/proc", &c,
						NULL, &err), 0);
	ck_assert_msg(c == r->want, "%s by /proc/fs/ext4 options: %s, expected %s",
		      r->label, unpkg_fsclass_name(c), unpkg_fsclass_name(r->want));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fsclass");
	TCase *tc = tcase_create("core");
	TCase *real = tcase_create("real");
	size_t i;
	int rc, can_mount;
	char tmpl[PATH_MAX];
	const char *base = getenv("TMPDIR");

	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_table);
	tcase_add_test(tc, test_table_is_safe);
	tcase_add_test(tc, test_full);
	tcase_add_test(tc, test_commit_orders);
	tcase_add_test(tc, test_commit_orders_options);
	tcase_add_test(tc, test_set);
	tcase_add_test(tc, test_magic);
	tcase_add_test(tc, test_ext_journal_task);
	tcase_add_test(tc, test_ext_options);
	tcase_add_test(tc, test_ext_mountinfo);
	tcase_add_test(tc, test_ext_no_sys);
	tcase_add_test(tc, test_ext_nothing);
	tcase_add_test(tc, test_detect_errors);
	suite_add_tcase(s, tc);

	can_mount = geteuid() == 0 && access("/dev/loop-control", F_OK) == 0;
	if (!can_mount) {
		for (i = 0; i < N_REALFS; i++)
			tu_skip_part(realfs[i].label, geteuid() != 0 ?
				     "not root" : "no /dev/loop-control");
	} else {
		if (base == NULL || base[0] == '\0')
			base = "/tmp";
		snprintf(tmpl, sizeof(tmpl), "%s/unpkg-fsclass-XXXXXX", base);
		scratch = mkdtemp(tmpl);
		if (!scratch) {
			perror("check_fsclass: mkdtemp");
			return 1;
		}
		for (i = 0; i < N_REALFS; i++) {
			realfs[i].ok = realfs_up(&realfs[i]) == 0;
			if (!realfs[i].ok)
				tu_skip_part(realfs[i].label, "could not be "
					     "made or mounted here (above)");
		}
		tcase_set_timeout(real, 60);
		tcase_add_loop_test(real, test_real, 0, (int)N_REALFS);
		tcase_add_test(real, test_overlay_upper_named);
		tcase_add_test(real, test_overlay_upper_hidden);
		tcase_add_loop_test(real, test_real_fallbacks, 0, (int)N_REALFS);
		suite_add_tcase(s, real);
	}

	rc = tu_run_suite(s);

	if (scratch) {
		for (i = N_REALFS; i-- > 0;)
			realfs_down(&realfs[i]);
		tu_rm_rf(scratch);
	}
	return rc != 0 ? 1 : 0;
}
