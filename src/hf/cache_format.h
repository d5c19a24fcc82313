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
 * .locks, to the cache), malloc'ed.
 *
 * The repo folder's name, both ways (huggingface_hub at commit
 * ee0a4510f4bc15e26cb722be2efc2bdb01383ca0, 1.29.0.dev0):
 * - written by file_download.py repo_folder_name(): "{repo_type}s" and the
 *   parts of repo_id.split("/") joined by constants.py REPO_ID_SEPARATOR,
 *   "--" (a substring hf.co forbids in repo ids, so it cannot be mistaken);
 * - read back by utils/_cache_manager.py _scan_cached_repo(): no "--" is
 *   no cache folder; else split at the first "--", the prefix less its
 *   last letter is the type (constants.py REPO_TYPES_MAPPING: models,
 *   datasets, spaces, kernels), and the rest with every "--" (left to
 *   right, str.replace) turned into "/" is the id. */
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
#define HF_CACHEDIR_TAG      "CACHEDIR.TAG"

#define HF_REPO_ID_SEPARATOR "--"

/* The folder prefix ("models") of a repo type given as its word ("model")
 * or as the prefix itself; NULL for a type huggingface_hub does not know. */
const char *hf_repo_type_prefix(const char *type);
/* The repo type ("model") a folder name's first len bytes name ("models"),
 * or NULL for none huggingface_hub knows. */
const char *hf_repo_type_of_prefix(const char *prefix, size_t len);
/* The type of a name that starts with a known prefix and the separator
 * ("models--..."), else NULL: a quick look at a listing. */
const char *hf_repo_folder_type(const char *name);

/* repo_folder_name(): the folder of repo id under type (a word or a
 * prefix; another word gets upstream's "{type}s"), "models--org--name".
 * Total, as upstream's: whether the name reads back as id is
 * hf_repo_id_round_trips(id). Caller frees. */
char *hf_folder_name(const char *type, const char *id);
/* Whether id's folder name reads back as id: false when id holds "--"
 * (read back as "/") or "-/" ("a-/b" is written models--a---b, which
 * reads back as "a/-b"). */
bool hf_repo_id_round_trips(const char *id);
/* huggingface_hub's validate_repo_id (utils/_validators.py, REPO_ID_REGEX):
 * "name" or "namespace/name", each part of word characters, '-' and '.',
 * starting and ending with a word character, the name at most 96 bytes; no
 * "--" or ".." anywhere, no ".git" at the end. NULL when id is one, else
 * the rule it breaks. (A byte above 0x7f counts as a word character:
 * Python's \w takes most non-ASCII letters, and a verify must not refuse an
 * id upstream accepts.) */
const char *hf_repo_id_problem(const char *id);

enum hf_folder_status {
	HF_FOLDER_OK,
	HF_FOLDER_NOT_A_NAME,   /* empty, or holds a '/': no one folder */
	HF_FOLDER_NO_SEPARATOR, /* no "--": not a repo folder */
	HF_FOLDER_UNKNOWN_TYPE, /* a prefix huggingface_hub does not know */
	HF_FOLDER_EMPTY_PART,   /* an id with an empty part, no repo's: "models--", "models----x" */
};
/* A folder name as _scan_cached_repo() reads it. */
struct hf_folder {
	const char *type; /* "model", or NULL for an unknown prefix */
	char *prefix;     /* what is before the first "--" */
	char *id;         /* the rest, each "--" read as "/" */
};
/* Reads name into out (always set; prefix and id are NULL when there is
 * no separator); free it with hf_folder_free. Both ways agree: where this
 * reads (type, id) hf_folder_name(type, id) gives name back, and where
 * hf_repo_id_round_trips(id) this reads hf_folder_name(type, id) as id. */
enum hf_folder_status hf_folder_parse(const char *name, struct hf_folder *out);
void hf_folder_free(struct hf_folder *f);

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
