/* check_xzpar.c - unit tests of the threaded decoder of xz streams of
 * several blocks (xzpar.h).
 *
 * The streams are made here with liblzma: by its threaded encoder, as xz
 * -T and dpkg-deb make them, and block by block for streams whose index
 * says something other than the blocks (a sequential decoder would notice
 * at the end of the stream; this one must notice at the block).  Each
 * stream is written to a file between junk bytes and read through the
 * public interface only, with unpkg_xzpar_read() called directly or by a
 * libarchive reader.
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <lzma.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "xzpar.h"

#define KiB ((size_t)1024)
#define MiB (1024 * KiB)
#define POOL ((size_t)UNPKG_XZPAR_POOL)

/* Where the stream lies in its file. */
#define JUNK_BEFORE ((size_t)100)
#define JUNK_AFTER ((size_t)57)

/* A block as the messages number it (from 0, as the index does). */
#define MSG_BLOCK(k) ((size_t)(k))

static char *tmp;

static void setup(void)
{
	tmp = tu_mkdtemp();
}

static void teardown(void)
{
	tu_rm_rf(tmp);
	free(tmp);
	tmp = NULL;
}

/* --- test data ----------------------------------------------------------- */

/* `len` bytes of text, a function of `seed`: words from a small list (xz
 * makes a fraction of them) between hex numbers it cannot compress. */
static unsigned char *make_data(size_t len, uint64_t seed)
{
	static const char *const words[32] = {
		"package", "unpack", "archive", "block", "stream", "index",
		"footer", "header", "dictionary", "decoder", "thread", "pool",
		"chunk", "reader", "worker", "offset", "size", "check", "crc",
		"sha", "data", "control", "member", "file", "directory",
		"symlink", "hardlink", "conffile", "script", "trigger", "root",
		"database",
	};
	unsigned char *p = malloc(len > 0 ? len : 1);
	uint64_t s = seed * 0x9E3779B97F4A7C15u + 0x1234567u;
	size_t i = 0;

	ck_assert_ptr_nonnull(p);
	while (i < len) {
		uint64_t r;

		s ^= s >> 12;
		s ^= s << 25;
		s ^= s >> 27;
		r = s * 0x2545F4914F6CDD1Du;
		if ((r & 3) == 0) {
			unsigned k;

			for (k = 0; k < 8 && i < len; k++)
				p[i++] = (unsigned char)"0123456789abcdef"
					[(r >> (8 + 4 * k)) & 15];
		} else {
			const char *w = words[(r >> 8) & 31];

			while (*w != '\0' && i < len)
				p[i++] = (unsigned char)*w++;
		}
		if (i < len)
			p[i++] = (r >> 59) == 0 ? '\n' : ' ';
	}
	return p;
}

struct buf {
	unsigned char *p;
	size_t len, cap;
};

static void buf_reserve(struct buf *b, size_t more)
{
	size_t cap = b->cap > 0 ? b->cap : 64 * KiB;

	while (cap - b->len < more)
		cap *= 2;
	if (cap != b->cap) {
		b->p = realloc(b->p, cap);
		ck_assert_ptr_nonnull(b->p);
		b->cap = cap;
	}
}

static void buf_add(struct buf *b, const void *p, size_t n)
{
	buf_reserve(b, n);
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

/* --- making streams ------------------------------------------------------ */

/* Compress with liblzma's threaded encoder, as xz -T2 --block-size does. */
static struct buf encode_mt(const unsigned char *in, size_t len,
			    uint64_t block_size, lzma_check check)
{
	lzma_stream s = LZMA_STREAM_INIT;
	lzma_mt mt;
	struct buf out = { 0 };
	lzma_ret r;

	memset(&mt, 0, sizeof(mt));
	mt.threads = 2;
	mt.block_size = block_size;
	mt.preset = 1;
	mt.check = check;
	ck_assert_int_eq(lzma_stream_encoder_mt(&s, &mt), LZMA_OK);
	s.next_in = in;
	s.avail_in = len;
	do {
		buf_reserve(&out, 256 * KiB);
		s.next_out = out.p + out.len;
		s.avail_out = out.cap - out.len;
		r = lzma_code(&s, LZMA_FINISH);
		out.len = out.cap - s.avail_out;
	} while (r == LZMA_OK);
	ck_assert_int_eq(r, LZMA_STREAM_END);
	lzma_end(&s);
	return out;
}

/* A lie in the index that encode_hand() writes: `usize` and `unpadded`
 * are added to the record of block `block` and taken from the next one's,
 * so that the totals still add up. */
struct lie {
	size_t block;
	int64_t usize;
	int64_t unpadded;
};

/* Compress block by block: block i holds sizes[i] bytes (0 makes an empty
 * block).  With `header_sizes` each block header records the block's
 * sizes, as xz -T writes them; without, it does not, as xz writes a
 * stream of one block. */
static struct buf encode_hand(const unsigned char *in, const size_t *sizes,
			      size_t n, lzma_check check, bool header_sizes,
			      const struct lie *lie)
{
	lzma_options_lzma opt;
	lzma_filter filters[2];
	lzma_stream_flags flags;
	lzma_index *idx = lzma_index_init(NULL);
	struct buf out = { 0 };
	size_t i, pos;

	ck_assert_ptr_nonnull(idx);
	ck_assert(!lzma_lzma_preset(&opt, 1));
	filters[0].id = LZMA_FILTER_LZMA2;
	filters[0].options = &opt;
	filters[1].id = LZMA_VLI_UNKNOWN;
	filters[1].options = NULL;
	memset(&flags, 0, sizeof(flags));
	flags.version = 0;
	flags.check = check;
	buf_reserve(&out, LZMA_STREAM_HEADER_SIZE);
	ck_assert_int_eq(lzma_stream_header_encode(&flags, out.p), LZMA_OK);
	out.len = LZMA_STREAM_HEADER_SIZE;

	for (i = 0; i < n; i++) {
		lzma_block blk;
		lzma_vli unpadded, usize;

		memset(&blk, 0, sizeof(blk));
		blk.version = 0;
		blk.check = check;
		blk.filters = filters;
		buf_reserve(&out, lzma_block_buffer_bound(sizes[i]));
		if (header_sizes) {
			pos = out.len;
			ck_assert_int_eq(lzma_block_buffer_encode(&blk, NULL, in,
								  sizes[i],
								  out.p, &pos,
								  out.cap),
					 LZMA_OK);
			out.len = pos;
		} else {
			lzma_stream s = LZMA_STREAM_INIT;

			blk.compressed_size = LZMA_VLI_UNKNOWN;
			blk.uncompressed_size = LZMA_VLI_UNKNOWN;
			ck_assert_int_eq(lzma_block_header_size(&blk), LZMA_OK);
			ck_assert_int_eq(lzma_block_header_encode(&blk,
								  out.p + out.len),
					 LZMA_OK);
			out.len += blk.header_size;
			ck_assert_int_eq(lzma_block_encoder(&s, &blk), LZMA_OK);
			s.next_in = in;
			s.avail_in = sizes[i];
			s.next_out = out.p + out.len;
			s.avail_out = out.cap - out.len;
			ck_assert_int_eq(lzma_code(&s, LZMA_FINISH),
					 LZMA_STREAM_END);
			out.len = out.cap - s.avail_out;
			lzma_end(&s);
		}
		unpadded = lzma_block_unpadded_size(&blk);
		usize = blk.uncompressed_size;
		ck_assert_uint_ne(unpadded, 0);
		ck_assert_uint_eq(usize, sizes[i]);
		if (lie != NULL && lie->block == i) {
			unpadded += (lzma_vli)lie->unpadded;
			usize += (lzma_vli)lie->usize;
		} else if (lie != NULL && lie->block + 1 == i) {
			unpadded -= (lzma_vli)lie->unpadded;
			usize -= (lzma_vli)lie->usize;
		}
		ck_assert_int_eq(lzma_index_append(idx, NULL, unpadded, usize),
				 LZMA_OK);
		in += sizes[i];
	}

	buf_reserve(&out, (size_t)lzma_index_size(idx) + LZMA_STREAM_HEADER_SIZE);
	pos = out.len;
	ck_assert_int_eq(lzma_index_buffer_encode(idx, out.p, &pos, out.cap),
			 LZMA_OK);
	out.len = pos;
	flags.backward_size = lzma_index_size(idx);
	ck_assert_int_eq(lzma_stream_footer_encode(&flags, out.p + out.len),
			 LZMA_OK);
	out.len += LZMA_STREAM_HEADER_SIZE;
	lzma_index_end(idx, NULL);
	return out;
}

/* A block of a stream, as its index says. */
struct blk {
	uint64_t start;		/* its header, from the start of the stream */
	uint64_t total;		/* header, data, padding and check */
	uint64_t hdr;		/* header size */
	uint64_t ustart;	/* its first decoded byte */
	uint64_t usize;
};

/* The blocks of stream `s` (malloc'd in *out); their count. */
static size_t blocks_of(const struct buf *s, struct blk **out)
{
	lzma_stream_flags f;
	lzma_index *idx = NULL;
	lzma_index_iter it;
	uint64_t memlimit = UINT64_MAX;
	size_t in_pos = 0, n, k = 0;
	const unsigned char *foot = s->p + s->len - LZMA_STREAM_HEADER_SIZE;

	ck_assert_int_eq(lzma_stream_footer_decode(&f, foot), LZMA_OK);
	ck_assert_int_eq(lzma_index_buffer_decode(&idx, &memlimit, NULL,
						  foot - f.backward_size,
						  &in_pos, f.backward_size),
			 LZMA_OK);
	n = (size_t)lzma_index_block_count(idx);
	*out = calloc(n, sizeof(**out));
	ck_assert_ptr_nonnull(*out);
	lzma_index_iter_init(&it, idx);
	while (!lzma_index_iter_next(&it, LZMA_INDEX_ITER_BLOCK)) {
		struct blk *b = &(*out)[k++];

		b->start = it.block.compressed_stream_offset;
		b->total = it.block.total_size;
		b->ustart = it.block.uncompressed_stream_offset;
		b->usize = it.block.uncompressed_size;
		b->hdr = lzma_block_header_size_decode(s->p[b->start]);
	}
	ck_assert_uint_eq(k, n);
	lzma_index_end(idx, NULL);
	return n;
}

/* Where the index of stream `s` lies, and its size. */
static size_t index_at(const struct buf *s, size_t *size)
{
	lzma_stream_flags f;

	ck_assert_int_eq(lzma_stream_footer_decode(&f, s->p + s->len -
						   LZMA_STREAM_HEADER_SIZE),
			 LZMA_OK);
	*size = (size_t)f.backward_size;
	return s->len - LZMA_STREAM_HEADER_SIZE - *size;
}

static void flip(struct buf *s, size_t at, size_t count)
{
	size_t i;

	ck_assert_uint_le(at + count, s->len);
	for (i = 0; i < count; i++)
		s->p[at + i] ^= 0xff;
}

static void write_all(int fd, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n > 0) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		ck_assert_msg(w > 0, "write: %s", strerror(errno));
		c += w;
		n -= (size_t)w;
	}
}

/* A file (already unlinked) holding `before` junk bytes, the first `len`
 * bytes of `s` and `after` junk bytes. */
static int put_file(const struct buf *s, size_t len, size_t before,
		    size_t after)
{
	static unsigned serial;
	unsigned char junk[256];
	char path[PATH_MAX];
	size_t i;
	int fd;

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (unsigned char)(i * 7 % 255 + 1);
	snprintf(path, sizeof(path), "%s/stream%u.xz", tmp, serial++);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(unlink(path), 0);
	for (i = 0; i < before; i += sizeof(junk))
		write_all(fd, junk, before - i < sizeof(junk) ? before - i
							      : sizeof(junk));
	write_all(fd, s->p, len);
	for (i = 0; i < after; i += sizeof(junk))
		write_all(fd, junk, after - i < sizeof(junk) ? after - i
							     : sizeof(junk));
	return fd;
}

/* The usual placement: the whole stream between junk. */
static struct unpkg_xzpar *start_on(const struct buf *s, int *fd)
{
	*fd = put_file(s, s->len, JUNK_BEFORE, JUNK_AFTER);
	return unpkg_xzpar_start(*fd, JUNK_BEFORE, s->len);
}

/* --- reading ------------------------------------------------------------- */

struct got {
	unsigned char *buf;
	size_t len, cap;
	size_t calls;		/* reads that returned bytes */
	la_ssize_t end;		/* 0: end of stream, -1: failure, 1: neither */
	char msg[300];		/* archive_error_string() after a failure */
	int errnum;		/* archive_errno() after a failure */
};

static void got_init(struct got *g, size_t cap)
{
	memset(g, 0, sizeof(*g));
	g->buf = malloc(cap > 0 ? cap : 1);
	ck_assert_ptr_nonnull(g->buf);
	g->cap = cap;
	g->end = 1;
}

/* Read until the end of the stream, a failure or `limit` bytes. */
static void read_upto(struct unpkg_xzpar *x, struct archive *a, struct got *g,
		      size_t limit)
{
	while (g->len < limit) {
		const void *p = NULL;
		la_ssize_t n = unpkg_xzpar_read(a, x, &p);

		if (n <= 0) {
			const char *m = archive_error_string(a);

			g->end = n;
			ck_assert_msg(n == 0 || n == -1, "read returned %jd",
				      (intmax_t)n);
			if (n < 0) {
				snprintf(g->msg, sizeof(g->msg), "%s",
					 m != NULL ? m : "(no message)");
				g->errnum = archive_errno(a);
			}
			return;
		}
		ck_assert_ptr_nonnull(p);
		ck_assert_msg((size_t)n <= g->cap - g->len,
			      "more bytes than the stream holds (%zu + %jd > %zu)",
			      g->len, (intmax_t)n, g->cap);
		memcpy(g->buf + g->len, p, (size_t)n);
		g->len += (size_t)n;
		g->calls++;
	}
}

static void read_all(struct unpkg_xzpar *x, struct archive *a, struct got *g)
{
	read_upto(x, a, g, SIZE_MAX);
}

/* The first `n` bytes are the expected ones. */
static void assert_prefix(const struct got *g, const unsigned char *want,
			  size_t n)
{
	size_t i;

	ck_assert_uint_ge(g->len, n);
	if (memcmp(g->buf, want, n) == 0)
		return;
	for (i = 0; g->buf[i] == want[i]; i++)
		;
	ck_abort_msg("decoded bytes differ from the input at %zu of %zu", i,
		     n);
}

/* The whole stream, byte-exact, and a clean end. */
static void assert_exact(const struct got *g, const unsigned char *want,
			 size_t len)
{
	ck_assert_msg(g->end == 0, "stream failed after %zu of %zu bytes: %s",
		      g->len, len, g->msg);
	ck_assert_uint_eq(g->len, len);
	assert_prefix(g, want, len);
}

static void assert_block_msg(const char *msg, size_t block)
{
	char want[64];

	ck_assert_ptr_nonnull(msg);
	snprintf(want, sizeof(want), "xz block %zu: ", MSG_BLOCK(block));
	ck_assert_msg(strncmp(msg, want, strlen(want)) == 0 &&
		      strlen(msg) > strlen(want),
		      "message \"%s\" does not name the block as \"%s...\"",
		      msg, want);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Decode `s` fully, directly, and compare with `data`. */
static void check_roundtrip(const struct buf *s, const unsigned char *data,
			    size_t len)
{
	struct archive *a = archive_read_new();
	struct unpkg_xzpar *x;
	struct got g;
	int fd;

	ck_assert_ptr_nonnull(a);
	x = start_on(s, &fd);
	ck_assert_msg(x != NULL, "a stream of several blocks not taken");
	got_init(&g, len);
	read_all(x, a, &g);
	assert_exact(&g, data, len);
	ck_assert_ptr_null(unpkg_xzpar_error(x));
	ck_assert(!unpkg_xzpar_delivered(x));
	ck_assert_int_eq(unpkg_xzpar_finish(x, 0), 0);
	unpkg_xzpar_free(x);
	archive_read_free(a);
	free(g.buf);
	close(fd);
}

/* --- the big streams, made once for the tests that use them -------------- */

struct big {
	unsigned char *data;
	size_t len;
	struct buf s;
	size_t nblocks;
};

/* Blocks larger than the pool: the block the reader is at streams through
 * it, and the next one, decoded ahead, fills the rest and waits. */
static const struct big *big_blocks(void)
{
	static struct big b;
	struct blk *blks;

	if (b.data != NULL)
		return &b;
	b.len = 2 * (POOL + POOL / 4) + MiB + 12345;
	b.data = make_data(b.len, 1);
	b.s = encode_mt(b.data, b.len, POOL + POOL / 4, LZMA_CHECK_CRC64);
	b.nblocks = blocks_of(&b.s, &blks);
	ck_assert_uint_eq(b.nblocks, 3);
	free(blks);
	return &b;
}

/* Blocks of under a third of the pool: several blocks decoded ahead fill
 * it, and it is recycled many times over. */
static const struct big *pool_blocks(void)
{
	static struct big b;
	struct blk *blks;

	if (b.data != NULL)
		return &b;
	b.len = 5 * (POOL / 4 + MiB) + 777;
	b.data = make_data(b.len, 2);
	b.s = encode_mt(b.data, b.len, POOL / 4 + MiB, LZMA_CHECK_CRC32);
	b.nblocks = blocks_of(&b.s, &blks);
	ck_assert_uint_eq(b.nblocks, 6);
	free(blks);
	return &b;
}

/* --- decoding exactly ---------------------------------------------------- */

START_TEST(test_two_blocks)
{
	size_t len = 3 * MiB + 1000;
	unsigned char *data = make_data(len, 10);
	struct buf s = encode_mt(data, len, 2 * MiB, LZMA_CHECK_CRC64);
	struct blk *b;

	ck_assert_uint_eq(blocks_of(&s, &b), 2);
	check_roundtrip(&s, data, len);
	free(b);
	free(s.p);
	free(data);
}
END_TEST

START_TEST(test_many_small_blocks)
{
	size_t len = 300 * 4 * KiB;
	unsigned char *data = make_data(len, 11);
	struct buf s = encode_mt(data, len, 4 * KiB, LZMA_CHECK_CRC64);
	struct blk *b;

	ck_assert_uint_eq(blocks_of(&s, &b), 300);
	check_roundtrip(&s, data, len);
	free(b);
	free(s.p);
	free(data);
}
END_TEST

static const lzma_check checks[] = {
	LZMA_CHECK_NONE, LZMA_CHECK_CRC32, LZMA_CHECK_CRC64,
	LZMA_CHECK_SHA256,
};

START_TEST(test_checks)
{
	size_t len = 2 * MiB + 512 * KiB + 3;
	unsigned char *data = make_data(len, 12);
	struct buf s = encode_mt(data, len, 512 * KiB, checks[_i]);
	struct blk *b;

	ck_assert_uint_eq(blocks_of(&s, &b), 6);
	check_roundtrip(&s, data, len);
	free(b);
	free(s.p);
	free(data);
}
END_TEST

/* Blocks made one by one, of sizes around the usual buffer sizes (64 KiB,
 * 256 KiB), one empty and one of a single byte; with and without their
 * sizes in the block headers. */
START_TEST(test_hand_made_blocks)
{
	static const size_t sizes[] = {
		256 * 1024, 512 * 1024, 256 * 1024 - 1, 256 * 1024 + 1, 0, 1,
		64 * 1024, 768 * 1024, 0, 100,
	};
	size_t n = sizeof(sizes) / sizeof(sizes[0]), len = 0, i;
	unsigned char *data;
	struct buf s;

	for (i = 0; i < n; i++)
		len += sizes[i];
	data = make_data(len, 13);
	s = encode_hand(data, sizes, n, LZMA_CHECK_CRC32, _i == 1, NULL);
	check_roundtrip(&s, data, len);
	free(s.p);
	free(data);
}
END_TEST

/* Large streams, read at different paces: straight through; the first
 * chunk, a pause in which the workers fill the pool and wait, then the
 * rest; pauses every few MiB, in which several blocks decoded ahead fill
 * the pool. */
START_TEST(test_big_streams)
{
	const struct big *b = _i < 2 ? big_blocks() : pool_blocks();
	struct archive *a = archive_read_new();
	struct unpkg_xzpar *x;
	struct got g;
	int fd;

	ck_assert_ptr_nonnull(a);
	x = start_on(&b->s, &fd);
	ck_assert_ptr_nonnull(x);
	got_init(&g, b->len);
	switch (_i) {
	case 0:
		read_all(x, a, &g);
		break;
	case 1:
		read_upto(x, a, &g, 1);
		sleep_ms(400);
		read_all(x, a, &g);
		break;
	case 2:
		while (g.end == 1) {
			read_upto(x, a, &g, g.len + 7 * MiB);
			sleep_ms(150);
		}
		break;
	}
	assert_exact(&g, b->data, b->len);
	ck_assert_int_eq(unpkg_xzpar_finish(x, 0), 0);
	unpkg_xzpar_free(x);
	archive_read_free(a);
	free(g.buf);
	close(fd);
}
END_TEST

/* As dpkg-deb's data.tar.xz: a tar archive, read by libarchive's tar
 * reader through the callback. */
START_TEST(test_tar_through_libarchive)
{
	static const size_t sizes[] = {
		MiB + 17, 0, 300 * KiB, 2 * MiB, 5, 700 * KiB,
	};
	size_t n = sizeof(sizes) / sizeof(sizes[0]), i, used = 0;
	size_t cap = 8 * MiB;
	unsigned char *tarbuf = malloc(cap), *contents[6], *got;
	struct archive *w = archive_write_new(), *r = archive_read_new();
	struct archive_entry *ae;
	struct unpkg_xzpar *x;
	struct buf s;
	struct blk *b;
	int fd;

	ck_assert_ptr_nonnull(tarbuf);
	ck_assert_ptr_nonnull(w);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(archive_write_set_format_pax_restricted(w), ARCHIVE_OK);
	ck_assert_int_eq(archive_write_add_filter_none(w), ARCHIVE_OK);
	ck_assert_int_eq(archive_write_open_memory(w, tarbuf, cap, &used),
			 ARCHIVE_OK);
	for (i = 0; i < n; i++) {
		char name[32];

		contents[i] = make_data(sizes[i], 20 + i);
		snprintf(name, sizeof(name), "./usr/share/f%zu", i);
		ae = archive_entry_new();
		ck_assert_ptr_nonnull(ae);
		archive_entry_set_pathname(ae, name);
		archive_entry_set_filetype(ae, AE_IFREG);
		archive_entry_set_perm(ae, 0644);
		archive_entry_set_size(ae, (la_int64_t)sizes[i]);
		ck_assert_int_eq(archive_write_header(w, ae), ARCHIVE_OK);
		ck_assert_int_eq(archive_write_data(w, contents[i], sizes[i]),
				 (la_ssize_t)sizes[i]);
		archive_entry_free(ae);
	}
	ck_assert_int_eq(archive_write_close(w), ARCHIVE_OK);
	archive_write_free(w);

	s = encode_mt(tarbuf, used, 256 * KiB, LZMA_CHECK_CRC64);
	ck_assert_uint_gt(blocks_of(&s, &b), 10);
	x = start_on(&s, &fd);
	ck_assert_ptr_nonnull(x);
	ck_assert_int_eq(archive_read_support_format_tar(r), ARCHIVE_OK);
	ck_assert_int_eq(archive_read_open(r, x, NULL, unpkg_xzpar_read, NULL),
			 ARCHIVE_OK);
	got = malloc(2 * MiB + 1);
	ck_assert_ptr_nonnull(got);
	for (i = 0; i < n; i++) {
		char name[32];
		size_t len = 0;
		la_ssize_t k;

		snprintf(name, sizeof(name), "./usr/share/f%zu", i);
		ck_assert_int_eq(archive_read_next_header(r, &ae), ARCHIVE_OK);
		ck_assert_str_eq(archive_entry_pathname(ae), name);
		ck_assert_int_eq(archive_entry_size(ae), (la_int64_t)sizes[i]);
		while ((k = archive_read_data(r, got + len, 2 * MiB + 1 - len)) > 0)
			len += (size_t)k;
		ck_assert_int_eq(k, 0);
		ck_assert_uint_eq(len, sizes[i]);
		ck_assert(memcmp(got, contents[i], len) == 0);
		free(contents[i]);
	}
	ck_assert_int_eq(archive_read_next_header(r, &ae), ARCHIVE_EOF);
	ck_assert_int_eq(archive_read_free(r), ARCHIVE_OK);
	/* What follows the tar's end (its record padding) is clean. */
	ck_assert_int_eq(unpkg_xzpar_finish(x, MiB), 0);
	unpkg_xzpar_free(x);
	close(fd);
	free(got);
	free(b);
	free(s.p);
	free(tarbuf);
}
END_TEST

/* --- streams it does not take -------------------------------------------- */

enum {
	NT_ONE_BLOCK, NT_PADDING, NT_TWO_STREAMS, NT_PADDED_STREAMS,
	NT_TRUNCATED, NT_NO_FOOTER, NT_FOOTER, NT_BACKWARD_SIZE, NT_HEADER,
	NT_FLAGS, NT_INDEX, NT_OFF_PLUS, NT_OFF_MINUS, NT_SIZE_MINUS,
	NT_SIZE_PLUS, NT_EMPTY, NT_NOT_XZ, NT_ONE_CPU, NT_COUNT
};

static const char *const nt_names[NT_COUNT] = {
	"single block", "stream padding", "two streams",
	"two streams with padding between", "file ends before the footer",
	"size without the footer", "damaged footer",
	"footer with a wrong index size", "damaged stream header",
	"header and footer disagree", "damaged index", "offset + 4",
	"offset - 4", "size - 4", "size + 4", "size 0", "not xz",
	"one CPU",
};

START_TEST(test_not_taken)
{
	size_t len = MiB + 3;
	unsigned char *data = make_data(len, 30);
	struct buf s = encode_mt(data, len, 256 * KiB, LZMA_CHECK_CRC64);
	struct buf t = { 0 };
	uint64_t off = JUNK_BEFORE, size;
	size_t file_len, after = JUNK_AFTER, at, isize;
	lzma_stream_flags flags;
	static const unsigned char zeros[4];
	cpu_set_t old, one;
	struct unpkg_xzpar *x;
	int fd;

	/* The stream as made is taken: each case is refused for its one
	 * change. */
	x = start_on(&s, &fd);
	ck_assert_ptr_nonnull(x);
	unpkg_xzpar_free(x);
	close(fd);

	size = file_len = s.len;
	switch (_i) {
	case NT_ONE_BLOCK:
		buf_reserve(&t, lzma_stream_buffer_bound(len));
		ck_assert_int_eq(lzma_easy_buffer_encode(1, LZMA_CHECK_CRC64,
							 NULL, data, len,
							 t.p, &t.len, t.cap),
				 LZMA_OK);
		free(s.p);
		s = t;
		size = file_len = s.len;
		break;
	case NT_PADDING:
		buf_add(&s, zeros, sizeof(zeros));
		size = file_len = s.len;
		break;
	case NT_PADDED_STREAMS:
		buf_add(&s, zeros, sizeof(zeros));
		/* fall through */
	case NT_TWO_STREAMS:
		t = encode_mt(data, len / 2, 128 * KiB, LZMA_CHECK_CRC64);
		buf_add(&s, t.p, t.len);
		free(t.p);
		size = file_len = s.len;
		break;
	case NT_TRUNCATED:
		file_len = s.len - 8;
		after = 0;
		break;
	case NT_NO_FOOTER:
		size = file_len = s.len - LZMA_STREAM_HEADER_SIZE;
		break;
	case NT_FOOTER:
		/* A byte of the backward size: the footer's CRC32 fails. */
		flip(&s, s.len - LZMA_STREAM_HEADER_SIZE + 5, 1);
		break;
	case NT_BACKWARD_SIZE:
		ck_assert_int_eq(lzma_stream_footer_decode(&flags, s.p + s.len -
							   LZMA_STREAM_HEADER_SIZE),
				 LZMA_OK);
		flags.backward_size += 4;
		ck_assert_int_eq(lzma_stream_footer_encode(&flags, s.p + s.len -
							   LZMA_STREAM_HEADER_SIZE),
				 LZMA_OK);
		break;
	case NT_HEADER:
		flip(&s, 7, 1);
		break;
	case NT_FLAGS:
		/* Both valid, but they name different checks. */
		ck_assert_int_eq(lzma_stream_footer_decode(&flags, s.p + s.len -
							   LZMA_STREAM_HEADER_SIZE),
				 LZMA_OK);
		flags.check = LZMA_CHECK_CRC32;
		ck_assert_int_eq(lzma_stream_footer_encode(&flags, s.p + s.len -
							   LZMA_STREAM_HEADER_SIZE),
				 LZMA_OK);
		break;
	case NT_INDEX:
		at = index_at(&s, &isize);
		flip(&s, at + isize / 2, 1);
		break;
	case NT_OFF_PLUS:
		off += 4;
		break;
	case NT_OFF_MINUS:
		off -= 4;
		break;
	case NT_SIZE_MINUS:
		size -= 4;
		break;
	case NT_SIZE_PLUS:
		size += 4;
		break;
	case NT_EMPTY:
		size = 0;
		break;
	case NT_NOT_XZ:
		off = 0;
		size = JUNK_BEFORE;
		break;
	case NT_ONE_CPU:
		break;
	}
	fd = put_file(&s, file_len, JUNK_BEFORE, after);
	if (_i == NT_ONE_CPU) {
		ck_assert_int_eq(sched_getaffinity(0, sizeof(old), &old), 0);
		CPU_ZERO(&one);
		for (at = 0; !CPU_ISSET(at, &old); at++)
			;
		CPU_SET(at, &one);
		ck_assert_int_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	}
	x = unpkg_xzpar_start(fd, off, size);
	if (_i == NT_ONE_CPU)
		ck_assert_int_eq(sched_setaffinity(0, sizeof(old), &old), 0);
	ck_assert_msg(x == NULL, "%s: taken", nt_names[_i]);
	close(fd);
	free(s.p);
	free(data);
}
END_TEST

/* --- damage -------------------------------------------------------------- */

/* 16 bytes inverted in the middle of the compressed data of block
 * damage_at[i] of 6. */
static const size_t damage_at[] = { 0, 1, 3, 5 };

START_TEST(test_damaged_block)
{
	size_t k = damage_at[_i];
	size_t len = 2 * MiB + 512 * KiB + 3;
	unsigned char *data = make_data(len, 40);
	struct buf s = encode_mt(data, len, 512 * KiB, LZMA_CHECK_CRC64);
	struct archive *a = archive_read_new();
	struct unpkg_xzpar *x;
	const void *p;
	struct blk *b;
	struct got g;
	int fd;

	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(blocks_of(&s, &b), 6);
	flip(&s, b[k].start + b[k].hdr + (b[k].total - b[k].hdr) / 2 - 8, 16);
	x = start_on(&s, &fd);
	ck_assert_ptr_nonnull(x);
	got_init(&g, len);
	read_all(x, a, &g);
	ck_assert_msg(g.end == -1, "damaged block %zu: end %jd after %zu bytes",
		      k, (intmax_t)g.end, g.len);
	/* Every byte of the blocks before it, exactly; of it, no more than
	 * it holds. */
	assert_prefix(&g, data, b[k].ustart);
	ck_assert_uint_le(g.len, b[k].ustart + b[k].usize);
	assert_block_msg(g.msg, k);
	ck_assert_str_eq(unpkg_xzpar_error(x), g.msg);
	ck_assert_int_eq(g.errnum, EIO);
	ck_assert_int_eq(unpkg_xzpar_errno(x), 0);
	ck_assert(unpkg_xzpar_delivered(x));
	/* The failure sticks: a reader that asks again gets no end of
	 * stream. */
	ck_assert_int_eq(unpkg_xzpar_read(a, x, &p), -1);
	ck_assert_int_eq(unpkg_xzpar_finish(x, UINT64_MAX), -1);
	assert_block_msg(unpkg_xzpar_error(x), k);
	unpkg_xzpar_free(x);
	archive_read_free(a);
	close(fd);
	free(g.buf);
	free(b);
	free(s.p);
	free(data);
}
END_TEST

/* Block 1's header damaged: its CRC32 (a flag byte inverted), or its
 * first byte zero (where the index's end would be). */
START_TEST(test_damaged_block_header)
{
	size_t len = 2 * MiB + 5;
	unsigned char *data = make_data(len, 41);
	struct buf s = encode_mt(data, len, 512 * KiB, LZMA_CHECK_CRC64);
	struct archive *a = archive_read_new();
	struct unpkg_xzpar *x;
	struct blk *b;
	struct got g;
	int fd;

	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(blocks_of(&s, &b), 5);
	if (_i == 0)
		flip(&s, b[1].start + 1, 1);
	else
		s.p[b[1].start] = 0;
	x = start_on(&s, &fd);
	ck_assert_ptr_nonnull(x);
	got_init(&g, len);
	read_all(x, a, &g);
	ck_assert_int_eq(g.end, -1);
	/* Nothing of the block came out. */
	ck_assert_uint_eq(g.len, b[1].ustart);
	assert_prefix(&g, data, b[1].ustart);
	assert_block_msg(g.msg, 1);
	ck_assert_msg(strstr(g.msg, "header") != NULL,
		      "\"%s\" does not say the header is at fault", g.msg);
	ck_assert_int_eq(unpkg_xzpar_errno(x), 0);
	ck_assert(unpkg_xzpar_delivered(x));
	unpkg_xzpar_free(x);
	archive_read_free(a);
	close(fd);
	free(g.buf);
	free(b);
	free(s.p);
	free(data);
}
END_TEST

/* The index disagrees with block 1 (and, to keep the totals, with block 2)
 * while its CRC32 is right: the block's decoder must find out. */
static const struct {
	bool header_sizes;
	struct lie lie;
} lies[] = {
	{ false, { 1, -1, 0 } },
	{ false, { 1, +1, 0 } },
	{ true, { 1, -1, 0 } },
	{ true, { 1, +1, 0 } },
	{ false, { 1, 0, +4 } },
	{ false, { 1, 0, -4 } },
	{ true, { 1, 0, +4 } },
	{ true, { 1, 0, -4 } },
};

START_TEST(test_index_lies)
{
	static const size_t sizes[] = {
		300 * 1024, 400 * 1024, 350 * 1024, 200 * 1024,
	};
	size_t len = 1250 * KiB;
	unsigned char *data = make_data(len, 42);
	struct buf s = encode_hand(data, sizes, 4, LZMA_CHECK_CRC64,
				   lies[_i].header_sizes, &lies[_i].lie);
	struct archive *a = archive_read_new();
	struct unpkg_xzpar *x;
	struct got g;
	int fd;

	ck_assert_ptr_nonnull(a);
	x = start_on(&s, &fd);
	ck_assert_ptr_nonnull(x);
	got_init(&g, len + 1);
	read_all(x, a, &g);
	ck_assert_msg(g.end == -1, "index lie %d: end %jd after %zu bytes",
		      _i, (intmax_t)g.end, g.len);
	assert_prefix(&g, data, sizes[0]);
	ck_assert_uint_le(g.len, sizes[0] + sizes[1]);
	assert_block_msg(g.msg, 1);
	ck_assert_int_eq(unpkg_xzpar_errno(x), 0);
	unpkg_xzpar_free(x);
	archive_read_free(a);
	close(fd);
	free(g.buf);
	free(s.p);
	free(data);
}
END_TEST

/* The file loses its end while the decoder runs: pread() finds nothing
 * in the middle of block `k`.  The blocks before it hold more than the
 * pool, and the reader has read nothing yet, so no worker can have read
 * block k's data before the truncation. */
START_TEST(test_read_error)
{
	size_t k = POOL / MiB + 4, len = (k + 3) * MiB;
	unsigned char *data = make_data(len, 50);
	struct buf s = encode_mt(data, len, MiB, LZMA_CHECK_CRC64);
	struct archive *a = archive_read_new();
	struct unpkg_xzpar *x;
	struct blk *b;
	struct got g;
	int fd;

	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(blocks_of(&s, &b), k + 3);
	x = start_on(&s, &fd);
	ck_assert_ptr_nonnull(x);
	ck_assert_int_eq(ftruncate(fd, (off_t)(JUNK_BEFORE + b[k].start +
					       b[k].total / 2)), 0);
	got_init(&g, len);
	if (_i == 0) {
		read_all(x, a, &g);
		ck_assert_int_eq(g.end, -1);
		/* The blocks before k whole, then what there was of block k
		 * (decoded right). */
		ck_assert_uint_ge(g.len, b[k].ustart);
		ck_assert_uint_lt(g.len, b[k + 1].ustart);
		assert_prefix(&g, data, g.len);
		ck_assert_int_eq(g.errnum, EIO);
		ck_assert_str_eq(unpkg_xzpar_error(x), g.msg);
		ck_assert(unpkg_xzpar_delivered(x));
	} else {
		read_upto(x, a, &g, 1);
		ck_assert_int_eq(unpkg_xzpar_finish(x, UINT64_MAX), -1);
		ck_assert(!unpkg_xzpar_delivered(x));
	}
	assert_block_msg(unpkg_xzpar_error(x), k);
	ck_assert_int_eq(unpkg_xzpar_errno(x), EIO);
	unpkg_xzpar_free(x);
	archive_read_free(a);
	close(fd);
	free(g.buf);
	free(b);
	free(s.p);
	free(data);
}
END_TEST

/* --- unpkg_xzpar_finish() ------------------------------------------------ */

enum {
	F_LARGE, F_NOTHING_READ, F_SMALL, F_EXACT, F_EXACT_LESS, F_AT_END,
	F_DAMAGED, F_DAMAGED_SMALL, F_COUNT
};

START_TEST(test_finish)
{
	size_t len = 3 * MiB;
	unsigned char *data = make_data(len, 60);
	struct buf s = encode_mt(data, len, 512 * KiB, LZMA_CHECK_CRC64);
	struct archive *a = archive_read_new();
	struct unpkg_xzpar *x;
	struct blk *b;
	struct got g;
	bool damaged = _i == F_DAMAGED || _i == F_DAMAGED_SMALL;
	int r, want;
	uint64_t max;
	int fd;

	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(blocks_of(&s, &b), 6);
	if (damaged)
		flip(&s, b[3].start + b[3].hdr + 100, 16);
	x = start_on(&s, &fd);
	ck_assert_ptr_nonnull(x);
	got_init(&g, len);
	if (_i == F_AT_END)
		read_all(x, a, &g);
	else if (_i != F_NOTHING_READ)
		read_upto(x, a, &g, 1);
	ck_assert(_i == F_AT_END || g.len < MiB);
	assert_prefix(&g, data, g.len);
	switch (_i) {
	case F_LARGE:
		max = UINT64_MAX, want = 0;
		break;
	case F_NOTHING_READ:
		max = 0, want = 1;
		break;
	case F_SMALL:
		max = MiB, want = 1;
		break;
	case F_EXACT:
		/* "More than max bytes remained": exactly max is clean. */
		max = len - g.len, want = 0;
		break;
	case F_EXACT_LESS:
		max = len - g.len - 1, want = 1;
		break;
	case F_AT_END:
		ck_assert_int_eq(g.end, 0);
		max = 0, want = 0;
		break;
	case F_DAMAGED:
		max = UINT64_MAX, want = -1;
		break;
	default:
		/* It stops before it gets to the damage. */
		max = MiB, want = 1;
		break;
	}
	r = unpkg_xzpar_finish(x, max);
	ck_assert_int_eq(r, want);
	if (want == -1) {
		assert_block_msg(unpkg_xzpar_error(x), 3);
		ck_assert_int_eq(unpkg_xzpar_errno(x), 0);
	} else {
		ck_assert_ptr_null(unpkg_xzpar_error(x));
	}
	ck_assert(!unpkg_xzpar_delivered(x));
	/* Idempotent, and what free does again. */
	unpkg_xzpar_stop(x);
	unpkg_xzpar_free(x);
	archive_read_free(a);
	close(fd);
	free(g.buf);
	free(b);
	free(s.p);
	free(data);
}
END_TEST

/* --- stopping early ------------------------------------------------------ */

/* With workers waiting on a full pool (or still starting): free at once;
 * free after a pause, nothing read; stop twice after reading a chunk, then
 * free; finish with max 0 after reading a chunk.  A hang is a failure (the
 * test's timeout); a leak is one under LeakSanitizer. */
START_TEST(test_stop_early)
{
	const struct big *b = _i < 4 ? big_blocks() : pool_blocks();
	struct archive *a = archive_read_new();
	struct unpkg_xzpar *x;
	struct got g;
	int fd;

	ck_assert_ptr_nonnull(a);
	x = start_on(&b->s, &fd);
	ck_assert_ptr_nonnull(x);
	got_init(&g, b->len);
	switch (_i % 4) {
	case 0:
		break;
	case 1:
		sleep_ms(300);
		break;
	case 2:
		read_upto(x, a, &g, 1);
		sleep_ms(300);
		unpkg_xzpar_stop(x);
		unpkg_xzpar_stop(x);
		break;
	case 3:
		read_upto(x, a, &g, 1);
		sleep_ms(300);
		ck_assert_int_eq(unpkg_xzpar_finish(x, 0), 1);
		break;
	}
	assert_prefix(&g, b->data, g.len);
	unpkg_xzpar_free(x);
	unpkg_xzpar_free(NULL);
	archive_read_free(a);
	close(fd);
	free(g.buf);
}
END_TEST

/* --- threads and signals ------------------------------------------------- */

static size_t list_tasks(pid_t *tids, size_t max)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	size_t n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' && n < max)
			tids[n++] = (pid_t)atoi(e->d_name);
	closedir(d);
	return n;
}

static unsigned long long blocked_of(pid_t tid)
{
	char path[64], line[256];
	unsigned long long mask = 0;
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "SigBlk:", 7) == 0)
			found = sscanf(line + 7, "%llx", &mask) == 1;
	fclose(f);
	ck_assert(found);
	return mask;
}

/* Signals are the caller's: the workers block them, and the caller's own
 * mask is as it was. */
START_TEST(test_workers_block_signals)
{
	static const int sigs[] = {
		SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM, SIGTERM, SIGCHLD,
		SIGUSR1, SIGUSR2, SIGWINCH,
	};
	const struct big *b = big_blocks();
	pid_t before[64], after[64];
	size_t nb, na, i, j, k, fresh = 0;
	sigset_t mask, now;
	struct unpkg_xzpar *x;
	int fd;

	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR2);
	ck_assert_int_eq(pthread_sigmask(SIG_SETMASK, &mask, NULL), 0);
	nb = list_tasks(before, 64);
	x = start_on(&b->s, &fd);
	ck_assert_ptr_nonnull(x);
	/* Nothing is read: the workers fill the pool and wait. */
	sleep_ms(100);
	na = list_tasks(after, 64);
	for (i = 0; i < na; i++) {
		unsigned long long m;

		for (j = 0; j < nb && before[j] != after[i]; j++)
			;
		if (j < nb)
			continue;
		fresh++;
		m = blocked_of(after[i]);
		for (k = 0; k < sizeof(sigs) / sizeof(sigs[0]); k++)
			ck_assert_msg(m & (1ull << (sigs[k] - 1)),
				      "a worker does not block signal %d (SigBlk %llx)",
				      sigs[k], m);
	}
	ck_assert_uint_ge(fresh, 1);
	ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, NULL, &now), 0);
	for (k = 0; k < sizeof(sigs) / sizeof(sigs[0]); k++)
		ck_assert_int_eq(sigismember(&now, sigs[k]),
				 sigs[k] == SIGUSR2);
	unpkg_xzpar_free(x);
	sigemptyset(&mask);
	ck_assert_int_eq(pthread_sigmask(SIG_SETMASK, &mask, NULL), 0);
	close(fd);
}
END_TEST

/* The error reaches a libarchive reader: archive_read_data() fails with
 * the block's message. */
START_TEST(test_damage_through_libarchive)
{
	size_t len = 2 * MiB;
	unsigned char *data = make_data(len, 70), *got = malloc(len);
	struct buf s = encode_mt(data, len, 512 * KiB, LZMA_CHECK_SHA256);
	struct archive *r = archive_read_new();
	struct archive_entry *ae;
	struct unpkg_xzpar *x;
	struct blk *b;
	size_t have = 0, n;
	const void *p;
	la_int64_t at;
	int k, fd;

	ck_assert_ptr_nonnull(got);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(blocks_of(&s, &b), 4);
	flip(&s, b[2].start + b[2].hdr + 1000, 8);
	x = start_on(&s, &fd);
	ck_assert_ptr_nonnull(x);
	ck_assert_int_eq(archive_read_support_format_raw(r), ARCHIVE_OK);
	ck_assert_int_eq(archive_read_open(r, x, NULL, unpkg_xzpar_read, NULL),
			 ARCHIVE_OK);
	ck_assert_int_eq(archive_read_next_header(r, &ae), ARCHIVE_OK);
	/* Block by block: archive_read_data() would drop what it copied in
	 * the call that fails. */
	while ((k = archive_read_data_block(r, &p, &n, &at)) == ARCHIVE_OK) {
		ck_assert_int_eq(at, (la_int64_t)have);
		ck_assert_uint_le(n, len - have);
		memcpy(got + have, p, n);
		have += n;
	}
	ck_assert_int_eq(k, ARCHIVE_FATAL);
	ck_assert_uint_ge(have, b[2].ustart);
	ck_assert(memcmp(got, data, b[2].ustart) == 0);
	assert_block_msg(archive_error_string(r), 2);
	ck_assert_int_eq(archive_errno(r), EIO);
	ck_assert(unpkg_xzpar_delivered(x));
	archive_read_free(r);
	unpkg_xzpar_free(x);
	close(fd);
	free(b);
	free(s.p);
	free(got);
	free(data);
}
END_TEST

static void make_big(void)
{
	big_blocks();
	pool_blocks();
}

static bool two_cpus(void)
{
	cpu_set_t set;

	return sched_getaffinity(0, sizeof(set), &set) == 0 &&
	       CPU_COUNT(&set) >= 2;
}

int main(void)
{
	Suite *s = suite_create("xzpar");
	TCase *tc = tcase_create("xzpar");
	TCase *big = tcase_create("big");

	/* unpkg_xzpar_start() never starts on one CPU. */
	if (!two_cpus())
		tu_skip("fewer than two CPUs to run on: the threaded xz "
			"decoder is not used here");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_two_blocks);
	tcase_add_test(tc, test_many_small_blocks);
	tcase_add_loop_test(tc, test_checks, 0,
			    (int)(sizeof(checks) / sizeof(checks[0])));
	tcase_add_loop_test(tc, test_hand_made_blocks, 0, 2);
	tcase_add_test(tc, test_tar_through_libarchive);
	tcase_add_loop_test(tc, test_not_taken, 0, NT_COUNT);
	tcase_add_loop_test(tc, test_damaged_block, 0,
			    (int)(sizeof(damage_at) / sizeof(damage_at[0])));
	tcase_add_loop_test(tc, test_damaged_block_header, 0, 2);
	tcase_add_loop_test(tc, test_index_lies, 0,
			    (int)(sizeof(lies) / sizeof(lies[0])));
	tcase_add_loop_test(tc, test_read_error, 0, 2);
	tcase_add_loop_test(tc, test_finish, 0, F_COUNT);
	tcase_add_test(tc, test_damage_through_libarchive);
	suite_add_tcase(s, tc);

	/* An unchecked fixture runs once, before the tests fork. */
	tcase_add_unchecked_fixture(big, make_big, NULL);
	tcase_add_checked_fixture(big, setup, teardown);
	tcase_set_timeout(big, 120);
	tcase_add_loop_test(big, test_big_streams, 0, 3);
	tcase_add_loop_test(big, test_stop_early, 0, 8);
	tcase_add_test(big, test_workers_block_signals);
	suite_add_tcase(s, big);
	return tu_run_suite(s);
}
