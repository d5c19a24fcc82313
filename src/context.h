/* What every check may read: the root prefix, a snapshot of the environment,
 * the deadline, the spec and the profile. Checks never change it. */
#ifndef GPUGATE_CONTEXT_H
#define GPUGATE_CONTEXT_H

#include <stdbool.h>

#include "spec.h"

struct context {
	const char *root; /* "" for the real root, else a folder read as "/" */
	const struct spec *spec;
	const char *profile; /* healthcheck, ci, validate, or the spec's own name */
	const char *vendor;  /* "intel" or "nvidia": --vendor, else detected (src/profile.c) */
	char **env;          /* NULL-terminated "NAME=value" snapshot */
	const char *argv0;   /* how this binary was started (see ctx_self_exe) */
	double start;        /* monotonic seconds */
	double deadline;     /* monotonic seconds; the whole run ends by then */
	int sandbox_filters; /* seccomp filters gpugate loaded on itself (0: --no-sandbox) */
};

/* NULL when unset; "" when set to the empty string. */
const char *ctx_getenv(const struct context *ctx, const char *name);
/* This binary's path, for the probe child: /proc/self/exe's target, read on
 * first use (most runs start no probe), else argv0. */
const char *ctx_self_exe(const struct context *ctx);
/* An absolute system path read under --root; caller frees. */
char *ctx_path(const struct context *ctx, const char *abs_path);
/* Seconds left before the deadline (never negative). */
double ctx_remaining(const struct context *ctx);
/* True in the healthcheck profile: the checks must not write or load the GPU. */
bool ctx_is_healthcheck(const struct context *ctx);

#endif
