/* devices.nvidia: the NVIDIA driver's /dev/nvidiactl, /dev/nvidia-uvm and
 * /dev/nvidiaN nodes (part of the devices group, devices.c). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../lib/dirents.h"
#include "../lib/util.h"
#include "devices.h"

/* nv: the node as prepare (GPU nodes) or the caller (nvidiactl, nvidia-uvm) looked it up */
static void check_nvidia_node(const struct context *ctx, const struct creds *c, const struct node_view *nv,
			      int want_major, int want_minor, struct result *r)
{
	if (nv->err) {
		result_finding(r, STATUS_FAIL, "devices.nvidia.node_missing", "%s: %s", nv->path, strerror(-nv->err));
		result_remedy(
			r,
			"pass the GPUs in with the NVIDIA Container Toolkit: docker run --gpus all (or --runtime=nvidia, or CDI --device nvidia.com/gpu=all)");
	} else if (!S_ISCHR(nv->st.st_mode)) {
		result_finding(r, STATUS_FAIL, "devices.nvidia.not_char_device",
			       "%s is %s, expected a character device", nv->path, devices_node_kind(&nv->st));
	} else if ((want_major >= 0 && (int)major(nv->st.st_rdev) != want_major) ||
		   (want_minor >= 0 && (int)minor(nv->st.st_rdev) != want_minor)) {
		result_finding(r, STATUS_FAIL, "devices.nvidia.wrong_number", "%s is %u:%u, expected %d:%d", nv->path,
			       major(nv->st.st_rdev), minor(nv->st.st_rdev), want_major, want_minor);
	} else {
		int err = creds_access_rw(nv->path);
		if (err)
			devices_access_denied(ctx, c, nv, err, r);
	}
}

/* A control node of the NVIDIA driver under ROOT/dev, looked up and checked. */
static void check_nvidia_control(const struct context *ctx, const struct creds *c, const char *name, int want_major,
				 int want_minor, struct result *r)
{
	char *dev_dir = ctx_path(ctx, "/dev");
	struct node_view nv;
	devices_view_node(ctx, dev_dir, -1, name, &nv);
	check_nvidia_node(ctx, c, &nv, want_major, want_minor, r);
	free(nv.path);
	free(dev_dir);
}

void devices_run_nvidia(const struct context *ctx, void *state, struct result *r)
{
	struct devices_state *s = state;
	bool any_nvidia = false;
	for (size_t i = 0; i < s->count; i++)
		any_nvidia |= vendor_nodes_of(s->views[i].gpu->vendor) == VENDOR_NODES_NVIDIA;
	if (!s->vendor.any ? vendor_nodes_of(s->vendor.id) != VENDOR_NODES_NVIDIA : !any_nvidia) {
		result_set(r, STATUS_SKIP, "devices.vendor is %s: no NVIDIA GPU to check", s->vendor.label);
		return;
	}
	char *version_path = ctx_path(ctx, "/proc/driver/nvidia/version");
	char line[512];
	int err = read_line_file(version_path, line, sizeof(line));
	if (err) {
		result_finding(r, STATUS_FAIL, "devices.nvidia.driver_not_loaded",
			       "%s: %s (the NVIDIA kernel driver is not loaded)", version_path, strerror(-err));
		result_remedy(
			r,
			"on the host, install and load the NVIDIA driver (nvidia-smi must work there), then docker run --gpus all");
		line[0] = '\0';
	} else {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		text_sanitize(line);
	}
	struct creds c;
	if (creds_current(&c) < 0)
		memset(&c, 0, sizeof(c));
	check_nvidia_control(ctx, &c, "nvidiactl", NVIDIA_MAJOR, NVIDIACTL_MINOR, r);
	check_nvidia_control(ctx, &c, "nvidia-uvm", -1, -1, r); /* its major is allocated at load time */
	size_t gpus = 0;
	for (size_t i = 0; i < s->count; i++) {
		const struct gpu_view *v = &s->views[i];
		if (vendor_nodes_of(v->gpu->vendor) != VENDOR_NODES_NVIDIA || (!v->present && s->present))
			continue;
		check_nvidia_node(ctx, &c, &v->nvidia, NVIDIA_MAJOR, v->nvidia_minor, r);
		gpus++;
	}
	if (r->status == STATUS_PASS)
		result_set(r, STATUS_PASS, "nvidiactl, nvidia-uvm and %zu /dev/nvidiaN %s usable; %s", gpus,
			   count_noun(gpus, "node", "nodes"), line[0] ? line : "driver version unknown");
	else
		result_set(r, r->status, "%zu %s with the NVIDIA driver and its nodes", result_finding_count(r),
			   count_noun(result_finding_count(r), "problem", "problems"));
	free(version_path);
}
