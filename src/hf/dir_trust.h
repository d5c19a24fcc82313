/* Folder-level trust for the cache scan, after git's untracked cache
 * (dir.c: a directory's listing is reused while the directory's stat data
 * is unchanged; Documentation/technical/index-format.txt, "Untracked
 * cache"). The scan reads each snapshot folder (every level: a change in a
 * subfolder does not touch its parent's mtime) and each repo's blobs/ with
 * readdir and a readlinkat per link. Here each such folder's stat data
 * (device, inode, size, mtime and ctime to the nanosecond) is recorded with
 * its listing, sorted by name: every entry's name and type and each link's
 * text. A later scan that finds a folder's stat data unchanged, and not
 * racy (a time at or after the record's stamp, the blob record's rule:
 * verified_record.h), takes the recorded listing instead. Adding, removing
 * or renaming an entry, or replacing a link, changes the folder's mtime and
 * ctime; putting the mtime back (utime) still changes the ctime. The blobs
 * themselves are stat'ed as before (a blob's content is the blob record's
 * business, not this one's).
 *
 * One file per cache in gpugate's state folder ("STATE/hf-dirs-DEV-INO"),
 * read by the safe reader (a regular file, no link followed, at most
 * HF_DIR_TRUST_MAX_BYTES) and written by the safe writer only when some
 * folder was read afresh. A record that is odd in any way (missing, a FIFO
 * or a link, cut short, out of order, made for another cache or version) is
 * not used at all: every folder is read. Each folder's listing carries a
 * checksum of its lines (FNV-1a's step over 8-byte words; past 64 KiB,
 * the same step over the sums of its 64 KiB blocks), checked before
 * it is used: a listing that fails it, or does not parse, is not used (that
 * folder is read afresh and the record rewritten).
 *
 * A folder's stat data and the racy rule guard different things: a change
 * made after the recording run began is racy (its ctime, which no utime
 * sets back, is not older than the stamp), so the comparison of stat data
 * is what catches a change when the clock was set back or a file server's
 * clock is behind; the racy rule catches a change within the timestamp
 * granule of the folder's recorded times, which leaves them as recorded.
 *
 * The file is text:
 *   gpugate-hf-dirs 2
 *   cache DEV INO PATH            (as the blob record's)
 *   stamp SEC NSEC                (the scan's start less HF_RECORD_RACY_MARGIN)
 *   dirs N
 *   dir KEY DEV INO SIZE MSEC MNSEC CSEC CNSEC ENTRIES BYTES SUM   (N times,
 *                                  by KEY: the folder's path in the cache)
 *   T NAME [TARGET]               (ENTRIES lines, BYTES bytes, sorted by name;
 *                                  T: d folder, l link (TARGET its text),
 *                                  f file, o other)
 *   end
 * Strings are percent-encoded as the blob record's. */
#ifndef GPUGATE_HF_DIR_TRUST_H
#define GPUGATE_HF_DIR_TRUST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <time.h>

#define HF_DIR_TRUST_MAX_BYTES (128u << 20) /* larger: refused on read, not written */
/* the file name's prefix: record_prune.h's HF_DIRS_PREFIX */

/* One entry of a folder's listing. */
struct hf_dir_entry {
	char *name;
	char *target;       /* a link's text, else NULL */
	unsigned char type; /* DT_DIR, DT_LNK, DT_REG or DT_UNKNOWN (anything else) */
};

struct hf_dir_trust;

/* Loads the record for the cache at cache_path from state_dir; the scan
 * began at scan_stamp. Never NULL: an unusable record trusts nothing. */
struct hf_dir_trust *hf_dir_trust_open(const char *state_dir, const char *cache_path,
				       const struct timespec *scan_stamp);
/* The recorded listing of the folder key (its path in the cache) when it
 * may be used: st (its fstat now) equal to the recorded stat data and not
 * racy, its checksum right. Fills *entries (sorted by name, owned by t, to
 * be read only) and *n; false when the folder must be read. Thread-safe;
 * each folder is handed out once. */
bool hf_dir_trust_get(struct hf_dir_trust *t, const char *key, const struct stat *st,
		      const struct hf_dir_entry **entries, size_t *n);
/* Records the listing of folder key read afresh: st its fstat taken before
 * the read, entries sorted by name (copied). Thread-safe. */
void hf_dir_trust_put(struct hf_dir_trust *t, const char *key, const struct stat *st,
		      const struct hf_dir_entry *entries, size_t n);
/* Writes the record when some folder was read afresh (best effort), and
 * frees t (NULL is fine). */
void hf_dir_trust_close(struct hf_dir_trust *t);
/* The same, but the record's text, where the names and link texts that
 * hf_dir_trust_get handed out lie, is handed to the caller (to free() once
 * it no longer reads them) instead of freed: a scan keeps blobs/'s names
 * without copying 20,000 of them. NULL when there was no record. */
char *hf_dir_trust_close_keeping_text(struct hf_dir_trust *t);

/* strcmp of two entries' names: the listing's order (qsort). */
int hf_dir_entry_cmp(const void *a, const void *b);

#endif
