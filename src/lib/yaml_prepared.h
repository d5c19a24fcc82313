/* YAML documents prepared at build time: src/tools/yaml_prepare.c parses a
 * file with libyaml, as spec.c would at every start, and writes the nodes
 * of the document as C tables; yaml_prepared_load builds the same
 * yaml_document_t from them without scanning text (the built-in profiles
 * and vendor pins of checks/, loaded by every `gpugate check`). The files in
 * checks/ stay the one owner of the text; tests/unit/test_profiles_embedded.c
 * holds each prepared document to the parse of its file, node by node. */
#ifndef GPUGATE_YAML_PREPARED_H
#define GPUGATE_YAML_PREPARED_H

#include <stddef.h>
#include <yaml.h>

struct yaml_prepared_mark {
	unsigned index, line, column;
};

struct yaml_prepared_node {
	unsigned char type;  /* yaml_node_type_t */
	unsigned char style; /* yaml_scalar_style_t, yaml_sequence_style_t or yaml_mapping_style_t */
	const char *tag;
	const char *value; /* a scalar's bytes (length of them) */
	unsigned length;
	/* a sequence's items (count node ids from kids[first]); a mapping's
	 * pairs (count key and value ids, two each, from kids[first]) */
	unsigned first, count;
	struct yaml_prepared_mark start, end;
};

struct yaml_prepared {
	const char *name; /* NULL ends a table */
	const struct yaml_prepared_node *nodes;
	size_t count;
	const int *kids;
};

/* checks/{healthcheck,ci,validate}.yaml and checks/vendor/VENDOR.yaml, by
 * the names of embedded_profiles and embedded_vendor_pins (embedded.h) */
extern const struct yaml_prepared yaml_prepared_profiles[];
extern const struct yaml_prepared yaml_prepared_vendor_pins[];

const struct yaml_prepared *yaml_prepared_find(const struct yaml_prepared *table, const char *name);
/* Fills doc with d's nodes, as yaml_parser_load would have from the file
 * (yaml_document_delete frees it). 0, or -1 when memory runs out (doc is
 * then empty). */
int yaml_prepared_load(const struct yaml_prepared *d, yaml_document_t *doc);

#endif
