/* Reads the control fields of a .deb with libarchive: the outer ar archive,
 * then control.tar (uncompressed, gz, xz or zst) and its ./control file. */
#ifndef GPUGATE_PROVISION_DEB_H
#define GPUGATE_PROVISION_DEB_H

#include <stddef.h>

struct deb_control {
	char *package, *version, *architecture, *depends, *pre_depends; /* NULL when absent */
};

/* Returns 0, or -1 with err naming the file and what is wrong with it. */
int deb_read_control(const char *path, struct deb_control *out, char *err, size_t err_size);
/* The same from a .deb in memory; label names it in messages. */
int deb_read_control_memory(const void *data, size_t size, const char *label, struct deb_control *out,
			    char *err, size_t err_size);
/* The fields of one deb822 stanza ("Name: value" plus continuation lines),
 * NUL-terminated text; fields already set are replaced. */
void deb_parse_control(const char *text, struct deb_control *c);
void deb_control_free(struct deb_control *c);

#endif
