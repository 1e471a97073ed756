/* depends.h - dependency satisfaction: a relationship field of a package of
 * the run checked against the packages present (through the candidate
 * index) and those the run unpacked.
 * Private to libunpkg. */
#ifndef UNPKG_DEPENDS_H
#define UNPKG_DEPENDS_H

#include <stddef.h>

#include "run.h"

/* Check one relationship field; describe what is missing in `why`. */
int depends_check(struct run *r, const struct pkg *p,
		  const char *field, const char *verb, int run_ok,
		  char *why, size_t whylen, struct unpkg_err *err);

#endif
