/* Every check group, one per file in src/checks/. */
#ifndef GPUGATE_GROUPS_H
#define GPUGATE_GROUPS_H

#include "../registry.h"

extern const struct check_group packages_group;
extern const struct check_group devices_group;
extern const struct check_group system_group;
extern const struct check_group hf_group;
extern const struct check_group runtime_group;

#endif
