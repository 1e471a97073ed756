/* crashimg - disk images as a power cut would leave them, built from an
 * imgfs write log (format: bench/imgfs.c) and the image imgfs started on.
 *
 *   crashimg info LOG
 *       "flushes N", then one line per crash interval K = 0..N:
 *           K FIRST LAST UNITS
 *       Interval K holds the records after flush K (after the start of the
 *       log for K = 0) up to flush K+1 (up to the END record for K = N);
 *       FIRST and LAST are their sequence numbers (FIRST > LAST when the
 *       interval is empty) and UNITS the number of 4 KiB units its writes,
 *       discards and zero ranges touch (a record is cut at every 4 KiB
 *       boundary of the disk; each piece is one unit).
 *   crashimg build LOG BASE OUT K SEED
 *       Write OUT: BASE (the image as it was when imgfs started), plus
 *       every record up to and including flush K (none for K = 0), plus a
 *       subset of the units of interval K, applied in log order.  SEED 0
 *       takes no unit, SEED "all" every unit; any other number picks each
 *       unit with a probability that is itself drawn from SEED, so that
 *       the subsets range from nearly empty to nearly full.  A unit whose
 *       record comes later overwrites an earlier one where both are taken.
 *       OUT must not exist: it is created, sparse where BASE is.  A state
 *       is never rebuilt into the file (the inode) of an earlier one, which
 *       a file system still alive somewhere could write to.  Prints
 *           K SEED UNITS TAKEN
 *   crashimg units LOG K SEED
 *       The units build would take, one "SEQ OFFSET LENGTH TYPE" line each
 *       (to explain a finding).
 *
 * The log must be complete (END record last).  Exit status: 0 good, 1 the
 * log is invalid, 2 usage or system error. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "imgfs-log.h"

#define UNIT 4096u

struct rec {
	uint32_t type;
	uint64_t seq, off, len;
	const unsigned char *data;	/* WRITE: into the mapped log */
};

struct log {
	unsigned char *map;
	size_t map_len;
	uint64_t size;			/* image size */
	struct rec *recs;
	size_t nrecs;
	size_t *flush_idx;		/* indexes of the FLUSH records */
	size_t nflush;
};

/* The records of interval K: [*lo, *hi) in recs. */
static void interval(const struct log *l, size_t k, size_t *lo, size_t *hi)
{
	*lo = k == 0 ? 0 : l->flush_idx[k - 1] + 1;
	*hi = k < l->nflush ? l->flush_idx[k] : l->nrecs - 1;	/* END last */
}

static int is_change(uint32_t type)
{
	return type == IMGFS_REC_WRITE || type == IMGFS_REC_DISCARD ||
	       type == IMGFS_REC_ZERO;
}

/* Number of 4 KiB pieces of [off, off+len). */
static uint64_t pieces(uint64_t off, uint64_t len)
{
	return (off + len + UNIT - 1) / UNIT - off / UNIT;
}

static int bad(const char *path, const char *what)
{
	fprintf(stderr, "crashimg: %s: %s\n", path, what);
	return 1;
}

static int load(const char *path, struct log *l)
{
	struct stat st;
	size_t pos, cap = 0, fcap = 0;
	int fd, rc = 2;

	memset(l, 0, sizeof *l);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		perror(path);
		goto out;
	}
	if ((uint64_t)st.st_size < IMGFS_LOG_FILE_HEADER) {
		rc = bad(path, "too short for an imgfs log");
		goto out;
	}
	l->map_len = (size_t)st.st_size;
	l->map = mmap(NULL, l->map_len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (l->map == MAP_FAILED) {
		l->map = NULL;
		perror(path);
		goto out;
	}
	rc = 1;
	if (memcmp(l->map, IMGFS_LOG_MAGIC, 8) != 0 ||
	    imgfs_get32(l->map + 8) != IMGFS_LOG_VERSION ||
	    imgfs_get32(l->map + 24) != IMGFS_LOG_FILE_HEADER ||
	    imgfs_get32(l->map + 28) != IMGFS_LOG_RECORD_HEADER) {
		bad(path, "not an imgfs log of version 1");
		goto out;
	}
	l->size = imgfs_get64(l->map + 16);
	pos = IMGFS_LOG_FILE_HEADER;
	while (pos < l->map_len) {
		const unsigned char *h = l->map + pos;
		struct rec r;

		if (l->map_len - pos < IMGFS_LOG_RECORD_HEADER) {
			bad(path, "truncated record header");
			goto out;
		}
		if (l->nrecs > 0 && l->recs[l->nrecs - 1].type == IMGFS_REC_END) {
			bad(path, "record after END");
			goto out;
		}
		r.type = imgfs_get32(h);
		r.seq = imgfs_get64(h + 8);
		r.off = imgfs_get64(h + 16);
		r.len = imgfs_get64(h + 24);
		r.data = NULL;
		pos += IMGFS_LOG_RECORD_HEADER;
		if (r.seq != l->nrecs) {
			bad(path, "sequence numbers out of order");
			goto out;
		}
		if (is_change(r.type)) {
			if (r.len == 0 || r.off > l->size || r.len > l->size - r.off) {
				bad(path, "range outside the image");
				goto out;
			}
		} else if (r.type != IMGFS_REC_FLUSH && r.type != IMGFS_REC_END) {
			bad(path, "unknown record type");
			goto out;
		}
		if (r.type == IMGFS_REC_WRITE) {
			if (l->map_len - pos < r.len) {
				bad(path, "truncated write data");
				goto out;
			}
			r.data = l->map + pos;
			pos += r.len;
		}
		if (l->nrecs == cap) {
			cap = cap ? 2 * cap : 1024;
			struct rec *p = realloc(l->recs, cap * sizeof *p);
			if (p == NULL) {
				perror("crashimg");
				rc = 2;
				goto out;
			}
			l->recs = p;
		}
		if (r.type == IMGFS_REC_FLUSH) {
			if (l->nflush == fcap) {
				fcap = fcap ? 2 * fcap : 256;
				size_t *p = realloc(l->flush_idx, fcap * sizeof *p);
				if (p == NULL) {
					perror("crashimg");
					rc = 2;
					goto out;
				}
				l->flush_idx = p;
			}
			l->flush_idx[l->nflush++] = l->nrecs;
		}
		l->recs[l->nrecs++] = r;
	}
	if (l->nrecs == 0 || l->recs[l->nrecs - 1].type != IMGFS_REC_END) {
		bad(path, "incomplete log: no END record");
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

static void unload(struct log *l)
{
	if (l->map != NULL)
		munmap(l->map, l->map_len);
	free(l->recs);
	free(l->flush_idx);
}

/* xorshift64*: small, seedable, good enough to pick subsets. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

struct picker {
	int mode;		/* 0 none, 1 all, 2 random */
	uint64_t state;
	uint64_t threshold;	/* take a unit when rnd() < threshold */
};

static void picker_init(struct picker *p, const char *seed, size_t k)
{
	memset(p, 0, sizeof *p);
	if (strcmp(seed, "all") == 0) {
		p->mode = 1;
		return;
	}
	uint64_t s = strtoull(seed, NULL, 10);
	if (s == 0)
		return;
	p->mode = 2;
	p->state = (s * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)k << 32) ^ 0xD1B54A32D192ED03ULL;
	if (p->state == 0)
		p->state = 1;
	for (int i = 0; i < 4; i++)
		rnd(&p->state);
	/* probability between 1/16 and 15/16 */
	p->threshold = (rnd(&p->state) % 15 + 1) * (UINT64_MAX / 16);
}

static int take(struct picker *p)
{
	if (p->mode != 2)
		return p->mode;
	return rnd(&p->state) < p->threshold;
}

static int pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	const char *b = buf;

	while (len > 0) {
		ssize_t n = pwrite(fd, b, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		b += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

static int zero_range(int fd, uint64_t off, uint64_t len)
{
	static const char zeros[UNIT];

	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		      (off_t)off, (off_t)len) == 0)
		return 0;
	if (errno != EOPNOTSUPP && errno != ENOSYS)
		return -1;
	while (len > 0) {
		size_t n = len < UNIT ? (size_t)len : UNIT;
		if (pwrite_all(fd, zeros, n, (off_t)off) != 0)
			return -1;
		off += n;
		len -= n;
	}
	return 0;
}

/* Apply [off, off+len) of record R (a piece of it for a unit). */
static int apply(int fd, const struct rec *r, uint64_t off, uint64_t len)
{
	if (r->type == IMGFS_REC_WRITE)
		return pwrite_all(fd, r->data + (off - r->off), (size_t)len, (off_t)off);
	return zero_range(fd, off, len);
}

/* Copy BASE into the new file OUT, keeping holes. */
static int copy_base(int in, int out, uint64_t size)
{
	off_t data = 0, hole;
	static char buf[1 << 16];

	if (ftruncate(out, (off_t)size) != 0)
		return -1;
	for (;;) {
		data = lseek(in, data, SEEK_DATA);
		if (data < 0)
			return errno == ENXIO ? 0 : -1;
		hole = lseek(in, data, SEEK_HOLE);
		if (hole < 0)
			return -1;
		while (data < hole) {
			size_t want = (size_t)(hole - data) < sizeof buf ?
				(size_t)(hole - data) : sizeof buf;
			ssize_t n = pread(in, buf, want, data);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return -1;
			if (pwrite_all(out, buf, (size_t)n, data) != 0)
				return -1;
			data += n;
		}
	}
}

/* Walk the units of interval K; for each one taken, apply it (fd >= 0) or
 * print it (fd < 0).  Returns the number taken, or -1. */
static int64_t walk_units(const struct log *l, size_t k, const char *seed,
			  int fd, uint64_t *units)
{
	static const char letters[] = "?WFDZE";
	struct picker p;
	size_t lo, hi;
	int64_t taken = 0;

	picker_init(&p, seed, k);
	interval(l, k, &lo, &hi);
	*units = 0;
	for (size_t i = lo; i < hi; i++) {
		const struct rec *r = &l->recs[i];
		if (!is_change(r->type))
			continue;
		for (uint64_t off = r->off; off < r->off + r->len;) {
			uint64_t end = (off / UNIT + 1) * UNIT;
			if (end > r->off + r->len)
				end = r->off + r->len;
			(*units)++;
			if (take(&p)) {
				taken++;
				if (fd >= 0 && apply(fd, r, off, end - off) != 0)
					return -1;
				if (fd < 0)
					printf("%" PRIu64 " %" PRIu64 " %" PRIu64 " %c\n",
					       r->seq, off, end - off, letters[r->type]);
			}
			off = end;
		}
	}
	return taken;
}

static int parse_k(const struct log *l, const char *s, size_t *k)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || *s < '0' || *s > '9' || v > l->nflush) {
		fprintf(stderr, "crashimg: K must be 0..%zu: %s\n", l->nflush, s);
		return -1;
	}
	*k = (size_t)v;
	return 0;
}

static int parse_seed(const char *s)
{
	if (strcmp(s, "all") == 0)
		return 0;
	if (*s < '0' || *s > '9' || s[strspn(s, "0123456789")] != '\0') {
		fprintf(stderr, "crashimg: SEED must be a number or \"all\": %s\n", s);
		return -1;
	}
	return 0;
}

static int cmd_info(const struct log *l)
{
	printf("flushes %zu\n", l->nflush);
	for (size_t k = 0; k <= l->nflush; k++) {
		size_t lo, hi;
		uint64_t units = 0;

		interval(l, k, &lo, &hi);
		for (size_t i = lo; i < hi; i++)
			if (is_change(l->recs[i].type))
				units += pieces(l->recs[i].off, l->recs[i].len);
		printf("%zu %zu %zd %" PRIu64 "\n", k, lo, (ssize_t)hi - 1, units);
	}
	return 0;
}

static int cmd_build(const struct log *l, const char *base, const char *out_path,
		     size_t k, const char *seed)
{
	int in = -1, out = -1, rc = 2;
	size_t end = k == 0 ? 0 : l->flush_idx[k - 1];
	struct stat st;
	uint64_t units;
	int64_t taken;

	in = open(base, O_RDONLY | O_CLOEXEC);
	if (in < 0 || fstat(in, &st) != 0) {
		perror(base);
		goto out;
	}
	if ((uint64_t)st.st_size != l->size) {
		fprintf(stderr, "crashimg: %s: %jd bytes, the log is of %" PRIu64 "\n",
			base, (intmax_t)st.st_size, l->size);
		goto out;
	}
	out = open(out_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0) {
		perror(out_path);
		goto out;
	}
	if (copy_base(in, out, l->size) != 0) {
		perror(out_path);
		goto out;
	}
	for (size_t i = 0; k > 0 && i <= end; i++) {
		const struct rec *r = &l->recs[i];
		if (is_change(r->type) && apply(out, r, r->off, r->len) != 0) {
			perror(out_path);
			goto out;
		}
	}
	taken = walk_units(l, k, seed, out, &units);
	if (taken < 0) {
		perror(out_path);
		goto out;
	}
	printf("%zu %s %" PRIu64 " %" PRId64 "\n", k, seed, units, taken);
	rc = 0;
out:
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) != 0 && rc == 0) {
		perror(out_path);
		rc = 2;
	}
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: crashimg info LOG\n"
		   "       crashimg build LOG BASE OUT K SEED\n"
		   "       crashimg units LOG K SEED\n");
}

int main(int argc, char *argv[])
{
	struct log l;
	size_t k;
	uint64_t units;
	int rc;

	if (argc < 3 ||
	    !((strcmp(argv[1], "info") == 0 && argc == 3) ||
	      (strcmp(argv[1], "build") == 0 && argc == 7) ||
	      (strcmp(argv[1], "units") == 0 && argc == 5))) {
		usage(stderr);
		return 2;
	}
	rc = load(argv[2], &l);
	if (rc != 0)
		goto out;
	if (strcmp(argv[1], "info") == 0) {
		rc = cmd_info(&l);
	} else if (strcmp(argv[1], "build") == 0) {
		rc = 2;
		if (parse_k(&l, argv[5], &k) == 0 && parse_seed(argv[6]) == 0)
			rc = cmd_build(&l, argv[3], argv[4], k, argv[6]);
	} else {
		rc = 2;
		if (parse_k(&l, argv[3], &k) == 0 && parse_seed(argv[4]) == 0)
			rc = walk_units(&l, k, argv[4], -1, &units) < 0 ? 2 : 0;
	}
out:
	unload(&l);
	if (fflush(stdout) != 0) {
		perror("crashimg");
		rc = 2;
	}
	return rc;
}
