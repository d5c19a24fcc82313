/* The Level Zero backend, run only in the probe child: dlopen the loader,
 * zeInit, enumerate, and run the embedded SPIR-V smoke kernel on one device.
 * After a failed zeInit nothing else is called (loader 1.8.12 segfaults on
 * the next call when no GPU was found). */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/digest.h"
#include "../lib/dynlib.h"
#include "backend.h"
#include "ze_api.h"
#include "ze_errors.h"
#include "verdicts.h"
#include "../lib/embedded.h"
#include "../lib/util.h"
#include "../lib/zeversion.h"
#include "../result.h"

static void set_error(json_t *res, const char *stage, ze_result_t rc, const char *detail)
{
	const struct ze_error_text *e = ze_error_text(rc);
	char name[48];
	ze_result_name(rc, name, sizeof(name));
	json_object_set_new(res, "stage", json_string(stage));
	json_object_set_new(res, "error", json_string(name));
	char *msg = xasprintf("%s%s%s", e ? e->meaning : "the call failed", detail ? ": " : "", detail ? detail : "");
	json_object_set_new(res, "message", json_text(msg));
	free(msg);
}

static void fail_message(json_t *res, const char *stage, const char *error, const char *message)
{
	json_object_set_new(res, "stage", json_string(stage));
	if (error)
		json_object_set_new(res, "error", json_string(error));
	json_object_set_new(res, "message", json_text(message));
}

/* Stage timing: each stage's milliseconds go into an object. */
struct stage_clock {
	json_t *timings;
	const char *stage;
	double t0;
};

static void clock_enter(struct stage_clock *c, struct probe_channel *ch, const char *stage, const char *device)
{
	double now = monotonic_seconds();
	if (c->stage)
		json_object_set_new(c->timings, c->stage, json_real((now - c->t0) * 1e3));
	c->stage = stage;
	c->t0 = now;
	if (stage)
		probe_stage(ch, stage, device);
}

#define ZE_SYMBOL(name)          { #name, offsetof(struct ze_api, name), false },
#define ZE_OPTIONAL_SYMBOL(name) { #name, offsetof(struct ze_api, name), true },
static const struct dynlib_symbol ze_symbols[] = { ZE_FUNCS(ZE_SYMBOL) ZE_OPTIONAL_FUNCS(ZE_OPTIONAL_SYMBOL) };

/* Under --root, the loader finds its driver by soname on this machine's
 * library path unless told: ZE_ENABLE_ALT_DRIVERS (the loader's own variable)
 * names the root's driver beside the root's loader, present or not, so that
 * a root without a driver fails rather than probing this machine's. A value
 * already set (the test driver) is kept. */
#define ZE_DRIVER_SONAME "libze_intel_gpu.so.1"
static void use_roots_driver(const char *library)
{
	if (!library || getenv("ZE_ENABLE_ALT_DRIVERS"))
		return;
	const char *slash = strrchr(library, '/');
	char *driver = xasprintf("%.*s/" ZE_DRIVER_SONAME, (int)(slash - library), library);
	setenv("ZE_ENABLE_ALT_DRIVERS", driver, 1);
	free(driver);
}

static int load_api(struct ze_api *api, const char *library, json_t *res)
{
	char why[256], real[PATH_MAX];
	use_roots_driver(library);
	api->lib = dynlib_open(library ? library : "libze_loader.so.1", why, sizeof why);
	if (!api->lib) {
		char *msg = xasprintf(
			"cannot load libze_loader.so.1 (%s): install the Level Zero loader (apt-get install libze1)",
			why);
		fail_message(res, "loader", "loader missing", msg);
		free(msg);
		return -1;
	}
	if (dynlib_real_path(api->lib, real, sizeof real))
		json_object_set_new(res, "library", json_text(real));
	const char *missing = dynlib_resolve(api->lib, api, ze_symbols, sizeof ze_symbols / sizeof ze_symbols[0]);
	if (missing) {
		char *msg = xasprintf("libze_loader.so.1 lacks %s: the loader is too old or broken; reinstall libze1",
				      missing);
		fail_message(res, "loader", "symbol missing", msg);
		free(msg);
		return -1;
	}
	return 0;
}

struct driver_search {
	const char *alt; /* ZE_ENABLE_ALT_DRIVERS, or NULL */
	char path[PATH_MAX];
};

static int find_driver(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct driver_search *s = data;
	const char *name = info->dlpi_name;
	if (!name || !*name)
		return 0;
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	bool alt = false;
	if (s->alt) {
		char *copy = xstrdup(s->alt), *save = NULL;
		for (char *d = strtok_r(copy, ",", &save); d && !alt; d = strtok_r(NULL, ",", &save))
			alt = strcmp(d, name) == 0 || strcmp(d, base) == 0;
		free(copy);
	}
	if (alt || str_starts_with(base, "libze_intel_gpu") || str_starts_with(base, "libze_intel_npu") ||
	    str_starts_with(base, "libze_intel_vpu")) {
		if (!realpath(name, s->path))
			snprintf(s->path, sizeof(s->path), "%s", name);
		return 1;
	}
	return 0;
}

/* The real path of the GPU driver the loader picked, for the package check. */
static void report_driver_library(json_t *res)
{
	struct driver_search s = { .alt = getenv("ZE_ENABLE_ALT_DRIVERS") };
	if (dl_iterate_phdr(find_driver, &s))
		json_object_set_new(res, "driver_library", json_text(s.path));
}

static void uuid_text(const uint8_t *id, char *buf)
{
	static const char hex[] = "0123456789abcdef";
	for (int i = 0; i < ZE_MAX_DEVICE_UUID_SIZE; i++) {
		buf[2 * i] = hex[id[i] >> 4];
		buf[2 * i + 1] = hex[id[i] & 15];
	}
	buf[2 * ZE_MAX_DEVICE_UUID_SIZE] = '\0';
}

/* Name, ids, PCI address, EUs, memory of one device into j; the PCI address
 * (or the index) into label. */
static void describe_device(const struct ze_api *api, ze_device_handle_t dev, int index, json_t *j, char *label,
			    size_t label_size)
{
	snprintf(label, label_size, "%d", index);
	json_object_set_new(j, "index", json_integer(index));
	ze_device_properties_t p = { .stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES };
	if (api->zeDeviceGetProperties(dev, &p) == ZE_RESULT_SUCCESS) {
		p.name[sizeof(p.name) - 1] = '\0';
		json_object_set_new(j, "name", json_text(p.name));
		json_object_set_new(j, "vendor_id", json_integer(p.vendorId));
		json_object_set_new(j, "device_id", json_integer(p.deviceId));
		char uuid[2 * ZE_MAX_DEVICE_UUID_SIZE + 1];
		uuid_text(p.uuid.id, uuid);
		json_object_set_new(j, "uuid", json_string(uuid));
		unsigned eus = p.numSlices * p.numSubslicesPerSlice * p.numEUsPerSubslice;
		char compute[32];
		snprintf(compute, sizeof(compute), "%u EUs", eus);
		json_object_set_new(j, "compute", json_string(compute));
	}
	if (api->zeDevicePciGetPropertiesExt) {
		ze_pci_ext_properties_t pci = { .stype = ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES };
		if (api->zeDevicePciGetPropertiesExt(dev, &pci) == ZE_RESULT_SUCCESS) {
			snprintf(label, label_size, "%04x:%02x:%02x.%x", pci.address.domain & 0xffff,
				 pci.address.bus & 0xff, pci.address.device & 0x1f, pci.address.function & 7);
			json_object_set_new(j, "pci", json_string(label));
		}
	}
	uint32_t n = 0;
	if (api->zeDeviceGetMemoryProperties(dev, &n, NULL) == ZE_RESULT_SUCCESS && n > 0 && n < 64) {
		ze_device_memory_properties_t *m = xcalloc(n, sizeof(*m));
		for (uint32_t i = 0; i < n; i++)
			m[i].stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES;
		if (api->zeDeviceGetMemoryProperties(dev, &n, m) == ZE_RESULT_SUCCESS) {
			uint64_t total = 0;
			for (uint32_t i = 0; i < n; i++)
				total += m[i].totalSize;
			json_object_set_new(j, "memory_total", json_integer((json_int_t)total));
		}
		free(m);
	}
	/* Sysman, best effort: needs ZES_ENABLE_SYSMAN=1 (the parent sets it) */
	if (api->zesDeviceEnumMemoryModules && api->zesMemoryGetState) {
		zes_device_handle_t sdev = (zes_device_handle_t)dev;
		uint32_t count = 0;
		if (api->zesDeviceEnumMemoryModules(sdev, &count, NULL) == ZE_RESULT_SUCCESS && count > 0 &&
		    count < 64) {
			zes_mem_handle_t *mods = xcalloc(count, sizeof(*mods));
			uint64_t free_bytes = 0;
			bool ok = api->zesDeviceEnumMemoryModules(sdev, &count, mods) == ZE_RESULT_SUCCESS;
			for (uint32_t i = 0; ok && i < count; i++) {
				zes_mem_state_t st = { .stype = ZES_STRUCTURE_TYPE_MEM_STATE };
				ok = api->zesMemoryGetState(mods[i], &st) == ZE_RESULT_SUCCESS;
				free_bytes += st.free;
			}
			if (ok)
				json_object_set_new(j, "memory_free", json_integer((json_int_t)free_bytes));
			free(mods);
		}
	}
}

static int compute_ordinal(const struct ze_api *api, ze_device_handle_t dev, uint32_t *ordinal)
{
	uint32_t n = 0;
	if (api->zeDeviceGetCommandQueueGroupProperties(dev, &n, NULL) != ZE_RESULT_SUCCESS || n == 0 || n > 64)
		return -1;
	ze_command_queue_group_properties_t *g = xcalloc(n, sizeof(*g));
	for (uint32_t i = 0; i < n; i++)
		g[i].stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
	int rc = -1;
	if (api->zeDeviceGetCommandQueueGroupProperties(dev, &n, g) == ZE_RESULT_SUCCESS)
		for (uint32_t i = 0; i < n && rc < 0; i++)
			if (g[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) {
				*ordinal = i;
				rc = 0;
			}
	free(g);
	return rc;
}

static char *build_log(const struct ze_api *api, ze_module_build_log_handle_t log)
{
	size_t size = 0;
	if (!log || api->zeModuleBuildLogGetString(log, &size, NULL) != ZE_RESULT_SUCCESS || size == 0)
		return NULL;
	if (size > 65536)
		size = 65536;
	char *text = xcalloc(1, size + 1);
	if (api->zeModuleBuildLogGetString(log, &size, text) != ZE_RESULT_SUCCESS) {
		free(text);
		return NULL;
	}
	text[size] = '\0';
	return text;
}

/* Everything the smoke run allocates, freed in one place. */
struct smoke_objects {
	ze_context_handle_t ctx;
	ze_command_queue_handle_t queue;
	ze_command_list_handle_t list;
	ze_fence_handle_t fence;
	void *dev_in, *dev_out, *host;
	ze_module_handle_t module;
	ze_kernel_handle_t kernel;
};

static void smoke_free(const struct ze_api *api, struct smoke_objects *o)
{
	if (o->kernel)
		api->zeKernelDestroy(o->kernel);
	if (o->module)
		api->zeModuleDestroy(o->module);
	if (o->dev_in)
		api->zeMemFree(o->ctx, o->dev_in);
	if (o->dev_out)
		api->zeMemFree(o->ctx, o->dev_out);
	if (o->host)
		api->zeMemFree(o->ctx, o->host);
	if (o->fence)
		api->zeFenceDestroy(o->fence);
	if (o->list)
		api->zeCommandListDestroy(o->list);
	if (o->queue)
		api->zeCommandQueueDestroy(o->queue);
	if (o->ctx)
		api->zeContextDestroy(o->ctx);
}

/* Calls api->FN(args); on failure records the error with FN's name. */
#define SMOKE_CALL(stage, fn, ...)                                \
	do {                                                      \
		ze_result_t rc_ = api->fn(__VA_ARGS__);           \
		if (rc_ != ZE_RESULT_SUCCESS) {                   \
			set_error(dj, stage, rc_, #fn " failed"); \
			goto out;                                 \
		}                                                 \
	} while (0)

/* A cached native binary: a regular file of ours, nobody else may write it. */
static unsigned char *read_private(const char *path, size_t *size)
{
	struct stat st;
	int fd = open_private(path, 64 << 20, &st);
	if (fd < 0)
		return NULL;
	unsigned char *buf = NULL;
	if (st.st_size > 0) {
		buf = xmalloc((size_t)st.st_size);
		if (read(fd, buf, (size_t)st.st_size) != st.st_size) {
			free(buf);
			buf = NULL;
		}
		*size = (size_t)st.st_size;
	}
	close(fd);
	return buf;
}

/* The module from the native binary cached for this device, driver and
 * SPIR-V, else built from the SPIR-V (and its native binary cached). */
static int create_module(const struct ze_api *api, struct smoke_objects *o, ze_device_handle_t dev,
			 const struct embedded_file *spv, const char *cache_file, json_t *dj, json_t *smoke)
{
	size_t native_size = 0;
	unsigned char *native = cache_file ? read_private(cache_file, &native_size) : NULL;
	if (native) {
		ze_module_desc_t ndesc = { .stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
					   .format = ZE_MODULE_FORMAT_NATIVE,
					   .inputSize = native_size,
					   .pInputModule = native,
					   .pBuildFlags = "" };
		ze_result_t nrc = api->zeModuleCreate(o->ctx, dev, &ndesc, &o->module, NULL);
		free(native);
		if (nrc == ZE_RESULT_SUCCESS) {
			json_object_set_new(smoke, "module_cache", json_string("hit"));
			return 0;
		}
		o->module = NULL;
		json_object_set_new(smoke, "module_cache", json_string("stale: rebuilt from SPIR-V"));
		unlink(cache_file);
	}
	ze_module_desc_t mdesc = { .stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
				   .format = ZE_MODULE_FORMAT_IL_SPIRV,
				   .inputSize = spv->size,
				   .pInputModule = spv->data,
				   .pBuildFlags = "" };
	ze_module_build_log_handle_t log = NULL;
	ze_result_t mrc = api->zeModuleCreate(o->ctx, dev, &mdesc, &o->module, &log);
	if (mrc != ZE_RESULT_SUCCESS) {
		char *text = build_log(api, log);
		char *detail = xasprintf("build log: %s", text && *text ? text : "(empty)");
		set_error(dj, "module", mrc, detail);
		if (text)
			json_object_set_new(dj, "build_log", json_text(text));
		free(detail);
		free(text);
		o->module = NULL;
		if (log)
			api->zeModuleBuildLogDestroy(log);
		return -1;
	}
	if (log)
		api->zeModuleBuildLogDestroy(log);
	size_t size = 0;
	if (cache_file && api->zeModuleGetNativeBinary(o->module, &size, NULL) == ZE_RESULT_SUCCESS && size > 0 &&
	    size < (64 << 20)) {
		uint8_t *bin = xmalloc(size);
		if (api->zeModuleGetNativeBinary(o->module, &size, bin) == ZE_RESULT_SUCCESS) {
			int rc = write_file_atomic(cache_file, (const char *)bin, size, 0600);
			if (!json_object_get(smoke, "module_cache"))
				json_object_set_new(smoke, "module_cache",
						    json_string(rc == 0 ? "stored" : "not writable"));
		}
		free(bin);
	}
	return 0;
}

/* <dir>/smoke-<uuid>-<driver>-<sha256 of the SPIR-V, 16 hex>.bin */
static char *module_cache_file(const char *dir, const char *uuid, const char *driver, const struct embedded_file *spv)
{
	char hex[65];
	if (!dir || !uuid || !driver || !digest_sha256_hex(spv->data, spv->size, hex))
		return NULL;
	return xasprintf("%s/smoke-%s-%s-%.16s.bin", dir, uuid, driver, hex);
}

/* Runs the smoke kernel on one device; fills dj (the device's object). */
static int smoke(const struct ze_api *api, struct probe_channel *ch, const struct backend_options *opt,
		 ze_driver_handle_t drv, ze_device_handle_t dev, const char *label, json_t *dj, struct stage_clock *clk,
		 const char *cache_file)
{
	struct smoke_objects o = { 0 };
	int ok = -1;
	size_t n = opt->work_items < (1u << 20) ? (1u << 20) : opt->work_items;
	size_t bytes = n * sizeof(uint32_t);
	const struct embedded_file *spv = embedded_find(embedded_kernels, "smoke.spv");
	json_t *smoke = json_object();
	json_object_set_new(dj, "smoke", smoke);

	clock_enter(clk, ch, "context", label);
	ze_context_desc_t cdesc = { .stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC };
	SMOKE_CALL("context", zeContextCreate, drv, &cdesc, &o.ctx);
	uint32_t ordinal = 0;
	if (compute_ordinal(api, dev, &ordinal) < 0) {
		fail_message(dj, "context", "no compute queue",
			     "the device reports no command queue group that can compute");
		goto out;
	}
	ze_command_queue_desc_t qdesc = { .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
					  .ordinal = ordinal,
					  .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS };
	SMOKE_CALL("context", zeCommandQueueCreate, o.ctx, dev, &qdesc, &o.queue);
	ze_command_list_desc_t ldesc = { .stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC,
					 .commandQueueGroupOrdinal = ordinal };
	SMOKE_CALL("context", zeCommandListCreate, o.ctx, dev, &ldesc, &o.list);
	ze_fence_desc_t fdesc = { .stype = ZE_STRUCTURE_TYPE_FENCE_DESC };
	SMOKE_CALL("context", zeFenceCreate, o.queue, &fdesc, &o.fence);

	clock_enter(clk, ch, "memory", label);
	ze_device_mem_alloc_desc_t ddesc = { .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC };
	ze_host_mem_alloc_desc_t hdesc = { .stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC };
	SMOKE_CALL("memory", zeMemAllocDevice, o.ctx, &ddesc, bytes, 64, dev, &o.dev_in);
	SMOKE_CALL("memory", zeMemAllocDevice, o.ctx, &ddesc, bytes, 64, dev, &o.dev_out);
	SMOKE_CALL("memory", zeMemAllocHost, o.ctx, &hdesc, 2 * bytes, 64, &o.host);
	uint32_t *host = o.host, *result = host + n; /* input, then output */
	for (size_t i = 0; i < n; i++)
		host[i] = smoke_input((unsigned)i);

	clock_enter(clk, ch, "module", label);
	if (create_module(api, &o, dev, spv, cache_file, dj, smoke) < 0)
		goto out;
	ze_kernel_desc_t kdesc = { .stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = "smoke" };
	SMOKE_CALL("module", zeKernelCreate, o.module, &kdesc, &o.kernel);

	clock_enter(clk, ch, "launch", label);
	uint32_t gx = 1, gy = 1, gz = 1;
	SMOKE_CALL("launch", zeKernelSuggestGroupSize, o.kernel, (uint32_t)n, 1, 1, &gx, &gy, &gz);
	if (gx == 0 || n % gx) {
		fail_message(dj, "launch", "bad group size",
			     "the driver suggested a group size that does not divide the work");
		goto out;
	}
	SMOKE_CALL("launch", zeKernelSetGroupSize, o.kernel, gx, 1, 1);
	SMOKE_CALL("launch", zeKernelSetArgumentValue, o.kernel, 0, sizeof(o.dev_in), &o.dev_in);
	SMOKE_CALL("launch", zeKernelSetArgumentValue, o.kernel, 1, sizeof(o.dev_out), &o.dev_out);
	ze_group_count_t groups = { (uint32_t)(n / gx), 1, 1 };
	SMOKE_CALL("launch", zeCommandListAppendMemoryCopy, o.list, o.dev_in, o.host, bytes, NULL, 0, NULL);
	SMOKE_CALL("launch", zeCommandListAppendBarrier, o.list, NULL, 0, NULL);
	SMOKE_CALL("launch", zeCommandListAppendLaunchKernel, o.list, o.kernel, &groups, NULL, 0, NULL);
	SMOKE_CALL("launch", zeCommandListAppendBarrier, o.list, NULL, 0, NULL);
	SMOKE_CALL("launch", zeCommandListAppendMemoryCopy, o.list, result, o.dev_out, bytes, NULL, 0, NULL);
	SMOKE_CALL("launch", zeCommandListClose, o.list);
	memset(result, 0, bytes); /* a copy that never happened must not pass */
	SMOKE_CALL("launch", zeCommandQueueExecuteCommandLists, o.queue, 1, &o.list, o.fence);

	clock_enter(clk, ch, "sync", label);
	double timeout = opt->sync_timeout_s > 0 ? opt->sync_timeout_s : 10;
	ze_result_t src = api->zeFenceHostSynchronize(o.fence, (uint64_t)(timeout * 1e9));
	if (src != ZE_RESULT_SUCCESS) {
		char detail[96], waited[32];
		human_seconds(timeout, waited, sizeof(waited));
		snprintf(detail, sizeof(detail), "waited %s for %zu work items", waited, n);
		set_error(dj, "sync", src, detail);
		goto out;
	}

	clock_enter(clk, ch, "verify", label);
	size_t bad = 0, first_bad = 0;
	for (size_t i = 0; i < n; i++)
		if (result[i] != smoke_expected(smoke_input((unsigned)i), (unsigned)i) && bad++ == 0)
			first_bad = i;
	json_object_set_new(smoke, "elements", json_integer((json_int_t)n));
	json_object_set_new(smoke, "mismatches", json_integer((json_int_t)bad));
	json_object_set_new(smoke, "group_size", json_integer(gx));
	if (bad) {
		json_object_set_new(smoke, "first_bad_index", json_integer((json_int_t)first_bad));
		char *msg = xasprintf(
			"the smoke kernel computed %zu of %zu elements wrong (first at index %zu: got 0x%08x, expected 0x%08x): "
			"the GPU or its driver computes wrong results",
			bad, n, first_bad, result[first_bad],
			smoke_expected(smoke_input((unsigned)first_bad), (unsigned)first_bad));
		fail_message(dj, "verify", "wrong result", msg);
		free(msg);
		goto out;
	}
	ok = 0;
	json_object_set_new(smoke, "ok", json_true()); /* a failed measurement below does not undo it */
	if (opt->perf) {
		/* after a correct smoke only: a wrong GPU's speed means nothing */
		clock_enter(clk, ch, "perf", label);
		struct ze_perf_target pt = { .ctx = o.ctx,
					     .dev = dev,
					     .queue = o.queue,
					     .ordinal = ordinal,
					     .module = o.module,
					     .bytes = opt->perf_bytes,
					     .timeout_s = timeout };
		if (ze_perf_measure(api, &pt, dj) < 0) {
			json_t *perf = json_object_get(dj, "performance");
			fail_message(dj, "perf", json_string_value(json_object_get(perf, "error")),
				     json_string_value(json_object_get(perf, "message")));
			ok = -1;
		}
	}
out:
	if (!json_object_get(smoke, "ok"))
		json_object_set_new(smoke, "ok", json_false());
	smoke_free(api, &o);
	return ok;
}

static int ze_run(struct probe_channel *ch, const struct backend_options *opt, json_t *res)
{
	struct ze_api api = { 0 };
	struct stage_clock clk = { .timings = json_object() };
	json_object_set_new(res, "timings_ms", clk.timings);
	json_t *devs = json_array();
	json_object_set_new(res, "devices", devs);
	int rc = -1;

	clock_enter(&clk, ch, "loader", NULL);
	if (load_api(&api, opt->library, res) < 0)
		goto out;

	clock_enter(&clk, ch, "init", NULL);
	ze_result_t irc = api.zeInit(ZE_INIT_FLAG_GPU_ONLY);
	if (irc != ZE_RESULT_SUCCESS) {
		set_error(res, "init", irc, "zeInit(ZE_INIT_FLAG_GPU_ONLY)");
		goto out; /* nothing else after a failed zeInit */
	}

	clock_enter(&clk, ch, "drivers", NULL);
	report_driver_library(res);
	uint32_t ndrv = 0;
	ze_result_t drc = api.zeDriverGet(&ndrv, NULL);
	if (drc != ZE_RESULT_SUCCESS || ndrv == 0) {
		set_error(res, "drivers", drc != ZE_RESULT_SUCCESS ? drc : ZE_RESULT_ERROR_UNINITIALIZED,
			  "zeDriverGet found no driver");
		goto out;
	}
	if (ndrv > 16)
		ndrv = 16;
	ze_driver_handle_t drivers[16];
	if ((drc = api.zeDriverGet(&ndrv, drivers)) != ZE_RESULT_SUCCESS) {
		set_error(res, "drivers", drc, "zeDriverGet");
		goto out;
	}
	ze_driver_properties_t dp = { .stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES };
	if (api.zeDriverGetProperties(drivers[0], &dp) == ZE_RESULT_SUCCESS) {
		struct ze_driver_version v;
		ze_version_decode(dp.driverVersion, &v);
		json_object_set_new(res, "driver_version", json_string(v.text));
		json_object_set_new(res, "driver_build", json_integer(v.build));
		json_object_set_new(res, "driver_version_raw", json_integer(dp.driverVersion));
	}

	clock_enter(&clk, ch, "devices", NULL);
	int index = 0;
	ze_device_handle_t target = NULL;
	ze_driver_handle_t target_drv = NULL;
	json_t *target_json = NULL;
	char target_label[64] = "";
	for (uint32_t d = 0; d < ndrv; d++) {
		uint32_t n = 0;
		ze_result_t grc = api.zeDeviceGet(drivers[d], &n, NULL);
		if (grc != ZE_RESULT_SUCCESS) {
			set_error(res, "devices", grc, "zeDeviceGet");
			goto out;
		}
		if (n > 64)
			n = 64;
		ze_device_handle_t list[64];
		if (n && (grc = api.zeDeviceGet(drivers[d], &n, list)) != ZE_RESULT_SUCCESS) {
			set_error(res, "devices", grc, "zeDeviceGet");
			goto out;
		}
		for (uint32_t i = 0; i < n; i++, index++) {
			json_t *j = json_object();
			char label[64];
			describe_device(&api, list[i], index, j, label, sizeof(label));
			json_array_append_new(devs, j);
			if (index == opt->device) {
				target = list[i];
				target_drv = drivers[d];
				target_json = j;
				snprintf(target_label, sizeof(target_label), "%s", label);
			}
		}
	}
	if (index == 0) {
		fail_message(
			res, "devices", "no devices",
			"the Level Zero driver loaded but reports no GPU: check that /dev/dri/renderD* and /dev/dri/by-path are visible and that ZE_AFFINITY_MASK does not hide every device");
		goto out;
	}
	if (opt->device >= 0 && !target) {
		char *msg = xasprintf("device %d does not exist (%d found)", opt->device, index);
		fail_message(res, "devices", "no such device", msg);
		free(msg);
		goto out;
	}
	if (target && opt->smoke) {
		/* the enumeration survives a hang or crash in the smoke below */
		probe_enumerated(ch, res);
		json_t *dt = json_object();
		struct stage_clock dclk = { .timings = dt };
		json_object_set_new(target_json, "timings_ms", dt);
		clock_enter(&clk, NULL, NULL, NULL);
		char *cache_file =
			module_cache_file(opt->cache_dir, json_string_value(json_object_get(target_json, "uuid")),
					  json_string_value(json_object_get(res, "driver_version")),
					  embedded_find(embedded_kernels, "smoke.spv"));
		int src = smoke(&api, ch, opt, target_drv, target, target_label, target_json, &dclk, cache_file);
		free(cache_file);
		clock_enter(&dclk, NULL, NULL, NULL);
		if (src < 0) {
			json_t *stage = json_object_get(target_json, "stage");
			json_object_set(res, "stage", stage);
			json_object_set(res, "error", json_object_get(target_json, "error"));
			json_object_set(res, "message", json_object_get(target_json, "message"));
			goto out;
		}
	}
	if (target && (opt->telemetry || opt->processes)) {
		clock_enter(&clk, ch, "telemetry", target_label);
		if (opt->telemetry)
			ze_sysman_telemetry(&api, target, target_json);
		if (opt->processes)
			ze_sysman_processes(&api, target, target_json);
	}
	rc = 0;
out:
	clock_enter(&clk, NULL, NULL, NULL);
	/* the loader stays loaded: unloading a driver mid-way has crashed some
	 * versions, and the child exits right after */
	return rc;
}

const struct backend ze_backend = {
	.name = "level-zero",
	.library = "libze_loader.so.1",
	.provided_by = "libze1 (Debian/Ubuntu), level-zero (Intel repositories)",
	.vendor = &intel_vendor,
	.missing_remedy =
		"install the Level Zero loader and the Intel GPU driver: apt-get install libze1 libze-intel-gpu1 "
		"(or intel-level-zero-gpu)",
	.run = ze_run,
	.no_package = "(none of the Level Zero packages)",
	.package_build = ze_package_build,
	.hang_remedy =
		"the GPU or its driver hangs: read the kernel log (dmesg | grep -iE 'gpu hang|guc|xe|i915') and reset the GPU or reboot the host",
	.remedies = ze_remedies,
	.judge_health = ze_judge_health,
};
