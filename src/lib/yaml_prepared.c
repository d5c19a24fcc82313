#include "yaml_prepared.h"

#include <string.h>

const struct yaml_prepared *yaml_prepared_find(const struct yaml_prepared *table, const char *name)
{
	for (const struct yaml_prepared *d = table; d->name; d++)
		if (strcmp(d->name, name) == 0)
			return d;
	return NULL;
}

static yaml_mark_t mark(struct yaml_prepared_mark m)
{
	return (yaml_mark_t){ .index = m.index, .line = m.line, .column = m.column };
}

int yaml_prepared_load(const struct yaml_prepared *d, yaml_document_t *doc)
{
	/* implicit start and end, no directives: as a file without "---" loads */
	if (!yaml_document_initialize(doc, NULL, NULL, NULL, 1, 1))
		return -1;
	/* the nodes first, in the file's order, so that each keeps its id */
	for (size_t i = 0; i < d->count; i++) {
		const struct yaml_prepared_node *n = &d->nodes[i];
		const yaml_char_t *tag = (const yaml_char_t *)n->tag;
		int id = 0;
		switch (n->type) {
		case YAML_SCALAR_NODE:
			id = yaml_document_add_scalar(doc, tag, (const yaml_char_t *)n->value, (int)n->length,
						      (yaml_scalar_style_t)n->style);
			break;
		case YAML_SEQUENCE_NODE:
			id = yaml_document_add_sequence(doc, tag, (yaml_sequence_style_t)n->style);
			break;
		case YAML_MAPPING_NODE:
			id = yaml_document_add_mapping(doc, tag, (yaml_mapping_style_t)n->style);
			break;
		default:
			break;
		}
		if (id != (int)i + 1)
			goto fail;
		yaml_node_t *node = yaml_document_get_node(doc, id);
		node->start_mark = mark(n->start);
		node->end_mark = mark(n->end);
	}
	for (size_t i = 0; i < d->count; i++) {
		const struct yaml_prepared_node *n = &d->nodes[i];
		for (unsigned k = 0; k < n->count; k++) {
			int ok = n->type == YAML_SEQUENCE_NODE
					 ? yaml_document_append_sequence_item(doc, (int)i + 1, d->kids[n->first + k])
					 : yaml_document_append_mapping_pair(doc, (int)i + 1, d->kids[n->first + 2 * k],
									     d->kids[n->first + 2 * k + 1]);
			if (!ok)
				goto fail;
		}
	}
	return 0;
fail:
	yaml_document_delete(doc);
	memset(doc, 0, sizeof(*doc));
	return -1;
}
