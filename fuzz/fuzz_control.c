/* fuzz_control.c - libFuzzer target for the deb822 parser and what is
 * built on it: control checks, status stanzas, relationship fields and
 * version numbers.
 *
 * The input is a control file or a status file.  Besides memory errors
 * (ASan/UBSan), the target checks properties the headers promise, and
 * aborts when one fails:
 *   - unpkg_para_format() is the inverse of the parser: the text it writes
 *     parses back into the same fields;
 *   - a stanza from unpkg_stanza_format() parses as one paragraph of a
 *     status file, and formatting it again gives the same text;
 *   - a relationship field that parses is written in a canonical form that
 *     parses again and formats to itself;
 *   - a version that parses formats to a spelling that parses to an equal
 *     version, and unpkg_version_compare() is antisymmetric and reflexive;
 *   - a failure always comes with an error code and a message.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "err.h"
#include "relation.h"
#include "stanza.h"
#include "version.h"

#include "fuzz-common.h"

const char fuzz_target_name[] = "fuzz_control";

static void same_para(const struct unpkg_para *a, const struct unpkg_para *b,
		      const char *what)
{
	size_t i;

	if (a->count != b->count)
		FAIL("%s: %zu fields became %zu", what, a->count, b->count);
	for (i = 0; i < a->count; i++) {
		if (strcmp(a->fields[i].name, b->fields[i].name) != 0)
			FAIL("%s: field %zu name '%s' became '%s'", what, i,
			     a->fields[i].name, b->fields[i].name);
		if (strcmp(a->fields[i].value, b->fields[i].value) != 0)
			FAIL("%s: field '%s' value '%s' became '%s'", what,
			     a->fields[i].name, a->fields[i].value,
			     b->fields[i].value);
	}
}

/* The formatted paragraph reads back as the same fields.  `lax`: the
 * paragraph came from unpkg_para_next(), which accepts blank continuation
 * lines that unpkg_para_parse() refuses. */
static void roundtrip_para(const struct unpkg_para *p, int lax)
{
	struct unpkg_para q;
	struct unpkg_err err;
	size_t pos = 0, line = 1;
	char *text = unpkg_para_format(p);
	int r;

	if (text == NULL)
		return;
	unpkg_para_init(&q);
	unpkg_err_init(&err);
	if (lax)
		r = unpkg_para_next(text, strlen(text), &pos, &line, &q, &err);
	else
		r = unpkg_para_parse(text, strlen(text), &q, &err) == 0 ? 1
									: -1;
	if (r != 1)
		FAIL("formatted paragraph does not parse back (%s):\n%s",
		     err.msg, text);
	same_para(p, &q, "format/parse round trip");
	unpkg_para_destroy(&q);
	free(text);
}

static void check_version_text(const char *s, struct unpkg_version *prev,
			       int *have_prev)
{
	struct unpkg_version v, w;
	struct unpkg_err err;
	char *text;
	int r, c1, c2;

	unpkg_err_init(&err);
	r = unpkg_version_parse(&v, s, &err);
	if (r < 0) {
		fuzz_check_err(&err, "unpkg_version_parse");
		unpkg_err_init(&err);
		r = unpkg_version_parse_lax(&v, s, &err);
		if (r < 0) {
			fuzz_check_err(&err, "unpkg_version_parse_lax");
			(void)unpkg_version_compare_str(s, "1.0");
			return;
		}
	}
	if (unpkg_version_compare(&v, &v) != 0)
		FAIL("version '%s' does not compare equal to itself", s);
	text = unpkg_version_format(&v);
	if (text != NULL) {
		unpkg_err_init(&err);
		if (unpkg_version_parse_lax(&w, text, &err) < 0)
			FAIL("version '%s' formats as '%s', which does not "
			     "parse (%s)", s, text, err.msg);
		if (unpkg_version_compare(&v, &w) != 0)
			FAIL("version '%s' formats as '%s', which compares "
			     "different", s, text);
		unpkg_version_destroy(&w);
		free(text);
	}
	if (*have_prev) {
		c1 = unpkg_version_compare(&v, prev);
		c2 = unpkg_version_compare(prev, &v);
		if ((c1 > 0) != (c2 < 0) || (c1 == 0) != (c2 == 0))
			FAIL("version comparison not antisymmetric: "
			     "'%s' vs the previous one: %d, %d", s, c1, c2);
		unpkg_version_destroy(prev);
	}
	*prev = v;
	*have_prev = 1;
}

static void check_relation_text(const char *field, const char *value)
{
	struct unpkg_relations r, q;
	struct unpkg_err err;
	char *text, *again;
	int lax;

	for (lax = 0; lax < 2; lax++) {
		unpkg_relations_init(&r);
		unpkg_err_init(&err);
		if ((lax ? unpkg_relations_parse_lax(&r, field, value, &err)
			 : unpkg_relations_parse(&r, field, value, &err)) < 0) {
			fuzz_check_err(&err, "unpkg_relations_parse");
			if (r.count != 0)
				FAIL("failed relation parse left %zu "
				     "relations", r.count);
			continue;
		}
		text = unpkg_relations_format(&r);
		if (text != NULL) {
			unpkg_relations_init(&q);
			unpkg_err_init(&err);
			if (unpkg_relations_parse_lax(&q, field, text, &err) < 0)
				FAIL("%s '%s' formats as '%s', which does not "
				     "parse (%s)", field, value, text,
				     err.msg);
			again = unpkg_relations_format(&q);
			if (again != NULL && strcmp(again, text) != 0)
				FAIL("%s: '%s' formats as '%s', then as '%s'",
				     field, value, text, again);
			free(again);
			unpkg_relations_destroy(&q);
			free(text);
		}
		unpkg_relations_destroy(&r);
	}
}

static const struct unpkg_stanza_state states[] = {
	{ .want = "install", .flag = "ok", .status = "installed" },
	{ .want = "install", .flag = "reinstreq", .status = "half-installed" },
	{ .want = "install", .flag = "ok", .status = "unpacked",
	  .conffiles = "\n /etc/x 0123456789abcdef0123456789abcdef",
	  .config_version = "1.0" },
	{ .want = "purge", .flag = "ok", .status = "not-installed" },
};

static void check_stanzas(const struct unpkg_para *p)
{
	size_t i;

	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		struct unpkg_para q;
		struct unpkg_err err;
		size_t pos = 0, line = 1;
		char *text = NULL, *again = NULL;

		unpkg_err_init(&err);
		if (unpkg_stanza_format(p, &states[i], &text, &err) < 0) {
			fuzz_check_err(&err, "unpkg_stanza_format");
			continue;
		}
		unpkg_para_init(&q);
		unpkg_err_init(&err);
		if (unpkg_para_next(text, strlen(text), &pos, &line, &q,
				    &err) != 1)
			FAIL("stanza does not parse (%s):\n%s", err.msg, text);
		if (pos != strlen(text))
			FAIL("stanza is more than one paragraph:\n%s", text);
		unpkg_err_init(&err);
		if (unpkg_stanza_format(&q, &states[i], &again, &err) < 0)
			FAIL("stanza cannot be formatted again (%s):\n%s",
			     err.msg, text);
		if (strcmp(text, again) != 0)
			FAIL("stanza not stable:\n%s\n-- became --\n%s", text,
			     again);
		free(again);
		unpkg_para_destroy(&q);
		free(text);
	}
}

static const char *const relation_fields[] = {
	"Depends", "Pre-Depends", "Recommends", "Suggests", "Breaks",
	"Conflicts", "Enhances", "Replaces", "Provides",
};

static void check_para(const struct unpkg_para *p, int lax,
		       struct unpkg_version *prev, int *have_prev)
{
	struct unpkg_err err;
	const char *warning = NULL;
	size_t i, k;

	roundtrip_para(p, lax);
	unpkg_err_init(&err);
	if (unpkg_stanza_check_control(p, &warning, &err) < 0)
		fuzz_check_err(&err, "unpkg_stanza_check_control");
	check_stanzas(p);
	for (i = 0; i < p->count; i++) {
		const struct unpkg_field *f = &p->fields[i];

		if (unpkg_para_get(p, f->name) != f->value)
			FAIL("unpkg_para_get('%s') does not find the field",
			     f->name);
		for (k = 0; k < sizeof(relation_fields) /
				     sizeof(relation_fields[0]); k++)
			if (unpkg_field_name_eq(f->name, relation_fields[k]))
				check_relation_text(f->name, f->value);
		if (unpkg_field_name_eq(f->name, "Version") ||
		    unpkg_field_name_eq(f->name, "Config-Version"))
			check_version_text(f->value, prev, have_prev);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct unpkg_para p;
	struct unpkg_err err;
	struct unpkg_version prev;
	size_t pos = 0, line = 1, last = 0;
	int have_prev = 0, r;

	/* One control file. */
	unpkg_para_init(&p);
	unpkg_err_init(&err);
	if (unpkg_para_parse(buf, size, &p, &err) == 0)
		check_para(&p, 0, &prev, &have_prev);
	else if (p.count != 0)
		FAIL("failed parse left %zu fields", p.count);
	else
		fuzz_check_err(&err, "unpkg_para_parse");
	unpkg_para_destroy(&p);

	/* A status file: every paragraph. */
	for (;;) {
		unpkg_para_init(&p);
		unpkg_err_init(&err);
		r = unpkg_para_next(buf, size, &pos, &line, &p, &err);
		if (r < 0) {
			fuzz_check_err(&err, "unpkg_para_next");
			if (p.count != 0)
				FAIL("failed parse left %zu fields", p.count);
			break;
		}
		if (pos > size || pos < last)
			FAIL("position %zu out of order (size %zu)", pos, size);
		if (r == 0) {
			if (pos != size)
				FAIL("end reported at %zu of %zu", pos, size);
			break;
		}
		if (pos == last)
			FAIL("paragraph without progress at %zu", pos);
		last = pos;
		check_para(&p, 1, &prev, &have_prev);
		unpkg_para_destroy(&p);
	}
	unpkg_para_destroy(&p);

	/* The raw input as a relation and a version, within reason. */
	if (size < 4096 && memchr(buf, '\0', size) == NULL) {
		char *s = strndup(buf, size);

		if (s != NULL) {
			check_relation_text("Depends", s);
			check_relation_text("Provides", s);
			check_version_text(s, &prev, &have_prev);
			free(s);
		}
	}
	if (have_prev)
		unpkg_version_destroy(&prev);
	return 0;
}
