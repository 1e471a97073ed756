/* fsync-time - how long does the fsync of one small new file take, and how
 * many device flushes does it cost?
 *
 *   fsync-time [-n COUNT] [-s BYTES] [-S STATS] [-k] DIR
 *   fsync-time -f [-n COUNT] [-S STATS] FILE
 *
 * Each of COUNT rounds (default 10) creates DIR/fsync-time.PID.I, writes
 * BYTES bytes (default 4096) to it, and times fsync() alone with
 * CLOCK_MONOTONIC.  The file system is synced (syncfs) once before the
 * first round so earlier work is not counted.  With -S, STATS is the
 * counters file of imgfs (--stats): its "flushes" value is read before and
 * after each fsync, giving the device flushes of that fsync.  The files
 * are removed at the end unless -k is given.
 *
 * With -f, FILE (an existing file or a block device) is opened for writing
 * and fsynced COUNT times with nothing written in between: the cost of the
 * flush path alone (on a block device: one cache flush per fsync).
 *
 * Output: one line per round, "round I fsync_us T [flushes F]", then
 * "summary count N min_us A median_us B mean_us C max_us D
 * [flushes_per_fsync min X median Y max Z]". */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The "flushes" counter of an imgfs stats file, or -1. */
static int64_t read_flushes(const char *path)
{
	char key[64];
	long long v;
	int64_t found = -1;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return -1;
	while (fscanf(f, "%63s %lld", key, &v) == 2) {
		if (strcmp(key, "flushes") == 0) {
			found = v;
			break;
		}
	}
	fclose(f);
	return found;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static long parse_pos(const char *s, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v <= 0) {
		fprintf(stderr, "fsync-time: %s must be a positive number: %s\n", what, s);
		exit(2);
	}
	return v;
}

int main(int argc, char *argv[])
{
	long count = 10, size = 4096;
	const char *stats = NULL, *dir;
	int keep = 0, fixed = 0, ffd = -1, opt, dfd, rc = 2;
	uint64_t *lat = NULL, *fl = NULL, sum = 0;
	char *data = NULL, path[4096];
	long i;

	while ((opt = getopt(argc, argv, "n:s:S:kf")) != -1) {
		switch (opt) {
		case 'n': count = parse_pos(optarg, "-n"); break;
		case 's': size = parse_pos(optarg, "-s"); break;
		case 'S': stats = optarg; break;
		case 'k': keep = 1; break;
		case 'f': fixed = 1; keep = 1; break;
		default:
			fprintf(stderr, "usage: fsync-time [-n COUNT] [-s BYTES] [-S STATS] [-k] DIR\n"
				"       fsync-time -f [-n COUNT] [-S STATS] FILE\n");
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: fsync-time [-n COUNT] [-s BYTES] [-S STATS] [-k] DIR\n"
				"       fsync-time -f [-n COUNT] [-S STATS] FILE\n");
		return 2;
	}
	dir = argv[optind];
	lat = calloc((size_t)count, sizeof *lat);
	fl = calloc((size_t)count, sizeof *fl);
	data = malloc((size_t)size);
	if (lat == NULL || fl == NULL || data == NULL) {
		perror("fsync-time");
		goto out;
	}
	for (long k = 0; k < size; k++)
		data[k] = (char)('a' + k % 26);
	if (fixed) {
		ffd = open(dir, O_WRONLY | O_CLOEXEC);
		if (ffd < 0 || fsync(ffd) != 0) {
			perror(dir);
			goto out;
		}
	} else {
		dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0 || syncfs(dfd) != 0) {
			perror(dir);
			goto out;
		}
		close(dfd);
	}
	if (stats != NULL && read_flushes(stats) < 0) {
		fprintf(stderr, "fsync-time: %s: no \"flushes\" counter\n", stats);
		goto out;
	}

	for (i = 0; i < count; i++) {
		int64_t f0 = 0, f1 = 0;
		uint64_t t0, t1;
		int fd;

		if (fixed) {
			snprintf(path, sizeof path, "%s", dir);
			fd = dup(ffd);
		} else {
			snprintf(path, sizeof path, "%s/fsync-time.%ld.%ld", dir,
				 (long)getpid(), i);
			fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		}
		if (fd < 0 || (!fixed && write(fd, data, (size_t)size) != size)) {
			perror(path);
			goto out;
		}
		if (stats != NULL)
			f0 = read_flushes(stats);
		t0 = now_ns();
		if (fsync(fd) != 0) {
			perror(path);
			goto out;
		}
		t1 = now_ns();
		if (stats != NULL)
			f1 = read_flushes(stats);
		if (close(fd) != 0) {
			perror(path);
			goto out;
		}
		lat[i] = (t1 - t0) / 1000u;
		sum += lat[i];
		if (stats != NULL) {
			if (f0 < 0 || f1 < f0) {
				fprintf(stderr, "fsync-time: %s: unreadable counter\n", stats);
				goto out;
			}
			fl[i] = (uint64_t)(f1 - f0);
			printf("round %ld fsync_us %" PRIu64 " flushes %" PRIu64 "\n",
			       i, lat[i], fl[i]);
		} else {
			printf("round %ld fsync_us %" PRIu64 "\n", i, lat[i]);
		}
	}
	qsort(lat, (size_t)count, sizeof *lat, cmp_u64);
	printf("summary count %ld min_us %" PRIu64 " median_us %" PRIu64
	       " mean_us %" PRIu64 " max_us %" PRIu64, count, lat[0],
	       lat[count / 2], sum / (uint64_t)count, lat[count - 1]);
	if (stats != NULL) {
		qsort(fl, (size_t)count, sizeof *fl, cmp_u64);
		printf(" flushes_per_fsync min %" PRIu64 " median %" PRIu64
		       " max %" PRIu64, fl[0], fl[count / 2], fl[count - 1]);
	}
	printf("\n");
	rc = 0;
out:
	if (!keep) {
		for (long k = 0; k < count; k++) {
			snprintf(path, sizeof path, "%s/fsync-time.%ld.%ld", dir,
				 (long)getpid(), k);
			if (unlink(path) != 0 && errno != ENOENT) {
				perror(path);
				rc = rc ? rc : 1;
			}
		}
	}
	if (ffd >= 0)
		close(ffd);
	free(lat);
	free(fl);
	free(data);
	return rc;
}
