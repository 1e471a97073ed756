/* trigproc.c - trigger processing as dpkg 1.21's src/main/trigproc.c does
 * it (see trigproc.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "depends.h"
#include "install-impl.h"
#include "stanza.h"
#include "trigproc.h"

/* A package of the database as trigger processing sees it. */
struct tp {
	char *name, *arch, *key;	/* arch "" for none */
	size_t at;			/* its index in the database */
	char *version;			/* its Version, or NULL */
	char *config_version;		/* the version last configured */
	enum unpkg_status st;
	char want[16], flag[16];
	char **pend;			/* Triggers-Pending, in order */
	size_t npend;
	char **aw;			/* Triggers-Awaited: keys */
	size_t naw;
	int queued;			/* in the deferred queue */
	int dirty;			/* to be put into the database */
	int shown;			/* st reported */
};

/* A snapshot of the pending triggers of every package (dpkg's
 * trigcyclenode), for the cycle detection. */
struct snap_pkg {
	size_t pkg;
	char **trigs;
	size_t ntrigs;
};

struct snap {
	size_t processed;	/* the package processed then */
	struct snap_pkg *pkgs;
	size_t npkgs;
};

struct tpr {
	struct run r;
	struct unpkg_stats own;
	struct tp *v;
	size_t n;
	size_t *order;		/* v in dpkg's hash order */
	size_t *deferred;	/* dpkg's deferred queue */
	size_t ndeferred, capdeferred, deferred_at;
	int enqueue_new;	/* activations join the deferred queue */
	struct snap *snaps;	/* tortoise and hare: snaps[tortoise] and
				 * the last one */
	size_t nsnaps, tortoise;
	int tortoise_advance;
	int failed;
};

/* --- small helpers -------------------------------------------------------- */

static void strv_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static int strv_find(char *const *v, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return (int)i;
	return -1;
}

/* Insert a copy of `s` at position `at` (0 prepends, n appends). */
static int strv_insert(char ***v, size_t *n, size_t at, const char *s,
		       struct unpkg_err *err)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));
	char *c = strdup(s);

	if (nv != NULL)
		*v = nv;
	if (nv == NULL || c == NULL) {
		free(c);
		return unpkg_err_nomem(err);
	}
	memmove(nv + at + 1, nv + at, (*n - at) * sizeof(*nv));
	nv[at] = c;
	(*n)++;
	return 0;
}

static void strv_remove(char **v, size_t *n, size_t at)
{
	free(v[at]);
	memmove(v + at, v + at + 1, (*n - at - 1) * sizeof(*v));
	(*n)--;
}

/* Split the blank-separated `list` into a vector. */
static int strv_split(const char *list, char ***v, size_t *n,
		      struct unpkg_err *err)
{
	const char *s = list;

	while (s != NULL && *s != '\0') {
		size_t l;
		char *w;

		s += strspn(s, " \t\n");
		l = strcspn(s, " \t\n");
		if (l == 0)
			break;
		w = strndup(s, l);
		if (w == NULL)
			return unpkg_err_nomem(err);
		if (strv_insert(v, n, *n, w, err) < 0) {
			free(w);
			return -1;
		}
		free(w);
		s += l;
	}
	return 0;
}

/* Reverse the `n` strings of `v` in place. */
static void strv_reverse(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n / 2; i++) {
		char *x = v[i];

		v[i] = v[n - 1 - i];
		v[n - 1 - i] = x;
	}
}

static char *strv_join(char *const *v, size_t n)
{
	struct unpkg_buf b = { 0 };
	struct unpkg_err err;
	size_t i;

	unpkg_err_init(&err);
	for (i = 0; i < n; i++)
		if (unpkg_buf_printf(&b, &err, "%s%s", i > 0 ? " " : "",
				     v[i]) < 0) {
			unpkg_buf_free(&b);
			return NULL;
		}
	if (b.s == NULL)
		return strdup("");
	return b.s;
}

/* --- triggers/Unincorp ---------------------------------------------------- */

static int pkgname_char(char c, int first)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-' ||
	       (!first && (c == ':' || c == '+' || c == '.'));
}

int unpkg_unincorp_parse(const char *text, size_t len, unpkg_unincorp_fn *fn,
			 void *ctx, struct unpkg_err *err)
{
	char *buf = strndup(text != NULL ? text : "", len), *line, *save = NULL;
	int ret = -1;
	size_t no = 0;

	if (buf == NULL)
		return unpkg_err_nomem(err);
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		char *p = line, *trig;

		no++;
		p += strspn(p, " \t");
		if (*p == '\0' || *p == '#')
			continue;
		trig = p;
		while (*p > 0x20 && *p < 0x7f)
			p++;
		if (*p == '\0') {
			unpkg_err_set(err, UNPKG_ERR_FORMAT, "syntax error in "
				      "triggers deferred file at line %zu",
				      no);
			goto out;
		}
		*p++ = '\0';
		for (;;) {
			char *pkg;

			p += strspn(p, " \t");
			if (*p == '\0' || *p == '#')
				break;
			pkg = p;
			if (!pkgname_char(*p, 1)) {
				unpkg_err_set(err, UNPKG_ERR_FORMAT, "syntax "
					      "error in triggers deferred "
					      "file at line %zu", no);
				goto out;
			}
			while (*++p != '\0' && pkgname_char(*p, 0))
				;
			if (*p != '\0' && *p != ' ' && *p != '\t' &&
			    *p != '#') {
				unpkg_err_set(err, UNPKG_ERR_FORMAT, "syntax "
					      "error in triggers deferred "
					      "file at line %zu", no);
				goto out;
			}
			if (*p != '\0' && *p != '#')
				*p++ = '\0';
			else if (*p == '#')
				*p = '\0';
			if (pkg[0] == '-' && pkg[1] != '\0') {
				unpkg_err_set(err, UNPKG_ERR_FORMAT, "invalid "
					      "package name '%s' in triggers "
					      "deferred file", pkg);
				goto out;
			}
			if (fn(ctx, trig, strcmp(pkg, "-") == 0 ? NULL : pkg,
			       err) < 0)
				goto out;
		}
	}
	ret = 0;
out:
	free(buf);
	return ret;
}

/* --- the packages ------------------------------------------------------------ */

static struct tp *find_key(struct tpr *t, const char *key)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->v[i].key, key) == 0)
			return &t->v[i];
	/* "name" for a package known by "name:arch", as dpkg's parser */
	for (i = 0; strchr(key, ':') == NULL && i < t->n; i++)
		if (strcmp(t->v[i].name, key) == 0)
			return &t->v[i];
	return NULL;
}

static void report(struct tpr *t, struct tp *p)
{
	unpkg_event_pkg_status(t->r.o->events, p->key, p->arch, p->version,
			       unpkg_status_name(p->st));
}

/* Set the state of `p` in memory (reported, as dpkg's modstatdb_note
 * does, when it changes). */
static void set_state(struct tpr *t, struct tp *p, enum unpkg_status st)
{
	p->dirty = 1;
	if (p->st == st)
		return;
	p->st = st;
	report(t, p);
}

static int is_trig_state(enum unpkg_status st)
{
	return st == UNPKG_STATUS_TRIGGERS_AWAITED ||
	       st == UNPKG_STATUS_TRIGGERS_PENDING;
}

/* Put the state of `p` into the database in memory: its stanza with the
 * new Status, Triggers-Pending and Triggers-Awaited. */
static int store(struct tpr *t, struct tp *p, struct unpkg_err *err)
{
	const struct unpkg_db_pkg *dp;
	struct unpkg_stanza_state st = { 0 };
	struct unpkg_para para;
	char *pend = NULL, *aw = NULL, *conffiles = NULL, *cv = NULL;
	char *text = NULL;
	const char *v;
	int ret = -1;

	dp = unpkg_db_find(t->r.db, p->name, p->arch[0] != '\0' ? p->arch
							       : NULL);
	if (dp == NULL)
		return 0;
	unpkg_para_init(&para);
	if (unpkg_para_copy(&para, &dp->para, err) < 0)
		goto out;
	if ((p->npend > 0 && (pend = strv_join(p->pend, p->npend)) == NULL) ||
	    (p->naw > 0 && (aw = strv_join(p->aw, p->naw)) == NULL) ||
	    ((v = unpkg_para_get(&para, "Conffiles")) != NULL &&
	     (conffiles = strdup(v)) == NULL) ||
	    (p->config_version != NULL &&
	     p->st != UNPKG_STATUS_TRIGGERS_PENDING &&
	     (cv = strdup(p->config_version)) == NULL)) {
		unpkg_err_nomem(err);
		goto out;
	}
	st.want = p->want;
	st.flag = p->flag;
	st.status = unpkg_status_name(p->st);
	st.conffiles = conffiles;
	st.config_version = cv;
	st.triggers_pending = pend;
	st.triggers_awaited = aw;
	unpkg_para_unset(&para, "Status");
	unpkg_para_unset(&para, "Config-Version");
	unpkg_para_unset(&para, "Conffiles");
	unpkg_para_unset(&para, "Triggers-Pending");
	unpkg_para_unset(&para, "Triggers-Awaited");
	if (unpkg_stanza_format(&para, &st, &text, err) < 0 ||
	    run_put(&t->r, p->name, p->arch[0] != '\0' ? p->arch : NULL, text,
		    err) < 0)
		goto out;
	p->dirty = 0;
	ret = 0;
out:
	free(pend);
	free(aw);
	free(conffiles);
	free(cv);
	free(text);
	unpkg_para_destroy(&para);
	return ret;
}

static int store_all(struct tpr *t, struct unpkg_err *err)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->v[i].dirty && store(t, &t->v[i], err) < 0)
			return -1;
	return 0;
}

/* t->order: the packages of t->v in the order dpkg walks its package
 * table. */
static int order_v(struct tpr *t, struct unpkg_err *err)
{
	size_t n = unpkg_db_count(t->r.db), i, k = 0;
	size_t *walk = unpkg_db_walk_order(t->r.db, err);
	size_t *in_v = calloc(n + 1, sizeof(*in_v));	/* at -> index + 1 */
	int ret = -1;

	if (walk == NULL)
		goto out;
	if (in_v == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	for (i = 0; i < t->n; i++)
		in_v[t->v[i].at] = i + 1;
	for (i = 0; i < n; i++)
		if (in_v[walk[i]] != 0)
			t->order[k++] = in_v[walk[i]] - 1;
	ret = 0;
out:
	free(walk);
	free(in_v);
	return ret;
}

static int load(struct tpr *t, struct unpkg_err *err)
{
	size_t i, n = unpkg_db_count(t->r.db);

	t->v = calloc(n + 1, sizeof(*t->v));
	t->order = calloc(n + 1, sizeof(*t->order));
	if (t->v == NULL || t->order == NULL)
		return unpkg_err_nomem(err);
	for (i = 0; i < n; i++) {
		const struct unpkg_db_pkg *dp = unpkg_db_at(t->r.db, i);
		const char *want, *flag, *status, *v;
		struct tp *p = &t->v[t->n];

		if (unpkg_db_pkg_status(dp, &want, &flag, &status) < 0)
			continue;
		t->n++;
		p->at = i;
		p->name = strdup(dp->name);
		p->arch = strdup(dp->arch);
		p->key = strdup(dp->key);
		if (p->name == NULL || p->arch == NULL || p->key == NULL)
			return unpkg_err_nomem(err);
		snprintf(p->want, sizeof(p->want), "%s", want);
		snprintf(p->flag, sizeof(p->flag), "%s", flag);
		p->st = unpkg_db_pkg_state(dp);
		if (unpkg_para_get(&dp->para, "Version") != NULL &&
		    (p->version = strdup(unpkg_para_get(&dp->para,
							"Version"))) == NULL)
			return unpkg_err_nomem(err);
		/* Config-Version, or as dpkg reads it, the Version of an
		 * installed or triggers-pending package */
		v = unpkg_para_get(&dp->para, "Config-Version");
		if (v == NULL && (p->st == UNPKG_STATUS_INSTALLED ||
				  p->st == UNPKG_STATUS_TRIGGERS_PENDING))
			v = p->version;
		if (v != NULL && (p->config_version = strdup(v)) == NULL)
			return unpkg_err_nomem(err);
		if (strv_split(unpkg_para_get(&dp->para, "Triggers-Pending"),
			       &p->pend, &p->npend, err) < 0 ||
		    strv_split(unpkg_para_get(&dp->para, "Triggers-Awaited"),
			       &p->aw, &p->naw, err) < 0)
			return -1;
		/* dpkg reads the field word by word onto the front of its
		 * list, and names the triggers to the postinst, and writes
		 * them back, from the front */
		strv_reverse(p->pend, p->npend);
	}
	return order_v(t, err);
}

/* --- activations (dpkg's trig_record_activation) --------------------------- */

static int enqueue_deferred(struct tpr *t, struct tp *p,
			    struct unpkg_err *err)
{
	size_t *v;

	if (!t->enqueue_new || p->queued)
		return 0;
	if (t->ndeferred == t->capdeferred) {
		size_t cap = t->capdeferred ? t->capdeferred * 2 : 16;

		v = realloc(t->deferred, cap * sizeof(*v));
		if (v == NULL)
			return unpkg_err_nomem(err);
		t->deferred = v;
		t->capdeferred = cap;
	}
	t->deferred[t->ndeferred++] = (size_t)(p - t->v);
	p->queued = 1;
	return 0;
}

/* Trigger `trig` of `pend` activated, awaited by `aw` (NULL: none). */
static int record_activation(struct tpr *t, struct tp *pend, struct tp *aw,
			     const char *trig, struct unpkg_err *err)
{
	if (pend->st < UNPKG_STATUS_TRIGGERS_AWAITED)
		return 0;	/* not interested then */
	if (strv_find(pend->pend, pend->npend, trig) < 0) {
		if (strv_insert(&pend->pend, &pend->npend, 0, trig, err) < 0)
			return -1;
		set_state(t, pend, pend->naw > 0
				   ? UNPKG_STATUS_TRIGGERS_AWAITED
				   : UNPKG_STATUS_TRIGGERS_PENDING);
	}
	if (enqueue_deferred(t, pend, err) < 0)
		return -1;
	if (aw != NULL && strv_find(aw->aw, aw->naw, pend->key) < 0) {
		if (strv_insert(&aw->aw, &aw->naw, aw->naw, pend->key,
				err) < 0)
			return -1;
		aw->dirty = 1;
		if (aw->st > UNPKG_STATUS_TRIGGERS_AWAITED)
			set_state(t, aw, UNPKG_STATUS_TRIGGERS_AWAITED);
	}
	return 0;
}

struct incorp {
	struct tpr *t;
	const char *trigger;
	struct tp *aw;
};

static int incorp_interest(void *ctx, const char *trigger, const char *pkg,
			   int noawait, struct unpkg_err *err)
{
	struct incorp *c = ctx;
	struct tp *pend;

	/* a path activates the file triggers of that very path */
	if (strcmp(trigger, c->trigger) != 0)
		return 0;
	pend = find_key(c->t, pkg);
	if (pend == NULL)
		return 0;
	return record_activation(c->t, pend, noawait ? NULL : c->aw, trigger,
				 err);
}

static int incorp_line(void *ctx, const char *trigger, const char *awaiter,
		       struct unpkg_err *err)
{
	struct incorp c = { ctx, trigger, NULL };

	if (awaiter != NULL)
		c.aw = find_key(c.t, awaiter);
	return unpkg_triggers_interested(c.t->r.trig, trigger,
					 incorp_interest, &c, err);
}

/* Replace triggers/Unincorp by an empty file (dpkg's new Unincorp once it
 * incorporated the old one).  Not synced: the database that holds its
 * activations is durable already, and a lost emptying only activates
 * them again. */
static int empty_unincorp(struct tpr *t, struct unpkg_err *err)
{
	int dfd = unpkg_db_dirfd(t->r.db);
	int fd = openat(dfd, "triggers/Unincorp.new", O_WRONLY | O_CREAT |
			O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);

	if (fd < 0 || close(fd) < 0 ||
	    renameat(dfd, "triggers/Unincorp.new", dfd,
		     "triggers/Unincorp") < 0)
		return unpkg_err_sys(err, "cannot empty %s/triggers/Unincorp",
				     t->r.o->admindir);
	return 0;
}

/* dpkg's trig_incorporate(): the activations scripts left in
 * triggers/Unincorp go into the database in memory, which is then made
 * durable before the file is emptied. */
static int incorporate(struct tpr *t, struct unpkg_err *err)
{
	char *buf, *shown;
	size_t len;
	int ret = -1;

	if (unpkg_db_read_file(t->r.db, "triggers/Unincorp", &buf, &len,
			       &shown, err) < 0)
		return -1;
	free(shown);
	if (buf == NULL || len == 0) {
		free(buf);
		return 0;
	}
	if (unpkg_unincorp_parse(buf, len, incorp_line, t, err) < 0)
		goto out;
	if (store_all(t, err) < 0 ||
	    (t->r.db_dirty && run_write_db(&t->r, err) < 0) ||
	    empty_unincorp(t, err) < 0)
		goto out;
	ret = 0;
out:
	free(buf);
	return ret;
}

/* --- awaiters ---------------------------------------------------------------- */

/* `notpend` has no triggers pending any more: the packages that awaited
 * it no longer do (dpkg's trig_clear_awaiters). */
static void clear_awaiters(struct tpr *t, struct tp *notpend)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		struct tp *aw = &t->v[i];
		int at = strv_find(aw->aw, aw->naw, notpend->key);

		if (at < 0)
			continue;
		strv_remove(aw->aw, &aw->naw, (size_t)at);
		aw->dirty = 1;
		if (aw->naw == 0 && aw->st == UNPKG_STATUS_TRIGGERS_AWAITED)
			set_state(t, aw, aw->npend > 0
				  ? UNPKG_STATUS_TRIGGERS_PENDING
				  : UNPKG_STATUS_INSTALLED);
	}
}

/* The state of `p` changed to `st` by dpkg's modstatdb_note(): outside
 * the trigger states its pending triggers go, and with them its hold on
 * the packages that awaited it. */
static void note(struct tpr *t, struct tp *p, enum unpkg_status st)
{
	if (!is_trig_state(st)) {
		strv_free(p->pend, p->npend);
		p->pend = NULL;
		p->npend = 0;
	}
	set_state(t, p, st);
	if (p->npend == 0)
		clear_awaiters(t, p);
}

/* --- cycle detection (dpkg's check_trigger_cycle) ------------------------ */

static void snaps_free(struct tpr *t)
{
	size_t i, j;

	for (i = 0; i < t->nsnaps; i++) {
		for (j = 0; j < t->snaps[i].npkgs; j++)
			strv_free(t->snaps[i].pkgs[j].trigs,
				  t->snaps[i].pkgs[j].ntrigs);
		free(t->snaps[i].pkgs);
	}
	free(t->snaps);
	t->snaps = NULL;
	t->nsnaps = 0;
	t->tortoise = 0;
	t->tortoise_advance = 0;
}

/* A snapshot of every package's pending triggers, the packages in the
 * reverse of dpkg's hash order (dpkg prepends them). */
static int snap_take(struct tpr *t, size_t now, struct unpkg_err *err)
{
	struct snap *v = realloc(t->snaps, (t->nsnaps + 1) * sizeof(*v));
	struct snap *s;
	size_t i, j;

	if (v == NULL)
		return unpkg_err_nomem(err);
	t->snaps = v;
	s = &v[t->nsnaps++];
	memset(s, 0, sizeof(*s));
	s->processed = now;
	s->pkgs = calloc(t->n + 1, sizeof(*s->pkgs));
	if (s->pkgs == NULL)
		return unpkg_err_nomem(err);
	for (i = t->n; i-- > 0;) {
		struct tp *p = &t->v[t->order[i]];
		struct snap_pkg *sp = &s->pkgs[s->npkgs];

		if (p->npend == 0)
			continue;
		sp->pkg = t->order[i];
		s->npkgs++;
		for (j = 0; j < p->npend; j++)
			if (strv_insert(&sp->trigs, &sp->ntrigs, sp->ntrigs,
					p->pend[j], err) < 0)
				return -1;
	}
	return 0;
}

/* The package to give up on, or NULL. */
static struct tp *check_cycle(struct tpr *t, struct tp *now,
			      struct unpkg_err *err)
{
	struct unpkg_buf msg = { 0 };
	const struct snap *tor;
	struct tp *giveup;
	size_t i, j;

	if (snap_take(t, (size_t)(now - t->v), err) < 0)
		return (struct tp *)-1;
	if (t->nsnaps == 1)
		return NULL;
	if (t->tortoise_advance)
		t->tortoise++;
	t->tortoise_advance = !t->tortoise_advance;
	tor = &t->snaps[t->tortoise];
	for (i = 0; i < tor->npkgs; i++) {
		const struct tp *p = &t->v[tor->pkgs[i].pkg];

		for (j = 0; j < tor->pkgs[i].ntrigs; j++)
			if (strv_find(p->pend, p->npend,
				      tor->pkgs[i].trigs[j]) < 0)
				return NULL;	/* progress */
	}
	/* the pending triggers now are a superset of the tortoise's: no
	 * progress */
	unpkg_buf_printf(&msg, err, "cycle found while processing triggers:\n"
			 " chain of packages whose triggers are or may be "
			 "responsible:\n");
	for (i = t->tortoise; i < t->nsnaps; i++)
		unpkg_buf_printf(&msg, err, "%s%s", i == t->tortoise ? "  "
				 : " -> ", t->v[t->snaps[i].processed].key);
	unpkg_buf_printf(&msg, err, "\n packages' pending triggers which are "
			 "or may be unresolvable:");
	for (i = 0; i < tor->npkgs; i++) {
		unpkg_buf_printf(&msg, err, "\n  %s",
				 t->v[tor->pkgs[i].pkg].key);
		for (j = 0; j < tor->pkgs[i].ntrigs; j++)
			unpkg_buf_printf(&msg, err, "%s%s", j == 0 ? ": " : " ",
					 tor->pkgs[i].trigs[j]);
	}
	unpkg_event_emit(t->r.o->events, UNPKG_EV_NOTICE, now->key, "%s",
			 msg.s != NULL ? msg.s : "cycle found while "
			 "processing triggers");
	unpkg_buf_free(&msg);
	/* dpkg gives up on the earliest package involved */
	giveup = &t->v[tor->pkgs[0].pkg];
	note(t, giveup, UNPKG_STATUS_HALF_CONFIGURED);
	unpkg_event_emit(t->r.o->events, UNPKG_EV_ERROR, giveup->key,
			 "triggers looping, abandoned");
	t->failed++;
	return giveup;
}

/* --- dependencies ------------------------------------------------------------- */

enum dep_check { DEP_HALT, DEP_DEFER, DEP_OK };

struct dep_ctx {
	int defer_ok;	/* accept the packages that may come right */
};

static int dep_usable(void *ctx, const struct unpkg_db_pkg *dp)
{
	const struct dep_ctx *c = ctx;
	enum unpkg_status st = unpkg_db_pkg_state(dp);

	return st == UNPKG_STATUS_INSTALLED ||
	       st == UNPKG_STATUS_TRIGGERS_PENDING ||
	       (c->defer_ok && st == UNPKG_STATUS_TRIGGERS_AWAITED);
}

/* Depends and Pre-Depends of `p`: met (by installed or triggers-pending
 * packages), to wait for (a triggers-awaited package meets them), or not
 * met (`why` says how, in dpkg's words). */
static int deps_check(struct tpr *t, struct tp *p, struct unpkg_buf *why,
		      struct unpkg_err *err)
{
	static const char *const verbs[] = { "pre-depends on", "depends on" };
	const struct unpkg_db_pkg *dp;
	struct unpkg_relations rels[2];
	enum dep_check res = DEP_OK;
	size_t f, i, j;

	dp = unpkg_db_find(t->r.db, p->name, p->arch[0] != '\0' ? p->arch
							       : NULL);
	if (dp == NULL)
		return DEP_OK;
	if (unpkg_pkgindex_build(&t->r.index, err) < 0)
		return -1;
	if (unpkg_para_depends(&dp->para, 0, rels, err) < 0) {
		unpkg_para_depends_destroy(rels);
		return -1;
	}
	for (f = 0; f < 2; f++) {
		for (i = 0; i < rels[f].count; i++) {
			const struct unpkg_relation *rel = &rels[f].rels[i];
			struct unpkg_relations one = { .rels = &rels[f].rels[i],
						       .count = 1 };
			struct dep_ctx now = { 0 }, later = { 1 };
			int met = 0, wait = 0;
			char *text;

			for (j = 0; j < rel->count; j++) {
				const struct unpkg_relation_alt *a =
					&rel->alts[j];
				const struct unpkg_candidate *c =
					unpkg_pkgindex_candidates(&t->r.index,
								  a->name);

				met |= depends_alt_met(a, c, dep_usable, &now);
				wait |= depends_alt_met(a, c, dep_usable,
							&later);
			}
			if (met)
				continue;
			if (wait) {
				if (res == DEP_OK)
					res = DEP_DEFER;
				continue;
			}
			res = DEP_HALT;
			text = unpkg_relations_format(&one);
			unpkg_buf_printf(why, err, " %s %s %s; however:\n",
					 p->key, verbs[f],
					 text != NULL ? text : "?");
			free(text);
			for (j = 0; j < rel->count; j++) {
				const char *n = rel->alts[j].name;
				const struct unpkg_db_pkg *q =
					unpkg_db_find(t->r.db, n, NULL);
				enum unpkg_status st =
					q != NULL ? unpkg_db_pkg_state(q)
						  : UNPKG_STATUS_INVALID;

				unpkg_buf_printf(why, err,
					"  Package %s %s.\n", n,
					st == UNPKG_STATUS_UNPACKED ||
					st == UNPKG_STATUS_HALF_CONFIGURED
					? "is not configured yet"
					: "is not installed");
			}
		}
	}
	unpkg_para_depends_destroy(rels);
	return (int)res;
}

/* --- processing one package (dpkg's trigproc()) -------------------------- */

/* Run the postinst of `p` with "triggered NAMES".  1 done, 0 failed
 * (`why`), -1 error. */
static int run_triggered(struct tpr *t, struct tp *p, const char *names,
			 char *why, size_t whysize, struct unpkg_err *err)
{
	const char *argv[] = { "triggered", names, NULL };
	struct deconf d = { 0 };

	d.name = p->name;
	d.arch = p->arch;
	d.key = p->key;
	return maint_run_other(&t->r, &d, "postinst", argv, why, whysize,
			       err);
}

/* 1 processed (or given up), 0 deferred, -1 error. */
static int trigproc(struct tpr *t, struct tp *p, int deferred,
		    int force_defer, struct unpkg_err *err)
{
	struct unpkg_buf why = { 0 };
	struct tp *gaveup;
	char *names = NULL, fail[1024];
	int dep, ok, ret = -1;

	p->queued = 0;
	if (p->npend == 0) {
		clear_awaiters(t, p);
		return 1;
	}
	dep = deps_check(t, p, &why, err);
	if (dep < 0)
		goto out;
	if (dep == DEP_DEFER && !force_defer) {
		ret = 0;
		goto out;
	}
	if (dep == DEP_HALT) {
		if (deferred) {
			/* dpkg skips it silently, and starts its cycle
			 * tracking again */
			snaps_free(t);
			ret = 1;
			goto out;
		}
		unpkg_event_emit(t->r.o->events, UNPKG_EV_NOTICE, p->key,
				 "dependency problems prevent processing "
				 "triggers for %s:\n%s", p->key,
				 why.s != NULL ? why.s : "");
		unpkg_event_emit(t->r.o->events, UNPKG_EV_ERROR, p->key,
				 "dependency problems - leaving triggers "
				 "unprocessed");
		t->failed++;
		ret = 1;
		goto out;
	}
	gaveup = check_cycle(t, p, err);
	if (gaveup == (struct tp *)-1)
		goto out;
	if (gaveup == p) {
		ret = 1;
		goto out;
	}
	unpkg_event_emit(t->r.o->events, UNPKG_EV_PROGRESS, p->key,
			 "Processing triggers for %s (%s) ...", p->key,
			 p->version != NULL ? p->version : "");
	unpkg_event_processing(t->r.o->events, "trigproc", p->key, p->arch,
			       p->version, NULL);
	names = strv_join(p->pend, p->npend);
	if (names == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	note(t, p, UNPKG_STATUS_HALF_CONFIGURED);
	ok = run_triggered(t, p, names, fail, sizeof(fail), err);
	if (ok < 0)
		goto out;
	if (ok == 0) {
		/* half-configured; what the script activated counts */
		unpkg_event_emit(t->r.o->events, UNPKG_EV_ERROR, p->key, "%s",
				 fail);
		t->failed++;
	} else {
		/* dpkg's post_postinst_tasks(): the state, then what the
		 * script activated */
		note(t, p, p->naw > 0 ? UNPKG_STATUS_TRIGGERS_AWAITED
			   : p->npend > 0 ? UNPKG_STATUS_TRIGGERS_PENDING
			   : UNPKG_STATUS_INSTALLED);
	}
	if (incorporate(t, err) < 0)
		goto out;
	ret = 1;
out:
	unpkg_buf_free(&why);
	free(names);
	return ret;
}

/* --- the queues ---------------------------------------------------------------- */

/* dpkg's process_queue() for --triggers-only: the queue goes round twice
 * before its trigger try, which starts with its second package. */
static int process_queue(struct tpr *t, size_t *q, size_t nq,
			 struct unpkg_err *err)
{
	size_t start = nq > 1 ? 1 : 0, i, left = nq;
	int progress = 0, ok;
	size_t *v = malloc((nq + 1) * sizeof(*v));

	if (v == NULL)
		return unpkg_err_nomem(err);
	for (i = 0; i < nq; i++)
		v[i] = q[(start + i) % nq];
	/* deferred packages go round again; when a whole round made no
	 * progress they are processed anyway (dpkg's later tries) */
	while (left > 0) {
		size_t kept = 0;

		progress = 0;
		for (i = 0; i < left; i++) {
			struct tp *p = &t->v[v[i]];

			if (p->npend == 0 && !is_trig_state(p->st))
				continue;
			ok = trigproc(t, p, 0, 0, err);
			if (ok < 0) {
				free(v);
				return -1;
			}
			if (ok == 0)
				v[kept++] = v[i];
			else
				progress = 1;
		}
		left = kept;
		if (!progress) {
			for (i = 0; i < left; i++)
				if (trigproc(t, &t->v[v[i]], 0, 1, err) < 0) {
					free(v);
					return -1;
				}
			left = 0;
		}
	}
	free(v);
	return 0;
}

/* dpkg's trigproc_run_deferred(). */
static int run_deferred(struct tpr *t, struct unpkg_err *err)
{
	while (t->deferred_at < t->ndeferred) {
		struct tp *p = &t->v[t->deferred[t->deferred_at++]];

		if (!p->queued)
			continue;
		if (trigproc(t, p, 1, 0, err) < 0)
			return -1;
		p->queued = 0;
	}
	return 0;
}

static int queue_named(struct tpr *t, const char *const *names, size_t n,
		       size_t **q, size_t *nq, struct unpkg_err *err)
{
	size_t i;

	*q = calloc(n + 1, sizeof(**q));
	if (*q == NULL)
		return unpkg_err_nomem(err);
	for (i = 0; i < n; i++) {
		struct tp *p = find_key(t, names[i]);
		size_t j;

		if (p == NULL || p->st == UNPKG_STATUS_NOT_INSTALLED)
			return unpkg_err_set(err, UNPKG_ERR_USAGE,
					     "package '%s' is not installed",
					     names[i]);
		for (j = 0; j < *nq; j++)
			if ((*q)[j] == (size_t)(p - t->v))
				break;
		if (j < *nq) {
			unpkg_event_emit(t->r.o->events, UNPKG_EV_PROGRESS,
					 p->key, "Package %s listed more than "
					 "once, only processing once.",
					 p->key);
			continue;
		}
		if (p->npend == 0) {
			unpkg_event_emit(t->r.o->events, UNPKG_EV_ERROR,
					 p->key, "package %s is not ready for "
					 "trigger processing\n (current "
					 "status '%s' with no pending "
					 "triggers)", p->key,
					 unpkg_status_name(p->st));
			t->failed++;
			continue;
		}
		(*q)[(*nq)++] = (size_t)(p - t->v);
	}
	return 0;
}

static int want_processing(const struct tp *p)
{
	return p->npend > 0 && (strcmp(p->want, "install") == 0 ||
				strcmp(p->want, "hold") == 0);
}

int unpkg_trigproc(const struct unpkg_install_opts *o,
		   const char *const *names, size_t n,
		   enum unpkg_trigproc_mode mode, struct unpkg_err *err)
{
	struct tpr t;
	size_t *q = NULL, nq = 0, i;
	int ret = -1;

	memset(&t, 0, sizeof(t));
	t.enqueue_new = mode != UNPKG_TRIGPROC_NAMES &&
			mode != UNPKG_TRIGPROC_QUEUED;
	if (run_open(&t.r, o, &t.own, err) < 0 || load(&t, err) < 0)
		goto out;
	unpkg_force_names(o->force, t.r.force_list, sizeof(t.r.force_list));
	/* what scripts left in triggers/Unincorp since the last run */
	if (incorporate(&t, err) < 0)
		goto out;
	switch (mode) {
	case UNPKG_TRIGPROC_NAMES:
		if (queue_named(&t, names, n, &q, &nq, err) < 0 ||
		    process_queue(&t, q, nq, err) < 0)
			goto out;
		break;
	case UNPKG_TRIGPROC_PENDING:
	case UNPKG_TRIGPROC_QUEUED:
		q = calloc(t.n + n + 1, sizeof(*q));
		if (q == NULL) {
			unpkg_err_nomem(err);
			goto out;
		}
		for (i = 0; mode == UNPKG_TRIGPROC_PENDING && i < t.n; i++)
			if (want_processing(&t.v[t.order[i]]))
				q[nq++] = t.order[i];
		for (i = 0; mode == UNPKG_TRIGPROC_QUEUED && i < n; i++) {
			struct tp *p = find_key(&t, names[i]);

			if (p != NULL && p->npend > 0)
				q[nq++] = (size_t)(p - t.v);
		}
		if (process_queue(&t, q, nq, err) < 0)
			goto out;
		break;
	case UNPKG_TRIGPROC_DEFERRED:
		for (i = 0; names == NULL && i < t.n; i++)
			if (want_processing(&t.v[t.order[i]]) &&
			    enqueue_deferred(&t, &t.v[t.order[i]], err) < 0)
				goto out;
		for (i = 0; names != NULL && i < n; i++) {
			struct tp *p = find_key(&t, names[i]);

			if (p != NULL && want_processing(p) &&
			    enqueue_deferred(&t, p, err) < 0)
				goto out;
		}
		break;
	}
	if (run_deferred(&t, err) < 0)
		goto out;
	ret = 0;
out:
	/* the whole processing's changes, in one durable write (also after
	 * an error: what the scripts did stays recorded) */
	if (t.r.db != NULL) {
		struct unpkg_err werr;

		unpkg_err_init(&werr);
		if ((store_all(&t, &werr) < 0 ||
		     (t.r.db_dirty && run_write_db(&t.r, &werr) < 0)) &&
		    ret == 0) {
			*err = werr;
			ret = -1;
		}
	}
	run_close(&t.r);
	for (i = 0; i < t.n; i++) {
		free(t.v[i].name);
		free(t.v[i].arch);
		free(t.v[i].key);
		free(t.v[i].version);
		free(t.v[i].config_version);
		strv_free(t.v[i].pend, t.v[i].npend);
		strv_free(t.v[i].aw, t.v[i].naw);
	}
	free(t.v);
	free(t.order);
	free(t.deferred);
	free(q);
	snaps_free(&t);
	return ret < 0 ? -1 : t.failed;
}
