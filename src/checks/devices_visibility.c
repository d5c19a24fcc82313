/* devices.visibility: the GPUs the runtime will show after the environment's
 * selectors, computed the way the runtime computes them: Level Zero's
 * ZE_AFFINITY_MASK and ZE_FLAT_DEVICE_HIERARCHY (src/lib/affinity.c, after
 * the Intel compute-runtime), CUDA's CUDA_VISIBLE_DEVICES (below, after
 * NVIDIA's documentation). Part of the devices group (devices.c). Where the
 * runtime silently skips an entry, the check warns and says what the runtime
 * will do; it fails only when too few GPUs are left, or the runtime would
 * stop the program. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/affinity.h"
#include "../lib/util.h"
#include "devices.h"

static void note_other_selectors(const struct context *ctx, struct result *r)
{
	const char *cuda = ctx_getenv(ctx, "CUDA_VISIBLE_DEVICES");
	const char *oneapi = ctx_getenv(ctx, "ONEAPI_DEVICE_SELECTOR");
	if (cuda)
		result_finding(r, STATUS_PASS,
			       "CUDA_VISIBLE_DEVICES='%.200s' is set: it limits CUDA devices, not Level Zero", cuda);
	if (oneapi)
		result_finding(r, STATUS_PASS,
			       "ONEAPI_DEVICE_SELECTOR='%.200s' is set: SYCL programs see only the devices it selects",
			       oneapi);
}

static const char *plural(size_t n)
{
	return n == 1 ? "" : "s";
}

/* CUDA ------------------------------------------------------------------- */

/* CUDA_VISIBLE_DEVICES, as NVIDIA documents it (CUDA C++ Programming Guide,
 * "CUDA Environment Variables"; MPS guide, "CUDA_VISIBLE_DEVICES"):
 * - a comma-separated list of device indices, or of GPU UUIDs as
 *   nvidia-smi -L prints them ("GPU-8932f937-d72c-..."), which may be
 *   shortened to any prefix (with "GPU-") that names one GPU, or of MIG
 *   instances ("MIG-<UUID>", or "MIG-GPU-<UUID>/<GI>/<CI>" before R470);
 * - devices are enumerated in the order of the list; "if one of the indices
 *   is invalid, only the devices whose index precedes the invalid index are
 *   visible" (0,2,-1,1 shows 0 and 2), so the list ends at its first entry
 *   that names no device, and an empty value shows none;
 * - an index is read like strtoul ("1gpu2" is 1), a UUID prefix is compared
 *   as written (case matters), and a list that names one device twice shows
 *   no device at all (what PyTorch's torch/cuda/__init__.py
 *   _parse_visible_devices() and _transform_uuid_to_ordinals() model after
 *   the driver). */
struct cuda_pick {
	size_t count;                        /* devices CUDA enumerates */
	int index[AFFINITY_MAX_GPUS];        /* GPU of each, in list order; -1 for a MIG instance not matched */
	const char *text[AFFINITY_MAX_GPUS]; /* each entry as written (into the variable) */
	size_t len[AFFINITY_MAX_GPUS];
	bool duplicate; /* one device named twice: CUDA shows none */
	char stop[200]; /* why the list ended early, "" when it did not */
};

/* strtoul's reading of an index: leading blanks, an optional sign, digits;
 * trailing text ignored. -1 when there are no digits or the sign is '-'. */
static long cuda_index(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && isspace((unsigned char)s[i]))
		i++;
	bool negative = false;
	if (i < n && (s[i] == '+' || s[i] == '-'))
		negative = s[i++] == '-';
	size_t digits = i;
	long v = 0;
	while (i < n && s[i] >= '0' && s[i] <= '9' && v < 100000)
		v = v * 10 + (s[i++] - '0');
	if (i == digits || negative)
		return -1;
	return v;
}

/* Which GPU a UUID prefix names: its position, -1 for none, -2 when more
 * than one GPU starts so. */
static int uuid_owner(const struct gpu_view *const *gpus, size_t n, const char *prefix, size_t len)
{
	int found = -1;
	for (size_t i = 0; i < n; i++) {
		if (!gpus[i]->uuid[0] || strlen(gpus[i]->uuid) < len || strncmp(gpus[i]->uuid, prefix, len) != 0)
			continue;
		if (found >= 0)
			return -2;
		found = (int)i;
	}
	return found;
}

static void cuda_pick(const char *var, const struct gpu_view *const *gpus, size_t n, bool uuids_known,
		      struct cuda_pick *p)
{
	memset(p, 0, sizeof(*p));
	const char *mode = strncmp(var, "GPU-", 4) == 0 ? "GPU-" : strncmp(var, "MIG-", 4) == 0 ? "MIG-" : NULL;
	const char *s = var;
	for (;;) {
		const char *comma = strchr(s, ',');
		size_t len = comma ? (size_t)(comma - s) : strlen(s);
		int gpu = -1;
		if (!mode) {
			long idx = cuda_index(s, len);
			if (idx < 0) {
				snprintf(p->stop, sizeof(p->stop), "'%.*s' is not a device index",
					 (int)(len > 40 ? 40 : len), s);
				break;
			}
			if ((size_t)idx >= n) {
				snprintf(p->stop, sizeof(p->stop),
					 "index %ld names no GPU (this container has %zu: 0..%zu)", idx, n,
					 n ? n - 1 : 0);
				break;
			}
			gpu = (int)idx;
		} else if (strncmp(s, mode, 4) != 0) {
			snprintf(p->stop, sizeof(p->stop), "'%.*s' is not a %s entry like the first",
				 (int)(len > 40 ? 40 : len), s, mode);
			break;
		} else if (!uuids_known) {
			/* nothing to match a UUID against: each entry is counted,
			 * up to the GPUs there are */
			if (p->count >= n) {
				snprintf(p->stop, sizeof(p->stop), "'%.*s' is one entry more than there are GPUs (%zu)",
					 (int)(len > 40 ? 40 : len), s, n);
				break;
			}
		} else if (mode[0] == 'G' || strncmp(s, "MIG-GPU-", 8) == 0) {
			/* a GPU UUID, or the GPU part of an old-style MIG entry */
			const char *u = mode[0] == 'G' ? s : s + 4;
			size_t ulen = mode[0] == 'G' ? len : strcspn(u, "/,");
			gpu = uuid_owner(gpus, n, u, ulen);
			if (gpu == -2) {
				snprintf(p->stop, sizeof(p->stop), "'%.*s' is the start of more than one GPU's UUID",
					 (int)(ulen > 60 ? 60 : ulen), u);
				break;
			}
			if (gpu < 0) {
				snprintf(p->stop, sizeof(p->stop), "'%.*s' is the UUID of no GPU here",
					 (int)(ulen > 60 ? 60 : ulen), u);
				break;
			}
		}
		/* a new-style MIG-<UUID> names an instance, whose UUID the
		 * driver's /proc files do not list: counted, not matched */
		for (size_t k = 0; k < p->count; k++)
			if ((gpu >= 0 && p->index[k] == gpu) || (p->len[k] == len && strncmp(p->text[k], s, len) == 0))
				p->duplicate = true;
		if (p->count < AFFINITY_MAX_GPUS) {
			p->text[p->count] = s;
			p->len[p->count] = len;
			p->index[p->count++] = gpu;
		}
		if (!comma)
			break;
		s = comma + 1;
	}
	if (p->duplicate)
		p->count = 0;
}

static void run_visibility_cuda(const struct context *ctx, struct devices_state *s, struct result *r)
{
	const struct gpu_view *gpus[AFFINITY_MAX_GPUS];
	size_t n = 0;
	bool uuids_known = true;
	for (size_t i = 0; i < s->count && n < AFFINITY_MAX_GPUS; i++) {
		if (!s->views[i].present || s->views[i].gpu->vendor != PCI_VENDOR_NVIDIA)
			continue;
		gpus[n++] = &s->views[i];
		uuids_known &= s->views[i].uuid[0] != '\0';
	}
	long min_gpus = spec_int(ctx->spec, "devices.min_gpus", 1);
	const char *var = ctx_getenv(ctx, "CUDA_VISIBLE_DEVICES");
	json_t *uuids = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(uuids, json_text(gpus[i]->uuid));
	json_object_set_new(result_details(r), "gpu_uuids", uuids);
	if (!var) {
		result_set(r, STATUS_PASS, "CUDA_VISIBLE_DEVICES is unset: CUDA sees all %zu NVIDIA GPU%s", n,
			   plural(n));
		return;
	}
	struct cuda_pick p;
	bool by_uuid = strncmp(var, "GPU-", 4) == 0 || strncmp(var, "MIG-", 4) == 0;
	cuda_pick(var, gpus, n, uuids_known, &p);
	if (by_uuid && !uuids_known)
		result_finding(r, STATUS_WARN,
			       "the UUIDs of the GPUs are not readable (/proc/driver/nvidia/gpus/*/information): "
			       "each UUID entry is counted as one GPU, unmatched");
	json_object_set_new(result_details(r), "cuda_devices", json_integer((json_int_t)p.count));
	if (p.duplicate) {
		result_set(r, STATUS_FAIL,
			   "CUDA_VISIBLE_DEVICES='%.200s' names one GPU twice: CUDA then shows no GPU at all", var);
		result_remedy(r, "name each GPU once: CUDA_VISIBLE_DEVICES=0,1 (or unset it)");
		return;
	}
	if (p.count == 0) {
		result_set(r, STATUS_FAIL, "CUDA_VISIBLE_DEVICES='%.200s' hides every GPU from CUDA%s%s", var,
			   p.stop[0] ? ": its first entry fails: " : "", p.stop);
		result_remedy(
			r,
			"unset CUDA_VISIBLE_DEVICES, or list GPUs that exist here: indices 0..%zu, or UUIDs from nvidia-smi -L",
			n ? n - 1 : 0);
		return;
	}
	/* CUDA numbers GPUs fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID
	 * (CUDA C++ Programming Guide, "CUDA Environment Variables"): an index
	 * names a PCI address only then, or when every GPU is the same model */
	const char *order = ctx_getenv(ctx, "CUDA_DEVICE_ORDER");
	bool pci_order = order && strcmp(order, "PCI_BUS_ID") == 0;
	bool same_model = n > 0 && gpus[0]->model[0];
	for (size_t i = 1; i < n && same_model; i++)
		same_model = strcmp(gpus[i]->model, gpus[0]->model) == 0;
	struct strbuf names = STRBUF_INIT;
	for (size_t k = 0; k < p.count; k++) {
		if (p.index[k] < 0)
			sb_printf(&names, "%s%s", k ? ", " : "",
				  strncmp(var, "MIG-", 4) == 0 ? "a MIG instance" : "a GPU by UUID");
		else if (by_uuid || pci_order || same_model)
			sb_printf(&names, "%s%s", k ? ", " : "", gpus[p.index[k]]->gpu->bdf);
		else
			sb_printf(&names, "%sdevice %d", k ? ", " : "", p.index[k]);
	}
	if (!by_uuid && !pci_order && !same_model)
		sb_puts(&names,
			" (CUDA numbers these GPUs fastest first: set CUDA_DEVICE_ORDER=PCI_BUS_ID to number them by PCI address)");
	if (p.stop[0])
		result_finding(r, STATUS_WARN,
			       "CUDA_VISIBLE_DEVICES='%.200s': the list ends at the entry after the %zu%s: %s, so CUDA "
			       "ignores it and every entry after it; %zu of %zu GPU%s stay visible",
			       var, p.count,
			       p.count == 1   ? "st"
			       : p.count == 2 ? "nd"
			       : p.count == 3 ? "rd"
					      : "th",
			       p.stop, p.count, n, plural(n));
	if ((long)p.count < min_gpus) {
		result_set(
			r, STATUS_FAIL,
			"CUDA_VISIBLE_DEVICES='%.200s' leaves %zu GPU%s visible to CUDA, the spec requires at least %ld",
			var, p.count, plural(p.count), min_gpus);
		result_remedy(
			r,
			"list more GPUs in CUDA_VISIBLE_DEVICES (indices 0..%zu) or unset it, or lower devices.min_gpus",
			n ? n - 1 : 0);
	} else {
		result_set(r, r->status, "CUDA_VISIBLE_DEVICES='%.200s': CUDA sees %zu of %zu NVIDIA GPU%s: %s", var,
			   p.count, n, plural(n), names.buf);
	}
	sb_release(&names);
}

/* Level Zero -------------------------------------------------------------- */

static void run_visibility_ze(const struct context *ctx, struct devices_state *s, struct result *r)
{
	note_other_selectors(ctx, r);
	/* The GPUs Level Zero will number, in PCI order (the driver sorts them:
	 * ExecutionEnvironment::sortNeoDevices()). */
	const struct gpu_view *gpus[AFFINITY_MAX_GPUS];
	unsigned tiles[AFFINITY_MAX_GPUS];
	size_t n = 0;
	for (size_t i = 0; i < s->count && n < AFFINITY_MAX_GPUS; i++)
		if (s->views[i].present && s->views[i].gpu->vendor == PCI_VENDOR_INTEL) {
			gpus[n] = &s->views[i];
			tiles[n] = drm_gpu_tiles(ctx->root, s->views[i].gpu);
			n++;
		}
	if (n == 0) {
		result_set(r, STATUS_SKIP, "no Intel GPU for Level Zero to see");
		return;
	}
	/* ZE_AFFINITY_MASK is a release variable of the driver's debug settings,
	 * read with Level Zero's prefixes first: NEO_L0_, NEO_, then none; the
	 * first one set wins (EnvironmentVariableReader::getSetting() in
	 * shared/source/os_interface/debug_env_reader.cpp, validL0Prefixes in
	 * level_zero/core/source/helpers/api_specific_config_l0.cpp) */
	static const char *const mask_names[] = { "NEO_L0_ZE_AFFINITY_MASK", "NEO_ZE_AFFINITY_MASK",
						  "ZE_AFFINITY_MASK" };
	const char *mask = NULL, *mask_name = "ZE_AFFINITY_MASK";
	for (size_t i = 0; i < 3 && !mask; i++)
		if ((mask = ctx_getenv(ctx, mask_names[i])))
			mask_name = mask_names[i];
	const char *plain = ctx_getenv(ctx, "ZE_AFFINITY_MASK");
	if (mask && plain && mask != plain && strcmp(mask_name, "ZE_AFFINITY_MASK") != 0)
		result_finding(r, STATUS_WARN,
			       "%s='%.100s' is set: the driver uses it and ignores ZE_AFFINITY_MASK='%.100s'",
			       mask_name, mask, plain);
	json_object_set_new(result_details(r), "affinity_mask_variable", json_string(mask_name));
	const char *hier_env = ctx_getenv(ctx, "ZE_FLAT_DEVICE_HIERARCHY");
	enum hierarchy family = hierarchy_default(gpus[0]->gpu->device), hier;
	if (!hierarchy_parse(hier_env, family, &hier) && hier_env)
		result_finding(
			r, STATUS_WARN,
			"ZE_FLAT_DEVICE_HIERARCHY='%.64s' is not FLAT, COMPOSITE or COMBINED (the driver compares "
			"them exactly, upper case): it uses its default for this GPU, %s",
			hier_env, hierarchy_name(hier));
	struct affinity_result *a = xmalloc(sizeof(*a));
	affinity_apply(mask, hier, tiles, n, a);
	json_object_set_new(result_details(r), "hierarchy", json_string(hierarchy_name(hier)));
	json_object_set_new(result_details(r), "level_zero_devices", json_integer((json_int_t)a->devices));
	if (a->aborts) {
		result_set(r, STATUS_FAIL, "%s='%.100s': %s: the driver stops the program in zeInit", mask_name, mask,
			   a->abort_reason);
		result_remedy(
			r, "fix ZE_AFFINITY_MASK: comma-separated device indexes N (or N.M, a tile, under COMPOSITE), "
			   "e.g. ZE_AFFINITY_MASK=0,1; or unset it to see every GPU");
		free(a);
		return;
	}
	for (size_t i = 0; i < a->note_count && i < AFFINITY_MAX_NOTES; i++)
		result_finding(r, STATUS_WARN, "%s entry %s; %zu of %zu GPU%s stay visible (%s hierarchy)", mask_name,
			       a->notes[i].text, a->gpus, n, plural(n), hierarchy_name(hier));
	if (a->note_count > AFFINITY_MAX_NOTES)
		result_finding(r, STATUS_WARN, "%s: %zu more entries the driver ignores", mask_name,
			       a->note_count - AFFINITY_MAX_NOTES);
	if (!a->filtered) {
		result_set(r, r->status, "%s is %s: Level Zero sees all %zu Intel GPU%s (%s hierarchy, %zu device%s)",
			   mask_name, mask ? "empty (no filter)" : "unset", n, plural(n), hierarchy_name(hier),
			   a->devices, plural(a->devices));
		free(a);
		return;
	}
	struct strbuf shown = STRBUF_INIT, hidden = STRBUF_INIT;
	for (size_t i = 0; i < n; i++) {
		struct strbuf *sb = a->visible[i] ? &shown : &hidden;
		sb_printf(sb, "%s%s", sb->len ? ", " : "", gpus[i]->gpu->bdf);
	}
	if (hidden.len)
		result_finding(r, STATUS_PASS, "hidden by %s: %s", mask_name, hidden.buf);
	long min_gpus = spec_int(ctx->spec, "devices.min_gpus", 1);
	if (a->gpus == 0) {
		result_set(r, STATUS_FAIL, "%s='%.100s' hides every GPU (%s hierarchy, %zu GPU%s)", mask_name, mask,
			   hierarchy_name(hier), n, plural(n));
		result_remedy(r, "set ZE_AFFINITY_MASK to devices that exist, or unset it");
	} else if ((long)a->gpus < min_gpus) {
		result_set(r, STATUS_FAIL, "%s='%.100s' leaves %zu GPU%s visible, the spec requires at least %ld",
			   mask_name, mask, a->gpus, plural(a->gpus), min_gpus);
		result_remedy(r, "widen ZE_AFFINITY_MASK or unset it, or lower devices.min_gpus");
	} else {
		result_set(r, r->status, "%s='%.100s' (%s): Level Zero sees %zu of %zu GPU%s (%zu device%s): %s",
			   mask_name, mask, hierarchy_name(hier), a->gpus, n, plural(n), a->devices, plural(a->devices),
			   shown.buf);
	}
	sb_release(&shown);
	sb_release(&hidden);
	free(a);
}

void devices_run_visibility(const struct context *ctx, void *state, struct result *r)
{
	struct devices_state *s = state;
	if (!devices_need_gpus(s, r))
		return;
	if (s->vendor.id == PCI_VENDOR_NVIDIA)
		run_visibility_cuda(ctx, s, r);
	else
		run_visibility_ze(ctx, s, r);
}
