/* Timed waits on the monotonic clock (monotonic_wait.h). */
#include "monotonic_wait.h"

void monotonic_cond_init(pthread_cond_t *cond)
{
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(cond, &attr);
	pthread_condattr_destroy(&attr);
}

struct timespec monotonic_timespec(double at)
{
	struct timespec ts;
	ts.tv_sec = (time_t)at;
	ts.tv_nsec = (long)((at - (double)ts.tv_sec) * 1e9);
	if (ts.tv_nsec >= 1000000000L) { /* rounding */
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}
