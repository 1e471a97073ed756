/* configure.h - the configure phase of -i: conffiles settled as dpkg does,
 * postinsts in dependency order, the packages recorded as installed.
 * Private to libunpkg. */
#ifndef UNPKG_CONFIGURE_H
#define UNPKG_CONFIGURE_H

#include <stddef.h>

#include "run.h"

/* -i: configure the unpacked packages of the run (dependencies checked,
 * conffiles settled and made durable, postinsts in dependency order) and
 * record them as installed. */
int configure_pkgs(struct run *r, struct unpkg_err *err);

#endif
