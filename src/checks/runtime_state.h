/* The runtime group's shared state: the probe session that prepare ran once
 * (src/backend/session.h), read by the checks in runtime.c,
 * runtime_health.c and runtime_perf.c. */
#ifndef GPUGATE_RUNTIME_STATE_H
#define GPUGATE_RUNTIME_STATE_H

#include "../backend/session.h"
#include "../context.h"
#include "../result.h"

/* True (and r failed) when no backend library was found. */
bool runtime_no_backend(const struct probe_session *s, struct result *r);
/* "device 0 (Fake Arc A770 #0, 0000:03:00.0)" into buf; dev may be NULL. */
const char *runtime_device_label(const struct probe_device *dev, size_t index, char *buf, size_t size);

/* The commands that list the processes on the GPUs of the backends that
 * ran ("xpu-smi ps", "nvidia-smi": their vendors', src/vendor/), " / "
 * between them, into buf. */
const char *runtime_processes_cmds(const struct probe_session *s, char *buf, size_t size);

/* runtime_health.c */
void runtime_run_health(const struct context *ctx, void *state, struct result *r);
void runtime_run_processes(const struct context *ctx, void *state, struct result *r);
/* runtime_perf.c */
void runtime_run_performance(const struct context *ctx, void *state, struct result *r);
/* Checks runtime.tolerance, runtime.baselines and what performance needs;
 * 0 or -1 with err (exit 3). */
int runtime_perf_validate(const struct spec *spec, struct spec_error *err);

#endif
