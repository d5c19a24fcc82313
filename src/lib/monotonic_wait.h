/* Timed waits on the monotonic clock (monotonic_seconds(), lib/util.h): a
 * condition variable whose pthread_cond_timedwait reads CLOCK_MONOTONIC, so
 * a jump of the wall clock neither cuts a wait short nor stretches it, and
 * the deadline such a wait takes. */
#ifndef GPUGATE_MONOTONIC_WAIT_H
#define GPUGATE_MONOTONIC_WAIT_H

#include <pthread.h>
#include <time.h>

/* pthread_cond_init with CLOCK_MONOTONIC as the clock of its timed waits. */
void monotonic_cond_init(pthread_cond_t *cond);

/* The moment at (a monotonic_seconds() value) as the timespec that
 * pthread_cond_timedwait takes on such a condition variable. */
struct timespec monotonic_timespec(double at);

#endif
