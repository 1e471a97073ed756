/* copyup.h - copying an overlayfs's lower-layer files up ahead of time,
 * many at once.  Private to libunpkg.
 *
 * On an overlayfs root (a container's) the first change to a file of the
 * lower layer, a hard link to it or a rename included, copies the file
 * whole into the upper layer and fsyncs the copy: one journal commit, and
 * on ext4 two device flushes, per file.  An upgrade backs up each file it
 * replaces with a hard link and moves aside each file it drops, so it
 * pays that per file, one after the other: the kernel makes a link's
 * copy-up under the lock of the parent directory.  Setting a file's times
 * to the values it has copies it up too, under no lock of the directory;
 * made from many threads at once, the copy-ups share their commits, and
 * the links and renames after them find the files in the upper layer
 * already. */
#ifndef UNPKG_COPYUP_H
#define UNPKG_COPYUP_H

#include <stddef.h>

#include "fsroot.h"

/* Threads at most.  tzdata's 905 files on an 8 ms disk: 150 flushes
 * with 32, 95 with 64, 68 with 128 but in more time, two CPUs copying for
 * that many (doc/benchmarks.md). */
#define UNPKG_COPYUP_THREADS 64

/* Copy up the regular files among `paths` (absolute paths of the
 * package, "/usr/bin/x", looked up beneath `root` without following a
 * last symlink), from up to UNPKG_COPYUP_THREADS threads.  Content,
 * owner, mode and times stay as they were (the change time does not).
 * Best effort: what is not a regular file, or cannot be reached or copied
 * up (a failure to start threads included), is left for the change that
 * needs it to copy up, as it would have.  The number of regular files
 * whose times were set (those of the upper layer already among them). */
size_t unpkg_copyup(struct unpkg_root *root, const char *const *paths,
		    size_t n);

#endif
