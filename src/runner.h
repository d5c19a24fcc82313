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
	size_t text_limit;     /* bytes the text report may use; 0 for no limit */
};

/* Delivers a run (writes its reports); returns the process's exit code. */
typedef int run_deliver_fn(const struct run *run, void *arg);

/* Runs the checks on this thread and fills run; returns 0. When the checks
 * are not all done by the deadline, a watchdog thread instead reports the
 * finished ones and the rest as timed out through deliver(run, arg) and ends
 * the process with its exit code: run_checks then never returns. */
int run_checks(const struct context *ctx, const struct selection *sel, struct run *run,
	       run_deliver_fn *deliver, void *deliver_arg);
/* 0 healthy (warnings allowed), 1 unhealthy. */
int run_exit_code(const struct run *run);
void run_counts(const struct run *run, size_t counts[4]);
void run_release(struct run *run);

#endif
