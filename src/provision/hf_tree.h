/* huggingface_hub's per-commit tree listing, trees/<commit>.json
 * (_tree_cache.py, format_version 1), made from the hub's tree listing only
 * where it agrees with what hf fetch downloaded and verified. */
#ifndef GPUGATE_PROVISION_HF_TREE_H
#define GPUGATE_PROVISION_HF_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "hub_answer.h"

/* A file of the snapshot whose blob was checked against its hash. */
struct hf_tree_verified {
	const char *path;
	const char *etag; /* the blob's name: git blob id (40 hex) or sha256 (64) */
	int64_t size;
};

/* Checks that tree names exactly the verified files, each with the hash its
 * blob was verified against (lfs_sha256 for an LFS file, else blob_id), the
 * same size, and for an LFS file a blob_id that is the git id of its LFS
 * pointer. Returns the listing's text as huggingface_hub writes it
 * (json.dump(indent=1)), or NULL with err naming the first file that
 * disagrees. Caller frees. */
char *hf_tree_listing_json(const struct hub_tree *tree, const struct hf_tree_verified *files, size_t n, char *err,
			   size_t err_size);

#endif
