/* buf.c - a growing string, and growing arrays (see buf.h). */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

void *unpkg_grow(void *p, size_t *cap, size_t want, size_t size,
		 size_t first)
{
	size_t ncap;
	void *np;

	if (want <= *cap)
		return p;
	ncap = *cap != 0 ? *cap : first != 0 ? first : 1;
	while (ncap < want) {
		if (ncap > (SIZE_MAX / size) / 2)
			return NULL;
		ncap *= 2;
	}
	np = realloc(p, ncap * size);
	if (np == NULL)
		return NULL;
	*cap = ncap;
	return np;
}

/* Room for `n` more bytes and the terminating NUL. */
static int reserve(struct unpkg_buf *b, size_t n)
{
	char *s;

	if (b->oom)
		return -1;
	if (n > SIZE_MAX - b->len - 1) {
		b->oom = 1;
		return -1;
	}
	s = unpkg_grow(b->s, &b->cap, b->len + n + 1, 1, 256);
	if (s == NULL) {
		b->oom = 1;
		return -1;
	}
	b->s = s;
	return 0;
}

int unpkg_buf_add(struct unpkg_buf *b, const char *s, size_t n)
{
	if (reserve(b, n) < 0)
		return -1;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
	return 0;
}

int unpkg_buf_adds(struct unpkg_buf *b, const char *s)
{
	return unpkg_buf_add(b, s, strlen(s));
}

int unpkg_buf_printf(struct unpkg_buf *b, struct unpkg_err *err,
		     const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return unpkg_err_set(err, UNPKG_ERR_USAGE, "bad format");
	if (reserve(b, (size_t)n) < 0)
		return unpkg_err_nomem(err);
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

void unpkg_buf_free(struct unpkg_buf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
	b->oom = 0;
}
