#include "facts/runtime.h"

#include <stdio.h>
#include <stdlib.h>

#include "../lib/util.h"
#include "../result.h"
#include "facts/decode.h"

/* the details keys of runtime.loader, .smoke, .devices and .performance:
 * written and read only here */
#define K_PROBES     "probes"
#define K_BACKEND    "backend"
#define K_SECONDS    "seconds"
#define K_VERDICT    "verdict"
#define K_LAST_STAGE "last_stage"
#define K_RESULT     "result"
#define K_OUTPUT     "output"
#define K_DEVICES    "devices"
#define K_MEASURED   "measured"
#define K_TOLERANCE  "tolerance_percent"
#define K_INDEX      "index"
#define K_PCI        "pci"
#define K_NAME       "name"
#define K_UUID       "uuid"
#define K_VENDOR_ID  "vendor_id"
#define K_DEVICE_ID  "device_id"
/* members of the probe child's own objects (src/backend/protocol.c) */
#define P_DRIVER_VERSION "driver_version"
#define P_LIBRARY        "library"
#define P_BANDWIDTH      "copy_bandwidth_gbs"
#define P_LATENCY        "launch_latency_us"
#define P_BUFFER_BYTES   "buffer_bytes"
#define P_DEVICES        "devices"
#define P_INDEX          "index"
#define P_PCI            "pci"
#define P_NAME           "name"
#define P_UUID           "uuid"
#define P_MEMORY_FREE    "memory_free"
#define P_MEMORY_TOTAL   "memory_total"
#define P_SMOKE          "smoke"
#define P_OK             "ok"

json_t *probe_run_encode(const struct probe_run_fact *p)
{
	json_t *j = json_object();
	json_object_set_new(j, K_BACKEND, json_string(p->backend));
	json_object_set_new(j, K_SECONDS, json_real(p->seconds));
	if (p->verdict)
		json_object_set_new(j, K_VERDICT, json_text(p->verdict));
	if (p->last_stage && *p->last_stage)
		json_object_set_new(j, K_LAST_STAGE, json_string(p->last_stage));
	if (p->result) /* the child's own words, for the report */
		json_object_set(j, K_RESULT, p->result);
	if (p->output && *p->output)
		json_object_set_new(j, K_OUTPUT, json_text(p->output));
	return j;
}

void runtime_facts_encode_probes(json_t *details, json_t *probes)
{
	json_object_set_new(details, K_PROBES, probes);
}

json_t *runtime_device_encode(const json_t *device, const char *backend)
{
	json_t *copy = json_deep_copy(device);
	if (!json_is_object(copy)) {
		json_decref(copy);
		copy = json_object();
	}
	json_object_set_new(copy, K_BACKEND, json_string(backend));
	return copy;
}

void runtime_facts_encode_devices(json_t *details, json_t *devices)
{
	json_object_set_new(details, K_DEVICES, devices);
}

json_t *figure_encode(const json_t *figures, const struct figure_fact *w)
{
	json_t *fig = json_copy((json_t *)figures);
	if (!json_is_object(fig)) {
		json_decref(fig);
		fig = json_object();
	}
	/* whose they are, so that gpugate diff and spec freeze can pair and key them */
	json_object_set_new(fig, K_BACKEND, json_string(w->backend));
	json_object_set_new(fig, K_INDEX, json_integer(w->index));
	if (w->pci)
		json_object_set_new(fig, K_PCI, json_string(w->pci));
	if (w->name)
		json_object_set_new(fig, K_NAME, json_string(w->name));
	if (w->uuid)
		json_object_set_new(fig, K_UUID, json_string(w->uuid));
	if (w->vendor_id >= 0)
		json_object_set_new(fig, K_VENDOR_ID, json_integer(w->vendor_id));
	if (w->device_id >= 0)
		json_object_set_new(fig, K_DEVICE_ID, json_integer(w->device_id));
	return fig;
}

void runtime_facts_encode_measured(json_t *details, json_t *measured)
{
	json_object_set_new(details, K_MEASURED, measured);
}

void runtime_facts_encode_tolerance(json_t *details, double percent)
{
	json_object_set_new(details, K_TOLERANCE, json_real(percent));
}

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* The list under key, or NULL; -1 when it is there and not a list. */
static int list(const json_t *details, const char *check, const char *key, const json_t **out, char *err, size_t errsz)
{
	json_t *l;
	int rc = facts_list(details, check, key, &l, err, errsz);
	*out = l;
	return rc;
}

static long int_or(const json_t *o, const char *key, long def)
{
	const json_t *v = json_object_get(o, key);
	return json_is_integer(v) ? (long)json_integer_value(v) : def;
}

int runtime_loader_decode(const json_t *details, struct runtime_facts *f, char *err, size_t errsz)
{
	const json_t *probes;
	if (list(details, "runtime.loader", K_PROBES, &probes, err, errsz) < 0)
		return -1;
	size_t n = json_array_size(probes);
	f->probes = xcalloc(n ? n : 1, sizeof(*f->probes));
	for (size_t i = 0; i < n; i++) {
		const json_t *p = json_array_get(probes, i);
		json_t *res = json_object_get(p, K_RESULT);
		/* the backend the check named, else the one the child named */
		const char *backend = str(p, K_BACKEND) ? str(p, K_BACKEND) : str(res, K_BACKEND);
		if (!backend)
			continue; /* nothing to pair it by */
		struct probe_run_fact *r = &f->probes[f->n_probes++];
		r->backend = backend;
		r->seconds = json_number_value(json_object_get(p, K_SECONDS));
		r->verdict = str(p, K_VERDICT);
		r->last_stage = str(p, K_LAST_STAGE);
		r->output = str(p, K_OUTPUT);
		r->result = res;
		r->driver_version = str(res, P_DRIVER_VERSION);
		r->library = str(res, P_LIBRARY);
	}
	return 0;
}

int runtime_devices_decode(const json_t *details, struct runtime_facts *f, char *err, size_t errsz)
{
	const json_t *devices;
	if (list(details, "runtime.devices", K_DEVICES, &devices, err, errsz) < 0)
		return -1;
	f->n_devices = json_array_size(devices);
	f->devices = xcalloc(f->n_devices ? f->n_devices : 1, sizeof(*f->devices));
	for (size_t i = 0; i < f->n_devices; i++) {
		const json_t *d = json_array_get(devices, i);
		const json_t *free_b = json_object_get(d, P_MEMORY_FREE), *total = json_object_get(d, P_MEMORY_TOTAL);
		f->devices[i] = (struct runtime_device_fact){
			.backend = str(d, K_BACKEND),
			.pci = str(d, P_PCI),
			.name = str(d, P_NAME),
			.uuid = str(d, P_UUID),
			.index = int_or(d, P_INDEX, -1),
			.has_memory_free = json_is_number(free_b),
			.has_memory_total = json_is_number(total),
			.memory_free = json_number_value(free_b),
			.memory_total = json_number_value(total),
		};
	}
	return 0;
}

int runtime_smoke_decode(const json_t *details, struct runtime_facts *f, char *err, size_t errsz)
{
	const json_t *probes;
	if (list(details, "runtime.smoke", K_PROBES, &probes, err, errsz) < 0)
		return -1;
	size_t n = 0, i;
	const json_t *p;
	json_array_foreach(probes, i, p)
	{
		n += json_array_size(json_object_get(json_object_get(p, K_RESULT), P_DEVICES));
	}
	f->smoke = xcalloc(n ? n : 1, sizeof(*f->smoke));
	json_array_foreach(probes, i, p)
	{
		const json_t *devices = json_object_get(json_object_get(p, K_RESULT), P_DEVICES), *d;
		size_t k;
		json_array_foreach(devices, k, d)
		{
			const json_t *ok = json_object_get(json_object_get(d, P_SMOKE), P_OK);
			f->smoke[f->n_smoke++] = (struct smoke_device_fact){
				.backend = str(d, K_BACKEND) ? str(d, K_BACKEND) : str(p, K_BACKEND),
				.pci = str(d, P_PCI),
				.uuid = str(d, P_UUID),
				.name = str(d, P_NAME),
				.index = int_or(d, P_INDEX, -1),
				.ok = json_is_boolean(ok) ? json_is_true(ok) : -1,
			};
		}
	}
	return 0;
}

int runtime_performance_decode(const json_t *details, struct runtime_facts *f, char *err, size_t errsz)
{
	const json_t *measured;
	if (list(details, "runtime.performance", K_MEASURED, &measured, err, errsz) < 0)
		return -1;
	f->n_figures = json_array_size(measured);
	f->figures = xcalloc(f->n_figures ? f->n_figures : 1, sizeof(*f->figures));
	for (size_t i = 0; i < f->n_figures; i++) {
		const json_t *m = json_array_get(measured, i);
		struct figure_fact *g = &f->figures[i];
		g->backend = str(m, K_BACKEND);
		g->pci = str(m, K_PCI);
		g->name = str(m, K_NAME);
		g->uuid = str(m, K_UUID);
		g->index = int_or(m, K_INDEX, (long)i);
		g->vendor_id = int_or(m, K_VENDOR_ID, -1);
		g->device_id = int_or(m, K_DEVICE_ID, -1);
		const json_t *bw = json_object_get(m, P_BANDWIDTH), *lat = json_object_get(m, P_LATENCY);
		g->has_bandwidth = json_is_number(bw);
		g->has_latency = json_is_number(lat);
		g->copy_bandwidth_gbs = json_number_value(bw);
		g->launch_latency_us = json_number_value(lat);
		g->buffer_bytes = json_object_get(m, P_BUFFER_BYTES);
	}
	const json_t *t = json_object_get(details, K_TOLERANCE);
	f->tolerance_percent = json_is_number(t) ? json_number_value(t) : 0;
	return 0;
}

void runtime_facts_release(struct runtime_facts *f)
{
	free(f->probes);
	free(f->devices);
	free(f->figures);
	free(f->smoke);
	*f = (struct runtime_facts){ 0 };
}
