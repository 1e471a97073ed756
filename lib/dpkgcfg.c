/* dpkgcfg.c - reading dpkg.cfg and dpkg.cfg.d the way dpkg does. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpkgcfg.h"

/* dpkg skips fragments such as "foo.dpkg-old" or editor backups: only
 * names made of these characters count. */
static int valid_fragment_name(const char *name)
{
	if (*name == '\0')
		return 0;
	for (; *name != '\0'; name++) {
		char c = *name;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

static int add_opt(struct unpkg_dpkgcfg *cfg, const char *line,
		   const char *file, struct unpkg_err *err)
{
	struct unpkg_dpkgcfg_opt *opts, *opt;
	const char *sp = line + strcspn(line, " \t=");
	const char *val = sp + strspn(sp, " \t=");

	opts = realloc(cfg->opts, (cfg->count + 1) * sizeof(*opts));
	if (opts == NULL)
		return unpkg_err_nomem(err);
	cfg->opts = opts;
	opt = &opts[cfg->count];
	opt->name = strndup(line, (size_t)(sp - line));
	opt->value = *val != '\0' ? strdup(val) : NULL;
	opt->file = strdup(file);
	if (opt->name == NULL || opt->file == NULL ||
	    (*val != '\0' && opt->value == NULL)) {
		free(opt->name);
		free(opt->value);
		free(opt->file);
		return unpkg_err_nomem(err);
	}
	cfg->count++;
	return 0;
}

static int load_file(struct unpkg_dpkgcfg *cfg, const char *path,
		     struct unpkg_err *err)
{
	FILE *fp;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int ret = -1;

	fp = fopen(path, "re");
	if (fp == NULL) {
		if (errno == ENOENT)
			return 0;
		return unpkg_err_sys(err, "cannot open %s", path);
	}
	while ((len = getline(&line, &cap, fp)) >= 0) {
		char *s = line;

		while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == ' ' ||
				   s[len - 1] == '\t'))
			s[--len] = '\0';
		s += strspn(s, " \t");
		if (*s == '\0' || *s == '#')
			continue;
		if (s[0] == '-' && s[1] == '-')
			s += 2;
		if (add_opt(cfg, s, path, err) < 0)
			goto out;
	}
	if (ferror(fp)) {
		unpkg_err_sys(err, "cannot read %s", path);
		goto out;
	}
	ret = 0;
out:
	free(line);
	fclose(fp);
	return ret;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int unpkg_dpkgcfg_load(struct unpkg_dpkgcfg *cfg, const char *confdir,
		       struct unpkg_err *err)
{
	char *path = NULL;
	char **names = NULL;
	size_t n = 0, i;
	DIR *dir = NULL;
	struct dirent *de;
	int ret = -1;

	cfg->opts = NULL;
	cfg->count = 0;
	if (asprintf(&path, "%s/dpkg.cfg.d", confdir) < 0) {
		path = NULL;
		unpkg_err_nomem(err);
		goto out;
	}
	dir = opendir(path);
	if (dir == NULL && errno != ENOENT && errno != ENOTDIR) {
		unpkg_err_sys(err, "cannot open %s", path);
		goto out;
	}
	while (dir != NULL && (errno = 0, de = readdir(dir)) != NULL) {
		char **grown;

		if (!valid_fragment_name(de->d_name))
			continue;
		grown = realloc(names, (n + 1) * sizeof(*names));
		if (grown == NULL) {
			unpkg_err_nomem(err);
			goto out;
		}
		names = grown;
		if (asprintf(&names[n], "%s/%s", path, de->d_name) < 0) {
			unpkg_err_nomem(err);
			goto out;
		}
		n++;
	}
	if (dir != NULL && errno != 0) {
		unpkg_err_sys(err, "cannot read %s", path);
		goto out;
	}
	if (n > 0)
		qsort(names, n, sizeof(*names), cmp_names);
	for (i = 0; i < n; i++)
		if (load_file(cfg, names[i], err) < 0)
			goto out;
	free(path);
	if (asprintf(&path, "%s/dpkg.cfg", confdir) < 0) {
		path = NULL;
		unpkg_err_nomem(err);
		goto out;
	}
	if (load_file(cfg, path, err) < 0)
		goto out;
	ret = 0;
out:
	if (dir != NULL)
		closedir(dir);
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(path);
	if (ret < 0)
		unpkg_dpkgcfg_destroy(cfg);
	return ret;
}

int unpkg_dpkgcfg_load_user(struct unpkg_dpkgcfg *cfg, const char *home,
			    struct unpkg_err *err)
{
	size_t had = cfg->count, i;
	char *path;
	int ret;

	if (asprintf(&path, "%s/.dpkg.cfg", home) < 0)
		return unpkg_err_nomem(err);
	ret = load_file(cfg, path, err);
	free(path);
	if (ret < 0) {
		for (i = had; i < cfg->count; i++) {
			free(cfg->opts[i].name);
			free(cfg->opts[i].value);
			free(cfg->opts[i].file);
		}
		cfg->count = had;
	}
	return ret;
}

void unpkg_dpkgcfg_destroy(struct unpkg_dpkgcfg *cfg)
{
	size_t i;

	for (i = 0; i < cfg->count; i++) {
		free(cfg->opts[i].name);
		free(cfg->opts[i].value);
		free(cfg->opts[i].file);
	}
	free(cfg->opts);
	cfg->opts = NULL;
	cfg->count = 0;
}

/* Does the comma-separated list `list` name `what` (or "all")? */
static int list_names(const char *list, const char *what)
{
	size_t wlen = strlen(what);

	while (*list != '\0') {
		size_t len = strcspn(list, ",");

		if ((len == wlen && strncmp(list, what, len) == 0) ||
		    (len == 3 && strncmp(list, "all", 3) == 0))
			return 1;
		list += len;
		if (*list == ',')
			list++;
	}
	return 0;
}

int unpkg_dpkgcfg_force(const struct unpkg_dpkgcfg *cfg, const char *what,
			const char **file)
{
	int on = 0;
	size_t i;

	if (file != NULL)
		*file = NULL;
	for (i = 0; i < cfg->count; i++) {
		const char *name = cfg->opts[i].name;
		const char *list;
		int value;

		if (strncmp(name, "force-", 6) == 0) {
			list = name + 6;
			value = 1;
		} else if (strncmp(name, "no-force-", 9) == 0) {
			list = name + 9;
			value = 0;
		} else if (strncmp(name, "refuse-", 7) == 0) {
			list = name + 7;
			value = 0;
		} else {
			continue;
		}
		if (!list_names(list, what))
			continue;
		on = value;
		if (file != NULL)
			*file = cfg->opts[i].file;
	}
	return on;
}
