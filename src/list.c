/* `gpugate list`: every check with a one-line description, and which of
 * them each built-in profile runs. `gpugate list --spec-keys`: every spec
 * key with its type and help, one per line, tab-separated; the man page's
 * spec section is generated from it (src/man/spec-keys.sh). */
#include <stdbool.h>
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
	/* what the profile is for (its description key), then what it runs */
	const char *what = spec_str(&spec, "description", NULL);
	if (what)
		printf(" %s:", what);
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

/* "string", "list", "map", "healthcheck|ci|validate", or several joined by
 * " or " where a key takes more than one shape. */
static void print_key_type(const struct spec_key *k)
{
	static const char *const scalar_names[] = {
		[SCALAR_STR] = "string", [SCALAR_BOOL] = "bool",       [SCALAR_INT] = "integer",
		[SCALAR_SIZE] = "size",  [SCALAR_SECONDS] = "seconds", [SCALAR_ENUM] = "enum",
	};
	const char *sep = "";
	if (k->kinds & SPEC_SCALAR) {
		printf("%s", k->scalar == SCALAR_ENUM && k->choices ? k->choices : scalar_names[k->scalar]);
		sep = " or ";
	}
	if (k->kinds & SPEC_SEQ) {
		printf("%slist", sep);
		sep = " or ";
	}
	if (k->kinds & SPEC_MAP)
		printf("%smap", sep);
}

static void print_keys(const struct spec_key *keys)
{
	for (const struct spec_key *k = keys; k && k->path; k++) {
		if (!k->path[0])
			continue; /* the document itself */
		printf("%s\t", k->path);
		print_key_type(k);
		printf("\t%s", k->help ? k->help : "");
		/* the table's defaults, appended to the help (the man page and
		 * checks/SPEC.md are made from these lines) */
		if (k->def && k->def_healthcheck)
			printf(" (default %s; healthcheck: %s)", k->def, k->def_healthcheck);
		else if (k->def)
			printf(" (default %s)", k->def);
		printf("\n");
	}
}

static int list_spec_keys(void)
{
	print_keys(registry_top_keys);
	for (const struct check_group *const *g = registry_groups; *g; g++)
		print_keys((*g)->spec_keys);
	return EXIT_HEALTHY;
}

int cmd_list(int argc, char **argv)
{
	bool help = false;
	for (int i = 1; i < argc; i++)
		help = help || strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0;
	if (help) {
		puts("usage: gpugate list               every check id, and the checks each built-in profile runs\n"
		     "       gpugate list --spec-keys   every spec key: key, type and help, tab-separated");
		return EXIT_HEALTHY;
	}
	if (argc == 2 && strcmp(argv[1], "--spec-keys") == 0)
		return list_spec_keys();
	if (argc > 1)
		return usage_error("list takes no arguments but --spec-keys");
	printf("checks:\n");
	for (const struct check_group *const *g = registry_groups; *g; g++)
		for (const struct check_def *c = (*g)->checks; c->id; c++)
			printf("  %-24s %s%s\n", c->id, c->description, c->expensive ? " [expensive]" : "");
	printf("\nprofiles (gpugate check --profile NAME):\n");
	for (const struct embedded_file *f = embedded_profiles; f->name; f++)
		list_profile(f);
	return EXIT_HEALTHY;
}
