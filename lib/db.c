/* db.c - dpkg's database: locks, status + updates/ journal, file lists. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "buf.h"
#include "db.h"
#include "fsclass.h"
#include "io.h"
#include "pathtab.h"
#include "strmap.h"

/* dpkg refuses updates/ names longer than this. */
#define UPDATES_NAME_MAX 10

enum want {
	WANT_UNKNOWN, WANT_INSTALL, WANT_HOLD, WANT_DEINSTALL, WANT_PURGE
};
enum flag { FLAG_OK, FLAG_REINSTREQ };
enum pstat {
	ST_NOTINST, ST_CFGFILES, ST_HALFINST, ST_UNPACKED, ST_HALFCFG,
	ST_TRIGAW, ST_TRIGPEND, ST_INSTALLED
};

static const char *const want_words[] = {
	"unknown", "install", "hold", "deinstall", "purge", NULL
};
static const char *const flag_words[] = { "ok", "reinstreq", NULL };
static const char *const stat_words[] = {
	"not-installed", "config-files", "half-installed", "unpacked",
	"half-configured", "triggers-awaited", "triggers-pending",
	"installed", NULL
};

/* A package as the database holds it: the public part, and the stanza
 * text that goes back into the status file.  Stanzas are re-emitted
 * verbatim because dpkg's own output is already canonical; rebuilding
 * them from the parsed fields could only introduce differences. */
struct entry {
	struct unpkg_db_pkg pub;	/* first: unpkg_db_at() hands it out */
	char *text;			/* stanza, ends in one '\n' */
	size_t len;
	int same;			/* Multi-Arch: same */
	int needs_arch;			/* dpkg prints it as name:arch */
	enum want want;
	enum flag flag;
	enum pstat stat;
};

struct unpkg_db {
	char *admindir;
	unsigned int flags;
	int dirfd;
	int lock_fd;
	int front_fd;
	struct entry **v;	/* sorted as the status file is */
	size_t n, cap;
	char **applied;		/* updates/ files folded into v */
	size_t napplied, capplied;
	struct unpkg_pathtab files;
	int files_loaded;
	/* All the loaded lists may be out of date: the database was
	 * written since, or the caller said the lists changed. */
	int files_stale;
	int lists_held;		/* unpkg_db_hold_lists() */
	/* The keys of the packages whose own lists alone may have changed
	 * since: read again at the next load. */
	char **stale;
	size_t nstale, capstale;
	/* The keys of the packages whose new list waits staged, its old
	 * one moved aside (unpkg_db_list_staged()). */
	char **staged;
	size_t nstaged, capstaged;
	/* The fsync of the admindir or of updates/ failed: it is never
	 * tried again (a retry may report success for lost data), so later
	 * writes are not durable. */
	int admindir_sync_failed;
	int updates_sync_failed;
	/* info/format is missing: the next write puts it in place. */
	int format_missing;
	/* The paths unpkg_db_open() created, in order, a directory's
	 * ending in '/' (unpkg_db_remove_made()). */
	char **made;
	size_t nmade;
	int written;		/* unpkg_db_write_begin() was called */
	/* unpkg_db_order_writes(): the writeback waits are counted here;
	 * NULL: status-new is fdatasync'ed. */
	unsigned long *waits;
	enum unpkg_wb_path wb;	/* how: unpkg_db_order_writes_where_ordered() */
};

/* ---- small helpers ------------------------------------------------------ */

static char *xstrndup(const char *s, size_t n)
{
	char *p = malloc(n + 1);

	if (p != NULL) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

/* unpkg_grow() (buf.h), with `err` set when memory runs out. */
static void *grow(void *p, size_t *cap, size_t want, size_t size,
		  size_t first, struct unpkg_err *err)
{
	void *np = unpkg_grow(p, cap, want, size, first);

	if (np == NULL)
		unpkg_err_nomem(err);
	return np;
}

/* The architecture this program runs as, named the way dpkg built for the
 * same machine names its native architecture.  dpkg sorts a native or
 * "all" instance before foreign ones of the same name, so the status file
 * order depends on it. */
static const char *native_arch(void)
{
#if defined(__x86_64__) && defined(__ILP32__)
	return "x32";
#elif defined(__x86_64__)
	return "amd64";
#elif defined(__i386__)
	return "i386";
#elif defined(__aarch64__)
	return "arm64";
#elif defined(__arm__) && defined(__ARM_PCS_VFP)
	return "armhf";
#elif defined(__arm__)
	return "armel";
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
	return "ppc64el";
#elif defined(__powerpc64__)
	return "ppc64";
#elif defined(__powerpc__)
	return "powerpc";
#elif defined(__s390x__)
	return "s390x";
#elif defined(__riscv) && __riscv_xlen == 64
	return "riscv64";
#elif defined(__loongarch64)
	return "loong64";
#elif defined(__mips64) && defined(__MIPSEL__)
	return "mips64el";
#elif defined(__mips__) && defined(__MIPSEL__)
	return "mipsel";
#else
	return "";
#endif
}

static int word_index(const char *const *words, const char *s, size_t n)
{
	int i;

	for (i = 0; words[i] != NULL; i++) {
		if (strlen(words[i]) == n && memcmp(words[i], s, n) == 0)
			return i;
	}
	return -1;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t';
}

/* Split a Status: value as dpkg does.  On error *why is a description in
 * dpkg's words and -1 is returned. */
static int parse_status(const char *v, int idx[3], const char **why,
			const char **bad)
{
	static const char *const what[3] = {
		"first (want) word in 'Status' field",
		"second (error) word in 'Status' field",
		"third (status) word in 'Status' field",
	};
	const char *const *tables[3] = { want_words, flag_words, stat_words };
	const char *p = v;
	int k;

	for (k = 0; k < 3; k++) {
		const char *w;

		while (is_space(*p))
			p++;
		w = p;
		while (*p != '\0' && !is_space(*p))
			p++;
		*bad = w;
		if (p == w) {
			*why = what[k];
			return -1;
		}
		idx[k] = word_index(tables[k], w, (size_t)(p - w));
		if (idx[k] < 0) {
			*why = what[k];
			return -1;
		}
	}
	while (is_space(*p))
		p++;
	if (*p != '\0') {
		*why = what[2];
		*bad = NULL;
		return -1;
	}
	return 0;
}

/* ---- entries ------------------------------------------------------------ */

static void entry_free(struct entry *e)
{
	if (e == NULL)
		return;
	free(e->pub.name);
	free(e->pub.arch);
	free(e->pub.key);
	unpkg_para_destroy(&e->pub.para);
	free(e->text);
	free(e);
}

/* Build an entry from a parsed paragraph (taken over, left empty) and its
 * text.  `file` names the source for messages (NULL: none). */
static int entry_new(struct unpkg_para *para, const char *text, size_t len,
		     const char *file, struct entry **out,
		     struct unpkg_err *err)
{
	struct entry *e = NULL;
	const char *name, *arch, *ma, *st, *why, *bad;
	const char *where = file ? file : "";
	const char *sep = file ? ": " : "";
	int idx[3] = { WANT_UNKNOWN, FLAG_OK, ST_NOTINST };
	int ret = -1;

	e = calloc(1, sizeof(*e));
	if (e == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	e->pub.para = *para;
	unpkg_para_init(para);

	name = unpkg_para_get(&e->pub.para, "Package");
	if (name == NULL || name[0] == '\0') {
		unpkg_err_set(err, UNPKG_ERR_FORMAT,
			      "%s%sline %zu: missing 'Package' field", where,
			      sep, e->pub.para.line);
		goto out;
	}
	st = unpkg_para_get(&e->pub.para, "Status");
	if (st != NULL && parse_status(st, idx, &why, &bad) < 0) {
		int quote = bad != NULL && *bad != '\0';
		size_t i, line = e->pub.para.line;

		for (i = 0; i < e->pub.para.count; i++) {
			if (unpkg_field_name_eq(e->pub.para.fields[i].name,
						"Status"))
				line = e->pub.para.fields[i].line;
		}
		unpkg_err_set(err, UNPKG_ERR_FORMAT,
			      "%s%sline %zu: package '%s': %s: %s%s%s%s",
			      where, sep, line, name, why,
			      bad == NULL ? "has trailing junk" :
			      quote ? "has invalid value" :
				      "is missing a value",
			      quote ? " '" : "", quote ? bad : "",
			      quote ? "'" : "");
		goto out;
	}
	e->want = (enum want)idx[0];
	e->flag = (enum flag)idx[1];
	e->stat = (enum pstat)idx[2];

	arch = unpkg_para_get(&e->pub.para, "Architecture");
	if (arch == NULL)
		arch = "";
	ma = unpkg_para_get(&e->pub.para, "Multi-Arch");
	e->same = ma != NULL && strcmp(ma, "same") == 0;
	if (arch[0] == '\0')
		e->needs_arch = 0;
	else if (e->same)
		e->needs_arch = 1;
	else
		e->needs_arch = strcmp(arch, "all") != 0 &&
				strcmp(arch, native_arch()) != 0;

	e->pub.name = strdup(name);
	e->pub.arch = strdup(arch);
	if (e->same && arch[0] != '\0') {
		size_t nl = strlen(name), al = strlen(arch);

		e->pub.key = malloc(nl + 1 + al + 1);
		if (e->pub.key != NULL) {
			memcpy(e->pub.key, name, nl);
			e->pub.key[nl] = ':';
			memcpy(e->pub.key + nl + 1, arch, al + 1);
		}
	} else {
		e->pub.key = strdup(name);
	}
	e->text = xstrndup(text, len);
	e->len = len;
	if (e->pub.name == NULL || e->pub.arch == NULL ||
	    e->pub.key == NULL || e->text == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	*out = e;
	e = NULL;
	ret = 0;
out:
	entry_free(e);
	return ret;
}

/* dpkg's status order: by name; then the instances printed without an
 * architecture, then the others by architecture.  Instances that compare
 * equal keep the order in which the database got them (dpkg's sort is
 * stable and its comparison gives no order among them). */
static int entry_cmp(const struct entry *a, const struct entry *b)
{
	int r = strcmp(a->pub.name, b->pub.name);

	if (r != 0)
		return r;
	if (a->needs_arch != b->needs_arch)
		return a->needs_arch ? 1 : -1;
	if (!a->needs_arch)
		return 0;
	return strcmp(a->pub.arch, b->pub.arch);
}

/* dpkg forgets a not-installed package unless a hold, an error flag or
 * an install selection for an architecture keeps it (the stanza dpkg
 * leaves for a new package that failed): such a stanza in updates/ is how
 * a purge is recorded. */
static int informative(const struct entry *e)
{
	return !(e->stat == ST_NOTINST && e->flag == FLAG_OK &&
		 e->want != WANT_HOLD &&
		 !(e->want == WANT_INSTALL && e->pub.arch[0] != '\0'));
}

/* Index of the first entry named `name` (or where it would go). */
static size_t name_lower(const struct unpkg_db *db, const char *name)
{
	size_t lo = 0, hi = db->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(db->v[mid]->pub.name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t name_end(const struct unpkg_db *db, size_t i, const char *name)
{
	while (i < db->n && strcmp(db->v[i]->pub.name, name) == 0)
		i++;
	return i;
}

static void remove_at(struct unpkg_db *db, size_t i)
{
	entry_free(db->v[i]);
	memmove(&db->v[i], &db->v[i + 1], (db->n - i - 1) * sizeof(*db->v));
	db->n--;
}

/* Insert `e` in order, after its equals; at `hint` (the place of the
 * instance it replaces, SIZE_MAX for none) if the order allows it there, so
 * a replaced instance keeps its place as it does in dpkg. */
static int insert_sorted(struct unpkg_db *db, struct entry *e, size_t hint,
			 struct unpkg_err *err)
{
	size_t lo = 0, hi = db->n;
	struct entry **nv;

	nv = grow(db->v, &db->cap, db->n + 1, sizeof(*db->v), 256, err);
	if (nv == NULL)
		return -1;
	db->v = nv;
	if (hint <= db->n && (hint == 0 || entry_cmp(db->v[hint - 1], e) <= 0) &&
	    (hint == db->n || entry_cmp(e, db->v[hint]) <= 0)) {
		lo = hint;
	} else if (db->n == 0 || entry_cmp(db->v[db->n - 1], e) <= 0) {
		/* Input is normally sorted already. */
		lo = db->n;
	} else {
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (entry_cmp(db->v[mid], e) <= 0)
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	memmove(&db->v[lo + 1], &db->v[lo], (db->n - lo) * sizeof(*db->v));
	db->v[lo] = e;
	db->n++;
	return 0;
}

/* Fold one stanza into the database, taking `e` over.  The status file
 * names each instance by (name, arch).  A journal entry may instead move a
 * package to another architecture or Multi-Arch value (a crossgrade): when
 * the package has exactly one installed instance, the entry replaces it,
 * unless both are Multi-Arch: same.  This is how dpkg picks the slot. */
static int apply(struct unpkg_db *db, struct entry *e, int journal,
		 const char *file, struct unpkg_err *err)
{
	size_t lo = name_lower(db, e->pub.name);
	size_t hi = name_end(db, lo, e->pub.name);
	size_t i, slot = SIZE_MAX, single = SIZE_MAX, installed = 0;
	const char *where = file ? file : "";
	const char *sep = file ? ": " : "";
	/* A not-installed stanza in the status file is only a selection. */
	int selection = !journal && e->stat == ST_NOTINST;
	int ret = -1;

	for (i = lo; i < hi; i++) {
		if (db->v[i]->stat != ST_NOTINST) {
			installed++;
			single = i;
		}
	}
	if (installed > 1 && !selection && !e->same) {
		const char *ma = unpkg_para_get(&e->pub.para, "Multi-Arch");

		unpkg_err_set(err, UNPKG_ERR_FORMAT,
			      "%s%sline %zu: package %s:%s with field "
			      "'Multi-Arch: %s' is not co-installable with "
			      "%s which has multiple installed instances",
			      where, sep, e->pub.para.line, e->pub.name,
			      e->pub.arch, ma ? ma : "no", e->pub.name);
		goto out;
	}
	for (i = lo; i < hi && !journal && !selection; i++) {
		const struct entry *o = db->v[i];

		if (o->stat == ST_NOTINST)
			continue;
		if (o->same != e->same) {
			unpkg_err_set(err, UNPKG_ERR_FORMAT,
				      "%s%sline %zu: package '%s': mixed "
				      "non-coinstallable and coinstallable "
				      "package instances present",
				      where, sep, e->pub.para.line,
				      e->pub.key);
			goto out;
		}
		if (!e->same) {
			unpkg_err_set(err, UNPKG_ERR_FORMAT,
				      "%s%sline %zu: package '%s': multiple "
				      "non-coinstallable package instances "
				      "present",
				      where, sep, e->pub.para.line,
				      e->pub.key);
			goto out;
		}
	}
	if (journal && installed == 1 && !(db->v[single]->same && e->same)) {
		slot = single;
	} else {
		for (i = lo; i < hi && slot == SIZE_MAX; i++) {
			if (strcmp(db->v[i]->pub.arch, e->pub.arch) == 0)
				slot = i;
		}
	}
	if (slot != SIZE_MAX)
		remove_at(db, slot);
	if (informative(e)) {
		if (insert_sorted(db, e, slot, err) < 0)
			goto out;
		e = NULL;
	}
	ret = 0;
out:
	entry_free(e);
	return ret;
}

/* ---- file I/O ----------------------------------------------------------- */

/* Read a whole file.  Returns 1, or 0 if it does not exist and
 * `missing_ok`, or -1.  `shown` names it in messages. */
static int slurp(int dirfd, const char *name, const char *shown,
		 int missing_ok, char **buf, size_t *len,
		 struct unpkg_err *err)
{
	char *b = NULL;
	size_t n = 0, cap = 0;
	struct stat st;
	int fd = -1;
	int ret = -1;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		if (errno == ENOENT && missing_ok) {
			*buf = NULL;
			*len = 0;
			ret = 0;
			goto out;
		}
		unpkg_err_sys(err, "cannot open %s", shown);
		goto out;
	}
	if (fstat(fd, &st) < 0) {
		unpkg_err_sys(err, "cannot stat %s", shown);
		goto out;
	}
	cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096;
	b = malloc(cap);
	if (b == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	for (;;) {
		ssize_t r;

		if (n + 1 >= cap) {
			char *nb = grow(b, &cap, n + 4096, 1, 4096, err);

			if (nb == NULL)
				goto out;
			b = nb;
		}
		r = read(fd, b + n, cap - n - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			unpkg_err_sys(err, "cannot read %s", shown);
			goto out;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	b = NULL;
	ret = 1;
out:
	free(b);
	if (fd >= 0)
		close(fd);
	return ret;
}

/* Create `tmp` (mode 0644) in the admindir holding `len` bytes and return
 * its descriptor, not synced; `shown` names the final file in messages.
 * On error the temporary file is removed. */
static int write_tmp(struct unpkg_db *db, const char *tmp, const void *data,
		     size_t len, const char *shown, struct unpkg_err *err)
{
	int fd;

	fd = openat(db->dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		    0644);
	if (fd < 0)
		return unpkg_err_sys(err, "cannot create %s-new", shown);
	if (fchmod(fd, 0644) < 0) {
		unpkg_err_sys(err, "cannot chmod %s-new", shown);
		goto fail;
	}
	if (unpkg_write_all(fd, data, len) < 0) {
		unpkg_err_sys(err, "cannot write %s", shown);
		goto fail;
	}
	return fd;
fail:
	close(fd);
	unlinkat(db->dirfd, tmp, 0);
	return -1;
}

static char *path_join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *p = malloc(la + 1 + lb + 1);

	if (p != NULL) {
		memcpy(p, a, la);
		p[la] = '/';
		memcpy(p + la + 1, b, lb + 1);
	}
	return p;
}

/* Where the next stanza's text starts: past empty lines (and lines of
 * blanks, should the parser take those as separators too). */
static size_t skip_blank_lines(const char *buf, size_t len, size_t p)
{
	while (p < len) {
		size_t q = p;

		while (q < len && is_space(buf[q]))
			q++;
		if (q >= len || buf[q] != '\n')
			break;
		p = q + 1;
	}
	return p;
}

/* Parse one status or journal file into the database. */
static int load_stanzas(struct unpkg_db *db, const char *name, int journal,
			struct unpkg_err *err)
{
	struct unpkg_para para;
	char *shown = NULL;
	char *buf = NULL;
	size_t len = 0, pos = 0, line = 1;
	int r, ret = -1;

	unpkg_para_init(&para);
	shown = path_join(db->admindir, name);
	if (shown == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	r = slurp(db->dirfd, name, shown, !journal, &buf, &len, err);
	if (r <= 0) {
		ret = r;
		goto out;
	}
	for (;;) {
		struct entry *e = NULL;
		size_t start, end;

		start = skip_blank_lines(buf, len, pos);
		r = unpkg_para_next(buf, len, &pos, &line, &para, err);
		if (r < 0) {
			unpkg_err_prefix(err, "%s", shown);
			goto out;
		}
		if (r == 0)
			break;
		/* The stanza's text runs up to, not including, the blank
		 * line that ends it. */
		end = pos;
		while (end - start >= 2 && buf[end - 1] == '\n' &&
		       buf[end - 2] == '\n')
			end--;
		if (entry_new(&para, buf + start, end - start, shown, &e,
			      err) < 0)
			goto out;
		if (end == len && buf[end - 1] != '\n') {
			/* Unterminated last line: the writer adds the
			 * newline dpkg would have written. */
			char *t = realloc(e->text, e->len + 2);

			if (t == NULL) {
				entry_free(e);
				unpkg_err_nomem(err);
				goto out;
			}
			t[e->len++] = '\n';
			t[e->len] = '\0';
			e->text = t;
		}
		if (apply(db, e, journal, shown, err) < 0)
			goto out;
	}
	ret = 1;
out:
	unpkg_para_destroy(&para);
	free(buf);
	free(shown);
	return ret;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int load_updates(struct unpkg_db *db, struct unpkg_err *err)
{
	DIR *dir = NULL;
	struct dirent *de;
	size_t i, first_len = 0;
	int fd = -1;
	int ret = -1;

	fd = openat(db->dirfd, "updates",
		    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT) {
			ret = 0;
			goto out;
		}
		unpkg_err_sys(err, "cannot open %s/updates", db->admindir);
		goto out;
	}
	dir = fdopendir(fd);
	if (dir == NULL) {
		unpkg_err_sys(err, "cannot open %s/updates", db->admindir);
		goto out;
	}
	fd = -1;
	for (;;) {
		char **applied;
		size_t n;
		char *copy;

		errno = 0;
		de = readdir(dir);
		if (de == NULL) {
			if (errno != 0) {
				unpkg_err_sys(err, "cannot read %s/updates",
					      db->admindir);
				goto out;
			}
			break;
		}
		n = strspn(de->d_name, "0123456789");
		/* Anything else (dpkg's tmp.i scratch file) is not an
		 * entry. */
		if (n == 0 || de->d_name[n] != '\0')
			continue;
		if (n > UPDATES_NAME_MAX) {
			unpkg_err_set(err, UNPKG_ERR_FORMAT,
				      "%s/updates: file '%s' has a name too "
				      "long for a journal entry (length=%zu, "
				      "max=%d)",
				      db->admindir, de->d_name, n,
				      UPDATES_NAME_MAX);
			goto out;
		}
		/* Equal lengths make dpkg's alphabetical order the numeric
		 * one; dpkg refuses anything else, so do we. */
		if (first_len == 0) {
			first_len = n;
		} else if (n != first_len) {
			unpkg_err_set(err, UNPKG_ERR_FORMAT,
				      "%s/updates: files with different "
				      "length names (both %zu and %zu)",
				      db->admindir, first_len, n);
			goto out;
		}
		applied = grow(db->applied, &db->capplied, db->napplied + 1,
			       sizeof(*db->applied), 16, err);
		if (applied == NULL)
			goto out;
		db->applied = applied;
		copy = strdup(de->d_name);
		if (copy == NULL) {
			unpkg_err_nomem(err);
			goto out;
		}
		db->applied[db->napplied++] = copy;
	}
	if (db->napplied > 1)
		qsort(db->applied, db->napplied, sizeof(*db->applied),
		      cmp_names);
	for (i = 0; i < db->napplied; i++) {
		char name[sizeof("updates/") + UPDATES_NAME_MAX];

		memcpy(name, "updates/", sizeof("updates/") - 1);
		memcpy(name + sizeof("updates/") - 1, db->applied[i],
		       strlen(db->applied[i]) + 1);
		if (load_stanzas(db, name, 1, err) < 0)
			goto out;
	}
	ret = 0;
out:
	if (dir != NULL)
		closedir(dir);
	if (fd >= 0)
		close(fd);
	return ret;
}

/* Note that the open created `name` in directory `dir` (NULL: `name` is
 * the whole path). */
static int note_made(struct unpkg_db *db, const char *dir, const char *name,
		     int is_dir, struct unpkg_err *err)
{
	char **v = realloc(db->made, (db->nmade + 1) * sizeof(*v));

	if (v == NULL)
		return unpkg_err_nomem(err);
	db->made = v;
	if (asprintf(&v[db->nmade], "%s%s%s%s", dir != NULL ? dir : "",
		     dir != NULL ? "/" : "", name, is_dir ? "/" : "") < 0)
		return unpkg_err_nomem(err);
	db->nmade++;
	return 0;
}

static int take_lock(struct unpkg_db *db, const char *name, const char *desc,
		     int *out, struct unpkg_err *err)
{
	struct flock fl;
	struct stat st;
	int fd = -1;
	int ret = -1;
	int fresh = fstatat(db->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
		    errno == ENOENT;

	/* Same creation as dpkg: mode 0660 less the umask (0640 usually). */
	fd = openat(db->dirfd, name, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC,
		    0660);
	if (fd < 0) {
		unpkg_err_sys(err, "unable to open/create %s '%s/%s'", desc,
			      db->admindir, name);
		goto out;
	}
	if (fresh && note_made(db, db->admindir, name, 0, err) < 0)
		goto out;
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	while (fcntl(fd, F_SETLK, &fl) < 0) {
		struct flock who;

		if (errno == EINTR)
			continue;
		if (errno != EACCES && errno != EAGAIN) {
			unpkg_err_sys(err, "unable to lock %s '%s/%s'", desc,
				      db->admindir, name);
			goto out;
		}
		memset(&who, 0, sizeof(who));
		who.l_type = F_WRLCK;
		who.l_whence = SEEK_SET;
		if (fcntl(fd, F_GETLK, &who) == 0 && who.l_type != F_UNLCK &&
		    who.l_pid > 0)
			unpkg_err_set(err, UNPKG_ERR_LOCKED,
				      "%s was locked by another process "
				      "with pid %ld",
				      desc, (long)who.l_pid);
		else
			unpkg_err_set(err, UNPKG_ERR_LOCKED,
				      "%s is locked by another process", desc);
		goto out;
	}
	*out = fd;
	fd = -1;
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	return ret;
}

static int mkdir_p(struct unpkg_db *db, const char *path,
		   struct unpkg_err *err)
{
	char *p = NULL;
	size_t i, len;
	int ret = -1;

	p = strdup(path);
	if (p == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	len = strlen(p);
	for (i = 1; i <= len; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		if (p[i - 1] == '/')
			continue;
		p[i] = '\0';
		if (mkdir(p, 0755) == 0) {
			if (note_made(db, NULL, p, 1, err) < 0)
				goto out;
		} else if (errno != EEXIST) {
			unpkg_err_sys(err, "cannot create directory %s", p);
			goto out;
		}
		if (i < len)
			p[i] = '/';
	}
	ret = 0;
out:
	free(p);
	return ret;
}

static int mkdir_sub(struct unpkg_db *db, const char *name,
		     struct unpkg_err *err)
{
	if (mkdirat(db->dirfd, name, 0755) == 0)
		return note_made(db, db->admindir, name, 1, err);
	if (errno != EEXIST)
		return unpkg_err_sys(err, "cannot create directory %s/%s",
				     db->admindir, name);
	return 0;
}

/* fsync the admindir's subdirectory `name` (named in messages by its
 * full path). */
static int fsync_at(const struct unpkg_db *db, const char *name,
		    struct unpkg_err *err)
{
	char *shown = path_join(db->admindir, name);
	int fd = -1, ret = -1;

	if (shown == NULL)
		return unpkg_err_nomem(err);
	fd = openat(db->dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		unpkg_err_sys(err, "cannot open %s", shown);
		goto out;
	}
	if (fsync(fd) < 0) {
		unpkg_err_sync(err, "cannot fsync %s", shown);
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0 && close(fd) < 0 && ret == 0)
		ret = unpkg_err_sys(err, "cannot close %s", shown);
	free(shown);
	return ret;
}

/* info/format: the layout version.  "1" is the multiarch layout (lists
 * named name:arch for Multi-Arch: same); an older one would need dpkg's
 * own conversion of info/.  A missing one is written with the next status
 * (unpkg_db_write_begin()), made durable by the same barrier. */
static int check_format(struct unpkg_db *db, struct unpkg_err *err)
{
	char *shown = NULL;
	char *buf = NULL;
	size_t len = 0;
	int r, ret = -1;

	shown = path_join(db->admindir, "info/format");
	if (shown == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	r = slurp(db->dirfd, "info/format", shown, 1, &buf, &len, err);
	if (r < 0)
		goto out;
	if (r > 0 && strcmp(buf, "1") != 0 && strcmp(buf, "1\n") != 0) {
		unpkg_err_set(err, UNPKG_ERR_UNSUPPORTED,
			      "%s: database layout '%.*s' is not supported "
			      "(run dpkg once to upgrade it)",
			      shown, (int)strcspn(buf, "\n"), buf);
		goto out;
	}
	db->format_missing = r == 0 && !(db->flags & UNPKG_DB_READONLY);
	ret = 0;
out:
	free(buf);
	free(shown);
	return ret;
}

/* ---- opening ------------------------------------------------------------ */

int unpkg_db_open(const char *admindir, unsigned int flags,
		  struct unpkg_db **out, struct unpkg_err *err)
{
	struct unpkg_db *db = NULL;
	int ro = (flags & UNPKG_DB_READONLY) != 0;
	int ret = -1;

	*out = NULL;
	if (ro && (flags & UNPKG_DB_CREATE)) {
		unpkg_err_set(err, UNPKG_ERR_USAGE,
			      "cannot create a database opened read-only");
		goto out;
	}
	db = calloc(1, sizeof(*db));
	if (db == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	db->dirfd = -1;
	db->lock_fd = -1;
	db->front_fd = -1;
	db->flags = flags;
	db->admindir = strdup(admindir);
	if (db->admindir == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	if ((flags & UNPKG_DB_CREATE) && mkdir_p(db, admindir, err) < 0)
		goto out;
	db->dirfd = open(admindir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (db->dirfd < 0) {
		unpkg_err_sys(err, "cannot open the dpkg database %s",
			      admindir);
		goto out;
	}
	if (!ro) {
		/* The frontend lock comes first, as apt and dpkg take it. */
		if ((flags & UNPKG_DB_LOCK_FRONTEND) &&
		    take_lock(db, "lock-frontend", "dpkg frontend lock",
			      &db->front_fd, err) < 0)
			goto out;
		if (take_lock(db, "lock", "dpkg database lock", &db->lock_fd,
			      err) < 0)
			goto out;
		if (mkdir_sub(db, "info", err) < 0 ||
		    mkdir_sub(db, "updates", err) < 0 ||
		    mkdir_sub(db, "triggers", err) < 0)
			goto out;
		if (flags & UNPKG_DB_CREATE) {
			int fd = openat(db->dirfd, "status",
					O_WRONLY | O_CREAT | O_EXCL |
						O_CLOEXEC,
					0644);

			if (fd < 0 && errno != EEXIST) {
				unpkg_err_sys(err, "cannot create %s/status",
					      admindir);
				goto out;
			}
			if (fd >= 0 && note_made(db, admindir, "status", 0,
						 err) < 0) {
				close(fd);
				goto out;
			}
			if (fd >= 0 && close(fd) < 0) {
				unpkg_err_sys(err, "cannot close %s/status",
					      admindir);
				goto out;
			}
		}
	}
	if (check_format(db, err) < 0)
		goto out;
	/* dpkg reads a missing status file as an empty database. */
	if (load_stanzas(db, "status", 0, err) < 0)
		goto out;
	if (load_updates(db, err) < 0)
		goto out;
	*out = db;
	db = NULL;
	ret = 0;
out:
	if (db != NULL)
		(void)unpkg_db_remove_made(db, err);	/* the first error wins */
	unpkg_db_free(db);
	return ret;
}

int unpkg_db_remove_made(struct unpkg_db *db, struct unpkg_err *err)
{
	int ret = 0;
	size_t i;

	for (i = db->nmade; i-- > 0 && !db->written;) {
		const char *p = db->made[i];
		size_t len = strlen(p);
		struct stat st;
		int r;

		if (p[len - 1] == '/')
			r = rmdir(p);	/* only when empty */
		else if (len >= 7 && strcmp(p + len - 7, "/status") == 0 &&
			 (stat(p, &st) < 0 || st.st_size != 0))
			continue;	/* written since: not ours to remove */
		else
			r = unlink(p);
		if (r < 0 && errno != ENOENT && errno != ENOTEMPTY &&
		    errno != EEXIST && ret == 0)
			ret = unpkg_err_sys(err, "cannot remove %s", p);
	}
	unpkg_db_list_free(db->made, db->nmade);
	db->made = NULL;
	db->nmade = 0;
	return ret;
}

void unpkg_db_free(struct unpkg_db *db)
{
	size_t i;

	if (db == NULL)
		return;
	for (i = 0; i < db->n; i++)
		entry_free(db->v[i]);
	free(db->v);
	for (i = 0; i < db->napplied; i++)
		free(db->applied[i]);
	free(db->applied);
	unpkg_pathtab_destroy(&db->files);
	unpkg_db_list_free(db->stale, db->nstale);
	unpkg_db_list_free(db->staged, db->nstaged);
	unpkg_db_list_free(db->made, db->nmade);
	/* Closing the descriptors releases the fcntl locks. */
	if (db->lock_fd >= 0)
		close(db->lock_fd);
	if (db->front_fd >= 0)
		close(db->front_fd);
	if (db->dirfd >= 0)
		close(db->dirfd);
	free(db->admindir);
	free(db);
}

int unpkg_db_dirfd(const struct unpkg_db *db)
{
	return db->dirfd;
}

size_t unpkg_db_count(const struct unpkg_db *db)
{
	return db->n;
}

const struct unpkg_db_pkg *unpkg_db_at(const struct unpkg_db *db, size_t i)
{
	if (i >= db->n)
		return NULL;
	return &db->v[i]->pub;
}

unsigned int unpkg_db_pkg_bin(const char *name)
{
	uint32_t h = 2166136261u;

	for (; *name != '\0'; name++) {
		h ^= (uint32_t)*name;
		h *= 16777619u;
	}
	return h % 65521u;
}

static int walk_cmp(const void *a, const void *b, void *ctx)
{
	const struct unpkg_db *db = ctx;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	unsigned int bx = unpkg_db_pkg_bin(db->v[x]->pub.name);
	unsigned int by = unpkg_db_pkg_bin(db->v[y]->pub.name);

	if (bx != by)
		return bx < by ? -1 : 1;
	return x < y ? -1 : x > y;
}

size_t *unpkg_db_walk_order(const struct unpkg_db *db, struct unpkg_err *err)
{
	size_t *at = calloc(db->n != 0 ? db->n : 1, sizeof(*at));
	size_t i;

	if (at == NULL) {
		unpkg_err_nomem(err);
		return NULL;
	}
	for (i = 0; i < db->n; i++)
		at[i] = i;
	qsort_r(at, db->n, sizeof(*at), walk_cmp, (void *)db);
	return at;
}

static size_t find_index(const struct unpkg_db *db, const char *name,
			 const char *arch)
{
	size_t i = name_lower(db, name);

	for (; i < db->n && strcmp(db->v[i]->pub.name, name) == 0; i++) {
		if (arch == NULL || strcmp(db->v[i]->pub.arch, arch) == 0)
			return i;
	}
	return SIZE_MAX;
}

size_t unpkg_db_find_first(const struct unpkg_db *db, const char *name)
{
	size_t i = name_lower(db, name);

	return i < db->n && strcmp(db->v[i]->pub.name, name) == 0 ? i : db->n;
}

const struct unpkg_db_pkg *unpkg_db_find(const struct unpkg_db *db,
					 const char *name, const char *arch)
{
	size_t i = find_index(db, name, arch);

	return i == SIZE_MAX ? NULL : &db->v[i]->pub;
}

/* The lists of the instances of `name` that have one are read again at
 * the next load.  unpkg_db_put() says so before its change and after it:
 * a package gone, not-installed or known by another key now (another
 * architecture's instance came or went) has its paths taken off, one
 * that came has them added. */
static void instances_changed(struct unpkg_db *db, const char *name)
{
	size_t i;

	for (i = unpkg_db_find_first(db, name);
	     i < db->n && strcmp(db->v[i]->pub.name, name) == 0; i++)
		if (db->v[i]->stat != ST_NOTINST)
			unpkg_db_list_changed(db, db->v[i]->pub.key);
}

int unpkg_db_put(struct unpkg_db *db, const char *name, const char *arch,
		 const char *stanza, struct unpkg_err *err)
{
	struct unpkg_para para;
	struct entry *e = NULL;
	size_t start = 0, end;
	int ret = -1;

	instances_changed(db, name);
	unpkg_para_init(&para);
	if (stanza == NULL) {
		size_t i = find_index(db, name, arch);

		if (i != SIZE_MAX)
			remove_at(db, i);
		ret = 0;
		goto out;
	}
	end = strlen(stanza);
	start = skip_blank_lines(stanza, end, 0);
	while (end > start + 1 && stanza[end - 1] == '\n' &&
	       stanza[end - 2] == '\n')
		end--;
	if (unpkg_para_parse(stanza + start, end - start, &para, err) < 0) {
		unpkg_err_prefix(err, "stanza of package '%s'", name);
		goto out;
	}
	if (entry_new(&para, stanza + start, end - start, NULL, &e, err) < 0)
		goto out;
	if (strcmp(e->pub.name, name) != 0 ||
	    (arch != NULL && strcmp(e->pub.arch, arch) != 0)) {
		unpkg_err_set(err, UNPKG_ERR_USAGE,
			      "stanza of %s:%s given for package %s:%s",
			      e->pub.name, e->pub.arch, name,
			      arch ? arch : "*");
		goto out;
	}
	if (e->len == 0 || e->text[e->len - 1] != '\n') {
		char *t = realloc(e->text, e->len + 2);

		if (t == NULL) {
			unpkg_err_nomem(err);
			goto out;
		}
		t[e->len++] = '\n';
		t[e->len] = '\0';
		e->text = t;
	}
	ret = apply(db, e, 1, NULL, err);
	e = NULL;
out:
	instances_changed(db, name);
	entry_free(e);
	unpkg_para_destroy(&para);
	return ret;
}

int unpkg_db_pkg_status(const struct unpkg_db_pkg *pkg, const char **want,
			const char **flag, const char **status)
{
	const char *v = unpkg_para_get(&pkg->para, "Status");
	const char *why, *bad;
	int idx[3];

	if (v == NULL || parse_status(v, idx, &why, &bad) < 0)
		return -1;
	*want = want_words[idx[0]];
	*flag = flag_words[idx[1]];
	*status = stat_words[idx[2]];
	return 0;
}

enum unpkg_status unpkg_db_pkg_state(const struct unpkg_db_pkg *pkg)
{
	const char *v = unpkg_para_get(&pkg->para, "Status");
	const char *why, *bad;
	int idx[3];

	if (v == NULL || parse_status(v, idx, &why, &bad) < 0)
		return UNPKG_STATUS_INVALID;
	return (enum unpkg_status)(idx[2] + 1);
}

const char *unpkg_status_name(enum unpkg_status st)
{
	if (st <= UNPKG_STATUS_INVALID || st > UNPKG_STATUS_INSTALLED)
		return NULL;
	return stat_words[st - 1];
}

int unpkg_status_configured(enum unpkg_status st)
{
	return st == UNPKG_STATUS_INSTALLED ||
	       st == UNPKG_STATUS_TRIGGERS_PENDING ||
	       st == UNPKG_STATUS_TRIGGERS_AWAITED;
}

int unpkg_status_present(enum unpkg_status st)
{
	return st != UNPKG_STATUS_INVALID &&
	       st != UNPKG_STATUS_NOT_INSTALLED &&
	       st != UNPKG_STATUS_CONFIG_FILES;
}

/* ---- writing ------------------------------------------------------------ */

int unpkg_db_serialise(const struct unpkg_db *db, char **out, size_t *len,
		       struct unpkg_err *err)
{
	size_t i, total = 0, off = 0;
	char *buf;

	for (i = 0; i < db->n; i++)
		total += db->v[i]->len + 1;
	buf = malloc(total + 1);
	if (buf == NULL)
		return unpkg_err_nomem(err);
	for (i = 0; i < db->n; i++) {
		memcpy(buf + off, db->v[i]->text, db->v[i]->len);
		off += db->v[i]->len;
		buf[off++] = '\n';
	}
	buf[off] = '\0';
	*out = buf;
	*len = total;
	return 0;
}

void unpkg_db_staged_close(struct unpkg_db_staged *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->fd[i] >= 0)
			close(s->fd[i]);
	s->n = 0;
}

int unpkg_db_write_begin(struct unpkg_db *db, struct unpkg_db_staged *s,
			 struct unpkg_err *err)
{
	static const char one[] = "1\n";
	char *buf = NULL, *shown = NULL;
	size_t len = 0;
	int fd, ret = -1;

	s->n = 0;
	db->written = 1;
	/* A write records what the caller has put in place, new lists
	 * among it, unless it said it put none. */
	if (!db->lists_held)
		db->files_stale = 1;
	if (db->flags & UNPKG_DB_READONLY) {
		unpkg_err_set(err, UNPKG_ERR_USAGE,
			      "database %s was opened read-only",
			      db->admindir);
		goto out;
	}
	if (db->format_missing) {
		shown = path_join(db->admindir, "info/format");
		if (shown == NULL) {
			unpkg_err_nomem(err);
			goto out;
		}
		fd = write_tmp(db, "info/format-new", one, sizeof(one) - 1,
			       shown, err);
		if (fd < 0)
			goto out;
		s->fd[s->n] = fd;
		s->name[s->n++] = "info/format-new";
		free(shown);
	}
	shown = path_join(db->admindir, "status");
	if (shown == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	if (unpkg_db_serialise(db, &buf, &len, err) < 0)
		goto out;
	fd = write_tmp(db, "status-new", buf, len, shown, err);
	if (fd < 0)
		goto out;
	s->fd[s->n] = fd;
	s->name[s->n++] = "status-new";
	ret = 0;
out:
	if (ret < 0) {
		if (s->n > 0)
			unlinkat(db->dirfd, "info/format-new", 0);
		unpkg_db_staged_close(s);
	}
	free(buf);
	free(shown);
	return ret;
}

int unpkg_db_write_end(struct unpkg_db *db, unsigned long *fsyncs,
		       struct unpkg_err *err)
{
	int sync = !(db->flags & UNPKG_DB_NOSYNC);
	unsigned long count = 0;
	char *shown = NULL;
	size_t i, removed = 0;
	int ret = -1;

	shown = path_join(db->admindir, "status");
	if (shown == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	if (db->format_missing &&
	    renameat(db->dirfd, "info/format-new", db->dirfd,
		     "info/format") < 0) {
		unpkg_err_sys(err, "cannot install %s/info/format",
			      db->admindir);
		goto out;
	}
	/* status itself is never missing: status-old is only a courtesy
	 * copy, replaced the way dpkg replaces it. */
	if (unlinkat(db->dirfd, "status-old", 0) < 0 && errno != ENOENT) {
		unpkg_err_sys(err, "cannot remove %s-old", shown);
		goto out;
	}
	if (linkat(db->dirfd, "status", db->dirfd, "status-old", 0) < 0 &&
	    errno != ENOENT) {
		unpkg_err_sys(err, "cannot link %s to %s-old", shown, shown);
		goto out;
	}
	if (renameat(db->dirfd, "status-new", db->dirfd, "status") < 0) {
		unpkg_err_sys(err, "cannot install %s-new as %s", shown,
			      shown);
		goto out;
	}
	if (sync && !db->admindir_sync_failed) {
		count++;
		if (fsync(db->dirfd) < 0) {
			db->admindir_sync_failed = 1;
			unpkg_err_sync(err, "cannot fsync %s", db->admindir);
			goto out;
		}
	}
	db->format_missing = 0;
	/* Only now may the journal go: a surviving entry would be applied
	 * again over the new status and roll it back. */
	for (i = 0; i < db->napplied; i++) {
		char name[sizeof("updates/") + UPDATES_NAME_MAX];

		memcpy(name, "updates/", sizeof("updates/") - 1);
		memcpy(name + sizeof("updates/") - 1, db->applied[i],
		       strlen(db->applied[i]) + 1);
		if (unlinkat(db->dirfd, name, 0) < 0) {
			if (errno == ENOENT)
				continue;
			unpkg_err_sys(err, "cannot remove %s/%s",
				      db->admindir, name);
			goto out;
		}
		removed++;
	}
	for (i = 0; i < db->napplied; i++)
		free(db->applied[i]);
	db->napplied = 0;
	if (removed > 0 && sync && !db->updates_sync_failed) {
		count++;
		if (fsync_at(db, "updates", err) < 0) {
			if (err->code == UNPKG_ERR_SYNC)
				db->updates_sync_failed = 1;
			goto out;
		}
	}
	ret = 0;
out:
	if (fsyncs != NULL)
		*fsyncs += count;
	free(shown);
	return ret;
}

void unpkg_db_order_writes(struct unpkg_db *db, unsigned long *waits)
{
	db->waits = waits;
}

int unpkg_db_order_writes_where_ordered(struct unpkg_db *db,
					unsigned long *waits,
					struct unpkg_err *err)
{
	int ordered = unpkg_fsclass_commit_orders_fd(db->dirfd, &db->wb, err);

	if (ordered < 0)
		return -1;
	if (ordered)
		unpkg_db_order_writes(db, waits);
	return 0;
}

int unpkg_db_writes_ordered(const struct unpkg_db *db)
{
	return db->waits != NULL;
}

/* Make a new file of a write durable before its rename: fdatasync, or
 * (unpkg_db_order_writes()) a wait for its writeback, which the fsync of
 * the admindir after the rename flushes.  Where sync_file_range cannot
 * serve, fdatasync. */
static int sync_new(struct unpkg_db *db, int fd, const char *name,
		    unsigned long *fsyncs, struct unpkg_err *err)
{
	const char *failed = "fdatasync";
	int rc;

	if (db->waits != NULL) {
		rc = unpkg_wait_written(fd, db->wb, db->waits, fsyncs,
					&failed);
	} else {
		if (fsyncs != NULL)
			(*fsyncs)++;
		rc = fdatasync(fd);
	}
	if (rc < 0)
		return unpkg_err_sync(err, "cannot %s %s/%s", failed,
				      db->admindir, name);
	return 0;
}

int unpkg_db_write(struct unpkg_db *db, unsigned long *fsyncs,
		   struct unpkg_err *err)
{
	struct unpkg_db_staged s;
	int format = db->format_missing;
	size_t i;

	if (unpkg_db_write_begin(db, &s, err) < 0)
		return -1;
	for (i = 0; i < s.n && !(db->flags & UNPKG_DB_NOSYNC); i++)
		if (sync_new(db, s.fd[i], s.name[i], fsyncs, err) < 0)
			goto fail;
	for (i = 0; i < s.n; i++) {
		int fd = s.fd[i];

		s.fd[i] = -1;
		if (close(fd) < 0) {
			unpkg_err_sys(err, "cannot close %s/%s", db->admindir,
				      s.name[i]);
			goto fail;
		}
	}
	if (unpkg_db_write_end(db, fsyncs, err) < 0)
		return -1;
	if (!format || (db->flags & UNPKG_DB_NOSYNC))
		return 0;
	if (fsyncs != NULL)
		(*fsyncs)++;
	return fsync_at(db, "info", err);
fail:
	for (i = 0; i < s.n; i++)
		unlinkat(db->dirfd, s.name[i], 0);
	unpkg_db_staged_close(&s);
	return -1;
}

void unpkg_db_sync_lost(struct unpkg_db *db)
{
	db->admindir_sync_failed = 1;
}

int unpkg_db_durable(const struct unpkg_db *db)
{
	return !db->admindir_sync_failed && !db->updates_sync_failed;
}

/* ---- file lists --------------------------------------------------------- */

/* Walk the lines of a .list file as dpkg reads them: every line must end
 * in a newline, one trailing '/' is dropped, an empty name is an error. */
static int list_walk(const char *buf, size_t len, const char *key,
		     int (*fn)(void *ctx, const char *path, size_t n,
			       struct unpkg_err *err),
		     void *ctx, struct unpkg_err *err)
{
	size_t p = 0;

	while (p < len) {
		const char *nl = memchr(buf + p, '\n', len - p);
		size_t end;

		if (nl == NULL)
			return unpkg_err_set(err, UNPKG_ERR_FORMAT,
					     "files list file for package "
					     "'%s' is missing final newline",
					     key);
		end = (size_t)(nl - buf);
		if (end > p && buf[end - 1] == '/')
			end--;
		if (end == p)
			return unpkg_err_set(err, UNPKG_ERR_FORMAT,
					     "files list file for package "
					     "'%s' contains empty filename",
					     key);
		if (fn(ctx, buf + p, end - p, err) < 0)
			return -1;
		p = (size_t)(nl - buf) + 1;
	}
	return 0;
}

struct add_ctx {
	struct unpkg_pathtab *t;
	uint32_t owner;
};

static int add_cb(void *ctx, const char *path, size_t n,
		  struct unpkg_err *err)
{
	struct add_ctx *a = ctx;

	return unpkg_pathtab_add(a->t, path, n, a->owner, err);
}

static int list_name(const char *key, const char *suffix, char **name,
		     char **shown, const char *admindir, struct unpkg_err *err)
{
	if (asprintf(name, "info/%s.list%s", key, suffix) < 0) {
		*name = NULL;
		unpkg_err_nomem(err);
		return -1;
	}
	*shown = path_join(admindir, *name);
	if (*shown == NULL) {
		free(*name);
		*name = NULL;
		unpkg_err_nomem(err);
		return -1;
	}
	return 0;
}

static int is_staged(const struct unpkg_db *db, const char *key)
{
	size_t i;

	for (i = 0; i < db->nstaged; i++)
		if (strcmp(db->staged[i], key) == 0)
			return 1;
	return 0;
}

/* Add the list of entry `e` to `t`: its staged one while that is there
 * (unpkg_db_list_staged()), else the one in place (a missing list counts
 * as empty: dpkg only warns about it and carries on). */
static int add_list(const struct unpkg_db *db, struct unpkg_pathtab *t,
		    const struct entry *e, struct unpkg_err *err)
{
	static const char *const suffixes[] = { ".dpkg-new", "" };
	char *name = NULL, *shown = NULL, *buf = NULL;
	struct add_ctx a;
	size_t len, k;
	int r = 0, ret = -1;

	for (k = is_staged(db, e->pub.key) ? 0 : 1; r == 0 && k < 2; k++) {
		free(name);
		free(shown);
		if (list_name(e->pub.key, suffixes[k], &name, &shown,
			      db->admindir, err) < 0)
			return -1;
		r = slurp(db->dirfd, name, shown, 1, &buf, &len, err);
		if (r < 0)
			goto out;
	}
	if (r > 0) {
		a.t = t;
		a.owner = unpkg_pathtab_owner(t, e->pub.key, err);
		if (a.owner == 0)
			goto out;
		if (list_walk(buf, len, e->pub.key, add_cb, &a, err) < 0) {
			unpkg_err_prefix(err, "%s", shown);
			goto out;
		}
	}
	ret = 0;
out:
	free(buf);
	free(name);
	free(shown);
	return ret;
}

static void forget_stale(struct unpkg_db *db)
{
	unpkg_db_list_free(db->stale, db->nstale);
	db->stale = NULL;
	db->nstale = db->capstale = 0;
}

/* Read the lists of the packages whose lists may have changed alone
 * (unpkg_db_list_changed(), unpkg_db_put()) again. */
static int reload_stale_lists(struct unpkg_db *db, struct unpkg_err *err)
{
	struct unpkg_strmap keys;
	size_t i;
	int ret = -1;

	unpkg_strmap_init(&keys);
	for (i = 0; i < db->nstale; i++)
		if (unpkg_strmap_put(&keys, db->stale[i], db->stale[i], NULL,
				     err) < 0)
			goto out;
	unpkg_pathtab_drop(&db->files, &keys);
	for (i = 0; i < db->n; i++) {
		const struct entry *e = db->v[i];

		if (e->stat != ST_NOTINST &&
		    unpkg_strmap_get(&keys, e->pub.key) != NULL &&
		    add_list(db, &db->files, e, err) < 0)
			goto out;
	}
	forget_stale(db);
	ret = 0;
out:
	unpkg_strmap_destroy(&keys);
	return ret;
}

int unpkg_db_load_files(struct unpkg_db *db, struct unpkg_err *err)
{
	struct unpkg_pathtab t;
	size_t i;
	int ret = -1;

	/* Callers ask before every lookup; reading every list of the
	 * system again for each file of a package would cost more than
	 * the extraction itself, and so would reading them all again for
	 * each package a run removes. */
	if (db->files_loaded && !db->files_stale)
		return reload_stale_lists(db, err);
	memset(&t, 0, sizeof(t));
	for (i = 0; i < db->n; i++) {
		if (db->v[i]->stat != ST_NOTINST &&
		    add_list(db, &t, db->v[i], err) < 0)
			goto out;
	}
	unpkg_pathtab_destroy(&db->files);
	db->files = t;
	memset(&t, 0, sizeof(t));
	db->files_loaded = 1;
	db->files_stale = 0;
	forget_stale(db);
	ret = 0;
out:
	unpkg_pathtab_destroy(&t);
	return ret;
}

void unpkg_db_hold_lists(struct unpkg_db *db, int held)
{
	db->lists_held = held;
}

void unpkg_db_files_changed(struct unpkg_db *db)
{
	db->files_stale = 1;
}

void unpkg_db_list_changed(struct unpkg_db *db, const char *key)
{
	char **nv, *copy;
	size_t i;

	if (!db->files_loaded || db->files_stale)
		return;
	for (i = 0; i < db->nstale; i++)
		if (strcmp(db->stale[i], key) == 0)
			return;
	/* without memory to note the one list, all are read again */
	nv = unpkg_grow(db->stale, &db->capstale, db->nstale + 1, sizeof(*nv),
			16);
	copy = nv != NULL ? strdup(key) : NULL;
	if (copy == NULL) {
		if (nv != NULL)
			db->stale = nv;
		db->files_stale = 1;
		return;
	}
	db->stale = nv;
	db->stale[db->nstale++] = copy;
}

int unpkg_db_list_staged(struct unpkg_db *db, const char *key,
			 struct unpkg_err *err)
{
	char **nv, *copy;

	if (!is_staged(db, key)) {
		nv = grow(db->staged, &db->capstaged, db->nstaged + 1,
			  sizeof(*nv), 16, err);
		if (nv == NULL)
			return -1;
		db->staged = nv;
		if ((copy = strdup(key)) == NULL)
			return unpkg_err_nomem(err);
		db->staged[db->nstaged++] = copy;
	}
	unpkg_db_list_changed(db, key);
	return 0;
}

int unpkg_db_listed_below_root(const char *path)
{
	return path[0] == '/' && strcmp(path, "/.") != 0;
}

size_t unpkg_db_files_count(const struct unpkg_db *db)
{
	return db->files_loaded ? unpkg_pathtab_count(&db->files) : 0;
}

const char *unpkg_db_file_owner(const struct unpkg_db *db, const char *path,
				const char *except_key)
{
	return db->files_loaded ? unpkg_pathtab_find(&db->files, path, except_key)
				: NULL;
}

struct vec_ctx {
	char **v;
	size_t n, cap;
};

static int vec_cb(void *ctx, const char *path, size_t n,
		  struct unpkg_err *err)
{
	struct vec_ctx *c = ctx;
	char **nv;
	char *p;

	nv = grow(c->v, &c->cap, c->n + 1, sizeof(*c->v), 64, err);
	if (nv == NULL)
		return -1;
	c->v = nv;
	p = xstrndup(path, n);
	if (p == NULL)
		return unpkg_err_nomem(err);
	c->v[c->n++] = p;
	return 0;
}

static int read_list(const struct unpkg_db *db, const char *key,
		     const char *suffix, char ***paths, size_t *count,
		     struct unpkg_err *err)
{
	struct vec_ctx c = { NULL, 0, 0 };
	char *name = NULL, *shown = NULL, *buf = NULL;
	size_t len;
	int r, ret = -1;

	*paths = NULL;
	*count = 0;
	if (list_name(key, suffix, &name, &shown, db->admindir, err) < 0)
		goto out;
	r = slurp(db->dirfd, name, shown, 1, &buf, &len, err);
	if (r < 0)
		goto out;
	if (r == 0) {
		ret = 0;
		goto out;
	}
	/* An existing list, even an empty one, gives a non-NULL array, so
	 * callers can tell it from a missing one. */
	c.v = malloc(64 * sizeof(*c.v));
	if (c.v == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	c.cap = 64;
	if (list_walk(buf, len, key, vec_cb, &c, err) < 0) {
		unpkg_err_prefix(err, "%s", shown);
		goto out;
	}
	*paths = c.v;
	*count = c.n;
	c.v = NULL;
	c.n = 0;
	ret = 0;
out:
	unpkg_db_list_free(c.v, c.n);
	free(buf);
	free(name);
	free(shown);
	return ret;
}

int unpkg_db_read_list(const struct unpkg_db *db, const char *key,
		       char ***paths, size_t *count, struct unpkg_err *err)
{
	return read_list(db, key, "", paths, count, err);
}

int unpkg_db_read_list_backup(const struct unpkg_db *db, const char *key,
			      char ***paths, size_t *count,
			      struct unpkg_err *err)
{
	return read_list(db, key, ".dpkg-tmp", paths, count, err);
}

void unpkg_db_list_free(char **paths, size_t count)
{
	size_t i;

	if (paths == NULL)
		return;
	for (i = 0; i < count; i++)
		free(paths[i]);
	free(paths);
}

/* ---- other files of the admindir ------------------------------------------ */

int unpkg_db_read_file(const struct unpkg_db *db, const char *name,
		       char **buf, size_t *len, char **shown,
		       struct unpkg_err *err)
{
	int r;

	*shown = path_join(db->admindir, name);
	if (*shown == NULL)
		return unpkg_err_nomem(err);
	r = slurp(db->dirfd, name, *shown, 1, buf, len, err);
	if (r < 0) {
		free(*shown);
		*shown = NULL;
	}
	return r;
}
