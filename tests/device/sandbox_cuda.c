/* Runs the CUDA driver API's probe steps (init, device, context, memory,
 * copy) under the stacked CHECK + PROBE seccomp filters, to prove that the
 * probe child's filter does not break a real NVIDIA driver. Run on a GPU
 * machine: `sandbox_cuda none` (no filter) and `sandbox_cuda sandbox`.
 * Build (static libseccomp, so the GPU machine needs no -dev package):
 *   gcc -O2 -std=c11 -D_GNU_SOURCE -Isrc -o build/sandbox_cuda tests/device/sandbox_cuda.c \
 *       src/lib/sandbox.c src/lib/util.c -Wl,-Bstatic -lseccomp -Wl,-Bdynamic -ldl
 * Not part of make test: it needs an NVIDIA GPU. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "lib/sandbox.h"

typedef int (*fn_i)(unsigned);
typedef int (*fn_get)(int *, int);
typedef int (*fn_ctx)(void **, unsigned, int);
typedef int (*fn_alloc)(unsigned long long *, size_t);
typedef int (*fn_htod)(unsigned long long, const void *, size_t);
typedef int (*fn_dtoh)(void *, unsigned long long, size_t);
typedef int (*fn_name)(char *, int, int);

static void *sym(void *lib, const char *name)
{
	void *p = dlsym(lib, name);
	if (!p)
		printf("missing %s\n", name);
	return p;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "sandbox") == 0) {
		char err[256];
		if (sandbox_apply(SANDBOX_CHECK, err, sizeof(err)) < 0 ||
		    sandbox_apply(SANDBOX_PROBE, err, sizeof(err)) < 0) {
			printf("sandbox: %s\n", err);
			return 1;
		}
		printf("sandbox: check+probe filters loaded\n");
	}
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		printf("dlopen: %s\n", dlerror());
		return 1;
	}
	fn_i init = (fn_i)sym(lib, "cuInit");
	fn_get get = (fn_get)sym(lib, "cuDeviceGet");
	fn_name name = (fn_name)sym(lib, "cuDeviceGetName");
	fn_ctx ctx = (fn_ctx)sym(lib, "cuCtxCreate_v2");
	fn_alloc alloc = (fn_alloc)sym(lib, "cuMemAlloc_v2");
	fn_htod htod = (fn_htod)sym(lib, "cuMemcpyHtoD_v2");
	fn_dtoh dtoh = (fn_dtoh)sym(lib, "cuMemcpyDtoH_v2");
	if (!init || !get || !name || !ctx || !alloc || !htod || !dtoh)
		return 1;
	int dev = 0, rc;
	char devname[128] = "";
	void *c = NULL;
	unsigned long long d = 0;
	static unsigned in[1 << 20], out[1 << 20];
	for (unsigned i = 0; i < (1u << 20); i++)
		in[i] = i * 2654435761u;
	rc = init(0);
	printf("cuInit: %d\n", rc);
	if (rc == 0)
		printf("cuDeviceGet: %d\n", rc = get(&dev, 0));
	if (rc == 0)
		printf("cuDeviceGetName: %d %s\n", rc = name(devname, sizeof(devname), dev), devname);
	if (rc == 0)
		printf("cuCtxCreate: %d\n", rc = ctx(&c, 0, dev));
	if (rc == 0)
		printf("cuMemAlloc: %d\n", rc = alloc(&d, sizeof(in)));
	if (rc == 0)
		printf("cuMemcpyHtoD: %d\n", rc = htod(d, in, sizeof(in)));
	if (rc == 0)
		printf("cuMemcpyDtoH: %d\n", rc = dtoh(out, d, sizeof(out)));
	if (rc == 0)
		printf("round trip: %s\n", memcmp(in, out, sizeof(in)) == 0 ? "equal" : "DIFFERENT");
	return rc == 0 ? 0 : 1;
}
