/* fsroot.c - resolving paths beneath an installation root.
 *
 * Two resolvers with one behaviour: the kernel's openat2(RESOLVE_IN_ROOT),
 * and walk(), which does the same in user space one component at a time.
 * walk() only ever calls openat() with O_NOFOLLOW on a name without a slash,
 * from a directory fd it reached from the root, and handles ".." with its
 * own stack of those fds, so no symlink or ".." is ever resolved by the
 * kernel on its behalf.
 *
 * O_CREAT through a dangling symlink creates the link's target, resolved
 * inside the root like any other symlink (as open(2) would in a chroot);
 * O_CREAT|O_EXCL never follows a symlink in the last component (EEXIST).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef HAVE_LINUX_OPENAT2_H
#include <linux/openat2.h>
#endif

#include "fsroot.h"

#if defined(HAVE_LINUX_OPENAT2_H) && defined(SYS_openat2)
#define USE_OPENAT2 1
#endif

/* Paths in messages are cut after this many bytes, so that a path near
 * PATH_MAX leaves room in the message for the cause. */
#define MSG_PATH_MAX 200

/* The kernel's limit, so that both resolvers fail on the same paths. */
#define MAX_SYMLINKS 40

/* openat2 reports EAGAIN when a concurrent rename might have let ".."
 * escape; it is safe to try again. */
#define OPENAT2_RETRIES 16

struct unpkg_root {
	int fd;
	int openat2;
};

/* Returns a new fd, or -1 with errno set. */
static int sys_openat2(int dirfd, const char *path, int flags, mode_t mode)
{
#ifdef USE_OPENAT2
	struct open_how how;
	int fd, tries = 0;

	memset(&how, 0, sizeof(how));
	how.flags = (unsigned int)flags;
	how.mode = mode;
	how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
	do {
		fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	} while (fd < 0 && (errno == EINTR ||
			    (errno == EAGAIN && ++tries < OPENAT2_RETRIES)));
	return fd;
#else
	(void)dirfd;
	(void)path;
	(void)flags;
	(void)mode;
	errno = ENOSYS;
	return -1;
#endif
}

static int xopenat(int dirfd, const char *name, int flags, mode_t mode)
{
	int fd;

	do {
		fd = openat(dirfd, name, flags, mode);
	} while (fd < 0 && errno == EINTR);
	return fd;
}

/* Replace the walk's remaining path with the symlink body `target` followed
 * by `next` (what came after the link).  An absolute target restarts at
 * the root, so every fd above it on the stack is closed. */
static int reroute(char **buf, const char *target, size_t tlen,
		  const char *next, int *stack, size_t *depth)
{
	size_t nlen = strlen(next);
	char *nbuf;

	nbuf = malloc(tlen + nlen + 1);
	if (nbuf == NULL)
		return -1;
	memcpy(nbuf, target, tlen);
	memcpy(nbuf + tlen, next, nlen + 1);
	free(*buf);
	*buf = nbuf;
	if (target[0] == '/') {
		while (*depth > 1)
			close(stack[--*depth]);
	}
	return 0;
}

/* Resolve `path` beneath the root by hand and open it with `flags`.
 * stack[0] is the root's fd (borrowed); stack[1..depth) are O_PATH fds of
 * the directories walked into, owned here.  `rest` always points into
 * `buf` at the part of the path still to resolve. */
static int walk(const struct unpkg_root *root, const char *path, int flags,
		mode_t mode, struct unpkg_err *err)
{
	char target[PATH_MAX];
	char *buf = NULL;
	const char *rest;
	int *stack = NULL;
	size_t depth = 1, cap = 16;
	int fd = -1, linkfd = -1, nlinks = 0, ret = -1;

	buf = strdup(path);
	stack = malloc(cap * sizeof(*stack));
	if (buf == NULL || stack == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	stack[0] = root->fd;
	rest = buf;
	if (strlen(path) >= PATH_MAX) {
		errno = ENAMETOOLONG;
		goto out;
	}

	for (;;) {
		const char *next;
		char name[NAME_MAX + 1];
		size_t len;
		ssize_t tlen;
		struct stat st;
		int cur, last, dot, fl, follow;

		rest += strspn(rest, "/");
		len = strcspn(rest, "/");
		next = rest + len;
		last = next[strspn(next, "/")] == '\0';
		if (len > NAME_MAX) {
			errno = ENAMETOOLONG;
			goto out;
		}
		memcpy(name, rest, len);
		name[len] = '\0';
		if (strcmp(name, "..") == 0 && depth > 1)
			close(stack[--depth]);
		cur = stack[depth - 1];
		dot = len == 0 || strcmp(name, ".") == 0 ||
		      strcmp(name, "..") == 0;

		if (!last) {
			rest = next;
			if (dot)
				continue;
			fd = xopenat(cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC,
				     0);
			if (fd < 0 || fstat(fd, &st) < 0)
				goto out;
			if (S_ISDIR(st.st_mode)) {
				if (depth == cap) {
					int *n = realloc(stack, 2 * cap *
							 sizeof(*stack));

					if (n == NULL) {
						unpkg_err_nomem(err);
						goto out;
					}
					stack = n;
					cap *= 2;
				}
				stack[depth++] = fd;
				fd = -1;
				continue;
			}
			if (!S_ISLNK(st.st_mode)) {
				errno = ENOTDIR;
				goto out;
			}
			linkfd = fd;
			fd = -1;
		} else {
			/* The last component, opened for real.  "." and ".."
			 * are opened as "." so that O_CREAT gives the
			 * kernel's own EISDIR or EEXIST. */
			if (dot)
				strcpy(name, ".");
			fl = flags | O_NOFOLLOW | O_CLOEXEC;
			follow = !dot && !(flags & O_NOFOLLOW);
			/* Like the kernel: a trailing slash asks for a
			 * directory, follows a final symlink, and cannot
			 * name a file to create. */
			if (!dot && *next != '\0') {
				if (flags & O_CREAT) {
					errno = EISDIR;
					goto out;
				}
				fl |= O_DIRECTORY;
				follow = 1;
			}
			fd = xopenat(cur, name, fl, mode);
			if (!follow)
				break;
			if (fd >= 0) {
				/* Only O_PATH opens a symlink itself. */
				if (!(fl & O_PATH))
					break;
				if (fstat(fd, &st) < 0)
					goto out;
				if (!S_ISLNK(st.st_mode))
					break;
				linkfd = fd;
				fd = -1;
			} else if (errno != ELOOP && errno != ENOTDIR) {
				goto out;
			}
		}

		/* The component is a symlink to follow: linkfd is an O_PATH
		 * fd of it, or else the final open refused it (ELOOP, or
		 * ENOTDIR with O_DIRECTORY) and readlinkat() tells whether
		 * that was because it is a symlink. */
		if (linkfd >= 0) {
			tlen = readlinkat(linkfd, "", target, sizeof(target));
			if (tlen < 0)
				goto out;
			close(linkfd);
			linkfd = -1;
		} else {
			int saved = errno;

			tlen = readlinkat(cur, name, target, sizeof(target));
			if (tlen < 0) {
				errno = saved;
				goto out;
			}
		}
		if ((size_t)tlen == sizeof(target)) {
			errno = ENAMETOOLONG;
			goto out;
		}
		if (tlen == 0) {
			errno = ENOENT;
			goto out;
		}
		if (++nlinks > MAX_SYMLINKS) {
			errno = ELOOP;
			goto out;
		}
		if (reroute(&buf, target, (size_t)tlen, next, stack,
			    &depth) < 0) {
			unpkg_err_nomem(err);
			goto out;
		}
		rest = buf;
	}
	ret = fd;
	fd = -1;
out:
	/* errno is still the failure's; after a recorded ENOMEM, a no-op. */
	if (ret < 0)
		unpkg_err_sys(err, "cannot open %.*s%s", MSG_PATH_MAX, path,
			      strlen(path) > MSG_PATH_MAX ? "..." : "");
	if (fd >= 0)
		close(fd);
	if (linkfd >= 0)
		close(linkfd);
	while (stack != NULL && depth > 1)
		close(stack[--depth]);
	free(stack);
	free(buf);
	return ret;
}

int unpkg_root_open(const char *path, unsigned int flags,
		    struct unpkg_root **out, struct unpkg_err *err)
{
	struct unpkg_root *root = NULL;
	int fd = -1, ret = -1;

	*out = NULL;
	if (flags & ~(unsigned int)UNPKG_ROOT_NO_OPENAT2) {
		unpkg_err_set(err, UNPKG_ERR_USAGE, "unknown root flags %#x",
			      flags);
		goto out;
	}
	root = malloc(sizeof(*root));
	if (root == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	root->fd = -1;
	root->openat2 = 0;
	do {
		root->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	} while (root->fd < 0 && errno == EINTR);
	if (root->fd < 0) {
		unpkg_err_sys(err, "cannot open root %s", path);
		goto out;
	}
	if (!(flags & UNPKG_ROOT_NO_OPENAT2)) {
		/* The root was just opened, so openat2 failing on "." with
		 * ENOSYS, EPERM or EACCES means the kernel lacks it or a
		 * seccomp filter forbids it, and the walk must do. */
		fd = sys_openat2(root->fd, ".", O_PATH | O_CLOEXEC, 0);
		if (fd >= 0)
			root->openat2 = 1;
		else if (errno != ENOSYS && errno != EPERM && errno != EACCES) {
			unpkg_err_sys(err, "cannot open root %s", path);
			goto out;
		}
	}
	*out = root;
	root = NULL;
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	unpkg_root_free(root);
	return ret;
}

void unpkg_root_free(struct unpkg_root *root)
{
	if (root == NULL)
		return;
	if (root->fd >= 0)
		close(root->fd);
	free(root);
}

int unpkg_root_fd(const struct unpkg_root *root)
{
	return root->fd;
}

int unpkg_root_has_openat2(const struct unpkg_root *root)
{
	return root->openat2;
}

int unpkg_root_openat(struct unpkg_root *root, const char *relpath, int flags,
		      int mode, struct unpkg_err *err)
{
	mode_t m = 0;
	int fd;

	/* Normalise as open(2) does, since openat2 would reject what open
	 * silently ignores. */
	if (flags & O_PATH)
		flags &= O_PATH | O_DIRECTORY | O_NOFOLLOW;
	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
		m = (mode_t)mode & 07777;
	if (!root->openat2)
		return walk(root, relpath, flags, m, err);
	fd = sys_openat2(root->fd, relpath[0] == '\0' ? "." : relpath,
			 flags | O_CLOEXEC, m);
	if (fd < 0)
		return unpkg_err_sys(err, "cannot open %.*s%s", MSG_PATH_MAX,
				     relpath,
				     strlen(relpath) > MSG_PATH_MAX ? "..." : "");
	return fd;
}

int unpkg_root_open_parent(struct unpkg_root *root, const char *relpath,
			   const char **base, struct unpkg_err *err)
{
	const char *end = relpath + strlen(relpath);
	const char *b;
	char *dir = NULL;
	int ret = -1;

	*base = NULL;
	while (end > relpath && end[-1] == '/')
		end--;
	b = end;
	while (b > relpath && b[-1] != '/')
		b--;
	if (b == end || (end - b == 1 && b[0] == '.') ||
	    (end - b == 2 && b[0] == '.' && b[1] == '.')) {
		unpkg_err_set(err, UNPKG_ERR_USAGE,
			      "no file name at the end of \"%s\"", relpath);
		goto out;
	}
	dir = strndup(relpath, (size_t)(b - relpath));
	if (dir == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	ret = unpkg_root_openat(root, dir, O_RDONLY | O_DIRECTORY, 0, err);
	if (ret >= 0)
		*base = b;
out:
	free(dir);
	return ret;
}
