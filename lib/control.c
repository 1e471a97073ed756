/* control.c - deb822 paragraphs, parsed the way dpkg 1.21 parses them. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "control.h"

/* dpkg's notion of white space inside a line (C isspace without the line
 * breaks; CR is rejected before this matters). */
static int is_blank(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\v' || c == '\f';
}

static int is_ctl(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

static unsigned char fold(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

int unpkg_field_name_eq(const char *a, const char *b)
{
	const unsigned char *p = (const unsigned char *)a;
	const unsigned char *q = (const unsigned char *)b;

	for (; *p != '\0' && fold(*p) == fold(*q); p++, q++)
		;
	return *p == '\0' && *q == '\0';
}

/* Same as unpkg_field_name_eq() with a name that is not NUL-terminated, so
 * the parser can look up a name before copying it. */
static int name_eq_len(const char *name, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (name[i] == '\0' ||
		    fold((unsigned char)name[i]) != fold((unsigned char)s[i]))
			return 0;
	}
	return name[len] == '\0';
}

static struct unpkg_field *find_len(const struct unpkg_para *para,
				    const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < para->count; i++) {
		if (name_eq_len(para->fields[i].name, name, len))
			return &para->fields[i];
	}
	return NULL;
}

void unpkg_para_init(struct unpkg_para *para)
{
	para->fields = NULL;
	para->count = 0;
	para->cap = 0;
	para->line = 0;
}

/* name and value of a field share one allocation owned by `name`: one
 * malloc per field keeps a 2 MB status file cheap to load. */
static void field_free(struct unpkg_field *f)
{
	free(f->name);
	f->name = NULL;
	f->value = NULL;
}

void unpkg_para_destroy(struct unpkg_para *para)
{
	size_t i;

	if (para == NULL)
		return;
	for (i = 0; i < para->count; i++)
		field_free(&para->fields[i]);
	free(para->fields);
	unpkg_para_init(para);
}

static int field_fill(struct unpkg_field *f, const char *name, size_t nlen,
		      const char *value, size_t vlen, size_t line,
		      struct unpkg_err *err)
{
	char *block = malloc(nlen + 1 + vlen + 1);

	if (block == NULL)
		return unpkg_err_nomem(err);
	memcpy(block, name, nlen);
	block[nlen] = '\0';
	memcpy(block + nlen + 1, value, vlen);
	block[nlen + 1 + vlen] = '\0';
	f->name = block;
	f->value = block + nlen + 1;
	f->line = line;
	return 0;
}

static int para_reserve(struct unpkg_para *para, size_t want,
			struct unpkg_err *err)
{
	struct unpkg_field *fields;
	size_t cap;

	if (want <= para->cap)
		return 0;
	cap = para->cap != 0 ? para->cap : 16;
	while (cap < want) {
		if (cap > ((size_t)-1 / sizeof(*fields)) / 2)
			return unpkg_err_nomem(err);
		cap *= 2;
	}
	fields = realloc(para->fields, cap * sizeof(*fields));
	if (fields == NULL)
		return unpkg_err_nomem(err);
	para->fields = fields;
	para->cap = cap;
	return 0;
}

static int para_append(struct unpkg_para *para, const char *name,
		       size_t nlen, const char *value, size_t vlen,
		       size_t line, struct unpkg_err *err)
{
	if (para_reserve(para, para->count + 1, err) < 0)
		return -1;
	if (field_fill(&para->fields[para->count], name, nlen, value, vlen,
		       line, err) < 0)
		return -1;
	para->count++;
	return 0;
}

/* Find the end of the line starting at `p` (*eol, the offset of its '\n')
 * and reject the bytes that have no place in a control file. */
static int line_end(const char *buf, size_t len, size_t p, size_t line,
		    size_t *eol, struct unpkg_err *err)
{
	const char *nl = memchr(buf + p, '\n', len - p);
	size_t end = nl != NULL ? (size_t)(nl - buf) : len;

	if (memchr(buf + p, '\0', end - p) != NULL)
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "line %zu: NUL byte", line);
	if (memchr(buf + p, '\r', end - p) != NULL)
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "line %zu: carriage return (CR) byte; "
				     "lines must end in a plain LF", line);
	if (nl == NULL)
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "line %zu: missing newline at end of "
				     "file", line);
	*eol = end;
	return 0;
}

/* Parse the field name of the line [p, eol): sets *nlen and *colon. */
static int field_name(const char *buf, size_t p, size_t eol, size_t line,
		      size_t *nlen, size_t *colon, struct unpkg_err *err)
{
	size_t q;
	size_t n;

	for (q = p; q < eol && buf[q] != ':'; q++) {
		if (is_ctl((unsigned char)buf[q]) &&
		    !is_blank((unsigned char)buf[q]))
			return unpkg_err_set(err, UNPKG_ERR_FORMAT,
					     "line %zu: control character "
					     "in field name", line);
	}
	if (q == eol)
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "line %zu: not a field: no ':' in line",
				     line);
	*colon = q;
	/* dpkg accepts blanks between the name and the colon. */
	while (q > p && is_blank((unsigned char)buf[q - 1]))
		q--;
	if (q == p)
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "line %zu: empty field name", line);
	for (n = p; n < q; n++) {
		if (is_blank((unsigned char)buf[n]))
			return unpkg_err_set(err, UNPKG_ERR_FORMAT,
					     "line %zu: blank in field name "
					     "'%.*s'", line, (int)(q - p),
					     buf + p);
	}
	*nlen = q - p;
	return 0;
}

/* One paragraph from buf at *pos.  `lax` tolerates blank continuation
 * lines, which dpkg only warns about in its own database files. */
static int parse_one(const char *buf, size_t len, size_t *pos, size_t *line,
		     struct unpkg_para *para, int lax, struct unpkg_err *err)
{
	size_t p = *pos;
	size_t ln = *line;
	int ret = -1;

	if (para->count != 0)
		return unpkg_err_set(err, UNPKG_ERR_USAGE,
				     "paragraph to parse into is not empty");
	while (p < len && buf[p] == '\n') {
		p++;
		ln++;
	}
	if (p >= len) {
		*pos = p;
		*line = ln;
		return 0;
	}
	para->line = ln;
	while (p < len && buf[p] != '\n') {
		const char *name = buf + p;
		size_t fline = ln;
		size_t eol = 0, nlen = 0, colon = 0, v, vend;

		if (line_end(buf, len, p, ln, &eol, err) < 0)
			goto out;
		if (is_blank((unsigned char)buf[p])) {
			unpkg_err_set(err, UNPKG_ERR_FORMAT,
				      "line %zu: continuation line before "
				      "the first field", ln);
			goto out;
		}
		if (field_name(buf, p, eol, ln, &nlen, &colon, err) < 0)
			goto out;
		if (find_len(para, name, nlen) != NULL) {
			unpkg_err_set(err, UNPKG_ERR_FORMAT,
				      "line %zu: duplicate field '%.*s'", ln,
				      (int)nlen, name);
			goto out;
		}
		for (v = colon + 1; v < eol && is_blank((unsigned char)buf[v]);
		     v++)
			;
		vend = eol;
		p = eol + 1;
		ln++;
		while (p < len && is_blank((unsigned char)buf[p])) {
			size_t q;

			if (line_end(buf, len, p, ln, &eol, err) < 0)
				goto out;
			for (q = p; q < eol && is_blank((unsigned char)buf[q]);
			     q++)
				;
			if (q == eol && !lax) {
				unpkg_err_set(err, UNPKG_ERR_FORMAT,
					      "line %zu: blank line in value "
					      "of field '%.*s'", ln, (int)nlen,
					      name);
				goto out;
			}
			vend = eol;
			p = eol + 1;
			ln++;
		}
		/* The value is the input text itself, minus trailing white
		 * space: exactly what dpkg stores and writes back. */
		while (vend > v && (is_blank((unsigned char)buf[vend - 1]) ||
				    buf[vend - 1] == '\n'))
			vend--;
		if (para_append(para, name, nlen, buf + v, vend - v, fline,
				err) < 0)
			goto out;
	}
	if (p < len) {
		p++;
		ln++;
	}
	*pos = p;
	*line = ln;
	ret = 1;
out:
	if (ret < 0)
		unpkg_para_destroy(para);
	return ret;
}

int unpkg_para_next(const char *buf, size_t len, size_t *pos, size_t *line,
		    struct unpkg_para *para, struct unpkg_err *err)
{
	return parse_one(buf, len, pos, line, para, 1, err);
}

int unpkg_para_parse(const char *buf, size_t len, struct unpkg_para *para,
		     struct unpkg_err *err)
{
	struct unpkg_para extra;
	size_t pos = 0;
	size_t line = 1;
	int ret = -1;
	int r;

	if (para->count != 0)
		return unpkg_err_set(err, UNPKG_ERR_USAGE,
				     "paragraph to parse into is not empty");
	unpkg_para_init(&extra);
	r = parse_one(buf, len, &pos, &line, para, 0, err);
	if (r < 0)
		goto out;
	if (r == 0) {
		unpkg_err_set(err, UNPKG_ERR_FORMAT,
			      "line %zu: no fields (empty control file)",
			      line);
		goto out;
	}
	r = parse_one(buf, len, &pos, &line, &extra, 0, err);
	if (r < 0)
		goto out;
	if (r > 0) {
		unpkg_err_set(err, UNPKG_ERR_FORMAT,
			      "line %zu: a second paragraph; only one is "
			      "allowed", extra.line);
		goto out;
	}
	ret = 0;
out:
	unpkg_para_destroy(&extra);
	if (ret < 0)
		unpkg_para_destroy(para);
	return ret;
}

const char *unpkg_para_get(const struct unpkg_para *para, const char *name)
{
	const struct unpkg_field *f = find_len(para, name, strlen(name));

	return f != NULL ? f->value : NULL;
}

/* A value must stay one field when written out: every line break has to
 * be followed by a continuation line. */
static int check_set(const char *name, const char *value,
		     struct unpkg_err *err)
{
	const char *s;

	if (*name == '\0')
		return unpkg_err_set(err, UNPKG_ERR_USAGE,
				     "empty field name");
	for (s = name; *s != '\0'; s++) {
		if (*s == ':' || is_ctl((unsigned char)*s) || *s == ' ')
			return unpkg_err_set(err, UNPKG_ERR_USAGE,
					     "invalid field name '%s'", name);
	}
	for (s = value; *s != '\0'; s++) {
		if (*s == '\r' ||
		    (*s == '\n' && !is_blank((unsigned char)s[1])))
			return unpkg_err_set(err, UNPKG_ERR_USAGE,
					     "value of field '%s' would not "
					     "be one field", name);
	}
	return 0;
}

int unpkg_para_set(struct unpkg_para *para, const char *name,
		   const char *value, struct unpkg_err *err)
{
	struct unpkg_field *f;
	struct unpkg_field repl;
	size_t nlen = strlen(name);

	if (check_set(name, value, err) < 0)
		return -1;
	f = find_len(para, name, nlen);
	if (f == NULL)
		return para_append(para, name, nlen, value, strlen(value), 0,
				   err);
	/* Build the replacement before freeing the old block: `value` may
	 * point into it. */
	if (field_fill(&repl, f->name, strlen(f->name), value, strlen(value),
		       f->line, err) < 0)
		return -1;
	field_free(f);
	*f = repl;
	return 0;
}

void unpkg_para_unset(struct unpkg_para *para, const char *name)
{
	struct unpkg_field *f = find_len(para, name, strlen(name));
	size_t i;

	if (f == NULL)
		return;
	i = (size_t)(f - para->fields);
	field_free(f);
	memmove(&para->fields[i], &para->fields[i + 1],
		(para->count - i - 1) * sizeof(*f));
	para->count--;
}

int unpkg_para_copy(struct unpkg_para *dst, const struct unpkg_para *src,
		    struct unpkg_err *err)
{
	size_t i;
	int ret = -1;

	if (dst->count != 0)
		return unpkg_err_set(err, UNPKG_ERR_USAGE,
				     "paragraph to copy into is not empty");
	if (para_reserve(dst, src->count, err) < 0)
		goto out;
	for (i = 0; i < src->count; i++) {
		const struct unpkg_field *f = &src->fields[i];

		if (para_append(dst, f->name, strlen(f->name), f->value,
				strlen(f->value), f->line, err) < 0)
			goto out;
	}
	dst->line = src->line;
	ret = 0;
out:
	if (ret < 0)
		unpkg_para_destroy(dst);
	return ret;
}

char *unpkg_para_format(const struct unpkg_para *para)
{
	size_t len = 1, i;
	char *out, *o;

	for (i = 0; i < para->count; i++)
		len += strlen(para->fields[i].name) +
		       strlen(para->fields[i].value) + 3;
	out = malloc(len);
	if (out == NULL)
		return NULL;
	o = out;
	for (i = 0; i < para->count; i++) {
		const struct unpkg_field *f = &para->fields[i];
		size_t nlen = strlen(f->name), vlen = strlen(f->value);

		memcpy(o, f->name, nlen);
		o += nlen;
		*o++ = ':';
		if (f->value[0] != '\n')
			*o++ = ' ';
		memcpy(o, f->value, vlen);
		o += vlen;
		*o++ = '\n';
	}
	*o = '\0';
	return out;
}
