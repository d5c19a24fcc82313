/* NVIDIA GPUs through the CUDA driver API (src/backend/cuda.c, nvml.c). */
#include "cuda_visible.h"
#include "vendor.h"

static const char *const drivers[] = { "nvidia", NULL };

/* The NVIDIA Container Toolkit gives a container /dev/nvidiactl and
 * /proc/driver/nvidia (nvidia-container-toolkit's "mount" list); a host with
 * the NVIDIA driver loaded has both too. */
static const char *const marks[] = { "/dev/nvidiactl", "/proc/driver/nvidia/gpus", NULL };

/* Debian (libcuda1, nvidia-driver-libs), Ubuntu (libnvidia-compute-NNN,
 * nvidia-utils-NNN) and NVIDIA's CUDA repository (cuda-drivers, cuda-compat). */
static const char *const packages[] = {
	"libcuda1",
	"libcuda1-*",
	"libnvidia-compute-*",
	"libnvidia-ml1",
	"libnvidia-ptxjitcompiler1",
	"libnvidia-nvvm*",
	"nvidia-driver-libs",
	"nvidia-utils-*",
	"cuda-compat-*",
	"cuda-drivers*",
	"libnvidia-decode-*",
	NULL,
};

static size_t visible_cap(const char *value, size_t gpus)
{
	struct cuda_visible p;
	cuda_visible_parse(value, NULL, gpus, &p);
	return p.count;
}

static const char *const bundle_packages[] = { "nvidia-*", "libnvidia-*", "cuda-*", "libcuda*", NULL };

const struct vendor nvidia_vendor = {
	.name = "nvidia",
	.label = "NVIDIA",
	.pci_id = 0x10de,
	.drivers = drivers,
	.nodes = VENDOR_NODES_NVIDIA,
	.node_dir = "/dev",
	.node_prefix = "nvidia",
	.proc_gpus = "/proc/driver/nvidia/gpus",
	.proc_dir = "/proc/driver/nvidia",
	.marks = marks,
	.visible_env = "CUDA_VISIBLE_DEVICES",
	.visibility = VENDOR_VISIBLE_CUDA,
	.visible_cap = visible_cap,
	.pass_in_fix =
		"pass the GPUs in: docker run --gpus all (NVIDIA Container Toolkit) or --device nvidia.com/gpu=all (CDI); "
		"Kubernetes: resources.limits: {nvidia.com/gpu: 1}",
	.no_device_fix =
		"check that /dev/nvidiactl, /dev/nvidia-uvm and /dev/nvidiaN are visible (devices.nvidia) and that CUDA_VISIBLE_DEVICES does not hide every GPU",
	.telemetry_api = "NVML",
	.telemetry_tool = "nvidia-smi",
	.processes_cmd = "nvidia-smi",
	.bundle_tool_args = "-q",
	.packages = packages,
	.bundle_packages = bundle_packages,
};
