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
	HF_BLOB_MISMATCH,   /* content hashes to something else */
	HF_BLOB_UNREADABLE, /* open or read failed (errno in error) */
	HF_BLOB_CHANGED,    /* the size changed while it was read */
	HF_BLOB_UNNAMED,    /* the name is not 40 or 64 hex digits: nothing to compare */
	HF_BLOB_SKIPPED,    /* not hashed: not a plain file, or the deadline came */
};

struct hf_blob_result {
	size_t repo, blob;          /* indexes into the cache */
	enum hf_blob_state state;
	int error;                  /* errno for UNREADABLE */
	char actual[65];            /* hex digest for MISMATCH */
	const char *algorithm;      /* "sha256" or "git-sha1" */
};

struct hf_verify_options {
	char **repos;               /* folders to verify (NULL: all) */
	unsigned threads;           /* 0: one per online CPU */
	double deadline;            /* monotonic seconds; 0: none */
	bool progress;              /* progress lines on stderr after a second */
};

struct hf_verify {
	struct hf_blob_result *results; /* one per blob of the selected repos */
	size_t count;
	uint64_t bytes;             /* hashed */
	double seconds;
	bool timed_out;
};

/* Hashes every blob of the selected repos. Returns 0, or -errno when the
 * cache folder cannot be opened. */
int hf_verify_run(const struct hf_cache *cache, const struct hf_verify_options *opt, struct hf_verify *out);
void hf_verify_free(struct hf_verify *v);
/* Whether the options select the repo in this cache folder. */
bool hf_verify_selected(const struct hf_verify_options *opt, const char *folder);
const char *hf_blob_state_text(enum hf_blob_state s);

/* Hashes an open file by the algorithm its name calls for (hex_len 64:
 * sha256, 40: git blob sha1 over "blob SIZE\0" + content, SIZE from fstat).
 * buf is scratch of bufsize bytes. Returns 0 and the hex digest, or -errno
 * (-ESTALE when the size changed under the read). */
int hf_hash_fd(int fd, size_t hex_len, unsigned char *buf, size_t bufsize, char hex[65], uint64_t *bytes);

#endif
