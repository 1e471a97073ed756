/* io.c - system call loops shared by the engine (see io.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
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

int unpkg_writeback_unsupported(int e)
{
	return e == ENOSYS || e == EINVAL || e == ESPIPE || e == EOPNOTSUPP;
}

int unpkg_wait_written(int fd, unsigned long *waits,
		       unsigned long *fdatasyncs, const char **failed)
{
	(*waits)++;
	if (sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE |
				SYNC_FILE_RANGE_WRITE |
				SYNC_FILE_RANGE_WAIT_AFTER) == 0)
		return 0;
	*failed = "write back";
	if (!unpkg_writeback_unsupported(errno))
		return -1;
	if (fdatasyncs != NULL)
		(*fdatasyncs)++;
	*failed = "fdatasync";
	return fdatasync(fd);
}
