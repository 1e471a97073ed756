/* imgfs-log.h - the binary write log of imgfs (version 1): constants and
 * little-endian field access, shared by the writer (imgfs.c) and the reader
 * (imgfs-log.c).  The format itself is described at the top of imgfs.c and
 * in doc/benchmarks.md. */
#ifndef IMGFS_LOG_H
#define IMGFS_LOG_H

#include <stdint.h>

#define IMGFS_LOG_MAGIC "IMGFSLOG"	/* 8 bytes, no terminator stored */
#define IMGFS_LOG_VERSION 1u
#define IMGFS_LOG_FILE_HEADER 32u	/* bytes */
#define IMGFS_LOG_RECORD_HEADER 32u	/* bytes */

/* File header flags. */
#define IMGFS_LOG_F_ZERO_START 0x1u	/* the image held only zeros at start */

/* Record types. */
enum imgfs_rec_type {
	IMGFS_REC_WRITE = 1,	/* LENGTH bytes of data follow the header */
	IMGFS_REC_FLUSH = 2,	/* device cache flush (fsync/fdatasync) */
	IMGFS_REC_DISCARD = 3,	/* punch hole: the range now reads as zeros */
	IMGFS_REC_ZERO = 4,	/* zero range: the range now reads as zeros */
	IMGFS_REC_END = 5,	/* clean end of the log, always the last record */
};

/* Record flags. */
#define IMGFS_REC_F_DATASYNC 0x1u	/* FLUSH: was an fdatasync */

static inline void imgfs_put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static inline void imgfs_put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint32_t imgfs_get32(const unsigned char *p)
{
	uint32_t v = 0;
	for (int i = 3; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static inline uint64_t imgfs_get64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

#endif
