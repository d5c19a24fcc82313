#include "hf_cache_write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hf/cache_dir.h"
#include "hf/cache_format.h"
#include "lib/safe_io.h"
#include "lib/util.h"
#include "provision.h"

/* huggingface_hub src/huggingface_hub/_local_folder.py, CACHEDIR_TAG_CONTENT
 * (the Cache Directory Tagging Standard's signature line first). */
const char hfw_cachedir_tag_content[] = "Signature: 8a477f597d28d172789f06886806bc55\n"
					"# This file is a cache directory tag created by huggingface_hub.\n"
					"# For information about cache directory tags, see:\n"
					"#\thttps://bford.info/cachedir/\n";

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void hfw_init(struct hf_cache_dirs *d, const char *cache_path, const char *folder)
{
	d->cache = d->repo = d->blobs = d->locks = -1;
	d->cache_path = cache_path;
	d->folder = folder;
}

/* The cache folder, made (mkdir -p) on the first write only. */
static int open_cache(struct hf_cache_dirs *d, char *err, size_t n)
{
	if (d->cache >= 0)
		return 0;
	int rc = mkdir_p(d->cache_path, 0777); /* less the umask, as os.makedirs */
	if (rc == 0 && (d->cache = open(d->cache_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		rc = -errno;
	if (rc < 0) {
		snprintf(err, n, "%s: %s", d->cache_path, strerror(-rc));
		return -1;
	}
	return 0;
}

int hfw_open_repo(struct hf_cache_dirs *d, char *err, size_t n)
{
	if (open_cache(d, err, n) < 0)
		return -1;
	if (d->repo < 0)
		d->repo = hf_dir_walk(d->cache, "", d->folder, true, err, n);
	return d->repo < 0 ? -1 : 0;
}

int hfw_open_store(struct hf_cache_dirs *d, char *err, size_t n)
{
	if (hfw_open_repo(d, err, n) < 0)
		return -1;
	if (d->blobs < 0)
		d->blobs = hf_dir_walk(d->repo, d->folder, HF_BLOBS, true, err, n);
	if (d->blobs >= 0 && d->locks < 0) {
		char *locks = hf_lock_rel(d->folder);
		d->locks = hf_dir_walk(d->cache, "", locks, true, err, n);
		free(locks);
	}
	return d->blobs < 0 || d->locks < 0 ? -1 : 0;
}

void hfw_close(struct hf_cache_dirs *d)
{
	close_fd(&d->cache);
	close_fd(&d->repo);
	close_fd(&d->blobs);
	close_fd(&d->locks);
}

void hfw_cachedir_tag(struct hf_cache_dirs *d)
{
	char err[300];
	if (open_cache(d, err, sizeof(err)) < 0)
		return;
	/* O_EXCL: an existing name (a file, or a link to anywhere) is left alone */
	int fd = openat(d->cache, HF_CACHEDIR_TAG, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (fd < 0)
		return;
	size_t len = strlen(hfw_cachedir_tag_content);
	if (write(fd, hfw_cachedir_tag_content, len) != (ssize_t)len)
		unlinkat(d->cache, HF_CACHEDIR_TAG, 0); /* no half tag */
	close(fd);
}

/* Opens the folder of rel (under the repo folder, made as needed); *base
 * points at rel's last component. Returns the fd or -1 with err. */
static int parent_of(struct hf_cache_dirs *d, const char *rel, const char **base, char *err, size_t n)
{
	if (hfw_open_repo(d, err, n) < 0)
		return -1;
	const char *slash = strrchr(rel, '/');
	*base = slash ? slash + 1 : rel;
	if (!slash)
		return fcntl(d->repo, F_DUPFD_CLOEXEC, 0);
	char *dir = xstrndup(rel, (size_t)(slash - rel));
	int fd = hf_dir_walk(d->repo, d->folder, dir, true, err, n);
	free(dir);
	return fd;
}

/* A temp name beside base, unique to this process. */
static char *temp_name(const char *base, const char *suffix)
{
	return xasprintf(".%s.%d%s", base, (int)getpid(), suffix);
}

/* Ends the replacement of rel through tmp in dir: on failure (rc -errno)
 * says so in err and removes tmp; frees tmp, closes dir. 0, or -1. */
static int end_replace(struct hf_cache_dirs *d, const char *rel, int dir, char *tmp, int rc, char *err, size_t n)
{
	if (rc < 0) {
		snprintf(err, n, "%s/%s: %s", d->folder, rel, strerror(-rc));
		unlinkat(dir, tmp, 0);
	}
	free(tmp);
	close(dir);
	return rc < 0 ? -1 : 0;
}

int hfw_write_file(struct hf_cache_dirs *d, const char *rel, const char *data, size_t len, unsigned mode, char *err,
		   size_t n)
{
	const char *base;
	int dir = parent_of(d, rel, &base, err, n);
	if (dir < 0)
		return -1;
	char *tmp = temp_name(base, ".tmp");
	unlinkat(dir, tmp, 0);
	int rc = 0;
	int fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		rc = -errno;
	if (rc == 0)
		rc = safe_write_all(fd, data, len);
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	if (fd >= 0 && close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && renameat(dir, tmp, dir, base) < 0)
		rc = -errno;
	return end_replace(d, rel, dir, tmp, rc, err, n);
}

int hfw_link(struct hf_cache_dirs *d, const char *rel, const char *target, char *err, size_t n)
{
	const char *base;
	int dir = parent_of(d, rel, &base, err, n);
	if (dir < 0)
		return -1;
	char *tmp = temp_name(base, ".tmp-link");
	unlinkat(dir, tmp, 0);
	int rc = 0;
	/* rename(2) replaces the name itself: an old link is never followed */
	if (symlinkat(target, dir, tmp) < 0 || renameat(dir, tmp, dir, base) < 0)
		rc = -errno;
	return end_replace(d, rel, dir, tmp, rc, err, n);
}

int hfw_touch(struct hf_cache_dirs *d, const char *rel, char *err, size_t n)
{
	const char *base;
	int dir = parent_of(d, rel, &base, err, n);
	if (dir < 0)
		return -1;
	int fd = openat(dir, base, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
	if (fd < 0)
		snprintf(err, n, "%s/%s: %s", d->folder, rel, strerror(errno));
	else
		close(fd);
	close(dir);
	return fd < 0 ? -1 : 0;
}
