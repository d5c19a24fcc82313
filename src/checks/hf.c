/* Check group `hf`: not built yet (see its issue). */
#include "groups.h"

static const struct spec_key hf_keys[] = {
	{ "hf", SPEC_MAP, SCALAR_STR, NULL, "the hf section" },
	{ NULL, 0, 0, NULL, NULL },
};

static const struct check_def hf_checks[] = {
	{ NULL, NULL, NULL, false, NULL },
};

const struct check_group hf_group = {
	.name = "hf",
	.description = "hf",
	.spec_keys = hf_keys,
	.checks = hf_checks,
};
