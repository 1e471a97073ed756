/* exp-fsynclat - the latency of fsync on a small file while other work
 * dirties the same file system.
 *
 *   exp-fsynclat [-n SAMPLES] [-i MS] [-w BIGFILE [-W BYTES] [-F MIB]] DIR
 *
 * Every MS milliseconds (default 50), SAMPLES times (default 60), appends
 * 512 bytes to DIR/fsynclat.small and fsyncs it, timing write + fsync.
 * With -w, a child process first makes BIGFILE a sparse file of BYTES
 * bytes (default 256 MiB) and then, until the samples are taken, writes
 * 4 KiB blocks at random offsets into it without ever syncing (the
 * buffered writer of a database or a download); the samples start after
 * one second, once dirty pages have piled up.  Every MIB MiB written
 * (default 16; 0: never) the writer starts writeback of its whole file with
 * sync_file_range(SYNC_FILE_RANGE_WRITE), without waiting: that is what the
 * kernel's flusher threads do once dirty data passes dirty_background_ratio,
 * which on a machine with much memory a short run never reaches.  Other
 * load (an install running beside it) is the caller's business.
 *
 * Prints one line of key=value pairs: median, 90th percentile and largest
 * latency in milliseconds, and how much the writer wrote. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "exp-fsynclat: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fputs("usage: exp-fsynclat [-n SAMPLES] [-i MS] [-w BIGFILE [-W BYTES] [-F MIB]] DIR\n",
	      stderr);
	exit(2);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* The writer: random 4 KiB buffered writes into a sparse file, forever.
 * *written counts the bytes (shared with the parent). */
static void writer(const char *path, long long size, long flush_mib,
		   volatile uint64_t *written)
{
	uint64_t since_flush = 0;
	uint64_t x = 88172645463325252ull;
	long long blocks = size / 4096;
	char buf[4096];
	int fd;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
		die("prctl");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		die(path);
	if (ftruncate(fd, size) != 0)
		die("ftruncate");
	memset(buf, 'w', sizeof(buf));
	for (;;) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (pwrite(fd, buf, sizeof(buf), (off_t)(x % (uint64_t)blocks) * 4096) !=
		    (ssize_t)sizeof(buf))
			die("pwrite");
		*written += sizeof(buf);
		since_flush += sizeof(buf);
		if (flush_mib > 0 && since_flush >= (uint64_t)flush_mib << 20) {
			since_flush = 0;
			if (sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE) != 0)
				die("sync_file_range");
		}
	}
}

int main(int argc, char **argv)
{
	long samples = 60, interval = 50, flush_mib = 16;
	long long bigsize = 256ll << 20;
	const char *big = NULL;
	volatile uint64_t *written;
	char small[4096], data[512];
	pid_t child = -1;
	double *lat;
	int opt, fd;

	while ((opt = getopt(argc, argv, "n:i:w:W:F:")) != -1) {
		switch (opt) {
		case 'n': samples = strtol(optarg, NULL, 10); break;
		case 'i': interval = strtol(optarg, NULL, 10); break;
		case 'w': big = optarg; break;
		case 'W': bigsize = strtoll(optarg, NULL, 10); break;
		case 'F': flush_mib = strtol(optarg, NULL, 10); break;
		default: usage();
		}
	}
	if (argc - optind != 1 || samples <= 0 || interval < 0 || bigsize < 4096 ||
	    flush_mib < 0)
		usage();
	snprintf(small, sizeof(small), "%s/fsynclat.small", argv[optind]);
	lat = calloc((size_t)samples, sizeof(*lat));
	written = mmap(NULL, sizeof(*written), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!lat || written == MAP_FAILED)
		die("memory");
	*written = 0;
	memset(data, 's', sizeof(data));

	fd = open(small, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		die(small);
	if (fsync(fd) != 0)
		die("fsync");
	if (big) {
		child = fork();
		if (child < 0)
			die("fork");
		if (child == 0)
			writer(big, bigsize, flush_mib, written);
		sleep_ms(1000);
	}
	for (long i = 0; i < samples; i++) {
		double s = now();

		if (write(fd, data, sizeof(data)) != (ssize_t)sizeof(data))
			die("write");
		if (fsync(fd) != 0)
			die("fsync");
		lat[i] = (now() - s) * 1000;
		sleep_ms(interval);
	}
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	if (close(fd) != 0)
		die("close");

	qsort(lat, (size_t)samples, sizeof(*lat), cmp_double);
	printf("exp=fsynclat samples=%ld writer=%s writeback_every_mib=%ld writer_mib=%.0f "
	       "p50_ms=%.3f p90_ms=%.3f max_ms=%.3f\n", samples, big ? "yes" : "no",
	       big ? flush_mib : 0, (double)*written / (1 << 20),
	       samples % 2 ? lat[samples / 2] : (lat[samples / 2 - 1] + lat[samples / 2]) / 2,
	       lat[(samples * 9) / 10 < samples ? (samples * 9) / 10 : samples - 1],
	       lat[samples - 1]);
	free(lat);
	return 0;
}
