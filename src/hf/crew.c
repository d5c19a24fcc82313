#include "crew.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "../lib/parallel.h"
#include "../lib/util.h"

/* A worker that finds no work spins this long before it sleeps: the
 * scan's phases follow each other within tens of microseconds, and a
 * sleeping worker costs the poster a wake-up system call and itself the
 * CPU's way back from its idle state. Short enough that the spinning of
 * all of them between two phases costs little CPU. */
#ifndef HF_CREW_SPIN_NS /* (-D for a bench of other values) */
#define HF_CREW_SPIN_NS 100000
#endif

struct job {
	struct parallel_slices slices;
	size_t helpers_max; /* workers that may join it (the caller works too) */
	size_t helpers;     /* workers that joined (under the lock) */
	atomic_size_t busy; /* workers in it now (changed under the lock; the caller may spin on it) */
	struct job *next_job;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t work; /* a job was posted, or the crew stops */
	pthread_cond_t left; /* a worker left a job */
	struct job *queue;   /* jobs with slices that workers may take */
	atomic_uint posted;  /* bumped at each job posted: what a spinning worker watches */
	atomic_bool stop;
	unsigned holds;
	unsigned workers;   /* wanted: usable CPUs less one, at most HF_CREW_MAX */
	unsigned sleeping;  /* workers waiting on work */
	bool tried;         /* the workers were started (or failed to) this hold */
	bool first_started; /* worker 0 runs (it joins the ones it started) */
	struct thread first;
} crew = { .lock = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER, .left = PTHREAD_COND_INITIALIZER };

/* A queued job a worker may join, or NULL. Under the lock. */
static struct job *job_to_join(void)
{
	for (struct job *j = crew.queue; j; j = j->next_job)
		if (j->helpers < j->helpers_max &&
		    atomic_load_explicit(&j->slices.next, memory_order_relaxed) < j->slices.count)
			return j;
	return NULL;
}

/* Spins until a job is posted after seen or the crew stops (true), or
 * HF_CREW_SPIN_NS pass (false). Without the lock. */
static bool spin_for_work(unsigned seen)
{
	int64_t until = monotonic_ns() + HF_CREW_SPIN_NS;
	for (unsigned k = 1;; k++) {
		if (atomic_load_explicit(&crew.posted, memory_order_acquire) != seen ||
		    atomic_load_explicit(&crew.stop, memory_order_relaxed))
			return true;
		spin_pause();
		if (k % 64 == 0) {
			if (monotonic_ns() > until)
				return false;
			sched_yield(); /* a thread beside the crew's (the record's reader, the hook) waiting for this CPU runs */
		}
	}
}

/* Spins until no worker is in job j, or HF_CREW_SPIN_NS pass. */
static void spin_until_idle(struct job *j)
{
	int64_t until = monotonic_ns() + HF_CREW_SPIN_NS;
	for (unsigned k = 1; atomic_load_explicit(&j->busy, memory_order_acquire); k++) {
		spin_pause();
		if (k % 64 == 0) {
			if (monotonic_ns() > until)
				return;
			sched_yield();
		}
	}
}

static void *worker(void *arg)
{
	/* worker i starts workers 2i+1 and 2i+2: the holder's thread starts one */
	size_t i = (size_t)(uintptr_t)arg;
	struct thread kids[2];
	size_t n_kids = 0;
	for (size_t c = 2 * i + 1; c <= 2 * i + 2 && c < crew.workers; c++)
		if (thread_start(&kids[n_kids], worker, (void *)(uintptr_t)c) == 0)
			n_kids++;
	pthread_mutex_lock(&crew.lock);
	for (;;) {
		struct job *j = job_to_join();
		if (j) {
			j->helpers++;
			atomic_fetch_add_explicit(&j->busy, 1, memory_order_relaxed);
			pthread_mutex_unlock(&crew.lock);
			parallel_slices_run(&j->slices);
			pthread_mutex_lock(&crew.lock);
			/* the job's caller may return as soon as it reads 0: j is
			 * not touched after the decrement */
			if (atomic_fetch_sub_explicit(&j->busy, 1, memory_order_release) == 1)
				pthread_cond_broadcast(&crew.left);
			continue;
		}
		if (atomic_load(&crew.stop))
			break;
		unsigned seen = atomic_load_explicit(&crew.posted, memory_order_acquire);
		pthread_mutex_unlock(&crew.lock);
		bool more = spin_for_work(seen);
		pthread_mutex_lock(&crew.lock);
		if (!more && !atomic_load(&crew.stop) && !job_to_join()) {
			crew.sleeping++;
			pthread_cond_wait(&crew.work, &crew.lock);
			crew.sleeping--;
		}
	}
	pthread_mutex_unlock(&crew.lock);
	for (size_t k = 0; k < n_kids; k++)
		thread_join(&kids[k]);
	return NULL;
}

static void start_workers(void);

void hf_crew_hold(bool start)
{
	pthread_mutex_lock(&crew.lock);
	crew.holds++;
	if (start && !crew.tried)
		start_workers();
	pthread_mutex_unlock(&crew.lock);
}

/* The workers, started by the first job that wants them (a small cache's
 * scan wants none). Under the lock. */
static void start_workers(void)
{
	unsigned cpus = usable_cpus();
	crew.workers = cpus > HF_CREW_MAX ? HF_CREW_MAX : cpus - 1;
	atomic_store(&crew.stop, false);
	crew.first_started = crew.workers && thread_start(&crew.first, worker, (void *)(uintptr_t)0) == 0;
	if (!crew.first_started)
		crew.workers = 0;
	crew.tried = true;
}

bool hf_crew_held(void)
{
	pthread_mutex_lock(&crew.lock);
	bool held = crew.holds != 0;
	pthread_mutex_unlock(&crew.lock);
	return held;
}

void hf_crew_release(void)
{
	pthread_mutex_lock(&crew.lock);
	bool last = crew.holds && --crew.holds == 0;
	bool join = last && crew.first_started;
	if (last) {
		atomic_store(&crew.stop, true);
		pthread_cond_broadcast(&crew.work);
		crew.first_started = false;
		crew.tried = false;
	}
	pthread_mutex_unlock(&crew.lock);
	if (join)
		thread_join(&crew.first); /* which joins the ones it started, and so on */
	if (last) {
		pthread_mutex_lock(&crew.lock);
		crew.workers = 0;
		pthread_mutex_unlock(&crew.lock);
	}
}

void hf_crew_for(size_t count, size_t chunk, size_t max_threads, void (*fn)(void *arg, size_t begin, size_t end),
		 void *arg)
{
	struct job j = { .slices = { .count = count, .chunk = chunk ? chunk : 1, .fn = fn, .arg = arg } };
	size_t threads = parallel_slices_threads(&j.slices, max_threads);
	pthread_mutex_lock(&crew.lock);
	if (crew.holds && !crew.tried && threads > 1)
		start_workers();
	if (!crew.workers) {
		pthread_mutex_unlock(&crew.lock);
		parallel_for(count, chunk, max_threads, fn, arg);
		return;
	}
	if (threads > crew.workers + 1)
		threads = crew.workers + 1;
	if (threads <= 1) {
		pthread_mutex_unlock(&crew.lock);
		parallel_slices_run(&j.slices);
		return;
	}
	j.helpers_max = threads - 1;
	struct job **tail = &crew.queue;
	while (*tail)
		tail = &(*tail)->next_job;
	*tail = &j;
	atomic_fetch_add_explicit(&crew.posted, 1, memory_order_release);
	if (crew.sleeping > j.helpers_max) /* wake as many as may join; spinning ones see posted */
		for (size_t k = 0; k < j.helpers_max; k++)
			pthread_cond_signal(&crew.work);
	else if (crew.sleeping)
		pthread_cond_broadcast(&crew.work);
	pthread_mutex_unlock(&crew.lock);
	parallel_slices_run(&j.slices);
	pthread_mutex_lock(&crew.lock);
	for (struct job **p = &crew.queue; *p; p = &(*p)->next_job)
		if (*p == &j) {
			*p = j.next_job;
			break;
		}
	/* a worker may still be in a slice it took: its end is waited for
	 * spinning first, as a worker waits for work (asleep, this thread
	 * would be woken by the last one out: an idle CPU's wake-up, 100-150
	 * us on a virtual machine, at the end of every phase) */
	pthread_mutex_unlock(&crew.lock);
	if (atomic_load(&j.busy))
		spin_until_idle(&j);
	pthread_mutex_lock(&crew.lock);
	while (atomic_load(&j.busy))
		pthread_cond_wait(&crew.left, &crew.lock);
	pthread_mutex_unlock(&crew.lock);
}

struct touch {
	volatile unsigned char *p;
	size_t len;
};

#define TOUCH_PAGE  4096u       /* no page is smaller */
#define TOUCH_SLICE (64u << 10) /* bytes a slice touches */

static void touch_pages(void *arg, size_t begin, size_t end)
{
	struct touch *t = arg;
	for (size_t s = begin; s < end; s++)
		for (size_t at = s * TOUCH_SLICE; at < t->len && at < (s + 1) * TOUCH_SLICE; at += TOUCH_PAGE)
			t->p[at] = 0;
}

void hf_crew_touch(void *p, size_t len)
{
	/* from the first page boundary on: the page before it is in use */
	uintptr_t start = ((uintptr_t)p + TOUCH_PAGE - 1) & ~(uintptr_t)(TOUCH_PAGE - 1);
	if (start >= (uintptr_t)p + len)
		return;
	struct touch t = { .p = (unsigned char *)start, .len = (uintptr_t)p + len - start };
	size_t slices = (t.len + TOUCH_SLICE - 1) / TOUCH_SLICE;
	if (slices > 1 && hf_crew_held()) /* else threads would be started for it: not worth it */
		hf_crew_for(slices, 1, SIZE_MAX, touch_pages, &t);
}
