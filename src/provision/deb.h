/* Reads the control fields of a .deb with libarchive: the outer ar archive,
 * then control.tar (uncompressed, gz, xz or zst) and its ./control file,
 * refusing whatever dpkg-deb refuses and what it would read ambiguously (two
 * control members, a linked or absolute one): tests/integration/
 * test_deb_control.py compares every case with `dpkg-deb -f`. */
#ifndef GPUGATE_PROVISION_DEB_H
#define GPUGATE_PROVISION_DEB_H

#include <stddef.h>

struct deb_control {
	char *package, *version, *architecture, *depends, *pre_depends, *provides; /* NULL when absent */
};

/* Returns 0, or -1 with err naming the file and what is wrong with it. */
int deb_read_control(const char *path, struct deb_control *out, char *err, size_t err_size);
/* The same from a .deb in memory; label names it in messages. */
int deb_read_control_memory(const void *data, size_t size, const char *label, struct deb_control *out, char *err,
			    size_t err_size);
/* The fields of a binary package's control file, read as dpkg-deb reads it
 * (one stanza, no duplicate field, a valid Package name and Version; see
 * deb.c). 0, or -1 with err = "control line N: problem". c starts zeroed;
 * the caller frees it with deb_control_free either way. */
int deb_parse_control(const char *text, size_t len, struct deb_control *c, char *err, size_t err_size);
void deb_control_free(struct deb_control *c);

#endif
