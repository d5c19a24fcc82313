/* devices.visibility: the GPUs the runtime will show after the environment's
 * selectors, computed the way the runtime computes them: Level Zero's
 * ZE_AFFINITY_MASK and ZE_FLAT_DEVICE_HIERARCHY (src/lib/affinity.c, after
 * the Intel compute-runtime), CUDA's CUDA_VISIBLE_DEVICES (below, after
 * NVIDIA's documentation). Part of the devices group (devices.c). Where the
 * runtime silently skips an entry, the check warns and says what the runtime
 * will do; it fails only when too few GPUs are left, or the runtime would
 * stop the program. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/affinity.h"
#include "../lib/util.h"
#include "../vendor/cuda_visible.h"
#include "../vendor/vendor.h"
#include "../registry.h"
#include "devices.h"

static void note_other_selectors(const struct context *ctx, struct result *r)
{
	const char *cuda = ctx_getenv(ctx, "CUDA_VISIBLE_DEVICES");
	const char *oneapi = ctx_getenv(ctx, "ONEAPI_DEVICE_SELECTOR");
	if (cuda)
		result_finding(r, STATUS_PASS, "devices.visibility.cuda_selector",
			       "CUDA_VISIBLE_DEVICES='%.200s' is set: it limits CUDA devices, not Level Zero", cuda);
	if (oneapi)
		result_finding(r, STATUS_PASS, "devices.visibility.oneapi_selector",
			       "ONEAPI_DEVICE_SELECTOR='%.200s' is set: SYCL programs see only the devices it selects",
			       oneapi);
}

/* CUDA ------------------------------------------------------------------- */

/* CUDA_VISIBLE_DEVICES is read by vendor/cuda_visible.c, the parser the
 * probe session and the test driver share, decided against the real driver
 * (tests/vectors/cuda-visible-devices.tsv). */

static void run_visibility_cuda(const struct context *ctx, struct devices_state *s, struct result *r)
{
	const struct gpu_view *gpus[AFFINITY_MAX_GPUS];
	const char *uuid[AFFINITY_MAX_GPUS];
	size_t n = 0;
	bool uuids_known = true;
	for (size_t i = 0; i < s->count && n < AFFINITY_MAX_GPUS; i++) {
		if (!s->views[i].present || vendor_visibility_of(s->views[i].gpu->vendor) != VENDOR_VISIBLE_CUDA)
			continue;
		uuid[n] = s->views[i].uuid;
		gpus[n++] = &s->views[i];
		uuids_known &= s->views[i].uuid[0] != '\0';
	}
	long min_gpus = key_int(ctx->spec, "devices.min_gpus");
	const char *var = ctx_getenv(ctx, "CUDA_VISIBLE_DEVICES");
	json_t *uuids = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(uuids, json_text(gpus[i]->uuid));
	json_object_set_new(result_details(r), "gpu_uuids", uuids);
	if (!var) {
		result_set(r, STATUS_PASS, "CUDA_VISIBLE_DEVICES is unset: CUDA sees %s %zu NVIDIA %s",
			   count_noun(n, "the", "all"), n, count_noun(n, "GPU", "GPUs"));
		return;
	}
	struct cuda_visible p;
	cuda_visible_parse(var, uuids_known ? uuid : NULL, n, &p);
	bool by_uuid = p.by_uuid;
	if (by_uuid && !uuids_known)
		result_finding(r, STATUS_WARN, "devices.visibility.uuids_unreadable",
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
		if (p.gpu[k] < 0)
			sb_printf(&names, "%s%s", k ? ", " : "", p.mig ? "a MIG instance" : "a GPU by UUID");
		else if (by_uuid || pci_order || same_model)
			sb_printf(&names, "%s%s", k ? ", " : "", gpus[p.gpu[k]]->gpu->bdf);
		else
			sb_printf(&names, "%sdevice %d", k ? ", " : "", p.gpu[k]);
	}
	if (!by_uuid && !pci_order && !same_model)
		sb_puts(&names,
			" (CUDA numbers these GPUs fastest first: set CUDA_DEVICE_ORDER=PCI_BUS_ID to number them by PCI address)");
	if (p.stop[0])
		result_finding(r, STATUS_WARN, "devices.visibility.list_cut",
			       "CUDA_VISIBLE_DEVICES='%.200s': the list ends at the entry after the %zu%s: %s, so CUDA "
			       "ignores it and every entry after it; %zu of %zu %s stay visible",
			       var, p.count,
			       p.count == 1   ? "st"
			       : p.count == 2 ? "nd"
			       : p.count == 3 ? "rd"
					      : "th",
			       p.stop, p.count, n, count_noun(n, "GPU", "GPUs"));
	if ((long)p.count < min_gpus) {
		result_set(
			r, STATUS_FAIL,
			"CUDA_VISIBLE_DEVICES='%.200s' leaves %zu %s visible to CUDA, the spec requires at least %ld",
			var, p.count, count_noun(p.count, "GPU", "GPUs"), min_gpus);
		result_remedy(
			r,
			"list more GPUs in CUDA_VISIBLE_DEVICES (indices 0..%zu) or unset it, or lower devices.min_gpus",
			n ? n - 1 : 0);
	} else {
		result_set(r, r->status, "CUDA_VISIBLE_DEVICES='%.200s': CUDA sees %zu of %zu NVIDIA %s: %s", var,
			   p.count, n, count_noun(n, "GPU", "GPUs"), names.buf);
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
	size_t n = 0;
	for (size_t i = 0; i < s->count && n < AFFINITY_MAX_GPUS; i++)
		if (s->views[i].present && vendor_visibility_of(s->views[i].gpu->vendor) == VENDOR_VISIBLE_ZE_AFFINITY)
			gpus[n++] = &s->views[i];
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
		result_finding(r, STATUS_WARN, "devices.visibility.mask_overridden",
			       "%s='%.100s' is set: the driver uses it and ignores ZE_AFFINITY_MASK='%.100s'",
			       mask_name, mask, plain);
	json_object_set_new(result_details(r), "affinity_mask_variable", json_string(mask_name));
	const char *hier_env = ctx_getenv(ctx, "ZE_FLAT_DEVICE_HIERARCHY");
	enum hierarchy family = hierarchy_default(gpus[0]->gpu->device), hier;
	if (!hierarchy_parse(hier_env, family, &hier) && hier_env)
		result_finding(
			r, STATUS_WARN, "devices.visibility.bad_hierarchy",
			"ZE_FLAT_DEVICE_HIERARCHY='%.64s' is not FLAT, COMPOSITE or COMBINED (the driver compares "
			"them exactly, upper case): it uses its default for this GPU, %s",
			hier_env, hierarchy_name(hier));
	/* the tiles (a sysfs folder read per GPU) only where they change the answer */
	unsigned tiles[AFFINITY_MAX_GPUS];
	bool count_tiles = affinity_needs_tiles(mask, hier);
	for (size_t i = 0; i < n; i++)
		tiles[i] = count_tiles ? drm_gpu_tiles(ctx->root, gpus[i]->gpu) : 1;
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
		result_finding(r, STATUS_WARN, "devices.visibility.mask_entry",
			       "%s entry %s; %zu of %zu %s stay visible (%s hierarchy)", mask_name, a->notes[i].text,
			       a->gpus, n, count_noun(n, "GPU", "GPUs"), hierarchy_name(hier));
	if (a->note_count > AFFINITY_MAX_NOTES)
		result_finding(r, STATUS_WARN, "devices.visibility.mask_entries_more",
			       "%s: %zu more %s the driver ignores", mask_name, a->note_count - AFFINITY_MAX_NOTES,
			       count_noun(a->note_count - AFFINITY_MAX_NOTES, "entry", "entries"));
	if (!a->filtered) {
		result_set(r, r->status, "%s is %s: Level Zero sees %s %zu Intel %s (%s hierarchy, %zu %s)", mask_name,
			   mask ? "empty (no filter)" : "unset", count_noun(n, "the", "all"), n,
			   count_noun(n, "GPU", "GPUs"), hierarchy_name(hier), a->devices,
			   count_noun(a->devices, "device", "devices"));
		free(a);
		return;
	}
	struct strbuf shown = STRBUF_INIT, hidden = STRBUF_INIT;
	for (size_t i = 0; i < n; i++) {
		struct strbuf *sb = a->visible[i] ? &shown : &hidden;
		sb_printf(sb, "%s%s", sb->len ? ", " : "", gpus[i]->gpu->bdf);
	}
	if (hidden.len)
		result_finding(r, STATUS_PASS, "devices.visibility.hidden", "hidden by %s: %s", mask_name, hidden.buf);
	long min_gpus = key_int(ctx->spec, "devices.min_gpus");
	if (a->gpus == 0) {
		result_set(r, STATUS_FAIL, "%s='%.100s' hides every GPU (%s hierarchy, %zu %s)", mask_name, mask,
			   hierarchy_name(hier), n, count_noun(n, "GPU", "GPUs"));
		result_remedy(r, "set ZE_AFFINITY_MASK to devices that exist, or unset it");
	} else if ((long)a->gpus < min_gpus) {
		result_set(r, STATUS_FAIL, "%s='%.100s' leaves %zu %s visible, the spec requires at least %ld",
			   mask_name, mask, a->gpus, count_noun(a->gpus, "GPU", "GPUs"), min_gpus);
		result_remedy(r, "widen ZE_AFFINITY_MASK or unset it, or lower devices.min_gpus");
	} else {
		result_set(r, r->status, "%s='%.100s' (%s): Level Zero sees %zu of %zu %s (%zu %s): %s", mask_name,
			   mask, hierarchy_name(hier), a->gpus, n, count_noun(n, "GPU", "GPUs"), a->devices,
			   count_noun(a->devices, "device", "devices"), shown.buf);
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
	if (!s->vendor.any && vendor_visibility_of(s->vendor.id) == VENDOR_VISIBLE_CUDA)
		run_visibility_cuda(ctx, s, r);
	else
		run_visibility_ze(ctx, s, r);
}
