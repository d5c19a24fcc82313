/* Check group `runtime`: proves the GPU runtime works, in child processes
 * (gpugate never loads a GPU library itself). The probe session
 * (src/backend/session.h) runs them once in prepare: one child per device
 * that enumerates and smokes, or one per backend that enumerates. The checks
 * judge its typed outcomes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <limits.h>
#include <unistd.h>

#include "../lib/dpkg_status.h"
#include "../lib/util.h"
#include "../registry.h"
#include "../facts/runtime.h"
#include "runtime_state.h"

#define DEADLINE_MARGIN_S 0.3 /* the verdict must still be written after a kill */

static const struct spec_key runtime_keys[] = {
	{ "runtime", SPEC_MAP, SCALAR_STR, NULL, "the runtime section: probe the GPU runtime in a child process", NULL,
	  NULL },
	{ "runtime.backend", SPEC_SCALAR, SCALAR_ENUM, "auto|level-zero|cuda",
	  "auto: every backend whose loader library is installed; or one backend", "auto", NULL },
	{ "runtime.timeout", SPEC_SCALAR, SCALAR_SECONDS, NULL, "the probe's deadline (capped by the run's deadline)",
	  "30s", NULL },
	{ "runtime.min_free_memory", SPEC_SCALAR, SCALAR_SIZE, NULL, "free device memory each GPU must have, e.g. 8GiB",
	  "0", NULL },
	{ "runtime.smoke", SPEC_SCALAR, SCALAR_BOOL, NULL, "run the SPIR-V smoke kernel on every device", "false",
	  NULL },
	{ "runtime.telemetry", SPEC_SCALAR, SCALAR_BOOL, NULL,
	  "read temperature and other telemetry (Level Zero Sysman, NVML)", "false", NULL },
	{ "runtime.cache_ttl", SPEC_SCALAR, SCALAR_SECONDS, NULL,
	  "healthcheck profile: reuse a passing probe result this long (a failure at most 30s)", "5m", NULL },
	{ "runtime.work_items", SPEC_SCALAR, SCALAR_INT, NULL, "smoke kernel size (at least 1048576)", "1048576",
	  NULL },
	{ "runtime.processes", SPEC_SCALAR, SCALAR_BOOL, NULL,
	  "warn when other processes use a GPU (needs smoke: true)", "false", NULL },
	{ "runtime.performance", SPEC_SCALAR, SCALAR_BOOL, NULL,
	  "measure copy bandwidth and launch latency and compare them with the baselines (needs smoke: true)", "false",
	  NULL },
	{ "runtime.tolerance", SPEC_SCALAR, SCALAR_STR, NULL,
	  "how much slower than its baseline a GPU may be, e.g. 20%", "20%", NULL },
	{ "runtime.baselines", SPEC_SCALAR, SCALAR_STR, NULL,
	  "a folder of more baseline files (*.json), beside the built-in checks/baselines folder", NULL, NULL },
	{ "runtime.bandwidth_buffer", SPEC_SCALAR, SCALAR_SIZE, NULL,
	  "the bandwidth copy's buffer size, 1MiB to 4GiB (baselines are recorded with the default)", "256MiB", NULL },
	{ NULL, 0, 0, NULL, NULL, NULL, NULL },
};

/* The probe's plan, resolved once from the context: src/backend/ reads no
 * context (probe_plan.h). */
static void *runtime_prepare(const struct context *ctx)
{
	struct probe_session_request req = {
		.backend = key_str(ctx->spec, "runtime.backend"),
		.smoke = key_bool(ctx->spec, "runtime.smoke"),
		.telemetry = key_bool(ctx->spec, "runtime.telemetry"),
		.processes = key_bool(ctx->spec, "runtime.processes"),
		.perf = key_bool(ctx->spec, "runtime.performance"),
		.work_items = key_int(ctx->spec, "runtime.work_items"),
		.perf_bytes = (size_t)key_size(ctx->spec, "runtime.bandwidth_buffer"),
		.use_cache = ctx_is_healthcheck(ctx),
		.cache_ttl = key_seconds(ctx->spec, "runtime.cache_ttl"),
	};
	struct probe_plan plan = {
		.root = ctx->root,
		.env = ctx->env,
		.self_exe = ctx_self_exe(ctx),
		.sandbox = ctx->sandbox_filters > 0,
		.vendor = ctx->vendor ? vendor_by_name(ctx->vendor) : NULL,
		.deadline = monotonic_seconds() + key_seconds(ctx->spec, "runtime.timeout"),
	};
	if (ctx->deadline - DEADLINE_MARGIN_S < plan.deadline)
		plan.deadline = ctx->deadline - DEADLINE_MARGIN_S;
	probe_plan_resolve(&plan, &req);
	struct probe_session *s = probe_session_run(&plan, &req);
	probe_plan_release(&plan);
	return s;
}

static void runtime_release(void *state)
{
	probe_session_free(state);
}

static void add_run_details(json_t *arr, const struct backend *be, const struct probe_outcome *o)
{
	struct probe_run_fact f = { .backend = be->name,
				    .seconds = o->seconds,
				    .verdict = o->verdict,
				    .last_stage = o->last_stage,
				    .output = o->output,
				    .result = o->result.raw };
	json_array_append_new(arr, probe_run_encode(&f));
}

bool runtime_no_backend(const struct probe_session *st, struct result *r)
{
	if (!st->none_found)
		return false;
	if (strcmp(r->id, "runtime.loader") != 0) {
		result_blocked(r, "runtime.loader"); /* its failure says it once */
		return true;
	}
	result_set(r, STATUS_FAIL, "%s", st->none_found);
	result_remedy(r, "%s", st->none_remedy);
	return true;
}

/* True when list (a dpkg .list file's text) names path on a line of its own. */
static bool list_names(const char *list, size_t len, const char *path)
{
	size_t n = strlen(path);
	for (const char *p = list; p && p < list + len;
	     p = memchr(p, '\n', (size_t)(list + len - p)), p = p ? p + 1 : NULL)
		if ((size_t)(list + len - p) >= n && memcmp(p, path, n) == 0 && (p + n == list + len || p[n] == '\n'))
			return true;
	return false;
}

/* The packages whose file lists (/var/lib/dpkg/info/ under --root) name
 * paths[i] (or its /usr-merged twin), into owners[i] (NULL: none found), in
 * one pass over the lists: the vendor's stack packages first, then, when
 * thorough, every other list. Caller frees owners[i]. */
static void packages_owning(const struct context *ctx, const struct vendor *likely, const char *const paths[],
			    char *owners[], size_t n, bool thorough)
{
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
			/* NAME.list or NAME:ARCH.list (a package name has no ':') */
			size_t len = strcspn(e->d_name, ":");
			if (!e->d_name[len])
				len -= 5;
			char *name = xstrndup(e->d_name, len);
			bool is_likely = vendor_owns_package(likely, name);
			free(name);
			if (is_likely != (pass == 0))
				continue;
			char *file = xasprintf("%s/%s", dir, e->d_name), *text = NULL;
			size_t size = 0;
			if (read_file(file, &text, &size) == 0) {
				for (size_t i = 0; i < n; i++) {
					if (!paths[i] || owners[i])
						continue;
					if (list_names(text, size, paths[i]) ||
					    (twins[i] && list_names(text, size, twins[i]))) {
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
static void check_provenance(const struct context *ctx, const struct backend *be, const struct probe_result *res,
			     struct result *r, json_t *provenance)
{
	/* every package list only in validate: a full scan costs ~100 ms */
	bool thorough = ctx->profile && strcmp(ctx->profile, "validate") == 0;
	json_t *prov = json_object();
	const char *lib = res->library;
	const char *drv = res->driver_library;
	/* under --root the children loaded the root's copies: the root's package
	 * lists name them without the root's prefix */
	char real_root[PATH_MAX];
	size_t rlen = ctx->root && *ctx->root && realpath(ctx->root, real_root) ? strlen(real_root) : 0;
	const char *lib_in = lib && rlen && !strncmp(lib, real_root, rlen) && lib[rlen] == '/' ? lib + rlen : lib;
	const char *drv_in = drv && rlen && !strncmp(drv, real_root, rlen) && drv[rlen] == '/' ? drv + rlen : drv;
	/* [0] the loader, [1] the driver: one pass over the package lists and
	 * one read of the status file for both */
	const char *const paths[2] = { lib_in, drv_in };
	char *owners[2], *versions[2];
	packages_owning(ctx, be->vendor, paths, owners, 2, thorough);
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
				result_finding(
					r, STATUS_WARN, "runtime.loader.shadowing_loader",
					"%s: the loader in use, %s, belongs to no package (a pip or conda copy?) and shadows the system one at %s",
					be->name, lib, real);
				result_remedy(
					r,
					"use the system loader: remove the other copy or its folder from LD_LIBRARY_PATH (pip uninstall / conda remove of the package that installed it)");
			} else {
				json_object_set_new(prov, "loader_package", json_string(be->no_package));
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
			long pkg_build = be->package_build && ver ? be->package_build(ver) : -1;
			if (pkg_build >= 0 && res->has_driver_build && res->driver_build != pkg_build)
				result_finding(
					r, STATUS_WARN, "runtime.loader.stale_driver",
					"%s: the driver reports build %lld (%s) but its package is %s (build %ld): a stale or shadowed driver library",
					be->name, res->driver_build, res->driver_version ? res->driver_version : "?",
					text, pkg_build);
			free(text);
		} else {
			json_object_set_new(prov, "driver_package", json_string(be->no_package));
		}
	}
	for (size_t i = 0; i < 2; i++) {
		free(owners[i]);
		free(versions[i]);
	}
	json_object_set_new(prov, "backend", json_string(be->name));
	json_array_append_new(provenance, prov);
}

static void run_loader(const struct context *ctx, void *state, struct result *r)
{
	struct probe_session *st = state;
	if (runtime_no_backend(st, r))
		return;
	json_t *arr = json_array();
	runtime_facts_encode_probes(result_details(r), arr);
	struct strbuf ok = STRBUF_INIT;
	json_t *provenance = json_array();
	for (size_t i = 0; i < st->n; i++) {
		const struct probe_outcome *e = &st->probes[i].enumeration;
		const struct backend *be = st->probes[i].be;
		add_run_details(arr, be, e);
		if (probe_never_initialized(e)) {
			result_finding(r, STATUS_FAIL, "runtime.loader.failed", "%s: %s", be->name, e->verdict);
			probe_remedy(be, e, r);
			continue;
		}
		check_provenance(ctx, be, &st->probes[i].found, r, provenance);
		const char *lib = st->probes[i].found.library;
		const char *ver = st->probes[i].found.driver_version;
		sb_printf(&ok, "%s%s: %s, driver %s", ok.len ? "; " : "", be->name, lib ? lib : be->library,
			  ver ? ver : "?");
	}
	if (json_array_size(provenance))
		json_object_set_new(result_details(r), "provenance", provenance);
	else
		json_decref(provenance);
	char cached[64] = "";
	if (st->cache_age >= 0) {
		snprintf(cached, sizeof(cached), " (cached %.0f s ago)", st->cache_age);
		json_t *c = json_object();
		json_object_set_new(c, "folder", json_text(st->cache_path));
		json_object_set_new(c, "age_s", json_real(st->cache_age));
		json_object_set_new(result_details(r), "state_cache", c);
	} else if (st->cache_discarded) {
		json_object_set_new(result_details(r), "state_cache",
				    json_pack("{s:o}", "discarded", json_text(st->cache_discarded)));
	}
	bool failed = r->status == STATUS_FAIL;
	const char *first = result_worst_finding(r);
	if (st->cache_note) {
		result_finding(r, STATUS_WARN, "runtime.loader.state_cache", "%s", st->cache_note);
		result_remedy(
			r,
			"give gpugate a private state folder: set XDG_RUNTIME_DIR to a folder of this user with mode 0700");
	}
	if (failed)
		result_set(r, STATUS_FAIL, "%s%s", first, cached);
	else
		result_set(r, r->status, "runtime loaded and initialized (%s)%s", ok.buf, cached);
	sb_release(&ok);
}

static void run_devices(const struct context *ctx, void *state, struct result *r)
{
	(void)ctx;
	struct probe_session *st = state;
	if (runtime_no_backend(st, r))
		return;
	size_t total = 0, reached = 0;
	json_t *all = json_array();
	runtime_facts_encode_devices(result_details(r), all);
	struct strbuf names = STRBUF_INIT;
	for (size_t i = 0; i < st->n; i++) {
		const struct probe_outcome *e = &st->probes[i].enumeration;
		const struct backend *be = st->probes[i].be;
		if (probe_never_initialized(e))
			continue;
		reached++;
		if (e->verdict) {
			result_finding(r, STATUS_FAIL, "runtime.devices.failed", "%s: %s", be->name, e->verdict);
			result_remedy(r, "%s", be->vendor->no_device_fix);
			continue;
		}
		const struct probe_result *found = &st->probes[i].found;
		for (size_t d = 0; d < found->n_devices; d++) {
			const struct probe_device *dev = &found->devices[d];
			json_array_append_new(all, runtime_device_encode(dev->raw, be->name));
			sb_printf(&names, "%s%s%s%s%s", total ? ", " : "", dev->name ? dev->name : "?",
				  dev->pci ? " (" : "", dev->pci ? dev->pci : "", dev->pci ? ")" : "");
			total++;
		}
	}
	if (reached == 0)
		result_blocked(r, "runtime.loader");
	else if (result_finding_count(r))
		result_set(r, STATUS_FAIL, "%s", result_worst_finding(r));
	else
		result_set(r, STATUS_PASS, "%zu %s: %s", total, count_noun(total, "GPU", "GPUs"), names.buf);
	sb_release(&names);
}

static void run_smoke(const struct context *ctx, void *state, struct result *r)
{
	(void)ctx;
	struct probe_session *st = state;
	if (runtime_no_backend(st, r))
		return;
	json_t *arr = json_array();
	runtime_facts_encode_probes(result_details(r), arr);
	size_t passed = 0, ran = 0;
	long elements = 0;
	for (size_t i = 0; i < st->n; i++) {
		const struct backend *be = st->probes[i].be;
		for (size_t d = 0; d < st->probes[i].n_devices; d++) {
			const struct probe_outcome *run = &st->probes[i].devices[d];
			add_run_details(arr, be, run);
			ran++;
			const struct probe_device *dev = probe_device_result(&st->probes[i], d);
			bool verified = dev && dev->smoke.ok;
			/* a failed performance measurement after a verified smoke is runtime.performance's */
			if (run->verdict &&
			    !(verified && run->failed_stage && strcmp(run->failed_stage, "perf") == 0)) {
				result_finding(r, STATUS_FAIL, "runtime.smoke.failed", "%s device %zu: %s", be->name, d,
					       run->verdict);
				probe_remedy(be, run, r);
				continue;
			}
			elements = dev ? (long)dev->smoke.elements : 0;
			passed++;
		}
	}
	if (ran == 0)
		result_blocked(r, "runtime.devices");
	else if (passed < ran)
		result_set(r, STATUS_FAIL, "smoke kernel failed on %zu of %zu %s: %s", ran - passed, ran,
			   count_noun(ran, "device", "devices"), result_worst_finding(r));
	else
		result_set(r, STATUS_PASS, "smoke kernel correct on %zu %s (%ld elements each, every one verified)",
			   ran, count_noun(ran, "device", "devices"), elements);
}

static void run_memory(const struct context *ctx, void *state, struct result *r)
{
	struct probe_session *st = state;
	if (runtime_no_backend(st, r))
		return;
	uint64_t want = key_size(ctx->spec, "runtime.min_free_memory");
	size_t seen = 0;
	for (size_t i = 0; i < st->n; i++) {
		const struct probe_outcome *e = &st->probes[i].enumeration;
		if (e->verdict)
			continue;
		const struct probe_result *found = &st->probes[i].found;
		char total[128];
		snprintf(total, sizeof(total), "total (free memory not reported by this driver: %s unsupported)",
			 st->probes[i].be->vendor->telemetry_api);
		for (size_t d = 0; d < found->n_devices; d++) {
			const struct probe_device *dev = &found->devices[d];
			seen++;
			bool has_free = dev->has_memory_free;
			uint64_t avail = dev->has_memory_free ? dev->memory_free : dev->memory_total;
			/* The per-device smoke probe holds a context, so CUDA reports free
			 * memory there (cuMemGetInfo) even when the enumeration cannot. */
			const struct probe_device *sd = has_free ? NULL : probe_device_result(&st->probes[i], d);
			if (sd && sd->has_memory_free) {
				has_free = true;
				avail = sd->memory_free;
			}
			const char *what = has_free ? "free" : total;
			/* on a host of several GPUs the index alone does not say which
			 * card to pull: name and PCI address too */
			char label[256];
			runtime_device_label(dev, d, label, sizeof(label));
			if (want && avail < want)
				result_finding(r, STATUS_FAIL, "runtime.memory.too_little",
					       "%s: %.1f GiB %s, the spec wants %.1f GiB free", label,
					       (double)avail / (1 << 30), what, (double)want / (1 << 30));
			else if (!has_free)
				result_finding(r, STATUS_PASS, "runtime.memory.free", "%s: %.1f GiB %s", label,
					       (double)avail / (1 << 30), what);
		}
	}
	if (seen == 0)
		result_blocked(r, "runtime.devices");
	else if (r->status == STATUS_FAIL) {
		result_set(r, STATUS_FAIL, "%s", result_worst_finding(r));
		char cmds[128];
		result_remedy(r,
			      "free GPU memory: stop other processes on the GPU (runtime.processes lists them; %s) or "
			      "lower runtime.min_free_memory",
			      runtime_processes_cmds(st, cmds, sizeof(cmds)));
	} else
		result_set(r, STATUS_PASS, "%zu %s with enough memory%s", seen, count_noun(seen, "device", "devices"),
			   want ? "" : " (no minimum set)");
}

const char *runtime_processes_cmds(const struct probe_session *s, char *buf, size_t size)
{
	size_t o = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < s->n; i++) {
		const char *cmd = s->probes[i].be->vendor->processes_cmd;
		bool again = false;
		for (size_t k = 0; k < i && cmd; k++)
			again |= s->probes[k].be->vendor->processes_cmd == cmd;
		if (cmd && !again && o < size)
			o += (size_t)snprintf(buf + o, size - o, "%s%s", o ? " / " : "", cmd);
	}
	return buf;
}

const char *runtime_device_label(const struct probe_device *dev, size_t index, char *buf, size_t size)
{
	const char *name = dev ? dev->name : NULL;
	const char *pci = dev ? dev->pci : NULL;
	if (name && pci)
		snprintf(buf, size, "device %zu (%s, %s)", index, name, pci);
	else if (name || pci)
		snprintf(buf, size, "device %zu (%s)", index, name ? name : pci);
	else
		snprintf(buf, size, "device %zu", index);
	return buf;
}

static const struct check_def runtime_checks[] = {
	{ "runtime.loader", "the GPU runtime loader loads and initializes (zeInit) in a child process", NULL, true,
	  run_loader },
	{ "runtime.devices", "the runtime enumerates at least one GPU (name, PCI address, memory, driver version)",
	  NULL, true, run_devices },
	{ "runtime.smoke", "a SPIR-V kernel runs on every GPU and every element of its result is right",
	  "runtime.smoke", true, run_smoke },
	{ "runtime.memory", "every GPU has the free memory the spec asks for", NULL, true, run_memory },
	{ "runtime.health",
	  "health of every GPU: temperature, power, frequency, memory health, RAS/ECC errors (best effort)",
	  "runtime.telemetry", true, runtime_run_health },
	{ "runtime.processes", "no other process uses a GPU (a warning: tests would share its memory and time)",
	  "runtime.processes", true, runtime_run_processes },
	{ "runtime.performance",
	  "copy bandwidth and kernel launch latency of every GPU within the tolerance of its baseline",
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
