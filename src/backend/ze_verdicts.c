/* Level Zero's verdicts (verdicts.h): Sysman memory health and RAS counters,
 * the fixes for its errors. */
#include <string.h>

#include "../lib/util.h"
#include "../result.h"
#include "verdicts.h"

/* By a part of the ze_result_t name (ze_errors.c lists them). */
const struct backend_remedy ze_remedies[] = {
	{ "UNINITIALIZED",
	  "make the GPU visible in the container: --device /dev/dri and -v /dev/dri/by-path:/dev/dri/by-path (see the devices checks)" },
	{ "INSUFFICIENT_PERMISSIONS",
	  "give the container the render node's group: docker run --group-add render (or the node's numeric GID: stat -c %g /dev/dri/renderD128)" },
	{ "OUT_OF_DEVICE_MEMORY",
	  "free GPU memory: stop the other processes on the GPU (xpu-smi ps, intel_gpu_top) or lower their share" },
	{ "DEVICE_LOST", "the GPU was lost: read the kernel log (dmesg) for GPU HANG / GuC errors and reset the GPU" },
	{ "MODULE_BUILD",
	  "install the graphics compiler matching the driver: apt-get install libigc2 libigdfcl2 (Debian, Ubuntu, the Intel graphics PPA; intel-igc-core-2 intel-igc-opencl-2 from Intel's release .debs)" },
	{ NULL, NULL },
};

void ze_judge_health(const struct probe_telemetry *t, const char *label, struct result *r)
{
	const char *health = t->memory_health.why;
	if (health && (!strcmp(health, "critical") || !strcmp(health, "replace"))) {
		result_finding(r, STATUS_FAIL, "runtime.health.memory_failing",
			       "%s: memory health is %s (Sysman zes_mem_state_t.health)", label, health);
		result_remedy(
			r,
			"the GPU's memory is failing: take the GPU out of service and have it replaced (xpu-smi diag, the vendor's RMA)");
	} else if (health && !strcmp(health, "degraded")) {
		result_finding(r, STATUS_WARN, "runtime.health.memory_degraded",
			       "%s: memory health is degraded: excessive correctable errors", label);
		result_remedy(r, "watch the GPU's memory errors (xpu-smi stats) and plan its replacement");
	}
	if (t->ras.counted) {
		long long unc = t->ras.uncorrectable, cor = t->ras.correctable;
		if (unc > 0) {
			result_finding(r, STATUS_FAIL, "runtime.health.ras_uncorrectable",
				       "%s: %lld uncorrectable RAS %s since the driver loaded (and %lld correctable)",
				       label, unc, count_noun((size_t)unc, "error", "errors"), cor);
			result_remedy(
				r,
				"uncorrectable GPU errors make results untrustworthy: drain the node, read the kernel log (dmesg | grep -iE 'ras|error') and reset or replace the GPU");
		} else if (cor > 0) {
			result_finding(r, STATUS_WARN, "runtime.health.ras_correctable",
				       "%s: %lld correctable RAS %s since the driver loaded", label, cor,
				       count_noun((size_t)cor, "error", "errors"));
			result_remedy(
				r,
				"correctable errors are fixed by the hardware, but a rising count foretells a failure: watch it (xpu-smi stats)");
		}
	}
}
