/* err.h - error reporting for libunpkg.
 *
 * Every fallible function of libunpkg returns 0 (or a count) on success and
 * -1 on failure, and takes a `struct unpkg_err *err` as its last argument.
 * The first error recorded wins: later calls to unpkg_err_set() on an error
 * that is already set change nothing, so cleanup code may fail quietly
 * without hiding the cause.  Callers add context with unpkg_err_prefix().
 */
#ifndef UNPKG_ERR_H
#define UNPKG_ERR_H

#include <stdarg.h>

enum unpkg_errcode {
	UNPKG_ERR_NONE = 0,
	UNPKG_ERR_SYS,		/* a system call failed; errnum holds errno */
	UNPKG_ERR_NOMEM,	/* out of memory */
	UNPKG_ERR_FORMAT,	/* not a valid .deb / control / database file */
	UNPKG_ERR_CORRUPT,	/* truncated or damaged archive data */
	UNPKG_ERR_UNSAFE,	/* a path would leave the root, or similar */
	UNPKG_ERR_CONFLICT,	/* file owned by another package, ... */
	UNPKG_ERR_LOCKED,	/* the dpkg database is locked by another process */
	UNPKG_ERR_UNSUPPORTED,	/* valid input unpkg does not handle */
	UNPKG_ERR_DEPENDS,	/* unmet dependencies */
	UNPKG_ERR_USAGE,	/* bad argument from the caller */
	UNPKG_ERR_SYNC,		/* fsync/fdatasync/syncfs failed; errnum set.
				 * Never retried: the pages may have been
				 * marked clean, so a retry could lie. */
	UNPKG_ERR_SCRIPT,	/* a maintainer script failed */
};

#define UNPKG_ERR_MSG_MAX 1024

struct unpkg_err {
	enum unpkg_errcode code;
	int errnum;		/* errno for UNPKG_ERR_SYS, else 0 */
	char msg[UNPKG_ERR_MSG_MAX];
};

#if defined(__GNUC__)
#define UNPKG_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define UNPKG_PRINTF(f, a)
#endif

/* Clear an error record. */
void unpkg_err_init(struct unpkg_err *err);

/* Record an error unless one is already recorded.  Returns -1, so callers
 * can write `return unpkg_err_set(...)`. `err` may be NULL. */
int unpkg_err_set(struct unpkg_err *err, enum unpkg_errcode code,
		  const char *fmt, ...) UNPKG_PRINTF(3, 4);

/* Record a failed system call: code UNPKG_ERR_SYS, errnum = errno (read at
 * entry), message "<formatted>: <strerror(errno)>".  errno is preserved. */
int unpkg_err_sys(struct unpkg_err *err, const char *fmt, ...)
	UNPKG_PRINTF(2, 3);

/* Same, with an explicit error number (for APIs that return it). */
int unpkg_err_errno(struct unpkg_err *err, int errnum, const char *fmt, ...)
	UNPKG_PRINTF(3, 4);

/* Prepend "<formatted>: " to the message of a recorded error; no-op if no
 * error is recorded. */
void unpkg_err_prefix(struct unpkg_err *err, const char *fmt, ...)
	UNPKG_PRINTF(2, 3);

/* Record a failed fsync, fdatasync, syncfs or sync_file_range wait:
 * like unpkg_err_sys() with code UNPKG_ERR_SYNC. */
int unpkg_err_sync(struct unpkg_err *err, const char *fmt, ...)
	UNPKG_PRINTF(2, 3);

/* Record UNPKG_ERR_NOMEM.  Returns -1. */
int unpkg_err_nomem(struct unpkg_err *err);

#endif
