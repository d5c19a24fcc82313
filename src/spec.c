#include "spec.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "lib/safe_io.h"
#include "lib/util.h"
#include "lib/yaml_prepared.h"

static const char *kind_words(unsigned kinds)
{
	switch (kinds) {
	case SPEC_SCALAR:
		return "a single value";
	case SPEC_SEQ:
		return "a list";
	case SPEC_MAP:
		return "a mapping of keys";
	case SPEC_SCALAR | SPEC_MAP:
		return "a value or a mapping";
	case SPEC_SEQ | SPEC_SCALAR:
		return "a value or a list";
	default:
		return "a value";
	}
}

int spec_error_at(struct spec_error *err, const struct spec *spec, const yaml_node_t *node, const char *fmt, ...)
{
	char text[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (node)
		snprintf(err->msg, sizeof(err->msg), "%s:%zu:%zu: %s", spec->name, node->start_mark.line + 1,
			 node->start_mark.column + 1, text);
	else
		snprintf(err->msg, sizeof(err->msg), "%s: %s", spec->name, text);
	return -1;
}

int parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };
	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -1;
}

/* A finite non-negative decimal number followed by a unit from the table. */
struct unit {
	const char *name;
	double factor;
};

static int parse_with_units(const char *s, const struct unit *units, size_t n, double *out)
{
	if (!s || !*s || isspace((unsigned char)*s) || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	char *end;
	double v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return -1;
	/* strtod takes hex and "inf"; a spec must not */
	for (const char *p = s; p < end; p++)
		if (!isdigit((unsigned char)*p) && *p != '.')
			return -1;
	while (*end == ' ')
		end++;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(end, units[i].name) == 0) {
			*out = v * units[i].factor;
			return 0;
		}
	}
	return -1;
}

int parse_size(const char *s, uint64_t *out)
{
	static const struct unit units[] = {
		{ "", 1 },
		{ "B", 1 },
		{ "K", 1024.0 },
		{ "KiB", 1024.0 },
		{ "KB", 1e3 },
		{ "M", 1048576.0 },
		{ "MiB", 1048576.0 },
		{ "MB", 1e6 },
		{ "G", 1073741824.0 },
		{ "GiB", 1073741824.0 },
		{ "GB", 1e9 },
		{ "T", 1099511627776.0 },
		{ "TiB", 1099511627776.0 },
		{ "TB", 1e12 },
	};
	double v;
	if (parse_with_units(s, units, ARRAY_SIZE(units), &v) < 0 || v >= 1.8e19)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

int parse_seconds(const char *s, double *out)
{
	static const struct unit units[] = {
		{ "", 1 }, { "s", 1 }, { "ms", 1e-3 }, { "m", 60 }, { "min", 60 }, { "h", 3600 },
	};
	double v;
	if (parse_with_units(s, units, ARRAY_SIZE(units), &v) < 0 || v > SECONDS_MAX)
		return -1;
	*out = v;
	return 0;
}

static bool is_null_scalar(const yaml_node_t *node)
{
	if (node->type != YAML_SCALAR_NODE)
		return false;
	if (node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	const char *v = (const char *)node->data.scalar.value;
	return node->data.scalar.length == 0 || strcmp(v, "~") == 0 || strcmp(v, "null") == 0;
}

static int check_scalar(const struct spec *spec, const yaml_node_t *node, const struct spec_key *key,
			struct spec_error *err)
{
	const char *v = (const char *)node->data.scalar.value;
	bool b;
	uint64_t size;
	double secs;
	char *end;
	switch (key->scalar) {
	case SCALAR_STR:
		return 0;
	case SCALAR_BOOL:
		if (parse_bool(v, &b) == 0)
			return 0;
		return spec_error_at(err, spec, node, "%s must be true or false, not '%s'", key->path, v);
	case SCALAR_INT:
		errno = 0;
		long n = strtol(v, &end, 10);
		if (*v && !*end && !errno && n >= 0 && n <= SPEC_INT_MAX)
			return 0;
		return spec_error_at(err, spec, node, "%s must be a whole number from 0 to %d, not '%s'", key->path,
				     SPEC_INT_MAX, v);
	case SCALAR_SIZE:
		if (parse_size(v, &size) == 0)
			return 0;
		return spec_error_at(err, spec, node, "%s must be a size such as 512MiB, 10GiB or 4096, not '%s'",
				     key->path, v);
	case SCALAR_SECONDS:
		if (parse_seconds(v, &secs) == 0)
			return 0;
		return spec_error_at(err, spec, node,
				     "%s must be a duration such as 10, 10s, 500ms or 2m (at most " SECONDS_MAX_TEXT
				     "), not '%s'",
				     key->path, v);
	case SCALAR_ENUM:
		if (list_has(key->choices, '|', v))
			return 0;
		return spec_error_at(err, spec, node, "%s must be one of %s, not '%s'", key->path, key->choices, v);
	}
	return 0;
}

/* The error for a key the schema does not know, with the nearest known key
 * when one is close ("did you mean"), else the sections at the top. */
static int unknown_key(const struct spec *spec, const struct spec_schema *schema, const yaml_node_t *node,
		       const char *path, bool top, struct spec_error *err)
{
	const char *near = schema->nearest_key ? schema->nearest_key(path) : NULL;
	if (near)
		return spec_error_at(err, spec, node, "unknown key '%s' (did you mean '%s'?)", path, near);
	char sections[256] = "";
	if (top && schema->sections)
		schema->sections(sections, sizeof(sections));
	return spec_error_at(err, spec, node, "unknown key '%s'%s%s%s", path, *sections ? " (sections: " : "", sections,
			     *sections ? ")" : "");
}

/* "A.B" or "A[]": a key's path, made for each key of every spec loaded */
static char *join_key(const char *a, char sep, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	char *out = xmalloc(na + 1 + nb + 1);
	memcpy(out, a, na);
	out[na] = sep;
	memcpy(out + na + 1, b, nb + 1);
	return out;
}

/* node against key, the schema entry of path (looked up once by the caller). */
static int validate_value(const struct spec *spec, const struct spec_schema *schema, yaml_node_t *node,
			  const struct spec_key *key, const char *path, struct spec_error *err)
{
	unsigned have = node->type == YAML_MAPPING_NODE    ? SPEC_MAP
			: node->type == YAML_SEQUENCE_NODE ? SPEC_SEQ
							   : SPEC_SCALAR;
	if (have == SPEC_SCALAR && is_null_scalar(node) && (key->kinds & (SPEC_MAP | SPEC_SEQ)))
		return 0; /* "hf:" alone: the section with its defaults */
	if (!(key->kinds & have))
		return spec_error_at(err, spec, node, "'%s' must be %s", path, kind_words(key->kinds));
	if (have == SPEC_SCALAR)
		return check_scalar(spec, node, key, err);
	if (have == SPEC_SEQ) {
		char *item_path = join_key(path, '[', "]");
		const struct spec_key *item_key = schema->key(item_path);
		int rc = 0;
		for (yaml_node_item_t *it = node->data.sequence.items.start;
		     rc == 0 && it < node->data.sequence.items.top; it++) {
			yaml_node_t *item = yaml_document_get_node((yaml_document_t *)&spec->doc, *it);
			rc = item_key ? validate_value(spec, schema, item, item_key, item_path, err)
				      : unknown_key(spec, schema, item, item_path, false, err);
		}
		free(item_path);
		return rc;
	}
	for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node((yaml_document_t *)&spec->doc, p->key);
		if (k->type != YAML_SCALAR_NODE)
			return spec_error_at(err, spec, k, "a key under '%s' must be a plain name",
					     *path ? path : "the top");
		for (yaml_node_pair_t *q = node->data.mapping.pairs.start; q < p; q++) {
			yaml_node_t *earlier = yaml_document_get_node((yaml_document_t *)&spec->doc, q->key);
			if (earlier->type == YAML_SCALAR_NODE &&
			    strcmp((char *)earlier->data.scalar.value, (char *)k->data.scalar.value) == 0)
				return spec_error_at(err, spec, k, "duplicate key '%s' (first at line %zu)",
						     (char *)k->data.scalar.value, earlier->start_mark.line + 1);
		}
		char *child = *path ? join_key(path, '.', (char *)k->data.scalar.value)
				    : xstrdup((char *)k->data.scalar.value);
		const struct spec_key *child_key = schema->key(child);
		int rc = child_key ? validate_value(spec, schema,
						    yaml_document_get_node((yaml_document_t *)&spec->doc, p->value),
						    child_key, child, err)
				   : unknown_key(spec, schema, k, child, !*path, err);
		free(child);
		if (rc)
			return rc;
	}
	return 0;
}

static int validate_node(const struct spec *spec, const struct spec_schema *schema, yaml_node_t *node, const char *path,
			 struct spec_error *err)
{
	const struct spec_key *key = schema->key(path);
	if (!key)
		return unknown_key(spec, schema, node, path, false, err);
	return validate_value(spec, schema, node, key, path, err);
}

/* Limits on a spec's shape. A spec is a few KB; libyaml's scanner costs
 * O(depth) per token (its simple-key stack), so a megabyte of '[' takes
 * minutes, and aliases can multiply the nodes a walker visits. */
#define SPEC_MAX_BYTES   (1u << 20)
#define SPEC_MAX_DEPTH   64
#define SPEC_MAX_ALIASES 64

/* A pass over the events that stops at the first limit crossed, before the
 * document loader sees the input. Syntax errors are left to the loader. */
static int check_shape(const char *name, const char *buf, size_t len, struct spec_error *err)
{
	if (len > SPEC_MAX_BYTES) {
		snprintf(err->msg, sizeof(err->msg), "%s:1:1: is %zu bytes; a spec may hold at most %u", name, len,
			 SPEC_MAX_BYTES);
		return -1;
	}
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser)) {
		snprintf(err->msg, sizeof(err->msg), "%s:1:1: cannot start the YAML parser", name);
		return -1;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	int depth = 0, aliases = 0, rc = 0;
	for (bool done = false; !done && rc == 0;) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&parser, &ev))
			break; /* the loader reports it with its context */
		const char *problem = NULL;
		switch (ev.type) {
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (++depth > SPEC_MAX_DEPTH)
				problem = "nests lists and maps deeper than 64 levels";
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			break;
		case YAML_ALIAS_EVENT:
			if (++aliases > SPEC_MAX_ALIASES)
				problem = "uses more than 64 aliases (*name)";
			break;
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		default:
			break;
		}
		if (problem) {
			snprintf(err->msg, sizeof(err->msg), "%s:%zu:%zu: %s", name, ev.start_mark.line + 1,
				 ev.start_mark.column + 1, problem);
			rc = -1;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	return rc;
}

/* The load of a user's spec: the limits pass, the document, the schema. */
static int load_buffer(struct spec *spec, const struct spec_schema *schema, const char *name, const char *buf,
		       size_t len, struct spec_error *err)
{
	memset(spec, 0, sizeof(*spec));
	spec->name = xstrdup(name);
	if (check_shape(name, buf, len, err) < 0)
		return -1;
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser))
		return spec_error_at(err, spec, NULL, "cannot start the YAML parser");
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, &spec->doc)) {
		snprintf(err->msg, sizeof(err->msg), "%s:%zu:%zu: YAML syntax error: %s%s%s", name,
			 parser.problem_mark.line + 1, parser.problem_mark.column + 1,
			 parser.problem ? parser.problem : "unknown problem", parser.context ? " " : "",
			 parser.context ? parser.context : "");
		yaml_parser_delete(&parser);
		return -1;
	}
	/* a second document would be silently ignored: refuse it */
	yaml_document_t extra;
	int more = 0;
	if (yaml_parser_load(&parser, &extra)) {
		more = yaml_document_get_root_node(&extra) != NULL;
		yaml_document_delete(&extra);
	}
	yaml_parser_delete(&parser);
	spec->loaded = true;
	if (more)
		return spec_error_at(err, spec, NULL, "holds more than one YAML document ('---'); keep one");
	yaml_node_t *root = yaml_document_get_root_node(&spec->doc);
	if (!root) {
		char sections[256];
		schema->sections(sections, sizeof(sections));
		return spec_error_at(err, spec, NULL, "is empty: a spec needs at least one section (%s)", sections);
	}
	if (root->type != YAML_MAPPING_NODE)
		return spec_error_at(err, spec, root,
				     "the top level must be a mapping of sections, such as 'packages:'");
	if (validate_node(spec, schema, root, "", err))
		return -1;
	return schema->validate ? schema->validate(spec, err) : 0;
}

int spec_load_buffer(struct spec *spec, const struct spec_schema *schema, const char *name, const char *buf, size_t len,
		     struct spec_error *err)
{
	return load_buffer(spec, schema, name, buf, len, err);
}

int spec_load_prepared(struct spec *spec, const char *name, const struct yaml_prepared *doc, struct spec_error *err)
{
	memset(spec, 0, sizeof(*spec));
	spec->name = xstrdup(name);
	if (yaml_prepared_load(doc, &spec->doc) < 0)
		return spec_error_at(err, spec, NULL, "cannot build its YAML document: out of memory");
	spec->loaded = true;
	return 0;
}

#define STDIN_NAME "standard input"

/* The spec's bytes: "-" is standard input, with a file's limits (a file or a
 * pipe, at most SPEC_MAX_BYTES + 1 bytes; a terminal is refused). */
static int read_spec_input(const char *path, char **buf, size_t *len, char *why, size_t why_size)
{
	if (strcmp(path, "-") != 0)
		return safe_read_file(path, SAFE_KIND_REG | SAFE_KIND_FIFO, SPEC_MAX_BYTES + 1, buf, len, why,
				      why_size);
	struct stat st;
	if (fstat(STDIN_FILENO, &st) < 0) {
		int e = errno;
		snprintf(why, why_size, STDIN_NAME ": %s", strerror(e));
		return -e;
	}
	if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
		snprintf(why, why_size, STDIN_NAME " is %s, not a file or a pipe", safe_kind_name(st.st_mode));
		return -EINVAL;
	}
	return safe_read_fd(STDIN_FILENO, STDIN_NAME, SPEC_MAX_BYTES + 1, buf, len, why, why_size);
}

int spec_load_file(struct spec *spec, const struct spec_schema *schema, const char *path, struct spec_error *err)
{
	char *buf = NULL;
	size_t len = 0;
	/* one byte more than allowed: the size check below then says "too large".
	 * A pipe is a spec (--spec /dev/stdin, <(...)); a device is not
	 * (lib/safe_io.h). */
	char why[SAFE_ERR_MAX];
	int rc = read_spec_input(path, &buf, &len, why, sizeof(why));
	if (strcmp(path, "-") == 0)
		path = STDIN_NAME;
	if (rc < 0) {
		memset(spec, 0, sizeof(*spec));
		size_t plen = strlen(path);
		if (rc == -EFBIG)
			snprintf(err->msg, sizeof(err->msg), "%.900s: a spec may hold at most %u bytes", path,
				 SPEC_MAX_BYTES);
		else if ((rc == -EINVAL || rc == -EISDIR) && strncmp(why, path, plen) == 0 && why[plen] == ' ')
			snprintf(err->msg, sizeof(err->msg), "%.500s: cannot read the spec: it%.400s", path,
				 why + plen);
		else
			snprintf(err->msg, sizeof(err->msg), "%.900s: cannot read the spec: %s", path, strerror(-rc));
		return -1;
	}
	if (memchr(buf, '\0', len)) {
		memset(spec, 0, sizeof(*spec));
		snprintf(err->msg, sizeof(err->msg), "%s: is not a text file (it holds NUL bytes)", path);
		free(buf);
		return -1;
	}
	rc = spec_load_buffer(spec, schema, path, buf, len, err);
	free(buf);
	return rc;
}

void spec_free(struct spec *spec)
{
	if (spec->base) {
		spec_free(spec->base);
		free(spec->base);
	}
	if (spec->loaded)
		yaml_document_delete(&spec->doc);
	free(spec->name);
	memset(spec, 0, sizeof(*spec));
}

/* The document that holds node: this spec's, or that of a spec it starts
 * from (a section read from spec->base keeps its nodes there). */
static yaml_document_t *doc_of(const struct spec *spec, const yaml_node_t *node)
{
	uintptr_t at = (uintptr_t)node;
	for (const struct spec *s = spec; s; s = s->base)
		if (s->loaded && at >= (uintptr_t)s->doc.nodes.start && at < (uintptr_t)s->doc.nodes.top)
			return (yaml_document_t *)&s->doc;
	return (yaml_document_t *)&spec->doc;
}

yaml_document_t *spec_document_of(const struct spec *spec, const yaml_node_t *node)
{
	return doc_of(spec, node);
}

/* libyaml's yaml_document_get_node, here where every key read walks
 * through it (a call into the library per map entry otherwise) */
static yaml_node_t *node_at(const yaml_document_t *doc, int index)
{
	if (index > 0 && doc->nodes.start + index <= doc->nodes.top)
		return doc->nodes.start + index - 1;
	return NULL;
}

yaml_node_t *spec_child(const struct spec *spec, const yaml_node_t *map, const char *key)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	const yaml_document_t *doc = doc_of(spec, map);
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node_at(doc, p->key);
		if (k && k->type == YAML_SCALAR_NODE && strcmp((char *)k->data.scalar.value, key) == 0)
			return node_at(doc, p->value);
	}
	return NULL;
}

yaml_node_t *spec_get(const struct spec *spec, const char *path)
{
	if (!spec || !spec->loaded)
		return NULL;
	yaml_node_t *node = yaml_document_get_root_node((yaml_document_t *)&spec->doc);
	const char *whole = path;
	char part[128];
	for (bool section = true; node && *path; section = false) {
		const char *dot = strchr(path, '.');
		size_t n = dot ? (size_t)(dot - path) : strlen(path);
		if (n >= sizeof(part))
			return NULL;
		memcpy(part, path, n);
		part[n] = '\0';
		node = spec_child(spec, node, part);
		/* the section (first part of path) this spec does not name: the base's, whole */
		if (!node && section && spec->base)
			return spec_get(spec->base, whole);
		path = dot ? dot + 1 : path + n;
	}
	return node;
}

bool spec_has(const struct spec *spec, const char *path)
{
	return spec_get(spec, path) != NULL;
}

const char *spec_node_str(const yaml_node_t *node)
{
	if (!node || node->type != YAML_SCALAR_NODE || is_null_scalar(node))
		return NULL;
	return (const char *)node->data.scalar.value;
}

const char *spec_str(const struct spec *spec, const char *path, const char *def)
{
	const char *v = spec_node_str(spec_get(spec, path));
	return v ? v : def;
}

bool spec_bool(const struct spec *spec, const char *path, bool def)
{
	const char *v = spec_str(spec, path, NULL);
	bool b;
	return v && parse_bool(v, &b) == 0 ? b : def;
}

long spec_int(const struct spec *spec, const char *path, long def)
{
	const char *v = spec_str(spec, path, NULL);
	return v ? strtol(v, NULL, 10) : def;
}

uint64_t spec_size(const struct spec *spec, const char *path, uint64_t def)
{
	const char *v = spec_str(spec, path, NULL);
	uint64_t n;
	return v && parse_size(v, &n) == 0 ? n : def;
}

double spec_seconds(const struct spec *spec, const char *path, double def)
{
	const char *v = spec_str(spec, path, NULL);
	double s;
	return v && parse_seconds(v, &s) == 0 ? s : def;
}

size_t spec_seq_len(const yaml_node_t *node)
{
	if (!node || node->type != YAML_SEQUENCE_NODE)
		return 0;
	return (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
}

yaml_node_t *spec_seq_item(const struct spec *spec, const yaml_node_t *node, size_t i)
{
	if (i >= spec_seq_len(node))
		return NULL;
	return yaml_document_get_node(doc_of(spec, node), node->data.sequence.items.start[i]);
}
