/* exp-parfsync - many small files, each made durable with its own fsync:
 * one after the other, or in batches whose fsyncs are in flight together.
 *
 *   exp-parfsync [-n FILES] [-s BYTES] [-b BATCH] [-t THREADS] [-d] MODE DIR
 *
 *   serial  for each file: create, write, fsync, close
 *   batch   for each batch of BATCH files (default 64): create and write
 *           them all, then fsync them with THREADS threads at once
 *           (default 32), then close them
 *
 * FILES (default 1000) new files of BYTES bytes (default 4096) are created
 * in DIR as pNNNNNN.  -d uses fdatasync instead of fsync.  While several
 * fsyncs wait together the file system can make them durable with one
 * journal write and one device flush.  Prints one line of key=value pairs
 * with the elapsed time and the files made durable per second. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct batch {
	int *fds;
	long count;
	int datasync;
	atomic_long next;
	atomic_int failed;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "exp-parfsync: %s: %s\n", what, strerror(errno));
	exit(1);
}

_Noreturn static void usage(void)
{
	fputs("usage: exp-parfsync [-n FILES] [-s BYTES] [-b BATCH] [-t THREADS] [-d] "
	      "serial|batch DIR\n", stderr);
	exit(2);
}

static int sync_fd(int fd, int datasync)
{
	return datasync ? fdatasync(fd) : fsync(fd);
}

/* A worker: fsync the batch's files, taking the next one until none is
 * left. */
static void *worker(void *arg)
{
	struct batch *b = arg;
	long i;

	while ((i = atomic_fetch_add(&b->next, 1)) < b->count)
		if (sync_fd(b->fds[i], b->datasync) != 0)
			atomic_store(&b->failed, errno);
	return NULL;
}

static int create_file(int dirfd, long i, const char *buf, size_t len)
{
	char name[32];
	int fd;

	snprintf(name, sizeof(name), "p%06ld", i);
	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		die("create");
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("write");
		}
		buf += n;
		len -= (size_t)n;
	}
	return fd;
}

int main(int argc, char **argv)
{
	long nfiles = 1000, size = 4096, bsize = 64, nthreads = 32;
	int opt, datasync = 0, dirfd, batch_mode, *fds;
	pthread_t *tids;
	char *buf;
	double t0, t1;

	while ((opt = getopt(argc, argv, "n:s:b:t:d")) != -1) {
		switch (opt) {
		case 'n': nfiles = strtol(optarg, NULL, 10); break;
		case 's': size = strtol(optarg, NULL, 10); break;
		case 'b': bsize = strtol(optarg, NULL, 10); break;
		case 't': nthreads = strtol(optarg, NULL, 10); break;
		case 'd': datasync = 1; break;
		default: usage();
		}
	}
	if (argc - optind != 2 || nfiles <= 0 || size < 0 || bsize <= 0 ||
	    bsize > 100000 || nthreads <= 0 || nthreads > 1024)
		usage();
	if (strcmp(argv[optind], "serial") == 0)
		batch_mode = 0;
	else if (strcmp(argv[optind], "batch") == 0)
		batch_mode = 1;
	else
		usage();

	dirfd = open(argv[optind + 1], O_RDONLY | O_DIRECTORY);
	if (dirfd < 0)
		die(argv[optind + 1]);
	buf = malloc((size_t)size + 1);
	fds = calloc((size_t)bsize, sizeof(*fds));
	tids = calloc((size_t)nthreads, sizeof(*tids));
	if (!buf || !fds || !tids)
		die("malloc");
	memset(buf, 'x', (size_t)size);

	t0 = now();
	if (!batch_mode) {
		for (long i = 0; i < nfiles; i++) {
			int fd = create_file(dirfd, i, buf, (size_t)size);

			if (sync_fd(fd, datasync) != 0)
				die("fsync");
			if (close(fd) != 0)
				die("close");
		}
	} else {
		for (long first = 0; first < nfiles; first += bsize) {
			struct batch b = { .fds = fds, .datasync = datasync };
			long nt;
			int rc;

			b.count = nfiles - first < bsize ? nfiles - first : bsize;
			atomic_init(&b.next, 0);
			atomic_init(&b.failed, 0);
			for (long i = 0; i < b.count; i++)
				fds[i] = create_file(dirfd, first + i, buf, (size_t)size);
			nt = nthreads < b.count ? nthreads : b.count;
			for (long t = 0; t < nt; t++) {
				rc = pthread_create(&tids[t], NULL, worker, &b);
				if (rc != 0) {
					errno = rc;
					die("pthread_create");
				}
			}
			for (long t = 0; t < nt; t++)
				pthread_join(tids[t], NULL);
			if (atomic_load(&b.failed) != 0) {
				errno = atomic_load(&b.failed);
				die("fsync");
			}
			for (long i = 0; i < b.count; i++)
				if (close(fds[i]) != 0)
					die("close");
		}
	}
	t1 = now();

	close(dirfd);
	printf("exp=parfsync mode=%s files=%ld bytes=%ld batch=%ld threads=%ld "
	       "call=%s seconds=%.6f files_per_s=%.0f\n",
	       batch_mode ? "batch" : "serial", nfiles, size,
	       batch_mode ? bsize : 1, batch_mode ? nthreads : 1,
	       datasync ? "fdatasync" : "fsync", t1 - t0, nfiles / (t1 - t0));
	free(buf);
	free(fds);
	free(tids);
	return 0;
}
