/* Files built into the binary at build time (profiles, kernels), so that the
 * binary needs nothing beside it. The tables are generated into build/. */
#ifndef GPUGATE_EMBEDDED_H
#define GPUGATE_EMBEDDED_H

#include <stddef.h>

struct embedded_file {
	const char *name;
	const unsigned char *data;
	size_t size;
};

/* checks/{healthcheck,ci,validate}.yaml, by name without .yaml; NULL-name terminated */
extern const struct embedded_file embedded_profiles[];
/* checks/vendor/VENDOR.yaml by vendor ("intel"): the pins laid over a
 * built-in profile for that vendor (src/profile.c); NULL-name terminated */
extern const struct embedded_file embedded_vendor_pins[];
/* the kernels of src/kernels/ built to SPIR-V ("smoke.spv"); NULL-name terminated */
extern const struct embedded_file embedded_kernels[];

const struct embedded_file *embedded_find(const struct embedded_file *table, const char *name);

/* the performance baselines, checks/baselines/NAME.json, by their path */
extern const struct embedded_file embedded_baselines[];

/* src/kernels/smoke.ptx as "smoke" (NUL-terminated, for cuModuleLoadData) */
extern const struct embedded_file embedded_ptx[];

#endif
