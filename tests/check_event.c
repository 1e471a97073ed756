/* check_event.c - event delivery. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "event.h"
#include "testutil.h"

struct seen {
	int n;
	struct unpkg_event last;
	char msg[2048];
	char pkg[64];
};

static void record(void *ctx, const struct unpkg_event *ev)
{
	struct seen *s = ctx;

	s->n++;
	s->last = *ev;
	snprintf(s->msg, sizeof(s->msg), "%s",
		 ev->message != NULL ? ev->message : "(null)");
	snprintf(s->pkg, sizeof(s->pkg), "%s",
		 ev->package != NULL ? ev->package : "(null)");
}

START_TEST(test_emit_formats)
{
	struct seen s = { 0 };
	struct unpkg_events ev = { .fn = record, .ctx = &s };

	unpkg_event_emit(&ev, UNPKG_EV_PROGRESS, "foo", "Unpacking %s (%d) ...",
			 "foo", 3);
	ck_assert_int_eq(s.n, 1);
	ck_assert_int_eq(s.last.kind, UNPKG_EV_PROGRESS);
	ck_assert_str_eq(s.msg, "Unpacking foo (3) ...");
	ck_assert_str_eq(s.pkg, "foo");
}
END_TEST

START_TEST(test_status)
{
	struct seen s = { 0 };
	struct unpkg_events ev = { .fn = record, .ctx = &s };

	unpkg_event_status(&ev, "bar:amd64", "unpacked");
	ck_assert_int_eq(s.n, 1);
	ck_assert_int_eq(s.last.kind, UNPKG_EV_STATUS);
	ck_assert_str_eq(s.last.status, "unpacked");
	ck_assert_str_eq(s.pkg, "bar:amd64");
	ck_assert_str_eq(s.msg, "(null)");
}
END_TEST

/* No callback: events are dropped, nothing crashes. */
START_TEST(test_null_sinks)
{
	struct unpkg_events none = { 0 };

	unpkg_event_emit(NULL, UNPKG_EV_WARNING, NULL, "x %s", "y");
	unpkg_event_emit(&none, UNPKG_EV_WARNING, NULL, "x %s", "y");
	unpkg_event_status(NULL, "p", "installed");
	unpkg_event_status(&none, "p", "installed");
}
END_TEST

START_TEST(test_long_message_truncated)
{
	struct seen s = { 0 };
	struct unpkg_events ev = { .fn = record, .ctx = &s };
	char big[4000];

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	unpkg_event_emit(&ev, UNPKG_EV_NOTICE, NULL, "%s", big);
	ck_assert_int_eq(s.n, 1);
	ck_assert_uint_eq(strlen(s.msg), 1023);
}
END_TEST

/* The events for --status-fd and --log carry arch and versions; the
 * plain status event leaves them NULL. */
START_TEST(test_pkg_events)
{
	struct seen s = { 0 };
	struct unpkg_events ev = { .fn = record, .ctx = &s };

	unpkg_event_status(&ev, "foo", "unpacked");
	ck_assert_ptr_null(s.last.arch);
	ck_assert_ptr_null(s.last.version);
	unpkg_event_pkg_status(&ev, "foo", "amd64", "1.0-1", "half-installed");
	ck_assert_int_eq(s.last.kind, UNPKG_EV_STATUS);
	ck_assert_str_eq(s.last.status, "half-installed");
	ck_assert_str_eq(s.last.arch, "amd64");
	ck_assert_str_eq(s.last.version, "1.0-1");
	ck_assert_ptr_null(s.last.message);
	unpkg_event_processing(&ev, "upgrade", "foo", "all", "1.0", "2.0");
	ck_assert_int_eq(s.last.kind, UNPKG_EV_PROCESSING);
	ck_assert_str_eq(s.last.action, "upgrade");
	ck_assert_str_eq(s.pkg, "foo");
	ck_assert_str_eq(s.last.arch, "all");
	ck_assert_str_eq(s.last.old_version, "1.0");
	ck_assert_str_eq(s.last.version, "2.0");
	ck_assert_ptr_null(s.last.status);
	unpkg_event_conffile(&ev, "foo", "/etc/foo.conf", "keep");
	ck_assert_int_eq(s.last.kind, UNPKG_EV_CONFFILE);
	ck_assert_str_eq(s.msg, "/etc/foo.conf");
	ck_assert_str_eq(s.last.action, "keep");
	ck_assert_int_eq(s.n, 4);
	unpkg_event_processing(NULL, "install", "foo", NULL, NULL, "1");
	unpkg_event_conffile(&(struct unpkg_events){ 0 }, "foo", "/x", "keep");
	ck_assert_int_eq(s.n, 4);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("event");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_emit_formats);
	tcase_add_test(tc, test_status);
	tcase_add_test(tc, test_null_sinks);
	tcase_add_test(tc, test_long_message_truncated);
	tcase_add_test(tc, test_pkg_events);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
