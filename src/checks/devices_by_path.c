/* devices.by_path: the /dev/dri/by-path links the Intel driver finds GPUs
 * through lead to each GPU's own nodes (part of the devices group, devices.c). */
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
#include "../registry.h"
#include "devices.h"

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
							? known_node(s, link + 3)
							: NULL;
		if (known && known->path) {
			size_t len = (size_t)n < tsize ? (size_t)n : tsize - 1;
			memcpy(target, link, len);
			target[len] = '\0';
			*st = known->st;
			return known->err;
		}
	}
	return devices_stat_under_root(ctx, path, st, target, tsize);
}

/* Checks one link BYPATH/pci-BDF-KIND against the node sysfs names for it.
 * Returns true when it exists (right or wrong). */
static bool check_link(const struct context *ctx, const struct devices_state *s, const char *dir, int dirfd,
		       bool plain_dir, const struct gpu_view *v, const struct drm_node *n, const char *kind,
		       enum status missing, struct result *r)
{
	const struct drm_gpu *g = v->gpu;
	struct strbuf link = STRBUF_INIT; /* DIR/pci-BDF-KIND, without printf's cost for each of 16 links */
	sb_puts(&link, dir);
	sb_puts(&link, "/pci-");
	sb_puts(&link, g->bdf);
	sb_puts(&link, "-");
	sb_puts(&link, kind);
	char *path = sb_detach(&link);
	const char *name = path + strlen(dir) + 1;
	struct stat st;
	char target[512];
	int err = resolve_link(ctx, s, path, dirfd, name, plain_dir, &st, target, sizeof(target));
	text_sanitize(target);
	bool exists = true;
	if (err == -ENOENT && !target[0]) {
		exists = false;
		result_finding(r, missing, "devices.by_path.missing", "%s is missing (%s of %s)", path, n->name,
			       g->bdf);
		result_remedy(r, "%s", by_path_mount);
	} else if (err) {
		result_finding(r, STATUS_FAIL, "devices.by_path.unreadable", "%s -> %s: %s%s", path,
			       target[0] ? target : "?", strerror(-err),
			       err == -ENOENT ? " (a dangling link: the node it names is not there)" : "");
		result_remedy(r, "%s", by_path_mount);
	} else if (!S_ISCHR(st.st_mode)) {
		result_finding(r, STATUS_FAIL, "devices.by_path.not_char_device",
			       "%s -> %s leads to %s, expected the character device %s (%u:%u)", path,
			       target[0] ? target : "?", devices_node_kind(&st), n->name, n->major, n->minor);
		result_remedy(r, "%s", by_path_mount);
	} else if (n->has_dev && st.st_rdev != makedev(n->major, n->minor)) {
		const char *other_node = NULL;
		const struct gpu_view *other = devices_owner_of(s, st.st_rdev, &other_node);
		char whose[96] = "";
		if (other)
			snprintf(whose, sizeof(whose), " (%s of %s)", other_node, other->gpu->bdf);
		result_finding(r, STATUS_FAIL, "devices.by_path.wrong_node",
			       "%s -> %s leads to %u:%u%s, expected %s %u:%u of %s", path, target[0] ? target : "?",
			       major(st.st_rdev), minor(st.st_rdev), whose, n->name, n->major, n->minor, g->bdf);
		result_remedy(r, "the links must come from the same host as the nodes: %s", by_path_mount);
	}
	free(path);
	return exists;
}

void devices_run_by_path(const struct context *ctx, void *state, struct result *r)
{
	struct devices_state *s = state;
	const char *policy = key_str_for(ctx->spec, "devices.by_path", ctx_is_healthcheck(ctx));
	if (strcmp(policy, "ignore") == 0) {
		result_set(r, STATUS_SKIP, "devices.by_path is ignore");
		return;
	}
	if (!devices_need_gpus(s, r))
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
				result_finding(r, STATUS_WARN, "devices.by_path.not_a_gpu",
					       "%s/%s names %s, which sysfs does not list as a GPU", dir, entry, bdf);
		}
	}
	if (!dir_err && d.error && entries == 0)
		dir_err = d.error;
	size_t intel = 0, linked = 0;
	for (size_t i = 0; i < s->count; i++) {
		const struct gpu_view *v = &s->views[i];
		const struct drm_gpu *g = v->gpu;
		if (!v->present || !vendor_needs_by_path(g->vendor))
			continue;
		intel++;
		if (entries == 0) {
			if (g->render.has_dev && g->render.minor >= DRM_RENDER_MINOR_FALLBACK_END)
				result_finding(
					r, STATUS_FAIL, "devices.by_path.minor_out_of_range",
					"%s of %s has minor %u: without by-path links the Intel driver only tries "
					"renderD128..renderD191, so this GPU is invisible to it",
					g->render.name, g->bdf, g->render.minor);
			continue;
		}
		/* by-path is in use: a GPU without its -render link is invisible */
		if (g->render.name[0] &&
		    check_link(ctx, s, dir, d.fd, plain_dir, v, &g->render, "render", STATUS_FAIL, r))
			linked++;
		if (g->card.name[0])
			check_link(ctx, s, dir, d.fd, plain_dir, v, &g->card, "card", missing, r);
	}
	if (intel == 0) {
		result_set(r, STATUS_SKIP, "by-path links matter to the Intel driver only; no Intel GPU here");
	} else if (entries == 0) {
		result_finding(r, missing, "devices.by_path.no_folder",
			       "%s %s: the Intel driver falls back to opening renderD128..renderD191, "
			       "and oneCCL fails (init_device_fds: opendir failed)",
			       dir, dir_err ? strerror(dir_err) : "is empty");
		result_remedy(r, "%s", by_path_mount);
		result_set(r, r->status, "%s is %s (devices.by_path: %s)", dir,
			   dir_err == ENOENT ? "missing"
			   : dir_err         ? strerror(dir_err)
					     : "empty",
			   policy);
	} else if (r->status != STATUS_PASS) {
		result_set(r, r->status, "%zu %s with the links under %s", result_finding_count(r),
			   count_noun(result_finding_count(r), "problem", "problems"), dir);
	} else {
		result_set(r, STATUS_PASS, "%zu of %zu Intel %s reachable through %s", linked, intel,
			   count_noun(intel, "GPU", "GPUs"), dir);
	}
	if (opened)
		dirents_close(&d);
	free(dir);
}
