/* The built-in profiles and vendor pins are loaded from documents prepared
 * at build time (lib/yaml_prepared.h, src/tools/yaml_prepare.c): each must
 * be, node by node, the document libyaml loads from its file in checks/
 * (type, tag, style, value, position, children), so that every reader of a
 * spec (the checks, spec freeze, the spec digest, error positions) sees the
 * same thing; and every built-in file must have its prepared document. Run
 * from the repository root, as make test runs the unit tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/embedded.h"
#include "lib/util.h"
#include "lib/yaml_prepared.h"
#include "profile.h"
#include "registry.h"
#include "report/report.h"
#include "spec.h"

static void same_mark(const char *path, size_t i, yaml_mark_t a, yaml_mark_t b)
{
	if (a.index != b.index || a.line != b.line || a.column != b.column)
		fail_msg("%s: node %zu at %zu:%zu:%zu, prepared %zu:%zu:%zu", path, i + 1, a.index, a.line, a.column,
			 b.index, b.line, b.column);
}

static void same_as_file(const struct yaml_prepared *d, const char *path)
{
	char *text = NULL;
	size_t len = 0;
	if (read_file(path, &text, &len) < 0)
		fail_msg("%s: cannot read (run from the repository root)", path);
	yaml_parser_t parser;
	yaml_document_t file, prepared;
	assert_true(yaml_parser_initialize(&parser));
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	assert_true(yaml_parser_load(&parser, &file));
	yaml_parser_delete(&parser);
	assert_int_equal(yaml_prepared_load(d, &prepared), 0);

	size_t n = (size_t)(file.nodes.top - file.nodes.start);
	assert_int_equal(n, (size_t)(prepared.nodes.top - prepared.nodes.start));
	for (size_t i = 0; i < n; i++) {
		const yaml_node_t *a = &file.nodes.start[i], *b = &prepared.nodes.start[i];
		assert_int_equal(a->type, b->type);
		assert_string_equal((const char *)a->tag, (const char *)b->tag);
		same_mark(path, i, a->start_mark, b->start_mark);
		same_mark(path, i, a->end_mark, b->end_mark);
		switch (a->type) {
		case YAML_SCALAR_NODE:
			assert_int_equal(a->data.scalar.style, b->data.scalar.style);
			assert_int_equal(a->data.scalar.length, b->data.scalar.length);
			assert_memory_equal(a->data.scalar.value, b->data.scalar.value, a->data.scalar.length + 1);
			break;
		case YAML_SEQUENCE_NODE: {
			assert_int_equal(a->data.sequence.style, b->data.sequence.style);
			size_t k = (size_t)(a->data.sequence.items.top - a->data.sequence.items.start);
			assert_int_equal(k, (size_t)(b->data.sequence.items.top - b->data.sequence.items.start));
			assert_memory_equal(a->data.sequence.items.start, b->data.sequence.items.start,
					    k * sizeof(yaml_node_item_t));
			break;
		}
		case YAML_MAPPING_NODE: {
			assert_int_equal(a->data.mapping.style, b->data.mapping.style);
			size_t k = (size_t)(a->data.mapping.pairs.top - a->data.mapping.pairs.start);
			assert_int_equal(k, (size_t)(b->data.mapping.pairs.top - b->data.mapping.pairs.start));
			assert_memory_equal(a->data.mapping.pairs.start, b->data.mapping.pairs.start,
					    k * sizeof(yaml_node_pair_t));
			break;
		}
		default:
			fail_msg("%s: node %zu of no known type", path, i + 1);
		}
	}
	assert_int_equal(file.start_implicit, prepared.start_implicit);
	assert_int_equal(file.end_implicit, prepared.end_implicit);
	yaml_document_delete(&file);
	yaml_document_delete(&prepared);
	free(text);
}

static void each_file_prepared(const struct embedded_file *files, const struct yaml_prepared *table, const char *dir)
{
	size_t n = 0;
	for (const struct embedded_file *f = files; f->name; f++, n++) {
		const struct yaml_prepared *d = yaml_prepared_find(table, f->name);
		if (!d)
			fail_msg("%s: no prepared document", f->name);
		char path[256];
		snprintf(path, sizeof(path), "%s/%s.yaml", dir, f->name);
		same_as_file(d, path);
	}
	size_t m = 0;
	for (const struct yaml_prepared *d = table; d->name; d++)
		m++;
	assert_int_equal(n, m);
	assert_true(n >= 1);
}

static void profiles_are_their_files(void **state)
{
	(void)state;
	each_file_prepared(embedded_profiles, yaml_prepared_profiles, "checks");
}

static void vendor_pins_are_their_files(void **state)
{
	(void)state;
	each_file_prepared(embedded_vendor_pins, yaml_prepared_vendor_pins, "checks/vendor");
}

/* A profile with its pins, prepared and read back: the spec digest of the
 * same text loaded as a user's spec (the report's spec_digest). */
static void loaded_profile_digests_as_its_text(void **state)
{
	(void)state;
	struct spec_error err;
	for (const struct embedded_file *f = embedded_vendor_pins; f->name; f++) {
		struct spec from_text, prepared;
		assert_int_equal(
			spec_load_buffer(&from_text, &registry_schema, f->name, (const char *)f->data, f->size, &err),
			0);
		assert_int_equal(spec_load_prepared(&prepared, f->name,
						    yaml_prepared_find(yaml_prepared_vendor_pins, f->name), &err),
				 0);
		char *a = report_spec_digest(&from_text), *b = report_spec_digest(&prepared);
		assert_non_null(a);
		assert_string_equal(a, b);
		free(a);
		free(b);
		spec_free(&from_text);
		spec_free(&prepared);
	}
	struct spec spec;
	assert_int_equal(profile_load(&spec, "healthcheck", "intel", &err), 0);
	assert_string_equal(spec_str(&spec, "profile", NULL), "healthcheck");
	assert_non_null(spec_get(&spec, "packages")); /* from the pins */
	spec_free(&spec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(profiles_are_their_files),
		cmocka_unit_test(vendor_pins_are_their_files),
		cmocka_unit_test(loaded_profile_digests_as_its_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
