/* unpkg - install Debian packages like dpkg, made durable with few device
 * cache flushes.  This file is the command line: it parses options, reads
 * dpkg's configuration, renders libunpkg's events and sets the exit
 * status.  The work is done by libunpkg (lib/). */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commit.h"
#include "dpkgcfg.h"
#include "install.h"

enum {
	EXIT_PKG_ERROR = 1,	/* a package failed, as in dpkg */
	EXIT_FATAL = 2,		/* usage error or the run could not start */
};

enum action {
	ACTION_NONE,
	ACTION_INSTALL,
	ACTION_UNPACK,
};

struct cli {
	enum action action;
	const char *action_name;	/* "--install", for messages */
	char *instdir;
	char *admindir;
	int sync;
	char sync_reason[512];
	int stats;
	int force_depends;
	/* names of what failed, for dpkg's closing summary */
	char **failed;
	size_t nfailed;
};

static const char usage_text[] =
	"Usage: unpkg [<option>...] -i|--install <file.deb>...\n"
	"       unpkg [<option>...] --unpack <file.deb>...\n"
	"\n"
	"Install Debian packages the way dpkg does, into the same database,\n"
	"made durable with a few device cache flushes per run.\n"
	"\n"
	"Actions:\n"
	"  -i, --install <file.deb>...  unpack and configure the packages\n"
	"      --unpack <file.deb>...   unpack only (status \"unpacked\")\n"
	"\n"
	"Options:\n"
	"      --root=<dir>        install under <dir>, database in\n"
	"                          <dir>/var/lib/dpkg (created if missing)\n"
	"      --instdir=<dir>     install under <dir>\n"
	"      --admindir=<dir>    use the database in <dir>\n"
	"      --sync=<strategy>   how files are made durable:\n"
	"                            dpkg   per package: start writeback per\n"
	"                                   file, one wait pass, one fdatasync\n"
	"                                   pass, one rename pass (default)\n"
	"                            batch  the same passes once for the run\n"
	"                            uring  as batch, the syncs submitted\n"
	"                                   together through io_uring\n"
	"                            syncfs one syncfs() per filesystem\n"
	"                            none   no syncs (as --force-unsafe-io)\n"
	"      --force-unsafe-io   do not sync (also read from dpkg's config)\n"
	"      --refuse-unsafe-io  sync even if force-unsafe-io is configured\n"
	"      --force-depends     turn dependency problems into warnings\n"
	"      --refuse-depends    undo --force-depends (the default)\n"
	"      --stats             print phase times and sync call counts\n"
	"  -h, --help              show this help and exit\n"
	"      --version           show the version and exit\n"
	"\n"
	"Exit status: 0 success, 1 a package failed, 2 usage or fatal error.\n";

static void die_usage(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static void die_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("unpkg: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n\nType unpkg --help for help.\n", stderr);
	exit(EXIT_FATAL);
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (d == NULL) {
		fputs("unpkg: error: out of memory\n", stderr);
		exit(EXIT_FATAL);
	}
	return d;
}

static void set_path(char **dst, const char *val)
{
	free(*dst);
	*dst = xstrdup(val);
}

static void note_failure(struct cli *cli, const char *name)
{
	char **grown = realloc(cli->failed,
			       (cli->nfailed + 1) * sizeof(*grown));

	if (grown == NULL)
		return;
	cli->failed = grown;
	cli->failed[cli->nfailed] = strdup(name);
	if (cli->failed[cli->nfailed] != NULL)
		cli->nfailed++;
}

/* dpkg's layout for errors: a headline naming the archive or package,
 * then the cause, each line indented by one space. */
static void print_error(struct cli *cli, const char *what, const char *msg)
{
	const char *kind = strstr(what, ".deb") != NULL ||
				   strchr(what, '/') != NULL
			   ? "archive" : "package";

	fprintf(stderr, "unpkg: error processing %s %s (%s):\n", kind, what,
		cli->action_name);
	while (*msg != '\0') {
		size_t len = strcspn(msg, "\n");

		fprintf(stderr, " %.*s\n", (int)len, msg);
		msg += len;
		if (*msg == '\n')
			msg++;
	}
	note_failure(cli, what);
}

static void on_event(void *ctx, const struct unpkg_event *ev)
{
	struct cli *cli = ctx;

	switch (ev->kind) {
	case UNPKG_EV_PROGRESS:
		printf("%s\n", ev->message);
		fflush(stdout);
		break;
	case UNPKG_EV_NOTICE:
		fflush(stdout);
		fprintf(stderr, "unpkg: %s\n", ev->message);
		break;
	case UNPKG_EV_WARNING:
		fflush(stdout);
		fprintf(stderr, "unpkg: warning: %s\n", ev->message);
		break;
	case UNPKG_EV_ERROR:
		fflush(stdout);
		print_error(cli, ev->package != NULL ? ev->package : "?",
			    ev->message);
		break;
	case UNPKG_EV_STATUS:
		break;
	}
}

/* force-unsafe-io in dpkg's configuration applies to unpkg too. */
static void read_dpkg_config(struct cli *cli)
{
	const char *confdir = getenv("UNPKG_CONFDIR");
	struct unpkg_dpkgcfg cfg;
	struct unpkg_err err;
	const char *file;

	unpkg_err_init(&err);
	if (unpkg_dpkgcfg_load(&cfg, confdir != NULL ? confdir : "/etc/dpkg",
			       &err) < 0) {
		fprintf(stderr, "unpkg: warning: ignoring dpkg's "
			"configuration: %s\n", err.msg);
		return;
	}
	if (unpkg_dpkgcfg_force(&cfg, "unsafe-io", &file)) {
		cli->sync = UNPKG_SYNC_NONE;
		snprintf(cli->sync_reason, sizeof(cli->sync_reason),
			 "force-unsafe-io in %s", file);
	}
	unpkg_dpkgcfg_destroy(&cfg);
}

/* Descriptors are cheap and the commit keeps files open until its
 * barrier: use all the process may have. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void print_stats(const struct cli *cli, const struct unpkg_stats *st)
{
	int i;

	printf("stats: sync mode: %s (%s)\n", st->strategy[0] != '\0'
	       ? st->strategy : unpkg_sync_mode_name(cli->sync),
	       cli->sync_reason);
	for (i = 0; i < UNPKG_PHASE_COUNT; i++)
		printf("stats: phase %-9s %.6f s\n",
		       unpkg_phase_name((enum unpkg_phase)i),
		       st->phase_seconds[i]);
	printf("stats: calls sync_file_range=%lu fdatasync=%lu fsync=%lu "
	       "syncfs=%lu rename=%lu\n", st->sync_file_range, st->fdatasync,
	       st->fsync, st->syncfs, st->rename);
	printf("stats: written files=%lu bytes=%llu\n", st->files, st->bytes);
}

enum {
	OPT_UNPACK = 256,
	OPT_ROOT,
	OPT_INSTDIR,
	OPT_ADMINDIR,
	OPT_SYNC,
	OPT_FORCE_UNSAFE_IO,
	OPT_REFUSE_UNSAFE_IO,
	OPT_STATS,
	OPT_VERSION,
	OPT_FORCE_DEPENDS,
	OPT_REFUSE_DEPENDS,
};

static const struct option long_opts[] = {
	{ "install", no_argument, NULL, 'i' },
	{ "unpack", no_argument, NULL, OPT_UNPACK },
	{ "root", required_argument, NULL, OPT_ROOT },
	{ "instdir", required_argument, NULL, OPT_INSTDIR },
	{ "admindir", required_argument, NULL, OPT_ADMINDIR },
	{ "sync", required_argument, NULL, OPT_SYNC },
	{ "force-unsafe-io", no_argument, NULL, OPT_FORCE_UNSAFE_IO },
	{ "refuse-unsafe-io", no_argument, NULL, OPT_REFUSE_UNSAFE_IO },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "force-depends", no_argument, NULL, OPT_FORCE_DEPENDS },
	{ "refuse-depends", no_argument, NULL, OPT_REFUSE_DEPENDS },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static void set_action(struct cli *cli, enum action a, const char *name)
{
	if (cli->action != ACTION_NONE && cli->action != a)
		die_usage("conflicting actions %s", name);
	cli->action = a;
	cli->action_name = name;
}

int main(int argc, char **argv)
{
	struct cli cli = {
		.sync = UNPKG_SYNC_DPKG,
		.sync_reason = "default",
	};
	struct unpkg_stats stats = { 0 };
	struct unpkg_install_opts o = { 0 };
	struct unpkg_err err;
	int c, i, failed, ret = EXIT_FATAL;

	cli.instdir = xstrdup("/");
	cli.admindir = xstrdup("/var/lib/dpkg");
	read_dpkg_config(&cli);
	while ((c = getopt_long(argc, argv, "ih", long_opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			set_action(&cli, ACTION_INSTALL, "--install");
			break;
		case OPT_UNPACK:
			set_action(&cli, ACTION_UNPACK, "--unpack");
			break;
		case OPT_ROOT: {
			char *adm;

			set_path(&cli.instdir, optarg);
			if (asprintf(&adm, "%s/var/lib/dpkg", optarg) < 0)
				die_usage("out of memory");
			free(cli.admindir);
			cli.admindir = adm;
			break;
		}
		case OPT_INSTDIR:
			set_path(&cli.instdir, optarg);
			break;
		case OPT_ADMINDIR:
			set_path(&cli.admindir, optarg);
			break;
		case OPT_SYNC:
			cli.sync = unpkg_sync_mode_parse(optarg);
			if (cli.sync < 0)
				die_usage("unknown sync strategy '%s' (use "
					  "dpkg, batch, uring, syncfs or none)",
					  optarg);
			snprintf(cli.sync_reason, sizeof(cli.sync_reason),
				 "--sync=%s", optarg);
			break;
		case OPT_FORCE_UNSAFE_IO:
			cli.sync = UNPKG_SYNC_NONE;
			snprintf(cli.sync_reason, sizeof(cli.sync_reason),
				 "--force-unsafe-io");
			break;
		case OPT_REFUSE_UNSAFE_IO:
			if (cli.sync == UNPKG_SYNC_NONE) {
				cli.sync = UNPKG_SYNC_DPKG;
				snprintf(cli.sync_reason,
					 sizeof(cli.sync_reason),
					 "--refuse-unsafe-io");
			}
			break;
		case OPT_STATS:
			cli.stats = 1;
			break;
		case OPT_FORCE_DEPENDS:
			cli.force_depends = 1;
			break;
		case OPT_REFUSE_DEPENDS:
			cli.force_depends = 0;
			break;
		case 'h':
			fputs(usage_text, stdout);
			ret = 0;
			goto out;
		case OPT_VERSION:
			printf("unpkg %s\n", PACKAGE_VERSION);
			ret = 0;
			goto out;
		default:
			fputs("\nType unpkg --help for help.\n", stderr);
			goto out;
		}
	}
	if (cli.action == ACTION_NONE)
		die_usage("need an action option (-i or --unpack)");
	if (optind >= argc)
		die_usage("%s needs at least one package archive file "
			  "argument", cli.action_name);
	if (geteuid() != 0) {
		fputs("unpkg: error: requested operation requires superuser "
		      "privilege\n", stderr);
		goto out;
	}
	/* Like dpkg: every archive must be there before anything starts. */
	for (i = optind; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "unpkg: error: cannot access archive "
				"'%s': %s\n", argv[i], strerror(errno));
			goto out;
		}
		if (!S_ISREG(st.st_mode)) {
			fprintf(stderr, "unpkg: error: archive '%s' is not a "
				"regular file\n", argv[i]);
			goto out;
		}
	}
	raise_fd_limit();

	o.instdir = cli.instdir;
	o.admindir = cli.admindir;
	o.sync = (enum unpkg_sync_mode)cli.sync;
	o.configure = cli.action == ACTION_INSTALL;
	o.frontend_lock = getenv("DPKG_FRONTEND_LOCKED") == NULL;
	o.force_depends = cli.force_depends;
	o.events = &(struct unpkg_events){ .fn = on_event, .ctx = &cli };
	o.stats = &stats;
	unpkg_err_init(&err);
	failed = unpkg_install(&o, (const char *const *)argv + optind,
			       (size_t)(argc - optind), &err);
	if (failed < 0) {
		fflush(stdout);
		fprintf(stderr, "unpkg: error: %s\n", err.msg);
	} else if (cli.nfailed > 0) {
		fputs("Errors were encountered while processing:\n", stderr);
		for (i = 0; i < (int)cli.nfailed; i++)
			fprintf(stderr, " %s\n", cli.failed[i]);
	}
	if (cli.stats)
		print_stats(&cli, &stats);
	ret = failed < 0 ? EXIT_FATAL : failed > 0 ? EXIT_PKG_ERROR : 0;
out:
	for (i = 0; i < (int)cli.nfailed; i++)
		free(cli.failed[i]);
	free(cli.failed);
	free(cli.instdir);
	free(cli.admindir);
	return ret;
}
