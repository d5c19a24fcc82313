#include "hub_answer.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "download.h"
#include "lib/util.h"

int hub_parse_revision(const char *body, size_t len, char **commit, char ***paths, size_t *n,
		       char *err, size_t err_size)
{
	*commit = NULL;
	*paths = NULL;
	*n = 0;
	json_error_t jerr;
	json_t *root = json_loadb(body ? body : "", body ? len : 0, 0, &jerr);
	json_t *sha = json_is_object(root) ? json_object_get(root, "sha") : NULL;
	json_t *siblings = json_is_object(root) ? json_object_get(root, "siblings") : NULL;
	if (!root || !json_is_string(sha) || !json_is_array(siblings)) {
		snprintf(err, err_size, "not the hub's revision answer (%s)",
			 root ? "no 'sha' string or 'siblings' list" : jerr.text);
		json_decref(root);
		return -1;
	}
	if (!is_hex(json_string_value(sha), 40)) {
		snprintf(err, err_size, "'sha' is not a 40-hex commit");
		json_decref(root);
		return -1;
	}
	char **out = xcalloc(json_array_size(siblings) + 1, sizeof(*out));
	size_t count = 0, i;
	json_t *s;
	json_array_foreach(siblings, i, s) {
		json_t *name = json_is_object(s) ? json_object_get(s, "rfilename") : NULL;
		/* a name with a NUL inside would be cut short: refuse it */
		if (!json_is_string(name) || strlen(json_string_value(name)) != json_string_length(name)) {
			snprintf(err, err_size, "siblings[%zu] has no 'rfilename' string", i);
			for (size_t k = 0; k < count; k++)
				free(out[k]);
			free(out);
			json_decref(root);
			return -1;
		}
		out[count++] = xstrdup(json_string_value(name));
	}
	*commit = xstrdup(json_string_value(sha));
	*paths = out;
	*n = count;
	json_decref(root);
	return 0;
}

/* Removes W/ and the quotes from an ETag value. */
static char *normalize_etag(const char *v)
{
	if (strncmp(v, "W/", 2) == 0)
		v += 2;
	size_t n = strlen(v);
	if (n >= 2 && v[0] == '"' && v[n - 1] == '"')
		return xstrndup(v + 1, n - 2);
	return xstrdup(v);
}

static bool safe_etag(const char *e)
{
	if (!e[0] || strlen(e) > 128)
		return false;
	for (const char *p = e; *p; p++)
		if (!(isalnum_ascii(*p) || *p == '-' || *p == '_'))
			return false;
	return true;
}

int hub_resolve_meta(const struct http_response *r, struct hub_meta *m, char *err, size_t n)
{
	memset(m, 0, sizeof(*m));
	const char *etag = r->linked_etag ? r->linked_etag : r->etag;
	const char *size = r->linked_size ? r->linked_size : r->content_length;
	if (!r->repo_commit || !etag || !size) {
		snprintf(err, n, "the hub's answer lacks %s (HTTP %ld)",
			 !r->repo_commit ? "X-Repo-Commit" : !etag ? "an ETag" : "a size", r->code);
		return -1;
	}
	if (!is_hex(r->repo_commit, 40)) {
		snprintf(err, n, "X-Repo-Commit '%.60s' is not a 40-hex commit", r->repo_commit);
		return -1;
	}
	char *e = normalize_etag(etag);
	if (!safe_etag(e)) {
		snprintf(err, n, "ETag '%.80s' cannot be a blob file name", e);
		free(e);
		return -1;
	}
	char *end;
	errno = 0;
	long long sz = strtoll(size, &end, 10);
	if (errno || end == size || *end || sz < 0 || size[0] < '0' || size[0] > '9') {
		snprintf(err, n, "size '%.40s' is not a number of bytes", size);
		free(e);
		return -1;
	}
	m->commit = xstrdup(r->repo_commit);
	m->etag = e;
	m->size = sz;
	return 0;
}

void hub_meta_free(struct hub_meta *m)
{
	free(m->commit);
	free(m->etag);
	memset(m, 0, sizeof(*m));
}
