/* dirty-neighbour - the other programs of a file system, for unpkg-bench
 * --dirty-neighbour: one that keeps much data dirty, one that fsyncs.
 *
 *   dirty-neighbour write FILE SIZE LOG
 *   dirty-neighbour fsync [-i MS] FILE LOG
 *
 * "write" writes SIZE bytes into FILE without syncing, and then every
 * 50 ms asks the file system (FIEMAP) which parts of FILE are no longer
 * waiting for delayed allocation, that is, were written back (by a sync,
 * or by the kernel's flusher), frees them (punches a hole) and writes them
 * again: SIZE of FILE stays dirty on the file system at little CPU cost
 * while nobody writes it back.  (Dirty of /proc/meminfo cannot tell: it
 * counts every file system of the machine, and a sync that writes FILE
 * through a loop device to an image file moves the dirty pages to the
 * image's file system without lowering it.)  Every 50 ms it appends
 * "EPOCH OWN_KIB DIRTY_KIB WRITEBACK_KIB" to LOG: how much of FILE waits
 * for allocation, then Dirty and Writeback of /proc/meminfo.  It needs a
 * file system with delayed allocation that FIEMAP reports (ext4, xfs,
 * btrfs).
 *
 * "fsync" appends 512 bytes to FILE and fsyncs it every MS milliseconds
 * (default 50; a late sample starts the next one at once), and appends
 * "EPOCH LATENCY_MS" to LOG for each, EPOCH being the wall clock time the
 * write began (as bash's EPOCHREALTIME), LATENCY_MS write + fsync.  FILE
 * is emptied (untimed) when it passes 1 MiB.
 *
 * Both run until SIGTERM or SIGINT, or until their parent ends; each log
 * line is one write(2), so the log can be read while they run. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (1024 * 1024)
/* At most so much rewritten per tick, so that the log keeps its pace. */
#define MAX_PER_TICK (256LL * CHUNK)

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void die(const char *what)
{
	fprintf(stderr, "dirty-neighbour: %s: %s\n", what, strerror(errno));
	exit(1);
}

static _Noreturn void usage(void)
{
	fputs("usage: dirty-neighbour write FILE SIZE LOG\n"
	      "       dirty-neighbour fsync [-i MS] FILE LOG\n",
	      stderr);
	exit(2);
}

static double clock_s(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) != 0)
		die("clock_gettime");
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sleep until the CLOCK_MONOTONIC time t (seconds), or a signal. */
static void sleep_until(double t)
{
	struct timespec ts;

	ts.tv_sec = (time_t)t;
	ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

static void log_line(int fd, const char *line)
{
	size_t len = strlen(line);

	if (write(fd, line, len) != (ssize_t)len)
		die("write to the log");
}

/* Dirty and Writeback of /proc/meminfo, in KiB. */
static void meminfo(long long *dirty, long long *writeback)
{
	char line[256];
	long long v;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		die("/proc/meminfo");
	*dirty = *writeback = -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Dirty: %lld kB", &v) == 1)
			*dirty = v;
		else if (sscanf(line, "Writeback: %lld kB", &v) == 1)
			*writeback = v;
	}
	if (fclose(f) != 0)
		die("/proc/meminfo");
	if (*dirty < 0 || *writeback < 0) {
		fputs("dirty-neighbour: no Dirty or Writeback in /proc/meminfo\n", stderr);
		exit(1);
	}
}

static int open_log(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

	if (fd < 0)
		die(path);
	return fd;
}

/* A range of FILE to write again. */
struct range {
	long long off, len;
	int punch; /* allocated on disk: free it first */
};

#define MAX_RANGES 256
#define NEXTENTS 256

static void add_range(struct range *r, int *n, long long off, long long len, int punch)
{
	if (len <= 0 || *n >= MAX_RANGES)
		return;
	r[*n].off = off;
	r[*n].len = len;
	r[*n].punch = punch;
	(*n)++;
}

/* The bytes of FILE (fd, SIZE long) waiting for delayed allocation, and
 * in R (*n of them) the ranges that are not: holes and extents on disk. */
static long long own_dirty(int fd, long long size, struct range *r, int *n)
{
	static union {
		struct fiemap fm;
		char bytes[sizeof(struct fiemap) + NEXTENTS * sizeof(struct fiemap_extent)];
	} u;
	long long pos = 0, delalloc = 0;
	int last = 0;

	*n = 0;
	while (!last && pos < size) {
		unsigned i;

		memset(&u.fm, 0, sizeof(u.fm));
		u.fm.fm_start = (unsigned long long)pos;
		u.fm.fm_length = (unsigned long long)(size - pos);
		u.fm.fm_extent_count = NEXTENTS;
		if (ioctl(fd, FS_IOC_FIEMAP, &u.fm) != 0)
			die("FIEMAP");
		if (u.fm.fm_mapped_extents == 0)
			break;
		for (i = 0; i < u.fm.fm_mapped_extents; i++) {
			const struct fiemap_extent *e = &u.fm.fm_extents[i];
			long long lo = (long long)e->fe_logical, hi = lo + (long long)e->fe_length;

			if (lo < pos)
				lo = pos;
			if (hi > size)
				hi = size;
			add_range(r, n, pos, lo - pos, 0);
			if (e->fe_flags & FIEMAP_EXTENT_DELALLOC)
				delalloc += hi - lo;
			else
				add_range(r, n, lo, hi - lo, 1);
			if (hi > pos)
				pos = hi;
			if (e->fe_flags & FIEMAP_EXTENT_LAST)
				last = 1;
		}
	}
	add_range(r, n, pos, size - pos, 0);
	return delalloc;
}

static int do_write(const char *file, long long size, const char *logpath)
{
	static char buf[CHUNK];
	static struct range r[MAX_RANGES];
	long long dirty, wb, own;
	int fd, logfd = open_log(logpath), n;
	double next;

	fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		die(file);
	if (ftruncate(fd, size) != 0)
		die(file);
	memset(buf, 'n', sizeof(buf));
	for (next = clock_s(CLOCK_MONOTONIC); !stop; next += 0.05) {
		char line[128];
		long long todo = MAX_PER_TICK;
		int i;

		own = own_dirty(fd, size, r, &n);
		meminfo(&dirty, &wb);
		snprintf(line, sizeof(line), "%.6f %lld %lld %lld\n", clock_s(CLOCK_REALTIME),
			 own / 1024, dirty, wb);
		log_line(logfd, line);
		for (i = 0; i < n && todo > 0 && !stop; i++) {
			long long off = r[i].off, end = r[i].off + r[i].len;

			if (r[i].punch &&
			    fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, r[i].len) != 0)
				die("fallocate(PUNCH_HOLE)");
			while (off < end && todo > 0) {
				size_t len = (size_t)(end - off < CHUNK ? end - off : CHUNK);

				if (pwrite(fd, buf, len, off) != (ssize_t)len) {
					if (errno == EINTR)
						continue;
					die(file);
				}
				off += (long long)len;
				todo -= (long long)len;
			}
		}
		if (clock_s(CLOCK_MONOTONIC) > next + 0.05)
			next = clock_s(CLOCK_MONOTONIC);
		sleep_until(next + 0.05);
	}
	if (close(fd) != 0 || close(logfd) != 0)
		die("close");
	return 0;
}

static int do_fsync(const char *file, long interval_ms, const char *logpath)
{
	static const char rec[512] = { 'f' };
	double step = (double)interval_ms / 1000.0, next;
	int fd, logfd = open_log(logpath);

	fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		die(file);
	for (next = clock_s(CLOCK_MONOTONIC); !stop;) {
		char line[64];
		struct stat st;
		double wall, t0, t1;

		sleep_until(next);
		if (stop)
			break;
		wall = clock_s(CLOCK_REALTIME);
		t0 = clock_s(CLOCK_MONOTONIC);
		if (write(fd, rec, sizeof(rec)) != (ssize_t)sizeof(rec)) {
			if (errno == EINTR)
				continue;
			die(file);
		}
		if (fsync(fd) != 0) {
			if (errno == EINTR)
				continue;
			die(file);
		}
		t1 = clock_s(CLOCK_MONOTONIC);
		snprintf(line, sizeof(line), "%.6f %.3f\n", wall, (t1 - t0) * 1000.0);
		log_line(logfd, line);
		next += step;
		if (next < t1)
			next = t1;
		if (fstat(fd, &st) != 0)
			die(file);
		if (st.st_size > CHUNK && (ftruncate(fd, 0) != 0 || fsync(fd) != 0))
			die(file);
	}
	if (close(fd) != 0 || close(logfd) != 0)
		die("close");
	return 0;
}

static long long number(const char *s, long long min)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min)
		usage();
	return v;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	long interval = 50;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGINT, &sa, NULL) != 0)
		die("sigaction");
	/* Gone with the benchmark, even when it is killed. */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0)
		die("prctl");
	if (getppid() == 1)
		return 0;
	if (argc == 5 && strcmp(argv[1], "write") == 0)
		return do_write(argv[2], number(argv[3], CHUNK), argv[4]);
	if (argc >= 4 && strcmp(argv[1], "fsync") == 0) {
		int i = 2;

		if (strcmp(argv[i], "-i") == 0) {
			if (argc != 6)
				usage();
			interval = (long)number(argv[i + 1], 1);
			i += 2;
		}
		if (argc != i + 2)
			usage();
		return do_fsync(argv[i], interval, argv[i + 1]);
	}
	usage();
}
