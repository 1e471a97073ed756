/* fsroot.h - resolving package paths beneath an installation root.
 *
 * Packages are untrusted.  Every path is resolved from a directory fd of the
 * root with chroot semantics: ".." at the root stays at the root, absolute
 * symlinks are taken relative to the root, so an in-root symlink such as
 * merged-/usr's "lib -> usr/lib" is followed inside the root, and nothing
 * can ever lead outside it.  openat2(RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS)
 * does this in the kernel; where it is missing (ENOSYS, or EPERM/EACCES from
 * a seccomp filter) a per-component O_NOFOLLOW walk in user space does the
 * same, reading each symlink with readlinkat().  At most 40 symlinks are
 * followed per resolution (ELOOP beyond).
 */
#ifndef UNPKG_FSROOT_H
#define UNPKG_FSROOT_H

#include "err.h"

struct unpkg_root;

enum {
	/* Force the user-space walk even if openat2 works (for tests). */
	UNPKG_ROOT_NO_OPENAT2 = 1 << 0,
};

/* Open the directory `path` as a root.  *out owns the directory fd. */
int unpkg_root_open(const char *path, unsigned int flags,
		    struct unpkg_root **out, struct unpkg_err *err);
void unpkg_root_free(struct unpkg_root *root);	/* NULL-safe */

/* The root's own directory fd (owned by the root; do not close). */
int unpkg_root_fd(const struct unpkg_root *root);

/* Whether the kernel's openat2 is in use. */
int unpkg_root_has_openat2(const struct unpkg_root *root);

/* Open `relpath` beneath the root, following every symlink inside the root
 * including the last component, with open(2) `flags` (O_CLOEXEC is added)
 * and `mode`.  relpath "" or "." is the root itself.  With O_NOFOLLOW in
 * `flags` the last component is not followed (a symlink there gives ELOOP,
 * or an O_PATH fd to the link with O_PATH).  Returns a new fd or -1; a path
 * that does not exist gives UNPKG_ERR_SYS with errnum ENOENT. */
int unpkg_root_openat(struct unpkg_root *root, const char *relpath, int flags,
		      int mode, struct unpkg_err *err);

/* Open the directory that contains the last component of `relpath`
 * (following symlinks inside the root for every earlier component) and set
 * *base to point at the last component inside relpath.  relpath must not
 * be empty and its last component must not be "." or "..".  Returns a new
 * O_DIRECTORY fd or -1 (ENOENT/ENOTDIR as UNPKG_ERR_SYS when a parent is
 * missing or not a directory). */
int unpkg_root_open_parent(struct unpkg_root *root, const char *relpath,
			   const char **base, struct unpkg_err *err);

#endif
