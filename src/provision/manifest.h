/* Stack manifests (YAML files under images/stacks/): the .deb packages of a driver
 * stack with URL, sha256 and the control fields they must carry. */
#ifndef GPUGATE_PROVISION_MANIFEST_H
#define GPUGATE_PROVISION_MANIFEST_H

#include <stddef.h>

struct manifest_pkg {
	char *package, *version, *architecture, *url, *sha256; /* sha256 "" when unpinned */
	char *filename;                                        /* from the URL unless given */
	size_t line;
};

struct manifest {
	char *path;
	char *stack;
	struct manifest_pkg *pkgs;
	size_t count;
	char **system_packages; /* names the base image provides; NULL when not listed */
	size_t n_system;
};

/* Returns 0, or -1 with err = "FILE:LINE:COL: problem". */
int manifest_load(const char *path, struct manifest *m, char *err, size_t err_size);
void manifest_free(struct manifest *m);

#endif
