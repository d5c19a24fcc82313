/* The operator commands' file I/O (operator.h). The safety rules are those
 * of SECURITY.md: write through what is not a regular file, replace a
 * regular one atomically, read without blocking and with a size cap. */
#include <errno.h>
#include <fcntl.h>
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
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errsize, "%s: %s", path, strerror(e));
		return -e;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		int e = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		snprintf(err, errsize, "%s: not a regular file (%s)", path, safe_kind_name(st.st_mode));
		close(fd);
		return -e;
	}
	if ((size_t)st.st_size > max) {
		snprintf(err, errsize, "%s: %lld bytes, more than the %zu a report may have", path,
			 (long long)st.st_size, max);
		close(fd);
		return -EFBIG;
	}
	size_t cap = (size_t)st.st_size; /* a report does not grow while read */
	char *buf = xmalloc(cap + 2);
	size_t got = 0;
	for (;;) {
		ssize_t n = read(fd, buf + got, cap + 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			snprintf(err, errsize, "%s: %s", path, strerror(e));
			free(buf);
			close(fd);
			return -e;
		}
		if (n == 0)
			break;
		got += (size_t)n;
		if (got > cap) {
			snprintf(err, errsize, "%s: grew while it was read", path);
			free(buf);
			close(fd);
			return -EFBIG;
		}
	}
	close(fd);
	buf[got] = '\0';
	*content = buf;
	*len = got;
	return 0;
}
