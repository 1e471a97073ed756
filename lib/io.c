/* io.c - system call loops shared by the engine (see io.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
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
	return e == ENOSYS || e == EINVAL || e == ESPIPE || e == EOPNOTSUPP ||
	       e == ENOTTY;
}

int unpkg_writeback_start(int fd, enum unpkg_wb_path path)
{
	int e;

	if (path == UNPKG_WB_RANGE)
		return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	/* DONTNEED writes the range back (WB_SYNC_NONE), then drops the
	 * pages that are clean: none yet of a file just written */
	e = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	if (e == 0)
		return 0;
	errno = e;
	return -1;
}

/* Write back `fd`'s dirty pages and wait for them: sync_file_range, or
 * FIEMAP_FLAG_SYNC, whose map is not asked for (no extents). */
static int write_and_wait(int fd, enum unpkg_wb_path path)
{
	struct fiemap map = {
		.fm_start = 0,
		.fm_length = FIEMAP_MAX_OFFSET,
		.fm_flags = FIEMAP_FLAG_SYNC,
		.fm_extent_count = 0,
	};

	if (path == UNPKG_WB_RANGE)
		return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE |
					   SYNC_FILE_RANGE_WRITE |
					   SYNC_FILE_RANGE_WAIT_AFTER);
	return ioctl(fd, FS_IOC_FIEMAP, &map);
}

int unpkg_wait_written(int fd, enum unpkg_wb_path path,
		       unsigned long *waits, unsigned long *fdatasyncs,
		       const char **failed)
{
	(*waits)++;
	if (write_and_wait(fd, path) == 0)
		return 0;
	*failed = "write back";
	if (!unpkg_writeback_unsupported(errno))
		return -1;
	if (fdatasyncs != NULL)
		(*fdatasyncs)++;
	*failed = "fdatasync";
	return fdatasync(fd);
}
