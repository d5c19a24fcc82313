/* One set of worker threads for all the parallel phases of an hf scan and
 * verify (the record's read and parse, the blobs' stat, the snapshot walk,
 * the listing's comparison), instead of threads started and joined for each
 * phase: a run that changes nothing on a 16-CPU host started 85 threads,
 * 57 of them one after another on the scan's own thread (each a clone, a
 * first run on a CPU woken for it, an exit and a join), for phases of a
 * millisecond or two. The workers are started with lib/parallel.h's
 * thread_start by the first job that wants more than one thread while the
 * crew is held (a small cache's scan starts none), each starting the next
 * ones (a tree: the job's thread starts one), and they wait for work
 * between phases, spinning a short while first (a phase follows the last
 * within tens of microseconds on the scan's path) and then asleep.
 *
 * hf_crew_for has parallel_for's contract; while nobody holds the crew it
 * is parallel_for. Several threads may run jobs at once (the record is read
 * on a thread beside the scan's): each worker takes slices of any job that
 * has some left, and a job's caller works on its own job too, so that a
 * job always ends. A slice may run a job of its own (nested). */
#ifndef GPUGATE_HF_CREW_H
#define GPUGATE_HF_CREW_H

#include <stddef.h>

/* Asks for the crew until the matching release (one worker per usable CPU
 * but a job's caller, at most HF_CREW_MAX, started at the first job that
 * wants them); holds nest. */
void hf_crew_hold(void);
/* Ends a hold; the last one stops the workers and joins them (no job may
 * be running then). */
void hf_crew_release(void);
/* parallel_for (lib/parallel.h) on the crew's workers while it is held. */
void hf_crew_for(size_t count, size_t chunk, size_t max_threads, void (*fn)(void *arg, size_t begin, size_t end),
		 void *arg);

#define HF_CREW_MAX 15 /* lib/parallel.c's pool has 16 stacks: one left for the hook's thread */

#endif
