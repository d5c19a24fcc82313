#include "dirents.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

int dirents_open(struct dirents *d, int dirfd, const char *path, int flags)
{
	d->pos = d->len = 0;
	d->error = 0;
	d->fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | flags);
	return d->fd < 0 ? -errno : 0;
}

const char *dirents_next(struct dirents *d, unsigned char *type)
{
	if (d->pos >= d->len) {
		ssize_t n = getdents64(d->fd, d->buf, sizeof(d->buf));
		if (n <= 0) {
			d->error = n < 0 ? errno : 0;
			return NULL;
		}
		d->pos = 0;
		d->len = (size_t)n;
	}
	/* the kernel writes whole, 8-byte aligned records */
	const struct dirent64 *e = (const struct dirent64 *)(void *)(d->buf + d->pos);
	d->pos += e->d_reclen;
	if (type)
		*type = e->d_type;
	return e->d_name;
}

void dirents_close(struct dirents *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}
