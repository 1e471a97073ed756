/* io.h - system call loops shared by the engine.
 * Private to libunpkg. */
#ifndef UNPKG_IO_H
#define UNPKG_IO_H

#include <stddef.h>

/* Write all `len` bytes of `buf` to `fd`, again after an interrupted
 * write(2).  0, or -1 with errno set (the caller says what failed). */
int unpkg_write_all(int fd, const void *buf, size_t len);

/* Whether sync_file_range's errno `e` says it cannot serve the file: no
 * such call, or a file system or file type without page-cache writeback
 * control (the caller syncs another way). */
int unpkg_writeback_unsupported(int e);

/* The barrier of a file where its file system orders its commits: the
 * writeback of `fd`'s dirty pages started and waited for (sync_file_range
 * WAIT_BEFORE|WRITE|WAIT_AFTER), without a flush of the disk's cache,
 * counted in *waits; where sync_file_range cannot serve
 * (unpkg_writeback_unsupported()), fdatasync, counted in *fdatasyncs (may
 * be NULL).  0, or -1 with errno set and *failed naming the call that
 * failed ("write back" or "fdatasync"). */
int unpkg_wait_written(int fd, unsigned long *waits,
		       unsigned long *fdatasyncs, const char **failed);

#endif
