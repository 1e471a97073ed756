/* selections.c - dpkg --set-selections in-process (selections.h).
 *
 * The input is read whole and checked whole before the database
 * changes: dpkg too writes nothing when a line is in error (its write
 * comes after the last line).  A line unpkg does not take hands the
 * whole input to stock dpkg, with the database as it was.
 *
 * dpkg's --set-selections also reads ADMINDIR/available, and the Section
 * and Priority it finds there for a package replace those of the
 * package's status stanza (dpkg keeps both per package, not per version,
 * and writes the status from what it holds): unpkg makes the same
 * change, or leaves the run to dpkg where the change is not one it is
 * sure to make as dpkg does. */
#include "config.h"

#include "selections.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "db.h"
#include "stanza.h"

/* dpkg's c_isspace(). */
static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' ||
	       c == '\r';
}

static int is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* A word of a line: [start, start + len) of the input. */
struct word {
	const char *start;
	size_t len;
};

/* The next "NAME SELECTION" line of t[*pos..len), blank lines and
 * comments skipped as dpkg skips them.  1 with a line, 0 at the end, -1
 * for a line dpkg refuses (a name or a selection cut by the end of the
 * line or of the input, more words, blanks between the selection and the
 * end of the input). */
static int next_line(const char *t, size_t len, size_t *pos,
		     struct word *name, struct word *sel)
{
	size_t i = *pos;

	for (;;) {
		while (i < len && is_space(t[i]))
			i++;
		if (i == len)
			return 0;
		if (t[i] != '#')
			break;
		while (i < len && t[i] != '\n')
			i++;
	}
	name->start = t + i;
	while (i < len && !is_space(t[i]))
		i++;
	name->len = (size_t)(t + i - name->start);
	while (i < len && t[i] != '\n' && is_space(t[i]))
		i++;
	if (i == len || t[i] == '\n')
		return -1;
	sel->start = t + i;
	while (i < len && !is_space(t[i]))
		i++;
	sel->len = (size_t)(t + i - sel->start);
	if (i < len) {
		while (i < len && t[i] != '\n' && is_space(t[i]))
			i++;
		if (i == len || t[i] != '\n')
			return -1;
	}
	*pos = i;
	return 1;
}

/* The selections dpkg takes, as written in a Status field. */
static const char *const wants[] = { "install", "hold", "deinstall",
				     "purge" };

static const char *find_want(const struct word *sel)
{
	size_t i;

	for (i = 0; i < sizeof(wants) / sizeof(wants[0]); i++)
		if (strlen(wants[i]) == sel->len &&
		    memcmp(wants[i], sel->start, sel->len) == 0)
			return wants[i];
	return NULL;
}

/* A package name of the characters dpkg takes without folding case. */
static int plain_name(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || !is_lower_alnum(s[0]))
		return 0;
	for (i = 1; i < len; i++)
		if (!is_lower_alnum(s[i]) && s[i] != '+' && s[i] != '-' &&
		    s[i] != '.')
			return 0;
	return 1;
}

/* Split "name[:arch]" into NUL-terminated `name` and `arch` ("" for
 * none), a plain_name() and an architecture of lower-case letters,
 * digits and '-': 0, or -1 where unpkg leaves the word to dpkg. */
static int split_name(const struct word *w, char *name, char *arch,
		      size_t size)
{
	const char *colon = memchr(w->start, ':', w->len);
	size_t nlen = colon != NULL ? (size_t)(colon - w->start) : w->len;
	size_t alen = colon != NULL ? w->len - nlen - 1 : 0;
	size_t i;

	if (nlen >= size || alen >= size || (colon != NULL && alen == 0) ||
	    !plain_name(w->start, nlen))
		return -1;
	for (i = 0; i < alen; i++)
		if (!is_lower_alnum(colon[1 + i]) && colon[1 + i] != '-')
			return -1;
	memcpy(name, w->start, nlen);
	name[nlen] = '\0';
	memcpy(arch, colon != NULL ? colon + 1 : "", alen);
	arch[alen] = '\0';
	return 0;
}

/* The index of the installed instance that dpkg picks for `name` (and
 * `arch` unless ""), or unpkg_db_count() where dpkg would pick none, or
 * pick one from the available file or by rules unpkg leaves to it. */
static size_t find_instance(const struct unpkg_db *db, const char *name,
			    const char *arch)
{
	size_t n = unpkg_db_count(db), i, found = n, matches = 0;

	for (i = unpkg_db_find_first(db, name); i < n; i++) {
		const struct unpkg_db_pkg *q = unpkg_db_at(db, i);
		enum unpkg_status st = unpkg_db_pkg_state(q);

		if (strcmp(q->name, name) != 0)
			break;
		if (st == UNPKG_STATUS_INVALID || q->arch[0] == '\0')
			return n;
		if (arch[0] != '\0' && strcmp(q->arch, arch) != 0)
			continue;
		if (st == UNPKG_STATUS_NOT_INSTALLED)
			return n;
		found = i;
		matches++;
	}
	return matches == 1 ? found : n;
}

/* The changes to one package's stanza: its selection, its Section and
 * Priority from the available file (each NULL: as it is). */
struct change {
	const char *want;
	char *section, *priority;
};

/* Make `c` in `q`'s stanza. */
static int apply(struct unpkg_db *db, const struct unpkg_db_pkg *q,
		 const struct change *c, struct unpkg_err *err)
{
	struct unpkg_para para;
	const char *old_want, *flag, *status;
	char value[96], *name = NULL, *arch = NULL, *text = NULL;
	int ret = -1;

	unpkg_para_init(&para);
	if (unpkg_db_pkg_status(q, &old_want, &flag, &status) < 0) {
		unpkg_err_set(err, UNPKG_ERR_FORMAT, "%s: bad Status", q->key);
		goto out;
	}
	snprintf(value, sizeof(value), "%s %s %s",
		 c->want != NULL ? c->want : old_want, flag, status);
	/* the put replaces q: what it reads of q is copied first */
	if ((name = strdup(q->name)) == NULL ||
	    (arch = strdup(q->arch)) == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	if (unpkg_para_copy(&para, &q->para, err) < 0 ||
	    unpkg_para_set(&para, "Status", value, err) < 0 ||
	    (c->section != NULL &&
	     unpkg_para_set(&para, "Section", c->section, err) < 0) ||
	    (c->priority != NULL &&
	     unpkg_para_set(&para, "Priority", c->priority, err) < 0))
		goto out;
	if ((text = unpkg_para_format(&para)) == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	ret = unpkg_db_put(db, name, arch, text, err);
out:
	free(text);
	free(arch);
	free(name);
	unpkg_para_destroy(&para);
	return ret;
}

/* Why the database itself is left to dpkg: packages awaiting triggers,
 * which dpkg's open for writing may move on (its trig_fixup_awaiters()),
 * or NULL. */
static const char *db_for_dpkg(const struct unpkg_db *db)
{
	size_t i, n = unpkg_db_count(db);

	for (i = 0; i < n; i++) {
		const char *aw = unpkg_para_get(&unpkg_db_at(db, i)->para,
						"Triggers-Awaited");

		if (aw != NULL && aw[0] != '\0')
			return "a package awaits triggers";
	}
	return NULL;
}

/* dpkg's priorities, as it writes them. */
static const char *const priorities[] = { "required", "important",
					  "standard", "optional", "extra" };

static int known_priority(const char *v)
{
	size_t i;

	for (i = 0; i < sizeof(priorities) / sizeof(priorities[0]); i++)
		if (strcmp(v, priorities[i]) == 0)
			return 1;
	return 0;
}

/* The index of the instance whose Section and Priority dpkg takes from
 * the available stanza `a` (of package `name`, architecture `arch`):
 * the package's one installed instance unless `a` is Multi-Arch: same,
 * else the instance of `arch`; unpkg_db_count() for none.  *why is set
 * where dpkg's choice is not one unpkg makes (a name with instances not
 * installed, whose slots dpkg reuses by rules of its own). */
static size_t available_slot(const struct unpkg_db *db, const char *name,
			     const char *arch, int same, const char **why)
{
	size_t n = unpkg_db_count(db), i, first = unpkg_db_find_first(db,
								     name);
	size_t installed = 0, by_arch = n;

	for (i = first; i < n; i++) {
		const struct unpkg_db_pkg *q = unpkg_db_at(db, i);
		enum unpkg_status st = unpkg_db_pkg_state(q);

		if (strcmp(q->name, name) != 0)
			break;
		if (st == UNPKG_STATUS_INVALID ||
		    st == UNPKG_STATUS_NOT_INSTALLED) {
			*why = "the available file names a package with "
			       "a selection only";
			return n;
		}
		installed++;
		if (strcmp(q->arch, arch) == 0)
			by_arch = i;
	}
	return installed == 1 && !same ? first : by_arch;
}

/* Take Section and Priority from the available file into `ch`, where
 * they change a stanza.  0 (*why set where the file is left to dpkg),
 * or -1. */
static int read_available(const struct unpkg_db *db, struct change *ch,
			  const char **why, struct unpkg_err *err)
{
	struct unpkg_para a;
	struct unpkg_err perr;
	char *buf = NULL, *shown = NULL;
	size_t len, pos = 0, line = 1, n = unpkg_db_count(db), i;
	int r, ret = -1;

	unpkg_para_init(&a);
	r = unpkg_db_read_file(db, "available", &buf, &len, &shown, err);
	if (r <= 0) {
		ret = r;
		goto out;
	}
	unpkg_err_init(&perr);
	while (*why == NULL &&
	       (r = unpkg_para_next(buf, len, &pos, &line, &a, &perr)) > 0) {
		const char *name = unpkg_para_get(&a, "Package");
		const char *arch = unpkg_para_get(&a, "Architecture");
		const char *ma = unpkg_para_get(&a, "Multi-Arch");
		const char *sect = unpkg_para_get(&a, "Section");
		const char *prio = unpkg_para_get(&a, "Priority");
		const struct unpkg_db_pkg *q;
		const char *warning = NULL;
		char **dst[2];
		const char *val[2];
		int k;

		/* (a stanza dpkg's parser warns about or refuses is dpkg's
		 * to report) */
		if (unpkg_stanza_check_control(&a, &warning, &perr) < 0 ||
		    warning != NULL || arch == NULL ||
		    !plain_name(name, strlen(name)) ||
		    (prio != NULL && !known_priority(prio))) {
			*why = "an available stanza unpkg leaves to dpkg";
			break;
		}
		i = available_slot(db, name, arch,
				   ma != NULL && strcmp(ma, "same") == 0, why);
		if (i == n || *why != NULL)
			goto next;
		q = unpkg_db_at(db, i);
		dst[0] = &ch[i].section;
		val[0] = sect != NULL && sect[0] != '\0' ? sect : NULL;
		dst[1] = &ch[i].priority;
		val[1] = prio;
		for (k = 0; k < 2; k++) {
			const char *now = unpkg_para_get(&q->para, k == 0
							 ? "Section"
							 : "Priority");

			if (val[k] == NULL)
				continue;
			/* (a field the stanza lacks goes where dpkg's
			 * order puts it: left to dpkg) */
			if (now == NULL) {
				*why = "the available file gives a package a "
				       "Section or Priority its stanza lacks";
				break;
			}
			free(*dst[k]);
			*dst[k] = NULL;
			if (strcmp(now, val[k]) != 0 &&
			    (*dst[k] = strdup(val[k])) == NULL) {
				unpkg_err_nomem(err);
				goto out;
			}
		}
next:
		unpkg_para_destroy(&a);
	}
	if (r < 0)
		*why = "an available file unpkg cannot read as dpkg";
	ret = 0;
out:
	unpkg_para_destroy(&a);
	free(shown);
	free(buf);
	return ret;
}

int unpkg_set_selections(const struct unpkg_install_opts *o,
			 const char *text, size_t len, const char **why,
			 struct unpkg_err *err)
{
	struct unpkg_stats own = { 0 };
	struct unpkg_stats *stats = o->stats != NULL ? o->stats : &own;
	struct unpkg_db *db = NULL;
	struct change *ch = NULL;
	char name[256], arch[256];
	struct word w, s;
	size_t pos = 0, n = 0, i;
	int ret = -1, r;

	*why = NULL;
	if (unpkg_db_open(o->admindir, o->frontend_lock
			  ? UNPKG_DB_LOCK_FRONTEND : 0, &db, err) < 0)
		goto out;
	n = unpkg_db_count(db);
	if ((*why = db_for_dpkg(db)) != NULL) {
		ret = UNPKG_SELECTIONS_DPKG;
		goto out;
	}
	ch = calloc(n + 1, sizeof(*ch));
	if (ch == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	while ((r = next_line(text, len, &pos, &w, &s)) > 0) {
		const char *want = find_want(&s);

		if (split_name(&w, name, arch, sizeof(name)) < 0)
			*why = "a package name unpkg leaves to dpkg";
		else if ((i = find_instance(db, name, arch)) == n)
			*why = "a package without the one installed instance "
			       "named";
		else if (want == NULL)
			*why = "a selection unpkg leaves to dpkg";
		if (*why != NULL) {
			ret = UNPKG_SELECTIONS_DPKG;
			goto out;
		}
		ch[i].want = want;	/* the last line wins, as in dpkg */
	}
	if (r < 0)
		*why = "a line dpkg refuses";
	else if (read_available(db, ch, why, err) < 0)
		goto out;
	if (*why != NULL) {
		ret = UNPKG_SELECTIONS_DPKG;
		goto out;
	}
	for (i = 0; i < n; i++)
		if ((ch[i].want != NULL || ch[i].section != NULL ||
		     ch[i].priority != NULL) &&
		    apply(db, unpkg_db_at(db, i), &ch[i], err) < 0)
			goto out;
	if ((o->sync_auto &&
	     unpkg_db_order_writes_where_ordered(db, &stats->sync_file_range,
						 err) < 0) ||
	    unpkg_db_write(db, &stats->fsync, err) < 0)
		goto out;
	ret = UNPKG_SELECTIONS_SET;
out:
	for (i = 0; ch != NULL && i < n; i++) {
		free(ch[i].section);
		free(ch[i].priority);
	}
	free(ch);
	unpkg_db_free(db);
	return ret;
}
