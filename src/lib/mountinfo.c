#include "mountinfo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void mountinfo_unescape(char *s)
{
	char *out = s;
	for (const char *in = s; *in;) {
		if (in[0] == '\\' && in[1] >= '0' && in[1] <= '3' && in[2] >= '0' && in[2] <= '7' && in[3] >= '0' &&
		    in[3] <= '7') {
			*out++ = (char)((in[1] - '0') * 64 + (in[2] - '0') * 8 + (in[3] - '0'));
			in += 4;
		} else {
			*out++ = *in++;
		}
	}
	*out = '\0';
}

static void entry_free(struct mount_entry *e)
{
	free(e->root);
	free(e->mount_point);
	free(e->mount_options);
	free(e->fstype);
	free(e->source);
	free(e->super_options);
}

void mountinfo_free(struct mountinfo *mi)
{
	for (size_t i = 0; i < mi->count; i++)
		entry_free(&mi->entries[i]);
	free(mi->entries);
	mi->entries = NULL;
	mi->count = 0;
}

/* Splits one line on spaces into at most max fields; returns the count. */
static size_t split_fields(char *line, char **fields, size_t max)
{
	size_t n = 0;
	char *save = NULL;
	for (char *tok = strtok_r(line, " ", &save); tok && n < max; tok = strtok_r(NULL, " ", &save))
		fields[n++] = tok;
	return n;
}

static char *decoded(const char *s)
{
	char *d = xstrdup(s);
	mountinfo_unescape(d);
	return d;
}

/* "MAJOR:MINOR" and nothing after, as sscanf(s, "%u:%u%c") reads it (2). */
static bool parse_dev(const char *s, unsigned *major, unsigned *minor)
{
	char *end;
	unsigned long a = strtoul(s, &end, 10);
	if (end == s || *end != ':')
		return false;
	const char *m = end + 1;
	unsigned long b = strtoul(m, &end, 10);
	if (end == m || *end)
		return false;
	*major = (unsigned)a;
	*minor = (unsigned)b;
	return true;
}

/* 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue */
static int parse_line(char *line, struct mount_entry *e, const char **why)
{
	char *f[64];
	size_t n = split_fields(line, f, ARRAY_SIZE(f));
	size_t dash = 0;
	for (size_t i = 6; i < n; i++)
		if (strcmp(f[i], "-") == 0) {
			dash = i;
			break;
		}
	if (n < 10 || !dash || dash + 3 > n) {
		*why = "fewer fields than 'ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS ... - FSTYPE SOURCE SUPEROPTIONS'";
		return -1;
	}
	char *end;
	errno = 0;
	long id = strtol(f[0], &end, 10);
	if (errno || *end || id < 0 || id > 0x7fffffff) {
		*why = "the mount id is not a number";
		return -1;
	}
	long parent = strtol(f[1], &end, 10);
	if (errno || *end || parent < 0 || parent > 0x7fffffff) {
		*why = "the parent id is not a number";
		return -1;
	}
	unsigned major, minor;
	if (!parse_dev(f[2], &major, &minor)) {
		*why = "the device is not MAJOR:MINOR";
		return -1;
	}
	if (f[4][0] != '/') {
		*why = "the mount point is not an absolute path";
		return -1;
	}
	e->id = (int)id;
	e->parent_id = (int)parent;
	e->major = major;
	e->minor = minor;
	e->root = decoded(f[3]);
	e->mount_point = decoded(f[4]);
	e->mount_options = xstrdup(f[5]);
	e->fstype = decoded(f[dash + 1]);
	e->source = decoded(f[dash + 2]);
	e->super_options = dash + 3 < n ? xstrdup(f[dash + 3]) : xstrdup("");
	return 0;
}

int mountinfo_parse(const char *text, size_t len, struct mountinfo *mi, char *err, size_t errsize)
{
	mi->entries = NULL;
	mi->count = 0;
	size_t lineno = 0;
	char *copy = xmalloc(len + 1); /* one copy, each line cut in place */
	memcpy(copy, text, len);
	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		char *line = copy + pos;
		line[n] = '\0';
		pos += n + 1;
		lineno++;
		if (!*line)
			continue;
		struct mount_entry e = { 0 };
		const char *why = NULL;
		if (memchr(text + pos - n - 1, '\0', n)) {
			why = "a NUL byte in the line";
		} else if (parse_line(line, &e, &why) == 0) {
			if (mi->count % 16 == 0)
				mi->entries = xrealloc(mi->entries, (mi->count + 16) * sizeof(*mi->entries));
			mi->entries[mi->count++] = e;
		}
		if (why) {
			free(copy);
			snprintf(err, errsize, "line %zu: %s", lineno, why);
			mountinfo_free(mi);
			return -1;
		}
	}
	free(copy);
	return 0;
}

int mountinfo_load(const char *path, struct mountinfo *mi, char *err, size_t errsize)
{
	char *text = NULL;
	size_t len = 0;
	int rc = read_file(path, &text, &len);
	if (rc < 0) {
		snprintf(err, errsize, "%s: %s", path, strerror(-rc));
		mi->entries = NULL;
		mi->count = 0;
		return -1;
	}
	char why[512];
	rc = mountinfo_parse(text, len, mi, why, sizeof(why));
	if (rc < 0)
		snprintf(err, errsize, "%s: %s", path, why);
	free(text);
	return rc;
}

/* True when mount point mp holds path: equal, or path continues with '/'. */
static bool holds(const char *mp, const char *path)
{
	size_t n = strlen(mp);
	while (n > 1 && mp[n - 1] == '/')
		n--;
	if (n == 1 && mp[0] == '/')
		return path[0] == '/';
	return strncmp(mp, path, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

const struct mount_entry *mountinfo_find(const struct mountinfo *mi, const char *path)
{
	const struct mount_entry *best = NULL;
	size_t best_len = 0;
	for (size_t i = 0; i < mi->count; i++) {
		const struct mount_entry *e = &mi->entries[i];
		size_t n = strlen(e->mount_point);
		if (holds(e->mount_point, path) && (!best || n >= best_len)) {
			best = e;
			best_len = n;
		}
	}
	return best;
}

bool mount_option_has(const char *options, const char *option)
{
	return list_has(options, ',', option);
}

bool mount_is_read_only(const struct mount_entry *m)
{
	return mount_option_has(m->mount_options, "ro") || mount_option_has(m->super_options, "ro");
}
