/* One set of worker threads for all the parallel phases of an hf scan and
 * verify (the record's read and parse, the blobs' stat, the snapshot walk,
 * the listing's comparison), instead of threads started and joined for each
 * phase: a run that changes nothing on a 16-CPU host started 85 threads,
 * 57 of them one after another on the scan's own thread (each a clone, a
 * first run on a CPU woken for it, an exit and a join), for phases of a
 * millisecond or two. The workers are started with lib/parallel.h's
 * thread_start when the crew is first held (hf verify: they come up while
 * the records are opened) or by the first job that wants more than one
 * thread, each starting the next ones (a tree: the holder's thread starts
 * one), and they wait for work
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

#include <stdbool.h>
#include <stddef.h>

/* Asks for the crew until the matching release (one worker per usable CPU
 * but a job's caller, at most HF_CREW_MAX, started now when start is true,
 * else by the first job that wants them); holds nest. */
void hf_crew_hold(bool start);
/* Ends a hold; the last one stops the workers and joins them (no job may
 * be running then). */
void hf_crew_release(void);
/* Whether the crew is held (its jobs cost no thread start). */
bool hf_crew_held(void);
/* parallel_for (lib/parallel.h) on the crew's workers while it is held. */
void hf_crew_for(size_t count, size_t chunk, size_t max_threads, void (*fn)(void *arg, size_t begin, size_t end),
		 void *arg);

/* Touches the pages of [p, p + len), fresh memory about to be written by
 * one thread (a large array filled in order), from the crew's threads
 * first: their page faults side by side instead of one after another on
 * that thread (each a zeroed page: ~2 us on a host whose fresh memory is
 * slow). The bytes touched are written as zero: memory not yet in use. */
void hf_crew_touch(void *p, size_t len);

#define HF_CREW_MAX 15 /* lib/parallel.c's pool has 16 stacks: one left for the hook's thread */

#endif
