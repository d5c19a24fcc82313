/* A scan of a Hugging Face hub cache folder: repos, blobs, snapshots, refs,
 * and every problem huggingface_hub's scan_cache_dir() would drop a whole
 * repo for, recorded per repo instead (plus leftovers it does not flag).
 * Links are followed as scan_cache_dir() follows them (utils/_cache_manager.py:
 * is_dir() and Path.resolve() follow links, glob("**") does not descend into
 * a linked folder): a linked repo folder, a linked snapshots/ or
 * snapshots/<rev>, and snapshot files through any chain of links, counted
 * by the file they end at. Where the cache is read at the path
 * huggingface_hub itself uses (follow_outside), links out of the cache are
 * followed by the kernel; under --root (the cache read at another path) a
 * link is resolved one component at a time inside the cache and one that
 * leaves it is never followed (SECURITY.md). Nothing is ever written. */
#ifndef GPUGATE_HF_LAYOUT_H
#define GPUGATE_HF_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "listing.h"
#include "location.h"

enum hf_link {
	HF_LINK_OK = 0,       /* a relative link to an existing blob of this repo */
	HF_LINK_COPY,         /* a regular file in the snapshot (no-symlink mode) */
	HF_LINK_MISSING_BLOB, /* to blobs/<name>, which is missing */
	HF_LINK_ABSOLUTE,     /* an absolute target: never opened */
	HF_LINK_ESCAPES,      /* ".." leaves the repo folder: never opened */
	HF_LINK_NOT_BLOB,     /* inside the repo but not "../"*depth + "blobs/<name>" */
	HF_LINK_ODD,          /* not a file or link (fifo, device, socket) */
	HF_LINK_ELSEWHERE, /* ends at a file that is no blob of this repo (another repo's, or out of the cache): counted as upstream counts it */
};

struct hf_blob {
	char *name;
	size_t hex_len; /* 64 (sha256) or 40 (git sha1) hex digits of either case; 0: not a hash */
	uint64_t size;
	time_t atime, mtime;
	/* what the verified-blob record compares (verified_record.h): the
	 * lstat of the scan, before any hashing */
	uint64_t dev, ino;
	struct timespec mtim, ctim;
	bool regular;    /* a plain file (not a link, folder or device) */
	bool referenced; /* some snapshot file links to it */
	char *not_plain; /* why it is not a plain file (reported once the files using it are known), or NULL */
};

struct hf_file {
	char *path;   /* relative to the snapshot folder */
	char *target; /* the link text, or NULL for a copied file */
	enum hf_link link;
	long blob;           /* index in repo->blobs, or -1 */
	uint64_t size;       /* of the blob or the copied file */
	time_t atime, mtime; /* of a copied file (a blob's are in the blob) */
	bool absolute;       /* an absolute link into this cache's blobs (huggingface_hub's fallback) */
	char *resolved;      /* HF_LINK_ELSEWHERE: the file it ends at (what upstream counts it by), else NULL */
	long listed;         /* index in the revision's listing, or -1 */
};

struct hf_revision {
	char *commit;
	char *dir; /* its folder relative to the cache, or absolute (a link out of the cache, followed), no link in it */
	struct hf_file *files;
	size_t n_files;
	uint64_t size;                    /* sum of the sizes of its unique blobs */
	struct hf_listing listing;        /* trees/<commit>.json (state NONE when absent) */
	size_t n_missing;                 /* files the listing names that the snapshot lacks */
	size_t n_size_differs;            /* files whose size is not the listing's */
	size_t n_other_blob;              /* files linked to a blob other than the one the listing names */
	struct hf_listing_reader *reader; /* the scan's: reading the listing on a thread, joined by the walk */
	struct hf_path_block *paths;      /* the blocks its files' paths lie in (NULL: each path its own) */
};

struct hf_ref {
	char *name;   /* "main", "refs/pr/1" */
	char *commit; /* the content as read (raw: a newline stays) */
	bool has_snapshot;
};

enum hf_severity { HF_WARN = 1, HF_FAIL = 2 };

struct hf_warning {
	enum hf_severity severity;
	bool hides_repo; /* scan_cache_dir() would drop the whole repo for it */
	char *path;      /* relative to the cache folder */
	char *message;
	long blob; /* the blob it is about (index in repo->blobs), or -1 */
};

struct hf_repo {
	char *folder;          /* models--org--name */
	char *type;            /* model, dataset, space, kernel, or the raw prefix */
	char *id;              /* org/name */
	struct hf_blob *blobs; /* sorted by name */
	size_t n_blobs;
	uint64_t *blob_keys; /* per blob: its name's first 8 bytes, big-endian (hf_repo_blob's search), or NULL */
	/* the blobs' names lie in the cache's kept_text (blobs/'s listing kept
	 * by the last scan, dir_trust.h): not copied, not freed one by one */
	bool blob_names_kept;
	struct hf_revision *revisions;
	size_t n_revisions;
	struct hf_ref *refs;
	size_t n_refs;
	struct hf_warning *warnings;
	size_t n_warnings;
	uint64_t size_on_disk; /* unique referenced blobs */
	size_t n_files;        /* unique referenced blobs */
	time_t last_accessed, last_modified;
	uint64_t incomplete_bytes;
	size_t n_incomplete;
	bool is_repo; /* a folder with a known type (else only its warnings count) */
	char *real;   /* the repo folder relative to the cache (another when it is a link; absolute out of the cache) */
	char *snapshots; /* its snapshots/ relative to the cache (another when it is a link; absolute out of the cache) */
	time_t folder_atime, folder_mtime;
};

struct hf_cache {
	char *path;
	char **aliases;     /* absolute paths naming the cache folder (for absolute links), NULL-ended */
	bool skip_listings; /* listings were not read (hf_cache_scan_listings) */
	bool follow_outside; /* read at the path huggingface_hub uses (not under --root): links out of the cache are followed */
	char *real;          /* realpath of path */
	struct timespec scan_stamp; /* the coarse real-time clock as the scan began (the record's racy rule) */
	char *keep_dir;        /* gpugate's state folder, where parsed listings are kept (verified_record.h), or NULL */
	struct hf_repo *repos; /* sorted by folder */
	size_t n_repos;
	struct hf_dir_trust *dir_trust; /* folder listings kept in keep_dir (dir_trust.h), during the scan */
	char *kept_text;                /* that record's text after the scan: blob names point into it */
};

/* Scans path. Returns 0, or -errno when the cache folder itself cannot be
 * opened (err names it); problems inside are recorded as warnings. */
int hf_cache_scan(const char *path, struct hf_cache *cache, char *err, size_t errsize);
/* The same, where alias (may be NULL) is another absolute path that names
 * the cache folder for links written into it: the path huggingface_hub uses
 * when the cache is read under --root. */
int hf_cache_scan_as(const char *path, const char *alias, struct hf_cache *cache, char *err, size_t errsize);
/* The same, reading trees/<commit>.json listings only when listings is
 * true. The healthcheck does not: a 100,000-file listing is 22 MB of JSON,
 * too much to parse every 30 s (its revisions then have state NONE). */
int hf_cache_scan_listings(const char *path, const char *alias, bool listings, struct hf_cache *cache, char *err,
			   size_t errsize);
/* The same, calling blobs_listed(cache, arg) once every repo's blobs are
 * listed, on a thread of its own beside the walk of the snapshots (it has
 * returned when the scan does): it may read the repos' blobs while the walk
 * runs (the walk only marks them referenced), nothing else of the cache. */
struct hf_scan_hook {
	void (*blobs_listed)(const struct hf_cache *cache, void *arg);
	void *arg;
	const char *keep_dir; /* when set: listings parsed before are taken from there while unchanged */
};
int hf_cache_scan_hooked(const char *path, const char *alias, bool listings, struct hf_cache *cache, char *err,
			 size_t errsize, const struct hf_scan_hook *hook);
/* Opens a folder or file given relative to the cache (repo->real,
 * repo->snapshots, rev->dir), or absolute, one component at a time,
 * following no link. */
int hf_open_in_cache(int cache_fd, const char *rel, int flags);
void hf_cache_free(struct hf_cache *cache);

/* The blob of repo named name, or NULL. */
const struct hf_blob *hf_repo_blob(const struct hf_repo *repo, const char *name);
/* The revision with that commit, or NULL. */
const struct hf_revision *hf_repo_revision(const struct hf_repo *repo, const char *commit);
/* hf_repo_folder (an id as a user writes it to its folder name) is in
 * location.h; the folder names both ways are cache_format.h's */

/* The snapshot files that point at blob b of repo (up to max in out), and
 * how many there are in all. */
struct hf_blob_user {
	const struct hf_revision *rev;
	const struct hf_file *file;
};
size_t hf_blob_users(const struct hf_repo *repo, long blob, struct hf_blob_user *out, size_t max);
/* "model.safetensors in revision bbbbbbbbbbbb (main), ..." for messages
 * (sanitized; "no snapshot file" when none). Caller frees. */
char *hf_blob_users_text(const struct hf_repo *repo, long blob);
/* The refs of repo that name commit, comma-separated ("" when none). Caller frees. */
char *hf_refs_of(const struct hf_repo *repo, const char *commit);

const char *hf_link_text(enum hf_link link);

#endif
