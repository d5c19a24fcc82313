/* The verified-blob record: what `hf verify` and hf.integrity trust instead
 * of hashing a blob again, after git's index (Documentation/technical/
 * racy-git.txt). Once a blob's content is verified, its stat data (device,
 * inode, size, mtime and ctime to the nanosecond) is recorded; a later run
 * trusts the blob while all of them are unchanged and the entry is not
 * "racy": a blob whose mtime or ctime is not older than the time its run
 * began could still change within the same timestamp granule unseen, so it
 * is hashed again (git's rule, with the run's start in place of the index
 * file's mtime, which is later and so less strict).
 *
 * The record is one file per cache in gpugate's state folder
 * (probe_cache_dir), never inside the hub cache; its name and its header
 * carry the cache's device, inode and path. It is read by the safe reader
 * (a regular file, no link followed, at most HF_RECORD_MAX_BYTES) and
 * written by the safe writer (a temp file renamed over it). Anything odd
 * about it (missing, a FIFO or a link, truncated, out of order, made for
 * another cache, another version) makes it unusable as a whole: every blob
 * is hashed, nothing passes because of it.
 *
 * The file is text, one blob a line, sorted by repo folder and blob name:
 *   gpugate-hf-verified 1
 *   cache DEV INO PATH            (PATH percent-encoded: no space or control byte)
 *   stamp SEC NSEC                (the run's start, less HF_RECORD_RACY_MARGIN)
 *   entries N
 *   FOLDER BLOB DEV INO SIZE MSEC MNSEC CSEC CNSEC     (N lines)
 *   end */
#ifndef GPUGATE_HF_VERIFIED_RECORD_H
#define GPUGATE_HF_VERIFIED_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define HF_RECORD_MAX_ENTRIES 500000u      /* about 100 MB of lines; more blobs: the largest are kept */
#define HF_RECORD_MAX_BYTES   (128u << 20) /* a larger file is refused as corrupt */
/* Seconds taken off the stamp: timestamps that a filesystem rounds to whole
 * seconds (or two) or a file server's clock set, and the coarse clock. */
#define HF_RECORD_RACY_MARGIN 2

/* The stat data compared. */
struct hf_record_stat {
	uint64_t dev, ino, size;
	struct timespec mtim, ctim;
};

struct hf_record_entry {
	const char *folder; /* percent-encoded repo folder */
	const char *blob;   /* blob name */
	struct hf_record_stat st;
};

struct hf_record {
	bool usable;           /* loaded and made for this cache */
	char why[512];         /* when not usable: why (sanitized) */
	struct timespec stamp; /* entries at or after it are racy */
	struct hf_record_entry *entries;
	size_t n;
	char *buf; /* the file's text, which the entries point into */
};

/* The record's file for the cache folder at cache_path in state_dir
 * ("STATE/hf-verified-DEV-INO"); NULL (why set) when the cache folder
 * cannot be stat'ed. Caller frees. */
char *hf_record_file(const char *state_dir, const char *cache_path, char *why, size_t why_size);
/* Reads the record at file for the cache folder cache_path. Always fills
 * rec: usable, or not with why ("no record yet", "... is a FIFO", "line 7:
 * ...", "made for another cache: ..."). */
void hf_record_load(struct hf_record *rec, const char *file, const char *cache_path);
void hf_record_free(struct hf_record *rec);
/* hf_record_load on a thread of its own, begun before the scan so that
 * reading the record overlaps listing and stat'ing the blobs; join waits
 * for it and fills rec (loaded inline when no thread can start). */
struct hf_record_loading;
struct hf_record_loading *hf_record_load_start(const char *file, const char *cache_path);
void hf_record_load_join(struct hf_record_loading *loading, struct hf_record *rec);
/* A repo folder as the record names it (percent-encoded). Caller frees. */
char *hf_record_folder_key(const char *folder);
/* The entry for blob in the repo folder whose key is folder_key, or NULL
 * (also when rec is unusable). */
const struct hf_record_entry *hf_record_find(const struct hf_record *rec, const char *folder_key, const char *blob);
/* The same, looking at entry *next first (then searching), and leaving
 * *next after the entry found: blobs asked for in the record's order (a
 * repo's blobs, sorted by name) are found without a search. Start at 0. */
const struct hf_record_entry *hf_record_find_next(const struct hf_record *rec, const char *folder_key, const char *blob,
						  size_t *next);
/* Whether a blob whose stat is now may be trusted on the strength of entry
 * e of rec: every field unchanged, and neither time at or after the stamp. */
bool hf_record_trusts(const struct hf_record *rec, const struct hf_record_entry *e, const struct hf_record_stat *now);
/* Whether an entry is racy against the stamp (kept entries that are racy
 * must not be written under a newer stamp). */
bool hf_record_racy(const struct timespec *stamp, const struct hf_record_stat *st);

/* The line format's pieces, shared with the folder record (dir_trust.h):
 * bytes that could split a line (space, control, non-ASCII) and '%' as %XX;
 * the record's "cache DEV INO PATH" line for cache_path, PATH its canonical
 * form however it is spelt (NULL when it cannot be stat'ed; caller frees); the next space-separated field (spaces become
 * NULs); a decimal number filling its field, at most max; "SEC NSEC"; the
 * next '\n'-ended line (NULL at a line cut short); %XX decoded in place
 * (false on a bad or NUL escape). */
struct strbuf;
void hf_record_encode(struct strbuf *sb, const char *s);
char *hf_record_cache_line(const char *cache_path);
char *hf_record_field(char **cursor);
bool hf_record_number(char **cursor, uint64_t max, uint64_t *out);
bool hf_record_timespec(char **cursor, struct timespec *ts);
char *hf_record_next_line(char **text);
bool hf_record_decode(char *s);

/* safe_read_fd for a state record (a regular file opened by the safe
 * reader), refusing a NUL byte anywhere ("PATH holds a NUL byte", -EINVAL):
 * a large file is read in pieces on several threads, each taking the page
 * faults of its share of the fresh buffer. */
int hf_record_read(int fd, const char *path, size_t max, char **content, size_t *len, char *err, size_t errsize);

/* The n lines at *text (before end, each ended by '\n', which becomes a
 * NUL) given to how->line(arg, i, line, len) and, for every i > 0,
 * how->in_order(arg, i): whether entry i - 1 sorts before entry i. A
 * record of many lines (a 20,000-blob cache's: 20,000) is split into
 * pieces at line ends, parsed on several threads. Returns 0 with *text
 * after the n-th line; else the code of the first line (in file order) at
 * fault, its index in *bad: line's own nonzero code, HF_LINES_ORDER, or
 * HF_LINES_MISSING (fewer than n lines; *bad: how many there are). */
#define HF_LINES_ORDER   (-1)
#define HF_LINES_MISSING (-2)
struct hf_record_lines {
	int (*line)(void *arg, size_t i, char *line, size_t len);
	bool (*in_order)(void *arg, size_t i);
	void *arg;
};
int hf_record_parse_lines(char **text, char *end, size_t n, const struct hf_record_lines *how, size_t *bad);

/* Entries to write. */
struct hf_record_item {
	const char *folder; /* its key (hf_record_folder_key) */
	const char *blob;
	struct hf_record_stat st;
};
/* Writes the record for the cache at cache_path to file, atomically, with
 * the stamp scan_start less HF_RECORD_RACY_MARGIN; items in any order
 * (sorted here, in place; beyond HF_RECORD_MAX_ENTRIES the largest blobs
 * are kept).
 * Returns 0, or -errno with why. */
int hf_record_save(const char *file, const char *cache_path, const struct timespec *scan_start,
		   struct hf_record_item *items, size_t n, char *why, size_t why_size);

/* The parsed listing kept beside the record: a trees/<commit>.json that
 * parsed OK is kept, with its stat data, in a file of the state folder
 * (hf_kept_listing_file); a later run takes the kept result instead of
 * parsing the JSON again while the listing's device, inode, size, mtime and
 * ctime (to the nanosecond) are unchanged and not racy against the kept
 * stamp, and its repo folder and commit are the same: the record's rules. A
 * listing changed with its mtime put back has a new ctime and is parsed
 * again; a kept file that is odd in any way is not used. The file:
 *   gpugate-hf-listing 1
 *   key FOLDER COMMIT             (percent-encoded)
 *   stat DEV INO SIZE MSEC MNSEC CSEC CNSEC
 *   stamp SEC NSEC
 *   files N
 *   HAS_SIZE SIZE PATH BLOB_ID LFS_SHA256 XET_HASH   (N lines; strings "=" then
 *                                  percent-encoded, or "-" for none)
 *   end */
/* Kept listings are bounded: after one is written, the least recently
 * used (oldest mtime: a load marks its file used) are removed until at most
 * HF_KEPT_LISTINGS_MAX files and HF_KEPT_LISTINGS_MAX_BYTES remain (the one
 * just written always stays). A removed one costs only a parse. */
#define HF_KEPT_LISTINGS_MAX       256
#define HF_KEPT_LISTINGS_MAX_BYTES (512u << 20)
#define HF_KEPT_LISTING_PREFIX     "hf-listing-"
struct hf_listing;
struct stat;
/* The kept listing's file in state_dir for revision commit of the repo
 * folder of the cache at cache_real. Caller frees. */
char *hf_kept_listing_file(const char *state_dir, const char *cache_real, const char *folder, const char *commit);
/* Fills out from file when it keeps this listing (st: its fstat now);
 * returns whether it did (out untouched when not). */
bool hf_kept_listing_load(const char *file, const char *folder, const char *commit, const struct stat *st,
			  struct hf_listing *out);
/* Keeps an OK listing whose parse began at started (CLOCK_REALTIME_COARSE);
 * nothing is written when the listing is racy against it. Best effort. */
/* Removes the least recently used kept listings of state_dir past the
 * bounds above, never the file named keep (may be NULL). */
void hf_kept_listings_prune(const char *state_dir, const char *keep);
void hf_kept_listing_save(const char *file, const char *folder, const char *commit, const struct stat *st,
			  const struct timespec *started, const struct hf_listing *l);

#endif
