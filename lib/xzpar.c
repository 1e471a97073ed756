/* xzpar.c - an xz stream of several blocks, decoded by two threads in
 * bounded memory (xzpar.h).
 *
 * Blocks are claimed in order by the workers; block k's decoded chunks
 * queue up in the job slot k % JOBS until the reader takes them.  The
 * reader is at block `head`.  A chunk of the pool goes to any worker while
 * more than RESERVE are free, and the last RESERVE only to the worker of
 * block `head`: a block decoded ahead can fill the pool up to that point
 * and must then wait, but the block the reader waits for always gets
 * room, so the two can never wait for each other.  A worker may claim a
 * block only while it is fewer than JOBS ahead of `head`, so that a slot
 * is free again (its block read to the end) before it is reused.
 *
 * Waiting: the reader on `ready` (a chunk or the end of block `head`), the
 * workers on `room` (a chunk freed, `head` moved on, or cancel).
 */
#include "config.h"

#include <archive.h>
#include <errno.h>
#include <lzma.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "decomp.h"
#include "xzpar.h"

#define WORKERS 2u
#define JOBS 4u
#define CHUNK (256u * 1024)
#define NCHUNKS (UNPKG_XZPAR_POOL / CHUNK)
#define RESERVE 4u
#define NONE UINT32_MAX

/* Compressed bytes a worker reads at a time. */
#define IN_SIZE (64u * 1024)

/* Indexes larger than this are left to the sequential decoder (a stream
 * of 24 MiB blocks needs about 10 bytes of index per block). */
#define INDEX_MAX (1u << 20)
#define INDEX_MEMLIMIT (8u << 20)

/* Allocations of liblzma at least this large are mapped directly. */
#define MAP_MIN (256u * 1024)
#define ALLOC_HDR 16u

struct job {
	uint64_t block;		/* the block in this slot */
	uint32_t first, last;	/* its decoded chunks, oldest first */
	bool done;		/* its worker will add no more */
	bool failed;		/* ... because it failed */
	int errnum;		/* errno of a failed read, else 0 */
	char msg[200];
};

struct worker {
	struct unpkg_xzpar *x;
	pthread_t thread;
	bool running;
	lzma_stream strm;
	unsigned char in[IN_SIZE];
};

struct unpkg_xzpar {
	int fd;
	uint64_t off;
	lzma_check check;
	lzma_index *index;
	lzma_index_iter iter;	/* at the last block claimed */
	lzma_allocator alloc;

	pthread_mutex_t lock;
	pthread_cond_t ready;
	pthread_cond_t room;

	/* Under the lock. */
	uint64_t nblocks;	/* blocks to decode (fewer after a failure) */
	uint64_t claimed;	/* blocks claimed so far */
	uint64_t head;		/* the block the reader is at */
	uint32_t held;		/* the chunk the reader holds, or NONE */
	uint32_t nfree;
	uint32_t free_list[NCHUNKS];
	uint32_t next[NCHUNKS];	/* chunk queues */
	size_t len[NCHUNKS];
	struct job jobs[JOBS];
	bool cancel;

	/* The reader's. */
	bool failed;
	bool delivered;
	int errnum;
	char msg[200];

	unsigned char *pool;	/* NCHUNKS * CHUNK, mapped */
	struct worker *workers[WORKERS];
};

static void *xz_alloc(void *opaque, size_t nmemb, size_t size)
{
	unsigned char *p;
	size_t total;

	(void)opaque;
	if (size != 0 && nmemb > (SIZE_MAX - ALLOC_HDR) / size)
		return NULL;
	total = nmemb * size + ALLOC_HDR;
	if (total >= MAP_MIN) {
		p = mmap(NULL, total, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
	} else {
		p = malloc(total);
		if (p == NULL)
			return NULL;
	}
	memcpy(p, &total, sizeof(total));
	return p + ALLOC_HDR;
}

static void xz_free(void *opaque, void *ptr)
{
	unsigned char *p;
	size_t total;

	(void)opaque;
	if (ptr == NULL)
		return;
	p = (unsigned char *)ptr - ALLOC_HDR;
	memcpy(&total, p, sizeof(total));
	if (total >= MAP_MIN)
		/* Fails only for a mapping that is not ours. */
		(void)munmap(p, total);
	else
		free(p);
}

/* Read exactly `len` bytes at `off`; 0, or an errno (EIO for a file that
 * ends before). */
static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
	unsigned char *p = buf;

	while (len > 0) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		if (n == 0)
			return EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static unsigned char *chunk(struct unpkg_xzpar *x, uint32_t c)
{
	return x->pool + (size_t)c * CHUNK;
}

static struct job *job_of(struct unpkg_xzpar *x, uint64_t block)
{
	return &x->jobs[block % JOBS];
}

/* Under the lock: give chunk `c` back to the pool. */
static void release(struct unpkg_xzpar *x, uint32_t c)
{
	x->free_list[x->nfree++] = c;
	pthread_cond_broadcast(&x->room);
}

/* Under the lock: give back the chunk the reader holds, if any. */
static void drop_held(struct unpkg_xzpar *x)
{
	if (x->held != NONE) {
		release(x, x->held);
		x->held = NONE;
	}
}

/* A free chunk for the worker of `block`, or NONE if it must stop. */
static uint32_t take_chunk(struct unpkg_xzpar *x, uint64_t block)
{
	uint32_t c = NONE;

	pthread_mutex_lock(&x->lock);
	while (!x->cancel && !(x->nfree > RESERVE ||
			       (x->nfree > 0 && block == x->head)))
		pthread_cond_wait(&x->room, &x->lock);
	if (!x->cancel)
		c = x->free_list[--x->nfree];
	pthread_mutex_unlock(&x->lock);
	return c;
}

/* Queue `len` bytes of chunk `c` on the job of `block`. */
static void publish(struct unpkg_xzpar *x, uint64_t block, uint32_t c,
		    size_t len)
{
	struct job *j = job_of(x, block);

	pthread_mutex_lock(&x->lock);
	x->len[c] = len;
	x->next[c] = NONE;
	if (j->last == NONE)
		j->first = c;
	else
		x->next[j->last] = c;
	j->last = c;
	if (block == x->head)
		pthread_cond_signal(&x->ready);
	pthread_mutex_unlock(&x->lock);
}

/* The end of the work on `block`; `msg` NULL if it was decoded whole. */
static void end_job(struct unpkg_xzpar *x, uint64_t block, int errnum,
		    const char *msg)
{
	struct job *j = job_of(x, block);

	pthread_mutex_lock(&x->lock);
	j->done = true;
	if (msg != NULL) {
		j->failed = true;
		j->errnum = errnum;
		snprintf(j->msg, sizeof(j->msg), "%s", msg);
		/* The blocks after it will not be read. */
		if (x->nblocks > block + 1)
			x->nblocks = block + 1;
	}
	if (block == x->head)
		pthread_cond_signal(&x->ready);
	pthread_mutex_unlock(&x->lock);
}

static const char *lzma_msg(lzma_ret r)
{
	switch (r) {
	case LZMA_MEM_ERROR:
		return "out of memory";
	case LZMA_MEMLIMIT_ERROR:
		return "memory limit reached";
	case LZMA_FORMAT_ERROR:
	case LZMA_OPTIONS_ERROR:
		return "unsupported block options";
	case LZMA_DATA_ERROR:
		return "corrupt data";
	case LZMA_BUF_ERROR:
		return "data ends too early";
	case LZMA_UNSUPPORTED_CHECK:
		return "unsupported integrity check";
	default:
		return "decoder error";
	}
}

/* Where block `index`'s bytes lie, as the index says. */
struct block_at {
	uint64_t index;
	uint64_t start;		/* offset of its header in the stream */
	uint64_t total;		/* header, data, padding and check */
	uint64_t unpadded;
	uint64_t usize;
};

/* Decode one block into chunks.  Returns false if told to stop. */
static bool decode_block(struct worker *w, const struct block_at *b)
{
	struct unpkg_xzpar *x = w->x;
	lzma_filter filters[LZMA_FILTERS_MAX + 1];
	lzma_block blk;
	unsigned char hdr[LZMA_BLOCK_HEADER_SIZE_MAX];
	uint64_t pos, left;
	uint32_t c = NONE;
	size_t len;
	char msg[160];
	const char *why = NULL;
	int errnum;
	lzma_ret r;

	memset(&blk, 0, sizeof(blk));
	errnum = read_at(x->fd, hdr, 1, x->off + b->start);
	if (errnum == 0 && hdr[0] == 0x00) {
		why = "no block header where the index has one";
		goto out;
	}
	if (errnum == 0) {
		blk.header_size = lzma_block_header_size_decode(hdr[0]);
		errnum = read_at(x->fd, hdr + 1, blk.header_size - 1,
				 x->off + b->start + 1);
	}
	if (errnum != 0) {
		why = strerror(errnum);
		goto out;
	}
	blk.version = 0;
	blk.check = x->check;
	blk.filters = filters;
	r = lzma_block_header_decode(&blk, &x->alloc, hdr);
	if (r != LZMA_OK) {
		why = "corrupt block header";
		goto out;
	}
	r = lzma_block_compressed_size(&blk, b->unpadded);
	if (r == LZMA_OK && blk.uncompressed_size != LZMA_VLI_UNKNOWN &&
	    blk.uncompressed_size != b->usize)
		r = LZMA_DATA_ERROR;
	blk.uncompressed_size = b->usize;
	if (r == LZMA_OK)
		r = lzma_block_decoder(&w->strm, &blk);
	lzma_filters_free(filters, &x->alloc);
	if (r != LZMA_OK) {
		why = lzma_msg(r);
		goto out;
	}

	pos = x->off + b->start + blk.header_size;
	left = b->total - blk.header_size;
	w->strm.avail_in = 0;
	w->strm.avail_out = 0;
	for (;;) {
		if (w->strm.avail_out == 0) {
			if (c != NONE)
				publish(x, b->index, c, CHUNK);
			c = take_chunk(x, b->index);
			if (c == NONE)
				return false;
			w->strm.next_out = chunk(x, c);
			w->strm.avail_out = CHUNK;
		}
		if (w->strm.avail_in == 0 && left > 0) {
			size_t n = left < IN_SIZE ? (size_t)left : IN_SIZE;

			errnum = read_at(x->fd, w->in, n, pos);
			if (errnum != 0) {
				why = strerror(errnum);
				break;
			}
			pos += n;
			left -= n;
			w->strm.next_in = w->in;
			w->strm.avail_in = n;
		}
		r = lzma_code(&w->strm, LZMA_RUN);
		if (r == LZMA_STREAM_END) {
			if (w->strm.avail_in > 0 || left > 0)
				why = "block shorter than the index says";
			break;
		}
		if (r != LZMA_OK) {
			why = lzma_msg(r);
			break;
		}
		/* Room left for output and no input: it wants more than the
		 * index gave the block. */
		if (w->strm.avail_out > 0 && w->strm.avail_in == 0 &&
		    left == 0) {
			why = lzma_msg(LZMA_BUF_ERROR);
			break;
		}
	}
	/* What was decoded (before a failure, too) goes to the reader. */
	len = CHUNK - w->strm.avail_out;
	if (len > 0) {
		publish(x, b->index, c, len);
		c = NONE;
	}
out:
	if (c != NONE) {
		pthread_mutex_lock(&x->lock);
		release(x, c);
		pthread_mutex_unlock(&x->lock);
	}
	if (why != NULL)
		snprintf(msg, sizeof(msg), "xz block %ju: %s",
			 (uintmax_t)b->index, why);
	end_job(x, b->index, errnum, why != NULL ? msg : NULL);
	return true;
}

/* Claim the next block, waiting while it is too far ahead of the reader.
 * Returns false when there is none (or on cancel). */
static bool claim(struct unpkg_xzpar *x, struct block_at *b)
{
	struct job *j;
	bool ok = false;

	pthread_mutex_lock(&x->lock);
	while (!x->cancel && x->claimed < x->nblocks &&
	       x->claimed >= x->head + JOBS)
		pthread_cond_wait(&x->room, &x->lock);
	if (!x->cancel && x->claimed < x->nblocks &&
	    !lzma_index_iter_next(&x->iter, LZMA_INDEX_ITER_BLOCK)) {
		b->index = x->claimed++;
		b->start = x->iter.block.compressed_stream_offset;
		b->total = x->iter.block.total_size;
		b->unpadded = x->iter.block.unpadded_size;
		b->usize = x->iter.block.uncompressed_size;
		j = job_of(x, b->index);
		memset(j, 0, sizeof(*j));
		j->block = b->index;
		j->first = j->last = NONE;
		ok = true;
	}
	pthread_mutex_unlock(&x->lock);
	return ok;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct block_at b;

	while (claim(w->x, &b))
		if (!decode_block(w, &b))
			break;
	return NULL;
}

/* Read the stream's header, footer and index; false if this decoder does
 * not take the stream. */
static bool read_index(struct unpkg_xzpar *x, uint64_t size)
{
	unsigned char hf[LZMA_STREAM_HEADER_SIZE];
	lzma_stream_flags head, foot;
	unsigned char *buf = NULL;
	uint64_t memlimit = INDEX_MEMLIMIT;
	size_t in_pos = 0;
	bool ok = false;

	if (size < 2 * LZMA_STREAM_HEADER_SIZE)
		return false;
	if (read_at(x->fd, hf, sizeof(hf), x->off) != 0 ||
	    lzma_stream_header_decode(&head, hf) != LZMA_OK)
		return false;
	if (read_at(x->fd, hf, sizeof(hf),
		    x->off + size - LZMA_STREAM_HEADER_SIZE) != 0 ||
	    lzma_stream_footer_decode(&foot, hf) != LZMA_OK ||
	    lzma_stream_flags_compare(&head, &foot) != LZMA_OK)
		return false;
	if (foot.backward_size > INDEX_MAX ||
	    foot.backward_size > size - 2 * LZMA_STREAM_HEADER_SIZE)
		return false;
	buf = malloc(foot.backward_size);
	if (buf == NULL)
		return false;
	if (read_at(x->fd, buf, foot.backward_size,
		    x->off + size - LZMA_STREAM_HEADER_SIZE -
			    foot.backward_size) != 0)
		goto out;
	if (lzma_index_buffer_decode(&x->index, &memlimit, &x->alloc, buf,
				     &in_pos, foot.backward_size) != LZMA_OK)
		goto out;
	if (in_pos != foot.backward_size ||
	    lzma_index_stream_flags(x->index, &foot) != LZMA_OK ||
	    lzma_index_stream_size(x->index) != size ||
	    lzma_index_block_count(x->index) < 2)
		goto out;
	x->check = head.check;
	x->nblocks = lzma_index_block_count(x->index);
	lzma_index_iter_init(&x->iter, x->index);
	ok = true;
out:
	free(buf);
	return ok;
}

/* A decoder with the stream's index read, no pool and no thread yet; NULL
 * if this decoder does not take the stream (or out of memory). */
static struct unpkg_xzpar *prepare(int fd, uint64_t off, uint64_t size)
{
	struct unpkg_xzpar *x;

	if (!unpkg_decomp_two_cpus())
		return NULL;
	x = calloc(1, sizeof(*x));
	if (x == NULL)
		return NULL;
	x->fd = fd;
	x->off = off;
	x->held = NONE;
	x->alloc.alloc = xz_alloc;
	x->alloc.free = xz_free;
	x->pool = MAP_FAILED;
	if (read_index(x, size))
		return x;
	lzma_index_end(x->index, &x->alloc);
	free(x);
	return NULL;
}

bool unpkg_xzpar_takes(int fd, uint64_t off, uint64_t size)
{
	struct unpkg_xzpar *x = prepare(fd, off, size);

	if (x == NULL)
		return false;
	lzma_index_end(x->index, &x->alloc);
	free(x);
	return true;
}

struct unpkg_xzpar *unpkg_xzpar_start(int fd, uint64_t off, uint64_t size)
{
	struct unpkg_xzpar *x;
	sigset_t all, old;
	uint32_t i;
	unsigned started = 0;

	x = prepare(fd, off, size);
	if (x == NULL)
		return NULL;
	x->pool = mmap(NULL, (size_t)NCHUNKS * CHUNK, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (x->pool == MAP_FAILED)
		goto fail;
	for (i = 0; i < NCHUNKS; i++)
		x->free_list[i] = NCHUNKS - 1 - i;
	x->nfree = NCHUNKS;
	for (i = 0; i < WORKERS; i++) {
		struct worker *w = calloc(1, sizeof(*w));

		if (w == NULL)
			goto fail;
		w->x = x;
		w->strm = (lzma_stream)LZMA_STREAM_INIT;
		w->strm.allocator = &x->alloc;
		x->workers[i] = w;
	}
	if (pthread_mutex_init(&x->lock, NULL) != 0)
		goto fail;
	if (pthread_cond_init(&x->ready, NULL) != 0)
		goto no_ready;
	if (pthread_cond_init(&x->room, NULL) != 0)
		goto no_room;
	/* Signals are for the caller's thread: the workers block all. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (i = 0; i < WORKERS; i++) {
		struct worker *w = x->workers[i];

		w->running = pthread_create(&w->thread, NULL, work, w) == 0;
		started += w->running;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	/* One worker is enough to decode; none is not. */
	if (started > 0)
		return x;
	pthread_cond_destroy(&x->room);
no_room:
	pthread_cond_destroy(&x->ready);
no_ready:
	pthread_mutex_destroy(&x->lock);
fail:
	for (i = 0; i < WORKERS; i++)
		free(x->workers[i]);
	if (x->pool != MAP_FAILED)
		(void)munmap(x->pool, (size_t)NCHUNKS * CHUNK);
	lzma_index_end(x->index, &x->alloc);
	free(x);
	return NULL;
}

/* Under the lock: the next chunk of the stream in `*c`.  Returns 1 with a
 * chunk, 0 at the end of the stream, -1 if a block failed (its message is
 * then the decoder's). */
static int next_chunk(struct unpkg_xzpar *x, uint32_t *c)
{
	for (;;) {
		struct job *j = job_of(x, x->head);

		if (x->head >= x->nblocks)
			return 0;
		if (x->head < x->claimed && j->first != NONE) {
			*c = j->first;
			j->first = x->next[*c];
			if (j->first == NONE)
				j->last = NONE;
			return 1;
		}
		if (x->head < x->claimed && j->done) {
			if (j->failed) {
				x->failed = true;
				x->errnum = j->errnum;
				memcpy(x->msg, j->msg, sizeof(x->msg));
				return -1;
			}
			x->head++;
			pthread_cond_broadcast(&x->room);
			continue;
		}
		pthread_cond_wait(&x->ready, &x->lock);
	}
}

la_ssize_t unpkg_xzpar_read(struct archive *a, void *client,
			    const void **buf)
{
	struct unpkg_xzpar *x = client;
	uint32_t c;
	int r;

	pthread_mutex_lock(&x->lock);
	drop_held(x);
	r = next_chunk(x, &c);
	if (r > 0)
		x->held = c;
	pthread_mutex_unlock(&x->lock);
	if (r > 0) {
		*buf = chunk(x, c);
		return (la_ssize_t)x->len[c];
	}
	*buf = NULL;
	if (r == 0)
		return 0;
	x->delivered = true;
	archive_set_error(a, x->errnum != 0 ? x->errnum : EIO, "%s",
			  x->msg);
	return -1;
}

int unpkg_xzpar_finish(struct unpkg_xzpar *x, uint64_t max)
{
	uint64_t dropped = 0;
	uint32_t c;
	int r;

	pthread_mutex_lock(&x->lock);
	drop_held(x);
	while ((r = next_chunk(x, &c)) > 0) {
		dropped += x->len[c];
		release(x, c);
		if (dropped > max) {
			r = 1;
			break;
		}
	}
	pthread_mutex_unlock(&x->lock);
	unpkg_xzpar_stop(x);
	return r;
}

void unpkg_xzpar_stop(struct unpkg_xzpar *x)
{
	unsigned i;

	pthread_mutex_lock(&x->lock);
	x->cancel = true;
	pthread_cond_broadcast(&x->room);
	pthread_mutex_unlock(&x->lock);
	for (i = 0; i < WORKERS; i++) {
		struct worker *w = x->workers[i];

		if (!w->running)
			continue;
		/* Only fails for a thread that is not ours to join. */
		(void)pthread_join(w->thread, NULL);
		w->running = false;
	}
}

const char *unpkg_xzpar_error(const struct unpkg_xzpar *x)
{
	return x->failed ? x->msg : NULL;
}

int unpkg_xzpar_errno(const struct unpkg_xzpar *x)
{
	return x->failed ? x->errnum : 0;
}

bool unpkg_xzpar_delivered(const struct unpkg_xzpar *x)
{
	return x->delivered;
}

void unpkg_xzpar_free(struct unpkg_xzpar *x)
{
	unsigned i;

	if (x == NULL)
		return;
	unpkg_xzpar_stop(x);
	for (i = 0; i < WORKERS; i++) {
		lzma_end(&x->workers[i]->strm);
		free(x->workers[i]);
	}
	pthread_cond_destroy(&x->room);
	pthread_cond_destroy(&x->ready);
	pthread_mutex_destroy(&x->lock);
	(void)munmap(x->pool, (size_t)NCHUNKS * CHUNK);
	lzma_index_end(x->index, &x->alloc);
	free(x);
}
