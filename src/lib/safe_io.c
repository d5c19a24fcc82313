/* Safe writes and bounded reads (safe_io.h; why: SECURITY.md and issue 15). */
#include "safe_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xalloc.h"

static void say(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *err, size_t size, const char *fmt, ...)
{
	if (!err || !size)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
	va_end(ap);
}

const char *safe_kind_name(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return "a regular file";
	case S_IFDIR:
		return "a directory";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFIFO:
		return "a FIFO";
	case S_IFSOCK:
		return "a socket";
	case S_IFLNK:
		return "a symlink";
	default:
		return "an unknown kind of file";
	}
}

/* ---------------------------------------------------------------- writing */

int safe_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void writer_release(struct safe_writer *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	free(w->path);
	free(w->tmp);
	w->path = w->tmp = NULL;
}

/* A target that is our own standard output or error (/dev/stdout, or a
 * /proc/self/fd link) is written on that descriptor: reopening it would start
 * a redirected file over at offset 0 and cut what was already printed. */
static int same_as_std_stream(const struct stat *target)
{
	for (int fd = 1; fd <= 2; fd++) {
		struct stat st;
		if (fstat(fd, &st) == 0 && st.st_dev == target->st_dev && st.st_ino == target->st_ino)
			return fd;
	}
	return -1;
}

/* Writes through what is there: a device, a FIFO, a symlink. No O_CREAT, so
 * a dangling symlink never creates a file wherever it points; O_NONBLOCK, so a
 * FIFO nobody reads is an error (ENXIO) instead of a hang. */
static int open_through(struct safe_writer *w, const struct stat *link, char *err, size_t errsize)
{
	struct stat target;
	if (stat(w->path, &target) < 0) {
		int e = errno;
		if (e == ENOENT && S_ISLNK(link->st_mode))
			say(err, errsize, "%s is a symlink to a missing file: refusing to create a file through it",
			    w->path);
		else
			say(err, errsize, "%s: %s", w->path, strerror(e));
		return -e;
	}
	int std = same_as_std_stream(&target);
	if (std >= 0) {
		w->fd = fcntl(std, F_DUPFD_CLOEXEC, 3);
		if (w->fd < 0) {
			int e = errno;
			say(err, errsize, "%s: %s", w->path, strerror(e));
			return -e;
		}
		return 0;
	}
	if (S_ISDIR(target.st_mode)) {
		say(err, errsize, "%s is a directory, not a file to write", w->path);
		return -EISDIR;
	}
	w->fd = open(w->path, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	if (w->fd < 0) {
		int e = errno;
		if (e == ENXIO && S_ISFIFO(target.st_mode))
			say(err, errsize, "%s is a FIFO that nobody reads", w->path);
		else
			say(err, errsize, "%s: %s", w->path, strerror(e));
		return -e;
	}
	struct stat st;
	if (fstat(w->fd, &st) == 0 && S_ISREG(st.st_mode) && ftruncate(w->fd, 0) < 0) {
		int e = errno;
		say(err, errsize, "%s: %s", w->path, strerror(e));
		return -e;
	}
	/* blocking from here on: a slow reader of a FIFO is not an error */
	int fl = fcntl(w->fd, F_GETFL);
	if (fl >= 0)
		fcntl(w->fd, F_SETFL, fl & ~O_NONBLOCK);
	return 0;
}

/* The temp file could not be made: names the folder, as the target itself
 * may be fine (/proc/version exists, but nothing can be created in /proc).
 * dirlen: the length of the path's folder with its slash (0: none). */
static void say_no_temp(const struct safe_writer *w, int dirlen, const char *why, char *err, size_t errsize)
{
	int len = dirlen > 1 ? dirlen - 1 : 1; /* "dir" for "dir/x", "/" for "/x" */
	const char *dir = dirlen ? w->path : ".";
	say(err, errsize, "cannot create a temporary file in %.*s to %s %s: %s", len, dir,
	    w->target_missing ? "create" : "replace", w->path, why);
}

/* A hidden temp file beside the target: collectors that read every file of a
 * folder (node-feature-discovery's features.d) skip dot-files. */
static int open_replacement(struct safe_writer *w, mode_t mode, char *err, size_t errsize)
{
	const char *slash = strrchr(w->path, '/');
	const char *base = slash ? slash + 1 : w->path;
	int dirlen = slash ? (int)(slash - w->path) + 1 : 0;
	static unsigned serial; /* two writers in one process get two names */
	for (int attempt = 0; attempt < 100; attempt++) {
		free(w->tmp);
		w->tmp = xasprintf("%.*s.%s.%ld.%u.tmp", dirlen, w->path, base, (long)getpid(), serial++);
		w->fd = open(w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, mode);
		if (w->fd >= 0)
			break;
		if (errno != EEXIST) {
			int e = errno;
			say_no_temp(w, dirlen, strerror(e), err, errsize);
			free(w->tmp);
			w->tmp = NULL;
			return -e;
		}
	}
	if (w->fd < 0) {
		say_no_temp(w, dirlen, "every name tried was taken", err, errsize);
		return -EEXIST;
	}
	if (fchmod(w->fd, mode) < 0) { /* the umask must not widen or narrow it */
		int e = errno;
		say(err, errsize, "%s: %s", w->tmp, strerror(e));
		return -e;
	}
	return 0;
}

int safe_writer_open(struct safe_writer *w, const char *path, mode_t mode, unsigned flags, char *err, size_t errsize)
{
	*w = (struct safe_writer){ .fd = -1, .flags = flags };
	if (!path || !*path) {
		say(err, errsize, "empty file name");
		return -EINVAL;
	}
	w->path = xstrdup(path);
	if (strcmp(path, "-") == 0 && !(flags & SAFE_WRITE_REPLACE_ONLY)) {
		w->fd = fcntl(1, F_DUPFD_CLOEXEC, 3);
		if (w->fd < 0) {
			int e = errno;
			say(err, errsize, "standard output: %s", strerror(e));
			writer_release(w);
			return -e;
		}
		return 0;
	}
	struct stat st;
	int rc;
	if (lstat(path, &st) < 0) {
		if (errno != ENOENT) {
			int e = errno;
			say(err, errsize, "%s: %s", path, strerror(e));
			writer_release(w);
			return -e;
		}
		w->target_missing = true;
		rc = open_replacement(w, mode, err, errsize);
	} else if (S_ISREG(st.st_mode)) {
		rc = open_replacement(w, mode, err, errsize);
	} else if (S_ISDIR(st.st_mode)) {
		say(err, errsize, "%s is a directory, not a file to write", path);
		rc = -EISDIR;
	} else if (flags & SAFE_WRITE_REPLACE_ONLY) {
		say(err, errsize, "%s is %s, not a regular file: refusing to write through or replace it", path,
		    safe_kind_name(st.st_mode));
		rc = -EEXIST;
	} else {
		rc = open_through(w, &st, err, errsize);
	}
	if (rc < 0)
		safe_writer_abort(w);
	return rc;
}

int safe_writer_write(struct safe_writer *w, const void *data, size_t len, char *err, size_t errsize)
{
	int rc = safe_write_all(w->fd, data, len);
	if (rc < 0)
		say(err, errsize, "%s: cannot write: %s", strcmp(w->path, "-") ? w->path : "standard output",
		    strerror(-rc));
	return rc;
}

/* Puts the finished temp file in place. Only a regular file (or nothing) is
 * ever renamed over: what was missing must still be missing (RENAME_NOREPLACE),
 * what was a regular file must still be one. */
static int install_replacement(struct safe_writer *w)
{
	if (w->target_missing) {
		if (renameat2(AT_FDCWD, w->tmp, AT_FDCWD, w->path, RENAME_NOREPLACE) == 0)
			return 0;
		if (errno != EINVAL && errno != ENOSYS && errno != EEXIST)
			return -errno;
		/* not supported by this file system, or something appeared: look */
	}
	struct stat st;
	if (lstat(w->path, &st) == 0 && !S_ISREG(st.st_mode))
		return -EEXIST;
	return rename(w->tmp, w->path) < 0 ? -errno : 0;
}

int safe_writer_commit(struct safe_writer *w, char *err, size_t errsize)
{
	int rc = 0;
	const char *name = strcmp(w->path, "-") ? w->path : "standard output";
	if (w->tmp && !(w->flags & SAFE_WRITE_NO_SYNC) && fsync(w->fd) < 0)
		rc = -errno;
	if (close(w->fd) < 0 && !rc && errno != EINTR)
		rc = -errno;
	w->fd = -1;
	if (rc < 0) {
		say(err, errsize, "%s: cannot write: %s", name, strerror(-rc));
	} else if (w->tmp) {
		rc = install_replacement(w);
		if (rc == -EEXIST)
			say(err, errsize,
			    "%s changed into something other than a regular file while gpugate wrote it: "
			    "left alone",
			    w->path);
		else if (rc < 0)
			say(err, errsize, "%s: cannot rename the temporary file over it: %s", w->path, strerror(-rc));
		if (rc < 0)
			unlink(w->tmp);
	}
	writer_release(w);
	return rc;
}

void safe_writer_abort(struct safe_writer *w)
{
	if (w->tmp) {
		if (w->fd >= 0)
			close(w->fd);
		w->fd = -1;
		unlink(w->tmp);
	}
	writer_release(w);
}

int safe_write_file(const char *path, const void *data, size_t len, mode_t mode, unsigned flags, char *err,
		    size_t errsize)
{
	struct safe_writer w;
	int rc = safe_writer_open(&w, path, mode, flags, err, errsize);
	if (rc < 0)
		return rc;
	rc = safe_writer_write(&w, data, len, err, errsize);
	if (rc < 0) {
		safe_writer_abort(&w);
		return rc;
	}
	return safe_writer_commit(&w, err, errsize);
}

/* ---------------------------------------------------------------- reading */

static const char *kinds_wanted(unsigned kinds)
{
	switch (kinds & (SAFE_KIND_CHR | SAFE_KIND_FIFO)) {
	case SAFE_KIND_CHR:
		return kinds & SAFE_KIND_REG ? "a regular file or character device" : "a character device";
	case SAFE_KIND_FIFO:
		return kinds & SAFE_KIND_REG ? "a regular file or pipe" : "a pipe";
	case SAFE_KIND_CHR | SAFE_KIND_FIFO:
		return "a regular file, character device or pipe";
	default:
		return "a regular file";
	}
}

static bool kind_allowed(mode_t mode, unsigned kinds)
{
	return (S_ISREG(mode) && (kinds & SAFE_KIND_REG)) || (S_ISCHR(mode) && (kinds & SAFE_KIND_CHR)) ||
	       (S_ISFIFO(mode) && (kinds & SAFE_KIND_FIFO));
}

int safe_open_read_at(int dirfd, const char *path, int extra_flags, unsigned kinds, size_t max, struct stat *st,
		      char *err, size_t errsize)
{
	if (!kinds)
		kinds = SAFE_KIND_REG;
	int fd = openat(dirfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | extra_flags);
	if (fd < 0) {
		int e = errno;
		if (e == ELOOP && (extra_flags & O_NOFOLLOW))
			say(err, errsize, "%s is a symlink, not a file gpugate follows here", path);
		else
			say(err, errsize, "cannot open %s: %s", path, strerror(e));
		return -e;
	}
	if (fstat(fd, st) < 0) {
		int e = errno;
		say(err, errsize, "%s: %s", path, strerror(e));
		close(fd);
		return -e;
	}
	if (!kind_allowed(st->st_mode, kinds)) {
		say(err, errsize, "%s is %s, not %s", path, safe_kind_name(st->st_mode), kinds_wanted(kinds));
		close(fd);
		return S_ISDIR(st->st_mode) ? -EISDIR : -EINVAL;
	}
	if (max && S_ISREG(st->st_mode) && (uintmax_t)st->st_size > (uintmax_t)max) {
		say(err, errsize, "%s is %jd bytes, more than the %zu gpugate reads from such a file", path,
		    (intmax_t)st->st_size, max);
		close(fd);
		return -EFBIG;
	}
	/* A pipe the caller asked for is opened again, blocking, as a plain
	 * open would: a named FIFO then waits for its writer (the run's deadline
	 * bounds the wait) and reads block until it closes, so `--spec <(...)`
	 * and a FIFO filled later work. It must still be the same pipe. A
	 * character device stays non-blocking: EAGAIN is its end. */
	if (S_ISFIFO(st->st_mode)) {
		int again = openat(dirfd, path, O_RDONLY | O_NOCTTY | O_CLOEXEC | extra_flags);
		struct stat st2;
		int e = again < 0 ? errno : fstat(again, &st2) < 0 ? errno : 0;
		if (!e && (st2.st_dev != st->st_dev || st2.st_ino != st->st_ino))
			e = ESTALE;
		close(fd);
		if (e) {
			say(err, errsize, "cannot open %s: %s", path,
			    e == ESTALE ? "it was replaced while opened" : strerror(e));
			if (again >= 0)
				close(again);
			return -e;
		}
		fd = again;
	}
	return fd;
}

int safe_open_read(const char *path, unsigned kinds, size_t max, struct stat *st, char *err, size_t errsize)
{
	return safe_open_read_at(AT_FDCWD, path, 0, kinds, max, st, err, errsize);
}

int safe_read_fd(int fd, const char *path, size_t max, char **content, size_t *len, char *err, size_t errsize)
{
	struct stat st;
	size_t cap = 4096;
	if (max > SIZE_MAX / 4)
		max = SIZE_MAX / 4; /* "no limit": the arithmetic below stays in range */
	/* the file's size, the read that finds its end, and the NUL: one
	 * buffer, never grown (growing a multi-MB one makes glibc mremap it,
	 * taking the process's mm lock against every other thread) */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && (uintmax_t)st.st_size < max)
		cap = (size_t)st.st_size + 2;
	if (cap > max + 2)
		cap = max + 2;
	char *buf = xmalloc(cap);
	size_t used = 0;
	for (;;) {
		if (used + 1 >= cap) {
			if (used > max)
				break;
			cap = cap * 2 > max + 2 ? max + 2 : cap * 2;
			buf = xrealloc(buf, cap);
		}
		/* one byte more than max may come: that is how "too big" shows */
		ssize_t n = read(fd, buf + used, cap - used - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break; /* /dev/kmsg: nothing more for now */
		if (n < 0) {
			int e = errno;
			say(err, errsize, "cannot read %s: %s", path, strerror(e));
			free(buf);
			return -e;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	if (used > max) {
		say(err, errsize, "%s has more than the %zu bytes gpugate reads from such a file", path, max);
		free(buf);
		return -EFBIG;
	}
	buf[used] = '\0';
	*content = buf;
	if (len)
		*len = used;
	return 0;
}

FILE *safe_fopen_read(const char *path, size_t max)
{
	struct stat st;
	int fd = safe_open_read(path, SAFE_KIND_REG, max, &st, NULL, 0);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	FILE *f = fdopen(fd, "re");
	if (!f) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return f;
}

int safe_read_file(const char *path, unsigned kinds, size_t max, char **content, size_t *len, char *err, size_t errsize)
{
	struct stat st;
	int fd = safe_open_read(path, kinds, max, &st, err, errsize);
	if (fd < 0)
		return fd;
	int rc = safe_read_fd(fd, path, max, content, len, err, errsize);
	close(fd);
	return rc;
}
