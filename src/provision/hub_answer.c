#include "lib/digest.h"
#include "hub_answer.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "download.h"
#include "lib/util.h"

int hub_parse_revision(const char *body, size_t len, char **commit, char ***paths, size_t *n, char *err,
		       size_t err_size)
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
	if (!digest_is_hex(json_string_value(sha), 40)) {
		snprintf(err, err_size, "'sha' is not a 40-hex commit");
		json_decref(root);
		return -1;
	}
	char **out = xcalloc(json_array_size(siblings) + 1, sizeof(*out));
	size_t count = 0, i;
	json_t *s;
	json_array_foreach(siblings, i, s)
	{
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

int hub_resolve_meta(const struct http_response *r, struct hub_meta *m, char *err, size_t n)
{
	memset(m, 0, sizeof(*m));
	const char *header = r->linked_etag ? "X-Linked-Etag" : "ETag";
	const char *etag = r->linked_etag ? r->linked_etag : r->etag;
	const char *size = r->linked_size ? r->linked_size : r->content_length;
	if (!r->repo_commit || !etag || !size) {
		snprintf(err, n, "the hub's answer lacks %s (HTTP %ld)",
			 !r->repo_commit ? "X-Repo-Commit"
			 : !etag         ? "an ETag"
					 : "a size",
			 r->code);
		return -1;
	}
	if (!digest_is_hex(r->repo_commit, 40)) {
		snprintf(err, n, "X-Repo-Commit '%.60s' is not a 40-hex commit", r->repo_commit);
		return -1;
	}
	/* The blob is named by its hash and the body checked against it before
	 * it is stored (download.c): a name that is not a hash could not be
	 * checked, so it is refused rather than stored unverified. */
	char *e = normalize_etag(etag);
	if (!digest_is_lower_hex(e, 40) && !digest_is_lower_hex(e, 64)) {
		snprintf(err, n,
			 "%s '%.80s' is not a git blob id (40 lowercase hex digits) or a sha256 (64): "
			 "the content cannot be verified",
			 header, e);
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

/* A JSON integer >= 0 (sizes). */
static bool get_size(json_t *obj, const char *key, int64_t *out)
{
	json_t *v = json_object_get(obj, key);
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	*out = json_integer_value(v);
	return true;
}

/* A string without NUL inside, or NULL. */
static const char *get_string(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))
		return NULL;
	return json_string_value(v);
}

static void tree_file_free(struct hub_tree_file *f)
{
	free(f->path);
	free(f->blob_id);
	free(f->lfs_sha256);
	free(f->xet_hash);
}

/* One entry of type "file"; returns NULL, or what is wrong with it. */
static const char *read_tree_file(json_t *e, struct hub_tree_file *f)
{
	memset(f, 0, sizeof(*f));
	const char *path = get_string(e, "path"), *oid = get_string(e, "oid");
	if (!path)
		return "no 'path' string";
	f->path = xstrdup(path);
	if (!oid || !digest_is_lower_hex(oid, 40))
		return "'oid' is not a 40-hex git blob id";
	f->blob_id = xstrdup(oid);
	if (!get_size(e, "size", &f->size))
		return "'size' is not a number of bytes";
	json_t *lfs = json_object_get(e, "lfs");
	if (lfs && !json_is_null(lfs)) {
		const char *sha = json_is_object(lfs) ? get_string(lfs, "oid") : NULL;
		if (!sha || !digest_is_lower_hex(sha, 64))
			return "'lfs.oid' is not a 64-hex sha256";
		f->lfs_sha256 = xstrdup(sha);
		if (!get_size(lfs, "size", &f->lfs_size) || !get_size(lfs, "pointerSize", &f->lfs_pointer_size))
			return "'lfs.size' or 'lfs.pointerSize' is not a number";
	}
	json_t *xet = json_object_get(e, "xetHash");
	if (xet && !json_is_null(xet)) {
		const char *x = get_string(e, "xetHash");
		if (!x)
			return "'xetHash' is not a string";
		f->xet_hash = xstrdup(x);
	}
	return NULL;
}

int hub_parse_tree_page(const char *body, size_t len, struct hub_tree *tree, char *err, size_t err_size)
{
	json_error_t jerr;
	json_t *root = json_loadb(body ? body : "", body ? len : 0, 0, &jerr);
	if (!json_is_array(root)) {
		snprintf(err, err_size, "not the hub's tree listing (%s)", root ? "not a JSON list" : jerr.text);
		json_decref(root);
		return -1;
	}
	size_t i, first = tree->n;
	json_t *e;
	tree->files = xrealloc(tree->files, (tree->n + json_array_size(root) + 1) * sizeof(*tree->files));
	json_array_foreach(root, i, e)
	{
		const char *type = json_is_object(e) ? get_string(e, "type") : NULL;
		if (!type) {
			snprintf(err, err_size, "entry %zu has no 'type'", i);
			while (tree->n > first)
				tree_file_free(&tree->files[--tree->n]);
			json_decref(root);
			return -1;
		}
		if (strcmp(type, "file") != 0)
			continue; /* a folder: huggingface_hub's RepoFolder */
		struct hub_tree_file f;
		const char *why = read_tree_file(e, &f);
		if (why) {
			snprintf(err, err_size, "entry %zu (%.200s): %s", i, f.path ? f.path : "?", why);
			text_sanitize(err);
			tree_file_free(&f);
			while (tree->n > first) /* all of the page or nothing */
				tree_file_free(&tree->files[--tree->n]);
			json_decref(root);
			return -1;
		}
		tree->files[tree->n++] = f;
	}
	json_decref(root);
	return 0;
}

void hub_tree_free(struct hub_tree *tree)
{
	for (size_t i = 0; i < tree->n; i++)
		tree_file_free(&tree->files[i]);
	free(tree->files);
	tree->files = NULL;
	tree->n = 0;
}

char *hub_next_page(const char *link)
{
	/* link-value = "<" URI ">" *( ";" param ), values separated by "," */
	for (const char *p = link ? strchr(link, '<') : NULL; p; p = strchr(p, '<')) {
		const char *end = strchr(p, '>');
		if (!end)
			return NULL;
		const char *params = end + 1, *stop = strchr(params, '<');
		size_t plen = stop ? (size_t)(stop - params) : strlen(params);
		char *ps = xstrndup(params, plen);
		bool next = strstr(ps, "rel=\"next\"") || strstr(ps, "rel=next");
		free(ps);
		if (next)
			return xstrndup(p + 1, (size_t)(end - p - 1));
		p = end;
	}
	return NULL;
}

char *hub_page_cursor(const char *url)
{
	const char *q = url ? strchr(url, '?') : NULL;
	for (const char *p = q; p && *p; p = strchr(p, '&')) {
		p++;
		if (strncmp(p, "cursor=", 7) == 0)
			return xstrndup(p + 7, strcspn(p + 7, "&#"));
	}
	return NULL;
}
