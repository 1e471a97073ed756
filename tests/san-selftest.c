/* san-selftest - a program with the memory errors the sanitizer build must
 * catch, for tests/integration/sanitizer.sh.  Each mode makes one error and
 * then exits 1, as unpkg does when it refuses its input: the test checks
 * that the sanitizers turn that into their own exit status and a report.
 *
 * Usage: san-selftest overflow|leak|undefined|clean */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* volatile: the compiler must neither see the errors nor drop them. */
static void *volatile kept;
static volatile int big = INT_MAX;

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: san-selftest overflow|leak|undefined|clean\n");
		return 2;
	}
	if (strcmp(argv[1], "overflow") == 0) {
		volatile char *buf = malloc(8);
		volatile size_t at = 8;

		if (buf == NULL)
			return 2;
		buf[at] = 1; /* one byte past its end */
		free((void *)buf);
	} else if (strcmp(argv[1], "leak") == 0) {
		kept = malloc(64);
		kept = NULL; /* the only pointer to it is gone */
	} else if (strcmp(argv[1], "undefined") == 0) {
		int sum = big + argc; /* signed overflow */

		kept = &sum;
	} else if (strcmp(argv[1], "clean") != 0) {
		fprintf(stderr, "san-selftest: unknown mode %s\n", argv[1]);
		return 2;
	}
	return 1;
}
