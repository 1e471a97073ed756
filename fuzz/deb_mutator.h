/* deb_mutator.h - a libFuzzer custom mutator for .deb inputs, shared by
 * fuzz_deb.c and fuzz_extract.c (included once by each).
 *
 * Random mutations of a .deb almost never get past two checks: every tar
 * header carries a checksum, and the ar header of each member states its
 * size.  After libFuzzer's own mutation this puts them right again, so
 * that a changed name, type, mode, size or link target in an uncompressed
 * control.tar or data.tar reaches unpkg's own checks:
 *   - in every uncompressed tar member, each 512-byte block with the
 *     "ustar" magic at offset 257 gets its checksum recomputed;
 *   - the last ar member's size field is set to what is left of the
 *     input (mutations that insert or erase bytes mostly hit data.tar,
 *     the last member).
 * Inputs that are not ar archives are left as libFuzzer made them, and so
 * is one mutation in eight, so the damaged forms are still tried.
 */
#ifndef UNPKG_FUZZ_DEB_MUTATOR_H
#define UNPKG_FUZZ_DEB_MUTATOR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed);

static void fix_tar_checksums(uint8_t *tar, size_t len)
{
	size_t off;

	for (off = 0; off + 512 <= len; off += 512) {
		uint8_t *h = tar + off;
		unsigned int sum = 0;
		char field[8];
		size_t i;

		if (memcmp(h + 257, "ustar", 5) != 0)
			continue;
		memset(h + 148, ' ', 8);
		for (i = 0; i < 512; i++)
			sum += h[i];
		snprintf(field, sizeof(field), "%06o", sum & 0777777);
		memcpy(h + 148, field, 6);
		h[154] = '\0';
		h[155] = ' ';
	}
}

/* An uncompressed tar member: "control.tar" or "data.tar", the name
 * padded with blanks or ended by '/' (GNU ar). */
static int plain_tar_member(const uint8_t *name)
{
	static const char *const names[] = { "control.tar", "data.tar" };
	size_t i, n;

	for (i = 0; i < 2; i++) {
		n = strlen(names[i]);
		if (memcmp(name, names[i], n) == 0 &&
		    (name[n] == ' ' || name[n] == '/'))
			return 1;
	}
	return 0;
}

static void fix_deb(uint8_t *data, size_t size)
{
	size_t off = 8;

	if (size < 8 || memcmp(data, "!<arch>\n", 8) != 0)
		return;
	while (off + 60 <= size) {
		uint8_t *hdr = data + off;
		size_t avail = size - off - 60, len = 0, i;

		for (i = 48; i < 58 && hdr[i] >= '0' && hdr[i] <= '9'; i++)
			len = len * 10 + (size_t)(hdr[i] - '0');
		if (len >= avail || off + 60 + len + (len & 1) + 60 > size) {
			/* The last member: it gets the rest of the input. */
			char field[11];

			if (avail > 9999999999ULL)
				return;
			len = avail;
			snprintf(field, sizeof(field), "%-10zu", len);
			memcpy(hdr + 48, field, 10);
		}
		if (plain_tar_member(hdr))
			fix_tar_checksums(hdr + 60, len);
		off += 60 + len + (len & 1);
	}
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed)
{
	size = LLVMFuzzerMutate(data, size, max_size);
	if (seed % 8 != 0)
		fix_deb(data, size);
	return size;
}

#endif
