/* gunzip.h - gzip decompression between two libarchive read callbacks,
 * with the CRC-32 and length of every member checked.
 *
 * libarchive's gzip filter skips the 8-byte trailer of a gzip member
 * without looking at it, so a package whose data was damaged in a way
 * deflate cannot see (a stored block, or the trailer itself) would be
 * installed; dpkg-deb refuses it.  This decompressor is zlib's inflate in
 * gzip mode, which checks both.  It reads its input from another read
 * callback (the ar member's) and is itself the read callback of the tar
 * reader, or of the raw reader a decompression thread runs.
 *
 * The stream is what gzip and zlib's gzread() accept: one member or more,
 * concatenated; whatever follows a member and does not start with gzip's
 * magic bytes is ignored, as they ignore it.  Each member's trailer is
 * read only once its data is: a reader that stops at the end of the tar
 * archive must call unpkg_gunzip_finish() for the checks to happen.
 */
#ifndef UNPKG_GUNZIP_H
#define UNPKG_GUNZIP_H

#include <stdint.h>

#include <archive.h>

struct unpkg_gunzip;

/* A decompressor that reads its input through `src` called with `client`
 * (and the archive it is itself called with); NULL when out of memory. */
struct unpkg_gunzip *unpkg_gunzip_new(archive_read_callback *src,
				      void *client);

/* Start again on a new input, as if just made by unpkg_gunzip_new(). */
void unpkg_gunzip_reset(struct unpkg_gunzip *g, archive_read_callback *src,
			void *client);

/* The read callback, for archive_read_open() with `client` the struct
 * unpkg_gunzip.  A block it returns stays valid until the next call.  On
 * damaged or truncated input it fails with a message on `a` (and keeps
 * failing); a failure of `src` is passed on as `src` reported it. */
la_ssize_t unpkg_gunzip_read(struct archive *a, void *client,
			     const void **buf);

/* The reader has all it wants: decompress the rest, discarding it, so that
 * every trailer is checked.  Returns 0 at a clean end, -1 on a failure
 * (message on `a`), 1 if more than `max` bytes remained: decompression
 * was then stopped, and the rest is not checked. */
int unpkg_gunzip_finish(struct unpkg_gunzip *g, struct archive *a,
			uint64_t max);

/* NULL-safe. */
void unpkg_gunzip_free(struct unpkg_gunzip *g);

#endif
