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
	const struct spec *spec; /* the spec that ran (for the reports' spec_digest) */
	struct result *results;
	size_t count;
	double duration_ms;
	double finished_at; /* wall clock, seconds */
	size_t text_limit;  /* bytes the text report may use; 0 for no limit */
};

/* Delivers a run (writes its reports); returns the process's exit code. */
typedef int run_deliver_fn(const struct run *run, void *arg);

/* The deadline guard: a thread started in a check command as soon as the
 * options are parsed (and the sandbox loaded), so that nothing gpugate does
 * can keep it past its deadline, looking at --root or reading the spec from
 * a FIFO or a dead mount included. Until run_checks, the deadline
 * ends the process with exit 3 and a message saying what was in progress
 * (`doing`, such as "reading the spec FILE"). NULL when no thread could be
 * had: the work then runs unguarded. */
struct watchdog;
struct watchdog *watchdog_start(double start, double deadline, const char *doing);
/* A new deadline (when > 0) and what is in progress now (when not NULL). */
void watchdog_setup(struct watchdog *w, double deadline, const char *doing);
/* Whether --only and --skip (sel) leave a check of a group that runs on a
 * thread of its own (own_thread: the packages group), the spec not read
 * yet: a run that may parse the dpkg status file in parts. */
bool run_may_select_own_thread(const struct selection *sel);

/* Runs the checks on this thread and fills run; returns 0. When they are not
 * all done by the context's deadline, the watchdog instead reports the
 * finished ones and the rest as timed out through deliver(run, arg) and ends
 * the process with its exit code: run_checks then never returns. */
int run_checks(const struct context *ctx, const struct selection *sel, struct run *run, run_deliver_fn *deliver,
	       void *deliver_arg, struct watchdog *w);
/* Whether the spec and sel leave at least one check to run (else exit 3). */
bool run_selects_any(const struct context *ctx, const struct selection *sel);
/* Turns each blocked check (result_blocked) into a skip naming the failed
 * root of its chain, or a failure when no check of the chain failed (run by
 * run_checks; exported for its unit test). */
void run_resolve_blocked(struct run *run);
/* 0 healthy (warnings allowed), 1 unhealthy. */
int run_exit_code(const struct run *run);
void run_counts(const struct run *run, size_t counts[4]);
void run_release(struct run *run);

#endif
