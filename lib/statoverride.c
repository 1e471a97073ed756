/* statoverride.c - dpkg-statoverride's file (see statoverride.h). */
#include "config.h"

#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "statoverride.h"

/* "#ID" or a name of the system's user (or group) database. */
static int override_id(const char *word, int group, long *id)
{
	char buf[4096], *end;

	if (word[0] == '#') {
		*id = strtol(word + 1, &end, 10);
		return word[1] != '\0' && *end == '\0' && *id >= 0 ? 0 : -1;
	}
	if (group) {
		struct group gr, *res = NULL;

		if (getgrnam_r(word, &gr, buf, sizeof(buf), &res) != 0 ||
		    res == NULL)
			return -1;
		*id = (long)gr.gr_gid;
	} else {
		struct passwd pw, *res = NULL;

		if (getpwnam_r(word, &pw, buf, sizeof(buf), &res) != 0 ||
		    res == NULL)
			return -1;
		*id = (long)pw.pw_uid;
	}
	return 0;
}

int unpkg_statoverride_read(const struct unpkg_db *db,
				struct unpkg_statoverride **v, size_t *n,
				struct unpkg_err *err)
{
	char *buf = NULL, *line, *save = NULL, *shown = NULL;
	size_t len, lineno = 0;
	int r, ret = -1;

	*v = NULL;
	*n = 0;
	r = unpkg_db_read_file(db, "statoverride", &buf, &len, &shown, err);
	if (r <= 0) {
		ret = r;
		goto out;
	}
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		char user[256], group[256], mode[32], path[4096];
		struct unpkg_statoverride *grown;
		long uid, gid;
		char *end;
		unsigned long m;

		lineno++;
		if (sscanf(line, "%255s %255s %31s %4095s", user, group, mode,
			   path) != 4 ||
		    (m = strtoul(mode, &end, 8), *end != '\0') || m > 07777) {
			unpkg_err_set(err, UNPKG_ERR_FORMAT, "%s: line %zu: "
				      "not USER GROUP MODE PATH", shown,
				      lineno);
			goto out;
		}
		if (override_id(user, 0, &uid) < 0 ||
		    override_id(group, 1, &gid) < 0) {
			unpkg_err_set(err, UNPKG_ERR_FORMAT, "%s: line %zu: "
				      "unknown user or group in '%s %s'",
				      shown, lineno, user, group);
			goto out;
		}
		grown = realloc(*v, (*n + 1) * sizeof(*grown));
		if (grown == NULL) {
			unpkg_err_nomem(err);
			goto out;
		}
		*v = grown;
		grown[*n].path = strdup(path);
		if (grown[*n].path == NULL) {
			unpkg_err_nomem(err);
			goto out;
		}
		grown[*n].uid = (uid_t)uid;
		grown[*n].gid = (gid_t)gid;
		grown[(*n)++].mode = (mode_t)m;
	}
	ret = 0;
out:
	if (ret < 0) {
		unpkg_statoverride_free(*v, *n);
		*v = NULL;
		*n = 0;
	}
	free(buf);
	free(shown);
	return ret;
}

void unpkg_statoverride_free(struct unpkg_statoverride *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].path);
	free(v);
}
