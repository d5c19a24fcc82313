/* Check group `devices`: the GPUs the kernel lists in sysfs (under --root),
 * their render and card nodes in /dev/dri with the right major:minor, and
 * access with this process's real credentials. The sysfs scan and the node
 * lookups are made once, in prepare, and shared by every check of the group;
 * the /dev/dri/by-path links are devices_by_path.c's, Level Zero and CUDA
 * visibility devices_visibility.c's, NVIDIA's /dev/nvidia* nodes
 * devices_nvidia.c's. */
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

#include "devices.h"
#include "../facts/devices.h"
#include "../lib/creds.h"
#include "../lib/dirents.h"
#include "../lib/drm_nodes.h"
#include "../lib/safe_io.h"
#include "../lib/util.h"
#include "../registry.h"
#include "../vendor/vendor.h"

static const struct spec_key devices_keys[] = {
	{ "devices", SPEC_MAP, SCALAR_STR, NULL, "the GPUs and their device nodes", NULL, NULL },
	{ "devices.vendor", SPEC_SCALAR, SCALAR_STR, NULL,
	  "which GPUs count: intel, nvidia, amd, any, or a PCI vendor id such as 0x8086; default: --vendor, else detected",
	  NULL, NULL },
	{ "devices.min_gpus", SPEC_SCALAR, SCALAR_INT, NULL, "the fewest usable GPUs of that vendor", "1", NULL },
	{ "devices.by_path", SPEC_SCALAR, SCALAR_ENUM, "require|warn|ignore",
	  "/dev/dri/by-path links missing: fail (require), warn or not checked (ignore)", "require", "warn" },
	{ "devices.drivers", SPEC_SEQ, SCALAR_STR, NULL,
	  "kernel drivers a GPU may be bound to (default: i915, xe for Intel; nvidia; amdgpu)", NULL, NULL },
	{ "devices.drivers[]", SPEC_SCALAR, SCALAR_STR, NULL, "one kernel driver name", NULL, NULL },
	{ NULL, 0, 0, NULL, NULL, NULL, NULL },
};

static int parse_vendor(const char *s, struct vendor_filter *v)
{
	memset(v, 0, sizeof(*v));
	if (strcasecmp(s, "any") == 0) {
		v->any = true;
		snprintf(v->label, sizeof(v->label), "any-vendor");
		return 0;
	}
	const struct vendor *known = vendor_by_name(s);
	if (known)
		v->id = known->pci_id;
	else {
		char *end;
		if (strncasecmp(s, "0x", 2) != 0 || strlen(s) != 6)
			return -1;
		unsigned long id = strtoul(s + 2, &end, 16);
		if (*end || id == 0 || id == 0xffff)
			return -1;
		v->id = (unsigned)id;
	}
	const char *name = vendor_label(v->id);
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
		return spec_error_at(
			err, spec, node,
			"devices.vendor must be intel, nvidia, amd, any or a PCI vendor id such as 0x8086, not '%s'",
			s);
	yaml_node_t *list = spec_get(spec, "devices.drivers");
	for (size_t i = 0; i < spec_seq_len(list); i++) {
		yaml_node_t *item = spec_seq_item(spec, list, i);
		const char *d = spec_node_str(item);
		if (!d || !*d || strchr(d, '/') || strchr(d, ' '))
			return spec_error_at(err, spec, item, "devices.drivers: '%s' is not a kernel driver name",
					     d ? d : "");
	}
	return 0;
}

/* Resolves dir/name under ROOT: a symlink (by-path, or a node linked
 * elsewhere) is followed one step with an absolute target taken under ROOT,
 * so a fixture or an unpacked image never reads the host's /dev. */
int devices_stat_under_root(const struct context *ctx, const char *path, struct stat *st, char *target, size_t tsize)
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
void devices_view_node(const struct context *ctx, const char *dir, int dirfd, const char *name, struct node_view *v)
{
	v->path = xpath_join(dir, name);
	int rc = dirfd >= 0 ? fstatat(dirfd, name, &v->st, AT_SYMLINK_NOFOLLOW) : lstat(v->path, &v->st);
	v->err = rc < 0 ? -errno : 0;
	if (v->err == 0 && S_ISLNK(v->st.st_mode))
		v->err = devices_stat_under_root(ctx, v->path, &v->st, NULL, 0);
}

static void free_node(struct node_view *v)
{
	free(v->path);
}

/* The drivers allowed for gpu: the spec's list, or its vendor's defaults
 * (NULL: no rule for an unknown vendor). */
static const char *const *allowed_drivers(const struct devices_state *s, const struct drm_gpu *g)
{
	if (s->drivers)
		return (const char *const *)s->drivers;
	const struct vendor *v = vendor_by_pci(g->vendor);
	return v ? v->drivers : NULL;
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

/* "i915 or xe"; "any driver" for no list */
static void driver_list_text(const char *const *list, char *buf, size_t size)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; list && list[i]; i++)
		sb_printf(&sb, "%s%s", i ? (list[i + 1] ? ", " : " or ") : "", list[i]);
	snprintf(buf, size, "%s", sb.len ? sb.buf : "any driver");
	sb_release(&sb);
}

static void drivers_text(const struct devices_state *s, const struct drm_gpu *g, char *buf, size_t size)
{
	driver_list_text(allowed_drivers(s, g), buf, size);
}

/* The fix when no GPU of the spec's vendor is seen at all: the host's
 * driver first (the spec's drivers, or the vendor's: not Intel's for an
 * NVIDIA spec), then how to pass the GPUs in. */
static void remedy_no_gpu(struct result *r, const struct devices_state *s, const char *pass_in)
{
	const struct vendor *v = s->vendor.any ? NULL : vendor_by_pci(s->vendor.id);
	const char *const *list = s->drivers ? (const char *const *)s->drivers : v ? v->drivers : NULL;
	char drivers[256];
	driver_list_text(list, drivers, sizeof(drivers));
	if (list)
		result_remedy(r, "run on a host whose GPU kernel driver is loaded (lspci -k shows %s in use), then %s",
			      drivers, pass_in);
	else
		result_remedy(r, "run on a host whose GPU kernel driver is loaded (lspci -k shows it in use), then %s",
			      pass_in);
}

/* The value of "Key:" in an information file (blanks around it trimmed,
 * up to the end of the line, or the first blank with word set), or "". */
static void info_value(const char *text, const char *key, bool word, char *out, size_t size)
{
	out[0] = '\0';
	const char *p = strstr(text, key);
	if (!p)
		return;
	p += strlen(key);
	p += strspn(p, " \t");
	size_t n = strcspn(p, word ? " \t\r\n" : "\r\n");
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	if (n && n < size) {
		memcpy(out, p, n);
		out[n] = '\0';
		text_sanitize(out);
	}
}

/* What /proc/driver/nvidia/gpus/BDF/information says of a GPU: its "Device
 * Minor" (NVIDIA numbers /dev/nvidiaN by it; -1 when not readable), its
 * "GPU UUID" (the GPU-... form nvidia-smi -L prints and CUDA_VISIBLE_DEVICES
 * accepts) and its "Model" ("" when not readable). */
static void nvidia_info(const struct context *ctx, struct gpu_view *v)
{
	char *rel = xasprintf("/proc/driver/nvidia/gpus/%s/information", v->gpu->bdf);
	char *path = ctx_path(ctx, rel);
	char *text = NULL;
	size_t len;
	v->nvidia_minor = -1;
	v->uuid[0] = v->model[0] = '\0';
	if (read_file(path, &text, &len) == 0) {
		const char *p = strstr(text, "Device Minor:");
		int minor;
		if (p && sscanf(p + 13, " %d", &minor) == 1 && minor >= 0 && minor < 255)
			v->nvidia_minor = minor;
		info_value(text, "GPU UUID:", true, v->uuid, sizeof(v->uuid));
		info_value(text, "Model:", false, v->model, sizeof(v->model));
	}
	free(text);
	free(path);
	free(rel);
}

static void *devices_prepare(const struct context *ctx)
{
	struct devices_state *s = xcalloc(1, sizeof(*s));
	/* no vendor in the spec: the run's (--vendor, else detected) */
	const char *vendor = ctx->vendor ? ctx->vendor : vendor_fallback()->name;
	if (parse_vendor(spec_str(ctx->spec, "devices.vendor", vendor), &s->vendor) < 0)
		parse_vendor(vendor_fallback()->name, &s->vendor); /* validated at load: unreachable */
	yaml_node_t *list = spec_get(ctx->spec, "devices.drivers");
	if (list && list->type == YAML_SEQUENCE_NODE) {
		size_t count = spec_seq_len(list);
		s->drivers = xcalloc(count + 1, sizeof(*s->drivers)); /* NULL-terminated */
		for (size_t i = 0; i < count; i++)
			s->drivers[i] = xstrdup(spec_node_str(spec_seq_item(ctx->spec, list, i)));
	}
	drm_scan(ctx->root, &s->scan);
	/* GPUs a driver lists outside sysfs (NVIDIA's /proc/driver/nvidia) */
	if (s->vendor.any || vendor_by_pci(s->vendor.id))
		vendor_scan_proc(ctx->root, &s->scan, s->vendor.any ? NULL : vendor_by_pci(s->vendor.id));
	s->dri_dir = ctx_path(ctx, "/dev/dri");
	/* opened once: each node below is then one fstatat of a name, not a
	 * walk of the whole path (ENOENT / ENOTDIR as stat would say) */
	s->dri_fd = open(s->dri_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	s->dri_err = s->dri_fd < 0 ? errno : 0;
	s->views = xcalloc(s->scan.count ? s->scan.count : 1, sizeof(*s->views));
	char *dev_dir = NULL; /* ROOT/dev, for NVIDIA's nodes only */
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
			devices_view_node(ctx, s->dri_dir, s->dri_fd, g->card.name, &v->card);
			v->present |= v->card.err == 0;
		}
		if (g->render.name[0]) {
			devices_view_node(ctx, s->dri_dir, s->dri_fd, g->render.name, &v->render);
			v->present |= v->render.err == 0;
		}
		if (vendor_nodes_of(g->vendor) == VENDOR_NODES_NVIDIA) {
			nvidia_info(ctx, v);
			if (v->nvidia_minor < 0)
				v->nvidia_minor = (int)nvidia_index;
			nvidia_index++;
			char name[32];
			snprintf(name, sizeof(name), "%s%d", vendor_by_pci(g->vendor)->node_prefix, v->nvidia_minor);
			if (!dev_dir)
				dev_dir = ctx_path(ctx, "/dev");
			devices_view_node(ctx, dev_dir, -1, name, &v->nvidia);
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
	const char *name = vendor_label(g->vendor);
	char vendor[16];
	if (!name) {
		snprintf(vendor, sizeof(vendor), "vendor 0x%04x", g->vendor);
		name = vendor;
	}
	if (g->from_proc)
		snprintf(buf, size, "%s %s (driver %s, from %s)", g->bdf, name, g->driver,
			 vendor_by_pci(g->vendor)->proc_dir);
	else
		snprintf(buf, size, "%s %s 0x%04x (driver %s)", g->bdf, name, g->device,
			 g->driver[0] ? g->driver : "none");
}

static const char *pass_in_fix(const struct devices_state *s)
{
	return vendor_pass_in_fix(s->vendor.any ? NULL : vendor_by_pci(s->vendor.id));
}

/* Where the compute nodes of GPUs of this PCI vendor are: /dev for NVIDIA's
 * /dev/nvidiaN, else the DRM folder. */
static const char *nodes_dir_text(const struct devices_state *s, unsigned pci_id)
{
	return vendor_nodes_of(pci_id) == VENDOR_NODES_NVIDIA ? "/dev" : s->dri_dir;
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
		result_set(r, STATUS_FAIL,
			   "no GPU found: %s does not exist (no GPU kernel driver loaded, or /sys hidden)",
			   s->scan.class_dir);
	else
		result_set(r, STATUS_FAIL, "no GPU found: cannot read %s: %s", s->scan.class_dir,
			   strerror(s->scan.error));
	if (nodes.len) {
		text_sanitize(nodes.buf);
		result_finding(r, STATUS_FAIL, "devices.gpus.no_sysfs", "%s holds %s, but /sys is not visible: %s",
			       s->dri_dir, nodes.buf,
			       vendor_sysfs_use(s->vendor.any ? NULL : vendor_by_pci(s->vendor.id)));
		result_remedy(
			r,
			"keep /sys mounted in the container (Docker and Kubernetes mount it read-only by default; do not mask it)");
	} else {
		result_finding(r, STATUS_FAIL, "devices.gpus.no_gpu_source", "%s: %s; %s: %s", s->scan.class_dir,
			       strerror(s->scan.error), s->dri_dir,
			       s->dri_err ? strerror(s->dri_err) : "no card or render node");
		remedy_no_gpu(r, s, pass_in_fix(s));
	}
	sb_release(&nodes);
	free(sys);
}

/* "0x%0*x" into buf (16 bytes) without printf: three ids of each GPU, every run */
static void hex_text(char buf[16], unsigned v, int width)
{
	char digits[8];
	int k = 0;
	do
		digits[k++] = "0123456789abcdef"[v & 0xf];
	while ((v >>= 4) && k < 8);
	while (k < width)
		digits[k++] = '0';
	int n = 0;
	buf[n++] = '0';
	buf[n++] = 'x';
	while (k)
		buf[n++] = digits[--k];
	buf[n] = '\0';
}

static void run_gpus(const struct context *ctx, void *state, struct result *r)
{
	struct devices_state *s = state;
	long min_gpus = key_int(ctx->spec, "devices.min_gpus");
	json_t *list = json_array();
	for (size_t i = 0; i < s->scan.count; i++) {
		const struct drm_gpu *g = &s->scan.gpus[i];
		char vendor[16], device[16], pci_class[16];
		hex_text(vendor, g->vendor, 4);
		hex_text(device, g->device, 4);
		hex_text(pci_class, g->class, 6);
		struct gpu_fact f = { .pci = g->bdf,
				      .vendor = vendor,
				      .device = device,
				      .pci_class = pci_class,
				      .driver = g->driver,
				      .card = g->card.name,
				      .render = g->render.name };
		for (size_t k = 0; k < s->count; k++)
			if (s->views[k].gpu == g) {
				f.selected = true;
				f.present = s->views[k].present;
			}
		json_array_append_new(list, gpu_fact_encode(&f));
	}
	devices_facts_encode_gpus(result_details(r), list);

	if (s->scan.error && s->scan.count == 0) {
		report_no_sysfs(ctx, s, r);
		return;
	}
	for (size_t i = 0; i < s->scan.problem_count; i++)
		result_finding(r, STATUS_WARN, "devices.gpus.scan_problem", "%s", s->scan.problems[i]);
	if (s->scan.count == 0) {
		result_set(r, STATUS_FAIL, "no GPU found: %s lists no DRM node of a PCI GPU", s->scan.class_dir);
		remedy_no_gpu(r, s, pass_in_fix(s));
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
		result_remedy(
			r,
			"run on a host with a %s GPU, or set devices.vendor in the spec to the GPU you mean (intel, nvidia, amd, any or 0xNNNN)",
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
		/* the words only where they are said: a failing GPU, the first four named */
		bool driver_bad = !g->driver[0] || !v->driver_ok;
		bool named = (!v->present && s->present > 0) || (v->present && v->driver_ok && usable < 4);
		if (named)
			gpu_text(g, text, sizeof(text));
		if (driver_bad)
			drivers_text(s, g, allowed, sizeof(allowed));
		if (!g->driver[0]) {
			result_finding(r, STATUS_FAIL, "devices.gpus.no_driver",
				       "%s: no kernel driver is bound (%s/%s/device/driver is missing); expected %s",
				       g->bdf, s->scan.class_dir, g->render.name[0] ? g->render.name : g->card.name,
				       allowed);
			result_remedy(
				r,
				"on the host, load the driver and see why it did not bind: modprobe xe (or i915); dmesg | grep -iE 'i915|xe'");
		} else if (!v->driver_ok) {
			result_finding(r, STATUS_FAIL, "devices.gpus.wrong_driver",
				       "%s: bound to kernel driver '%s', expected %s", g->bdf, g->driver, allowed);
			result_remedy(
				r,
				"on the host, bind %s to %s (it is bound to %s: passed through to a VM, or the wrong driver loaded first)",
				g->bdf, allowed, g->driver);
		}
		if (!v->present && s->present > 0)
			result_finding(r, STATUS_PASS, "devices.gpus.not_passed_in",
				       "%s: not passed into this container (no node of it under %s); "
				       "normal when a device plugin allocates some of the host's GPUs",
				       text, nodes_dir_text(s, g->vendor));
		if (v->present && v->driver_ok) {
			if (usable < 4)
				sb_printf(&names, "%s%s", usable ? ", " : "", text);
			usable++;
		}
	}
	if (usable > 4)
		sb_printf(&names, " and %zu more", usable - 4);
	if (s->present == 0) {
		result_finding(r, STATUS_FAIL, "devices.gpus.no_nodes",
			       "%zu %s %s in %s, but no node of any under %s%s", s->count, s->vendor.label,
			       count_noun(s->count, "GPU", "GPUs"), s->scan.class_dir, s->dri_dir,
			       s->dri_err ? " (the folder does not exist)" : "");
		result_set(r, STATUS_FAIL, "no GPU passed into this container: %zu %s %s on the host, none in %s",
			   s->count, s->vendor.label, count_noun(s->count, "GPU", "GPUs"),
			   nodes_dir_text(s, s->vendor.id));
		result_remedy(r, "%s", pass_in_fix(s));
		sb_release(&names);
		return;
	}
	if ((long)usable < min_gpus) {
		result_finding(r, STATUS_FAIL, "devices.gpus.too_few",
			       "%zu usable %s %s, the spec requires at least %ld (devices.min_gpus)", usable,
			       s->vendor.label, count_noun(usable, "GPU", "GPUs"), min_gpus);
		result_remedy(r, "give the container more GPUs (%s), or lower devices.min_gpus", pass_in_fix(s));
	}
	if (r->status == STATUS_FAIL)
		result_set(r, STATUS_FAIL, "%zu of %zu %s %s usable (at least %ld required)%s%s", usable, s->count,
			   s->vendor.label, count_noun(s->count, "GPU", "GPUs"), min_gpus, usable ? ": " : "",
			   names.buf);
	else
		result_set(r, r->status, "%zu %s %s: %s", usable, s->vendor.label, count_noun(usable, "GPU", "GPUs"),
			   names.buf);
	sb_release(&names);
}

/* Skips the check when there is nothing of this vendor to look at: blocked
 * by devices.gpus (a failure when devices.gpus was not selected). */
bool devices_need_gpus(const struct devices_state *s, struct result *r)
{
	if (s->present == 0) {
		/* devices.gpus fails whenever none is here (no GPU, none of the
		 * vendor, none passed in) and says why once */
		result_blocked(r, "devices.gpus");
		return false;
	}
	return true;
}

const char *devices_node_kind(const struct stat *st)
{
	return safe_kind_name(st->st_mode);
}

/* The GPU view whose sysfs node has this device number, or NULL. */
const struct gpu_view *devices_owner_of(const struct devices_state *s, dev_t rdev, const char **node)
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

/* /sys/dev/char/MAJOR:MINOR must lead back to the same PCI device, for a
 * vendor whose driver maps an opened node to its GPU through it
 * (dev_char_map: Intel's; read by the scan). */
static void check_dev_char(const struct context *ctx, const struct drm_gpu *g, const struct drm_node *n,
			   struct result *r)
{
	if (n->char_link == 0)
		return;
	char rel[96];
	snprintf(rel, sizeof(rel), "/sys/dev/char/%u:%u", n->major, n->minor);
	char *path = ctx_path(ctx, rel);
	if (n->char_link < 0) {
		result_finding(r, STATUS_FAIL, "devices.nodes.sysfs_char_unreadable",
			       "%s: %s (the %s driver maps %s to its PCI device through it)", path,
			       strerror(-n->char_link), vendor_label(g->vendor), n->name);
		result_remedy(
			r,
			"keep the host's /sys visible in the container (read-only is fine): the driver needs /sys/dev/char");
	} else {
		result_finding(r, STATUS_FAIL, "devices.nodes.sysfs_char_mismatch",
			       "%s -> %s: does not lead to %s of %s", path, n->char_target, n->name, g->bdf);
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
		result_finding(r, STATUS_FAIL, "devices.nodes.missing", "%s: %s (sysfs has %s %u:%u for %s)", nv->path,
			       strerror(-nv->err), n->name, n->major, n->minor, g->bdf);
		result_remedy(r, "%s", pass_in_fix(s));
		return;
	}
	if (!S_ISCHR(nv->st.st_mode)) {
		result_finding(r, STATUS_FAIL, "devices.nodes.not_char_device",
			       "%s is %s, expected the character device %u:%u of %s", nv->path,
			       devices_node_kind(&nv->st), n->major, n->minor, g->bdf);
		result_remedy(
			r,
			"a file in the image is not a device: remove it from the image and pass the device in (docker run --device /dev/dri)");
		return;
	}
	unsigned maj = major(nv->st.st_rdev), min = minor(nv->st.st_rdev);
	if (maj != n->major || min != n->minor) {
		const char *other_node = NULL;
		const struct gpu_view *other = devices_owner_of(s, nv->st.st_rdev, &other_node);
		if (other)
			result_finding(r, STATUS_FAIL, "devices.nodes.other_gpus_number",
				       "%s is %u:%u (%s of %s), but sysfs says %s of %s is %u:%u", nv->path, maj, min,
				       other_node, other->gpu->bdf, n->name, g->bdf, n->major, n->minor);
		else
			result_finding(r, STATUS_FAIL, "devices.nodes.wrong_number",
				       "%s is %u:%u, but sysfs says %s of %s is %u:%u", nv->path, maj, min, n->name,
				       g->bdf, n->major, n->minor);
		result_remedy(
			r,
			"pass each node in under its own name: docker run --device /dev/dri (or --device /dev/dri/%s:/dev/dri/%s, same name on both sides)",
			n->name, n->name);
		return;
	}
	if (vendor_maps_dev_char(g->vendor))
		check_dev_char(ctx, g, n, r);
}

static void run_nodes(const struct context *ctx, void *state, struct result *r)
{
	struct devices_state *s = state;
	if (!devices_need_gpus(s, r))
		return;
	size_t checked = 0;
	for (size_t i = 0; i < s->count; i++) {
		const struct gpu_view *v = &s->views[i];
		const struct drm_gpu *g = v->gpu;
		if (!v->present || vendor_nodes_of(g->vendor) == VENDOR_NODES_NVIDIA)
			continue; /* NVIDIA compute uses /dev/nvidia* (devices.nvidia) */
		if (!g->render.name[0]) {
			result_finding(r, STATUS_FAIL, "devices.nodes.no_render_node",
				       "%s has no render node in sysfs (only %s): compute needs renderD*", g->bdf,
				       g->card.name);
			result_remedy(
				r,
				"on the host, use a kernel driver build that creates render nodes (i915 or xe with DRM render nodes enabled)");
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
			result_set(r, STATUS_PASS, "%zu %s under %s %s sysfs names", checked,
				   count_noun(checked, "node", "nodes"), s->dri_dir,
				   count_noun(checked, "is the character device", "are the character devices"));
		else
			result_set(r, STATUS_SKIP,
				   "no GPU with DRM nodes to check (NVIDIA GPUs are checked by devices.nvidia)");
	} else {
		result_set(r, r->status, "%zu %s with the GPU nodes under %s", result_finding_count(r),
			   count_noun(result_finding_count(r), "problem", "problems"), s->dri_dir);
	}
}

/* devices.access ---------------------------------------------------------- */

void devices_access_denied(const struct context *ctx, const struct creds *c, const struct node_view *nv, int err,
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
		snprintf(naming, sizeof(naming), "group %u (cannot read %s: %s)", (unsigned)gid, group_file,
			 strerror(-named));
	result_finding(r, STATUS_FAIL, "devices.access.denied",
		       "%s: mode %04o, owner uid %u, %s; this process (%s) may not read and write it: %s", nv->path,
		       mode, (unsigned)nv->st.st_uid, naming, who, strerror(-err));
	if ((mode & 060) == 060 && !creds_in_group(c, gid)) {
		result_remedy(r, "add the node's group to the container user: docker run --group-add %u ...",
			      (unsigned)gid);
		result_remedy(r, "Kubernetes: securityContext.supplementalGroups: [%u]", (unsigned)gid);
		if (named == -ENOENT)
			result_remedy(
				r,
				"(gid %u has no name inside the image: use the number; a name such as 'render' would resolve to the image's own gid)",
				(unsigned)gid);
	} else if ((mode & 060) != 060) {
		result_remedy(
			r,
			"the node's mode %04o gives its group no read+write: on the host add a udev rule "
			"SUBSYSTEM==\"drm\", KERNEL==\"renderD*\", GROUP=\"render\", MODE=\"0660\" and run with --group-add of that gid",
			mode);
	} else {
		result_remedy(
			r,
			"the process is in group %u and the mode allows it, yet access is denied (%s): check the "
			"container's device cgroup (docker run --device /dev/dri, or --device-cgroup-rule 'c 226:* rmw') and LSM denials",
			(unsigned)gid, strerror(-err));
	}
	free(group_file);
}

static void run_access(const struct context *ctx, void *state, struct result *r)
{
	struct devices_state *s = state;
	if (!devices_need_gpus(s, r))
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
		if (!v->present || vendor_nodes_of(v->gpu->vendor) == VENDOR_NODES_NVIDIA || v->render.err ||
		    !S_ISCHR(v->render.st.st_mode))
			continue; /* missing nodes are devices.nodes' finding */
		checked++;
		int rc = s->dri_fd >= 0 ? creds_access_rw_at(s->dri_fd, v->gpu->render.name)
					: creds_access_rw(v->render.path);
		if (rc == 0)
			ok++;
		else
			devices_access_denied(ctx, &c, &v->render, rc, r);
	}
	if (c.uid == 0 && checked)
		result_finding(r, STATUS_PASS, "devices.access.root",
			       "running as root, which may open any node: run gpugate as the workload's own user "
			       "(docker run --user, or the image's USER) to check what that user may open");
	if (checked == 0)
		result_set(r, STATUS_SKIP, "no render node to open (see devices.nodes)");
	else if (ok == checked)
		result_set(r, STATUS_PASS, "%s may read and write %s%zu %s", who, checked > 1 ? "all " : "", checked,
			   count_noun(checked, "render node", "render nodes"));
	else
		result_set(r, STATUS_FAIL, "%zu of %zu %s cannot be opened for read and write by %s", checked - ok,
			   checked, count_noun(checked, "render node", "render nodes"), who);
}

static const struct check_def devices_checks[] = {
	{ "devices.gpus",
	  "GPUs of the spec's vendor in sysfs, bound to the expected kernel driver, passed into the container, at least min_gpus",
	  NULL, false, run_gpus },
	{ "devices.nodes",
	  "each GPU's render and card nodes are character devices with the major:minor sysfs gives them", NULL, false,
	  run_nodes },
	{ "devices.by_path",
	  "/dev/dri/by-path/pci-<address>-render and -card lead to each GPU's own nodes (the Intel driver finds GPUs through them)",
	  NULL, false, devices_run_by_path },
	{ "devices.access", "this process's real uid and groups may read and write every render node", NULL, false,
	  run_access },
	{ "devices.visibility",
	  "ZE_AFFINITY_MASK and ZE_FLAT_DEVICE_HIERARCHY (CUDA_VISIBLE_DEVICES for NVIDIA) leave the GPUs visible",
	  NULL, false, devices_run_visibility },
	{ "devices.nvidia",
	  "NVIDIA: /dev/nvidiactl, /dev/nvidia-uvm and /dev/nvidiaN (major 195) usable, kernel driver loaded", NULL,
	  false, devices_run_nvidia },
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
