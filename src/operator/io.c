/* The operator commands' file I/O (operator.h). The safety rules are those
 * of SECURITY.md: write through what is not a regular file, replace a
 * regular one atomically, read without blocking and with a size cap. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/safe_io.h"
#include "lib/util.h"
#include "operator/operator.h"

int operator_write_output(const char *path, const char *data, size_t len, char *err, size_t errsize)
{
	/* lib/safe_io.h: "-" is standard output; /dev/null, a FIFO or a link
	 * (/dev/stdout) is written through from its start (a FIFO nobody reads
	 * is an error, not a hang); a regular file is replaced atomically */
	if (strcmp(path, "-") == 0)
		fflush(stdout);
	return safe_write_file(path, data, len, 0644, 0, err, errsize);
}

/* "-": standard input, a file or a pipe (`gpugate check --format json |
 * gpugate diff base.json -`), with a file's size cap; a terminal is refused
 * rather than waited on. */
static int read_standard_input(size_t max, char **content, size_t *len, char *err, size_t errsize)
{
	struct stat st;
	if (fstat(STDIN_FILENO, &st) < 0) {
		int e = errno;
		snprintf(err, errsize, "standard input: %s", strerror(e));
		return -e;
	}
	if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
		snprintf(err, errsize, "standard input is %s, not a file or a pipe", safe_kind_name(st.st_mode));
		return -EINVAL;
	}
	int rc = safe_read_fd(STDIN_FILENO, "standard input", max, content, len, err, errsize);
	if (rc == -EFBIG)
		snprintf(err, errsize, "standard input: more than the %zu bytes a report may have", max);
	return rc;
}

int operator_read_input(const char *path, size_t max, char **content, size_t *len, char *err, size_t errsize)
{
	if (strcmp(path, "-") == 0)
		return read_standard_input(max, content, len, err, errsize);
	/* lib/safe_io.h reads it (never blocking, the size capped); the words
	 * are the operator commands' own: the path first, then the problem */
	struct stat st = { 0 };
	int fd = safe_open_read(path, SAFE_KIND_REG, max, &st, NULL, 0);
	if ((fd == -EISDIR || fd == -EINVAL) && st.st_mode) { /* opened, but of another kind */
		snprintf(err, errsize, "%s: not a regular file (%s)", path, safe_kind_name(st.st_mode));
		return fd;
	}
	if (fd == -EFBIG) {
		snprintf(err, errsize, "%s: %lld bytes, more than the %zu a report may have", path,
			 (long long)st.st_size, max);
		return fd;
	}
	int rc = fd < 0 ? fd : safe_read_fd(fd, path, max, content, len, NULL, 0);
	if (fd >= 0)
		close(fd);
	if (rc == -EFBIG)
		snprintf(err, errsize, "%s: grew past the %zu bytes a report may have while it was read", path, max);
	else if (rc < 0)
		snprintf(err, errsize, "%s: %s", path, strerror(-rc));
	return rc;
}
