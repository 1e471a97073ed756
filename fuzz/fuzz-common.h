/* fuzz-common.h - what the libFuzzer targets in fuzz/ share: the entry
 * points, failing with a message, the checks of a returned error, and a
 * memory file that holds the input.
 *
 * Each target defines fuzz_target_name (its program name, the prefix of
 * its messages) and is linked with fuzz-common.c.
 */
#ifndef UNPKG_FUZZ_COMMON_H
#define UNPKG_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The target's name, "fuzz_deb" for example: defined by each target. */
extern const char fuzz_target_name[];

/* Print "NAME: message" and a newline to stderr, then abort(): libFuzzer
 * reports the input as a crash. */
void fuzz_fail(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

#define FAIL(...) fuzz_fail(__VA_ARGS__)

/* A call that failed with `err` kept unpkg_err's promises: an error code
 * and a non-empty, terminated message; `what` names the call. */
void fuzz_check_err(const struct unpkg_err *err, const char *what);

/* A new memory file named `name` (close-on-exec); fails the target if
 * there is none. */
int fuzz_memfd(const char *name);

/* The memory file `fd` holds exactly `data` and is positioned at 0. */
void fuzz_load(int fd, const uint8_t *data, size_t size);

#endif
