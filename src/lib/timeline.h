/* Phase marks for measuring where a run's time goes on a host only someone
 * else can reach: built with -DGPUGATE_TIMELINE (never in a normal build),
 * each mark is one write(2) to stderr of
 *   TL <CLOCK_MONOTONIC ns> <thread> <label>|<thread CPU ns>
 * which build/devcarry/tl.py (the lead's) turns into medians since the
 * spawn. Without the macro every mark compiles to nothing. */
#ifndef GPUGATE_LIB_TIMELINE_H
#define GPUGATE_LIB_TIMELINE_H

#ifdef GPUGATE_TIMELINE
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static inline void tl_mark2(const char *label, const char *more)
{
	struct timespec now, cpu;
	clock_gettime(CLOCK_MONOTONIC, &now);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
	char line[256];
	int n = snprintf(line, sizeof(line), "TL %lld %lx %s%s%s|%lld\n",
			 (long long)now.tv_sec * 1000000000LL + now.tv_nsec, (unsigned long)pthread_self(), label,
			 more ? " " : "", more ? more : "", (long long)cpu.tv_sec * 1000000000LL + cpu.tv_nsec);
	if (n > 0)
		(void)!write(2, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}
#define tl_mark(label) tl_mark2((label), NULL)
#else
#define tl_mark2(label, more) ((void)0)
#define tl_mark(label)        ((void)0)
#endif

#endif
