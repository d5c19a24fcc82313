/* The runtime group's facts that other commands read: the driver each
 * backend's probe loaded (runtime.loader), the GPUs the runtime enumerated
 * (runtime.devices), and each GPU's measured figures (runtime.performance).
 * One encoder (the checks) and one decoder (gpugate diff, spec freeze) own
 * the details keys; checks/report.schema.json describes them. The probe's
 * own objects (its result line, a device, a figure set) are copied in as the
 * child wrote them (src/backend/protocol.c); the decoder reads the few of
 * their members that diff and freeze compare. */
#ifndef GPUGATE_FACTS_RUNTIME_H
#define GPUGATE_FACTS_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* runtime.loader and runtime.smoke: one probe child's run */
struct probe_run_fact {
	const char *backend;
	double seconds;
	const char *verdict, *last_stage, *output; /* NULL: none */
	json_t *result;                            /* the child's result line, borrowed; NULL: none */
	/* decoded from result */
	const char *driver_version, *library;
};

/* runtime.devices: one GPU as the runtime enumerated it */
struct runtime_device_fact {
	const char *backend, *pci, *name, *uuid; /* pci, name, uuid: NULL when not reported */
	long index;                              /* -1: not reported */
	bool has_memory_free, has_memory_total;
	double memory_free, memory_total; /* bytes */
};

/* runtime.smoke: one GPU's smoke kernel, from each probe's result line */
struct smoke_device_fact {
	const char *backend;           /* the device's, else its probe's */
	const char *pci, *uuid, *name; /* NULL when not reported */
	long index;                    /* -1: not reported */
	int ok;                        /* 1 ran correctly, 0 did not, -1 not reported */
};

/* runtime.performance: one GPU's figures */
struct figure_fact {
	const char *backend, *pci, *name, *uuid; /* NULL when not reported */
	long index;
	long vendor_id, device_id;       /* -1: not reported */
	bool has_bandwidth, has_latency; /* the figures below were reported */
	double copy_bandwidth_gbs, launch_latency_us;
	json_t *buffer_bytes; /* borrowed, NULL when not reported */
};

struct runtime_facts {
	struct probe_run_fact *probes; /* runtime.loader's */
	size_t n_probes;
	struct runtime_device_fact *devices;
	size_t n_devices;
	struct figure_fact *figures;
	size_t n_figures;
	struct smoke_device_fact *smoke; /* runtime.smoke's */
	size_t n_smoke;
	double tolerance_percent; /* 0: not reported */
};

json_t *probe_run_encode(const struct probe_run_fact *p);
void runtime_facts_encode_probes(json_t *details, json_t *probes);
/* device: the probe's device object (copied), with its backend added */
json_t *runtime_device_encode(const json_t *device, const char *backend);
void runtime_facts_encode_devices(json_t *details, json_t *devices);
/* figures: the probe's figure set (copied), with whose they are added */
json_t *figure_encode(const json_t *figures, const struct figure_fact *whose);
void runtime_facts_encode_measured(json_t *details, json_t *measured);
void runtime_facts_encode_tolerance(json_t *details, double percent);

/* Each decodes its check's details (NULL: none) into f, adding to what f
 * holds; strings and objects point into details. 0, or -1 with the reason. */
int runtime_loader_decode(const json_t *details, struct runtime_facts *f, char *err, size_t errsz);
int runtime_devices_decode(const json_t *details, struct runtime_facts *f, char *err, size_t errsz);
int runtime_performance_decode(const json_t *details, struct runtime_facts *f, char *err, size_t errsz);
int runtime_smoke_decode(const json_t *details, struct runtime_facts *f, char *err, size_t errsz);
void runtime_facts_release(struct runtime_facts *f);

#endif
