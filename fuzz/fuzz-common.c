/* fuzz-common.c - the helpers of fuzz-common.h. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz-common.h"

void fuzz_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", fuzz_target_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

void fuzz_check_err(const struct unpkg_err *err, const char *what)
{
	if (err->code == UNPKG_ERR_NONE)
		FAIL("%s failed without an error code", what);
	if (memchr(err->msg, '\0', sizeof(err->msg)) == NULL)
		FAIL("%s: error message not terminated", what);
	if (err->msg[0] == '\0')
		FAIL("%s failed with an empty message", what);
}

int fuzz_memfd(const char *name)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0)
		FAIL("memfd_create: %s", strerror(errno));
	return fd;
}

void fuzz_load(int fd, const uint8_t *data, size_t size)
{
	size_t done = 0;

	if (ftruncate(fd, 0) < 0)
		FAIL("ftruncate: %s", strerror(errno));
	while (done < size) {
		ssize_t n = pwrite(fd, data + done, size - done, (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			FAIL("pwrite: %s", strerror(errno));
		done += (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) != 0)
		FAIL("lseek: %s", strerror(errno));
}
