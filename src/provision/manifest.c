#include "lib/digest.h"
#include "manifest.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "download.h"
#include "lib/debversion.h"
#include "lib/safe_io.h"
#include "lib/util.h"

struct ctx {
	const char *path;
	yaml_document_t *doc;
	char *err;
	size_t err_size;
};

static int fail(struct ctx *c, const yaml_node_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int k = snprintf(c->err, c->err_size, "%s:%zu:%zu: ", c->path, n ? n->start_mark.line + 1 : 1,
			 n ? n->start_mark.column + 1 : 1);
	if (k > 0 && (size_t)k < c->err_size)
		vsnprintf(c->err + k, c->err_size - (size_t)k, fmt, ap);
	va_end(ap);
	return -1;
}

static int scalar(struct ctx *c, yaml_node_t *n, const char *key, char **out)
{
	if (n->type != YAML_SCALAR_NODE)
		return fail(c, n, "'%s' must be a single value", key);
	*out = xstrndup((const char *)n->data.scalar.value, n->data.scalar.length);
	if (strlen(*out) != n->data.scalar.length)
		return fail(c, n, "'%s' contains a NUL byte", key);
	return 0;
}

/* The file name a URL's last path segment gives; NULL when it is unusable. */
static char *url_filename(const char *url)
{
	const char *end = url + strcspn(url, "?#");
	const char *slash = end;
	while (slash > url && slash[-1] != '/')
		slash--;
	if (slash == end)
		return NULL;
	return xstrndup(slash, (size_t)(end - slash));
}

static bool safe_filename(const char *f)
{
	return f[0] && f[0] != '.' && !strchr(f, '/') && !strchr(f, '\\') && str_ends_with(f, ".deb");
}

static int load_pkg(struct ctx *c, yaml_node_t *n, struct manifest_pkg *p, const char *default_arch)
{
	if (n->type != YAML_MAPPING_NODE)
		return fail(c, n, "each entry of 'packages' must be a mapping (package, version, url, sha256, ...)");
	p->line = n->start_mark.line + 1;
	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, pr->key);
		yaml_node_t *v = yaml_document_get_node(c->doc, pr->value);
		const char *key = k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : "";
		char **slot = strcmp(key, "package") == 0        ? &p->package
			      : strcmp(key, "version") == 0      ? &p->version
			      : strcmp(key, "architecture") == 0 ? &p->architecture
			      : strcmp(key, "url") == 0          ? &p->url
			      : strcmp(key, "sha256") == 0       ? &p->sha256
			      : strcmp(key, "filename") == 0     ? &p->filename
								 : NULL;
		if (!slot)
			return fail(
				c, k,
				"unknown key '%s' in a package (package, version, architecture, url, sha256, filename)",
				key);
		if (*slot)
			return fail(c, k, "'%s' given twice", key);
		if (scalar(c, v, key, slot) < 0)
			return -1;
	}
	const char *missing = !p->package ? "package" : !p->version ? "version" : !p->url ? "url" : NULL;
	if (missing)
		return fail(c, n, "a package lacks '%s'", missing);
	if (!p->architecture)
		p->architecture = xstrdup(default_arch ? default_arch : "amd64");
	if (!p->sha256)
		p->sha256 = xstrdup("");
	if (p->sha256[0] && !digest_is_hex(p->sha256, 64))
		return fail(c, n, "%s: sha256 '%s' is not 64 hex digits", p->package, p->sha256);
	for (char *h = p->sha256; *h; h++)
		*h = (char)(*h >= 'A' && *h <= 'F' ? *h + 32 : *h);
	const char *bad = debversion_invalid(p->version);
	if (bad)
		return fail(c, n, "%s: version '%s': %s", p->package, p->version, bad);
	if (!str_starts_with(p->url, "https://") && !str_starts_with(p->url, "http://"))
		return fail(c, n, "%s: url must start with https:// (or http:// for a pinned mirror)", p->package);
	if (!p->sha256[0] && !str_starts_with(p->url, "https://"))
		return fail(c, n, "%s: an unpinned package (no sha256) must come over https", p->package);
	if (!p->filename)
		p->filename = url_filename(p->url);
	if (!p->filename || !safe_filename(p->filename))
		return fail(c, n, "%s: file name '%s' must be a plain NAME.deb (set 'filename')", p->package,
			    p->filename ? p->filename : "");
	return 0;
}

int manifest_load(const char *path, struct manifest *m, char *err, size_t err_size)
{
	memset(m, 0, sizeof(*m));
	m->path = xstrdup(path);
	struct ctx c = { .path = path, .err = err, .err_size = err_size };
	/* a regular file of at most 16 MiB: a FIFO with no writer or /dev/zero
	 * is an error at once, not a hang (SECURITY.md) */
	char *text = NULL;
	size_t text_len = 0;
	if (safe_read_file(path, SAFE_KIND_REG, SAFE_MAX_TEXT, &text, &text_len, err, err_size) < 0)
		return -1;
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, text_len);
	int rc = -1;
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(err, err_size, "%s:%zu:%zu: %s", path, parser.problem_mark.line + 1,
			 parser.problem_mark.column + 1, parser.problem ? parser.problem : "YAML error");
		yaml_parser_delete(&parser);
		free(text);
		return -1;
	}
	c.doc = &doc;
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	char *arch = NULL;
	yaml_node_t *pkgs = NULL;
	if (!root || root->type != YAML_MAPPING_NODE) {
		fail(&c, root, "a manifest is a mapping with 'stack' and 'packages'");
		goto out;
	}
	for (yaml_node_pair_t *pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(&doc, pr->key);
		yaml_node_t *v = yaml_document_get_node(&doc, pr->value);
		const char *key = k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : "";
		if (strcmp(key, "stack") == 0) {
			if (scalar(&c, v, key, &m->stack) < 0)
				goto out;
		} else if (strcmp(key, "architecture") == 0) {
			if (scalar(&c, v, key, &arch) < 0)
				goto out;
		} else if (strcmp(key, "source") == 0) {
			/* where the URLs and checksums were read: for people */
		} else if (strcmp(key, "packages") == 0) {
			pkgs = v;
		} else if (strcmp(key, "system_packages") == 0) {
			if (v->type != YAML_SEQUENCE_NODE) {
				fail(&c, v, "'system_packages' must be a list of package names");
				goto out;
			}
			size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
			m->system_packages = xcalloc(n + 1, sizeof(char *));
			for (size_t i = 0; i < n; i++)
				if (scalar(&c, yaml_document_get_node(&doc, v->data.sequence.items.start[i]),
					   "system_packages", &m->system_packages[m->n_system++]) < 0)
					goto out;
		} else {
			fail(&c, k, "unknown key '%s' (stack, source, architecture, packages, system_packages)", key);
			goto out;
		}
	}
	if (!pkgs || pkgs->type != YAML_SEQUENCE_NODE ||
	    pkgs->data.sequence.items.top == pkgs->data.sequence.items.start) {
		fail(&c, pkgs ? pkgs : root, "'packages' must be a non-empty list");
		goto out;
	}
	size_t n = (size_t)(pkgs->data.sequence.items.top - pkgs->data.sequence.items.start);
	m->pkgs = xcalloc(n, sizeof(*m->pkgs));
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *item = yaml_document_get_node(&doc, pkgs->data.sequence.items.start[i]);
		m->count++;
		if (load_pkg(&c, item, &m->pkgs[i], arch) < 0)
			goto out;
		for (size_t j = 0; j < i; j++) {
			if (strcmp(m->pkgs[j].filename, m->pkgs[i].filename) == 0 ||
			    (strcmp(m->pkgs[j].package, m->pkgs[i].package) == 0 &&
			     strcmp(m->pkgs[j].architecture, m->pkgs[i].architecture) == 0)) {
				fail(&c, item, "%s is listed twice (also at line %zu)", m->pkgs[i].package,
				     m->pkgs[j].line);
				goto out;
			}
		}
	}
	if (!m->stack)
		m->stack = xstrdup(path);
	rc = 0;
out:
	free(arch);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	free(text);
	return rc;
}

void manifest_free(struct manifest *m)
{
	for (size_t i = 0; i < m->count; i++) {
		struct manifest_pkg *p = &m->pkgs[i];
		free(p->package);
		free(p->version);
		free(p->architecture);
		free(p->url);
		free(p->sha256);
		free(p->filename);
	}
	free(m->pkgs);
	free_list(m->system_packages);
	free(m->stack);
	free(m->path);
}
