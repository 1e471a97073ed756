/* deb.h - reading .deb files (the container reader).
 *
 * A .deb is an ar archive whose members are, in this order:
 *   debian-binary            "2.x\n" (major version 2 only)
 *   control.tar[.gz|.xz|.zst|.bz2]
 *   data.tar[.gz|.xz|.zst|.bz2]
 * Members whose names start with '_' may appear between them and are
 * skipped, as dpkg does.  libarchive does the ar, tar and decompression work.
 *
 * unpkg_deb_open() reads debian-binary and the whole control.tar into memory
 * and leaves the reader at the start of data.tar, which is then streamed
 * entry by entry with unpkg_deb_next() and unpkg_deb_read(); data.tar is
 * never held whole in memory.
 *
 * Many packages can be open at once at little cost: a package read from a
 * regular file holds no decompressor, buffer or descriptor between
 * unpkg_deb_open() and its first unpkg_deb_next(), which opens the file
 * again (by path, or by seeking the caller's descriptor back) and fails if
 * it is no longer the same file (device, inode, size, modification time).
 * Of such a package's data.tar, unpkg_deb_open() checks only that it starts
 * as its compression must; damage inside it is reported by unpkg_deb_next()
 * or unpkg_deb_read(), before any entry that follows the damage.  A pipe
 * is read once and keeps its readers.
 *
 * Threads: from its first unpkg_deb_next() (or unpkg_deb_prefetch()) until
 * the end of data.tar, an error, or unpkg_deb_free(), a package read from
 * a regular file whose data.tar is compressed (and not small) has its
 * decompressor running in a thread of its own (two for an xz stream of
 * several blocks), which blocks all signals and touches nothing but the
 * package's own reader.  A struct unpkg_deb is used by one thread at a
 * time, as before.
 */
#ifndef UNPKG_DEB_H
#define UNPKG_DEB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"

/* Upper bound on the sum of all control.tar member sizes. */
#define UNPKG_DEB_CONTROL_MAX (64u << 20)

/* One control.tar member (top-level regular files only; "./" is skipped;
 * a symlink, device, subdirectory or unsafe name in control.tar is an
 * error).  `data` is NUL-terminated (data[size] == 0) for convenience. */
struct unpkg_deb_member {
	char *name;		/* "control", "postinst", "md5sums", ... */
	unsigned char *data;
	size_t size;
	mode_t mode;		/* permission bits from the tar header */
};

enum unpkg_entry_type {
	UNPKG_ENTRY_FILE,
	UNPKG_ENTRY_DIR,
	UNPKG_ENTRY_SYMLINK,
	UNPKG_ENTRY_HARDLINK,
	UNPKG_ENTRY_FIFO,
	UNPKG_ENTRY_CHR,
	UNPKG_ENTRY_BLK,
};

/* One data.tar entry.  Valid until the next unpkg_deb_next() call.
 * Paths are normalised: no leading "./" or "/", no "//", no "." or trailing
 * "/" components; the archive root itself has path "" (and is a DIR).
 * A ".." component, an empty name, or a NUL/newline-free violation is
 * rejected by unpkg_deb_next() with UNPKG_ERR_UNSAFE. */
struct unpkg_deb_entry {
	enum unpkg_entry_type type;
	const char *path;	/* normalised, relative to the root */
	const char *link;	/* SYMLINK: target verbatim; HARDLINK: normalised
				 * path of the earlier entry; else NULL */
	mode_t mode;		/* permission bits incl. setuid/setgid/sticky */
	uid_t uid;
	gid_t gid;
	const char *uname;	/* may be NULL or "" */
	const char *gname;	/* may be NULL or "" */
	int64_t size;		/* FILE: bytes of content; else 0 */
	int64_t mtime;		/* seconds since the epoch */
	dev_t rdev;		/* CHR/BLK */
};

struct unpkg_deb;

/* Open `path` and read it up to the start of data.tar.  On success *out
 * owns the open file; free it with unpkg_deb_free().  Errors name the file
 * and the member (e.g. "foo.deb: control.tar.gz: truncated"). */
int unpkg_deb_open(const char *path, struct unpkg_deb **out,
		   struct unpkg_err *err);

/* Same, reading from an already open file descriptor (not closed by us;
 * `name` is used in messages). */
int unpkg_deb_open_fd(int fd, const char *name, struct unpkg_deb **out,
		      struct unpkg_err *err);

/* NULL-safe. */
void unpkg_deb_free(struct unpkg_deb *deb);

/* The format version from debian-binary, e.g. "2.0". */
const char *unpkg_deb_format(const struct unpkg_deb *deb);

/* The names of the compressed members, e.g. "control.tar.xz". */
const char *unpkg_deb_control_name(const struct unpkg_deb *deb);
const char *unpkg_deb_data_name(const struct unpkg_deb *deb);

/* control.tar members in archive order. */
size_t unpkg_deb_member_count(const struct unpkg_deb *deb);
const struct unpkg_deb_member *unpkg_deb_member_at(const struct unpkg_deb *deb,
						    size_t i);
/* The member called `name`, or NULL. */
const struct unpkg_deb_member *unpkg_deb_member(const struct unpkg_deb *deb,
						 const char *name);

/* The caller will work on other packages before this one: start
 * decompressing this one's data.tar now, in a thread that decodes up to
 * `ahead` bytes (at least UNPKG_DECOMP_QUEUE) before the first
 * unpkg_deb_next() takes them, so that the two overlap on a second CPU.
 * Memory: those bytes, and the decoder's window for them.  Tried once per
 * package: later calls do nothing.  Does nothing where that cannot pay or
 * would cost more than one decoder: a package read from a pipe or already
 * started, an uncompressed data.tar, an xz stream of several blocks (its
 * two decoders start at its turn), a single CPU.  Nothing is reported: whatever fails here (the file gone or
 * changed, a damaged stream) is found again by the first
 * unpkg_deb_next(), which reports it exactly as without this call.  A
 * package so started holds a descriptor, its decoder and its queue until
 * it is read to the end or freed. */
void unpkg_deb_prefetch(struct unpkg_deb *deb, size_t ahead);

/* Advance to the next data.tar entry.  Returns 1 and fills *entry, 0 at the
 * end of data.tar (after which the ar container is checked for trailing
 * garbage/truncation), -1 on error.  Unread content of the previous entry
 * is skipped. */
int unpkg_deb_next(struct unpkg_deb *deb, struct unpkg_deb_entry *entry,
		   struct unpkg_err *err);

/* Read the next block of the current FILE entry's content, zero-copy.
 * Returns 1 with *buf and *len set (len > 0), 0 at the end of the entry,
 * -1 on error.  Sparse holes are returned as zero-filled blocks so that the
 * total equals entry->size. */
int unpkg_deb_read(struct unpkg_deb *deb, const void **buf, size_t *len,
		   struct unpkg_err *err);

#endif
