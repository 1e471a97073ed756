/* check_io.c - unpkg_write_all(): every byte written through short writes
 * and interrupted ones, and the error that stops it; starting and waiting
 * for a file's writeback, directly and through an overlayfs. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io.h"
#include "testutil.h"

enum { BIG = 4 << 20 };

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

/* A pipe whose reader starts late: the writer blocks on a full pipe while
 * a timer interrupts it (no SA_RESTART), so write(2) returns early, with
 * part of the data or with EINTR, and the loop must go on. */
START_TEST(test_interrupted)
{
	struct sigaction sa, old;
	struct itimerval it = { { 0, 2000 }, { 0, 2000 } }, off = { 0 };
	unsigned char *buf = malloc(BIG);
	int fds[2], status;
	pid_t pid;
	size_t i;

	ck_assert_ptr_nonnull(buf);
	for (i = 0; i < BIG; i++)
		buf[i] = (unsigned char)(i * 7 + i / 4096);
	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* the reader: late, then every byte compared */
		unsigned char chunk[65536];
		size_t got = 0;
		ssize_t n;

		close(fds[1]);
		usleep(100000);
		while ((n = read(fds[0], chunk, sizeof(chunk))) > 0) {
			for (ssize_t k = 0; k < n; k++)
				if (got + (size_t)k >= BIG ||
				    chunk[k] != buf[got + (size_t)k])
					_exit(2);
			got += (size_t)n;
		}
		_exit(n == 0 && got == BIG ? 0 : 3);
	}
	close(fds[0]);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	ck_assert_int_eq(sigaction(SIGALRM, &sa, &old), 0);
	ck_assert_int_eq(setitimer(ITIMER_REAL, &it, NULL), 0);
	ck_assert_int_eq(unpkg_write_all(fds[1], buf, BIG), 0);
	ck_assert_int_eq(setitimer(ITIMER_REAL, &off, NULL), 0);
	ck_assert_int_eq(sigaction(SIGALRM, &old, NULL), 0);
	close(fds[1]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert_int_gt(alarms, 0);	/* the writer was interrupted */
	free(buf);
}
END_TEST

/* A file size limit makes the first write short and the next one fail:
 * -1 with that write's errno, and what fitted is in the file. */
START_TEST(test_short_then_error)
{
	char path[] = "/tmp/check_io.XXXXXX";
	char buf[10000];
	struct rlimit lim = { 4096, 4096 };
	struct stat st;
	int fd, status;
	pid_t pid;

	memset(buf, 'x', sizeof(buf));
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
			_exit(4);
		if (unpkg_write_all(fd, buf, sizeof(buf)) != -1)
			_exit(5);
		_exit(errno == EFBIG ? 0 : 6);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_eq(st.st_size, 4096);
	close(fd);
	unlink(path);
}
END_TEST

START_TEST(test_nothing)
{
	ck_assert_int_eq(unpkg_write_all(-1, "", 0), 0);
	ck_assert_int_eq(unpkg_write_all(-1, "x", 1), -1);
	ck_assert_int_eq(errno, EBADF);
}
END_TEST

/* Both paths (_i: enum unpkg_wb_path) on a regular file and a pipe.  A
 * regular file's writeback is started and waited for without fdatasync
 * (where the overlay's FIEMAP is missing, as on a tmpfs, with one
 * instead); a pipe cannot be served: its start fails as unsupported, its
 * wait falls back to fdatasync, whose failure is reported as its own; a
 * bad descriptor is an error. */
START_TEST(test_wait_written)
{
	const enum unpkg_wb_path wb = (enum unpkg_wb_path)_i;
	char path[] = "/tmp/check_io.XXXXXX";
	unsigned long waits = 0, syncs = 0;
	const char *failed = NULL;
	int fd, p[2];

	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(unpkg_write_all(fd, "data\n", 5), 0);
	ck_assert_int_eq(unpkg_writeback_start(fd, wb), 0);
	ck_assert_int_eq(unpkg_wait_written(fd, wb, &waits, &syncs, &failed),
			 0);
	ck_assert_uint_eq(waits, 1);
	ck_assert_uint_le(syncs, wb == UNPKG_WB_OVERLAY);
	close(fd);
	unlink(path);
	syncs = 0;
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(unpkg_writeback_start(p[1], wb), -1);
	ck_assert(unpkg_writeback_unsupported(errno));
	ck_assert_int_eq(unpkg_wait_written(p[1], wb, &waits, &syncs,
					    &failed), -1);
	ck_assert_str_eq(failed, "fdatasync");
	ck_assert_uint_eq(waits, 2);
	ck_assert_uint_eq(syncs, 1);
	close(p[0]);
	close(p[1]);
	ck_assert_int_eq(unpkg_wait_written(-1, wb, &waits, &syncs, &failed),
			 -1);
	ck_assert_int_eq(errno, EBADF);
	ck_assert_str_eq(failed, "write back");
	ck_assert_uint_eq(syncs, 1);
	ck_assert(unpkg_writeback_unsupported(ENOSYS));
	ck_assert(unpkg_writeback_unsupported(EOPNOTSUPP));
	ck_assert(!unpkg_writeback_unsupported(EIO));
}
END_TEST

#ifndef SYS_cachestat
#define SYS_cachestat 451	/* the same number on every architecture */
#endif

/* The pages of the file `path` that are dirty and under writeback
 * (cachestat(2), Linux 6.5).  0, or -1 with errno set. */
static int page_state(const char *path, unsigned long long *dirty,
		      unsigned long long *writeback)
{
	struct {
		uint64_t off, len;
	} range = { 0, 0 };
	struct {
		uint64_t cache, dirty, writeback, evicted, recent;
	} st = { 0 };
	int fd, rc, e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rc = (int)syscall(SYS_cachestat, fd, &range, &st, 0);
	e = errno;
	close(fd);
	errno = e;
	*dirty = st.dirty;
	*writeback = st.writeback;
	return rc;
}

/* `n` bytes written into the new file `path`, its descriptor returned. */
static int write_new(const char *path, size_t n)
{
	static char block[1 << 16];
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	memset(block, 'x', sizeof(block));
	for (; n > 0; n -= sizeof(block))
		ck_assert_int_eq(unpkg_write_all(fd, block, sizeof(block)), 0);
	return fd;
}

/* Through a real overlayfs whose upper layer is on $TMPDIR's file system
 * (root): the upper file's dirty pages are what counts, since the overlay
 * keeps none of its own.  The overlay's path starts their writeback, and
 * its wait leaves none dirty nor under writeback, without fdatasync. */
START_TEST(test_overlay_writeback)
{
	char *top = tu_mkdtemp(), dirs[4][4096];
	static const char *const names[] = { "lower", "upper", "work", "ovl" };
	unsigned long long dirty, wb;
	unsigned long waits = 0, syncs = 0;
	const char *failed = NULL, *why;
	int i, fd, rc;

	for (i = 0; i < 4; i++)
		snprintf(dirs[i], sizeof(dirs[i]), "%s/%s", top, names[i]);
	if (tu_overlay_mount(top, NULL, &why) < 0) {
		tu_skip_part("writeback through an overlayfs", why);
		goto out;
	}
	snprintf(dirs[3] + strlen(dirs[3]), sizeof(dirs[3]) - strlen(dirs[3]),
		 "/started");
	snprintf(dirs[1] + strlen(dirs[1]), sizeof(dirs[1]) - strlen(dirs[1]),
		 "/started");
	fd = write_new(dirs[3], BIG);
	rc = page_state(dirs[1], &dirty, &wb);
	ck_assert_msg(rc == 0 || errno == ENOSYS, "cachestat: %s",
		      strerror(errno));
	if (rc != 0 || dirty == 0) {
		tu_skip_part("writeback through an overlayfs",
			     rc != 0 ? "no cachestat(2) (Linux 6.5)"
				     : "the upper layer keeps no dirty pages "
				       "(a tmpfs)");
		close(fd);
		goto unmount;
	}
	ck_assert_int_eq(unpkg_writeback_start(fd, UNPKG_WB_OVERLAY), 0);
	ck_assert_int_eq(page_state(dirs[1], &dirty, &wb), 0);
	ck_assert_msg(dirty == 0, "%llu pages still dirty after the start",
		      dirty);
	ck_assert_int_eq(unpkg_wait_written(fd, UNPKG_WB_OVERLAY, &waits,
					    &syncs, &failed), 0);
	ck_assert_int_eq(page_state(dirs[1], &dirty, &wb), 0);
	ck_assert_msg(dirty == 0 && wb == 0, "after the wait: %llu dirty, "
		      "%llu under writeback", dirty, wb);
	ck_assert_uint_eq(waits, 1);
	ck_assert_uint_eq(syncs, 0);
	close(fd);

	/* the wait alone writes back too */
	strcpy(strrchr(dirs[3], '/'), "/waited");
	strcpy(strrchr(dirs[1], '/'), "/waited");
	fd = write_new(dirs[3], BIG);
	ck_assert_int_eq(unpkg_wait_written(fd, UNPKG_WB_OVERLAY, &waits,
					    &syncs, &failed), 0);
	ck_assert_int_eq(page_state(dirs[1], &dirty, &wb), 0);
	ck_assert_msg(dirty == 0 && wb == 0, "after the wait alone: %llu "
		      "dirty, %llu under writeback", dirty, wb);
	ck_assert_uint_eq(syncs, 0);
	close(fd);
unmount:
	strrchr(dirs[3], '/')[0] = '\0';
	ck_assert_int_eq(umount(dirs[3]), 0);
out:
	tu_rm_rf(top);
	free(top);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("io");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_interrupted);
	tcase_add_test(tc, test_short_then_error);
	tcase_add_test(tc, test_nothing);
	tcase_add_loop_test(tc, test_wait_written, UNPKG_WB_RANGE,
			    UNPKG_WB_OVERLAY + 1);
	tcase_add_test(tc, test_overlay_writeback);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
