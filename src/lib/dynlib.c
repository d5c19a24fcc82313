#include "dynlib.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *dynlib_open(const char *soname, char *why, size_t why_size)
{
	void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		const char *err = dlerror();
		snprintf(why, why_size, "%s", err ? err : "dlopen failed");
	}
	return lib;
}

bool dynlib_real_path(void *lib, char *out, size_t out_size)
{
	struct link_map *map = NULL;
	char real[PATH_MAX];
	if (dlinfo(lib, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_name || !map->l_name[0])
		return false;
	const char *path = realpath(map->l_name, real) ? real : map->l_name;
	return (size_t)snprintf(out, out_size, "%s", path) < out_size;
}

const char *dynlib_resolve(void *lib, void *table, const struct dynlib_symbol *syms, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		void *fn = dlsym(lib, syms[i].name);
		if (!fn && !syms[i].optional)
			return syms[i].name;
		/* memcpy: storing a data pointer into a function pointer field
		 * without a cast that C11 leaves undefined */
		memcpy((char *)table + syms[i].offset, &fn, sizeof fn);
	}
	return NULL;
}
