/* relation.c - parse, format and evaluate relationship fields as dpkg
 * does for the control files of binary packages and its database. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "relation.h"

/* Longest piece of the input quoted in an error message. */
#define EXCERPT_MAX 40

static int is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' ||
	       c == '\r';
}

static int is_alnum(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z');
}

static int to_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static const char *skip_space(const char *p)
{
	while (is_space((unsigned char)*p))
		p++;
	return p;
}

/* Field names are case-insensitive; ASCII only, whatever the locale. */
static int field_is(const char *field, const char *name)
{
	for (; *field != '\0' && *name != '\0'; field++, name++) {
		int a = to_lower((unsigned char)*field);
		int b = to_lower((unsigned char)*name);

		if (a != b)
			return 0;
	}
	return *field == '\0' && *name == '\0';
}

/* dpkg refuses alternatives where "one of" would make no sense. */
static int forbids_alternatives(const char *field)
{
	return field_is(field, "Breaks") || field_is(field, "Conflicts") ||
	       field_is(field, "Replaces") || field_is(field, "Provides");
}

/* How much of the text at `p` to quote: up to the end of its line. */
static int excerpt(const char *p)
{
	int n = 0;

	while (p[n] != '\0' && p[n] != '\n' && n < EXCERPT_MAX)
		n++;
	return n;
}

/* A precision for "%.*s" quoting `len` bytes of a token. */
static int quote_len(size_t len)
{
	return len < EXCERPT_MAX * 4 ? (int)len : EXCERPT_MAX * 4;
}

static char *dup_span(const char *p, size_t len)
{
	char *s = malloc(len + 1);

	if (s == NULL)
		return NULL;
	memcpy(s, p, len);
	s[len] = '\0';
	return s;
}

/* Why the token [p, p + len) is not a valid name, or NULL if it is.
 * `extra` lists the punctuation allowed after the first character; the
 * reason is written into `buf`. */
static const char *name_problem(const char *p, size_t len, const char *extra,
				char *buf, size_t size)
{
	size_t i;

	if (!is_alnum((unsigned char)p[0]))
		return "must start with an alphanumeric character";
	for (i = 1; i < len; i++) {
		int c = (unsigned char)p[i];

		if (is_alnum(c) || strchr(extra, c) != NULL)
			continue;
		if (c > ' ' && c < 0x7f)
			snprintf(buf, size, "character '%c' not allowed "
				 "(only letters, digits and '%s')", c, extra);
		else
			snprintf(buf, size, "character '\\x%02x' not allowed "
				 "(only letters, digits and '%s')",
				 (unsigned int)c, extra);
		return buf;
	}
	return NULL;
}

static int check_name(const char *field, const char *p, size_t len,
		      struct unpkg_err *err)
{
	const char *why;
	char buf[80];

	why = name_problem(p, len, "-+._", buf, sizeof(buf));
	if (why == NULL)
		return 0;
	return unpkg_err_set(err, UNPKG_ERR_FORMAT,
			     "'%s' field: invalid package name '%.*s': %s",
			     field, quote_len(len), p, why);
}

static int check_arch(const char *field, const char *name, const char *p,
		      size_t len, struct unpkg_err *err)
{
	const char *why;
	char buf[80];

	why = name_problem(p, len, "-", buf, sizeof(buf));
	if (why == NULL)
		return 0;
	return unpkg_err_set(err, UNPKG_ERR_FORMAT,
			     "'%s' field, reference to '%s': invalid "
			     "architecture name '%.*s': %s",
			     field, name, quote_len(len), p, why);
}

/* Read the operator at *pp.  A bare "<" or ">" is dpkg's obsolete
 * spelling of "<=" / ">="; no operator at all means "=". */
static enum unpkg_relop read_op(const char **pp)
{
	const char *p = *pp;
	enum unpkg_relop op;

	if (p[0] == '<' && p[1] == '<') {
		op = UNPKG_REL_LT;
		p += 2;
	} else if (p[0] == '<') {
		op = UNPKG_REL_LE;
		p += p[1] == '=' ? 2 : 1;
	} else if (p[0] == '>' && p[1] == '>') {
		op = UNPKG_REL_GT;
		p += 2;
	} else if (p[0] == '>') {
		op = UNPKG_REL_GE;
		p += p[1] == '=' ? 2 : 1;
	} else {
		op = UNPKG_REL_EQ;
		if (p[0] == '=')
			p++;
	}
	*pp = p;
	return op;
}

static void alt_destroy(struct unpkg_relation_alt *alt)
{
	free(alt->name);
	free(alt->archqual);
	free(alt->version);
	alt->name = NULL;
	alt->archqual = NULL;
	alt->version = NULL;
	alt->op = UNPKG_REL_ANY;
}

static void relation_destroy(struct unpkg_relation *rel)
{
	size_t i;

	for (i = 0; i < rel->count; i++)
		alt_destroy(&rel->alts[i]);
	free(rel->alts);
	rel->alts = NULL;
	rel->count = 0;
}

/* Parse "(" [op] version ")" at *pp into alt->op / alt->version. */
static int parse_constraint(const char **pp, const char *field, int lax,
			    struct unpkg_relation_alt *alt,
			    struct unpkg_err *err)
{
	struct unpkg_version ver = { 0, NULL, NULL, NULL };
	struct unpkg_err verr;
	const char *p = *pp + 1;
	const char *vstart, *vend;
	char *text = NULL;
	int ret = -1;

	p = skip_space(p);
	alt->op = read_op(&p);
	p = skip_space(p);
	vstart = p;
	while (*p != '\0' && !is_space((unsigned char)*p) && *p != ')')
		p++;
	vend = p;
	p = skip_space(p);
	if (*p == '\0') {
		unpkg_err_set(err, UNPKG_ERR_FORMAT,
			      "'%s' field, reference to '%s': version "
			      "unterminated: '%.*s'", field, alt->name,
			      excerpt(*pp), *pp);
		goto out;
	}
	if (*p != ')') {
		unpkg_err_set(err, UNPKG_ERR_FORMAT,
			      "'%s' field, reference to '%s': '%.*s' after "
			      "version '%.*s' instead of ')'", field,
			      alt->name, excerpt(p), p,
			      quote_len((size_t)(vend - vstart)), vstart);
		goto out;
	}
	p++;

	text = dup_span(vstart, (size_t)(vend - vstart));
	if (text == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	unpkg_err_init(&verr);
	if ((lax ? unpkg_version_parse_lax(&ver, text, &verr)
		 : unpkg_version_parse(&ver, text, &verr)) < 0) {
		if (verr.code == UNPKG_ERR_NOMEM)
			unpkg_err_nomem(err);
		else
			unpkg_err_set(err, verr.code,
				      "'%s' field, reference to '%s': %s",
				      field, alt->name, verr.msg);
		goto out;
	}
	alt->version = unpkg_version_format(&ver);
	if (alt->version == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	*pp = p;
	ret = 0;
out:
	unpkg_version_destroy(&ver);
	free(text);
	return ret;
}

/* Parse one alternative at *pp, leaving *pp after it and any blanks. */
static int parse_alt(const char **pp, const char *field, int lax,
		     struct unpkg_relation_alt *alt, struct unpkg_err *err)
{
	const char *p = *pp;
	const char *start;
	size_t i, len;
	int ret = -1;

	start = p;
	while (*p != '\0' && !is_space((unsigned char)*p) && *p != ':' &&
	       *p != '(' && *p != ',' && *p != '|')
		p++;
	len = (size_t)(p - start);
	if (len == 0) {
		if (*p == '\0')
			unpkg_err_set(err, UNPKG_ERR_FORMAT,
				      "'%s' field: missing package name at "
				      "the end", field);
		else
			unpkg_err_set(err, UNPKG_ERR_FORMAT,
				      "'%s' field: missing package name, or "
				      "garbage where package name expected: "
				      "'%.*s'", field, excerpt(p), p);
		goto out;
	}
	if (check_name(field, start, len, err) < 0)
		goto out;
	alt->name = dup_span(start, len);
	if (alt->name == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	/* dpkg folds package names to lowercase when it records them. */
	for (i = 0; i < len; i++)
		alt->name[i] = (char)to_lower((unsigned char)alt->name[i]);

	if (*p == ':') {
		start = ++p;
		while (*p != '\0' && !is_space((unsigned char)*p) &&
		       *p != '(' && *p != ',' && *p != '|')
			p++;
		len = (size_t)(p - start);
		if (len == 0) {
			unpkg_err_set(err, UNPKG_ERR_FORMAT,
				      "'%s' field, reference to '%s': missing "
				      "architecture name after ':'", field,
				      alt->name);
			goto out;
		}
		if (check_arch(field, alt->name, start, len, err) < 0)
			goto out;
		alt->archqual = dup_span(start, len);
		if (alt->archqual == NULL) {
			unpkg_err_nomem(err);
			goto out;
		}
	}

	p = skip_space(p);
	if (*p == '(') {
		if (parse_constraint(&p, field, lax, alt, err) < 0)
			goto out;
		p = skip_space(p);
	}
	*pp = p;
	ret = 0;
out:
	return ret;
}

static int relations_parse(struct unpkg_relations *r, const char *field,
			   const char *value, int lax, struct unpkg_err *err)
{
	struct unpkg_relation rel = { NULL, 0 };
	struct unpkg_relation_alt alt = { NULL, NULL, UNPKG_REL_ANY, NULL };
	size_t rels_cap = 0, alts_cap = 0;
	const char *p = value;
	int no_alts;
	int ret = -1;

	if (field == NULL)
		field = "relationship";
	no_alts = forbids_alternatives(field);
	if (*skip_space(value) == '\0') {
		ret = 0;
		goto out;
	}

	/* Blanks are skipped after separators only: like dpkg, a value
	 * that starts with one (a first line left empty) is refused. */
	for (;;) {
		void *grown;
		char sep;

		if (parse_alt(&p, field, lax, &alt, err) < 0)
			goto out;
		sep = *p;
		if (sep != '\0' && sep != ',' && sep != '|') {
			unpkg_err_set(err, UNPKG_ERR_FORMAT,
				      "'%s' field: syntax error after "
				      "reference to package '%s': '%.*s'",
				      field, alt.name, excerpt(p), p);
			goto out;
		}
		if (sep == '|' && no_alts) {
			unpkg_err_set(err, UNPKG_ERR_FORMAT,
				      "'%s' field: alternatives ('|') not "
				      "allowed: '%.*s'", field, excerpt(p), p);
			goto out;
		}
		grown = unpkg_grow(rel.alts, &alts_cap, rel.count + 1,
				   sizeof(*rel.alts), 4);
		if (grown == NULL) {
			unpkg_err_nomem(err);
			goto out;
		}
		rel.alts = grown;
		rel.alts[rel.count++] = alt;
		alt.name = alt.archqual = alt.version = NULL;
		alt.op = UNPKG_REL_ANY;

		if (sep != '|') {
			grown = unpkg_grow(r->rels, &rels_cap, r->count + 1,
					   sizeof(*r->rels), 4);
			if (grown == NULL) {
				unpkg_err_nomem(err);
				goto out;
			}
			r->rels = grown;
			r->rels[r->count++] = rel;
			rel.alts = NULL;
			rel.count = 0;
			alts_cap = 0;
		}
		if (sep == '\0')
			break;
		p = skip_space(p + 1);
	}
	ret = 0;
out:
	alt_destroy(&alt);
	relation_destroy(&rel);
	if (ret < 0)
		unpkg_relations_destroy(r);
	return ret;
}

void unpkg_relations_init(struct unpkg_relations *r)
{
	r->rels = NULL;
	r->count = 0;
}

void unpkg_relations_destroy(struct unpkg_relations *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->count; i++)
		relation_destroy(&r->rels[i]);
	free(r->rels);
	r->rels = NULL;
	r->count = 0;
}

int unpkg_relations_parse(struct unpkg_relations *r, const char *field,
			  const char *value, struct unpkg_err *err)
{
	return relations_parse(r, field, value, 0, err);
}

int unpkg_relations_parse_lax(struct unpkg_relations *r, const char *field,
			      const char *value, struct unpkg_err *err)
{
	return relations_parse(r, field, value, 1, err);
}

static const char *op_text(enum unpkg_relop op)
{
	switch (op) {
	case UNPKG_REL_LT:
		return "<<";
	case UNPKG_REL_LE:
		return "<=";
	case UNPKG_REL_EQ:
		return "=";
	case UNPKG_REL_GE:
		return ">=";
	case UNPKG_REL_GT:
		return ">>";
	case UNPKG_REL_ANY:
		break;
	}
	return "";
}

static void append(char *buf, size_t *pos, const char *s)
{
	size_t len = strlen(s);

	memcpy(buf + *pos, s, len);
	*pos += len;
}

char *unpkg_relations_format(const struct unpkg_relations *r)
{
	size_t size = 1, pos = 0, i, j;
	char *buf;

	for (i = 0; i < r->count; i++) {
		for (j = 0; j < r->rels[i].count; j++) {
			const struct unpkg_relation_alt *a;

			a = r->rels[i].alts + j;

			/* ", " or " | ", then "name:arch (op version)". */
			size += strlen(" | ") + strlen(a->name);
			if (a->archqual != NULL)
				size += 1 + strlen(a->archqual);
			if (a->version != NULL)
				size += strlen(" (>> )") + strlen(a->version);
		}
	}
	buf = malloc(size);
	if (buf == NULL)
		return NULL;

	for (i = 0; i < r->count; i++) {
		if (i > 0)
			append(buf, &pos, ", ");
		for (j = 0; j < r->rels[i].count; j++) {
			const struct unpkg_relation_alt *a;

			a = r->rels[i].alts + j;

			if (j > 0)
				append(buf, &pos, " | ");
			append(buf, &pos, a->name);
			if (a->archqual != NULL) {
				append(buf, &pos, ":");
				append(buf, &pos, a->archqual);
			}
			if (a->op != UNPKG_REL_ANY && a->version != NULL) {
				append(buf, &pos, " (");
				append(buf, &pos, op_text(a->op));
				append(buf, &pos, " ");
				append(buf, &pos, a->version);
				append(buf, &pos, ")");
			}
		}
	}
	buf[pos] = '\0';
	return buf;
}

int unpkg_relop_satisfied(enum unpkg_relop op, const char *have,
			  const char *want)
{
	int c;

	if (op == UNPKG_REL_ANY)
		return 1;
	if (have == NULL || want == NULL)
		return 0;
	c = unpkg_version_compare_str(have, want);
	switch (op) {
	case UNPKG_REL_LT:
		return c < 0;
	case UNPKG_REL_LE:
		return c <= 0;
	case UNPKG_REL_EQ:
		return c == 0;
	case UNPKG_REL_GE:
		return c >= 0;
	case UNPKG_REL_GT:
		return c > 0;
	case UNPKG_REL_ANY:
		break;
	}
	return 1;	/* UNPKG_REL_ANY, handled above */
}
