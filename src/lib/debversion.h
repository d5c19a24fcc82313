/* Debian version comparison and syntax, exactly as dpkg orders and parses
 * versions (deb-version(7); dpkg's lib/dpkg/version.c and parsehelp.c). */
#ifndef GPUGATE_DEBVERSION_H
#define GPUGATE_DEBVERSION_H

#include <stdbool.h>
#include <stddef.h>

/* <0, 0 or >0, like strcmp. Any strings are accepted (as dpkg compares a
 * version it only warned about). */
int debversion_compare(const char *a, const char *b);

enum debversion_level {
	DEBVERSION_OK = 0,
	DEBVERSION_WARN,  /* dpkg warns in its database (lax), refuses in a control file */
	DEBVERSION_ERROR, /* dpkg refuses it everywhere */
};
/* dpkg's parseversion(): NULL when v is clean, else dpkg's own words for what
 * is wrong, with *level saying whether dpkg refuses it or only warns. */
const char *debversion_check(const char *v, enum debversion_level *level);
/* dpkg's errors alone (what it refuses even in its own database, read
 * laxly) for v[0..n): NULL when dpkg reads it, else its words. */
const char *debversion_refused(const char *v, size_t n);
/* The same for a version with no blank in it (a relation's, which ends at
 * white space), whose first ':' and last '-' the caller found while
 * passing it (NULL when none): the bytes are not read again. */
const char *debversion_refused_marked(const char *v, size_t n, const char *colon, const char *last_dash);
/* NULL when v is a clean version (no error, no warning), else what is wrong. */
const char *debversion_invalid(const char *v);

#endif
