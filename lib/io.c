/* io.c - system call loops shared by the engine (see io.h). */
#include "config.h"

#include <errno.h>
#include <unistd.h>

#include "io.h"

int unpkg_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}
