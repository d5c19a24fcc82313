/* The runtime group's health checks, from what the per-device probe children
 * reported: runtime.health (telemetry of the validate profile) and
 * runtime.processes (other processes on a GPU; ci and validate). A value a
 * driver does not support is reported as such and never fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/util.h"
#include "runtime_state.h"

/* A telemetry value as a number; false when it is text or absent. */
static bool number(const json_t *t, const char *key, double *out)
{
	json_t *v = json_object_get(t, key);
	if (!json_is_number(v))
		return false;
	*out = json_number_value(v);
	return true;
}

/* "power not supported by this driver" notes for values given as text. */
static void note_text(struct strbuf *notes, const json_t *t, const char *key, const char *what)
{
	const char *s = json_string_value(json_object_get(t, key));
	if (s)
		sb_printf(notes, "%s%s %s", notes->len ? "; " : "", what, s);
}

static long long count_of(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_integer(v) ? (long long)json_integer_value(v) : 0;
}

/* Level Zero Sysman: memory health and RAS counters. */
static void judge_level_zero(struct result *r, const char *label, const json_t *t)
{
	const char *health = json_string_value(json_object_get(t, "memory_health"));
	if (health && (!strcmp(health, "critical") || !strcmp(health, "replace"))) {
		result_finding(r, STATUS_FAIL, "%s: memory health is %s (Sysman zes_mem_state_t.health)", label, health);
		result_remedy(r, "the GPU's memory is failing: take the GPU out of service and have it replaced (xpu-smi diag, the vendor's RMA)");
	} else if (health && !strcmp(health, "degraded")) {
		result_finding(r, STATUS_WARN, "%s: memory health is degraded: excessive correctable errors", label);
		result_remedy(r, "watch the GPU's memory errors (xpu-smi stats) and plan its replacement");
	}
	json_t *ras = json_object_get(t, "ras");
	if (json_is_object(ras)) {
		long long unc = count_of(ras, "uncorrectable"), cor = count_of(ras, "correctable");
		if (unc > 0) {
			result_finding(r, STATUS_FAIL, "%s: %lld uncorrectable RAS error%s since the driver loaded (and %lld correctable)",
				       label, unc, unc == 1 ? "" : "s", cor);
			result_remedy(r, "uncorrectable GPU errors make results untrustworthy: drain the node, read the kernel log (dmesg | grep -iE 'ras|error') and reset or replace the GPU");
		} else if (cor > 0) {
			result_finding(r, STATUS_WARN, "%s: %lld correctable RAS error%s since the driver loaded", label, cor,
				       cor == 1 ? "" : "s");
			result_remedy(r, "correctable errors are fixed by the hardware, but a rising count foretells a failure: watch it (xpu-smi stats)");
		}
	}
}

/* NVML: ECC counters and memory repair (row remapping, retired pages). */
static void judge_cuda(struct result *r, const char *label, const json_t *t)
{
	json_t *ecc = json_object_get(t, "ecc");
	if (json_is_object(ecc)) {
		long long unc = count_of(ecc, "uncorrected_volatile"), cor = count_of(ecc, "corrected_volatile");
		if (unc > 0) {
			result_finding(r, STATUS_FAIL, "%s: %lld uncorrected ECC error%s since the driver loaded", label, unc,
				       unc == 1 ? "" : "s");
			result_remedy(r, "drain the node and check nvidia-smi -q -d ECC,ROW_REMAPPER; reset the GPU (nvidia-smi -r) to remap the failed rows");
		} else if (cor > 0) {
			result_finding(r, STATUS_WARN, "%s: %lld corrected ECC error%s since the driver loaded", label, cor,
				       cor == 1 ? "" : "s");
		}
	}
	json_t *remap = json_object_get(t, "row_remap");
	if (json_is_object(remap) && json_is_true(json_object_get(remap, "failure"))) {
		result_finding(r, STATUS_FAIL, "%s: row remapping failed: the GPU has run out of spare memory rows", label);
		result_remedy(r, "the GPU needs replacing: row remapping failure (nvidia-smi -q -d ROW_REMAPPER)");
	} else if (json_is_object(remap) && json_is_true(json_object_get(remap, "pending"))) {
		result_finding(r, STATUS_WARN, "%s: a row remapping is pending: reset the GPU to apply it", label);
		result_remedy(r, "reset the GPU when it is idle (nvidia-smi -r) so that the pending row remapping takes effect");
	}
	json_t *pages = json_object_get(t, "retired_pages");
	if (json_is_object(pages) && json_is_true(json_object_get(pages, "pending")))
		result_finding(r, STATUS_WARN, "%s: a page retirement is pending: reset the GPU to apply it", label);
}

void runtime_run_health(const struct context *ctx, void *state, struct result *r)
{
	(void)ctx;
	struct runtime_state *st = state;
	if (runtime_no_backend(st, r))
		return;
	struct strbuf text = STRBUF_INIT, notes = STRBUF_INIT;
	size_t seen = 0;
	json_t *all = json_array();
	json_object_set_new(result_details(r), "telemetry", all);
	for (size_t i = 0; i < st->n; i++)
		for (size_t d = 0; d < st->probes[i].n_devices; d++) {
			json_t *dev = runtime_device_result(&st->probes[i].devices[d], d);
			json_t *t = json_object_get(dev, "telemetry");
			if (!t)
				continue;
			seen++;
			json_array_append(all, t);
			char label[256];
			runtime_device_label(dev, d, label, sizeof(label));
			double v;
			sb_printf(&text, "%sdevice %zu", text.len ? ", " : "", d);
			if (number(t, "temperature_c", &v))
				sb_printf(&text, " %.1f °C", v);
			if (number(t, "power_w", &v))
				sb_printf(&text, " %.0f W", v);
			json_t *freq = json_object_get(t, "frequency");
			if (json_is_object(freq) && number(freq, "actual_mhz", &v))
				sb_printf(&text, " %.0f MHz", v);
			struct strbuf dn = STRBUF_INIT;
			note_text(&dn, t, "temperature_c", "temperature");
			note_text(&dn, t, "power_w", "power");
			note_text(&dn, t, "frequency", "frequency");
			const char *health = json_string_value(json_object_get(t, "memory_health"));
			static const char *const states[] = { "ok", "degraded", "critical", "replace", "unknown", NULL };
			bool state = false;
			for (size_t k = 0; health && states[k]; k++)
				state = state || strcmp(health, states[k]) == 0;
			if (state)
				sb_printf(&text, " memory %s", health);
			else
				note_text(&dn, t, "memory_health", "memory health");
			note_text(&dn, t, "ras", "RAS error counters");
			note_text(&dn, t, "ecc", "ECC");
			const char *nvml = json_string_value(json_object_get(t, "nvml"));
			if (nvml && strcmp(nvml, "ok") != 0)
				sb_printf(&dn, "%sNVML %s", dn.len ? "; " : "", nvml);
			if (dn.len)
				sb_printf(&notes, "%s%s: %s", notes.len ? "; " : "", label, dn.buf);
			sb_release(&dn);
			if (strcmp(st->probes[i].be->name, "cuda") == 0)
				judge_cuda(r, label, t);
			else
				judge_level_zero(r, label, t);
		}
	if (seen == 0)
		result_blocked(r, "runtime.smoke,runtime.devices");
	else if (r->status != STATUS_PASS)
		result_set(r, r->status, "%s", result_first_finding(r));
	else
		result_set(r, STATUS_PASS, "%s%s%s", text.buf, notes.len ? "; " : "", notes.len ? notes.buf : "");
	sb_release(&text);
	sb_release(&notes);
}

void runtime_run_processes(const struct context *ctx, void *state, struct result *r)
{
	(void)ctx;
	struct runtime_state *st = state;
	if (runtime_no_backend(st, r))
		return;
	size_t seen = 0, busy = 0, unknown = 0;
	json_t *all = json_array();
	json_object_set_new(result_details(r), "processes", all);
	for (size_t i = 0; i < st->n; i++)
		for (size_t d = 0; d < st->probes[i].n_devices; d++) {
			json_t *dev = runtime_device_result(&st->probes[i].devices[d], d);
			/* Level Zero: the device's processes; CUDA: NVML's, in its telemetry */
			json_t *list = json_object_get(dev, "processes");
			json_t *t = json_object_get(dev, "telemetry");
			if (!list)
				list = json_object_get(t, "processes");
			const char *nvml = json_string_value(json_object_get(t, "nvml"));
			if (!list && !(nvml && strcmp(nvml, "ok") != 0))
				continue;
			seen++;
			char label[256];
			runtime_device_label(dev, d, label, sizeof(label));
			if (!list || json_is_string(list)) {
				unknown++;
				result_finding(r, STATUS_PASS, "%s: the process list is not available: %s", label,
					       list ? json_string_value(list) : nvml);
				continue;
			}
			struct strbuf others = STRBUF_INIT;
			size_t n = 0, k;
			json_t *p;
			json_array_foreach(list, k, p) {
				if (json_is_true(json_object_get(p, "self")))
					continue;
				n++;
				json_array_append(all, p);
				sb_printf(&others, "%spid %lld (%.1f GiB)", others.len ? ", " : "",
					  (long long)json_integer_value(json_object_get(p, "pid")),
					  (double)json_integer_value(json_object_get(p, "used_memory")) / (1 << 30));
			}
			if (n) {
				busy++;
				result_finding(r, STATUS_WARN, "%s: %zu other process%s use%s the GPU: %s", label, n, n == 1 ? "" : "es",
					       n == 1 ? "s" : "", others.buf);
			}
			sb_release(&others);
		}
	if (seen == 0) {
		result_blocked(r, "runtime.smoke,runtime.devices");
	} else if (busy) {
		result_set(r, STATUS_WARN, "%s", result_first_finding(r));
		result_remedy(r, "tests would share the GPU's memory and time with these processes: stop them or wait for them "
				 "(xpu-smi ps / nvidia-smi); the PIDs are the host's when the container has its own PID namespace");
	} else if (unknown) {
		result_set(r, STATUS_PASS, "%s", result_first_finding(r));
	} else {
		result_set(r, STATUS_PASS, "no other process uses the %zu GPU%s", seen, seen == 1 ? "" : "s");
	}
}
