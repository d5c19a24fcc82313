/* The hub cache's path grammar, one owner for the reader (hf/layout.c,
 * verify.c, checks/hf.c) and the writer (gpugate-provision's hf fetch).
 * huggingface_hub's file_download.py and _tree_cache.py lay a repo folder
 * out as (its guide, huggingface.co/docs/huggingface_hub/guides/manage-cache,
 * "Understand caching"):
 *
 *   <cache>/models--org--name/            hf_repo_folder (location.h)
 *     blobs/<sha256 or git blob id>       the content, named by its hash
 *     blobs/<name>.incomplete             a download under way (or killed)
 *     snapshots/<commit>/<path>           links ../../blobs/<name>
 *     refs/<revision>                     a file holding the commit
 *     trees/<commit>.json                 the listing of the commit
 *     .no_exist/<commit>/<path>           the Hub has no such file there
 *   <cache>/.locks/models--org--name/     lock files of the downloads
 *   <cache>/CACHEDIR.TAG                  the cache's tag for backup tools
 *
 * The builders return paths relative to the repo folder (or, for
 * .locks, to the cache), malloc'ed. */
#ifndef GPUGATE_HF_CACHE_FORMAT_H
#define GPUGATE_HF_CACHE_FORMAT_H

#include <stdbool.h>
#include <stddef.h>

#define HF_BLOBS      "blobs"
#define HF_SNAPSHOTS  "snapshots"
#define HF_REFS       "refs"
#define HF_TREES      "trees"
#define HF_NO_EXIST   ".no_exist"
#define HF_LOCKS      ".locks"
#define HF_INCOMPLETE ".incomplete"
/* at the cache root: marks it a cache for backup tools (huggingface_hub's
 * _local_folder.py writes it) */
#define HF_CACHEDIR_TAG "CACHEDIR.TAG"

/* blobs/<name> */
char *hf_blob_rel(const char *name);
/* snapshots/<commit>, or snapshots/<commit>/<path> when path is not NULL */
char *hf_snapshot_rel(const char *commit, const char *path);
/* refs/<revision> */
char *hf_ref_rel(const char *revision);
/* trees/<commit>.json */
char *hf_tree_rel(const char *commit);
/* .no_exist/<commit>/<path> */
char *hf_no_exist_rel(const char *commit, const char *path);
/* .locks/<folder>, under the cache */
char *hf_lock_rel(const char *folder);
/* What snapshots/<commit>/<path> links to: "../../" and one more "../" per
 * folder of path, then blobs/<name> (huggingface_hub's _create_symlink
 * makes it relative). */
char *hf_snapshot_link_target(const char *path, const char *blob);

/* The blob's name when rel (relative to the repo folder) is blobs/<name>,
 * one component; else NULL. */
const char *hf_blob_of_rel(const char *rel);

/* Names: 64 or 40 when a blob's name is a SHA-256 or a git blob id (either
 * case: a blob named in upper case is matched upstream case-insensitively,
 * as utils/_verification.py lower-cases both sides), else 0; whether a name is a download under way; whether s is a
 * commit as huggingface_hub writes it (40 lower-case hex digits). */
size_t hf_blob_name_length(const char *name);
bool hf_is_incomplete(const char *name);
bool hf_is_commit(const char *s);

#endif
