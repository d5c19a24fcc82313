/* A repo's tree listing, `<repo folder>/trees/<commit>.json`, as
 * huggingface_hub writes and reads it (src/huggingface_hub/_tree_cache.py):
 *   {"format_version": 1, "files": {"<path>": {"size": N, "blob_id": "<git sha1>",
 *    "lfs_sha256"?: "<sha256>", "lfs_size"?: N, "xet_hash"?: "<64 hex>"}}}
 * snapshot_download(local_files_only=True) uses it to refuse an incomplete
 * snapshot (_snapshot_download.py, _raise_if_incomplete_snapshot). The
 * reader keeps upstream's verdict on every odd file: which ones it ignores
 * silently, which with a warning, and which make it raise. */
#ifndef GPUGATE_HF_LISTING_H
#define GPUGATE_HF_LISTING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum hf_listing_state {
	HF_LISTING_NONE = 0, /* no trees/<commit>.json */
	HF_LISTING_OK,
	HF_LISTING_VERSION,   /* another format_version: upstream ignores it silently */
	HF_LISTING_MALFORMED, /* unreadable, not JSON, a key missing: upstream warns and ignores it */
	HF_LISTING_BAD_XET,   /* a xet_hash that is not 64 hex digits: upstream ignores it silently */
	HF_LISTING_CRASHES,   /* upstream raises reading it (AttributeError, TypeError): downloads fail */
	HF_LISTING_TOO_BIG,   /* past this reader's size or memory cap, or memory ran out: a failure, never ignored */
};

struct hf_listed_file {
	char *path;
	bool has_size; /* an integer size (upstream takes any value) */
	uint64_t size;
	char *blob_id;    /* git blob sha1 (of the LFS pointer for LFS files), or NULL when not a string */
	char *lfs_sha256; /* NULL when absent */
	char *xet_hash;   /* NULL when absent */
	long file;        /* index in the revision's files, or -1 (set by the layout scan) */
};

struct hf_listing {
	enum hf_listing_state state;
	char *problem;                /* why it is not OK (names no path: the caller knows it) */
	struct hf_listed_file *files; /* sorted by path (OK only) */
	size_t n_files;
	char *strings; /* when set, every file's strings point into it (one block, as a kept listing is read) */
};

/* Reads trees/<commit>.json under the repo folder open at repo_fd, never
 * following a link (trees/ or the file being a link counts as malformed),
 * capped at max_bytes. Always fills out (state NONE when there is none). */
void hf_listing_read(int repo_fd, const char *commit, size_t max_bytes, struct hf_listing *out);
/* Its two halves: opens the listing (the same rules; st its fstat) and
 * returns the descriptor, or -1 with out filled (NONE, or why not); then
 * reads and parses it from fd. */
struct stat;
int hf_listing_open(int repo_fd, const char *commit, size_t max_bytes, struct stat *st, struct hf_listing *out);
void hf_listing_read_fd(int fd, const struct stat *st, struct hf_listing *out);
/* Parses a listing from memory (the same rules; for tests and fuzzing),
 * with the memory budget of a listing of that size (16x, at most
 * HF_LISTING_MAX_MEMORY). */
void hf_listing_parse(const char *data, size_t len, struct hf_listing *out);
/* The same with a memory cap of its own (tests). */
void hf_listing_parse_capped(const char *data, size_t len, size_t memory_cap, struct hf_listing *out);
void hf_listing_free(struct hf_listing *l);
const struct hf_listed_file *hf_listing_find(const struct hf_listing *l, const char *path);
/* The hash the content of a listed file must have, lower case: lfs_sha256
 * when set, else blob_id (a git blob sha1), as `hf cache verify` chooses
 * (utils/_verification.py, verify_maps). NULL when neither is a hash. */
const char *hf_listed_hash(const struct hf_listed_file *f);
/* Whether hf_listed_hash(f) is a hash and names another blob than blob
 * (compared without case). The usual answer, the same name, costs no check
 * that the listing's text is a hash (20,000 of them a bench scan). */
bool hf_listed_other_blob(const struct hf_listed_file *f, const char *blob);
/* Why a listing state is not usable, for messages. */
const char *hf_listing_state_text(enum hf_listing_state s);

#define HF_LISTING_MAX_BYTES (256u << 20) /* a 1M-file repo's listing is ~200 MB */
/* what parsing one listing may allocate: a listing of up to ~120 MB (~600k files) fits */
#define HF_LISTING_MAX_MEMORY ((size_t)2u << 30)

#endif
