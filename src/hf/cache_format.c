/* The hub cache's path grammar (cache_format.h). */
#include "cache_format.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/digest.h"
#include "../lib/strbuf.h"
#include "../lib/util.h"

/* Each repo type and its folder prefix (constants.py REPO_TYPES_MAPPING). */
static const struct {
	const char *word;
	const char *prefix;
} types[] = {
	{ "model", "models" },
	{ "dataset", "datasets" },
	{ "space", "spaces" },
	{ "kernel", "kernels" },
};

const char *hf_repo_type_prefix(const char *type)
{
	for (size_t i = 0; i < ARRAY_SIZE(types); i++)
		if (strcmp(type, types[i].word) == 0 || strcmp(type, types[i].prefix) == 0)
			return types[i].prefix;
	return NULL;
}

const char *hf_repo_type_of_prefix(const char *prefix, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(types); i++)
		if (strlen(types[i].prefix) == len && strncmp(prefix, types[i].prefix, len) == 0)
			return types[i].word;
	return NULL;
}

const char *hf_repo_folder_type(const char *name)
{
	const char *sep = strstr(name, HF_REPO_ID_SEPARATOR);
	return sep ? hf_repo_type_of_prefix(name, (size_t)(sep - name)) : NULL;
}

char *hf_folder_name(const char *type, const char *id)
{
	struct strbuf sb = STRBUF_INIT;
	const char *prefix = hf_repo_type_prefix(type);
	if (prefix)
		sb_puts(&sb, prefix);
	else
		sb_printf(&sb, "%ss", type); /* upstream's f"{repo_type}s" */
	sb_puts(&sb, HF_REPO_ID_SEPARATOR);
	for (const char *p = id; *p; p++) {
		if (*p == '/')
			sb_puts(&sb, HF_REPO_ID_SEPARATOR);
		else
			sb_add(&sb, p, 1);
	}
	return sb_detach(&sb);
}

bool hf_repo_id_round_trips(const char *id)
{
	/* the reader turns each "--" into "/" from the left: a "--" of the id
	 * would be read as "/", and the '-' before a '/' pairs with the
	 * separator's first '-' */
	return !strstr(id, HF_REPO_ID_SEPARATOR) && !strstr(id, "-/");
}

static bool word_char(char c)
{
	return isalnum_ascii(c) || c == '_' || (unsigned char)c > 0x7f;
}

/* One part of an id: [\w\-.]+ between word boundaries, at most max bytes. */
static bool id_part_ok(const char *p, size_t n, size_t max)
{
	if (n == 0 || n > max || !word_char(p[0]) || !word_char(p[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!word_char(p[i]) && p[i] != '-' && p[i] != '.')
			return false;
	return true;
}

const char *hf_repo_id_problem(const char *id)
{
	const char *slash = strchr(id, '/');
	if (slash && strchr(slash + 1, '/'))
		return "a repo id is NAME or NAMESPACE/NAME";
	const char *name = slash ? slash + 1 : id;
	if ((slash && !id_part_ok(id, (size_t)(slash - id), SIZE_MAX)) || !id_part_ok(name, strlen(name), 96))
		return "a repo id uses letters, digits, '-', '_' and '.', each part starting and ending with a letter or "
		       "digit, the name at most 96 characters";
	if (strstr(id, HF_REPO_ID_SEPARATOR) || strstr(id, ".."))
		return "a repo id has no '--' or '..'";
	size_t n = strlen(id);
	if (n >= 4 && strcmp(id + n - 4, ".git") == 0)
		return "a repo id does not end in '.git'";
	return NULL;
}

/* An id with an empty part ("", "/x", "a/", "a//b"). */
static bool has_empty_part(const char *id)
{
	return !*id || id[0] == '/' || id[strlen(id) - 1] == '/' || strstr(id, "//");
}

enum hf_folder_status hf_folder_parse(const char *name, struct hf_folder *out)
{
	memset(out, 0, sizeof(*out));
	if (!*name || strchr(name, '/'))
		return HF_FOLDER_NOT_A_NAME;
	const char *sep = strstr(name, HF_REPO_ID_SEPARATOR);
	if (!sep)
		return HF_FOLDER_NO_SEPARATOR;
	size_t seplen = strlen(HF_REPO_ID_SEPARATOR);
	out->prefix = xstrndup(name, (size_t)(sep - name));
	out->type = hf_repo_type_of_prefix(name, (size_t)(sep - name));
	struct strbuf id = STRBUF_INIT;
	for (const char *p = sep + seplen; *p;) {
		const char *next = strstr(p, HF_REPO_ID_SEPARATOR);
		size_t n = next ? (size_t)(next - p) : strlen(p);
		sb_add(&id, p, n);
		if (next)
			sb_puts(&id, "/");
		p = next ? next + seplen : p + n;
	}
	out->id = sb_detach(&id);
	if (!out->type)
		return HF_FOLDER_UNKNOWN_TYPE;
	return has_empty_part(out->id) ? HF_FOLDER_EMPTY_PART : HF_FOLDER_OK;
}

void hf_folder_free(struct hf_folder *f)
{
	free(f->prefix);
	free(f->id);
	memset(f, 0, sizeof(*f));
}

char *hf_blob_rel(const char *name)
{
	return xasprintf(HF_BLOBS "/%s", name);
}

char *hf_snapshot_rel(const char *commit, const char *path)
{
	return path ? xasprintf(HF_SNAPSHOTS "/%s/%s", commit, path) : xasprintf(HF_SNAPSHOTS "/%s", commit);
}

char *hf_ref_rel(const char *revision)
{
	return xasprintf(HF_REFS "/%s", revision);
}

char *hf_tree_rel(const char *commit)
{
	return xasprintf(HF_TREES "/%s.json", commit);
}

char *hf_no_exist_rel(const char *commit, const char *path)
{
	return xasprintf(HF_NO_EXIST "/%s/%s", commit, path);
}

char *hf_lock_rel(const char *folder)
{
	return xasprintf(HF_LOCKS "/%s", folder);
}

char *hf_snapshot_link_target(const char *path, const char *blob)
{
	struct strbuf target = STRBUF_INIT;
	sb_puts(&target, "../../");
	for (const char *c = path; *c; c++)
		if (*c == '/')
			sb_puts(&target, "../");
	sb_printf(&target, HF_BLOBS "/%s", blob);
	return sb_detach(&target);
}

const char *hf_blob_of_rel(const char *rel)
{
	size_t n = strlen(HF_BLOBS);
	if (strncmp(rel, HF_BLOBS, n) != 0 || rel[n] != '/' || !rel[n + 1] || strchr(rel + n + 1, '/'))
		return NULL;
	return rel + n + 1;
}

size_t hf_blob_name_length(const char *name)
{
	return digest_name_length(name);
}

bool hf_is_incomplete(const char *name)
{
	return str_ends_with(name, HF_INCOMPLETE);
}

bool hf_is_commit(const char *s)
{
	return digest_is_lower_hex(s, 40);
}
