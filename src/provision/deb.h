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
void deb_control_free(struct deb_control *c);

#endif
