/* dirty-neighbour - the other programs of a file system, for unpkg-bench
 * --dirty-neighbour: one that keeps much data dirty, one that fsyncs.
 *
 *   dirty-neighbour write FILE SIZE LOG
 *   dirty-neighbour fsync [-i MS] FILE LOG
 *
 * "write" writes SIZE bytes into FILE without syncing, then every 50 ms
 * reads Dirty and Writeback of /proc/meminfo and, when Dirty is below
 * SIZE (after a sync wrote the data back), rewrites the missing amount of
 * FILE, 1 MiB at a time, from where it last stopped: Dirty stays near
 * SIZE while costing little CPU when nobody writes the data back.  Every
 * 50 ms it appends "EPOCH DIRTY_KIB WRITEBACK_KIB" to LOG.
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

static int do_write(const char *file, long long size, const char *logpath)
{
	static char buf[CHUNK];
	long long off = 0, dirty, wb;
	int fd, logfd = open_log(logpath);
	double next;

	fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		die(file);
	memset(buf, 'n', sizeof(buf));
	for (next = clock_s(CLOCK_MONOTONIC); !stop; next += 0.05) {
		char line[96];
		long long todo;

		meminfo(&dirty, &wb);
		snprintf(line, sizeof(line), "%.6f %lld %lld\n", clock_s(CLOCK_REALTIME), dirty, wb);
		log_line(logfd, line);
		todo = size - dirty * 1024;
		if (todo > MAX_PER_TICK)
			todo = MAX_PER_TICK;
		while (todo > 0 && !stop) {
			size_t n = (size_t)(size - off < CHUNK ? size - off : CHUNK);

			if (pwrite(fd, buf, n, off) != (ssize_t)n) {
				if (errno == EINTR)
					continue;
				die(file);
			}
			todo -= (long long)n;
			off = (off + (long long)n) % size;
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
