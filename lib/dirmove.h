/* dirmove.h - moving a directory within its parent where the file system
 * refuses to rename it.  Private to libunpkg.
 *
 * overlayfs renames no directory that comes from a lower layer unless it
 * is mounted with redirect_dir (the kernel's default is off): renameat()
 * fails with EXDEV.  Such a directory is moved by building the new one and
 * moving the entries into it, which that file system does allow. */
#ifndef UNPKG_DIRMOVE_H
#define UNPKG_DIRMOVE_H

/* Move directory `from` in directory `dfd` to `to` in the same directory,
 * as renameat() would; where that fails with EXDEV, make `to` (with the
 * owner, mode and extended attributes of `from`: ACLs, security labels),
 * move every entry of `from` into it, each directory among them the same
 * way where it cannot be renamed, and remove `from`.  A `to` that is
 * already a directory is taken as what an interrupted move left, and the
 * entries join it.  The times of `from` are not kept.  On failure what was
 * moved goes back into `from`, as far as it can.  0, or -1 with errno set.
 *
 * The entries reach the disk no later than the removal of `from` where
 * the file system commits its metadata in order (ext4, xfs); btrfs logs a
 * new directory's entries with an fsync of its parent. */
int unpkg_dir_move(int dfd, const char *from, const char *to);

#endif
