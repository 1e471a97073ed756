/* stats.c - the counters and phase times of one run (see stats.h). */
#include "config.h"

#include <string.h>
#include <time.h>

#include "stats.h"

static const char *const phase_names[UNPKG_PHASE_COUNT] = {
	[UNPKG_PHASE_PLAN] = "plan",
	[UNPKG_PHASE_OPEN] = "open",
	[UNPKG_PHASE_MARK] = "mark",
	[UNPKG_PHASE_EXTRACT] = "extract",
	[UNPKG_PHASE_BARRIER] = "barrier",
	[UNPKG_PHASE_RENAME] = "rename",
	[UNPKG_PHASE_RECORD] = "record",
	[UNPKG_PHASE_CONFIGURE] = "configure",
};

const char *unpkg_phase_name(enum unpkg_phase phase)
{
	return phase_names[phase];
}

double unpkg_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void unpkg_stats_timed(struct unpkg_stats *st, enum unpkg_phase phase,
		       double since)
{
	st->phase_seconds[phase] += unpkg_now() - since;
}

void unpkg_stats_add_fsclass(struct unpkg_stats *st, const char *name)
{
	char *s = st->fsclass;
	size_t n = strlen(name), len = strlen(s);
	const char *p = s;

	while (*p != '\0') {
		size_t t = strcspn(p, "+");

		if (t == n && memcmp(p, name, n) == 0)
			return;
		p += t;
		if (*p == '+')
			p++;
	}
	if (len + (len != 0) + n + 1 > sizeof(st->fsclass))
		return;
	if (len != 0)
		s[len++] = '+';
	memcpy(s + len, name, n + 1);
}
