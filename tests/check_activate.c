/* check_activate.c - trigger activations recorded in the run's database:
 * the file triggers a path activates and the "activate" directives of a
 * package being removed, for configured packages only, each trigger
 * once, prepended to Triggers-Pending. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "activate.h"
#include "install.h"
#include "pkgindex.h"
#include "testutil.h"

/* A package NAME shipping /usr/share/NAME/file with the "triggers" member
 * `triggers`, installed and configured (or only unpacked). */
static void add(const struct tu_root *root, const char *name,
		const char *triggers, int configure)
{
	char dir[64], file[64];
	const struct tu_entry e[] = {
		{ .type = 'd', .path = "./" },
		{ .type = 'd', .path = "./usr/" },
		{ .type = 'd', .path = "./usr/share/" },
		{ .type = 'd', .path = dir },
		{ .type = 'f', .path = file, .data = "x\n" },
	};
	const struct tu_entry cm[] = {
		{ .type = 'f', .path = "./triggers", .data = triggers },
	};
	struct unpkg_install_opts o = {
		.instdir = root->root, .admindir = root->admin,
		.sync = UNPKG_SYNC_NONE, .configure = configure,
	};
	struct unpkg_err err;
	const char *debs[1];

	snprintf(dir, sizeof(dir), "./usr/share/%s/", name);
	snprintf(file, sizeof(file), "./usr/share/%s/file", name);
	debs[0] = tu_root_deb(root, name, NULL, e, 5, cm, 1);
	unpkg_err_init(&err);
	ck_assert_msg(unpkg_install(&o, debs, 1, &err) == 0, "%s", err.msg);
}

/* The value of field `field` of package `key` in the run's database, or
 * "" without it. */
static const char *field(const struct run *r, const char *key,
			 const char *name)
{
	const struct unpkg_db_pkg *q = unpkg_pkgindex_find_key(r->db, key);
	const char *v;

	ck_assert_ptr_nonnull(q);
	v = unpkg_para_get(&q->para, name);
	return v != NULL ? v : "";
}

START_TEST(t_activations)
{
	static const char directives[] = "interest other\nactivate named\n";
	struct tu_root root;
	struct unpkg_install_opts o = { 0 };
	struct unpkg_stats own = { 0 };
	struct pkg gone = { 0 };
	struct unpkg_err err;
	struct run r;

	tu_root_init(&root);
	add(&root, "watch", "interest /usr/share/w\ninterest-noawait named\n",
	    1);
	add(&root, "idle", "interest /usr/share/w\n", 0);
	o.instdir = root.root;
	o.admindir = root.admin;
	o.sync = UNPKG_SYNC_NONE;
	unpkg_err_init(&err);
	ck_assert_msg(run_open(&r, &o, &own, &err) == 0, "%s", err.msg);
	gone.key = "gone";

	/* a path beside the watched one, then one beneath it */
	ck_assert_int_eq(activate_path(&r, &gone, "/usr/share/wx", &err), 0);
	ck_assert_str_eq(field(&r, "watch", "Triggers-Pending"), "");
	ck_assert_int_eq(activate_path(&r, &gone, "/usr/share/w/a/b", &err),
			 0);
	ck_assert_str_eq(field(&r, "watch", "Status"),
			 "install ok triggers-pending");
	ck_assert_str_eq(field(&r, "watch", "Triggers-Pending"),
			 "/usr/share/w");
	/* once only; a package not configured is not interested yet */
	ck_assert_int_eq(activate_path(&r, &gone, "/usr/share/w", &err), 0);
	ck_assert_str_eq(field(&r, "watch", "Triggers-Pending"),
			 "/usr/share/w");
	ck_assert_str_eq(field(&r, "idle", "Triggers-Pending"), "");
	ck_assert_str_eq(field(&r, "idle", "Status"), "install ok unpacked");

	/* the directives of a package removed: only "activate" ones, the
	 * newest trigger first; the remover awaits none */
	ck_assert_int_eq(activate_directives_removed(&r, &gone, directives,
						     strlen(directives),
						     &err), 0);
	ck_assert_str_eq(field(&r, "watch", "Triggers-Pending"),
			 "named /usr/share/w");
	ck_assert_ptr_null(gone.awaited);
	run_close(&r);
	tu_root_destroy(&root);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("activate");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, t_activations);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
