/* Work spread over the CPUs this process may use. */
#ifndef GPUGATE_PARALLEL_H
#define GPUGATE_PARALLEL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

/* The CPUs this process may run on (its affinity mask), cut to what a
 * container's CPU quota pays for (cgroup v2 cpu.max, v1 cfs_quota_us),
 * rounded up; at least 1. Counted once a process. */
unsigned usable_cpus(void);

/* The CPUs with nothing to run at this moment: the CPUs this process may
 * run on less the tasks the kernel counts as runnable now, machine-wide
 * (/proc/loadavg's fourth field, the calling thread included); 0 when it
 * cannot be read. A short job that
 * could use more threads takes them only when there are CPUs for them: on a
 * machine whose CPUs are all busy a thread waits for one, and the job ends
 * later than on one thread. */
unsigned idle_cpus(void);

/* A job of count items cut in slices of chunk, taken in turn by every
 * thread that runs it (parallel_for's, hf/crew.c's): fn(arg, begin, end)
 * for each slice. */
struct parallel_slices {
	size_t count, chunk;
	atomic_size_t next; /* the first item no thread has taken */
	void (*fn)(void *arg, size_t begin, size_t end);
	void *arg;
};
/* Runs s's slices until none is left (any number of threads at once). */
void parallel_slices_run(struct parallel_slices *s);
/* How many threads s's slices can keep busy, max_threads at most. */
size_t parallel_slices_threads(const struct parallel_slices *s, size_t max_threads);

/* A thread started by thread_start: its id, and where its stack came from. */
struct thread {
	pthread_t id;
	int slot; /* its stack's place in the pool (parallel.c), -1 for glibc's */
};

/* pthread_create for a thread of short, shallow work (a share of a check
 * run, a slice of a parse, the watchdog): a stack of THREAD_STACK_SIZE
 * from a pool that outlives the thread, with a guard page below it, instead
 * of glibc's default (as large as RLIMIT_STACK, 8 MiB, mapped for the
 * thread and given back to the kernel when it ends); glibc's when the pool
 * has none free. Returns pthread_create's code. */
int thread_start(struct thread *t, void *(*fn)(void *), void *arg);
/* pthread_join, and the thread's stack back to the pool. A thread that is
 * detached instead keeps its stack until the process ends. */
void thread_join(struct thread *t);

/* Starts up to n worker threads (fewer when the process's affinity mask
 * has fewer CPUs; no file is read: it may run before the sandbox), for the
 * parallel_for calls to come: a thread's start and the wake
 * of an idle CPU (~100-150 us on a virtual machine's halted vCPU) then
 * overlap the caller's other work instead of delaying the first
 * parallel_for. The caller starts one; it starts the others (a tree: each
 * start costs its starter ~35 us on the host). A worker waits for a job by
 * spinning on its CPU for a few milliseconds at most, takes a share of the
 * first parallel_for's slices, and ends: it never sleeps (a sleeping
 * thread would have to be woken), and none is left for the process's exit
 * to wait on. Call it once, early, on the main thread (a later call only
 * tops the workers up to n); safe to skip: parallel_for starts threads of
 * its own where no worker is free. parallel_workers() counts a worker
 * from its start, so it may read fewer than n for a while. */
void parallel_prestart(size_t n);
/* One turn of a loop that waits on its CPU for another thread (the
 * spin-wait hint: the core's other hyperthread runs on meanwhile). A short
 * wait spins rather than sleeps: a thread asleep is woken by an interrupt
 * from another CPU, ~0.1 ms where a virtual machine's idle CPUs halt. */
static inline void spin_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}
/* The waiting workers end now: there is no job for them (a run that did
 * not get to the work they were started for). */
void parallel_release(void);
/* The workers alive now (parallel_prestart's, not yet ended): a job cut to
 * this many slices plus the caller's own runs without a thread's start. */
unsigned parallel_workers(void);

/* Calls fn(arg, begin, end) on consecutive slices [begin, end) of
 * [0, count), each of at most chunk items, on up to usable_cpus() threads
 * (and never more than max_threads, nor more than there are slices); the
 * calling thread is one of them, the others the idle workers
 * (parallel_prestart) and then threads started for it. Returns when every
 * slice is done. fn must be safe to run on several slices at once. */
void parallel_for(size_t count, size_t chunk, size_t max_threads, void (*fn)(void *arg, size_t begin, size_t end),
		  void *arg);

#endif
