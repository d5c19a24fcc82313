/* What the performance measurement of every backend shares (ze_perf.c,
 * cuda.c): how many runs, the copy buffer's size, which copy counts, and the
 * launch-latency summary, so the figures compared against one baseline mean the same. */
#ifndef GPUGATE_BACKEND_PERF_H
#define GPUGATE_BACKEND_PERF_H

#include <jansson.h>
#include <stdlib.h>

enum {
	PERF_REPEATS = 5,     /* timed copies after one warm-up; the best counts */
	LATENCY_WARMUP = 5,   /* untimed launches first */
	LATENCY_RUNS = 50,    /* timed launches; the median counts */
	COPY_ITEM_BYTES = 16, /* one uint4 per work item */
};

/* The copy buffer for a requested size: at least 1 MiB, whole items. */
static inline size_t perf_copy_bytes(size_t requested)
{
	return requested < (1u << 20) ? (1u << 20) : requested / COPY_ITEM_BYTES * COPY_ITEM_BYTES;
}

static inline int perf_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* One timed copy of run (0..PERF_REPEATS; run 0 only warms up): added to
 * runs, and kept in *best when it is the shortest positive time so far. */
static inline void perf_keep_copy(int run, double time, json_t *runs, double *best)
{
	if (run == 0)
		return;
	json_array_append_new(runs, json_real(time));
	if (time > 0 && (*best == 0 || time < *best))
		*best = time;
}

/* Sorts lat (LATENCY_RUNS launch times in microseconds) and records their
 * median and minimum in perf. */
static inline void perf_record_latency(json_t *perf, double lat[LATENCY_RUNS])
{
	qsort(lat, LATENCY_RUNS, sizeof(lat[0]), perf_cmp_double);
	json_object_set_new(perf, "launch_latency_us",
			    json_real((lat[LATENCY_RUNS / 2 - 1] + lat[LATENCY_RUNS / 2]) / 2));
	json_object_set_new(perf, "launch_latency_min_us", json_real(lat[0]));
}

#endif
