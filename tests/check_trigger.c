/* check_trigger.c - dpkg's trigger interest records (lib/trigger.c). */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "trigger.h"

struct seen {
	char text[1024];
};

static int record(void *ctx, const char *trigger, const char *pkg,
		  int noawait, struct unpkg_err *err)
{
	struct seen *s = ctx;
	size_t l = strlen(s->text);

	(void)err;
	snprintf(s->text + l, sizeof(s->text) - l, "%s:%s%s;", trigger, pkg,
		 noawait ? "/noawait" : "");
	return 0;
}

static int directive(void *ctx, int activate, const char *name, int noawait,
		     struct unpkg_err *err)
{
	struct seen *s = ctx;
	size_t l = strlen(s->text);

	(void)err;
	snprintf(s->text + l, sizeof(s->text) - l, "%s %s%s;",
		 activate ? "act" : "int", name, noawait ? " noawait" : "");
	return 0;
}

/* An admin directory under a fresh temporary directory. */
static char *admindir(int *fd)
{
	char *tmp = tu_mkdtemp();

	*fd = open(tmp, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(*fd, 0);
	return tmp;
}

static char *read_at(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/triggers/%s", dir, name);
	return tu_read_file(path, NULL);
}

START_TEST(test_parse)
{
	static const char text[] =
		"  interest /usr/share/man  # a comment\n"
		"\n"
		"interest-noawait ldconfig\n"
		"activate-await x\n"
		"activate-noawait y\n";
	struct seen s = { "" };
	struct unpkg_err err;

	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_triggers_parse(text, strlen(text), directive,
					      &s, &err), 0);
	ck_assert_str_eq(s.text, "int /usr/share/man;int ldconfig noawait;"
			 "act x;act y noawait;");
	ck_assert_int_eq(unpkg_triggers_parse("interesting x\n", 14,
					      directive, &s, &err), -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_FORMAT);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_triggers_parse("activate a b\n", 13, directive,
					      &s, &err), -1);
	ck_assert_int_eq(err.code, UNPKG_ERR_FORMAT);
}
END_TEST

START_TEST(test_interests)
{
	static const char watch[] = "interest /usr/share/w\n"
				    "interest-noawait named\n";
	static const char root[] = "interest /\n";
	struct unpkg_triggers *t;
	struct seen s = { "" };
	struct unpkg_err err;
	char *dir, *text;
	int fd;

	unpkg_err_init(&err);
	dir = admindir(&fd);
	ck_assert_int_eq(unpkg_triggers_open(fd, dir, &t, &err), 0);
	ck_assert_int_eq(unpkg_triggers_set_interests(t, "watch", watch,
						      strlen(watch), &err), 0);
	ck_assert_int_eq(unpkg_triggers_set_interests(t, "all", root,
						      strlen(root), &err), 0);
	ck_assert_int_eq(unpkg_triggers_interested(t, "/usr/share/w/x/y",
						   record, &s, &err), 0);
	ck_assert_int_eq(unpkg_triggers_interested(t, "/usr/share/wx", record,
						   &s, &err), 0);
	ck_assert_int_eq(unpkg_triggers_interested(t, "named", record, &s,
						   &err), 0);
	ck_assert_str_eq(s.text, "/usr/share/w:watch;/:all;/:all;"
			 "named:watch/noawait;");
	/* the interests in file triggers, not the named one */
	s.text[0] = '\0';
	ck_assert_int_eq(unpkg_triggers_each_file(t, record, &s, &err), 0);
	ck_assert_str_eq(s.text, "/usr/share/w:watch;/:all;");
	ck_assert_int_eq(unpkg_triggers_write(t, 0, NULL, &err), 0);
	unpkg_triggers_free(t);

	text = read_at(dir, "File");
	ck_assert_str_eq(text, "/usr/share/w watch\n/ all\n");
	free(text);
	text = read_at(dir, "named");
	ck_assert_str_eq(text, "watch/noawait\n");
	free(text);
	text = read_at(dir, "Unincorp");
	ck_assert_str_eq(text, "");
	free(text);

	/* read back; an upgrade without the named interest drops its file */
	ck_assert_int_eq(unpkg_triggers_open(fd, dir, &t, &err), 0);
	s.text[0] = '\0';
	ck_assert_int_eq(unpkg_triggers_interested(t, "named", record, &s,
						   &err), 0);
	ck_assert_str_eq(s.text, "named:watch/noawait;");
	ck_assert_int_eq(unpkg_triggers_set_interests(t, "watch", watch, 22,
						      &err), 0);
	ck_assert_int_eq(unpkg_triggers_write(t, 1, NULL, &err), 0);
	unpkg_triggers_free(t);
	text = read_at(dir, "named");
	ck_assert_ptr_null(text);
	text = read_at(dir, "File");
	ck_assert_str_eq(text, "/ all\n/usr/share/w watch\n");
	free(text);

	close(fd);
	tu_rm_rf(dir);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("trigger");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_parse);
	tcase_add_test(tc, test_interests);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
