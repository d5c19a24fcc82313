/* The per-cache records of the state folder, bounded: the verified-blob
 * record (verified_record.h, "hf-verified-DEV-INO") and the folder record
 * (dir_trust.h, "hf-dirs-DEV-INO") are one file each per cache, so a host
 * whose jobs mount many caches (a fresh one per job, say) would gather them
 * without end. After either is written, the records of all but the
 * HF_RECORD_CACHES_MAX most recently used caches are removed, as the kept
 * listings are (a load marks a record used: hf_record_mark_used). Only
 * regular files whose names are exactly PREFIX + hex + "-" + hex are
 * touched, never through a link; a removed record costs one full hash and
 * one full walk of its cache. */
#ifndef GPUGATE_HF_RECORD_PRUNE_H
#define GPUGATE_HF_RECORD_PRUNE_H

#define HF_RECORD_CACHES_MAX 16
#define HF_VERIFIED_PREFIX   "hf-verified-" /* verified_record.h */
#define HF_DIRS_PREFIX       "hf-dirs-"     /* dir_trust.h */

#include <stddef.h>
#include <stdint.h>

/* One least-recently-used bound over some files of a state folder, shared by
 * the records here and the kept listings (verified_record.h): the files fall
 * into groups (a cache's records; a kept listing alone), a group is used at
 * its files' newest mtime, and groups go whole, least recently used first,
 * until at most max_groups and max_bytes (disk blocks) remain. */
struct hf_prune_bound {
	/* The group of a file name (a string within name), NULL for a name
	 * that is none of the bound's files. */
	const char *(*group_of)(const char *name);
	size_t max_groups;
	uint64_t max_bytes;
};
/* Applies bound to the regular files of dir (never through a link); the
 * group of the file named keep (may be NULL) always stays, and counts.
 * Best effort. */
void hf_prune_lru(const char *dir, const char *keep, const struct hf_prune_bound *bound);

/* Removes the records of the least recently used caches past
 * HF_RECORD_CACHES_MAX from the folder of written (the record file just
 * written: its cache's records always stay). Best effort. */
void hf_records_prune(const char *written);
/* Marks the record open at fd used now (its mtime): the last to be pruned. */
void hf_record_mark_used(int fd);

#endif
