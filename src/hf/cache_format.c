/* The hub cache's path grammar (cache_format.h). */
#include "cache_format.h"

#include <string.h>

#include "../lib/digest.h"
#include "../lib/strbuf.h"
#include "../lib/util.h"

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
