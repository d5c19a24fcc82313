/* The probe session (session.h). With smoke, each device gets one child that
 * enumerates and then smokes, so the runtime starts once per device (cuInit
 * alone is about 100 ms on an H100). The first round starts a child for
 * every GPU node passed in (/dev/dri/renderD*, /dev/nvidiaN); when the
 * runtime reports more devices (tiles, nodes hidden from the count) a second
 * round starts the rest, and a child beyond the runtime's count is dropped.
 * Without smoke one child per backend enumerates. */
#include "session.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/util.h"
#include "probe.h"
#include "probe_cache.h"
#include "stack_identity.h"

/* Where the soname is, without loading it (the check's process stays
 * GPU-free): on the real root "" when the linker cache or a library folder
 * has it (the child loads it by soname). Under --root the root's library
 * folders, then the folders LD_LIBRARY_PATH names (this process's
 * environment: a deliberate choice, such as a test's stand-in), never this
 * machine's linker cache or system folders; the answer is the path the child
 * loads. NULL: not found. Caller frees. */
static char *library_found(const struct context *ctx, const char *soname)
{
	bool under_root = ctx->root && *ctx->root;
	if (!under_root) {
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
	const char *ldp = ctx_getenv(ctx, "LD_LIBRARY_PATH");
	char *copy = xstrdup(ldp ? ldp : ""), *save = NULL;
	char *found = NULL;
	for (size_t i = 0; !found && dirs[i]; i++) {
		char *p = xasprintf("%s/%s", dirs[i], soname);
		char *full = ctx_path(ctx, p);
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
	if (found && !under_root) {
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
static size_t nodes_passed_in(const struct context *ctx, const struct backend *be)
{
	const struct vendor *v = be->vendor;
	size_t n = 0;
	char *dir = ctx_path(ctx, v->node_dir);
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
	return probe_children_planned(v, n, v->visible_env ? ctx_getenv(ctx, v->visible_env) : NULL);
}

/* Each backend's children, before they are judged: runs[k] is device k's
 * (with smoke) or the one enumeration (without). */
struct raw_runs {
	struct probe_run *runs;
	size_t n;
};

static struct probe_request request(const struct backend_probe *p, int device, const struct probe_session_request *req,
				    const char *cache_dir)
{
	const struct backend *be = p->be;
	const char *library = p->library && *p->library ? p->library : NULL;
	if (!req->smoke)
		return (struct probe_request){ .backend = be->name, .device = -1, .library = library };
	return (struct probe_request){ .backend = be->name,
				       .device = device,
				       .smoke = true,
				       .telemetry = req->telemetry,
				       .processes = req->processes,
				       .perf = req->perf,
				       .perf_bytes = req->perf_bytes,
				       .work_items = req->work_items > 0 ? (size_t)req->work_items : 0,
				       .sync_timeout_s = req->deadline - monotonic_seconds(),
				       .cache_dir = cache_dir,
				       .library = library };
}

/* The first run that got past enumeration, or -1. */
static long enumerated_run(const struct raw_runs *r)
{
	for (size_t k = 0; k < r->n; k++)
		if (r->runs[k].enumerated)
			return (long)k;
	return -1;
}

/* How many devices the runtime reported (0: it did not get that far). */
static size_t devices_reported(const struct raw_runs *r)
{
	long e = enumerated_run(r);
	if (e < 0)
		return 0;
	const json_t *j = r->runs[e].enumerated;
	json_t *count = json_object_get(j, "device_count");
	size_t n = json_is_integer(count) && json_integer_value(count) > 0
			   ? (size_t)json_integer_value(count)
			   : json_array_size(json_object_get(j, "devices"));
	return n > 1024 ? 1024 : n;
}

static void run_children(const struct context *ctx, struct probe_session *s, struct raw_runs *raw,
			 const struct probe_session_request *req, const char *cache_dir)
{
	/* round 1: every backend at once */
	size_t total = 0;
	for (size_t i = 0; i < s->n; i++) {
		raw[i].n = req->smoke ? nodes_passed_in(ctx, s->probes[i].be) : 1;
		total += raw[i].n;
	}
	struct probe_request *reqs = xcalloc(total, sizeof(*reqs));
	struct probe_run *runs = xcalloc(total, sizeof(*runs));
	size_t k = 0;
	for (size_t i = 0; i < s->n; i++)
		for (size_t d = 0; d < raw[i].n; d++)
			reqs[k++] = request(&s->probes[i], (int)d, req, cache_dir);
	probe_run_all(ctx, reqs, runs, total, req->deadline);
	k = 0;
	size_t more = 0;
	for (size_t i = 0; i < s->n; i++) {
		size_t first = raw[i].n;
		raw[i].runs = xcalloc(first, sizeof(*raw[i].runs));
		memcpy(raw[i].runs, runs + k, first * sizeof(*runs));
		k += first;
		if (!req->smoke)
			continue;
		size_t want = devices_reported(&raw[i]);
		if (want > first) { /* round 2: the devices the node count missed */
			raw[i].runs = xrealloc(raw[i].runs, want * sizeof(*raw[i].runs));
			memset(raw[i].runs + first, 0, (want - first) * sizeof(*raw[i].runs));
			more += want - first;
		} else if (want > 0) { /* children beyond the runtime's count found no device */
			for (size_t d = want; d < first; d++)
				probe_run_release(&raw[i].runs[d]);
		}
		/* no enumeration: the runs stay, raw[i].n unchanged, judged below */
		if (want > 0)
			raw[i].n = want > first ? first : want;
	}
	free(reqs);
	free(runs);
	if (more == 0)
		return;
	reqs = xcalloc(more, sizeof(*reqs));
	runs = xcalloc(more, sizeof(*runs));
	k = 0;
	for (size_t i = 0; i < s->n; i++)
		for (size_t d = raw[i].n, want = devices_reported(&raw[i]); d < want; d++)
			reqs[k++] = request(&s->probes[i], (int)d, req, cache_dir);
	probe_run_all(ctx, reqs, runs, more, req->deadline);
	k = 0;
	for (size_t i = 0; i < s->n; i++) {
		size_t want = devices_reported(&raw[i]);
		for (size_t d = raw[i].n; d < want; d++)
			raw[i].runs[d] = runs[k++];
		if (want > raw[i].n)
			raw[i].n = want;
	}
	free(reqs);
	free(runs);
}

static void outcome_of(const struct probe_run *run, const json_t *result, struct probe_outcome *o)
{
	memset(o, 0, sizeof(*o));
	o->verdict = run->verdict ? xstrdup(run->verdict) : NULL;
	o->failed_stage = run->failed_stage ? xstrdup(run->failed_stage) : NULL;
	snprintf(o->last_stage, sizeof(o->last_stage), "%s", run->stage);
	o->killed = run->killed;
	o->signal = run->signal;
	o->seconds = run->seconds;
	o->output = xstrdup(run->output ? run->output : "");
	probe_result_decode(result, &o->result);
}

static long long device_index(const json_t *d)
{
	json_t *i = json_object_get(d, "index");
	return json_is_integer(i) ? (long long)json_integer_value(i) : -1;
}

/* The enumeration as the runtime gave it, with the devices that only other
 * children listed (a CUDA child lists its own device only), by index. */
static json_t *merged_enumeration(const struct raw_runs *r, long e)
{
	json_t *j = json_deep_copy(r->runs[e].enumerated);
	json_t *devs = json_object_get(j, "devices");
	if (!json_is_array(devs)) {
		devs = json_array();
		json_object_set_new(j, "devices", devs);
	}
	for (size_t k = 0; k < r->n; k++) {
		size_t i;
		json_t *d;
		json_array_foreach(json_object_get(r->runs[k].enumerated, "devices"), i, d)
		{
			long long want = device_index(d);
			bool have = false;
			size_t m;
			json_t *x;
			json_array_foreach(devs, m, x) have = have || device_index(x) == want;
			if (!have) {
				size_t at = json_array_size(devs);
				json_array_foreach(devs, m, x) if (device_index(x) > want && m < at) at = m;
				json_array_insert(devs, at, d);
			}
		}
	}
	return j;
}

static void judge(struct backend_probe *p, const struct raw_runs *r, bool smoke)
{
	long e = smoke ? enumerated_run(r) : -1;
	if (!smoke || e < 0) {
		/* the enumeration child, or the device child that failed before it enumerated */
		outcome_of(&r->runs[0], r->runs[0].result, &p->enumeration);
		probe_result_decode(r->runs[0].result, &p->found);
		return;
	}
	json_t *all = merged_enumeration(r, e);
	struct probe_run got = r->runs[e];
	got.verdict = got.failed_stage = NULL;
	snprintf(got.stage, sizeof(got.stage), "devices");
	got.killed = false;
	got.signal = 0;
	got.output = NULL;
	outcome_of(&got, all, &p->enumeration);
	probe_result_decode(all, &p->found);
	json_decref(all);
	p->n_devices = r->n;
	p->devices = xcalloc(r->n + 1, sizeof(*p->devices));
	for (size_t d = 0; d < r->n; d++)
		outcome_of(&r->runs[d], r->runs[d].result, &p->devices[d]);
}

/* What makes a cached result valid: the probe settings and the environment
 * that changes what the runtime sees. */
static char *cache_key(const struct context *ctx, const struct probe_session *s,
		       const struct probe_session_request *req)
{
	static const char *const vars[] = { "ZE_AFFINITY_MASK",        "NEO_ZE_AFFINITY_MASK",
					    "NEO_L0_ZE_AFFINITY_MASK", "ZE_FLAT_DEVICE_HIERARCHY",
					    "ZE_ENABLE_ALT_DRIVERS",   "LD_LIBRARY_PATH",
					    "CUDA_VISIBLE_DEVICES",    "CUDA_DEVICE_ORDER",
					    "ONEAPI_DEVICE_SELECTOR",  NULL };
	struct strbuf sb = STRBUF_INIT;
	sb_printf(&sb, "exe=%s;smoke=%d;telemetry=%d;items=%ld;processes=%d;perf=%d:%zu", ctx_self_exe(ctx), req->smoke,
		  req->telemetry, req->work_items, req->processes, req->perf, req->perf_bytes);
	for (size_t i = 0; i < s->n; i++)
		sb_printf(&sb, ";backend=%s", s->probes[i].be->name);
	for (size_t i = 0; vars[i]; i++) {
		const char *v = ctx_getenv(ctx, vars[i]);
		if (v)
			sb_printf(&sb, ";%s=%s", vars[i], v);
	}
	return sb_detach(&sb);
}

static bool runs_ok(const struct probe_session *s)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->probes[i].enumeration.verdict)
			return false;
		for (size_t d = 0; d < s->probes[i].n_devices; d++)
			if (s->probes[i].devices[d].verdict)
				return false;
	}
	return true;
}

static json_t *save_runs(const struct probe_session *s, const struct raw_runs *raw)
{
	json_t *j = json_object(), *arr = json_array();
	json_object_set_new(j, "backends", arr);
	for (size_t i = 0; i < s->n; i++) {
		json_t *runs = json_array();
		for (size_t d = 0; d < raw[i].n; d++)
			json_array_append_new(runs, probe_run_to_json(&raw[i].runs[d]));
		json_array_append_new(arr, json_pack("{s:s, s:o}", "name", s->probes[i].be->name, "runs", runs));
	}
	return j;
}

static int restore_runs(const struct probe_session *s, const json_t *j, struct raw_runs *raw)
{
	json_t *arr = json_object_get(j, "backends");
	if (json_array_size(arr) != s->n)
		return -1;
	for (size_t i = 0; i < s->n; i++) {
		json_t *b = json_array_get(arr, i);
		const char *name = json_string_value(json_object_get(b, "name"));
		json_t *runs = json_object_get(b, "runs");
		if (!name || strcmp(name, s->probes[i].be->name) != 0 || json_array_size(runs) == 0)
			return -1;
	}
	for (size_t i = 0; i < s->n; i++) {
		json_t *runs = json_object_get(json_array_get(arr, i), "runs");
		raw[i].n = json_array_size(runs);
		raw[i].runs = xcalloc(raw[i].n, sizeof(*raw[i].runs));
		for (size_t d = 0; d < raw[i].n; d++)
			probe_run_from_json(json_array_get(runs, d), &raw[i].runs[d]);
	}
	return 0;
}

static void raw_release(struct raw_runs *raw, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t d = 0; d < raw[i].n; d++)
			probe_run_release(&raw[i].runs[d]);
		free(raw[i].runs);
	}
	free(raw);
}

/* What to install when no backend's library is there: the fix of each
 * backend for the run's GPU vendor, or of every backend when none drives it. */
static char *missing_remedy(const char *vendor)
{
	struct strbuf sb = STRBUF_INIT;
	for (int all = 0; all < 2 && !sb.len; all++)
		for (const struct backend *const *b = backends; *b; b++)
			if (all || (vendor && (*b)->vendor == vendor_by_name(vendor)))
				sb_printf(&sb, "%s%s", sb.len ? "; or " : "", (*b)->missing_remedy);
	return sb_detach(&sb);
}

struct probe_session *probe_session_run(const struct context *ctx, const struct probe_session_request *req)
{
	struct probe_session *s = xcalloc(1, sizeof(*s));
	s->cache_age = -1;
	size_t known = 0;
	while (backends[known])
		known++;
	s->probes = xcalloc(known + 1, sizeof(*s->probes));
	struct strbuf hints = STRBUF_INIT;
	bool under_root = ctx->root && *ctx->root;
	for (const struct backend *const *b = backends; *b; b++) {
		bool wanted = strcmp(req->backend, "auto") == 0 || strcmp(req->backend, (*b)->name) == 0;
		/* auto: the installed ones; under --root, only the root's own */
		char *lib = wanted && (strcmp(req->backend, "auto") == 0 || under_root)
				    ? library_found(ctx, (*b)->library)
				    : NULL;
		if (wanted && !lib && (strcmp(req->backend, "auto") == 0 || under_root)) {
			sb_printf(&hints, "%s%s (%s: %s)", hints.len ? "; " : "", (*b)->library, (*b)->name,
				  (*b)->provided_by);
			continue;
		}
		if (!wanted)
			continue;
		s->probes[s->n].library = lib;
		s->probes[s->n++].be = *b;
	}
	if (s->n == 0) {
		s->none_found = xasprintf("no GPU runtime library is installed%s%s: looked for %s",
					  under_root ? " under --root " : "", under_root ? ctx->root : "",
					  hints.buf);
		s->none_remedy = missing_remedy(ctx->vendor);
		sb_release(&hints);
		return s;
	}
	sb_release(&hints);
	struct raw_runs *raw = xcalloc(s->n, sizeof(*raw));
	char why[512];
	if (!req->use_cache) {
		/* ci and validate keep compiled modules so later probes skip the build */
		char *module_dir = req->smoke ? probe_cache_dir(ctx, why, sizeof(why)) : NULL;
		run_children(ctx, s, raw, req, module_dir);
		free(module_dir);
		for (size_t i = 0; i < s->n; i++)
			judge(&s->probes[i], &raw[i], req->smoke);
		raw_release(raw, s->n);
		return s;
	}
	/* the health check reuses a recent result instead of loading the GPU */
	char *dir = probe_cache_dir(ctx, why, sizeof(why));
	char *key = cache_key(ctx, s, req);
	double age = 0;
	json_t *cached = dir ? probe_cache_load(dir, key, req->cache_ttl, &age) : NULL;
	const struct backend **bes = xcalloc(s->n + 1, sizeof(*bes));
	for (size_t i = 0; i < s->n; i++)
		bes[i] = s->probes[i].be;
	if (cached && (s->cache_discarded = probe_cache_stale(ctx, bes, s->n, cached)) != NULL) {
		json_decref(cached);
		cached = NULL;
	}
	if (cached && restore_runs(s, cached, raw) == 0) {
		s->cache_age = age;
		for (size_t i = 0; i < s->n; i++)
			judge(&s->probes[i], &raw[i], req->smoke);
	} else {
		run_children(ctx, s, raw, req, dir);
		for (size_t i = 0; i < s->n; i++)
			judge(&s->probes[i], &raw[i], req->smoke);
		if (!dir) {
			s->cache_note = xasprintf("state cache not used: %s", why);
		} else {
			json_t *saved = save_runs(s, raw), *paths = json_array();
			for (size_t i = 0; i < s->n; i++)
				for (size_t d = 0; d < raw[i].n; d++)
					stack_identity_add_libraries(paths, raw[i].runs[d].result);
			json_t *identity = stack_identity(ctx, bes, s->n, paths);
			int rc = probe_cache_store(ctx, dir, key, runs_ok(s), identity, saved);
			json_decref(identity);
			json_decref(paths);
			json_decref(saved);
			if (rc < 0)
				s->cache_note = xasprintf("cannot write the state cache in %s: %s", dir, strerror(-rc));
		}
	}
	raw_release(raw, s->n);
	json_decref(cached);
	free(bes);
	s->cache_path = dir;
	free(key);
	return s;
}

static void outcome_free(struct probe_outcome *o)
{
	free(o->verdict);
	free(o->failed_stage);
	free(o->output);
	probe_result_free(&o->result);
}

void probe_session_free(struct probe_session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		outcome_free(&s->probes[i].enumeration);
		probe_result_free(&s->probes[i].found);
		free(s->probes[i].library);
		for (size_t d = 0; d < s->probes[i].n_devices; d++)
			outcome_free(&s->probes[i].devices[d]);
		free(s->probes[i].devices);
	}
	free(s->probes);
	free(s->none_found);
	free(s->none_remedy);
	free(s->cache_path);
	free(s->cache_note);
	free(s->cache_discarded);
	free(s);
}

bool probe_never_initialized(const struct probe_outcome *o)
{
	const char *stage = o->failed_stage;
	bool early = stage && (!strcmp(stage, "loader") || !strcmp(stage, "init") || !strcmp(stage, "drivers"));
	return o->verdict && (early || o->killed || o->signal || !o->result.present);
}

const struct probe_device *probe_device_result(const struct backend_probe *p, size_t d)
{
	return d < p->n_devices ? probe_result_device(&p->devices[d].result, d) : NULL;
}
