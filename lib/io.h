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

/* How a file's writeback is started and waited for without a flush of
 * the disk's cache. */
enum unpkg_wb_path {
	/* sync_file_range(2) */
	UNPKG_WB_RANGE,
	/* the file lies on an overlayfs, whose sync_file_range returns 0
	 * and writes nothing back: posix_fadvise(POSIX_FADV_DONTNEED),
	 * which the overlay passes on to the upper file, starts the
	 * writeback, and FS_IOC_FIEMAP with FIEMAP_FLAG_SYNC, which it
	 * passes on to the upper inode, writes back and waits */
	UNPKG_WB_OVERLAY,
};

/* Start the writeback of `fd`'s dirty pages by `path`, without waiting.
 * 0, or -1 with errno set; unpkg_writeback_unsupported(errno) says the
 * file cannot be served this way (its barrier syncs it another way). */
int unpkg_writeback_start(int fd, enum unpkg_wb_path path);

/* The barrier of a file where its file system orders its commits: the
 * writeback of `fd`'s dirty pages started and waited for by `path`
 * (sync_file_range WAIT_BEFORE|WRITE|WAIT_AFTER, or FIEMAP_FLAG_SYNC),
 * without a flush of the disk's cache, counted in *waits; where that
 * cannot serve (unpkg_writeback_unsupported()), fdatasync, counted in
 * *fdatasyncs (may be NULL).  0, or -1 with errno set and *failed naming
 * the call that failed ("write back" or "fdatasync"). */
int unpkg_wait_written(int fd, enum unpkg_wb_path path,
		       unsigned long *waits, unsigned long *fdatasyncs,
		       const char **failed);

#endif
