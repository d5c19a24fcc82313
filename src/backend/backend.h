/* The GPU backend interface. A backend runs only inside the probe child
 * (`gpugate probe ...`, started by the runtime check in its own process
 * group); the checking process never loads a GPU library. The child reports
 * on a pipe, one line at a time:
 *
 *   stage NAME [DEVICE]       entering a stage (loader, init, drivers, devices,
 *                             context, memory, module, launch, sync, verify,
 *                             perf, telemetry); DEVICE is a PCI address or index
 *   enumerated JSON           the result so far, once the devices are known
 *                             (a per-device child sends it before its smoke,
 *                             so the enumeration survives a hang or crash there)
 *   result JSON               the final result, one line of JSON (last line)
 *
 * so that when the child hangs or dies, the parent still knows the last stage
 * it entered ("hung in stage sync on 0000:03:00.0", "SIGSEGV in stage init").
 *
 * The result object (keys a backend fills; absent when unknown):
 *   backend        "level-zero" | "cuda"
 *   ok             true when every stage passed
 *   stage          the stage that failed (when !ok)
 *   error          the API's error name: "ZE_RESULT_ERROR_UNINITIALIZED",
 *                  "CUDA_ERROR_NO_DEVICE"
 *   message        what it means and the fix, one sentence
 *   library        the real path of the loaded library (dladdr/dlinfo)
 *   driver_version the driver version as text (decoded, e.g. "1.3.29735")
 *   devices        array of objects: index, name, uuid, pci, vendor_id,
 *                  device_id, memory_total, memory_free (bytes), compute
 *                  (e.g. "9.0" or EU count), smoke {ok, elements,
 *                  mismatches, first_bad_index}, timings_ms {stage: ms},
 *                  telemetry {temperature_c, power_w, ...}, processes
 *                  [{pid, memory, self}] or "not supported by this driver",
 *                  performance {copy_bandwidth_gbs, launch_latency_us,
 *                  buffer_bytes, method}, error/stage when this device failed
 *   timings_ms     per stage, whole-probe
 */
#ifndef GPUGATE_BACKEND_H
#define GPUGATE_BACKEND_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include "../vendor/vendor.h"

/* The child's end of the pipe. */
struct probe_channel {
	int fd;
};

/* Writes "stage NAME[ DEVICE]\n" at once (unbuffered: the next call may hang). */
void probe_stage(struct probe_channel *ch, const char *stage, const char *device);
/* Writes "result JSON\n". */
void probe_result(struct probe_channel *ch, json_t *result);
/* Writes "enumerated JSON\n": the result so far, devices included. */
void probe_enumerated(struct probe_channel *ch, json_t *so_far);

struct backend_options {
	int device;            /* probe this device index only; -1: enumerate all, smoke none */
	bool smoke;            /* run the smoke kernel */
	bool telemetry;        /* temperature, power, ... (validate profile) */
	bool processes;        /* list the processes using the device (ci, validate) */
	bool perf;             /* copy bandwidth and launch latency after the smoke (validate) */
	size_t perf_bytes;     /* the bandwidth copy's buffer size */
	size_t work_items;     /* smoke kernel size; at least 1 << 20 */
	double sync_timeout_s; /* finite wait for completion; the parent's kill is the backstop */
	const char *cache_dir; /* where a backend may keep a native module cache, or NULL */
	/* Under --root: the root's copy of the backend's library, loaded by its
	 * path (and, for Level Zero, the root's driver beside it), so that the
	 * probe never mixes the root's stack with this machine's. NULL: the soname. */
	const char *library;
};

struct result;
struct probe_telemetry;

/* A remediation for an error whose name contains error_part. */
struct backend_remedy {
	const char *error_part;
	const char *remedy;
};

/* One GPU runtime (nvtop's model: one file per vendor behind one table):
 * what the child runs, and what the checking process needs to know about it
 * so that no check names a vendor. */
struct backend {
	const char *name;            /* "level-zero", "cuda" (spec runtime.backend values) */
	const char *library;         /* soname the child dlopens, e.g. "libze_loader.so.1" */
	const char *provided_by;     /* install hint: "libze1 (Debian/Ubuntu), level-zero (Intel)" */
	const struct vendor *vendor; /* the GPUs it drives (src/vendor/): their nodes, visibility
				      * variable, packages, tools */
	const char *missing_remedy;  /* the fix when its library is not installed at all */
	/* Runs in the child: emits stages, fills result (see above), returns 0 when
	 * ok, else nonzero. Never called in the checking process. */
	int (*run)(struct probe_channel *ch, const struct backend_options *opt, json_t *result);

	/* The Debian packages that ship its loader and driver are its vendor's
	 * (vendor->packages): their file lists are searched first. */
	const char *no_package; /* the owner when none of them ships it: "(none of the Level Zero packages)" */
	/* The driver build a package version names (-1 when it names none), to
	 * compare with the build the driver reports; NULL: not comparable. */
	long (*package_build)(const char *package_version);
	const char *hang_remedy;               /* the fix when the runtime hangs */
	const struct backend_remedy *remedies; /* by error name, first match; ends with { NULL, NULL } */
	/* The health verdict from one device's telemetry: findings (with their
	 * fixes) into r; "label" names the device. */
	void (*judge_health)(const struct probe_telemetry *t, const char *label, struct result *r);
	/* The vendor's device nodes (vendor->node_dir, node_prefix) count the
	 * GPUs passed in: how many per-device children to start at once, before
	 * the runtime has said; its visibility variable caps them
	 * (vendor->visible_cap): on a 4-GPU H100 host, CUDA_VISIBLE_DEVICES=0
	 * started four children that all initialized GPU 0
	 * (tests/bench/RESULTS.md). */
};

/* Every backend, in the order `auto` tries them (backends.c). */
extern const struct backend *const backends[];
/* Their names into out (at most max - 1, then NULL); returns how many. */
size_t backend_name_list(const char *out[], size_t max);
/* The backend of that name, or NULL. */
const struct backend *backend_named(const char *name);

extern const struct backend ze_backend;
extern const struct backend cuda_backend;

/* The smoke kernel's formula, shared by the host check of every backend and
 * by the test drivers: out[i] = in[i] * 3 + i (mod 2^32). */
static inline unsigned smoke_expected(unsigned in, unsigned i)
{
	return in * 3u + i;
}
/* The input the host writes before the launch. */
static inline unsigned smoke_input(unsigned i)
{
	return i ^ 0x5bd1e995u;
}

#endif
