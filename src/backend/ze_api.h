/* The Level Zero entry points the probe child resolves from the loader with
 * dlsym, shared by the backend's files (ze.c: enumeration and smoke;
 * ze_perf.c: bandwidth and launch latency; ze_sysman.c: telemetry). */
#ifndef GPUGATE_ZE_API_H
#define GPUGATE_ZE_API_H

#include <jansson.h>
#include <level_zero/ze_api.h>
#include <level_zero/zes_api.h>

/* clang-format off */
#define ZE_FUNCS(X)                                                                             \
	X(zeInit) X(zeDriverGet) X(zeDriverGetProperties) X(zeDeviceGet) X(zeDeviceGetProperties) \
	X(zeDeviceGetComputeProperties) X(zeDeviceGetMemoryProperties)                          \
	X(zeDeviceGetCommandQueueGroupProperties) X(zeContextCreate) X(zeContextDestroy)          \
	X(zeCommandQueueCreate) X(zeCommandQueueDestroy) X(zeCommandQueueExecuteCommandLists)     \
	X(zeCommandListCreate) X(zeCommandListDestroy) X(zeCommandListClose)                      \
	X(zeCommandListAppendMemoryCopy) X(zeCommandListAppendBarrier)                            \
	X(zeCommandListAppendLaunchKernel) X(zeMemAllocDevice) X(zeMemAllocHost) X(zeMemFree)     \
	X(zeModuleCreate) X(zeModuleDestroy) X(zeModuleBuildLogGetString)                         \
	X(zeModuleBuildLogDestroy) X(zeKernelCreate) X(zeKernelDestroy)                           \
	X(zeKernelSetArgumentValue) X(zeKernelSetGroupSize) X(zeKernelSuggestGroupSize)           \
	X(zeFenceCreate) X(zeFenceDestroy) X(zeFenceHostSynchronize) X(zeFenceReset)              \
	X(zeModuleGetNativeBinary) X(zeEventPoolCreate) X(zeEventPoolDestroy) X(zeEventCreate)    \
	X(zeEventDestroy) X(zeEventHostReset) X(zeEventQueryKernelTimestamp)
/* Optional: older loaders or drivers lack them. Every Sysman (zes) function
 * is optional: a driver without Sysman still computes. */
#define ZE_OPTIONAL_FUNCS(X)                                                                   \
	X(zeDevicePciGetPropertiesExt) X(zesDeviceEnumMemoryModules) X(zesMemoryGetState)         \
	X(zesDeviceEnumTemperatureSensors) X(zesTemperatureGetState) X(zesDeviceProcessesGetState) \
	X(zesDeviceEnumPowerDomains) X(zesPowerGetEnergyCounter) X(zesDeviceEnumFrequencyDomains) \
	X(zesFrequencyGetProperties) X(zesFrequencyGetState) X(zesDeviceEnumRasErrorSets)         \
	X(zesRasGetProperties) X(zesRasGetState)
/* clang-format on */

struct ze_api {
	void *lib;
#define ZE_DECLARE(name) __typeof__(&name) name;
	ZE_FUNCS(ZE_DECLARE)
	ZE_OPTIONAL_FUNCS(ZE_DECLARE)
#undef ZE_DECLARE
};

/* Sysman telemetry of one device into j.telemetry (ze_sysman.c): temperature,
 * power, frequency, memory health, RAS counters; each a value or "not
 * supported by this driver". Best effort, never fails. */
void ze_sysman_telemetry(const struct ze_api *api, ze_device_handle_t dev, json_t *j);
/* The processes using the device into j.processes (an array of {pid,
 * memory, self}), or the string "not supported by this driver". */
void ze_sysman_processes(const struct ze_api *api, ze_device_handle_t dev, json_t *j);

/* What the performance measurement needs from the smoke run: its context,
 * a compute queue and the module that holds the `copy` kernel. */
struct ze_perf_target {
	ze_context_handle_t ctx;
	ze_device_handle_t dev;
	ze_command_queue_handle_t queue;
	uint32_t ordinal;
	ze_module_handle_t module;
	size_t bytes;     /* copy buffer size */
	double timeout_s; /* each wait's limit */
};

/* Copy bandwidth (kernel timestamps) and launch latency (host clock) into
 * j.performance. 0, or -1 with j.performance.error / message set. */
int ze_perf_measure(const struct ze_api *api, const struct ze_perf_target *t, json_t *j);

#endif
