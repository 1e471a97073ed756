/* check_io.c - unpkg_write_all(): every byte written through short writes
 * and interrupted ones, and the error that stops it. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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

/* A regular file's writeback is waited for; where sync_file_range cannot
 * serve (a pipe), fdatasync, whose failure is reported as its own; a bad
 * descriptor is an error. */
START_TEST(test_wait_written)
{
	char path[] = "/tmp/check_io.XXXXXX";
	unsigned long waits = 0, syncs = 0;
	const char *failed = NULL;
	int fd, p[2];

	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(unpkg_write_all(fd, "data\n", 5), 0);
	ck_assert_int_eq(unpkg_wait_written(fd, &waits, &syncs, &failed), 0);
	ck_assert_uint_eq(waits, 1);
	ck_assert_uint_eq(syncs, 0);
	close(fd);
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(unpkg_wait_written(p[1], &waits, &syncs, &failed),
			 -1);
	ck_assert_str_eq(failed, "fdatasync");
	ck_assert_uint_eq(waits, 2);
	ck_assert_uint_eq(syncs, 1);
	close(p[0]);
	close(p[1]);
	ck_assert_int_eq(unpkg_wait_written(-1, &waits, &syncs, &failed), -1);
	ck_assert_int_eq(errno, EBADF);
	ck_assert_str_eq(failed, "write back");
	ck_assert_uint_eq(syncs, 1);
	ck_assert(unpkg_writeback_unsupported(ENOSYS));
	ck_assert(unpkg_writeback_unsupported(EOPNOTSUPP));
	ck_assert(!unpkg_writeback_unsupported(EIO));
	unlink(path);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("io");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_interrupted);
	tcase_add_test(tc, test_short_then_error);
	tcase_add_test(tc, test_nothing);
	tcase_add_test(tc, test_wait_written);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
