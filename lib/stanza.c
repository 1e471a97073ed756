/* stanza.c - a package's status-file stanza, byte for byte as dpkg 1.21
 * writes it, and dpkg's checks of a binary package's control file.
 *
 * The field order, which fields are dropped and how values are normalised
 * were found by installing packages with dpkg 1.21 and reading back its
 * status file; tests/check_stanza.c holds those results. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "relation.h"
#include "stanza.h"
#include "version.h"

enum kind {
	K_NAME,			/* Package: folded to lower case */
	K_BOOL,			/* yes/no, written only when yes */
	K_STATUS,		/* from the state */
	K_PRIORITY,
	K_TEXT,			/* verbatim unless empty */
	K_MULTIARCH,		/* no/same/foreign/allowed, "no" not written */
	K_VERSION,
	K_REVISION,		/* obsolete, never written */
	K_CONFIGVERSION,	/* from the state */
	K_RELATION,
	K_CONFFILES,		/* from the state */
	K_ARCHIVE,		/* Packages-file fields, never written */
	K_TRIGGERS,		/* from the state, never from the control */
};

/* dpkg's own fields, in the order it writes them. */
enum field {
	F_PACKAGE, F_ESSENTIAL, F_PROTECTED, F_STATUS, F_PRIORITY, F_SECTION,
	F_INSTALLED_SIZE, F_ORIGIN, F_MAINTAINER, F_BUGS, F_ARCHITECTURE,
	F_MULTI_ARCH, F_SOURCE, F_VERSION, F_REVISION, F_CONFIG_VERSION,
	F_REPLACES, F_PROVIDES, F_DEPENDS, F_PRE_DEPENDS, F_RECOMMENDS,
	F_SUGGESTS, F_BREAKS, F_CONFLICTS, F_ENHANCES, F_CONFFILES,
	F_FILENAME, F_SIZE, F_MD5SUM, F_MSDOS_FILENAME, F_DESCRIPTION,
	F_TRIGGERS_PENDING, F_TRIGGERS_AWAITED,
	NKNOWN
};

static const struct known {
	const char *name;
	enum kind kind;
} known[NKNOWN] = {
	[F_PACKAGE] = { "Package", K_NAME },
	[F_ESSENTIAL] = { "Essential", K_BOOL },
	[F_PROTECTED] = { "Protected", K_BOOL },
	[F_STATUS] = { "Status", K_STATUS },
	[F_PRIORITY] = { "Priority", K_PRIORITY },
	[F_SECTION] = { "Section", K_TEXT },
	[F_INSTALLED_SIZE] = { "Installed-Size", K_TEXT },
	[F_ORIGIN] = { "Origin", K_TEXT },
	[F_MAINTAINER] = { "Maintainer", K_TEXT },
	[F_BUGS] = { "Bugs", K_TEXT },
	[F_ARCHITECTURE] = { "Architecture", K_TEXT },
	[F_MULTI_ARCH] = { "Multi-Arch", K_MULTIARCH },
	[F_SOURCE] = { "Source", K_TEXT },
	[F_VERSION] = { "Version", K_VERSION },
	[F_REVISION] = { "Revision", K_REVISION },
	[F_CONFIG_VERSION] = { "Config-Version", K_CONFIGVERSION },
	[F_REPLACES] = { "Replaces", K_RELATION },
	[F_PROVIDES] = { "Provides", K_RELATION },
	[F_DEPENDS] = { "Depends", K_RELATION },
	[F_PRE_DEPENDS] = { "Pre-Depends", K_RELATION },
	[F_RECOMMENDS] = { "Recommends", K_RELATION },
	[F_SUGGESTS] = { "Suggests", K_RELATION },
	[F_BREAKS] = { "Breaks", K_RELATION },
	[F_CONFLICTS] = { "Conflicts", K_RELATION },
	[F_ENHANCES] = { "Enhances", K_RELATION },
	[F_CONFFILES] = { "Conffiles", K_CONFFILES },
	[F_FILENAME] = { "Filename", K_ARCHIVE },
	[F_SIZE] = { "Size", K_ARCHIVE },
	[F_MD5SUM] = { "MD5sum", K_ARCHIVE },
	[F_MSDOS_FILENAME] = { "MSDOS-Filename", K_ARCHIVE },
	[F_DESCRIPTION] = { "Description", K_TEXT },
	[F_TRIGGERS_PENDING] = { "Triggers-Pending", K_TRIGGERS },
	[F_TRIGGERS_AWAITED] = { "Triggers-Awaited", K_TRIGGERS },
};

/* Old names dpkg still reads as the field they were renamed to. */
static const struct nickname {
	const char *nick;
	enum field canon;
	const char *warning;
} nicknames[] = {
	{ "Recommended", F_RECOMMENDS, "obsolete 'Recommended' field used" },
	{ "Optional", F_SUGGESTS, "obsolete 'Optional' field used" },
	{ "Class", F_PRIORITY, "obsolete 'Class' field used" },
	{ "Package-Revision", F_REVISION,
	  "obsolete 'Package-Revision' field used" },
	{ "Package_Revision", F_REVISION,
	  "obsolete 'Package_Revision' field used" },
};

static const char *const priorities[] = {
	"required", "important", "standard", "optional", "extra",
};

static const char *const multiarchs[] = { "no", "same", "foreign", "allowed" };
static const char *const booleans[] = { "no", "yes" };

static const char *const wants[] = {
	"unknown", "install", "hold", "deinstall", "purge",
};

static const char *const flags[] = { "ok", "reinstreq" };

static const char *const statuses[] = {
	"not-installed", "config-files", "half-installed", "unpacked",
	"half-configured", "triggers-awaited", "triggers-pending", "installed",
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static int known_index(const char *name)
{
	size_t i;

	for (i = 0; i < NKNOWN; i++) {
		if (unpkg_field_name_eq(name, known[i].name))
			return (int)i;
	}
	return -1;
}

/* Index in known[] of the field `name` stands for, or -1 for a field dpkg
 * does not know (kept verbatim after the others). */
static int canon_index(const char *name, const struct nickname **nick)
{
	size_t i;

	*nick = NULL;
	for (i = 0; i < COUNT(nicknames); i++) {
		if (unpkg_field_name_eq(name, nicknames[i].nick)) {
			*nick = &nicknames[i];
			return (int)nicknames[i].canon;
		}
	}
	return known_index(name);
}

/* The known fields of a paragraph: vals[i] for known[i], NULL if absent,
 * names[i] as spelt in the paragraph.  `warning` gets the first obsolete alias met (may be NULL). */
static int collect(const struct unpkg_para *para, const char *vals[NKNOWN],
		   const char *names[NKNOWN], const char **warning,
		   struct unpkg_err *err)
{
	size_t i;

	for (i = 0; i < NKNOWN; i++) {
		vals[i] = NULL;
		names[i] = NULL;
	}
	for (i = 0; i < para->count; i++) {
		const struct nickname *nick;
		int k = canon_index(para->fields[i].name, &nick);

		if (k < 0)
			continue;
		/* dpkg would merge the two relationship lists, or keep the
		 * last Priority: nobody relies on that, so refuse. */
		if (vals[k] != NULL)
			return unpkg_err_set(err, UNPKG_ERR_FORMAT,
					     "fields '%s' and '%s' both "
					     "given ('%s' is the obsolete "
					     "name of '%s')", names[k],
					     para->fields[i].name,
					     nick != NULL ? nick->nick :
					     names[k], known[k].name);
		vals[k] = para->fields[i].value;
		names[k] = para->fields[i].name;
		if (nick != NULL && warning != NULL && *warning == NULL)
			*warning = nick->warning;
	}
	return 0;
}

static int is_unset(const char *s)
{
	return s == NULL || *s == '\0';
}

static unsigned char lower(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

/* dpkg's word matching (parse_nv): a case-insensitive prefix match of one
 * of `words`, after which only white space may follow.  Returns the index,
 * -1 if no word matches, -2 if one matches with text after it. */
static int match_word(const char *value, const char *const *words, size_t n)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		const char *rest = value;

		for (k = 0; words[i][k] != '\0'; k++, rest++) {
			if (lower((unsigned char)*rest) !=
			    (unsigned char)words[i][k])
				break;
		}
		if (words[i][k] != '\0')
			continue;
		while (*rest == ' ' || *rest == '\t' || *rest == '\n' ||
		       *rest == '\v' || *rest == '\f')
			rest++;
		return *rest == '\0' ? (int)i : -2;
	}
	return -1;
}

static int parse_choice(const char *field, const char *value,
			const char *what, const char *const *words, size_t n,
			int *out, struct unpkg_err *err)
{
	int i = match_word(value, words, n);

	if (i == -2)
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "'%s' field: trailing junk in '%.60s' "
				     "(expected %s)", field, value, what);
	if (i < 0)
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "'%s' field: invalid value '%.60s' "
				     "(expected %s)", field, value, what);
	*out = i;
	return 0;
}

/* Priority: one of dpkg's names (written in lower case), or any other
 * word, kept as it is. */
static int parse_priority(const char *value, const char **out,
			  struct unpkg_err *err)
{
	int i = match_word(value, priorities, COUNT(priorities));

	if (i == -2)
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "'Priority' field: trailing junk in "
				     "'%.60s'", value);
	*out = i >= 0 ? priorities[i] : value;
	return 0;
}

static int is_alnum(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z');
}

/* dpkg's rule for package names (pkg_name_is_illegal): it folds them to
 * lower case afterwards, so upper case is accepted. */
static int check_pkgname(const char *name, struct unpkg_err *err)
{
	const char *p;

	if (*name == '\0')
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "empty 'Package' field");
	if (!is_alnum((unsigned char)*name))
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "invalid package name '%.60s' in "
				     "'Package' field: must start with a "
				     "letter or digit", name);
	for (p = name; *p != '\0'; p++) {
		if (!is_alnum((unsigned char)*p) && strchr("-+._", *p) == NULL)
			return unpkg_err_set(err, UNPKG_ERR_FORMAT,
					     "invalid package name '%.60s' in "
					     "'Package' field: only letters, "
					     "digits and '-+._' are allowed",
					     name);
	}
	return 0;
}

static int check_arch(const char *arch, struct unpkg_err *err)
{
	const char *p;

	if (*arch == '\0')
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "empty 'Architecture' field");
	for (p = arch; *p != '\0'; p++) {
		if (!is_alnum((unsigned char)*p) && (*p != '-' || p == arch))
			return unpkg_err_set(err, UNPKG_ERR_FORMAT,
					     "invalid architecture name "
					     "'%.60s' in 'Architecture' field: "
					     "only letters, digits and '-' are "
					     "allowed", arch);
	}
	return 0;
}

/* Field names dpkg refuses, whatever the field. */
static int check_field_names(const struct unpkg_para *control,
			     struct unpkg_err *err)
{
	size_t i;

	for (i = 0; i < control->count; i++) {
		const char *name = control->fields[i].name;
		const struct nickname *nick;

		if (name[0] == '-')
			return unpkg_err_set(err, UNPKG_ERR_FORMAT,
					     "field name '%s' cannot start "
					     "with a hyphen", name);
		if (name[1] == '\0' && canon_index(name, &nick) < 0)
			return unpkg_err_set(err, UNPKG_ERR_FORMAT,
					     "user-defined field name '%s' too "
					     "short", name);
	}
	return 0;
}

/* dpkg refuses this combination in control files and in its database. */
static int check_multiarch(const char *vals[NKNOWN], struct unpkg_err *err)
{
	const char *ma = vals[F_MULTI_ARCH];
	const char *arch = vals[F_ARCHITECTURE];
	int i = 0;

	if (is_unset(ma))
		return 0;
	if (parse_choice("Multi-Arch", ma, "no, same, foreign or allowed",
			 multiarchs, COUNT(multiarchs), &i, err) < 0)
		return -1;
	if (strcmp(multiarchs[i], "same") == 0 && arch != NULL &&
	    strcmp(arch, "all") == 0)
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "package has 'Multi-Arch: same' field "
				     "but is architecture 'all'");
	return 0;
}

static int check_relations(const char *vals[NKNOWN], struct unpkg_err *err)
{
	size_t i;

	for (i = 0; i < NKNOWN; i++) {
		struct unpkg_relations rels;
		int r;

		if (known[i].kind != K_RELATION || vals[i] == NULL)
			continue;
		unpkg_relations_init(&rels);
		r = unpkg_relations_parse(&rels, known[i].name, vals[i], err);
		unpkg_relations_destroy(&rels);
		if (r < 0)
			return -1;
	}
	return 0;
}

static int check_version(const char *value, struct unpkg_err *err)
{
	struct unpkg_version v;
	int ret;

	ret = unpkg_version_parse(&v, value, err);
	if (ret < 0)
		unpkg_err_prefix(err, "'Version' field");
	unpkg_version_destroy(&v);
	return ret;
}

int unpkg_stanza_check_control(const struct unpkg_para *control,
			       const char **warning, struct unpkg_err *err)
{
	const char *vals[NKNOWN];
	const char *names[NKNOWN];
	const char *alias = NULL;
	const char *v;
	size_t i;
	int yes = 0;

	*warning = NULL;
	if (check_field_names(control, err) < 0)
		return -1;
	if (collect(control, vals, names, &alias, err) < 0)
		return -1;
	for (i = 0; i < NKNOWN; i++) {
		if (vals[i] == NULL)
			continue;
		switch (known[i].kind) {
		case K_STATUS:
		case K_CONFIGVERSION:
		case K_CONFFILES:
		case K_TRIGGERS:
			return unpkg_err_set(err, UNPKG_ERR_FORMAT,
					     "'%s' field not allowed in a "
					     "package's control file (it "
					     "belongs to the database)",
					     names[i]);
		case K_REVISION:
			/* dpkg appends it to the version, in an order that
			 * depends on the field order; unused for decades. */
			return unpkg_err_set(err, UNPKG_ERR_UNSUPPORTED,
					     "obsolete '%s' field not "
					     "supported (the revision belongs "
					     "in 'Version')", names[i]);
		case K_BOOL:
			if (*vals[i] != '\0' &&
			    parse_choice(known[i].name, vals[i], "yes or no",
					 booleans, COUNT(booleans), &yes,
					 err) < 0)
				return -1;
			break;
		default:
			break;
		}
	}

	v = vals[F_PACKAGE];
	if (v == NULL)
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "missing 'Package' field");
	if (check_pkgname(v, err) < 0)
		return -1;

	v = vals[F_VERSION];
	if (v == NULL)
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "missing 'Version' field");
	if (check_version(v, err) < 0)
		return -1;

	v = vals[F_ARCHITECTURE];
	if (v == NULL)
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "missing 'Architecture' field");
	if (check_arch(v, err) < 0)
		return -1;

	if (check_multiarch(vals, err) < 0)
		return -1;

	v = vals[F_PRIORITY];
	if (v != NULL && *v != '\0' && parse_priority(v, &v, err) < 0)
		return -1;

	if (check_relations(vals, err) < 0)
		return -1;

	if (is_unset(vals[F_MAINTAINER]))
		*warning = "missing 'Maintainer' field";
	if (is_unset(vals[F_DESCRIPTION]))
		*warning = *warning != NULL ?
			   "missing 'Maintainer' and 'Description' fields" :
			   "missing 'Description' field";
	if (*warning == NULL)
		*warning = alias;
	return 0;
}

/* The output string (buf.h): an allocation failure is remembered and
 * reported once at the end. */
static void add_n(struct unpkg_buf *b, const char *s, size_t n)
{
	(void)unpkg_buf_add(b, s, n);
}

static void add(struct unpkg_buf *b, const char *s)
{
	add_n(b, s, strlen(s));
}

/* "Name: value\n", with dpkg's ": " even before a value that starts on
 * the next line. */
static void add_field(struct unpkg_buf *b, const char *name, const char *value)
{
	add(b, name);
	add(b, ": ");
	add(b, value);
	add(b, "\n");
}

static int find_word(const char *value, const char *const *words, size_t n)
{
	size_t i;

	if (value == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		if (strcmp(value, words[i]) == 0)
			return (int)i;
	}
	return -1;
}

static int check_state(const struct unpkg_stanza_state *state,
		       struct unpkg_err *err)
{
	const char *s;

	if (find_word(state->want, wants, COUNT(wants)) < 0)
		return unpkg_err_set(err, UNPKG_ERR_USAGE,
				     "invalid package selection '%s'",
				     state->want != NULL ? state->want : "");
	if (find_word(state->flag, flags, COUNT(flags)) < 0)
		return unpkg_err_set(err, UNPKG_ERR_USAGE,
				     "invalid package flag '%s'",
				     state->flag != NULL ? state->flag : "");
	if (find_word(state->status, statuses, COUNT(statuses)) < 0)
		return unpkg_err_set(err, UNPKG_ERR_USAGE,
				     "invalid package status '%s'",
				     state->status != NULL ? state->status :
				     "");
	/* dpkg refuses to read these states back without their fields */
	if ((strcmp(state->status, "triggers-pending") == 0 &&
	     is_unset(state->triggers_pending)) ||
	    (strcmp(state->status, "triggers-awaited") == 0 &&
	     is_unset(state->triggers_awaited)))
		return unpkg_err_set(err, UNPKG_ERR_USAGE,
				     "package status '%s' without its "
				     "trigger field", state->status);
	s = state->conffiles;
	if (s != NULL && *s != '\0') {
		if (*s != '\n')
			return unpkg_err_set(err, UNPKG_ERR_USAGE,
					     "Conffiles value must start with "
					     "a newline");
		for (; *s != '\0'; s++) {
			if (*s == '\r' ||
			    (*s == '\n' && s[1] != ' ' && s[1] != '\t'))
				return unpkg_err_set(err, UNPKG_ERR_USAGE,
						     "malformed Conffiles "
						     "value");
		}
	}
	return 0;
}

/* dpkg's unambiguous spelling of a version: the epoch is shown when it is
 * not zero, and also when the upstream part has a ':' of its own, which
 * would otherwise be read as an epoch. */
static int add_version(struct unpkg_buf *b, const char *name, const char *value,
		       struct unpkg_err *err)
{
	struct unpkg_version v;
	char epoch[24];

	if (unpkg_version_parse_lax(&v, value, err) < 0) {
		unpkg_err_prefix(err, "'%s' field", name);
		return -1;
	}
	add(b, name);
	add(b, ": ");
	if (v.epoch != 0 || strchr(v.upstream, ':') != NULL ||
	    strchr(v.revision, ':') != NULL) {
		snprintf(epoch, sizeof(epoch), "%u:", v.epoch);
		add(b, epoch);
	}
	add(b, v.upstream);
	if (*v.revision != '\0') {
		add(b, "-");
		add(b, v.revision);
	}
	add(b, "\n");
	unpkg_version_destroy(&v);
	return 0;
}

static int add_relation(struct unpkg_buf *b, const char *name, const char *value,
			struct unpkg_err *err)
{
	struct unpkg_relations rels;
	char *text = NULL;
	int ret = -1;

	unpkg_relations_init(&rels);
	if (unpkg_relations_parse_lax(&rels, name, value, err) < 0)
		goto out;
	/* A value of blanks only has no relations: dpkg drops the field. */
	if (rels.count == 0) {
		ret = 0;
		goto out;
	}
	text = unpkg_relations_format(&rels);
	if (text == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	add_field(b, name, text);
	ret = 0;
out:
	free(text);
	unpkg_relations_destroy(&rels);
	return ret;
}

static int add_known(struct unpkg_buf *b, size_t k, const char *value,
		     const struct unpkg_stanza_state *state,
		     struct unpkg_err *err)
{
	const char *name = known[k].name;
	const char *status = state->status;
	const char *s = NULL;
	int i = 0;

	switch (known[k].kind) {
	case K_NAME:
		add(b, "Package: ");
		for (s = value; *s != '\0'; s++) {
			char c = (char)lower((unsigned char)*s);

			add_n(b, &c, 1);
		}
		add(b, "\n");
		return 0;
	case K_STATUS:
		add(b, "Status: ");
		add(b, state->want);
		add(b, " ");
		add(b, state->flag);
		add(b, " ");
		add(b, status);
		add(b, "\n");
		return 0;
	case K_CONFIGVERSION:
		if (is_unset(state->config_version) ||
		    strcmp(status, "installed") == 0 ||
		    strcmp(status, "not-installed") == 0)
			return 0;
		return add_version(b, name, state->config_version, err);
	case K_CONFFILES:
		if (is_unset(state->conffiles) ||
		    strcmp(status, "not-installed") == 0)
			return 0;
		add(b, "Conffiles:");
		add(b, state->conffiles);
		add(b, "\n");
		return 0;
	case K_TRIGGERS:
		s = k == F_TRIGGERS_PENDING ? state->triggers_pending
					    : state->triggers_awaited;
		if (!is_unset(s))
			add_field(b, name, s);
		return 0;
	default:
		break;
	}
	if (is_unset(value))
		return 0;
	switch (known[k].kind) {
	case K_BOOL:
		if (parse_choice(name, value, "yes or no", booleans,
				 COUNT(booleans), &i, err) < 0)
			return -1;
		if (i == 1)
			add_field(b, name, "yes");
		return 0;
	case K_PRIORITY:
		if (parse_priority(value, &s, err) < 0)
			return -1;
		add_field(b, name, s);
		return 0;
	case K_MULTIARCH:
		if (parse_choice(name, value, "no, same, foreign or allowed",
				 multiarchs, COUNT(multiarchs), &i, err) < 0)
			return -1;
		if (i != 0)
			add_field(b, name, multiarchs[i]);
		return 0;
	case K_TEXT:
		add_field(b, name, value);
		return 0;
	case K_VERSION:
		return add_version(b, name, value, err);
	case K_RELATION:
		return add_relation(b, name, value, err);
	default:
		/* Revision, Filename, Size, MD5sum, MSDOS-Filename and the
		 * trigger fields: dpkg does not keep them for an installed
		 * package. */
		return 0;
	}
}

int unpkg_stanza_format(const struct unpkg_para *control,
			const struct unpkg_stanza_state *state, char **out,
			struct unpkg_err *err)
{
	struct unpkg_buf b = { 0 };
	const char *vals[NKNOWN];
	const char *names[NKNOWN];
	size_t i;
	int ret = -1;

	*out = NULL;
	if (check_state(state, err) < 0)
		goto out;
	if (check_field_names(control, err) < 0)
		goto out;
	if (collect(control, vals, names, NULL, err) < 0)
		goto out;
	if (check_multiarch(vals, err) < 0)
		goto out;
	if (is_unset(vals[F_PACKAGE])) {
		unpkg_err_set(err, UNPKG_ERR_FORMAT, "missing 'Package' field");
		goto out;
	}
	if (check_pkgname(vals[F_PACKAGE], err) < 0)
		goto out;
	/* Mirrors the check dpkg makes when it reads the stanza back. */
	if (is_unset(vals[F_VERSION]) &&
	    strcmp(state->status, "not-installed") != 0 &&
	    strcmp(state->status, "half-installed") != 0) {
		unpkg_err_set(err, UNPKG_ERR_FORMAT, "missing 'Version' field");
		goto out;
	}
	for (i = 0; i < NKNOWN; i++) {
		if (add_known(&b, i, vals[i], state, err) < 0)
			goto out;
	}
	for (i = 0; i < control->count; i++) {
		const struct unpkg_field *f = &control->fields[i];
		const struct nickname *nick;

		if (canon_index(f->name, &nick) < 0)
			add_field(&b, f->name, f->value);
	}
	if (b.oom) {
		unpkg_err_nomem(err);
		goto out;
	}
	*out = b.s;
	b.s = NULL;
	ret = 0;
out:
	free(b.s);
	return ret;
}

int unpkg_para_depends(const struct unpkg_para *para, int strict,
		       struct unpkg_relations rels[2], struct unpkg_err *err)
{
	static const char *const fields[] = { "Pre-Depends", "Depends" };
	struct unpkg_err later;
	size_t f;
	int ret = 0;

	for (f = 0; f < 2; f++)
		unpkg_relations_init(&rels[f]);
	unpkg_err_init(&later);
	for (f = 0; f < 2; f++) {
		const char *value = unpkg_para_get(para, fields[f]);
		/* the first error is the one reported */
		struct unpkg_err *e = ret == 0 ? err : &later;

		if (value != NULL &&
		    (strict ? unpkg_relations_parse(&rels[f], fields[f],
						    value, e)
			    : unpkg_relations_parse_lax(&rels[f], fields[f],
							value, e)) < 0)
			ret = -1;
	}
	return ret;
}

void unpkg_para_depends_destroy(struct unpkg_relations rels[2])
{
	unpkg_relations_destroy(&rels[0]);
	unpkg_relations_destroy(&rels[1]);
}

int unpkg_conffile_split(const char *line, const char *end, const char **path,
			 const char **hash, const char **hend)
{
	const char *w = end;

	while (line < end && *line == ' ')
		line++;
	while (w > line) {
		const char *we;

		while (w > line && w[-1] == ' ')
			w--;
		we = w;
		while (w > line && w[-1] != ' ')
			w--;
		if (we - w == 32 ||
		    (we - w == 11 && memcmp(w, "newconffile", 11) == 0)) {
			if (w == line)
				return -1;	/* no path */
			*path = line;
			*hash = w;
			*hend = we;
			return 0;
		}
	}
	return -1;
}

int unpkg_stanza_restate(const struct unpkg_para *stanza, const char *want,
			 const char *flag, const char *status,
			 const char *config_version, char **out,
			 struct unpkg_err *err)
{
	const char *old = unpkg_para_get(stanza, "Status");
	char oldwant[32] = "install";
	struct unpkg_stanza_state st = {
		.want = want,
		.flag = flag,
		.status = status,
		.conffiles = unpkg_para_get(stanza, "Conffiles"),
		.config_version = config_version != NULL
				  ? config_version
				  : unpkg_para_get(stanza, "Config-Version"),
		.triggers_pending = unpkg_para_get(stanza, "Triggers-Pending"),
		.triggers_awaited = unpkg_para_get(stanza, "Triggers-Awaited"),
	};

	if (want == NULL) {
		if (old != NULL)
			sscanf(old, "%31s", oldwant);
		st.want = oldwant;
	}
	return unpkg_stanza_format(stanza, &st, out, err);
}
