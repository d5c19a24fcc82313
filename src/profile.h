/* The spec a run uses: a built-in profile under its vendor's pins, or a
 * file, which may start from a built-in profile (`extends: ci`). */
#ifndef GPUGATE_PROFILE_H
#define GPUGATE_PROFILE_H

#include "spec.h"

/* "intel" or "nvidia": the GPU vendor of ROOT (""/NULL: /), for the built-in
 * profiles' package pins and the devices check's default vendor. */
const char *vendor_detect(const char *root);
/* Whether name is a vendor --vendor accepts. */
bool vendor_known(const char *name);

/* Loads the built-in profile name ("healthcheck", "ci", "validate") with the
 * package pins of vendor (checks/vendor/VENDOR.yaml, where there is one). */
int profile_load(struct spec *spec, const char *name, const char *vendor, struct spec_error *err);
/* Loads the spec file path; with `extends: NAME` the file's sections are laid
 * over the built-in profile NAME (for vendor), each section whole. */
int profile_load_file(struct spec *spec, const char *path, const char *vendor, struct spec_error *err);

#endif
