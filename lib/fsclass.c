/* fsclass.c - the kind of filesystem a directory lies on (see fsclass.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fsclass.h"

/* Magic numbers of statfs(2)'s f_type (linux/magic.h). */
#define MAGIC_EXT	0xEF53UL	/* ext2, ext3, ext4 alike */
#define MAGIC_XFS	0x58465342UL
#define MAGIC_BTRFS	0x9123683EUL
#define MAGIC_TMPFS	0x01021994UL
#define MAGIC_RAMFS	0x858458F6UL
#define MAGIC_OVERLAY	0x794C7630UL

/* The small files read under /sys and /proc; mountinfo is read by line. */
#define SMALL_FILE_MAX 4096

/* What the headers of older systems lack (linux/fcntl.h, linux/fs.h;
 * Linux 6.5 and 6.8). */
#ifndef AT_HANDLE_FID
#define AT_HANDLE_FID 0x200	/* a file's identity, not for reopening */
#endif
struct fs_uuid {
	unsigned char len;
	unsigned char uuid[16];
};
#ifndef FS_IOC_GETFSUUID
#define FS_IOC_GETFSUUID _IOR(0x15, 0, struct fs_uuid)
#endif

/* An overlayfs's file handle (the format of its "origin" xattrs, on disk
 * in every upper layer): 3 bytes of padding, then version 0, magic 0xFB,
 * length, flags, type, the uuid of the file system of the real inode it
 * stands for, and that file system's own handle.  The flag says the real
 * inode is the upper one. */
#define OVL_FILEID		0xF8
#define OVL_FH_MAGIC		0xFB
#define OVL_FH_PATH_UPPER	0x04
#define OVL_FH_UUID_AT		8

static const char *const class_names[UNPKG_FSCLASS_COUNT] = {
	[UNPKG_FSCLASS_EXT4] = "ext4",
	[UNPKG_FSCLASS_EXT2] = "ext2",
	[UNPKG_FSCLASS_XFS] = "xfs",
	[UNPKG_FSCLASS_BTRFS] = "btrfs",
	[UNPKG_FSCLASS_TMPFS] = "tmpfs",
	[UNPKG_FSCLASS_OVERLAY] = "overlay",
	[UNPKG_FSCLASS_OTHER] = "other",
};

const char *unpkg_fsclass_name(enum unpkg_fsclass cls)
{
	if ((unsigned int)cls >= UNPKG_FSCLASS_COUNT)
		return "?";
	return class_names[cls];
}

int unpkg_fsclass_syncfs_full(enum unpkg_fsclass cls)
{
	if ((unsigned int)cls >= UNPKG_FSCLASS_COUNT)
		cls = UNPKG_FSCLASS_OTHER;
	return cls != UNPKG_FSCLASS_EXT2 && cls != UNPKG_FSCLASS_OTHER;
}

/* Read the small file `path` into buf (NUL-terminated).  Returns its
 * length, or -1 with errno set. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	ssize_t n, ret = -1;
	size_t len = 0;
	int fd, saved;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (len + 1 < size) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto out;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	ret = (ssize_t)len;
out:
	saved = errno;
	close(fd);
	errno = saved;
	return ret;
}

/* Where a line of a procfs file names device `dev`, pick() returns the
 * token wanted from it (and its length), else NULL. */
typedef const char *pick_fn(const char *line, dev_t dev, size_t *len);

/* The token pick() finds on the first line of PROC/FILE that names `dev`,
 * into out.  0 found, 1 not found or unreadable, -1 on error. */
static int proc_token(const char *proc, const char *file, pick_fn *pick,
		      dev_t dev, char *out, size_t size, struct unpkg_err *err)
{
	char path[PATH_MAX], *line = NULL;
	size_t cap = 0, len;
	FILE *f;
	int rc = 1, n;

	n = snprintf(path, sizeof(path), "%s/%s", proc, file);
	if (n < 0 || (size_t)n >= sizeof(path))
		return unpkg_err_set(err, UNPKG_ERR_USAGE,
				     "procfs path too long: %s", proc);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOMEM ? unpkg_err_nomem(err) : 1;
	errno = 0;
	while (getline(&line, &cap, f) != -1) {
		const char *tok = pick(line, dev, &len);

		if (tok == NULL || len == 0 || len >= size)
			continue;
		memcpy(out, tok, len);
		out[len] = '\0';
		rc = 0;
		break;
	}
	if (rc != 0 && errno == ENOMEM)
		rc = unpkg_err_nomem(err);
	free(line);
	fclose(f);
	return rc;
}

/* A line of /proc/partitions, "MAJOR MINOR BLOCKS NAME": the name.  It
 * lists every block device with a size, so it names the device for a
 * chroot or container where /proc is mounted and /sys is not. */
static const char *pick_partition(const char *line, dev_t dev, size_t *len)
{
	unsigned int maj, min;
	unsigned long long blocks;
	int end = 0;

	/* the heading and the blank line do not scan */
	if (sscanf(line, "%u %u %llu %n", &maj, &min, &blocks, &end) != 3 ||
	    end == 0 || maj != major(dev) || min != minor(dev))
		return NULL;
	*len = strcspn(line + end, " \t\n");
	return line + end;
}

/* A line of mountinfo, "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS
 * [TAGS...] - TYPE ...": the type of the mount. */
static const char *pick_mount_type(const char *line, dev_t dev, size_t *len)
{
	char want[64];
	const char *p = line, *sep;
	int field;

	snprintf(want, sizeof(want), "%u:%u ", major(dev), minor(dev));
	for (field = 0; field < 2 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (!p || strncmp(p, want, strlen(want)) != 0)
		return NULL;
	sep = strstr(p, " - ");
	if (!sep)
		return NULL;
	*len = strcspn(sep + 3, " \n");
	return sep + 3;
}

/* A line of mountinfo for an overlayfs mounted from `dev`: the value of
 * its super option "upperdir=", still escaped as the kernel shows it
 * (seq_show_option: comma, blank, '=' and backslash as \ooo).  The super
 * options are the third field after " - " (TYPE SOURCE OPTIONS). */
static const char *pick_upperdir(const char *line, dev_t dev, size_t *len)
{
	const char *type, *opts;
	size_t tlen;

	type = pick_mount_type(line, dev, &tlen);
	if (type == NULL || tlen != strlen("overlay") ||
	    strncmp(type, "overlay", tlen) != 0)
		return NULL;
	if (type[tlen] != ' ')
		return NULL;
	opts = strchr(type + tlen + 1, ' ');		/* after SOURCE */
	if (opts == NULL)
		return NULL;
	for (opts++; *opts != '\0' && *opts != ' ' && *opts != '\n';) {
		size_t n = strcspn(opts, ", \n");

		if (strncmp(opts, "upperdir=", 9) == 0 && n > 9) {
			*len = n - 9;
			return opts + 9;
		}
		opts += n;
		if (*opts == ',')
			opts++;
	}
	return NULL;
}

/* The path `raw` (`len` bytes) as mountinfo escapes it into `out` (at
 * least len + 1 bytes): \ooo is one byte, the kernel escapes nothing
 * else.  0, or 1 if it is relative or holds an escaped NUL. */
static int unescape_path(const char *raw, size_t len, char *out)
{
	size_t i, j;

	for (i = j = 0; i < len; j++) {
		if (raw[i] == '\\' && i + 3 < len &&
		    raw[i + 1] >= '0' && raw[i + 1] <= '3' &&
		    raw[i + 2] >= '0' && raw[i + 2] <= '7' &&
		    raw[i + 3] >= '0' && raw[i + 3] <= '7') {
			out[j] = (char)((raw[i + 1] - '0') * 64 +
					(raw[i + 2] - '0') * 8 +
					(raw[i + 3] - '0'));
			i += 4;
		} else {
			out[j] = raw[i++];
		}
	}
	out[j] = '\0';
	return out[0] != '/' || strlen(out) != j;
}

int unpkg_fsclass_overlay_upper(const char *proc, dev_t dev, char *upper,
				size_t size, struct unpkg_err *err)
{
	char *raw;
	int rc;

	if (size == 0)
		return 1;
	raw = malloc(size);
	if (raw == NULL)
		return unpkg_err_nomem(err);
	rc = proc_token(proc, "self/mountinfo", pick_upperdir, dev, raw, size,
			err);
	if (rc == 0)
		rc = unescape_path(raw, strlen(raw), upper);
	free(raw);
	return rc;
}

/* The kernel's name of block device `dev` ("sda1", "dm-0", "loop3"): the
 * last component of the /sys/dev/block/MAJ:MIN link, or where sysfs is
 * not mounted, its line in /proc/partitions.  0 on success, 1 if it
 * cannot be found, -1 on error. */
static int kernel_name(const char *sys, const char *proc, dev_t dev,
		       char *name, size_t size, int *from_sys,
		       struct unpkg_err *err)
{
	char path[PATH_MAX], target[PATH_MAX];
	const char *base;
	ssize_t n;
	int len;

	len = snprintf(path, sizeof(path), "%s/dev/block/%u:%u", sys,
		       major(dev), minor(dev));
	if (len < 0 || (size_t)len >= sizeof(path))
		return unpkg_err_set(err, UNPKG_ERR_USAGE,
				     "sysfs path too long: %s", sys);
	n = readlink(path, target, sizeof(target) - 1);
	*from_sys = n > 0;
	if (n <= 0)
		return proc_token(proc, "partitions", pick_partition, dev,
				  name, size, err);
	target[n] = '\0';
	while (n > 1 && target[n - 1] == '/')
		target[--n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (*base == '\0' || strlen(base) >= size)
		return 1;
	memcpy(name, base, strlen(base) + 1);
	return 0;
}

/* Whether the text holds the option `prefix...` as one of its tokens
 * (separated by commas, blanks or newlines). */
static int has_option(const char *text, const char *prefix)
{
	size_t plen = strlen(prefix);
	const char *p = text;

	while (*p) {
		size_t tlen = strcspn(p, ", \t\n");

		if (tlen >= plen && strncmp(p, prefix, plen) == 0)
			return 1;
		p += tlen;
		p += strspn(p, ", \t\n");
	}
	return 0;
}

/* The ext4 driver's view of the filesystem on block device `name`:
 * 0 with *journal set (and *from_sys: read under /sys, not /proc), 1 if
 * the driver does not know the device. */
static int ext4_driver_journal(const char *sys, const char *proc,
			       const char *name, int *journal, int *from_sys)
{
	char path[PATH_MAX], buf[SMALL_FILE_MAX];
	int len;

	len = snprintf(path, sizeof(path), "%s/fs/ext4/%s/journal_task", sys,
		       name);
	if (len > 0 && (size_t)len < sizeof(path) &&
	    read_small(path, buf, sizeof(buf)) > 0) {
		*from_sys = 1;
		if (buf[0] == '<') {		/* "<none>" */
			*journal = 0;
			return 0;
		}
		if (buf[0] >= '0' && buf[0] <= '9') {
			*journal = 1;
			return 0;
		}
	}
	len = snprintf(path, sizeof(path), "%s/fs/ext4/%s/options", proc, name);
	if (len > 0 && (size_t)len < sizeof(path) &&
	    read_small(path, buf, sizeof(buf)) > 0) {
		/* data=ordered|writeback|journal is always listed there when
		 * there is a journal, and the mode is cleared without one. */
		*from_sys = 0;
		*journal = has_option(buf, "data=");
		return 0;
	}
	return 1;
}

/* Whether `token` is one of the tokens of the text (separated by commas,
 * blanks or newlines), exactly. */
static int has_token(const char *text, const char *token)
{
	size_t len = strlen(token);
	const char *p = text;

	while (*p) {
		size_t tlen = strcspn(p, ", \t\n");

		if (tlen == len && strncmp(p, token, len) == 0)
			return 1;
		p += tlen;
		p += strspn(p, ", \t\n");
	}
	return 0;
}

int unpkg_fsclass_commit_orders(enum unpkg_fsclass cls)
{
	return cls == UNPKG_FSCLASS_EXT4 || cls == UNPKG_FSCLASS_XFS;
}

int unpkg_fsclass_commit_orders_dev(enum unpkg_fsclass cls, dev_t dev,
				    const char *sys, const char *proc,
				    struct unpkg_err *err)
{
	char name[256], path[PATH_MAX], buf[SMALL_FILE_MAX];
	int rc, from_sys, len;

	if (!unpkg_fsclass_commit_orders(cls))
		return 0;
	if (cls != UNPKG_FSCLASS_EXT4)
		return 1;
	/* ext4 flushes before each commit block with barriers on and
	 * journal_async_commit off, which its options always say */
	rc = kernel_name(sys, proc, dev, name, sizeof(name), &from_sys, err);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	len = snprintf(path, sizeof(path), "%s/fs/ext4/%s/options", proc, name);
	if (len < 0 || (size_t)len >= sizeof(path) ||
	    read_small(path, buf, sizeof(buf)) <= 0)
		return 0;
	return has_token(buf, "barrier") &&
	       !has_token(buf, "journal_async_commit");
}

/* What told an ext file system's class, by where the device's name and
 * the driver's view were read: [name from /sys][view from /sys]. */
static const char *const ext_sources[2][2] = {
	{ "/proc/partitions, /proc/fs/ext4/DEV/options",
	  "/proc/partitions, /sys/fs/ext4/DEV/journal_task" },
	{ "/sys/dev/block, /proc/fs/ext4/DEV/options",
	  "/sys/dev/block, /sys/fs/ext4/DEV/journal_task" },
};

static int classify_ext(dev_t dev, const char *sys, const char *proc,
			enum unpkg_fsclass *out, const char **source,
			struct unpkg_err *err)
{
	char name[256], fstype[32];
	int rc, journal, name_sys = 0, view_sys = 0;

	rc = kernel_name(sys, proc, dev, name, sizeof(name), &name_sys, err);
	if (rc < 0)
		return -1;
	if (rc == 0 &&
	    ext4_driver_journal(sys, proc, name, &journal, &view_sys) == 0) {
		*out = journal ? UNPKG_FSCLASS_EXT4 : UNPKG_FSCLASS_EXT2;
		*source = ext_sources[name_sys][view_sys];
		return 0;
	}
	rc = proc_token(proc, "self/mountinfo", pick_mount_type, dev, fstype,
			sizeof(fstype), err);
	if (rc < 0)
		return -1;
	*out = UNPKG_FSCLASS_OTHER;
	*source = rc == 0 ? "/proc/self/mountinfo"
			  : "nothing readable under /sys or /proc";
	if (rc == 0 && strcmp(fstype, "ext2") == 0)
		*out = UNPKG_FSCLASS_EXT2;
	else if (rc == 0 && strcmp(fstype, "ext3") == 0)
		*out = UNPKG_FSCLASS_EXT4;
	return 0;
}

int unpkg_fsclass_classify(unsigned long fs_type, dev_t dev, const char *sys,
			   const char *proc, enum unpkg_fsclass *out,
			   const char **source, struct unpkg_err *err)
{
	const char *unused;

	if (source == NULL)
		source = &unused;
	*source = "statfs";
	/* f_type is a signed word on some ABIs; the magic numbers are
	 * 32-bit. */
	switch (fs_type & 0xFFFFFFFFUL) {
	case MAGIC_EXT:
		return classify_ext(dev, sys, proc, out, source, err);
	case MAGIC_XFS:
		*out = UNPKG_FSCLASS_XFS;
		return 0;
	case MAGIC_BTRFS:
		*out = UNPKG_FSCLASS_BTRFS;
		return 0;
	case MAGIC_TMPFS:
	case MAGIC_RAMFS:
		*out = UNPKG_FSCLASS_TMPFS;
		return 0;
	case MAGIC_OVERLAY:
		*out = UNPKG_FSCLASS_OVERLAY;
		return 0;
	default:
		*out = UNPKG_FSCLASS_OTHER;
		return 0;
	}
}

/* The class of the file system of `fd`, told by sysfs and procfs under
 * `sys` and `proc`; its statfs() in *sfs and its device in *dev. */
static int detect_at(int fd, const char *sys, const char *proc,
		     enum unpkg_fsclass *out, struct statfs *sfs, dev_t *dev,
		     const char **source, struct unpkg_err *err)
{
	struct stat st;

	if (fstatfs(fd, sfs) < 0)
		return unpkg_err_sys(err, "fstatfs");
	if (fstat(fd, &st) < 0)
		return unpkg_err_sys(err, "fstat");
	*dev = st.st_dev;
	return unpkg_fsclass_classify((unsigned long)sfs->f_type, st.st_dev,
				      sys, proc, out, source, err);
}

int unpkg_fsclass_detect(int fd, enum unpkg_fsclass *out,
			 const char **source, struct unpkg_err *err)
{
	struct statfs sfs;
	dev_t dev;

	return detect_at(fd, "/sys", "/proc", out, &sfs, &dev, source, err);
}

int unpkg_fsclass_copies_up(int fd, struct unpkg_err *err)
{
	struct statfs sfs;

	if (fstatfs(fd, &sfs) < 0)
		return unpkg_err_sys(err, "cannot read the file system of a "
				     "directory");
	return (unsigned long)sfs.f_type == MAGIC_OVERLAY;
}

/* Whether the file systems that statfs() described in *a and *b have the
 * same size, block size, inode count and name length: an overlayfs shows
 * its upper layer's (only f_type and f_fsid are its own), so a directory
 * that differs in one of them is not that layer. */
static int same_geometry(const struct statfs *a, const struct statfs *b)
{
	return a->f_bsize == b->f_bsize && a->f_frsize == b->f_frsize &&
	       a->f_blocks == b->f_blocks && a->f_files == b->f_files &&
	       a->f_namelen == b->f_namelen;
}

/* unpkg_fsclass_commit_orders_dev() for the file system of `fd`, if it is
 * the upper layer of an overlayfs whose statfs() gave *ovl: no overlayfs
 * itself, and the overlay's geometry there.  1, 0 or -1. */
static int orders_as_upper(int fd, const struct statfs *ovl, const char *sys,
			   const char *proc, struct unpkg_err *err)
{
	enum unpkg_fsclass cls;
	struct statfs sfs;
	dev_t dev;

	if (detect_at(fd, sys, proc, &cls, &sfs, &dev, NULL, err) < 0)
		return -1;
	if (cls == UNPKG_FSCLASS_OVERLAY || !same_geometry(ovl, &sfs))
		return 0;
	return unpkg_fsclass_commit_orders_dev(cls, dev, sys, proc, err);
}

/* The uuid of the file system of the upper layer of the overlayfs file or
 * directory `fd`, from the overlay's handle of it (name_to_handle_at with
 * AT_HANDLE_FID, Linux 6.5), when that stands for its upper inode.  0, or
 * 1 where the kernel or the overlay gives none. */
static int overlay_upper_uuid(int fd, unsigned char uuid[16])
{
	union {
		struct file_handle h;
		unsigned char raw[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} fh;
	const unsigned char *b = fh.raw + offsetof(struct file_handle,
						   f_handle);
	int mount_id;

	fh.h.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(fd, "", &fh.h, &mount_id,
			      AT_EMPTY_PATH | AT_HANDLE_FID) < 0 ||
	    fh.h.handle_type != OVL_FILEID ||
	    fh.h.handle_bytes < OVL_FH_UUID_AT + 16 || b[3] != 0 ||
	    b[4] != OVL_FH_MAGIC || !(b[6] & OVL_FH_PATH_UPPER))
		return 1;
	memcpy(uuid, b + OVL_FH_UUID_AT, 16);
	/* all zeros: the overlay keeps no uuid (uuid=null or off) */
	return memcmp(uuid, (const unsigned char[16]){ 0 }, 16) == 0;
}

/* A new descriptor of the topmost directory in view of the file system of
 * directory `fd`: its ancestors followed while they are on its device
 * (for a container's root, "/").  -1 on failure. */
static int mount_top(int fd)
{
	struct stat st, up;
	int cur, parent = -1, depth;

	cur = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (cur < 0 || fstat(cur, &st) < 0)
		goto fail;
	for (depth = 0; depth < 4096; depth++) {
		parent = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (parent < 0 || fstat(parent, &up) < 0)
			goto fail;
		/* another file system above, or the root in view */
		if (up.st_dev != st.st_dev || up.st_ino == st.st_ino) {
			close(parent);
			return cur;
		}
		close(cur);
		cur = parent;
		parent = -1;
		st = up;
	}
fail:
	if (parent >= 0)
		close(parent);
	if (cur >= 0)
		close(cur);
	return -1;
}

/* Where the upper directory is out of sight (a container): the file
 * system of the upper layer found among the mounts of PROC/self/mountinfo
 * by its uuid (FS_IOC_GETFSUUID, Linux 6.8), an ext4 or xfs mounted in
 * view, as a container's /etc/hosts is, from the disk its layers lie on;
 * orders_as_upper() of the first one found.  1, 0 or -1. */
static int upper_by_uuid(const unsigned char uuid[16],
			 const struct statfs *ovl, const char *sys,
			 const char *proc, struct unpkg_err *err)
{
	char path[PATH_MAX], *line = NULL, *mnt = NULL;
	size_t cap = 0;
	FILE *f;
	int rc = 0, n;

	n = snprintf(path, sizeof(path), "%s/self/mountinfo", proc);
	if (n < 0 || (size_t)n >= sizeof(path))
		return 0;
	f = fopen(path, "re");
	if (f == NULL)
		return errno == ENOMEM ? unpkg_err_nomem(err) : 0;
	while (rc == 0 && getline(&line, &cap, f) != -1) {
		const char *p = line, *type = strstr(line, " - ");
		struct fs_uuid got = { 0 };
		struct stat st;
		size_t len;
		int field, fd;

		if (type == NULL || (strncmp(type + 3, "ext4 ", 5) != 0 &&
				     strncmp(type + 3, "xfs ", 4) != 0))
			continue;
		for (field = 0; field < 4 && p != NULL; field++) {
			p = strchr(p, ' ');
			if (p != NULL)
				p++;
		}
		if (p == NULL)
			continue;
		len = strcspn(p, " ");
		free(mnt);
		mnt = malloc(len + 1);
		if (mnt == NULL) {
			rc = unpkg_err_nomem(err);
			break;
		}
		/* a directory, or a file bind-mounted: nothing else is
		 * opened (a device could act on it) */
		if (unescape_path(p, len, mnt) != 0 || stat(mnt, &st) != 0 ||
		    !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
			continue;
		fd = open(mnt, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (ioctl(fd, FS_IOC_GETFSUUID, &got) == 0 && got.len == 16 &&
		    memcmp(got.uuid, uuid, 16) == 0)
			rc = orders_as_upper(fd, ovl, sys, proc, err);
		close(fd);
	}
	free(mnt);
	free(line);
	fclose(f);
	return rc;
}

/* unpkg_fsclass_commit_orders_dev() for the upper layer of the overlayfs
 * of `fd` (device `dev`, statfs() *ovl): the file system of the directory
 * that mountinfo's "upperdir=" names, where it can be opened; else the
 * one found by the uuid in the overlay's handle of `fd`.  Either must
 * show the overlay's geometry and be no overlayfs itself.  1, 0 or -1. */
static int upper_orders(int fd, dev_t dev, const struct statfs *ovl,
			const char *sys, const char *proc,
			struct unpkg_err *err)
{
	char upper[PATH_MAX];
	unsigned char uuid[16];
	int ufd, rc;

	rc = unpkg_fsclass_overlay_upper(proc, dev, upper, sizeof(upper), err);
	if (rc < 0)
		return -1;
	ufd = rc == 0 ? open(upper, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (ufd >= 0) {
		rc = orders_as_upper(ufd, ovl, sys, proc, err);
		close(ufd);
		return rc;
	}
	/* the mounter's path, not ours; the overlay's handle of a directory
	 * of the lower layer (a container's /var/lib/dpkg) stands for its
	 * lower inode, the handle of its root for the upper one */
	if (overlay_upper_uuid(fd, uuid) != 0) {
		int top = mount_top(fd);

		rc = top < 0 ? 1 : overlay_upper_uuid(top, uuid);
		if (top >= 0)
			close(top);
		if (rc != 0)
			return 0;
	}
	return upper_by_uuid(uuid, ovl, sys, proc, err);
}

int unpkg_fsclass_commit_orders_of(int fd, enum unpkg_fsclass cls, dev_t dev,
				   const char *sys, const char *proc,
				   enum unpkg_wb_path *path,
				   struct unpkg_err *err)
{
	struct statfs sfs;
	int rc;

	*path = UNPKG_WB_RANGE;
	if (cls != UNPKG_FSCLASS_OVERLAY)
		return unpkg_fsclass_commit_orders_dev(cls, dev, sys, proc,
						       err);
	if (fstatfs(fd, &sfs) < 0)
		return unpkg_err_sys(err, "fstatfs");
	rc = upper_orders(fd, dev, &sfs, sys, proc, err);
	if (rc > 0)
		*path = UNPKG_WB_OVERLAY;
	return rc;
}

int unpkg_fsclass_commit_orders_at(int fd, const char *sys, const char *proc,
				   enum unpkg_wb_path *path,
				   struct unpkg_err *err)
{
	enum unpkg_fsclass cls;
	struct statfs sfs;
	dev_t dev;

	*path = UNPKG_WB_RANGE;
	if (detect_at(fd, sys, proc, &cls, &sfs, &dev, NULL, err) < 0)
		return -1;
	return unpkg_fsclass_commit_orders_of(fd, cls, dev, sys, proc, path,
					      err);
}

int unpkg_fsclass_commit_orders_fd(int fd, enum unpkg_wb_path *path,
				   struct unpkg_err *err)
{
	return unpkg_fsclass_commit_orders_at(fd, "/sys", "/proc", path, err);
}
