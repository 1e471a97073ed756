/* record.h - the record phase: after the rename pass, the old versions'
 * leftovers (obsolete files and info/ files, the lists of packages files
 * were taken from), trigger activations, and the record of the unpacked
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

/* The file triggers `path` activates, recorded as pending for the
 * interested packages that are configured (in memory, a status line for
 * each that becomes triggers-pending), awaited by nobody: what dpkg does
 * for a path of a package it removes (`p`). */
int record_activate_path(struct run *r, struct pkg *p, const char *path,
			 struct unpkg_err *err);

/* The triggers the "activate" directives of `text` (`len` bytes, a
 * package's triggers file) name, recorded the same way: what dpkg does
 * when it removes the files of `p` (libraries' ldconfig trigger). */
int record_activate_declared(struct run *r, struct pkg *p, const char *text,
			     size_t len, struct unpkg_err *err);

#endif
