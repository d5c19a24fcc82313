/* Level Zero device visibility from the environment, computed the way the
 * Intel compute-runtime does it: ExecutionEnvironment::parseAffinityMask()
 * and setDeviceHierarchyMode() in compute-runtime's
 * shared/source/execution_environment/execution_environment.cpp, numbers read
 * by StringHelpers::toUint32t() (std::stoul(s, nullptr, 0)) of
 * shared/source/helpers/string_helpers.h. The Level Zero specification's
 * programming guide (core/PROG.html, "Affinity Mask", "Device Hierarchy")
 * describes the variables; where it and the driver differ (it names FLAT the
 * default), the driver's code is what runs, and is what is followed here. */
#ifndef GPUGATE_AFFINITY_H
#define GPUGATE_AFFINITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AFFINITY_MAX_GPUS  64
#define AFFINITY_MAX_TILES 64
#define AFFINITY_MAX_NOTES 16

enum hierarchy { HIERARCHY_FLAT = 0, HIERARCHY_COMPOSITE, HIERARCHY_COMBINED };

/* The hierarchy the driver uses when ZE_FLAT_DEVICE_HIERARCHY is unset or
 * not one of its three words: GfxCoreHelper::getDefaultDeviceHierarchy() of
 * the first GPU, FLAT for Xe HPC (Data Center GPU Max, PCI ids in
 * shared/source/xe_hpc_core/pvc/device_ids_configs_pvc.h), COMPOSITE for
 * every other family (shared/source/helpers/gfx_core_helper_base.inl). */
enum hierarchy hierarchy_default(unsigned pci_device_id);
/* ZE_FLAT_DEVICE_HIERARCHY as the driver compares it: exactly "FLAT",
 * "COMPOSITE" or "COMBINED" (strcmp); anything else, unset included, is the
 * default. Returns whether value was one of the three. */
bool hierarchy_parse(const char *value, enum hierarchy family_default, enum hierarchy *out);
const char *hierarchy_name(enum hierarchy h);

/* Why the driver ignored one entry of the mask (a warning for the gate). */
struct affinity_note {
	char text[160];
};

struct affinity_result {
	bool filtered; /* false: unset, empty or "default": no filter at all */
	bool aborts;   /* std::stoul throws on an entry: zeInit terminates the program */
	char abort_reason[160];
	size_t gpus;    /* GPUs with at least one tile left visible */
	size_t devices; /* what zeDeviceGet returns: tiles under FLAT/COMBINED, GPUs under COMPOSITE */
	bool visible[AFFINITY_MAX_GPUS];
	uint64_t tiles_on[AFFINITY_MAX_GPUS]; /* the visible tiles of each GPU, one bit each */
	size_t note_count; /* entries the driver skipped, said in notes (at most AFFINITY_MAX_NOTES kept) */
	struct affinity_note notes[AFFINITY_MAX_NOTES];
};

/* Applies ZE_AFFINITY_MASK (NULL when unset) to `count` GPUs, in the order
 * the driver numbers them (PCI bus order), tiles[i] being the tiles of GPU
 * i (1 for a single-tile GPU). Fills out; never fails. */
void affinity_apply(const char *mask, enum hierarchy h, const unsigned *tiles, size_t count,
		    struct affinity_result *out);
/* Whether affinity_apply's answer depends on the GPUs' tile counts: the mask
 * filters, or every tile is a device (FLAT, COMBINED). Where it does not,
 * tiles may be all 1 (counting them reads sysfs, a folder per GPU). */
bool affinity_needs_tiles(const char *mask, enum hierarchy h);

#endif
