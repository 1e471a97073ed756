/* event.c - delivering events to the program's callback. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "event.h"

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
	struct unpkg_event ev = {
		.kind = UNPKG_EV_STATUS,
		.package = package,
		.status = status,
	};

	if (events == NULL || events->fn == NULL)
		return;
	events->fn(events->ctx, &ev);
}
