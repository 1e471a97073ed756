/* io.h - system call loops shared by the engine.
 * Private to libunpkg. */
#ifndef UNPKG_IO_H
#define UNPKG_IO_H

#include <stddef.h>

/* Write all `len` bytes of `buf` to `fd`, again after an interrupted
 * write(2).  0, or -1 with errno set (the caller says what failed). */
int unpkg_write_all(int fd, const void *buf, size_t len);

#endif
