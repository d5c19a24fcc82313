/* A stand-in libcuda.so.1 for tests on machines without a GPU. It implements
 * the driver-API entry points the CUDA backend loads, runs the smoke
 * "kernel" on the host, and injects faults chosen by environment:
 *
 *   FAKE_CUDA_FAULT   hang_init | crash_init | no_device | zero_devices |
 *                     launch_error | wrong_result | hang_sync | old_ptx |
 *                     oom | slow_copy (the copy kernel runs at 1400 GB/s
 *                     instead of 2000)
 *   FAKE_CUDA_DEVICES number of GPUs (default 1)
 *   FAKE_CUDA_BUSY    physical GPU index whose memory another process holds:
 *                     cuMemGetInfo there reports 8 GiB free instead of 79
 *
 * CUDA_VISIBLE_DEVICES is applied as the real driver does, by gpugate's own
 * parser (src/vendor/cuda_visible.c, compiled in), which the driver's answers
 * in tests/vectors/cuda-visible-devices.tsv decide: an empty value hides
 * every GPU, the list stops at the first entry that is not a GPU, one GPU
 * named twice hides all. GPU d's UUID is GPU-abababab-abab-abab-abab-ababababab<d>.
 * Device pointers are host pointers. Events read a virtual device clock that
 * only kernels advance (the copy kernel by its bytes read plus written at
 * the fake bandwidth, any other by 5 µs), so timings are deterministic.
 * Launch latency is timed on the host: each launch takes FAKE_LAUNCH_US of
 * host time, busy, as the Level Zero fake's submissions do (fake_ze.c); a
 * bare call took 0.12-0.14 µs, all jitter, so a baseline frozen from one run
 * (20% of it: 0.03 µs) did not hold for the next. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/backend.h" /* smoke_expected: the formula the host checks */
#include "vendor/cuda_visible.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef struct {
	unsigned char bytes[16];
} CUuuid;

enum { MAX_DEVICES = 16 };
#define FAKE_LAUNCH_US 100 /* host time of one kernel launch */

static int visible[MAX_DEVICES];
static int visible_count = -1;
static double device_clock_ms;
static const char *loaded_image;
static int current_device = -1; /* physical index of the current context */

static int fault(const char *name)
{
	const char *f = getenv("FAKE_CUDA_FAULT");
	return f && strcmp(f, name) == 0;
}

static double host_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

CUresult cuInit(unsigned flags)
{
	(void)flags;
	if (fault("hang_init"))
		for (;;)
			pause();
	if (fault("crash_init"))
		raise(SIGSEGV);
	if (fault("no_device"))
		return 100;
	const char *n = getenv("FAKE_CUDA_DEVICES");
	int physical = n ? atoi(n) : 1;
	if (fault("zero_devices"))
		physical = 0;
	const char *list = getenv("CUDA_VISIBLE_DEVICES");
	visible_count = 0;
	if (!list) {
		for (int i = 0; i < physical && i < MAX_DEVICES; i++)
			visible[visible_count++] = i;
	} else {
		static char uuid_text[MAX_DEVICES][48];
		const char *uuids[MAX_DEVICES];
		for (int i = 0; i < physical && i < MAX_DEVICES; i++) {
			snprintf(uuid_text[i], sizeof(uuid_text[i]), "GPU-abababab-abab-abab-abab-ababababab%02x", i);
			uuids[i] = uuid_text[i];
		}
		struct cuda_visible p;
		cuda_visible_parse(list, uuids, physical < MAX_DEVICES ? (size_t)physical : MAX_DEVICES, &p);
		for (size_t k = 0; k < p.count && visible_count < MAX_DEVICES; k++)
			visible[visible_count++] = p.gpu[k] >= 0 ? p.gpu[k] : 0;
	}
	if (physical > 0 && visible_count == 0)
		return 100; /* CUDA_ERROR_NO_DEVICE, as the driver answers */
	return 0;
}

CUresult cuDriverGetVersion(int *v)
{
	*v = 12040;
	return 0;
}
CUresult cuDeviceGetCount(int *c)
{
	if (visible_count < 0)
		return 3;
	*c = visible_count;
	return 0;
}
CUresult cuDeviceGet(int *d, int i)
{
	if (i < 0 || i >= visible_count)
		return 101;
	*d = visible[i];
	return 0;
}
CUresult cuDeviceGetName(char *name, int len, int d)
{
	snprintf(name, (size_t)len, "Fake GPU %d", d);
	return 0;
}
CUresult cuDeviceGetUuid_v2(CUuuid *u, int d)
{
	memset(u, 0xab, sizeof *u);
	u->bytes[15] = (unsigned char)d;
	return 0;
}
CUresult cuDeviceGetPCIBusId(char *pci, int len, int d)
{
	snprintf(pci, (size_t)len, "0000:%02X:00.0", 0x1a + d);
	return 0;
}
CUresult cuDeviceGetAttribute(int *v, int attr, int d)
{
	(void)d;
	*v = attr == 75 ? 9 : 0;
	return 0;
}
CUresult cuDeviceTotalMem_v2(size_t *b, int d)
{
	(void)d;
	*b = (size_t)80 << 30;
	return 0;
}
CUresult cuDevicePrimaryCtxRetain(void **ctx, int d)
{
	*ctx = (void *)(uintptr_t)(0x1000 + d);
	return 0;
}
CUresult cuDevicePrimaryCtxRelease_v2(int d)
{
	(void)d;
	return 0;
}
CUresult cuCtxSynchronize(void)
{
	return 0;
} /* for tests/bench/cuda_floor*.c */
CUresult cuCtxSetCurrent(void *ctx)
{
	current_device = ctx ? (int)((uintptr_t)ctx - 0x1000) : -1;
	return 0;
}
CUresult cuMemGetInfo_v2(size_t *f, size_t *t)
{
	const char *busy = getenv("FAKE_CUDA_BUSY");
	*t = (size_t)80 << 30;
	*f = busy && current_device == atoi(busy) ? (size_t)8 << 30 : *t - ((size_t)1 << 30);
	return 0;
}

CUresult cuModuleLoadData(void **module, const void *image)
{
	if (fault("old_ptx"))
		return 222;
	if (!strstr(image, ".version") || !strstr(image, ".entry smoke("))
		return 218; /* CUDA_ERROR_INVALID_PTX */
	loaded_image = image;
	*module = (void *)0x2000;
	return 0;
}
CUresult cuModuleUnload(void *m)
{
	(void)m;
	return 0;
}
CUresult cuModuleGetFunction(void **fn, void *m, const char *name)
{
	(void)m;
	char entry[64];
	snprintf(entry, sizeof entry, ".entry %s(", name);
	if ((strcmp(name, "smoke") != 0 && strcmp(name, "copy") != 0) || !loaded_image || !strstr(loaded_image, entry))
		return 500; /* CUDA_ERROR_NOT_FOUND */
	*fn = (void *)(uintptr_t)(strcmp(name, "copy") == 0 ? 0x3001 : 0x3000);
	return 0;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	if (fault("oom"))
		return 2;
	void *m = malloc(n);
	if (!m)
		return 2;
	*p = (CUdeviceptr)(uintptr_t)m;
	return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p)
{
	free((void *)(uintptr_t)p);
	return 0;
}
CUresult cuMemsetD32_v2(CUdeviceptr p, unsigned v, size_t n)
{
	unsigned *u = (unsigned *)(uintptr_t)p;
	for (size_t i = 0; i < n; i++)
		u[i] = v;
	return 0;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *h, size_t n)
{
	memcpy((void *)(uintptr_t)d, h, n);
	return 0;
}
CUresult cuMemcpyDtoH_v2(void *h, CUdeviceptr d, size_t n)
{
	memcpy(h, (void *)(uintptr_t)d, n);
	return 0;
}

CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
			unsigned shared, void *stream, void **params, void **extra)
{
	(void)gy;
	(void)gz;
	(void)by;
	(void)bz;
	(void)shared;
	(void)stream;
	(void)extra;
	if (fault("launch_error"))
		return 719;
	for (double start = host_us(); host_us() - start < FAKE_LAUNCH_US;)
		;
	if ((uintptr_t)fn == 0x3001) { /* copy(uint4 *out, const uint4 *in, unsigned n) */
		char *out = (char *)(uintptr_t) * (CUdeviceptr *)params[0];
		const char *in = (const char *)(uintptr_t) * (CUdeviceptr *)params[1];
		unsigned long long n = *(unsigned *)params[2], threads = (unsigned long long)gx * bx;
		size_t bytes = (size_t)(n < threads ? n : threads) * 16;
		memcpy(out, in, bytes);
		device_clock_ms += 2.0 * (double)bytes / ((fault("slow_copy") ? 1400 : 2000) * 1e6);
		return 0;
	}
	device_clock_ms += 0.005;
	unsigned *out = (unsigned *)(uintptr_t) * (CUdeviceptr *)params[0];
	const unsigned *in = (const unsigned *)(uintptr_t) * (CUdeviceptr *)params[1];
	unsigned n = *(unsigned *)params[2];
	unsigned long long threads = (unsigned long long)gx * bx;
	for (unsigned long long i = 0; i < threads && i < n; i++)
		out[i] = smoke_expected(in[i], (unsigned)i);
	if (fault("wrong_result") && n > 12345)
		out[12345] ^= 1;
	return 0;
}

struct fake_event {
	unsigned flags;
	int recorded;
	double ms;
};

CUresult cuEventCreate(void **ev, unsigned flags)
{
	struct fake_event *e = calloc(1, sizeof *e);
	if (!e)
		return 2;
	e->flags = flags;
	*ev = e;
	return 0;
}
CUresult cuEventRecord(void *ev, void *stream)
{
	(void)stream;
	struct fake_event *e = ev;
	e->recorded = 1;
	e->ms = device_clock_ms;
	return 0;
}
CUresult cuEventQuery(void *ev)
{
	(void)ev;
	return fault("hang_sync") ? 600 : 0;
}
CUresult cuEventDestroy_v2(void *ev)
{
	free(ev);
	return 0;
}
CUresult cuEventElapsedTime(float *ms, void *start, void *stop)
{
	struct fake_event *a = start, *b = stop;
	if ((a->flags | b->flags) & 2) /* CU_EVENT_DISABLE_TIMING */
		return 1;
	if (!a->recorded || !b->recorded)
		return 600;
	*ms = (float)(b->ms - a->ms);
	return 0;
}

static const struct {
	CUresult code;
	const char *name, *text;
} errors[] = {
	{ 0, "CUDA_SUCCESS", "no error" },
	{ 2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
	{ 3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error" },
	{ 100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected" },
	{ 101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
	{ 218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed" },
	{ 222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the provided PTX was compiled with an unsupported toolchain." },
	{ 500, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
	{ 600, "CUDA_ERROR_NOT_READY", "device not ready" },
	{ 719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure" },
};

static int error_index(CUresult rc)
{
	for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
		if (errors[i].code == rc)
			return (int)i;
	return -1;
}
CUresult cuGetErrorName(CUresult rc, const char **s)
{
	int i = error_index(rc);
	if (i < 0)
		return 1;
	*s = errors[i].name;
	return 0;
}
CUresult cuGetErrorString(CUresult rc, const char **s)
{
	int i = error_index(rc);
	if (i < 0)
		return 1;
	*s = errors[i].text;
	return 0;
}
