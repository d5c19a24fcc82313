/* The spec: a YAML file (or a built-in profile) that says what to check.
 * It is loaded once, validated against the keys every check group declares
 * (unknown key, wrong type: an error naming file, line and column), and then
 * read by the checks through the accessors below. */
#ifndef GPUGATE_SPEC_H
#define GPUGATE_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

struct spec;
struct spec_error {
	char msg[1024];
};

/* What a key may hold; a bit mask, so a key can accept a string or a map. */
enum spec_kind { SPEC_SCALAR = 1, SPEC_SEQ = 2, SPEC_MAP = 4 };
/* How a scalar is read. */
enum spec_scalar { SCALAR_STR = 0, SCALAR_BOOL, SCALAR_INT, SCALAR_SIZE, SCALAR_SECONDS, SCALAR_ENUM };
/* The largest whole number a spec may hold: 256 Mi (the smoke kernel's
 * work_items is the biggest count; more than 1 GiB per buffer is a typo). */
#define SPEC_INT_MAX 268435456

/* One allowed key. path is dotted from the top ("hf.min_free"); the items of a
 * list are "list[]" ("hf.models[]", "hf.models[].repo"). */
struct spec_key {
	const char *path;
	unsigned kinds;
	enum spec_scalar scalar;
	const char *choices; /* SCALAR_ENUM: "a|b|c" */
	const char *help;    /* one line for `gpugate list --spec-keys` and README */
	/* The value a missing key stands for, spelt as a spec would write it
	 * ("30s", "256MiB", "false"), or NULL where it has none or depends on
	 * more than the profile (help says how). The one place it is written:
	 * the readers (registry.h's key_*), `gpugate list --spec-keys`, the man
	 * page and checks/SPEC.md all take it from here. */
	const char *def;
	const char *def_healthcheck; /* the healthcheck profile's, where it differs; else NULL */
};

/* What a spec may hold, supplied by the caller (the registry's
 * registry_schema, src/registry.c), so that the loader knows no check group. */
struct spec_schema {
	/* the key of a dotted path ("hf.min_free", "hf.models[]"), or NULL: unknown */
	const struct spec_key *(*key)(const char *path);
	/* checks across keys, run after every key passed; 0 or -1 with err filled */
	int (*validate)(const struct spec *spec, struct spec_error *err);
	/* the top-level sections for an error message ("packages, devices, ..."), into buf */
	void (*sections)(char *buf, size_t size);
	/* the known key path nearest to an unknown one ("did you mean"), or NULL; may be NULL */
	const char *(*nearest_key)(const char *path);
};

struct spec {
	char *name; /* file path, or "profile NAME" for a built-in */
	yaml_document_t doc;
	bool loaded;
	/* The spec this one starts from (`extends:`, or a profile under its
	 * vendor's pins), owned: a top-level section this spec does not name is
	 * read from there. NULL for a spec that stands alone. */
	struct spec *base;
};

/* Both load and check against schema; 0, or -1 with err filled as
 * "NAME:LINE:COL: problem". */
int spec_load_file(struct spec *spec, const struct spec_schema *schema, const char *path, struct spec_error *err);
int spec_load_buffer(struct spec *spec, const struct spec_schema *schema, const char *name, const char *buf, size_t len,
		     struct spec_error *err);
/* A spec built into gpugate (the profiles and vendor pins of checks/,
 * parsed at build time: lib/yaml_prepared.h), named name: its document
 * rebuilt from the prepared nodes, without the limits pass and the
 * schema's checks that hold a user's spec, which give the same answer for
 * the same file at every start. tests/unit/test_spec_keys.c holds every
 * built-in file to both, through spec_load_buffer. */
struct yaml_prepared;
int spec_load_prepared(struct spec *spec, const char *name, const struct yaml_prepared *doc, struct spec_error *err);
void spec_free(struct spec *spec);

/* Formats an error located at node (used by group validators). Returns -1. */
int spec_error_at(struct spec_error *err, const struct spec *spec, const yaml_node_t *node, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Node lookup by dotted path from the top, or below a given mapping node.
 * A section missing here is looked up in spec->base, whole. */
yaml_node_t *spec_get(const struct spec *spec, const char *path);
yaml_node_t *spec_child(const struct spec *spec, const yaml_node_t *map, const char *key);
bool spec_has(const struct spec *spec, const char *path);
/* The document that holds node: the spec's own or a base's (`extends:`, a
 * vendor's pins); for walking a mapping's pairs (spec freeze copies them). */
yaml_document_t *spec_document_of(const struct spec *spec, const yaml_node_t *node);

/* Typed reads with a default for a missing key. The loader has already
 * checked the types, so these never fail. */
const char *spec_str(const struct spec *spec, const char *path, const char *def);
bool spec_bool(const struct spec *spec, const char *path, bool def);
long spec_int(const struct spec *spec, const char *path, long def);
uint64_t spec_size(const struct spec *spec, const char *path, uint64_t def);
double spec_seconds(const struct spec *spec, const char *path, double def);

/* The same on a node already in hand (a list item, a map value). */
const char *spec_node_str(const yaml_node_t *node); /* NULL unless a scalar */
size_t spec_seq_len(const yaml_node_t *node);
yaml_node_t *spec_seq_item(const struct spec *spec, const yaml_node_t *node, size_t i);

/* Scalar parsers shared by the loader and the command line. Return 0 or -1. */
int parse_bool(const char *s, bool *out);
int parse_size(const char *s, uint64_t *out);  /* "10GiB", "512MB", "4096" */
int parse_seconds(const char *s, double *out); /* "10", "10s", "500ms", "2m", "1h" */
/* The longest duration parse_seconds accepts (about 115 days), and as error
 * messages name it. */
#define SECONDS_MAX      10000000
#define SECONDS_STR_(x)  #x
#define SECONDS_STR(x)   SECONDS_STR_(x)
#define SECONDS_MAX_TEXT SECONDS_STR(SECONDS_MAX) " s"

#endif
