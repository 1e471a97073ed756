/* buf.h - a growing string, and growing arrays.
 *
 * A struct unpkg_buf starts zeroed ({ 0 }): s is NULL until something is
 * added, then NUL-terminated.  When memory runs out the buffer remembers
 * it (oom): the failing append and every later one return -1 and leave the
 * contents as they were, so a builder may append without checking and ask
 * once at the end.  The caller owns b->s (unpkg_buf_free() or take it). */
#ifndef UNPKG_BUF_H
#define UNPKG_BUF_H

#include <stddef.h>

#include "err.h"

struct unpkg_buf {
	char *s;
	size_t len, cap;
	int oom;	/* an append ran out of memory */
};

/* Append the `n` bytes at `s`.  0, or -1 when out of memory. */
int unpkg_buf_add(struct unpkg_buf *b, const char *s, size_t n);

/* Append the string `s`. */
int unpkg_buf_adds(struct unpkg_buf *b, const char *s);

/* Append printf-style.  0, or -1 with `err` set (out of memory, or a
 * format vsnprintf refuses). */
int unpkg_buf_printf(struct unpkg_buf *b, struct unpkg_err *err,
		     const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Free the string and zero the buffer. */
void unpkg_buf_free(struct unpkg_buf *b);

/* The array `p` of *cap elements of `size` bytes, grown (doubling, from
 * `first` elements) to hold at least `want`: returns it, perhaps moved,
 * with *cap updated; NULL when out of memory, `p` then untouched. */
void *unpkg_grow(void *p, size_t *cap, size_t want, size_t size,
		 size_t first);

#endif
