/* fuzz_deb.c - libFuzzer target for the container reader (lib/deb.c).
 *
 * The input is a .deb file.  It is put in a memory file and opened with
 * unpkg_deb_open_fd(); the control members are read and every data.tar
 * entry is streamed to its end.  Besides memory errors (ASan/UBSan), the
 * target aborts when the reader breaks a promise of deb.h:
 *   - control members are top-level names, NUL-terminated, and a
 *     "control" member exists;
 *   - entry paths (and hard link targets) are normalised: no leading '/',
 *     no empty, "." or ".." component, no trailing '/', no newline;
 *     only the root itself is "";
 *   - a regular file yields exactly entry->size bytes, other entries none;
 *   - after the end, or after an error, the reader stays there;
 *   - a failure always comes with an error code and a message.
 * The content of a file is read at most READ_CAP bytes deep (a sparse
 * entry may claim terabytes of holes).
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "deb.h"
#include "err.h"

#include "deb_mutator.h"
#include "fuzz-common.h"

#define READ_CAP (8 << 20)

const char fuzz_target_name[] = "fuzz_deb";

static int memfd = -1;
static volatile unsigned char sink;

/* `p` is in deb.h's normal form ("" allowed only if `allow_root`). */
static void check_normal(const char *p, int allow_root, const char *what)
{
	const char *s = p;

	if (*p == '\0') {
		if (!allow_root)
			FAIL("%s: empty path", what);
		return;
	}
	if (strchr(p, '\n') != NULL)
		FAIL("%s '%s' contains a newline", what, p);
	for (;;) {
		size_t len = strcspn(s, "/");

		if (len == 0 || (len == 1 && s[0] == '.') ||
		    (len == 2 && s[0] == '.' && s[1] == '.'))
			FAIL("%s '%s' is not normalised", what, p);
		s += len;
		if (*s == '\0')
			break;
		s++;
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	memfd = fuzz_memfd("fuzz.deb");
	return 0;
}

static void check_members(const struct unpkg_deb *deb)
{
	size_t i, n = unpkg_deb_member_count(deb);
	unsigned sum = 0;

	if (unpkg_deb_member(deb, "control") == NULL)
		FAIL("opened without a control member");
	if (unpkg_deb_format(deb)[0] != '2')
		FAIL("format '%s' accepted", unpkg_deb_format(deb));
	if (strncmp(unpkg_deb_control_name(deb), "control.tar", 11) != 0 ||
	    strncmp(unpkg_deb_data_name(deb), "data.tar", 8) != 0)
		FAIL("member names '%s', '%s'", unpkg_deb_control_name(deb),
		     unpkg_deb_data_name(deb));
	for (i = 0; i < n; i++) {
		const struct unpkg_deb_member *m = unpkg_deb_member_at(deb, i);
		size_t k;

		if (m == NULL || m->name == NULL || m->data == NULL)
			FAIL("member %zu missing", i);
		if (m->name[0] == '\0' || strchr(m->name, '/') != NULL ||
		    strcmp(m->name, ".") == 0 || strcmp(m->name, "..") == 0)
			FAIL("control member name '%s'", m->name);
		if (m->data[m->size] != '\0')
			FAIL("control member '%s' not NUL-terminated",
			     m->name);
		if (unpkg_deb_member(deb, m->name) != m)
			FAIL("control member '%s' found twice", m->name);
		for (k = 0; k < m->size; k++)
			sum += m->data[k];
	}
	if (unpkg_deb_member_at(deb, n) != NULL)
		FAIL("member past the end");
	(void)sum;
}

static void read_entries(struct unpkg_deb *deb)
{
	struct unpkg_deb_entry e;
	struct unpkg_err err;
	int r;

	for (;;) {
		int64_t total = 0;
		const void *buf;
		size_t len;

		unpkg_err_init(&err);
		r = unpkg_deb_next(deb, &e, &err);
		if (r <= 0)
			break;
		check_normal(e.path, e.type == UNPKG_ENTRY_DIR, "entry path");
		if (e.type == UNPKG_ENTRY_HARDLINK) {
			if (e.link == NULL)
				FAIL("hard link '%s' without a target", e.path);
			check_normal(e.link, 0, "hard link target");
		} else if (e.type == UNPKG_ENTRY_SYMLINK) {
			if (e.link == NULL || e.link[0] == '\0')
				FAIL("symlink '%s' without a target", e.path);
		} else if (e.link != NULL) {
			FAIL("'%s' has a link target but is no link", e.path);
		}
		if (e.size < 0 || (e.type != UNPKG_ENTRY_FILE && e.size != 0))
			FAIL("'%s': size %lld for type %d", e.path,
			     (long long)e.size, (int)e.type);
		if (e.mode & ~07777)
			FAIL("'%s': mode %o", e.path, (unsigned)e.mode);
		for (;;) {
			r = unpkg_deb_read(deb, &buf, &len, &err);
			if (r <= 0)
				break;
			if (len == 0 || buf == NULL)
				FAIL("'%s': empty block", e.path);
			/* Touch the block so ASan checks it. */
			sink ^= ((const unsigned char *)buf)[0] ^
				((const unsigned char *)buf)[len - 1];
			total += (int64_t)len;
			if (total > e.size)
				FAIL("'%s': more than %lld bytes", e.path,
				     (long long)e.size);
			if (total >= READ_CAP)
				break;
		}
		if (r < 0) {
			fuzz_check_err(&err, "unpkg_deb_read");
			unpkg_err_init(&err);
			if (unpkg_deb_next(deb, &e, &err) >= 0)
				FAIL("reader went on after a read error");
			return;
		}
		if (r == 0 && total != e.size)
			FAIL("'%s': %lld bytes instead of %lld", e.path,
			     (long long)total, (long long)e.size);
	}
	if (r < 0) {
		fuzz_check_err(&err, "unpkg_deb_next");
		unpkg_err_init(&err);
		if (unpkg_deb_next(deb, &e, &err) >= 0)
			FAIL("reader went on after an error");
		return;
	}
	unpkg_err_init(&err);
	if (unpkg_deb_next(deb, &e, &err) != 0)
		FAIL("reader went on after the end");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct unpkg_deb *deb = NULL;
	struct unpkg_err err;

	fuzz_load(memfd, data, size);
	unpkg_err_init(&err);
	if (unpkg_deb_open_fd(memfd, "fuzz.deb", &deb, &err) < 0) {
		fuzz_check_err(&err, "unpkg_deb_open_fd");
		if (deb != NULL)
			FAIL("failed open returned a reader");
		return 0;
	}
	check_members(deb);
	read_entries(deb);
	unpkg_deb_free(deb);
	return 0;
}
