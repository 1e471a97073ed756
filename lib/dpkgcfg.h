/* dpkgcfg.h - the parts of dpkg's configuration unpkg honours.
 *
 * dpkg reads CONFDIR/dpkg.cfg.d/<name> (names made only of letters, digits,
 * '_' and '-', in C-locale alphabetical order), then CONFDIR/dpkg.cfg, then
 * the user's $HOME/.dpkg.cfg (for every user, root included).  Each
 * line is a long option without its leading "--" ("force-unsafe-io",
 * "log /var/log/dpkg.log"); blank lines and lines starting with '#' are
 * ignored.  unpkg reads the same files so that a container configured for
 * dpkg gets the same behaviour from unpkg.
 */
#ifndef UNPKG_DPKGCFG_H
#define UNPKG_DPKGCFG_H

#include <stddef.h>

#include "err.h"

/* One option line, in the order dpkg applies them. */
struct unpkg_dpkgcfg_opt {
	char *name;	/* "force-unsafe-io" */
	char *value;	/* "/var/log/dpkg.log", or NULL */
	char *file;	/* the file it came from */
};

struct unpkg_dpkgcfg {
	struct unpkg_dpkgcfg_opt *opts;
	size_t count;
};

/* Load the configuration under `confdir` (normally "/etc/dpkg").  Missing
 * files and a missing directory are not errors; unreadable ones are. */
int unpkg_dpkgcfg_load(struct unpkg_dpkgcfg *cfg, const char *confdir,
		       struct unpkg_err *err);
void unpkg_dpkgcfg_destroy(struct unpkg_dpkgcfg *cfg);

/* Append the options of HOME/.dpkg.cfg (`home` is normally $HOME), which
 * dpkg reads after the system's files.  A missing file is not an error;
 * an unreadable one is (and leaves `cfg` as it was). */
int unpkg_dpkgcfg_load_user(struct unpkg_dpkgcfg *cfg, const char *home,
			    struct unpkg_err *err);

/* Apply the force options in order ("force-a,b", "no-force-a",
 * "refuse-a", "force-all") and report whether force `what` (e.g.
 * "unsafe-io") ends up on.  If `file` is not NULL it is set to the file of
 * the option that decided it (NULL if none did). */
int unpkg_dpkgcfg_force(const struct unpkg_dpkgcfg *cfg, const char *what,
			const char **file);

#endif
