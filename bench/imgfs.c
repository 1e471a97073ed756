/* imgfs - one disk-image file shown through FUSE, so that a loop device
 * set up on it has slow flushes (benchmarks) and a recorded write stream
 * (power-loss replay tests).
 *
 * Usage: imgfs [options] IMAGE MOUNTPOINT
 *
 * MOUNTPOINT then holds a single regular file, "disk", of the size of IMAGE.
 * Reads and writes of "disk" go to IMAGE with pread/pwrite; fsync and
 * fdatasync of "disk" are the device cache flushes of a loop device set up
 * on it (the loop driver turns every REQ_PREFLUSH, and the flush that
 * replaces FUA, into one fsync of its backing file).
 *
 *   --flush-latency-us N  every fsync/fdatasync takes at least N
 *                         microseconds, counted from the moment imgfs
 *                         receives it (the bookkeeping below is done within
 *                         that time)
 *   --write-latency-us N  every write is acknowledged N microseconds after
 *                         imgfs receives it, while imgfs goes on serving
 *                         other requests (writes queue up as in a disk's
 *                         queue; a flush received meanwhile is answered
 *                         at once and covers only the writes already
 *                         acknowledged, as a flush of a real disk covers
 *                         only completed writes).  WRITE records are then
 *                         logged when the write is acknowledged.
 *   --stats FILE          counters as "key value" lines, rewritten
 *                         atomically (temporary file + rename) before each
 *                         fsync is answered, and at exit
 *   --log FILE            binary log of every write, discard and flush, in
 *                         the order imgfs receives them (format below)
 *   --sync-image          also fdatasync IMAGE in every fsync (off by default:
 *                         the emulated flush time is then the only cost;
 *                         every fsync only starts the writeback of IMAGE's
 *                         dirty pages, so that data the disk has flushed
 *                         does not stay dirty on this machine)
 * plus the FUSE options: -f (foreground), -d (debug), -o OPT[,OPT...].
 *
 * How the I/O stream is kept honest:
 *  - one thread handles every request (fuse_session_loop), so requests are
 *    processed, counted and logged one at a time in the order they are read
 *    from the FUSE device; -s is accepted and changes nothing;
 *  - "disk" is opened with direct_io and the writeback cache is not
 *    negotiated, so the kernel page cache of the FUSE file cannot delay,
 *    merge or reorder writes: each write request of the loop device reaches
 *    imgfs as it is issued and is on IMAGE before it completes;
 *  - fsync is implemented (a FUSE file system answering ENOSYS makes the
 *    kernel skip every later fsync without telling anyone);
 *  - fallocate implements punch hole and zero range (the loop driver's
 *    discard and write-zeroes), both logged; other modes get EOPNOTSUPP;
 *  - PR_SET_IO_FLUSHER is set at start: imgfs serves the I/O of a block
 *    device, and memory reclaim in imgfs must not wait for that device.
 *
 * Log format, version 1.  All integers are unsigned little-endian.
 *   File header, 32 bytes:
 *      0  8  magic "IMGFSLOG"
 *      8  4  version (1)
 *     12  4  flags: bit 0 = the image held only zeros when imgfs started
 *            (found by lseek SEEK_DATA; unset means "unknown", and a replay
 *            must start from a copy of the image as it was at start)
 *     16  8  image size in bytes
 *     24  4  file header size (32)
 *     28  4  record header size (32)
 *   Then records, each a 32-byte header, followed by LENGTH bytes of data
 *   for WRITE records only (no padding, no alignment):
 *      0  4  type: 1 WRITE, 2 FLUSH, 3 DISCARD, 4 ZERO, 5 END
 *      4  4  flags: FLUSH bit 0 = fdatasync (else fsync); 0 otherwise
 *      8  8  sequence number: 0 for the first record, then +1 each
 *     16  8  offset in bytes (0 for FLUSH and END)
 *     24  8  length in bytes (0 for FLUSH and END)
 *   WRITE    the data was written at OFFSET.
 *   FLUSH    every WRITE/DISCARD/ZERO before it had completed when the
 *            flush was received, so all of them are durable after it.
 *   DISCARD  fallocate(PUNCH_HOLE): the range reads as zeros afterwards.
 *   ZERO     fallocate(ZERO_RANGE): the range reads as zeros afterwards.
 *   END      written when imgfs exits cleanly; a log without it (imgfs
 *            killed, or an error writing the log) is incomplete.
 *   The log is created (or truncated) when imgfs starts, written with
 *   ordinary write(2) calls before each request is answered, and is meant
 *   to be read after imgfs has exited.  A request that fails is not logged.
 *   If writing the log fails, imgfs answers EIO to every later write and
 *   flush: the device has failed, and the log has no END record.
 */
#define FUSE_USE_VERSION 312
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <poll.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "imgfs-log.h"

#ifndef PR_SET_IO_FLUSHER
#define PR_SET_IO_FLUSHER 57
#endif

#define ROOT_INO FUSE_ROOT_ID
#define DISK_INO 2
#define DISK_NAME "disk"
#define ATTR_TIMEOUT 60.0
#define MAX_LATENCY_US 60000000ULL	/* one minute */

struct counters {
	uint64_t flushes, writes, bytes_written, reads, bytes_read;
	uint64_t discards, bytes_discarded, zeroouts, bytes_zeroed;
};

/* A write received and not yet acknowledged (--write-latency-us). */
struct delayed {
	struct delayed *next;
	fuse_req_t req;
	uint64_t off, size, due;
	char *data;
};

struct imgfs {
	int img_fd;
	uint64_t size;
	uint64_t latency_ns;
	uint64_t write_latency_ns;
	struct delayed *dhead, *dtail;	/* FIFO: due times only grow */
	int sync_image;
	char *stats_path, *stats_tmp;
	int stats_warned;
	int log_fd;		/* -1 without --log */
	uint64_t log_seq;	/* sequence number of the next record */
	uint64_t log_end;	/* bytes of the log written so far */
	int failed;		/* the log could not be written: EIO from now */
	struct counters c;
	char *rbuf;		/* read buffer, grown as needed */
	size_t rbuf_cap;
	char *zbuf;		/* zeros, for ranges that cannot be punched */
};

/* Command line, filled by fuse_opt_parse. */
struct options {
	char *image;
	char *latency;
	char *write_latency;
	char *stats;
	char *log;
	int sync_image;
};

#define OPT(t, m) { t, offsetof(struct options, m), 1 }
static const struct fuse_opt imgfs_opts[] = {
	OPT("--flush-latency-us %s", latency),
	OPT("--flush-latency-us=%s", latency),
	OPT("--write-latency-us %s", write_latency),
	OPT("--write-latency-us=%s", write_latency),
	OPT("--stats %s", stats),
	OPT("--stats=%s", stats),
	OPT("--log %s", log),
	OPT("--log=%s", log),
	OPT("--sync-image", sync_image),
	FUSE_OPT_END
};

/* ------------------------------------------------------------------------ */
/* Small helpers                                                            */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_until_ns(uint64_t deadline)
{
	struct timespec ts = {
		.tv_sec = (time_t)(deadline / 1000000000u),
		.tv_nsec = (long)(deadline % 1000000000u),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int pwrite_all(int fd, const char *buf, size_t len, off_t off)
{
	while (len > 0) {
		ssize_t n = pwrite(fd, buf, len, off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		buf += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* writev of all of IOV (modified), retrying short writes. */
static int writev_all(int fd, struct iovec *iov, int cnt)
{
	while (cnt > 0) {
		ssize_t n = writev(fd, iov, cnt);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		while (cnt > 0 && (size_t)n >= iov->iov_len) {
			n -= (ssize_t)iov->iov_len;
			iov++;
			cnt--;
		}
		if (cnt > 0) {
			iov->iov_base = (char *)iov->iov_base + n;
			iov->iov_len -= (size_t)n;
		}
	}
	return 0;
}

/* Parse a decimal number in [0, max]; -1 if it is not one. */
static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > max)
		return -1;
	*out = v;
	return 0;
}

/* PATH made absolute, with SUFFIX appended; malloc'ed, NULL on error. */
static char *absolute_path(const char *path, const char *suffix)
{
	char cwd[PATH_MAX], *p;
	size_t n;

	if (path[0] == '/')
		cwd[0] = '\0';
	else if (getcwd(cwd, sizeof cwd) == NULL)
		return NULL;
	n = strlen(cwd) + 1 + strlen(path) + strlen(suffix) + 1;
	p = malloc(n);
	if (p != NULL)
		snprintf(p, n, "%s%s%s%s", cwd, cwd[0] ? "/" : "", path, suffix);
	return p;
}

/* Is [off, off+len) inside the disk? */
static int in_disk(const struct imgfs *fs, uint64_t off, uint64_t len)
{
	return off <= fs->size && len <= fs->size - off;
}

/* ------------------------------------------------------------------------ */
/* Statistics and log                                                       */

static int stats_write(struct imgfs *fs)
{
	char buf[1024];
	int fd, len, rc;
	const struct counters *c = &fs->c;

	if (fs->stats_path == NULL)
		return 0;
	len = snprintf(buf, sizeof buf,
		"flushes %" PRIu64 "\n"
		"writes %" PRIu64 "\n"
		"bytes_written %" PRIu64 "\n"
		"reads %" PRIu64 "\n"
		"bytes_read %" PRIu64 "\n"
		"discards %" PRIu64 "\n"
		"bytes_discarded %" PRIu64 "\n"
		"zeroouts %" PRIu64 "\n"
		"bytes_zeroed %" PRIu64 "\n"
		"flush_latency_us %" PRIu64 "\n",
		c->flushes, c->writes, c->bytes_written, c->reads, c->bytes_read,
		c->discards, c->bytes_discarded, c->zeroouts, c->bytes_zeroed,
		fs->latency_ns / 1000u);
	if (len < 0 || (size_t)len >= sizeof buf)
		return -EOVERFLOW;
	fd = open(fs->stats_tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	rc = write_all(fd, buf, (size_t)len);
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(fs->stats_tmp, fs->stats_path) != 0)
		rc = -errno;
	if (rc != 0)
		unlink(fs->stats_tmp);
	return rc;
}

/* Update the stats file; a failure is reported once and does not fail the
 * device (the counters stay right in memory). */
static void stats_update(struct imgfs *fs)
{
	int rc = stats_write(fs);

	if (rc != 0 && !fs->stats_warned) {
		fprintf(stderr, "imgfs: cannot write %s: %s\n", fs->stats_path,
			strerror(-rc));
		fs->stats_warned = 1;
	}
}

/* Append one record (DATA is LEN bytes for WRITE, else NULL).  On failure
 * the log is cut back to its last complete record and the device fails. */
static int log_record(struct imgfs *fs, uint32_t type, uint32_t flags,
		      uint64_t off, uint64_t len, const void *data)
{
	unsigned char h[IMGFS_LOG_RECORD_HEADER] = {0};
	struct iovec iov[2];
	uint64_t total;
	int rc;

	if (fs->log_fd < 0)
		return 0;
	if (fs->failed)
		return -EIO;
	imgfs_put32(h, type);
	imgfs_put32(h + 4, flags);
	imgfs_put64(h + 8, fs->log_seq);
	imgfs_put64(h + 16, off);
	imgfs_put64(h + 24, len);
	iov[0].iov_base = h;
	iov[0].iov_len = sizeof h;
	iov[1].iov_base = (void *)(uintptr_t)data;
	iov[1].iov_len = data != NULL ? (size_t)len : 0;
	total = sizeof h + iov[1].iov_len;
	rc = writev_all(fs->log_fd, iov, data != NULL ? 2 : 1);
	if (rc != 0) {
		fprintf(stderr, "imgfs: cannot write the log: %s; "
			"failing every later write and flush\n", strerror(-rc));
		fs->failed = 1;
		if (ftruncate(fs->log_fd, (off_t)fs->log_end) != 0)
			fprintf(stderr, "imgfs: cannot cut the log back: %s\n",
				strerror(errno));
		return -EIO;
	}
	fs->log_end += total;
	fs->log_seq++;
	return 0;
}

static int log_open(struct imgfs *fs, const char *path)
{
	unsigned char h[IMGFS_LOG_FILE_HEADER] = {0};
	uint32_t flags = 0;
	int rc;

	fs->log_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fs->log_fd < 0)
		return -errno;
	if (lseek(fs->img_fd, 0, SEEK_DATA) < 0 && errno == ENXIO)
		flags |= IMGFS_LOG_F_ZERO_START;
	memcpy(h, IMGFS_LOG_MAGIC, 8);
	imgfs_put32(h + 8, IMGFS_LOG_VERSION);
	imgfs_put32(h + 12, flags);
	imgfs_put64(h + 16, fs->size);
	imgfs_put32(h + 24, IMGFS_LOG_FILE_HEADER);
	imgfs_put32(h + 28, IMGFS_LOG_RECORD_HEADER);
	rc = write_all(fs->log_fd, (const char *)h, sizeof h);
	if (rc != 0)
		return rc;
	fs->log_end = sizeof h;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* FUSE operations                                                          */

static struct imgfs *get_fs(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static int fill_attr(struct imgfs *fs, fuse_ino_t ino, struct stat *st)
{
	struct stat img;

	if (fstat(fs->img_fd, &img) != 0)
		return -errno;
	memset(st, 0, sizeof *st);
	st->st_uid = img.st_uid;
	st->st_gid = img.st_gid;
	st->st_atim = img.st_atim;
	st->st_mtim = img.st_mtim;
	st->st_ctim = img.st_ctim;
	st->st_blksize = 4096;
	if (ino == ROOT_INO) {
		st->st_ino = ROOT_INO;
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else if (ino == DISK_INO) {
		st->st_ino = DISK_INO;
		st->st_mode = S_IFREG | (img.st_mode & 0777);
		st->st_nlink = 1;
		st->st_size = (off_t)fs->size;
		st->st_blocks = img.st_blocks;
	} else {
		return -ENOENT;
	}
	return 0;
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	/* Writes must reach imgfs one by one, as issued. */
	conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	int rc;

	if (parent != ROOT_INO || strcmp(name, DISK_NAME) != 0) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	memset(&e, 0, sizeof e);
	rc = fill_attr(get_fs(req), DISK_INO, &e.attr);
	if (rc != 0) {
		fuse_reply_err(req, -rc);
		return;
	}
	e.ino = DISK_INO;
	e.generation = 1;
	e.attr_timeout = ATTR_TIMEOUT;
	e.entry_timeout = ATTR_TIMEOUT;
	fuse_reply_entry(req, &e);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;
	int rc = fill_attr(get_fs(req), ino, &st);

	(void)fi;
	if (rc != 0)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_attr(req, &st, ATTR_TIMEOUT);
}

/* The disk has a fixed size and no owner or mode of its own: only a
 * "change" to the current size, and times (ignored), are accepted. */
static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int to_set, struct fuse_file_info *fi)
{
	struct imgfs *fs = get_fs(req);
	const int times = FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME |
		FUSE_SET_ATTR_ATIME_NOW | FUSE_SET_ATTR_MTIME_NOW |
		FUSE_SET_ATTR_CTIME;

	(void)fi;
	if ((to_set & FUSE_SET_ATTR_SIZE) &&
	    (ino != DISK_INO || (uint64_t)attr->st_size != fs->size)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	if (to_set & ~(times | FUSE_SET_ATTR_SIZE)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	op_getattr(req, ino, NULL);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	static const struct {
		const char *name;
		fuse_ino_t ino;
		mode_t mode;
	} ents[] = {
		{".", ROOT_INO, S_IFDIR}, {"..", ROOT_INO, S_IFDIR},
		{DISK_NAME, DISK_INO, S_IFREG},
	};
	char buf[512];
	size_t used = 0;

	(void)fi;
	if (ino != ROOT_INO) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	if (size > sizeof buf)
		size = sizeof buf;
	for (off_t i = off; i >= 0 && (size_t)i < sizeof ents / sizeof ents[0]; i++) {
		struct stat st = { .st_ino = ents[i].ino, .st_mode = ents[i].mode };
		size_t n = fuse_add_direntry(req, buf + used, size - used,
					     ents[i].name, &st, i + 1);
		if (n > size - used)
			break;
		used += n;
	}
	fuse_reply_buf(req, buf, used);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (ino == ROOT_INO) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	if (ino != DISK_INO) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	/* No page cache for the disk: every read and write is a request. */
	fi->direct_io = 1;
	fi->keep_cache = 0;
	fuse_reply_open(req, fi);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct imgfs *fs = get_fs(req);
	size_t done = 0;

	(void)fi;
	if (ino != DISK_INO) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if ((uint64_t)off >= fs->size)
		size = 0;
	else if (size > fs->size - (uint64_t)off)
		size = (size_t)(fs->size - (uint64_t)off);
	if (size > fs->rbuf_cap) {
		char *p = realloc(fs->rbuf, size);
		if (p == NULL) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
		fs->rbuf = p;
		fs->rbuf_cap = size;
	}
	while (done < size) {
		ssize_t n = pread(fs->img_fd, fs->rbuf + done, size - done,
				  off + (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fuse_reply_err(req, errno);
			return;
		}
		if (n == 0)	/* IMAGE shrank behind our back */
			break;
		done += (size_t)n;
	}
	fs->c.reads++;
	fs->c.bytes_read += done;
	fuse_reply_buf(req, fs->rbuf, done);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	struct imgfs *fs = get_fs(req);
	uint64_t start = now_ns();
	int rc;

	(void)fi;
	if (ino != DISK_INO) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	if (fs->failed) {
		fuse_reply_err(req, EIO);
		return;
	}
	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (!in_disk(fs, (uint64_t)off, size)) {
		fuse_reply_err(req, ENOSPC);
		return;
	}
	if (size == 0) {
		fuse_reply_write(req, 0);
		return;
	}
	rc = pwrite_all(fs->img_fd, buf, size, off);
	if (rc == 0 && fs->write_latency_ns > 0) {
		/* Acknowledged (and logged) later, by ack_due(). */
		struct delayed *d = malloc(sizeof *d);
		char *copy = malloc(size);
		if (d == NULL || copy == NULL) {
			free(d);
			free(copy);
			fuse_reply_err(req, ENOMEM);
			return;
		}
		memcpy(copy, buf, size);
		*d = (struct delayed){ .req = req, .off = (uint64_t)off,
			.size = size, .due = start + fs->write_latency_ns,
			.data = copy };
		if (fs->dtail != NULL)
			fs->dtail->next = d;
		else
			fs->dhead = d;
		fs->dtail = d;
		return;
	}
	if (rc == 0)
		rc = log_record(fs, IMGFS_REC_WRITE, 0, (uint64_t)off, size, buf);
	if (rc != 0) {
		fuse_reply_err(req, -rc);
		return;
	}
	fs->c.writes++;
	fs->c.bytes_written += size;
	fuse_reply_write(req, size);
}

/* Acknowledge the delayed writes due by NOW (all of them if NOW is
 * UINT64_MAX), logging each as it is acknowledged. */
static void ack_due(struct imgfs *fs, uint64_t now)
{
	while (fs->dhead != NULL && fs->dhead->due <= now) {
		struct delayed *d = fs->dhead;
		int rc;

		fs->dhead = d->next;
		if (fs->dhead == NULL)
			fs->dtail = NULL;
		rc = log_record(fs, IMGFS_REC_WRITE, 0, d->off, d->size, d->data);
		if (rc != 0) {
			fuse_reply_err(d->req, -rc);
		} else {
			fs->c.writes++;
			fs->c.bytes_written += d->size;
			fuse_reply_write(d->req, (size_t)d->size);
		}
		free(d->data);
		free(d);
	}
}

/* The request loop with delayed write acknowledgements: one thread, the
 * requests in the order they are read, and between them the writes that
 * are due are acknowledged.  Returns 0 when the file system is unmounted. */
static int delayed_loop(struct fuse_session *se, struct imgfs *fs)
{
	struct fuse_buf fbuf = { .mem = NULL };
	struct pollfd pfd = { .fd = fuse_session_fd(se), .events = POLLIN };
	int ret = 0;

	while (!fuse_session_exited(se)) {
		struct timespec ts, *tp = NULL;
		uint64_t now = now_ns();
		int rc;

		ack_due(fs, now);
		if (fs->dhead != NULL) {
			uint64_t wait = fs->dhead->due - now;
			ts.tv_sec = (time_t)(wait / 1000000000u);
			ts.tv_nsec = (long)(wait % 1000000000u);
			tp = &ts;
		}
		rc = ppoll(&pfd, 1, tp, NULL);
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		if (rc == 0)
			continue;
		rc = fuse_session_receive_buf(se, &fbuf);
		if (rc == -EINTR || rc == -EAGAIN)
			continue;
		if (rc <= 0) {
			ret = rc;	/* 0: unmounted */
			break;
		}
		fuse_session_process_buf(se, &fbuf);
	}
	ack_due(fs, UINT64_MAX);
	free(fbuf.mem);
	fuse_session_reset(se);
	return ret < 0 ? -1 : 0;
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	/* close(2) of a file descriptor: nothing is cached, nothing to do. */
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

/* The device cache flush. */
static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		     struct fuse_file_info *fi)
{
	struct imgfs *fs = get_fs(req);
	uint64_t start = now_ns();
	int rc = 0;

	(void)ino;
	(void)fi;
	if (fs->failed) {
		fuse_reply_err(req, EIO);
		return;
	}
	/* A real disk's flushed data is nowhere dirty any more; IMAGE's pages
	 * would otherwise stay dirty in this machine's page cache for up to
	 * dirty_expire_centisecs and count, in /proc/meminfo, as data other
	 * programs have waiting (what --sync=auto looks at).  So the flush
	 * starts their writeback, without waiting for it. */
	if (fs->sync_image ? fdatasync(fs->img_fd) != 0
			   : sync_file_range(fs->img_fd, 0, 0,
					     SYNC_FILE_RANGE_WRITE) != 0)
		rc = -errno;
	if (rc == 0)
		rc = log_record(fs, IMGFS_REC_FLUSH,
				datasync ? IMGFS_REC_F_DATASYNC : 0, 0, 0, NULL);
	if (rc != 0) {
		fuse_reply_err(req, -rc);
		return;
	}
	fs->c.flushes++;
	stats_update(fs);
	if (fs->latency_ns > 0)
		sleep_until_ns(start + fs->latency_ns);
	fuse_reply_err(req, 0);
}

/* Make [off, off+len) of IMAGE read as zeros: punch a hole (PUNCH) or zero
 * the range in place, falling back to the other one, then to writing
 * zeros, when IMAGE's file system lacks the mode. */
static int zero_image(struct imgfs *fs, off_t off, off_t len, int punch)
{
	const int modes[2] = {
		FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
	};
	const size_t chunk = 1 << 20;

	for (int i = 0; i < 2; i++) {
		int mode = modes[punch ? i : 1 - i];
		if (fallocate(fs->img_fd, mode, off, len) == 0)
			return 0;
		if (errno != EOPNOTSUPP && errno != ENOSYS)
			return -errno;
	}
	if (fs->zbuf == NULL && (fs->zbuf = calloc(1, chunk)) == NULL)
		return -ENOMEM;
	while (len > 0) {
		size_t n = (uint64_t)len < chunk ? (size_t)len : chunk;
		int rc = pwrite_all(fs->img_fd, fs->zbuf, n, off);
		if (rc != 0)
			return rc;
		off += (off_t)n;
		len -= (off_t)n;
	}
	return 0;
}

/* Discard (punch hole) and write-zeroes (zero range) of the loop driver. */
static void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off,
			 off_t len, struct fuse_file_info *fi)
{
	struct imgfs *fs = get_fs(req);
	int rc, zero_mode = FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE;

	(void)fi;
	if (ino != DISK_INO) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	if (fs->failed) {
		fuse_reply_err(req, EIO);
		return;
	}
	if (off < 0 || len <= 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (!in_disk(fs, (uint64_t)off, (uint64_t)len)) {
		fuse_reply_err(req, ENOSPC);
		return;
	}
	/* Keep the log in the order of the image: writes before this. */
	ack_due(fs, UINT64_MAX);
	if (mode == (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)) {
		rc = zero_image(fs, off, len, 1);
		if (rc == 0)
			rc = log_record(fs, IMGFS_REC_DISCARD, 0, (uint64_t)off,
					(uint64_t)len, NULL);
		if (rc == 0) {
			fs->c.discards++;
			fs->c.bytes_discarded += (uint64_t)len;
		}
	} else if (mode == zero_mode || mode == FALLOC_FL_ZERO_RANGE) {
		rc = zero_image(fs, off, len, 0);
		if (rc == 0)
			rc = log_record(fs, IMGFS_REC_ZERO, 0, (uint64_t)off,
					(uint64_t)len, NULL);
		if (rc == 0) {
			fs->c.zeroouts++;
			fs->c.bytes_zeroed += (uint64_t)len;
		}
	} else if (mode == 0 || mode == FALLOC_FL_KEEP_SIZE) {
		/* Preallocation inside the disk: contents do not change. */
		rc = fallocate(fs->img_fd, mode, off, len) == 0 ? 0 : -errno;
	} else {
		rc = -EOPNOTSUPP;
	}
	/* Never ENOSYS: the kernel would stop sending any fallocate. */
	if (rc == -ENOSYS)
		rc = -EOPNOTSUPP;
	fuse_reply_err(req, -rc);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct imgfs *fs = get_fs(req);
	struct statvfs sv;

	(void)ino;
	memset(&sv, 0, sizeof sv);
	/* f_bsize is the discard granularity the loop driver uses. */
	sv.f_bsize = 4096;
	sv.f_frsize = 4096;
	sv.f_blocks = fs->size / 4096;
	sv.f_files = 2;
	sv.f_namemax = 255;
	fuse_reply_statfs(req, &sv);
}

static const struct fuse_lowlevel_ops imgfs_ops = {
	.init = op_init,
	.lookup = op_lookup,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.readdir = op_readdir,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.flush = op_flush,
	.release = op_release,
	.fsync = op_fsync,
	.fallocate = op_fallocate,
	.statfs = op_statfs,
};

/* ------------------------------------------------------------------------ */
/* Main                                                                     */

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct options *o = data;

	(void)outargs;
	if (key == FUSE_OPT_KEY_NONOPT && o->image == NULL) {
		o->image = strdup(arg);
		return o->image == NULL ? -1 : 0;
	}
	return 1;	/* keep it for fuse_parse_cmdline / fuse_session_new */
}

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [options] IMAGE MOUNTPOINT\n"
		"Show IMAGE as the file MOUNTPOINT/disk, for a loop device.\n"
		"\n"
		"  --flush-latency-us N  make every fsync take at least N microseconds\n"
		"  --write-latency-us N  make every write take at least N microseconds\n"
		"  --stats FILE          keep I/O counters in FILE (\"key value\" lines)\n"
		"  --log FILE            record every write and flush in FILE\n"
		"  --sync-image          fdatasync IMAGE in every fsync too\n"
		"\n", prog);
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts cmd;
	struct options o = {0};
	struct imgfs fs = { .img_fd = -1, .log_fd = -1 };
	struct fuse_session *se = NULL;
	struct stat st;
	uint64_t latency_us = 0, write_latency_us = 0;
	int ret = 1, rc, mounted = 0, handlers = 0;
	const char *prog = argc > 0 ? argv[0] : "imgfs";

	memset(&cmd, 0, sizeof cmd);
	if (fuse_opt_parse(&args, &o, imgfs_opts, opt_proc) != 0)
		goto out;
	if (o.latency != NULL && parse_u64(o.latency, MAX_LATENCY_US, &latency_us) != 0) {
		fprintf(stderr, "imgfs: --flush-latency-us: not a number of "
			"microseconds up to %llu: %s\n", MAX_LATENCY_US, o.latency);
		goto out;
	}
	if (o.write_latency != NULL &&
	    parse_u64(o.write_latency, MAX_LATENCY_US, &write_latency_us) != 0) {
		fprintf(stderr, "imgfs: --write-latency-us: not a number of "
			"microseconds up to %llu: %s\n", MAX_LATENCY_US, o.write_latency);
		goto out;
	}
	/* Before the user's -o options, so theirs win. */
	if (fuse_opt_insert_arg(&args, 1, "-ofsname=imgfs,subtype=imgfs") != 0)
		goto out;
	if (fuse_parse_cmdline(&args, &cmd) != 0)
		goto out;
	if (cmd.show_help) {
		usage(stdout, prog);
		fuse_cmdline_help();
		fuse_lowlevel_help();
		ret = 0;
		goto out;
	}
	if (cmd.show_version) {
		printf("imgfs (%s %s)\n", PACKAGE_NAME, PACKAGE_VERSION);
		fuse_lowlevel_version();
		ret = 0;
		goto out;
	}
	if (o.image == NULL || cmd.mountpoint == NULL) {
		usage(stderr, prog);
		goto out;
	}
	fs.latency_ns = latency_us * 1000u;
	fs.write_latency_ns = write_latency_us * 1000u;
	fs.sync_image = o.sync_image;

	/* imgfs serves a block device: reclaim in imgfs must not write to it.
	 * Needs CAP_SYS_RESOURCE; without it imgfs still works, except as
	 * the backing of a loop device under memory pressure. */
	if (prctl(PR_SET_IO_FLUSHER, 1, 0, 0, 0) != 0)
		fprintf(stderr, "imgfs: warning: PR_SET_IO_FLUSHER: %s\n",
			strerror(errno));
	/* Sleeps as exact as the timer allows (the default slack is 50 us). */
	if (prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0) != 0)
		fprintf(stderr, "imgfs: warning: PR_SET_TIMERSLACK: %s\n",
			strerror(errno));

	fs.img_fd = open(o.image, O_RDWR | O_CLOEXEC);
	if (fs.img_fd < 0) {
		fprintf(stderr, "imgfs: %s: %s\n", o.image, strerror(errno));
		goto out;
	}
	if (fstat(fs.img_fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "imgfs: %s: not a regular file\n", o.image);
		goto out;
	}
	fs.size = (uint64_t)st.st_size;

	if (o.stats != NULL) {
		/* Absolute: without -f, fuse_daemonize changes to "/". */
		fs.stats_path = absolute_path(o.stats, "");
		fs.stats_tmp = absolute_path(o.stats, ".tmp");
		if (fs.stats_path == NULL || fs.stats_tmp == NULL) {
			perror("imgfs");
			goto out;
		}
		rc = stats_write(&fs);
		if (rc != 0) {
			fprintf(stderr, "imgfs: %s: %s\n", o.stats, strerror(-rc));
			goto out;
		}
	}
	if (o.log != NULL) {
		rc = log_open(&fs, o.log);
		if (rc != 0) {
			fprintf(stderr, "imgfs: %s: %s\n", o.log, strerror(-rc));
			goto out;
		}
	}

	se = fuse_session_new(&args, &imgfs_ops, sizeof imgfs_ops, &fs);
	if (se == NULL)
		goto out;
	if (fuse_set_signal_handlers(se) != 0)
		goto out;
	handlers = 1;
	if (fuse_session_mount(se, cmd.mountpoint) != 0)
		goto out;
	mounted = 1;
	if (fuse_daemonize(cmd.foreground) != 0)
		goto out;
	/* One thread: requests are handled in the order they are read. */
	if (fs.write_latency_ns > 0)
		ret = delayed_loop(se, &fs) != 0;
	else
		ret = fuse_session_loop(se) != 0;

out:
	if (mounted)
		fuse_session_unmount(se);
	if (handlers)
		fuse_remove_signal_handlers(se);
	if (se != NULL)
		fuse_session_destroy(se);
	if (fs.log_fd >= 0) {
		if (mounted && log_record(&fs, IMGFS_REC_END, 0, 0, 0, NULL) != 0)
			ret = 1;
		if (fs.failed)
			ret = 1;
		if (close(fs.log_fd) != 0) {
			fprintf(stderr, "imgfs: closing the log: %s\n", strerror(errno));
			ret = 1;
		}
	}
	if (mounted && fs.stats_path != NULL) {
		rc = stats_write(&fs);
		if (rc != 0) {
			fprintf(stderr, "imgfs: %s: %s\n", fs.stats_path, strerror(-rc));
			ret = 1;
		}
	}
	if (fs.img_fd >= 0)
		close(fs.img_fd);
	free(fs.rbuf);
	free(fs.zbuf);
	free(fs.stats_path);
	free(fs.stats_tmp);
	free(cmd.mountpoint);
	free(o.image);
	free(o.latency);
	free(o.write_latency);
	free(o.stats);
	free(o.log);
	fuse_opt_free_args(&args);
	return ret;
}
