/* imgfs-log - read the write log of imgfs (format: see imgfs.c).
 *
 *   imgfs-log dump LOG
 *       One line per record: "SEQ TYPE OFFSET LENGTH [datasync]", TYPE one
 *       of W (write), F (flush), D (discard), Z (zero range), E (end);
 *       a first comment line describes the header and a last one sums the
 *       records up.
 *   imgfs-log apply LOG IMAGE [LAST]
 *       Apply the writes, discards and zero ranges of LOG, in order, up to
 *       and including the record numbered LAST (default: all) to IMAGE, an
 *       existing file of the logged image size.  Start from a copy of the
 *       image imgfs was started on (a file of zeros when the header says
 *       "zero start"): IMAGE is then the disk as it was after that record.
 *
 * Both check the whole log first: magic, version, consecutive sequence
 * numbers, ranges inside the image, and the END record last.  Exit status:
 * 0 good, 1 the log is invalid or incomplete, 2 usage or system error. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "imgfs-log.h"

#define CHUNK (1u << 20)

struct log_header {
	uint32_t version, flags;
	uint64_t size;
};

struct record {
	uint32_t type, flags;
	uint64_t seq, off, len;
	uint64_t data_pos;	/* where the data of a WRITE starts in the log */
};

struct totals {
	uint64_t records, writes, bytes_written, flushes, discards, zeroes;
};

/* Called for each record; nonzero stops the walk with that status. */
typedef int (*visit_fn)(void *ctx, FILE *log, const struct record *r);

static int bad(const char *path, uint64_t pos, const char *what)
{
	fprintf(stderr, "imgfs-log: %s: byte %" PRIu64 ": %s\n", path, pos, what);
	return 1;
}

static int read_header(FILE *f, const char *path, struct log_header *h)
{
	unsigned char b[IMGFS_LOG_FILE_HEADER];

	if (fread(b, 1, sizeof b, f) != sizeof b)
		return ferror(f) ? (perror(path), 2) : bad(path, 0, "no complete header");
	if (memcmp(b, IMGFS_LOG_MAGIC, 8) != 0)
		return bad(path, 0, "not an imgfs log (bad magic)");
	h->version = imgfs_get32(b + 8);
	h->flags = imgfs_get32(b + 12);
	h->size = imgfs_get64(b + 16);
	if (h->version != IMGFS_LOG_VERSION)
		return bad(path, 8, "unsupported version");
	if (imgfs_get32(b + 24) != IMGFS_LOG_FILE_HEADER ||
	    imgfs_get32(b + 28) != IMGFS_LOG_RECORD_HEADER)
		return bad(path, 24, "unexpected header sizes");
	return 0;
}

/* Walk every record after the header, checking it, and call VISIT (if not
 * NULL) for each.  Returns 0 if the log is complete and valid. */
static int walk(FILE *f, const char *path, const struct log_header *h,
		visit_fn visit, void *ctx, struct totals *t)
{
	unsigned char b[IMGFS_LOG_RECORD_HEADER];
	uint64_t pos = IMGFS_LOG_FILE_HEADER;
	struct record r;
	int ended = 0, rc;

	memset(t, 0, sizeof *t);
	if (fseeko(f, (off_t)pos, SEEK_SET) != 0) {
		perror(path);
		return 2;
	}
	for (;;) {
		size_t n = fread(b, 1, sizeof b, f);
		if (n == 0 && !ferror(f))
			break;
		if (n != sizeof b) {
			if (ferror(f)) {
				perror(path);
				return 2;
			}
			return bad(path, pos, "truncated record header");
		}
		if (ended)
			return bad(path, pos, "record after the END record");
		r.type = imgfs_get32(b);
		r.flags = imgfs_get32(b + 4);
		r.seq = imgfs_get64(b + 8);
		r.off = imgfs_get64(b + 16);
		r.len = imgfs_get64(b + 24);
		r.data_pos = pos + sizeof b;
		if (r.seq != t->records)
			return bad(path, pos, "sequence number out of order");
		switch (r.type) {
		case IMGFS_REC_WRITE:
		case IMGFS_REC_DISCARD:
		case IMGFS_REC_ZERO:
			if (r.flags != 0 || r.len == 0 || r.off > h->size ||
			    r.len > h->size - r.off)
				return bad(path, pos, "bad range or flags");
			break;
		case IMGFS_REC_FLUSH:
		case IMGFS_REC_END:
			if (r.off != 0 || r.len != 0 ||
			    (r.flags & ~(r.type == IMGFS_REC_FLUSH ? IMGFS_REC_F_DATASYNC : 0u)))
				return bad(path, pos, "bad flush or end record");
			break;
		default:
			return bad(path, pos, "unknown record type");
		}
		t->records++;
		switch (r.type) {
		case IMGFS_REC_WRITE: t->writes++; t->bytes_written += r.len; break;
		case IMGFS_REC_FLUSH: t->flushes++; break;
		case IMGFS_REC_DISCARD: t->discards++; break;
		case IMGFS_REC_ZERO: t->zeroes++; break;
		case IMGFS_REC_END: ended = 1; break;
		}
		if (visit != NULL && (rc = visit(ctx, f, &r)) != 0)
			return rc;
		pos = r.data_pos + (r.type == IMGFS_REC_WRITE ? r.len : 0);
		if (fseeko(f, (off_t)pos, SEEK_SET) != 0) {
			perror(path);
			return 2;
		}
	}
	if (!ended)
		return bad(path, pos, "incomplete log: no END record");
	/* A WRITE whose data is cut short shows up here: the seek past its
	 * end succeeds, the header read at the end of file does not fail. */
	struct stat st;
	if (fstat(fileno(f), &st) != 0) {
		perror(path);
		return 2;
	}
	if ((uint64_t)st.st_size != pos)
		return bad(path, pos, "truncated write data");
	return 0;
}

static int dump_visit(void *ctx, FILE *log, const struct record *r)
{
	static const char letters[] = "?WFDZE";

	(void)ctx;
	(void)log;
	printf("%" PRIu64 " %c %" PRIu64 " %" PRIu64 "%s\n", r->seq,
	       letters[r->type], r->off, r->len,
	       (r->flags & IMGFS_REC_F_DATASYNC) ? " datasync" : "");
	return 0;
}

struct apply_ctx {
	const char *path;
	int fd;
	uint64_t last;
	char *buf;
};

static int apply_zero(struct apply_ctx *a, uint64_t off, uint64_t len)
{
	if (fallocate(a->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		      (off_t)off, (off_t)len) == 0)
		return 0;
	if (errno != EOPNOTSUPP && errno != ENOSYS) {
		perror(a->path);
		return 2;
	}
	memset(a->buf, 0, CHUNK);
	while (len > 0) {
		size_t n = len < CHUNK ? (size_t)len : CHUNK;
		if (pwrite(a->fd, a->buf, n, (off_t)off) != (ssize_t)n) {
			perror(a->path);
			return 2;
		}
		off += n;
		len -= n;
	}
	return 0;
}

static int apply_visit(void *ctx, FILE *log, const struct record *r)
{
	struct apply_ctx *a = ctx;
	uint64_t off = r->off, left = r->len;

	if (r->seq > a->last)
		return -1;	/* done; not an error */
	switch (r->type) {
	case IMGFS_REC_WRITE:
		while (left > 0) {
			size_t n = left < CHUNK ? (size_t)left : CHUNK;
			if (fread(a->buf, 1, n, log) != n) {
				fprintf(stderr, "imgfs-log: cannot read write data\n");
				return 2;
			}
			if (pwrite(a->fd, a->buf, n, (off_t)off) != (ssize_t)n) {
				perror(a->path);
				return 2;
			}
			off += n;
			left -= n;
		}
		return 0;
	case IMGFS_REC_DISCARD:
	case IMGFS_REC_ZERO:
		return apply_zero(a, r->off, r->len);
	default:
		return 0;
	}
}

static void usage(FILE *f)
{
	fprintf(f, "usage: imgfs-log dump LOG\n"
		   "       imgfs-log apply LOG IMAGE [LAST]\n");
}

int main(int argc, char *argv[])
{
	struct log_header h;
	struct totals t;
	struct apply_ctx a = { .fd = -1, .last = UINT64_MAX };
	FILE *f = NULL;
	int rc = 2;

	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (argc < 3 || (strcmp(argv[1], "dump") == 0 && argc != 3) ||
	    (strcmp(argv[1], "apply") == 0 && (argc < 4 || argc > 5)) ||
	    (strcmp(argv[1], "dump") != 0 && strcmp(argv[1], "apply") != 0)) {
		usage(stderr);
		return 2;
	}
	f = fopen(argv[2], "rb");
	if (f == NULL) {
		perror(argv[2]);
		return 2;
	}
	rc = read_header(f, argv[2], &h);
	if (rc != 0)
		goto out;

	if (strcmp(argv[1], "dump") == 0) {
		printf("# imgfs log version %" PRIu32 ", image size %" PRIu64
		       ", zero start %s\n", h.version, h.size,
		       (h.flags & IMGFS_LOG_F_ZERO_START) ? "yes" : "no");
		rc = walk(f, argv[2], &h, dump_visit, NULL, &t);
		if (rc == 0)
			printf("# records %" PRIu64 ": writes %" PRIu64 " (%" PRIu64
			       " bytes), flushes %" PRIu64 ", discards %" PRIu64
			       ", zeroes %" PRIu64 "\n", t.records, t.writes,
			       t.bytes_written, t.flushes, t.discards, t.zeroes);
		goto out;
	}

	/* apply */
	a.path = argv[3];
	if (argc == 5) {
		char *end;
		errno = 0;
		a.last = strtoull(argv[4], &end, 10);
		if (errno != 0 || *end != '\0' || argv[4][0] < '0' || argv[4][0] > '9') {
			fprintf(stderr, "imgfs-log: LAST must be a record number: %s\n", argv[4]);
			rc = 2;
			goto out;
		}
	}
	rc = walk(f, argv[2], &h, NULL, NULL, &t);
	if (rc != 0)
		goto out;
	rc = 2;
	a.fd = open(a.path, O_WRONLY | O_CLOEXEC);
	if (a.fd < 0) {
		perror(a.path);
		goto out;
	}
	struct stat st;
	if (fstat(a.fd, &st) != 0) {
		perror(a.path);
		goto out;
	}
	if ((uint64_t)st.st_size != h.size) {
		fprintf(stderr, "imgfs-log: %s: size %jd, the log is of an image "
			"of %" PRIu64 " bytes\n", a.path, (intmax_t)st.st_size, h.size);
		goto out;
	}
	a.buf = malloc(CHUNK);
	if (a.buf == NULL) {
		perror("imgfs-log");
		goto out;
	}
	rc = walk(f, argv[2], &h, apply_visit, &a, &t);
	if (rc == -1)
		rc = 0;
	if (rc == 0 && fsync(a.fd) != 0) {
		perror(a.path);
		rc = 2;
	}
out:
	if (a.fd >= 0 && close(a.fd) != 0 && rc == 0) {
		perror(a.path);
		rc = 2;
	}
	free(a.buf);
	if (f != NULL)
		fclose(f);
	return rc;
}
