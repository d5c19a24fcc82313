/* The GPU vendors: one entry each (intel.c, nvidia.c, amd.c), one table
 * (vendor.c), after nvtop's struct gpu_vendor. An entry owns what is true of
 * a vendor: its PCI id and name, the kernel drivers its GPUs bind to, how
 * its stack is detected, the device nodes compute needs, its visibility
 * variable and that variable's parser, the fixes that name its tools and
 * device plugin, the packages of its user-mode stack. Its runtime backends
 * (src/backend/) point at it. Outside src/vendor/ no code compares a PCI
 * vendor id or a vendor name: `make lint` (src/tools/vendor_lint.sh) fails
 * when one does. HACKING.md, "The vendor layer", says how to add a vendor. */
#ifndef GPUGATE_VENDOR_VENDOR_H
#define GPUGATE_VENDOR_VENDOR_H

#include <stdbool.h>
#include <stddef.h>

/* The device nodes a GPU of the vendor is used through. */
enum vendor_nodes {
	VENDOR_NODES_DRM,    /* /dev/dri/renderD* and card* (the sysfs drm class names them) */
	VENDOR_NODES_NVIDIA, /* /dev/nvidiactl, /dev/nvidia-uvm and /dev/nvidiaN (major 195) */
};

/* The rules of a vendor's visibility variable: which parser reads it. */
enum vendor_visibility {
	VENDOR_VISIBLE_NONE,
	VENDOR_VISIBLE_ZE_AFFINITY, /* ZE_AFFINITY_MASK + ZE_FLAT_DEVICE_HIERARCHY: src/lib/affinity.c */
	VENDOR_VISIBLE_CUDA,        /* CUDA_VISIBLE_DEVICES: src/vendor/cuda_visible.c */
};

struct drm_scan;

struct vendor {
	const char *name;  /* "intel": --vendor, devices.vendor, checks/vendor/NAME.yaml */
	const char *label; /* "Intel": how findings name it */
	unsigned pci_id;
	const char *const *drivers; /* kernel drivers its GPUs may be bound to; NULL-terminated */
	enum vendor_nodes nodes;
	/* its per-GPU compute nodes: ROOT/node_dir/node_prefixN */
	const char *node_dir, *node_prefix;
	bool by_path;      /* its runtime finds GPUs through /dev/dri/by-path */
	bool dev_char_map; /* its runtime maps a render node to its GPU through /sys/dev/char */
	/* What its stack reads in /sys, for the findings when /sys is hidden
	 * (a cited fact), or NULL: what gpugate itself reads there
	 * (vendor_sysfs_use). */
	const char *sysfs_use;
	const char *proc_gpus;    /* its driver's GPU list outside sysfs (a folder of PCI addresses), or NULL */
	const char *proc_dir;     /* its driver's /proc folder, for the diagnostic bundle, or NULL */
	const char *const *marks; /* files whose presence says its stack is here; NULL-terminated */
	const char *visible_env;  /* the variable that hides GPUs from its runtime, or NULL */
	enum vendor_visibility visibility; /* whose rules that variable follows */
	/* How many devices its runtime shows at most under visible_env=VALUE
	 * with `gpus` GPUs passed in (their UUIDs unknown); NULL: no cap. */
	size_t (*visible_cap)(const char *value, size_t gpus);
	const char *pass_in_fix;      /* how to give a container its GPUs (docker, Kubernetes device plugin) */
	const char *no_device_fix;    /* its runtime sees no GPU: what to look at */
	const char *telemetry_api;    /* "Sysman", "NVML": what reports free memory and health */
	const char *telemetry_tool;   /* "xpu-smi", "nvidia-smi": the tool fixes name */
	const char *processes_cmd;    /* the command that lists the processes on its GPUs */
	const char *bundle_tool_args; /* telemetry_tool's arguments for the bundle's full report, or NULL */
	/* Its user-mode driver stack (loader first), as fnmatch globs over
	 * package names: the provenance search and `spec freeze` read it. The
	 * version pins are data: checks/vendor/NAME.yaml. */
	const char *const *packages;
	/* What else the diagnostic bundle lists of its packages (tools,
	 * firmware, libraries beside the stack), as globs; NULL-terminated. */
	const char *const *bundle_packages;
};

extern const struct vendor intel_vendor, nvidia_vendor, amd_vendor;

/* Every vendor, NULL-terminated, in the order detection tries them. */
extern const struct vendor *const vendors[];

/* By PCI vendor id, or NULL. */
const struct vendor *vendor_by_pci(unsigned pci_id);
/* By name, any letter case ("intel", "NVIDIA"), or NULL. */
const struct vendor *vendor_by_name(const char *name);
/* The vendor assumed when nothing says which: Intel, the first backend's
 * (as before vendors were told apart). */
const struct vendor *vendor_fallback(void);
/* The vendor whose marks are under ROOT (""/NULL: /), else the fallback. */
const struct vendor *vendor_detect_at(const char *root);
/* "Intel", "NVIDIA" for a known PCI id, else NULL. */
const char *vendor_label(unsigned pci_id);
/* The nodes a GPU of this PCI vendor is used through: DRM for any vendor
 * without an entry. */
enum vendor_nodes vendor_nodes_of(unsigned pci_id);
/* The visibility rules of a PCI vendor's GPUs (NONE without an entry). */
enum vendor_visibility vendor_visibility_of(unsigned pci_id);
/* Does its runtime find GPUs through /dev/dri/by-path, map nodes through
 * /sys/dev/char? (false without an entry) */
bool vendor_needs_by_path(unsigned pci_id);
bool vendor_maps_dev_char(unsigned pci_id);
/* A vendor gpugate knows a driver stack of (--vendor, checks/vendor/). */
bool vendor_has_stack(const struct vendor *v);
/* The fix that passes GPUs of the vendor (NULL: the fallback's) into a container. */
const char *vendor_pass_in_fix(const struct vendor *v);
/* Why /sys matters, as a clause ("the Intel driver maps ..."): the vendor's
 * sysfs_use, else (v NULL, or a vendor with none) what gpugate reads there. */
const char *vendor_sysfs_use(const struct vendor *v);
/* Adds to scan the GPUs that v's driver lists outside sysfs (every
 * vendor's when v is NULL); returns how many. */
size_t vendor_scan_proc(const char *root, struct drm_scan *scan, const struct vendor *v);
/* Does a package name match one of the vendor's package globs? */
bool vendor_owns_package(const struct vendor *v, const char *package);

#endif
