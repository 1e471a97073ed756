/* force.h - dpkg's --force-<thing> names, as a set of bits.
 *
 * dpkg takes --force-<thing>,<thing>..., --no-force-<thing>... and
 * --refuse-<thing>... on its command line and in its configuration files;
 * the set starts from the things dpkg enables by default (or from the
 * DPKG_FORCE environment variable), and each option switches things on or
 * off in order.  "all" switches every thing.  An unknown name is a usage
 * error.  unpkg accepts exactly dpkg's names; how far it honours each one
 * is in its table entry (`use`).
 */
#ifndef UNPKG_FORCE_H
#define UNPKG_FORCE_H

#include <stddef.h>

#include "err.h"

enum unpkg_force {
	UNPKG_FORCE_SECURITY_MAC	= 1u << 0,
	UNPKG_FORCE_DOWNGRADE		= 1u << 1,
	UNPKG_FORCE_CONFIGURE_ANY	= 1u << 2,
	UNPKG_FORCE_HOLD		= 1u << 3,
	UNPKG_FORCE_NOT_ROOT		= 1u << 4,
	UNPKG_FORCE_BAD_PATH		= 1u << 5,
	UNPKG_FORCE_BAD_VERIFY		= 1u << 6,
	UNPKG_FORCE_BAD_VERSION		= 1u << 7,
	UNPKG_FORCE_STATOVERRIDE_ADD	= 1u << 8,
	UNPKG_FORCE_STATOVERRIDE_REMOVE	= 1u << 9,
	UNPKG_FORCE_OVERWRITE		= 1u << 10,
	UNPKG_FORCE_OVERWRITE_DIVERTED	= 1u << 11,
	UNPKG_FORCE_OVERWRITE_DIR	= 1u << 12,
	UNPKG_FORCE_UNSAFE_IO		= 1u << 13,
	UNPKG_FORCE_SCRIPT_CHROOTLESS	= 1u << 14,
	UNPKG_FORCE_CONFNEW		= 1u << 15,
	UNPKG_FORCE_CONFOLD		= 1u << 16,
	UNPKG_FORCE_CONFDEF		= 1u << 17,
	UNPKG_FORCE_CONFMISS		= 1u << 18,
	UNPKG_FORCE_CONFASK		= 1u << 19,
	UNPKG_FORCE_ARCHITECTURE	= 1u << 20,
	UNPKG_FORCE_BREAKS		= 1u << 21,
	UNPKG_FORCE_CONFLICTS		= 1u << 22,
	UNPKG_FORCE_DEPENDS		= 1u << 23,
	UNPKG_FORCE_DEPENDS_VERSION	= 1u << 24,
	UNPKG_FORCE_REMOVE_REINSTREQ	= 1u << 25,
	UNPKG_FORCE_REMOVE_PROTECTED	= 1u << 26,
	UNPKG_FORCE_REMOVE_ESSENTIAL	= 1u << 27,
	UNPKG_FORCE_ALL			= (1u << 28) - 1,
};

/* How unpkg's own actions (--install, --unpack) treat a thing. */
enum unpkg_force_use {
	UNPKG_FORCE_HONOURED,	/* it works as in dpkg */
	UNPKG_FORCE_STRICT,	/* not implemented yet: unpkg acts as if it
				 * were off, so a run dpkg would let through
				 * with it may fail */
	UNPKG_FORCE_MOOT,	/* it changes nothing unpkg does (it concerns
				 * actions handed to dpkg, or checks unpkg
				 * does not make) */
};

struct unpkg_force_info {
	const char *name;	/* "overwrite-dir" */
	unsigned int flag;	/* UNPKG_FORCE_* */
	int by_default;		/* on unless DPKG_FORCE says otherwise */
	int damage;		/* dpkg marks it as able to damage the
				 * installation ("[!]") */
	enum unpkg_force_use use;
	const char *help;	/* one line */
};

/* The table, in dpkg's order ("all" first); *n gets its length. */
const struct unpkg_force_info *unpkg_force_table(size_t *n);

/* The entry of thing `name` ("all" included), or NULL. */
const struct unpkg_force_info *unpkg_force_find(const char *name);

/* The set dpkg starts from: the things on by default, or, when
 * `dpkg_force_env` (the value of DPKG_FORCE) is not NULL, the things it
 * lists ("" is none).  Returns -1 for an unknown name in it. */
int unpkg_force_initial(const char *dpkg_force_env, unsigned int *set,
			struct unpkg_err *err);

/* Switch on (`on` != 0) or off the things of the comma-separated `list`
 * in *set.  The flags of the names switched on are added to *named if it
 * is not NULL ("all" adds none: it names no thing in particular).
 * Unknown name: -1 with UNPKG_ERR_USAGE "unknown force/refuse option
 * 'NAME'", *set unchanged. */
int unpkg_force_apply(unsigned int *set, const char *list, int on,
		      unsigned int *named, struct unpkg_err *err);

/* The names of the things in `set`, comma-separated in table order
 * ("all" never): dpkg's DPKG_FORCE value.  Written into buf, as many whole
 * names as fit in `size`.  Returns buf. */
char *unpkg_force_names(unsigned int set, char *buf, size_t size);

#endif
