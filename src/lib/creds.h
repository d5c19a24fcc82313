/* This process's real credentials and what they may open: the answer to
 * "can the GPU user open the render node", with the numbers a fix needs. */
#ifndef GPUGATE_CREDS_H
#define GPUGATE_CREDS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define CREDS_MAX_GROUPS 256

struct creds {
	uid_t uid;
	gid_t gid;
	size_t ngroups; /* supplementary groups, as getgroups(2) reports */
	gid_t groups[CREDS_MAX_GROUPS];
};

/* The real uid and gid and the supplementary groups. 0 or -errno. */
int creds_current(struct creds *c);
bool creds_in_group(const struct creds *c, gid_t gid);
/* "uid 65534 gid 65534 groups 65534,44" */
void creds_format(const struct creds *c, char *buf, size_t size);
/* Read and write access to path with the real credentials (access(2) does
 * exactly that, including root's exemptions). 0 or -errno. */
int creds_access_rw(const char *path);
/* The same for name relative to the folder open as dirfd. */
int creds_access_rw_at(int dirfd, const char *name);
/* The name of gid in ROOT/etc/group. 0 with name filled, -ENOENT when the
 * file lists no such gid, or -errno when it cannot be read. */
int creds_group_name(const char *root, gid_t gid, char *name, size_t size);

#endif
