/* event.h - progress and messages from libunpkg to its user.
 *
 * libunpkg never prints.  Everything a user should see (dpkg-style progress
 * lines, notices, warnings) is passed as an event to a callback that the
 * program renders.  A NULL callback discards events.
 */
#ifndef UNPKG_EVENT_H
#define UNPKG_EVENT_H

enum unpkg_event_kind {
	UNPKG_EV_PROGRESS,	/* "Unpacking foo (1.0) ..." (stdout in dpkg) */
	UNPKG_EV_NOTICE,	/* "unpkg: ..." informational (stderr) */
	UNPKG_EV_WARNING,	/* "unpkg: warning: ..." (stderr) */
	UNPKG_EV_STATUS,	/* a package changed state: package, status */
	UNPKG_EV_ERROR,		/* processing `package` (an archive or a
				 * package name) failed: message */
};

struct unpkg_event {
	enum unpkg_event_kind kind;
	const char *package;	/* may be NULL */
	const char *status;	/* UNPKG_EV_STATUS: "half-installed", ... */
	const char *message;	/* the formatted text */
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

/* Report a state change of `package` (message NULL). */
void unpkg_event_status(const struct unpkg_events *events,
			const char *package, const char *status);

#endif
