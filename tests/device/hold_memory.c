/* Makes one GPU busy for tests/device/multi_gpu.sh: another process that
 * holds most of its memory, as a leftover test job does. Allocates PERCENT
 * of the free memory of CUDA device 0 (pick the GPU with
 * CUDA_VISIBLE_DEVICES), prints "holding N bytes" and sleeps until killed.
 * Plain cuMemAlloc (never managed memory: asking a GPU for more managed
 * memory than it has can hang it).
 *   CUDA_VISIBLE_DEVICES=1 hold_memory 90 & */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef int (*init_fn)(unsigned);
typedef int (*get_fn)(int *, int);
typedef int (*retain_fn)(void **, int);
typedef int (*set_fn)(void *);
typedef int (*info_fn)(size_t *, size_t *);
typedef int (*alloc_fn)(unsigned long long *, size_t);

int main(int argc, char **argv)
{
	int percent = argc > 1 ? atoi(argv[1]) : 90;
	if (percent < 1 || percent > 95) {
		fprintf(stderr, "usage: hold_memory PERCENT (1-95)\n");
		return 3;
	}
	void *lib = dlopen("libcuda.so.1", RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "hold_memory: %s\n", dlerror());
		return 1;
	}
	init_fn init = (init_fn)dlsym(lib, "cuInit");
	get_fn get = (get_fn)dlsym(lib, "cuDeviceGet");
	retain_fn retain = (retain_fn)dlsym(lib, "cuDevicePrimaryCtxRetain");
	set_fn set = (set_fn)dlsym(lib, "cuCtxSetCurrent");
	info_fn info = (info_fn)dlsym(lib, "cuMemGetInfo_v2");
	alloc_fn alloc = (alloc_fn)dlsym(lib, "cuMemAlloc_v2");
	if (!init || !get || !retain || !set || !info || !alloc) {
		fprintf(stderr, "hold_memory: a driver entry point is missing\n");
		return 1;
	}
	int dev, rc;
	void *ctx;
	size_t free_b, total;
	if ((rc = init(0)) || (rc = get(&dev, 0)) || (rc = retain(&ctx, dev)) || (rc = set(ctx)) ||
	    (rc = info(&free_b, &total))) {
		fprintf(stderr, "hold_memory: CUDA error %d\n", rc);
		return 1;
	}
	/* in 1 GiB pieces: one huge allocation may fail where pieces fit */
	size_t want = free_b / 100 * (size_t)percent, held = 0, piece = (size_t)1 << 30;
	while (held < want) {
		unsigned long long p;
		size_t n = want - held < piece ? want - held : piece;
		if ((rc = alloc(&p, n))) {
			fprintf(stderr, "hold_memory: cuMemAlloc of %zu bytes: CUDA error %d\n", n, rc);
			return 1;
		}
		held += n;
	}
	info(&free_b, &total);
	printf("holding %zu bytes (pid %d); %zu of %zu bytes free\n", held, (int)getpid(), free_b, total);
	fflush(stdout);
	for (;;)
		pause();
}
