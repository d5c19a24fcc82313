/* The spec keys' defaults live in their key tables (spec_key.def): each
 * must parse as its key's type, and the readers (registry.h's key_*) must
 * hand them back for a spec that does not name the key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "lib/embedded.h"
#include "registry.h"

static void check_default(const struct spec_key *k, const char *def)
{
	if (!def)
		return;
	bool b;
	uint64_t size;
	double secs;
	char *end;
	switch (k->scalar) {
	case SCALAR_BOOL:
		assert_int_equal(parse_bool(def, &b), 0);
		break;
	case SCALAR_INT:
		strtol(def, &end, 10);
		assert_true(end != def && *end == '\0');
		break;
	case SCALAR_SIZE:
		assert_int_equal(parse_size(def, &size), 0);
		break;
	case SCALAR_SECONDS:
		assert_int_equal(parse_seconds(def, &secs), 0);
		break;
	case SCALAR_ENUM: {
		/* one of the choices, whole */
		size_t n = strlen(def);
		const char *c = k->choices;
		bool found = false;
		for (const char *p = c; p && *p; p = strchr(p, '|') ? strchr(p, '|') + 1 : NULL)
			found |= strncmp(p, def, n) == 0 && (p[n] == '|' || p[n] == '\0');
		if (!found)
			fail_msg("%s: default '%s' is none of %s", k->path, def, c);
		break;
	}
	case SCALAR_STR:
		break;
	}
}

static void check_table(const struct spec_key *keys, size_t *n)
{
	for (const struct spec_key *k = keys; k->path; k++) {
		check_default(k, k->def);
		check_default(k, k->def_healthcheck);
		assert_true(!k->def_healthcheck || k->def); /* a healthcheck default overrides one */
		*n += k->def != NULL;
	}
}

static void every_default_parses(void **state)
{
	(void)state;
	size_t n = 0;
	check_table(registry_top_keys, &n);
	for (const struct check_group *const *g = registry_groups; *g; g++)
		check_table((*g)->spec_keys, &n);
	assert_true(n >= 20); /* the table holds them: not 0 == 0 */
}

static void readers_fall_back_to_the_table(void **state)
{
	(void)state;
	struct spec spec;
	struct spec_error err;
	const char *text = "devices: {}\nruntime:\n  timeout: 5s\n";
	assert_int_equal(spec_load_buffer(&spec, &registry_schema, "t", text, strlen(text), &err), 0);
	assert_int_equal(key_int(&spec, "devices.min_gpus"), 1);
	assert_true(key_seconds(&spec, "runtime.timeout") == 5.0); /* the spec's own value wins */
	assert_true(key_seconds(&spec, "runtime.cache_ttl") == 300.0);
	assert_int_equal(key_size(&spec, "runtime.bandwidth_buffer"), (uint64_t)256 << 20);
	assert_int_equal(key_size_for(&spec, "hf.min_free", false), (uint64_t)10 << 30);
	assert_int_equal(key_size_for(&spec, "hf.min_free", true), 0);
	assert_string_equal(key_str_for(&spec, "devices.by_path", false), "require");
	assert_string_equal(key_str_for(&spec, "devices.by_path", true), "warn");
	assert_true(key_bool(&spec, "hf.require_mount"));
	assert_false(key_bool(&spec, "runtime.smoke"));
	assert_string_equal(key_str(&spec, "profile"), "ci");
	assert_null(key_str(&spec, "runtime.baselines")); /* no default */
	spec_free(&spec);
}

/* The built-in profiles and vendor pins are loaded without the limits pass
 * and the schema's checks (spec_load_prepared): each must pass both, so that
 * skipping them changes nothing. */
static void builtin_files_keep_the_limits(void **state)
{
	(void)state;
	const struct embedded_file *tables[] = { embedded_profiles, embedded_vendor_pins };
	size_t n = 0;
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (const struct embedded_file *f = tables[t]; f->name; f++, n++) {
			struct spec spec;
			struct spec_error err;
			int rc = spec_load_buffer(&spec, &registry_schema, f->name, (const char *)f->data, f->size,
						  &err);
			if (rc != 0)
				fail_msg("%s: %s", f->name, err.msg);
			spec_free(&spec);
		}
	assert_true(n >= 4); /* healthcheck, ci, validate and a vendor's pins */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_default_parses),
		cmocka_unit_test(readers_fall_back_to_the_table),
		cmocka_unit_test(builtin_files_keep_the_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
