/* version.c - parse and order Debian version numbers the way dpkg does. */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "version.h"

/* A version split into its parts, pointing into the caller's string. */
struct split {
	unsigned int epoch;
	const char *up;
	size_t uplen;
	const char *rev;
	size_t revlen;
};

/* The character classes are ASCII-only on purpose: dpkg's are, and the
 * locale must not change the order of versions. */
static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' ||
	       c == '\r';
}

static int is_upstream_char(int c)
{
	return is_digit(c) || is_alpha(c) || c == '.' || c == '+' ||
	       c == '~' || c == ':' || c == '-';
}

static int is_revision_char(int c)
{
	return is_digit(c) || is_alpha(c) || c == '.' || c == '+' || c == '~';
}

/* Returns NULL, or why [start, colon) is not an epoch.  The rules are
 * those of strtol() as dpkg uses it: an optional sign, at least one digit,
 * nothing else; "-0" is a valid (zero) epoch. */
static const char *parse_epoch(const char *start, const char *colon,
			       unsigned int *epoch)
{
	const char *p = start;
	unsigned long val = 0;
	int negative = 0;
	int too_big = 0;

	if (p < colon && (*p == '+' || *p == '-')) {
		negative = *p == '-';
		p++;
	}
	if (p == colon || !is_digit((unsigned char)*p))
		return "epoch in version is empty";
	for (; p < colon && is_digit((unsigned char)*p); p++) {
		val = val * 10 + (unsigned long)(*p - '0');
		if (val > INT_MAX) {
			/* Keep scanning for the syntax check, without
			 * letting the value wrap. */
			too_big = 1;
			val = INT_MAX;
		}
	}
	if (p != colon)
		return "epoch in version is not number";
	if (negative && (val != 0 || too_big))
		return "epoch in version is negative";
	if (too_big)
		return "epoch in version is too big";
	*epoch = (unsigned int)val;
	return NULL;
}

/* Find the text of `str` without surrounding blanks: its start and
 * length. */
static const char *trim(const char *str, size_t *len)
{
	size_t n;

	while (is_space((unsigned char)*str))
		str++;
	n = strlen(str);
	while (n > 0 && is_space((unsigned char)str[n - 1]))
		n--;
	*len = n;
	return str;
}

static const char *last_hyphen(const char *start, const char *end)
{
	const char *p;

	for (p = end; p > start; p--)
		if (p[-1] == '-')
			return p - 1;
	return NULL;
}

/* Returns NULL with `s` filled in, or the reason `str` is not a version. */
static const char *split_version(const char *str, int lax, struct split *s)
{
	const char *start, *end, *colon, *hyphen, *p;
	size_t len;

	start = trim(str, &len);
	end = start + len;
	if (len == 0)
		return "version string is empty";
	for (p = start; p < end; p++)
		if (is_space((unsigned char)*p))
			return "version string has embedded spaces";

	s->epoch = 0;
	s->up = start;
	colon = memchr(start, ':', len);
	if (colon != NULL) {
		const char *why = parse_epoch(start, colon, &s->epoch);

		if (why != NULL)
			return why;
		s->up = colon + 1;
		if (s->up == end)
			return "nothing after colon in version number";
	}

	hyphen = last_hyphen(s->up, end);
	if (hyphen != NULL) {
		s->rev = hyphen + 1;
		s->revlen = (size_t)(end - s->rev);
		s->uplen = (size_t)(hyphen - s->up);
		if (s->revlen == 0)
			return "revision number is empty";
	} else {
		s->rev = end;
		s->revlen = 0;
		s->uplen = (size_t)(end - s->up);
	}
	if (s->uplen == 0)
		return "version number is empty";

	if (lax)
		return NULL;
	if (!is_digit((unsigned char)s->up[0]))
		return "version number does not start with digit";
	for (p = s->up; p < s->up + s->uplen; p++)
		if (!is_upstream_char((unsigned char)*p))
			return "invalid character in version number";
	for (p = s->rev; p < s->rev + s->revlen; p++)
		if (!is_revision_char((unsigned char)*p))
			return "invalid character in revision number";
	return NULL;
}

/* The best split of text that is not a version at all, so that comparing
 * it still gives a stable, sensible order. */
static void split_loose(const char *str, struct split *s)
{
	const char *start, *end, *colon, *hyphen;
	size_t len;

	start = trim(str, &len);
	end = start + len;
	s->epoch = 0;
	s->up = start;
	colon = memchr(start, ':', len);
	if (colon != NULL && parse_epoch(start, colon, &s->epoch) == NULL)
		s->up = colon + 1;
	hyphen = last_hyphen(s->up, end);
	if (hyphen != NULL) {
		s->uplen = (size_t)(hyphen - s->up);
		s->rev = hyphen + 1;
		s->revlen = (size_t)(end - s->rev);
	} else {
		s->uplen = (size_t)(end - s->up);
		s->rev = end;
		s->revlen = 0;
	}
}

static int parse(struct unpkg_version *v, const char *str, int lax,
		 struct unpkg_err *err)
{
	struct split s;
	const char *why;
	char *buf = NULL;
	int ret = -1;

	v->epoch = 0;
	v->upstream = NULL;
	v->revision = NULL;
	v->buf_ = NULL;

	why = split_version(str, lax, &s);
	if (why != NULL) {
		unpkg_err_set(err, UNPKG_ERR_FORMAT, "invalid version '%s': %s",
			      str, why);
		goto out;
	}
	buf = malloc(s.uplen + s.revlen + 2);
	if (buf == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	memcpy(buf, s.up, s.uplen);
	buf[s.uplen] = '\0';
	memcpy(buf + s.uplen + 1, s.rev, s.revlen);
	buf[s.uplen + 1 + s.revlen] = '\0';

	v->epoch = s.epoch;
	v->upstream = buf;
	v->revision = buf + s.uplen + 1;
	v->buf_ = buf;
	ret = 0;
out:
	return ret;
}

int unpkg_version_parse(struct unpkg_version *v, const char *str,
			struct unpkg_err *err)
{
	return parse(v, str, 0, err);
}

int unpkg_version_parse_lax(struct unpkg_version *v, const char *str,
			    struct unpkg_err *err)
{
	return parse(v, str, 1, err);
}

void unpkg_version_destroy(struct unpkg_version *v)
{
	if (v == NULL)
		return;
	free(v->buf_);
	v->epoch = 0;
	v->upstream = NULL;
	v->revision = NULL;
	v->buf_ = NULL;
}

/* The weight of a character in the non-digit parts of a version; the end
 * of the string weighs 0, like the digit that would end the part. */
static int weight(int c)
{
	if (c == 0 || is_digit(c))
		return 0;
	if (is_alpha(c))
		return c;
	if (c == '~')
		return -1;
	/* dpkg (on amd64, the reference) reads bytes as signed char, so a
	 * byte above 0x7f becomes negative and ends up weighing its unsigned
	 * value: after the letters, before ASCII punctuation.  Such bytes
	 * are invalid in versions, but the database may hold them. */
	if (c > 0x7f)
		return c;
	return c + 256;
}

/* Length of the run of digits at the start of [s, s + len). */
static size_t digit_run(const char *s, size_t len)
{
	size_t n = 0;

	while (n < len && is_digit((unsigned char)s[n]))
		n++;
	return n;
}

static int sign(int x)
{
	return (x > 0) - (x < 0);
}

/* dpkg's comparison of one upstream or revision part, on spans. */
static int part_compare(const char *a, size_t alen, const char *b,
			size_t blen)
{
	size_t i = 0, j = 0;

	while (i < alen || j < blen) {
		size_t da, db;
		int c;

		while ((i < alen && !is_digit((unsigned char)a[i])) ||
		       (j < blen && !is_digit((unsigned char)b[j]))) {
			int wa = weight(i < alen ? (unsigned char)a[i] : 0);
			int wb = weight(j < blen ? (unsigned char)b[j] : 0);

			if (wa != wb)
				return wa < wb ? -1 : 1;
			/* Equal weights mean both are non-digits still
			 * inside their strings, so both can advance. */
			i++;
			j++;
		}

		/* Digit runs compare as numbers of any length: drop
		 * leading zeros, then the longer run is bigger, and runs of
		 * the same length compare like strings. */
		while (i < alen && a[i] == '0')
			i++;
		while (j < blen && b[j] == '0')
			j++;
		da = digit_run(a + i, alen - i);
		db = digit_run(b + j, blen - j);
		if (da != db)
			return da < db ? -1 : 1;
		c = memcmp(a + i, b + j, da);
		if (c != 0)
			return sign(c);
		i += da;
		j += db;
	}
	return 0;
}

static int split_compare(const struct split *a, const struct split *b)
{
	int c;

	if (a->epoch != b->epoch)
		return a->epoch < b->epoch ? -1 : 1;
	c = part_compare(a->up, a->uplen, b->up, b->uplen);
	if (c != 0)
		return c;
	return part_compare(a->rev, a->revlen, b->rev, b->revlen);
}

static void split_of(const struct unpkg_version *v, struct split *s)
{
	s->epoch = v->epoch;
	s->up = v->upstream != NULL ? v->upstream : "";
	s->uplen = strlen(s->up);
	s->rev = v->revision != NULL ? v->revision : "";
	s->revlen = strlen(s->rev);
}

int unpkg_version_compare(const struct unpkg_version *a,
			  const struct unpkg_version *b)
{
	struct split sa, sb;

	split_of(a, &sa);
	split_of(b, &sb);
	return split_compare(&sa, &sb);
}

int unpkg_version_compare_str(const char *a, const char *b)
{
	struct split sa, sb;
	size_t alen, blen;

	/* dpkg --compare-versions takes an empty version for "none", below
	 * every real one (even "~"). */
	trim(a, &alen);
	trim(b, &blen);
	if (alen == 0 || blen == 0)
		return (alen != 0) - (blen != 0);
	if (split_version(a, 1, &sa) != NULL)
		split_loose(a, &sa);
	if (split_version(b, 1, &sb) != NULL)
		split_loose(b, &sb);
	return split_compare(&sa, &sb);
}

char *unpkg_version_format(const struct unpkg_version *v)
{
	const char *up = v->upstream != NULL ? v->upstream : "";
	const char *rev = v->revision != NULL ? v->revision : "";
	size_t size;
	char *out;

	/* Room for the widest epoch, ':', '-' and the NUL. */
	size = strlen(up) + strlen(rev) + sizeof("4294967295") + 3;
	out = malloc(size);
	if (out == NULL)
		return NULL;
	/* Epoch 0 goes unwritten unless a colon later in the text would
	 * then be read as the end of an epoch. */
	if (v->epoch != 0 || strchr(up, ':') != NULL || strchr(rev, ':') != NULL)
		snprintf(out, size, "%u:%s%s%s", v->epoch, up,
			 *rev != '\0' ? "-" : "", rev);
	else
		snprintf(out, size, "%s%s%s", up, *rev != '\0' ? "-" : "", rev);
	return out;
}
