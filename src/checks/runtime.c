/* Check group `runtime`: proves the GPU runtime works, in child processes
 * (gpugate never loads a GPU library itself). One enumeration probe per
 * backend, then one smoke probe per device in parallel, all made once in
 * prepare and shared by the group's checks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <limits.h>
#include <unistd.h>

#include "../backend/backend.h"
#include "../backend/probe.h"
#include "../backend/probe_cache.h"
#include "../lib/dpkg_status.h"
#include "../lib/util.h"
#include "../lib/zeversion.h"
#include "groups.h"
#include "runtime_state.h"

#define DEADLINE_MARGIN_S 0.3 /* the verdict must still be written after a kill */

static const struct spec_key runtime_keys[] = {
	{ "runtime", SPEC_MAP, SCALAR_STR, NULL, "the runtime section: probe the GPU runtime in a child process" },
	{ "runtime.backend", SPEC_SCALAR, SCALAR_ENUM, "auto|level-zero|cuda",
	  "auto: every backend whose loader library is installed; or one backend" },
	{ "runtime.timeout", SPEC_SCALAR, SCALAR_SECONDS, NULL, "the probe's deadline (capped by the run's deadline); default 30s" },
	{ "runtime.min_free_memory", SPEC_SCALAR, SCALAR_SIZE, NULL, "free device memory each GPU must have, e.g. 8GiB" },
	{ "runtime.smoke", SPEC_SCALAR, SCALAR_BOOL, NULL, "run the SPIR-V smoke kernel on every device (default false)" },
	{ "runtime.telemetry", SPEC_SCALAR, SCALAR_BOOL, NULL, "read temperature and other Sysman telemetry (default false)" },
	{ "runtime.cache_ttl", SPEC_SCALAR, SCALAR_SECONDS, NULL,
	  "healthcheck profile: reuse a passing probe result this long (default 5m; a failure at most 30s)" },
	{ "runtime.work_items", SPEC_SCALAR, SCALAR_INT, NULL, "smoke kernel size (at least 1048576)" },
	{ "runtime.processes", SPEC_SCALAR, SCALAR_BOOL, NULL,
	  "warn when other processes use a GPU (default false; needs smoke: true)" },
	{ "runtime.performance", SPEC_SCALAR, SCALAR_BOOL, NULL,
	  "measure copy bandwidth and launch latency and compare them with the baselines (default false; needs smoke: true)" },
	{ "runtime.tolerance", SPEC_SCALAR, SCALAR_STR, NULL,
	  "how much slower than its baseline a GPU may be, e.g. 20% (the default)" },
	{ "runtime.baselines", SPEC_SCALAR, SCALAR_STR, NULL,
	  "a folder of more baseline files (*.json), beside the built-in checks/baselines folder" },
	{ "runtime.bandwidth_buffer", SPEC_SCALAR, SCALAR_SIZE, NULL,
	  "the bandwidth copy's buffer size, 1MiB to 4GiB (default 256MiB; baselines are recorded with the default)" },
	{ NULL, 0, 0, NULL, NULL },
};

static const struct backend *const known_backends[] = { &ze_backend, &cuda_backend, NULL };


/* True when the soname is in the linker cache or a library folder (under
 * --root), without loading it: the check's process stays GPU-free. */
static bool library_present(const struct context *ctx, const char *soname)
{
	char *cache_path = ctx_path(ctx, "/etc/ld.so.cache");
	char *cache = NULL;
	size_t len = 0;
	bool found = false;
	if (read_file(cache_path, &cache, &len) == 0)
		found = memmem(cache, len, soname, strlen(soname) + 1) != NULL;
	free(cache);
	free(cache_path);
	static const char *const dirs[] = { "/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64",
					    "/usr/lib", "/usr/local/lib", "/usr/lib/wsl/lib", NULL };
	for (size_t i = 0; !found && dirs[i]; i++) {
		char *p = xasprintf("%s/%s", dirs[i], soname);
		char *full = ctx_path(ctx, p);
		found = access(full, R_OK) == 0;
		free(full);
		free(p);
	}
	const char *ldp = ctx_getenv(ctx, "LD_LIBRARY_PATH");
	if (!found && ldp) {
		char *copy = xstrdup(ldp), *save = NULL;
		for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
			char *p = xasprintf("%s/%s", d, soname);
			found = access(p, R_OK) == 0;
			free(p);
		}
		free(copy);
	}
	return found;
}

/* What the spec asks the probe children to do. */
struct probe_settings {
	bool smoke, telemetry, processes, perf;
	long items;
	size_t perf_bytes;
};

static void probe_all(const struct context *ctx, struct runtime_state *st, const struct probe_settings *set,
		      const char *cache_dir);

/* What makes a cached result valid: the spec's probe settings and the
 * environment that changes what the runtime sees. */
static char *cache_key(const struct context *ctx, const struct runtime_state *st, const struct probe_settings *set)
{
	static const char *const vars[] = { "ZE_AFFINITY_MASK", "ZE_FLAT_DEVICE_HIERARCHY", "ZE_ENABLE_ALT_DRIVERS",
					    "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "ONEAPI_DEVICE_SELECTOR", NULL };
	struct strbuf sb = STRBUF_INIT;
	sb_printf(&sb, "exe=%s;smoke=%d;telemetry=%d;items=%ld;processes=%d;perf=%d:%zu", ctx_self_exe(ctx), set->smoke,
		  set->telemetry, set->items, set->processes, set->perf, set->perf_bytes);
	for (size_t i = 0; i < st->n; i++)
		sb_printf(&sb, ";backend=%s", st->probes[i].be->name);
	for (size_t i = 0; vars[i]; i++) {
		const char *v = ctx_getenv(ctx, vars[i]);
		if (v)
			sb_printf(&sb, ";%s=%s", vars[i], v);
	}
	return sb_detach(&sb);
}

static bool state_ok(const struct runtime_state *st)
{
	for (size_t i = 0; i < st->n; i++) {
		if (st->probes[i].enumeration.verdict)
			return false;
		for (size_t d = 0; d < st->probes[i].n_devices; d++)
			if (st->probes[i].devices[d].verdict)
				return false;
	}
	return true;
}

static json_t *save_state(const struct runtime_state *st)
{
	json_t *j = json_object(), *arr = json_array();
	json_object_set_new(j, "backends", arr);
	for (size_t i = 0; i < st->n; i++) {
		json_t *b = json_object(), *devs = json_array();
		json_object_set_new(b, "name", json_string(st->probes[i].be->name));
		json_object_set_new(b, "enumeration", probe_run_to_json(&st->probes[i].enumeration));
		for (size_t d = 0; d < st->probes[i].n_devices; d++)
			json_array_append_new(devs, probe_run_to_json(&st->probes[i].devices[d]));
		json_object_set_new(b, "devices", devs);
		json_array_append_new(arr, b);
	}
	return j;
}

static int restore_state(struct runtime_state *st, const json_t *j)
{
	json_t *arr = json_object_get(j, "backends");
	if (json_array_size(arr) != st->n)
		return -1;
	for (size_t i = 0; i < st->n; i++) {
		json_t *b = json_array_get(arr, i);
		const char *name = json_string_value(json_object_get(b, "name"));
		if (!name || strcmp(name, st->probes[i].be->name) != 0 || !json_is_object(json_object_get(b, "enumeration")))
			return -1;
	}
	for (size_t i = 0; i < st->n; i++) {
		json_t *b = json_array_get(arr, i);
		probe_run_from_json(json_object_get(b, "enumeration"), &st->probes[i].enumeration);
		json_t *devs = json_object_get(b, "devices");
		st->probes[i].n_devices = json_array_size(devs);
		st->probes[i].devices = xcalloc(st->probes[i].n_devices + 1, sizeof(*st->probes[i].devices));
		for (size_t d = 0; d < st->probes[i].n_devices; d++)
			probe_run_from_json(json_array_get(devs, d), &st->probes[i].devices[d]);
	}
	return 0;
}

static void *runtime_prepare(const struct context *ctx)
{
	struct runtime_state *st = xcalloc(1, sizeof(*st));
	st->cache_age = -1;
	const char *choice = spec_str(ctx->spec, "runtime.backend", "auto");
	double timeout = spec_seconds(ctx->spec, "runtime.timeout", 30);
	double now = monotonic_seconds();
	st->deadline = now + timeout;
	if (ctx->deadline - DEADLINE_MARGIN_S < st->deadline)
		st->deadline = ctx->deadline - DEADLINE_MARGIN_S;
	struct probe_settings set = {
		.smoke = spec_bool(ctx->spec, "runtime.smoke", false),
		.telemetry = spec_bool(ctx->spec, "runtime.telemetry", false),
		.processes = spec_bool(ctx->spec, "runtime.processes", false),
		.perf = spec_bool(ctx->spec, "runtime.performance", false),
		.items = spec_int(ctx->spec, "runtime.work_items", 1 << 20),
		.perf_bytes = (size_t)spec_size(ctx->spec, "runtime.bandwidth_buffer", (uint64_t)256 << 20),
	};

	st->probes = xcalloc(ARRAY_SIZE(known_backends), sizeof(*st->probes));
	struct strbuf hints = STRBUF_INIT;
	for (const struct backend *const *b = known_backends; *b; b++) {
		if (strcmp(choice, "auto") == 0) {
			if (!library_present(ctx, (*b)->library)) {
				sb_printf(&hints, "%s%s (%s: %s)", hints.len ? "; " : "", (*b)->library, (*b)->name,
					  (*b)->provided_by);
				continue;
			}
		} else if (strcmp(choice, (*b)->name) != 0) {
			continue;
		}
		st->probes[st->n++].be = *b;
	}
	if (st->n == 0) {
		st->none_found = xasprintf("no GPU runtime library is installed: looked for %s", hints.buf ? hints.buf : "");
		sb_release(&hints);
		return st;
	}
	sb_release(&hints);
	char why[512];
	if (!ctx_is_healthcheck(ctx)) {
		/* ci and validate keep compiled modules so later probes skip the build */
		char *module_dir = set.smoke ? probe_cache_dir(ctx, why, sizeof(why)) : NULL;
		probe_all(ctx, st, &set, module_dir);
		free(module_dir);
		return st;
	}
	/* the health check reuses a recent result instead of loading the GPU */
	char *dir = probe_cache_dir(ctx, why, sizeof(why));
	char *key = cache_key(ctx, st, &set);
	double ttl = spec_seconds(ctx->spec, "runtime.cache_ttl", 300);
	double age = 0;
	json_t *cached = dir ? probe_cache_load(dir, key, ttl, &age) : NULL;
	if (cached && restore_state(st, cached) == 0) {
		st->cache_age = age;
	} else {
		probe_all(ctx, st, &set, dir);
		if (!dir) {
			st->cache_note = xasprintf("state cache not used: %s", why);
		} else {
			json_t *saved = save_state(st);
			int rc = probe_cache_store(dir, key, state_ok(st), saved);
			json_decref(saved);
			if (rc < 0)
				st->cache_note = xasprintf("cannot write the state cache in %s: %s", dir, strerror(-rc));
		}
	}
	json_decref(cached);
	st->cache_path = dir;
	free(key);
	return st;
}

static struct probe_request smoke_request(const struct runtime_state *st, size_t i, int device,
					  const struct probe_settings *set, const char *cache_dir)
{
	return (struct probe_request){ .backend = st->probes[i].be->name, .device = device, .smoke = true,
				       .telemetry = set->telemetry, .processes = set->processes, .perf = set->perf,
				       .perf_bytes = set->perf_bytes, .work_items = set->items > 0 ? (size_t)set->items : 0,
				       .sync_timeout_s = st->deadline - monotonic_seconds(), .cache_dir = cache_dir };
}

/* cache_dir: where smoke children keep compiled modules, or NULL */
static void probe_all(const struct context *ctx, struct runtime_state *st, const struct probe_settings *set,
		      const char *cache_dir)
{
	bool smoke = set->smoke;
	/* First batch: every backend's enumeration and, when smoking, its device 0
	 * at the same time. Most machines have one GPU, and each child pays the
	 * runtime's start (cuInit alone is about 100 ms on an H100): running the
	 * two in turn would double it. A device 0 that does not exist is dropped. */
	size_t first = st->n * (smoke ? 2 : 1);
	struct probe_request *reqs = xcalloc(first, sizeof(*reqs));
	struct probe_run *runs = xcalloc(first, sizeof(*runs));
	for (size_t i = 0; i < st->n; i++) {
		reqs[i] = (struct probe_request){ .backend = st->probes[i].be->name, .device = -1 };
		if (smoke)
			reqs[st->n + i] = smoke_request(st, i, 0, set, cache_dir);
	}
	probe_run_all(ctx, reqs, runs, first, st->deadline);
	size_t rest = 0;
	for (size_t i = 0; i < st->n; i++) {
		struct backend_probe *p = &st->probes[i];
		p->enumeration = runs[i];
		size_t nd = p->enumeration.verdict ? 0 : json_array_size(json_object_get(p->enumeration.result, "devices"));
		if (!smoke)
			continue;
		if (nd == 0) {
			probe_run_release(&runs[st->n + i]);
			continue;
		}
		p->n_devices = nd;
		p->devices = xcalloc(nd, sizeof(*p->devices));
		p->devices[0] = runs[st->n + i];
		rest += nd - 1;
	}
	free(reqs);
	free(runs);
	if (rest > 0) {
		/* the other devices, one child each, all in parallel */
		reqs = xcalloc(rest, sizeof(*reqs));
		runs = xcalloc(rest, sizeof(*runs));
		size_t k = 0;
		for (size_t i = 0; i < st->n; i++)
			for (size_t d = 1; d < st->probes[i].n_devices; d++)
				reqs[k++] = smoke_request(st, i, (int)d, set, cache_dir);
		probe_run_all(ctx, reqs, runs, rest, st->deadline);
		k = 0;
		for (size_t i = 0; i < st->n; i++)
			for (size_t d = 1; d < st->probes[i].n_devices; d++)
				st->probes[i].devices[d] = runs[k++];
		free(reqs);
		free(runs);
	}
}

static void runtime_release(void *state)
{
	struct runtime_state *st = state;
	if (!st)
		return;
	for (size_t i = 0; i < st->n; i++) {
		probe_run_release(&st->probes[i].enumeration);
		for (size_t d = 0; d < st->probes[i].n_devices; d++)
			probe_run_release(&st->probes[i].devices[d]);
		free(st->probes[i].devices);
	}
	free(st->probes);
	free(st->none_found);
	free(st->cache_path);
	free(st->cache_note);
	free(st);
}

/* An enumeration that never got past initializing the runtime: it failed in
 * loader, init or drivers, was killed, crashed, or left no result. Its verdict
 * belongs to runtime.loader; runtime.devices skips it. */
static bool never_initialized(const struct probe_run *e)
{
	const char *stage = e->failed_stage;
	bool early = stage && (!strcmp(stage, "loader") || !strcmp(stage, "init") || !strcmp(stage, "drivers"));
	return e->verdict && (early || e->killed || e->signal || !e->result);
}

/* Remediation for a failed probe, from its error name and stage. */
static void remedy_for(struct result *r, const struct backend *be, const struct probe_run *run)
{
	const char *error = run->result ? json_string_value(json_object_get(run->result, "error")) : NULL;
	if (run->killed && run->stage[0] == '\0')
		/* killed before the child said anything: the time it had was too short
		 * to start a process at all, nothing points at the GPU */
		result_remedy(r, "the probe had only %.2f s and was killed before it started: raise --deadline or runtime.timeout "
				 "(the %s runtime needs about 0.5 s to start)", run->seconds, be->name);
	else if (run->killed && strcmp(be->name, "cuda") == 0)
		result_remedy(r, "the GPU or its driver hangs: read the host's kernel log for Xid errors (dmesg | grep -i xid), "
				 "check nvidia-smi, and reset the GPU (nvidia-smi -r) or reboot the host");
	else if (run->killed)
		result_remedy(r, "the GPU or its driver hangs: read the kernel log (dmesg | grep -iE 'gpu hang|guc|xe|i915') and reset the GPU or reboot the host");
	else if (run->signal)
		result_remedy(r, "the %s runtime crashed: reinstall the driver stack and compare the loader and driver versions (packages checks)", be->name);
	if (!error)
		return;
	if (strstr(error, "missing"))
		result_remedy(r, "install the %s loader: %s", be->name, be->provided_by);
	else if (strstr(error, "UNINITIALIZED"))
		result_remedy(r, "make the GPU visible in the container: --device /dev/dri and -v /dev/dri/by-path:/dev/dri/by-path (see the devices checks)");
	else if (strstr(error, "INSUFFICIENT_PERMISSIONS"))
		result_remedy(r, "give the container the render node's group: docker run --group-add render (or the node's numeric GID: stat -c %%g /dev/dri/renderD128)");
	else if (strstr(error, "OUT_OF_DEVICE_MEMORY"))
		result_remedy(r, "free GPU memory: stop the other processes on the GPU (xpu-smi ps, intel_gpu_top) or lower their share");
	else if (strstr(error, "DEVICE_LOST"))
		result_remedy(r, "the GPU was lost: read the kernel log (dmesg) for GPU HANG / GuC errors and reset the GPU");
	else if (strstr(error, "MODULE_BUILD"))
		result_remedy(r, "install the graphics compiler matching the driver: apt-get install intel-igc-core-2 intel-igc-opencl-2");
	else if (strstr(error, "wrong result"))
		result_remedy(r, "the GPU computes wrong results: take it out of service and report it with the details of this check");
}

static void add_run_details(json_t *arr, const struct backend *be, const struct probe_run *run)
{
	json_t *j = json_object();
	json_object_set_new(j, "backend", json_string(be->name));
	json_object_set_new(j, "seconds", json_real(run->seconds));
	if (run->verdict)
		json_object_set_new(j, "verdict", json_text(run->verdict));
	if (run->stage[0])
		json_object_set_new(j, "last_stage", json_string(run->stage));
	if (run->result)
		json_object_set(j, "result", run->result);
	if (run->output && *run->output)
		json_object_set_new(j, "output", json_text(run->output));
	json_array_append_new(arr, j);
}

bool runtime_no_backend(const struct runtime_state *st, struct result *r)
{
	if (!st->none_found)
		return false;
	if (strcmp(r->id, "runtime.loader") != 0) {
		result_blocked(r, "runtime.loader"); /* its failure says it once */
		return true;
	}
	result_set(r, STATUS_FAIL, "%s", st->none_found);
	result_remedy(r, "install the Level Zero loader and the Intel GPU driver: apt-get install libze1 libze-intel-gpu1 (or intel-level-zero-gpu)");
	return true;
}

/* True when list (a dpkg .list file's text) names path on a line of its own. */
static bool list_names(const char *list, size_t len, const char *path)
{
	size_t n = strlen(path);
	for (const char *p = list; p && p < list + len; p = memchr(p, '\n', (size_t)(list + len - p)), p = p ? p + 1 : NULL)
		if ((size_t)(list + len - p) >= n && memcmp(p, path, n) == 0 && (p + n == list + len || p[n] == '\n'))
			return true;
	return false;
}

/* The packages whose file lists (/var/lib/dpkg/info/ under --root) name
 * paths[i] (or its /usr-merged twin), into owners[i] (NULL: none found), in
 * one pass over the lists: the Level Zero and CUDA packages first, then,
 * when thorough, every other list. Caller frees owners[i]. */
static void packages_owning(const struct context *ctx, const char *const paths[], char *owners[], size_t n,
			    bool thorough)
{
	static const char *const likely[] = { "libze1", "libze-intel-gpu1", "intel-level-zero-gpu", "intel-opencl-icd",
					      "level-zero", "libze-intel-gpu-legacy1", "libcuda1", NULL };
	char **twins = xcalloc(n + 1, sizeof(*twins));
	size_t unknown = 0;
	for (size_t i = 0; i < n; i++) {
		owners[i] = NULL;
		unknown += paths[i] != NULL;
		const char *path = paths[i] ? paths[i] : "";
		twins[i] = str_starts_with(path, "/usr/lib/") ? xstrdup(path + 4)
			 : str_starts_with(path, "/lib/")   ? xasprintf("/usr%s", path)
							     : NULL;
	}
	char *dir = ctx_path(ctx, "/var/lib/dpkg/info");
	for (int pass = 0; pass < (thorough ? 2 : 1) && unknown; pass++) {
		DIR *d = opendir(dir);
		if (!d)
			break;
		struct dirent *e;
		while (unknown && (e = readdir(d))) {
			if (!str_ends_with(e->d_name, ".list"))
				continue;
			size_t len = strcspn(e->d_name, ":.");
			bool is_likely = false;
			for (size_t i = 0; likely[i] && !is_likely; i++)
				is_likely = strlen(likely[i]) == len && strncmp(likely[i], e->d_name, len) == 0 &&
					    (e->d_name[len] == ':' || strcmp(e->d_name + len, ".list") == 0);
			if (is_likely != (pass == 0))
				continue;
			char *file = xasprintf("%s/%s", dir, e->d_name), *text = NULL;
			size_t size = 0;
			if (read_file(file, &text, &size) == 0) {
				for (size_t i = 0; i < n; i++) {
					if (!paths[i] || owners[i])
						continue;
					if (list_names(text, size, paths[i]) || (twins[i] && list_names(text, size, twins[i]))) {
						owners[i] = xstrndup(e->d_name, len);
						unknown--;
					}
				}
			}
			free(text);
			free(file);
		}
		closedir(d);
	}
	free(dir);
	for (size_t i = 0; i < n; i++)
		free(twins[i]);
	free(twins);
}

/* The installed versions of packages[i] into versions[i] (NULL: unknown),
 * from one read of the dpkg status file. */
static void package_versions(const struct context *ctx, char *const packages[], char *versions[], size_t n)
{
	const char **wanted = xcalloc(n + 1, sizeof(*wanted));
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		versions[i] = NULL;
		if (packages[i])
			wanted[k++] = packages[i];
	}
	char *path = ctx_path(ctx, "/var/lib/dpkg/status");
	struct dpkg_status st;
	char err[256];
	if (k && dpkg_status_load(path, wanted, &st, err, sizeof(err)) == 0) {
		for (size_t p = 0; p < st.count; p++) {
			if (!dpkg_pkg_installed(&st.pkgs[p]) || !*st.pkgs[p].version)
				continue;
			for (size_t i = 0; i < n; i++)
				if (packages[i] && !versions[i] && strcmp(st.pkgs[p].name, packages[i]) == 0)
					versions[i] = xstrdup(st.pkgs[p].version);
		}
		dpkg_status_free(&st);
	}
	free(path);
	free(wanted);
}

/* Which package the loader and the driver came from; a copy outside any
 * package that shadows a system one, or a driver whose build differs from
 * its package's, is a warning. */
static void check_provenance(const struct context *ctx, const struct backend *be, const json_t *res, struct result *r)
{
	/* every package list only in validate: a full scan costs ~100 ms */
	bool thorough = ctx->profile && strcmp(ctx->profile, "validate") == 0;
	json_t *prov = json_object();
	const char *lib = json_string_value(json_object_get(res, "library"));
	const char *drv = json_string_value(json_object_get(res, "driver_library"));
	/* [0] the loader, [1] the driver: one pass over the package lists and
	 * one read of the status file for both */
	const char *const paths[2] = { lib, drv };
	char *owners[2], *versions[2];
	packages_owning(ctx, paths, owners, 2, thorough);
	package_versions(ctx, owners, versions, 2);
	if (lib) {
		char *owner = owners[0];
		if (owner) {
			char *ver = versions[0];
			char *text = xasprintf("%s %s", owner, ver ? ver : "(version unknown)");
			json_object_set_new(prov, "loader_package", json_text(text));
			free(text);
		} else {
			char *sys = xasprintf("/usr/lib/x86_64-linux-gnu/%s", be->library);
			char *sys_root = ctx_path(ctx, sys);
			char real[PATH_MAX];
			bool shadows = realpath(sys_root, real) && strcmp(real, lib) != 0;
			if (shadows) {
				result_finding(r, STATUS_WARN, "%s: the loader in use, %s, belongs to no package (a pip or conda copy?) and shadows the system one at %s",
					       be->name, lib, real);
				result_remedy(r, "use the system loader: remove the other copy or its folder from LD_LIBRARY_PATH (pip uninstall / conda remove of level-zero)");
			} else {
				json_object_set_new(prov, "loader_package", json_string("(none of the Level Zero packages)"));
			}
			free(sys_root);
			free(sys);
		}
	}
	if (drv) {
		char *owner = owners[1];
		json_object_set_new(prov, "driver_library", json_text(drv));
		if (owner) {
			char *ver = versions[1];
			char *text = xasprintf("%s %s", owner, ver ? ver : "(version unknown)");
			json_object_set_new(prov, "driver_package", json_text(text));
			long pkg_build = ze_package_build(ver);
			json_t *b = json_object_get(res, "driver_build");
			if (ver && pkg_build >= 0 && b && json_integer_value(b) != pkg_build)
				result_finding(r, STATUS_WARN, "%s: the driver reports build %lld (%s) but its package is %s (build %ld): a stale or shadowed driver library",
					       be->name, (long long)json_integer_value(b),
					       json_string_value(json_object_get(res, "driver_version")) ?: "?", text, pkg_build);
			free(text);
		} else {
			json_object_set_new(prov, "driver_package", json_string("(none of the Level Zero packages)"));
		}
	}
	for (size_t i = 0; i < 2; i++) {
		free(owners[i]);
		free(versions[i]);
	}
	json_object_set_new(prov, "backend", json_string(be->name));
	json_t *arr = json_object_get(result_details(r), "provenance");
	if (!arr) {
		arr = json_array();
		json_object_set_new(result_details(r), "provenance", arr);
	}
	json_array_append_new(arr, prov);
}

static void run_loader(const struct context *ctx, void *state, struct result *r)
{
	struct runtime_state *st = state;
	if (runtime_no_backend(st, r))
		return;
	json_t *arr = json_array();
	json_object_set_new(result_details(r), "probes", arr);
	struct strbuf ok = STRBUF_INIT;
	for (size_t i = 0; i < st->n; i++) {
		const struct probe_run *e = &st->probes[i].enumeration;
		const struct backend *be = st->probes[i].be;
		add_run_details(arr, be, e);
		if (never_initialized(e)) {
			result_finding(r, STATUS_FAIL, "%s: %s", be->name, e->verdict);
			remedy_for(r, be, e);
			continue;
		}
		check_provenance(ctx, be, e->result, r);
		const char *lib = json_string_value(json_object_get(e->result, "library"));
		const char *ver = json_string_value(json_object_get(e->result, "driver_version"));
		sb_printf(&ok, "%s%s: %s, driver %s", ok.len ? "; " : "", be->name, lib ? lib : be->library, ver ? ver : "?");
	}
	char cached[64] = "";
	if (st->cache_age >= 0) {
		snprintf(cached, sizeof(cached), " (cached %.0f s ago)", st->cache_age);
		json_t *c = json_object();
		json_object_set_new(c, "folder", json_text(st->cache_path));
		json_object_set_new(c, "age_s", json_real(st->cache_age));
		json_object_set_new(result_details(r), "state_cache", c);
	}
	bool failed = r->status == STATUS_FAIL;
	const char *first = result_first_finding(r);
	if (st->cache_note) {
		result_finding(r, STATUS_WARN, "%s", st->cache_note);
		result_remedy(r, "give gpugate a private state folder: set XDG_RUNTIME_DIR to a folder of this user with mode 0700");
	}
	if (failed)
		result_set(r, STATUS_FAIL, "%s%s", first, cached);
	else
		result_set(r, r->status, "runtime loaded and initialized (%s)%s", ok.buf ? ok.buf : "", cached);
	sb_release(&ok);
}

static void run_devices(const struct context *ctx, void *state, struct result *r)
{
	(void)ctx;
	struct runtime_state *st = state;
	if (runtime_no_backend(st, r))
		return;
	size_t total = 0, reached = 0;
	json_t *all = json_array();
	json_object_set_new(result_details(r), "devices", all);
	for (size_t i = 0; i < st->n; i++) {
		const struct probe_run *e = &st->probes[i].enumeration;
		const struct backend *be = st->probes[i].be;
		if (never_initialized(e))
			continue;
		reached++;
		if (e->verdict) {
			result_finding(r, STATUS_FAIL, "%s: %s", be->name, e->verdict);
			result_remedy(r, "check that /dev/dri/renderD* and /dev/dri/by-path are visible (the devices checks) and that ZE_AFFINITY_MASK does not hide every GPU");
			continue;
		}
		json_t *devs = json_object_get(e->result, "devices");
		size_t d;
		json_t *dev;
		json_array_foreach(devs, d, dev) {
			json_t *copy = json_deep_copy(dev);
			json_object_set_new(copy, "backend", json_string(be->name));
			json_array_append_new(all, copy);
			total++;
		}
	}
	if (reached == 0)
		result_blocked(r, "runtime.loader");
	else if (result_finding_count(r))
		result_set(r, STATUS_FAIL, "%s", result_first_finding(r));
	else {
		struct strbuf names = STRBUF_INIT;
		size_t d;
		json_t *dev;
		json_array_foreach(all, d, dev) {
			const char *pci = json_string_value(json_object_get(dev, "pci"));
			sb_printf(&names, "%s%s%s%s%s", d ? ", " : "", json_string_value(json_object_get(dev, "name")) ?: "?",
				  pci ? " (" : "", pci ? pci : "", pci ? ")" : "");
		}
		result_set(r, STATUS_PASS, "%zu GPU%s: %s", total, total == 1 ? "" : "s", names.buf);
		sb_release(&names);
	}
}

static void run_smoke(const struct context *ctx, void *state, struct result *r)
{
	(void)ctx;
	struct runtime_state *st = state;
	if (runtime_no_backend(st, r))
		return;
	json_t *arr = json_array();
	json_object_set_new(result_details(r), "probes", arr);
	size_t passed = 0, ran = 0;
	long elements = 0;
	for (size_t i = 0; i < st->n; i++) {
		const struct backend *be = st->probes[i].be;
		for (size_t d = 0; d < st->probes[i].n_devices; d++) {
			const struct probe_run *run = &st->probes[i].devices[d];
			add_run_details(arr, be, run);
			ran++;
			json_t *dev = runtime_device_result(run, d);
			bool verified = json_is_true(json_object_get(json_object_get(dev, "smoke"), "ok"));
			/* a failed performance measurement after a verified smoke is runtime.performance's */
			if (run->verdict && !(verified && run->failed_stage && strcmp(run->failed_stage, "perf") == 0)) {
				result_finding(r, STATUS_FAIL, "%s device %zu: %s", be->name, d, run->verdict);
				remedy_for(r, be, run);
				continue;
			}
			elements = (long)json_integer_value(json_object_get(json_object_get(dev, "smoke"), "elements"));
			passed++;
		}
	}
	if (ran == 0)
		result_blocked(r, "runtime.devices");
	else if (passed < ran)
		result_set(r, STATUS_FAIL, "smoke kernel failed on %zu of %zu devices: %s", ran - passed, ran,
			   result_first_finding(r));
	else
		result_set(r, STATUS_PASS, "smoke kernel correct on %zu device%s (%ld elements each, every one verified)", ran,
			   ran == 1 ? "" : "s", elements);
}

static void run_memory(const struct context *ctx, void *state, struct result *r)
{
	struct runtime_state *st = state;
	if (runtime_no_backend(st, r))
		return;
	uint64_t want = spec_size(ctx->spec, "runtime.min_free_memory", 0);
	size_t seen = 0;
	for (size_t i = 0; i < st->n; i++) {
		const struct probe_run *e = &st->probes[i].enumeration;
		if (e->verdict)
			continue;
		size_t d;
		json_t *dev;
		json_array_foreach(json_object_get(e->result, "devices"), d, dev) {
			seen++;
			json_t *fj = json_object_get(dev, "memory_free");
			/* The per-device smoke probe holds a context, so CUDA reports free
			 * memory there (cuMemGetInfo) even when the enumeration cannot. */
			if (!fj && d < st->probes[i].n_devices) {
				json_t *sd = runtime_device_result(&st->probes[i].devices[d], d);
				fj = sd ? json_object_get(sd, "memory_free") : NULL;
			}
			uint64_t total = (uint64_t)json_integer_value(json_object_get(dev, "memory_total"));
			uint64_t avail = fj ? (uint64_t)json_integer_value(fj) : total;
			const char *what = fj ? "free" : "total (free memory not reported by this driver: Sysman unsupported)";
			if (want && avail < want)
				result_finding(r, STATUS_FAIL, "device %zu: %.1f GiB %s, the spec wants %.1f GiB free", d,
					       (double)avail / (1 << 30), what, (double)want / (1 << 30));
			else if (!fj)
				result_finding(r, STATUS_PASS, "device %zu: %.1f GiB %s", d, (double)avail / (1 << 30), what);
		}
	}
	if (seen == 0)
		result_blocked(r, "runtime.devices");
	else if (r->status == STATUS_FAIL) {
		result_set(r, STATUS_FAIL, "%s", result_first_finding(r));
		result_remedy(r, "free GPU memory: stop other processes on the GPU (xpu-smi ps) or lower runtime.min_free_memory");
	} else
		result_set(r, STATUS_PASS, "%zu device%s with enough memory%s", seen, seen == 1 ? "" : "s",
			   want ? "" : " (no minimum set)");
}

json_t *runtime_device_result(const struct probe_run *run, size_t index)
{
	/* Level Zero children list every device, CUDA ones only theirs: by index */
	json_t *devs = run->result ? json_object_get(run->result, "devices") : NULL;
	size_t i;
	json_t *dev;
	json_array_foreach(devs, i, dev) {
		json_t *idx = json_object_get(dev, "index");
		if (json_is_integer(idx) && json_integer_value(idx) == (json_int_t)index)
			return dev;
	}
	return json_array_get(devs, index);
}

const char *runtime_device_label(const json_t *dev, size_t index, char *buf, size_t size)
{
	const char *name = json_string_value(json_object_get(dev, "name"));
	const char *pci = json_string_value(json_object_get(dev, "pci"));
	if (name && pci)
		snprintf(buf, size, "device %zu (%s, %s)", index, name, pci);
	else if (name || pci)
		snprintf(buf, size, "device %zu (%s)", index, name ? name : pci);
	else
		snprintf(buf, size, "device %zu", index);
	return buf;
}

static const struct check_def runtime_checks[] = {
	{ "runtime.loader", "the GPU runtime loader loads and initializes (zeInit) in a child process", NULL, true, run_loader },
	{ "runtime.devices", "the runtime enumerates at least one GPU (name, PCI address, memory, driver version)", NULL, true, run_devices },
	{ "runtime.smoke", "a SPIR-V kernel runs on every GPU and every element of its result is right", "runtime.smoke", true, run_smoke },
	{ "runtime.memory", "every GPU has the free memory the spec asks for", NULL, true, run_memory },
	{ "runtime.health", "health of every GPU: temperature, power, frequency, memory health, RAS/ECC errors (best effort)",
	  "runtime.telemetry", true, runtime_run_health },
	{ "runtime.processes", "no other process uses a GPU (a warning: tests would share its memory and time)",
	  "runtime.processes", true, runtime_run_processes },
	{ "runtime.performance", "copy bandwidth and kernel launch latency of every GPU within the tolerance of its baseline",
	  "runtime.performance", true, runtime_run_performance },
	{ NULL, NULL, NULL, false, NULL },
};

const struct check_group runtime_group = {
	.name = "runtime",
	.description = "the GPU runtime works: loader, devices, a smoke kernel on each, memory",
	.spec_keys = runtime_keys,
	.validate = runtime_perf_validate,
	.prepare = runtime_prepare,
	.release = runtime_release,
	.checks = runtime_checks,
};
