#include "cache_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"

int hf_dir_open(int dirfd, const char *name)
{
	return openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Says why name under dirfd is no folder: a link (and where to), or a file. */
static void describe_refusal(int dirfd, const char *shown_path, const char *name, int error, char *err, size_t n)
{
	struct stat st;
	char target[256];
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
		ssize_t len = readlinkat(dirfd, name, target, sizeof(target) - 1);
		target[len > 0 ? len : 0] = '\0';
		text_sanitize(target);
		snprintf(err, n, "%s is a symlink to %s: refusing to write outside the cache", shown_path,
			 len > 0 ? target : "?");
	} else if (error == ENOTDIR || error == ELOOP) {
		snprintf(err, n, "%s is not a folder: refusing to use it", shown_path);
	} else {
		snprintf(err, n, "%s: %s", shown_path, strerror(error));
	}
}

/* openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) would refuse the same paths
 * in one call, but it cannot make the missing folders nor say which
 * component was a link; one openat per component does both, on every kernel. */
int hf_dir_walk(int dirfd, const char *shown, const char *rel, bool create, char *err, size_t err_size)
{
	char *copy = xstrdup(rel);
	struct strbuf path = STRBUF_INIT;
	sb_puts(&path, shown ? shown : "");
	int fd = dirfd, rc = 0;
	char *save = NULL;
	for (char *part = strtok_r(copy, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
		if (path.len)
			sb_puts(&path, "/");
		sb_puts(&path, part);
		if (strcmp(part, ".") == 0 || strcmp(part, "..") == 0) {
			snprintf(err, err_size, "%s: a '.' or '..' component", path.buf);
			rc = -1;
			break;
		}
		int next = hf_dir_open(fd, part);
		if (next < 0 && errno == ENOENT && create) {
			/* os.makedirs' mode, as huggingface_hub makes its folders: the
			 * umask decides (002 leaves a shared cache group-writable) */
			if (mkdirat(fd, part, 0777) < 0 && errno != EEXIST) {
				snprintf(err, err_size, "%s: %s", path.buf, strerror(errno));
				rc = -1;
				break;
			}
			next = hf_dir_open(fd, part);
		}
		if (next < 0) {
			describe_refusal(fd, path.buf, part, errno, err, err_size);
			rc = -1;
			break;
		}
		if (fd != dirfd)
			close(fd);
		fd = next;
	}
	if (rc < 0 && fd != dirfd)
		close(fd);
	free(copy);
	sb_release(&path);
	if (rc < 0)
		return -1;
	return fd == dirfd ? fcntl(dirfd, F_DUPFD_CLOEXEC, 0) : fd;
}
