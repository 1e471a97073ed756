/* check_dpkgcfg.c - reading dpkg's configuration. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dpkgcfg.h"
#include "testutil.h"

static char *confdir(void)
{
	char *dir = tu_mkdtemp();
	char path[4096];

	snprintf(path, sizeof(path), "%s/dpkg.cfg.d", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	return dir;
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	tu_write_file(path, text, 0644);
}

/* Whether force-unsafe-io ends up on; *file (if given) receives the
 * base name of the deciding file, or "" when none decided. */
static int unsafe_io(const char *dir, char file[256])
{
	struct unpkg_dpkgcfg cfg;
	struct unpkg_err err;
	const char *from;
	int on;

	unpkg_err_init(&err);
	ck_assert_msg(unpkg_dpkgcfg_load(&cfg, dir, &err) == 0, "%s", err.msg);
	on = unpkg_dpkgcfg_force(&cfg, "unsafe-io", &from);
	if (file != NULL)
		snprintf(file, 256, "%s",
			 from != NULL ? strrchr(from, '/') + 1 : "");
	unpkg_dpkgcfg_destroy(&cfg);
	return on;
}

/* The container setup: a fragment enabling force-unsafe-io. */
START_TEST(test_container_fragment)
{
	char *dir = confdir();
	char file[256];

	put(dir, "dpkg.cfg.d/docker-apt-speedup",
	    "# comment\n\nforce-unsafe-io\n");
	ck_assert_int_eq(unsafe_io(dir, file), 1);
	ck_assert_str_eq(file, "docker-apt-speedup");
	tu_rm_rf(dir);
	free(dir);
}
END_TEST

START_TEST(test_missing_everything)
{
	char *dir = tu_mkdtemp();
	char path[4096];
	char file[256];

	ck_assert_int_eq(unsafe_io(dir, file), 0);
	ck_assert_str_eq(file, "");
	snprintf(path, sizeof(path), "%s/nope", dir);
	ck_assert_int_eq(unsafe_io(path, NULL), 0);
	tu_rm_rf(dir);
	free(dir);
}
END_TEST

/* Fragments in C order, then dpkg.cfg; the last word wins. */
START_TEST(test_order_and_negation)
{
	char *dir = confdir();
	char file[256];

	put(dir, "dpkg.cfg.d/10-a", "force-unsafe-io\n");
	put(dir, "dpkg.cfg.d/20-b", "no-force-unsafe-io\n");
	ck_assert_int_eq(unsafe_io(dir, file), 0);
	ck_assert_str_eq(file, "20-b");
	put(dir, "dpkg.cfg", "force-confold,unsafe-io\n");
	ck_assert_int_eq(unsafe_io(dir, file), 1);
	ck_assert_str_eq(file, "dpkg.cfg");
	put(dir, "dpkg.cfg", "refuse-unsafe-io\n");
	ck_assert_int_eq(unsafe_io(dir, NULL), 0);
	put(dir, "dpkg.cfg", "--force-all\n");
	ck_assert_int_eq(unsafe_io(dir, NULL), 1);
	tu_rm_rf(dir);
	free(dir);
}
END_TEST

/* dpkg ignores fragments with other characters in their names. */
START_TEST(test_ignored_fragment_names)
{
	char *dir = confdir();

	put(dir, "dpkg.cfg.d/speedup.dpkg-old", "force-unsafe-io\n");
	put(dir, "dpkg.cfg.d/speedup~", "force-unsafe-io\n");
	ck_assert_int_eq(unsafe_io(dir, NULL), 0);
	tu_rm_rf(dir);
	free(dir);
}
END_TEST

START_TEST(test_values_kept)
{
	char *dir = confdir();
	struct unpkg_dpkgcfg cfg;
	struct unpkg_err err;

	unpkg_err_init(&err);
	put(dir, "dpkg.cfg", "  log /var/log/dpkg.log  \nno-debsig\n");
	ck_assert_int_eq(unpkg_dpkgcfg_load(&cfg, dir, &err), 0);
	ck_assert_uint_eq(cfg.count, 2);
	ck_assert_str_eq(cfg.opts[0].name, "log");
	ck_assert_str_eq(cfg.opts[0].value, "/var/log/dpkg.log");
	ck_assert_str_eq(cfg.opts[1].name, "no-debsig");
	ck_assert_ptr_null(cfg.opts[1].value);
	unpkg_dpkgcfg_destroy(&cfg);
	tu_rm_rf(dir);
	free(dir);
}
END_TEST

/* An unreadable configuration is an error, not silently ignored. */
START_TEST(test_unreadable)
{
	char *dir = confdir();
	struct unpkg_dpkgcfg cfg;
	struct unpkg_err err;
	char path[4096];

	unpkg_err_init(&err);
	snprintf(path, sizeof(path), "%s/dpkg.cfg", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);	/* a directory: EISDIR on read */
	ck_assert_int_eq(unpkg_dpkgcfg_load(&cfg, dir, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "dpkg.cfg"));
	tu_rm_rf(dir);
	free(dir);
}
END_TEST

/* ~/.dpkg.cfg comes after the system's files; missing, it changes
 * nothing; unreadable, it is an error that leaves the rest. */
START_TEST(test_user_file)
{
	char *dir = confdir();
	char *home = tu_mkdtemp();
	struct unpkg_dpkgcfg cfg;
	struct unpkg_err err;
	const char *from;
	char path[4096];

	unpkg_err_init(&err);
	put(dir, "dpkg.cfg", "force-unsafe-io\n");
	ck_assert_int_eq(unpkg_dpkgcfg_load(&cfg, dir, &err), 0);
	ck_assert_int_eq(unpkg_dpkgcfg_load_user(&cfg, home, &err), 0);
	ck_assert_uint_eq(cfg.count, 1);
	put(home, ".dpkg.cfg", "refuse-unsafe-io\npath-exclude /usr/share/doc/*\n");
	ck_assert_int_eq(unpkg_dpkgcfg_load_user(&cfg, home, &err), 0);
	ck_assert_uint_eq(cfg.count, 3);
	ck_assert_int_eq(unpkg_dpkgcfg_force(&cfg, "unsafe-io", &from), 0);
	ck_assert_str_eq(strrchr(from, '/') + 1, ".dpkg.cfg");
	ck_assert_str_eq(cfg.opts[2].name, "path-exclude");
	ck_assert_str_eq(cfg.opts[2].value, "/usr/share/doc/*");
	snprintf(path, sizeof(path), "%s/.dpkg.cfg", home);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(mkdir(path, 0755), 0);	/* EISDIR on read */
	ck_assert_int_eq(unpkg_dpkgcfg_load_user(&cfg, home, &err), -1);
	ck_assert_uint_eq(cfg.count, 3);
	unpkg_dpkgcfg_destroy(&cfg);
	tu_rm_rf(dir);
	tu_rm_rf(home);
	free(dir);
	free(home);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dpkgcfg");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_container_fragment);
	tcase_add_test(tc, test_missing_everything);
	tcase_add_test(tc, test_order_and_negation);
	tcase_add_test(tc, test_ignored_fragment_names);
	tcase_add_test(tc, test_values_kept);
	tcase_add_test(tc, test_unreadable);
	tcase_add_test(tc, test_user_file);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
