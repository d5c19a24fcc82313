/* Small helpers shared by every part of gpugate: allocation that cannot
 * return NULL, formatted strings, whole-file reads, the monotonic clock,
 * and paths joined under a --root prefix. */
#ifndef GPUGATE_UTIL_H
#define GPUGATE_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <stddef.h>
#include <stdint.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#include "strbuf.h"
#include "xalloc.h"

/* Reads a whole regular file of at most SAFE_MAX_TEXT (16 MiB) bytes, through
 * safe_read_file (lib/safe_io.h: a device, FIFO or directory is refused at
 * once). Returns 0, or -errno (content untouched); that header's functions
 * also say why in a sentence. */
int read_file(const char *path, char **content, size_t *len);
/* read_file with another size cap: a larger file is -EFBIG. */
int read_file_max(const char *path, size_t max, char **content, size_t *len);
/* Opens path for reading only when it is a regular file of this effective
 * user that nobody else can write or read (mode & 077 == 0), no link, of
 * fewer than max_size bytes: a cache file no other user could have planted.
 * Returns the fd (st filled) or -1. */
int open_private(const char *path, off_t max_size, struct stat *st);
/* Reads a small sysfs-style file (name relative to dirfd, or AT_FDCWD) and
 * strips trailing newlines and spaces; never blocks on a FIFO. 0 or -errno. */
int read_attr_at(int dirfd, const char *name, char *buf, size_t size);
/* The same for path (absolute, as seen inside root) under a --root, every
 * symlink on the way followed inside root (root_open): sysfs's class and
 * device links are read as the kernel reads them, never out of the root. */
int read_attr_in_root(const char *root, const char *path, char *buf, size_t size);
int read_line_file(const char *path, char *buf, size_t size);
/* Replaces the regular file path (or creates it) through a hidden temp file in
 * the same folder, fsync and rename(2), so a reader never sees half a file;
 * anything but a regular file there is refused (safe_write_file with
 * SAFE_WRITE_REPLACE_ONLY, lib/safe_io.h). mode as for open(2). 0 or -errno. */
int write_file_atomic(const char *path, const char *content, size_t len, unsigned mode);

double monotonic_seconds(void);
/* The same clock in nanoseconds, for a spin-wait's time limit (the vDSO:
 * no system call). */
int64_t monotonic_ns(void);
/* Sleeps s seconds (s >= 0); a caught signal cuts it short, so a caller that
 * handles one looks at its own flag afterwards. */
void sleep_seconds(double s);
/* x rounded to that many decimals, as printf rounds it (gpugate links no libm:
 * loading it cost every start ~0.1 ms for this one use). */
double round_decimals(double x, int decimals);
double wall_seconds(void);
/* The order of two times (an mtime, a clock reading): <0, 0 or >0 as a is
 * before, the same as or after b (inline: hf verify asks it per blob). */
static inline int timespec_cmp(const struct timespec *a, const struct timespec *b)
{
	if (a->tv_sec != b->tv_sec)
		return a->tv_sec < b->tv_sec ? -1 : 1;
	return a->tv_nsec < b->tv_nsec ? -1 : a->tv_nsec > b->tv_nsec;
}

/* "A/B" (B alone when A is empty): a path made per file of a scan, where
 * xasprintf's format parsing cost more than the copy. Two join rules exist on
 * purpose: this one puts B under A always (B is a name the caller read from A),
 * hf_path_join (hf/location.h) is Python's os.path.join, where an absolute B
 * wins, because it redoes huggingface_hub's own paths. */
char *xpath_join(const char *a, const char *b);

/* Whether root (a --root value) is the real root: empty, NULL or "/". */
bool root_is_real(const char *root);
/* path (absolute) under a --root: root "" or "/" means the real root and path
 * comes back as it is. Under another root every symlink on the way is followed
 * inside root, as in a chroot (an absolute target starts again at root, ".."
 * stops there), so the answer names no symlink and an open of it never
 * leaves root; a missing component ends the lookup (the rest is appended).
 * The kernel does the lookup where it can (openat2 RESOLVE_IN_ROOT, Linux >=
 * 5.6, on the root's folder opened once per process): one system call
 * instead of an lstat per component; the walk in user space answers where it
 * cannot (kernel without openat2, a seccomp filter refusing it, no /proc, a
 * loop, a folder missing on the way). Both give the same answer
 * (tests/unit/test_root_path.c). The root's folder itself is opened at the
 * first call for it: a root renamed or replaced while the process runs is
 * not followed (gpugate looks at one root for a second). Caller frees. */
char *root_path(const char *root, const char *path);
/* root_path by the walk alone: for the tests that compare it with the kernel's. */
char *root_path_by_walk(const char *root, const char *path);
/* Opens path (absolute, as seen inside root) with open(2) flags, following
 * every symlink inside root as root_path does, the last one too (so no
 * O_NOFOLLOW): by the kernel in one openat2 where it can, else root_path and
 * open. The descriptor (O_CLOEXEC), or -errno. */
int root_open(const char *root, const char *path, int flags);
/* The value of NAME in env (a NULL-terminated "NAME=value" list, NULL: an
 * empty one): NULL when unset, "" when set to the empty string. */
const char *env_lookup(char *const *env, const char *name);

/* The one plural rule of every count a user reads: the noun for n, one when
 * n is 1, else many ("1 warning", "0 warnings", "2 repos"). */
const char *count_noun(size_t n, const char *one, const char *many);
/* A size for people, in IEC units: "512 B", "12.3 KiB", "1.5 GiB". */
void human_bytes(uint64_t n, char *buf, size_t size);
/* A duration for people, precise enough to tell what the user gave:
 * "30 s", "2.5 s", "500 ms", "0.1 ms" (at most 3 decimals, zeros trimmed). */
void human_seconds(double s, char *buf, size_t size);

bool str_starts_with(const char *s, const char *prefix);
/* [A-Za-z0-9], whatever the locale. */
bool isalnum_ascii(char c);
/* Whether item is one of the sep-separated entries of list ("rw,ro", ','). */
bool list_has(const char *list, char sep, const char *item);
bool str_ends_with(const char *s, const char *suffix);
/* Splits "a,b, c" on commas; trims spaces; empty items dropped. NULL-terminated. */
char **split_list(const char *s, size_t *count);
void free_list(char **list);

#endif

#ifndef GPUGATE_UTIL_UTF8
#define GPUGATE_UTIL_UTF8
/* Replaces every byte that is not part of valid UTF-8, and every control
 * character but tab and newline, with '?', in place: text from files and the
 * environment reaches JSON and XML reports. */
void text_sanitize(char *s);
/* Decodes one UTF-8 character at s (NUL-terminated); returns its length in
 * bytes and sets *cp, or returns 0 for an invalid sequence (overlong,
 * surrogate, past U+10FFFF, cut short). */
size_t utf8_decode(const unsigned char *s, uint32_t *cp);
/* The receiving end of provision_exec.c's `--gpugate PATH` (the gpugate
 * binary that started a helper executable): *gpugate is PATH, or "gpugate"
 * when absent; returns the index of the first argument after it. */
int helper_gpugate_arg(int argc, char **argv, const char **gpugate);

#endif
