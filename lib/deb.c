/* deb.c - reading .deb files (the container reader).
 *
 * Two libarchive readers are stacked: the outer one walks the ar container
 * of the file; for control.tar* and data.tar* an inner tar reader is opened
 * whose read callback pulls the member's bytes from the outer reader.  A
 * member is decompressed by libarchive's filter, but for gzip, whose
 * trailers that filter does not check: gunzip.h sits between the two
 * readers instead.  Only fixed-size buffers live in the object, so
 * data.tar is streamed whatever its size.
 *
 * A caller opens many packages before it extracts the first one (every
 * control.tar is needed to plan the run), and a data.tar reader is costly
 * to keep: an xz decoder holds its whole dictionary (8 MiB at the default
 * level, of which a few pages are touched at once), zstd and bzip2 their
 * windows and blocks, libarchive its read-ahead.  So once data.tar has been
 * reached (and the magic number of its compression checked: nothing is
 * decompressed, magic_right()), a package read from a regular file is
 * "parked":
 * both readers and their buffers are freed, and the file is closed if we
 * opened it.  The first unpkg_deb_next() reopens it (checking that it is
 * still the same file), walks the container to data.tar again (the members
 * before it are skipped, not decompressed) and carries on.  Memory and
 * descriptors held by an open package are then its control members and a
 * few hundred bytes, whatever the number of packages open at once.
 *
 * When data.tar is streamed, its decompressor runs in a thread of its own
 * if it is worth it (open_data(), decomp.h): the thread reads the ar member
 * through the outer reader and hands decompressed blocks to a tar reader
 * without a filter in the caller's thread, so that decompressing overlaps
 * with whatever the caller does with the entries.  An xz stream of several
 * blocks in a regular file is decoded by two threads instead, which read
 * their blocks from the file themselves (xzpar.h); the ar reader then
 * skips the member with lseek() (src_skip()).  The messages are those
 * of the single-threaded reader (but for a damaged block of such a stream,
 * which xzpar.h names), which is kept for control.tar, for the
 * first pass, for pipes (read once, and a thread blocked on a pipe could
 * not be stopped) and for small or uncompressed members.
 *
 * A caller that works on one package while others wait can have their
 * data.tar started early (unpkg_deb_prefetch()): each is resumed at once
 * and its decompression thread decodes as many bytes ahead as the caller
 * allows while the caller is still busy with the packages before; a small
 * member gets a thread too then, since the overlap is what pays for it.
 * xzpar.h's decoders are never started so (they take both CPUs and a pool
 * of their own at the package's turn).
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "deb.h"
#include "decomp.h"
#include "gunzip.h"
#include "xzpar.h"

#define SRC_BUF_SIZE (64u * 1024)
#define MEMBER_BUF_SIZE (64u * 1024)
#define ZERO_BUF_SIZE (16u * 1024)

/* dpkg-deb reads the version line into a small fixed buffer; a longer
 * first line is not a version it would accept either. */
#define FORMAT_LINE_MAX 40

#define AR_MEMBER_MAX 64

/* Decompressed bytes after the end of the tar archive that are still
 * read, and checked, when data.tar is decompressed in a thread: a tar
 * writer pads its archive to a multiple of its record size (10 KiB by
 * default), and dpkg-deb reads the stream to its end too.  Beyond this
 * the rest is ignored, as it is without the thread. */
#define DATA_TAIL_MAX (4u << 20)

/* A compressed data.tar smaller than this is decompressed in the caller's
 * thread: starting a thread (and its queue) costs about 0.3 ms of CPU,
 * more than it can save on a small package.  (Defined at build time to
 * measure other values.) */
#ifndef DATA_THREAD_MIN
#define DATA_THREAD_MIN (128 * 1024)
#endif

enum state {
	ST_DATA,	/* positioned inside data.tar */
	ST_DONE,	/* data.tar and the container fully checked */
	ST_FAILED,	/* an error was reported; the reader is unusable */
};

enum comp {
	COMP_NONE,
	COMP_GZIP,
	COMP_XZ,
	COMP_ZSTD,
	COMP_BZIP2,
};

/* Hole-filling zeros, shared: a constant is not state. */
static const unsigned char zeros[ZERO_BUF_SIZE];

/* The buffers of the two readers, allocated only while they exist. */
struct deb_bufs {
	unsigned char src[SRC_BUF_SIZE];
	unsigned char member[MEMBER_BUF_SIZE];
};

struct unpkg_deb {
	char *name;		/* for messages */
	char *path;		/* to reopen a parked package we opened */
	int fd;
	bool own_fd;
	enum state state;

	/* Parking (see the top of the file).  `id` is the file as first
	 * opened, `start` the offset the container starts at, `data_index`
	 * the position of data.tar among the ar members (0-based). */
	bool parkable;
	bool parked;
	/* unpkg_deb_prefetch() was called: the early start is tried once. */
	bool early_tried;
	struct stat id;
	off_t start;
	unsigned int ar_index;	/* members read so far by next_member() */
	unsigned int data_index;
	enum comp data_comp;
	struct deb_bufs *bufs;

	struct archive *outer;	/* the ar container */
	struct archive *inner;	/* data.tar, once reached */
	/* data.tar's decompressor when it runs in a thread of its own (see
	 * open_data()); while it runs, it owns `outer`, `bufs`, `gz` and
	 * the fields that src_read() and member_read() write. */
	struct unpkg_decomp *dec;
	/* Or, for an xz stream of several blocks in a regular file, its
	 * threaded decoder (xzpar.h), which reads the file itself. */
	struct unpkg_xzpar *par;
	/* gzip members are decompressed by unpkg's own reader, which checks
	 * their trailers (gunzip.h); made once, reset for each member. */
	struct unpkg_gunzip *gz;

	/* Outer read callback bookkeeping: bytes read from the file and the
	 * errno of a failed read, for truncation checks and messages. */
	int64_t src_total;
	bool src_eof;
	int src_errno;

	/* Set when the outer reader failed while feeding an inner one, so
	 * the inner reader's complaint can be reported as truncation. */
	bool member_failed;
	char member_msg[256];

	char format[FORMAT_LINE_MAX + 1];
	char control_name[AR_MEMBER_MAX];
	char data_name[AR_MEMBER_MAX];
	/* The ar member being read, for messages, and its size. */
	char cur_member[AR_MEMBER_MAX];
	int64_t cur_size;

	struct unpkg_deb_member *members;
	size_t n_members;

	/* Current data.tar entry. */
	char *path_buf;
	size_t path_cap;
	char *link_buf;
	size_t link_cap;
	const char *entry_path;
	int64_t entry_size;
	int64_t entry_pos;	/* bytes handed out by unpkg_deb_read() */
	bool entry_eof;		/* libarchive has no more blocks */
	/* A block fetched from libarchive that lies beyond a hole not yet
	 * handed out as zeros. */
	bool pend;
	const void *pend_buf;
	size_t pend_len;
	int64_t pend_off;
};

static const char *ar_msg(struct archive *a)
{
	const char *s = archive_error_string(a);

	return s != NULL ? s : "unexpected end of file";
}

static la_ssize_t src_read(struct archive *a, void *client, const void **buf)
{
	struct unpkg_deb *deb = client;
	ssize_t n;

	do
		n = read(deb->fd, deb->bufs->src, sizeof(deb->bufs->src));
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		deb->src_errno = errno;
		archive_set_error(a, errno, "read error: %s", strerror(errno));
		return -1;
	}
	if (n == 0)
		deb->src_eof = true;
	deb->src_total += n;
	*buf = deb->bufs->src;
	return n;
}

/* Skip callback of the ar reader: in a regular file, move the offset
 * instead of reading the bytes, as for the rest of a data.tar that
 * xzpar.h's workers read with pread().  Never past the end of the file,
 * so that a short file is still read to its end and found short. */
static la_int64_t src_skip(struct archive *a, void *client,
			   la_int64_t request)
{
	struct unpkg_deb *deb = client;
	off_t pos;
	la_int64_t n;

	(void)a;
	if (!deb->parkable || request <= 0)
		return 0;
	pos = lseek(deb->fd, 0, SEEK_CUR);
	if (pos < 0 || pos >= deb->id.st_size)
		return 0;
	n = deb->id.st_size - pos;
	if (n > request)
		n = request;
	/* A failure leaves the offset where it was: libarchive then reads
	 * the bytes instead. */
	if (lseek(deb->fd, pos + n, SEEK_SET) < 0)
		return 0;
	deb->src_total += n;
	return n;
}

static la_ssize_t member_read(struct archive *a, void *client,
			      const void **buf)
{
	struct unpkg_deb *deb = client;
	la_ssize_t n;

	n = archive_read_data(deb->outer, deb->bufs->member,
			      sizeof(deb->bufs->member));
	if (n < 0) {
		deb->member_failed = true;
		snprintf(deb->member_msg, sizeof(deb->member_msg), "%s",
			 ar_msg(deb->outer));
		archive_set_error(a, EIO, "%s", deb->member_msg);
		return -1;
	}
	*buf = deb->bufs->member;
	return n;
}

/* Report a failure of the inner reader of the current member. */
static int inner_fail(struct unpkg_deb *deb, struct archive *in,
		      const char *path, struct unpkg_err *err)
{
	const char *sep = path != NULL ? ": " : "";

	if (path == NULL)
		path = "";
	if (deb->src_errno != 0)
		return unpkg_err_errno(err, deb->src_errno, "%s: %s%s%s",
				       deb->name, deb->cur_member, sep, path);
	if (deb->member_failed)
		return unpkg_err_set(err, UNPKG_ERR_CORRUPT,
				     "%s: %s%s%s: truncated (%s)", deb->name,
				     deb->cur_member, sep, path,
				     deb->member_msg);
	return unpkg_err_set(err, UNPKG_ERR_CORRUPT, "%s: %s%s%s: %s",
			     deb->name, deb->cur_member, sep, path,
			     ar_msg(in));
}

/* Report a failure of the outer reader while moving to the next member:
 * libarchive skips the rest of the previous member first, so a short file
 * shows up here; so does a damaged member header, which is told apart by
 * the file not having been read to its end. */
static int outer_fail(struct unpkg_deb *deb, struct unpkg_err *err)
{
	const char *member = deb->cur_member[0] ? deb->cur_member : NULL;

	if (deb->src_errno != 0)
		return unpkg_err_errno(err, deb->src_errno, "%s", deb->name);
	if (!deb->src_eof)
		return unpkg_err_set(err, UNPKG_ERR_CORRUPT,
				     "%s: damaged ar member header after %s (%s)",
				     deb->name, member ? member : "the start",
				     ar_msg(deb->outer));
	if (member != NULL)
		return unpkg_err_set(err, UNPKG_ERR_CORRUPT,
				     "%s: %s: truncated (%s)", deb->name,
				     member, ar_msg(deb->outer));
	return unpkg_err_set(err, UNPKG_ERR_CORRUPT, "%s: truncated (%s)",
			     deb->name, ar_msg(deb->outer));
}

/* Move to the next ar member.  Returns 1 with *name set, 0 at a clean end
 * of the container, -1 on error.  A partial member header at the end of
 * the file reads as end-of-archive in libarchive; comparing what was
 * consumed with what the file holds tells the two apart. */
static int next_member(struct unpkg_deb *deb, const char **name,
		       struct unpkg_err *err)
{
	struct archive_entry *ae;
	const char *s;
	int r;

	r = archive_read_next_header(deb->outer, &ae);
	if (r == ARCHIVE_EOF) {
		if (deb->src_errno != 0)
			return unpkg_err_errno(err, deb->src_errno, "%s",
					       deb->name);
		if (archive_filter_bytes(deb->outer, 0) != deb->src_total) {
			if (deb->cur_member[0] != '\0')
				return unpkg_err_set(err, UNPKG_ERR_CORRUPT,
						     "%s: truncated member header after %s",
						     deb->name,
						     deb->cur_member);
			return unpkg_err_set(err, UNPKG_ERR_CORRUPT,
					     "%s: truncated", deb->name);
		}
		return 0;
	}
	if (r != ARCHIVE_OK)
		return outer_fail(deb, err);
	s = archive_entry_pathname(ae);
	if (s == NULL || s[0] == '\0')
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "%s: ar member without a name", deb->name);
	if (strlen(s) >= sizeof(deb->cur_member))
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "%s: ar member name too long: '%.64s...'",
				     deb->name, s);
	strcpy(deb->cur_member, s);
	deb->cur_size = archive_entry_size(ae);
	*name = deb->cur_member;
	deb->ar_index++;
	return 1;
}

/* Which compression the member name asks for.  `base` is "control.tar"
 * or "data.tar"; the caller has checked the name starts with it. */
static int member_comp(struct unpkg_deb *deb, const char *name,
		       const char *base, enum comp *comp,
		       struct unpkg_err *err)
{
	const char *ext = name + strlen(base);

	if (ext[0] == '\0')
		*comp = COMP_NONE;
	else if (strcmp(ext, ".gz") == 0)
		*comp = COMP_GZIP;
	else if (strcmp(ext, ".xz") == 0)
		*comp = COMP_XZ;
	else if (strcmp(ext, ".zst") == 0)
		*comp = COMP_ZSTD;
	else if (strcmp(ext, ".bz2") == 0)
		*comp = COMP_BZIP2;
	else
		return unpkg_err_set(err, UNPKG_ERR_UNSUPPORTED,
				     "%s: %s: unsupported compression",
				     deb->name, name);
	return 0;
}

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Make `in` read the current ar member (through member_read()) with
 * exactly the decompressor its name announced: libarchive's filter, or
 * for gzip gunzip.h's reader, since libarchive's filter does not check
 * the trailers. */
static int set_source(struct unpkg_deb *deb, struct archive *in,
		      enum comp comp, struct unpkg_err *err)
{
	archive_read_callback *reader = member_read;
	void *client = deb;
	int r;

	switch (comp) {
	case COMP_NONE:
		r = archive_read_support_filter_none(in);
		break;
	case COMP_GZIP:
		if (deb->gz == NULL)
			deb->gz = unpkg_gunzip_new(member_read, deb);
		else
			unpkg_gunzip_reset(deb->gz, member_read, deb);
		if (deb->gz == NULL)
			return unpkg_err_nomem(err);
		reader = unpkg_gunzip_read;
		client = deb->gz;
		r = archive_read_support_filter_none(in);
		break;
	case COMP_XZ:
		r = archive_read_support_filter_xz(in);
		break;
	case COMP_ZSTD:
		r = archive_read_support_filter_zstd(in);
		break;
	case COMP_BZIP2:
		r = archive_read_support_filter_bzip2(in);
		break;
	default:
		r = ARCHIVE_FATAL;
		break;
	}
	/* ARCHIVE_WARN means libarchive would run an external program;
	 * a library must not fork behind its caller's back. */
	if (r != ARCHIVE_OK)
		return unpkg_err_set(err, UNPKG_ERR_UNSUPPORTED,
				     "%s: %s: decompressor not built into libarchive",
				     deb->name, deb->cur_member);
	if (archive_read_set_read_callback(in, reader) != ARCHIVE_OK ||
	    archive_read_set_callback_data(in, client) != ARCHIVE_OK)
		return unpkg_err_set(err, UNPKG_ERR_UNSUPPORTED, "%s: %s: %s",
				     deb->name, deb->cur_member, ar_msg(in));
	return 0;
}

/* Open a tar reader on the current ar member with exactly the
 * decompressor its name announced, so a member cannot smuggle in another
 * format. */
static int open_inner(struct unpkg_deb *deb, enum comp comp,
		      struct archive **out, struct unpkg_err *err)
{
	struct archive *in = NULL;
	int ret = -1;

	in = archive_read_new();
	if (in == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	if (set_source(deb, in, comp, err) < 0)
		goto out;
	if (archive_read_support_format_tar(in) != ARCHIVE_OK) {
		unpkg_err_set(err, UNPKG_ERR_UNSUPPORTED, "%s: %s: %s",
			      deb->name, deb->cur_member, ar_msg(in));
		goto out;
	}
	deb->member_failed = false;
	if (archive_read_open1(in) != ARCHIVE_OK) {
		inner_fail(deb, in, NULL, err);
		goto out;
	}
	*out = in;
	in = NULL;
	ret = 0;
out:
	if (in != NULL)
		archive_read_free(in);
	return ret;
}

/* Whether data.tar compressed so is decompressed in a thread of its own
 * (open_data()).  Measured on two cores (doc/benchmarks.md), the thread
 * hides the time spent writing the files behind the decompression, when
 * the second core is free: 6 % of the wall time for the kernel image (xz,
 * where decompression is 95 % of the CPU), 7 to 10 % for a hundred xz
 * packages, 20 to 27 % for gzip and zstd.  An uncompressed data.tar has
 * nothing to overlap. */
static bool comp_threaded(enum comp comp)
{
	switch (comp) {
	case COMP_GZIP:
	case COMP_XZ:
	case COMP_ZSTD:
	case COMP_BZIP2:
		return true;
	default:
		return false;
	}
}

/* Stop data.tar's decompression thread, if one runs: `outer`, `bufs` and
 * the fields their callbacks write are this thread's again.  A failure of
 * the thread that the tar reader never saw (it stopped first, for a
 * reason of its own) is forgotten, so that what is reported is the tar
 * reader's own complaint, as without the thread. */
static void data_stop(struct unpkg_deb *deb)
{
	if (deb->par != NULL) {
		unpkg_xzpar_stop(deb->par);
		if (!unpkg_xzpar_delivered(deb->par))
			deb->src_errno = 0;
		return;
	}
	if (deb->dec == NULL)
		return;
	unpkg_decomp_stop(deb->dec);
	if (!unpkg_decomp_delivered(deb->dec)) {
		deb->src_errno = 0;
		deb->member_failed = false;
	}
}

/* The tar reader reached the end of data.tar: the rest of the compressed
 * stream is decompressed and checked (up to DATA_TAIL_MAX bytes), as
 * dpkg-deb does, when a thread decompresses it or when it is gzip (whose
 * trailer is only checked there); otherwise the container check that
 * follows (finish_container()) skips it. */
static int data_finish(struct unpkg_deb *deb, struct unpkg_err *err)
{
	const char *why;
	int r;

	if (deb->par != NULL) {
		r = unpkg_xzpar_finish(deb->par, DATA_TAIL_MAX);
		if (r < 0 && unpkg_xzpar_errno(deb->par) != 0)
			return unpkg_err_errno(err, unpkg_xzpar_errno(deb->par),
					       "%s: %s", deb->name,
					       deb->cur_member);
		if (r < 0)
			return unpkg_err_set(err, UNPKG_ERR_CORRUPT,
					     "%s: %s: corrupt after the end of the tar archive (%s)",
					     deb->name, deb->cur_member,
					     unpkg_xzpar_error(deb->par));
		return 0;
	}
	if (deb->dec != NULL) {
		r = unpkg_decomp_finish(deb->dec, DATA_TAIL_MAX);
		why = unpkg_decomp_error(deb->dec);
	} else if (deb->data_comp == COMP_GZIP) {
		r = unpkg_gunzip_finish(deb->gz, deb->inner, DATA_TAIL_MAX);
		why = ar_msg(deb->inner);
	} else {
		return 0;
	}
	if (deb->src_errno != 0)
		return unpkg_err_errno(err, deb->src_errno, "%s: %s",
				       deb->name, deb->cur_member);
	if (deb->member_failed)
		return unpkg_err_set(err, UNPKG_ERR_CORRUPT,
				     "%s: %s: truncated (%s)", deb->name,
				     deb->cur_member, deb->member_msg);
	if (r < 0 && deb->data_comp != COMP_GZIP)
		return unpkg_err_set(err, UNPKG_ERR_CORRUPT,
				     "%s: %s: corrupt after the end of the tar archive (%s)",
				     deb->name, deb->cur_member, why);
	/* A gzip trailer covers the whole member: its message says what
	 * failed. */
	if (r < 0)
		return unpkg_err_set(err, UNPKG_ERR_CORRUPT, "%s: %s: %s",
				     deb->name, deb->cur_member, why);
	return 0;
}

/* Where the current ar member's data starts in the file, if the member is
 * data.tar and has a plain 60-byte header (a BSD-style long name would put
 * the name first).  The header is read again and must say what libarchive
 * said of it. */
static bool member_offset(struct unpkg_deb *deb, uint64_t *off)
{
	char hdr[60 + 1];
	la_int64_t pos = archive_read_header_position(deb->outer);
	size_t nlen = strlen(deb->cur_member);
	ssize_t n;

	if (pos < 0 || nlen > 16)
		return false;
	do
		n = pread(deb->fd, hdr, 60, deb->start + pos);
	while (n < 0 && errno == EINTR);
	if (n != 60 || memcmp(hdr + 58, "`\n", 2) != 0 ||
	    memcmp(hdr, deb->cur_member, nlen) != 0 ||
	    (nlen < 16 && hdr[nlen] != ' ' && hdr[nlen] != '/'))
		return false;
	hdr[58] = '\0';
	if (strtoll(hdr + 48, NULL, 10) != deb->cur_size)
		return false;
	*off = (uint64_t)(deb->start + pos + 60);
	return true;
}

static la_ssize_t par_read(struct archive *a, void *client, const void **buf)
{
	struct unpkg_deb *deb = client;
	la_ssize_t n = unpkg_xzpar_read(a, deb->par, buf);

	if (n < 0)
		deb->src_errno = unpkg_xzpar_errno(deb->par);
	return n;
}

/* Start data.tar's decompression thread (decomp.h) on the current
 * member, with a queue of `queue` bytes; on success `deb->dec` is set. */
static int start_decomp(struct unpkg_deb *deb, size_t queue,
			struct unpkg_err *err)
{
	struct archive *raw;
	struct archive_entry *ae;
	int r;

	raw = archive_read_new();
	if (raw == NULL)
		return unpkg_err_nomem(err);
	if (set_source(deb, raw, deb->data_comp, err) < 0)
		goto fail;
	if (archive_read_support_format_raw(raw) != ARCHIVE_OK) {
		unpkg_err_set(err, UNPKG_ERR_UNSUPPORTED, "%s: %s: %s",
			      deb->name, deb->cur_member, ar_msg(raw));
		goto fail;
	}
	deb->member_failed = false;
	r = archive_read_open1(raw);
	if (r == ARCHIVE_OK)
		r = archive_read_next_header(raw, &ae);
	if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
		inner_fail(deb, raw, NULL, err);
		goto fail;
	}
	deb->dec = unpkg_decomp_start(raw, queue);
	if (deb->dec == NULL) {
		unpkg_err_nomem(err);
		goto fail;
	}
	return 0;
fail:
	archive_read_free(raw);
	return -1;
}

/* The tar reader of data.tar over its decoding threads (open_data()). */
static int open_tar(struct unpkg_deb *deb, struct unpkg_err *err)
{
	struct archive *tar;
	archive_read_callback *reader = unpkg_decomp_read;
	void *client = deb->dec;

	if (deb->par != NULL) {
		reader = par_read;
		client = deb;
	}
	tar = archive_read_new();
	if (tar == NULL)
		return unpkg_err_nomem(err);
	if (archive_read_support_format_tar(tar) != ARCHIVE_OK) {
		unpkg_err_set(err, UNPKG_ERR_UNSUPPORTED, "%s: %s: %s",
			      deb->name, deb->cur_member, ar_msg(tar));
		archive_read_free(tar);
		return -1;
	}
	if (archive_read_open(tar, client, NULL, reader, NULL) != ARCHIVE_OK) {
		data_stop(deb);
		inner_fail(deb, tar, NULL, err);
		archive_read_free(tar);
		return -1;
	}
	deb->inner = tar;
	return 0;
}

/* Open the reader of data.tar, the current ar member, for streaming.  If
 * it is compressed (and not small), it is decompressed in threads of its
 * own: an xz stream of several blocks in a regular file by xzpar.h's
 * decoder, which reads the blocks from the file, anything else by a
 * thread that reads the member (through member_read(), as the tar reader
 * would) and feeds the tar reader of this thread through a bounded queue
 * (decomp.h).
 *
 * Opened early, by unpkg_deb_prefetch() (`ahead`, the bytes its thread may
 * decode ahead, is then not 0), any compressed member gets a thread, but
 * only the thread is started: the tar reader, which would wait for the
 * thread's first blocks, is left to the first unpkg_deb_next().  A member
 * xzpar.h would take is not opened early: then 1 is returned, and nothing
 * is started. */
static int open_data(struct unpkg_deb *deb, size_t ahead,
		     struct unpkg_err *err)
{
	uint64_t off;
	bool par;

	if (!comp_threaded(deb->data_comp) ||
	    (ahead == 0 && deb->cur_size < DATA_THREAD_MIN))
		return open_inner(deb, deb->data_comp, &deb->inner, err);
	par = deb->data_comp == COMP_XZ && deb->parkable &&
	      member_offset(deb, &off);
	if (par && ahead > 0 && unpkg_xzpar_takes(deb->fd, off,
					      (uint64_t)deb->cur_size))
		return 1;
	if (par && ahead == 0)
		deb->par = unpkg_xzpar_start(deb->fd, off,
					     (uint64_t)deb->cur_size);
	if (deb->par == NULL &&
	    start_decomp(deb, ahead > 0 ? ahead : UNPKG_DECOMP_QUEUE,
			 err) < 0)
		return -1;
	return ahead > 0 ? 0 : open_tar(deb, err);
}

/* Read the version line of debian-binary.  dpkg-deb looks only at the
 * first line and ignores what follows it, and so do we. */
static int read_format(struct unpkg_deb *deb, struct unpkg_err *err)
{
	char line[FORMAT_LINE_MAX + 1];
	size_t len = 0;
	char *nl = NULL;
	const char *p;
	unsigned long minor;
	bool major_two;
	const char *digits;

	while (nl == NULL && len < sizeof(line) - 1) {
		la_ssize_t n = archive_read_data(deb->outer, line + len,
						 sizeof(line) - 1 - len);

		if (n < 0)
			return outer_fail(deb, err);
		if (n == 0)
			break;
		len += (size_t)n;
		line[len] = '\0';
		nl = memchr(line, '\n', len);
	}
	line[len] = '\0';
	if (nl == NULL) {
		if (len == sizeof(line) - 1)
			return unpkg_err_set(err, UNPKG_ERR_FORMAT,
					     "%s: debian-binary: format version line too long",
					     deb->name);
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "%s: debian-binary: missing newline",
				     deb->name);
	}
	*nl = '\0';
	if (memchr(line, '\0', (size_t)(nl - line)) != NULL)
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "%s: debian-binary: NUL byte in format version",
				     deb->name);

	/* <major>.<minor>, both decimal; only major 2 exists.  Leading
	 * zeros are numbers like any other, as dpkg-deb sees them. */
	p = line;
	digits = p;
	while (*p == '0')
		p++;
	major_two = p[0] == '2' && (p[1] < '0' || p[1] > '9');
	while (*p >= '0' && *p <= '9')
		p++;
	if (p == digits || *p != '.')
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "%s: debian-binary: invalid format version '%s'",
				     deb->name, line);
	p++;
	digits = p;
	minor = 0;
	while (*p >= '0' && *p <= '9') {
		minor = minor * 10 + (unsigned long)(*p - '0');
		if (minor > INT_MAX)
			return unpkg_err_set(err, UNPKG_ERR_FORMAT,
					     "%s: debian-binary: invalid format version '%s'",
					     deb->name, line);
		p++;
	}
	if (p == digits || *p != '\0')
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "%s: debian-binary: invalid format version '%s'",
				     deb->name, line);
	if (!major_two)
		return unpkg_err_set(err, UNPKG_ERR_UNSUPPORTED,
				     "%s: debian-binary: unsupported format version '%s'",
				     deb->name, line);
	strcpy(deb->format, line);
	return 0;
}

/* Rewrite `raw` into `dst` (at least strlen(raw) + 1 bytes) in normal
 * form.  Returns NULL, or why the name is refused. */
static const char *normalise(const char *raw, char *dst)
{
	const char *p = raw;
	char *o = dst;

	if (raw[0] == '\0')
		return "empty name";
	/* dpkg records paths one per line in its .list files. */
	if (strchr(raw, '\n') != NULL)
		return "name contains a newline";
	while (*p != '\0') {
		const char *start;
		size_t len;

		while (*p == '/')
			p++;
		start = p;
		while (*p != '\0' && *p != '/')
			p++;
		len = (size_t)(p - start);
		if (len == 0)
			break;
		if (len == 1 && start[0] == '.')
			continue;
		if (len == 2 && start[0] == '.' && start[1] == '.')
			return "'..' component";
		if (o != dst)
			*o++ = '/';
		memcpy(o, start, len);
		o += len;
	}
	*o = '\0';
	return NULL;
}

static int reserve(char **buf, size_t *cap, size_t need,
		   struct unpkg_err *err)
{
	char *p;

	if (need <= *cap)
		return 0;
	p = realloc(*buf, need);
	if (p == NULL)
		return unpkg_err_nomem(err);
	*buf = p;
	*cap = need;
	return 0;
}

static const struct unpkg_deb_member *find_member(const struct unpkg_deb *deb,
						  const char *name)
{
	size_t i;

	for (i = 0; i < deb->n_members; i++)
		if (strcmp(deb->members[i].name, name) == 0)
			return &deb->members[i];
	return NULL;
}

/* Check one control.tar entry; returns 1 if it is a member to keep (its
 * bare name in *name_out, malloc'd), 0 for the "./" entry, -1 on error. */
static int control_entry(struct unpkg_deb *deb, struct archive_entry *ae,
			 char **name_out, struct unpkg_err *err)
{
	const char *raw = archive_entry_pathname(ae);
	mode_t type = archive_entry_filetype(ae);
	const char *why;
	char *name = NULL;
	int ret = -1;

	if (raw == NULL) {
		unpkg_err_set(err, UNPKG_ERR_FORMAT,
			      "%s: %s: member without a name", deb->name,
			      deb->cur_member);
		goto out;
	}
	name = malloc(strlen(raw) + 1);
	if (name == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	why = normalise(raw, name);
	if (why == NULL && raw[0] == '/')
		why = "absolute name";
	if (why != NULL) {
		unpkg_err_set(err, UNPKG_ERR_UNSAFE,
			      "%s: %s: unsafe member name '%s': %s", deb->name,
			      deb->cur_member, raw, why);
		goto out;
	}
	if (name[0] == '\0' && type == AE_IFDIR &&
	    archive_entry_hardlink(ae) == NULL) {
		ret = 0;
		goto out;
	}
	if (name[0] == '\0' || strchr(name, '/') != NULL || type == AE_IFDIR) {
		unpkg_err_set(err, UNPKG_ERR_FORMAT,
			      "%s: %s: member '%s' is not directly under ./",
			      deb->name, deb->cur_member, raw);
		goto out;
	}
	if (type != AE_IFREG || archive_entry_hardlink(ae) != NULL) {
		unpkg_err_set(err, UNPKG_ERR_FORMAT,
			      "%s: %s: member '%s' is not a regular file",
			      deb->name, deb->cur_member, raw);
		goto out;
	}
	if (find_member(deb, name) != NULL) {
		unpkg_err_set(err, UNPKG_ERR_FORMAT,
			      "%s: %s: duplicate member '%s'", deb->name,
			      deb->cur_member, name);
		goto out;
	}
	*name_out = name;
	name = NULL;
	ret = 1;
out:
	free(name);
	return ret;
}

static int read_control(struct unpkg_deb *deb, enum comp comp,
			struct unpkg_err *err)
{
	struct archive *in = NULL;
	struct archive_entry *ae;
	char *name = NULL;
	unsigned char *data = NULL;
	size_t total = 0;
	size_t cap = 0;
	int ret = -1;
	int r;

	if (open_inner(deb, comp, &in, err) < 0)
		goto out;
	for (;;) {
		struct unpkg_deb_member *m;
		int64_t size;
		size_t got = 0;

		r = archive_read_next_header(in, &ae);
		if (r == ARCHIVE_EOF)
			break;
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
			inner_fail(deb, in, NULL, err);
			goto out;
		}
		r = control_entry(deb, ae, &name, err);
		if (r < 0)
			goto out;
		if (r == 0)
			continue;
		size = archive_entry_size(ae);
		if (size < 0 || (uint64_t)size > UNPKG_DEB_CONTROL_MAX - total) {
			unpkg_err_set(err, UNPKG_ERR_FORMAT,
				      "%s: %s: control members exceed %u MiB",
				      deb->name, deb->cur_member,
				      UNPKG_DEB_CONTROL_MAX >> 20);
			goto out;
		}
		data = malloc((size_t)size + 1);
		if (data == NULL) {
			unpkg_err_nomem(err);
			goto out;
		}
		while (got < (size_t)size) {
			la_ssize_t n = archive_read_data(in, data + got,
							 (size_t)size - got);

			if (n < 0) {
				inner_fail(deb, in, name, err);
				goto out;
			}
			if (n == 0) {
				unpkg_err_set(err, UNPKG_ERR_CORRUPT,
					      "%s: %s: %s: truncated",
					      deb->name, deb->cur_member,
					      name);
				goto out;
			}
			got += (size_t)n;
		}
		data[got] = '\0';
		total += got;
		if (deb->n_members == cap) {
			size_t ncap = cap ? cap * 2 : 8;
			struct unpkg_deb_member *nm;

			nm = realloc(deb->members, ncap * sizeof(*nm));
			if (nm == NULL) {
				unpkg_err_nomem(err);
				goto out;
			}
			deb->members = nm;
			cap = ncap;
		}
		m = &deb->members[deb->n_members++];
		m->name = name;
		m->data = data;
		m->size = got;
		m->mode = archive_entry_perm(ae) & 07777;
		name = NULL;
		data = NULL;
	}
	/* The tar reader stops at the end of its archive, before a gzip
	 * trailer: it is checked here. */
	if (comp == COMP_GZIP &&
	    unpkg_gunzip_finish(deb->gz, in, DATA_TAIL_MAX) < 0) {
		inner_fail(deb, in, NULL, err);
		goto out;
	}
	if (find_member(deb, "control") == NULL) {
		unpkg_err_set(err, UNPKG_ERR_FORMAT,
			      "%s: %s: missing control file", deb->name,
			      deb->cur_member);
		goto out;
	}
	ret = 0;
out:
	free(name);
	free(data);
	if (in != NULL)
		archive_read_free(in);
	return ret;
}

/* Start the ar reader at the current position of the file. */
static int open_outer(struct unpkg_deb *deb, struct unpkg_err *err)
{
	deb->src_total = 0;
	deb->src_eof = false;
	deb->src_errno = 0;
	deb->member_failed = false;
	deb->cur_member[0] = '\0';
	deb->ar_index = 0;
	if (deb->bufs == NULL) {
		deb->bufs = malloc(sizeof(*deb->bufs));
		if (deb->bufs == NULL)
			return unpkg_err_nomem(err);
	}
	deb->outer = archive_read_new();
	if (deb->outer == NULL)
		return unpkg_err_nomem(err);
	if (archive_read_support_format_ar(deb->outer) != ARCHIVE_OK)
		return unpkg_err_set(err, UNPKG_ERR_UNSUPPORTED, "%s: %s",
				     deb->name, ar_msg(deb->outer));
	if (archive_read_open2(deb->outer, deb, NULL, src_read, src_skip,
			       NULL) != ARCHIVE_OK) {
		if (deb->src_errno != 0)
			return unpkg_err_errno(err, deb->src_errno, "%s",
					       deb->name);
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "%s: not a Debian package (not an ar archive)",
				     deb->name);
	}
	return 0;
}

/* Whether data.tar, the current member, starts with the magic number of
 * the compression its name announces, which is what libarchive's filter
 * looks for first.  Read with pread(), so the member is not consumed;
 * false also when that cannot be told (a member header member_offset()
 * does not take, a short read), and for an uncompressed member, which
 * has no magic number and whose tar reader decompresses nothing. */
static bool magic_right(struct unpkg_deb *deb, enum comp comp)
{
	static const struct {
		const char *bytes;
		size_t len;
	} magic[] = {
		[COMP_GZIP] = { "\x1f\x8b", 2 },
		[COMP_XZ] = { "\xfd" "7zXZ\0", 6 },
		[COMP_ZSTD] = { "\x28\xb5\x2f\xfd", 4 },
		[COMP_BZIP2] = { "BZh", 3 },
	};
	unsigned char buf[8];
	size_t len = magic[comp].len;
	uint64_t off;
	ssize_t n;

	if (len == 0 || deb->cur_size < (int64_t)len ||
	    !member_offset(deb, &off))
		return false;
	do
		n = pread(deb->fd, buf, len, (off_t)off);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len && memcmp(buf, magic[comp].bytes, len) == 0;
}

static int open_reader(struct unpkg_deb *deb, struct unpkg_err *err)
{
	const char *name;
	enum comp comp;
	bool have_control = false;
	int r;

	if (open_outer(deb, err) < 0)
		return -1;

	/* debian-binary must come first, before even '_' members, as in
	 * dpkg-deb. */
	r = next_member(deb, &name, err);
	if (r < 0)
		return -1;
	if (r == 0)
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "%s: missing debian-binary member",
				     deb->name);
	if (strcmp(name, "debian-binary") != 0)
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "%s: first member is '%s', not debian-binary",
				     deb->name, name);
	if (read_format(deb, err) < 0)
		return -1;

	for (;;) {
		r = next_member(deb, &name, err);
		if (r < 0)
			return -1;
		if (r == 0)
			return unpkg_err_set(err, UNPKG_ERR_FORMAT,
					     "%s: missing %s member", deb->name,
					     have_control ? "data.tar"
							  : "control.tar");
		if (name[0] == '_')
			continue;
		if (has_prefix(name, "control.tar")) {
			if (have_control)
				return unpkg_err_set(err, UNPKG_ERR_FORMAT,
						     "%s: duplicate control.tar member '%s'",
						     deb->name, name);
			if (member_comp(deb, name, "control.tar", &comp,
					err) < 0)
				return -1;
			strcpy(deb->control_name, name);
			if (read_control(deb, comp, err) < 0)
				return -1;
			have_control = true;
			continue;
		}
		if (has_prefix(name, "data.tar") && have_control) {
			if (member_comp(deb, name, "data.tar", &comp, err) < 0)
				return -1;
			strcpy(deb->data_name, name);
			deb->data_index = deb->ar_index - 1;
			deb->data_comp = comp;
			/* A package that is then parked leaves data.tar to
			 * its turn: a tar reader opened here would
			 * decompress a first block (64 KiB of output, 1 to
			 * 2 ms of xz) only to throw it away.  The reader is
			 * opened only if the start looks wrong, to say what
			 * it says of it. */
			if (deb->parkable && magic_right(deb, comp))
				return 0;
			return open_inner(deb, comp, &deb->inner, err);
		}
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "%s: unexpected member '%s' before %s",
				     deb->name, name,
				     have_control ? "data.tar" : "control.tar");
	}
}

/* Free both readers and their buffers, and close the file if it is ours:
 * the package waits for its turn holding only its control members. */
static void park(struct unpkg_deb *deb)
{
	unpkg_decomp_free(deb->dec);
	deb->dec = NULL;
	unpkg_xzpar_free(deb->par);
	deb->par = NULL;
	if (deb->inner != NULL)
		archive_read_free(deb->inner);
	deb->inner = NULL;
	unpkg_gunzip_free(deb->gz);
	deb->gz = NULL;
	if (deb->outer != NULL)
		archive_read_free(deb->outer);
	deb->outer = NULL;
	free(deb->bufs);
	deb->bufs = NULL;
	/* Nothing useful can be done about a failed close of a file that
	 * was only read. */
	if (deb->own_fd && deb->fd >= 0)
		(void)close(deb->fd);
	if (deb->own_fd)
		deb->fd = -1;
	deb->parked = true;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	       a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Undo park(): the same file, read again up to the start of data.tar,
 * which is opened (`ahead`: see open_data(), whose 1 this returns). */
static int resume(struct unpkg_deb *deb, size_t ahead, struct unpkg_err *err)
{
	struct stat st;
	const char *name;
	int r;

	if (deb->own_fd) {
		deb->fd = open(deb->path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (deb->fd < 0)
			return unpkg_err_sys(err, "%s: cannot open again",
					     deb->name);
	}
	if (fstat(deb->fd, &st) < 0)
		return unpkg_err_sys(err, "%s", deb->name);
	if (!same_file(&st, &deb->id))
		return unpkg_err_set(err, UNPKG_ERR_CORRUPT,
				     "%s: file changed while the package was being installed",
				     deb->name);
	if (lseek(deb->fd, deb->start, SEEK_SET) != deb->start)
		return unpkg_err_sys(err, "%s: cannot seek", deb->name);
	if (open_outer(deb, err) < 0)
		return -1;
	/* The members before data.tar were checked by the first pass and
	 * the file is the same: only skip them now. */
	do {
		r = next_member(deb, &name, err);
		if (r < 0)
			return -1;
	} while (r > 0 && deb->ar_index <= deb->data_index);
	if (r == 0 || strcmp(name, deb->data_name) != 0)
		return unpkg_err_set(err, UNPKG_ERR_CORRUPT,
				     "%s: file changed while the package was being installed",
				     deb->name);
	r = open_data(deb, ahead, err);
	if (r != 0)
		return r;
	deb->parked = false;
	return 0;
}

static int open_common(int fd, const char *name, const char *path,
		       struct unpkg_deb **out, struct unpkg_err *err)
{
	struct unpkg_deb *deb = NULL;
	int ret = -1;

	deb = calloc(1, sizeof(*deb));
	if (deb == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	deb->fd = fd;
	deb->name = strdup(name != NULL ? name : "(unnamed)");
	if (deb->name == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	if (path != NULL) {
		deb->path = strdup(path);
		if (deb->path == NULL) {
			unpkg_err_nomem(err);
			goto out;
		}
	}
	/* Only a regular file can be read a second time. */
	if (fstat(fd, &deb->id) == 0 && S_ISREG(deb->id.st_mode)) {
		deb->start = lseek(fd, 0, SEEK_CUR);
		deb->parkable = deb->start >= 0;
	}
	if (open_reader(deb, err) < 0)
		goto out;
	deb->state = ST_DATA;
	if (path != NULL)
		deb->own_fd = true;
	if (deb->parkable)
		park(deb);
	*out = deb;
	deb = NULL;
	ret = 0;
out:
	/* On failure the caller still owns and closes fd. */
	unpkg_deb_free(deb);
	return ret;
}

int unpkg_deb_open_fd(int fd, const char *name, struct unpkg_deb **out,
		      struct unpkg_err *err)
{
	return open_common(fd, name, NULL, out, err);
}

int unpkg_deb_open(const char *path, struct unpkg_deb **out,
		   struct unpkg_err *err)
{
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return unpkg_err_sys(err, "%s", path);
	if (open_common(fd, path, path, out, err) < 0) {
		close(fd);
		return -1;
	}
	/* Parked packages have closed it already. */
	return 0;
}

void unpkg_deb_free(struct unpkg_deb *deb)
{
	size_t i;

	if (deb == NULL)
		return;
	if (deb->inner != NULL)
		archive_read_free(deb->inner);
	/* The thread, if one runs, uses `outer`, `bufs` and `gz`. */
	unpkg_decomp_free(deb->dec);
	unpkg_xzpar_free(deb->par);
	unpkg_gunzip_free(deb->gz);
	if (deb->outer != NULL)
		archive_read_free(deb->outer);
	/* Nothing useful can be done about a failed close of a file that
	 * was only read. */
	if (deb->own_fd && deb->fd >= 0)
		(void)close(deb->fd);
	for (i = 0; i < deb->n_members; i++) {
		free(deb->members[i].name);
		free(deb->members[i].data);
	}
	free(deb->members);
	free(deb->bufs);
	free(deb->path_buf);
	free(deb->link_buf);
	free(deb->path);
	free(deb->name);
	free(deb);
}

const char *unpkg_deb_format(const struct unpkg_deb *deb)
{
	return deb->format;
}

const char *unpkg_deb_control_name(const struct unpkg_deb *deb)
{
	return deb->control_name;
}

const char *unpkg_deb_data_name(const struct unpkg_deb *deb)
{
	return deb->data_name;
}

size_t unpkg_deb_member_count(const struct unpkg_deb *deb)
{
	return deb->n_members;
}

const struct unpkg_deb_member *unpkg_deb_member_at(const struct unpkg_deb *deb,
						    size_t i)
{
	return i < deb->n_members ? &deb->members[i] : NULL;
}

const struct unpkg_deb_member *unpkg_deb_member(const struct unpkg_deb *deb,
						 const char *name)
{
	return find_member(deb, name);
}

/* After data.tar: dpkg-deb stops reading there and ignores whatever
 * follows.  We read the container to its end anyway (it costs nothing
 * more than the skip) and refuse anything but '_' members, which dpkg
 * reserves for additions, so a second data.tar or stray payload cannot
 * hide behind the one we install. */
static int finish_container(struct unpkg_deb *deb, struct unpkg_err *err)
{
	const char *name;
	int r;

	for (;;) {
		r = next_member(deb, &name, err);
		if (r <= 0)
			return r;
		if (name[0] != '_')
			return unpkg_err_set(err, UNPKG_ERR_FORMAT,
					     "%s: unexpected member '%s' after %s",
					     deb->name, name, deb->data_name);
	}
}

static int entry_type(struct archive_entry *ae, enum unpkg_entry_type *type)
{
	if (archive_entry_hardlink(ae) != NULL) {
		*type = UNPKG_ENTRY_HARDLINK;
		return 0;
	}
	switch (archive_entry_filetype(ae)) {
	case AE_IFREG:
		*type = UNPKG_ENTRY_FILE;
		return 0;
	case AE_IFDIR:
		*type = UNPKG_ENTRY_DIR;
		return 0;
	case AE_IFLNK:
		*type = UNPKG_ENTRY_SYMLINK;
		return 0;
	case AE_IFIFO:
		*type = UNPKG_ENTRY_FIFO;
		return 0;
	case AE_IFCHR:
		*type = UNPKG_ENTRY_CHR;
		return 0;
	case AE_IFBLK:
		*type = UNPKG_ENTRY_BLK;
		return 0;
	default:
		return -1;
	}
}

static int fill_entry(struct unpkg_deb *deb, struct archive_entry *ae,
		      struct unpkg_deb_entry *entry, struct unpkg_err *err)
{
	const char *raw = archive_entry_pathname(ae);
	const char *why;
	int64_t uid, gid;

	memset(entry, 0, sizeof(*entry));
	if (raw == NULL)
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "%s: %s: entry without a name",
				     deb->name, deb->data_name);
	if (reserve(&deb->path_buf, &deb->path_cap, strlen(raw) + 1, err) < 0)
		return -1;
	why = normalise(raw, deb->path_buf);
	if (why != NULL)
		return unpkg_err_set(err, UNPKG_ERR_UNSAFE,
				     "%s: %s: unsafe path '%s': %s", deb->name,
				     deb->data_name, raw, why);
	deb->entry_path = deb->path_buf;
	entry->path = deb->path_buf;

	if (entry_type(ae, &entry->type) < 0)
		return unpkg_err_set(err, UNPKG_ERR_UNSUPPORTED,
				     "%s: %s: %s: unsupported file type (mode %06o)",
				     deb->name, deb->data_name, raw,
				     (unsigned)archive_entry_mode(ae));
	if (entry->path[0] == '\0' && entry->type != UNPKG_ENTRY_DIR)
		return unpkg_err_set(err, UNPKG_ERR_UNSAFE,
				     "%s: %s: unsafe path '%s': names the root but is not a directory",
				     deb->name, deb->data_name, raw);

	if (entry->type == UNPKG_ENTRY_HARDLINK) {
		const char *target = archive_entry_hardlink(ae);

		if (reserve(&deb->link_buf, &deb->link_cap,
			    strlen(target) + 1, err) < 0)
			return -1;
		why = normalise(target, deb->link_buf);
		if (why == NULL && deb->link_buf[0] == '\0')
			why = "link to the root";
		if (why != NULL)
			return unpkg_err_set(err, UNPKG_ERR_UNSAFE,
					     "%s: %s: %s: unsafe hardlink target '%s': %s",
					     deb->name, deb->data_name,
					     entry->path, target, why);
		entry->link = deb->link_buf;
	} else if (entry->type == UNPKG_ENTRY_SYMLINK) {
		entry->link = archive_entry_symlink(ae);
		if (entry->link == NULL || entry->link[0] == '\0')
			return unpkg_err_set(err, UNPKG_ERR_FORMAT,
					     "%s: %s: %s: symlink with empty target",
					     deb->name, deb->data_name,
					     entry->path);
	}

	uid = archive_entry_uid(ae);
	gid = archive_entry_gid(ae);
	/* (uid_t)-1 means "leave unchanged" to chown; it is no owner. */
	if (uid < 0 || (uint64_t)uid >= (uid_t)-1 ||
	    gid < 0 || (uint64_t)gid >= (gid_t)-1)
		return unpkg_err_set(err, UNPKG_ERR_FORMAT,
				     "%s: %s: %s: invalid owner %lld:%lld",
				     deb->name, deb->data_name, entry->path,
				     (long long)uid, (long long)gid);
	entry->uid = (uid_t)uid;
	entry->gid = (gid_t)gid;
	entry->uname = archive_entry_uname(ae);
	entry->gname = archive_entry_gname(ae);
	entry->mode = archive_entry_perm(ae) & 07777;
	entry->mtime = archive_entry_mtime(ae);
	if (entry->type == UNPKG_ENTRY_CHR || entry->type == UNPKG_ENTRY_BLK)
		entry->rdev = archive_entry_rdev(ae);
	if (entry->type == UNPKG_ENTRY_FILE) {
		entry->size = archive_entry_size(ae);
		if (entry->size < 0)
			return unpkg_err_set(err, UNPKG_ERR_CORRUPT,
					     "%s: %s: %s: invalid size",
					     deb->name, deb->data_name,
					     entry->path);
	}
	return 0;
}

void unpkg_deb_prefetch(struct unpkg_deb *deb, size_t ahead)
{
	struct unpkg_err ignored;

	if (deb->state != ST_DATA || !deb->parked || deb->early_tried ||
	    !comp_threaded(deb->data_comp) || !unpkg_decomp_two_cpus())
		return;
	deb->early_tried = true;
	unpkg_err_init(&ignored);
	/* Whatever went wrong, or was left to the package's turn, is found
	 * again then, and reported if it is an error. */
	if (resume(deb, ahead > 0 ? ahead : 1, &ignored) != 0)
		park(deb);
}

int unpkg_deb_next(struct unpkg_deb *deb, struct unpkg_deb_entry *entry,
		   struct unpkg_err *err)
{
	struct archive_entry *ae;
	int r;

	if (deb->state == ST_DONE)
		return 0;
	if (deb->state == ST_FAILED)
		return unpkg_err_set(err, UNPKG_ERR_USAGE,
				     "%s: reader used after an error",
				     deb->name);
	if (deb->parked && resume(deb, 0, err) < 0)
		goto fail;
	/* Started early: its tar reader is opened now. */
	if (deb->inner == NULL && open_tar(deb, err) < 0)
		goto fail;
	/* Any entry data not read yet is skipped by libarchive here. */
	deb->entry_path = NULL;
	r = archive_read_next_header(deb->inner, &ae);
	if (r == ARCHIVE_EOF) {
		if (data_finish(deb, err) < 0 ||
		    finish_container(deb, err) < 0)
			goto fail;
		deb->state = ST_DONE;
		return 0;
	}
	if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
		data_stop(deb);
		inner_fail(deb, deb->inner, NULL, err);
		goto fail;
	}
	if (fill_entry(deb, ae, entry, err) < 0)
		goto fail;
	deb->entry_size = entry->size;
	deb->entry_pos = 0;
	deb->entry_eof = entry->type != UNPKG_ENTRY_FILE;
	deb->pend = false;
	return 1;
fail:
	/* The thread, if one runs, has nothing more to do. */
	data_stop(deb);
	deb->state = ST_FAILED;
	return -1;
}

static int read_fail(struct unpkg_deb *deb, const char *what,
		     const char *detail, struct unpkg_err *err)
{
	data_stop(deb);
	unpkg_err_set(err, UNPKG_ERR_CORRUPT, "%s: %s: %s: %s (%s)",
		      deb->name, deb->data_name, deb->entry_path, what, detail);
	deb->state = ST_FAILED;
	return -1;
}

int unpkg_deb_read(struct unpkg_deb *deb, const void **buf, size_t *len,
		   struct unpkg_err *err)
{
	if (deb->state == ST_FAILED)
		return unpkg_err_set(err, UNPKG_ERR_USAGE,
				     "%s: reader used after an error",
				     deb->name);
	if (deb->state != ST_DATA || deb->entry_path == NULL)
		return 0;
	for (;;) {
		const void *b;
		size_t n;
		la_int64_t off;
		int r;

		if (deb->pend) {
			if (deb->pend_off > deb->entry_pos) {
				int64_t hole = deb->pend_off - deb->entry_pos;

				n = hole < (int64_t)sizeof(zeros)
					    ? (size_t)hole
					    : sizeof(zeros);
				*buf = zeros;
				*len = n;
				deb->entry_pos += (int64_t)n;
				return 1;
			}
			deb->pend = false;
			if (deb->pend_len == 0)
				continue;
			*buf = deb->pend_buf;
			*len = deb->pend_len;
			deb->entry_pos += (int64_t)deb->pend_len;
			return 1;
		}
		if (deb->entry_eof) {
			int64_t rest = deb->entry_size - deb->entry_pos;

			if (rest <= 0)
				return 0;
			/* A sparse file may end in a hole. */
			n = rest < (int64_t)sizeof(zeros)
				    ? (size_t)rest
				    : sizeof(zeros);
			*buf = zeros;
			*len = n;
			deb->entry_pos += (int64_t)n;
			return 1;
		}
		r = archive_read_data_block(deb->inner, &b, &n, &off);
		if (r == ARCHIVE_EOF) {
			deb->entry_eof = true;
			continue;
		}
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
			data_stop(deb);
			if (deb->src_errno != 0) {
				unpkg_err_errno(err, deb->src_errno,
						"%s: %s: %s", deb->name,
						deb->data_name,
						deb->entry_path);
				deb->state = ST_FAILED;
				return -1;
			}
			if (deb->member_failed)
				return read_fail(deb, "truncated",
						 deb->member_msg, err);
			return read_fail(deb, "truncated or corrupt",
					 ar_msg(deb->inner), err);
		}
		if (off < deb->entry_pos || off > deb->entry_size ||
		    (uint64_t)n > (uint64_t)(deb->entry_size - off))
			return read_fail(deb, "corrupt",
					 "data block outside the file", err);
		deb->pend = true;
		deb->pend_buf = b;
		deb->pend_len = n;
		deb->pend_off = off;
	}
}
