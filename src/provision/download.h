/* Parallel HTTP(S) downloads into files, a thread per transfer: size and hash
 * checked while streaming, retries with backoff on 5xx, 429 and network
 * errors, Range resume after a dropped connection, a progress line on a TTY.
 * A file reaches its final name only complete and verified. */
#ifndef GPUGATE_PROVISION_DOWNLOAD_H
#define GPUGATE_PROVISION_DOWNLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct curl_slist;
struct dl_state;

struct dl_job {
	/* filled by the caller */
	const char *url;
	const struct curl_slist *headers; /* extra request headers (borrowed), or NULL */
	const char *tmp_path;             /* bytes go here first */
	const char *final_path;           /* renamed to this once verified */
	bool in_dir;                      /* the two paths are names in the folder dir_fd, */
	int dir_fd;                       /* opened and renamed there without following links */
	int64_t size;                     /* expected length, or -1 when unknown */
	const char *sha256;               /* 64 lowercase hex to match, or NULL */
	const char *git_sha1;             /* 40 hex git blob id to match (needs size), or NULL */
	bool keep_partial;                /* resume from tmp_path now, and keep it on failure */
	unsigned mode;                    /* of a new tmp_path, less the umask; 0: 0644 */
	const char *label;                /* how messages name the file */
	/* filled by dl_run */
	bool ok;
	long http_code;
	char error[512];
	struct dl_state *state;
};

struct dl_options {
	int parallel;         /* transfers at once */
	int retries;          /* extra attempts after a retryable failure */
	double backoff;       /* first wait in seconds, doubled each time */
	long idle_seconds;    /* abort an attempt slower than min_speed for this long */
	long min_speed;       /* bytes per second */
	double deadline;      /* monotonic_seconds() when everything stops; 0: none */
	long timeout_seconds; /* what deadline came from, for the message */
	bool progress;        /* redraw a progress line on stderr */
};

/* GPUGATE_RETRIES (0 to 20), else 5. */
int retries_from_env(void);
/* Sets defaults: 8 at once, 5 retries, 0.5 s backoff, an attempt abandoned
 * after 30 s below 1 KiB/s, no deadline, progress on a TTY. */
void dl_options_init(struct dl_options *o);
/* Runs every job; returns how many failed (each failed job has error set). */
size_t dl_run(struct dl_job *jobs, size_t n, const struct dl_options *o);

/* Hashes a file: sha256 (64 hex) and/or git blob sha1 (40 hex); either out may be NULL.
 * Returns 0 or -errno; *size gets the length. */
int hash_file(const char *path, char sha256_hex[65], char gitsha1_hex[41], int64_t *size);
/* hash_file of an open file (read from its current offset). */
int hash_fd(int fd, char sha256_hex[65], char gitsha1_hex[41], int64_t *size);

/* Git's id of a blob with this content: sha1("blob <len>\0" + data), 40 hex. */
void git_blob_id(const void *data, size_t len, char out[41]);
/* Hex checks: lib/digest.h (digest_is_hex, digest_is_lower_hex). */

#endif
