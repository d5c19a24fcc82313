/* Runs the selected checks against a context and collects their results,
 * finishing by the context's deadline whatever a check does. */
#ifndef GPUGATE_RUNNER_H
#define GPUGATE_RUNNER_H

#include <stdbool.h>
#include <stddef.h>

#include "context.h"
#include "result.h"

struct selection {
	char **only; /* NULL-terminated id or prefix list, or NULL for all */
	char **skip;
};

struct run {
	const char *profile;
	struct result *results;
	size_t count;
	double duration_ms;
	double finished_at;    /* wall clock, seconds */
	bool timed_out;        /* a check was still running at the deadline */
	size_t text_limit;     /* bytes the text report may use; 0 for no limit */
};

/* Fills run; returns 0. Checks still running at the deadline are reported as
 * timed out and left behind: the caller must then leave with _exit(). */
int run_checks(const struct context *ctx, const struct selection *sel, struct run *run);
/* 0 healthy (warnings allowed), 1 unhealthy. */
int run_exit_code(const struct run *run);
void run_counts(const struct run *run, size_t counts[4]);
void run_release(struct run *run);

#endif
