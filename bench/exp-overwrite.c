/* exp-overwrite - fdatasync versus fsync after overwriting part of a file
 * in place.
 *
 *   exp-overwrite [-s BYTES] create FILE
 *   exp-overwrite [-n OPS] [-b BLOCK] fsync|fdatasync FILE
 *
 * "create" writes FILE with BYTES bytes (default 1 MiB) and fsyncs it, so
 * that every block is allocated and durable.  The other modes then do OPS
 * rounds (default 100): overwrite BLOCK bytes (default 4096) at the next
 * block-aligned offset (wrapping at the end of the file), then fsync or
 * fdatasync.  No round changes the size or the block map, so fdatasync
 * need not write any metadata, while fsync must write the new mtime.
 *
 * Prints one line of key=value pairs: the rounds per second and the
 * median and largest latency of the sync call, in milliseconds. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
	fprintf(stderr, "exp-overwrite: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fputs("usage: exp-overwrite [-s BYTES] create FILE\n"
	      "       exp-overwrite [-n OPS] [-b BLOCK] fsync|fdatasync FILE\n", stderr);
	exit(2);
}

static void pwrite_all(int fd, const char *buf, size_t len, off_t off)
{
	while (len > 0) {
		ssize_t n = pwrite(fd, buf, len, off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("pwrite");
		}
		buf += n;
		len -= (size_t)n;
		off += n;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	long size = 1 << 20, ops = 100, block = 4096;
	int opt, fd, datasync;
	const char *mode, *path;
	struct stat st;
	double *lat, t0, t1;
	char *buf;

	while ((opt = getopt(argc, argv, "s:n:b:")) != -1) {
		switch (opt) {
		case 's': size = strtol(optarg, NULL, 10); break;
		case 'n': ops = strtol(optarg, NULL, 10); break;
		case 'b': block = strtol(optarg, NULL, 10); break;
		default: usage();
		}
	}
	if (argc - optind != 2 || size <= 0 || ops <= 0 || block <= 0)
		usage();
	mode = argv[optind];
	path = argv[optind + 1];

	if (strcmp(mode, "create") == 0) {
		buf = calloc(1, (size_t)size);
		if (!buf)
			die("malloc");
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			die(path);
		pwrite_all(fd, buf, (size_t)size, 0);
		if (fsync(fd) != 0 || close(fd) != 0)
			die("fsync");
		free(buf);
		return 0;
	}
	if (strcmp(mode, "fsync") == 0)
		datasync = 0;
	else if (strcmp(mode, "fdatasync") == 0)
		datasync = 1;
	else
		usage();

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		die(path);
	if (fstat(fd, &st) != 0)
		die("fstat");
	if (st.st_size < block)
		usage();
	buf = malloc((size_t)block);
	lat = calloc((size_t)ops, sizeof(*lat));
	if (!buf || !lat)
		die("malloc");

	t0 = now();
	for (long i = 0; i < ops; i++) {
		long nblocks = (long)(st.st_size / block);
		double s;

		memset(buf, 'a' + (int)(i % 26), (size_t)block);
		pwrite_all(fd, buf, (size_t)block, (off_t)(i % nblocks) * block);
		s = now();
		if ((datasync ? fdatasync(fd) : fsync(fd)) != 0)
			die(mode);
		lat[i] = (now() - s) * 1000;
	}
	t1 = now();
	if (close(fd) != 0)
		die("close");

	qsort(lat, (size_t)ops, sizeof(*lat), cmp_double);
	printf("exp=overwrite mode=%s ops=%ld block=%ld seconds=%.6f ops_per_s=%.1f "
	       "sync_ms_median=%.3f sync_ms_max=%.3f\n",
	       mode, ops, block, t1 - t0, ops / (t1 - t0),
	       ops % 2 ? lat[ops / 2] : (lat[ops / 2 - 1] + lat[ops / 2]) / 2,
	       lat[ops - 1]);
	free(buf);
	free(lat);
	return 0;
}
