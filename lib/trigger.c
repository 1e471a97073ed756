/* trigger.c - dpkg's trigger records (see trigger.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "io.h"
#include "trigger.h"

struct interest {
	char *name;		/* a path (file trigger) or a trigger name */
	char *pkg;
	int noawait;
};

struct staged {
	const char *name;	/* triggers/NAME: "File" or one of names[] */
	int drop;
};

struct unpkg_triggers {
	int admfd;
	char *admindir;
	struct interest *iv;
	size_t ni;
	char **names;		/* explicit trigger names with a file */
	size_t nnames;
	int interests_changed;
	/* unpkg_triggers_stage()'s work for unpkg_triggers_publish():
	 * triggers/ open, the files written as NAME.new (drop 0) and the
	 * NAME files to remove (drop 1) */
	int dfd;
	struct staged *sv;
	size_t ns;
	int dir_sync_failed;	/* never again: a retry could lie */
	/* an interest in a file trigger went or came since the last
	 * publish: File is written again, or removed when empty (dpkg's
	 * rule); otherwise it is left as it is */
	int file_changed;
};

static int nomem(struct unpkg_err *err)
{
	return unpkg_err_nomem(err);
}

static int add_interest(struct unpkg_triggers *t, const char *name,
			size_t nlen, const char *pkg, size_t plen, int noawait,
			struct unpkg_err *err)
{
	struct interest *v = realloc(t->iv, (t->ni + 1) * sizeof(*v));

	if (v == NULL)
		return nomem(err);
	t->iv = v;
	v[t->ni].name = strndup(name, nlen);
	v[t->ni].pkg = strndup(pkg, plen);
	v[t->ni].noawait = noawait;
	if (v[t->ni].name == NULL || v[t->ni].pkg == NULL) {
		free(v[t->ni].name);
		free(v[t->ni].pkg);
		return nomem(err);
	}
	t->ni++;
	return 0;
}

static int add_name(struct unpkg_triggers *t, const char *name,
		    struct unpkg_err *err)
{
	char **v;
	size_t i;

	if (name[0] == '/')
		return 0;
	for (i = 0; i < t->nnames; i++)
		if (strcmp(t->names[i], name) == 0)
			return 0;
	v = realloc(t->names, (t->nnames + 1) * sizeof(*v));
	if (v == NULL)
		return nomem(err);
	t->names = v;
	v[t->nnames] = strdup(name);
	if (v[t->nnames] == NULL)
		return nomem(err);
	t->nnames++;
	return 0;
}

/* Read triggers/NAME whole; 0 with *buf NULL when it does not exist. */
static int slurp(int dfd, const char *name, const char *admindir, char **buf,
		 size_t *len, struct unpkg_err *err)
{
	struct stat st;
	ssize_t n;
	int fd;

	*buf = NULL;
	*len = 0;
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0
				       : unpkg_err_sys(err, "cannot open %s/"
						       "triggers/%s", admindir,
						       name);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (*buf = malloc((size_t)st.st_size + 1)) == NULL) {
		unpkg_err_sys(err, "cannot read %s/triggers/%s", admindir,
			      name);
		close(fd);
		return -1;
	}
	while (*len < (size_t)st.st_size) {
		n = read(fd, *buf + *len, (size_t)st.st_size - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		*len += (size_t)n;
	}
	(*buf)[*len] = '\0';
	close(fd);
	return 0;
}

/* Split `buf` into lines of whitespace-separated words; calls `fn` with
 * the words of each non-empty line (at most 64). */
static int each_line(char *buf, int (*fn)(void *, char **, size_t,
					 struct unpkg_err *),
		     void *ctx, struct unpkg_err *err)
{
	char *line, *save = NULL;

	for (line = strtok_r(buf, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		char *words[64], *w, *wsave = NULL;
		size_t n = 0;
		char *hash = strchr(line, '#');

		if (hash != NULL)
			*hash = '\0';
		for (w = strtok_r(line, " \t", &wsave); w != NULL && n < 64;
		     w = strtok_r(NULL, " \t", &wsave))
			words[n++] = w;
		if (n > 0 && fn(ctx, words, n, err) < 0)
			return -1;
	}
	return 0;
}

struct load_ctx {
	struct unpkg_triggers *t;
	const char *name;	/* explicit trigger being read, or NULL */
};

static int split_pkg(const char *word, size_t *plen)
{
	const char *slash = strchr(word, '/');

	*plen = slash != NULL ? (size_t)(slash - word) : strlen(word);
	return slash != NULL && strcmp(slash, "/noawait") == 0;
}

static int load_file_line(void *ctx, char **w, size_t n,
			  struct unpkg_err *err)
{
	struct load_ctx *c = ctx;
	size_t plen;
	int noawait;

	if (n < 2)
		return 0;
	noawait = split_pkg(w[1], &plen);
	return add_interest(c->t, w[0], strlen(w[0]), w[1], plen, noawait,
			    err);
}

static int load_name_line(void *ctx, char **w, size_t n,
			  struct unpkg_err *err)
{
	struct load_ctx *c = ctx;
	size_t plen;
	int noawait;

	(void)n;
	noawait = split_pkg(w[0], &plen);
	return add_interest(c->t, c->name, strlen(c->name), w[0], plen,
			    noawait, err);
}

static int load(struct unpkg_triggers *t, int dfd, const char *name,
		int (*fn)(void *, char **, size_t, struct unpkg_err *),
		struct unpkg_err *err)
{
	struct load_ctx c = { t, name };
	char *buf;
	size_t len;
	int ret;

	if (slurp(dfd, name, t->admindir, &buf, &len, err) < 0)
		return -1;
	if (buf == NULL)
		return 0;
	ret = each_line(buf, fn, &c, err);
	free(buf);
	return ret;
}

int unpkg_triggers_open(int admfd, const char *admindir,
			struct unpkg_triggers **out, struct unpkg_err *err)
{
	struct unpkg_triggers *t;
	struct dirent *de;
	DIR *dir = NULL;
	int dfd = -1, ret = -1;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return nomem(err);
	t->admfd = admfd;
	t->dfd = -1;
	t->admindir = strdup(admindir);
	if (t->admindir == NULL) {
		nomem(err);
		goto out;
	}
	dfd = openat(admfd, "triggers", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		if (errno == ENOENT) {
			ret = 0;
			goto out;
		}
		unpkg_err_sys(err, "cannot open %s/triggers", admindir);
		goto out;
	}
	if (load(t, dfd, "File", load_file_line, err) < 0)
		goto out;
	dir = fdopendir(dfd);
	if (dir == NULL) {
		unpkg_err_sys(err, "cannot read %s/triggers", admindir);
		goto out;
	}
	dfd = -1;
	while ((de = readdir(dir)) != NULL) {
		const char *n = de->d_name;
		size_t l = strlen(n);

		if (n[0] == '.' || strcmp(n, "File") == 0 ||
		    strcmp(n, "Unincorp") == 0 || strcmp(n, "Lock") == 0 ||
		    (l > 4 && strcmp(n + l - 4, ".new") == 0))
			continue;
		if (add_name(t, n, err) < 0 ||
		    load(t, dirfd(dir), n, load_name_line, err) < 0)
			goto out;
	}
	ret = 0;
out:
	if (dir != NULL)
		closedir(dir);
	if (dfd >= 0)
		close(dfd);
	if (ret < 0)
		unpkg_triggers_free(t);
	else
		*out = t;
	return ret;
}

void unpkg_triggers_free(struct unpkg_triggers *t)
{
	size_t i;

	if (t == NULL)
		return;
	unpkg_triggers_unstage(t);
	for (i = 0; i < t->ni; i++) {
		free(t->iv[i].name);
		free(t->iv[i].pkg);
	}
	free(t->iv);
	for (i = 0; i < t->nnames; i++)
		free(t->names[i]);
	free(t->names);
	free(t->admindir);
	free(t);
}

struct directive_ctx {
	unpkg_trigger_directive_fn *fn;
	void *ctx;
};

static int directive(void *ctx, char **w, size_t n, struct unpkg_err *err)
{
	struct directive_ctx *c = ctx;
	const char *kw = w[0];
	int interest = strncmp(kw, "interest", 8) == 0;
	int act = strncmp(kw, "activate", 8) == 0;
	const char *variant = kw + 8;

	if ((!interest && !act) ||
	    (*variant != '\0' && strcmp(variant, "-await") != 0 &&
	     strcmp(variant, "-noawait") != 0))
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "triggers: unknown directive '%s'", kw);
	if (n != 2)
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "triggers: '%s' needs one trigger name",
				     kw);
	return c->fn(c->ctx, act, w[1], strcmp(variant, "-noawait") == 0,
		     err);
}

int unpkg_triggers_parse(const char *text, size_t len,
			 unpkg_trigger_directive_fn *fn, void *ctx,
			 struct unpkg_err *err)
{
	struct directive_ctx c = { fn, ctx };
	char *buf;
	int ret;

	if (text == NULL)
		return 0;
	buf = strndup(text, len);
	if (buf == NULL)
		return nomem(err);
	ret = each_line(buf, directive, &c, err);
	free(buf);
	return ret;
}

struct interest_ctx {
	struct unpkg_triggers *t;
	const char *pkg;
};

static int interest(void *ctx, int activate, const char *name, int noawait,
		    struct unpkg_err *err)
{
	struct interest_ctx *c = ctx;

	if (activate)
		return 0;
	c->t->interests_changed = 1;
	c->t->file_changed |= name[0] == '/';
	if (add_name(c->t, name, err) < 0)
		return -1;
	return add_interest(c->t, name, strlen(name), c->pkg, strlen(c->pkg),
			    noawait, err);
}

int unpkg_triggers_set_interests(struct unpkg_triggers *t, const char *pkg,
				 const char *text, size_t len,
				 struct unpkg_err *err)
{
	struct interest_ctx c = { t, pkg };
	size_t i, kept = 0;

	for (i = 0; i < t->ni; i++) {
		if (strcmp(t->iv[i].pkg, pkg) == 0) {
			t->file_changed |= t->iv[i].name[0] == '/';
			free(t->iv[i].name);
			free(t->iv[i].pkg);
			t->interests_changed = 1;
			continue;
		}
		t->iv[kept++] = t->iv[i];
	}
	t->ni = kept;
	return unpkg_triggers_parse(text, len, interest, &c, err);
}

int unpkg_triggers_member(const struct unpkg_triggers *t, const char *pkg,
			  struct unpkg_buf *out, struct unpkg_err *err)
{
	size_t i;

	out->len = 0;
	for (i = 0; i < t->ni; i++)
		if (strcmp(t->iv[i].pkg, pkg) == 0 &&
		    unpkg_buf_printf(out, err, "interest%s %s\n",
				     t->iv[i].noawait ? "-noawait" : "",
				     t->iv[i].name) < 0)
			return -1;
	return 0;
}

int unpkg_triggers_interested(const struct unpkg_triggers *t,
			      const char *what, unpkg_trigger_interest_fn *fn,
			      void *ctx, struct unpkg_err *err)
{
	size_t i;

	for (i = 0; i < t->ni; i++) {
		const struct interest *in = &t->iv[i];
		size_t l = strlen(in->name);

		if (what[0] == '/') {
			/* a file trigger: PATH is `what` or a parent */
			if (in->name[0] != '/' ||
			    strncmp(what, in->name, l) != 0 ||
			    (what[l] != '\0' && what[l] != '/' &&
			     in->name[l - 1] != '/'))
				continue;
		} else if (strcmp(what, in->name) != 0) {
			continue;
		}
		if (fn(ctx, in->name, in->pkg, in->noawait, err) < 0)
			return -1;
	}
	return 0;
}

int unpkg_triggers_each_file(const struct unpkg_triggers *t,
			     unpkg_trigger_interest_fn *fn, void *ctx,
			     struct unpkg_err *err)
{
	size_t i;

	for (i = 0; i < t->ni; i++)
		if (t->iv[i].name[0] == '/' &&
		    fn(ctx, t->iv[i].name, t->iv[i].pkg, t->iv[i].noawait,
		       err) < 0)
			return -1;
	return 0;
}

/* Write `len` bytes of `data` as triggers/NAME.new, or, when `len` is 0
 * and `drop_empty`, note NAME for removal; the file goes to `sync` (NULL:
 * fdatasync'ed here unless `nosync`). */
static int stage_one(struct unpkg_triggers *t, const char *name,
		     const char *data, size_t len, int drop_empty,
		     unpkg_triggers_sync_fn *sync, void *ctx, int nosync,
		     unsigned long *fsyncs, struct unpkg_err *err)
{
	struct staged *v;
	char tmp[4096];
	int fd, ret = -1;

	v = realloc(t->sv, (t->ns + 1) * sizeof(*v));
	if (v == NULL)
		return nomem(err);
	t->sv = v;
	if (len == 0 && drop_empty) {	/* (dropped, not staged) */
		v[t->ns++] = (struct staged){ name, 1 };
		return 0;
	}
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.new", name) >= sizeof(tmp))
		return unpkg_err_set(err, UNPKG_ERR_UNSUPPORTED,
				     "trigger name too long: %s", name);
	fd = openat(t->dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
				 O_CLOEXEC, 0644);
	if (fd < 0)
		return unpkg_err_sys(err, "cannot create %s/triggers/%s",
				     t->admindir, tmp);
	/* listed before it is written: unpkg_triggers_unstage() removes
	 * it whatever happens next */
	v[t->ns++] = (struct staged){ name, 0 };
	if (unpkg_write_all(fd, data, len) < 0) {
		unpkg_err_sys(err, "cannot write %s/triggers/%s", t->admindir,
			      tmp);
		goto out;
	}
	if (sync != NULL) {
		ret = sync(ctx, tmp, fd, err);
		fd = -1;
		goto out;
	}
	if (!nosync) {
		(*fsyncs)++;
		if (fdatasync(fd) < 0) {
			unpkg_err_sync(err, "cannot sync %s/triggers/%s",
				       t->admindir, tmp);
			goto out;
		}
	}
	ret = 0;
out:
	if (fd >= 0 && close(fd) < 0 && ret == 0)
		ret = unpkg_err_sys(err, "cannot close %s/triggers/%s",
				    t->admindir, tmp);
	return ret;
}

int unpkg_triggers_stage(struct unpkg_triggers *t,
			 unpkg_triggers_sync_fn *sync, void *ctx, int nosync,
			 unsigned long *fsyncs, struct unpkg_err *err)
{
	struct unpkg_buf b = { 0 };
	unsigned long count = 0;
	size_t i, j;
	int fd, ret = -1;

	if (!t->interests_changed)
		return 0;
	unpkg_triggers_unstage(t);	/* staged again: the latest wins */
	if (mkdirat(t->admfd, "triggers", 0755) < 0 && errno != EEXIST)
		return unpkg_err_sys(err, "cannot create %s/triggers",
				     t->admindir);
	t->dfd = openat(t->admfd, "triggers",
			O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->dfd < 0)
		return unpkg_err_sys(err, "cannot open %s/triggers",
				     t->admindir);
	/* dpkg takes a missing Unincorp for a trigger database to be
	 * rebuilt, and activates every explicit trigger: make the empty one
	 * it would have made. */
	fd = openat(t->dfd, "Unincorp", O_WRONLY | O_CREAT | O_NOFOLLOW |
					O_CLOEXEC, 0644);
	if (fd < 0 || close(fd) < 0) {
		unpkg_err_sys(err, "cannot create %s/triggers/Unincorp",
			      t->admindir);
		goto out;
	}
	if (t->file_changed) {
		for (i = 0; i < t->ni; i++)
			if (t->iv[i].name[0] == '/' &&
			    unpkg_buf_printf(&b, err, "%s %s%s\n",
					     t->iv[i].name, t->iv[i].pkg,
					     t->iv[i].noawait ? "/noawait"
					     : "") < 0)
				goto out;
		if (stage_one(t, "File", b.s, b.len, 1, sync, ctx, nosync,
			      &count, err) < 0)
			goto out;
	}
	for (j = 0; j < t->nnames; j++) {
		b.len = 0;
		for (i = 0; i < t->ni; i++)
			if (strcmp(t->iv[i].name, t->names[j]) == 0 &&
			    unpkg_buf_printf(&b, err, "%s%s\n", t->iv[i].pkg,
					     t->iv[i].noawait ? "/noawait"
					     : "") < 0)
				goto out;
		if (stage_one(t, t->names[j], b.s, b.len, 1, sync, ctx,
			      nosync, &count, err) < 0)
			goto out;
	}
	ret = 0;
out:
	if (fsyncs != NULL)
		*fsyncs += count;
	unpkg_buf_free(&b);
	if (ret < 0)
		unpkg_triggers_unstage(t);
	return ret;
}

int unpkg_triggers_publish(struct unpkg_triggers *t, int nosync,
			   unsigned long *fsyncs, struct unpkg_err *err)
{
	char tmp[4096];
	size_t i;
	int ret = -1;

	if (t->dfd < 0)
		return 0;
	for (i = 0; i < t->ns; i++) {
		const struct staged *s = &t->sv[i];

		if (s->drop) {
			if (unlinkat(t->dfd, s->name, 0) < 0 &&
			    errno != ENOENT) {
				unpkg_err_sys(err, "cannot remove %s/triggers/"
					      "%s", t->admindir, s->name);
				goto out;
			}
			continue;
		}
		snprintf(tmp, sizeof(tmp), "%s.new", s->name);
		if (renameat(t->dfd, tmp, t->dfd, s->name) < 0) {
			unpkg_err_sys(err, "cannot install %s/triggers/%s",
				      t->admindir, s->name);
			goto out;
		}
	}
	if (!nosync && !t->dir_sync_failed) {
		if (fsyncs != NULL)
			(*fsyncs)++;
		if (fsync(t->dfd) < 0) {
			t->dir_sync_failed = 1;
			unpkg_err_sync(err, "cannot fsync %s/triggers",
				       t->admindir);
			goto out;
		}
	}
	t->interests_changed = 0;
	t->file_changed = 0;
	t->ns = 0;		/* all in place: nothing for unstage to remove */
	ret = 0;
out:
	/* (after an error, what is not renamed yet goes) */
	unpkg_triggers_unstage(t);
	return ret;
}

void unpkg_triggers_sync_lost(struct unpkg_triggers *t)
{
	t->dir_sync_failed = 1;
}

int unpkg_triggers_durable(const struct unpkg_triggers *t)
{
	return !t->dir_sync_failed;
}

void unpkg_triggers_unstage(struct unpkg_triggers *t)
{
	char tmp[4096];
	size_t i;

	if (t->dfd < 0)
		return;
	for (i = 0; i < t->ns; i++)
		if (!t->sv[i].drop) {
			/* ENOENT for those renamed before an error */
			snprintf(tmp, sizeof(tmp), "%s.new", t->sv[i].name);
			unlinkat(t->dfd, tmp, 0);
		}
	free(t->sv);
	t->sv = NULL;
	t->ns = 0;
	close(t->dfd);
	t->dfd = -1;
}

int unpkg_triggers_write(struct unpkg_triggers *t, int nosync,
			 unsigned long *fsyncs, struct unpkg_err *err)
{
	if (unpkg_triggers_stage(t, NULL, NULL, nosync, fsyncs, err) < 0)
		return -1;
	return unpkg_triggers_publish(t, nosync, fsyncs, err);
}
