/* `gpugate list`: every check with a one-line description, and which of
 * them each built-in profile runs. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "lib/embedded.h"
#include "profile.h"
#include "registry.h"
#include "spec.h"

static void list_profile(const struct embedded_file *f)
{
	struct spec spec;
	struct spec_error err;
	printf("  %-12s", f->name);
	/* with this machine's vendor pins, as `gpugate check` would run it */
	if (profile_load(&spec, f->name, vendor_detect(NULL), &err) < 0) {
		printf(" (broken: %s)\n", err.msg);
		spec_free(&spec);
		return;
	}
	const char *sep = " ";
	for (const struct check_group *const *g = registry_groups; *g; g++) {
		for (const struct check_def *c = (*g)->checks; c->id; c++) {
			if (!registry_check_enabled(&spec, *g, c))
				continue;
			printf("%s%s", sep, c->id);
			sep = ", ";
		}
	}
	printf("\n");
	spec_free(&spec);
}

int cmd_list(int argc, char **argv)
{
	(void)argv;
	if (argc > 1)
		return usage_error("list takes no arguments");
	printf("checks:\n");
	for (const struct check_group *const *g = registry_groups; *g; g++)
		for (const struct check_def *c = (*g)->checks; c->id; c++)
			printf("  %-24s %s%s\n", c->id, c->description, c->expensive ? " [expensive]" : "");
	printf("\nprofiles (gpugate check --profile NAME):\n");
	for (const struct embedded_file *f = embedded_profiles; f->name; f++)
		list_profile(f);
	return EXIT_HEALTHY;
}
