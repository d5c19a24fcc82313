#include "creds.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "safe_io.h"
#include "util.h"

int creds_current(struct creds *c)
{
	memset(c, 0, sizeof(*c));
	c->uid = getuid();
	c->gid = getgid();
	int n = getgroups(CREDS_MAX_GROUPS, c->groups);
	if (n < 0)
		return -errno;
	c->ngroups = (size_t)n;
	return 0;
}

bool creds_in_group(const struct creds *c, gid_t gid)
{
	if (c->gid == gid)
		return true;
	for (size_t i = 0; i < c->ngroups; i++)
		if (c->groups[i] == gid)
			return true;
	return false;
}

void creds_format(const struct creds *c, char *buf, size_t size)
{
	struct strbuf sb = STRBUF_INIT;
	sb_printf(&sb, "uid %u gid %u groups ", (unsigned)c->uid, (unsigned)c->gid);
	if (!c->ngroups)
		sb_puts(&sb, "(none)");
	for (size_t i = 0; i < c->ngroups; i++)
		sb_printf(&sb, "%s%u", i ? "," : "", (unsigned)c->groups[i]);
	snprintf(buf, size, "%s", sb.buf);
	sb_release(&sb);
}

int creds_access_rw(const char *path)
{
	return access(path, R_OK | W_OK) == 0 ? 0 : -errno;
}

int creds_access_rw_at(int dirfd, const char *name)
{
	return faccessat(dirfd, name, R_OK | W_OK, 0) == 0 ? 0 : -errno;
}

int creds_group_name(const char *root, gid_t gid, char *name, size_t size)
{
	char *path = root_path(root, "/etc/group");
	/* a FIFO or /dev/zero planted there: an error at once, not a hang */
	FILE *f = safe_fopen_read(path, SAFE_MAX_TEXT);
	free(path);
	if (!f)
		return -errno;
	int rc = -ENOENT;
	struct group *gr;
	/* fgetgrent reads the group(5) format of any file, not only the host's */
	while ((gr = fgetgrent(f))) {
		if (gr->gr_gid == gid) {
			snprintf(name, size, "%s", gr->gr_name);
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}
