/* err.c - first-error-wins error records. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "err.h"

void unpkg_err_init(struct unpkg_err *err)
{
	err->code = UNPKG_ERR_NONE;
	err->errnum = 0;
	err->msg[0] = '\0';
}

/* Append a and b to the string in buf, truncating at the buffer's end. */
static void append(char *buf, size_t size, const char *a, const char *b)
{
	size_t len = strlen(buf);
	const char *parts[2] = { a, b };
	int i;

	for (i = 0; i < 2; i++) {
		size_t n = strlen(parts[i]);

		if (n > size - 1 - len)
			n = size - 1 - len;
		memcpy(buf + len, parts[i], n);
		len += n;
	}
	buf[len] = '\0';
}

UNPKG_PRINTF(4, 0)
static int vset(struct unpkg_err *err, enum unpkg_errcode code, int errnum,
		const char *fmt, va_list ap)
{
	if (err == NULL || err->code != UNPKG_ERR_NONE)
		return -1;
	err->code = code;
	err->errnum = errnum;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	if ((code == UNPKG_ERR_SYS || code == UNPKG_ERR_SYNC) && errnum != 0)
		append(err->msg, sizeof(err->msg), ": ", strerror(errnum));
	return -1;
}

int unpkg_err_set(struct unpkg_err *err, enum unpkg_errcode code,
		  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset(err, code, 0, fmt, ap);
	va_end(ap);
	return -1;
}

int unpkg_err_sys(struct unpkg_err *err, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vset(err, UNPKG_ERR_SYS, saved, fmt, ap);
	va_end(ap);
	errno = saved;
	return -1;
}

int unpkg_err_errno(struct unpkg_err *err, int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset(err, UNPKG_ERR_SYS, errnum, fmt, ap);
	va_end(ap);
	return -1;
}

void unpkg_err_prefix(struct unpkg_err *err, const char *fmt, ...)
{
	char prefix[UNPKG_ERR_MSG_MAX];
	char old[UNPKG_ERR_MSG_MAX];
	va_list ap;

	if (err == NULL || err->code == UNPKG_ERR_NONE)
		return;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	memcpy(err->msg, prefix, sizeof(prefix));
	append(err->msg, sizeof(err->msg), ": ", old);
}

int unpkg_err_sync(struct unpkg_err *err, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vset(err, UNPKG_ERR_SYNC, saved, fmt, ap);
	va_end(ap);
	errno = saved;
	return -1;
}

int unpkg_err_nomem(struct unpkg_err *err)
{
	return unpkg_err_set(err, UNPKG_ERR_NOMEM, "out of memory");
}
