/* unpack.c - the unpack phase: a package extracted into staged entries (see unpack.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "copyup.h"
#include "infodb.h"
#include "install-impl.h"
#include "obsolete.h"
#include "takeover.h"
#include "unpack.h"

/* On an overlayfs root, copy the old version's files up all at once,
 * before the unpack of the new one backs them up or moves them aside one
 * by one (see copyup.h): where they are, diverted or not; not its
 * conffiles, which a new version mostly keeps. */
static int copy_up_old(struct run *r, struct pkg *p, struct unpkg_err *err)
{
	const char **paths;
	char hash[33];
	size_t n = 0, i;

	if (p->nold_files == 0 || !r->root_copies_up)
		return 0;
	paths = malloc(p->nold_files * sizeof(*paths));
	if (paths == NULL)
		return unpkg_err_nomem(err);
	for (i = 0; i < p->nold_files; i++) {
		const char *path = p->old_files[i];

		run_recorded_hash(p, path, hash);
		if (unpkg_db_listed_below_root(path) && hash[0] == '\0')
			paths[n++] = unpkg_divert_use(r->divs, path, p->name);
	}
	r->stats->copied_up += unpkg_copyup(r->root, paths, n);
	free(paths);
	return 0;
}

/* Stage everything of `p` in the run's transaction. */
int unpack_pkg(struct run *r, struct pkg *p, struct unpkg_err *err)
{
	struct take_ctx tc = { .r = r, .p = p };
	struct unpkg_extract_opts xo = {
		.root = r->root,
		.commit = r->commit,
		.db = r->db,
		.pkgkey = p->key,
		.run_files = &r->run_files,
		.conffiles = &p->confmap,
		.stats = r->stats,
		.events = r->o->events,
		.take_over = takeover_file,
		.take_over_ctx = &tc,
		.statoverrides = &r->override_map,
		.filter = r->o->path_filter,
		.not_root = (r->o->force & UNPKG_FORCE_NOT_ROOT) != 0,
		.diversions = r->divs,
		.pkgname = p->name,
		.overwrite_diverted =
			(r->o->force & UNPKG_FORCE_OVERWRITE_DIVERTED) != 0,
	};
	double t = unpkg_now();
	size_t i;
	int ok;

	/* The files of the packages of the run already committed are in
	 * the database's lists, where a package that Replaces them (or that
	 * they replace) finds them: the run's own map only has to hold the
	 * staged ones. */
	for (i = 0; i < r->npkgs && r->pkgs[i].state != PKG_EXTRACTED; i++)
		;
	if (i == r->npkgs) {
		unpkg_strmap_destroy(&r->run_files);
		unpkg_strmap_init(&r->run_files);
	}
	if (p->old_version != NULL)
		unpkg_event_emit(r->o->events, UNPKG_EV_PROGRESS, p->key,
				 "Unpacking %s (%s) over (%s) ...", p->key,
				 p->version, p->old_version);
	else
		unpkg_event_emit(r->o->events, UNPKG_EV_PROGRESS, p->key,
				 "Unpacking %s (%s) ...", p->key, p->version);
	if (copy_up_old(r, p, err) < 0)
		return -1;
	unpkg_relations_init(&tc.repl);
	unpkg_strmap_init(&tc.verdicts);
	ok = unpkg_extract(p->deb, &xo, &p->files, err);
	takeover_ctx_destroy(&tc);
	if (ok < 0 || obsolete_find(p, err) < 0 ||
	    infodb_stage_pkg(r, p, err) < 0 ||
	    (p->old_stanza != NULL && infodb_find_obsolete(r, p, err) < 0))
		return -1;
	unpkg_deb_free(p->deb);
	p->deb = NULL;
	for (i = 0; i < p->files.count; i++)
		if (p->files.files[i].type != UNPKG_ENTRY_DIR &&
		    unpkg_strmap_put(&r->run_files, p->files.files[i].path,
				     p->label, NULL, err) < 0)
			return -1;
	p->state = PKG_EXTRACTED;
	run_timed(r, UNPKG_PHASE_EXTRACT, t);
	return 0;
}
