/* divert.c - dpkg-divert's diversions (see divert.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "divert.h"
#include "strmap.h"

/* The diversions of one load; earlier loads are kept (their strings may
 * still be in use) until the object is freed. */
struct load {
	char *arena;		/* the paths and names, NUL-separated */
	struct unpkg_diversion *v;
	size_t n;
	struct load *older;
};

struct unpkg_diversions {
	struct load *cur;	/* NULL: none loaded yet */
	struct unpkg_strmap from, to;	/* path -> struct unpkg_diversion * */
};

int unpkg_divert_new(struct unpkg_diversions **out, struct unpkg_err *err)
{
	*out = calloc(1, sizeof(**out));
	if (*out == NULL)
		return unpkg_err_nomem(err);
	unpkg_strmap_init(&(*out)->from);
	unpkg_strmap_init(&(*out)->to);
	return 0;
}

static void load_free(struct load *l)
{
	while (l != NULL) {
		struct load *older = l->older;

		free(l->arena);
		free(l->v);
		free(l);
		l = older;
	}
}

void unpkg_divert_free(struct unpkg_diversions *d)
{
	if (d == NULL)
		return;
	load_free(d->cur);
	unpkg_strmap_destroy(&d->from);
	unpkg_strmap_destroy(&d->to);
	free(d);
}

/* Copy line `s[0..n)` to `*dst` as dpkg names a path: leading '/' and
 * "./" dropped, one '/' put in front. */
static const char *put_path(char **dst, const char *s, size_t n)
{
	char *out = *dst;

	for (;;) {
		if (n >= 1 && s[0] == '/') {
			s++;
			n--;
		} else if (n >= 2 && s[0] == '.' && s[1] == '/') {
			s += 2;
			n -= 2;
		} else {
			break;
		}
	}
	out[0] = '/';
	memcpy(out + 1, s, n);
	out[n + 1] = '\0';
	*dst = out + n + 2;
	return out;
}

/* The next line of `buf[*pos..len)` (every line ends with '\n'). */
static const char *next_line(const char *buf, size_t *pos, size_t *n)
{
	const char *line = buf + *pos;
	const char *nl = strchr(line, '\n');

	*n = (size_t)(nl - line);
	*pos += *n + 1;
	return line;
}

static int known(const struct unpkg_strmap *a, const struct unpkg_strmap *b,
		 const char *path)
{
	return unpkg_strmap_get(a, path) != NULL ||
	       unpkg_strmap_get(b, path) != NULL;
}

int unpkg_divert_parse(struct unpkg_diversions *d, const char *buf,
		       size_t len, const char *shown, struct unpkg_err *err)
{
	struct unpkg_strmap from, to;
	struct load *l = NULL;
	size_t nlines = 0, pos = 0, i;
	char *dst;
	int ret = -1;

	unpkg_strmap_init(&from);
	unpkg_strmap_init(&to);
	for (i = 0; i < len; i++) {
		if (buf[i] == '\0') {
			unpkg_err_set(err, UNPKG_ERR_FORMAT,
				      "NUL byte in '%s'", shown);
			goto out;
		}
		nlines += buf[i] == '\n';
	}
	if (len > 0 && buf[len - 1] != '\n') {
		unpkg_err_set(err, UNPKG_ERR_FORMAT,
			      "too-long line or missing newline in '%s'",
			      shown);
		goto out;
	}
	if (nlines % 3 != 0) {
		unpkg_err_set(err, UNPKG_ERR_FORMAT,
			      "unexpected end of file reading '%s'", shown);
		goto out;
	}
	l = calloc(1, sizeof(*l));
	if (l == NULL ||
	    (l->arena = malloc(len + nlines + 1)) == NULL ||
	    (l->v = calloc(nlines / 3 + 1, sizeof(*l->v))) == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	dst = l->arena;
	while (pos < len) {
		struct unpkg_diversion *dv = &l->v[l->n];
		const char *line;
		size_t n;

		line = next_line(buf, &pos, &n);
		dv->from = put_path(&dst, line, n);
		line = next_line(buf, &pos, &n);
		dv->to = put_path(&dst, line, n);
		line = next_line(buf, &pos, &n);
		if (n == 1 && line[0] == ':') {
			dv->pkg = NULL;
		} else {
			memcpy(dst, line, n);
			dst[n] = '\0';
			dv->pkg = dst;
			dst += n + 1;
		}
		if (known(&from, &to, dv->from) || known(&from, &to, dv->to)) {
			unpkg_err_set(err, UNPKG_ERR_FORMAT,
				      "conflicting diversions involving '%s' "
				      "or '%s'", dv->from, dv->to);
			goto out;
		}
		if (unpkg_strmap_put(&from, dv->from, dv, NULL, err) < 0 ||
		    unpkg_strmap_put(&to, dv->to, dv, NULL, err) < 0)
			goto out;
		l->n++;
	}
	unpkg_strmap_destroy(&d->from);
	unpkg_strmap_destroy(&d->to);
	d->from = from;
	d->to = to;
	unpkg_strmap_init(&from);
	unpkg_strmap_init(&to);
	l->older = d->cur;
	d->cur = l;
	l = NULL;
	ret = 0;
out:
	unpkg_strmap_destroy(&from);
	unpkg_strmap_destroy(&to);
	load_free(l);
	return ret;
}

int unpkg_divert_load(struct unpkg_diversions *d, const struct unpkg_db *db,
		      struct unpkg_err *err)
{
	char *buf = NULL, *shown = NULL;
	size_t len = 0;
	int r;

	r = unpkg_db_read_file(db, "diversions", &buf, &len, &shown, err);
	if (r < 0)
		return -1;
	r = unpkg_divert_parse(d, buf != NULL ? buf : "", len, shown, err);
	free(buf);
	free(shown);
	return r;
}

size_t unpkg_divert_count(const struct unpkg_diversions *d)
{
	return d->cur != NULL ? d->cur->n : 0;
}

const struct unpkg_diversion *unpkg_divert_at(const struct unpkg_diversions *d,
					      size_t i)
{
	return i < unpkg_divert_count(d) ? &d->cur->v[i] : NULL;
}

const struct unpkg_diversion *unpkg_divert_of(const struct unpkg_diversions *d,
					      const char *path)
{
	return d != NULL ? unpkg_strmap_get(&d->from, path) : NULL;
}

const struct unpkg_diversion *
unpkg_divert_onto(const struct unpkg_diversions *d, const char *path)
{
	return d != NULL ? unpkg_strmap_get(&d->to, path) : NULL;
}

int unpkg_divert_applies(const struct unpkg_diversion *dv, const char *pkgname)
{
	size_t len = strcspn(pkgname, ":");

	return dv->pkg == NULL || strlen(dv->pkg) != len ||
	       strncmp(dv->pkg, pkgname, len) != 0;
}

int unpkg_divert_by_either(const struct unpkg_diversions *d, const char *path,
			   const char *a, const char *b, size_t blen)
{
	const struct unpkg_diversion *dv = unpkg_divert_of(d, path);

	return dv != NULL && dv->pkg != NULL &&
	       ((a != NULL && strcmp(dv->pkg, a) == 0) ||
		(strlen(dv->pkg) == blen && strncmp(dv->pkg, b, blen) == 0));
}

const char *unpkg_divert_use(const struct unpkg_diversions *d,
			     const char *path, const char *pkgname)
{
	const struct unpkg_diversion *dv = unpkg_divert_of(d, path);

	return dv != NULL && unpkg_divert_applies(dv, pkgname) ? dv->to : path;
}
