/* The Level Zero error table (ze_errors.h). Names as in the Level Zero
 * headers (level_zero/ze_api.h, ze_result_t); meanings say what the error
 * means for a GPU container and what to do. */
#include "ze_errors.h"

#include <stdio.h>

#include "../lib/util.h"

static const struct ze_error_text ze_errors[] = {
	{ ZE_RESULT_NOT_READY, "ZE_RESULT_NOT_READY",
	  "the work did not finish within the probe's synchronization timeout" },
	{ ZE_RESULT_ERROR_DEVICE_LOST, "ZE_RESULT_ERROR_DEVICE_LOST",
	  "the GPU was lost (hang, reset or wedge): read the kernel log (dmesg) for GPU HANG or GuC errors" },
	{ ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY, "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY", "the host is out of memory" },
	{ ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
	  "the GPU is out of memory: other processes hold it (check with xpu-smi or intel_gpu_top) or the container's limit is too small" },
	{ ZE_RESULT_ERROR_MODULE_BUILD_FAILURE, "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE",
	  "the driver could not compile the SPIR-V module: the graphics compiler (libigc2, or intel-igc-core-2 from Intel's release .debs) is missing or does not match the driver" },
	{ ZE_RESULT_ERROR_MODULE_LINK_FAILURE, "ZE_RESULT_ERROR_MODULE_LINK_FAILURE",
	  "the driver could not link the module" },
	{ ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS, "ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS",
	  "the render node could not be opened: add the node's group to the container (--group-add render or its numeric GID)" },
	{ ZE_RESULT_ERROR_NOT_AVAILABLE, "ZE_RESULT_ERROR_NOT_AVAILABLE", "the resource is in use by another process" },
	{ ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE, "ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE",
	  "a dependency (often metrics, ZET_ENABLE_METRICS) is unavailable: unset ZET_ENABLE_METRICS" },
	{ ZE_RESULT_ERROR_UNINITIALIZED, "ZE_RESULT_ERROR_UNINITIALIZED",
	  "no Level Zero driver found a GPU: no render node (/dev/dri/renderD*) or /dev/dri/by-path is visible, /sys is hidden, or the GPU's kernel driver is not i915/xe (see the devices checks)" },
	{ ZE_RESULT_ERROR_UNSUPPORTED_VERSION, "ZE_RESULT_ERROR_UNSUPPORTED_VERSION",
	  "the driver does not support this API version" },
	{ ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE",
	  "the driver does not support this feature" },
	{ ZE_RESULT_ERROR_INVALID_ARGUMENT, "ZE_RESULT_ERROR_INVALID_ARGUMENT", "the driver rejected an argument" },
	{ ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "ZE_RESULT_ERROR_INVALID_NULL_HANDLE", "the driver rejected a handle" },
	{ ZE_RESULT_ERROR_INVALID_NULL_POINTER, "ZE_RESULT_ERROR_INVALID_NULL_POINTER",
	  "the driver rejected a pointer" },
	{ ZE_RESULT_ERROR_INVALID_SIZE, "ZE_RESULT_ERROR_INVALID_SIZE", "the driver rejected a size" },
	{ ZE_RESULT_ERROR_INVALID_KERNEL_NAME, "ZE_RESULT_ERROR_INVALID_KERNEL_NAME",
	  "the module has no kernel of that name" },
	{ ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION, "ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION",
	  "the driver rejected the group size" },
	{ ZE_RESULT_ERROR_UNKNOWN, "ZE_RESULT_ERROR_UNKNOWN", "the driver failed for an unknown reason" },
};

const struct ze_error_text *ze_error_text(ze_result_t rc)
{
	for (size_t i = 0; i < ARRAY_SIZE(ze_errors); i++)
		if (ze_errors[i].code == rc)
			return &ze_errors[i];
	return NULL;
}

const char *ze_result_name(ze_result_t rc, char *buf, size_t size)
{
	const struct ze_error_text *e = ze_error_text(rc);
	if (e)
		snprintf(buf, size, "%s", e->name);
	else
		snprintf(buf, size, "ZE_RESULT 0x%08x", (unsigned)rc);
	return buf;
}
