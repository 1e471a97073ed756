/* strategy.c - the table of commit strategies and the --sync=auto choice
 * (see strategy.h). */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#ifdef HAVE_LINUX_BTRFS_H
#include <linux/btrfs.h>
#endif

#include "commit-impl.h"
#include "strategy.h"

static const struct unpkg_commit_ops *const strategies[UNPKG_SYNC_COUNT] = {
	[UNPKG_SYNC_DPKG] = &unpkg_commit_dpkg_ops,
	[UNPKG_SYNC_BATCH] = &unpkg_commit_batch_ops,
	[UNPKG_SYNC_URING] = &unpkg_commit_uring_ops,
	[UNPKG_SYNC_SYNCFS] = &unpkg_commit_syncfs_ops,
	[UNPKG_SYNC_NONE] = &unpkg_commit_none_ops,
};

/* The measured choice per class: doc/benchmarks.md, section "Choosing a
 * strategy per filesystem (auto)", has the figures (device flushes and
 * wall time of every strategy on each class) and the reasoning.  In short:
 * where syncfs is a full barrier it needs the fewest device flushes and is
 * the fastest safe strategy; where it is not (ext2: metadata written after
 * the flush; other: syncfs may flush nothing), uring, which fdatasyncs
 * every file and fsyncs every directory, concurrently. */
static const enum unpkg_sync_mode auto_table[UNPKG_FSCLASS_COUNT] = {
	[UNPKG_FSCLASS_EXT4] = UNPKG_SYNC_SYNCFS,
	[UNPKG_FSCLASS_EXT2] = UNPKG_SYNC_URING,
	[UNPKG_FSCLASS_XFS] = UNPKG_SYNC_SYNCFS,
	[UNPKG_FSCLASS_BTRFS] = UNPKG_SYNC_SYNCFS,
	/* none would do on tmpfs too (unpkg_sync_full), and costs the same
	 * within the noise; syncfs stays safe should the run also write to
	 * a disk mounted below the root. */
	[UNPKG_FSCLASS_TMPFS] = UNPKG_SYNC_SYNCFS,
	[UNPKG_FSCLASS_OVERLAY] = UNPKG_SYNC_SYNCFS,
	[UNPKG_FSCLASS_OTHER] = UNPKG_SYNC_URING,
};

int unpkg_sync_mode_parse(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(strategies) / sizeof(strategies[0]); i++)
		if (strcmp(name, strategies[i]->name) == 0)
			return (int)i;
	return -1;
}

const char *unpkg_sync_mode_name(enum unpkg_sync_mode mode)
{
	return strategies[mode]->name;
}

int unpkg_commit_new(enum unpkg_sync_mode mode, struct unpkg_stats *stats,
		     const struct unpkg_events *events, unsigned int max_fds,
		     struct unpkg_commit **out, struct unpkg_err *err)
{
	return unpkg_commit_new_flags(mode, 0, stats, events, max_fds, out,
				      err);
}

int unpkg_commit_new_flags(enum unpkg_sync_mode mode, unsigned int flags,
			   struct unpkg_stats *stats,
			   const struct unpkg_events *events,
			   unsigned int max_fds, struct unpkg_commit **out,
			   struct unpkg_err *err)
{
	if ((unsigned int)mode >= sizeof(strategies) / sizeof(strategies[0]))
		return unpkg_err_set(err, UNPKG_ERR_USAGE,
				     "unknown sync mode %d", (int)mode);
	return commit_create(strategies[mode], flags, stats, events, max_fds,
			     out, err);
}

enum unpkg_sync_mode unpkg_sync_auto(enum unpkg_fsclass cls)
{
	if ((unsigned int)cls >= UNPKG_FSCLASS_COUNT)
		cls = UNPKG_FSCLASS_OTHER;
	return auto_table[cls];
}

int unpkg_sync_full(enum unpkg_sync_mode mode, enum unpkg_fsclass cls)
{
	if ((unsigned int)cls >= UNPKG_FSCLASS_COUNT)
		cls = UNPKG_FSCLASS_OTHER;
	switch (mode) {
	case UNPKG_SYNC_DPKG:
	case UNPKG_SYNC_BATCH:
	case UNPKG_SYNC_URING:
		return 1;
	case UNPKG_SYNC_SYNCFS:
		return unpkg_fsclass_syncfs_full(cls);
	case UNPKG_SYNC_NONE:
		return cls == UNPKG_FSCLASS_TMPFS;
	default:
		/* Not a strategy of its own (a count, or a choice such as
		 * auto that resolves to one of the above). */
		return 0;
	}
}

enum unpkg_sync_mode unpkg_sync_auto_set(const enum unpkg_fsclass *classes,
					 size_t n)
{
	static const enum unpkg_sync_mode fallbacks[] = {
		UNPKG_SYNC_SYNCFS, UNPKG_SYNC_URING,
	};
	enum unpkg_sync_mode first;
	size_t i, k;

	if (n == 0)
		return unpkg_sync_auto(UNPKG_FSCLASS_OTHER);
	first = unpkg_sync_auto(classes[0]);
	for (i = 1; i < n; i++)
		if (unpkg_sync_auto(classes[i]) != first)
			break;
	if (i == n)
		return first;
	for (k = 0; k < sizeof(fallbacks) / sizeof(fallbacks[0]); k++) {
		for (i = 0; i < n; i++)
			if (!unpkg_sync_full(fallbacks[k], classes[i]))
				break;
		if (i == n)
			return fallbacks[k];
	}
	return UNPKG_SYNC_URING;
}

const struct unpkg_dirty_paths unpkg_dirty_paths_system = {
	"/sys/kernel/debug", "/sys", "/proc",
};

/* The sum of the two fields "NAME:  N kB" named a and b in the file
 * `path` (meminfo's and the bdi statistics' format), each seen once.
 * 0 with *kib set; 1 if the file cannot be read or either is missing. */
static int sum_kb_fields(const char *path, const char *a, const char *b,
			 long long *kib)
{
	const char *names[2] = { a, b };
	char *line = NULL;
	size_t cap = 0, len;
	long long sum = 0, v;
	unsigned int seen = 0, k;
	FILE *f;

	f = fopen(path, "re");
	if (f == NULL)
		return 1;
	while (getline(&line, &cap, f) != -1) {
		for (k = 0; k < 2; k++) {
			len = strlen(names[k]);
			if (strncmp(line, names[k], len) == 0 &&
			    line[len] == ':' &&
			    sscanf(line + len + 1, " %lld kB", &v) == 1 &&
			    v >= 0) {
				sum += v;
				seen |= 1U << k;
			}
		}
	}
	free(line);
	fclose(f);
	if (seen != 3)
		return 1;
	*kib = sum;
	return 0;
}

int unpkg_sync_dirty_kib(const char *proc, long long *kib)
{
	char path[PATH_MAX];
	int n;

	n = snprintf(path, sizeof(path), "%s/meminfo", proc);
	if (n < 0 || (size_t)n >= sizeof(path))
		return 1;
	/* WritebackTmp: is FUSE's, not the disks' (and does not match:
	 * the name must end at the colon) */
	return sum_kb_fields(path, "Dirty", "Writeback", kib);
}

/* TOP/DIR/MAJ:MIN/NAME of device `dev` into path: 0, or 1 if it does
 * not fit. */
static int dev_path(char *path, size_t size, const char *top,
		    const char *dir, dev_t dev, const char *name)
{
	int n = snprintf(path, size, "%s/%s/%u:%u/%s", top, dir, major(dev),
			 minor(dev), name);

	return n < 0 || (size_t)n >= size;
}

/* DEBUGFS/bdi/BDI/FILE into path: 0, or 1 if it does not fit. */
static int bdi_path(char *path, size_t size, const char *debugfs,
		    const char *bdi, const char *file)
{
	int n = snprintf(path, size, "%s/bdi/%s/%s", debugfs, bdi, file);

	return n < 0 || (size_t)n >= size;
}

/* DEBUGFS/bdi/BDI/stats of the backing device named `bdi` ("254:0",
 * "btrfs-2"): dirty plus under writeback, where wb_stats beside it says
 * the figure counts every cgroup's writeback (Linux 6.10 and later).
 * 0 with *kib set, 1 if not. */
static int bdi_dirty(const char *debugfs, const char *bdi, long long *kib)
{
	char path[PATH_MAX];

	if (bdi_path(path, sizeof(path), debugfs, bdi, "wb_stats") ||
	    access(path, F_OK) != 0 ||
	    bdi_path(path, sizeof(path), debugfs, bdi, "stats"))
		return 1;
	return sum_kb_fields(path, "BdiReclaimable", "BdiWriteback", kib);
}

/* bdi_dirty() of block device `dev`, its name "MAJ:MIN" into bdi. */
static int dev_dirty(const char *debugfs, dev_t dev, char *bdi,
		     size_t bdi_size, long long *kib)
{
	int n = snprintf(bdi, bdi_size, "%u:%u", major(dev), minor(dev));

	if (n < 0 || (size_t)n >= bdi_size)
		return 1;
	return bdi_dirty(debugfs, bdi, kib);
}

/* The whole disk that partition `dev` is part of: its backing device, by
 * SYS/dev/block/MAJ:MIN/../dev.  0 with *disk set; 1 if `dev` is not a
 * partition or sysfs cannot tell. */
static int whole_disk(const char *sys, dev_t dev, dev_t *disk)
{
	char path[PATH_MAX];
	unsigned int maj, min;
	FILE *f;
	int got;

	if (dev_path(path, sizeof(path), sys, "dev/block", dev, "partition") ||
	    access(path, F_OK) != 0 ||
	    dev_path(path, sizeof(path), sys, "dev/block", dev, "../dev"))
		return 1;
	f = fopen(path, "re");
	if (f == NULL)
		return 1;
	got = fscanf(f, "%u:%u", &maj, &min);
	fclose(f);
	if (got != 2)
		return 1;
	*disk = makedev(maj, min);
	return 0;
}

/* A btrfs's own backing device, whatever subvolume (each with an
 * anonymous st_dev of its own) and whichever of its disks: the bdi that
 * SYS/fs/btrfs/FSID/bdi links to (".../devices/virtual/bdi/btrfs-2"),
 * its name into bdi.  0 with *kib set, 1 if not. */
static int btrfs_dirty(const struct unpkg_dirty_paths *paths,
		       const char *fsid, char *bdi, size_t bdi_size,
		       long long *kib)
{
	char path[PATH_MAX], target[PATH_MAX];
	const char *base;
	ssize_t len;
	int n;

	n = snprintf(path, sizeof(path), "%s/fs/btrfs/%s/bdi", paths->sys,
		     fsid);
	if (n < 0 || (size_t)n >= sizeof(path))
		return 1;
	len = readlink(path, target, sizeof(target) - 1);
	if (len <= 0)
		return 1;
	target[len] = '\0';
	base = strrchr(target, '/');
	base = base != NULL ? base + 1 : target;
	n = snprintf(bdi, bdi_size, "%s", base);
	if (*base == '\0' || strcmp(base, ".") == 0 ||
	    strcmp(base, "..") == 0 || n < 0 || (size_t)n >= bdi_size)
		return 1;
	return bdi_dirty(paths->debugfs, bdi, kib);
}

/* unpkg_sync_fs_dirty_kib() short of an overlayfs's upper layer: a
 * tmpfs's nothing, or the statistics of the file system's own backing
 * device. */
static int own_dirty(const struct unpkg_dirty_paths *paths,
		     const struct unpkg_dirty_fs *fs, char *bdi,
		     size_t bdi_size, long long *kib)
{
	dev_t disk;

	if (fs->cls == UNPKG_FSCLASS_TMPFS) {
		/* shmem pages are never written back: neither does syncfs
		 * wait for other programs' data there, nor force it out */
		if (bdi_size > 0)
			bdi[0] = '\0';
		*kib = 0;
		return 0;
	}
	if (dev_dirty(paths->debugfs, fs->dev, bdi, bdi_size, kib) == 0)
		return 0;
	if (whole_disk(paths->sys, fs->dev, &disk) == 0 &&
	    dev_dirty(paths->debugfs, disk, bdi, bdi_size, kib) == 0)
		return 0;
	if (fs->btrfs_fsid[0] != '\0')
		return btrfs_dirty(paths, fs->btrfs_fsid, bdi, bdi_size, kib);
	return 1;
}

/* BTRFS_IOC_FS_INFO's fsid of the btrfs holding `fd`, as sysfs writes it
 * (lower-case 8-4-4-4-12 hex digits) into fsid.  0, or 1 if `fd` is not on
 * a btrfs, the ioctl fails or was not known at build time. */
static int btrfs_fsid(int fd, char *fsid, size_t size)
{
#ifdef BTRFS_IOC_FS_INFO
	struct btrfs_ioctl_fs_info_args args;
	const unsigned char *u = args.fsid;
	int n;

	memset(&args, 0, sizeof(args));
	if (ioctl(fd, BTRFS_IOC_FS_INFO, &args) != 0)
		return 1;
	n = snprintf(fsid, size,
		     "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		     "%02x%02x%02x%02x%02x%02x",
		     u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8],
		     u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
	return n < 0 || (size_t)n >= size;
#else
	(void)fd;
	(void)fsid;
	(void)size;
	return 1;
#endif
}

int unpkg_sync_dirty_fs_of(int fd, enum unpkg_fsclass cls,
			   struct unpkg_dirty_fs *fs, struct unpkg_err *err)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return unpkg_err_sys(err, "fstat");
	fs->dev = st.st_dev;
	fs->cls = cls;
	fs->btrfs_fsid[0] = '\0';
	if (cls == UNPKG_FSCLASS_BTRFS &&
	    btrfs_fsid(fd, fs->btrfs_fsid, sizeof(fs->btrfs_fsid)) != 0)
		fs->btrfs_fsid[0] = '\0';
	return 0;
}

/* The file system of the directory `dir` (an overlayfs's upper layer),
 * its class told by sysfs and procfs under `paths`.  0, 1 if it cannot be
 * opened or looked at, -1 if memory runs out. */
static int dir_fs(const struct unpkg_dirty_paths *paths, const char *dir,
		  struct unpkg_dirty_fs *fs, struct unpkg_err *err)
{
	enum unpkg_fsclass cls;
	struct statfs sfs;
	struct stat st;
	int fd, rc = 1;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	if (fstatfs(fd, &sfs) != 0 || fstat(fd, &st) != 0)
		goto out;
	rc = unpkg_fsclass_classify((unsigned long)sfs.f_type, st.st_dev,
				    paths->sys, paths->proc, &cls, NULL, err);
	if (rc == 0)
		rc = unpkg_sync_dirty_fs_of(fd, cls, fs, err) == 0 ? 0 : 1;
out:
	close(fd);
	return rc;
}

int unpkg_sync_fs_dirty_kib(const struct unpkg_dirty_paths *paths,
			    const struct unpkg_dirty_fs *fs, char *bdi,
			    size_t bdi_size, long long *kib,
			    struct unpkg_err *err)
{
	struct unpkg_dirty_fs up;
	char upper[PATH_MAX];
	int rc;

	if (own_dirty(paths, fs, bdi, bdi_size, kib) == 0)
		return 0;
	/* an overlayfs's pages are its upper layer's file system's */
	rc = unpkg_fsclass_overlay_upper(paths->proc, fs->dev, upper,
					 sizeof(upper), err);
	if (rc != 0)
		return rc;
	rc = dir_fs(paths, upper, &up, err);
	if (rc != 0)
		return rc;
	if (up.dev == fs->dev)
		return 1;
	return own_dirty(paths, &up, bdi, bdi_size, kib);
}

/* The longest name of a backing device kept: "MAJ:MIN", "btrfs-N". */
#define BDI_NAME_MAX 32

int unpkg_sync_dirty_for(const struct unpkg_dirty_paths *paths,
			 const struct unpkg_dirty_fs *fs, size_t n,
			 long long *kib, enum unpkg_dirty_scope *scope,
			 char *names, size_t names_size, int *in_memory,
			 struct unpkg_err *err)
{
	char (*bdis)[BDI_NAME_MAX] = NULL;
	long long one, sum = 0;
	size_t i, j, nb = 0, used = 0;
	int rc = -1, k, memory = 0;

	if (names_size > 0)
		names[0] = '\0';
	*in_memory = 0;
	if (n > 0) {
		bdis = calloc(n, sizeof(*bdis));
		if (bdis == NULL)
			return unpkg_err_nomem(err);
	}
	for (i = 0; i < n; i++) {
		k = unpkg_sync_fs_dirty_kib(paths, &fs[i], bdis[nb],
					    sizeof(bdis[nb]), &one, err);
		if (k < 0)
			goto out;
		if (k > 0)
			break;
		if (bdis[nb][0] == '\0') {
			memory = 1;	/* a tmpfs: nothing to write back */
			continue;
		}
		for (j = 0; j < nb && strcmp(bdis[j], bdis[nb]) != 0; j++)
			;
		if (j < nb)
			continue;	/* one device's figure, counted once */
		sum += one;
		k = snprintf(names + used, names_size - used, "%s%s",
			     nb > 0 ? " " : "", bdis[nb]);
		if (k > 0 && (size_t)k < names_size - used)
			used += (size_t)k;
		nb++;
	}
	if (n > 0 && i == n) {
		*kib = sum;
		*scope = UNPKG_DIRTY_DEVICES;
		*in_memory = memory;
	} else {
		if (names_size > 0)
			names[0] = '\0';
		*scope = UNPKG_DIRTY_MACHINE;
		if (unpkg_sync_dirty_kib(paths->proc, kib) != 0) {
			*kib = -1;
			*scope = UNPKG_DIRTY_UNKNOWN;
		}
	}
	rc = 0;
out:
	free(bdis);
	return rc;
}

enum unpkg_sync_mode unpkg_sync_auto_beside(enum unpkg_sync_mode chosen,
					    long long dirty_kib,
					    long long max_kib)
{
	if (max_kib <= 0)
		max_kib = UNPKG_SYNC_DIRTY_MAX_KIB;
	if (chosen == UNPKG_SYNC_SYNCFS && dirty_kib > max_kib)
		return UNPKG_SYNC_URING;
	return chosen;
}

int unpkg_sync_choose_auto(int root_fd, int db_fd, long long dirty_max_kib,
			   struct unpkg_stats *stats,
			   enum unpkg_sync_mode *mode, struct unpkg_err *err)
{
	return unpkg_sync_choose_auto_at(&unpkg_dirty_paths_system, root_fd,
					 db_fd, dirty_max_kib, stats, mode,
					 err);
}

/* Whether both file systems `fs` (of `fds`) order their commits (their
 * overlays' upper layers and mount options read under `paths`): 1, 0, or
 * -1; *overlay set where one does through an overlayfs. */
static int both_ordered(const struct unpkg_dirty_paths *paths,
			const int fds[2], const struct unpkg_dirty_fs fs[2],
			int *overlay, struct unpkg_err *err)
{
	enum unpkg_wb_path wb;
	int k, r;

	for (k = 0; k < 2; k++) {
		r = unpkg_fsclass_commit_orders_of(fds[k], fs[k].cls, fs[k].dev,
						   paths->sys, paths->proc,
						   &wb, err);
		if (r <= 0)
			return r;
		*overlay |= wb == UNPKG_WB_OVERLAY;
	}
	return 1;
}

int unpkg_sync_choose_auto_at(const struct unpkg_dirty_paths *paths,
			      int root_fd, int db_fd, long long dirty_max_kib,
			      struct unpkg_stats *stats,
			      enum unpkg_sync_mode *mode,
			      struct unpkg_err *err)
{
	enum unpkg_fsclass cls[2];
	const char *source[2];

	if (unpkg_fsclass_detect(root_fd, &cls[0], &source[0], err) < 0 ||
	    unpkg_fsclass_detect(db_fd, &cls[1], &source[1], err) < 0)
		return -1;
	if (strcmp(source[0], source[1]) == 0)
		snprintf(stats->fsclass_source, sizeof(stats->fsclass_source),
			 "%s", source[0]);
	else
		snprintf(stats->fsclass_source, sizeof(stats->fsclass_source),
			 "%s (root), %s (database)", source[0], source[1]);
	*mode = unpkg_sync_auto_set(cls, 2);
	if (*mode == UNPKG_SYNC_SYNCFS) {
		const int fds[2] = { root_fd, db_fd };
		struct unpkg_dirty_fs fs[2];
		int ordered;

		if (unpkg_sync_dirty_fs_of(root_fd, cls[0], &fs[0], err) < 0 ||
		    unpkg_sync_dirty_fs_of(db_fd, cls[1], &fs[1], err) < 0)
			return -1;
		ordered = both_ordered(paths, fds, fs, &stats->ordered_overlay,
				       err);
		if (ordered < 0)
			return -1;
		if (ordered) {
			stats->dirty_scope = UNPKG_DIRTY_UNCOUNTED;
		} else {
			if (unpkg_sync_dirty_for(paths, fs, 2,
						 &stats->others_dirty_kib,
						 &stats->dirty_scope,
						 stats->dirty_devices,
						 sizeof(stats->dirty_devices),
						 &stats->dirty_in_memory,
						 err) < 0)
				return -1;
			*mode = unpkg_sync_auto_beside(*mode,
						       stats->others_dirty_kib,
						       dirty_max_kib);
			stats->dirty_avoided = *mode != UNPKG_SYNC_SYNCFS;
		}
	}
	if (cls[0] == cls[1])
		snprintf(stats->fsclass, sizeof(stats->fsclass), "%s",
			 unpkg_fsclass_name(cls[0]));
	else
		snprintf(stats->fsclass, sizeof(stats->fsclass), "%s+%s",
			 unpkg_fsclass_name(cls[0]),
			 unpkg_fsclass_name(cls[1]));
	return 0;
}
