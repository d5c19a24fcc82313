/* AMD GPUs: counted by the devices group (devices.vendor: amd); no runtime
 * backend yet. */
#include "vendor.h"

static const char *const drivers[] = { "amdgpu", NULL };

const struct vendor amd_vendor = {
	.name = "amd",
	.label = "AMD",
	.pci_id = 0x1002,
	.drivers = drivers,
	.nodes = VENDOR_NODES_DRM,
	.node_dir = "/dev/dri",
	.node_prefix = "renderD",
};
