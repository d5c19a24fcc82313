/* The table of vendors and the lookups over it (vendor.h). */
#include "vendor.h"

#include "../lib/drm_nodes.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

const struct vendor *const vendors[] = { &nvidia_vendor, &intel_vendor, &amd_vendor, NULL };

const struct vendor *vendor_by_pci(unsigned pci_id)
{
	for (size_t i = 0; vendors[i]; i++)
		if (vendors[i]->pci_id == pci_id)
			return vendors[i];
	return NULL;
}

const struct vendor *vendor_by_name(const char *name)
{
	for (size_t i = 0; name && vendors[i]; i++)
		if (strcasecmp(vendors[i]->name, name) == 0)
			return vendors[i];
	return NULL;
}

const struct vendor *vendor_fallback(void)
{
	return &intel_vendor;
}

/* Two or three lookups, so the health check stays in the milliseconds. */
const struct vendor *vendor_detect_at(const char *root)
{
	for (size_t i = 0; vendors[i]; i++)
		for (size_t m = 0; vendors[i]->marks && vendors[i]->marks[m]; m++) {
			char path[4096];
			snprintf(path, sizeof(path), "%s%s", root ? root : "", vendors[i]->marks[m]);
			if (access(path, F_OK) == 0)
				return vendors[i];
		}
	return vendor_fallback();
}

const char *vendor_label(unsigned pci_id)
{
	const struct vendor *v = vendor_by_pci(pci_id);
	return v ? v->label : NULL;
}

enum vendor_nodes vendor_nodes_of(unsigned pci_id)
{
	const struct vendor *v = vendor_by_pci(pci_id);
	return v ? v->nodes : VENDOR_NODES_DRM;
}

enum vendor_visibility vendor_visibility_of(unsigned pci_id)
{
	const struct vendor *v = vendor_by_pci(pci_id);
	return v ? v->visibility : VENDOR_VISIBLE_NONE;
}

bool vendor_needs_by_path(unsigned pci_id)
{
	const struct vendor *v = vendor_by_pci(pci_id);
	return v && v->by_path;
}

bool vendor_maps_dev_char(unsigned pci_id)
{
	const struct vendor *v = vendor_by_pci(pci_id);
	return v && v->dev_char_map;
}

bool vendor_has_stack(const struct vendor *v)
{
	return v && v->packages;
}

const char *vendor_pass_in_fix(const struct vendor *v)
{
	return v && v->pass_in_fix ? v->pass_in_fix : vendor_fallback()->pass_in_fix;
}

const char *vendor_sysfs_use(const struct vendor *v)
{
	/* drm_scan (lib/drm_nodes.c) finds each GPU's PCI device and bound
	 * driver there, whatever the vendor */
	return v && v->sysfs_use ? v->sysfs_use
				 : "gpugate reads each GPU's PCI device and bound kernel driver from /sys/class/drm "
				   "and /sys/bus/pci";
}

size_t vendor_scan_proc(const char *root, struct drm_scan *scan, const struct vendor *v)
{
	size_t added = 0;
	for (size_t i = 0; vendors[i]; i++)
		if ((!v || v == vendors[i]) && vendors[i]->proc_gpus)
			added += drm_scan_add_proc(root, scan, vendors[i]->proc_gpus, vendors[i]->pci_id,
						   vendors[i]->drivers[0]);
	return added;
}

bool vendor_owns_package(const struct vendor *v, const char *package)
{
	for (size_t i = 0; v && v->packages && v->packages[i]; i++)
		if (fnmatch(v->packages[i], package, 0) == 0)
			return true;
	return false;
}
