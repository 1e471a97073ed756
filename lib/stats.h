/* stats.h - the counters and phase times of one run (--stats).
 *
 * Filled by the commit object, the database writer and the installer;
 * src/ prints them.  Plain data: zero-initialise before use. */
#ifndef UNPKG_STATS_H
#define UNPKG_STATS_H

/* In the order a run goes through them. */
enum unpkg_phase {
	UNPKG_PHASE_PLAN,
	UNPKG_PHASE_OPEN,
	UNPKG_PHASE_MARK,
	UNPKG_PHASE_EXTRACT,
	UNPKG_PHASE_BARRIER,
	UNPKG_PHASE_RENAME,
	UNPKG_PHASE_RECORD,
	UNPKG_PHASE_CONFIGURE,
	UNPKG_PHASE_COUNT
};

const char *unpkg_phase_name(enum unpkg_phase phase);

/* Counters of one run. */
struct unpkg_stats {
	unsigned long sync_file_range;
	unsigned long fdatasync;
	unsigned long fsync;
	unsigned long syncfs;
	unsigned long rename;
	unsigned long files;		/* regular files written */
	unsigned long long bytes;	/* bytes of file content written */
	char strategy[16];		/* the strategy in force at the end */
	char fsclass[48];		/* --sync=auto: the file systems it
					 * chose for ("ext4", "ext4+xfs"), and
					 * with UNPKG_COMMIT_PER_FS those the
					 * commit met ("ext4+ext2") */
	char fsclass_source[160];	/* --sync=auto: what told the classes
					 * of the root's and the database's
					 * file systems (fsclass.h) */
	/* --sync=auto where the file systems' choice was syncfs: the data
	 * waiting to be written back when the run began (Dirty plus
	 * Writeback of /proc/meminfo, KiB; -1 if it could not be read),
	 * and whether that made it take uring instead. */
	long long others_dirty_kib;
	int dirty_avoided;
	int triggers_activated;		/* triggers/Unincorp names triggers
					 * this run activated */
	double phase_seconds[UNPKG_PHASE_COUNT];
};

/* Monotonic time in seconds, for phase timing. */
double unpkg_now(void);

/* Add the time since `since` (unpkg_now()) to phase `phase`. */
void unpkg_stats_timed(struct unpkg_stats *st, enum unpkg_phase phase,
		       double since);

/* Add `name` to st->fsclass ("ext4+ext2") unless it is there already (or
 * does not fit: the counters still tell). */
void unpkg_stats_add_fsclass(struct unpkg_stats *st, const char *name);

#endif
