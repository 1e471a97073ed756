/* event.h - progress and messages from libunpkg to its user.
 *
 * libunpkg never prints.  Everything a user should see (dpkg-style progress
 * lines, notices, warnings) is passed as an event to a callback that the
 * program renders.  A NULL callback discards events.
 *
 * The program also derives dpkg's machine-readable outputs from events:
 * the --status-fd lines ("processing: install: foo", "status: foo:
 * unpacked", "status: foo.deb : error : ...") and the --log lines
 * ("upgrade foo:amd64 1.0 1.1", "status unpacked foo:amd64 1.1", ...).
 * For those, status and processing events carry the package's
 * architecture and versions.
 *
 * Compatibility: kinds are only ever appended and fields only added at the
 * end of struct unpkg_event; a field an emitter does not know is NULL.  A
 * callback should ignore kinds it does not know.
 */
#ifndef UNPKG_EVENT_H
#define UNPKG_EVENT_H

enum unpkg_event_kind {
	UNPKG_EV_PROGRESS,	/* "Unpacking foo (1.0) ..." (stdout in dpkg) */
	UNPKG_EV_NOTICE,	/* "unpkg: ..." informational (stderr) */
	UNPKG_EV_WARNING,	/* "unpkg: warning: ..." (stderr) */
	UNPKG_EV_STATUS,	/* a package changed state: package, status,
				 * and (if known) arch and version */
	UNPKG_EV_ERROR,		/* processing `package` (an archive or a
				 * package name) failed: message */
	UNPKG_EV_PROCESSING,	/* work on `package` starts: action is
				 * "install" (nothing or only config files
				 * installed before), "upgrade" (another or the
				 * same version installed) or "configure";
				 * version is the version being installed or
				 * configured, old_version the one installed
				 * before (NULL if none), arch the package's
				 * Architecture */
	UNPKG_EV_CONFFILE,	/* a decision about conffile `message` (its
				 * absolute path) of `package`: action is
				 * "install" (the package's version is put in
				 * place) or "keep" (the file on disk stays);
				 * or "prompt" before either when both the
				 * administrator and the package changed it
				 * (dpkg's question, asked or answered by an
				 * option) */
	UNPKG_EV_TRIGGERED,	/* a trigger (message) of configured package
				 * `package` was activated: dpkg queues the
				 * package for the trigger processing at the
				 * end of the action; no output of its own */
};

struct unpkg_event {
	enum unpkg_event_kind kind;
	const char *package;	/* may be NULL */
	const char *status;	/* UNPKG_EV_STATUS: "half-installed", ... */
	const char *message;	/* the formatted text; NULL for STATUS and
				 * PROCESSING */
	/* Added later; NULL where the emitter does not set them. */
	const char *arch;	/* STATUS, PROCESSING: "amd64", "all" */
	const char *version;	/* STATUS: the version the database records
				 * now; PROCESSING: the new version */
	const char *old_version;	/* PROCESSING: the installed version */
	const char *action;	/* PROCESSING, CONFFILE: see the kinds */
};

struct unpkg_events {
	void (*fn)(void *ctx, const struct unpkg_event *ev);
	void *ctx;
};

/* Format and deliver one event; `events` or its fn may be NULL. */
void unpkg_event_emit(const struct unpkg_events *events,
		      enum unpkg_event_kind kind, const char *package,
		      const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 4, 5)))
#endif
	;

/* Report a state change of `package` (message NULL, no arch or version). */
void unpkg_event_status(const struct unpkg_events *events,
			const char *package, const char *status);

/* Report a state change of `package` with the architecture and the
 * version the database now records for it (either may be NULL; version is
 * NULL for "not-installed"). */
void unpkg_event_pkg_status(const struct unpkg_events *events,
			    const char *package, const char *arch,
			    const char *version, const char *status);

/* Report that `action` ("install", "upgrade", "configure") of `package`
 * starts; see UNPKG_EV_PROCESSING. */
void unpkg_event_processing(const struct unpkg_events *events,
			    const char *action, const char *package,
			    const char *arch, const char *old_version,
			    const char *version);

/* Report a decision ("install" or "keep") about conffile `path` (absolute)
 * of `package`. */
void unpkg_event_conffile(const struct unpkg_events *events,
			  const char *package, const char *path,
			  const char *action);

#endif
