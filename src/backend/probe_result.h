/* The probe child's result, decoded once into typed structs (the JSON's
 * keys are listed in backend.h). The checks read these fields and never the
 * JSON; the raw objects are kept only to be copied into a report's details.
 * Decoding never fails: a key that is absent or of the wrong type (a
 * truncated or hostile result line) reads as absent. */
#ifndef GPUGATE_PROBE_RESULT_H
#define GPUGATE_PROBE_RESULT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A telemetry value: a number, the driver's reason there is none ("not
 * supported by this driver"), or absent. */
struct probe_reading {
	bool present;
	bool is_number;
	double value; /* when is_number */
	char *why;    /* when present and not a number */
};

/* Error counters (Sysman RAS, NVML ECC), or why there are none. */
struct probe_counters {
	bool present;
	bool counted;                         /* the counters below are valid */
	long long correctable, uncorrectable; /* RAS; ECC: corrected/uncorrected volatile */
	char *why;                            /* when present and not counted */
};

struct probe_telemetry {
	bool present;
	struct probe_reading temperature_c, power_w;
	struct probe_reading frequency_mhz; /* the actual frequency, or why none */
	struct probe_reading memory_health; /* ok|degraded|critical|replace|unknown in why, or why none */
	struct probe_counters ras;          /* Level Zero */
	struct probe_counters ecc;          /* NVML */
	bool row_remap_failure, row_remap_pending, retired_pages_pending; /* NVML */
	char *nvml;  /* NVML's state: "ok" or why not; NULL when absent */
	json_t *raw; /* for a report's details only */
};

struct probe_process {
	long long pid;
	long long used_memory;
	bool self; /* the probe itself */
};

enum probe_list_state { PROBE_LIST_ABSENT, PROBE_LIST_KNOWN, PROBE_LIST_UNAVAILABLE };

struct probe_processes {
	enum probe_list_state state;
	struct probe_process *items;
	size_t n;
	char *why; /* PROBE_LIST_UNAVAILABLE */
};

struct probe_smoke {
	bool present;
	bool ok;
	long long elements, mismatches;
	long long first_bad_index; /* -1 when none */
};

struct probe_performance {
	bool present;
	bool measured; /* both figures below are numbers */
	double copy_bandwidth_gbs, launch_latency_us;
	long long buffer_bytes; /* -1 when absent */
	json_t *raw;            /* for a report's details only */
};

struct probe_device {
	long long index; /* -1 when absent */
	char *name, *pci, *uuid, *compute;
	long vendor_id, device_id; /* PCI ids, -1 when unknown */
	bool has_memory_total, has_memory_free;
	uint64_t memory_total, memory_free;
	char *stage, *error, *message; /* when this device failed */
	struct probe_smoke smoke;
	struct probe_telemetry telemetry;
	/* Level Zero lists them beside the device, NVML in its telemetry: both here */
	struct probe_processes processes;
	struct probe_performance performance;
	json_t *raw; /* for a report's details only */
};

struct probe_result {
	bool present; /* a result object was decoded */
	bool ok;
	char *backend, *stage, *error, *message;
	char *library, *driver_library, *driver_version;
	bool has_driver_build;
	long long driver_build;
	long long device_count; /* CUDA's cuDeviceGetCount; -1 when absent */
	struct probe_device *devices;
	size_t n_devices;
	json_t *raw; /* for a report's details only */
};

/* Decodes j (NULL or not an object: an absent result). */
void probe_result_decode(const json_t *j, struct probe_result *out);
void probe_result_free(struct probe_result *r);
/* The device with this index (Level Zero children list every device, CUDA
 * ones only theirs), else the one at that position, else NULL. */
const struct probe_device *probe_result_device(const struct probe_result *r, size_t index);

#endif
