/* What the files of the devices check group share: the state prepare
 * builds once (devices.c) and the helpers the checks of devices_by_path.c,
 * devices_visibility.c and devices_nvidia.c use. */
#ifndef GPUGATE_CHECKS_DEVICES_H
#define GPUGATE_CHECKS_DEVICES_H

#include <stdbool.h>
#include <sys/stat.h>

#include "../lib/creds.h"
#include "../lib/drm_nodes.h"
#include "../registry.h"
#include "../vendor/vendor.h"

#define NVIDIA_MAJOR    195
#define NVIDIACTL_MINOR 255

/* The vendor filter of the spec. */
struct vendor_filter {
	bool any;
	unsigned id;
	char label[32]; /* "Intel", "NVIDIA", "0x1234", "any vendor" */
};

/* A device node as found under --root. */
struct node_view {
	char *path;     /* ROOT/dev/dri/renderD128 */
	int err;        /* 0, or the errno of finding it */
	struct stat st; /* of the node itself, a symlink followed under ROOT */
};

struct gpu_view {
	const struct drm_gpu *gpu;
	struct node_view card, render;
	struct node_view nvidia; /* /dev/nvidiaN, NVIDIA GPUs only */
	int nvidia_minor;        /* N of /dev/nvidiaN, -1 when unknown */
	char uuid[80];           /* "GPU-..." from /proc/driver/nvidia/gpus/BDF/information; "" when unknown */
	char model[96];          /* its "Model:", "" when unknown */
	bool present;            /* some node of it is in this container's /dev */
	bool driver_ok;
};

struct devices_state {
	struct drm_scan scan;
	struct vendor_filter vendor;
	char **drivers;         /* allowed kernel drivers; NULL: the vendor's defaults */
	struct gpu_view *views; /* the GPUs of the vendor, in PCI order */
	size_t count;
	size_t present; /* how many of them this container has nodes of */
	size_t others;  /* GPUs of other vendors */
	char *dri_dir;  /* ROOT/dev/dri */
	int dri_fd;     /* it, opened (O_PATH): nodes are looked at relative to it; -1 */
	int dri_err;
};

/* Resolves a node under ROOT, following one symlink with an absolute target
 * taken under ROOT; 0 or -errno. target (may be NULL) gets the link text. */
int devices_stat_under_root(const struct context *ctx, const char *path, struct stat *st, char *target, size_t tsize);
/* dir/name looked at; dirfd is dir opened, or -1. */
void devices_view_node(const struct context *ctx, const char *dir, int dirfd, const char *name, struct node_view *v);
/* Skips the check (and returns false) when no GPU of the vendor is here. */
bool devices_need_gpus(const struct devices_state *s, struct result *r);
/* "a regular file", "a directory", ...: what a node that should be a character device is
 * (lib/safe_io.h safe_kind_name, the words every other finding uses). */
const char *devices_node_kind(const struct stat *st);
/* The GPU whose sysfs node has this device number (its node name in *node), or NULL. */
const struct gpu_view *devices_owner_of(const struct devices_state *s, dev_t rdev, const char **node);
/* The finding and remedy for a node this process may not open. */
void devices_access_denied(const struct context *ctx, const struct creds *c, const struct node_view *nv, int err,
			   struct result *r);

void devices_run_by_path(const struct context *ctx, void *state, struct result *r);
void devices_run_visibility(const struct context *ctx, void *state, struct result *r);
void devices_run_nvidia(const struct context *ctx, void *state, struct result *r);

#endif
