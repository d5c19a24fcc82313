/* Check group `runtime`: not built yet (see its issue). */
#include "groups.h"

static const struct spec_key runtime_keys[] = {
	{ "runtime", SPEC_MAP, SCALAR_STR, NULL, "the runtime section" },
	{ NULL, 0, 0, NULL, NULL },
};

static const struct check_def runtime_checks[] = {
	{ NULL, NULL, NULL, false, NULL },
};

const struct check_group runtime_group = {
	.name = "runtime",
	.description = "runtime",
	.spec_keys = runtime_keys,
	.checks = runtime_checks,
};
