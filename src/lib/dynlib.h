/* One way to load a shared library's entry points into a table of function
 * pointers: the GPU runtimes (libze_loader, libcuda, NVML) and libcrypto are
 * all dlopen'd on first use, so a check start pays none of their relocations
 * and a missing library is a finding, not a failed exec. */
#ifndef GPUGATE_DYNLIB_H
#define GPUGATE_DYNLIB_H

#include <stdbool.h>
#include <stddef.h>

/* One entry point: its exported name and where its pointer goes in the table. */
struct dynlib_symbol {
	const char *name;
	size_t offset;
	bool optional; /* left NULL when absent instead of failing */
};

/* dlopen(soname, RTLD_NOW | RTLD_LOCAL). On failure returns NULL and copies
 * dlerror()'s text into why. */
void *dynlib_open(const char *soname, char *why, size_t why_size);

/* The real path of the file the dynamic linker loaded for lib (symlinks
 * resolved), or false when it cannot be told. */
bool dynlib_real_path(void *lib, char *out, size_t out_size);

/* Fills the function pointers of table from syms. Returns NULL when every
 * required symbol was found, else the name of the first missing one. */
const char *dynlib_resolve(void *lib, void *table, const struct dynlib_symbol *syms, size_t n);

#endif
