/* The parent's side of the probe: start `gpugate probe ...` children in their
 * own process groups, watch them until a deadline, kill and reap every one,
 * and say what happened. The checking process never loads a GPU library. */
#ifndef GPUGATE_PROBE_H
#define GPUGATE_PROBE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct probe_plan; /* probe_plan.h */

struct probe_request {
	const char *backend; /* "level-zero", "cuda" */
	int device;          /* -1: enumerate only */
	bool smoke, telemetry;
	bool processes;    /* list the processes using the device */
	bool perf;         /* measure bandwidth and launch latency after the smoke */
	size_t perf_bytes; /* the bandwidth copy's buffer */
	size_t work_items;
	double sync_timeout_s;
	const char *cache_dir; /* native module cache folder, or NULL */
	const char *library;   /* under --root: the root's copy of the library, loaded by path; NULL: the soname */
};

struct probe_run {
	char stage[32];       /* the last stage the child entered ("" if none) */
	char device[64];      /* and its device, "" if none */
	json_t *result;       /* the result object, NULL if the child sent none */
	json_t *enumerated;   /* the result so far once the devices were known, or NULL */
	bool killed;          /* still running at the deadline */
	double stage_seconds; /* how long it had been in that stage when it ended */
	int exit_code;        /* -1 unless it exited */
	int signal;           /* 0 unless a signal ended it */
	double seconds;       /* start to end */
	char *output;         /* the tail of the child's stdout and stderr */
	char *verdict;        /* NULL when ok; else "hung in stage sync on ... (killed)" */
	char *failed_stage;   /* NULL when ok; the stage to blame */
};

/* Runs every request in parallel, each in its own child (the plan's binary,
 * environment and sandbox), until all ended or the plan's deadline passed
 * (then kills them). Every child is reaped and its process group killed
 * before this returns. */
void probe_run_all(const struct probe_plan *plan, const struct probe_request *reqs, struct probe_run *runs, size_t n);
void probe_run_release(struct probe_run *run);

#endif
