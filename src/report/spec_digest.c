/* The spec_digest of the JSON report: which spec ran, as a SHA-256 over the
 * spec document in a canonical form (JSON, keys sorted, no whitespace,
 * every scalar a string). Comments, key order and YAML styling do not
 * change it; a changed value or key does. The spec document is the one the
 * checks read, a built-in profile's included. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/digest.h"
#include "report.h"

static json_t *node_json(const struct spec *spec, yaml_node_t *node, int depth)
{
	if (!node || depth > 128)
		return json_null();
	yaml_document_t *doc = (yaml_document_t *)&spec->doc;
	switch (node->type) {
	case YAML_SCALAR_NODE:
		return json_stringn((const char *)node->data.scalar.value, node->data.scalar.length);
	case YAML_SEQUENCE_NODE: {
		json_t *a = json_array();
		for (yaml_node_item_t *i = node->data.sequence.items.start; i < node->data.sequence.items.top; i++)
			json_array_append_new(a, node_json(spec, yaml_document_get_node(doc, *i), depth + 1));
		return a;
	}
	case YAML_MAPPING_NODE: {
		json_t *o = json_object();
		for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top; p++) {
			yaml_node_t *k = yaml_document_get_node(doc, p->key);
			if (k && k->type == YAML_SCALAR_NODE)
				json_object_set_new(o, (const char *)k->data.scalar.value,
						    node_json(spec, yaml_document_get_node(doc, p->value), depth + 1));
		}
		return o;
	}
	default:
		return json_null();
	}
}

char *report_spec_digest(const struct spec *spec)
{
	if (!spec || !spec->loaded)
		return NULL;
	json_t *doc = node_json(spec, yaml_document_get_root_node((yaml_document_t *)&spec->doc), 0);
	char *canonical = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	json_decref(doc);
	if (!canonical)
		return NULL;
	char *out = xmalloc(7 + 64 + 1);
	memcpy(out, "sha256:", 7);
	bool ok = digest_sha256_hex(canonical, strlen(canonical), out + 7);
	free(canonical);
	if (!ok) {
		free(out);
		return NULL;
	}
	return out;
}
