/* control.h - deb822 paragraphs (control files, the status file).
 *
 * A paragraph is a list of fields "Name: value".  Continuation lines start
 * with a blank (space or tab; like dpkg, also \v and \f).  Field names are
 * matched case-insensitively and keep their spelling; blanks between the
 * name and the colon are allowed, as dpkg allows them.  A value is stored
 * as dpkg stores it: the text of the first line with leading blanks
 * removed, then for each continuation line "\n" followed by the line
 * verbatim (with its leading blank), with trailing blanks and newlines of
 * the whole value removed (so a first line keeps its trailing blanks when
 * continuation lines follow).  So "Conffiles:\n /etc/x h" has the value
 * "\n /etc/x h" and "Description: a\n b" the value "a\n b".
 *
 * Rejected with the line number: a line without a colon, an empty field
 * name or one with a blank or control character in it, a continuation
 * line before the first field, a duplicate field (any case), a NUL or CR
 * byte anywhere (dpkg lets control characters, NUL and CR through), a
 * last line without its newline (as dpkg), and in unpkg_para_parse() only,
 * a continuation line with nothing but blanks (dpkg rejects it in control
 * files and only warns in its database).  On error the paragraph is left
 * empty.
 */
#ifndef UNPKG_CONTROL_H
#define UNPKG_CONTROL_H

#include <stddef.h>

#include "err.h"

/* name and value are owned by the paragraph (they share one allocation):
 * change them only through unpkg_para_set(). */
struct unpkg_field {
	char *name;
	char *value;
	size_t line;		/* line number of the field in the input */
};

/* Embedded object: unpkg_para_init() / unpkg_para_destroy(). */
struct unpkg_para {
	struct unpkg_field *fields;
	size_t count;
	size_t cap;
	size_t line;		/* line number of the first field */
};

void unpkg_para_init(struct unpkg_para *para);
void unpkg_para_destroy(struct unpkg_para *para);	/* leaves it empty */

/* Parse exactly one paragraph (a control file).  Blank lines before and
 * after are allowed; a second paragraph or no field at all is an error.
 * `para` must be initialised and empty. */
int unpkg_para_parse(const char *buf, size_t len, struct unpkg_para *para,
		     struct unpkg_err *err);

/* Iterate over the paragraphs of a multi-paragraph file (status, updates/
 * entries).  *pos and *line start at 0 and 1 and are advanced.  Returns 1
 * with the next paragraph in `para` (which must be initialised and empty),
 * 0 at the end of the input, -1 on error.  The error message starts with
 * "line N: " counted from the start of buf. */
int unpkg_para_next(const char *buf, size_t len, size_t *pos, size_t *line,
		    struct unpkg_para *para, struct unpkg_err *err);

/* The value of field `name` (case-insensitive), or NULL. */
const char *unpkg_para_get(const struct unpkg_para *para, const char *name);

/* Set field `name` to `value` (copied): replaces the value of an existing
 * field (keeping its position and spelling) or appends a new field.
 * UNPKG_ERR_USAGE for a name that is not a field name or a value that
 * would not read back as one field (CR, or a newline not followed by a
 * blank). */
int unpkg_para_set(struct unpkg_para *para, const char *name,
		   const char *value, struct unpkg_err *err);

/* Remove field `name` if present. */
void unpkg_para_unset(struct unpkg_para *para, const char *name);

/* Deep copy; `dst` must be initialised and empty. */
int unpkg_para_copy(struct unpkg_para *dst, const struct unpkg_para *src,
		    struct unpkg_err *err);

/* The paragraph as text: "Name: value\n" per field in order (a value
 * starting with "\n" is written right after the colon), the exact inverse
 * of the parser for what it accepts.  Returns a malloc'd string, NULL if
 * out of memory. */
char *unpkg_para_format(const struct unpkg_para *para);

/* Case-insensitive ASCII comparison helper used for field names: nonzero
 * if a and b are the same name. */
int unpkg_field_name_eq(const char *a, const char *b);

#endif
