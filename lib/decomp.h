/* decomp.h - a decompressor running in a thread of its own.
 *
 * The reader of a .deb spends most of its CPU in the decompressor of
 * data.tar, and the installer most of the rest writing the files it reads.
 * On a machine with two cores or more the two can overlap: a decompression
 * thread (the producer) runs a libarchive reader of the "raw" format with
 * the member's filter, and hands the decompressed bytes through a small
 * bounded queue to the tar reader of the calling thread (the consumer),
 * which reads them through unpkg_decomp_read(), a libarchive read callback.
 *
 * The producer owns the raw reader, and whatever its callbacks touch, from
 * unpkg_decomp_start() until unpkg_decomp_finish() or unpkg_decomp_stop()
 * returns; the caller must not touch them in between.  Memory: a queue of
 * fixed slots, of the size the caller chose, whatever the data.  The
 * caller opens the raw reader, so that the decompressor's own memory (an
 * xz dictionary: 8 MiB) is allocated by the caller's thread: memory freed
 * in another thread's malloc arena would stay there, and add to the peak.
 *
 * If no thread can be started, the consumer reads the raw reader itself,
 * through the same calls.
 *
 * A failure of the producer (corrupt stream, failed read) is passed to the
 * consumer after every byte decompressed before it: the tar reader then sees
 * exactly what a single-threaded reader would have seen, and fails at the
 * same place with the same message.
 */
#ifndef UNPKG_DECOMP_H
#define UNPKG_DECOMP_H

#include <stdbool.h>
#include <stdint.h>

#include <archive.h>

/* Bytes of decompressed data in flight, enough for a consumer that keeps
 * up with the producer; the least queue there is (smaller sizes are
 * rounded up to it). */
#define UNPKG_DECOMP_QUEUE (512u * 1024)

struct unpkg_decomp;

/* Start a producer on `raw`: a reader with its filters and
 * archive_read_support_format_raw(), opened, and its one entry read
 * (archive_read_next_header()).  The producer decompresses up to `queue`
 * bytes (UNPKG_DECOMP_QUEUE, or more for a consumer that starts reading
 * later) before it waits for the consumer; the queue's pages are mapped
 * as they are first filled and unmapped by unpkg_decomp_free().  On
 * success `raw` is the decomp's (unpkg_decomp_free() frees it).  Returns
 * NULL only when out of memory, and `raw` is then still the caller's. */
struct unpkg_decomp *unpkg_decomp_start(struct archive *raw, size_t queue);

/* Whether this process may run on two CPUs or more, where a producer and
 * its consumer (or two decoders) can work at the same time. */
bool unpkg_decomp_two_cpus(void);

/* The consumer's read callback, for archive_read_open() with `client` the
 * struct unpkg_decomp.  A block it returns stays valid until the next
 * call. */
la_ssize_t unpkg_decomp_read(struct archive *a, void *client,
			     const void **buf);

/* The consumer has all it wants (the end of the tar archive): let the
 * producer read the rest of the stream, discarding it, and wait for it.
 * Returns 0 if the stream ended cleanly, -1 if the producer failed (see
 * unpkg_decomp_error()), 1 if more than `max` bytes remained: the producer
 * was then stopped before the end, and what it would have found there is
 * not known. */
int unpkg_decomp_finish(struct unpkg_decomp *d, uint64_t max);

/* Stop the producer (once it has finished the block at hand) and wait
 * for it.  Idempotent. */
void unpkg_decomp_stop(struct unpkg_decomp *d);

/* After unpkg_decomp_finish() or unpkg_decomp_stop(): the producer's
 * failure message (libarchive's), or NULL if it did not fail. */
const char *unpkg_decomp_error(const struct unpkg_decomp *d);

/* After unpkg_decomp_stop(): whether unpkg_decomp_read() reported the
 * producer's failure to the consumer (rather than the consumer stopping
 * first, for a reason of its own). */
bool unpkg_decomp_delivered(const struct unpkg_decomp *d);

/* Stop the producer, free the raw reader and the queue.  NULL-safe. */
void unpkg_decomp_free(struct unpkg_decomp *d);

#endif
