/* Intel GPUs (i915, xe) through Level Zero (src/backend/ze*.c). */
#include "vendor.h"

static const char *const drivers[] = { "i915", "xe", NULL };

/* The user-mode stack in Debian/Ubuntu and Intel's repositories: the Level
 * Zero loader and GPU driver, the OpenCL driver, the graphics compiler, the
 * memory manager. Kernel modules and firmware are the host's. */
static const char *const packages[] = {
	"libze1",           "libze-intel-gpu*", "level-zero", "intel-level-zero-gpu*",
	"intel-opencl-icd", "intel-igc-*",      "libigc*",    "libigdfcl*",
	"libigdgmm*",       "intel-ocloc",      NULL,
};

static const char *const bundle_packages[] = {
	"intel-*", "libze*",    "level-zero*",
	"libvpl*", "libmfx*",   "onemkl*",
	"xpu-smi", "libmetee*", "firmware-intel-graphics",
	NULL,
};

const struct vendor intel_vendor = {
	.name = "intel",
	.label = "Intel",
	.pci_id = 0x8086,
	.drivers = drivers,
	.nodes = VENDOR_NODES_DRM,
	.node_dir = "/dev/dri",
	.node_prefix = "renderD",
	.by_path = true,      /* the compute runtime finds GPUs through /dev/dri/by-path */
	.dev_char_map = true, /* and maps a render node to its PCI device through /sys/dev/char */
	/* compute-runtime's discoverDevices: fstat of the node, then
	 * /sys/dev/char/MAJOR:MINOR, then /sys/bus/pci/devices/<BDF>/driver */
	.sysfs_use = "the Intel driver maps render nodes to PCI devices through /sys/dev/char and reads the "
		     "bound driver from /sys/bus/pci",
	/* ZE_AFFINITY_MASK's parser is src/lib/affinity.c (entries can name
	 * several tiles each, so no per-child cap) */
	.visible_env = "ZE_AFFINITY_MASK",
	.visibility = VENDOR_VISIBLE_ZE_AFFINITY,
	.pass_in_fix =
		"pass the GPUs in: docker run --device /dev/dri -v /dev/dri/by-path:/dev/dri/by-path IMAGE; "
		"Kubernetes: resources.limits: {gpu.intel.com/i915: 1} (or gpu.intel.com/xe) from the Intel GPU device plugin",
	.no_device_fix =
		"check that /dev/dri/renderD* and /dev/dri/by-path are visible (the devices checks) and that ZE_AFFINITY_MASK does not hide every GPU",
	.telemetry_api = "Sysman",
	.telemetry_tool = "xpu-smi",
	.processes_cmd = "xpu-smi ps",
	.packages = packages,
	.bundle_packages = bundle_packages,
};
