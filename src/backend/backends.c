/* The table of backends (backend.h): `auto` tries them in this order. */
#include <string.h>

#include "backend.h"

const struct backend *const backends[] = { &ze_backend, &cuda_backend, NULL };

size_t backend_name_list(const char *out[], size_t max)
{
	size_t n = 0;
	for (const struct backend *const *b = backends; *b && n + 1 < max; b++)
		out[n++] = (*b)->name;
	out[n] = NULL;
	return n;
}

const struct backend *backend_named(const char *name)
{
	for (const struct backend *const *b = backends; *b; b++)
		if (strcmp((*b)->name, name) == 0)
			return *b;
	return NULL;
}
