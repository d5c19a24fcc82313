/* The one way gpugate writes and reads files on a user's behalf (SECURITY.md).
 *
 * Writing: "-" is standard output; a target that exists and is not a regular
 * file (a character device such as /dev/null, a FIFO, a symlink such as
 * /dev/stdout) is written through: opened and written, never renamed over;
 * a regular file, or a missing one, is replaced atomically (a hidden temp
 * file in the same folder, fsync, rename), so a reader never sees half of it.
 *
 * Reading: opened O_RDONLY | O_NONBLOCK | O_NOCTTY, checked with fstat to be
 * the kind the caller expects (a regular file unless it opts in to character
 * devices or pipes), read with a size cap: /dev/zero or a FIFO where a file
 * belongs is an error in microseconds, never a hang or gigabytes of memory.
 *
 * Every function returns 0 (or an fd) or -errno; where err is not NULL it
 * gets one sentence naming the file and the problem. */
#ifndef GPUGATE_SAFE_IO_H
#define GPUGATE_SAFE_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Room for an error sentence (a path of up to PATH_MAX fits). */
#define SAFE_ERR_MAX 4352

/* --- writing -------------------------------------------------------------- */

enum safe_write_flags {
	/* Only ever replace a regular file (or create a missing one): a cache
	 * or state file, not a target the user named. Anything else there is
	 * an error, never written through. */
	SAFE_WRITE_REPLACE_ONLY = 1 << 0,
	/* Skip the fsync: for caches whose loss only costs a recomputation. */
	SAFE_WRITE_NO_SYNC = 1 << 1,
};

struct safe_writer {
	int fd;              /* write here (safe_writer_write does it for you) */
	char *path;          /* the target, as given */
	char *tmp;           /* the temp file while replacing; NULL when written through */
	bool target_missing; /* nothing was there: the rename must not replace what appears */
	unsigned flags;
};

/* Opens path for writing as described above; mode applies to a file gpugate
 * creates or replaces (the umask does not change it). */
int safe_writer_open(struct safe_writer *w, const char *path, mode_t mode, unsigned flags, char *err, size_t errsize);
/* Writes all of data (retrying short writes and EINTR). */
int safe_writer_write(struct safe_writer *w, const void *data, size_t len, char *err, size_t errsize);
/* Finishes: fsync and rename for a replaced file, close for one written
 * through. On failure the temp file is removed and the target untouched.
 * The writer is released either way. */
int safe_writer_commit(struct safe_writer *w, char *err, size_t errsize);
/* Gives up: removes the temp file, releases the writer. */
void safe_writer_abort(struct safe_writer *w);

/* open + write + commit. */
int safe_write_file(const char *path, const void *data, size_t len, mode_t mode, unsigned flags, char *err,
		    size_t errsize);

/* Writes all len bytes to the open fd, again after EINTR and a short write;
 * 0, or -errno (-EIO for a write of nothing). */
int safe_write_all(int fd, const void *data, size_t len);

/* --- reading -------------------------------------------------------------- */

/* The kinds of file a reader accepts; a regular file unless more are named. */
enum safe_kind {
	SAFE_KIND_REG = 1 << 0,
	SAFE_KIND_CHR = 1 << 1,  /* /dev/kmsg */
	SAFE_KIND_FIFO = 1 << 2, /* a spec piped in as /dev/stdin */
};

/* Size caps that fit each kind of input (see SECURITY.md). */
#define SAFE_MAX_SMALL  ((size_t)64 << 10)  /* tokens, one-line /proc and /sys files */
#define SAFE_MAX_TEXT   ((size_t)16 << 20)  /* specs, ld.so.cache, mountinfo, passwd, group, lists: the default */
#define SAFE_MAX_STATUS ((size_t)256 << 20) /* dpkg status: thousands of packages */

/* Opens path for reading as described above and fills st. kinds: a mask of
 * enum safe_kind (0 means SAFE_KIND_REG). A regular file larger than max
 * bytes is refused (max 0: no size check here). A pipe the caller asked
 * for comes back blocking (a named FIFO waits for its writer, as open(2)
 * does); anything else non-blocking. Returns the fd or -errno. */
int safe_open_read(const char *path, unsigned kinds, size_t max, struct stat *st, char *err, size_t errsize);
/* The same, relative to dirfd (or AT_FDCWD), with extra open flags such as
 * O_NOFOLLOW. */
int safe_open_read_at(int dirfd, const char *path, int extra_flags, unsigned kinds, size_t max, struct stat *st,
		      char *err, size_t errsize);
/* Reads an opened file to its end, at most max bytes (more: -EFBIG). A
 * character device that has nothing more to give (EAGAIN) has ended. The
 * content is NUL-terminated; caller frees. path only names it in errors. */
int safe_read_fd(int fd, const char *path, size_t max, char **content, size_t *len, char *err, size_t errsize);
/* safe_open_read + safe_read_fd + close. */
int safe_read_file(const char *path, unsigned kinds, size_t max, char **content, size_t *len, char *err,
		   size_t errsize);

/* safe_open_read of a regular file of at most max bytes as a stdio stream,
 * for readers that take a FILE * (fgetpwent, fgetgrent). NULL with errno set. */
FILE *safe_fopen_read(const char *path, size_t max);

/* "a character device", "a FIFO", "a directory", ... for an st_mode. */
const char *safe_kind_name(mode_t mode);

#endif
