/* record.h - the record phase: after the rename pass, the old versions'
 * leftovers (obsolete files and info/ files, the lists of packages files
 * were taken from), trigger activations (activate.h), and the record of the unpacked
 * packages made durable with the renames.
 * Private to libunpkg. */
#ifndef UNPKG_RECORD_H
#define UNPKG_RECORD_H

#include <stddef.h>

#include "run.h"

/* Commit every extracted package: one barrier, one rename pass, the old
 * versions' leftovers removed, and one sync making the renames and the
 * record of them all as unpacked durable; the record is put in place
 * after it.  Then the backups can go. */
int record_group(struct run *r, struct unpkg_err *err);

#endif
