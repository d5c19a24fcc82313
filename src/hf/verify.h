/* Offline integrity of a scanned cache: every blob's content against its
 * name (sha256 for 64 hex digits, git blob sha1 for 40), hashed once each,
 * in parallel, in fixed-size reads. Blobs are opened only by name inside
 * their repo's blobs/ folder, reached without following any link. */
#ifndef GPUGATE_HF_VERIFY_H
#define GPUGATE_HF_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "layout.h"

enum hf_blob_state {
	HF_BLOB_OK = 0,
	HF_BLOB_MISMATCH,     /* content hashes to something else */
	HF_BLOB_UNREADABLE,   /* open or read failed (errno in error) */
	HF_BLOB_CHANGED,      /* the size changed while it was read */
	HF_BLOB_UNNAMED,      /* the name is not 40 or 64 hex digits: unverified */
	HF_BLOB_SKIPPED,      /* not hashed: not a plain file, or the deadline came */
	HF_BLOB_UNLISTED,     /* a copied snapshot file with no listing entry to compare with: unverified */
	HF_BLOB_SIZE_DIFFERS, /* its size is not the one its revision's listing gives: not hashed */
};

/* One item hashed: a blob, or a snapshot file that is a copy (a plain file,
 * not a link), checked against its revision's listing. */
struct hf_blob_result {
	size_t repo;          /* index into the cache */
	long blob;            /* index into the repo's blobs, or -1 for a copy */
	long rev, file;       /* the copy's revision and file, or -1 */
	const char *expected; /* the hash it must have: the blob's name or the listing's */
	size_t hex_len;       /* 64 (sha256) or 40 (git blob sha1) */
	uint64_t size;
	enum hf_blob_state state;
	int error;             /* errno for UNREADABLE */
	char actual[65];       /* hex digest for MISMATCH */
	const char *algorithm; /* "sha256" or "git-sha1" */
	uint64_t listed_size;  /* for SIZE_DIFFERS: the size the listing gives */
	bool trusted;          /* OK from the verified-blob record, not hashed */
	bool recordable;       /* hashed OK with the scan's stat data unchanged to the end */
};

struct hf_record_loading;
struct hf_verify_options {
	char **repos;       /* folders to verify (NULL: all) */
	unsigned threads;   /* 0: one per online CPU */
	double deadline;    /* monotonic seconds; 0: none */
	bool progress;      /* a progress line on stderr (src/lib/progress.h) */
	const char *label;  /* its prefix: "hf verify" or "hf.integrity" */
	const char *record; /* the verified-blob record file (verified_record.h) to trust and update, or NULL */
	bool full;          /* trust no record: hash every blob (the record is still written) */
	/* the record's load begun before the scan (hf_record_load_start of
	 * record): hf_verify_start joins it and takes the result over */
	struct hf_record_loading *record_loading;
};

struct hf_verify {
	struct hf_blob_result *results; /* one per blob and copied file of the selected repos */
	size_t count;
	uint64_t bytes;         /* hashed */
	uint64_t bytes_to_hash; /* what was to be hashed (bytes_to_hash - bytes: left at a deadline) */
	size_t hashed;          /* files hashed to the end */
	size_t trusted;         /* blobs trusted from the record */
	double seconds;
	bool timed_out;
	unsigned threads;      /* hashing threads used */
	bool record_written;   /* the record was updated */
	char record_note[600]; /* why the record was not used or not written ("" when it was) */
};

/* Hashes every blob of the selected repos. Returns 0, or -errno when the
 * cache folder cannot be opened. */
int hf_verify_run(const struct hf_cache *cache, const struct hf_verify_options *opt, struct hf_verify *out);
/* hf_verify_run in two halves, so that the blobs are hashed while the scan
 * walks the snapshots (hf_cache_scan_hooked): start hashes the blobs on
 * threads of its own and returns at once (NULL, errno set: the cache folder
 * cannot be opened); finish, once the scan has ended, waits for them, hashes
 * the copied snapshot files, fills out and frees the job, and returns 0 (for
 * a NULL job: -errno, so that finish(start(...)) passes start's failure on).
 * cache must stay. */
struct hf_verify_job;
struct hf_verify_job *hf_verify_start(const struct hf_cache *cache, const struct hf_verify_options *opt);
int hf_verify_finish(struct hf_verify_job *job, struct hf_verify *out);
void hf_verify_free(struct hf_verify *v);
/* Whether the options select the repo in this cache folder. */
bool hf_verify_selected(const struct hf_verify_options *opt, const char *folder);
const char *hf_blob_state_text(enum hf_blob_state s);
/* "2.10 GiB hashed, 5.90 GiB left (about 4 s more at 1.40 GiB/s)": where a
 * run that stopped at its deadline stood. Caller frees. */
char *hf_verify_stopped_text(const struct hf_verify *v);

/* What one thread hashes with, kept from file to file: its read buffer and
 * its digest context (a context made and freed per file costs each of many
 * threads a share of OpenSSL's locks). Zero it, set buf, bufsize and
 * progress; hf_hasher_release frees the context. */
struct digest;
struct hf_hasher {
	unsigned char *buf;         /* scratch of bufsize bytes */
	size_t bufsize;             /* also the size of the pieces hashed */
	_Atomic uint64_t *progress; /* bytes are added here as they are hashed (may be NULL) */
	struct digest *ctx;         /* lib/digest.h's running hash, made on first use */
	double deadline;            /* monotonic seconds (0: none): -ETIMEDOUT past it, mid-file */
	const _Atomic bool *cancel; /* when it turns true: -ECANCELED, mid-file (may be NULL) */
};
/* Hashes an open file by the algorithm its name calls for (hex_len 64:
 * sha256, 40: git blob sha1 over "blob SIZE\0" + content, SIZE from fstat).
 * Returns 0 and the hex digest, or -errno (-ESTALE when the size changed
 * under the read; -ETIMEDOUT or -ECANCELED as the hasher's deadline and
 * cancel say, looked at every MiB hashed). */
int hf_hasher_fd(struct hf_hasher *h, int fd, size_t hex_len, char hex[65], uint64_t *bytes);
void hf_hasher_release(struct hf_hasher *h);
/* The same, once, with buf as scratch. */
int hf_hash_fd(int fd, size_t hex_len, unsigned char *buf, size_t bufsize, char hex[65], uint64_t *bytes);
/* The finding for a result that is not OK, naming the snapshot files (revision
 * and path) behind the blob: "org--x: model.safetensors in revision ... : sha256
 * mismatch ...". Sanitized; caller frees. */
char *hf_result_text(const struct hf_cache *cache, const struct hf_blob_result *r);
/* The same finding as JSON: repo, state, path, blob ("blobs/<name>", for a
 * blob), files [{revision, refs, path}] behind it, and for a mismatch the
 * algorithm, expected and actual hashes. No message or severity. */
typedef struct json_t json_t;
json_t *hf_result_json(const struct hf_cache *cache, const struct hf_blob_result *r);
/* The snapshot files that link to blob (index in repo->blobs), as the JSON
 * reports name them: [{revision, refs, path}]. */
json_t *hf_blob_files_json(const struct hf_repo *repo, long blob);
/* Whether a result is about a name nobody can check (counted as unverified, never as matching). */
bool hf_result_unverified(const struct hf_blob_result *r);

#endif
