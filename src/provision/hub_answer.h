/* Reading the hub's answers, apart from the network code so that they can be
 * fuzzed: the revision listing (JSON) and the metadata of a HEAD .../resolve/
 * (commit from X-Repo-Commit, etag from X-Linked-Etag else ETag, size from
 * X-Linked-Size else Content-Length, as huggingface_hub's
 * src/huggingface_hub/file_download.py get_hf_file_metadata reads them). */
#ifndef GPUGATE_PROVISION_HUB_ANSWER_H
#define GPUGATE_PROVISION_HUB_ANSWER_H

#include <stddef.h>
#include <stdint.h>

#include "http.h"

/* GET /api/{type}s/{repo}/revision/{rev}: 'sha' (40 hex) and every
 * siblings[].rfilename. Returns 0 with *commit and paths[0..*n) (callee-owned:
 * free each and the array); -1 with err saying what is wrong, *commit and
 * *paths NULL. Sibling names are returned as given: the caller checks them. */
int hub_parse_revision(const char *body, size_t len, char **commit, char ***paths, size_t *n, char *err,
		       size_t err_size);

/* The file's metadata from a HEAD answer's headers: X-Repo-Commit (40 hex),
 * X-Linked-Etag over ETag (W/ and quotes removed; it becomes a blob file
 * name, so only [A-Za-z0-9_-], at most 128), X-Linked-Size over
 * Content-Length (a decimal >= 0). Returns 0, or -1 with err. */
struct hub_meta {
	char *commit;
	char *etag;
	int64_t size;
};
int hub_resolve_meta(const struct http_response *r, struct hub_meta *m, char *err, size_t err_size);
void hub_meta_free(struct hub_meta *m);

/* One file of a repo's tree listing, GET /api/{type}s/{repo}/tree/{commit}
 * ?recursive=true&expand=false, as huggingface_hub's RepoFile reads it
 * (hf_api.py): "oid" is the git blob id, "lfs" {"oid", "size",
 * "pointerSize"} is there for LFS files, "xetHash" for Xet-stored ones. */
struct hub_tree_file {
	char *path;
	int64_t size;
	char *blob_id;    /* 40 lowercase hex */
	char *lfs_sha256; /* 64 lowercase hex, or NULL */
	int64_t lfs_size;
	int64_t lfs_pointer_size;
	char *xet_hash; /* as sent (huggingface_hub checks it when writing), or NULL */
};
struct hub_tree {
	struct hub_tree_file *files;
	size_t n;
};
/* Appends the files of one page (a JSON list; "directory" entries are
 * skipped). Returns 0, or -1 with err naming the entry and nothing of this
 * page appended. */
int hub_parse_tree_page(const char *body, size_t len, struct hub_tree *tree, char *err, size_t err_size);
void hub_tree_free(struct hub_tree *tree);

/* The rel="next" URL of a Link header (RFC 8288, as the hub paginates), or
 * NULL. Caller frees. */
char *hub_next_page(const char *link);
/* The value of a page URL's cursor= query parameter (the hub's position in
 * the listing), or NULL. Caller frees. */
char *hub_page_cursor(const char *url);

/* The most a tree listing may take: the hub sends 1000 entries a page, so
 * 1000 pages hold a million-file repo (huggingface_hub's listing of such a
 * repo is ~200 MB); past either cap the listing ends with an error. */
#define HUB_TREE_MAX_PAGES   2000
#define HUB_TREE_MAX_ENTRIES 1000000

#endif
