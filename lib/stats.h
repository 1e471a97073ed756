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

/* Where --sync=auto's figure of the data waiting to be written back came
 * from (strategy.h, unpkg_sync_dirty_for()). */
enum unpkg_dirty_scope {
	UNPKG_DIRTY_UNKNOWN,	/* nothing readable */
	UNPKG_DIRTY_DEVICES,	/* the writeback statistics of the devices
				 * under the run's file systems (debugfs) */
	UNPKG_DIRTY_MACHINE,	/* /proc/meminfo: every file system */
	UNPKG_DIRTY_UNCOUNTED,	/* not needed: the file systems order
				 * their commits, and syncfs is not
				 * called there */
};

/* Counters of one run. */
struct unpkg_stats {
	unsigned long sync_file_range;
	unsigned long fdatasync;
	unsigned long fsync;
	unsigned long syncfs;
	unsigned long rename;
	unsigned long copied_up;	/* an overlayfs's files copied up
					 * ahead of time, or found in the
					 * upper layer (copyup.h) */
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
	 * waiting to be written back when the run began (KiB; -1 if it
	 * could not be read), where that figure came from, the devices whose
	 * writeback statistics gave it ("254:0", "254:0 7:3", "btrfs-2"),
	 * whether one of the file systems was a tmpfs (nothing to write
	 * back, 0 in the figure), and whether it made auto take uring
	 * instead. */
	long long others_dirty_kib;
	enum unpkg_dirty_scope dirty_scope;
	char dirty_devices[48];
	int dirty_in_memory;
	int dirty_avoided;
	int ordered_overlay;		/* UNPKG_DIRTY_UNCOUNTED: one of them
					 * orders them through an overlayfs's
					 * upper layer (fsclass.h) */
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
