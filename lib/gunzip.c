/* gunzip.c - gzip decompression between two libarchive read callbacks,
 * with the CRC-32 and length of every member checked (gunzip.h).
 *
 * zlib's inflate in gzip mode (window bits 16 + 15) parses a member's
 * header, inflates its data and compares the trailer with the CRC-32 and
 * length of what came out, ending with Z_STREAM_END only if both agree.
 * After a member the next two bytes decide: gzip's magic starts another
 * member (the two bytes, held back, are fed to inflate first), anything
 * else ends the stream.
 */
#include "config.h"

#define ZLIB_CONST
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "gunzip.h"

/* Decompressed bytes handed out at a time. */
#define OUT_SIZE (64u * 1024)

enum phase {
	IN_MEMBER,	/* inflating a member (or its header) */
	BETWEEN,	/* a member ended: another, or the end? */
	DONE,
	FAILED,
};

struct unpkg_gunzip {
	archive_read_callback *src;
	void *client;
	z_stream z;
	enum phase phase;
	bool src_eof;
	/* The first bytes after a member, held back until two are known. */
	unsigned char magic[2];
	unsigned nmagic;
	/* The input after them, while inflate reads them. */
	const unsigned char *rest;
	size_t rest_len;
	/* A failure, repeated to a reader that asks again. */
	int errnum;
	char msg[256];
	unsigned char out[OUT_SIZE];
};

struct unpkg_gunzip *unpkg_gunzip_new(archive_read_callback *src,
				      void *client)
{
	struct unpkg_gunzip *g = calloc(1, sizeof(*g));

	if (g == NULL)
		return NULL;
	if (inflateInit2(&g->z, 16 + MAX_WBITS) != Z_OK) {
		free(g);
		return NULL;
	}
	g->src = src;
	g->client = client;
	return g;
}

void unpkg_gunzip_reset(struct unpkg_gunzip *g, archive_read_callback *src,
			void *client)
{
	/* Fails only for a stream zlib does not know. */
	(void)inflateReset(&g->z);
	g->z.next_in = NULL;
	g->z.avail_in = 0;
	g->src = src;
	g->client = client;
	g->phase = IN_MEMBER;
	g->src_eof = false;
	g->nmagic = 0;
	g->rest = NULL;
	g->rest_len = 0;
	g->errnum = 0;
	g->msg[0] = '\0';
}

static void fail(struct unpkg_gunzip *g, int errnum, const char *what,
		 const char *detail)
{
	g->phase = FAILED;
	g->errnum = errnum;
	if (detail != NULL)
		snprintf(g->msg, sizeof(g->msg), "%s (%s)", what, detail);
	else
		snprintf(g->msg, sizeof(g->msg), "%s", what);
}

/* Make input available to inflate: 1 if there is some, 0 at the end of
 * the input, -1 if `src` failed (the failure is recorded). */
static int fill(struct unpkg_gunzip *g, struct archive *a)
{
	const void *p = NULL;
	la_ssize_t n;

	if (g->z.avail_in > 0)
		return 1;
	if (g->rest_len > 0) {
		g->z.next_in = g->rest;
		g->z.avail_in = (uInt)g->rest_len;
		g->rest_len = 0;
		return 1;
	}
	if (g->src_eof)
		return 0;
	n = g->src(a, g->client, &p);
	if (n < 0) {
		const char *m = archive_error_string(a);

		fail(g, archive_errno(a), m != NULL ? m : "read error", NULL);
		return -1;
	}
	if (n == 0) {
		g->src_eof = true;
		return 0;
	}
	/* The callbacks this serves hand out at most 64 KiB at a time. */
	g->z.next_in = p;
	g->z.avail_in = (uInt)n;
	return 1;
}

/* Between members, with input: hold back bytes until two are known, then
 * start the next member if they are gzip's magic; else the stream ends. */
static void next_member(struct unpkg_gunzip *g)
{
	while (g->nmagic < 2 && g->z.avail_in > 0) {
		g->magic[g->nmagic++] = *g->z.next_in++;
		g->z.avail_in--;
	}
	if (g->nmagic < 2)
		return;
	if (g->magic[0] != 0x1f || g->magic[1] != 0x8b) {
		g->phase = DONE;
		return;
	}
	(void)inflateReset(&g->z);
	g->rest = g->z.next_in;
	g->rest_len = g->z.avail_in;
	g->z.next_in = g->magic;
	g->z.avail_in = 2;
	g->nmagic = 0;
	g->phase = IN_MEMBER;
}

la_ssize_t unpkg_gunzip_read(struct archive *a, void *client,
			     const void **buf)
{
	struct unpkg_gunzip *g = client;
	size_t produced;
	int r;

	g->z.next_out = g->out;
	g->z.avail_out = OUT_SIZE;
	while (g->z.avail_out > 0 &&
	       (g->phase == IN_MEMBER || g->phase == BETWEEN)) {
		r = fill(g, a);
		if (r < 0)
			break;
		if (g->phase == BETWEEN) {
			if (r == 0)
				g->phase = DONE;
			else
				next_member(g);
			continue;
		}
		if (r == 0) {
			fail(g, EIO, "truncated gzip input", NULL);
			break;
		}
		/* With input and room, inflate always makes progress. */
		r = inflate(&g->z, Z_NO_FLUSH);
		if (r == Z_STREAM_END)
			g->phase = BETWEEN;
		else if (r == Z_DATA_ERROR)
			fail(g, EIO, "corrupt gzip data", g->z.msg);
		else if (r == Z_MEM_ERROR)
			fail(g, ENOMEM, "out of memory", NULL);
		else if (r != Z_OK)
			fail(g, EIO, "gzip decompression failed", g->z.msg);
	}
	/* What came out before a failure first; the failure next time. */
	produced = OUT_SIZE - g->z.avail_out;
	*buf = g->out;
	if (produced > 0)
		return (la_ssize_t)produced;
	if (g->phase == FAILED) {
		archive_set_error(a, g->errnum, "%s", g->msg);
		return -1;
	}
	return 0;
}

int unpkg_gunzip_finish(struct unpkg_gunzip *g, struct archive *a,
			uint64_t max)
{
	uint64_t dropped = 0;
	const void *p;
	la_ssize_t n;

	while ((n = unpkg_gunzip_read(a, g, &p)) > 0) {
		dropped += (uint64_t)n;
		if (dropped > max)
			return 1;
	}
	return n < 0 ? -1 : 0;
}

void unpkg_gunzip_free(struct unpkg_gunzip *g)
{
	if (g == NULL)
		return;
	inflateEnd(&g->z);
	free(g);
}
