/* script.c - running maintainer scripts the way dpkg 1.21 does.
 *
 * Everything the child needs (paths, argv, envp) is prepared before the
 * fork, so that between fork and exec the child only makes system calls
 * (chroot, chdir, umask, execve, write, _exit): that is safe even when the
 * caller has other threads.  A failure there is reported to the parent
 * through a close-on-exec pipe: the parent reads nothing when the exec
 * succeeded.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsroot.h"
#include "force.h"
#include "io.h"
#include "script.h"

extern char **environ;

#define TMPCI "tmp.ci"
/* What glibc's execvp falls back to for a file the kernel cannot run. */
#define FALLBACK_SHELL "/bin/sh"

/* The steps of the child that can fail. */
enum child_step { STEP_CHROOT = 1, STEP_CHDIR, STEP_EXEC };

struct child_report {
	int step;
	int errnum;
};

/* Everything the child uses, built before the fork. */
struct plan {
	const char *chroot_dir;	/* NULL: no chroot */
	const char *chdir_dir;
	char *exec_path;	/* the script as the child sees it */
	char **argv;		/* exec_path, args... */
	char **sh_argv;		/* FALLBACK_SHELL, exec_path, args... */
	char **envp;
	char **owned;		/* strings of envp allocated here */
	size_t n_owned;
};

char *unpkg_script_desc(char *buf, size_t size, const char *which,
			const char *package, const char *name)
{
	static const char *const kinds[][2] = {
		{ "preinst", "pre-installation" },
		{ "postinst", "post-installation" },
		{ "prerm", "pre-removal" },
		{ "postrm", "post-removal" },
	};
	const char *kind = name;
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(name, kinds[i][0]) == 0)
			kind = kinds[i][1];
	if (size > 0)
		snprintf(buf, size, "%s %s package %s script", which, package,
			 kind);
	return buf;
}

int unpkg_script_failure(const struct unpkg_script_result *res,
			 const char *desc, char *buf, size_t size)
{
	if (size > 0)
		buf[0] = '\0';
	if (!res->ran || res->status == 0)
		return 0;
	if (desc == NULL)
		desc = "maintainer script";
	if (size == 0)
		return 1;
	if (res->signo != 0)
		snprintf(buf, size, "%s subprocess was killed by signal (%s)%s",
			 desc, strsignal(res->signo),
			 res->core_dumped ? ", core dumped" : "");
	else
		snprintf(buf, size, "%s subprocess returned error exit status %d",
			 desc, res->status);
	return 1;
}

/* The next path component of *p (skipping slashes and "." components):
 * sets *len and returns its start, or NULL at the end. */
static const char *next_component(const char **p, size_t *len)
{
	const char *s = *p;

	for (;;) {
		while (*s == '/')
			s++;
		if (*s == '\0') {
			*p = s;
			return NULL;
		}
		*len = strcspn(s, "/");
		*p = s + *len;
		if (!(*len == 1 && s[0] == '.'))
			return s;
		s = *p;
	}
}

/* Whether a path names the root directory ("/", "//", "/./"). */
static int is_slash(const char *path)
{
	size_t len;

	return path[0] == '/' && next_component(&path, &len) == NULL;
}

static int not_inside(const char *instdir, const char *admindir,
		      struct unpkg_err *err)
{
	return unpkg_err_set(err, UNPKG_ERR_USAGE,
			     "admindir %s is not inside instdir %s", admindir,
			     instdir);
}

static int too_long(const char *admindir, struct unpkg_err *err)
{
	return unpkg_err_set(err, UNPKG_ERR_USAGE, "admindir %s is too long",
			     admindir);
}

int unpkg_script_admindir_in_root(const char *instdir, const char *admindir,
				  char *buf, size_t size,
				  struct unpkg_err *err)
{
	const char *i = instdir, *a = admindir, *ic, *ac;
	size_t ilen = 0, alen = 0, len = 0;

	if (is_slash(instdir)) {
		if (strlen(admindir) >= size)
			return too_long(admindir, err);
		memcpy(buf, admindir, strlen(admindir) + 1);
		return 0;
	}
	if ((instdir[0] == '/') != (admindir[0] == '/'))
		return not_inside(instdir, admindir, err);
	while ((ic = next_component(&i, &ilen)) != NULL) {
		ac = next_component(&a, &alen);
		if (ac == NULL || alen != ilen || memcmp(ac, ic, ilen) != 0)
			return not_inside(instdir, admindir, err);
	}
	if (size < 2)
		return too_long(admindir, err);
	buf[0] = '/';
	buf[1] = '\0';
	while ((ac = next_component(&a, &alen)) != NULL) {
		if (len + 1 + alen >= size)
			return too_long(admindir, err);
		buf[len++] = '/';
		memcpy(buf + len, ac, alen);
		len += alen;
		buf[len] = '\0';
	}
	return 0;
}

/* A relative path without "..", "" or absolute names. */
static int valid_script_path(const char *script)
{
	const char *p = script, *c;
	size_t len;

	if (script[0] == '\0' || script[0] == '/')
		return 0;
	while ((c = next_component(&p, &len)) != NULL)
		if (len == 2 && c[0] == '.' && c[1] == '.')
			return 0;
	return script[strlen(script) - 1] != '/';
}

static char *join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *s;

	while (la > 0 && a[la - 1] == '/')
		la--;
	s = malloc(la + 1 + lb + 1);
	if (s == NULL)
		return NULL;
	memcpy(s, a, la);
	s[la] = '/';
	memcpy(s + la + 1, b, lb + 1);
	return s;
}

static void plan_destroy(struct plan *pl)
{
	size_t i;

	free(pl->exec_path);
	free(pl->argv);
	free(pl->sh_argv);
	free(pl->envp);
	for (i = 0; i < pl->n_owned; i++)
		free(pl->owned[i]);
	free(pl->owned);
}

/* The length of the name of "NAME=VALUE". */
static size_t env_name_len(const char *entry)
{
	return strcspn(entry, "=");
}

static int same_name(const char *a, const char *b)
{
	size_t n = env_name_len(a);

	return n == env_name_len(b) && memcmp(a, b, n) == 0;
}

/* Whether `entry` is overridden by one of set[0..n). */
static int overridden(const char *entry, char *const *set, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (same_name(entry, set[i]))
			return 1;
	return 0;
}

static int add_var(struct plan *pl, const char *name, const char *value)
{
	size_t len = strlen(name) + 1 + strlen(value) + 1;
	char *s = malloc(len);

	if (s == NULL)
		return -1;
	snprintf(s, len, "%s=%s", name, value);
	pl->owned[pl->n_owned++] = s;
	return 0;
}

/* The caller's environment, then the DPKG_* variables, then ctx->env;
 * a later entry replaces an earlier one of the same name. */
static int build_env(struct plan *pl, const struct unpkg_script_ctx *ctx,
		     const char *name, const char *root_env,
		     const char *admin_env, struct unpkg_err *err)
{
	char refcount[16], force[512];
	size_t n_environ = 0, n_extra = 0, n = 0, i;

	for (i = 0; environ != NULL && environ[i] != NULL; i++)
		n_environ++;
	for (i = 0; ctx->env != NULL && ctx->env[i] != NULL; i++)
		n_extra++;
	pl->owned = calloc(9 + n_extra, sizeof(*pl->owned));
	pl->envp = calloc(n_environ + 9 + n_extra + 1, sizeof(*pl->envp));
	if (pl->owned == NULL || pl->envp == NULL)
		return unpkg_err_nomem(err);

	snprintf(refcount, sizeof(refcount), "%d",
		 ctx->refcount > 0 ? ctx->refcount : 1);
	if (ctx->force == NULL) {
		unsigned int defaults = 0;

		/* no DPKG_FORCE to parse: cannot fail */
		unpkg_force_initial(NULL, &defaults, err);
		unpkg_force_names(defaults, force, sizeof(force));
	}
	if (add_var(pl, "DPKG_MAINTSCRIPT_PACKAGE", ctx->package) < 0 ||
	    add_var(pl, "DPKG_MAINTSCRIPT_PACKAGE_REFCOUNT", refcount) < 0 ||
	    add_var(pl, "DPKG_MAINTSCRIPT_ARCH", ctx->arch) < 0 ||
	    add_var(pl, "DPKG_MAINTSCRIPT_NAME", name) < 0 ||
	    add_var(pl, "DPKG_MAINTSCRIPT_DEBUG", "0") < 0 ||
	    add_var(pl, "DPKG_RUNNING_VERSION", UNPKG_SCRIPT_DPKG_VERSION) < 0 ||
	    add_var(pl, "DPKG_ROOT", root_env) < 0 ||
	    add_var(pl, "DPKG_ADMINDIR", admin_env) < 0 ||
	    add_var(pl, "DPKG_FORCE",
		    ctx->force != NULL ? ctx->force : force) < 0)
		return unpkg_err_nomem(err);

	for (i = 0; i < n_environ; i++) {
		if (overridden(environ[i], pl->owned, pl->n_owned) ||
		    (ctx->env != NULL &&
		     overridden(environ[i], (char *const *)ctx->env, n_extra)))
			continue;
		pl->envp[n++] = environ[i];
	}
	for (i = 0; i < pl->n_owned; i++)
		if (ctx->env == NULL ||
		    !overridden(pl->owned[i], (char *const *)ctx->env, n_extra))
			pl->envp[n++] = pl->owned[i];
	for (i = 0; i < n_extra; i++) {
		size_t j;

		/* Within ctx->env the last entry of a name wins. */
		for (j = i + 1; j < n_extra; j++)
			if (same_name(ctx->env[i], ctx->env[j]))
				break;
		if (j == n_extra)
			pl->envp[n++] = (char *)ctx->env[i];
	}
	pl->envp[n] = NULL;
	return 0;
}

static int build_argv(struct plan *pl, const char *const *args,
		      struct unpkg_err *err)
{
	size_t n = 0, i;

	while (args != NULL && args[n] != NULL)
		n++;
	pl->argv = calloc(n + 2, sizeof(*pl->argv));
	pl->sh_argv = calloc(n + 3, sizeof(*pl->sh_argv));
	if (pl->argv == NULL || pl->sh_argv == NULL)
		return unpkg_err_nomem(err);
	pl->argv[0] = pl->exec_path;
	pl->sh_argv[0] = (char *)FALLBACK_SHELL;
	pl->sh_argv[1] = pl->exec_path;
	for (i = 0; i < n; i++) {
		pl->argv[i + 1] = (char *)args[i];
		pl->sh_argv[i + 2] = (char *)args[i];
	}
	return 0;
}

/* Open the script O_PATH: inside the root (root != NULL, `path` relative
 * to it) or on the host.  Returns the fd, -2 when it does not exist, -1
 * on another error. */
static int open_script(struct unpkg_root *root, const char *path,
		       const char *desc, struct unpkg_err *err)
{
	struct unpkg_err e;
	int fd;

	unpkg_err_init(&e);
	if (root != NULL) {
		fd = unpkg_root_openat(root, path, O_PATH, 0, &e);
		if (fd < 0 && e.errnum == ENOENT)
			return -2;
		if (fd < 0)
			return unpkg_err_errno(err, e.errnum,
					       "unable to stat %s '%s'", desc,
					       path);
		return fd;
	}
	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return -2;
	if (fd < 0)
		return unpkg_err_sys(err, "unable to stat %s '%s'", desc, path);
	return fd;
}

/* dpkg makes a script that is not r-x for everybody mode 0755.  `fd` is
 * an O_PATH descriptor; the chmod goes through /proc, or, where that is
 * not mounted, through the path again (checked to be the same file). */
static int set_execute(int fd, struct unpkg_root *root, const char *path,
		       struct unpkg_err *err)
{
	struct stat st, st2;
	char proc[64];
	int fd2 = -1, ret = -1;

	if (fstat(fd, &st) < 0)
		return unpkg_err_sys(err, "unable to stat '%s'", path);
	if (!S_ISREG(st.st_mode) || (st.st_mode & 0555) == 0555)
		return 0;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (chmod(proc, 0755) == 0)
		return 0;
	if (errno != ENOENT)
		goto fail;
	if (root != NULL)
		fd2 = unpkg_root_openat(root, path, O_RDONLY | O_NONBLOCK |
					O_NOCTTY, 0, err);
	else
		fd2 = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd2 < 0)
		goto fail;
	if (fstat(fd2, &st2) < 0)
		goto fail;
	if (st2.st_dev != st.st_dev || st2.st_ino != st.st_ino) {
		errno = ESTALE;
		goto fail;
	}
	if (fchmod(fd2, 0755) < 0)
		goto fail;
	ret = 0;
	goto out;
fail:
	unpkg_err_sys(err, "unable to set execute permissions on '%s'", path);
out:
	if (fd2 >= 0)
		close(fd2);
	return ret;
}

static void child_fail(int wfd, int step)
{
	struct child_report rep = { .step = step, .errnum = errno };
	ssize_t n;

	do {
		n = write(wfd, &rep, sizeof(rep));
	} while (n < 0 && errno == EINTR);
	_exit(2);
}

static const int ignored_sigs[2] = { SIGINT, SIGQUIT };

/* In the child: never returns.  `saved` are the caller's dispositions of
 * ignored_sigs, given back to the script. */
static void child(const struct plan *pl, const struct sigaction *saved,
		  int wfd)
{
	size_t i;

	for (i = 0; i < 2; i++)
		sigaction(ignored_sigs[i], &saved[i], NULL);
	if (pl->chroot_dir != NULL && chroot(pl->chroot_dir) < 0)
		child_fail(wfd, STEP_CHROOT);
	if (chdir(pl->chdir_dir) < 0)
		child_fail(wfd, STEP_CHDIR);
	umask(022);
	execve(pl->exec_path, pl->argv, pl->envp);
	if (errno == ENOEXEC)
		execve(FALLBACK_SHELL, pl->sh_argv, pl->envp);
	child_fail(wfd, STEP_EXEC);
}

/* Fork, run, wait; fills res.  Returns 0 or -1 (err). */
static int spawn(const struct unpkg_script_ctx *ctx, const struct plan *pl,
		 const char *desc, struct unpkg_script_result *res,
		 struct unpkg_err *err)
{
	struct sigaction ign, saved[2];
	struct child_report rep;
	size_t got = 0;
	int pfd[2] = { -1, -1 };
	int nsaved = 0, status, ret = -1;
	pid_t pid, r;
	ssize_t n;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return unpkg_err_sys(err, "cannot create a pipe for %s", desc);

	/* As dpkg, the caller ignores ^C and ^\ while the script runs (the
	 * script gets them).  dpkg starts ignoring them after the fork; here
	 * it is before, and the child puts the caller's dispositions back,
	 * so that a signal sent by the script at once cannot race. */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	for (; nsaved < 2; nsaved++) {
		if (sigaction(ignored_sigs[nsaved], &ign, &saved[nsaved]) < 0) {
			unpkg_err_sys(err, "unable to ignore signal %s before "
				      "running %s",
				      strsignal(ignored_sigs[nsaved]), desc);
			goto out;
		}
	}
	pid = fork();
	if (pid < 0) {
		unpkg_err_sys(err, "cannot fork for %s", desc);
		goto out;
	}
	if (pid == 0) {
		close(pfd[0]);
		child(pl, saved, pfd[1]);
	}
	close(pfd[1]);
	pfd[1] = -1;

	/* The write end is closed by the exec or by the child's exit. */
	while (got < sizeof(rep)) {
		n = read(pfd[0], (char *)&rep + got, sizeof(rep) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	do {
		r = waitpid(pid, &status, 0);
	} while (r < 0 && errno == EINTR);
	if (r < 0) {
		unpkg_err_sys(err, "wait for %s failed", desc);
		goto out;
	}

	res->ran = 1;
	if (WIFEXITED(status)) {
		res->status = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		res->signo = WTERMSIG(status);
		res->status = 128 + res->signo;
#ifdef WCOREDUMP
		res->core_dumped = WCOREDUMP(status) ? 1 : 0;
#endif
	} else {
		unpkg_err_set(err, UNPKG_ERR_SYS, "%s failed with wait status "
			      "code %d", desc, status);
		goto out;
	}
	if (got == sizeof(rep)) {
		res->child_errno = rep.errnum;
		if (rep.step == STEP_CHROOT)
			unpkg_event_emit(ctx->events, UNPKG_EV_WARNING,
					 ctx->package,
					 "failed to chroot to '%s': %s",
					 pl->chroot_dir, strerror(rep.errnum));
		else if (rep.step == STEP_CHDIR)
			unpkg_event_emit(ctx->events, UNPKG_EV_WARNING,
					 ctx->package,
					 "failed to chdir to '%s': %s",
					 pl->chdir_dir, strerror(rep.errnum));
		else
			unpkg_event_emit(ctx->events, UNPKG_EV_WARNING,
					 ctx->package,
					 "unable to execute %s (%s): %s", desc,
					 pl->exec_path, strerror(rep.errnum));
	}
	ret = 0;
out:
	while (nsaved-- > 0)
		sigaction(ignored_sigs[nsaved], &saved[nsaved], NULL);
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	return ret;
}

/* An absolute form of the host path `path`, for exec after chdir. */
static char *absolute(const char *path)
{
	char cwd[4096];

	if (path[0] == '/')
		return strdup(path);
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return NULL;
	return join(cwd, path);
}

int unpkg_script_run(const struct unpkg_script_ctx *ctx, const char *script,
		     const char *const *argv, const char *desc,
		     struct unpkg_script_result *res, struct unpkg_err *err)
{
	struct plan pl;
	struct unpkg_root *root = NULL;
	char admin_in[4096];
	char *root_env = NULL, *lookup = NULL;
	const char *name, *admin_env, *base;
	int chrooted, inside, fd = -1, ret = -1;

	memset(&pl, 0, sizeof(pl));
	memset(res, 0, sizeof(*res));
	if (desc == NULL)
		desc = "maintainer script";
	if (ctx == NULL || ctx->instdir == NULL || ctx->admindir == NULL ||
	    ctx->package == NULL || ctx->arch == NULL || script == NULL ||
	    !valid_script_path(script))
		return unpkg_err_set(err, UNPKG_ERR_USAGE,
				     "invalid maintainer script call (%s)",
				     script != NULL ? script : "no script");
	base = strrchr(script, '/');
	base = base != NULL ? base + 1 : script;
	name = strrchr(base, '.');
	name = name != NULL ? name + 1 : base;

	chrooted = !ctx->chrootless && !is_slash(ctx->instdir);
	inside = 1;
	if (chrooted) {
		struct unpkg_err e;

		unpkg_err_init(&e);
		if (unpkg_script_admindir_in_root(ctx->instdir, ctx->admindir,
						  admin_in, sizeof(admin_in),
						  &e) < 0)
			inside = 0;
	}

	if (chrooted && inside) {
		pl.exec_path = join(admin_in, script);
		if (pl.exec_path == NULL) {
			unpkg_err_nomem(err);
			goto out;
		}
		if (unpkg_root_open(ctx->instdir, 0, &root, err) < 0)
			goto out;
		fd = open_script(root, pl.exec_path, desc, err);
		pl.chroot_dir = ctx->instdir;
		pl.chdir_dir = "/";
		root_env = strdup("");
		admin_env = admin_in;
	} else {
		lookup = join(ctx->admindir, script);
		pl.exec_path = lookup != NULL ? absolute(lookup) : NULL;
		if (pl.exec_path == NULL) {
			unpkg_err_nomem(err);
			goto out;
		}
		fd = open_script(NULL, pl.exec_path, desc, err);
		pl.chdir_dir = chrooted ? "/" : ctx->instdir;
		if (ctx->chrootless) {
			size_t len = strlen(ctx->instdir);

			while (len > 0 && ctx->instdir[len - 1] == '/')
				len--;
			root_env = strndup(ctx->instdir, len);
		} else {
			root_env = strdup("");
		}
		admin_env = ctx->admindir;
	}
	if (root_env == NULL) {
		unpkg_err_nomem(err);
		goto out;
	}
	if (fd == -2) {
		ret = 0;
		goto out;
	}
	if (fd < 0)
		goto out;
	if (set_execute(fd, root, pl.exec_path, err) < 0)
		goto out;

	if (!inside) {
		/* dpkg's child refuses this and exits with status 2. */
		res->ran = 1;
		res->status = 2;
		res->child_errno = -1;
		unpkg_event_emit(ctx->events, UNPKG_EV_WARNING, ctx->package,
				 "admindir must be inside instdir for dpkg "
				 "to work properly");
		ret = 1;
		goto out;
	}
	if (build_env(&pl, ctx, name, root_env, admin_env, err) < 0 ||
	    build_argv(&pl, argv, err) < 0)
		goto out;
	if (spawn(ctx, &pl, desc, res, err) < 0)
		goto out;
	ret = 1;
out:
	if (fd >= 0)
		close(fd);
	unpkg_root_free(root);
	free(root_env);
	free(lookup);
	plan_destroy(&pl);
	return ret;
}

/* Remove everything inside the directory `dfd` (closed here). */
static int empty_dir(int dfd, const char *what, struct unpkg_err *err)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int ret = -1;

	if (d == NULL) {
		unpkg_err_sys(err, "cannot read %s", what);
		close(dfd);
		return -1;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (de == NULL) {
			if (errno != 0) {
				unpkg_err_sys(err, "cannot read %s", what);
				goto out;
			}
			break;
		}
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == 0)
			continue;
		if (errno == EISDIR || errno == EPERM) {
			int sub = openat(dirfd(d), de->d_name, O_RDONLY |
					 O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub < 0 || empty_dir(sub, what, err) < 0) {
				if (sub < 0)
					unpkg_err_sys(err, "cannot remove "
						      "%s/%s", what,
						      de->d_name);
				goto out;
			}
			if (unlinkat(dirfd(d), de->d_name,
				     AT_REMOVEDIR) == 0)
				continue;
		}
		unpkg_err_sys(err, "cannot remove %s/%s", what, de->d_name);
		goto out;
	}
	ret = 0;
out:
	closedir(d);
	return ret;
}

/* Open ADMINDIR; returns the fd or -1. */
static int open_admindir(const char *admindir, struct unpkg_err *err)
{
	int fd = open(admindir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		unpkg_err_sys(err, "cannot open %s", admindir);
	return fd;
}

/* Remove ADMINDIR/tmp.ci and everything in it; a missing one is fine. */
static int remove_tmpci(int afd, const char *admindir, struct unpkg_err *err)
{
	int fd = openat(afd, TMPCI, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			O_CLOEXEC);

	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		/* Not a directory: whatever it is goes. */
		if ((errno == ENOTDIR || errno == ELOOP) &&
		    unlinkat(afd, TMPCI, 0) == 0)
			return 0;
		return unpkg_err_sys(err, "cannot remove %s/" TMPCI, admindir);
	}
	if (empty_dir(fd, TMPCI, err) < 0) {
		unpkg_err_prefix(err, "%s", admindir);
		return -1;
	}
	if (unlinkat(afd, TMPCI, AT_REMOVEDIR) < 0 && errno != ENOENT)
		return unpkg_err_sys(err, "cannot remove %s/" TMPCI, admindir);
	return 0;
}

int unpkg_script_tmp_prepare(const char *admindir, struct unpkg_err *err)
{
	int afd, ret = -1;

	afd = open_admindir(admindir, err);
	if (afd < 0)
		return -1;
	if (remove_tmpci(afd, admindir, err) < 0)
		goto out;
	if (mkdirat(afd, TMPCI, 0755) < 0) {
		unpkg_err_sys(err, "cannot create %s/" TMPCI, admindir);
		goto out;
	}
	if (fchmodat(afd, TMPCI, 0755, 0) < 0) {
		unpkg_err_sys(err, "cannot chmod %s/" TMPCI, admindir);
		goto out;
	}
	ret = 0;
out:
	close(afd);
	return ret;
}

int unpkg_script_tmp_clean(const char *admindir, struct unpkg_err *err)
{
	int afd, ret;

	afd = open_admindir(admindir, err);
	if (afd < 0)
		return -1;
	ret = remove_tmpci(afd, admindir, err);
	close(afd);
	return ret;
}

int unpkg_script_tmp_write(const char *admindir, const char *name,
			   const void *data, size_t len, unsigned int mode,
			   struct unpkg_err *err)
{
	const char *p = data;
	int afd = -1, dfd = -1, fd = -1, ret = -1;

	if (name[0] == '\0' || strchr(name, '/') != NULL ||
	    strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return unpkg_err_set(err, UNPKG_ERR_USAGE,
				     "invalid control member name \"%s\"",
				     name);
	afd = open_admindir(admindir, err);
	if (afd < 0)
		goto out;
	dfd = openat(afd, TMPCI, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		     O_CLOEXEC);
	if (dfd < 0) {
		unpkg_err_sys(err, "cannot open %s/" TMPCI, admindir);
		goto out;
	}
	if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT) {
		unpkg_err_sys(err, "cannot replace %s/" TMPCI "/%s", admindir,
			      name);
		goto out;
	}
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
	if (fd < 0) {
		unpkg_err_sys(err, "cannot create %s/" TMPCI "/%s", admindir,
			      name);
		goto out;
	}
	if (unpkg_write_all(fd, p, len) < 0) {
		unpkg_err_sys(err, "cannot write %s/" TMPCI "/%s", admindir,
			      name);
		goto out;
	}
	if (fchmod(fd, (mode_t)(mode & 07777)) < 0) {
		unpkg_err_sys(err, "cannot chmod %s/" TMPCI "/%s", admindir,
			      name);
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0 && close(fd) < 0 && ret == 0)
		ret = unpkg_err_sys(err, "cannot write %s/" TMPCI "/%s",
				    admindir, name);
	if (dfd >= 0)
		close(dfd);
	if (afd >= 0)
		close(afd);
	return ret;
}
