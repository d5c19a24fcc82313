/* runtime.performance: every GPU's copy bandwidth and kernel launch latency
 * (measured by the per-device probe child, validate profile) against the
 * baseline of its model (src/lib/baselines.h), with the spec's tolerance.
 * A GPU without a baseline passes with its figures and the JSON line that
 * would record them as one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/baselines.h"
#include "../lib/util.h"
#include "../facts/runtime.h"
#include "../registry.h"
#include "runtime_state.h"

/* "20%" or "20": a percentage above 0 and below 100. */
static int parse_percent(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || (*end && strcmp(end, "%") != 0) || !(v > 0 && v < 100))
		return -1;
	*out = v;
	return 0;
}

static double tolerance(const struct spec *spec)
{
	double t = 0;
	if (parse_percent(key_str(spec, "runtime.tolerance"), &t) < 0) /* the validator has refused it already */
		(void)parse_percent(key_default("runtime.tolerance", false), &t);
	return t;
}

int runtime_perf_validate(const struct spec *spec, struct spec_error *err)
{
	const char *s = spec_str(spec, "runtime.tolerance", NULL);
	double t;
	if (s && parse_percent(s, &t) < 0)
		return spec_error_at(err, spec, spec_get(spec, "runtime.tolerance"),
				     "runtime.tolerance: '%s' is not a percentage between 0 and 100 (e.g. 20%%)", s);
	bool smoke = key_bool(spec, "runtime.smoke");
	static const char *const need_smoke[] = { "runtime.performance", "runtime.processes", NULL };
	for (size_t i = 0; need_smoke[i]; i++)
		if (key_bool(spec, need_smoke[i]) && !smoke)
			return spec_error_at(err, spec, spec_get(spec, need_smoke[i]),
					     "%s needs runtime.smoke: true (the per-device probe measures it)",
					     need_smoke[i]);
	uint64_t buf = key_size(spec, "runtime.bandwidth_buffer");
	if (buf < (1u << 20) || buf > ((uint64_t)4 << 30))
		return spec_error_at(err, spec, spec_get(spec, "runtime.bandwidth_buffer"),
				     "runtime.bandwidth_buffer must be from 1MiB to 4GiB");
	const char *folder = spec_str(spec, "runtime.baselines", NULL);
	if (!folder && !key_bool(spec, "runtime.performance"))
		return 0;
	struct baseline_set set;
	char why[768];
	const char *names[8];
	backend_name_list(names, 8);
	int rc = baselines_load(&set, folder, names, why, sizeof(why));
	baselines_free(&set);
	if (rc < 0)
		return spec_error_at(err, spec, spec_get(spec, folder ? "runtime.baselines" : "runtime.performance"),
				     "bad performance baseline: %s", why);
	return 0;
}

/* The JSON line that would record these figures as the model's baseline. */
static json_t *candidate(const char *backend, const struct probe_device *dev, const struct probe_result *probe)
{
	char vid[24], did[24];
	snprintf(vid, sizeof(vid), "0x%04lx", dev->vendor_id & 0xffff);
	snprintf(did, sizeof(did), "0x%04lx", dev->device_id & 0xffff);
	if (dev->device_id < 0 && !dev->name)
		return NULL; /* nothing to key it by */
	json_t *rec = json_object();
	if (probe->driver_version)
		json_object_set_new(rec, "driver", json_string(probe->driver_version));
	if (dev->performance.buffer_bytes >= 0)
		json_object_set_new(rec, "buffer_bytes", json_integer((json_int_t)dev->performance.buffer_bytes));
	json_t *c =
		json_pack("{s:s, s:s?, s:s, s:s?, s:f, s:f, s:o}", "vendor_id", vid, "device_id",
			  dev->device_id >= 0 ? did : NULL, "backend", backend, "name", dev->name, "copy_bandwidth_gbs",
			  round_decimals(dev->performance.copy_bandwidth_gbs, 1), "launch_latency_us",
			  round_decimals(dev->performance.launch_latency_us, 2), "recorded", rec);
	if (c && dev->device_id < 0)
		json_object_del(c, "device_id"); /* keyed by name */
	return c;
}

void runtime_run_performance(const struct context *ctx, void *state, struct result *r)
{
	struct probe_session *st = state;
	if (runtime_no_backend(st, r))
		return;
	double tol = tolerance(ctx->spec);
	struct baseline_set set;
	char why[768];
	const char *names[8];
	backend_name_list(names, 8);
	if (baselines_load(&set, spec_str(ctx->spec, "runtime.baselines", NULL), names, why, sizeof(why)) < 0) {
		result_set(r, STATUS_FAIL, "bad performance baseline: %s",
			   why); /* changed since the validator read it */
		return;
	}
	json_t *cands = json_array(), *figures = json_array();
	runtime_facts_encode_measured(result_details(r), figures);
	size_t ran = 0, compared = 0, fresh = 0;
	bool slow = false;
	for (size_t i = 0; i < st->n; i++) {
		const char *backend = st->probes[i].be->name;
		for (size_t d = 0; d < st->probes[i].n_devices; d++) {
			const struct probe_outcome *run = &st->probes[i].devices[d];
			const struct probe_device *dev = probe_device_result(&st->probes[i], d);
			char label[256];
			runtime_device_label(dev, d, label, sizeof(label));
			ran++;
			if (run->verdict && run->failed_stage && strcmp(run->failed_stage, "perf") == 0) {
				result_finding(r, STATUS_FAIL, "runtime.performance.failed", "%s %s: %s", backend,
					       label, run->verdict);
				continue;
			}
			if (!dev || !dev->performance.present || !dev->performance.measured) {
				result_finding(r, STATUS_FAIL, "runtime.performance.not_measured",
					       "%s %s: not measured: %s", backend, label,
					       run->verdict ? run->verdict : "the probe reported no figures");
				continue;
			}
			/* whose figures they are, so that gpugate diff and spec freeze
			 * can pair and key them (gpugate diff, src/operator/) */
			struct figure_fact whose = { .backend = backend,
						     .index = (long)d,
						     .pci = dev->pci,
						     .name = dev->name,
						     .uuid = dev->uuid,
						     .vendor_id = dev->vendor_id,
						     .device_id = dev->device_id };
			json_t *fig = figure_encode(dev->performance.raw, &whose);
			json_array_append_new(figures, fig);
			double bw = dev->performance.copy_bandwidth_gbs;
			double lat = dev->performance.launch_latency_us;
			long vendor = dev->vendor_id, device = dev->device_id;
			const char *model = dev->name;
			const struct baseline *b =
				vendor >= 0 ? baselines_find(&set, vendor, device, model, backend) : NULL;
			char key[96];
			if (device >= 0)
				snprintf(key, sizeof(key), "%04lx-%04lx", vendor & 0xffff, device);
			else
				snprintf(key, sizeof(key), "%04lx-%s", vendor & 0xffff, model ? model : "unknown");
			for (char *k = key; *k; k++) /* a file name */
				if (!((*k >= 'a' && *k <= 'z') || (*k >= '0' && *k <= '9') || *k == '-'))
					*k = (*k >= 'A' && *k <= 'Z') ? (char)(*k - 'A' + 'a') : '-';
			if (!b) {
				fresh++;
				json_t *c = vendor >= 0 ? candidate(backend, dev, &run->result) : NULL;
				char *line =
					c ? json_dumps(c, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10))
					  : NULL;
				if (c)
					json_array_append_new(cands, c);
				result_finding(
					r, STATUS_PASS, "runtime.performance.no_baseline",
					"%s %s: copy bandwidth %.1f GB/s, launch latency %.2f µs; no baseline for %s: "
					"to compare with these figures from now on, save this line as "
					"checks/baselines/%s-%s.json (and rebuild) or in the runtime.baselines folder: %s",
					backend, label, bw, lat, key, key, backend,
					line ? line : "(no PCI ids or name reported: cannot key a baseline)");
				free(line);
				continue;
			}
			compared++;
			bool bad = false;
			if (b->bandwidth_gbs > 0 && bw < b->bandwidth_gbs * (1 - tol / 100)) {
				result_finding(
					r, STATUS_FAIL, "runtime.performance.slow_copy",
					"%s %s: copy bandwidth %.1f GB/s is %.0f%% below the baseline %.1f GB/s (%s; tolerance %.0f%%)",
					backend, label, bw, 100 * (1 - bw / b->bandwidth_gbs), b->bandwidth_gbs,
					b->source, tol);
				bad = true;
			}
			if (b->latency_us > 0 && lat > b->latency_us * (1 + tol / 100)) {
				result_finding(
					r, STATUS_FAIL, "runtime.performance.slow_launch",
					"%s %s: kernel launch latency %.2f µs is %.0f%% above the baseline %.2f µs (%s; tolerance %.0f%%)",
					backend, label, lat, 100 * (lat / b->latency_us - 1), b->latency_us, b->source,
					tol);
				bad = true;
			}
			if (bad) {
				slow = true;
				continue;
			}
			result_finding(
				r, STATUS_PASS, "runtime.performance.within",
				"%s %s: copy bandwidth %.1f GB/s (baseline %.1f), launch latency %.2f µs (baseline %.2f)",
				backend, label, bw, b->bandwidth_gbs, lat, b->latency_us);
		}
	}
	if (json_array_size(cands))
		json_object_set_new(result_details(r), "baseline_candidates", cands);
	else
		json_decref(cands);
	runtime_facts_encode_tolerance(result_details(r), tol);
	baselines_free(&set);
	const char *first = result_worst_finding(r);
	if (ran == 0) {
		result_blocked(r, "runtime.devices");
	} else if (r->status == STATUS_FAIL) {
		result_set(r, STATUS_FAIL, "%s", first);
		if (slow)
			result_remedy(
				r,
				"this driver stack is slower than the baseline: compare its driver and firmware with the ones "
				"the baseline records (\"recorded\"), check that no other process uses the GPU (runtime.processes) "
				"and that its clocks are not throttled (runtime.health); if the new speed is expected, record a new "
				"baseline from a passing run (the JSON in details.measured, or the note of a GPU without one)");
		else
			result_remedy(
				r,
				"the measurement itself failed: see runtime.smoke and the probe's output in the details");
	} else if (fresh && !compared) {
		result_set(r, STATUS_PASS, "%s", first);
	} else {
		result_set(r, STATUS_PASS,
			   "copy bandwidth and launch latency within %.0f%% of the baseline on %zu %s%s", tol, compared,
			   count_noun(compared, "device", "devices"),
			   fresh ? " (some without a baseline: see the findings)" : "");
	}
}
