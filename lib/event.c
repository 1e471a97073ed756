/* event.c - delivering events to the program's callback. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "event.h"

static void deliver(const struct unpkg_events *events,
		    const struct unpkg_event *ev)
{
	if (events != NULL && events->fn != NULL)
		events->fn(events->ctx, ev);
}

void unpkg_event_emit(const struct unpkg_events *events,
		      enum unpkg_event_kind kind, const char *package,
		      const char *fmt, ...)
{
	struct unpkg_event ev = { .kind = kind, .package = package };
	char msg[1024];
	va_list ap;

	if (events == NULL || events->fn == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ev.message = msg;
	events->fn(events->ctx, &ev);
}

void unpkg_event_status(const struct unpkg_events *events,
			const char *package, const char *status)
{
	unpkg_event_pkg_status(events, package, NULL, NULL, status);
}

void unpkg_event_pkg_status(const struct unpkg_events *events,
			    const char *package, const char *arch,
			    const char *version, const char *status)
{
	struct unpkg_event ev = {
		.kind = UNPKG_EV_STATUS,
		.package = package,
		.status = status,
		.arch = arch,
		.version = version,
	};

	deliver(events, &ev);
}

void unpkg_event_processing(const struct unpkg_events *events,
			    const char *action, const char *package,
			    const char *arch, const char *old_version,
			    const char *version)
{
	struct unpkg_event ev = {
		.kind = UNPKG_EV_PROCESSING,
		.package = package,
		.arch = arch,
		.version = version,
		.old_version = old_version,
		.action = action,
	};

	deliver(events, &ev);
}

void unpkg_event_conffile(const struct unpkg_events *events,
			  const char *package, const char *path,
			  const char *action)
{
	struct unpkg_event ev = {
		.kind = UNPKG_EV_CONFFILE,
		.package = package,
		.message = path,
		.action = action,
	};

	deliver(events, &ev);
}
