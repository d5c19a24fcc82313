/* The mount table of a process, from proc/PID/mountinfo (proc(5)): which
 * mount holds a path (longest mount-point prefix, the later of equal ones
 * wins because it is stacked on top) and its options. */
#ifndef GPUGATE_MOUNTINFO_H
#define GPUGATE_MOUNTINFO_H

#include <stdbool.h>
#include <stddef.h>

struct mount_entry {
	int id, parent_id;
	unsigned major, minor;
	char *root;          /* the part of the filesystem mounted here */
	char *mount_point;   /* octal escapes (\040) decoded */
	char *mount_options; /* per-mount: "rw,nosuid,relatime" */
	char *fstype;
	char *source;
	char *super_options; /* per-superblock: "rw,size=1024k" */
};

struct mountinfo {
	struct mount_entry *entries;
	size_t count;
};

/* Parses the text of a mountinfo file. Returns 0, or -1 with err naming the
 * line and the problem (mi then holds nothing). */
int mountinfo_parse(const char *text, size_t len, struct mountinfo *mi, char *err, size_t errsize);
/* Reads and parses path. Returns 0, or -1 with err naming path and errno text. */
int mountinfo_load(const char *path, struct mountinfo *mi, char *err, size_t errsize);
void mountinfo_free(struct mountinfo *mi);

/* Decodes \ooo octal escapes in place (the kernel escapes space, tab,
 * newline and backslash in mount points). */
void mountinfo_unescape(char *s);

/* The mount that holds the absolute path (lexically: no symlinks are
 * followed), or NULL when none does (no "/" mount in the table). */
const struct mount_entry *mountinfo_find(const struct mountinfo *mi, const char *path);
/* True when the comma-separated option list holds the option exactly. */
bool mount_option_has(const char *options, const char *option);
/* True when the mount is read-only (per-mount or superblock "ro"). */
bool mount_is_read_only(const struct mount_entry *m);

#endif
