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

/* Start the writeback of `fd`'s dirty pages and wait until all of it has
 * completed (sync_file_range WAIT_BEFORE|WRITE|WAIT_AFTER), without a
 * flush of the disk's cache.  0; 1 where sync_file_range cannot serve
 * (unpkg_writeback_unsupported()); -1 with errno set. */
int unpkg_wait_written(int fd);

#endif
