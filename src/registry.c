#include "registry.h"

#include "lib/nearest.h"

#include <stdio.h>
#include <stdlib.h>
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
	{ "", SPEC_MAP, SCALAR_STR, NULL, "the spec", NULL, NULL },
	{ "profile", SPEC_SCALAR, SCALAR_STR, NULL,
	  "behaviour base: healthcheck (reuses the last GPU probe for runtime.cache_ttl, no write test, output under Docker's 4096 bytes, exit 0 or 1), ci or validate; --profile overrides",
	  "ci", NULL },
	{ "description", SPEC_SCALAR, SCALAR_STR, NULL,
	  "free text: what the spec is for (`gpugate list` shows each built-in profile's)", NULL, NULL },
	{ "deadline", SPEC_SCALAR, SCALAR_SECONDS, NULL, "the whole run ends by then; --deadline overrides", NULL,
	  NULL },
	{ "reports", SPEC_MAP, SCALAR_STR, NULL, "how reports are written", NULL, NULL },
	{ "reports.nfd_prefix", SPEC_SCALAR, SCALAR_STR, NULL,
	  "namespace of the nfd labels (default feature.node.kubernetes.io/); --nfd-prefix overrides", NULL, NULL },
	{ "reports.nfd_expiry", SPEC_SCALAR, SCALAR_SECONDS, NULL,
	  "how long nfd labels stay valid after the run (# +expiry-time)", "10m", NULL },
	{ "extends", SPEC_SCALAR, SCALAR_ENUM, "healthcheck|ci|validate",
	  "start from this built-in profile (with its vendor's pins): each section named here replaces the profile's",
	  NULL, NULL },
	{ NULL, 0, 0, NULL, NULL, NULL, NULL },
};

static const struct spec_key *find_in(const struct spec_key *keys, const char *path)
{
	for (const struct spec_key *k = keys; k && k->path; k++)
		if (strcmp(k->path, path) == 0)
			return k;
	return NULL;
}

/* path is the group's section or under it ("hf", "hf.min_free") */
static bool in_section(const char *path, const char *group)
{
	size_t n = strlen(group);
	return strncmp(path, group, n) == 0 && (path[n] == '.' || path[n] == '[' || path[n] == '\0');
}

const struct spec_key *registry_spec_key(const char *path)
{
	const struct spec_key *k = find_in(registry_top_keys, path);
	/* the group whose section path is in first: every key read (a check's
	 * default included) would otherwise compare against every key */
	for (const struct check_group *const *g = registry_groups; !k && *g; g++)
		if (in_section(path, (*g)->name))
			k = find_in((*g)->spec_keys, path);
	for (const struct check_group *const *g = registry_groups; !k && *g; g++)
		k = find_in((*g)->spec_keys, path);
	return k;
}

const char *key_default(const char *path, bool healthcheck)
{
	const struct spec_key *k = registry_spec_key(path);
	if (!k)
		return NULL;
	return healthcheck && k->def_healthcheck ? k->def_healthcheck : k->def;
}

/* The defaults are parsed by the parsers that read the spec's own values;
 * test_registry checks that every default parses as its key's type. */
const char *key_str(const struct spec *spec, const char *path)
{
	return spec_str(spec, path, key_default(path, false));
}

const char *key_str_for(const struct spec *spec, const char *path, bool healthcheck)
{
	return spec_str(spec, path, key_default(path, healthcheck));
}

bool key_bool(const struct spec *spec, const char *path)
{
	/* the spec's own value first: the default's lookup (a walk over every
	 * key) only where the spec has none, as spec_bool would fall back */
	const char *v = spec_str(spec, path, NULL);
	bool b;
	if (v && parse_bool(v, &b) == 0)
		return b;
	const char *d = key_default(path, false);
	bool def = false;
	if (d)
		(void)parse_bool(d, &def);
	return def;
}

long key_int(const struct spec *spec, const char *path)
{
	const char *d = key_default(path, false);
	return spec_int(spec, path, d ? strtol(d, NULL, 10) : 0);
}

uint64_t key_size_for(const struct spec *spec, const char *path, bool healthcheck)
{
	const char *d = key_default(path, healthcheck);
	uint64_t def = 0;
	if (d)
		(void)parse_size(d, &def);
	return spec_size(spec, path, def);
}

uint64_t key_size(const struct spec *spec, const char *path)
{
	return key_size_for(spec, path, false);
}

double key_seconds(const struct spec *spec, const char *path)
{
	const char *d = key_default(path, false);
	double def = 0;
	if (d)
		(void)parse_seconds(d, &def);
	return spec_seconds(spec, path, def);
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

bool registry_group_enabled(const struct spec *spec, const struct check_group *g)
{
	return spec_has(spec, g->name);
}

bool registry_check_switched_on(const struct spec *spec, const struct check_def *c)
{
	return !c->enabled_by || key_bool(spec, c->enabled_by);
}

bool registry_check_enabled(const struct spec *spec, const struct check_group *g, const struct check_def *c)
{
	return registry_group_enabled(spec, g) && registry_check_switched_on(spec, c);
}
