/* The floor for every GPU at once (issue 22's all-GPU timing): one process,
 * one cuInit, then per device: retain the primary context, load the smoke
 * PTX, one launch, synchronize, either one device after another or one
 * thread per device. Measured on a 4-GPU H100 host, to learn whether one
 * probe process for all GPUs beats one process per GPU (the driver
 * serializes cuInit and context creation across processes).
 *   cuda_floor_all PTX_FILE seq|threads   exit 0 when every call succeeded;
 *   prints the count and the milliseconds of cuInit and of the device work */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int (*fn_t)();

static void *lib;
static char ptx[1 << 16];

static fn_t get(const char *name)
{
	fn_t f;
	void *p = dlsym(lib, name);
	if (!p) {
		fprintf(stderr, "cuda_floor_all: %s missing\n", name);
		exit(1);
	}
	*(void **)&f = p;
	return f;
}

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

#define CHECK(call)                                                               \
	do {                                                                      \
		int rc_ = (call);                                                 \
		if (rc_) {                                                        \
			fprintf(stderr, "cuda_floor_all: %s = %d\n", #call, rc_); \
			return (void *)1;                                         \
		}                                                                 \
	} while (0)

static void *one_device(void *arg)
{
	int index = (int)(long)arg, dev;
	void *ctx, *mod, *fn;
	unsigned long long out, in;
	unsigned n = 1u << 20;
	CHECK(get("cuDeviceGet")(&dev, index));
	CHECK(get("cuDevicePrimaryCtxRetain")(&ctx, dev));
	CHECK(get("cuCtxSetCurrent")(ctx));
	CHECK(get("cuModuleLoadData")(&mod, ptx));
	CHECK(get("cuModuleGetFunction")(&fn, mod, "smoke"));
	CHECK(get("cuMemAlloc_v2")(&out, (size_t)n * 4));
	CHECK(get("cuMemAlloc_v2")(&in, (size_t)n * 4));
	void *params[] = { &out, &in, &n };
	CHECK(get("cuLaunchKernel")(fn, n / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
	CHECK(get("cuCtxSynchronize")());
	return NULL;
}

int main(int argc, char **argv)
{
	FILE *f = argc > 2 ? fopen(argv[1], "r") : NULL;
	if (!f) {
		fprintf(stderr, "usage: cuda_floor_all PTX_FILE seq|threads\n");
		return 3;
	}
	size_t len = fread(ptx, 1, sizeof ptx - 1, f);
	fclose(f);
	ptx[len] = 0;
	int threads = strcmp(argv[2], "threads") == 0;
	double t0 = now_ms();
	lib = dlopen("libcuda.so.1", RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "cuda_floor_all: %s\n", dlerror());
		return 1;
	}
	int count = 0;
	if (get("cuInit")(0) || get("cuDeviceGetCount")(&count) || count < 1 || count > 64) {
		fprintf(stderr, "cuda_floor_all: cuInit or cuDeviceGetCount failed\n");
		return 1;
	}
	double t1 = now_ms();
	pthread_t tids[64];
	int failed = 0;
	for (int i = 0; i < count; i++) {
		if (threads) {
			if (pthread_create(&tids[i], NULL, one_device, (void *)(long)i))
				return 1;
		} else if (one_device((void *)(long)i)) {
			failed++;
		}
	}
	for (int i = 0; threads && i < count; i++) {
		void *ret;
		pthread_join(tids[i], &ret);
		failed += ret != NULL;
	}
	printf("%d devices, cuInit %.1f ms, devices %.1f ms (%s)\n", count, t1 - t0, now_ms() - t1, argv[2]);
	return failed ? 1 : 0;
}
