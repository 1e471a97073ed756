/* cachestat - how many pages of a file are dirty or under writeback in
 * this machine's page cache (cachestat(2), Linux 6.5), for
 * tests/integration/imgfs.sh.
 *
 * Usage: cachestat FILE
 * Prints "dirty N\nwriteback N\n" (pages); exits 77 where the kernel has
 * no cachestat, 1 on any other error. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_cachestat
#define SYS_cachestat 451	/* the same number on every architecture */
#endif

struct range {
	uint64_t off, len;	/* len 0: to the end of the file */
};

struct stat_pages {
	uint64_t cache, dirty, writeback, evicted, recently_evicted;
};

int main(int argc, char **argv)
{
	struct range r = { 0, 0 };
	struct stat_pages s;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: cachestat FILE\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "cachestat: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	memset(&s, 0, sizeof(s));
	if (syscall(SYS_cachestat, fd, &r, &s, 0) != 0) {
		int e = errno;

		fprintf(stderr, "cachestat: %s: %s\n", argv[1], strerror(e));
		close(fd);
		return e == ENOSYS ? 77 : 1;
	}
	close(fd);
	printf("dirty %llu\nwriteback %llu\n", (unsigned long long)s.dirty,
	       (unsigned long long)s.writeback);
	return 0;
}
