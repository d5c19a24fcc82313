/* Resolving the probe's plan (probe_plan.h): which backends, the library
 * each one's children load, how many children, and the state folder. */
#include "probe_plan.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/util.h"
#include "probe_cache.h"

static bool under_root(const struct probe_plan *plan)
{
	return plan->root && *plan->root;
}

/* Where the soname is, without loading it (the check's process stays
 * GPU-free): on the real root "" when the linker cache or a library folder
 * has it (the child loads it by soname). Under --root the root's library
 * folders, then the folders LD_LIBRARY_PATH names (the run's environment: a
 * deliberate choice, such as a test's stand-in), never this machine's linker
 * cache or system folders; the answer is the path the child loads. NULL: not
 * found. Caller frees. */
static char *library_found(const struct probe_plan *plan, const char *soname)
{
	if (!under_root(plan)) {
		char *cache = NULL;
		size_t len = 0;
		bool found = false;
		if (read_file("/etc/ld.so.cache", &cache, &len) == 0)
			found = memmem(cache, len, soname, strlen(soname) + 1) != NULL;
		free(cache);
		if (found)
			return xstrdup("");
	}
	static const char *const dirs[] = { "/usr/lib/x86_64-linux-gnu",
					    "/lib/x86_64-linux-gnu",
					    "/usr/lib64",
					    "/usr/lib",
					    "/usr/local/lib",
					    "/usr/lib/wsl/lib",
					    NULL };
	const char *ldp = env_lookup(plan->env, "LD_LIBRARY_PATH");
	char *copy = xstrdup(ldp ? ldp : ""), *save = NULL;
	char *found = NULL;
	for (size_t i = 0; !found && dirs[i]; i++) {
		char *p = xasprintf("%s/%s", dirs[i], soname);
		char *full = root_path(plan->root, p);
		if (access(full, R_OK) == 0)
			found = full;
		else
			free(full);
		free(p);
	}
	for (char *d = strtok_r(copy, ":", &save); !found && d; d = strtok_r(NULL, ":", &save)) {
		if (*d != '/')
			continue;
		char *full = xasprintf("%s/%s", d, soname);
		if (access(full, R_OK) == 0)
			found = full;
		else
			free(full);
	}
	free(copy);
	if (found && !under_root(plan)) {
		free(found);
		return xstrdup("");
	}
	return found;
}

size_t probe_children_planned(const struct vendor *v, size_t nodes, const char *visible)
{
	size_t n = nodes;
	/* the runtime shows no more devices than the vendor's parser of its
	 * variable says (the devices check reads it with the same parser); none
	 * ("", "0,0") still gets one child, to report that no GPU is visible */
	if (visible && v->visible_cap) {
		size_t shown = v->visible_cap(visible, n);
		if (shown < n)
			n = shown;
	}
	return n < 1 ? 1 : n > 64 ? 64 : n;
}

/* How many GPUs were passed in, by their device nodes, capped by the
 * backend's visibility variable: the first round's children. */
static size_t nodes_passed_in(const struct probe_plan *plan, const struct backend *be)
{
	const struct vendor *v = be->vendor;
	size_t n = 0;
	char *dir = root_path(plan->root, v->node_dir);
	DIR *d = opendir(dir);
	free(dir);
	struct dirent *e;
	size_t plen = strlen(v->node_prefix);
	while (d && (e = readdir(d))) {
		const char *rest = e->d_name + plen;
		if (strncmp(e->d_name, v->node_prefix, plen) != 0 || !*rest ||
		    strspn(rest, "0123456789") != strlen(rest))
			continue;
		n++;
	}
	if (d)
		closedir(d);
	return probe_children_planned(v, n, v->visible_env ? env_lookup(plan->env, v->visible_env) : NULL);
}

void probe_plan_resolve(struct probe_plan *plan, const struct probe_session_request *req)
{
	size_t known = 0;
	while (backends[known])
		known++;
	plan->backends = xcalloc(known + 1, sizeof(*plan->backends));
	plan->n = 0;
	bool any = strcmp(req->backend, "auto") == 0;
	struct strbuf hints = STRBUF_INIT;
	for (const struct backend *const *b = backends; *b; b++) {
		if (!any && strcmp(req->backend, (*b)->name) != 0)
			continue;
		/* auto: the installed ones; under --root, only the root's own */
		bool look = any || under_root(plan);
		char *lib = look ? library_found(plan, (*b)->library) : NULL;
		if (look && !lib) {
			sb_printf(&hints, "%s%s (%s: %s)", hints.len ? "; " : "", (*b)->library, (*b)->name,
				  (*b)->provided_by);
			continue;
		}
		struct probe_plan_backend *p = &plan->backends[plan->n++];
		p->be = *b;
		p->library = lib;
		p->children = req->smoke ? nodes_passed_in(plan, *b) : 1;
	}
	if (plan->n == 0)
		plan->none_found = xasprintf("no GPU runtime library is installed%s%s: looked for %s",
					     under_root(plan) ? " under --root " : "",
					     under_root(plan) ? plan->root : "", hints.buf);
	sb_release(&hints);
	plan->cache_why[0] = '\0';
	/* the health check's state cache; ci and validate keep compiled modules
	 * there so later probes skip the build */
	if (plan->n && (req->use_cache || req->smoke))
		plan->cache_dir = probe_cache_dir(env_lookup(plan->env, "XDG_RUNTIME_DIR"), plan->cache_why,
						  sizeof(plan->cache_why));
}

void probe_plan_release(struct probe_plan *plan)
{
	for (size_t i = 0; i < plan->n; i++)
		free(plan->backends[i].library);
	free(plan->backends);
	free(plan->none_found);
	free(plan->cache_dir);
	plan->backends = NULL;
	plan->n = 0;
	plan->none_found = plan->cache_dir = NULL;
}
