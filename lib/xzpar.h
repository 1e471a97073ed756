/* xzpar.h - an xz stream of several blocks, decoded by two threads in
 * bounded memory.
 *
 * xz compresses the blocks of a stream independently of each other when it
 * runs with threads (dpkg-deb does for data.tar: blocks of 24 MiB at the
 * default level), and the index at the end of the stream says where each
 * block starts and how large it is.  One decoder alone is most of the time
 * of installing a large xz package (a kernel image: 1.2 s of 1.3 s here);
 * two decoders can work on two blocks at once.  liblzma's own threaded
 * decoder keeps each block whole in memory, several times the 64 MiB that
 * unpkg stays under; this one reads the compressed blocks where they lie
 * in the file (pread(), so each thread reads its own block) and hands the
 * decompressed bytes over in order through a fixed pool of chunks
 * (UNPKG_XZPAR_POOL bytes): the block the reader is at streams through the
 * pool, the next block is decoded ahead into what the pool has left and
 * waits when that is full.
 *
 * Only a stream that can be checked as fully as a sequential decoder
 * checks it is taken: header and footer intact and in agreement, an intact
 * index that accounts for every byte of the member (no stream padding, no
 * second stream), at least two blocks, and at least two CPUs to run on.
 * For anything else unpkg_xzpar_start() returns NULL and the caller uses
 * its sequential reader, which then says in its own words what is wrong.
 * Each block is checked by its decoder (its sizes against the index, its
 * integrity check).  A failure reaches the reader after every byte of the
 * blocks before it, as it would from a sequential decoder.
 *
 * Memory: the pool, one decoder per thread (an xz dictionary each: 8 MiB
 * at the default level) and the index, whatever the size of the stream.
 * The decoders' large buffers are mapped and unmapped directly, so that
 * they never stay behind in a thread's malloc arena.
 */
#ifndef UNPKG_XZPAR_H
#define UNPKG_XZPAR_H

#include <stdbool.h>
#include <stdint.h>

#include <archive.h>

/* Decompressed bytes in flight at most (the chunk pool).  (Defined at
 * build time to measure other values.) */
#ifndef UNPKG_XZPAR_POOL
#define UNPKG_XZPAR_POOL (16u << 20)
#endif

struct unpkg_xzpar;

/* Look at the `size` bytes at offset `off` of `fd`, which must stay open
 * and unchanged until unpkg_xzpar_free(); they are read with pread() only.
 * If they are an xz stream this decoder takes (above), start its threads
 * and return it; otherwise, or when out of memory or threads, return
 * NULL: the caller then decodes the stream sequentially. */
struct unpkg_xzpar *unpkg_xzpar_start(int fd, uint64_t off, uint64_t size);

/* Whether unpkg_xzpar_start() would take the stream (it reads the stream's
 * index, and starts nothing). */
bool unpkg_xzpar_takes(int fd, uint64_t off, uint64_t size);

/* The reader's read callback, for archive_read_open() with `client` the
 * struct unpkg_xzpar.  A block it returns stays valid until the next
 * call. */
la_ssize_t unpkg_xzpar_read(struct archive *a, void *client,
			    const void **buf);

/* The reader has all it wants: decode the rest of the stream, discarding
 * it, and stop the threads.  Returns 0 if the stream ended cleanly, -1 if
 * it is damaged (see unpkg_xzpar_error()), 1 if more than `max` bytes
 * remained: decoding was then stopped, and what the rest holds is not
 * known. */
int unpkg_xzpar_finish(struct unpkg_xzpar *x, uint64_t max);

/* Stop the threads (each once it has finished the chunk at hand) and wait
 * for them.  Idempotent. */
void unpkg_xzpar_stop(struct unpkg_xzpar *x);

/* After a failure reached the reader or unpkg_xzpar_finish(): what went
 * wrong, or NULL if nothing did. */
const char *unpkg_xzpar_error(const struct unpkg_xzpar *x);

/* ... and the errno of the failed read behind it, or 0 if the stream
 * itself is damaged. */
int unpkg_xzpar_errno(const struct unpkg_xzpar *x);

/* Whether unpkg_xzpar_read() reported a failure to the reader. */
bool unpkg_xzpar_delivered(const struct unpkg_xzpar *x);

/* Stop the threads and free everything.  NULL-safe. */
void unpkg_xzpar_free(struct unpkg_xzpar *x);

#endif
