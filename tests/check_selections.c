/* check_selections.c - unpkg_set_selections() (--set-selections) through
 * the library API: the selections written, the input left to stock dpkg
 * with the database unchanged, and the database write's syncs. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "selections.h"
#include "testutil.h"

/* aa: one installed instance; bb: Multi-Arch: same, two; cc: arch all,
 * config-files; hh: a selection without a package (hold, not
 * installed). */
static const char status_text[] =
	"Package: aa\n"
	"Status: install ok installed\n"
	"Priority: optional\n"
	"Section: misc\n"
	"Architecture: amd64\n"
	"Version: 1.0\n"
	"\n"
	"Package: bb\n"
	"Status: install ok installed\n"
	"Priority: optional\n"
	"Section: misc\n"
	"Architecture: amd64\n"
	"Multi-Arch: same\n"
	"Version: 1.0\n"
	"\n"
	"Package: bb\n"
	"Status: install ok installed\n"
	"Priority: optional\n"
	"Section: misc\n"
	"Architecture: i386\n"
	"Multi-Arch: same\n"
	"Version: 1.0\n"
	"\n"
	"Package: cc\n"
	"Status: install ok config-files\n"
	"Architecture: all\n"
	"Version: 1.0\n"
	"\n"
	"Package: hh\n"
	"Status: hold ok not-installed\n"
	"Architecture: amd64\n"
	"\n";

struct fx {
	char *tmp;
	char admin[4096];
	struct unpkg_install_opts o;
	struct unpkg_stats st;
};

static void fx_init(struct fx *f, const char *status)
{
	char path[4200];

	memset(f, 0, sizeof(*f));
	f->tmp = tu_mkdtemp();
	snprintf(f->admin, sizeof(f->admin), "%s/admin", f->tmp);
	ck_assert_int_eq(mkdir(f->admin, 0755), 0);
	snprintf(path, sizeof(path), "%s/info", f->admin);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/updates", f->admin);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/status", f->admin);
	tu_write_file(path, status, 0644);
	f->o.admindir = f->admin;
	f->o.instdir = f->tmp;
	f->o.stats = &f->st;
}

static void fx_destroy(struct fx *f)
{
	tu_rm_rf(f->tmp);
	free(f->tmp);
}

static char *read_admin(const struct fx *f, const char *name)
{
	char path[4200];
	char *s;

	snprintf(path, sizeof(path), "%s/%s", f->admin, name);
	s = tu_read_file(path, NULL);
	ck_assert_ptr_nonnull(s);
	return s;
}

/* ADMIN/name is `want`. */
static void assert_admin(const struct fx *f, const char *name,
			 const char *want)
{
	char *got = read_admin(f, name);

	ck_assert_str_eq(got, want);
	free(got);
}

#define MAINT_DESC "Maintainer: m <m@example.invalid>\nDescription: d\n"

/* Write ADMIN/available. */
static void write_available(const struct fx *f, const char *text)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/available", f->admin);
	tu_write_file(path, text, 0644);
}

/* Set `input`; the result. */
static int set(struct fx *f, const char *input, const char **why)
{
	struct unpkg_err err;
	int r;

	unpkg_err_init(&err);
	r = unpkg_set_selections(&f->o, input, strlen(input), why, &err);
	ck_assert_msg(r >= 0, "%s", err.msg);
	return r;
}

/* `input` set on a database of `status` (and `available` unless NULL)
 * is stock dpkg's: the status as it was. */
static void check_for_dpkg(const char *status, const char *available,
			   const char *input)
{
	struct fx f;
	const char *why;

	fx_init(&f, status);
	if (available != NULL)
		write_available(&f, available);
	ck_assert_int_eq(set(&f, input, &why), UNPKG_SELECTIONS_DPKG);
	ck_assert_ptr_nonnull(why);
	assert_admin(&f, "status", status);
	ck_assert_int_eq(f.st.fsync, 0);
	fx_destroy(&f);
}

/* `status` with the Status line of the stanza starting at `stanza`
 * (its "Package: ..." line, unique) made `value`. */
static char *with_status(const char *status, const char *stanza,
			 const char *value)
{
	const char *p = strstr(status, stanza), *line, *end;
	char *out;

	ck_assert_ptr_nonnull(p);
	line = strstr(p, "Status: ");
	ck_assert_ptr_nonnull(line);
	line += strlen("Status: ");
	end = strchr(line, '\n');
	out = malloc(strlen(status) + strlen(value) + 1);
	ck_assert_ptr_nonnull(out);
	sprintf(out, "%.*s%s%s", (int)(line - status), status, value, end);
	return out;
}

START_TEST(t_set)
{
	struct fx f;
	const char *why;
	char *want, *tmp;

	fx_init(&f, status_text);
	ck_assert_int_eq(set(&f, "aa purge\n"
				 "# a comment line\n"
				 "\n"
				 "  cc:all\tdeinstall \r\n"
				 "bb:i386 hold\n"
				 "aa hold\n"
				 "aa deinstall", &why),
			 UNPKG_SELECTIONS_SET);
	/* the last line of a package wins; no newline at the end is read
	 * as dpkg reads it */
	tmp = with_status(status_text, "Package: aa\n",
			  "deinstall ok installed");
	want = with_status(tmp, "Package: cc\n", "deinstall ok config-files");
	free(tmp);
	tmp = want;
	want = with_status(tmp, "Package: bb\nStatus: install ok installed\n"
			   "Priority: optional\nSection: misc\n"
			   "Architecture: i386", "hold ok installed");
	free(tmp);
	assert_admin(&f, "status", want);
	assert_admin(&f, "status-old", status_text);
	free(want);
	ck_assert_uint_gt(f.st.fsync, 0);
	fx_destroy(&f);
}
END_TEST

/* Nothing to set still writes the database, as dpkg's does. */
START_TEST(t_empty)
{
	struct fx f;
	const char *why;

	fx_init(&f, status_text);
	ck_assert_int_eq(set(&f, "", &why), UNPKG_SELECTIONS_SET);
	assert_admin(&f, "status-old", status_text);
	fx_destroy(&f);
}
END_TEST

/* Input stock dpkg must read (its warnings and errors, or rules of
 * its package table unpkg does not follow): the database unchanged. */
static const char *const for_dpkg[] = {
	"zz purge\n",		/* unknown: dpkg warns */
	"bb purge\n",		/* two installed instances */
	"aa:i386 purge\n",	/* no instance of that architecture */
	"cc:amd64 purge\n",	/* arch all, asked as amd64 */
	"hh purge\n",		/* a selection only */
	"hh:amd64 purge\n",
	"aa bogus\n",		/* not a selection */
	"aa unknown\n",		/* dpkg takes it; unpkg leaves it */
	"aa Purge\n",
	"AA purge\n",		/* dpkg folds the case */
	"aa: purge\n",
	"a_a purge\n",
	"aa\n",			/* no selection */
	"aa",
	"aa \n",
	"aa purge extra\n",	/* more words */
	"aa purge ",		/* blanks before the end of the input */
	"aa purge\nzz purge\n",	/* a good line, then one for dpkg */
};

START_TEST(t_for_dpkg)
{
	check_for_dpkg(status_text, NULL, for_dpkg[_i]);
}
END_TEST

/* A package awaiting triggers: dpkg's open for writing may change its
 * state, so the whole run is dpkg's. */
START_TEST(t_awaiting)
{
	static const char awaiting[] =
		"Package: aa\n"
		"Status: install ok triggers-awaited\n"
		"Architecture: amd64\n"
		"Version: 1.0\n"
		"Triggers-Awaited: tt\n"
		"\n"
		"Package: tt\n"
		"Status: install ok installed\n"
		"Architecture: amd64\n"
		"Version: 1.0\n"
		"\n";

	check_for_dpkg(awaiting, NULL, "tt hold\n");
}
END_TEST

/* A journal entry in updates/ is applied and retired by the write. */
START_TEST(t_updates)
{
	struct fx f;
	const char *why;
	char path[4200], *got;
	struct stat st;

	fx_init(&f, status_text);
	snprintf(path, sizeof(path), "%s/updates/0000", f.admin);
	tu_write_file(path, "Package: aa\n"
			    "Status: install ok installed\n"
			    "Architecture: amd64\n"
			    "Version: 2.0\n", 0644);
	ck_assert_int_eq(set(&f, "aa hold\n", &why), UNPKG_SELECTIONS_SET);
	got = read_admin(&f, "status");
	ck_assert_ptr_nonnull(strstr(got, "Package: aa\n"
					  "Status: hold ok installed\n"
					  "Architecture: amd64\n"
					  "Version: 2.0\n"));
	free(got);
	ck_assert_int_ne(stat(path, &st), 0);
	fx_destroy(&f);
}
END_TEST

/* The write's sync fails: an error, and the status as it was. */
START_TEST(t_sync_fails)
{
	struct fx f;
	pid_t pid;
	int status;

	fx_init(&f, status_text);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct unpkg_err err;
		const char *why;
		int r;

		unpkg_err_init(&err);
		if (tu_deny_syscall(SYS_fdatasync, EIO) < 0)
			_exit(3);
		r = unpkg_set_selections(&f.o, "aa purge\n", 9, &why, &err);
		_exit(r < 0 && err.code == UNPKG_ERR_SYNC ? 0 : 4);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	assert_admin(&f, "status", status_text);
	fx_destroy(&f);
}
END_TEST

/* The available file's Section and Priority replace the status
 * stanza's, as dpkg's write puts them: the one installed instance of a
 * package whatever the architecture named, the instance of that
 * architecture for Multi-Arch: same; no Section leaves it as it was. */
START_TEST(t_available)
{
	struct fx f;
	const char *why;
	char *got;

	fx_init(&f, status_text);
	write_available(&f, "Package: aa\n"
			    "Architecture: i386\n"
			    "Version: 2.0\n"
			    "Priority: required\n"
			    "Section: admin\n"
			    MAINT_DESC
			    "\n"
			    "Package: bb\n"
			    "Architecture: i386\n"
			    "Version: 1.0\n"
			    "Multi-Arch: same\n"
			    "Priority: important\n"
			    MAINT_DESC
			    "\n"
			    "Package: zz\n"
			    "Architecture: all\n"
			    "Version: 1.0\n"
			    "Priority: extra\n"
			    MAINT_DESC);
	ck_assert_int_eq(set(&f, "aa hold\n", &why), UNPKG_SELECTIONS_SET);
	got = read_admin(&f, "status");
	ck_assert_ptr_nonnull(strstr(got, "Package: aa\n"
					  "Status: hold ok installed\n"
					  "Priority: required\n"
					  "Section: admin\n"));
	ck_assert_ptr_nonnull(strstr(got, "Package: bb\n"
					  "Status: install ok installed\n"
					  "Priority: optional\n"
					  "Section: misc\n"
					  "Architecture: amd64\n"));
	ck_assert_ptr_nonnull(strstr(got, "Package: bb\n"
					  "Status: install ok installed\n"
					  "Priority: important\n"
					  "Section: misc\n"
					  "Architecture: i386\n"));
	ck_assert_ptr_null(strstr(got, "zz"));
	free(got);
	fx_destroy(&f);
}
END_TEST

/* Available stanzas whose change unpkg leaves to dpkg. */
static const char *const avail_for_dpkg[] = {
	/* a field the stanza lacks */
	"Package: cc\nArchitecture: all\nVersion: 1\nPriority: optional\n"
	MAINT_DESC,
	/* a priority dpkg spells its own way */
	"Package: aa\nArchitecture: amd64\nVersion: 1\nPriority: Required\n"
	MAINT_DESC,
	/* a package with a selection only */
	"Package: hh\nArchitecture: amd64\nVersion: 1\nSection: misc\n"
	MAINT_DESC,
	/* no architecture */
	"Package: aa\nVersion: 1\nPriority: required\n" MAINT_DESC,
	/* what dpkg's parser warns about (no Description) or refuses (no
	 * Version) */
	"Package: aa\nArchitecture: amd64\nVersion: 1\nPriority: required\n"
	"Maintainer: m <m@example.invalid>\n",
	"Package: aa\nArchitecture: amd64\nPriority: required\n" MAINT_DESC,
	/* not a stanza */
	"Package aa\n",
};

START_TEST(t_available_for_dpkg)
{
	check_for_dpkg(status_text, avail_for_dpkg[_i], "aa hold\n");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("selections");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, t_set);
	tcase_add_test(tc, t_empty);
	tcase_add_loop_test(tc, t_for_dpkg, 0,
			    (int)(sizeof(for_dpkg) / sizeof(for_dpkg[0])));
	tcase_add_test(tc, t_awaiting);
	tcase_add_test(tc, t_updates);
	tcase_add_test(tc, t_sync_fails);
	tcase_add_test(tc, t_available);
	tcase_add_loop_test(tc, t_available_for_dpkg, 0,
			    (int)(sizeof(avail_for_dpkg) /
				  sizeof(avail_for_dpkg[0])));
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite());
}
