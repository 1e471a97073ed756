/* copyup.c - copying an overlayfs's lower-layer files up ahead of time,
 * many at once (see copyup.h). */
#include "config.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <unistd.h>

#include "copyup.h"
#include "err.h"

struct job {
	struct unpkg_root *root;
	const char *const *paths;
	size_t n;
	atomic_size_t next;	/* the next path to take */
	atomic_size_t done;	/* regular files whose times were set */
};

/* Set the times of `path` to its own, if it is a regular file: 1 if they
 * were set, 0 if not. */
static int copy_up(struct unpkg_root *root, const char *path)
{
	struct timespec times[2];
	struct unpkg_err ignored;
	struct stat st;
	const char *base;
	int dfd, ok = 0;

	unpkg_err_init(&ignored);
	dfd = unpkg_root_open_parent(root, path + 1, &base, &ignored);
	if (dfd < 0)
		return 0;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(st.st_mode)) {
		times[0] = st.st_atim;
		times[1] = st.st_mtim;
		ok = utimensat(dfd, base, times, AT_SYMLINK_NOFOLLOW) == 0;
	}
	close(dfd);
	return ok;
}

static void *work(void *arg)
{
	struct job *j = arg;
	size_t i;

	while ((i = atomic_fetch_add(&j->next, 1)) < j->n)
		if (copy_up(j->root, j->paths[i]))
			atomic_fetch_add(&j->done, 1);
	return NULL;
}

size_t unpkg_copyup(struct unpkg_root *root, const char *const *paths,
		    size_t n)
{
	pthread_t threads[UNPKG_COPYUP_THREADS - 1];
	size_t want = n < UNPKG_COPYUP_THREADS ? n : UNPKG_COPYUP_THREADS;
	size_t started = 0, i;
	struct job j = { .root = root, .paths = paths, .n = n };
	sigset_t all, old;
	pthread_attr_t attr;
	int attr_ok;

	atomic_init(&j.next, 0);
	atomic_init(&j.done, 0);
	/* small stacks: a thread resolves one path at a time */
	attr_ok = pthread_attr_init(&attr) == 0;
	if (attr_ok && pthread_attr_setstacksize(&attr, 256 * 1024) != 0) {
		pthread_attr_destroy(&attr);
		attr_ok = 0;
	}
	/* signals are for the caller's thread */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (started + 1 < want &&
	       pthread_create(&threads[started], attr_ok ? &attr : NULL, work,
			      &j) == 0)
		started++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (attr_ok)
		pthread_attr_destroy(&attr);
	/* the caller's thread takes its share, or all of it */
	work(&j);
	for (i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	return atomic_load(&j.done);
}
