#include "facts/runtime.h"

#include <stdio.h>
#include <stdlib.h>

#include "../lib/util.h"
#include "../result.h"
#include "facts/decode.h"
#include "facts/fields.h"

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

/* One probe child's run (runtime.loader's and runtime.smoke's probes). */
static int probe_run_after(const json_t *item, void *dst, size_t position);
static const struct fact_field probe_run_fields[] = {
	{ K_BACKEND, FACT_NAME, FACT_MEMBER(struct probe_run_fact, backend) },
	{ K_SECONDS, FACT_REAL, FACT_MEMBER(struct probe_run_fact, seconds) },
	{ K_VERDICT, FACT_TEXT, FACT_MEMBER(struct probe_run_fact, verdict), .flags = FACT_OMIT_NULL },
	{ K_LAST_STAGE, FACT_NAME, FACT_MEMBER(struct probe_run_fact, last_stage), .flags = FACT_OMIT_EMPTY },
	/* the child's own words, for the report */
	{ K_RESULT, FACT_OBJECT, FACT_MEMBER(struct probe_run_fact, result) },
	{ K_OUTPUT, FACT_TEXT, FACT_MEMBER(struct probe_run_fact, output), .flags = FACT_OMIT_EMPTY },
};
FACT_TABLE_AFTER(probe_run_table, struct probe_run_fact, "probe", probe_run_fields, probe_run_after);

/* One GPU as the runtime enumerated it: the probe's device object, copied
 * as the child wrote it, with the backend added. */
static const struct fact_field device_fields[] = {
	{ K_BACKEND, FACT_NAME, FACT_MEMBER(struct runtime_device_fact, backend) },
	{ P_PCI, FACT_NAME, FACT_MEMBER(struct runtime_device_fact, pci), .flags = FACT_PROBE },
	{ P_NAME, FACT_NAME, FACT_MEMBER(struct runtime_device_fact, name), .flags = FACT_PROBE },
	{ P_UUID, FACT_NAME, FACT_MEMBER(struct runtime_device_fact, uuid), .flags = FACT_PROBE },
	{ P_INDEX, FACT_INT, FACT_MEMBER(struct runtime_device_fact, index), .flags = FACT_PROBE, .absent = -1 },
	{ P_MEMORY_FREE, FACT_REAL, FACT_MEMBER(struct runtime_device_fact, memory_free), .flags = FACT_PROBE,
	  FACT_HAS(struct runtime_device_fact, has_memory_free) },
	{ P_MEMORY_TOTAL, FACT_REAL, FACT_MEMBER(struct runtime_device_fact, memory_total), .flags = FACT_PROBE,
	  FACT_HAS(struct runtime_device_fact, has_memory_total) },
};
FACT_TABLE(device_table, struct runtime_device_fact, "device", device_fields);

/* One GPU's figures: the probe's figure set, copied as the child wrote it,
 * and whose they are, so that gpugate diff and spec freeze can pair and key
 * them. */
static int figure_after(const json_t *item, void *dst, size_t position);
static const struct fact_field figure_fields[] = {
	{ K_BACKEND, FACT_NAME, FACT_MEMBER(struct figure_fact, backend) },
	{ K_INDEX, FACT_INT, FACT_MEMBER(struct figure_fact, index) },
	{ K_PCI, FACT_NAME, FACT_MEMBER(struct figure_fact, pci), .flags = FACT_OMIT_NULL },
	{ K_NAME, FACT_NAME, FACT_MEMBER(struct figure_fact, name), .flags = FACT_OMIT_NULL },
	{ K_UUID, FACT_NAME, FACT_MEMBER(struct figure_fact, uuid), .flags = FACT_OMIT_NULL },
	{ K_VENDOR_ID, FACT_INT, FACT_MEMBER(struct figure_fact, vendor_id), .flags = FACT_OMIT_NEGATIVE,
	  .absent = -1 },
	{ K_DEVICE_ID, FACT_INT, FACT_MEMBER(struct figure_fact, device_id), .flags = FACT_OMIT_NEGATIVE,
	  .absent = -1 },
	{ P_BANDWIDTH, FACT_REAL, FACT_MEMBER(struct figure_fact, copy_bandwidth_gbs), .flags = FACT_PROBE,
	  FACT_HAS(struct figure_fact, has_bandwidth) },
	{ P_LATENCY, FACT_REAL, FACT_MEMBER(struct figure_fact, launch_latency_us), .flags = FACT_PROBE,
	  FACT_HAS(struct figure_fact, has_latency) },
	{ P_BUFFER_BYTES, FACT_ANY, FACT_MEMBER(struct figure_fact, buffer_bytes), .flags = FACT_PROBE },
};
FACT_TABLE_AFTER(figure_table, struct figure_fact, "figure set", figure_fields, figure_after);

/* each check's details; their lists are built item by item (the encoders above) */
static const struct fact_field loader_fields[] = {
	{ K_PROBES, FACT_ITEMS, FACT_MEMBER(struct runtime_facts, probes), .items = &probe_run_table,
	  FACT_COUNT_OF(struct runtime_facts, n_probes) },
};
FACT_TABLE(loader_table, struct runtime_facts, NULL, loader_fields);

static const struct fact_field devices_fields[] = {
	{ K_DEVICES, FACT_ITEMS, FACT_MEMBER(struct runtime_facts, devices), .items = &device_table,
	  FACT_COUNT_OF(struct runtime_facts, n_devices) },
};
FACT_TABLE(devices_table, struct runtime_facts, NULL, devices_fields);

static const struct fact_field performance_fields[] = {
	{ K_MEASURED, FACT_ITEMS, FACT_MEMBER(struct runtime_facts, figures), .items = &figure_table,
	  FACT_COUNT_OF(struct runtime_facts, n_figures) },
	{ K_TOLERANCE, FACT_REAL, FACT_MEMBER(struct runtime_facts, tolerance_percent) },
};
FACT_TABLE(performance_table, struct runtime_facts, NULL, performance_fields);

/* a member of the probe's own objects, NULL when not a string (fields.h) */
static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static long int_or(const json_t *o, const char *key, long def)
{
	const json_t *v = json_object_get(o, key);
	return json_is_integer(v) ? (long)json_integer_value(v) : def;
}

/* A run is paired by its backend: the one the check named, else the one
 * the child named in its result line (a run with neither is dropped); the
 * driver it loaded is read from that line. These rules span the run and the
 * child's object, so they are a hook, not fields. */
static int probe_run_after(const json_t *item, void *dst, size_t position)
{
	(void)item, (void)position;
	struct probe_run_fact *r = dst;
	if (!r->backend)
		r->backend = str(r->result, K_BACKEND);
	r->driver_version = str(r->result, P_DRIVER_VERSION);
	r->library = str(r->result, P_LIBRARY);
	return r->backend ? 0 : 1;
}

/* a figure set that names no index is the position's GPU */
static int figure_after(const json_t *item, void *dst, size_t position)
{
	struct figure_fact *g = dst;
	if (!json_object_get(item, K_INDEX))
		g->index = (long)position;
	return 0;
}

json_t *probe_run_encode(const struct probe_run_fact *p)
{
	return facts_encode_new(&probe_run_table, p);
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
	facts_encode(copy, &device_table, &(struct runtime_device_fact){ .backend = backend });
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
	facts_encode(fig, &figure_table, w);
	return fig;
}

void runtime_facts_encode_measured(json_t *details, json_t *measured)
{
	json_object_set_new(details, K_MEASURED, measured);
}

void runtime_facts_encode_tolerance(json_t *details, double percent)
{
	facts_encode(details, &performance_table, &(struct runtime_facts){ .tolerance_percent = percent });
}

int runtime_loader_decode(const json_t *details, struct runtime_facts *f, char *err, size_t errsz)
{
	return facts_decode(details, &loader_table, f, "runtime.loader", NULL, err, errsz);
}

int runtime_devices_decode(const json_t *details, struct runtime_facts *f, char *err, size_t errsz)
{
	return facts_decode(details, &devices_table, f, "runtime.devices", NULL, err, errsz);
}

int runtime_performance_decode(const json_t *details, struct runtime_facts *f, char *err, size_t errsz)
{
	return facts_decode(details, &performance_table, f, "runtime.performance", NULL, err, errsz);
}

/* runtime.smoke's GPUs are the devices of every probe's result line,
 * flattened: no one list of the details holds them, so this reads the
 * child's objects itself, leniently as the tables read a FACT_PROBE member. */
int runtime_smoke_decode(const json_t *details, struct runtime_facts *f, char *err, size_t errsz)
{
	bool there;
	json_t *probes = NULL;
	if (facts_details(details, "runtime.smoke", &there, err, errsz) < 0 ||
	    (there && facts_list(details, "runtime.smoke", K_PROBES, &probes, err, errsz) < 0))
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

void runtime_facts_release(struct runtime_facts *f)
{
	facts_release(&loader_table, f);
	facts_release(&devices_table, f);
	facts_release(&performance_table, f);
	free(f->smoke);
	*f = (struct runtime_facts){ 0 };
}
