/* Check group `devices`: not built yet (see its issue). */
#include "groups.h"

static const struct spec_key devices_keys[] = {
	{ "devices", SPEC_MAP, SCALAR_STR, NULL, "the devices section" },
	{ NULL, 0, 0, NULL, NULL },
};

static const struct check_def devices_checks[] = {
	{ NULL, NULL, NULL, false, NULL },
};

const struct check_group devices_group = {
	.name = "devices",
	.description = "devices",
	.spec_keys = devices_keys,
	.checks = devices_checks,
};
