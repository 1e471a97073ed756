/* activate.c - trigger activations recorded in the run's database, as
 * dpkg records them (see activate.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "activate.h"

/* 1 if `word` is one of the blank-separated words of `list`. */
static int word_in(const char *list, const char *word)
{
	size_t l = strlen(word);
	const char *s = list;

	while ((s = strstr(s, word)) != NULL) {
		if ((s == list || s[-1] == ' ') && (s[l] == '\0' || s[l] == ' '))
			return 1;
		s += l;
	}
	return 0;
}

/* Add `key` to the packages whose triggers `p` awaits. */
static int add_awaited(struct pkg *p, const char *key, struct unpkg_err *err)
{
	char *list;

	if (p->awaited != NULL && word_in(p->awaited, key))
		return 0;
	if (asprintf(&list, "%s%s%s", p->awaited != NULL ? p->awaited : "",
		     p->awaited != NULL ? " " : "", key) < 0)
		return unpkg_err_nomem(err);
	free(p->awaited);
	p->awaited = list;
	return 0;
}

int activate_interest(void *ctx, const char *trigger, const char *key,
		      int noawait, struct unpkg_err *err)
{
	struct activation *c = ctx;
	const struct unpkg_db_pkg *ip = unpkg_pkgindex_find_key(c->r->db, key);
	const char *want, *flag, *status, *pending, *state;
	struct unpkg_para para;
	char value[64], *list = NULL, *text = NULL, *name = NULL, *arch = NULL;
	int ret = -1;

	if (ip == NULL || unpkg_db_pkg_status(ip, &want, &flag, &status) < 0 ||
	    !unpkg_status_configured(unpkg_db_pkg_state(ip)))
		return 0;	/* not configured: not interested yet */
	c->r->stats->triggers_activated = 1;
	unpkg_event_emit(c->r->o->events, UNPKG_EV_TRIGGERED, key, "%s",
			 trigger);
	if (!noawait && !c->noawait && strcmp(key, c->p->key) != 0 &&
	    add_awaited(c->p, key, err) < 0)
		return -1;
	pending = unpkg_para_get(&ip->para, "Triggers-Pending");
	if (pending != NULL && word_in(pending, trigger))
		return 0;
	unpkg_para_init(&para);
	/* triggers-awaited if it awaits triggers itself, as dpkg records it */
	state = unpkg_para_get(&ip->para, "Triggers-Awaited") != NULL
		? "triggers-awaited" : "triggers-pending";
	snprintf(value, sizeof(value), "%s %s %s", want, flag, state);
	if (unpkg_para_copy(&para, &ip->para, err) < 0 ||
	    (name = strdup(ip->name)) == NULL ||
	    (arch = strdup(ip->arch)) == NULL ||
	    asprintf(&list, "%s%s%s", trigger, pending != NULL ? " " : "",
		     pending != NULL ? pending : "") < 0 ||
	    unpkg_para_set(&para, "Status", value, err) < 0 ||
	    unpkg_para_set(&para, "Triggers-Pending", list, err) < 0 ||
	    (text = unpkg_para_format(&para)) == NULL) {
		if (err->code == UNPKG_ERR_NONE)
			unpkg_err_nomem(err);
		goto out;
	}
	/* a new state is reported, as dpkg reports it */
	ret = strcmp(status, state) == 0
	      ? run_put(c->r, name, arch[0] != '\0' ? arch : NULL, text, err)
	      : run_put_reported(c->r, name, arch[0] != '\0' ? arch : NULL,
				 text, key, arch,
				 unpkg_para_get(&para, "Version"), state,
				 err);
out:
	free(name);
	free(arch);
	free(list);
	free(text);
	unpkg_para_destroy(&para);
	return ret;
}

int activate_path(struct run *r, struct pkg *p, const char *path,
		  struct unpkg_err *err)
{
	struct activation c = { r, p, 1 };

	return unpkg_triggers_interested(r->trig, path, activate_interest, &c,
					 err);
}

/* An "activate" directive of a package being removed: awaited by
 * nobody. */
static int activate_removed(void *ctx, int act, const char *name,
			    int noawait, struct unpkg_err *err)
{
	struct activation *c = ctx;

	(void)noawait;
	if (!act)
		return 0;
	return unpkg_triggers_interested(c->r->trig, name, activate_interest,
					 c, err);
}

int activate_directives_removed(struct run *r, struct pkg *p,
				const char *text, size_t len,
				struct unpkg_err *err)
{
	struct activation c = { r, p, 1 };

	return unpkg_triggers_parse(text, len, activate_removed, &c, err);
}
