/* A directory's entries through getdents64 on a descriptor: one openat and
 * the reads, where opendir adds an fstat and a 32 KiB heap buffer (fresh
 * pages cost a fault each in a short-lived process). For the hot scans of
 * /sys/class/drm and /dev/dri/by-path. */
#ifndef GPUGATE_DIRENTS_H
#define GPUGATE_DIRENTS_H

#include <stddef.h>

struct dirents {
	int fd;
	size_t pos, len;
	int error; /* errno of a failed read, 0 */
	_Alignas(8) char buf[2048];
};

/* Opens path (relative to dirfd) as a folder, with extra open flags such as
 * O_NOFOLLOW. 0, or -errno. */
int dirents_open(struct dirents *d, int dirfd, const char *path, int flags);
/* The next entry's name ("." and ".." included), or NULL at the end or on a
 * read error (then d->error is set). type gets the entry's d_type. */
const char *dirents_next(struct dirents *d, unsigned char *type);
void dirents_close(struct dirents *d);

#endif
