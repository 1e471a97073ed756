/* fsclass.h - the kind of filesystem a directory lies on (strategy.h
 * holds the commit strategy that --sync=auto picks for it).
 *
 * The classes are the groups of filesystems for which unpkg's strategies
 * were measured and their guarantees checked: doc/benchmarks.md, section
 * "Choosing a strategy per filesystem (auto)", has the measurements and
 * the reasoning behind unpkg_sync_auto() and unpkg_sync_full() (strategy.h).
 *
 * How a filesystem is recognised: fstatfs() gives the filesystem's magic
 * number, which tells xfs, btrfs, tmpfs (and ramfs) and overlayfs apart.
 * ext2, ext3 and ext4 share one magic number, and what matters for them is
 * whether the filesystem has a journal, which the mount type does not tell
 * (ext4 can be made without one, and the ext4 driver also mounts ext2 and
 * ext3).  So for them the device number of the fd (fstat) is turned into
 * the kernel's name of the block device (the /sys/dev/block/MAJ:MIN link,
 * or where /sys is missing, as in many chroots, the device's line in
 * /proc/partitions), and the ext4 driver's view of the mounted filesystem
 * is read:
 *   1. /sys/fs/ext4/NAME/journal_task: "<none>" without a journal, the pid
 *      of the journal thread with one (newer kernels);
 *   2. else /proc/fs/ext4/NAME/options: a "data=" option is listed exactly
 *      when the filesystem has a journal;
 *   3. else, when the ext4 driver does not know the device, the mount's
 *      type in /proc/self/mountinfo (by MAJ:MIN): "ext2" is the old ext2
 *      driver (no journal), "ext3" the old ext3 driver (journal).
 * When none of these can be read (no /sys or /proc), the class is
 * UNPKG_FSCLASS_OTHER, whose strategy is safe with and without a journal.
 */
#ifndef UNPKG_FSCLASS_H
#define UNPKG_FSCLASS_H

#include <stddef.h>
#include <sys/types.h>

#include "err.h"
#include "io.h"

enum unpkg_fsclass {
	UNPKG_FSCLASS_EXT4,	/* ext3 or ext4 with a journal */
	UNPKG_FSCLASS_EXT2,	/* ext2, or ext3/ext4 without a journal */
	UNPKG_FSCLASS_XFS,
	UNPKG_FSCLASS_BTRFS,
	UNPKG_FSCLASS_TMPFS,	/* tmpfs or ramfs: memory only */
	UNPKG_FSCLASS_OVERLAY,	/* overlayfs (container images) */
	UNPKG_FSCLASS_OTHER,	/* anything else, and an ext2/3/4 filesystem
				 * whose journal state cannot be read */
	UNPKG_FSCLASS_COUNT
};

/* A short name for messages: "ext4", "ext2" (no journal), "xfs", "btrfs",
 * "tmpfs", "overlay", "other"; "?" for a value out of range.  Static
 * storage. */
const char *unpkg_fsclass_name(enum unpkg_fsclass cls);

/* The class of the filesystem holding the open file or directory `fd`.
 * Fails (-1) only if fstatfs() or fstat() of `fd` fails or memory runs
 * out; what cannot be read under /sys or /proc makes the answer
 * UNPKG_FSCLASS_OTHER instead of an error.  Unless `source` is NULL,
 * *source says what told the class, for --stats (static storage):
 * "statfs" (the magic number alone), where the ext4 driver's view was
 * read ("/sys/dev/block, /sys/fs/ext4/DEV/journal_task", "/proc/partitions,
 * /proc/fs/ext4/DEV/options", ...), "/proc/self/mountinfo", or "nothing
 * readable under /sys or /proc". */
int unpkg_fsclass_detect(int fd, enum unpkg_fsclass *out,
			 const char **source, struct unpkg_err *err);

/* 1 if moving a file of directory `fd` aside may first copy the whole
 * file, with an fsync of its own: an overlayfs copies a file of its lower
 * layer up before a rename or a link.  0 if not, -1 if fstatfs() fails. */
int unpkg_fsclass_copies_up(int fd, struct unpkg_err *err);

/* The same from the facts detect() gathers: `fs_type` is fstatfs()'s
 * f_type, `dev` fstat()'s st_dev, and `sys` and `proc` are where sysfs
 * and procfs are mounted ("/sys" and "/proc"; tests point them at fake
 * trees). */
int unpkg_fsclass_classify(unsigned long fs_type, dev_t dev, const char *sys,
			   const char *proc, enum unpkg_fsclass *out,
			   const char **source, struct unpkg_err *err);

/* The upper layer's directory of the overlayfs whose st_dev is `dev`
 * (where its files are written, and its dirty pages wait), as the super
 * option "upperdir=" of its line in PROC/self/mountinfo names it, into
 * upper (`size` bytes).  0 found; 1 if `dev` is not an overlayfs there,
 * has no upper layer, or names it by a relative path or one that does not
 * fit; -1 if memory runs out.  The path is the mounter's: in another mount
 * namespace or a chroot it may lead nowhere, or elsewhere. */
int unpkg_fsclass_overlay_upper(const char *proc, dev_t dev, char *upper,
				size_t size, struct unpkg_err *err);

/* Whether syncfs() is a full barrier on a filesystem of class `cls`: on
 * every class but ext2 (its syncfs leaves metadata written after the
 * device flush) and other (a filesystem's syncfs need not flush anything:
 * FUSE without syncfs support, vfat, NFS).  A value out of range counts as
 * UNPKG_FSCLASS_OTHER. */
int unpkg_fsclass_syncfs_full(enum unpkg_fsclass cls);

/* Whether a journal commit on a filesystem of class `cls` first flushes
 * the disk's cache and commits metadata in the order it was changed: there
 * a file whose writeback completed (sync_file_range with WAIT_AFTER) is
 * durable once a later commit is, with the rename that commit carries.
 * ext4 with a journal (jbd2 writes each commit block with a cache flush
 * before it) and xfs (each checkpoint's first log write flushes the cache
 * first), on both of which syncfs is a full barrier; not btrfs, whose
 * renames reach the disk through transactions and the log tree on their
 * own terms, nor tmpfs, overlayfs, ext2 or other.  An overlayfs counts
 * only through its upper layer's file system, which needs a descriptor
 * (unpkg_fsclass_commit_orders_at()).  A value out of range counts as
 * UNPKG_FSCLASS_OTHER. */
int unpkg_fsclass_commit_orders(enum unpkg_fsclass cls);

/* unpkg_fsclass_commit_orders() for the file system of device `dev`, as
 * its mount options under `proc` say (`sys` names the device): an ext4
 * must list "barrier" and not "journal_async_commit" in
 * PROC/fs/ext4/NAME/options, which counts as no where it cannot be read.
 * 1 or 0; -1 if memory runs out or a path does not fit. */
int unpkg_fsclass_commit_orders_dev(enum unpkg_fsclass cls, dev_t dev,
				    const char *sys, const char *proc,
				    struct unpkg_err *err);

/* unpkg_fsclass_commit_orders_dev() for the file system of the open file
 * `fd`, classified as unpkg_fsclass_classify() does with sysfs and procfs
 * under `sys` and `proc`, and *path how its files' writeback is reached.
 *
 * An overlayfs orders its commits where its upper layer's file system
 * does, *path UNPKG_WB_OVERLAY: sync_file_range through an overlay
 * returns 0 and writes nothing back (checked on Linux 6.18: the upper
 * file's pages stay untouched), so the waits go through calls that it
 * passes on to the upper file (io.h).  That file system is the one of the
 * directory that the overlay's "upperdir=" in PROC/self/mountinfo names,
 * if it can be opened.  The path is the mounter's: in a container it is
 * out of sight, and the file system is then the one, among the ext4 and
 * xfs mounts of that mountinfo that are a directory or a file, whose uuid
 * (FS_IOC_GETFSUUID, Linux 6.8) is the one in the overlay's handle of
 * `fd` (name_to_handle_at with AT_HANDLE_FID, Linux 6.5: the format of
 * its "origin" xattrs), as a container's /etc/hosts, bind-mounted from
 * the disk its layers lie on, shows it.  Either way statfs() must show
 * the overlay's geometry there (size, block size, inode count, name
 * length: an overlay shows its upper layer's).  Where neither finds it,
 * the overlay does not count.
 *
 * 1 or 0; -1 on error (fstatfs() or fstat() of `fd` failed, memory ran
 * out). */
int unpkg_fsclass_commit_orders_at(int fd, const char *sys, const char *proc,
				   enum unpkg_wb_path *path,
				   struct unpkg_err *err);

/* unpkg_fsclass_commit_orders_at() for `fd` whose class `cls` and device
 * `dev` the caller has found already (unpkg_fsclass_detect(), fstat()):
 * it classifies nothing again. */
int unpkg_fsclass_commit_orders_of(int fd, enum unpkg_fsclass cls, dev_t dev,
				   const char *sys, const char *proc,
				   enum unpkg_wb_path *path,
				   struct unpkg_err *err);

/* unpkg_fsclass_commit_orders_at() with the system's "/sys" and
 * "/proc". */
int unpkg_fsclass_commit_orders_fd(int fd, enum unpkg_wb_path *path,
				   struct unpkg_err *err);

#endif
