#include "hf_tree.h"

#include <ctype.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "download.h"
#include "lib/util.h"

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct hf_tree_verified *)a)->path, ((const struct hf_tree_verified *)b)->path);
}

static int tree_by_path(const void *a, const void *b)
{
	return strcmp((*(const struct hub_tree_file *const *)a)->path, (*(const struct hub_tree_file *const *)b)->path);
}

/* Git LFS's pointer file for a sha256 and size (the spec's canonical form:
 * version, oid, size, each line ending in a newline). */
static char *lfs_pointer(const char *sha256, int64_t size)
{
	return xasprintf("version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %" PRId64 "\n", sha256, size);
}

/* Returns NULL, or what is wrong with listed file t verified as v. */
static const char *disagreement(const struct hub_tree_file *t, const struct hf_tree_verified *v)
{
	const char *hash = t->lfs_sha256 ? t->lfs_sha256 : t->blob_id;
	if (strcmp(hash, v->etag) != 0)
		return t->lfs_sha256 ? "its lfs sha256 is not the hash its download was verified against"
				     : "its blob id is not the hash its download was verified against";
	if (t->size != v->size || (t->lfs_sha256 && t->lfs_size != v->size))
		return "its size is not the size downloaded";
	if (t->lfs_sha256) {
		char *pointer = lfs_pointer(t->lfs_sha256, t->lfs_size), id[41];
		size_t len = strlen(pointer);
		git_blob_id(pointer, len, id);
		free(pointer);
		if (strcmp(id, t->blob_id) != 0 || t->lfs_pointer_size != (int64_t)len)
			return "its blob id is not the git id of its LFS pointer";
	}
	/* huggingface_hub writes no listing with a malformed Xet hash (_tree_cache.py) */
	if (t->xet_hash && (strlen(t->xet_hash) != 64 || strspn(t->xet_hash, "0123456789abcdefABCDEF") != 64))
		return "its xetHash is not 64 hex digits";
	return NULL;
}

/* One entry as TreeCacheEntry.to_json writes it: size, blob_id, then
 * lfs_sha256 and lfs_size for LFS, then xet_hash. */
static json_t *entry_json(const struct hub_tree_file *t)
{
	json_t *o = json_object();
	json_object_set_new(o, "size", json_integer(t->size));
	json_object_set_new(o, "blob_id", json_string(t->blob_id));
	if (t->lfs_sha256) {
		json_object_set_new(o, "lfs_sha256", json_string(t->lfs_sha256));
		json_object_set_new(o, "lfs_size", json_integer(t->lfs_size));
	}
	if (t->xet_hash)
		json_object_set_new(o, "xet_hash", json_string(t->xet_hash));
	return o;
}

/* Python's json escapes a non-ASCII character as \u and four lowercase hex
 * digits; jansson writes them in capitals. Same JSON, other bytes: lowered. */
static void lower_unicode_escapes(char *s)
{
	for (; *s; s++) {
		if (*s != '\\')
			continue;
		s++;
		if (*s == 'u')
			for (int i = 1; i <= 4 && s[i]; i++)
				s[i] = (char)tolower((unsigned char)s[i]);
		if (!*s)
			break;
	}
}

char *hf_tree_listing_json(const struct hub_tree *tree, const struct hf_tree_verified *files, size_t n, char *err,
			   size_t err_size)
{
	struct hf_tree_verified *v = xcalloc(n + 1, sizeof(*v));
	memcpy(v, files, n * sizeof(*v));
	qsort(v, n, sizeof(*v), by_path);
	const struct hub_tree_file **t = xcalloc(tree->n + 1, sizeof(*t));
	for (size_t i = 0; i < tree->n; i++)
		t[i] = &tree->files[i];
	qsort(t, tree->n, sizeof(*t), tree_by_path);
	char *out = NULL;
	const char *why = NULL, *path = NULL;
	size_t i = 0, k = 0;
	/* both sorted by path: walk them side by side */
	while (!why && (i < tree->n || k < n)) {
		int c = i >= tree->n ? 1 : k >= n ? -1 : strcmp(t[i]->path, v[k].path);
		if (c < 0) {
			path = t[i]->path;
			why = "the hub's tree listing names it, but it was not fetched";
		} else if (c > 0) {
			path = v[k].path;
			why = "it was fetched, but the hub's tree listing does not name it";
		} else if (i + 1 < tree->n && strcmp(t[i]->path, t[i + 1]->path) == 0) {
			path = t[i]->path;
			why = "the hub's tree listing names it twice";
		} else if ((why = disagreement(t[i], &v[k]))) {
			path = t[i]->path;
		}
		i += c <= 0;
		k += c >= 0;
	}
	if (why) {
		snprintf(err, err_size, "%s: %s", path, why);
		text_sanitize(err);
	} else {
		json_t *root = json_object(), *list = json_object();
		json_object_set_new(root, "format_version", json_integer(1));
		for (i = 0; i < tree->n; i++)
			json_object_set_new(list, t[i]->path, entry_json(t[i]));
		json_object_set_new(root, "files", list);
		/* json.dump(data, f, indent=1): ", " and ": " separators, ASCII only */
		out = json_dumps(root, JSON_INDENT(1) | JSON_ENSURE_ASCII | JSON_PRESERVE_ORDER);
		json_decref(root);
		if (out)
			lower_unicode_escapes(out);
		else
			snprintf(err, err_size, "the listing could not be written as JSON");
	}
	free(v);
	free(t);
	return out;
}
