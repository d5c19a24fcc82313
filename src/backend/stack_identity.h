/* What a cached probe result depends on beyond its settings: without it, a
 * cached pass hid a driver that now crashed in init for the whole TTL. The
 * identity (device, inode, size, mtime) of the loader and driver files the
 * probe loaded and of the linker cache; the GPU set (the DRM nodes with their
 * PCI addresses, each backend's device nodes); the kernel drivers' versions;
 * this boot. The driver version the runtime reports comes from its files, so
 * their identity stands for it without loading the GPU. Read under --root,
 * never loading a GPU library. */
#ifndef GPUGATE_STACK_IDENTITY_H
#define GPUGATE_STACK_IDENTITY_H

#include <jansson.h>

#include "backend.h"

/* The identity now, as an object: files (each of paths, an array of the
 * libraries a probe loaded, plus /etc/ld.so.cache), gpus, kernel_drivers,
 * boot, read under root ("" for the real root). Caller owns it. */
json_t *stack_identity(const char *root, const struct backend *const *bes, size_t n, const json_t *paths);
/* The libraries a probe result names ("library", "driver_library") appended to
 * paths (an array), once each. */
void stack_identity_add_libraries(json_t *paths, const json_t *result);
/* What differs between two identities, in words ("the file X changed"), or
 * NULL when they are the same. Caller frees. */
char *stack_identity_diff(const json_t *before, const json_t *now);

#endif
