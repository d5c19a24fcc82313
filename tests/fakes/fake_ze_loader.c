/* A stand-in for a newer Level Zero loader's debug trace, for the bundle
 * test: Debian 12's loader 1.8.12 has no ZE_ENABLE_LOADER_DEBUG_TRACE, later
 * loaders print "ZE_LOADER_DEBUG_TRACE:" lines on stderr when it is 1. Built
 * as libze_loader.so.1 and found through LD_LIBRARY_PATH; it exports no API,
 * so the probe then fails at its loader stage, as it should. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((constructor)) static void trace_on_load(void)
{
	const char *v = getenv("ZE_ENABLE_LOADER_DEBUG_TRACE");
	if (v && strcmp(v, "1") == 0) {
		fputs("ZE_LOADER_DEBUG_TRACE:Load Library of libze_intel_gpu.so.1 failed with "
		      "libze_intel_gpu.so.1: cannot open shared object file\n",
		      stderr);
		fputs("ZE_LOADER_DEBUG_TRACE:check_drivers(fake) returned ZE_RESULT_ERROR_UNINITIALIZED\n", stderr);
	}
}
