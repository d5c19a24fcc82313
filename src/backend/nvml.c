/* NVML health for the CUDA backend. Everything is optional: NVML may be
 * missing (a container without the driver's utilities), a query may be "not
 * supported" on this GPU (ECC on consumer cards, row remapping before Ampere),
 * and each answer is reported as such rather than guessed. */
#include "backend/nvml.h"
#include "lib/util.h"

#include "lib/dynlib.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
/* nvmlProcessInfo_t as the _v2/_v3 process queries fill it. */
typedef struct {
	unsigned pid;
	unsigned long long usedGpuMemory;
	unsigned gpuInstanceId;
	unsigned computeInstanceId;
} nvml_process_info;

enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_TEMPERATURE_GPU = 0,
	NVML_MEMORY_ERROR_TYPE_CORRECTED = 0,
	NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1,
	NVML_VOLATILE_ECC = 0,
	NVML_AGGREGATE_ECC = 1,
	NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0,
	NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1,
	MAX_PROCESSES = 64,
};

struct nvml_api {
	void *lib;
	nvmlReturn_t (*Init)(void);
	nvmlReturn_t (*Shutdown)(void);
	const char *(*ErrorString)(nvmlReturn_t);
	nvmlReturn_t (*SystemGetDriverVersion)(char *, unsigned);
	nvmlReturn_t (*GetHandleByPciBusId)(const char *, nvmlDevice_t *);
	nvmlReturn_t (*GetTemperature)(nvmlDevice_t, int, unsigned *);
	nvmlReturn_t (*GetPowerUsage)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*GetEnforcedPowerLimit)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*GetEccMode)(nvmlDevice_t, int *, int *);
	nvmlReturn_t (*GetTotalEccErrors)(nvmlDevice_t, int, int, unsigned long long *);
	nvmlReturn_t (*GetRetiredPages)(nvmlDevice_t, int, unsigned *, unsigned long long *);
	nvmlReturn_t (*GetRetiredPagesPendingStatus)(nvmlDevice_t, int *);
	nvmlReturn_t (*GetRemappedRows)(nvmlDevice_t, unsigned *, unsigned *, unsigned *, unsigned *);
	nvmlReturn_t (*GetComputeRunningProcesses)(nvmlDevice_t, unsigned *, nvml_process_info *);
};

#define NVML_SYM(field, name, optional)                          \
	{                                                        \
		name, offsetof(struct nvml_api, field), optional \
	}
static const struct dynlib_symbol nvml_symbols[] = {
	NVML_SYM(Init, "nvmlInit_v2", false),
	NVML_SYM(Shutdown, "nvmlShutdown", true),
	NVML_SYM(ErrorString, "nvmlErrorString", false),
	NVML_SYM(SystemGetDriverVersion, "nvmlSystemGetDriverVersion", true),
	NVML_SYM(GetHandleByPciBusId, "nvmlDeviceGetHandleByPciBusId_v2", false),
	NVML_SYM(GetTemperature, "nvmlDeviceGetTemperature", true),
	NVML_SYM(GetPowerUsage, "nvmlDeviceGetPowerUsage", true),
	NVML_SYM(GetEnforcedPowerLimit, "nvmlDeviceGetEnforcedPowerLimit", true),
	NVML_SYM(GetEccMode, "nvmlDeviceGetEccMode", true),
	NVML_SYM(GetTotalEccErrors, "nvmlDeviceGetTotalEccErrors", true),
	NVML_SYM(GetRetiredPages, "nvmlDeviceGetRetiredPages", true),
	NVML_SYM(GetRetiredPagesPendingStatus, "nvmlDeviceGetRetiredPagesPendingStatus", true),
	NVML_SYM(GetRemappedRows, "nvmlDeviceGetRemappedRows", true),
	NVML_SYM(GetComputeRunningProcesses, "nvmlDeviceGetComputeRunningProcesses_v3", true),
};
/* drivers before R510 export only the _v2 process query */
static const struct dynlib_symbol nvml_processes_v2 =
	NVML_SYM(GetComputeRunningProcesses, "nvmlDeviceGetComputeRunningProcesses_v2", true);

static int nvml_load(struct nvml_api *n, json_t *telemetry)
{
	memset(n, 0, sizeof *n);
	char why[200];
	n->lib = dynlib_open("libnvidia-ml.so.1", why, sizeof why);
	if (!n->lib) {
		char *msg = xasprintf("not loaded (%s): health needs the driver's NVML library", why);
		json_object_set_new(telemetry, "nvml", json_string(msg));
		free(msg);
		return -1;
	}
	const char *missing = dynlib_resolve(n->lib, n, nvml_symbols, sizeof nvml_symbols / sizeof nvml_symbols[0]);
	if (!missing && !n->GetComputeRunningProcesses)
		dynlib_resolve(n->lib, n, &nvml_processes_v2, 1);
	if (missing) {
		char *msg = xasprintf("libnvidia-ml.so.1 lacks %s: too old", missing);
		json_object_set_new(telemetry, "nvml", json_string(msg));
		free(msg);
		return -1;
	}
	return 0;
}

/* The value for a failed query: "not supported" where NVML says so, else its message. */
static json_t *nvml_failure(const struct nvml_api *n, nvmlReturn_t rc)
{
	if (rc == NVML_ERROR_NOT_SUPPORTED)
		return json_string("not supported");
	return json_string(n->ErrorString(rc));
}

static void ecc_status(const struct nvml_api *n, nvmlDevice_t dev, json_t *telemetry)
{
	int current = 0, pending = 0;
	nvmlReturn_t rc;
	if (!n->GetEccMode || (rc = n->GetEccMode(dev, &current, &pending)) != NVML_SUCCESS) {
		json_object_set_new(telemetry, "ecc",
				    n->GetEccMode ? nvml_failure(n, rc) : json_string("not supported"));
		return;
	}
	json_t *ecc = json_pack("{s:b, s:b}", "enabled", current != 0, "pending_enabled", pending != 0);
	static const struct {
		const char *key;
		int type, counter;
	} counters[] = {
		{ "uncorrected_volatile", NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC },
		{ "uncorrected_aggregate", NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC },
		{ "corrected_volatile", NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC },
	};
	for (size_t i = 0; current && n->GetTotalEccErrors && i < sizeof counters / sizeof counters[0]; i++) {
		unsigned long long count = 0;
		rc = n->GetTotalEccErrors(dev, counters[i].type, counters[i].counter, &count);
		json_object_set_new(ecc, counters[i].key,
				    rc == NVML_SUCCESS ? json_integer((json_int_t)count) : nvml_failure(n, rc));
	}
	json_object_set_new(telemetry, "ecc", ecc);
}

/* Ampere and later remap rows; older GPUs retire pages. Report what this one does. */
static void memory_repair_status(const struct nvml_api *n, nvmlDevice_t dev, json_t *telemetry)
{
	unsigned corr = 0, unc = 0, pending = 0, failed = 0;
	nvmlReturn_t rc =
		n->GetRemappedRows ? n->GetRemappedRows(dev, &corr, &unc, &pending, &failed) : NVML_ERROR_NOT_SUPPORTED;
	json_object_set_new(telemetry, "row_remap",
			    rc == NVML_SUCCESS
				    ? json_pack("{s:i, s:i, s:b, s:b}", "corrected_rows", corr, "uncorrected_rows", unc,
						"pending", pending != 0, "failure", failed != 0)
				    : nvml_failure(n, rc));
	int page_pending = 0;
	rc = n->GetRetiredPagesPendingStatus ? n->GetRetiredPagesPendingStatus(dev, &page_pending)
					     : NVML_ERROR_NOT_SUPPORTED;
	if (rc != NVML_SUCCESS) {
		json_object_set_new(telemetry, "retired_pages", nvml_failure(n, rc));
		return;
	}
	json_t *pages = json_pack("{s:b}", "pending", page_pending != 0);
	static const struct {
		const char *key;
		int cause;
	} causes[] = {
		{ "single_bit", NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS },
		{ "double_bit", NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR },
	};
	for (size_t i = 0; n->GetRetiredPages && i < sizeof causes / sizeof causes[0]; i++) {
		unsigned count = 0;
		rc = n->GetRetiredPages(dev, causes[i].cause, &count, NULL);
		if (rc == NVML_ERROR_INSUFFICIENT_SIZE)
			rc = NVML_SUCCESS; /* count holds the number; the addresses are not wanted */
		json_object_set_new(pages, causes[i].key,
				    rc == NVML_SUCCESS ? json_integer(count) : nvml_failure(n, rc));
	}
	json_object_set_new(telemetry, "retired_pages", pages);
}

static void processes(const struct nvml_api *n, nvmlDevice_t dev, json_t *telemetry)
{
	nvml_process_info info[MAX_PROCESSES];
	unsigned count = MAX_PROCESSES;
	nvmlReturn_t rc = n->GetComputeRunningProcesses ? n->GetComputeRunningProcesses(dev, &count, info)
							: NVML_ERROR_NOT_SUPPORTED;
	if (rc != NVML_SUCCESS && rc != NVML_ERROR_INSUFFICIENT_SIZE) {
		json_object_set_new(telemetry, "processes", nvml_failure(n, rc));
		return;
	}
	if (count > MAX_PROCESSES)
		count = MAX_PROCESSES;
	json_t *list = json_array();
	/* PIDs are the host's when the container has its own PID namespace. */
	for (unsigned i = 0; i < count; i++)
		json_array_append_new(list, json_pack("{s:i, s:I, s:b}", "pid", (int)info[i].pid, "used_memory",
						      (json_int_t)info[i].usedGpuMemory, "self",
						      info[i].pid == (unsigned)getpid()));
	json_object_set_new(telemetry, "processes", list);
}

void nvml_telemetry(const char *pci, json_t *telemetry)
{
	struct nvml_api n;
	json_object_set_new(telemetry, "xid",
			    json_string("not read: Xid errors are in the host's kernel log "
					"(dmesg | grep -i xid), out of reach from most containers"));
	if (nvml_load(&n, telemetry))
		goto out;
	nvmlReturn_t rc = n.Init();
	if (rc != NVML_SUCCESS) {
		char *msg = xasprintf("nvmlInit failed: %s", n.ErrorString(rc));
		json_object_set_new(telemetry, "nvml", json_string(msg));
		free(msg);
		goto out;
	}
	char version[96] = "";
	if (n.SystemGetDriverVersion && n.SystemGetDriverVersion(version, sizeof version) == NVML_SUCCESS)
		json_object_set_new(telemetry, "driver", json_string(version));
	nvmlDevice_t dev;
	if ((rc = n.GetHandleByPciBusId(pci, &dev)) != NVML_SUCCESS) {
		char *msg = xasprintf("no NVML device at %s: %s", pci, n.ErrorString(rc));
		json_object_set_new(telemetry, "nvml", json_string(msg));
		free(msg);
		goto shutdown;
	}
	json_object_set_new(telemetry, "nvml", json_string("ok"));
	unsigned value = 0;
	rc = n.GetTemperature ? n.GetTemperature(dev, NVML_TEMPERATURE_GPU, &value) : NVML_ERROR_NOT_SUPPORTED;
	json_object_set_new(telemetry, "temperature_c",
			    rc == NVML_SUCCESS ? json_integer(value) : nvml_failure(&n, rc));
	rc = n.GetPowerUsage ? n.GetPowerUsage(dev, &value) : NVML_ERROR_NOT_SUPPORTED;
	json_object_set_new(telemetry, "power_w",
			    rc == NVML_SUCCESS ? json_real(value / 1000.0) : nvml_failure(&n, rc));
	rc = n.GetEnforcedPowerLimit ? n.GetEnforcedPowerLimit(dev, &value) : NVML_ERROR_NOT_SUPPORTED;
	json_object_set_new(telemetry, "power_limit_w",
			    rc == NVML_SUCCESS ? json_real(value / 1000.0) : nvml_failure(&n, rc));
	ecc_status(&n, dev, telemetry);
	memory_repair_status(&n, dev, telemetry);
	processes(&n, dev, telemetry);
shutdown:
	if (n.Shutdown)
		n.Shutdown();
out:
	if (n.lib)
		dlclose(n.lib);
}
