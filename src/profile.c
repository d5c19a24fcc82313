/* Built-in profiles for every vendor, and specs that extend them.
 * A profile (checks/NAME.yaml) holds what every GPU vendor shares; the pins
 * of one vendor's driver stack (checks/vendor/VENDOR.yaml, `packages:`) are
 * laid over it only for that vendor, so an NVIDIA container is not failed
 * for lacking the Intel compute runtime. Layers are struct spec's base
 * chain: a section the upper spec names replaces the lower one's whole. */
#include "profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "lib/yaml_prepared.h"
#include "registry.h"
#include "vendor/vendor.h"

/* Vendors with a driver stack (src/vendor/), by their exact name: the one
 * that names checks/vendor/NAME.yaml. */
bool vendor_known(const char *name)
{
	const struct vendor *v = vendor_by_name(name);
	return vendor_has_stack(v) && strcmp(v->name, name) == 0;
}

const char *vendor_detect(const char *root)
{
	return vendor_detect_at(root)->name;
}

int profile_load(struct spec *spec, const char *name, const char *vendor, struct spec_error *err)
{
	/* the documents parsed at build time (lib/yaml_prepared.h) */
	const struct yaml_prepared *f = yaml_prepared_find(yaml_prepared_profiles, name);
	const struct yaml_prepared *pins = vendor ? yaml_prepared_find(yaml_prepared_vendor_pins, vendor) : NULL;
	char *label = xasprintf("profile %s", name);
	int rc;
	if (!f) {
		memset(spec, 0, sizeof(*spec));
		snprintf(err->msg, sizeof(err->msg), "no built-in profile '%s' (healthcheck, ci, validate)", name);
		rc = -1;
	} else if (!pins) {
		rc = spec_load_prepared(spec, label, f, err);
	} else {
		struct spec *base = xcalloc(1, sizeof(*base));
		rc = spec_load_prepared(base, label, f, err);
		if (rc == 0) {
			char *pins_label =
				xasprintf("profile %s (%s pins, checks/vendor/%s.yaml)", name, vendor, vendor);
			rc = spec_load_prepared(spec, pins_label, pins, err);
			free(pins_label);
			spec->base = base; /* owned from here, freed with spec */
		} else {
			spec_free(base);
			free(base);
			memset(spec, 0, sizeof(*spec));
		}
	}
	free(label);
	return rc;
}

int profile_load_file(struct spec *spec, const char *path, const char *vendor, struct spec_error *err)
{
	if (spec_load_file(spec, &registry_schema, path, err) < 0)
		return -1;
	/* validated at load against the profile names (registry.c, "extends") */
	const char *name = spec_str(spec, "extends", NULL);
	if (!name)
		return 0;
	struct spec *base = xcalloc(1, sizeof(*base));
	if (profile_load(base, name, vendor, err) < 0) {
		char why[sizeof(err->msg)];
		snprintf(why, sizeof(why), "%s", err->msg);
		spec_free(base);
		free(base);
		return spec_error_at(err, spec, spec_get(spec, "extends"), "extends %s: %s", name, why);
	}
	spec->base = base;
	return 0;
}
