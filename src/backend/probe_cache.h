/* The health check's state cache: a probe result kept in an owner-only file so
 * that a HEALTHCHECK every 30 s does not load the GPU every time. The folder is
 * $XDG_RUNTIME_DIR/gpugate, else /run/gpugate, else /dev/shm/gpugate-UID (a
 * container's private tmpfs), else /tmp/gpugate-UID; a folder
 * owned by someone else or writable by others is refused. */
#ifndef GPUGATE_PROBE_CACHE_H
#define GPUGATE_PROBE_CACHE_H

#include <jansson.h>
#include <stddef.h>

#include "backend.h"
#include "probe.h"

#define PROBE_CACHE_FAILURE_TTL_S 30.0

/* The state folder (created 0700 when missing), or NULL with why filled;
 * xdg_runtime_dir: the run's XDG_RUNTIME_DIR (NULL when unset). */
char *probe_cache_dir(const char *xdg_runtime_dir, char *why, size_t why_size);

/* A probe run to JSON and back (only the fields a check reads). */
json_t *probe_run_to_json(const struct probe_run *run);
void probe_run_from_json(const json_t *j, struct probe_run *run);

/* The cached object for key when younger than its TTL (ok results: ttl,
 * failed ones: at most 30 s), else NULL. age_s receives its age. */
json_t *probe_cache_load(const char *dir, const char *key, double ttl, double *age_s);
/* Stores state (an object) with key, ok and the time, the stack identity
 * (stack_identity.h) and the kernel log's last record (/dev/kmsg under root);
 * 0 or -errno. */
int probe_cache_store(const char *root, const char *dir, const char *key, bool ok, json_t *identity, json_t *state);
/* Why a cached object no longer stands for the stack, in words (caller
 * frees), or NULL when it does: its stack identity differs from now's (the
 * files it names are looked at again), or the kernel log, where it can be
 * read, reports a GPU fault (lib/kmsg.h's patterns) after the cached run.
 * Read under root ("" for the real root). */
char *probe_cache_stale(const char *root, const struct backend *const *bes, size_t n, const json_t *cached);

#endif
