/* The floor for the CUDA benchmark: the least a program can do to prove a
 * kernel runs: cuInit, retain the primary context, load the smoke PTX,
 * one launch, synchronize. No checks beyond return codes, no verification.
 *   cuda_floor PTX_FILE     exit 0 when it all returned CUDA_SUCCESS */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*fn_t)();

static fn_t get(void *lib, const char *name)
{
	fn_t f;
	void *p = dlsym(lib, name);
	if (!p) {
		fprintf(stderr, "cuda_floor: %s missing\n", name);
		exit(1);
	}
	*(void **)&f = p;
	return f;
}

#define CHECK(call)                                                           \
	do {                                                                  \
		int rc_ = (call);                                             \
		if (rc_) {                                                    \
			fprintf(stderr, "cuda_floor: %s = %d\n", #call, rc_); \
			return 1;                                             \
		}                                                             \
	} while (0)

int main(int argc, char **argv)
{
	static char ptx[1 << 16];
	FILE *f = argc > 1 ? fopen(argv[1], "r") : NULL;
	if (!f) {
		fprintf(stderr, "usage: cuda_floor PTX_FILE\n");
		return 3;
	}
	size_t len = fread(ptx, 1, sizeof ptx - 1, f);
	fclose(f);
	ptx[len] = 0;
	void *lib = dlopen("libcuda.so.1", RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "cuda_floor: %s\n", dlerror());
		return 1;
	}
	int dev;
	void *ctx, *mod, *fn;
	unsigned long long out, in;
	unsigned n = 1u << 20;
	CHECK(get(lib, "cuInit")(0));
	CHECK(get(lib, "cuDeviceGet")(&dev, 0));
	CHECK(get(lib, "cuDevicePrimaryCtxRetain")(&ctx, dev));
	CHECK(get(lib, "cuCtxSetCurrent")(ctx));
	CHECK(get(lib, "cuModuleLoadData")(&mod, ptx));
	CHECK(get(lib, "cuModuleGetFunction")(&fn, mod, "smoke"));
	CHECK(get(lib, "cuMemAlloc_v2")(&out, (size_t)n * 4));
	CHECK(get(lib, "cuMemAlloc_v2")(&in, (size_t)n * 4));
	void *params[] = { &out, &in, &n };
	CHECK(get(lib, "cuLaunchKernel")(fn, n / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
	CHECK(get(lib, "cuCtxSynchronize")());
	return 0;
}
