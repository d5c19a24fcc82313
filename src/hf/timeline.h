/* Phase marks for a timeline of one run (tests/bench/RESULTS.md): built
 * only with -DGPUGATE_TIMELINE (never in a normal build), each mark is one
 * write(2) to stderr of "TL <CLOCK_MONOTONIC ns> <tid> <label>|<thread CPU
 * ns>", which a script reads against the time it spawned the process. */
#ifndef GPUGATE_HF_TIMELINE_H
#define GPUGATE_HF_TIMELINE_H

#ifdef GPUGATE_TIMELINE
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static inline void hf_timeline_mark(const char *label)
{
	struct timespec now, cpu;
	clock_gettime(CLOCK_MONOTONIC, &now);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
	char line[200];
	int n = snprintf(line, sizeof(line), "TL %lld %ld %s|%lld\n",
			 (long long)now.tv_sec * 1000000000LL + now.tv_nsec, (long)syscall(SYS_gettid), label,
			 (long long)cpu.tv_sec * 1000000000LL + cpu.tv_nsec);
	if (n > 0 && write(2, line, (size_t)n) < 0)
		return;
}
#define HF_TL(label) hf_timeline_mark(label)
#else
#define HF_TL(label) ((void)0)
#endif

#endif
