/* GPUs as the kernel lists them in sysfs, read under a root prefix:
 * ROOT/sys/class/drm/{cardN,renderDN} -> the PCI device (vendor, device id,
 * class, bound driver, address) and each node's major:minor from its `dev`
 * attribute. libdrm's drmGetDevices2 reads the real /sys and /dev only, so it
 * cannot check an unpacked image or a test fixture; this reader can. */
#ifndef GPUGATE_DRM_NODES_H
#define GPUGATE_DRM_NODES_H

#include <stdbool.h>
#include <stddef.h>

#define DRM_MAJOR             226
#define DRM_RENDER_MINOR_BASE 128
/* The Intel driver's fallback (no by-path) opens renderD128..renderD191 only. */
#define DRM_RENDER_MINOR_FALLBACK_END 192

struct drm_node {
	char name[32]; /* "renderD128", "card0"; "" when the GPU has none */
	bool has_dev;  /* major:minor are known */
	unsigned major, minor;
	int char_link; /* render nodes: ROOT/sys/dev/char/MAJOR:MINOR leads to this node (0), elsewhere (1), -errno; 0 for card nodes */
	char *char_target; /* where it leads when elsewhere (owned) */
};

struct drm_gpu {
	char bdf[16]; /* PCI address "0000:03:00.0" */
	unsigned vendor, device, class;
	char driver[64]; /* bound kernel driver; "" when none is bound */
	struct drm_node card, render;
	bool from_proc; /* known from its driver's /proc list only (no sysfs): src/vendor/ */
};

struct drm_scan {
	char *class_dir;      /* ROOT/sys/class/drm */
	int error;            /* 0, or the errno of opening class_dir */
	struct drm_gpu *gpus; /* sorted by PCI address: the order drivers number them */
	size_t count;
	char **problems; /* sysfs entries that could not be read, one line each */
	size_t problem_count;
};

/* Scans ROOT/sys/class/drm. Never fails as a whole: a missing or unreadable
 * folder is out->error, an unreadable entry one line in out->problems. */
void drm_scan(const char *root, struct drm_scan *out);
void drm_scan_free(struct drm_scan *scan);
/* Adds the GPUs that ROOT/DIR/<address> lists and sysfs does not (NVIDIA's
 * /proc/driver/nvidia/gpus in containers without /sys/class/drm), as of
 * vendor, bound to driver (the folder is that driver's own); keeps PCI
 * order. Returns how many were added. vendor_scan_proc() knows the folders. */
size_t drm_scan_add_proc(const char *root, struct drm_scan *scan, const char *dir, unsigned vendor, const char *driver);

/* Whether s is a PCI address DDDD:BB:DD.F (lower-case hex, as sysfs writes it). */
bool pci_bdf_valid(const char *s);
/* Number of tiles (stacks) of a GPU: i915's card/gt/gtN or xe's device/tileN;
 * 1 when neither is there. */
unsigned drm_gpu_tiles(const char *root, const struct drm_gpu *gpu);

#endif
