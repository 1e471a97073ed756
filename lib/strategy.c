/* strategy.c - the table of commit strategies and the --sync=auto choice
 * (see strategy.h). */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commit-impl.h"
#include "strategy.h"

static const struct unpkg_commit_ops *const strategies[UNPKG_SYNC_COUNT] = {
	[UNPKG_SYNC_DPKG] = &unpkg_commit_dpkg_ops,
	[UNPKG_SYNC_BATCH] = &unpkg_commit_batch_ops,
	[UNPKG_SYNC_URING] = &unpkg_commit_uring_ops,
	[UNPKG_SYNC_SYNCFS] = &unpkg_commit_syncfs_ops,
	[UNPKG_SYNC_NONE] = &unpkg_commit_none_ops,
};

/* The measured choice per class: doc/benchmarks.md, section "Choosing a
 * strategy per filesystem (auto)", has the figures (device flushes and
 * wall time of every strategy on each class) and the reasoning.  In short:
 * where syncfs is a full barrier it needs the fewest device flushes and is
 * the fastest safe strategy; where it is not (ext2: metadata written after
 * the flush; other: syncfs may flush nothing), uring, which fdatasyncs
 * every file and fsyncs every directory, concurrently. */
static const enum unpkg_sync_mode auto_table[UNPKG_FSCLASS_COUNT] = {
	[UNPKG_FSCLASS_EXT4] = UNPKG_SYNC_SYNCFS,
	[UNPKG_FSCLASS_EXT2] = UNPKG_SYNC_URING,
	[UNPKG_FSCLASS_XFS] = UNPKG_SYNC_SYNCFS,
	[UNPKG_FSCLASS_BTRFS] = UNPKG_SYNC_SYNCFS,
	/* none would do on tmpfs too (unpkg_sync_full), and costs the same
	 * within the noise; syncfs stays safe should the run also write to
	 * a disk mounted below the root. */
	[UNPKG_FSCLASS_TMPFS] = UNPKG_SYNC_SYNCFS,
	[UNPKG_FSCLASS_OVERLAY] = UNPKG_SYNC_SYNCFS,
	[UNPKG_FSCLASS_OTHER] = UNPKG_SYNC_URING,
};

int unpkg_sync_mode_parse(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(strategies) / sizeof(strategies[0]); i++)
		if (strcmp(name, strategies[i]->name) == 0)
			return (int)i;
	return -1;
}

const char *unpkg_sync_mode_name(enum unpkg_sync_mode mode)
{
	return strategies[mode]->name;
}

int unpkg_commit_new(enum unpkg_sync_mode mode, struct unpkg_stats *stats,
		     const struct unpkg_events *events, unsigned int max_fds,
		     struct unpkg_commit **out, struct unpkg_err *err)
{
	return unpkg_commit_new_flags(mode, 0, stats, events, max_fds, out,
				      err);
}

int unpkg_commit_new_flags(enum unpkg_sync_mode mode, unsigned int flags,
			   struct unpkg_stats *stats,
			   const struct unpkg_events *events,
			   unsigned int max_fds, struct unpkg_commit **out,
			   struct unpkg_err *err)
{
	if ((unsigned int)mode >= sizeof(strategies) / sizeof(strategies[0]))
		return unpkg_err_set(err, UNPKG_ERR_USAGE,
				     "unknown sync mode %d", (int)mode);
	return commit_create(strategies[mode], flags, stats, events, max_fds,
			     out, err);
}

enum unpkg_sync_mode unpkg_sync_auto(enum unpkg_fsclass cls)
{
	if ((unsigned int)cls >= UNPKG_FSCLASS_COUNT)
		cls = UNPKG_FSCLASS_OTHER;
	return auto_table[cls];
}

int unpkg_sync_full(enum unpkg_sync_mode mode, enum unpkg_fsclass cls)
{
	if ((unsigned int)cls >= UNPKG_FSCLASS_COUNT)
		cls = UNPKG_FSCLASS_OTHER;
	switch (mode) {
	case UNPKG_SYNC_DPKG:
	case UNPKG_SYNC_BATCH:
	case UNPKG_SYNC_URING:
		return 1;
	case UNPKG_SYNC_SYNCFS:
		return unpkg_fsclass_syncfs_full(cls);
	case UNPKG_SYNC_NONE:
		return cls == UNPKG_FSCLASS_TMPFS;
	default:
		/* Not a strategy of its own (a count, or a choice such as
		 * auto that resolves to one of the above). */
		return 0;
	}
}

enum unpkg_sync_mode unpkg_sync_auto_set(const enum unpkg_fsclass *classes,
					 size_t n)
{
	static const enum unpkg_sync_mode fallbacks[] = {
		UNPKG_SYNC_SYNCFS, UNPKG_SYNC_URING,
	};
	enum unpkg_sync_mode first;
	size_t i, k;

	if (n == 0)
		return unpkg_sync_auto(UNPKG_FSCLASS_OTHER);
	first = unpkg_sync_auto(classes[0]);
	for (i = 1; i < n; i++)
		if (unpkg_sync_auto(classes[i]) != first)
			break;
	if (i == n)
		return first;
	for (k = 0; k < sizeof(fallbacks) / sizeof(fallbacks[0]); k++) {
		for (i = 0; i < n; i++)
			if (!unpkg_sync_full(fallbacks[k], classes[i]))
				break;
		if (i == n)
			return fallbacks[k];
	}
	return UNPKG_SYNC_URING;
}

int unpkg_sync_dirty_kib(const char *proc, long long *kib)
{
	char path[PATH_MAX], *line = NULL;
	size_t cap = 0;
	long long sum = 0, v;
	int seen = 0, n;
	FILE *f;

	n = snprintf(path, sizeof(path), "%s/meminfo", proc);
	if (n < 0 || (size_t)n >= sizeof(path))
		return 1;
	f = fopen(path, "re");
	if (f == NULL)
		return 1;
	while (getline(&line, &cap, f) != -1) {
		/* "Dirty:  1234 kB"; WritebackTmp: is FUSE's, not the disks' */
		if ((sscanf(line, "Dirty: %lld kB", &v) == 1 ||
		     sscanf(line, "Writeback: %lld kB", &v) == 1) && v >= 0) {
			sum += v;
			seen++;
		}
	}
	free(line);
	fclose(f);
	if (seen != 2)
		return 1;
	*kib = sum;
	return 0;
}

enum unpkg_sync_mode unpkg_sync_auto_beside(enum unpkg_sync_mode chosen,
					    long long dirty_kib,
					    long long max_kib)
{
	if (max_kib <= 0)
		max_kib = UNPKG_SYNC_DIRTY_MAX_KIB;
	if (chosen == UNPKG_SYNC_SYNCFS && dirty_kib > max_kib)
		return UNPKG_SYNC_URING;
	return chosen;
}

int unpkg_sync_choose_auto(int root_fd, int db_fd, long long dirty_max_kib,
			   struct unpkg_stats *stats,
			   enum unpkg_sync_mode *mode, struct unpkg_err *err)
{
	enum unpkg_fsclass cls[2];
	const char *source[2];

	if (unpkg_fsclass_detect(root_fd, &cls[0], &source[0], err) < 0 ||
	    unpkg_fsclass_detect(db_fd, &cls[1], &source[1], err) < 0)
		return -1;
	if (strcmp(source[0], source[1]) == 0)
		snprintf(stats->fsclass_source, sizeof(stats->fsclass_source),
			 "%s", source[0]);
	else
		snprintf(stats->fsclass_source, sizeof(stats->fsclass_source),
			 "%s (root), %s (database)", source[0], source[1]);
	*mode = unpkg_sync_auto_set(cls, 2);
	if (*mode == UNPKG_SYNC_SYNCFS) {
		long long kib;

		if (unpkg_sync_dirty_kib("/proc", &kib) != 0)
			kib = -1;
		stats->others_dirty_kib = kib;
		*mode = unpkg_sync_auto_beside(*mode, kib, dirty_max_kib);
		stats->dirty_avoided = *mode != UNPKG_SYNC_SYNCFS;
	}
	if (cls[0] == cls[1])
		snprintf(stats->fsclass, sizeof(stats->fsclass), "%s",
			 unpkg_fsclass_name(cls[0]));
	else
		snprintf(stats->fsclass, sizeof(stats->fsclass), "%s+%s",
			 unpkg_fsclass_name(cls[0]),
			 unpkg_fsclass_name(cls[1]));
	return 0;
}
