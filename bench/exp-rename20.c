/* exp-rename20 - the "20 files" experiment: how dpkg used to make a
 * package's files durable versus the batched recipe unpkg uses.
 *
 *   exp-rename20 [-n FILES] [-s BYTES] MODE DIR
 *
 * Writes FILES new files (default 20) of BYTES bytes each (default 16384)
 * as DIR/fNNN.dpkg-new and renames each to DIR/fNNN, made durable by MODE:
 *
 *   fsync   write every file, then for each in turn: fsync, rename
 *           (dpkg before the fix)
 *   recipe  write each file and start its writeback at once with
 *           sync_file_range(SYNC_FILE_RANGE_WRITE); then one pass of
 *           sync_file_range(SYNC_FILE_RANGE_WAIT_BEFORE), one pass of
 *           fdatasync, one pass of rename (the fix)
 *   syncfs  write every file, one syncfs, one pass of rename
 *
 * The time from the first write to the last rename is printed as one line
 * of key=value pairs: "exp=rename20 mode=M files=N bytes=B seconds=S".
 * DIR must exist and hold none of the names. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const char *name)
{
	fprintf(stderr, "exp-rename20: %s %s: %s\n", what, name ? name : "",
		strerror(errno));
	exit(1);
}

static void usage(void)
{
	fputs("usage: exp-rename20 [-n FILES] [-s BYTES] fsync|recipe|syncfs DIR\n", stderr);
	exit(2);
}

static void write_all(int fd, const char *buf, size_t len, const char *name)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("write", name);
		}
		buf += n;
		len -= (size_t)n;
	}
}

int main(int argc, char **argv)
{
	long nfiles = 20, size = 16384;
	int opt, dirfd, *fds;
	const char *mode, *dir;
	char *buf, name[64], tmp[80];
	double t0, t1;

	while ((opt = getopt(argc, argv, "n:s:")) != -1) {
		switch (opt) {
		case 'n': nfiles = strtol(optarg, NULL, 10); break;
		case 's': size = strtol(optarg, NULL, 10); break;
		default: usage();
		}
	}
	if (argc - optind != 2 || nfiles <= 0 || nfiles > 100000 || size < 0)
		usage();
	mode = argv[optind];
	dir = argv[optind + 1];
	if (strcmp(mode, "fsync") != 0 && strcmp(mode, "recipe") != 0 &&
	    strcmp(mode, "syncfs") != 0)
		usage();

	dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (dirfd < 0)
		die("open", dir);
	fds = calloc((size_t)nfiles, sizeof(*fds));
	buf = malloc((size_t)size + 1);
	if (!fds || !buf)
		die("malloc", NULL);
	for (long i = 0; i < size; i++)
		buf[i] = (char)('a' + i % 26);

	t0 = now();
	for (long i = 0; i < nfiles; i++) {
		snprintf(tmp, sizeof(tmp), "f%03ld.dpkg-new", i);
		fds[i] = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fds[i] < 0)
			die("create", tmp);
		write_all(fds[i], buf, (size_t)size, tmp);
		if (strcmp(mode, "recipe") == 0 &&
		    sync_file_range(fds[i], 0, 0, SYNC_FILE_RANGE_WRITE) != 0)
			die("sync_file_range(WRITE)", tmp);
	}
	if (strcmp(mode, "recipe") == 0) {
		for (long i = 0; i < nfiles; i++)
			if (sync_file_range(fds[i], 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE) != 0)
				die("sync_file_range(WAIT_BEFORE)", NULL);
		for (long i = 0; i < nfiles; i++)
			if (fdatasync(fds[i]) != 0)
				die("fdatasync", NULL);
	} else if (strcmp(mode, "syncfs") == 0) {
		if (syncfs(dirfd) != 0)
			die("syncfs", dir);
	}
	for (long i = 0; i < nfiles; i++) {
		snprintf(tmp, sizeof(tmp), "f%03ld.dpkg-new", i);
		snprintf(name, sizeof(name), "f%03ld", i);
		if (strcmp(mode, "fsync") == 0 && fsync(fds[i]) != 0)
			die("fsync", tmp);
		if (renameat(dirfd, tmp, dirfd, name) != 0)
			die("rename", tmp);
	}
	t1 = now();

	for (long i = 0; i < nfiles; i++)
		if (close(fds[i]) != 0)
			die("close", NULL);
	close(dirfd);
	printf("exp=rename20 mode=%s files=%ld bytes=%ld seconds=%.6f\n",
	       mode, nfiles, size, t1 - t0);
	free(fds);
	free(buf);
	return 0;
}
