/* Check group `devices`: the GPUs the kernel lists in sysfs (under --root),
 * their render and card nodes in /dev/dri with the right major:minor, the
 * /dev/dri/by-path links the Intel driver discovers GPUs through, access with
 * this process's real credentials, Level Zero visibility from the environment,
 * and NVIDIA's /dev/nvidia* nodes. The sysfs scan and the node lookups are
 * made once, in prepare, and shared by every check of the group. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../lib/affinity.h"
#include "../lib/creds.h"
#include "../lib/dirents.h"
#include "../lib/drm_nodes.h"
#include "../lib/util.h"
#include "groups.h"

#define NVIDIA_MAJOR 195
#define NVIDIACTL_MINOR 255

static const struct spec_key devices_keys[] = {
	{ "devices", SPEC_MAP, SCALAR_STR, NULL, "the GPUs and their device nodes" },
	{ "devices.vendor", SPEC_SCALAR, SCALAR_STR, NULL,
	  "which GPUs count: intel, nvidia, amd, any, or a PCI vendor id such as 0x8086; default: --vendor, else detected" },
	{ "devices.min_gpus", SPEC_SCALAR, SCALAR_INT, NULL,
	  "the fewest usable GPUs of that vendor (default 1)" },
	{ "devices.by_path", SPEC_SCALAR, SCALAR_ENUM, "require|warn|ignore",
	  "/dev/dri/by-path links missing: fail (require; default in ci, validate), warn (default in healthcheck) or not checked (ignore)" },
	{ "devices.drivers", SPEC_SEQ, SCALAR_STR, NULL,
	  "kernel drivers a GPU may be bound to (default: i915, xe for Intel; nvidia; amdgpu)" },
	{ "devices.drivers[]", SPEC_SCALAR, SCALAR_STR, NULL, "one kernel driver name" },
	{ NULL, 0, 0, NULL, NULL },
};

/* The vendor filter of the spec. */
struct vendor_filter {
	bool any;
	unsigned id;
	char label[32];  /* "Intel", "NVIDIA", "0x1234", "any vendor" */
};

static int parse_vendor(const char *s, struct vendor_filter *v)
{
	memset(v, 0, sizeof(*v));
	if (strcasecmp(s, "any") == 0) {
		v->any = true;
		snprintf(v->label, sizeof(v->label), "any-vendor");
		return 0;
	}
	if (strcasecmp(s, "intel") == 0)
		v->id = PCI_VENDOR_INTEL;
	else if (strcasecmp(s, "nvidia") == 0)
		v->id = PCI_VENDOR_NVIDIA;
	else if (strcasecmp(s, "amd") == 0)
		v->id = PCI_VENDOR_AMD;
	else {
		char *end;
		if (strncasecmp(s, "0x", 2) != 0 || strlen(s) != 6)
			return -1;
		unsigned long id = strtoul(s + 2, &end, 16);
		if (*end || id == 0 || id == 0xffff)
			return -1;
		v->id = (unsigned)id;
	}
	const char *name = pci_vendor_name(v->id);
	if (name)
		snprintf(v->label, sizeof(v->label), "%s", name);
	else
		snprintf(v->label, sizeof(v->label), "0x%04x", v->id);
	return 0;
}

static int devices_validate(const struct spec *spec, struct spec_error *err)
{
	yaml_node_t *node = spec_get(spec, "devices.vendor");
	struct vendor_filter v;
	const char *s = spec_node_str(node);
	if (s && parse_vendor(s, &v) < 0)
		return spec_error_at(err, spec, node,
				     "devices.vendor must be intel, nvidia, amd, any or a PCI vendor id such as 0x8086, not '%s'", s);
	yaml_node_t *list = spec_get(spec, "devices.drivers");
	for (size_t i = 0; i < spec_seq_len(list); i++) {
		yaml_node_t *item = spec_seq_item(spec, list, i);
		const char *d = spec_node_str(item);
		if (!d || !*d || strchr(d, '/') || strchr(d, ' '))
			return spec_error_at(err, spec, item, "devices.drivers: '%s' is not a kernel driver name", d ? d : "");
	}
	return 0;
}

/* A device node as found under --root. */
struct node_view {
	char *path;      /* ROOT/dev/dri/renderD128 */
	int err;         /* 0, or the errno of finding it */
	struct stat st;  /* of the node itself, a symlink followed under ROOT */
};

struct gpu_view {
	const struct drm_gpu *gpu;
	struct node_view card, render;
	struct node_view nvidia;  /* /dev/nvidiaN, NVIDIA GPUs only */
	int nvidia_minor;         /* N of /dev/nvidiaN, -1 when unknown */
	bool present;             /* some node of it is in this container's /dev */
	bool driver_ok;
};

struct devices_state {
	struct drm_scan scan;
	struct vendor_filter vendor;
	char **drivers;           /* allowed kernel drivers; NULL: the vendor's defaults */
	struct gpu_view *views;   /* the GPUs of the vendor, in PCI order */
	size_t count;
	size_t present;           /* how many of them this container has nodes of */
	size_t others;            /* GPUs of other vendors */
	char *dri_dir;            /* ROOT/dev/dri */
	int dri_fd;               /* it, opened (O_PATH): nodes are looked at relative to it; -1 */
	int dri_err;
};

/* Resolves dir/name under ROOT: a symlink (by-path, or a node linked
 * elsewhere) is followed one step with an absolute target taken under ROOT,
 * so a fixture or an unpacked image never reads the host's /dev. */
static int stat_under_root(const struct context *ctx, const char *path, struct stat *st, char *target, size_t tsize)
{
	if (target && tsize)
		target[0] = '\0';
	char link[1024];
	ssize_t n = readlink(path, link, sizeof(link) - 1);
	if (n < 0) {
		if (errno != EINVAL)
			return -errno;
		return lstat(path, st) < 0 ? -errno : 0; /* not a symlink: the thing itself */
	}
	link[n] = '\0';
	if (target && tsize) {
		size_t len = strnlen(link, tsize - 1);
		memcpy(target, link, len);
		target[len] = '\0';
		text_sanitize(target);
	}
	char *resolved;
	if (link[0] == '/') {
		resolved = ctx_path(ctx, link);
	} else {
		const char *slash = strrchr(path, '/');
		resolved = xasprintf("%.*s/%s", slash ? (int)(slash - path) : 1, slash ? path : ".", link);
	}
	int rc = stat(resolved, st) < 0 ? -errno : 0;
	free(resolved);
	return rc;
}

/* dir/name; dirfd is dir opened, or -1 (then the whole path is looked up). */
static void view_node(const struct context *ctx, const char *dir, int dirfd, const char *name, struct node_view *v)
{
	v->path = xasprintf("%s/%s", dir, name);
	int rc = dirfd >= 0 ? fstatat(dirfd, name, &v->st, AT_SYMLINK_NOFOLLOW) : lstat(v->path, &v->st);
	v->err = rc < 0 ? -errno : 0;
	if (v->err == 0 && S_ISLNK(v->st.st_mode))
		v->err = stat_under_root(ctx, v->path, &v->st, NULL, 0);
}

static void free_node(struct node_view *v)
{
	free(v->path);
}

static const char *const intel_drivers[] = { "i915", "xe", NULL };
static const char *const nvidia_drivers[] = { "nvidia", NULL };
static const char *const amd_drivers[] = { "amdgpu", NULL };

/* The drivers allowed for gpu: the spec's list, or its vendor's defaults
 * (NULL: no rule for an unknown vendor). */
static const char *const *allowed_drivers(const struct devices_state *s, const struct drm_gpu *g)
{
	if (s->drivers)
		return (const char *const *)s->drivers;
	switch (g->vendor) {
	case PCI_VENDOR_INTEL: return intel_drivers;
	case PCI_VENDOR_NVIDIA: return nvidia_drivers;
	case PCI_VENDOR_AMD: return amd_drivers;
	default: return NULL;
	}
}

static bool driver_allowed(const struct devices_state *s, const struct drm_gpu *g)
{
	const char *const *list = allowed_drivers(s, g);
	if (!list)
		return g->driver[0] != '\0';
	for (; *list; list++)
		if (strcmp(*list, g->driver) == 0)
			return true;
	return false;
}

static void drivers_text(const struct devices_state *s, const struct drm_gpu *g, char *buf, size_t size)
{
	const char *const *list = allowed_drivers(s, g);
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; list && list[i]; i++)
		sb_printf(&sb, "%s%s", i ? (list[i + 1] ? ", " : " or ") : "", list[i]);
	snprintf(buf, size, "%s", sb.len ? sb.buf : "any driver");
	sb_release(&sb);
}

/* NVIDIA numbers /dev/nvidiaN by the "Device Minor" of each GPU in
 * /proc/driver/nvidia/gpus/BDF/information; -1 when that is not readable. */
static int nvidia_minor_of(const struct context *ctx, const char *bdf)
{
	char *rel = xasprintf("/proc/driver/nvidia/gpus/%s/information", bdf);
	char *path = ctx_path(ctx, rel);
	char *text = NULL;
	size_t len;
	int minor = -1;
	if (read_file(path, &text, &len) == 0) {
		const char *p = strstr(text, "Device Minor:");
		int v;
		if (p && sscanf(p + 13, " %d", &v) == 1 && v >= 0 && v < 255)
			minor = v;
	}
	free(text);
	free(path);
	free(rel);
	return minor;
}

static void *devices_prepare(const struct context *ctx)
{
	struct devices_state *s = xcalloc(1, sizeof(*s));
	/* no vendor in the spec: the run's (--vendor, else detected) */
	const char *vendor = ctx->vendor ? ctx->vendor : "intel";
	if (parse_vendor(spec_str(ctx->spec, "devices.vendor", vendor), &s->vendor) < 0)
		parse_vendor("intel", &s->vendor); /* validated at load: unreachable */
	yaml_node_t *list = spec_get(ctx->spec, "devices.drivers");
	if (list && list->type == YAML_SEQUENCE_NODE) {
		size_t count = spec_seq_len(list);
		s->drivers = xcalloc(count + 1, sizeof(*s->drivers)); /* NULL-terminated */
		for (size_t i = 0; i < count; i++)
			s->drivers[i] = xstrdup(spec_node_str(spec_seq_item(ctx->spec, list, i)));
	}
	drm_scan(ctx->root, &s->scan);
	if (s->vendor.any || s->vendor.id == PCI_VENDOR_NVIDIA)
		drm_scan_add_nvidia_proc(ctx->root, &s->scan);
	s->dri_dir = ctx_path(ctx, "/dev/dri");
	/* opened once: each node below is then one fstatat of a name, not a
	 * walk of the whole path (ENOENT / ENOTDIR as stat would say) */
	s->dri_fd = open(s->dri_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	s->dri_err = s->dri_fd < 0 ? errno : 0;
	s->views = xcalloc(s->scan.count ? s->scan.count : 1, sizeof(*s->views));
	char *dev_dir = ctx_path(ctx, "/dev");
	size_t nvidia_index = 0;
	for (size_t i = 0; i < s->scan.count; i++) {
		const struct drm_gpu *g = &s->scan.gpus[i];
		if (!s->vendor.any && g->vendor != s->vendor.id) {
			s->others++;
			continue;
		}
		struct gpu_view *v = &s->views[s->count++];
		v->gpu = g;
		v->nvidia_minor = -1;
		v->driver_ok = driver_allowed(s, g);
		if (g->card.name[0]) {
			view_node(ctx, s->dri_dir, s->dri_fd, g->card.name, &v->card);
			v->present |= v->card.err == 0;
		}
		if (g->render.name[0]) {
			view_node(ctx, s->dri_dir, s->dri_fd, g->render.name, &v->render);
			v->present |= v->render.err == 0;
		}
		if (g->vendor == PCI_VENDOR_NVIDIA) {
			int minor = nvidia_minor_of(ctx, g->bdf);
			v->nvidia_minor = minor >= 0 ? minor : (int)nvidia_index;
			nvidia_index++;
			char name[32];
			snprintf(name, sizeof(name), "nvidia%d", v->nvidia_minor);
			view_node(ctx, dev_dir, -1, name, &v->nvidia);
			v->present = v->nvidia.err == 0; /* CUDA needs /dev/nvidiaN, not /dev/dri */
		}
		if (v->present)
			s->present++;
	}
	free(dev_dir);
	return s;
}

static void devices_release(void *state)
{
	struct devices_state *s = state;
	if (!s)
		return;
	for (size_t i = 0; i < s->count; i++) {
		free_node(&s->views[i].card);
		free_node(&s->views[i].render);
		free_node(&s->views[i].nvidia);
	}
	free(s->views);
	free_list(s->drivers);
	free(s->dri_dir);
	if (s->dri_fd >= 0)
		close(s->dri_fd);
	drm_scan_free(&s->scan);
	free(s);
}

static void gpu_text(const struct drm_gpu *g, char *buf, size_t size)
{
	const char *name = pci_vendor_name(g->vendor);
	char vendor[16];
	if (!name) {
		snprintf(vendor, sizeof(vendor), "vendor 0x%04x", g->vendor);
		name = vendor;
	}
	if (g->from_nvidia_proc)
		snprintf(buf, size, "%s %s (driver nvidia, from /proc/driver/nvidia)", g->bdf, name);
	else
		snprintf(buf, size, "%s %s 0x%04x (driver %s)", g->bdf, name, g->device, g->driver[0] ? g->driver : "none");
}

static const char *pass_in_fix(const struct devices_state *s)
{
	if (s->vendor.id == PCI_VENDOR_NVIDIA)
		return "pass the GPUs in: docker run --gpus all (NVIDIA Container Toolkit) or --device nvidia.com/gpu=all (CDI); "
		       "Kubernetes: resources.limits: {nvidia.com/gpu: 1}";
	return "pass the GPUs in: docker run --device /dev/dri -v /dev/dri/by-path:/dev/dri/by-path IMAGE; "
	       "Kubernetes: resources.limits: {gpu.intel.com/i915: 1} (or gpu.intel.com/xe) from the Intel GPU device plugin";
}

/* devices.gpus ------------------------------------------------------------ */

static void report_no_sysfs(const struct context *ctx, struct devices_state *s, struct result *r)
{
	char *sys = ctx_path(ctx, "/sys");
	struct stat st;
	bool sys_there = stat(sys, &st) == 0;
	DIR *dri = opendir(s->dri_dir);
	struct strbuf nodes = STRBUF_INIT;
	struct dirent *de;
	while (dri && (de = readdir(dri)))
		if (strncmp(de->d_name, "render", 6) == 0 || strncmp(de->d_name, "card", 4) == 0)
			sb_printf(&nodes, "%s%s", nodes.len ? ", " : "", de->d_name);
	if (dri)
		closedir(dri);
	if (!sys_there)
		result_set(r, STATUS_FAIL, "no GPU found: %s is not visible, so no GPU can be enumerated", sys);
	else if (s->scan.error == ENOENT)
		result_set(r, STATUS_FAIL, "no GPU found: %s does not exist (no GPU kernel driver loaded, or /sys hidden)",
			   s->scan.class_dir);
	else
		result_set(r, STATUS_FAIL, "no GPU found: cannot read %s: %s", s->scan.class_dir, strerror(s->scan.error));
	if (nodes.len) {
		text_sanitize(nodes.buf);
		result_finding(r, STATUS_FAIL, "%s holds %s, but without /sys the Intel driver cannot map a node to its PCI device",
			       s->dri_dir, nodes.buf);
		result_remedy(r, "keep /sys mounted in the container (Docker and Kubernetes mount it read-only by default; do not mask it)");
	} else {
		result_finding(r, STATUS_FAIL, "%s: %s; %s: %s", s->scan.class_dir, strerror(s->scan.error), s->dri_dir,
			       s->dri_err ? strerror(s->dri_err) : "no card or render node");
		result_remedy(r, "run on a host whose GPU kernel driver is loaded (lspci -k shows i915 or xe in use), then %s", pass_in_fix(s));
	}
	sb_release(&nodes);
	free(sys);
}

static void run_gpus(const struct context *ctx, void *state, struct result *r)
{
	struct devices_state *s = state;
	long min_gpus = spec_int(ctx->spec, "devices.min_gpus", 1);
	json_t *list = json_array();
	for (size_t i = 0; i < s->scan.count; i++) {
		const struct drm_gpu *g = &s->scan.gpus[i];
		json_t *j = json_object();
		char id[16];
		json_object_set_new(j, "pci", json_text(g->bdf));
		snprintf(id, sizeof(id), "0x%04x", g->vendor);
		json_object_set_new(j, "vendor", json_string(id));
		snprintf(id, sizeof(id), "0x%04x", g->device);
		json_object_set_new(j, "device", json_string(id));
		snprintf(id, sizeof(id), "0x%06x", g->class);
		json_object_set_new(j, "class", json_string(id));
		json_object_set_new(j, "driver", json_text(g->driver));
		json_object_set_new(j, "card", json_text(g->card.name));
		json_object_set_new(j, "render", json_text(g->render.name));
		bool counted = false, present = false;
		for (size_t k = 0; k < s->count; k++)
			if (s->views[k].gpu == g) {
				counted = true;
				present = s->views[k].present;
			}
		json_object_set_new(j, "selected", json_boolean(counted));
		json_object_set_new(j, "present", json_boolean(present));
		json_array_append_new(list, j);
	}
	json_object_set_new(result_details(r), "gpus", list);

	if (s->scan.error && s->scan.count == 0) {
		report_no_sysfs(ctx, s, r);
		return;
	}
	for (size_t i = 0; i < s->scan.problem_count; i++)
		result_finding(r, STATUS_WARN, "%s", s->scan.problems[i]);
	if (s->scan.count == 0) {
		result_set(r, STATUS_FAIL, "no GPU found: %s lists no DRM node of a PCI GPU", s->scan.class_dir);
		result_remedy(r, "run on a host whose GPU kernel driver is loaded (lspci -k shows i915 or xe in use), then %s", pass_in_fix(s));
		return;
	}
	if (s->count == 0) {
		struct strbuf found = STRBUF_INIT;
		for (size_t i = 0; i < s->scan.count; i++) {
			char text[160];
			gpu_text(&s->scan.gpus[i], text, sizeof(text));
			sb_printf(&found, "%s%s", i ? "; " : "", text);
		}
		result_set(r, STATUS_FAIL, "no %s GPU found (vendor 0x%04x); this machine has: %s", s->vendor.label,
			   s->vendor.id, found.buf);
		result_remedy(r, "run on a host with a %s GPU, or set devices.vendor in the spec to the GPU you mean (intel, nvidia, amd, any or 0xNNNN)",
			      s->vendor.label);
		sb_release(&found);
		return;
	}
	size_t usable = 0;
	struct strbuf names = STRBUF_INIT;
	for (size_t i = 0; i < s->count; i++) {
		const struct gpu_view *v = &s->views[i];
		const struct drm_gpu *g = v->gpu;
		char text[160], allowed[96];
		gpu_text(g, text, sizeof(text));
		drivers_text(s, g, allowed, sizeof(allowed));
		if (!g->driver[0]) {
			result_finding(r, STATUS_FAIL, "%s: no kernel driver is bound (%s/%s/device/driver is missing); expected %s",
				       g->bdf, s->scan.class_dir, g->render.name[0] ? g->render.name : g->card.name, allowed);
			result_remedy(r, "on the host, load the driver and see why it did not bind: modprobe xe (or i915); dmesg | grep -iE 'i915|xe'");
		} else if (!v->driver_ok) {
			result_finding(r, STATUS_FAIL, "%s: bound to kernel driver '%s', expected %s", g->bdf, g->driver, allowed);
			result_remedy(r, "on the host, bind %s to %s (it is bound to %s: passed through to a VM, or the wrong driver loaded first)",
				      g->bdf, allowed, g->driver);
		}
		if (!v->present && s->present > 0)
			result_finding(r, STATUS_PASS, "%s: not passed into this container (no node of it under %s); "
				       "normal when a device plugin allocates some of the host's GPUs", text,
				       g->vendor == PCI_VENDOR_NVIDIA ? "/dev" : s->dri_dir);
		if (v->present && v->driver_ok) {
			if (usable < 4)
				sb_printf(&names, "%s%s", usable ? ", " : "", text);
			usable++;
		}
	}
	if (usable > 4)
		sb_printf(&names, " and %zu more", usable - 4);
	if (s->present == 0) {
		result_finding(r, STATUS_FAIL, "%zu %s GPU%s in %s, but no node of any under %s%s", s->count, s->vendor.label,
			       s->count == 1 ? "" : "s", s->scan.class_dir, s->dri_dir,
			       s->dri_err ? " (the folder does not exist)" : "");
		result_set(r, STATUS_FAIL, "no GPU passed into this container: %zu %s GPU%s on the host, none in %s", s->count,
			   s->vendor.label, s->count == 1 ? "" : "s", s->vendor.id == PCI_VENDOR_NVIDIA ? "/dev" : s->dri_dir);
		result_remedy(r, "%s", pass_in_fix(s));
		sb_release(&names);
		return;
	}
	if ((long)usable < min_gpus) {
		result_finding(r, STATUS_FAIL, "%zu usable %s GPU%s, the spec requires at least %ld (devices.min_gpus)", usable,
			       s->vendor.label, usable == 1 ? "" : "s", min_gpus);
		result_remedy(r, "give the container more GPUs (%s), or lower devices.min_gpus", pass_in_fix(s));
	}
	if (r->status == STATUS_FAIL)
		result_set(r, STATUS_FAIL, "%zu of %zu %s GPU%s usable (at least %ld required)%s%s", usable, s->count, s->vendor.label,
			   s->count == 1 ? "" : "s", min_gpus, usable ? ": " : "", names.buf ? names.buf : "");
	else
		result_set(r, r->status, "%zu %s GPU%s: %s", usable, s->vendor.label, usable == 1 ? "" : "s", names.buf);
	sb_release(&names);
}

/* Skips the check when there is nothing of this vendor to look at. */
static bool need_gpus(const struct devices_state *s, struct result *r)
{
	if (s->present == 0) {
		result_set(r, STATUS_SKIP, "no %s GPU in this container (see devices.gpus)", s->vendor.label);
		return false;
	}
	return true;
}

static const char *node_kind(const struct stat *st)
{
	switch (st->st_mode & S_IFMT) {
	case S_IFREG: return "a regular file";
	case S_IFDIR: return "a folder";
	case S_IFBLK: return "a block device";
	case S_IFIFO: return "a FIFO";
	case S_IFSOCK: return "a socket";
	case S_IFLNK: return "a symlink";
	default: return "not a character device";
	}
}

/* The GPU view whose sysfs node has this device number, or NULL. */
static const struct gpu_view *owner_of(const struct devices_state *s, dev_t rdev, const char **node)
{
	for (size_t i = 0; i < s->count; i++) {
		const struct drm_gpu *g = s->views[i].gpu;
		const struct drm_node *n[] = { &g->render, &g->card };
		for (size_t k = 0; k < 2; k++)
			if (n[k]->has_dev && makedev(n[k]->major, n[k]->minor) == rdev) {
				*node = n[k]->name;
				return &s->views[i];
			}
	}
	return NULL;
}

/* devices.nodes ----------------------------------------------------------- */

/* /sys/dev/char/MAJOR:MINOR must lead back to the same PCI device: the Intel
 * driver maps an opened node to its GPU through it (read by the scan). */
static void check_dev_char(const struct context *ctx, const struct drm_gpu *g, const struct drm_node *n, struct result *r)
{
	if (n->char_link == 0)
		return;
	char rel[96];
	snprintf(rel, sizeof(rel), "/sys/dev/char/%u:%u", n->major, n->minor);
	char *path = ctx_path(ctx, rel);
	if (n->char_link < 0) {
		result_finding(r, STATUS_FAIL, "%s: %s (the Intel driver maps %s to its PCI device through it)", path,
			       strerror(-n->char_link), n->name);
		result_remedy(r, "keep the host's /sys visible in the container (read-only is fine): the driver needs /sys/dev/char");
	} else {
		result_finding(r, STATUS_FAIL, "%s -> %s: does not lead to %s of %s", path, n->char_target, n->name, g->bdf);
		result_remedy(r, "this /sys does not belong to the running kernel: mount the host's /sys, not a copy");
	}
	free(path);
}

static void check_node(const struct context *ctx, const struct devices_state *s, const struct gpu_view *v,
		       const struct drm_node *n, const struct node_view *nv, struct result *r)
{
	const struct drm_gpu *g = v->gpu;
	if (!n->has_dev)
		return; /* reported by devices.gpus as an unreadable sysfs entry */
	if (nv->err) {
		result_finding(r, STATUS_FAIL, "%s: %s (sysfs has %s %u:%u for %s)", nv->path, strerror(-nv->err), n->name,
			       n->major, n->minor, g->bdf);
		result_remedy(r, "%s", pass_in_fix(s));
		return;
	}
	if (!S_ISCHR(nv->st.st_mode)) {
		result_finding(r, STATUS_FAIL, "%s is %s, expected the character device %u:%u of %s", nv->path,
			       node_kind(&nv->st), n->major, n->minor, g->bdf);
		result_remedy(r, "a file in the image is not a device: remove it from the image and pass the device in (docker run --device /dev/dri)");
		return;
	}
	unsigned maj = major(nv->st.st_rdev), min = minor(nv->st.st_rdev);
	if (maj != n->major || min != n->minor) {
		const char *other_node = NULL;
		const struct gpu_view *other = owner_of(s, nv->st.st_rdev, &other_node);
		if (other)
			result_finding(r, STATUS_FAIL, "%s is %u:%u (%s of %s), but sysfs says %s of %s is %u:%u", nv->path, maj, min,
				       other_node, other->gpu->bdf, n->name, g->bdf, n->major, n->minor);
		else
			result_finding(r, STATUS_FAIL, "%s is %u:%u, but sysfs says %s of %s is %u:%u", nv->path, maj, min, n->name,
				       g->bdf, n->major, n->minor);
		result_remedy(r, "pass each node in under its own name: docker run --device /dev/dri (or --device /dev/dri/%s:/dev/dri/%s, same name on both sides)",
			      n->name, n->name);
		return;
	}
	if (g->vendor == PCI_VENDOR_INTEL)
		check_dev_char(ctx, g, n, r);
}

static void run_nodes(const struct context *ctx, void *state, struct result *r)
{
	struct devices_state *s = state;
	if (!need_gpus(s, r))
		return;
	size_t checked = 0;
	for (size_t i = 0; i < s->count; i++) {
		const struct gpu_view *v = &s->views[i];
		const struct drm_gpu *g = v->gpu;
		if (!v->present || g->vendor == PCI_VENDOR_NVIDIA)
			continue; /* NVIDIA compute uses /dev/nvidia* (devices.nvidia) */
		if (!g->render.name[0]) {
			result_finding(r, STATUS_FAIL, "%s has no render node in sysfs (only %s): compute needs renderD*", g->bdf,
				       g->card.name);
			result_remedy(r, "on the host, use a kernel driver build that creates render nodes (i915 or xe with DRM render nodes enabled)");
		} else {
			check_node(ctx, s, v, &g->render, &v->render, r);
			checked++;
		}
		if (g->card.name[0]) {
			check_node(ctx, s, v, &g->card, &v->card, r);
			checked++;
		}
	}
	if (r->status == STATUS_PASS) {
		if (checked)
			result_set(r, STATUS_PASS, "%zu nodes under %s are the character devices sysfs names", checked, s->dri_dir);
		else
			result_set(r, STATUS_SKIP, "no GPU with DRM nodes to check (NVIDIA GPUs are checked by devices.nvidia)");
	} else {
		result_set(r, r->status, "%zu problem%s with the GPU nodes under %s", result_finding_count(r),
			   result_finding_count(r) == 1 ? "" : "s", s->dri_dir);
	}
}

/* devices.by_path --------------------------------------------------------- */

static const char by_path_mount[] =
	"mount the links too: docker run --device /dev/dri -v /dev/dri/by-path:/dev/dri/by-path IMAGE; "
	"Kubernetes: a hostPath volume /dev/dri/by-path mounted at /dev/dri/by-path (the Intel device plugin does this itself)";

/* The node view of a /dev/dri entry already looked at in prepare, by name. */
static const struct node_view *known_node(const struct devices_state *s, const char *name)
{
	for (size_t i = 0; i < s->count; i++) {
		const struct gpu_view *v = &s->views[i];
		if (v->gpu->render.name[0] && strcmp(v->gpu->render.name, name) == 0)
			return &v->render;
		if (v->gpu->card.name[0] && strcmp(v->gpu->card.name, name) == 0)
			return &v->card;
	}
	return NULL;
}

/* Where a by-path link leads. udev writes "../renderD128": when the folder
 * is a real folder in /dev/dri, that is the node prepare already looked at,
 * and its stat is reused; any other target is followed under ROOT. */
static int resolve_link(const struct context *ctx, const struct devices_state *s, const char *path, int dirfd,
			const char *name, bool plain_dir, struct stat *st, char *target, size_t tsize)
{
	char link[512];
	ssize_t n = readlinkat(dirfd, name, link, sizeof(link) - 1);
	if (n < 0 && errno != EINVAL) {
		target[0] = '\0'; /* missing or unreadable: what a second look would say too */
		return -errno;
	}
	if (n >= 0) {
		link[n] = '\0';
		const struct node_view *known = plain_dir && strncmp(link, "../", 3) == 0 && !strchr(link + 3, '/')
			? known_node(s, link + 3) : NULL;
		if (known && known->path) {
			snprintf(target, tsize, "%s", link);
			*st = known->st;
			return known->err;
		}
	}
	return stat_under_root(ctx, path, st, target, tsize);
}

/* Checks one link BYPATH/pci-BDF-KIND against the node sysfs names for it.
 * Returns true when it exists (right or wrong). */
static bool check_link(const struct context *ctx, const struct devices_state *s, const char *dir, int dirfd,
		       bool plain_dir, const struct gpu_view *v, const struct drm_node *n, const char *kind,
		       enum status missing, struct result *r)
{
	const struct drm_gpu *g = v->gpu;
	char *path = xasprintf("%s/pci-%s-%s", dir, g->bdf, kind);
	const char *name = path + strlen(dir) + 1;
	struct stat st;
	char target[512];
	int err = resolve_link(ctx, s, path, dirfd, name, plain_dir, &st, target, sizeof(target));
	text_sanitize(target);
	bool exists = true;
	if (err == -ENOENT && !target[0]) {
		exists = false;
		result_finding(r, missing, "%s is missing (%s of %s)", path, n->name, g->bdf);
		result_remedy(r, "%s", by_path_mount);
	} else if (err) {
		result_finding(r, STATUS_FAIL, "%s -> %s: %s%s", path, target[0] ? target : "?", strerror(-err),
			       err == -ENOENT ? " (a dangling link: the node it names is not there)" : "");
		result_remedy(r, "%s", by_path_mount);
	} else if (!S_ISCHR(st.st_mode)) {
		result_finding(r, STATUS_FAIL, "%s -> %s leads to %s, expected the character device %s (%u:%u)", path,
			       target[0] ? target : "?", node_kind(&st), n->name, n->major, n->minor);
		result_remedy(r, "%s", by_path_mount);
	} else if (n->has_dev && st.st_rdev != makedev(n->major, n->minor)) {
		const char *other_node = NULL;
		const struct gpu_view *other = owner_of(s, st.st_rdev, &other_node);
		char whose[96] = "";
		if (other)
			snprintf(whose, sizeof(whose), " (%s of %s)", other_node, other->gpu->bdf);
		result_finding(r, STATUS_FAIL, "%s -> %s leads to %u:%u%s, expected %s %u:%u of %s", path,
			       target[0] ? target : "?", major(st.st_rdev), minor(st.st_rdev), whose,
			       n->name, n->major, n->minor, g->bdf);
		result_remedy(r, "the links must come from the same host as the nodes: %s", by_path_mount);
	}
	free(path);
	return exists;
}

static void run_by_path(const struct context *ctx, void *state, struct result *r)
{
	struct devices_state *s = state;
	const char *policy = spec_str(ctx->spec, "devices.by_path", ctx_is_healthcheck(ctx) ? "warn" : "require");
	if (strcmp(policy, "ignore") == 0) {
		result_set(r, STATUS_SKIP, "devices.by_path is ignore");
		return;
	}
	if (!need_gpus(s, r))
		return;
	enum status missing = strcmp(policy, "require") == 0 ? STATUS_FAIL : STATUS_WARN;
	char *dir = xasprintf("%s/by-path", s->dri_dir);
	/* The Intel driver lists by-path when it has entries; only when it is
	 * missing or empty does it open renderD128..renderD191 instead. */
	size_t entries = 0;
	/* a real folder (not a link to one) when it opens with O_NOFOLLOW */
	struct dirents d;
	int base = s->dri_fd >= 0 ? s->dri_fd : AT_FDCWD;
	const char *rel = s->dri_fd >= 0 ? "by-path" : dir;
	int dir_err = -dirents_open(&d, base, rel, O_NOFOLLOW);
	bool plain_dir = dir_err == 0;
	if (dir_err == ELOOP || dir_err == ENOTDIR)
		dir_err = -dirents_open(&d, base, rel, 0);
	bool opened = dir_err == 0;
	const char *entry;
	while (!dir_err && (entry = dirents_next(&d, NULL))) {
		if (entry[0] == '.')
			continue;
		entries++;
		/* a link for a PCI device with no GPU of ours: the driver will try it */
		char bdf[16];
		size_t len = strlen(entry);
		if (len == 4 + 12 + 7 && strncmp(entry, "pci-", 4) == 0 && strcmp(entry + 16, "-render") == 0) {
			memcpy(bdf, entry + 4, 12);
			bdf[12] = '\0';
			bool known = false;
			for (size_t i = 0; i < s->scan.count && !known; i++)
				known = strcmp(s->scan.gpus[i].bdf, bdf) == 0;
			if (!known && pci_bdf_valid(bdf))
				result_finding(r, STATUS_WARN, "%s/%s names %s, which sysfs does not list as a GPU", dir, entry, bdf);
		}
	}
	if (!dir_err && d.error && entries == 0)
		dir_err = d.error;
	size_t intel = 0, linked = 0;
	for (size_t i = 0; i < s->count; i++) {
		const struct gpu_view *v = &s->views[i];
		const struct drm_gpu *g = v->gpu;
		if (!v->present || g->vendor != PCI_VENDOR_INTEL)
			continue;
		intel++;
		if (entries == 0) {
			if (g->render.has_dev && g->render.minor >= DRM_RENDER_MINOR_FALLBACK_END)
				result_finding(r, STATUS_FAIL, "%s of %s has minor %u: without by-path links the Intel driver only tries "
					       "renderD128..renderD191, so this GPU is invisible to it", g->render.name, g->bdf,
					       g->render.minor);
			continue;
		}
		/* by-path is in use: a GPU without its -render link is invisible */
		if (g->render.name[0] && check_link(ctx, s, dir, d.fd, plain_dir, v, &g->render, "render", STATUS_FAIL, r))
			linked++;
		if (g->card.name[0])
			check_link(ctx, s, dir, d.fd, plain_dir, v, &g->card, "card", missing, r);
	}
	if (intel == 0) {
		result_set(r, STATUS_SKIP, "by-path links matter to the Intel driver only; no Intel GPU here");
	} else if (entries == 0) {
		result_finding(r, missing, "%s %s: the Intel driver falls back to opening renderD128..renderD191, "
			       "and oneCCL fails (init_device_fds: opendir failed)", dir,
			       dir_err ? strerror(dir_err) : "is empty");
		result_remedy(r, "%s", by_path_mount);
		result_set(r, r->status, "%s is %s (devices.by_path: %s)", dir, dir_err == ENOENT ? "missing" : dir_err ? strerror(dir_err) : "empty",
			   policy);
	} else if (r->status != STATUS_PASS) {
		result_set(r, r->status, "%zu problem%s with the links under %s", result_finding_count(r),
			   result_finding_count(r) == 1 ? "" : "s", dir);
	} else {
		result_set(r, STATUS_PASS, "%zu of %zu Intel GPU%s reachable through %s", linked, intel, intel == 1 ? "" : "s", dir);
	}
	if (opened)
		dirents_close(&d);
	free(dir);
}

/* devices.access ---------------------------------------------------------- */

static void access_denied(const struct context *ctx, const struct creds *c, const struct node_view *nv, int err,
			  struct result *r)
{
	char who[512];
	creds_format(c, who, sizeof(who));
	unsigned mode = (unsigned)nv->st.st_mode & 07777;
	gid_t gid = nv->st.st_gid;
	char name[256];
	int named = creds_group_name(ctx->root, gid, name, sizeof(name));
	char *group_file = ctx_path(ctx, "/etc/group");
	char naming[512];
	if (named == 0)
		snprintf(naming, sizeof(naming), "group %u (%s)", (unsigned)gid, name);
	else if (named == -ENOENT)
		snprintf(naming, sizeof(naming), "group %u, which has no name in %s", (unsigned)gid, group_file);
	else
		snprintf(naming, sizeof(naming), "group %u (cannot read %s: %s)", (unsigned)gid, group_file, strerror(-named));
	result_finding(r, STATUS_FAIL, "%s: mode %04o, owner uid %u, %s; this process (%s) may not read and write it: %s",
		       nv->path, mode, (unsigned)nv->st.st_uid, naming, who, strerror(-err));
	if ((mode & 060) == 060 && !creds_in_group(c, gid)) {
		result_remedy(r, "add the node's group to the container user: docker run --group-add %u ...", (unsigned)gid);
		result_remedy(r, "Kubernetes: securityContext.supplementalGroups: [%u]", (unsigned)gid);
		if (named == -ENOENT)
			result_remedy(r, "(gid %u has no name inside the image: use the number; a name such as 'render' would resolve to the image's own gid)",
				      (unsigned)gid);
	} else if ((mode & 060) != 060) {
		result_remedy(r, "the node's mode %04o gives its group no read+write: on the host add a udev rule "
			      "SUBSYSTEM==\"drm\", KERNEL==\"renderD*\", GROUP=\"render\", MODE=\"0660\" and run with --group-add of that gid",
			      mode);
	} else {
		result_remedy(r, "the process is in group %u and the mode allows it, yet access is denied (%s): check the "
			      "container's device cgroup (docker run --device /dev/dri, or --device-cgroup-rule 'c 226:* rmw') and LSM denials",
			      (unsigned)gid, strerror(-err));
	}
	free(group_file);
}

static void run_access(const struct context *ctx, void *state, struct result *r)
{
	struct devices_state *s = state;
	if (!need_gpus(s, r))
		return;
	struct creds c;
	int err = creds_current(&c);
	if (err) {
		result_set(r, STATUS_FAIL, "cannot read this process's groups: %s", strerror(-err));
		return;
	}
	char who[512];
	creds_format(&c, who, sizeof(who));
	json_object_set_new(result_details(r), "credentials", json_text(who));
	size_t ok = 0, checked = 0;
	for (size_t i = 0; i < s->count; i++) {
		const struct gpu_view *v = &s->views[i];
		if (!v->present || v->gpu->vendor == PCI_VENDOR_NVIDIA || v->render.err || !S_ISCHR(v->render.st.st_mode))
			continue; /* missing nodes are devices.nodes' finding */
		checked++;
		int rc = s->dri_fd >= 0 ? creds_access_rw_at(s->dri_fd, v->gpu->render.name) : creds_access_rw(v->render.path);
		if (rc == 0)
			ok++;
		else
			access_denied(ctx, &c, &v->render, rc, r);
	}
	if (c.uid == 0 && checked)
		result_finding(r, STATUS_PASS, "running as root, which may open any node: run gpugate as the workload's own user "
			       "(docker run --user, or the image's USER) to check what that user may open");
	if (checked == 0)
		result_set(r, STATUS_SKIP, "no render node to open (see devices.nodes)");
	else if (ok == checked)
		result_set(r, STATUS_PASS, "%s may read and write %s%zu render node%s", who, checked > 1 ? "all " : "", checked,
			   checked == 1 ? "" : "s");
	else
		result_set(r, STATUS_FAIL, "%zu of %zu render node%s cannot be opened for read and write by %s", checked - ok, checked,
			   checked == 1 ? "" : "s", who);
}

/* devices.visibility ------------------------------------------------------ */

static void note_other_selectors(const struct context *ctx, struct result *r)
{
	const char *cuda = ctx_getenv(ctx, "CUDA_VISIBLE_DEVICES");
	const char *oneapi = ctx_getenv(ctx, "ONEAPI_DEVICE_SELECTOR");
	if (cuda)
		result_finding(r, STATUS_PASS, "CUDA_VISIBLE_DEVICES='%.200s' is set: it limits CUDA devices, not Level Zero", cuda);
	if (oneapi)
		result_finding(r, STATUS_PASS, "ONEAPI_DEVICE_SELECTOR='%.200s' is set: SYCL programs see only the devices it selects", oneapi);
}

static void run_visibility_cuda(const struct context *ctx, struct devices_state *s, struct result *r)
{
	const char *cuda = ctx_getenv(ctx, "CUDA_VISIBLE_DEVICES");
	if (cuda && (!*cuda || strncmp(cuda, "-1", 2) == 0)) {
		result_set(r, STATUS_FAIL, "CUDA_VISIBLE_DEVICES='%s' hides every GPU from CUDA", cuda);
		result_remedy(r, "unset CUDA_VISIBLE_DEVICES, or list the GPUs to use: CUDA_VISIBLE_DEVICES=0,1");
	} else if (cuda) {
		result_set(r, STATUS_PASS, "CUDA_VISIBLE_DEVICES='%.200s' (%zu NVIDIA GPU%s in this container)", cuda, s->present,
			   s->present == 1 ? "" : "s");
	} else {
		result_set(r, STATUS_PASS, "CUDA_VISIBLE_DEVICES is unset: CUDA sees all %zu NVIDIA GPU%s", s->present,
			   s->present == 1 ? "" : "s");
	}
}

static void run_visibility(const struct context *ctx, void *state, struct result *r)
{
	struct devices_state *s = state;
	if (!need_gpus(s, r))
		return;
	if (s->vendor.id == PCI_VENDOR_NVIDIA) {
		run_visibility_cuda(ctx, s, r);
		return;
	}
	note_other_selectors(ctx, r);
	const char *mask = ctx_getenv(ctx, "ZE_AFFINITY_MASK");
	const char *hier_env = ctx_getenv(ctx, "ZE_FLAT_DEVICE_HIERARCHY");
	char err[256];
	enum hierarchy hier;
	if (hierarchy_parse(hier_env, &hier, err, sizeof(err)) < 0) {
		result_set(r, STATUS_FAIL, "ZE_FLAT_DEVICE_HIERARCHY: %s", err);
		result_remedy(r, "set ZE_FLAT_DEVICE_HIERARCHY=FLAT (the default: one device per tile), COMPOSITE or COMBINED, or unset it");
		return;
	}
	struct affinity *aff = xmalloc(sizeof(*aff));
	if (affinity_parse(mask, aff, err, sizeof(err)) < 0) {
		result_set(r, STATUS_FAIL, "ZE_AFFINITY_MASK='%.100s': %s", mask, err);
		result_remedy(r, "fix ZE_AFFINITY_MASK: comma-separated device indexes N or sub-devices N.M (ZE_AFFINITY_MASK=0,1.0), or unset it to see every GPU");
		free(aff);
		return;
	}
	/* The GPUs Level Zero will number, in PCI order. */
	const struct gpu_view *gpus[64];
	size_t n = 0;
	for (size_t i = 0; i < s->count && n < ARRAY_SIZE(gpus); i++)
		if (s->views[i].present && s->views[i].gpu->vendor == PCI_VENDOR_INTEL)
			gpus[n++] = &s->views[i];
	if (n == 0) {
		result_set(r, STATUS_SKIP, "no Intel GPU for Level Zero to see");
		free(aff);
		return;
	}
	if (aff->all) {
		result_set(r, STATUS_PASS, "ZE_AFFINITY_MASK is unset: Level Zero sees all %zu Intel GPU%s (%s hierarchy)", n,
			   n == 1 ? "" : "s", hierarchy_name(hier));
		free(aff);
		return;
	}
	if (aff->count == 0) {
		result_set(r, STATUS_FAIL, "ZE_AFFINITY_MASK is set but empty: Level Zero sees no device at all");
		result_remedy(r, "unset ZE_AFFINITY_MASK (remove it from the container's environment), or name the devices to use: ZE_AFFINITY_MASK=0");
		free(aff);
		return;
	}
	/* Root devices: under COMPOSITE one per GPU with its tiles as
	 * sub-devices; under FLAT and COMBINED one per tile. */
	unsigned tiles[64], first[64], roots = 0;
	for (size_t i = 0; i < n; i++) {
		tiles[i] = drm_gpu_tiles(ctx->root, gpus[i]->gpu);
		first[i] = roots;
		roots += hier == HIERARCHY_COMPOSITE ? 1 : tiles[i];
	}
	bool seen[64] = { false };
	for (size_t k = 0; k < aff->count; k++) {
		const struct affinity_item *it = &aff->items[k];
		char entry[32];
		if (it->sub < 0)
			snprintf(entry, sizeof(entry), "%u", it->device);
		else
			snprintf(entry, sizeof(entry), "%u.%d", it->device, it->sub);
		if (it->device >= roots) {
			result_finding(r, STATUS_FAIL, "ZE_AFFINITY_MASK entry '%s' names device %u, but under %s there %s only %u "
				       "(0..%u)", entry, it->device, hierarchy_name(hier), roots == 1 ? "is" : "are", roots, roots - 1);
			continue;
		}
		size_t g = 0;
		while (g + 1 < n && first[g + 1] <= it->device)
			g++;
		if (hier == HIERARCHY_COMPOSITE && it->sub >= 0 && (unsigned)it->sub >= tiles[g] && !(tiles[g] == 1 && it->sub == 0)) {
			result_finding(r, STATUS_FAIL, "ZE_AFFINITY_MASK entry '%s': GPU %u (%s) has %u tile%s, so no sub-device %d",
				       entry, it->device, gpus[g]->gpu->bdf, tiles[g], tiles[g] == 1 ? "" : "s", it->sub);
			continue;
		}
		if (hier != HIERARCHY_COMPOSITE && it->sub > 0) {
			result_finding(r, STATUS_WARN, "ZE_AFFINITY_MASK entry '%s': under %s each device is one tile, so there is no "
				       "sub-device %d (ZE_FLAT_DEVICE_HIERARCHY=COMPOSITE numbers tiles as N.M)", entry,
				       hierarchy_name(hier), it->sub);
			continue;
		}
		seen[g] = true;
	}
	struct strbuf shown = STRBUF_INIT, hidden = STRBUF_INIT;
	size_t visible = 0;
	for (size_t i = 0; i < n; i++) {
		struct strbuf *sb = seen[i] ? &shown : &hidden;
		sb_printf(sb, "%s%s", sb->len ? ", " : "", gpus[i]->gpu->bdf);
		visible += seen[i];
	}
	long min_gpus = spec_int(ctx->spec, "devices.min_gpus", 1);
	char norm[512];
	affinity_format(aff, norm, sizeof(norm));
	if (hidden.len)
		result_finding(r, STATUS_PASS, "hidden by ZE_AFFINITY_MASK=%s: %s", norm, hidden.buf);
	if (visible == 0) {
		result_set(r, STATUS_FAIL, "ZE_AFFINITY_MASK=%s hides every GPU (%s hierarchy, %u device%s)", norm,
			   hierarchy_name(hier), roots, roots == 1 ? "" : "s");
		result_remedy(r, "set ZE_AFFINITY_MASK to devices that exist (0..%u under %s), or unset it", roots - 1, hierarchy_name(hier));
	} else if (r->status == STATUS_FAIL) {
		result_set(r, STATUS_FAIL, "ZE_AFFINITY_MASK=%s names devices that do not exist (%s hierarchy, %u device%s)", norm,
			   hierarchy_name(hier), roots, roots == 1 ? "" : "s");
		result_remedy(r, "set ZE_AFFINITY_MASK to devices that exist (0..%u under %s), or unset it", roots - 1, hierarchy_name(hier));
	} else if ((long)visible < min_gpus) {
		result_set(r, STATUS_FAIL, "ZE_AFFINITY_MASK=%s leaves %zu GPU%s visible, the spec requires at least %ld", norm,
			   visible, visible == 1 ? "" : "s", min_gpus);
		result_remedy(r, "widen ZE_AFFINITY_MASK or unset it, or lower devices.min_gpus");
	} else {
		result_set(r, r->status, "ZE_AFFINITY_MASK=%s (%s): Level Zero sees %zu of %zu GPU%s: %s", norm, hierarchy_name(hier),
			   visible, n, n == 1 ? "" : "s", shown.buf);
	}
	sb_release(&shown);
	sb_release(&hidden);
	free(aff);
}

/* devices.nvidia ---------------------------------------------------------- */

/* nv: the node as prepare (GPU nodes) or the caller (nvidiactl, nvidia-uvm) looked it up */
static void check_nvidia_node(const struct context *ctx, const struct creds *c, const struct node_view *nv,
			      int want_major, int want_minor, struct result *r)
{
	if (nv->err) {
		result_finding(r, STATUS_FAIL, "%s: %s", nv->path, strerror(-nv->err));
		result_remedy(r, "pass the GPUs in with the NVIDIA Container Toolkit: docker run --gpus all (or --runtime=nvidia, or CDI --device nvidia.com/gpu=all)");
	} else if (!S_ISCHR(nv->st.st_mode)) {
		result_finding(r, STATUS_FAIL, "%s is %s, expected a character device", nv->path, node_kind(&nv->st));
	} else if ((want_major >= 0 && (int)major(nv->st.st_rdev) != want_major) ||
		   (want_minor >= 0 && (int)minor(nv->st.st_rdev) != want_minor)) {
		result_finding(r, STATUS_FAIL, "%s is %u:%u, expected %d:%d", nv->path, major(nv->st.st_rdev),
			       minor(nv->st.st_rdev), want_major, want_minor);
	} else {
		int err = creds_access_rw(nv->path);
		if (err)
			access_denied(ctx, c, nv, err, r);
	}
}

/* A control node of the NVIDIA driver under ROOT/dev, looked up and checked. */
static void check_nvidia_control(const struct context *ctx, const struct creds *c, const char *name, int want_major,
				 int want_minor, struct result *r)
{
	char *dev_dir = ctx_path(ctx, "/dev");
	struct node_view nv;
	view_node(ctx, dev_dir, -1, name, &nv);
	check_nvidia_node(ctx, c, &nv, want_major, want_minor, r);
	free(nv.path);
	free(dev_dir);
}

static void run_nvidia(const struct context *ctx, void *state, struct result *r)
{
	struct devices_state *s = state;
	bool any_nvidia = false;
	for (size_t i = 0; i < s->count; i++)
		any_nvidia |= s->views[i].gpu->vendor == PCI_VENDOR_NVIDIA;
	if (s->vendor.id != PCI_VENDOR_NVIDIA && !(s->vendor.any && any_nvidia)) {
		result_set(r, STATUS_SKIP, "devices.vendor is %s: no NVIDIA GPU to check", s->vendor.label);
		return;
	}
	char *version_path = ctx_path(ctx, "/proc/driver/nvidia/version");
	char line[512];
	int err = read_line_file(version_path, line, sizeof(line));
	if (err) {
		result_finding(r, STATUS_FAIL, "%s: %s (the NVIDIA kernel driver is not loaded)", version_path, strerror(-err));
		result_remedy(r, "on the host, install and load the NVIDIA driver (nvidia-smi must work there), then docker run --gpus all");
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
		if (v->gpu->vendor != PCI_VENDOR_NVIDIA || (!v->present && s->present))
			continue;
		check_nvidia_node(ctx, &c, &v->nvidia, NVIDIA_MAJOR, v->nvidia_minor, r);
		gpus++;
	}
	if (r->status == STATUS_PASS)
		result_set(r, STATUS_PASS, "nvidiactl, nvidia-uvm and %zu /dev/nvidiaN node%s usable; %s", gpus, gpus == 1 ? "" : "s",
			   line[0] ? line : "driver version unknown");
	else
		result_set(r, r->status, "%zu problem%s with the NVIDIA driver and its nodes", result_finding_count(r),
			   result_finding_count(r) == 1 ? "" : "s");
	free(version_path);
}

static const struct check_def devices_checks[] = {
	{ "devices.gpus", "GPUs of the spec's vendor in sysfs, bound to the expected kernel driver, passed into the container, at least min_gpus",
	  NULL, false, run_gpus },
	{ "devices.nodes", "each GPU's render and card nodes are character devices with the major:minor sysfs gives them",
	  NULL, false, run_nodes },
	{ "devices.by_path", "/dev/dri/by-path/pci-<address>-render and -card lead to each GPU's own nodes (the Intel driver finds GPUs through them)",
	  NULL, false, run_by_path },
	{ "devices.access", "this process's real uid and groups may read and write every render node",
	  NULL, false, run_access },
	{ "devices.visibility", "ZE_AFFINITY_MASK and ZE_FLAT_DEVICE_HIERARCHY (CUDA_VISIBLE_DEVICES for NVIDIA) leave the GPUs visible",
	  NULL, false, run_visibility },
	{ "devices.nvidia", "NVIDIA: /dev/nvidiactl, /dev/nvidia-uvm and /dev/nvidiaN (major 195) usable, kernel driver loaded",
	  NULL, false, run_nvidia },
	{ NULL, NULL, NULL, false, NULL },
};

const struct check_group devices_group = {
	.name = "devices",
	.description = "GPUs in sysfs, their /dev/dri nodes and by-path links, access, visibility",
	.spec_keys = devices_keys,
	.validate = devices_validate,
	.prepare = devices_prepare,
	.release = devices_release,
	.checks = devices_checks,
};
