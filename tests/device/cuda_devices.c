/* The oracle for CUDA_VISIBLE_DEVICES on a GPU host: what the driver itself
 * shows this process (cuInit, cuDeviceGetCount, then per device its name,
 * PCI address and UUID), so gpugate's devices and runtime checks can be
 * compared with it where PyTorch is not installed. Loads libcuda.so.1 with
 * dlopen like gpugate's probe (no CUDA toolkit needed to build it).
 *   cuda_devices            one JSON object on stdout, exit 0
 *   (cuInit failing is reported as {"count": 0, "error": N}, exit 0: an
 *    empty CUDA_VISIBLE_DEVICES answers CUDA_ERROR_NO_DEVICE = 100) */
#include <dlfcn.h>
#include <stdio.h>

typedef int (*init_fn)(unsigned);
typedef int (*count_fn)(int *);
typedef int (*get_fn)(int *, int);
typedef int (*name_fn)(char *, int, int);
typedef int (*uuid_fn)(unsigned char *, int);

int main(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "cuda_devices: %s\n", dlerror());
		return 1;
	}
	init_fn init = (init_fn)dlsym(lib, "cuInit");
	count_fn count = (count_fn)dlsym(lib, "cuDeviceGetCount");
	get_fn get = (get_fn)dlsym(lib, "cuDeviceGet");
	name_fn name = (name_fn)dlsym(lib, "cuDeviceGetName");
	name_fn pci = (name_fn)dlsym(lib, "cuDeviceGetPCIBusId");
	uuid_fn uuid = (uuid_fn)dlsym(lib, "cuDeviceGetUuid_v2");
	if (!init || !count || !get || !name || !pci || !uuid) {
		fprintf(stderr, "cuda_devices: a driver entry point is missing\n");
		return 1;
	}
	int rc = init(0), n = 0;
	if (rc) {
		printf("{\"count\": 0, \"error\": %d}\n", rc);
		return 0;
	}
	if ((rc = count(&n)) != 0) {
		printf("{\"count\": 0, \"error\": %d}\n", rc);
		return 0;
	}
	printf("{\"count\": %d, \"devices\": [", n);
	for (int i = 0; i < n; i++) {
		int dev;
		char nm[256] = "", bus[64] = "";
		unsigned char u[16] = { 0 };
		if (get(&dev, i) || name(nm, sizeof nm, dev) || pci(bus, sizeof bus, dev) || uuid(u, dev)) {
			fprintf(stderr, "cuda_devices: device %d could not be read\n", i);
			return 1;
		}
		/* the UUID as nvidia-smi -L prints it: GPU-8-4-4-4-12 hex digits */
		printf("%s{\"index\": %d, \"name\": \"%s\", \"pci\": \"%s\", \"uuid\": \"GPU-", i ? ", " : "", i, nm,
		       bus);
		for (int k = 0; k < 16; k++)
			printf("%s%02x", k == 4 || k == 6 || k == 8 || k == 10 ? "-" : "", u[k]);
		printf("\"}");
	}
	printf("]}\n");
	return 0;
}
