#include "registry.h"

#include "lib/nearest.h"

#include <stdio.h>
#include <string.h>

/* Every check group, one per file in src/checks/: adding a group is its
 * file, its declaration here and its line in the table. */
extern const struct check_group packages_group;
extern const struct check_group devices_group;
extern const struct check_group system_group;
extern const struct check_group hf_group;
extern const struct check_group runtime_group;

const struct check_group *const registry_groups[] = {
	&packages_group, &devices_group, &system_group, &hf_group, &runtime_group, NULL,
};

/* Keys that belong to no group. */
const struct spec_key registry_top_keys[] = {
	{ "", SPEC_MAP, SCALAR_STR, NULL, "the spec" },
	{ "profile", SPEC_SCALAR, SCALAR_STR, NULL,
	  "behaviour base: healthcheck (no writes, no GPU load), ci or validate; default ci" },
	{ "description", SPEC_SCALAR, SCALAR_STR, NULL, "free text shown by `gpugate list`" },
	{ "deadline", SPEC_SCALAR, SCALAR_SECONDS, NULL, "the whole run ends by then; --deadline overrides" },
	{ "reports", SPEC_MAP, SCALAR_STR, NULL, "how reports are written" },
	{ "reports.nfd_prefix", SPEC_SCALAR, SCALAR_STR, NULL,
	  "namespace of the nfd labels (default feature.node.kubernetes.io/); --nfd-prefix overrides" },
	{ "reports.nfd_expiry", SPEC_SCALAR, SCALAR_SECONDS, NULL,
	  "how long nfd labels stay valid after the run (# +expiry-time); default 10m" },
	{ "extends", SPEC_SCALAR, SCALAR_ENUM, "healthcheck|ci|validate",
	  "start from this built-in profile (with its vendor's pins): each section named here replaces the profile's" },
	{ NULL, 0, 0, NULL, NULL },
};

static const struct spec_key *find_in(const struct spec_key *keys, const char *path)
{
	for (const struct spec_key *k = keys; k && k->path; k++)
		if (strcmp(k->path, path) == 0)
			return k;
	return NULL;
}

const struct spec_key *registry_spec_key(const char *path)
{
	const struct spec_key *k = find_in(registry_top_keys, path);
	for (const struct check_group *const *g = registry_groups; !k && *g; g++)
		k = find_in((*g)->spec_keys, path);
	return k;
}

int registry_validate_spec(const struct spec *spec, struct spec_error *err)
{
	for (const struct check_group *const *g = registry_groups; *g; g++)
		if ((*g)->validate && spec_has(spec, (*g)->name) && (*g)->validate(spec, err) < 0)
			return -1;
	return 0;
}

static void section_names(char *buf, size_t size)
{
	size_t used = 0;
	buf[0] = '\0';
	for (const struct check_group *const *g = registry_groups; *g && used < size; g++) {
		int n = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", (*g)->name);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

const struct spec_schema registry_schema = {
	.key = registry_spec_key,
	.validate = registry_validate_spec,
	.sections = section_names,
	.nearest_key = registry_nearest_key,
};

bool check_id_matches(const char *id, const char *pattern)
{
	size_t n = strlen(pattern);
	return strncmp(id, pattern, n) == 0 && (id[n] == '\0' || id[n] == '.');
}

const char *registry_nearest_id(const char *word)
{
	struct nearest n;
	nearest_init(&n, word);
	for (const struct check_group *const *g = registry_groups; *g; g++) {
		nearest_offer(&n, (*g)->name);
		for (const struct check_def *c = (*g)->checks; c->id; c++)
			nearest_offer(&n, c->id);
	}
	return nearest_result(&n);
}

const char *registry_nearest_key(const char *path)
{
	struct nearest n;
	nearest_init(&n, path);
	for (const struct spec_key *k = registry_top_keys; k->path; k++)
		nearest_offer(&n, k->path);
	for (const struct check_group *const *g = registry_groups; *g; g++)
		for (const struct spec_key *k = (*g)->spec_keys; k->path; k++)
			nearest_offer(&n, k->path);
	return nearest_result(&n);
}

const struct check_def *registry_find(const char *id_or_prefix)
{
	for (const struct check_group *const *g = registry_groups; *g; g++)
		for (const struct check_def *c = (*g)->checks; c->id; c++)
			if (check_id_matches(c->id, id_or_prefix))
				return c;
	return NULL;
}

bool registry_check_enabled(const struct spec *spec, const struct check_group *g, const struct check_def *c)
{
	return spec_has(spec, g->name) && (!c->enabled_by || spec_bool(spec, c->enabled_by, false));
}
