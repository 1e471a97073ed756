/* check_trigproc.c - trigger processing (lib/trigproc.c): triggers/Unincorp,
 * and the database after a processing of packages without postinst
 * (trigproc.sh runs scripts, against dpkg).  dpkg's hash order: check_db. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"
#include "trigproc.h"

struct seen {
	char text[512];
};

static int line(void *ctx, const char *trigger, const char *awaiter,
		struct unpkg_err *err)
{
	struct seen *s = ctx;
	size_t l = strlen(s->text);

	(void)err;
	snprintf(s->text + l, sizeof(s->text) - l, "%s<%s;", trigger,
		 awaiter != NULL ? awaiter : "-");
	return 0;
}

START_TEST(test_unincorp_parse)
{
	static const char text[] = "  tx a b:amd64 # comment\n"
				   "# a comment\n\n"
				   "/usr/share/x -\n";
	struct seen s = { "" };
	struct unpkg_err err;

	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_unincorp_parse(text, strlen(text), line, &s,
					      &err), 0);
	ck_assert_str_eq(s.text, "tx<a;tx<b:amd64;/usr/share/x<-;");
	ck_assert_int_eq(unpkg_unincorp_parse("tx\n", 3, line, &s, &err), -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_FORMAT);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_unincorp_parse("tx A\n", 5, line, &s, &err),
			 -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_FORMAT);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_unincorp_parse("tx -x\n", 6, line, &s, &err),
			 -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_FORMAT);
}
END_TEST

/* --- whole runs on a root of packages without scripts ------------------ */

struct errors {
	int n;
	char last[512];
};

static void on_event(void *ctx, const struct unpkg_event *ev)
{
	struct errors *e = ctx;

	if (ev->kind != UNPKG_EV_ERROR)
		return;
	e->n++;
	snprintf(e->last, sizeof(e->last), "%s", ev->message);
}

#define STANZA(name, status, extra)                                         \
	"Package: " name "\nStatus: install ok " status "\nMaintainer: m\n"  \
	"Architecture: all\nVersion: 1.0\n" extra "Description: d\n"

struct root {
	char *dir, admin[4096];
	struct unpkg_install_opts o;
	struct unpkg_events ev;
	struct errors errs;
};

static void root_new(struct root *r, const char *status, const char *unincorp)
{
	char path[4200];

	memset(r, 0, sizeof(*r));
	r->dir = tu_mkdtemp();
	snprintf(r->admin, sizeof(r->admin), "%s/var/lib/dpkg", r->dir);
	snprintf(path, sizeof(path), "%s/var", r->dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/var/lib", r->dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	ck_assert_int_eq(mkdir(r->admin, 0755), 0);
	snprintf(path, sizeof(path), "%s/triggers", r->admin);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/status", r->admin);
	tu_write_file(path, status, 0644);
	/* ta is interested in trigger "ta" */
	snprintf(path, sizeof(path), "%s/triggers/ta", r->admin);
	tu_write_file(path, "ta\n", 0644);
	snprintf(path, sizeof(path), "%s/triggers/Unincorp", r->admin);
	tu_write_file(path, unincorp, 0644);
	r->ev.fn = on_event;
	r->ev.ctx = &r->errs;
	r->o.instdir = r->dir;
	r->o.admindir = r->admin;
	r->o.sync = UNPKG_SYNC_NONE;
	r->o.events = &r->ev;
}

static char *root_file(struct root *r, const char *name)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%s", r->admin, name);
	return tu_read_file(path, NULL);
}

static void root_free(struct root *r)
{
	tu_rm_rf(r->dir);
	free(r->dir);
}

START_TEST(test_pending_and_awaiter)
{
	static const char status[] =
		STANZA("act", "triggers-awaited", "") "Triggers-Awaited: ta\n\n"
		STANZA("ta", "triggers-pending", "") "Triggers-Pending: ta\n\n";
	struct unpkg_err err;
	struct root r;
	char *s;

	root_new(&r, status, "");
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_trigproc(&r.o, NULL, 0, UNPKG_TRIGPROC_PENDING,
					&err), 0);
	s = root_file(&r, "status");
	ck_assert_ptr_null(strstr(s, "Triggers-"));
	ck_assert_ptr_null(strstr(s, "triggers-"));
	ck_assert_ptr_nonnull(strstr(s, "Package: act\nStatus: install ok "
				     "installed\n"));
	free(s);
	/* nothing pending any more: by name, dpkg's error */
	ck_assert_int_eq(unpkg_trigproc(&r.o, (const char *[]){ "ta" }, 1,
					UNPKG_TRIGPROC_NAMES, &err), 1);
	ck_assert_ptr_nonnull(strstr(r.errs.last, "is not ready for trigger "
				     "processing"));
	root_free(&r);
}
END_TEST

START_TEST(test_unincorp)
{
	static const char status[] =
		STANZA("act", "installed", "") "\n"
		STANZA("ta", "installed", "") "\n";
	struct unpkg_err err;
	struct root r;
	char *s;

	/* a script's dpkg-trigger ta, awaited by act: incorporated, but
	 * named packages' activations are not processed */
	root_new(&r, status, "ta act\n");
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_trigproc(&r.o, (const char *[]){ "act" }, 1,
					UNPKG_TRIGPROC_NAMES, &err), 1);
	s = root_file(&r, "status");
	ck_assert_ptr_nonnull(strstr(s, "Package: act\nStatus: install ok "
				     "triggers-awaited\n"));
	ck_assert_ptr_nonnull(strstr(s, "Triggers-Awaited: ta\n"));
	ck_assert_ptr_nonnull(strstr(s, "Package: ta\nStatus: install ok "
				     "triggers-pending\n"));
	ck_assert_ptr_nonnull(strstr(s, "Triggers-Pending: ta\n"));
	free(s);
	s = root_file(&r, "triggers/Unincorp");
	ck_assert_str_eq(s, "");
	free(s);
	/* processed at the end of an action; act set free */
	ck_assert_int_eq(unpkg_trigproc(&r.o, NULL, 0,
					UNPKG_TRIGPROC_DEFERRED, &err), 0);
	s = root_file(&r, "status");
	ck_assert_ptr_null(strstr(s, "riggers-"));
	free(s);
	ck_assert_int_eq(r.errs.n, 1);
	root_free(&r);
}
END_TEST

START_TEST(test_dependencies)
{
	static const char status[] =
		STANZA("lib", "unpacked", "") "\n"
		STANZA("ta", "triggers-pending", "Depends: lib\n")
		"Triggers-Pending: ta\n\n";
	struct unpkg_err err;
	struct root r;
	char *s;

	root_new(&r, status, "");
	unpkg_err_init(&err);
	/* the end of a run: left pending, no error */
	ck_assert_int_eq(unpkg_trigproc(&r.o, NULL, 0,
					UNPKG_TRIGPROC_DEFERRED, &err), 0);
	/* --pending: dpkg's error */
	ck_assert_int_eq(unpkg_trigproc(&r.o, NULL, 0, UNPKG_TRIGPROC_PENDING,
					&err), 1);
	ck_assert_str_eq(r.errs.last, "dependency problems - leaving "
			 "triggers unprocessed");
	s = root_file(&r, "status");
	ck_assert_ptr_nonnull(strstr(s, "Package: ta\nStatus: install ok "
				     "triggers-pending\n"));
	free(s);
	root_free(&r);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("trigproc");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_unincorp_parse);
	tcase_add_test(tc, test_pending_and_awaiter);
	tcase_add_test(tc, test_unincorp);
	tcase_add_test(tc, test_dependencies);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite());
}
