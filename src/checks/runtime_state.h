/* The runtime group's shared state: the probe runs that prepare made once,
 * read by the checks in runtime.c, runtime_health.c and runtime_perf.c. */
#ifndef GPUGATE_RUNTIME_STATE_H
#define GPUGATE_RUNTIME_STATE_H

#include "../backend/backend.h"
#include "../backend/probe.h"
#include "../context.h"
#include "../result.h"

struct backend_probe {
	const struct backend *be;
	struct probe_run enumeration;
	struct probe_run *devices; /* smoke runs, one per device */
	size_t n_devices;
};

struct runtime_state {
	struct backend_probe *probes;
	size_t n;
	char *none_found; /* auto found no backend library */
	double deadline;
	double cache_age;  /* >= 0: the result came from the state cache */
	char *cache_path;  /* the state folder used, if any */
	char *cache_note;  /* why the state cache was not used or written */
};

/* True (and r failed) when no backend library was found. */
bool runtime_no_backend(const struct runtime_state *st, struct result *r);
/* The device object of a per-device run's result, or NULL. */
json_t *runtime_device_result(const struct probe_run *run, size_t index);
/* "device 0 (Fake Arc A770 #0, 0000:03:00.0)" into buf. */
const char *runtime_device_label(const json_t *dev, size_t index, char *buf, size_t size);

/* runtime_health.c */
void runtime_run_health(const struct context *ctx, void *state, struct result *r);
void runtime_run_processes(const struct context *ctx, void *state, struct result *r);
/* runtime_perf.c */
void runtime_run_performance(const struct context *ctx, void *state, struct result *r);
/* Checks runtime.tolerance, runtime.baselines and what performance needs;
 * 0 or -1 with err (exit 3). */
int runtime_perf_validate(const struct spec *spec, struct spec_error *err);

#endif
