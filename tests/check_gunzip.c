/* check_gunzip.c - unit tests of the gzip decompressor that checks every
 * member's trailer (gunzip.h).
 *
 * The gzip streams are made here with zlib: members of compressed data,
 * of stored blocks (whose bytes only the CRC-32 protects) and of both,
 * concatenated, damaged or cut at chosen places.  A test source callback
 * hands a stream out in chunks of a chosen size, each in an allocation of
 * its own freed at the next call, so that a chunk used after its time is
 * caught by the sanitizers; unpkg_gunzip_read() is called directly or by a
 * libarchive tar reader.
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ZLIB_CONST
#include <zlib.h>

#include "gunzip.h"
#include "testutil.h"

#define KiB ((size_t)1024)

/* The most unpkg_gunzip_read() hands out at a time (64 KiB, as libarchive
 * readers are used to). */
#define MAX_BLOCK (64 * KiB)

/* What the test source reports when told to fail. */
#define SRC_ERRNO 4242
#define SRC_MSG "test source: read failed"

/* --- growing buffers ----------------------------------------------------- */

struct buf {
	unsigned char *p;
	size_t len, cap;
};

static void buf_add(struct buf *b, const void *p, size_t n)
{
	if (b->cap - b->len < n) {
		size_t cap = b->cap > 0 ? b->cap : 4 * KiB;

		while (cap - b->len < n)
			cap *= 2;
		b->p = realloc(b->p, cap);
		ck_assert_ptr_nonnull(b->p);
		b->cap = cap;
	}
	if (n > 0)
		memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void buf_free(struct buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* --- test data ----------------------------------------------------------- */

/* Text deflate compresses well, a function of `seed`. */
static unsigned char *text_bytes(size_t len, unsigned seed)
{
	unsigned char *p = malloc(len > 0 ? len : 1);
	size_t i = 0;
	unsigned line = seed * 1000;

	ck_assert_ptr_nonnull(p);
	while (i < len) {
		char l[64];
		int n = snprintf(l, sizeof(l), "line %u of the text, seed %u\n",
				 line++, seed);
		size_t k;

		for (k = 0; k < (size_t)n && i < len; k++)
			p[i++] = (unsigned char)l[k];
	}
	return p;
}

/* Bytes deflate cannot compress, a function of `seed`. */
static unsigned char *random_bytes(size_t len, uint32_t seed)
{
	unsigned char *p = malloc(len > 0 ? len : 1);
	uint32_t x = seed * 2654435761u | 1;
	size_t i;

	ck_assert_ptr_nonnull(p);
	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (unsigned char)(x >> 24);
	}
	return p;
}

/* --- making gzip members ------------------------------------------------- */

enum how {
	DEFLATED,	/* compressed blocks (level 6) */
	STORED,		/* stored blocks only (level 0) */
	MIXED,		/* the first half stored, the rest compressed */
	NAMED,		/* compressed, with every optional header field */
};

/* Append one gzip member of `data` to `out`, made by zlib as gzip makes
 * it: a 10-byte header (no name; for NAMED an extra field, a name, a
 * comment and the header's CRC follow it), deflate data, CRC-32 and
 * length.  Returns the offset of the member in `out`. */
static size_t add_member(struct buf *out, const unsigned char *data,
			 size_t len, enum how how)
{
	z_stream z;
	size_t start = out->len, bound, half = how == MIXED ? len / 2 : len;
	unsigned char *tmp;
	/* A subfield "AB" of 4 bytes. */
	static unsigned char extra[8] = { 'A', 'B', 4, 0, 'd', 'a', 't', 'a' };
	static char name[] = "data.tar";
	static char comment[] = "a comment";
	gz_header h;

	memset(&z, 0, sizeof(z));
	ck_assert_int_eq(deflateInit2(&z, how == DEFLATED || how == NAMED ? 6
					  : 0, Z_DEFLATED, 16 + MAX_WBITS, 8,
				      Z_DEFAULT_STRATEGY),
			 Z_OK);
	if (how == NAMED) {
		memset(&h, 0, sizeof(h));
		h.time = 1234567890;
		h.os = 3;
		h.extra = extra;
		h.extra_len = sizeof(extra);
		h.name = (Bytef *)name;
		h.comment = (Bytef *)comment;
		h.hcrc = 1;
		ck_assert_int_eq(deflateSetHeader(&z, &h), Z_OK);
	}
	bound = deflateBound(&z, (uLong)len) + 1024;
	tmp = malloc(bound);
	ck_assert_ptr_nonnull(tmp);
	z.next_out = tmp;
	z.avail_out = (uInt)bound;
	z.next_in = data;
	z.avail_in = (uInt)half;
	if (how == MIXED) {
		ck_assert_int_eq(deflate(&z, Z_NO_FLUSH), Z_OK);
		ck_assert_uint_eq(z.avail_in, 0);
		/* Flushes what came so far as stored blocks. */
		ck_assert_int_eq(deflateParams(&z, 9, Z_DEFAULT_STRATEGY),
				 Z_OK);
		z.next_in = data + half;
		z.avail_in = (uInt)(len - half);
	}
	ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
	buf_add(out, tmp, z.total_out);
	ck_assert_int_eq(deflateEnd(&z), Z_OK);
	free(tmp);
	return start;
}

/* The member of `len` bytes at `off` in `b` is made of a single stored
 * block: its data is at off + 15, as is. */
static void assert_one_stored_block(const struct buf *b, size_t off,
				    const unsigned char *data, size_t len)
{
	ck_assert_uint_eq(b->p[off + 10], 0x01);	/* final, stored */
	ck_assert_uint_eq(b->p[off + 11] | b->p[off + 12] << 8, len);
	ck_assert_mem_eq(b->p + off + 15, data, len);
}

/* --- the test source ----------------------------------------------------- */

struct src {
	const unsigned char *p;
	size_t len;
	size_t pos;
	size_t first;		/* the size of the first chunk (0: `chunk`) */
	size_t chunk;		/* the size of the others */
	size_t fail_at;		/* fail once `pos` is here (SIZE_MAX: never) */
	unsigned calls;
	unsigned char *held;	/* the chunk handed out last */
};

static void src_init(struct src *s, const struct buf *b, size_t chunk)
{
	memset(s, 0, sizeof(*s));
	s->p = b->p;
	s->len = b->len;
	s->chunk = chunk;
	s->fail_at = SIZE_MAX;
}

static void src_done(struct src *s)
{
	free(s->held);
	s->held = NULL;
}

static la_ssize_t src_read(struct archive *a, void *client, const void **buf)
{
	struct src *s = client;
	size_t n = s->calls == 0 && s->first > 0 ? s->first : s->chunk;

	s->calls++;
	free(s->held);
	s->held = NULL;
	if (s->pos >= s->fail_at) {
		archive_set_error(a, SRC_ERRNO, "%s", SRC_MSG);
		return -1;
	}
	if (n > s->len - s->pos)
		n = s->len - s->pos;
	if (s->fail_at != SIZE_MAX && n > s->fail_at - s->pos)
		n = s->fail_at - s->pos;
	*buf = NULL;
	if (n == 0)
		return 0;
	s->held = malloc(n);
	ck_assert_ptr_nonnull(s->held);
	memcpy(s->held, s->p + s->pos, n);
	s->pos += n;
	*buf = s->held;
	return (la_ssize_t)n;
}

/* --- reading ------------------------------------------------------------- */

/* Read until the end or a failure, appending what comes to `out`; the
 * last return value. */
static la_ssize_t read_all(struct unpkg_gunzip *g, struct archive *a,
			   struct buf *out)
{
	const void *p;
	la_ssize_t n;

	while ((n = unpkg_gunzip_read(a, g, &p)) > 0) {
		ck_assert_int_le(n, (la_ssize_t)MAX_BLOCK);
		ck_assert_ptr_nonnull(p);
		buf_add(out, p, (size_t)n);
	}
	return n;
}

/* All of `in` read through `chunk`-byte chunks (the first `first` bytes,
 * if not 0) must come out as `want`, then the end, which stays. */
static void expect_clean(const struct buf *in, size_t first, size_t chunk,
			 const unsigned char *want, size_t want_len)
{
	struct archive *a = archive_read_new();
	struct buf out = { 0 };
	struct unpkg_gunzip *g;
	struct src s;
	const void *p;

	ck_assert_ptr_nonnull(a);
	src_init(&s, in, chunk);
	s.first = first;
	g = unpkg_gunzip_new(src_read, &s);
	ck_assert_ptr_nonnull(g);
	ck_assert_msg(read_all(g, a, &out) == 0,
		      "chunk %zu/%zu: failed: %s", first, chunk,
		      archive_error_string(a));
	ck_assert_msg(out.len == want_len, "chunk %zu/%zu: %zu bytes, want %zu",
		      first, chunk, out.len, want_len);
	if (want_len > 0)
		ck_assert_mem_eq(out.p, want, want_len);
	ck_assert_ptr_null(archive_error_string(a));
	ck_assert_int_eq(unpkg_gunzip_read(a, g, &p), 0);
	ck_assert_int_eq(unpkg_gunzip_finish(g, a, 0), 0);
	unpkg_gunzip_free(g);
	src_done(&s);
	archive_read_free(a);
	buf_free(&out);
}

/* Reading `in` (`label`) must deliver between `min_len` and `max_len`
 * bytes, then fail with a message containing `why`, and keep failing.
 * What came out must be the start of `want`; only its first `min_len`
 * bytes if `garbage` (damaged deflate data may decode to anything before
 * zlib notices). */
static void expect_failure(const char *label, const struct buf *in,
			   size_t chunk, const unsigned char *want,
			   size_t min_len, size_t max_len, bool garbage,
			   const char *why)
{
	struct archive *a = archive_read_new();
	struct buf out = { 0 };
	struct unpkg_gunzip *g;
	struct src s;
	const void *p;
	const char *msg;
	char *saved;
	int i;

	ck_assert_ptr_nonnull(a);
	src_init(&s, in, chunk);
	g = unpkg_gunzip_new(src_read, &s);
	ck_assert_ptr_nonnull(g);
	ck_assert_msg(read_all(g, a, &out) == -1, "%s, chunk %zu: accepted",
		      label, chunk);
	msg = archive_error_string(a);
	ck_assert_msg(msg != NULL && strstr(msg, why) != NULL,
		      "%s, chunk %zu: message '%s' lacks '%s'", label, chunk,
		      msg != NULL ? msg : "(none)", why);
	ck_assert_msg(out.len >= min_len && out.len <= max_len,
		      "%s, chunk %zu: %zu bytes out, want %zu..%zu", label,
		      chunk, out.len, min_len, max_len);
	if (garbage && min_len > 0)
		ck_assert_mem_eq(out.p, want, min_len);
	else if (!garbage && out.len > 0)
		ck_assert_mem_eq(out.p, want, out.len);
	saved = strdup(msg);
	ck_assert_ptr_nonnull(saved);
	/* It sticks, with its message, even after someone cleared it. */
	for (i = 0; i < 2; i++) {
		archive_clear_error(a);
		ck_assert_int_eq(unpkg_gunzip_read(a, g, &p), -1);
		ck_assert_ptr_nonnull(archive_error_string(a));
		ck_assert_str_eq(archive_error_string(a), saved);
	}
	ck_assert_int_eq(unpkg_gunzip_finish(g, a, UINT64_MAX), -1);
	ck_assert_str_eq(archive_error_string(a), saved);
	free(saved);
	unpkg_gunzip_free(g);
	src_done(&s);
	archive_read_free(a);
	buf_free(&out);
}

static const size_t chunks[] = { 1, 7, 64 * KiB };
#define NCHUNKS (sizeof(chunks) / sizeof(chunks[0]))

/* --- good streams -------------------------------------------------------- */

/* A stream of members and what it decompresses to. */
struct stream {
	struct buf gz, plain;
	size_t off[8];		/* where each member starts */
	size_t n;
};

static void stream_add(struct stream *st, const unsigned char *data,
		       size_t len, enum how how)
{
	ck_assert_uint_lt(st->n, 8);
	st->off[st->n++] = add_member(&st->gz, data, len, how);
	buf_add(&st->plain, data, len);
}

static void stream_free(struct stream *st)
{
	buf_free(&st->gz);
	buf_free(&st->plain);
}

/* 0: one deflated member; 1: one stored member; 2: five members, an empty
 * one among them, of every kind. */
static void make_stream(struct stream *st, int which)
{
	unsigned char *t1 = text_bytes(200 * KiB, 1);
	unsigned char *r1 = random_bytes(100 * KiB, 2);
	unsigned char *t2 = text_bytes(150 * KiB, 3);

	memset(st, 0, sizeof(*st));
	switch (which) {
	case 0:
		stream_add(st, t1, 200 * KiB, DEFLATED);
		break;
	case 1:
		stream_add(st, r1, 3000, STORED);
		assert_one_stored_block(&st->gz, 0, r1, 3000);
		break;
	default:
		stream_add(st, t1, 50 * KiB, DEFLATED);
		stream_add(st, t1, 0, DEFLATED);
		stream_add(st, r1, 100 * KiB, STORED);
		stream_add(st, t2, 150 * KiB, MIXED);
		stream_add(st, t2 + 77, 1, DEFLATED);
		stream_add(st, t1 + 5, 10 * KiB, NAMED);
		break;
	}
	free(t1);
	free(r1);
	free(t2);
}

START_TEST(test_members)
{
	struct stream st;
	int which = _i / (int)NCHUNKS;
	size_t chunk = chunks[_i % (int)NCHUNKS];

	make_stream(&st, which);
	expect_clean(&st.gz, 0, chunk, st.plain.p, st.plain.len);
	stream_free(&st);
}
END_TEST

/* Chunks that end between members, in a trailer, and between the two
 * magic bytes of the next member. */
START_TEST(test_split_between_members)
{
	static const int at[] = { -8, -4, -1, 0, 1, 2, 3, 10 };
	struct stream st;
	size_t m, k;

	make_stream(&st, 2);
	for (m = 1; m < st.n; m++)
		for (k = 0; k < sizeof(at) / sizeof(at[0]); k++)
			expect_clean(&st.gz, (size_t)((ptrdiff_t)st.off[m] + at[k]),
				     64 * KiB, st.plain.p, st.plain.len);
	stream_free(&st);
}
END_TEST

/* What follows the last member and does not start with the magic bytes
 * is ignored, as gzip ignores it. */
START_TEST(test_trailing_garbage)
{
	static const struct {
		const char *bytes;
		size_t len;
	} tails[] = {
		{ "garbage after the member\n", 25 },
		{ "\x1f", 1 },
		{ "\x1f\x00", 2 },
		{ "\x8b\x1f", 2 },
		{ "x", 1 },
	};
	unsigned char zeros[4096] = { 0 };
	unsigned char *t = text_bytes(30 * KiB, 4);
	size_t i, c;

	for (i = 0; i <= sizeof(tails) / sizeof(tails[0]); i++) {
		struct buf gz = { 0 };

		add_member(&gz, t, 30 * KiB, DEFLATED);
		if (i < sizeof(tails) / sizeof(tails[0]))
			buf_add(&gz, tails[i].bytes, tails[i].len);
		else
			buf_add(&gz, zeros, sizeof(zeros));
		for (c = 0; c < NCHUNKS; c++)
			expect_clean(&gz, 0, chunks[c], t, 30 * KiB);
		buf_free(&gz);
	}
	free(t);
}
END_TEST

/* --- damaged streams ----------------------------------------------------- */

enum damage {
	D_CRC_FIRST,	/* the first byte of the CRC-32 */
	D_CRC_LAST,	/* its last byte */
	D_ISIZE_FIRST,	/* the first byte of the length */
	D_ISIZE_LAST,	/* its last byte */
	D_STORED,	/* a byte in a stored block: only the CRC sees it */
	D_STORED_MIXED,	/* the same, in a member of both kinds of block */
	D_BLOCK_TYPE,	/* the first deflate block made of the reserved type */
	D_DEFLATE,	/* bytes in the middle of deflated data */
	D_METHOD,	/* the header's compression method */
	D_FLAGS,	/* the header's reserved flags */
	D_NAME,		/* the name in the header, which its CRC covers */
	D_CUT_DATA,	/* cut in the middle of a stored block */
	D_CUT_DEFLATE,	/* cut in the middle of deflated data */
	D_CUT_TRAILER,	/* cut in the trailer */
	D_CUT_HEADER,	/* cut in the header */
	D_MAGIC_ONLY,	/* cut after the magic bytes */
	D_COUNT
};

static const char *const damage_name[D_COUNT] = {
	"crc-first", "crc-last", "isize-first", "isize-last", "stored",
	"stored-mixed", "block-type", "deflate", "method", "flags", "name",
	"cut-data", "cut-deflate", "cut-trailer", "cut-header", "magic-only",
};

/* A good member, then a member damaged as told; each case with and
 * without the good member before it, through every chunk size.  What the
 * damaged member decompressed to before the damage must come out. */
START_TEST(test_damage)
{
	/* Where the trailer is hit, from the end of the member. */
	static const size_t trailer_at[] = { 8, 5, 4, 1 };
	enum damage d = (enum damage)(_i / 2);
	bool lead = _i % 2 != 0;
	unsigned char *first = text_bytes(20 * KiB, 5);
	unsigned char *t = text_bytes(40 * KiB, 6);
	unsigned char *r = random_bytes(5000, 7);
	struct buf gz = { 0 }, want = { 0 };
	const unsigned char *data = t;
	size_t len = 40 * KiB, off, mlen, c, min, max;
	const char *why = "corrupt";
	bool garbage = false;
	char label[64];

	if (lead) {
		add_member(&gz, first, 20 * KiB, DEFLATED);
		buf_add(&want, first, 20 * KiB);
	}
	switch (d) {
	case D_STORED:
	case D_CUT_DATA:
		data = r;
		len = 5000;
		off = add_member(&gz, r, len, STORED);
		assert_one_stored_block(&gz, off, r, len);
		break;
	case D_STORED_MIXED:
		/* Random bytes stored, then text that does not refer back
		 * to them (a damaged byte it copied would come out twice). */
		memcpy(t, r, 5000);
		off = add_member(&gz, t, len, MIXED);
		/* The stored half comes first, in a block of its own. */
		ck_assert_uint_eq(gz.p[off + 10] & 7, 0);
		ck_assert_mem_eq(gz.p + off + 15, t, 100);
		break;
	case D_NAME:
		off = add_member(&gz, t, len, NAMED);
		/* Flags: extra, name, comment, header CRC. */
		ck_assert_uint_eq(gz.p[off + 3], 0x1e);
		ck_assert_mem_eq(gz.p + off + 10 + 2 + 8, "data.tar", 9);
		break;
	default:
		off = add_member(&gz, t, len, DEFLATED);
		break;
	}
	mlen = gz.len - off;
	min = max = want.len;	/* what comes out before the damage */
	switch (d) {
	case D_CRC_FIRST:
	case D_CRC_LAST:
	case D_ISIZE_FIRST:
	case D_ISIZE_LAST:
		gz.p[off + mlen - trailer_at[d - D_CRC_FIRST]] ^= 0xff;
		/* Noticed after all the data. */
		buf_add(&want, data, len);
		min = max = want.len;
		break;
	case D_STORED:
		gz.p[off + 15 + 2500] ^= 0x01;
		buf_add(&want, data, len);
		want.p[want.len - len + 2500] ^= 0x01;
		min = max = want.len;
		break;
	case D_STORED_MIXED:
		gz.p[off + 15 + 50] ^= 0x20;
		buf_add(&want, data, len);
		want.p[want.len - len + 50] ^= 0x20;
		min = max = want.len;
		break;
	case D_BLOCK_TYPE:
		/* BTYPE 11, which deflate reserves. */
		gz.p[off + 10] |= 0x06;
		break;
	case D_DEFLATE: {
		size_t k;

		for (k = mlen / 2; k < mlen / 2 + 16; k++)
			gz.p[off + k] ^= 0x55;
		max = SIZE_MAX;
		garbage = true;
		break;
	}
	case D_METHOD:
		gz.p[off + 2] = 7;
		break;
	case D_FLAGS:
		gz.p[off + 3] |= 0xe0;
		break;
	case D_NAME:
		gz.p[off + 10 + 2 + 8 + 4] ^= 0x01;
		break;
	case D_CUT_DATA:
		gz.len = off + 15 + 1234;
		buf_add(&want, data, 1234);
		min = max = want.len;
		why = "truncated";
		break;
	case D_CUT_DEFLATE:
		gz.len = off + mlen / 2;
		buf_add(&want, data, len);
		max = want.len - 1;
		why = "truncated";
		break;
	case D_CUT_TRAILER:
		gz.len -= 3;
		buf_add(&want, data, len);
		min = max = want.len;
		why = "truncated";
		break;
	case D_CUT_HEADER:
		gz.len = off + 5;
		why = "truncated";
		break;
	case D_MAGIC_ONLY:
		gz.len = off + 2;
		why = "truncated";
		break;
	default:
		ck_abort();
	}
	snprintf(label, sizeof(label), "%s%s", damage_name[d],
		 lead ? " after a good member" : "");
	for (c = 0; c < NCHUNKS; c++)
		expect_failure(label, &gz, chunks[c], want.p, min, max,
			       garbage, why);
	buf_free(&gz);
	buf_free(&want);
	free(first);
	free(t);
	free(r);
}
END_TEST

/* Not gzip, and nothing. */
START_TEST(test_not_gzip)
{
	static const char text[] = "this is plain text, not a gzip stream\n";
	struct buf b = { 0 };
	unsigned char *t = text_bytes(1000, 8);
	size_t c;

	for (c = 0; c < NCHUNKS; c++) {
		b.len = 0;
		buf_add(&b, text, sizeof(text) - 1);
		expect_failure("text", &b, chunks[c], NULL, 0, 0, false,
			       "corrupt");
		/* A zlib stream is not a gzip stream. */
		{
			uLongf zl = compressBound(1000);
			unsigned char *z = malloc(zl);

			ck_assert_ptr_nonnull(z);
			ck_assert_int_eq(compress(z, &zl, t, 1000), Z_OK);
			b.len = 0;
			buf_add(&b, z, zl);
			free(z);
			expect_failure("zlib", &b, chunks[c], NULL, 0, 0,
				       false, "corrupt");
		}
		/* Magic bytes of its own, and the wrong one. */
		b.len = 0;
		add_member(&b, t, 1000, DEFLATED);
		b.p[1] = 0x8c;
		expect_failure("magic", &b, chunks[c], NULL, 0, 0, false,
			       "corrupt");
		b.len = 0;
		expect_failure("empty", &b, chunks[c], NULL, 0, 0, false,
			       "truncated");
		b.len = 0;
		buf_add(&b, "\x1f", 1);
		expect_failure("one byte", &b, chunks[c], NULL, 0, 0, false,
			       "truncated");
	}
	buf_free(&b);
	free(t);
}
END_TEST

/* A failure of the source is passed on as it reported it: at the start,
 * in a member, right after a member, between the magic bytes of the
 * next, in its header. */
START_TEST(test_source_failure)
{
	struct stream st;
	size_t where[6], i, c;

	make_stream(&st, 2);
	where[0] = 0;
	where[1] = st.off[1] / 2;
	where[2] = st.off[1];
	where[3] = st.off[1] + 1;
	where[4] = st.off[1] + 5;
	where[5] = st.gz.len;
	for (i = 0; i < 6; i++) {
		for (c = 0; c < NCHUNKS; c++) {
			struct archive *a = archive_read_new();
			struct buf out = { 0 };
			struct unpkg_gunzip *g;
			struct src s;
			const void *p;
			size_t max;

			ck_assert_ptr_nonnull(a);
			src_init(&s, &st.gz, chunks[c]);
			s.fail_at = where[i];
			g = unpkg_gunzip_new(src_read, &s);
			ck_assert_ptr_nonnull(g);
			ck_assert_int_eq(read_all(g, a, &out), -1);
			ck_assert_int_eq(archive_errno(a), SRC_ERRNO);
			ck_assert_str_eq(archive_error_string(a), SRC_MSG);
			/* The first member whole once the source got past
			 * it; at most what came before the failure. */
			max = i >= 2 ? 50 * KiB : 0;
			if (i == 1)
				max = 50 * KiB - 1;
			if (i == 5)
				max = st.plain.len;
			ck_assert_uint_le(out.len, max);
			if (i >= 2)
				ck_assert_uint_eq(out.len, max);
			if (out.len > 0)
				ck_assert_mem_eq(out.p, st.plain.p, out.len);
			archive_clear_error(a);
			ck_assert_int_eq(unpkg_gunzip_read(a, g, &p), -1);
			ck_assert_int_eq(archive_errno(a), SRC_ERRNO);
			ck_assert_str_eq(archive_error_string(a), SRC_MSG);
			archive_clear_error(a);
			ck_assert_int_eq(unpkg_gunzip_finish(g, a, UINT64_MAX),
					 -1);
			ck_assert_str_eq(archive_error_string(a), SRC_MSG);
			unpkg_gunzip_free(g);
			src_done(&s);
			archive_read_free(a);
			buf_free(&out);
		}
	}
	stream_free(&st);
}
END_TEST

/* --- unpkg_gunzip_finish() ----------------------------------------------- */

/* Read `nread` blocks of `in`, then finish with `max`: its result. */
static int finish_after(const struct buf *in, size_t chunk, int nread,
			uint64_t max, size_t *got, char **msg)
{
	struct archive *a = archive_read_new();
	struct unpkg_gunzip *g;
	struct src s;
	const void *p;
	int i, r;

	ck_assert_ptr_nonnull(a);
	src_init(&s, in, chunk);
	g = unpkg_gunzip_new(src_read, &s);
	ck_assert_ptr_nonnull(g);
	*got = 0;
	for (i = 0; i < nread; i++) {
		la_ssize_t n = unpkg_gunzip_read(a, g, &p);

		ck_assert_int_gt(n, 0);
		*got += (size_t)n;
	}
	r = unpkg_gunzip_finish(g, a, max);
	*msg = archive_error_string(a) != NULL ?
		strdup(archive_error_string(a)) : NULL;
	if (r == 0) {
		/* At the end, and it stays there. */
		ck_assert_int_eq(unpkg_gunzip_read(a, g, &p), 0);
		ck_assert_int_eq(unpkg_gunzip_finish(g, a, 0), 0);
	} else if (r < 0) {
		ck_assert_int_eq(unpkg_gunzip_read(a, g, &p), -1);
	}
	unpkg_gunzip_free(g);
	src_done(&s);
	archive_read_free(a);
	return r;
}

START_TEST(test_finish)
{
	struct stream st;
	struct buf bad = { 0 };
	size_t got, rest, c;
	char *msg;

	make_stream(&st, 2);
	for (c = 0; c < NCHUNKS; c++) {
		size_t chunk = chunks[c];

		/* Nothing read, one block read, all but the end read. */
		ck_assert_int_eq(finish_after(&st.gz, chunk, 0, UINT64_MAX,
					      &got, &msg), 0);
		ck_assert_ptr_null(msg);
		ck_assert_int_eq(finish_after(&st.gz, chunk, 1, UINT64_MAX,
					      &got, &msg), 0);
		ck_assert_ptr_null(msg);
		ck_assert_uint_gt(got, 0);
		ck_assert_uint_lt(got, st.plain.len);
		/* max: exactly what remains is fine, one byte less not. */
		rest = st.plain.len - got;
		ck_assert_int_eq(finish_after(&st.gz, chunk, 1, rest, &got,
					      &msg), 0);
		ck_assert_ptr_null(msg);
		ck_assert_int_eq(finish_after(&st.gz, chunk, 1, rest - 1,
					      &got, &msg), 1);
		free(msg);
		ck_assert_int_eq(finish_after(&st.gz, chunk, 0, 1000, &got,
					      &msg), 1);
		free(msg);

		/* The last trailer damaged: found after a prefix was read. */
		bad.len = 0;
		buf_add(&bad, st.gz.p, st.gz.len);
		bad.p[bad.len - 6] ^= 0x10;
		ck_assert_int_eq(finish_after(&bad, chunk, 1, UINT64_MAX, &got,
					      &msg), -1);
		ck_assert_ptr_nonnull(msg);
		ck_assert_msg(strstr(msg, "corrupt") != NULL, "%s", msg);
		free(msg);
		/* The length of the last member. */
		bad.p[bad.len - 6] ^= 0x10;
		bad.p[bad.len - 2] ^= 0x01;
		ck_assert_int_eq(finish_after(&bad, chunk, 1, UINT64_MAX, &got,
					      &msg), -1);
		ck_assert_ptr_nonnull(msg);
		ck_assert_msg(strstr(msg, "corrupt") != NULL, "%s", msg);
		free(msg);
		/* But not when stopped before it. */
		ck_assert_int_eq(finish_after(&bad, chunk, 1, 1000, &got,
					      &msg), 1);
		free(msg);
		/* Cut short. */
		bad.p[bad.len - 2] ^= 0x01;
		bad.len -= 1;
		ck_assert_int_eq(finish_after(&bad, chunk, 1, UINT64_MAX, &got,
					      &msg), -1);
		ck_assert_ptr_nonnull(msg);
		ck_assert_msg(strstr(msg, "truncated") != NULL, "%s", msg);
		free(msg);
	}
	buf_free(&bad);
	stream_free(&st);
}
END_TEST

/* --- unpkg_gunzip_reset() ------------------------------------------------ */

START_TEST(test_reset)
{
	struct stream st, one;
	struct buf bad = { 0 }, out = { 0 };
	struct archive *a = archive_read_new();
	struct unpkg_gunzip *g;
	struct src s1, s2, s3;
	const void *p;

	ck_assert_ptr_nonnull(a);
	make_stream(&st, 2);
	make_stream(&one, 1);
	buf_add(&bad, st.gz.p, st.gz.len);
	bad.p[bad.len - 7] ^= 0x04;

	/* A failure first. */
	src_init(&s1, &bad, 7);
	g = unpkg_gunzip_new(src_read, &s1);
	ck_assert_ptr_nonnull(g);
	ck_assert_int_eq(read_all(g, a, &out), -1);
	ck_assert_uint_eq(out.len, st.plain.len);

	/* Then a good stream, whole. */
	archive_clear_error(a);
	src_init(&s2, &st.gz, 64 * KiB);
	unpkg_gunzip_reset(g, src_read, &s2);
	out.len = 0;
	ck_assert_int_eq(read_all(g, a, &out), 0);
	ck_assert_ptr_null(archive_error_string(a));
	ck_assert_uint_eq(out.len, st.plain.len);
	ck_assert_mem_eq(out.p, st.plain.p, out.len);

	/* Left in the middle of a member, for another stream. */
	src_init(&s3, &st.gz, 1000);
	unpkg_gunzip_reset(g, src_read, &s3);
	ck_assert_int_gt(unpkg_gunzip_read(a, g, &p), 0);
	src_done(&s2);
	src_init(&s2, &one.gz, 1);
	unpkg_gunzip_reset(g, src_read, &s2);
	out.len = 0;
	ck_assert_int_eq(read_all(g, a, &out), 0);
	ck_assert_uint_eq(out.len, one.plain.len);
	ck_assert_mem_eq(out.p, one.plain.p, out.len);

	/* Ended by a lone magic byte after a member (which is ignored),
	 * then on a failing stream. */
	src_done(&s3);
	src_init(&s3, &st.gz, 64 * KiB);
	s3.len = st.off[1] + 1;
	unpkg_gunzip_reset(g, src_read, &s3);
	out.len = 0;
	ck_assert_int_eq(read_all(g, a, &out), 0);
	ck_assert_uint_eq(out.len, 50 * KiB);
	src_done(&s1);
	src_init(&s1, &bad, 64 * KiB);
	s1.len = 100;
	unpkg_gunzip_reset(g, src_read, &s1);
	out.len = 0;
	ck_assert_int_eq(read_all(g, a, &out), -1);
	ck_assert_uint_lt(out.len, 50 * KiB);
	ck_assert_msg(strstr(archive_error_string(a), "truncated") != NULL,
		      "%s", archive_error_string(a));
	/* And the finished one again, from the start. */
	src_done(&s3);
	src_init(&s3, &st.gz, 7);
	unpkg_gunzip_reset(g, src_read, &s3);
	archive_clear_error(a);
	out.len = 0;
	ck_assert_int_eq(read_all(g, a, &out), 0);
	ck_assert_uint_eq(out.len, st.plain.len);
	ck_assert_mem_eq(out.p, st.plain.p, out.len);

	unpkg_gunzip_free(g);
	unpkg_gunzip_free(NULL);
	src_done(&s1);
	src_done(&s2);
	src_done(&s3);
	buf_free(&bad);
	buf_free(&out);
	stream_free(&st);
	stream_free(&one);
	archive_read_free(a);
}
END_TEST

/* --- through libarchive -------------------------------------------------- */

#define PAD_SIZE (1024 * KiB)

/* A tar archive followed by incompressible bytes (which a tar reader does
 * not read), gzip'd in two members split inside an entry's content. */
static void make_tar_gz(struct buf *gz, unsigned char **text,
			unsigned char **rnd)
{
	struct tu_entry ents[] = {
		{ .type = 'd', .path = "./" },
		{ .type = 'f', .path = "./text", .size = 100 * KiB },
		{ .type = 'f', .path = "./empty", .data = "" },
		{ .type = 'f', .path = "./random", .size = 70 * KiB },
	};
	unsigned char *pad = random_bytes(PAD_SIZE, 10);
	void *tar;
	size_t tarlen;
	struct buf all = { 0 };

	*text = text_bytes(100 * KiB, 9);
	*rnd = random_bytes(70 * KiB, 11);
	ents[1].data = (const char *)*text;
	ents[3].data = (const char *)*rnd;
	tu_build_tar(ents, 4, "none", &tar, &tarlen);
	buf_add(&all, tar, tarlen);
	buf_add(&all, pad, PAD_SIZE);
	memset(gz, 0, sizeof(*gz));
	add_member(gz, all.p, 60 * KiB, DEFLATED);
	add_member(gz, all.p + 60 * KiB, all.len - 60 * KiB, MIXED);
	free(tar);
	free(pad);
	buf_free(&all);
}

/* Read the tar archive; then finish with `max`: its result. */
static int read_tar(const struct buf *gz, size_t chunk, uint64_t max,
		    const unsigned char *text, const unsigned char *rnd,
		    char **msg)
{
	static const char *const names[] = { "./", "./text", "./empty",
					     "./random" };
	static const size_t sizes[] = { 0, 100 * KiB, 0, 70 * KiB };
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	struct unpkg_gunzip *g;
	struct src s;
	unsigned char *got = malloc(100 * KiB);
	size_t i;
	int r;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(got);
	src_init(&s, gz, chunk);
	g = unpkg_gunzip_new(src_read, &s);
	ck_assert_ptr_nonnull(g);
	ck_assert_int_eq(archive_read_support_format_tar(a), ARCHIVE_OK);
	ck_assert_int_eq(archive_read_support_filter_none(a), ARCHIVE_OK);
	ck_assert_int_eq(archive_read_open(a, g, NULL, unpkg_gunzip_read,
					   NULL), ARCHIVE_OK);
	for (i = 0; i < 4; i++) {
		r = archive_read_next_header(a, &e);
		ck_assert_msg(r == ARCHIVE_OK, "entry %zu: %s", i,
			      archive_error_string(a));
		ck_assert_str_eq(archive_entry_pathname(e), names[i]);
		ck_assert_int_eq(archive_entry_size(e), (int64_t)sizes[i]);
		if (sizes[i] > 0) {
			la_ssize_t n = archive_read_data(a, got, 100 * KiB);

			ck_assert_int_eq(n, (la_ssize_t)sizes[i]);
			ck_assert_mem_eq(got, i == 1 ? text : rnd, sizes[i]);
		}
	}
	ck_assert_int_eq(archive_read_next_header(a, &e), ARCHIVE_EOF);
	/* The tar reader stopped long before the end of the input. */
	ck_assert_uint_lt(s.pos, gz->len / 2);
	r = unpkg_gunzip_finish(g, a, max);
	*msg = archive_error_string(a) != NULL ?
		strdup(archive_error_string(a)) : NULL;
	if (r == 0)
		ck_assert_uint_eq(s.pos, gz->len);
	archive_read_free(a);
	unpkg_gunzip_free(g);
	src_done(&s);
	free(got);
	return r;
}

START_TEST(test_tar_through_libarchive)
{
	unsigned char *text, *rnd;
	struct buf gz;
	size_t c;
	char *msg;

	make_tar_gz(&gz, &text, &rnd);
	for (c = 1; c < NCHUNKS; c++) {
		ck_assert_int_eq(read_tar(&gz, chunks[c], 4 * PAD_SIZE, text,
					  rnd, &msg), 0);
		ck_assert_ptr_null(msg);
		ck_assert_int_eq(read_tar(&gz, chunks[c], 1000, text, rnd,
					  &msg), 1);
		free(msg);
		/* The CRC-32 of the last member, which the tar reader
		 * never reaches. */
		gz.p[gz.len - 8] ^= 0x80;
		ck_assert_int_eq(read_tar(&gz, chunks[c], 4 * PAD_SIZE, text,
					  rnd, &msg), -1);
		ck_assert_ptr_nonnull(msg);
		ck_assert_msg(strstr(msg, "corrupt") != NULL, "%s", msg);
		free(msg);
		gz.p[gz.len - 8] ^= 0x80;
	}
	buf_free(&gz);
	free(text);
	free(rnd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("gunzip");
	TCase *tc = tcase_create("gunzip");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_members, 0, 3 * (int)NCHUNKS);
	tcase_add_test(tc, test_split_between_members);
	tcase_add_test(tc, test_trailing_garbage);
	tcase_add_loop_test(tc, test_damage, 0, 2 * D_COUNT);
	tcase_add_test(tc, test_not_gzip);
	tcase_add_test(tc, test_source_failure);
	tcase_add_test(tc, test_finish);
	tcase_add_test(tc, test_reset);
	tcase_add_test(tc, test_tar_through_libarchive);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
