/* strategy.h - the table of commit strategies and the --sync=auto choice.
 *
 * strategy.c stands above the transaction (commit.c) and the strategies
 * (commit-*.c): it maps an enum unpkg_sync_mode to a strategy's table of
 * operations for unpkg_commit_new() and unpkg_commit_new_flags() (declared
 * in commit.h with the rest of the transaction's interface), names the
 * strategies, and picks one per filesystem class for --sync=auto
 * (doc/benchmarks.md, "Choosing a strategy per filesystem (auto)"). */
#ifndef UNPKG_STRATEGY_H
#define UNPKG_STRATEGY_H

#include <stddef.h>
#include <sys/types.h>

#include "commit.h"
#include "err.h"
#include "fsclass.h"
#include "stats.h"

/* The strategy --sync=auto uses on a filesystem of class `cls`: the
 * fastest one measured that keeps the invariants I1-I7 of DESIGN.md
 * section 3 there (doc/benchmarks.md).  Never UNPKG_SYNC_NONE.  A value
 * out of range counts as UNPKG_FSCLASS_OTHER. */
enum unpkg_sync_mode unpkg_sync_auto(enum unpkg_fsclass cls);

/* Whether strategy `mode` keeps I1-I7 on a filesystem of class `cls`
 * (1) or not (0).  dpkg, batch and uring sync each file and directory and
 * are safe everywhere; syncfs is a full barrier on every class but ext2
 * (its syncfs leaves metadata written after the device flush) and other
 * (a filesystem's syncfs need not flush anything: FUSE without syncfs
 * support, vfat, NFS); none only on tmpfs, where nothing survives a power
 * loss and the order of operations is kept by the kernel anyway. */
int unpkg_sync_full(enum unpkg_sync_mode mode, enum unpkg_fsclass cls);

/* The strategy for a run whose files and database lie on several
 * filesystems, of the `n` classes in `classes` (repetitions allowed): the
 * table's choice when all the classes agree on it, otherwise the first of
 * syncfs, uring that unpkg_sync_full() accepts for every class (uring is
 * safe everywhere).  n == 0 gives the choice for UNPKG_FSCLASS_OTHER. */
enum unpkg_sync_mode unpkg_sync_auto_set(const enum unpkg_fsclass *classes,
					 size_t n);

/* syncfs writes back every dirty page of a file system, whoever dirtied
 * it: beside other programs' unwritten data (a neighbouring container on
 * the same disk, a big copy) it waits for all of it, and forces it out.
 * Above this much data waiting to be written back to the run's file
 * systems (unpkg_sync_dirty_for()), --sync=auto takes uring, which syncs
 * the run's own files only, where it would take syncfs.
 * doc/benchmarks.md, "`--sync=auto` beside other programs' dirty data",
 * has the measurements. */
#define UNPKG_SYNC_DIRTY_MAX_KIB (32LL * 1024)

/* Where the kernel's files are read: debugfs ("/sys/kernel/debug"), sysfs
 * ("/sys") and procfs ("/proc"); tests point them at fake trees. */
struct unpkg_dirty_paths {
	const char *debugfs;
	const char *sys;
	const char *proc;
};

/* The system's own: "/sys/kernel/debug", "/sys", "/proc". */
extern const struct unpkg_dirty_paths unpkg_dirty_paths_system;

/* The data waiting to be written back system-wide, in KiB, from
 * PROC/meminfo (Dirty plus Writeback; PROC is "/proc").  0 with *kib set;
 * 1 if it cannot be read or parsed. */
int unpkg_sync_dirty_kib(const char *proc, long long *kib);

/* One of the run's file systems, as its figure below needs it:
 * unpkg_sync_dirty_fs_of() fills it from a descriptor, tests by hand. */
struct unpkg_dirty_fs {
	dev_t dev;			/* st_dev of a file on it */
	enum unpkg_fsclass cls;		/* tmpfs: nothing to write back */
	char btrfs_fsid[37];		/* btrfs: its fsid as /sys/fs/btrfs
					 * names it ("" unknown, or not
					 * btrfs) */
};

/* *fs for the file system of the open file `fd`, of class `cls`: its
 * st_dev, and for btrfs its fsid (BTRFS_IOC_FS_INFO; left "" where the
 * ioctl fails).  0, or -1 if fstat() fails. */
int unpkg_sync_dirty_fs_of(int fd, enum unpkg_fsclass cls,
			   struct unpkg_dirty_fs *fs, struct unpkg_err *err);

/* The data waiting to be written back to the file system `fs`, in KiB,
 * from the writeback statistics of its backing device (bdi): BdiReclaimable
 * (dirty) plus BdiWriteback of DEBUGFS/bdi/NAME/stats.  The bdi is the
 * device fs->dev itself, NAME "MAJ:MIN" (ext4, xfs on a disk, a loop or a
 * device-mapper device); the whole disk for a partition (SYS/dev/block/
 * MAJ:MIN/partition; the figure then counts the disk's other partitions
 * too); for btrfs, whose st_dev is an anonymous device of each subvolume,
 * the file system's own bdi that SYS/fs/btrfs/FSID/bdi links to (NAME
 * "btrfs-N", one for all its subvolumes and devices); for an overlayfs
 * the bdi of its upper layer's directory's file system
 * (unpkg_fsclass_overlay_upper(), then the same for that file system).
 * The statistics count every cgroup's writeback only since Linux 6.10,
 * which added wb_stats beside them: without wb_stats they are not used.
 * A tmpfs (or ramfs, or an overlayfs whose upper layer is one) writes
 * nothing back: its figure is 0 whatever the statistics say, with *bdi "".
 * 0 with *kib and *bdi (the NAME whose statistics were read, `bdi_size`
 * bytes) set; 1 if the kernel offers no figure (debugfs not mounted or
 * not readable, an older kernel, btrfs without its fsid or sysfs link,
 * NFS, FUSE: anonymous devices without statistics of their own); -1 if
 * memory runs out. */
int unpkg_sync_fs_dirty_kib(const struct unpkg_dirty_paths *paths,
			    const struct unpkg_dirty_fs *fs, char *bdi,
			    size_t bdi_size, long long *kib,
			    struct unpkg_err *err);

/* The data a syncfs of each of the `n` file systems `fs` (the root's and
 * the database's) would write back, in *kib: the sum of
 * unpkg_sync_fs_dirty_kib() over their distinct backing devices, with
 * *scope UNPKG_DIRTY_DEVICES, the devices named in `names` ("254:0",
 * "254:0 7:3", "btrfs-2") and *in_memory 1 if one of them is a tmpfs,
 * whose 0 is in the sum; where the kernel offers no figure for one of
 * them, the whole machine's (unpkg_sync_dirty_kib()), UNPKG_DIRTY_MACHINE;
 * -1 and UNPKG_DIRTY_UNKNOWN if that cannot be read either (names "" and
 * *in_memory 0 for both).  0, or -1 if memory runs out. */
int unpkg_sync_dirty_for(const struct unpkg_dirty_paths *paths,
			 const struct unpkg_dirty_fs *fs, size_t n,
			 long long *kib, enum unpkg_dirty_scope *scope,
			 char *names, size_t names_size, int *in_memory,
			 struct unpkg_err *err);

/* The strategy --sync=auto takes when the file systems' choice is
 * `chosen` and `dirty_kib` KiB of data wait to be written back (-1:
 * unknown): uring instead of syncfs above `max_kib` (0 or less:
 * UNPKG_SYNC_DIRTY_MAX_KIB), `chosen` otherwise. */
enum unpkg_sync_mode unpkg_sync_auto_beside(enum unpkg_sync_mode chosen,
					    long long dirty_kib,
					    long long max_kib);

/* --sync=auto for a run: the strategy for the file systems of the root
 * (`root_fd`) and of the admin directory (`db_fd`), unpkg_sync_auto_set()
 * of their classes, in *mode; their names go to stats->fsclass ("ext4",
 * or "ext4+xfs" when they differ).  File systems mounted below the root
 * are the commit object's (UNPKG_COMMIT_PER_FS).  Where that choice is
 * syncfs, the data already waiting to be written back to those two file
 * systems decides (unpkg_sync_dirty_for(), unpkg_sync_auto_beside() with
 * `dirty_max_kib`); what was seen goes to stats->others_dirty_kib,
 * dirty_scope, dirty_devices, dirty_in_memory and dirty_avoided.  The
 * figure only chooses between two full barriers (syncfs, uring): a wrong
 * one costs time, never a guarantee.  It is not counted
 * (UNPKG_DIRTY_UNCOUNTED) where both file systems order their commits
 * (unpkg_fsclass_commit_orders_of() under `paths`; stats->ordered_overlay
 * where one does through an overlayfs's upper layer): there the syncfs
 * strategy calls no syncfs (commit-syncfs.c), so nobody's data waits
 * for the run, nor is written out by it. */
int unpkg_sync_choose_auto(int root_fd, int db_fd, long long dirty_max_kib,
			   struct unpkg_stats *stats,
			   enum unpkg_sync_mode *mode, struct unpkg_err *err);

/* The same with the kernel's files read under `paths` (tests). */
int unpkg_sync_choose_auto_at(const struct unpkg_dirty_paths *paths,
			      int root_fd, int db_fd, long long dirty_max_kib,
			      struct unpkg_stats *stats,
			      enum unpkg_sync_mode *mode,
			      struct unpkg_err *err);

#endif
