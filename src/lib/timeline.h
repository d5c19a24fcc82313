/* Phase marks for a timeline of one run, on the host where wall time is
 * measured (build/devcarry/tl.py reads them): only in a build with
 * -DGPUGATE_TIMELINE, never in a normal one. Each mark is one write(2) to
 * stderr: "TL <CLOCK_MONOTONIC ns> <tid> <label>|<thread CPU ns>". */
#ifndef GPUGATE_TIMELINE_H
#define GPUGATE_TIMELINE_H

#ifdef GPUGATE_TIMELINE
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static inline void tl_mark(const char *label)
{
	struct timespec now, cpu;
	clock_gettime(CLOCK_MONOTONIC, &now);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
	char line[160];
	int n = snprintf(line, sizeof(line), "TL %lld %d %s|%lld\n", (long long)now.tv_sec * 1000000000LL + now.tv_nsec,
			 (int)gettid(), label, (long long)cpu.tv_sec * 1000000000LL + cpu.tv_nsec);
	if (n > 0)
		(void)!write(2, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}
#else
#define tl_mark(label) ((void)0)
#endif

#endif
