/* A Level Zero test driver over host memory. The real Debian loader loads it
 * through ZE_ENABLE_ALT_DRIVERS=/path/libze_fake.so; it implements what the
 * gpugate probe calls, checks the SPIR-V it is given, runs the smoke kernel
 * with a C twin, and injects the fault named in GPUGATE_FAKE_FAULT:
 *   hang_init hang_sync crash_init crash_launch oom wrong_result zero_devices
 *   permission slow_init:MS two_devices_one_fails bad_module
 *   slow_copy          the copy kernel's timestamps say 280 GB/s instead of 400
 *   slow_launch        every submission takes 2 ms more (launch latency)
 *   ras_uncorrectable  RAS reports 3 uncorrectable (and 5 correctable) errors
 *   foreign_process    another process (pid 4242, 2 GiB) uses every device
 *   no_telemetry       Sysman answers UNSUPPORTED_FEATURE for everything but
 *                      free memory
 *   no_timestamps      zeEventQueryKernelTimestamp answers UNSUPPORTED_FEATURE
 * GPUGATE_FAKE_DEVICES=N sets the device count (default 1).
 * Kernel timestamps are deterministic: the copy kernel moves its bytes (read
 * plus written) at the fake bandwidth, in 10 ns ticks of a 32-bit counter
 * that wraps in the middle of every copy, with garbage above the 32 valid
 * bits: a reader must mask and handle the wrap as the specification says. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <level_zero/ze_ddi.h>
#include <level_zero/zes_ddi.h>
#include <level_zero/zet_ddi.h>

#include "backend/backend.h"

/* Sysman answers only with ZES_ENABLE_SYSMAN=1, as loader 1.8 needs; free
 * memory is 12 GiB of 16 unless GPUGATE_FAKE_FREE_MB says otherwise. */
#define EXPORT      __attribute__((visibility("default")))
#define MAX_DEVICES 8
#define MAX_CMDS    16

struct fake_device {
	int index;
	bool fails; /* two_devices_one_fails: this one loses the device */
};

#define MAX_ENTRIES        4
#define FAKE_SUBMIT_US     100   /* host time of one submission (see fake_queue_execute) */
#define FAKE_BANDWIDTH_GBS 400.0 /* bytes read + written per ns */
#define FAKE_TIMER_NS      10
#define FAKE_TS_BITS       32
#define FAKE_WATTS         150

/* the "native binary" too: GetNativeBinary hands out this struct's bytes */
struct fake_module {
	char names[MAX_ENTRIES][32]; /* entry points of the SPIR-V */
};

struct fake_kernel {
	char name[32];
	void *args[2];
	uint32_t group;
};

struct fake_event {
	bool timestamps; /* from a pool with ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP */
	bool signaled;
	uint64_t start, end; /* kernel timestamps, in ticks */
};

enum cmd_kind { CMD_COPY, CMD_LAUNCH, CMD_BARRIER };
struct cmd {
	enum cmd_kind kind;
	void *dst;
	const void *src;
	size_t size;
	void *launch_args[2];
	size_t items;
	bool copy_kernel;
	struct fake_event *signal;
};

struct fake_list {
	struct fake_device *dev;
	struct cmd cmds[MAX_CMDS];
	size_t n;
};

static struct fake_device devices[MAX_DEVICES];
static uint32_t device_count = 1;
static int driver_token;
static uint64_t device_clock; /* ticks */

/* GPUGATE_FAKE_FAULT, or else the first line of the file GPUGATE_FAKE_FAULT_FILE
 * names (read once per process): a test breaks a GPU under a long-running
 * gpugate serve by writing that file. */
static const char *fault_name(void)
{
	static char from_file[64];
	static bool read_once;
	const char *f = getenv("GPUGATE_FAKE_FAULT");
	const char *path = getenv("GPUGATE_FAKE_FAULT_FILE");
	if (f || !path)
		return f;
	if (!read_once) {
		read_once = true;
		FILE *fp = fopen(path, "r");
		if (fp) {
			if (fgets(from_file, sizeof(from_file), fp))
				from_file[strcspn(from_file, "\n")] = '\0';
			fclose(fp);
		}
	}
	return from_file;
}

static bool fault(const char *name)
{
	const char *f = fault_name();
	if (!f)
		return false;
	size_t n = strlen(name);
	return strncmp(f, name, n) == 0 && (f[n] == '\0' || f[n] == ':');
}

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0)
		;
}

static void hang(void)
{
	for (;;)
		pause();
}

static ze_result_t ZE_APICALL fake_init(ze_init_flags_t flags)
{
	(void)flags;
	if (fault("hang_init"))
		hang();
	if (fault("crash_init"))
		raise(SIGSEGV);
	if (fault("slow_init")) {
		const char *f = fault_name();
		sleep_ms(strtol(f + strlen("slow_init:"), NULL, 10));
	}
	if (fault("permission"))
		return ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS;
	const char *n = getenv("GPUGATE_FAKE_DEVICES");
	device_count = n ? (uint32_t)strtoul(n, NULL, 10) : 1;
	if (fault("two_devices_one_fails"))
		device_count = 2;
	if (fault("zero_devices"))
		device_count = 0;
	if (device_count > MAX_DEVICES)
		device_count = MAX_DEVICES;
	for (uint32_t i = 0; i < device_count; i++) {
		devices[i].index = (int)i;
		devices[i].fails = fault("two_devices_one_fails") && i == 1;
	}
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_driver_get(uint32_t *count, ze_driver_handle_t *drivers)
{
	if (!count)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (drivers && *count >= 1)
		drivers[0] = (ze_driver_handle_t)&driver_token;
	*count = 1;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_driver_api_version(ze_driver_handle_t d, ze_api_version_t *v)
{
	(void)d;
	*v = ZE_API_VERSION_1_3;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_driver_properties(ze_driver_handle_t d, ze_driver_properties_t *p)
{
	(void)d;
	memset(p->uuid.id, 0xd5, sizeof(p->uuid.id));
	p->driverVersion = 0x01030000u + 29735u; /* reads as 1.3.29735 */
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_driver_ipc(ze_driver_handle_t d, ze_driver_ipc_properties_t *p)
{
	(void)d;
	p->flags = ZE_IPC_PROPERTY_FLAG_MEMORY;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_driver_ext(ze_driver_handle_t d, uint32_t *count,
					      ze_driver_extension_properties_t *p)
{
	(void)d;
	(void)p;
	*count = 0;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_device_get(ze_driver_handle_t d, uint32_t *count, ze_device_handle_t *out)
{
	(void)d;
	if (out)
		for (uint32_t i = 0; i < *count && i < device_count; i++)
			out[i] = (ze_device_handle_t)&devices[i];
	if (!out || *count > device_count)
		*count = device_count;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_device_sub(ze_device_handle_t d, uint32_t *count, ze_device_handle_t *out)
{
	(void)d;
	(void)out;
	*count = 0;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_device_properties(ze_device_handle_t h, ze_device_properties_t *p)
{
	struct fake_device *d = (struct fake_device *)h;
	p->type = ZE_DEVICE_TYPE_GPU;
	p->vendorId = 0x8086;
	p->deviceId = 0x56a0;
	p->coreClockRate = 2400;
	p->maxMemAllocSize = 4ull << 30;
	p->maxHardwareContexts = 64;
	p->maxCommandQueuePriority = 0;
	p->numThreadsPerEU = 8;
	p->physicalEUSimdWidth = 8;
	p->numEUsPerSubslice = 16;
	p->numSubslicesPerSlice = 32;
	p->numSlices = 1;
	p->timerResolution = FAKE_TIMER_NS;
	p->timestampValidBits = 64;
	p->kernelTimestampValidBits = FAKE_TS_BITS;
	memset(p->uuid.id, 0, sizeof(p->uuid.id));
	p->uuid.id[0] = 0x86;
	p->uuid.id[15] = (uint8_t)d->index;
	snprintf(p->name, sizeof(p->name), "Fake Arc A770 #%d", d->index);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_device_compute(ze_device_handle_t h, ze_device_compute_properties_t *p)
{
	(void)h;
	p->maxTotalGroupSize = 1024;
	p->maxGroupSizeX = p->maxGroupSizeY = p->maxGroupSizeZ = 1024;
	p->maxGroupCountX = p->maxGroupCountY = p->maxGroupCountZ = 1u << 30;
	p->maxSharedLocalMemory = 65536;
	p->numSubGroupSizes = 1;
	p->subGroupSizes[0] = 16;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_device_memory(ze_device_handle_t h, uint32_t *count,
						 ze_device_memory_properties_t *p)
{
	(void)h;
	if (p && *count >= 1) {
		p[0].maxClockRate = 2000;
		p[0].maxBusWidth = 256;
		p[0].totalSize = 16ull << 30;
		snprintf(p[0].name, sizeof(p[0].name), "HBM");
	}
	*count = 1;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_device_queue_groups(ze_device_handle_t h, uint32_t *count,
						       ze_command_queue_group_properties_t *p)
{
	(void)h;
	if (p && *count >= 2) {
		/* a copy-only group first, so the prober must pick the ordinal */
		p[0].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
		p[0].numQueues = 1;
		p[1].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE | ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
		p[1].numQueues = 1;
		p[1].maxMemoryFillPatternSize = 4;
	}
	*count = 2;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_device_pci(ze_device_handle_t h, ze_pci_ext_properties_t *p)
{
	struct fake_device *d = (struct fake_device *)h;
	p->address.domain = 0;
	p->address.bus = 3 + (uint32_t)d->index;
	p->address.device = 0;
	p->address.function = 0;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_device_timestamps(ze_device_handle_t h, uint64_t *host, uint64_t *dev)
{
	(void)h;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	*host = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	*dev = *host / FAKE_TIMER_NS;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_context_create(ze_driver_handle_t d, const ze_context_desc_t *desc,
						  ze_context_handle_t *out)
{
	(void)d;
	(void)desc;
	*out = (ze_context_handle_t)malloc(16);
	return *out ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
}

static ze_result_t ZE_APICALL fake_context_destroy(ze_context_handle_t c)
{
	free(c);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_queue_create(ze_context_handle_t c, ze_device_handle_t d,
						const ze_command_queue_desc_t *desc, ze_command_queue_handle_t *out)
{
	(void)c;
	if (desc->ordinal != 1)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* group 0 cannot compute */
	*out = (ze_command_queue_handle_t)d;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_queue_destroy(ze_command_queue_handle_t q)
{
	(void)q;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_list_create(ze_context_handle_t c, ze_device_handle_t d,
					       const ze_command_list_desc_t *desc, ze_command_list_handle_t *out)
{
	(void)c;
	(void)desc;
	struct fake_list *l = calloc(1, sizeof(*l));
	if (!l)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	l->dev = (struct fake_device *)d;
	*out = (ze_command_list_handle_t)l;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_list_destroy(ze_command_list_handle_t l)
{
	free(l);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_list_close(ze_command_list_handle_t l)
{
	(void)l;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t add_cmd(ze_command_list_handle_t h, struct cmd c)
{
	struct fake_list *l = (struct fake_list *)h;
	if (l->n == MAX_CMDS)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	l->cmds[l->n++] = c;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_list_copy(ze_command_list_handle_t l, void *dst, const void *src, size_t size,
					     ze_event_handle_t ev, uint32_t nwait, ze_event_handle_t *wait)
{
	(void)ev;
	(void)nwait;
	(void)wait;
	return add_cmd(l, (struct cmd){ .kind = CMD_COPY, .dst = dst, .src = src, .size = size });
}

static ze_result_t ZE_APICALL fake_list_barrier(ze_command_list_handle_t l, ze_event_handle_t ev, uint32_t nwait,
						ze_event_handle_t *wait)
{
	(void)ev;
	(void)nwait;
	(void)wait;
	return add_cmd(l, (struct cmd){ .kind = CMD_BARRIER });
}

static ze_result_t ZE_APICALL fake_list_launch(ze_command_list_handle_t l, ze_kernel_handle_t k,
					       const ze_group_count_t *groups, ze_event_handle_t ev, uint32_t nwait,
					       ze_event_handle_t *wait)
{
	(void)nwait;
	(void)wait;
	struct fake_kernel *kern = (struct fake_kernel *)k;
	if (fault("crash_launch"))
		raise(SIGSEGV);
	if (kern->group == 0)
		return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
	struct cmd c = { .kind = CMD_LAUNCH,
			 .items = (size_t)groups->groupCountX * kern->group,
			 .copy_kernel = strcmp(kern->name, "copy") == 0,
			 .signal = (struct fake_event *)ev };
	c.launch_args[0] = kern->args[0];
	c.launch_args[1] = kern->args[1];
	if (!c.launch_args[0] || !c.launch_args[1])
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	return add_cmd(l, c);
}

/* The C twin of src/kernels/smoke.cl. */
static void smoke_twin(const uint32_t *in, uint32_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = smoke_expected(in[i], (unsigned)i);
	if (fault("wrong_result") && n > 12345)
		out[12345] ^= 1;
}

/* A kernel's run on the fake device clock: the copy kernel at the fake
 * bandwidth, anything else one microsecond. */
static void stamp(struct fake_event *ev, const struct cmd *cmd)
{
	double ns = 1000;
	if (cmd->copy_kernel)
		ns = 2.0 * (double)(cmd->items * 16) /
		     (fault("slow_copy") ? FAKE_BANDWIDTH_GBS * 0.7 : FAKE_BANDWIDTH_GBS);
	uint64_t mask = (UINT64_C(1) << FAKE_TS_BITS) - 1, ticks = (uint64_t)(ns / FAKE_TIMER_NS + 0.5);
	if (cmd->copy_kernel) /* every timed copy straddles the counter's wrap */
		device_clock = (device_clock | mask) - ticks / 2;
	/* the bits above the valid ones are garbage, as the spec allows */
	ev->start = (device_clock & mask) | (UINT64_C(0xdead) << 48);
	device_clock += ticks;
	ev->end = (device_clock & mask) | (UINT64_C(0xbeef) << 48);
	device_clock += 100;
	ev->signaled = true;
}

static ze_result_t ZE_APICALL fake_queue_execute(ze_command_queue_handle_t q, uint32_t n,
						 ze_command_list_handle_t *lists, ze_fence_handle_t fence)
{
	(void)fence;
	struct fake_device *dev = (struct fake_device *)q;
	if (dev->fails)
		return ZE_RESULT_ERROR_DEVICE_LOST;
	/* Every submission takes at least FAKE_SUBMIT_US of host time, busy, as a
	 * GPU's round trip does: gpugate times launch latency on the host, and a
	 * bare function call (~0.1 us) is all jitter, so a baseline recorded from
	 * one run would not hold for the next. */
	uint64_t start = now_us();
	if (fault("slow_launch"))
		sleep_ms(2);
	for (uint32_t i = 0; i < n; i++) {
		struct fake_list *l = (struct fake_list *)lists[i];
		for (size_t c = 0; c < l->n; c++) {
			struct cmd *cmd = &l->cmds[c];
			if (cmd->kind == CMD_COPY)
				memcpy(cmd->dst, cmd->src, cmd->size);
			else if (cmd->kind == CMD_LAUNCH && cmd->copy_kernel)
				memcpy(cmd->launch_args[1], cmd->launch_args[0], cmd->items * 16);
			else if (cmd->kind == CMD_LAUNCH)
				smoke_twin(cmd->launch_args[0], cmd->launch_args[1], cmd->items);
			if (cmd->signal)
				stamp(cmd->signal, cmd);
		}
	}
	while (now_us() - start < FAKE_SUBMIT_US)
		;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_queue_sync(ze_command_queue_handle_t q, uint64_t timeout)
{
	(void)q;
	(void)timeout;
	if (fault("hang_sync"))
		hang(); /* a hung kernel on xe: the wait never returns */
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_fence_create(ze_command_queue_handle_t q, const ze_fence_desc_t *desc,
						ze_fence_handle_t *out)
{
	(void)q;
	(void)desc;
	*out = (ze_fence_handle_t)malloc(8);
	return *out ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
}

static ze_result_t ZE_APICALL fake_fence_destroy(ze_fence_handle_t f)
{
	free(f);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_fence_sync(ze_fence_handle_t f, uint64_t timeout)
{
	(void)f;
	return fake_queue_sync(NULL, timeout);
}

static ze_result_t ZE_APICALL fake_fence_reset(ze_fence_handle_t f)
{
	(void)f;
	return ZE_RESULT_SUCCESS;
}

struct fake_pool {
	uint32_t count;
	ze_event_pool_flags_t flags;
};

static ze_result_t ZE_APICALL fake_pool_create(ze_context_handle_t c, const ze_event_pool_desc_t *desc, uint32_t ndev,
					       ze_device_handle_t *devs, ze_event_pool_handle_t *out)
{
	(void)c;
	(void)ndev;
	(void)devs;
	if (!desc || desc->count == 0)
		return ZE_RESULT_ERROR_INVALID_SIZE;
	struct fake_pool *p = calloc(1, sizeof(*p));
	if (!p)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	p->count = desc->count;
	p->flags = desc->flags;
	*out = (ze_event_pool_handle_t)p;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_pool_destroy(ze_event_pool_handle_t p)
{
	free(p);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_event_create(ze_event_pool_handle_t h, const ze_event_desc_t *desc,
						ze_event_handle_t *out)
{
	struct fake_pool *p = (struct fake_pool *)h;
	if (desc->index >= p->count)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	struct fake_event *e = calloc(1, sizeof(*e));
	if (!e)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	e->timestamps = p->flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP;
	*out = (ze_event_handle_t)e;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_event_destroy(ze_event_handle_t e)
{
	free(e);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_event_reset(ze_event_handle_t h)
{
	struct fake_event *e = (struct fake_event *)h;
	e->signaled = false;
	e->start = e->end = 0;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_event_status(ze_event_handle_t h)
{
	return ((struct fake_event *)h)->signaled ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

static ze_result_t ZE_APICALL fake_event_sync(ze_event_handle_t h, uint64_t timeout)
{
	(void)timeout;
	return fake_event_status(h);
}

static ze_result_t ZE_APICALL fake_event_timestamp(ze_event_handle_t h, ze_kernel_timestamp_result_t *ts)
{
	struct fake_event *e = (struct fake_event *)h;
	if (fault("no_timestamps"))
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	if (!e->timestamps)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* not a kernel timestamp event */
	if (!e->signaled)
		return ZE_RESULT_NOT_READY;
	ts->global.kernelStart = ts->context.kernelStart = e->start;
	ts->global.kernelEnd = ts->context.kernelEnd = e->end;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_alloc_device(ze_context_handle_t c, const ze_device_mem_alloc_desc_t *desc,
						size_t size, size_t align, ze_device_handle_t d, void **out)
{
	(void)c;
	(void)desc;
	(void)d;
	if (fault("oom"))
		return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
	*out = aligned_alloc(align ? align : 64, (size + 63) / 64 * 64);
	return *out ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
}

static ze_result_t ZE_APICALL fake_alloc_host(ze_context_handle_t c, const ze_host_mem_alloc_desc_t *desc, size_t size,
					      size_t align, void **out)
{
	(void)c;
	(void)desc;
	*out = aligned_alloc(align ? align : 64, (size + 63) / 64 * 64);
	return *out ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
}

static ze_result_t ZE_APICALL fake_free(ze_context_handle_t c, void *p)
{
	(void)c;
	free(p);
	return ZE_RESULT_SUCCESS;
}

/* Reads every OpEntryPoint's name (a SPIR-V string literal: words, little
 * endian, NUL-terminated) into m; false unless a SPIR-V 1.x module with one. */
static bool spirv_entries(const uint32_t *w, size_t words, struct fake_module *m)
{
	if (words < 5 || w[0] != 0x07230203u || (w[1] >> 16) != 1 || (w[1] & 0xff00ffffu) != 0)
		return false;
	size_t found = 0;
	for (size_t i = 5; i < words;) {
		uint32_t count = w[i] >> 16, op = w[i] & 0xffff;
		if (count == 0 || i + count > words)
			return false;
		if (op == 15 && count > 3) { /* OpEntryPoint model id name... */
			const char *s = (const char *)&w[i + 3];
			size_t max = (count - 3) * 4;
			size_t len = strnlen(s, max);
			if (len == max || len >= sizeof(m->names[0]) || found == MAX_ENTRIES)
				return false;
			memcpy(m->names[found++], s, len + 1);
		}
		i += count;
	}
	return found > 0;
}

struct fake_log {
	char text[256];
};

static ze_result_t ZE_APICALL fake_module_create(ze_context_handle_t c, ze_device_handle_t d,
						 const ze_module_desc_t *desc, ze_module_handle_t *out,
						 ze_module_build_log_handle_t *log)
{
	(void)c;
	(void)d;
	struct fake_log *l = NULL;
	if (log) {
		l = calloc(1, sizeof(*l));
		if (!l)
			return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		*log = (ze_module_build_log_handle_t)l;
	}
	struct fake_module *m = calloc(1, sizeof(*m));
	if (!m)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	bool ok;
	if (desc->format == ZE_MODULE_FORMAT_NATIVE) {
		/* our "native binary" is the entry point's name, as GetNativeBinary gave it */
		ok = desc->inputSize == sizeof(*m) && ((const char *)desc->pInputModule)[0] != '\0' &&
		     !fault("bad_module");
		if (!ok) {
			free(m);
			return ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
		}
		memcpy(m, desc->pInputModule, sizeof(*m));
		for (size_t i = 0; i < MAX_ENTRIES; i++)
			m->names[i][sizeof(m->names[i]) - 1] = '\0';
		*out = (ze_module_handle_t)m;
		return ZE_RESULT_SUCCESS;
	}
	ok = desc->format == ZE_MODULE_FORMAT_IL_SPIRV && desc->inputSize % 4 == 0 &&
	     spirv_entries((const uint32_t *)desc->pInputModule, desc->inputSize / 4, m);
	if (!ok || fault("bad_module")) {
		if (l)
			snprintf(l->text, sizeof(l->text), "error: %s",
				 ok ? "fake compiler rejects the module (bad_module)"
				    : "not a SPIR-V 1.x module with an entry point");
		free(m);
		return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
	}
	*out = (ze_module_handle_t)m;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_module_destroy(ze_module_handle_t m)
{
	free(m);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_module_native(ze_module_handle_t m, size_t *size, uint8_t *out)
{
	struct fake_module *mod = (struct fake_module *)m;
	if (out && *size >= sizeof(*mod))
		memcpy(out, mod, sizeof(*mod));
	*size = sizeof(*mod);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_log_string(ze_module_build_log_handle_t h, size_t *size, char *out)
{
	struct fake_log *l = (struct fake_log *)h;
	size_t n = strlen(l->text) + 1;
	if (out && *size >= n)
		memcpy(out, l->text, n);
	*size = n;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_log_destroy(ze_module_build_log_handle_t h)
{
	free(h);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_kernel_create(ze_module_handle_t m, const ze_kernel_desc_t *desc,
						 ze_kernel_handle_t *out)
{
	struct fake_module *mod = (struct fake_module *)m;
	size_t i = 0;
	while (i < MAX_ENTRIES && (!desc->pKernelName || strcmp(desc->pKernelName, mod->names[i]) != 0))
		i++;
	if (i == MAX_ENTRIES || !mod->names[i][0])
		return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
	struct fake_kernel *k = calloc(1, sizeof(*k));
	if (!k)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	snprintf(k->name, sizeof(k->name), "%s", mod->names[i]);
	*out = (ze_kernel_handle_t)k;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_kernel_destroy(ze_kernel_handle_t k)
{
	free(k);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_kernel_arg(ze_kernel_handle_t h, uint32_t index, size_t size, const void *value)
{
	struct fake_kernel *k = (struct fake_kernel *)h;
	if (index > 1 || size != sizeof(void *) || !value)
		return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
	memcpy(&k->args[index], value, sizeof(void *));
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_kernel_group_size(ze_kernel_handle_t h, uint32_t x, uint32_t y, uint32_t z)
{
	struct fake_kernel *k = (struct fake_kernel *)h;
	if (x == 0 || x > 1024 || y != 1 || z != 1)
		return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
	k->group = x;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_kernel_suggest(ze_kernel_handle_t h, uint32_t gx, uint32_t gy, uint32_t gz,
						  uint32_t *x, uint32_t *y, uint32_t *z)
{
	(void)h;
	(void)gy;
	(void)gz;
	*x = gx % 256 == 0 ? 256 : 1;
	*y = *z = 1;
	return ZE_RESULT_SUCCESS;
}

static bool sysman_enabled(void)
{
	const char *v = getenv("ZES_ENABLE_SYSMAN");
	return v && strcmp(v, "1") == 0;
}

static int sysman_token;

static ze_result_t ZE_APICALL fake_zes_enum_memory(zes_device_handle_t d, uint32_t *count, zes_mem_handle_t *out)
{
	if (!sysman_enabled())
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	if (out && *count >= 1)
		out[0] = (zes_mem_handle_t)d;
	*count = 1;
	return ZE_RESULT_SUCCESS;
}

static bool telemetry_off(void)
{
	return !sysman_enabled() || fault("no_telemetry");
}

static ze_result_t ZE_APICALL fake_zes_memory_state(zes_mem_handle_t h, zes_mem_state_t *st)
{
	(void)h;
	const char *mb = getenv("GPUGATE_FAKE_FREE_MB");
	/* without the counters real drivers say UNKNOWN */
	st->health = fault("no_telemetry") ? ZES_MEM_HEALTH_UNKNOWN : ZES_MEM_HEALTH_OK;
	st->size = 16ull << 30;
	st->free = mb ? strtoull(mb, NULL, 10) << 20 : 12ull << 30;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_zes_enum_temperature(zes_device_handle_t d, uint32_t *count, zes_temp_handle_t *out)
{
	(void)d;
	if (telemetry_off())
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	if (out && *count >= 1)
		out[0] = (zes_temp_handle_t)&sysman_token;
	*count = 1;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_zes_temperature(zes_temp_handle_t h, double *celsius)
{
	(void)h;
	*celsius = 45.5;
	return ZE_RESULT_SUCCESS;
}

/* One handle per device for every other Sysman domain: the device itself. */
#define FAKE_ENUM(NAME, HANDLE)                                                                 \
	static ze_result_t ZE_APICALL NAME(zes_device_handle_t d, uint32_t *count, HANDLE *out) \
	{                                                                                       \
		if (telemetry_off())                                                            \
			return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;                             \
		if (out && *count >= 1)                                                         \
			out[0] = (HANDLE)d;                                                     \
		*count = 1;                                                                     \
		return ZE_RESULT_SUCCESS;                                                       \
	}
FAKE_ENUM(fake_zes_enum_power, zes_pwr_handle_t)
FAKE_ENUM(fake_zes_enum_frequency, zes_freq_handle_t)

static ze_result_t ZE_APICALL fake_zes_energy(zes_pwr_handle_t h, zes_power_energy_counter_t *e)
{
	(void)h;
	e->timestamp = now_us();
	e->energy = e->timestamp * FAKE_WATTS; /* µJ */
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_zes_power_properties(zes_pwr_handle_t h, zes_power_properties_t *p)
{
	(void)h;
	p->onSubdevice = 0;
	p->defaultLimit = 225000;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_zes_freq_properties(zes_freq_handle_t h, zes_freq_properties_t *p)
{
	(void)h;
	p->type = ZES_FREQ_DOMAIN_GPU;
	p->min = 300;
	p->max = 2400;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_zes_freq_state(zes_freq_handle_t h, zes_freq_state_t *s)
{
	(void)h;
	s->currentVoltage = -1;
	s->request = 2400;
	s->tdp = 2400;
	s->efficient = 300;
	s->actual = 2100;
	s->throttleReasons = ZES_FREQ_THROTTLE_REASON_FLAG_AVE_PWR_CAP;
	return ZE_RESULT_SUCCESS;
}

/* Two RAS error sets per device: correctable, then uncorrectable. */
static int ras_sets[MAX_DEVICES][2];

static ze_result_t ZE_APICALL fake_zes_enum_ras(zes_device_handle_t d, uint32_t *count, zes_ras_handle_t *out)
{
	if (telemetry_off())
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	int i = ((struct fake_device *)d)->index;
	for (uint32_t k = 0; out && k < *count && k < 2; k++)
		out[k] = (zes_ras_handle_t)&ras_sets[i][k];
	*count = 2;
	return ZE_RESULT_SUCCESS;
}

static bool ras_uncorrectable_set(zes_ras_handle_t h)
{
	return ((const int *)h - &ras_sets[0][0]) % 2 == 1;
}

static ze_result_t ZE_APICALL fake_zes_ras_properties(zes_ras_handle_t h, zes_ras_properties_t *p)
{
	p->type = ras_uncorrectable_set(h) ? ZES_RAS_ERROR_TYPE_UNCORRECTABLE : ZES_RAS_ERROR_TYPE_CORRECTABLE;
	p->onSubdevice = 0;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_zes_ras_state(zes_ras_handle_t h, ze_bool_t clear, zes_ras_state_t *s)
{
	(void)clear;
	memset(s->category, 0, sizeof(s->category));
	if (fault("ras_uncorrectable"))
		s->category[ZES_RAS_ERROR_CAT_CACHE_ERRORS] = ras_uncorrectable_set(h) ? 3 : 5;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL fake_zes_processes(zes_device_handle_t d, uint32_t *count, zes_process_state_t *out)
{
	(void)d;
	if (telemetry_off())
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	/* the caller itself, as the real driver lists it while it holds a context */
	zes_process_state_t all[2] = { { .processId = (uint32_t)getpid(), .memSize = 8u << 20 },
				       { .processId = 4242, .memSize = 2ull << 30 } };
	uint32_t n = fault("foreign_process") ? 2 : 1;
	for (uint32_t i = 0; out && i < *count && i < n; i++) {
		out[i].processId = all[i].processId;
		out[i].memSize = all[i].memSize;
		out[i].sharedSize = 0;
		out[i].engines = ZES_ENGINE_TYPE_FLAG_COMPUTE;
	}
	*count = n;
	return ZE_RESULT_SUCCESS;
}

#define TABLE_GETTER(NAME, TYPE, FILL)                                        \
	EXPORT ze_result_t ZE_APICALL NAME(ze_api_version_t version, TYPE *t) \
	{                                                                     \
		if (!t)                                                       \
			return ZE_RESULT_ERROR_INVALID_NULL_POINTER;          \
		if (ZE_MAJOR_VERSION(version) != 1)                           \
			return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;           \
		memset(t, 0, sizeof(*t));                                     \
		FILL;                                                         \
		return ZE_RESULT_SUCCESS;                                     \
	}

TABLE_GETTER(zeGetGlobalProcAddrTable, ze_global_dditable_t, t->pfnInit = fake_init)
TABLE_GETTER(zeGetDriverProcAddrTable, ze_driver_dditable_t,
	     (t->pfnGet = fake_driver_get, t->pfnGetApiVersion = fake_driver_api_version,
	      t->pfnGetProperties = fake_driver_properties, t->pfnGetIpcProperties = fake_driver_ipc,
	      t->pfnGetExtensionProperties = fake_driver_ext))
TABLE_GETTER(zeGetDeviceProcAddrTable, ze_device_dditable_t,
	     (t->pfnGet = fake_device_get, t->pfnGetSubDevices = fake_device_sub,
	      t->pfnGetProperties = fake_device_properties, t->pfnGetComputeProperties = fake_device_compute,
	      t->pfnGetMemoryProperties = fake_device_memory,
	      t->pfnGetCommandQueueGroupProperties = fake_device_queue_groups,
	      t->pfnPciGetPropertiesExt = fake_device_pci, t->pfnGetGlobalTimestamps = fake_device_timestamps))
TABLE_GETTER(zeGetContextProcAddrTable, ze_context_dditable_t,
	     (t->pfnCreate = fake_context_create, t->pfnDestroy = fake_context_destroy))
TABLE_GETTER(zeGetCommandQueueProcAddrTable, ze_command_queue_dditable_t,
	     (t->pfnCreate = fake_queue_create, t->pfnDestroy = fake_queue_destroy,
	      t->pfnExecuteCommandLists = fake_queue_execute, t->pfnSynchronize = fake_queue_sync))
TABLE_GETTER(zeGetCommandListProcAddrTable, ze_command_list_dditable_t,
	     (t->pfnCreate = fake_list_create, t->pfnDestroy = fake_list_destroy, t->pfnClose = fake_list_close,
	      t->pfnAppendMemoryCopy = fake_list_copy, t->pfnAppendBarrier = fake_list_barrier,
	      t->pfnAppendLaunchKernel = fake_list_launch))
TABLE_GETTER(zeGetFenceProcAddrTable, ze_fence_dditable_t,
	     (t->pfnCreate = fake_fence_create, t->pfnDestroy = fake_fence_destroy,
	      t->pfnHostSynchronize = fake_fence_sync, t->pfnReset = fake_fence_reset))
TABLE_GETTER(zeGetMemProcAddrTable, ze_mem_dditable_t,
	     (t->pfnAllocDevice = fake_alloc_device, t->pfnAllocHost = fake_alloc_host, t->pfnFree = fake_free))
TABLE_GETTER(zeGetModuleProcAddrTable, ze_module_dditable_t,
	     (t->pfnCreate = fake_module_create, t->pfnDestroy = fake_module_destroy,
	      t->pfnGetNativeBinary = fake_module_native))
TABLE_GETTER(zeGetModuleBuildLogProcAddrTable, ze_module_build_log_dditable_t,
	     (t->pfnDestroy = fake_log_destroy, t->pfnGetString = fake_log_string))
TABLE_GETTER(zeGetKernelProcAddrTable, ze_kernel_dditable_t,
	     (t->pfnCreate = fake_kernel_create, t->pfnDestroy = fake_kernel_destroy,
	      t->pfnSetArgumentValue = fake_kernel_arg, t->pfnSetGroupSize = fake_kernel_group_size,
	      t->pfnSuggestGroupSize = fake_kernel_suggest))
TABLE_GETTER(zeGetEventPoolProcAddrTable, ze_event_pool_dditable_t,
	     (t->pfnCreate = fake_pool_create, t->pfnDestroy = fake_pool_destroy))
TABLE_GETTER(zeGetEventProcAddrTable, ze_event_dditable_t,
	     (t->pfnCreate = fake_event_create, t->pfnDestroy = fake_event_destroy, t->pfnHostReset = fake_event_reset,
	      t->pfnQueryStatus = fake_event_status, t->pfnHostSynchronize = fake_event_sync,
	      t->pfnQueryKernelTimestamp = fake_event_timestamp))
/* tables the prober never uses: present and empty, as the loader asks for them */
TABLE_GETTER(zeGetImageProcAddrTable, ze_image_dditable_t, (void)0)
TABLE_GETTER(zeGetSamplerProcAddrTable, ze_sampler_dditable_t, (void)0)
TABLE_GETTER(zeGetPhysicalMemProcAddrTable, ze_physical_mem_dditable_t, (void)0)
TABLE_GETTER(zeGetVirtualMemProcAddrTable, ze_virtual_mem_dditable_t, (void)0)
TABLE_GETTER(zesGetDriverProcAddrTable, zes_driver_dditable_t, (void)0)
TABLE_GETTER(zesGetDeviceProcAddrTable, zes_device_dditable_t,
	     (t->pfnEnumMemoryModules = fake_zes_enum_memory, t->pfnEnumTemperatureSensors = fake_zes_enum_temperature,
	      t->pfnEnumPowerDomains = fake_zes_enum_power, t->pfnEnumFrequencyDomains = fake_zes_enum_frequency,
	      t->pfnEnumRasErrorSets = fake_zes_enum_ras, t->pfnProcessesGetState = fake_zes_processes))
TABLE_GETTER(zesGetSchedulerProcAddrTable, zes_scheduler_dditable_t, (void)0)
TABLE_GETTER(zesGetPerformanceFactorProcAddrTable, zes_performance_factor_dditable_t, (void)0)
TABLE_GETTER(zesGetPowerProcAddrTable, zes_power_dditable_t,
	     (t->pfnGetEnergyCounter = fake_zes_energy, t->pfnGetProperties = fake_zes_power_properties))
TABLE_GETTER(zesGetFrequencyProcAddrTable, zes_frequency_dditable_t,
	     (t->pfnGetProperties = fake_zes_freq_properties, t->pfnGetState = fake_zes_freq_state))
TABLE_GETTER(zesGetEngineProcAddrTable, zes_engine_dditable_t, (void)0)
TABLE_GETTER(zesGetStandbyProcAddrTable, zes_standby_dditable_t, (void)0)
TABLE_GETTER(zesGetFirmwareProcAddrTable, zes_firmware_dditable_t, (void)0)
TABLE_GETTER(zesGetMemoryProcAddrTable, zes_memory_dditable_t, t->pfnGetState = fake_zes_memory_state)
TABLE_GETTER(zesGetFabricPortProcAddrTable, zes_fabric_port_dditable_t, (void)0)
TABLE_GETTER(zesGetTemperatureProcAddrTable, zes_temperature_dditable_t, t->pfnGetState = fake_zes_temperature)
TABLE_GETTER(zesGetPsuProcAddrTable, zes_psu_dditable_t, (void)0)
TABLE_GETTER(zesGetFanProcAddrTable, zes_fan_dditable_t, (void)0)
TABLE_GETTER(zesGetLedProcAddrTable, zes_led_dditable_t, (void)0)
TABLE_GETTER(zesGetRasProcAddrTable, zes_ras_dditable_t,
	     (t->pfnGetProperties = fake_zes_ras_properties, t->pfnGetState = fake_zes_ras_state))
TABLE_GETTER(zesGetDiagnosticsProcAddrTable, zes_diagnostics_dditable_t, (void)0)
TABLE_GETTER(zetGetDeviceProcAddrTable, zet_device_dditable_t, (void)0)
TABLE_GETTER(zetGetContextProcAddrTable, zet_context_dditable_t, (void)0)
TABLE_GETTER(zetGetCommandListProcAddrTable, zet_command_list_dditable_t, (void)0)
TABLE_GETTER(zetGetModuleProcAddrTable, zet_module_dditable_t, (void)0)
TABLE_GETTER(zetGetKernelProcAddrTable, zet_kernel_dditable_t, (void)0)
TABLE_GETTER(zetGetMetricGroupProcAddrTable, zet_metric_group_dditable_t, (void)0)
TABLE_GETTER(zetGetMetricProcAddrTable, zet_metric_dditable_t, (void)0)
TABLE_GETTER(zetGetMetricStreamerProcAddrTable, zet_metric_streamer_dditable_t, (void)0)
TABLE_GETTER(zetGetMetricQueryPoolProcAddrTable, zet_metric_query_pool_dditable_t, (void)0)
TABLE_GETTER(zetGetMetricQueryProcAddrTable, zet_metric_query_dditable_t, (void)0)
TABLE_GETTER(zetGetDebugProcAddrTable, zet_debug_dditable_t, (void)0)
/* the loader 1.8.12 also asks for these *Exp* tables (the tracer one is required) */
TABLE_GETTER(zeGetDeviceExpProcAddrTable, ze_device_exp_dditable_t, (void)0)
TABLE_GETTER(zeGetImageExpProcAddrTable, ze_image_exp_dditable_t, (void)0)
TABLE_GETTER(zeGetEventExpProcAddrTable, ze_event_exp_dditable_t, (void)0)
TABLE_GETTER(zeGetKernelExpProcAddrTable, ze_kernel_exp_dditable_t, (void)0)
TABLE_GETTER(zeGetFabricVertexExpProcAddrTable, ze_fabric_vertex_exp_dditable_t, (void)0)
TABLE_GETTER(zeGetFabricEdgeExpProcAddrTable, ze_fabric_edge_exp_dditable_t, (void)0)
TABLE_GETTER(zetGetMetricGroupExpProcAddrTable, zet_metric_group_exp_dditable_t, (void)0)
TABLE_GETTER(zetGetTracerExpProcAddrTable, zet_tracer_exp_dditable_t, (void)0)
