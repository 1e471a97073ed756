/* force.c - dpkg's force names. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "force.h"

#define H UNPKG_FORCE_HONOURED
#define S UNPKG_FORCE_STRICT
#define M UNPKG_FORCE_MOOT

static const struct unpkg_force_info table[] = {
	{ "all", UNPKG_FORCE_ALL, 0, 1, S,
	  "every thing below" },
	{ "security-mac", UNPKG_FORCE_SECURITY_MAC, 1, 0, M,
	  "use MAC security (SELinux labels) where available" },
	{ "downgrade", UNPKG_FORCE_DOWNGRADE, 1, 0, H,
	  "install a version lower than the installed one" },
	{ "configure-any", UNPKG_FORCE_CONFIGURE_ANY, 0, 0, M,
	  "configure any unpacked package that may help" },
	{ "hold", UNPKG_FORCE_HOLD, 0, 0, M,
	  "touch packages on hold too" },
	{ "not-root", UNPKG_FORCE_NOT_ROOT, 0, 0, H,
	  "try even when not run as root" },
	{ "bad-path", UNPKG_FORCE_BAD_PATH, 0, 0, M,
	  "go on although PATH lacks programs dpkg needs" },
	{ "bad-verify", UNPKG_FORCE_BAD_VERIFY, 0, 0, M,
	  "install a package that fails its signature check" },
	{ "bad-version", UNPKG_FORCE_BAD_VERSION, 0, 0, S,
	  "process packages with malformed versions" },
	{ "statoverride-add", UNPKG_FORCE_STATOVERRIDE_ADD, 0, 0, M,
	  "replace an existing stat override when adding one" },
	{ "statoverride-remove", UNPKG_FORCE_STATOVERRIDE_REMOVE, 0, 0, M,
	  "accept removing a stat override that is not there" },
	{ "overwrite", UNPKG_FORCE_OVERWRITE, 0, 0, H,
	  "replace a file another package owns" },
	{ "overwrite-diverted", UNPKG_FORCE_OVERWRITE_DIVERTED, 0, 0, H,
	  "replace a diverted file by the undiverted one" },
	{ "overwrite-dir", UNPKG_FORCE_OVERWRITE_DIR, 0, 1, S,
	  "replace another package's directory by a file" },
	{ "unsafe-io", UNPKG_FORCE_UNSAFE_IO, 0, 1, H,
	  "do not sync anything while unpacking" },
	{ "script-chrootless", UNPKG_FORCE_SCRIPT_CHROOTLESS, 0, 1, H,
	  "run maintainer scripts without chroot into the root" },
	{ "confnew", UNPKG_FORCE_CONFNEW, 0, 1, H,
	  "take the package's version of a changed conffile" },
	{ "confold", UNPKG_FORCE_CONFOLD, 0, 1, H,
	  "keep the local version of a changed conffile" },
	{ "confdef", UNPKG_FORCE_CONFDEF, 0, 1, H,
	  "take the default answer for changed conffiles" },
	{ "confmiss", UNPKG_FORCE_CONFMISS, 0, 1, H,
	  "install conffiles the administrator deleted" },
	{ "confask", UNPKG_FORCE_CONFASK, 0, 1, S,
	  "ask about conffiles even when the package did not change them" },
	{ "architecture", UNPKG_FORCE_ARCHITECTURE, 0, 1, H,
	  "accept a package of a wrong or no architecture" },
	{ "breaks", UNPKG_FORCE_BREAKS, 0, 1, H,
	  "install even if that breaks another package" },
	{ "conflicts", UNPKG_FORCE_CONFLICTS, 0, 1, H,
	  "install conflicting packages together" },
	{ "depends", UNPKG_FORCE_DEPENDS, 0, 1, H,
	  "warn about every dependency problem instead of failing" },
	{ "depends-version", UNPKG_FORCE_DEPENDS_VERSION, 0, 1, S,
	  "warn about dependency version problems instead of failing" },
	{ "remove-reinstreq", UNPKG_FORCE_REMOVE_REINSTREQ, 0, 1, M,
	  "remove packages that need reinstallation" },
	{ "remove-protected", UNPKG_FORCE_REMOVE_PROTECTED, 0, 1, M,
	  "remove a protected package" },
	{ "remove-essential", UNPKG_FORCE_REMOVE_ESSENTIAL, 0, 1, M,
	  "remove an essential package" },
};

#undef H
#undef S
#undef M

const struct unpkg_force_info *unpkg_force_table(size_t *n)
{
	*n = sizeof(table) / sizeof(table[0]);
	return table;
}

static const struct unpkg_force_info *find_len(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (strlen(table[i].name) == len &&
		    strncmp(table[i].name, name, len) == 0)
			return &table[i];
	return NULL;
}

const struct unpkg_force_info *unpkg_force_find(const char *name)
{
	return find_len(name, strlen(name));
}

int unpkg_force_apply(unsigned int *set, const char *list, int on,
		      unsigned int *named, struct unpkg_err *err)
{
	unsigned int result = *set, names = 0;
	const char *s = list;

	for (;;) {
		size_t len = strcspn(s, ",");
		const struct unpkg_force_info *fi = find_len(s, len);

		if (fi == NULL)
			return unpkg_err_set(err, UNPKG_ERR_USAGE,
					     "unknown force/refuse option "
					     "'%.*s'", (int)(len < 250 ? len : 250),
					     s);
		if (on) {
			result |= fi->flag;
			if (fi->flag != UNPKG_FORCE_ALL)
				names |= fi->flag;
		} else {
			result &= ~fi->flag;
		}
		if (s[len] == '\0')
			break;
		s += len + 1;
	}
	*set = result;
	if (named != NULL)
		*named |= names;
	return 0;
}

int unpkg_force_initial(const char *dpkg_force_env, unsigned int *set,
			struct unpkg_err *err)
{
	size_t i;

	*set = 0;
	if (dpkg_force_env != NULL)
		return dpkg_force_env[0] == '\0' ? 0
			: unpkg_force_apply(set, dpkg_force_env, 1, NULL, err);
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].by_default)
			*set |= table[i].flag;
	return 0;
}

char *unpkg_force_names(unsigned int set, char *buf, size_t size)
{
	size_t i, used = 0;

	if (size == 0)
		return buf;
	buf[0] = '\0';
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		int n;

		if (table[i].flag == UNPKG_FORCE_ALL ||
		    (set & table[i].flag) == 0)
			continue;
		n = snprintf(buf + used, size - used, "%s%s",
			     used > 0 ? "," : "", table[i].name);
		if (n < 0 || (size_t)n >= size - used) {
			buf[used] = '\0';	/* only whole names */
			break;
		}
		used += (size_t)n;
	}
	return buf;
}
