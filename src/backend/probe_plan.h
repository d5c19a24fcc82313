/* The probe's plan: what src/backend/ knows of the run it probes for, in
 * plain data. The runtime group's prepare (src/checks/runtime.c) fills the
 * run's part once from its context (root, environment, this binary, the
 * deadline) and probe_plan_resolve() the rest (which backends, the libraries
 * their children load, how many children, the state folder); the session,
 * the probe parent, the state cache and the stack identity read only the
 * plan. src/backend/ never includes context.h (src/tools/vendor_lint.py),
 * so a test builds a plan by hand. */
#ifndef GPUGATE_PROBE_PLAN_H
#define GPUGATE_PROBE_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "../vendor/vendor.h"
#include "backend.h"

/* What the runtime group asks for (from its spec section). */
struct probe_session_request {
	const char *backend; /* "auto" or a backend's name */
	bool smoke, telemetry, processes, perf;
	long work_items;
	size_t perf_bytes;
	bool use_cache; /* the health check: reuse a recent result */
	double cache_ttl;
};

/* One backend to probe. */
struct probe_plan_backend {
	const struct backend *be;
	char *library;   /* "": the children load it by soname; else (under --root) the root's copy, by path */
	size_t children; /* the first round's children: with smoke probe_children_planned(), else 1 */
};

struct probe_plan {
	/* the run's part, set by the caller */
	const char *root;            /* "" for the real root, else a folder read as "/" */
	char **env;                  /* NULL-terminated "NAME=value": the children's environment */
	const char *self_exe;        /* this binary: the children's argv[0] and part of the cache key */
	bool sandbox;                /* the children load the probe's seccomp filters (--sandbox) */
	const struct vendor *vendor; /* the run's GPU vendor, NULL if unknown: what to install when nothing is */
	double deadline;             /* monotonic: every child is killed by then */
	/* resolved by probe_plan_resolve() */
	struct probe_plan_backend *backends; /* in backends[] order */
	size_t n;
	char *none_found; /* n == 0: no backend's library was found, and what was looked for */
	char *cache_dir;  /* the state folder (probe_cache.h) when the request uses it; NULL: see cache_why */
	char cache_why[512];
};

/* Resolves the plan's second part for req from its first: the backends
 * wanted whose library is found (auto: the installed ones; under --root only
 * the root's own), their children, and the state folder (created when
 * missing) when the health check caches or the smoke keeps compiled modules
 * and some backend was found. */
void probe_plan_resolve(struct probe_plan *plan, const struct probe_session_request *req);
void probe_plan_release(struct probe_plan *plan);

/* The first round's per-device children: one per GPU node passed in
 * (nodes), no more than the vendor's visibility variable (VALUE, NULL when
 * unset) shows, at least 1 (to report that none is visible), at most 64. */
size_t probe_children_planned(const struct vendor *v, size_t nodes, const char *visible);

#endif
