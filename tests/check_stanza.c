/* check_stanza.c - tests for the status stanza writer and the control file
 * checks.
 *
 * Every expected stanza below is what dpkg 1.21 wrote into its status
 * file after `dpkg --root=R --unpack` or `-i --force-depends` of a package
 * built from the control file next to it. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "stanza.h"
#include "testutil.h"

static void parse(const char *text, struct unpkg_para *para)
{
	struct unpkg_err err;

	unpkg_para_init(para);
	unpkg_err_init(&err);
	if (unpkg_para_parse(text, strlen(text), para, &err) < 0)
		ck_abort_msg("cannot parse test control file: %s", err.msg);
}

/* Format `control` with `state` and compare with dpkg's stanza. */
static void expect_stanza(const char *control,
			  const struct unpkg_stanza_state *state,
			  const char *expected)
{
	struct unpkg_para p;
	struct unpkg_err err;
	char *out = NULL;

	parse(control, &p);
	unpkg_err_init(&err);
	if (unpkg_stanza_format(&p, state, &out, &err) < 0)
		ck_abort_msg("format failed: %s", err.msg);
	ck_assert_str_eq(out, expected);
	free(out);
	unpkg_para_destroy(&p);
}

static void expect_format_error(const char *control,
				const struct unpkg_stanza_state *state,
				enum unpkg_errcode code, const char *msg)
{
	struct unpkg_para p;
	struct unpkg_err err;
	char *out = (char *)"not touched";

	parse(control, &p);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_stanza_format(&p, state, &out, &err), -1);
	ck_assert_ptr_null(out);
	ck_assert_int_eq(err.code, code);
	if (strstr(err.msg, msg) == NULL)
		ck_abort_msg("error '%s' does not mention '%s'", err.msg, msg);
	unpkg_para_destroy(&p);
}

static const struct unpkg_stanza_state st_unpacked = {
	.want = "install", .flag = "ok", .status = "unpacked"
};

static const struct unpkg_stanza_state st_installed = {
	.want = "install", .flag = "ok", .status = "installed"
};

/* Fields in an odd order and case, odd spacing in relationships, obsolete
 * operators, unknown fields before and after the known ones. */
static const char big_control[] =
	"X-Custom-First: hello  world  \n"
	"description: A test package   \n"
	" This is the long description, line one.\n"
	" .\n"
	"   Indented   line with trailing spaces   \n"
	" .\n"
	" Last line.\n"
	"homepage: https://example.org/\n"
	"Tag: role::program, devel::lang:c\n"
	"enhances:  emacs ,vim|  nano\n"
	"conflicts: old (<< 1.0), older(<1)\n"
	"breaks: brk (> 2.0),brk2 (>=3)\n"
	"suggests: s1 | s2 (= 1.0-1)\n"
	"recommends: r1:any,r2 ( >= 2:1.0 )\n"
	"pre-depends: pd (>= 1)\n"
	"depends: libc6 (>= 2.34), perl:any, python3 | python3.11 (>> 3.11~rc1)\n"
	"provides: virt (= 1.2), virt2\n"
	"replaces: old (<= 0.9)\n"
	"Original-Maintainer: Orig <orig@example.org>\n"
	"Built-Using: gcc-12 (= 12.2.0-14)\n"
	"bugs: mailto:bugs@example.org\n"
	"maintainer:   Me <me@example.org>\n"
	"origin: Debian\n"
	"installed-size: 123\n"
	"section: devel\n"
	"priority: optional\n"
	"protected: yes\n"
	"essential: yes\n"
	"multi-arch: foreign\n"
	"architecture: amd64\n"
	"VERSION: 1:2.3-4\n"
	"source: foosrc (2.3-3)\n"
	"package: bigpkg\n"
	"X-Last: z\n";

#define BIG_HEAD(status) \
	"Package: bigpkg\n" \
	"Essential: yes\n" \
	"Protected: yes\n" \
	"Status: " status "\n" \
	"Priority: optional\n" \
	"Section: devel\n" \
	"Installed-Size: 123\n" \
	"Origin: Debian\n" \
	"Maintainer: Me <me@example.org>\n" \
	"Bugs: mailto:bugs@example.org\n" \
	"Architecture: amd64\n" \
	"Multi-Arch: foreign\n" \
	"Source: foosrc (2.3-3)\n" \
	"Version: 1:2.3-4\n" \
	"Replaces: old (<= 0.9)\n" \
	"Provides: virt (= 1.2), virt2\n" \
	"Depends: libc6 (>= 2.34), perl:any, python3 | python3.11 (>> 3.11~rc1)\n" \
	"Pre-Depends: pd (>= 1)\n" \
	"Recommends: r1:any, r2 (>= 2:1.0)\n" \
	"Suggests: s1 | s2 (= 1.0-1)\n" \
	"Breaks: brk (>= 2.0), brk2 (>= 3)\n" \
	"Conflicts: old (<< 1.0), older (<= 1)\n" \
	"Enhances: emacs, vim | nano\n" \
	"Conffiles:\n"

#define BIG_TAIL \
	"Description: A test package   \n" \
	" This is the long description, line one.\n" \
	" .\n" \
	"   Indented   line with trailing spaces   \n" \
	" .\n" \
	" Last line.\n" \
	"X-Custom-First: hello  world\n" \
	"homepage: https://example.org/\n" \
	"Tag: role::program, devel::lang:c\n" \
	"Original-Maintainer: Orig <orig@example.org>\n" \
	"Built-Using: gcc-12 (= 12.2.0-14)\n" \
	"X-Last: z\n"

START_TEST(test_dpkg_big_unpacked)
{
	const struct unpkg_stanza_state st = {
		.want = "install", .flag = "ok", .status = "unpacked",
		.conffiles = "\n /etc/cse.conf newconffile"
	};

	expect_stanza(big_control, &st,
		      BIG_HEAD("install ok unpacked")
		      " /etc/cse.conf newconffile\n"
		      BIG_TAIL);
}
END_TEST

START_TEST(test_dpkg_big_installed)
{
	const struct unpkg_stanza_state st = {
		.want = "install", .flag = "ok", .status = "installed",
		.conffiles = "\n /etc/cse.conf 882ec82d4ad5b39502a96bb5f35896ed"
	};

	expect_stanza(big_control, &st,
		      BIG_HEAD("install ok installed")
		      " /etc/cse.conf 882ec82d4ad5b39502a96bb5f35896ed\n"
		      BIG_TAIL);
}
END_TEST

/* Normalisations: upper-case package name folded, epoch 0 kept because
 * the upstream part has a colon, Priority folded, "no" booleans and
 * Multi-Arch dropped, obsolete aliases renamed, Packages-file fields
 * dropped, empty known fields dropped, empty unknown field kept. */
START_TEST(test_dpkg_odd_installed)
{
	expect_stanza("package: Foo_Bar\n"
		      "Version: 0:1:2\n"
		      "Architecture: all\n"
		      "Priority: OPTIONAL\n"
		      "Essential: no\n"
		      "Multi-Arch: no\n"
		      "Protected: No\n"
		      "Class-X: keep\n"
		      "Recommended: Zlib1g (>=1:1.2) ,x:any\n"
		      "Optional: s1|s2\n"
		      "Filename: pool/f.deb\n"
		      "Size: 1234\n"
		      "MD5sum: 0123456789abcdef0123456789abcdef\n"
		      "MSDOS-Filename: F.DEB\n"
		      "Package-Type: deb\n"
		      "X-Empty:\n"
		      "Section:\n"
		      "Depends:\n"
		      "Installed-Size:  42  \n"
		      "Maintainer: M <m@example.org>\n"
		      "Description: odd\n",
		      &st_installed,
		      "Package: foo_bar\n"
		      "Status: install ok installed\n"
		      "Priority: optional\n"
		      "Installed-Size: 42\n"
		      "Maintainer: M <m@example.org>\n"
		      "Architecture: all\n"
		      "Version: 0:1:2\n"
		      "Recommends: zlib1g (>= 1:1.2), x:any\n"
		      "Suggests: s1 | s2\n"
		      "Description: odd\n"
		      "Class-X: keep\n"
		      "Package-Type: deb\n"
		      "X-Empty: \n");
}
END_TEST

/* `dpkg -i` of 1:1.0, then `dpkg --unpack` of 2.0: Config-Version follows
 * Version; a value starting on the next line still gets ": ". */
START_TEST(test_dpkg_config_version)
{
	static const char control[] = "Package: cv\n"
				      "Version: 2.0\n"
				      "Architecture: all\n"
				      "Maintainer: m\n"
				      "X-A: 1\n"
				      "Description:\n"
				      " long only\n";
	struct unpkg_stanza_state st = {
		.want = "install", .flag = "ok", .status = "unpacked",
		.config_version = "1:1.0"
	};

	expect_stanza(control, &st,
		      "Package: cv\n"
		      "Status: install ok unpacked\n"
		      "Maintainer: m\n"
		      "Architecture: all\n"
		      "Version: 2.0\n"
		      "Config-Version: 1:1.0\n"
		      "Description: \n"
		      " long only\n"
		      "X-A: 1\n");
	/* dpkg never writes it for an installed package (and refuses to
	 * read it back there). */
	st.status = "installed";
	expect_stanza(control, &st,
		      "Package: cv\n"
		      "Status: install ok installed\n"
		      "Maintainer: m\n"
		      "Architecture: all\n"
		      "Version: 2.0\n"
		      "Description: \n"
		      " long only\n"
		      "X-A: 1\n");
	st.status = "half-configured";
	st.config_version = "00:1.0";
	expect_stanza(control, &st,
		      "Package: cv\n"
		      "Status: install ok half-configured\n"
		      "Maintainer: m\n"
		      "Architecture: all\n"
		      "Version: 2.0\n"
		      "Config-Version: 1.0\n"
		      "Description: \n"
		      " long only\n"
		      "X-A: 1\n");
}
END_TEST

START_TEST(test_status_line)
{
	const struct unpkg_stanza_state st = {
		.want = "hold", .flag = "reinstreq", .status = "half-installed"
	};
	const struct unpkg_stanza_state gone = {
		.want = "purge", .flag = "ok", .status = "not-installed",
		.conffiles = "\n /etc/x 1",
		.config_version = "1.0"
	};

	/* half-installed needs no Version, as dpkg reads it. */
	expect_stanza("Package: p\nArchitecture: all\n", &st,
		      "Package: p\n"
		      "Status: hold reinstreq half-installed\n"
		      "Architecture: all\n");
	/* dpkg forgets conffiles and Config-Version of not-installed
	 * packages. */
	expect_stanza("Package: p\nVersion: 1\n", &gone,
		      "Package: p\n"
		      "Status: purge ok not-installed\n"
		      "Version: 1\n");
}
END_TEST

struct norm_case {
	const char *field;
	const char *in;
	const char *out;	/* NULL: the field is not written */
};

/* Each checked against dpkg 1.21. */
static const struct norm_case norm_cases[] = {
	{ "Version", "0:1:2", "0:1:2" },
	{ "Version", "00:1.0-0", "1.0-0" },
	{ "Version", "01:1.0", "1:1.0" },
	{ "Version", "1:2:3-4", "1:2:3-4" },
	{ "Version", "1.0-1-2", "1.0-1-2" },
	{ "Version", "2147483647:1", "2147483647:1" },
	{ "Priority", "OPTIONAL", "optional" },
	{ "Priority", "Extra", "extra" },
	{ "Priority", "weird-Prio", "weird-Prio" },
	{ "Priority", "unknown", "unknown" },
	{ "Priority", "Unknown", "Unknown" },
	{ "Priority", "opt", "opt" },
	{ "Essential", "YES", "yes" },
	{ "Essential", "no", NULL },
	{ "Protected", "Yes", "yes" },
	{ "Multi-Arch", "Foreign", "foreign" },
	{ "Multi-Arch", "ALLOWED", "allowed" },
	{ "Multi-Arch", "Same", "same" },
	{ "Multi-Arch", "no", NULL },
	{ "Source", "bar (1.0)", "bar (1.0)" },
	{ "Installed-Size", "abc", "abc" },
	{ "Section", "a\n b", "a\n b" },
	{ "Depends", "a (1.0)", "a (= 1.0)" },
	{ "Depends", "a(<1)", "a (<= 1)" },
	{ "Depends", "a(>=1)|b(<<2),c", "a (>= 1) | b (<< 2), c" },
	{ "Depends", "a\n  , b", "a, b" },
	{ "Depends", "a:ANY, b:native", "a:ANY, b:native" },
	{ "Provides", "x (>= 1)", "x (>= 1)" },
	{ "Class", "Important", "important" },
	{ "Package-Type", "udeb", "udeb" },
	{ "Filename", "x.deb", NULL },
	{ "Size", "12", NULL },
	{ "MD5sum", "abc", NULL },
	{ "MSDOS-Filename", "X", NULL },
	{ "Conffiles", "\n /etc/x 0123", NULL },
};

START_TEST(test_normalise)
{
	const struct norm_case *c = &norm_cases[_i];
	struct unpkg_para p;
	struct unpkg_err err;
	char expected[512];
	char *out = NULL;
	int version = strcmp(c->field, "Version") == 0;
	const char *name = c->field;

	if (strcmp(name, "Class") == 0)
		name = "Priority";
	unpkg_para_init(&p);
	unpkg_err_init(&err);
	/* Built with unpkg_para_set() so that the value is exactly c->in. */
	ck_assert_int_eq(unpkg_para_set(&p, "Package", "foo", &err), 0);
	if (!version)
		ck_assert_int_eq(unpkg_para_set(&p, "Version", "1.0", &err), 0);
	ck_assert_int_eq(unpkg_para_set(&p, c->field, c->in, &err), 0);
	ck_assert_int_eq(unpkg_para_set(&p, "Architecture", "amd64", &err), 0);
	ck_assert_int_eq(unpkg_stanza_format(&p, &st_unpacked, &out, &err), 0);

	/* Only the fields that dpkg writes before or after Version move. */
	if (c->out == NULL)
		snprintf(expected, sizeof(expected),
			 "Package: foo\nStatus: install ok unpacked\n"
			 "Architecture: amd64\nVersion: 1.0\n");
	else if (version)
		snprintf(expected, sizeof(expected),
			 "Package: foo\nStatus: install ok unpacked\n"
			 "Architecture: amd64\nVersion: %s\n", c->out);
	else if (strcmp(name, "Essential") == 0 ||
		 strcmp(name, "Protected") == 0)
		snprintf(expected, sizeof(expected),
			 "Package: foo\n%s: %s\nStatus: install ok unpacked\n"
			 "Architecture: amd64\nVersion: 1.0\n", name, c->out);
	else if (strcmp(name, "Priority") == 0 ||
		 strcmp(name, "Section") == 0 ||
		 strcmp(name, "Installed-Size") == 0)
		snprintf(expected, sizeof(expected),
			 "Package: foo\nStatus: install ok unpacked\n"
			 "%s: %s\nArchitecture: amd64\nVersion: 1.0\n", name,
			 c->out);
	else if (strcmp(name, "Multi-Arch") == 0 ||
		 strcmp(name, "Source") == 0)
		snprintf(expected, sizeof(expected),
			 "Package: foo\nStatus: install ok unpacked\n"
			 "Architecture: amd64\n%s: %s\nVersion: 1.0\n", name,
			 c->out);
	else
		snprintf(expected, sizeof(expected),
			 "Package: foo\nStatus: install ok unpacked\n"
			 "Architecture: amd64\nVersion: 1.0\n%s: %s\n", name,
			 c->out);
	ck_assert_str_eq(out, expected);
	free(out);
	unpkg_para_destroy(&p);
}
END_TEST

/* A stanza read back from the status file: what the database knows comes
 * from the state, never from the paragraph. */
START_TEST(test_db_fields_from_state)
{
	const struct unpkg_stanza_state st = {
		.want = "install", .flag = "ok", .status = "half-configured",
		.conffiles = "\n /etc/new 2",
		.config_version = "0.9"
	};

	expect_stanza("Package: p\n"
		      "Status: purge ok installed\n"
		      "Version: 1.0\n"
		      "Config-Version: 0.5\n"
		      "Conffiles:\n /etc/old 1\n"
		      "Triggers-Awaited: q\n"
		      "Revision: 3\n"
		      "Description: d\n",
		      &st,
		      "Package: p\n"
		      "Status: install ok half-configured\n"
		      "Version: 1.0\n"
		      "Config-Version: 0.9\n"
		      "Conffiles:\n /etc/new 2\n"
		      "Description: d\n");
}
END_TEST

/* The stanzas a real status file holds come back unchanged. */
START_TEST(test_roundtrip_status)
{
	static const char stanza[] =
		"Package: libc-bin\n"
		"Essential: yes\n"
		"Status: install ok installed\n"
		"Priority: required\n"
		"Section: libs\n"
		"Installed-Size: 2646\n"
		"Maintainer: GNU Libc Maintainers "
		"<debian-glibc@lists.debian.org>\n"
		"Architecture: amd64\n"
		"Multi-Arch: foreign\n"
		"Source: glibc\n"
		"Version: 2.36-9+deb12u13\n"
		"Depends: libc6 (>> 2.36), libc6 (<< 2.37)\n"
		"Recommends: manpages\n"
		"Conffiles:\n"
		" /etc/bindresvport.blacklist 4c09213317e4e3dd3c71d74404e503c5\n"
		" /etc/default/nss d6d5d6f621fb3ead2548076ce81e309c\n"
		" /etc/gai.conf 28fa76ff5a9e0566eaa1e11f1ce51f09\n"
		" /etc/ld.so.conf 4317c6de8564b68d628c21efa96b37e4\n"
		" /etc/ld.so.conf.d/libc.conf "
		"d4d833fd095fb7b90e1bb4a547f16de6\n"
		"Description: GNU C Library: Binaries\n"
		" This package contains utility programs related to the GNU C "
		"Library.\n"
		" .\n"
		"  * getconf: query system configuration variables\n"
		"Homepage: https://www.gnu.org/software/libc/libc.html\n";
	struct unpkg_para p;
	struct unpkg_err err;
	struct unpkg_stanza_state st = {
		.want = "install", .flag = "ok", .status = "installed"
	};
	char *out = NULL;

	parse(stanza, &p);
	st.conffiles = unpkg_para_get(&p, "Conffiles");
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_stanza_format(&p, &st, &out, &err), 0);
	ck_assert_str_eq(out, stanza);
	free(out);
	unpkg_para_destroy(&p);
}
END_TEST

/* The trigger fields come from the state, last, as dpkg writes them. */
START_TEST(test_format_triggers)
{
	static const char ctl[] = "Package: p\nVersion: 1\nArchitecture: all\n"
				  "Description: d\n";
	struct unpkg_stanza_state st = st_unpacked;
	struct unpkg_err err;
	struct unpkg_para p;
	char *out = NULL;

	unpkg_err_init(&err);
	unpkg_para_init(&p);
	ck_assert_int_eq(unpkg_para_parse(ctl, strlen(ctl), &p, &err), 0);
	st.status = "triggers-pending";
	st.triggers_pending = "named /usr/share/x";
	st.triggers_awaited = "q";
	ck_assert_msg(unpkg_stanza_format(&p, &st, &out, &err) == 0, "%s",
		      err.msg);
	ck_assert_str_eq(out, "Package: p\nStatus: install ok triggers-pending"
			 "\nArchitecture: all\nVersion: 1\nDescription: d\n"
			 "Triggers-Pending: named /usr/share/x\n"
			 "Triggers-Awaited: q\n");
	free(out);
	unpkg_para_destroy(&p);
}
END_TEST

/* A stanza of the database under a new Status: the Config-Version given
 * goes where dpkg writes it (after Version, not at the end), the rest
 * stays.  The expected text is dpkg's after a removal that failed on a
 * file of the package (half-installed, its configured version kept). */
/* Lines of a Conffiles value, split as dpkg reads them: the path (which
 * may hold spaces) up to the blank before the hash, the flags after it. */
static const struct {
	const char *line;
	const char *path;	/* NULL: no path and hash */
	const char *hash;
	const char *after;	/* what follows the hash */
} split_cases[] = {
	{ " /etc/a.conf 970033febc071b8e78f1d9ad5cd7d87a", "/etc/a.conf",
	  "970033febc071b8e78f1d9ad5cd7d87a", "" },
	{ " /etc/a b.conf 970033febc071b8e78f1d9ad5cd7d87a obsolete",
	  "/etc/a b.conf", "970033febc071b8e78f1d9ad5cd7d87a", " obsolete" },
	{ "  /etc/c newconffile remove-on-upgrade  ", "/etc/c", "newconffile",
	  " remove-on-upgrade  " },
	/* a path that is itself 32 characters long: the last such word */
	{ " 0123456789abcdef0123456789abcdef newconffile",
	  "0123456789abcdef0123456789abcdef", "newconffile", "" },
	{ " /etc/d", NULL, NULL, NULL },
	{ " 970033febc071b8e78f1d9ad5cd7d87a", NULL, NULL, NULL },
	{ "", NULL, NULL, NULL },
};

START_TEST(test_conffile_split)
{
	const char *line = split_cases[_i].line;
	const char *end = line + strlen(line), *path = NULL, *hash, *hend;
	int r = unpkg_conffile_split(line, end, &path, &hash, &hend);

	if (split_cases[_i].path == NULL) {
		ck_assert_int_eq(r, -1);
		return;
	}
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(hash[-1], ' ');
	ck_assert_int_eq((int)(hash - 1 - path),
			 (int)strlen(split_cases[_i].path));
	ck_assert_int_eq(strncmp(path, split_cases[_i].path,
				 (size_t)(hash - 1 - path)), 0);
	ck_assert_int_eq((int)(hend - hash), (int)strlen(split_cases[_i].hash));
	ck_assert_int_eq(strncmp(hash, split_cases[_i].hash,
				 (size_t)(hend - hash)), 0);
	ck_assert_str_eq(hend, split_cases[_i].after);
}
END_TEST

START_TEST(test_restate)
{
	static const char installed[] =
		"Package: x1\n"
		"Status: hold ok installed\n"
		"Maintainer: m\n"
		"Architecture: all\n"
		"Version: 1.0\n"
		"Conffiles:\n"
		" /etc/x1.conf 970033febc071b8e78f1d9ad5cd7d87a\n"
		"Description: d\n"
		"Triggers-Awaited: q\n";
	struct unpkg_para p;
	struct unpkg_err err;
	char *out = NULL;

	parse(installed, &p);
	unpkg_err_init(&err);
	ck_assert_msg(unpkg_stanza_restate(&p, NULL, "ok", "half-installed",
					   "1.0", &out, &err) == 0, "%s",
		      err.msg);
	ck_assert_str_eq(out, "Package: x1\n"
			      "Status: hold ok half-installed\n"
			      "Maintainer: m\n"
			      "Architecture: all\n"
			      "Version: 1.0\n"
			      "Config-Version: 1.0\n"
			      "Conffiles:\n"
			      " /etc/x1.conf 970033febc071b8e78f1d9ad5cd7d87a\n"
			      "Description: d\n"
			      "Triggers-Awaited: q\n");
	free(out);
	unpkg_para_destroy(&p);
	/* the recorded Config-Version kept where none is given, the want
	 * given replacing the old */
	parse("Package: x1\nStatus: install ok half-configured\n"
	      "Version: 2.0\nConfig-Version: 1.0\nDescription: d\n", &p);
	ck_assert_int_eq(unpkg_stanza_restate(&p, "purge", "reinstreq",
					      "half-installed", NULL, &out,
					      &err), 0);
	ck_assert_str_eq(out, "Package: x1\n"
			      "Status: purge reinstreq half-installed\n"
			      "Version: 2.0\n"
			      "Config-Version: 1.0\n"
			      "Description: d\n");
	free(out);
	unpkg_para_destroy(&p);
}
END_TEST

START_TEST(test_format_errors)
{
	static const char ok[] = "Package: p\nVersion: 1\n";
	struct unpkg_stanza_state st = st_unpacked;

	st.want = "wanted";
	expect_format_error(ok, &st, UNPKG_ERR_USAGE, "selection 'wanted'");
	st = st_unpacked;
	st.flag = NULL;
	expect_format_error(ok, &st, UNPKG_ERR_USAGE, "flag ''");
	st = st_unpacked;
	st.status = "Installed";
	expect_format_error(ok, &st, UNPKG_ERR_USAGE,
			    "status 'Installed'");
	st.status = "triggers-pending";
	st.triggers_awaited = "x";
	expect_format_error(ok, &st, UNPKG_ERR_USAGE,
			    "'triggers-pending' without its trigger field");
	st.status = "triggers-awaited";
	st.triggers_awaited = NULL;
	st.triggers_pending = "/usr/share/x";
	expect_format_error(ok, &st, UNPKG_ERR_USAGE,
			    "'triggers-awaited' without its trigger field");
	st = st_unpacked;
	st.conffiles = " /etc/x 1";
	expect_format_error(ok, &st, UNPKG_ERR_USAGE, "Conffiles");
	st.conffiles = "\n /etc/x 1\nStatus: purge ok installed";
	expect_format_error(ok, &st, UNPKG_ERR_USAGE, "Conffiles");
	st.conffiles = "\n /etc/x 1\n";
	expect_format_error(ok, &st, UNPKG_ERR_USAGE, "Conffiles");

	expect_format_error("Version: 1\n", &st_unpacked, UNPKG_ERR_FORMAT,
			    "missing 'Package' field");
	expect_format_error("Package: a@b\nVersion: 1\n", &st_unpacked,
			    UNPKG_ERR_FORMAT, "invalid package name 'a@b'");
	expect_format_error("Package: p\n", &st_unpacked, UNPKG_ERR_FORMAT,
			    "missing 'Version' field");
	expect_format_error("Package: p\n", &st_installed, UNPKG_ERR_FORMAT,
			    "missing 'Version' field");
	expect_format_error("Package: p\nVersion: 1:\n", &st_unpacked,
			    UNPKG_ERR_FORMAT, "'Version' field");
	st = st_unpacked;
	st.config_version = "1.0-";
	expect_format_error(ok, &st, UNPKG_ERR_FORMAT,
			    "'Config-Version' field");
	expect_format_error("Package: p\nVersion: 1\nMulti-Arch: samex\n",
			    &st_unpacked, UNPKG_ERR_FORMAT,
			    "'Multi-Arch' field: trailing junk in 'samex'");
	expect_format_error("Package: p\nVersion: 1\nArchitecture: all\n"
			    "Multi-Arch: same\n", &st_unpacked,
			    UNPKG_ERR_FORMAT,
			    "package has 'Multi-Arch: same' field but is "
			    "architecture 'all'");
	expect_format_error("Package: p\nVersion: 1\nEssential: maybe\n",
			    &st_unpacked, UNPKG_ERR_FORMAT,
			    "'Essential' field: invalid value 'maybe' "
			    "(expected yes or no)");
	expect_format_error("Package: p\nVersion: 1\nPriority: extras\n",
			    &st_unpacked, UNPKG_ERR_FORMAT,
			    "'Priority' field: trailing junk in 'extras'");
	expect_format_error("Package: p\nVersion: 1\nDepends: a [amd64]\n",
			    &st_unpacked, UNPKG_ERR_FORMAT, "Depends");
	expect_format_error("Package: p\nVersion: 1\nX: 1\n", &st_unpacked,
			    UNPKG_ERR_FORMAT,
			    "user-defined field name 'X' too short");
	expect_format_error("Package: p\nVersion: 1\n-X: 1\n", &st_unpacked,
			    UNPKG_ERR_FORMAT,
			    "field name '-X' cannot start with a hyphen");
	expect_format_error("Package: p\nVersion: 1\nRecommends: a\n"
			    "Recommended: b\n", &st_unpacked,
			    UNPKG_ERR_FORMAT,
			    "fields 'Recommends' and 'Recommended' both given "
			    "('Recommended' is the obsolete name of "
			    "'Recommends')");
}
END_TEST

static const char good_control[] = "Package: good\n"
				   "Version: 1:1.0-1\n"
				   "Architecture: amd64\n"
				   "Multi-Arch: same\n"
				   "Essential: yes\n"
				   "Priority: optional\n"
				   "Maintainer: M <m@example.org>\n"
				   "Depends: libc6 (>= 2.34)\n"
				   "Provides: virt (= 1)\n"
				   "Filename: pool/good.deb\n"
				   "Description: good\n";

static void check_ok(const char *control, const char *warning)
{
	struct unpkg_para p;
	struct unpkg_err err;
	const char *w = "not touched";

	parse(control, &p);
	unpkg_err_init(&err);
	if (unpkg_stanza_check_control(&p, &w, &err) < 0)
		ck_abort_msg("check failed: %s", err.msg);
	if (warning == NULL)
		ck_assert_ptr_null(w);
	else
		ck_assert_str_eq(w, warning);
	unpkg_para_destroy(&p);
}

START_TEST(test_check_ok)
{
	check_ok(good_control, NULL);
	/* dpkg only warns about these. */
	check_ok("Package: p\nVersion: 1\nArchitecture: all\n"
		 "Description: d\n", "missing 'Maintainer' field");
	check_ok("Package: p\nVersion: 1\nArchitecture: all\n"
		 "Maintainer: m\nDescription:\n", "missing 'Description' field");
	check_ok("Package: p\nVersion: 1\nArchitecture: all\n",
		 "missing 'Maintainer' and 'Description' fields");
	check_ok("Package: p\nVersion: 1\nArchitecture: all\nMaintainer: m\n"
		 "Description: d\nClass: standard\n",
		 "obsolete 'Class' field used");
	/* Accepted by dpkg, which folds the name to lower case. */
	check_ok("Package: Foo_Bar.2+x-y\nVersion: 1\nArchitecture: all\n"
		 "Maintainer: m\nDescription: d\n", NULL);
	/* Empty known fields are ignored, as dpkg ignores them. */
	check_ok("Package: f\nVersion: 1\nArchitecture: all\nMaintainer: m\n"
		 "Essential:\nMulti-Arch:\nPriority:\nDepends:\nXY:\n"
		 "Description: d\n", NULL);
}
END_TEST

struct check_case {
	const char *extra;	/* added to a good control file */
	const char *replace;	/* or: the whole control file */
	enum unpkg_errcode code;
	const char *msg;	/* exact, or NULL */
	const char *part;	/* or a part of it */
};

#define BASE "Package: p\nVersion: 1.0\nArchitecture: amd64\n"

static const struct check_case check_cases[] = {
	{ "Status: install ok installed\n", NULL, UNPKG_ERR_FORMAT,
	  "'Status' field not allowed in a package's control file (it "
	  "belongs to the database)", NULL },
	{ "config-version: 1.0\n", NULL, UNPKG_ERR_FORMAT,
	  "'config-version' field not allowed in a package's control file "
	  "(it belongs to the database)", NULL },
	{ "Conffiles:\n /etc/x 0123\n", NULL, UNPKG_ERR_FORMAT, NULL,
	  "'Conffiles' field not allowed" },
	{ "Triggers-Pending: x\n", NULL, UNPKG_ERR_FORMAT, NULL,
	  "'Triggers-Pending' field not allowed" },
	{ "Triggers-Awaited: x\n", NULL, UNPKG_ERR_FORMAT, NULL,
	  "'Triggers-Awaited' field not allowed" },
	{ NULL, "Version: 1\nArchitecture: all\n", UNPKG_ERR_FORMAT,
	  "missing 'Package' field", NULL },
	{ NULL, "Package: p\nArchitecture: all\n", UNPKG_ERR_FORMAT,
	  "missing 'Version' field", NULL },
	{ NULL, "Package: p\nVersion: 1\n", UNPKG_ERR_FORMAT,
	  "missing 'Architecture' field", NULL },
	{ NULL, "Package:\nVersion: 1\nArchitecture: all\n",
	  UNPKG_ERR_FORMAT, "empty 'Package' field", NULL },
	{ NULL, "Package: _f\nVersion: 1\nArchitecture: all\n",
	  UNPKG_ERR_FORMAT, "invalid package name '_f' in 'Package' field: "
	  "must start with a letter or digit", NULL },
	{ NULL, "Package: a@b\nVersion: 1\nArchitecture: all\n",
	  UNPKG_ERR_FORMAT, "invalid package name 'a@b' in 'Package' field: "
	  "only letters, digits and '-+._' are allowed", NULL },
	{ NULL, "Package: p\nVersion: a1\nArchitecture: all\n",
	  UNPKG_ERR_FORMAT, NULL, "'Version' field" },
	{ NULL, "Package: p\nVersion: 1.0_1\nArchitecture: all\n",
	  UNPKG_ERR_FORMAT, NULL, "'Version' field" },
	{ NULL, "Package: p\nVersion: 2147483648:1\nArchitecture: all\n",
	  UNPKG_ERR_FORMAT, NULL, "'Version' field" },
	{ NULL, "Package: p\nVersion: 1.0-\nArchitecture: all\n",
	  UNPKG_ERR_FORMAT, NULL, "'Version' field" },
	{ NULL, "Package: p\nVersion:\nArchitecture: all\n",
	  UNPKG_ERR_FORMAT, NULL, "'Version' field" },
	{ NULL, "Package: p\nVersion: 1\nArchitecture:\n", UNPKG_ERR_FORMAT,
	  "empty 'Architecture' field", NULL },
	{ NULL, "Package: p\nVersion: 1\nArchitecture: all amd64\n",
	  UNPKG_ERR_FORMAT, "invalid architecture name 'all amd64' in "
	  "'Architecture' field: only letters, digits and '-' are allowed",
	  NULL },
	{ NULL, "Package: p\nVersion: 1\nArchitecture: -x\n",
	  UNPKG_ERR_FORMAT, NULL, "invalid architecture name '-x'" },
	{ "Multi-Arch: bogus\n", NULL, UNPKG_ERR_FORMAT,
	  "'Multi-Arch' field: invalid value 'bogus' (expected no, same, "
	  "foreign or allowed)", NULL },
	{ "Multi-Arch: foreign x\n", NULL, UNPKG_ERR_FORMAT,
	  "'Multi-Arch' field: trailing junk in 'foreign x' (expected no, "
	  "same, foreign or allowed)", NULL },
	{ NULL, "Package: p\nVersion: 1\nArchitecture: all\n"
	  "Multi-Arch: Same\n", UNPKG_ERR_FORMAT,
	  "package has 'Multi-Arch: same' field but is architecture 'all'",
	  NULL },
	{ "Essential: maybe\n", NULL, UNPKG_ERR_FORMAT,
	  "'Essential' field: invalid value 'maybe' (expected yes or no)",
	  NULL },
	{ "Protected: yesno\n", NULL, UNPKG_ERR_FORMAT,
	  "'Protected' field: trailing junk in 'yesno' (expected yes or no)",
	  NULL },
	{ "Priority: optionalfoo\n", NULL, UNPKG_ERR_FORMAT,
	  "'Priority' field: trailing junk in 'optionalfoo'", NULL },
	{ "Provides: x | y\n", NULL, UNPKG_ERR_FORMAT, NULL, "Provides" },
	{ "Conflicts: x | y\n", NULL, UNPKG_ERR_FORMAT, NULL, "Conflicts" },
	{ "Depends: a [amd64]\n", NULL, UNPKG_ERR_FORMAT, NULL, "Depends" },
	{ "Recommended: a,,b\n", NULL, UNPKG_ERR_FORMAT, NULL, "Recommends" },
	{ "Pre-Depends: a (>= a1)\n", NULL, UNPKG_ERR_FORMAT, NULL,
	  "Pre-Depends" },
	{ "X: 1\n", NULL, UNPKG_ERR_FORMAT,
	  "user-defined field name 'X' too short", NULL },
	{ "-X-Foo: 1\n", NULL, UNPKG_ERR_FORMAT,
	  "field name '-X-Foo' cannot start with a hyphen", NULL },
	{ "Revision: 3\n", NULL, UNPKG_ERR_UNSUPPORTED,
	  "obsolete 'Revision' field not supported (the revision belongs in "
	  "'Version')", NULL },
	{ "Package-Revision: 3\n", NULL, UNPKG_ERR_UNSUPPORTED, NULL,
	  "obsolete 'Package-Revision' field" },
	{ "Class: standard\nPriority: optional\n", NULL, UNPKG_ERR_FORMAT,
	  "fields 'Class' and 'Priority' both given ('Class' is the obsolete "
	  "name of 'Priority')", NULL },
};

START_TEST(test_check_errors)
{
	const struct check_case *c = &check_cases[_i];
	char control[512];
	struct unpkg_para p;
	struct unpkg_err err;
	const char *w = "not touched";

	if (c->replace != NULL)
		snprintf(control, sizeof(control), "%s", c->replace);
	else
		snprintf(control, sizeof(control), "%s%s", BASE, c->extra);
	parse(control, &p);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_stanza_check_control(&p, &w, &err), -1);
	ck_assert_int_eq(err.code, c->code);
	if (c->msg != NULL)
		ck_assert_str_eq(err.msg, c->msg);
	else if (strstr(err.msg, c->part) == NULL)
		ck_abort_msg("error '%s' does not mention '%s'", err.msg,
			     c->part);
	unpkg_para_destroy(&p);
}
END_TEST

/* A stanza's Pre-Depends, then its Depends, as dpkg reads its database
 * (a version only the lax parser takes) or strictly as a package's
 * control; an absent field, or one that does not parse, is empty, the
 * other is still read, and the first error is the one reported. */
START_TEST(test_depends)
{
	static const char stanza[] = "Package: p\nDepends: a | b (>= 1:2), c\n"
				     "Pre-Depends: d (>= a1)\n";
	struct unpkg_para para;
	struct unpkg_relations rels[2];
	struct unpkg_err err;

	unpkg_para_init(&para);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_para_parse(stanza, strlen(stanza), &para, &err),
			 0);
	ck_assert_int_eq(unpkg_para_depends(&para, 0, rels, &err), 0);
	ck_assert_uint_eq(rels[UNPKG_DEPENDS_PRE].count, 1);
	ck_assert_str_eq(rels[UNPKG_DEPENDS_PRE].rels[0].alts[0].name, "d");
	ck_assert_uint_eq(rels[UNPKG_DEPENDS_DEP].count, 2);
	ck_assert_uint_eq(rels[UNPKG_DEPENDS_DEP].rels[0].count, 2);
	ck_assert_str_eq(rels[UNPKG_DEPENDS_DEP].rels[0].alts[1].name, "b");
	ck_assert_str_eq(rels[UNPKG_DEPENDS_DEP].rels[1].alts[0].name, "c");
	unpkg_para_depends_destroy(rels);
	/* strictly, the Pre-Depends do not parse: the Depends still do */
	ck_assert_int_eq(unpkg_para_depends(&para, 1, rels, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "Pre-Depends"));
	ck_assert_uint_eq(rels[UNPKG_DEPENDS_PRE].count, 0);
	ck_assert_uint_eq(rels[UNPKG_DEPENDS_DEP].count, 2);
	unpkg_para_depends_destroy(rels);
	unpkg_para_unset(&para, "Pre-Depends");
	ck_assert_int_eq(unpkg_para_depends(&para, 1, rels, &err), 0);
	ck_assert_uint_eq(rels[UNPKG_DEPENDS_PRE].count, 0);
	ck_assert_uint_eq(rels[UNPKG_DEPENDS_DEP].count, 2);
	unpkg_para_depends_destroy(rels);
	ck_assert_int_eq(unpkg_para_set(&para, "Pre-Depends", "d (>>", &err),
			 0);
	ck_assert_int_eq(unpkg_para_set(&para, "Depends", "a (>>", &err), 0);
	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_para_depends(&para, 0, rels, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "Pre-Depends"));
	ck_assert_uint_eq(rels[UNPKG_DEPENDS_PRE].count, 0);
	ck_assert_uint_eq(rels[UNPKG_DEPENDS_DEP].count, 0);
	unpkg_para_depends_destroy(rels);
	unpkg_para_destroy(&para);
}
END_TEST

static Suite *stanza_suite(void)
{
	Suite *s = suite_create("stanza");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_dpkg_big_unpacked);
	tcase_add_test(tc, test_dpkg_big_installed);
	tcase_add_test(tc, test_dpkg_odd_installed);
	tcase_add_test(tc, test_dpkg_config_version);
	tcase_add_test(tc, test_status_line);
	tcase_add_loop_test(tc, test_normalise, 0,
			    (int)(sizeof(norm_cases) / sizeof(norm_cases[0])));
	tcase_add_test(tc, test_db_fields_from_state);
	tcase_add_test(tc, test_roundtrip_status);
	tcase_add_test(tc, test_format_errors);
	tcase_add_test(tc, test_format_triggers);
	tcase_add_test(tc, test_restate);
	tcase_add_loop_test(tc, test_conffile_split, 0,
			    (int)(sizeof(split_cases) /
				  sizeof(split_cases[0])));
	tcase_add_test(tc, test_check_ok);
	tcase_add_loop_test(tc, test_check_errors, 0,
			    (int)(sizeof(check_cases) /
				  sizeof(check_cases[0])));
	tcase_add_test(tc, test_depends);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(stanza_suite());
}
