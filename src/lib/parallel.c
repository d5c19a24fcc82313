#include "parallel.h"

#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "sanitizer.h"
#include "timeline.h"
#include "util.h"
#include "xalloc.h"

/* The CPUs a container's CPU quota pays for (cgroup v2 cpu.max "QUOTA
 * PERIOD", v1 cpu.cfs_quota_us / cpu.cfs_period_us), rounded up; 0 when
 * there is no quota. More threads than that only queue for the quota and
 * make run times jump from one period to the next. */
static unsigned cpu_quota(void)
{
	char buf[64];
	long long quota = -1, period = 0;
	if (read_line_file("/sys/fs/cgroup/cpu.max", buf, sizeof(buf)) == 0) {
		if (sscanf(buf, "%lld %lld", &quota, &period) != 2)
			quota = -1; /* "max 100000": none */
	} else if (read_line_file("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", buf, sizeof(buf)) == 0) {
		quota = atoll(buf);
		if (read_line_file("/sys/fs/cgroup/cpu/cpu.cfs_period_us", buf, sizeof(buf)) == 0)
			period = atoll(buf);
	}
	if (quota <= 0 || period <= 0)
		return 0;
	long long n = (quota + period - 1) / period;
	return n > 0 && n < 4096 ? (unsigned)n : 0;
}

/* The count once a process: parallel_for and the status file's parts ask
 * for it several times a run, and each count reads the cgroup's files
 * (three system calls or more). 0: not counted yet (two threads may both
 * count: the same answer). */
static atomic_uint cpus_once;

/* The CPUs of this process's affinity mask (one system call, no file
 * read); at least 1. */
static unsigned affinity_cpus(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	return online > 0 ? (unsigned)online : 1;
}

unsigned usable_cpus(void)
{
	unsigned n = atomic_load_explicit(&cpus_once, memory_order_relaxed);
	if (n)
		return n;
	n = affinity_cpus();
	unsigned quota = cpu_quota();
	n = quota && quota < n ? quota : n;
	atomic_store_explicit(&cpus_once, n, memory_order_relaxed);
	return n;
}

unsigned idle_cpus(void)
{
	char buf[128];
	if (read_line_file("/proc/loadavg", buf, sizeof(buf)) < 0)
		return 0;
	/* "0.52 0.58 0.59 2/95 12345": the number before the '/' (read by
	 * hand: sscanf's first %lf costs more than the file) */
	const char *slash = strchr(buf, '/');
	if (!slash || slash == buf)
		return 0;
	const char *p = slash;
	while (p > buf && p[-1] >= '0' && p[-1] <= '9')
		p--;
	unsigned long running = strtoul(p, NULL, 10);
	cpu_set_t set;
	if (p == slash || sched_getaffinity(0, sizeof(set), &set) != 0)
		return 0;
	/* the CPUs it may run on, though the count is the whole machine's: a
	 * busy machine never reads as having idle CPUs for it */
	unsigned long mine = (unsigned long)CPU_COUNT(&set);
	return mine > running ? (unsigned)(mine - running) : 0;
}

/* The threads' stacks: glibc gives each an RLIMIT_STACK-sized one (8 MiB),
 * whose first touches can cost a cleared huge page where transparent huge
 * pages are "always", and whose mapping is larger to set up and tear down
 * while other threads run (TLB shootdowns). The work on these threads
 * keeps no large arrays on the stack and does not recurse deeply: the
 * integration tests of the checks, the runtime probe, hf and the deadline
 * passed with 256 KiB; 1 MiB is 4x that. Sanitizer builds keep the
 * default: their frames are several times larger (and ASan keeps its own
 * shadow of glibc's stacks). */
#if BUILD_ASAN || BUILD_TSAN
#define THREAD_STACK_SIZE 0
#else
#define THREAD_STACK_SIZE (1u << 20)
#endif

#if THREAD_STACK_SIZE
/* The pool of stacks thread_start hands out: one reservation of
 * STACK_SLOTS slots, each a guard page under a stack of THREAD_STACK_SIZE,
 * made once a process and never unmapped. A slot's stack is made writable
 * (one mprotect, its guard page left as it is) the first time a thread
 * takes it, before that thread starts, and kept for the next thread after
 * the join. Why not glibc's stacks: each new thread maps its own and
 * mprotects its guard, and glibc madvise(MADV_DONTNEED)s all but the top of
 * it when the thread ends (nptl/pthread_create.c start_thread, for a stack
 * not given by the caller), a TLB shootdown sent to every CPU running the
 * process's other threads; a stack given through pthread_attr_setstack is
 * left alone. A static path's run starts up to 8 threads (the watchdog, the
 * runner's second share, the dpkg status file's parts on a 16-CPU host): 16
 * slots; a thread that finds none free gets glibc's stack, as before. */
#define STACK_SLOTS 16
/* The guard below each stack: a 4 KiB page. Where pages are larger there
 * is no pool: threads get glibc's stacks. */
#define POOL_GUARD 4096
#define POOL_SIZE  ((size_t)STACK_SLOTS * (POOL_GUARD + THREAD_STACK_SIZE))
static _Atomic(char *) pool;
static atomic_uint pool_taken; /* bit i: slot i's stack is a running (or unjoined) thread's */
static atomic_uint pool_ready; /* bit i: slot i's stack is writable */

/* The pool, reserved by the first thread to ask (a race lost costs a map
 * and unmap, once: no pthread_once, whose every first call ends in a futex
 * wake-up system call); NULL when none can be had. */
static char *pool_get(void)
{
	char *p = atomic_load(&pool);
	if (p)
		return p;
	if (sysconf(_SC_PAGESIZE) != POOL_GUARD) /* (read from the auxiliary vector: no system call) */
		return NULL;
	void *m = mmap(NULL, POOL_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	char *expected = NULL;
	if (atomic_compare_exchange_strong(&pool, &expected, m))
		return m;
	munmap(m, POOL_SIZE);
	return expected;
}

static char *slot_stack(char *base, int i)
{
	return base + (size_t)i * (POOL_GUARD + THREAD_STACK_SIZE) + POOL_GUARD;
}

/* A free slot made ready, or -1 (none free, or no memory for it). */
static int slot_take(char **base)
{
	*base = pool_get();
	if (!*base)
		return -1;
	for (int i = 0; i < STACK_SLOTS; i++) {
		unsigned bit = 1u << i;
		if (atomic_fetch_or(&pool_taken, bit) & bit)
			continue; /* another thread's */
		if (!(atomic_load(&pool_ready) & bit)) {
			if (mprotect(slot_stack(*base, i), THREAD_STACK_SIZE, PROT_READ | PROT_WRITE) != 0) {
				atomic_fetch_and(&pool_taken, ~bit);
				return -1;
			}
			atomic_fetch_or(&pool_ready, bit);
		}
		return i;
	}
	return -1;
}
#endif

int thread_start(struct thread *t, void *(*fn)(void *), void *arg)
{
	t->slot = -1;
#if THREAD_STACK_SIZE
	pthread_attr_t attr;
	int rc = pthread_attr_init(&attr);
	if (rc)
		return rc;
	char *base;
	int slot = slot_take(&base);
	if (slot >= 0)
		rc = pthread_attr_setstack(&attr, slot_stack(base, slot), THREAD_STACK_SIZE);
	else
		rc = pthread_attr_setstacksize(&attr, THREAD_STACK_SIZE);
	if (rc == 0)
		rc = pthread_create(&t->id, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	if (rc == 0)
		t->slot = slot;
	else if (slot >= 0)
		atomic_fetch_and(&pool_taken, ~(1u << slot));
	return rc;
#else
	return pthread_create(&t->id, NULL, fn, arg);
#endif
}

void thread_join(struct thread *t)
{
	pthread_join(t->id, NULL);
#if THREAD_STACK_SIZE
	/* the thread has ended (the kernel cleared its id, which pthread_join
	 * waits for): its stack is free for the next one */
	if (t->slot >= 0)
		atomic_fetch_and(&pool_taken, ~(1u << t->slot));
#endif
	t->slot = -1;
}

void parallel_slices_run(struct parallel_slices *s)
{
	for (size_t begin; (begin = atomic_fetch_add(&s->next, s->chunk)) < s->count;)
		s->fn(s->arg, begin, begin + s->chunk < s->count ? begin + s->chunk : s->count);
}

size_t parallel_slices_threads(const struct parallel_slices *s, size_t max_threads)
{
	size_t threads = (s->count + s->chunk - 1) / s->chunk;
	return threads < max_threads ? threads : max_threads;
}

static void *run_slices(void *arg)
{
	parallel_slices_run(arg);
	return NULL;
}

/* The workers parallel_prestart starts, and the one job at a time they
 * take slices of. gen is even while no job is open, odd while one is: a
 * worker that sees it odd counts itself in active, and runs the job's
 * slices only if gen is still the same and a seat is left (the job's
 * caller wants no more helpers than its thread count); the caller closes
 * the job (gen even again) when it has run out of slices, then waits until
 * active is 0, so that no worker touches the job (on its stack) after it
 * returns. All of it sequentially consistent: a worker that counts itself
 * after the caller saw active at 0 also sees the job closed. */
static struct {
	atomic_bool busy;            /* a parallel_for owns the pool (another one starts threads of its own) */
	atomic_uint gen;             /* the job's number, odd while open */
	struct parallel_slices *job; /* the open job (written before gen turns odd) */
	atomic_int seats;            /* helpers the job still takes */
	atomic_uint active;          /* workers looking at the job */
	atomic_uint workers;         /* alive */
	atomic_bool released;        /* parallel_release: the waiting workers end */
} pool_of_workers;

/* How long a worker waits for a job before it ends: a few milliseconds
 * (a health check's static path takes ~2 ms), spinning on its CPU: a
 * thread asleep would have to be woken (~50-150 us on a virtual machine's
 * halted vCPU) to take a job or for the process to exit. */
#define WORKER_WAIT_NS 3000000LL

static void *worker_main(void *arg);

/* A worker that starts `more` workers itself (when it runs, not on the
 * caller's thread): true when it was started. */
static bool worker_start(size_t more)
{
	struct thread t;
	atomic_fetch_add(&pool_of_workers.workers, 1);
	if (thread_start(&t, worker_main, (void *)(uintptr_t)more) != 0) {
		atomic_fetch_sub(&pool_of_workers.workers, 1);
		return false;
	}
	pthread_detach(t.id); /* it ends on its own; its stack stays taken until the process ends */
	return true;
}

static void *worker_main(void *arg)
{
	/* the workers it was asked to start, as a tree: each child starts
	 * about half of the rest, so that no thread starts more than a few
	 * (a thread's start costs its starter ~35 us on the host) */
	for (size_t more = (uintptr_t)arg; more;) {
		size_t child = (more - 1) / 2;
		if (!worker_start(child))
			break;
		more -= 1 + child;
	}
	/* one job, then the end: a worker still alive when the process
	 * exits makes its exit wait for that thread (measured on the host:
	 * ~0.15 ms more between the return from main and the parent seeing
	 * the exit), and a run's parse is its one job */
	int64_t until = monotonic_ns() + WORKER_WAIT_NS;
	for (unsigned spins = 1; !atomic_load(&pool_of_workers.released); spins++) {
		unsigned g = atomic_load(&pool_of_workers.gen);
		if (g & 1) {
			atomic_fetch_add(&pool_of_workers.active, 1);
			if (atomic_load(&pool_of_workers.gen) == g && atomic_fetch_sub(&pool_of_workers.seats, 1) > 0)
				parallel_slices_run(pool_of_workers.job);
			atomic_fetch_sub(&pool_of_workers.active, 1);
			break;
		}
		spin_pause();
		if (spins % 64 == 0 && monotonic_ns() > until)
			break;
	}
	atomic_fetch_sub(&pool_of_workers.workers, 1);
	return NULL;
}

void parallel_prestart(size_t n)
{
	/* the affinity mask only: this runs before the seccomp filter, under
	 * which the files (the cgroup's CPU quota) are read (SECURITY.md); the
	 * part count, later, still heeds the quota */
	unsigned cpus = affinity_cpus();
	if (n > cpus - 1) /* the caller's thread is one of the CPUs */
		n = cpus - 1;
	size_t alive = atomic_load(&pool_of_workers.workers);
	if (alive >= n)
		return;
	atomic_store(&pool_of_workers.released, false);
	/* one malloc arena: a worker that starts another calls malloc
	 * (glibc's pthread_create allocates the new thread's TLS vector), and
	 * the first malloc of a thread would otherwise make it an arena of
	 * its own (a 64 MiB reservation and its page faults); runner.c asks
	 * the same for the check run's threads */
	mallopt(M_ARENA_MAX, 1);
	/* one thread started here, which starts the others: the caller's
	 * own cost is one thread's start, whatever n */
	worker_start(n - alive - 1);
}

void parallel_release(void)
{
	atomic_store(&pool_of_workers.released, true);
}

unsigned parallel_workers(void)
{
	return atomic_load(&pool_of_workers.workers);
}

void parallel_for(size_t count, size_t chunk, size_t max_threads, void (*fn)(void *arg, size_t begin, size_t end),
		  void *arg)
{
	struct parallel_slices s = { .count = count, .chunk = chunk ? chunk : 1, .fn = fn, .arg = arg };
	size_t threads = parallel_slices_threads(&s, max_threads);
	if (threads > 1) {
		unsigned cpus = usable_cpus();
		if (threads > cpus)
			threads = cpus;
	}
	/* the helpers: the pool's workers first, when it is free, then
	 * threads of its own for the rest; this thread works too, and any
	 * helper that fails to start or comes late leaves its slices to those
	 * that did */
	size_t helpers = threads > 1 ? threads - 1 : 0, from_pool = 0;
	bool pooled = helpers && !atomic_exchange(&pool_of_workers.busy, true);
	if (pooled) {
		from_pool = atomic_load(&pool_of_workers.workers);
		from_pool = from_pool < helpers ? from_pool : helpers;
		pool_of_workers.job = &s;
		atomic_store(&pool_of_workers.seats, (int)from_pool);
		atomic_fetch_add(&pool_of_workers.gen, 1); /* open */
	}
	size_t own = helpers - from_pool, started = 0;
	struct thread *tids = own ? xcalloc(own, sizeof(*tids)) : NULL;
	for (size_t t = 0; t < own; t++)
		if (thread_start(&tids[started], run_slices, &s) == 0)
			started++;
	tl_mark("parallel_for threads started");
	parallel_slices_run(&s);
	if (pooled) {
		atomic_fetch_add(&pool_of_workers.gen, 1); /* closed: no worker starts on it now */
		/* a worker's last slice; a worker taken off its CPU between its
		 * count and its look at the job gets this one back after a while */
		for (unsigned spins = 1; atomic_load(&pool_of_workers.active); spins++)
			if (spins % 4096 == 0)
				sched_yield();
			else
				spin_pause();
		atomic_store(&pool_of_workers.busy, false);
	}
	for (size_t t = 0; t < started; t++)
		thread_join(&tids[t]);
	free(tids);
}
