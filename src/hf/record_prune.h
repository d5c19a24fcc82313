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

/* Removes the records of the least recently used caches past
 * HF_RECORD_CACHES_MAX from the folder of written (the record file just
 * written: its cache's records always stay). Best effort. */
void hf_records_prune(const char *written);
/* Marks the record open at fd used now (its mtime): the last to be pruned. */
void hf_record_mark_used(int fd);

#endif
