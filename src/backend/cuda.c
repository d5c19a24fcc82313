/* The CUDA backend: runs in the probe child only. libcuda.so.1 is loaded
 * with dlopen and the few driver-API entry points are declared here, so the
 * binary has no link or build dependency on the CUDA toolkit and reports a
 * clean "not found" on machines without the NVIDIA driver.
 *
 * Stages: loader, init, drivers, devices, context, memory, module, launch,
 * sync, verify, telemetry. The smoke kernel is the PTX in src/kernels/
 * (embedded at build time), loaded with cuModuleLoadData every time: nothing
 * is cached, so a broken JIT or driver cannot hide behind a cache. */
#include "backend/backend.h"
#include "backend/nvml.h"
#include "backend/perf.h"
#include "backend/verdicts.h"
#include "lib/embedded.h"
#include "lib/dynlib.h"
#include "lib/util.h"

#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Driver API types and constants (from the public driver API; ABI-stable). */
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct {
	unsigned char bytes[16];
} CUuuid;

enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_NOT_READY = 600,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
	CU_EVENT_DEFAULT = 0,
	CU_EVENT_DISABLE_TIMING = 2,
	SMOKE_BLOCK = 256,
};

/* The entry points, resolved by name; versioned names (_v2) are the ones the
 * toolkit headers map the plain names to. */
struct cuda_api {
	void *lib;
	CUresult (*Init)(unsigned);
	CUresult (*DriverGetVersion)(int *);
	CUresult (*DeviceGetCount)(int *);
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*DeviceGetName)(char *, int, CUdevice);
	CUresult (*DeviceGetUuid)(CUuuid *, CUdevice);
	CUresult (*DeviceGetPCIBusId)(char *, int, CUdevice);
	CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
	CUresult (*DeviceTotalMem)(size_t *, CUdevice);
	CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*PrimaryCtxRelease)(CUdevice);
	CUresult (*CtxSetCurrent)(CUcontext);
	CUresult (*MemGetInfo)(size_t *, size_t *);
	CUresult (*ModuleLoadData)(CUmodule *, const void *);
	CUresult (*ModuleUnload)(CUmodule);
	CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*MemAlloc)(CUdeviceptr *, size_t);
	CUresult (*MemFree)(CUdeviceptr);
	CUresult (*MemsetD32)(CUdeviceptr, unsigned, size_t);
	CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
	CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
	CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
				 CUstream, void **, void **);
	CUresult (*EventCreate)(CUevent *, unsigned);
	CUresult (*EventRecord)(CUevent, CUstream);
	CUresult (*EventQuery)(CUevent);
	CUresult (*EventDestroy)(CUevent);
	CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
	CUresult (*GetErrorName)(CUresult, const char **);
	CUresult (*GetErrorString)(CUresult, const char **);
};

static const struct dynlib_symbol cuda_symbols[] = {
#define SYM(name, field)                                      \
	{                                                     \
		name, offsetof(struct cuda_api, field), false \
	}
	SYM("cuInit", Init),
	SYM("cuDriverGetVersion", DriverGetVersion),
	SYM("cuDeviceGetCount", DeviceGetCount),
	SYM("cuDeviceGet", DeviceGet),
	SYM("cuDeviceGetName", DeviceGetName),
	SYM("cuDeviceGetUuid_v2", DeviceGetUuid),
	SYM("cuDeviceGetPCIBusId", DeviceGetPCIBusId),
	SYM("cuDeviceGetAttribute", DeviceGetAttribute),
	SYM("cuDeviceTotalMem_v2", DeviceTotalMem),
	SYM("cuDevicePrimaryCtxRetain", PrimaryCtxRetain),
	SYM("cuDevicePrimaryCtxRelease_v2", PrimaryCtxRelease),
	SYM("cuCtxSetCurrent", CtxSetCurrent),
	SYM("cuMemGetInfo_v2", MemGetInfo),
	SYM("cuModuleLoadData", ModuleLoadData),
	SYM("cuModuleUnload", ModuleUnload),
	SYM("cuModuleGetFunction", ModuleGetFunction),
	SYM("cuMemAlloc_v2", MemAlloc),
	SYM("cuMemFree_v2", MemFree),
	SYM("cuMemsetD32_v2", MemsetD32),
	SYM("cuMemcpyHtoD_v2", MemcpyHtoD),
	SYM("cuMemcpyDtoH_v2", MemcpyDtoH),
	SYM("cuLaunchKernel", LaunchKernel),
	SYM("cuEventCreate", EventCreate),
	SYM("cuEventRecord", EventRecord),
	SYM("cuEventQuery", EventQuery),
	SYM("cuEventDestroy_v2", EventDestroy),
	SYM("cuEventElapsedTime", EventElapsedTime),
	SYM("cuGetErrorName", GetErrorName),
	SYM("cuGetErrorString", GetErrorString),
#undef SYM
};

/* What an error means for someone gating a CI job, and what to do. Codes are
 * the driver API's (cuda.h CUresult). */
static const struct {
	CUresult code;
	const char *hint;
} cuda_hints[] = {
	{ 1, "an invalid value reached the driver; report it with the result JSON" },
	{ 2, "the GPU is out of memory: another process holds it (see telemetry.processes) or the card is too small" },
	{ 3, "the driver is not initialized; cuInit failed earlier" },
	{ 34,
	  "the CUDA stub library was loaded instead of the driver: remove the toolkit's stubs/ directory from LD_LIBRARY_PATH" },
	{ 35,
	  "the NVIDIA kernel module is older than this libcuda.so.1: install matching driver packages or run the container with the host's driver mounted (--gpus all)" },
	{ 46,
	  "the GPU is busy or unavailable: it is in exclusive-process compute mode and in use, or prohibited (nvidia-smi -q -d COMPUTE)" },
	{ 100,
	  "no CUDA-capable GPU is visible: check CUDA_VISIBLE_DEVICES, run the container with --gpus all (or --runtime=nvidia), and check /dev/nvidia* exist" },
	{ 101, "the device index is not valid here: check CUDA_VISIBLE_DEVICES and the device count" },
	{ 200, "the embedded PTX was rejected as an invalid image; the binary may be damaged" },
	{ 209, "the driver cannot build the smoke kernel for this GPU architecture" },
	{ 214, "an uncorrectable ECC error occurred: drain the node and check nvidia-smi -q -d ECC" },
	{ 218, "the driver's PTX JIT rejected the smoke kernel: the driver's JIT is broken or too old" },
	{ 221,
	  "the driver's PTX JIT compiler library is missing (libnvidia-ptxjitcompiler.so.1): mount the full driver user-mode libraries" },
	{ 222, "the driver is older than the PTX ISA of the smoke kernel: upgrade the NVIDIA driver" },
	{ 304,
	  "an operating system call failed in the driver: check /dev/nvidia* permissions and the container's seccomp profile" },
	{ 700,
	  "the kernel made an illegal memory access: the GPU or driver is faulty; check the host's kernel log for Xid errors" },
	{ 719,
	  "the kernel launch failed: check the host's kernel log for Xid errors (dmesg | grep NVRM) and reset the GPU" },
	{ 802, "the system is not ready: on NVSwitch systems start nvidia-fabricmanager and wait for it" },
	{ 803,
	  "the user-mode driver (libcuda.so.1) and the kernel module differ in version: install matching versions" },
	{ 804,
	  "forward-compatibility libraries are not supported on this GPU: remove the cuda-compat libraries from the library path" },
	{ 999, "the driver reported an unknown error: check the host's kernel log (dmesg | grep NVRM) and nvidia-smi" },
};

/* util's monotonic clock, in milliseconds */
static double now_ms(void)
{
	return monotonic_seconds() * 1e3;
}

/* Timer for one stage: records elapsed ms into a timings object. */
struct stage_timer {
	json_t *timings;
	const char *stage;
	double start;
};

static void stage_begin(struct stage_timer *t, struct probe_channel *ch, json_t *timings, const char *stage,
			const char *device)
{
	probe_stage(ch, stage, device);
	t->timings = timings;
	t->stage = stage;
	t->start = now_ms();
}

static void stage_end(struct stage_timer *t)
{
	double ms = now_ms() - t->start;
	json_object_set_new(t->timings, t->stage, json_real((double)(long long)(ms * 1000) / 1000));
}

/* Sets error, message and stage on obj from a CUDA error code. */
static void set_cuda_error(const struct cuda_api *api, json_t *obj, const char *stage, const char *call, CUresult rc)
{
	const char *name = NULL, *text = NULL;
	if (api->GetErrorName == NULL || api->GetErrorName(rc, &name) != CUDA_SUCCESS || !name)
		name = NULL;
	if (api->GetErrorString == NULL || api->GetErrorString(rc, &text) != CUDA_SUCCESS || !text)
		text = "unknown error code";
	char *error = name ? xstrdup(name) : xasprintf("CUDA_ERROR_%d", rc);
	const char *hint = NULL;
	for (size_t i = 0; i < sizeof cuda_hints / sizeof cuda_hints[0]; i++)
		if (cuda_hints[i].code == rc)
			hint = cuda_hints[i].hint;
	char *message = hint ? xasprintf("%s failed: %s (%s): %s", call, error, text, hint)
			     : xasprintf("%s failed: %s (%s)", call, error, text);
	json_object_set_new(obj, "stage", json_string(stage));
	json_object_set_new(obj, "error", json_string(error));
	json_object_set_new(obj, "message", json_string(message));
	free(error);
	free(message);
}

static void set_error(json_t *obj, const char *stage, const char *error, const char *message)
{
	json_object_set_new(obj, "stage", json_string(stage));
	json_object_set_new(obj, "error", json_string(error));
	json_object_set_new(obj, "message", json_string(message));
}

/* Loads libcuda.so.1 and every entry point; on failure fills result. */
static int cuda_load(struct cuda_api *api, const char *library, json_t *result)
{
	memset(api, 0, sizeof *api);
	char why[256], real[PATH_MAX];
	api->lib = dynlib_open(library ? library : cuda_backend.library, why, sizeof why);
	if (!api->lib) {
		char *msg = xasprintf("CUDA driver %s not found (%s): install the NVIDIA driver's "
				      "user-mode libraries (%s) or run the container with the NVIDIA "
				      "runtime (--gpus all), which mounts them",
				      cuda_backend.library, why, cuda_backend.provided_by);
		set_error(result, "loader", "LIBRARY_NOT_FOUND", msg);
		free(msg);
		return -1;
	}
	if (dynlib_real_path(api->lib, real, sizeof real))
		json_object_set_new(result, "library", json_string(real));
	const char *missing = dynlib_resolve(api->lib, api, cuda_symbols, sizeof cuda_symbols / sizeof cuda_symbols[0]);
	if (missing) {
		char *msg = xasprintf("%s lacks %s: the driver is too old (CUDA 11.4 or later "
				      "is needed) or the library is not NVIDIA's driver",
				      cuda_backend.library, missing);
		set_error(result, "loader", "SYMBOL_NOT_FOUND", msg);
		free(msg);
		return -1;
	}
	return 0;
}

static char *uuid_text(const CUuuid *u)
{
	const unsigned char *b = u->bytes;
	return xasprintf("GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
			 b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

/* The PCI device id from sysfs (CUDA has no call for it): the key of the
 * performance baselines. Absent when /sys is hidden; the model's name then
 * stands in. */
static void pci_device_id(const char *pci, json_t *d)
{
	if (!pci[0] || strchr(pci, '/'))
		return;
	char *path = xasprintf("/sys/bus/pci/devices/%s/device", pci);
	char buf[32];
	if (read_attr_at(AT_FDCWD, path, buf, sizeof buf) == 0) {
		char *end;
		long id = strtol(buf, &end, 16);
		if (end != buf && !*end && id > 0 && id <= 0xffff)
			json_object_set_new(d, "device_id", json_integer(id));
	}
	free(path);
}

/* Properties that need no context: name, uuid, pci, compute capability,
 * total memory. Fills pci (for stage lines). */
static int device_properties(const struct cuda_api *api, CUdevice dev, int index, json_t *d, char *pci, size_t pci_size)
{
	char name[256] = "";
	CUuuid uuid;
	int major = 0, minor = 0;
	size_t total = 0;
	CUresult rc;
	json_object_set_new(d, "index", json_integer(index));
	if ((rc = api->DeviceGetName(name, sizeof name, dev)) != CUDA_SUCCESS) {
		set_cuda_error(api, d, "devices", "cuDeviceGetName", rc);
		return -1;
	}
	json_object_set_new(d, "name", json_string(name));
	if (api->DeviceGetUuid(&uuid, dev) == CUDA_SUCCESS) {
		char *u = uuid_text(&uuid);
		json_object_set_new(d, "uuid", json_string(u));
		free(u);
	}
	if (api->DeviceGetPCIBusId(pci, (int)pci_size, dev) == CUDA_SUCCESS) {
		for (char *p = pci; *p; p++)
			if (*p >= 'A' && *p <= 'F')
				*p = (char)(*p - 'A' + 'a');
		json_object_set_new(d, "pci", json_string(pci));
	}
	json_object_set_new(d, "vendor_id", json_integer(nvidia_vendor.pci_id));
	pci_device_id(pci, d);
	if (api->DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) == CUDA_SUCCESS &&
	    api->DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) == CUDA_SUCCESS) {
		char *cc = xasprintf("%d.%d", major, minor);
		json_object_set_new(d, "compute", json_string(cc));
		free(cc);
	}
	if (api->DeviceTotalMem(&total, dev) == CUDA_SUCCESS)
		json_object_set_new(d, "memory_total", json_integer((json_int_t)total));
	return 0;
}

/* Waits for everything queued on the default stream, at most timeout_s, by
 * polling an event: cuStreamSynchronize could block forever on a hung GPU,
 * and a finite wait gives a precise "sync timed out" before the parent's kill.
 * spin: poll without sleeping, so the wait adds no scheduler delay to a
 * latency measurement. 0 done, 1 timed out, -1 failed (rc says how). */
static int wait_for_event(const struct cuda_api *api, CUevent ev, double timeout_s, bool spin, CUresult *rc)
{
	double deadline = now_ms() + timeout_s * 1e3;
	long sleep_ns = 20000;
	for (;;) {
		*rc = api->EventQuery(ev);
		if (*rc != CUDA_ERROR_NOT_READY)
			return *rc == CUDA_SUCCESS ? 0 : -1;
		if (now_ms() >= deadline)
			return 1;
		if (spin)
			continue;
		struct timespec ts = { 0, sleep_ns };
		nanosleep(&ts, NULL);
		if (sleep_ns < 1000000)
			sleep_ns *= 2;
	}
}

struct smoke_buffers {
	CUdeviceptr in, out;
	CUmodule module;
	CUevent event;
	unsigned *host;
};

static void smoke_release(const struct cuda_api *api, struct smoke_buffers *b)
{
	if (b->event)
		api->EventDestroy(b->event);
	if (b->out)
		api->MemFree(b->out);
	if (b->in)
		api->MemFree(b->in);
	if (b->module)
		api->ModuleUnload(b->module);
	free(b->host);
}

static int device_perf(const struct cuda_api *api, struct probe_channel *ch, const struct backend_options *opt,
		       const char *pci, CUmodule module, json_t *d, json_t *timings);

/* memory, module, launch, sync, verify on the current context. */
static int device_smoke(const struct cuda_api *api, struct probe_channel *ch, const struct backend_options *opt,
			const char *pci, json_t *d, json_t *timings)
{
	struct smoke_buffers b = { 0 };
	struct stage_timer t;
	CUresult rc;
	size_t n = opt->work_items < (1u << 20) ? (1u << 20) : opt->work_items;
	if (n > 0xffffffffu - SMOKE_BLOCK)
		n = 0xffffffffu - SMOKE_BLOCK;
	size_t bytes = n * sizeof(unsigned);
	int ret = -1;

	/* one driver call of a stage: on failure, record it and leave */
#define CUDA_CALL(stage, name, expr)                             \
	do {                                                     \
		if ((rc = (expr)) != CUDA_SUCCESS) {             \
			set_cuda_error(api, d, stage, name, rc); \
			goto out;                                \
		}                                                \
	} while (0)
	stage_begin(&t, ch, timings, "memory", pci);
	b.host = xmalloc(bytes);
	for (size_t i = 0; i < n; i++)
		b.host[i] = smoke_input((unsigned)i);
	CUDA_CALL("memory", "cuMemAlloc", api->MemAlloc(&b.in, bytes));
	CUDA_CALL("memory", "cuMemAlloc", api->MemAlloc(&b.out, bytes));
	/* A sentinel in the output, so a kernel that never ran cannot pass on
	 * whatever memory happened to hold. */
	CUDA_CALL("memory", "cuMemsetD32", api->MemsetD32(b.out, 0xdeadbeefu, n));
	CUDA_CALL("memory", "cuMemcpyHtoD", api->MemcpyHtoD(b.in, b.host, bytes));
	stage_end(&t);

	stage_begin(&t, ch, timings, "module", pci);
	const struct embedded_file *ptx = embedded_find(embedded_ptx, "smoke");
	if (!ptx) {
		set_error(d, "module", "PTX_MISSING", "the smoke kernel's PTX is not in this binary");
		goto out;
	}
	CUDA_CALL("module", "cuModuleLoadData", api->ModuleLoadData(&b.module, ptx->data));
	CUfunction fn;
	CUDA_CALL("module", "cuModuleGetFunction", api->ModuleGetFunction(&fn, b.module, "smoke"));
	stage_end(&t);

	stage_begin(&t, ch, timings, "launch", pci);
	unsigned count = (unsigned)n;
	void *params[] = { &b.out, &b.in, &count };
	unsigned grid = (unsigned)((n + SMOKE_BLOCK - 1) / SMOKE_BLOCK);
	CUDA_CALL("launch", "cuLaunchKernel",
		  api->LaunchKernel(fn, grid, 1, 1, SMOKE_BLOCK, 1, 1, 0, NULL, params, NULL));
	CUDA_CALL("launch", "cuEventCreate", api->EventCreate(&b.event, CU_EVENT_DISABLE_TIMING));
	CUDA_CALL("launch", "cuEventRecord", api->EventRecord(b.event, NULL));
	stage_end(&t);

	stage_begin(&t, ch, timings, "sync", pci);
	double timeout = opt->sync_timeout_s > 0 ? opt->sync_timeout_s : 10;
	int w = wait_for_event(api, b.event, timeout, false, &rc);
	if (w > 0) {
		char waited[32];
		human_seconds(timeout, waited, sizeof(waited));
		char *msg = xasprintf("the smoke kernel did not finish within %s: the GPU is hung "
				      "or saturated by another process; check nvidia-smi and the "
				      "host's kernel log for Xid errors",
				      waited);
		set_error(d, "sync", "TIMEOUT", msg);
		free(msg);
		goto out;
	}
	if (w < 0) {
		set_cuda_error(api, d, "sync", "cuEventQuery", rc);
		goto out;
	}
	stage_end(&t);

	stage_begin(&t, ch, timings, "verify", pci);
	CUDA_CALL("verify", "cuMemcpyDtoH", api->MemcpyDtoH(b.host, b.out, bytes));
	size_t mismatches = 0, first_bad = 0;
	for (size_t i = 0; i < n; i++)
		if (b.host[i] != smoke_expected(smoke_input((unsigned)i), (unsigned)i) && mismatches++ == 0)
			first_bad = i;
	json_t *smoke = json_pack("{s:b, s:I, s:I}", "ok", mismatches == 0, "elements", (json_int_t)n, "mismatches",
				  (json_int_t)mismatches);
	if (mismatches) {
		json_object_set_new(smoke, "first_bad_index", json_integer((json_int_t)first_bad));
		char *msg = xasprintf("the smoke kernel computed %zu of %zu elements wrong (first at "
				      "index %zu: got 0x%08x, expected 0x%08x): the GPU or driver "
				      "computes wrong results; drain the node",
				      mismatches, n, first_bad, b.host[first_bad],
				      smoke_expected(smoke_input((unsigned)first_bad), (unsigned)first_bad));
		set_error(d, "verify", "WRONG_RESULT", msg);
		free(msg);
	}
	json_object_set_new(d, "smoke", smoke);
	stage_end(&t);
	ret = mismatches ? -1 : 0;
	if (ret == 0 && opt->perf) /* a wrong GPU's speed means nothing */
		ret = device_perf(api, ch, opt, pci, b.module, d, timings);
out:
	smoke_release(api, &b);
	return ret;
}
#undef CUDA_CALL

/* The validate profile's figures, after a correct smoke: copy bandwidth (the
 * `copy` kernel over two buffers, timed with cuEventRecord /
 * cuEventElapsedTime, best of PERF_REPEATS after a warm-up, bytes read plus
 * written) and launch latency (host clock from cuLaunchKernel of one thread
 * to its event's completion, median of LATENCY_RUNS). */
static int device_perf(const struct cuda_api *api, struct probe_channel *ch, const struct backend_options *opt,
		       const char *pci, CUmodule module, json_t *d, json_t *timings)
{
	struct stage_timer t;
	CUresult rc;
	CUdeviceptr src = 0, dst = 0;
	CUevent start = NULL, stop = NULL;
	int ret = -1;
	json_t *perf = json_object();
	json_object_set_new(d, "performance", perf);
	size_t bytes = perf_copy_bytes(opt->perf_bytes);
	unsigned items = (unsigned)(bytes / COPY_ITEM_BYTES);
	double timeout = opt->sync_timeout_s > 0 ? opt->sync_timeout_s : 10;
	const char *call = "";

	stage_begin(&t, ch, timings, "perf", pci);
	CUfunction fn;
#define PERF_CALL(name, expr)                      \
	do {                                       \
		call = name;                       \
		if ((rc = (expr)) != CUDA_SUCCESS) \
			goto fail;                 \
	} while (0)
	PERF_CALL("cuModuleGetFunction(copy)", api->ModuleGetFunction(&fn, module, "copy"));
	PERF_CALL("cuMemAlloc", api->MemAlloc(&src, bytes));
	PERF_CALL("cuMemAlloc", api->MemAlloc(&dst, bytes));
	PERF_CALL("cuEventCreate", api->EventCreate(&start, CU_EVENT_DEFAULT));
	PERF_CALL("cuEventCreate", api->EventCreate(&stop, CU_EVENT_DEFAULT));
	unsigned grid = (items + SMOKE_BLOCK - 1) / SMOKE_BLOCK;
	void *params[] = { &dst, &src, &items };
	double best_ms = 0;
	json_t *runs = json_array();
	json_object_set_new(perf, "copy_runs_ms", runs);
	for (int r = 0; r <= PERF_REPEATS; r++) { /* run 0 warms up */
		PERF_CALL("cuEventRecord", api->EventRecord(start, NULL));
		PERF_CALL("cuLaunchKernel(copy)",
			  api->LaunchKernel(fn, grid, 1, 1, SMOKE_BLOCK, 1, 1, 0, NULL, params, NULL));
		PERF_CALL("cuEventRecord", api->EventRecord(stop, NULL));
		int w = wait_for_event(api, stop, timeout, false, &rc);
		if (w > 0) {
			set_error(d, "perf", "TIMEOUT",
				  "the bandwidth copy did not finish in time: the GPU is hung or saturated");
			goto out;
		}
		call = "cuEventQuery";
		if (w < 0)
			goto fail;
		float ms = 0;
		PERF_CALL("cuEventElapsedTime", api->EventElapsedTime(&ms, start, stop));
		perf_keep_copy(r, ms, runs, &best_ms);
	}
	if (best_ms <= 0) {
		set_error(d, "perf", "ZERO_DURATION",
			  "every event said the copy took no time: the driver's event timing is broken");
		goto out;
	}
	unsigned one = 1;
	void *tiny[] = { &dst, &src, &one };
	double lat[LATENCY_RUNS];
	for (int r = 0; r < LATENCY_WARMUP + LATENCY_RUNS; r++) {
		double t0 = now_ms();
		PERF_CALL("cuLaunchKernel(copy)", api->LaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, NULL, tiny, NULL));
		PERF_CALL("cuEventRecord", api->EventRecord(stop, NULL));
		call = "cuEventQuery";
		int w = wait_for_event(api, stop, timeout, true, &rc);
		if (w > 0) {
			set_error(d, "perf", "TIMEOUT", "a one-thread kernel did not finish in time: the GPU is hung");
			goto out;
		}
		if (w < 0)
			goto fail;
		if (r >= LATENCY_WARMUP)
			lat[r - LATENCY_WARMUP] = (now_ms() - t0) * 1e3;
	}
	json_object_set_new(perf, "copy_bandwidth_gbs", json_real(2.0 * (double)bytes / (best_ms * 1e6)));
	json_object_set_new(perf, "copy_ms", json_real(best_ms));
	json_object_set_new(perf, "buffer_bytes", json_integer((json_int_t)bytes));
	perf_record_latency(perf, lat);
	json_object_set_new(
		perf, "method",
		json_string(
			"bandwidth: best of 5 copy kernels (bytes read + written) timed by cuEventRecord/cuEventElapsedTime; "
			"latency: median of 50 one-thread launches, host clock from cuLaunchKernel to the event's completion"));
	stage_end(&t);
	ret = 0;
	goto out;
#undef PERF_CALL
fail:
	set_cuda_error(api, d, "perf", call, rc);
out:
	if (ret < 0) {
		json_object_set(perf, "error", json_object_get(d, "error"));
		json_object_set(perf, "message", json_object_get(d, "message"));
	}
	if (stop)
		api->EventDestroy(stop);
	if (start)
		api->EventDestroy(start);
	if (dst)
		api->MemFree(dst);
	if (src)
		api->MemFree(src);
	return ret;
}

/* One device: properties, and with a context free memory and the smoke. */
static int probe_device(const struct cuda_api *api, struct probe_channel *ch, const struct backend_options *opt,
			int index, json_t *d, json_t *result)
{
	CUdevice dev;
	CUresult rc;
	char pci[64] = "";
	char index_text[16];
	snprintf(index_text, sizeof index_text, "%d", index);
	json_t *timings = json_object();
	json_object_set_new(d, "timings_ms", timings);
	struct stage_timer t;

	stage_begin(&t, ch, timings, "devices", index_text);
	if ((rc = api->DeviceGet(&dev, index)) != CUDA_SUCCESS) {
		json_object_set_new(d, "index", json_integer(index));
		set_cuda_error(api, d, "devices", "cuDeviceGet", rc);
		return -1;
	}
	if (device_properties(api, dev, index, d, pci, sizeof pci))
		return -1;
	stage_end(&t);
	if (opt->device >= 0) /* the enumeration survives a hang or crash below */
		probe_enumerated(ch, result);
	const char *where = pci[0] ? pci : index_text;

	int ret = 0;
	if (opt->device >= 0) {
		/* The primary context is the one frameworks share; retaining it
		 * measures what a PyTorch job would pay on this GPU. */
		CUcontext ctx = NULL;
		stage_begin(&t, ch, timings, "context", where);
		if ((rc = api->PrimaryCtxRetain(&ctx, dev)) != CUDA_SUCCESS) {
			set_cuda_error(api, d, "context", "cuDevicePrimaryCtxRetain", rc);
			return -1;
		}
		if ((rc = api->CtxSetCurrent(ctx)) != CUDA_SUCCESS) {
			set_cuda_error(api, d, "context", "cuCtxSetCurrent", rc);
			api->PrimaryCtxRelease(dev);
			return -1;
		}
		size_t free_b = 0, total_b = 0;
		if ((rc = api->MemGetInfo(&free_b, &total_b)) != CUDA_SUCCESS) {
			set_cuda_error(api, d, "context", "cuMemGetInfo", rc);
			api->PrimaryCtxRelease(dev);
			return -1;
		}
		json_object_set_new(d, "memory_free", json_integer((json_int_t)free_b));
		json_object_set_new(d, "memory_total", json_integer((json_int_t)total_b));
		stage_end(&t);
		if (opt->smoke)
			ret = device_smoke(api, ch, opt, where, d, timings);
		api->CtxSetCurrent(NULL);
		api->PrimaryCtxRelease(dev);
	}
	if ((opt->telemetry || opt->processes) && pci[0]) { /* NVML lists the processes too */
		stage_begin(&t, ch, timings, "telemetry", where);
		json_t *tele = json_object();
		nvml_telemetry(pci, tele);
		json_object_set_new(d, "telemetry", tele);
		stage_end(&t);
	}
	return ret;
}

static int cuda_run(struct probe_channel *ch, const struct backend_options *opt, json_t *result)
{
	struct cuda_api api;
	struct stage_timer t;
	CUresult rc;
	json_t *timings = json_object();
	json_object_set_new(result, "backend", json_string("cuda"));
	json_object_set_new(result, "ok", json_false());
	json_object_set_new(result, "timings_ms", timings);
	/* The driver applies CUDA_VISIBLE_DEVICES in cuInit; report what it saw. */
	const char *visible = getenv("CUDA_VISIBLE_DEVICES");
	json_object_set_new(result, "cuda_visible_devices", visible ? json_string(visible) : json_null());

	stage_begin(&t, ch, timings, "loader", NULL);
	if (cuda_load(&api, opt->library, result))
		return 1;
	stage_end(&t);

	int ret = 1;
	stage_begin(&t, ch, timings, "init", NULL);
	if ((rc = api.Init(0)) != CUDA_SUCCESS) {
		set_cuda_error(&api, result, "init", "cuInit", rc);
		if (visible) {
			const char *msg = json_string_value(json_object_get(result, "message"));
			char *more = xasprintf("%s (CUDA_VISIBLE_DEVICES=\"%s\" is set: an empty value "
					       "hides every GPU, and the list stops at the first "
					       "index or UUID that does not exist)",
					       msg, visible);
			json_object_set_new(result, "message", json_string(more));
			free(more);
		}
		goto out;
	}
	stage_end(&t);

	stage_begin(&t, ch, timings, "drivers", NULL);
	int version = 0;
	if ((rc = api.DriverGetVersion(&version)) != CUDA_SUCCESS) {
		set_cuda_error(&api, result, "drivers", "cuDriverGetVersion", rc);
		goto out;
	}
	char *vtext = xasprintf("%d.%d", version / 1000, version % 1000 / 10);
	json_object_set_new(result, "driver_version", json_string(vtext));
	free(vtext);
	stage_end(&t);

	stage_begin(&t, ch, timings, "devices", NULL);
	int count = 0;
	if ((rc = api.DeviceGetCount(&count)) != CUDA_SUCCESS) {
		set_cuda_error(&api, result, "devices", "cuDeviceGetCount", rc);
		goto out;
	}
	json_object_set_new(result, "device_count", json_integer(count));
	if (count == 0) {
		set_error(result, "devices", "CUDA_ERROR_NO_DEVICE",
			  "the driver sees no GPU: check CUDA_VISIBLE_DEVICES and that the container "
			  "was started with --gpus all");
		goto out;
	}
	if (opt->device >= count) {
		char *msg = xasprintf("device %d was asked for, but the driver sees %d %s (after "
				      "CUDA_VISIBLE_DEVICES)",
				      opt->device, count, count_noun((size_t)count, "GPU", "GPUs"));
		set_error(result, "devices", "CUDA_ERROR_INVALID_DEVICE", msg);
		free(msg);
		goto out;
	}
	stage_end(&t);
	json_t *devices = json_array();
	json_object_set_new(result, "devices", devices);
	int first = opt->device >= 0 ? opt->device : 0;
	int last = opt->device >= 0 ? opt->device : count - 1;
	int failed = 0;
	for (int i = first; i <= last; i++) {
		json_t *d = json_object();
		json_array_append_new(devices, d);
		if (probe_device(&api, ch, opt, i, d, result) && failed++ == 0) {
			/* The first failing device names the whole probe's failure. */
			json_object_set(result, "stage", json_object_get(d, "stage"));
			json_object_set(result, "error", json_object_get(d, "error"));
			json_object_set(result, "message", json_object_get(d, "message"));
		}
	}
	ret = failed ? 1 : 0;
	json_object_set_new(result, "ok", json_boolean(!failed));
out:
	/* libcuda is not unloaded: its threads may still run, and the child exits next. */
	return ret;
}

const struct backend cuda_backend = {
	.name = "cuda",
	.library = "libcuda.so.1",
	.provided_by = "libcuda1 on Debian, libnvidia-compute-NNN on Ubuntu, or the NVIDIA driver "
		       "installer",
	.vendor = &nvidia_vendor,
	.missing_remedy =
		"run the container with the NVIDIA runtime (docker run --gpus all), which mounts the driver's "
		"libcuda.so.1; on the host, install the NVIDIA driver (libcuda1 on Debian, "
		"libnvidia-compute-NNN on Ubuntu)",
	.run = cuda_run,
	.no_package = "(none of the CUDA driver packages)",
	.hang_remedy = "the GPU or its driver hangs: read the host's kernel log for Xid errors (dmesg | grep -i xid), "
		       "check nvidia-smi, and reset the GPU (nvidia-smi -r) or reboot the host",
	.remedies = cuda_remedies,
	.judge_health = cuda_judge_health,
};
