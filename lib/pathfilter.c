/* pathfilter.c - dpkg's --path-exclude and --path-include (see
 * pathfilter.h). */
#include "config.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "pathfilter.h"

void unpkg_pathfilter_init(struct unpkg_pathfilter *f)
{
	f->rules = NULL;
	f->count = 0;
}

void unpkg_pathfilter_destroy(struct unpkg_pathfilter *f)
{
	size_t i;

	for (i = 0; i < f->count; i++)
		free(f->rules[i].pattern);
	free(f->rules);
	unpkg_pathfilter_init(f);
}

int unpkg_pathfilter_add(struct unpkg_pathfilter *f, const char *pattern,
			 int include, struct unpkg_err *err)
{
	struct unpkg_pathfilter_rule *v;
	char *copy = strdup(pattern);

	if (copy == NULL)
		return unpkg_err_nomem(err);
	v = realloc(f->rules, (f->count + 1) * sizeof(*v));
	if (v == NULL) {
		free(copy);
		return unpkg_err_nomem(err);
	}
	f->rules = v;
	v[f->count].pattern = copy;
	v[f->count].include = include != 0;
	f->count++;
	return 0;
}

/* The length of the part of `pattern` before its first wildcard, without
 * the slashes that end it. */
static size_t fixed_prefix(const char *pattern)
{
	size_t len = strcspn(pattern, "*?[\\");

	while (len > 0 && pattern[len - 1] == '/')
		len--;
	return len;
}

int unpkg_pathfilter_skip(const struct unpkg_pathfilter *f, const char *path,
			  int dir_or_symlink)
{
	int skip = 0;
	size_t i;

	if (f == NULL)
		return 0;
	for (i = 0; i < f->count; i++)
		if (fnmatch(f->rules[i].pattern, path, 0) == 0)
			skip = !f->rules[i].include;
	if (!skip || !dir_or_symlink)
		return skip;
	for (i = 0; i < f->count; i++)
		if (f->rules[i].include &&
		    strncmp(path, f->rules[i].pattern,
			    fixed_prefix(f->rules[i].pattern)) == 0)
			return 0;
	return 1;
}
