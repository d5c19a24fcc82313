/* Debian version comparison, exactly as dpkg orders versions (deb-version(7)). */
#ifndef GPUGATE_DEBVERSION_H
#define GPUGATE_DEBVERSION_H

#include <stdbool.h>

/* <0, 0 or >0, like strcmp. Any strings are accepted (as dpkg does with a warning). */
int debversion_compare(const char *a, const char *b);
/* NULL when v is a valid version, else what is wrong with it. */
const char *debversion_invalid(const char *v);

#endif
