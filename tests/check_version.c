/* check_version.c - unit tests of Debian version parsing and ordering. */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "version.h"

#define DPKG "/usr/bin/dpkg"
#define DPKG_DEB "/usr/bin/dpkg-deb"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

struct pair {
	const char *a;
	const char *b;
	int want;		/* sign of compare(a, b) */
};

/* Every expected result here was taken from dpkg --compare-versions. */
static const struct pair pairs[] = {
	{ "1.0", "1.0", 0 },
	{ "1.0", "1.1", -1 },
	{ "1.1", "1.0", 1 },
	{ "1.0", "1.0.0", -1 },
	{ "1.0", "1.0-0", 0 },
	{ "1.0-0", "1.0", 0 },
	{ "1.0-1", "1.0", 1 },
	{ "1.0", "1.0-1", -1 },
	{ "1.0-1", "1.0-2", -1 },
	{ "1.0-10", "1.0-9", 1 },
	{ "1.0-1.1", "1.0-1", 1 },
	{ "1.0-1", "1.0-1.0", -1 },
	{ "1.0-a", "1.0-b", -1 },
	{ "1.0-1a", "1.0-1", 1 },
	{ "1.0~rc1", "1.0", -1 },
	{ "1.0~rc1", "1.0~rc2", -1 },
	{ "1.0~rc1", "1.0~", 1 },
	{ "1.0~", "1.0", -1 },
	{ "1.0~~", "1.0~", -1 },
	{ "1.0~~a", "1.0~~", 1 },
	{ "1.0~beta1~svn1245", "1.0~beta1", -1 },
	{ "1.0~beta1", "1.0", -1 },
	{ "1.0+b1", "1.0", 1 },
	{ "1.0+b1", "1.0+b2", -1 },
	{ "1.0+b10", "1.0+b9", 1 },
	{ "1.0a", "1.0", 1 },
	{ "1.0a", "1.0+", -1 },
	{ "1.0a", "1.0.", -1 },
	{ "1.0a", "1.0~", 1 },
	{ "1.0.", "1.0+", 1 },
	{ "1.0+", "1.0.", -1 },
	{ "1.0Z", "1.0a", -1 },
	{ "1.0z", "1.0A", 1 },
	{ "1.0a1", "1.0a", 1 },
	{ "1.0-1ubuntu1", "1.0-1", 1 },
	{ "1.0-1ubuntu1", "1.0-2", -1 },
	{ "1.0-1+deb12u1", "1.0-1", 1 },
	{ "1.0-1+deb12u1", "1.0-1+deb12u2", -1 },
	{ "1.0-1~bpo12+1", "1.0-1", -1 },
	{ "2.30-1", "2.4-1", 1 },
	{ "2.4", "2.30", -1 },
	{ "0.9", "1.0", -1 },
	{ "1:0.1", "2.0", 1 },
	{ "1:0.1", "1:0.1", 0 },
	{ "2:0.1", "1:9.9", 1 },
	{ "0:1.0", "1.0", 0 },
	{ "00:1.0", "0:1.0", 0 },
	{ "1:1.0", "01:1.0", 0 },
	{ "10:1", "9:1", 1 },
	{ "2147483647:1", "2147483646:9", 1 },
	{ "1.0", "1:1.0", -1 },
	{ "001", "1", 0 },
	{ "1.001", "1.1", 0 },
	{ "1.010", "1.1", 1 },
	{ "1.0001", "1.1", 0 },
	{ "1.00", "1.0", 0 },
	{ "000", "0", 0 },
	{ "0", "1", -1 },
	{ "0.0", "0", 1 },
	{ "1.0.0", "1.0", 1 },
	{ "1..0", "1.0", 1 },
	{ "1.0-0.0", "1.0-0", 1 },
	{ "99999999999999999999999999999999",
	  "99999999999999999999999999999998", 1 },
	{ "99999999999999999999999999999999",
	  "100000000000000000000000000000000", -1 },
	{ "1.18446744073709551616", "1.18446744073709551615", 1 },
	{ "1.000000000000000000000000000001", "1.1", 0 },
	{ "1.18446744073709551616a", "1.18446744073709551616", 1 },
	{ "1:2:3", "1:2:4", -1 },
	{ "1:2:3", "1:2-3", 1 },
	{ "1:1.0:1", "1:1.0", 1 },
	{ "1-2-3", "1-2-4", -1 },
	{ "1-2-3", "1-2.3", 1 },
	{ "1-2-3", "1.2-3", -1 },
	{ "1.2-3-4", "1.2-3.4", 1 },
	{ "1:1-2", "1:1.2", -1 },
	{ "7.6p2-4", "7.6-0", 1 },
	{ "1.0.3-3", "1.0-1", 1 },
	{ "1.3", "1.2.2-2", 1 },
	{ "1.3", "1.2.2", 1 },
	{ "0.9.8-1", "0.9.8+ds-1", -1 },
	{ "0.9.8+ds-1", "0.9.8.1-1", -1 },
	{ "1.0-1", "1.0-1~", 1 },
	{ "1.0-1~", "1.0-1~~", 1 },
	{ "a", "b", -1 },
	{ "a", "1", 1 },
	{ "a", "A", 1 },
	{ "~", "0", -1 },
	{ "~", "~~", 1 },
	{ "~~", "~~a", -1 },
	{ "1", "1~", 1 },
	{ "1~", "1~a", -1 },
	{ "1a", "1b", -1 },
	{ "1a", "1aa", -1 },
	{ "1aa", "1ab", -1 },
	{ "1.a", "1.b", -1 },
	{ "1+a", "1+b", -1 },
	{ "1.a", "1+a", 1 },
	{ "1.a", "1~a", 1 },
	{ "1~a", "1", -1 },
	{ "9", "10", -1 },
	{ "09", "10", -1 },
	{ "009", "10", -1 },
	{ "2.6.32", "2.6.4", 1 },
	{ "2.6.32-5-amd64", "2.6.32-5", 1 },
	{ "3.2.0-4-686-pae", "3.2.0-4", 1 },
	{ "5.10.0-23", "5.10.0-22", 1 },
	{ "2.7.18", "2.7.18-1", -1 },
	{ "2.7.18-1", "2.7.18+1", -1 },
	{ "1.2.3", "1.2.3+really1.2.2", -1 },
	{ "1.2.3+really1.2.2", "1.2.4", -1 },
	{ "1:1.2.3", "1.2.4", 1 },
	{ "20230101", "20221231", 1 },
	{ "20230101", "1:0", -1 },
	{ "1.0-0ubuntu1", "1.0-1", -1 },
	{ "1.0-1build1", "1.0-1", 1 },
	{ "1.0-1.1", "1.0-1build1", 1 },
	{ "4.4.0~rc1", "4.4.0~beta2", 1 },
	{ "4.4.0~rc1", "4.4.0~RC1", 1 },
	{ "1.0-1~exp1", "1.0-1", -1 },
	{ "1.0-1~exp1", "1.0-0", 1 },
	{ "1.0+dfsg-1", "1.0-1", 1 },
	{ "1.0+dfsg-1", "1.0.1-1", -1 },
	{ "1.0.0~git20200101", "1.0.0", -1 },
	{ "1.0.0+git20200101", "1.0.0", 1 },
	{ "1.0.0+git20200101", "1.0.1~", -1 },
	{ "3.14159", "3.1416", 1 },
	{ "1.2.3.4.5.6.7.8", "1.2.3.4.5.6.7.9", -1 },
	{ "1-1", "1-01", 0 },
	{ "1-a1", "1-a01", 0 },
	{ "1-a1b", "1-a01c", -1 },
	{ "1.2a3", "1.2a03", 0 },
	{ "1.2a3", "1.2a3.0", -1 },
	{ "1.2a3", "1.2a3a", -1 },
	{ "1.2a3", "1.2a3~", 1 },
	{ "1.2a3", "1.2a3+", -1 },
	{ "1.1a", "1.1A", 1 },
	{ "1.1Z", "1.1z", -1 },
	{ "1.2~a", "1.2~A", 1 },
	{ "1.2~+", "1.2~.", -1 },
	{ "0+", "0.", -1 },
	{ "0.", "0~", 1 },
	{ "0z", "0+", -1 },
	{ "0z", "0.", -1 },
};

/* Versions dpkg accepts only with a warning: bytes outside ASCII (dpkg
 * weighs them by their value as signed char), '_' and '%', letters
 * first.  Also taken from dpkg --compare-versions. */
static const struct pair lax_pairs[] = {
	{ "1\xc3\xa9", "1z", 1 },
	{ "1\xc3\xa9", "1+", -1 },
	{ "1\xc3\xa9", "1~", 1 },
	{ "1_0", "1.0", 1 },
	{ "1_0", "1+0", 1 },
	{ "1%0", "1_0", -1 },
	{ "abc", "1", 1 },
	{ "a1", "b1", -1 },
	{ "1.0-a_b", "1.0-a.b", 1 },
	{ "1:a", "1:b", -1 },
	{ "1\xc3\xbc", "1\xc3\xa9", 1 },
};

static int sign(int x)
{
	return (x > 0) - (x < 0);
}

START_TEST(test_compare_table)
{
	size_t i;

	for (i = 0; i < N_ELEMS(pairs); i++) {
		const struct pair *p = &pairs[i];
		struct unpkg_version a, b;
		struct unpkg_err err;

		unpkg_err_init(&err);
		ck_assert_msg(unpkg_version_parse_lax(&a, p->a, &err) == 0,
			      "%s: %s", p->a, err.msg);
		ck_assert_msg(unpkg_version_parse_lax(&b, p->b, &err) == 0,
			      "%s: %s", p->b, err.msg);
		ck_assert_msg(sign(unpkg_version_compare(&a, &b)) == p->want,
			      "compare(%s, %s) should be %d", p->a, p->b,
			      p->want);
		ck_assert_msg(sign(unpkg_version_compare(&b, &a)) == -p->want,
			      "compare(%s, %s) should be %d", p->b, p->a,
			      -p->want);
		ck_assert_int_eq(unpkg_version_compare(&a, &a), 0);
		ck_assert_msg(sign(unpkg_version_compare_str(p->a, p->b)) ==
			      p->want, "compare_str(%s, %s) should be %d",
			      p->a, p->b, p->want);
		unpkg_version_destroy(&a);
		unpkg_version_destroy(&b);
	}
}
END_TEST

START_TEST(test_compare_lax)
{
	size_t i;

	for (i = 0; i < N_ELEMS(lax_pairs); i++) {
		const struct pair *p = &lax_pairs[i];
		struct unpkg_version a, b;
		struct unpkg_err err;

		unpkg_err_init(&err);
		ck_assert_msg(unpkg_version_parse(&a, p->a, &err) == -1 ||
			      unpkg_version_parse(&b, p->b, &err) == -1,
			      "%s / %s should not both parse strictly",
			      p->a, p->b);
		unpkg_version_destroy(&a);
		ck_assert_msg(sign(unpkg_version_compare_str(p->a, p->b)) ==
			      p->want, "compare_str(%s, %s) should be %d",
			      p->a, p->b, p->want);
		ck_assert_msg(sign(unpkg_version_compare_str(p->b, p->a)) ==
			      -p->want, "compare_str(%s, %s) should be %d",
			      p->b, p->a, -p->want);
	}
}
END_TEST

/* Transitivity over the whole table: sorting all of its versions must
 * give an order every pairwise comparison agrees with. */
START_TEST(test_total_order)
{
	const char *v[2 * N_ELEMS(pairs)];
	size_t n = 0, i, j;

	for (i = 0; i < N_ELEMS(pairs); i++) {
		v[n++] = pairs[i].a;
		v[n++] = pairs[i].b;
	}
	for (i = 1; i < n; i++) {
		const char *x = v[i];

		for (j = i; j > 0 && unpkg_version_compare_str(v[j - 1], x) > 0;
		     j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			ck_assert_msg(unpkg_version_compare_str(v[i],
								v[j]) <= 0,
				      "%s sorted before %s", v[i], v[j]);
}
END_TEST

struct parsed {
	const char *in;
	unsigned int epoch;
	const char *upstream;
	const char *revision;
	const char *canonical;
};

static const struct parsed good[] = {
	{ "1.0", 0, "1.0", "", "1.0" },
	{ "1.0-1", 0, "1.0", "1", "1.0-1" },
	{ "1:1.0-1", 1, "1.0", "1", "1:1.0-1" },
	{ "0:1.0", 0, "1.0", "", "1.0" },
	{ "00:1.0", 0, "1.0", "", "1.0" },
	{ "001:1.0-01", 1, "1.0", "01", "1:1.0-01" },
	{ "+1:1.0", 1, "1.0", "", "1:1.0" },	/* dpkg: strtol() */
	{ "-0:1.0", 0, "1.0", "", "1.0" },
	{ "2147483647:1", 2147483647u, "1", "", "2147483647:1" },
	{ "1:2:3", 1, "2:3", "", "1:2:3" },
	{ "1:2:3-4", 1, "2:3", "4", "1:2:3-4" },
	{ "1-2-3", 0, "1-2", "3", "1-2-3" },
	{ "1.0-0", 0, "1.0", "0", "1.0-0" },
	{ "1.0-1~bpo12+1", 0, "1.0", "1~bpo12+1", "1.0-1~bpo12+1" },
	{ "2.0~rc1+dfsg.1", 0, "2.0~rc1+dfsg.1", "", "2.0~rc1+dfsg.1" },
	{ "0", 0, "0", "", "0" },
	{ "  1.0-1 ", 0, "1.0", "1", "1.0-1" },
	{ "\t1.0\n", 0, "1.0", "", "1.0" },
	{ "1.0-a", 0, "1.0", "a", "1.0-a" },
	{ "1ABC.z", 0, "1ABC.z", "", "1ABC.z" },
	/* an explicit 0: must stay when upstream has a colon, else the
	 * text would read back with epoch 1 */
	{ "0:1:2", 0, "1:2", "", "0:1:2" },
	{ "0:1:2-3", 0, "1:2", "3", "0:1:2-3" },
	{ "0:1.0", 0, "1.0", "", "1.0" },
};

START_TEST(test_parse_good)
{
	size_t i;

	for (i = 0; i < N_ELEMS(good); i++) {
		const struct parsed *g = &good[i];
		struct unpkg_version v;
		struct unpkg_err err;
		char *s;

		unpkg_err_init(&err);
		ck_assert_msg(unpkg_version_parse(&v, g->in, &err) == 0,
			      "'%s': %s", g->in, err.msg);
		ck_assert_int_eq(err.code, UNPKG_ERR_NONE);
		ck_assert_uint_eq(v.epoch, g->epoch);
		ck_assert_str_eq(v.upstream, g->upstream);
		ck_assert_str_eq(v.revision, g->revision);
		s = unpkg_version_format(&v);
		ck_assert_ptr_nonnull(s);
		ck_assert_str_eq(s, g->canonical);
		free(s);
		unpkg_version_destroy(&v);
		ck_assert_ptr_null(v.buf_);

		/* Lax parsing agrees on everything valid. */
		ck_assert_int_eq(unpkg_version_parse_lax(&v, g->in, &err), 0);
		ck_assert_uint_eq(v.epoch, g->epoch);
		ck_assert_str_eq(v.upstream, g->upstream);
		ck_assert_str_eq(v.revision, g->revision);
		unpkg_version_destroy(&v);
	}
}
END_TEST

struct bad {
	const char *in;
	int lax_ok;		/* dpkg accepts it in its database */
	const char *why;	/* part of the message */
};

/* The reasons are dpkg's (checked with dpkg-deb --build and
 * dpkg --compare-versions). */
static const struct bad bad[] = {
	{ "", 0, "empty" },
	{ "   ", 0, "empty" },
	{ "1 0", 0, "embedded spaces" },
	{ "1.0-a b", 0, "embedded spaces" },
	{ "1\t0", 0, "embedded spaces" },
	{ ":1", 0, "epoch in version is empty" },
	{ "a:1", 0, "epoch in version is empty" },
	{ "+:1", 0, "epoch in version is empty" },
	{ "1a:1", 0, "not number" },
	{ "0x1:1", 0, "not number" },
	{ "1-a:b", 0, "not number" },
	{ "1.0-1:2", 0, "not number" },
	{ "-1:1.0", 0, "negative" },
	{ "2147483648:1", 0, "too big" },
	{ "4294967296:1", 0, "too big" },
	{ "99999999999999999999999:1", 0, "too big" },
	{ "1:", 0, "nothing after colon" },
	{ "1:-1", 0, "version number is empty" },
	{ "-1", 0, "version number is empty" },
	{ "1.0-", 0, "revision number is empty" },
	{ "1:1-", 0, "revision number is empty" },
	{ "1.0-1-", 0, "revision number is empty" },
	{ "a1", 1, "does not start with digit" },
	{ "1:a1", 1, "does not start with digit" },
	{ "~1", 1, "does not start with digit" },
	{ "+1", 1, "does not start with digit" },
	{ "1_0", 1, "invalid character in version" },
	{ "1,0", 1, "invalid character in version" },
	{ "1.0\xc3\xa9", 1, "invalid character in version" },
	{ "1.0-a_b", 1, "invalid character in revision" },
	{ "1.0-1%", 1, "invalid character in revision" },
	{ "1:1.0-1:2", 1, "invalid character in revision" },
	{ "1.0-1-2:", 0, "not number" },
};

START_TEST(test_parse_bad)
{
	size_t i;

	for (i = 0; i < N_ELEMS(bad); i++) {
		const struct bad *b = &bad[i];
		struct unpkg_version v;
		struct unpkg_err err;

		memset(&v, 0x5a, sizeof(v));
		unpkg_err_init(&err);
		ck_assert_msg(unpkg_version_parse(&v, b->in, &err) == -1,
			      "'%s' should be rejected", b->in);
		ck_assert_int_eq(err.code, UNPKG_ERR_FORMAT);
		ck_assert_msg(strstr(err.msg, b->why) != NULL,
			      "'%s': message '%s' lacks '%s'", b->in, err.msg,
			      b->why);
		ck_assert_msg(strstr(err.msg, b->in) != NULL,
			      "'%s': message '%s' does not quote it", b->in,
			      err.msg);
		/* A failed parse leaves an empty, destroyable object. */
		ck_assert_ptr_null(v.buf_);
		ck_assert_ptr_null(v.upstream);
		unpkg_version_destroy(&v);

		unpkg_err_init(&err);
		ck_assert_msg(unpkg_version_parse_lax(&v, b->in, &err) ==
			      (b->lax_ok ? 0 : -1), "lax '%s': %s", b->in,
			      err.msg);
		unpkg_version_destroy(&v);
	}
}
END_TEST

START_TEST(test_destroy_twice)
{
	struct unpkg_version v;
	struct unpkg_err err;

	unpkg_err_init(&err);
	ck_assert_int_eq(unpkg_version_parse(&v, "1:2.3-4", &err), 0);
	unpkg_version_destroy(&v);
	unpkg_version_destroy(&v);
	unpkg_version_destroy(NULL);
	ck_assert_ptr_null(v.upstream);
}
END_TEST

/* compare_str never fails: text that is no version at all still gets a
 * stable place, the one its raw split would give. */
START_TEST(test_compare_str_unparsable)
{
	/* dpkg --compare-versions: empty means "no version", the lowest. */
	ck_assert_int_lt(unpkg_version_compare_str("", "0"), 0);
	ck_assert_int_lt(unpkg_version_compare_str("", "~"), 0);
	ck_assert_int_gt(unpkg_version_compare_str("~~", " "), 0);
	ck_assert_int_eq(unpkg_version_compare_str("", " "), 0);
	ck_assert_int_eq(unpkg_version_compare_str("1.0-", "1.0"), 0);
	ck_assert_int_eq(unpkg_version_compare_str("1 0", "1 0"), 0);
	ck_assert_int_gt(unpkg_version_compare_str("a:1", "1"), 0);
	ck_assert_int_lt(unpkg_version_compare_str("a:1", "b:1"), 0);
	ck_assert_int_gt(unpkg_version_compare_str("2:1-", "1:9"), 0);
	ck_assert_int_eq(unpkg_version_compare_str("99999999999:1",
						   "99999999999:1"), 0);
	/* Surrounding blanks do not count, as in dpkg. */
	ck_assert_int_eq(unpkg_version_compare_str(" 1.0 ", "1.0"), 0);
}
END_TEST

/* A long digit run must compare as a number, without overflowing. */
START_TEST(test_long_digit_runs)
{
	char a[600], b[600];

	memset(a, '9', sizeof(a) - 1);
	a[sizeof(a) - 1] = '\0';
	memcpy(b, a, sizeof(b));
	b[sizeof(b) - 2] = '8';
	ck_assert_int_gt(unpkg_version_compare_str(a, b), 0);
	b[0] = '0';
	b[sizeof(b) - 2] = '9';
	ck_assert_int_gt(unpkg_version_compare_str(a, b), 0);
	memset(b, '0', 300);
	ck_assert_int_gt(unpkg_version_compare_str(a, b), 0);
	a[0] = '0';
	memcpy(b, a, sizeof(b));
	b[0] = '1';
	ck_assert_int_lt(unpkg_version_compare_str(a, b), 0);
}
END_TEST

/* --- cross-check against dpkg -------------------------------------------- */

static int dpkg_compare(const char *a, const char *op, const char *b)
{
	const char *argv[] = { DPKG, "--compare-versions", a, op, b, NULL };

	return tu_run_quiet(argv);
}

/* dpkg's verdict: -1, 0, 1, or 2 when it rejects one of them. */
static int dpkg_order(const char *a, const char *b)
{
	int rc = dpkg_compare(a, "lt", b);

	if (rc == 0)
		return -1;
	if (rc != 1)
		return 2;
	rc = dpkg_compare(a, "gt", b);
	if (rc == 0)
		return 1;
	return rc == 1 ? 0 : 2;
}

/* A small deterministic generator, so that a failure can be replayed. */
static uint64_t next_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

static size_t pick(uint64_t *rng, size_t n)
{
	return (size_t)(next_rand(rng) % n);
}

static void put(char *buf, size_t *len, size_t max, char c)
{
	if (*len + 1 < max)
		buf[(*len)++] = c;
	buf[*len] = '\0';
}

static void put_token(uint64_t *rng, char *buf, size_t *len, size_t max,
		      const char *seps)
{
	static const char letters[] = "abyzAZ";
	size_t k, n;

	switch (pick(rng, 4)) {
	case 0:
	case 1:
		/* Mostly short runs; some long ones, some with zeros. */
		n = pick(rng, 10) == 0 ? 15 + pick(rng, 20) : 1 + pick(rng, 3);
		for (k = 0; k < n; k++)
			put(buf, len, max, (char)(pick(rng, 5) == 0 ?
						  '0' : '0' + pick(rng, 10)));
		break;
	case 2:
		n = 1 + pick(rng, 2);
		for (k = 0; k < n; k++)
			put(buf, len, max,
			    letters[pick(rng, sizeof(letters) - 1)]);
		break;
	default:
		put(buf, len, max, seps[pick(rng, strlen(seps))]);
		break;
	}
}

static void gen_version(uint64_t *rng, char *buf, size_t max)
{
	size_t len = 0, k, n;
	int epoch = pick(rng, 4) == 0;
	int revision = pick(rng, 2) == 0;
	char useps[8] = ".+~";

	buf[0] = '\0';
	if (epoch) {
		if (pick(rng, 4) == 0)
			put(buf, &len, max, '0');
		put(buf, &len, max, (char)('0' + pick(rng, 4)));
		put(buf, &len, max, ':');
		strcat(useps, ":");
	}
	if (revision)
		strcat(useps, "-");
	put(buf, &len, max, (char)('0' + pick(rng, 10)));
	n = pick(rng, 8);
	for (k = 0; k < n; k++)
		put_token(rng, buf, &len, max, useps);
	if (revision) {
		put(buf, &len, max, '-');
		n = 1 + pick(rng, 4);
		put_token(rng, buf, &len, max, ".+~");
		for (k = 1; k < n; k++)
			put_token(rng, buf, &len, max, ".+~");
	}
}

/* Small edits make pairs that share a prefix, where the order rules are
 * actually exercised; they may also make invalid versions. */
static void mutate(uint64_t *rng, const char *src, char *buf, size_t max)
{
	static const char alpha[] = "0123456789aAzZ.+~-:";
	static const char *const suffixes[] = { "~", "~~", "+1", ".0", "0",
						"a", "-1", "~rc1", "+b1" };
	size_t len, pos, edits = 1 + pick(rng, 2);

	snprintf(buf, max, "%s", src);
	while (edits-- > 0) {
		len = strlen(buf);
		pos = len > 0 ? pick(rng, len) : 0;
		switch (pick(rng, 5)) {
		case 0:
			if (len > 0)
				buf[pos] = alpha[pick(rng, sizeof(alpha) - 1)];
			break;
		case 1:
			if (len + 1 < max) {
				memmove(buf + pos + 1, buf + pos,
					len - pos + 1);
				buf[pos] = alpha[pick(rng, sizeof(alpha) - 1)];
			}
			break;
		case 2:
			if (len > 1)
				memmove(buf + pos, buf + pos + 1, len - pos);
			break;
		case 3:
			if (len + 8 < max)
				strcat(buf,
				       suffixes[pick(rng, N_ELEMS(suffixes))]);
			break;
		default:
			/* A leading zero in front of some digit. */
			if (len + 1 < max && buf[pos] >= '0' &&
			    buf[pos] <= '9') {
				memmove(buf + pos + 1, buf + pos,
					len - pos + 1);
				buf[pos] = '0';
			}
			break;
		}
	}
}

START_TEST(test_against_dpkg)
{
	uint64_t rng = 0x9e3779b97f4a7c15u;
	int compared = 0, rejected = 0;
	char a[128], b[128];
	int i;

	if (access(DPKG, X_OK) != 0) {
		tu_skip_part("versions compared as dpkg compares them",
			     DPKG " not found");
		return;
	}
	for (i = 0; compared < 400 && i < 2000; i++) {
		struct unpkg_version va, vb;
		struct unpkg_err err;
		int mine, theirs, ok_a, ok_b;

		gen_version(&rng, a, sizeof(a));
		if (pick(&rng, 4) == 0)
			gen_version(&rng, b, sizeof(b));
		else
			mutate(&rng, a, b, sizeof(b));
		/* dpkg would read a leading '-' as an option. */
		if (a[0] == '-' || b[0] == '-' || b[0] == '\0')
			continue;

		unpkg_err_init(&err);
		ok_a = unpkg_version_parse_lax(&va, a, &err) == 0;
		ok_b = unpkg_version_parse_lax(&vb, b, &err) == 0;
		theirs = dpkg_order(a, b);
		if (!ok_a || !ok_b) {
			/* What we refuse even leniently, dpkg refuses. */
			ck_assert_msg(theirs == 2, "dpkg accepts '%s' / '%s'",
				      a, b);
			rejected++;
		} else {
			ck_assert_msg(theirs != 2, "dpkg rejects '%s' / '%s'",
				      a, b);
			mine = sign(unpkg_version_compare(&va, &vb));
			ck_assert_msg(mine == theirs,
				      "'%s' vs '%s': unpkg says %d, dpkg %d",
				      a, b, mine, theirs);
			ck_assert_int_eq(sign(unpkg_version_compare_str(a, b)),
					 theirs);
			compared++;
		}
		unpkg_version_destroy(&va);
		unpkg_version_destroy(&vb);
	}
	ck_assert_int_ge(compared, 400);
	ck_assert_int_gt(rejected, 0);
}
END_TEST

/* Strict acceptance is what dpkg-deb --build enforces on a control file. */
static int dpkg_deb_accepts(const char *version)
{
	char *dir = tu_mkdtemp();
	char path[4096], deb[4096], control[512];
	const char *argv[] = { DPKG_DEB, "--build", path, deb, NULL };
	int rc;

	snprintf(path, sizeof(path), "%s/pkg/DEBIAN", dir);
	snprintf(control, sizeof(control),
		 "Package: vtest\nVersion: %s\nArchitecture: all\n"
		 "Maintainer: t <t@example.invalid>\nDescription: t\n",
		 version);
	snprintf(deb, sizeof(deb), "%s/pkg", dir);
	ck_assert_int_eq(mkdir(deb, 0755), 0);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	ck_assert_int_eq(chmod(deb, 0755), 0);
	ck_assert_int_eq(chmod(path, 0755), 0);
	strcat(path, "/control");
	tu_write_file(path, control, 0644);
	snprintf(path, sizeof(path), "%s/pkg", dir);
	snprintf(deb, sizeof(deb), "%s/out.deb", dir);
	rc = tu_run_quiet(argv);
	tu_rm_rf(dir);
	free(dir);
	ck_assert_int_ge(rc, 0);
	return rc == 0;
}

START_TEST(test_strict_against_dpkg_deb)
{
	static const char *const versions[] = {
		"1.0", "1:1.0-1", "+1:1.0", "1:2:3", "1-2-3", "0:1.0",
		"a1", "1:a1", "~1", "1_0", "1.0-a_b", "1.0-1:2", "1:1.0-1%",
		"-1:1.0", "2147483648:1", "1.0-", "1:", "1a:1",
	};
	size_t i;

	if (access(DPKG_DEB, X_OK) != 0) {
		tu_skip_part("versions dpkg-deb accepts",
			     DPKG_DEB " not found");
		return;
	}
	for (i = 0; i < N_ELEMS(versions); i++) {
		struct unpkg_version v;
		struct unpkg_err err;
		int mine;

		unpkg_err_init(&err);
		mine = unpkg_version_parse(&v, versions[i], &err) == 0;
		unpkg_version_destroy(&v);
		ck_assert_msg(mine == dpkg_deb_accepts(versions[i]),
			      "'%s': unpkg %s it, dpkg-deb does not",
			      versions[i], mine ? "accepts" : "rejects");
	}
}
END_TEST

static Suite *version_suite(void)
{
	Suite *s = suite_create("version");
	TCase *tc = tcase_create("core");
	TCase *oracle = tcase_create("dpkg");

	tcase_add_test(tc, test_compare_table);
	tcase_add_test(tc, test_compare_lax);
	tcase_add_test(tc, test_total_order);
	tcase_add_test(tc, test_parse_good);
	tcase_add_test(tc, test_parse_bad);
	tcase_add_test(tc, test_destroy_twice);
	tcase_add_test(tc, test_compare_str_unparsable);
	tcase_add_test(tc, test_long_digit_runs);
	suite_add_tcase(s, tc);

	tcase_set_timeout(oracle, 120);
	tcase_add_test(oracle, test_against_dpkg);
	tcase_add_test(oracle, test_strict_against_dpkg_deb);
	suite_add_tcase(s, oracle);
	return s;
}

int main(void)
{
	return tu_run_suite(version_suite());
}
