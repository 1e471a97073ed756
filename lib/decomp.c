/* decomp.c - a decompressor running in a thread of its own (decomp.h).
 *
 * The queue is a ring of `nslots` fixed buffers of SLOT_SIZE bytes.  The
 * producer fills the slot at `tail` without the lock (no one else looks at
 * a slot that is not counted) and publishes it; the consumer hands the
 * slot at `head` to libarchive and keeps it, still counted, until
 * libarchive asks for the next block, which is when libarchive is done
 * with it.  So the producer may fill a slot only while fewer than
 * `nslots` are counted.
 *
 * Whichever side is faster waits for the other, and would be woken for
 * every slot: a sleeping consumer is woken when WAKE slots are ready (or
 * the producer is done), a sleeping producer when WAKE are free, so that
 * each wake-up is worth several slots, however long the queue.
 *
 * Without a thread (none could be started) the consumer reads the raw
 * reader itself, block by block, and there is no queue.
 */
#include "config.h"

#include <archive.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "decomp.h"

#define SLOT_SIZE (64u * 1024)
#define WAKE 4u
#define MIN_SLOTS (UNPKG_DECOMP_QUEUE / SLOT_SIZE)

struct unpkg_decomp {
	struct archive *raw;
	pthread_t thread;
	bool threaded;		/* a producer thread was started */
	bool running;		/* ... and not joined yet */

	pthread_mutex_t lock;
	pthread_cond_t filled;	/* a slot was published, or done set */
	pthread_cond_t emptied;	/* a slot was freed, or cancel set */

	/* Under the lock (if threaded). */
	unsigned head;		/* the oldest counted slot */
	unsigned count;		/* published slots not yet freed */
	bool held;		/* the consumer holds slot `head` */
	bool done;		/* the producer will publish no more */
	bool failed;		/* ... because it failed */
	bool cancel;		/* the producer must stop */
	bool delivered;		/* the consumer was told of the failure */

	/* The producer's until `done` is set, then read-only. */
	unsigned tail;		/* the slot being filled */
	size_t fill;		/* bytes in it */
	int errnum;
	char msg[256];

	unsigned nslots;
	size_t *len;		/* of each counted slot */
	unsigned char *buf;	/* nslots * SLOT_SIZE, mapped */
};

static unsigned char *slot(struct unpkg_decomp *d, unsigned i)
{
	return d->buf + (size_t)i * SLOT_SIZE;
}

/* Record the raw reader's failure. */
static void set_failure(struct unpkg_decomp *d)
{
	const char *s = archive_error_string(d->raw);

	snprintf(d->msg, sizeof(d->msg), "%s",
		 s != NULL ? s : "unexpected end of file");
	d->errnum = archive_errno(d->raw);
}

/* Publish the slot being filled and wait until the next one is free.
 * Returns false if the producer must stop. */
static bool publish(struct unpkg_decomp *d)
{
	bool go;

	pthread_mutex_lock(&d->lock);
	d->len[d->tail] = d->fill;
	d->tail = (d->tail + 1) % d->nslots;
	d->count++;
	if (d->count == WAKE)
		pthread_cond_signal(&d->filled);
	if (d->count == d->nslots)
		while (d->count > d->nslots - WAKE && !d->cancel)
			pthread_cond_wait(&d->emptied, &d->lock);
	go = !d->cancel;
	pthread_mutex_unlock(&d->lock);
	d->fill = 0;
	return go;
}

/* Copy one block of the raw reader into the queue. */
static bool push(struct unpkg_decomp *d, const unsigned char *p, size_t n)
{
	while (n > 0) {
		size_t k = SLOT_SIZE - d->fill;

		if (k > n)
			k = n;
		memcpy(slot(d, d->tail) + d->fill, p, k);
		d->fill += k;
		p += k;
		n -= k;
		if (d->fill == SLOT_SIZE && !publish(d))
			return false;
	}
	return true;
}

static void *produce(void *arg)
{
	struct unpkg_decomp *d = arg;
	bool ok = false;
	int r;

	for (;;) {
		const void *b;
		size_t n;
		la_int64_t off;

		r = archive_read_data_block(d->raw, &b, &n, &off);
		if (r == ARCHIVE_EOF) {
			ok = true;
			break;
		}
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
			break;
		if (!push(d, b, n))
			goto stopped;
	}
	if (!ok)
		set_failure(d);
	/* What came before a failure goes first, as it would have without
	 * the thread. */
	if (d->fill > 0 && !publish(d))
		goto stopped;
	pthread_mutex_lock(&d->lock);
	d->failed = !ok;
	d->done = true;
	pthread_cond_signal(&d->filled);
	pthread_mutex_unlock(&d->lock);
	return NULL;
stopped:
	pthread_mutex_lock(&d->lock);
	d->done = true;
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

bool unpkg_decomp_two_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return false;
	return CPU_COUNT(&set) >= 2;
}

/* Map the queue (directly, so that it never stays behind in a malloc
 * arena once freed); NULL if that cannot be done. */
static unsigned char *map_queue(unsigned nslots)
{
	void *p = mmap(NULL, (size_t)nslots * SLOT_SIZE,
		       PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	return p != MAP_FAILED ? p : NULL;
}

/* Unmap the queue and free its lengths; either may be missing. */
static void free_queue(struct unpkg_decomp *d)
{
	/* Fails only for a range that is not a mapping. */
	if (d->buf != NULL)
		(void)munmap(d->buf, (size_t)d->nslots * SLOT_SIZE);
	d->buf = NULL;
	free(d->len);
	d->len = NULL;
}

struct unpkg_decomp *unpkg_decomp_start(struct archive *raw, size_t queue)
{
	struct unpkg_decomp *d;
	sigset_t all, old;

	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return NULL;
	d->raw = raw;
	d->nslots = MIN_SLOTS;
	if (queue / SLOT_SIZE > MIN_SLOTS)
		d->nslots = (unsigned)(queue / SLOT_SIZE);
	d->len = calloc(d->nslots, sizeof(*d->len));
	d->buf = map_queue(d->nslots);
	if (d->len == NULL || d->buf == NULL) {
		free_queue(d);
		return d;
	}
	if (pthread_mutex_init(&d->lock, NULL) != 0)
		goto no_lock;
	if (pthread_cond_init(&d->filled, NULL) != 0)
		goto no_filled;
	if (pthread_cond_init(&d->emptied, NULL) != 0)
		goto no_emptied;
	/* Signals are for the caller's thread: the producer blocks all. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	d->threaded = pthread_create(&d->thread, NULL, produce, d) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (d->threaded) {
		d->running = true;
		return d;
	}
	pthread_cond_destroy(&d->emptied);
no_emptied:
	pthread_cond_destroy(&d->filled);
no_filled:
	pthread_mutex_destroy(&d->lock);
no_lock:
	free_queue(d);
	return d;
}

/* Without a thread: the next block of the raw reader. */
static int next_inline(struct unpkg_decomp *d, const void **buf, size_t *n)
{
	la_int64_t off;
	int r;

	if (d->done)
		return d->failed ? ARCHIVE_FATAL : ARCHIVE_EOF;
	do
		r = archive_read_data_block(d->raw, buf, n, &off);
	while ((r == ARCHIVE_OK || r == ARCHIVE_WARN) && *n == 0);
	if (r == ARCHIVE_OK || r == ARCHIVE_WARN)
		return ARCHIVE_OK;
	d->done = true;
	d->failed = r != ARCHIVE_EOF;
	if (d->failed)
		set_failure(d);
	return d->failed ? ARCHIVE_FATAL : ARCHIVE_EOF;
}

la_ssize_t unpkg_decomp_read(struct archive *a, void *client,
			     const void **buf)
{
	struct unpkg_decomp *d = client;
	la_ssize_t n;

	if (!d->threaded) {
		size_t len = 0;
		int r = next_inline(d, buf, &len);

		if (r == ARCHIVE_OK)
			return (la_ssize_t)len;
		*buf = NULL;
		if (r == ARCHIVE_EOF)
			return 0;
		d->delivered = true;
		archive_set_error(a, d->errnum != 0 ? d->errnum : EIO, "%s",
				  d->msg);
		return -1;
	}
	pthread_mutex_lock(&d->lock);
	if (d->held) {
		d->held = false;
		d->head = (d->head + 1) % d->nslots;
		d->count--;
		if (d->count == d->nslots - WAKE)
			pthread_cond_signal(&d->emptied);
	}
	if (d->count == 0)
		while (d->count < WAKE && !d->done)
			pthread_cond_wait(&d->filled, &d->lock);
	if (d->count > 0) {
		d->held = true;
		*buf = slot(d, d->head);
		n = (la_ssize_t)d->len[d->head];
		pthread_mutex_unlock(&d->lock);
		return n;
	}
	if (d->failed)
		d->delivered = true;
	n = d->failed ? -1 : 0;
	pthread_mutex_unlock(&d->lock);
	*buf = NULL;
	if (n < 0)
		archive_set_error(a, d->errnum != 0 ? d->errnum : EIO, "%s",
				  d->msg);
	return n;
}

static void join(struct unpkg_decomp *d)
{
	if (!d->running)
		return;
	/* Only fails for a thread that is not ours to join. */
	(void)pthread_join(d->thread, NULL);
	d->running = false;
}

int unpkg_decomp_finish(struct unpkg_decomp *d, uint64_t max)
{
	uint64_t dropped = 0;
	bool cut = false;

	if (!d->threaded) {
		const void *b;
		size_t n;
		int r;

		while ((r = next_inline(d, &b, &n)) == ARCHIVE_OK) {
			dropped += n;
			if (dropped > max)
				return 1;
		}
		return r == ARCHIVE_EOF ? 0 : -1;
	}
	pthread_mutex_lock(&d->lock);
	for (;;) {
		while (d->count > 0) {
			if (!d->held)
				dropped += d->len[d->head];
			d->held = false;
			d->head = (d->head + 1) % d->nslots;
			d->count--;
		}
		pthread_cond_signal(&d->emptied);
		if (d->done)
			break;
		if (dropped > max) {
			d->cancel = true;
			cut = true;
			pthread_cond_signal(&d->emptied);
			break;
		}
		while (d->count < WAKE && !d->done)
			pthread_cond_wait(&d->filled, &d->lock);
	}
	pthread_mutex_unlock(&d->lock);
	join(d);
	if (cut)
		return 1;
	return d->failed ? -1 : 0;
}

void unpkg_decomp_stop(struct unpkg_decomp *d)
{
	if (!d->running)
		return;
	pthread_mutex_lock(&d->lock);
	d->cancel = true;
	pthread_cond_signal(&d->emptied);
	pthread_mutex_unlock(&d->lock);
	join(d);
}

const char *unpkg_decomp_error(const struct unpkg_decomp *d)
{
	return d->failed ? d->msg : NULL;
}

bool unpkg_decomp_delivered(const struct unpkg_decomp *d)
{
	return d->delivered;
}

void unpkg_decomp_free(struct unpkg_decomp *d)
{
	if (d == NULL)
		return;
	unpkg_decomp_stop(d);
	archive_read_free(d->raw);
	if (d->threaded) {
		pthread_cond_destroy(&d->emptied);
		pthread_cond_destroy(&d->filled);
		pthread_mutex_destroy(&d->lock);
	}
	free_queue(d);
	free(d);
}
