/* Decoding the probe child's result (probe_result.h): every key read once,
 * here; wrong types read as absent. */
#include "probe_result.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/baselines.h"
#include "../lib/util.h"

static char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? xstrdup(s) : NULL;
}

static long long integer(const json_t *o, const char *key, long long absent)
{
	json_t *v = json_object_get(o, key);
	return json_is_integer(v) ? (long long)json_integer_value(v) : absent;
}

static bool truth(const json_t *o, const char *key)
{
	return json_is_true(json_object_get(o, key));
}

static void reading(const json_t *v, struct probe_reading *out)
{
	memset(out, 0, sizeof(*out));
	if (json_is_number(v)) {
		out->present = out->is_number = true;
		out->value = json_number_value(v);
	} else if (json_is_string(v)) {
		out->present = true;
		out->why = xstrdup(json_string_value(v));
	}
}

static void counters(const json_t *v, const char *correctable, const char *uncorrectable, struct probe_counters *out)
{
	memset(out, 0, sizeof(*out));
	if (json_is_object(v)) {
		out->present = out->counted = true;
		/* a counter the driver could not read (a string) counts as 0 */
		out->correctable = integer(v, correctable, 0);
		out->uncorrectable = integer(v, uncorrectable, 0);
	} else if (json_is_string(v)) {
		out->present = true;
		out->why = xstrdup(json_string_value(v));
	}
}

static void telemetry(const json_t *t, struct probe_telemetry *out)
{
	memset(out, 0, sizeof(*out));
	if (!json_is_object(t))
		return;
	out->present = true;
	out->raw = json_incref((json_t *)t);
	reading(json_object_get(t, "temperature_c"), &out->temperature_c);
	reading(json_object_get(t, "power_w"), &out->power_w);
	json_t *f = json_object_get(t, "frequency");
	if (json_is_object(f)) {
		reading(json_object_get(f, "actual_mhz"), &out->frequency_mhz);
		out->frequency_mhz.present = true; /* the domain exists, maybe without an actual figure */
	} else {
		reading(f, &out->frequency_mhz);
	}
	json_t *h = json_object_get(t, "memory_health");
	if (json_is_string(h))
		reading(h, &out->memory_health);
	counters(json_object_get(t, "ras"), "correctable", "uncorrectable", &out->ras);
	counters(json_object_get(t, "ecc"), "corrected_volatile", "uncorrected_volatile", &out->ecc);
	json_t *remap = json_object_get(t, "row_remap");
	out->row_remap_failure = truth(remap, "failure");
	out->row_remap_pending = truth(remap, "pending");
	out->retired_pages_pending = truth(json_object_get(t, "retired_pages"), "pending");
	out->nvml = str(t, "nvml");
}

static void processes(const json_t *list, const char *nvml, struct probe_processes *out)
{
	memset(out, 0, sizeof(*out));
	if (json_is_array(list)) {
		out->state = PROBE_LIST_KNOWN;
		out->items = xcalloc(json_array_size(list) + 1, sizeof(*out->items));
		size_t i;
		json_t *p;
		json_array_foreach(list, i, p)
		{
			if (!json_is_object(p))
				continue;
			out->items[out->n++] = (struct probe_process){ .pid = integer(p, "pid", 0),
								       .used_memory = integer(p, "used_memory", 0),
								       .self = truth(p, "self") };
		}
	} else if (json_is_string(list)) {
		out->state = PROBE_LIST_UNAVAILABLE;
		out->why = xstrdup(json_string_value(list));
	} else if (!list && nvml && strcmp(nvml, "ok") != 0) {
		/* NVML did not load: no list, and why */
		out->state = PROBE_LIST_UNAVAILABLE;
		out->why = xstrdup(nvml);
	}
}

static void device(const json_t *d, struct probe_device *out)
{
	memset(out, 0, sizeof(*out));
	out->raw = json_incref((json_t *)d);
	out->index = integer(d, "index", -1);
	out->name = str(d, "name");
	out->pci = str(d, "pci");
	out->uuid = str(d, "uuid");
	out->compute = str(d, "compute");
	out->vendor_id = baseline_pci_id(json_object_get(d, "vendor_id"));
	out->device_id = baseline_pci_id(json_object_get(d, "device_id"));
	long long total = integer(d, "memory_total", -1), avail = integer(d, "memory_free", -1);
	out->has_memory_total = total >= 0;
	out->memory_total = total >= 0 ? (uint64_t)total : 0;
	out->has_memory_free = avail >= 0;
	out->memory_free = avail >= 0 ? (uint64_t)avail : 0;
	out->stage = str(d, "stage");
	out->error = str(d, "error");
	out->message = str(d, "message");
	json_t *s = json_object_get(d, "smoke");
	out->smoke.present = json_is_object(s);
	out->smoke.ok = truth(s, "ok");
	out->smoke.elements = integer(s, "elements", 0);
	out->smoke.mismatches = integer(s, "mismatches", 0);
	out->smoke.first_bad_index = integer(s, "first_bad_index", -1);
	json_t *t = json_object_get(d, "telemetry");
	telemetry(t, &out->telemetry);
	json_t *list = json_object_get(d, "processes");
	processes(list ? list : json_object_get(t, "processes"), out->telemetry.nvml, &out->processes);
	json_t *p = json_object_get(d, "performance");
	if (json_is_object(p)) {
		out->performance.present = true;
		out->performance.raw = json_incref(p);
		json_t *bw = json_object_get(p, "copy_bandwidth_gbs"), *lat = json_object_get(p, "launch_latency_us");
		out->performance.measured = json_is_number(bw) && json_is_number(lat);
		out->performance.copy_bandwidth_gbs = json_number_value(bw);
		out->performance.launch_latency_us = json_number_value(lat);
		out->performance.buffer_bytes = integer(p, "buffer_bytes", -1);
	}
}

void probe_result_decode(const json_t *j, struct probe_result *out)
{
	memset(out, 0, sizeof(*out));
	out->device_count = -1;
	if (!json_is_object(j))
		return;
	out->present = true;
	out->raw = json_incref((json_t *)j);
	out->ok = truth(j, "ok");
	out->backend = str(j, "backend");
	out->stage = str(j, "stage");
	out->error = str(j, "error");
	out->message = str(j, "message");
	out->library = str(j, "library");
	out->driver_library = str(j, "driver_library");
	out->driver_version = str(j, "driver_version");
	json_t *b = json_object_get(j, "driver_build");
	out->has_driver_build = json_is_integer(b);
	out->driver_build = json_integer_value(b);
	out->device_count = integer(j, "device_count", -1);
	json_t *devs = json_object_get(j, "devices");
	out->devices = xcalloc(json_array_size(devs) + 1, sizeof(*out->devices));
	size_t i;
	json_t *d;
	json_array_foreach(devs, i, d) if (json_is_object(d)) device(d, &out->devices[out->n_devices++]);
}

static void telemetry_free(struct probe_telemetry *t)
{
	free(t->temperature_c.why);
	free(t->power_w.why);
	free(t->frequency_mhz.why);
	free(t->memory_health.why);
	free(t->ras.why);
	free(t->ecc.why);
	free(t->nvml);
	json_decref(t->raw);
}

static void device_free(struct probe_device *d)
{
	free(d->name);
	free(d->pci);
	free(d->uuid);
	free(d->compute);
	free(d->stage);
	free(d->error);
	free(d->message);
	telemetry_free(&d->telemetry);
	free(d->processes.items);
	free(d->processes.why);
	json_decref(d->performance.raw);
	json_decref(d->raw);
}

void probe_result_free(struct probe_result *r)
{
	for (size_t i = 0; i < r->n_devices; i++)
		device_free(&r->devices[i]);
	free(r->devices);
	free(r->backend);
	free(r->stage);
	free(r->error);
	free(r->message);
	free(r->library);
	free(r->driver_library);
	free(r->driver_version);
	json_decref(r->raw);
	memset(r, 0, sizeof(*r));
	r->device_count = -1;
}

const struct probe_device *probe_result_device(const struct probe_result *r, size_t index)
{
	for (size_t i = 0; i < r->n_devices; i++)
		if (r->devices[i].index == (long long)index)
			return &r->devices[i];
	return index < r->n_devices ? &r->devices[index] : NULL;
}
