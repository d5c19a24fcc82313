/* Threads of lib/parallel.h: thread_start's stacks (a pool that outlives
 * the thread: glibc neither maps a stack for each thread nor gives it back
 * to the kernel when the thread ends, and a guard page stays under each),
 * parallel_for, and the dpkg status file's parts parsed on threads that
 * call no malloc (lib/dpkg_status.c: each part's memory is allocated before
 * its thread starts). This binary counts the malloc calls of threads other
 * than the main one, by defining malloc, calloc and realloc over glibc's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/dpkg_status.h"
#include "lib/parallel.h"

/* As lib/parallel.c: sanitizer builds keep glibc's stacks (and their own
 * malloc, which this binary must not replace). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif

#ifndef SANITIZED
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);

static atomic_bool counting;
static pthread_t main_thread;
static atomic_size_t off_main; /* malloc, calloc and realloc calls off the main thread while counting */

static void count_call(void)
{
	if (atomic_load(&counting) && !pthread_equal(pthread_self(), main_thread))
		atomic_fetch_add(&off_main, 1);
}

void *malloc(size_t n)
{
	count_call();
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	count_call();
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	count_call();
	return __libc_realloc(p, n);
}
#endif

/* What a thread saw of its stack. */
struct seen {
	uintptr_t mark; /* where a buffer on its stack, filled with MARK, stood */
	char *low;      /* the stack's lowest byte (pthread_getattr_np) */
	size_t size;    /* its size */
	bool guard;     /* the page below it is mapped with no access (/proc/self/maps) */
	unsigned reads; /* of /proc/self/maps */
};

#define MARK 0x5a
/* A buffer deep enough in the stack that glibc's exit would give its lower
 * part back (all but the 16 KiB under the exiting frame: advise_stack_range,
 * nptl/pthread_create.c); the lower part is what is checked (its upper end
 * lies under the frames of glibc's thread exit, which write over it). */
#define MARK_LEN  (64u << 10)
#define MARK_KEPT (16u << 10)

/* Whether the page below p is mapped, with no access ("---p"). */
static bool guard_below(const char *p)
{
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return false;
	uintptr_t below = (uintptr_t)p - 1;
	char line[512];
	bool guard = false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[8];
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && below >= lo && below < hi)
			guard = strncmp(perms, "---p", 4) == 0;
	}
	fclose(f);
	return guard;
}

static void *look_at_stack(void *arg)
{
	struct seen *s = arg;
	pthread_attr_t attr;
	void *low = NULL;
	size_t size = 0;
	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		pthread_attr_getstack(&attr, &low, &size);
		pthread_attr_destroy(&attr);
	}
	s->low = low;
	s->size = size;
	s->guard = low && guard_below(low);
	/* last: nothing the thread does after it writes over it */
	char buf[MARK_LEN];
	memset(buf, MARK, sizeof(buf));
	__asm__ volatile("" : : "r"(buf) : "memory"); /* the writes stay */
	s->mark = (uintptr_t)buf;
	return NULL;
}

/* A thread's stack is not given back to the kernel when the thread ends
 * (glibc madvise(MADV_DONTNEED)s its own stacks then: a TLB shootdown on
 * every CPU running the process's other threads, and the pages faulted in
 * again by the next thread), and the next thread gets the same one. */
static void test_stack_kept_after_join(void **state)
{
	(void)state;
#ifdef SANITIZED
	skip();
#else
	struct seen first = { 0 }, second = { 0 };
	struct thread t;
	assert_int_equal(thread_start(&t, look_at_stack, &first), 0);
	thread_join(&t);
	assert_true(first.mark != 0);
	/* the pool's memory: still mapped, still what the thread wrote */
	const unsigned char *mark = (const unsigned char *)first.mark;
	for (size_t i = 0; i < MARK_KEPT; i++)
		if (mark[i] != MARK)
			fail_msg("byte %zu of the ended thread's stack is %#x, not %#x: the stack was given back", i,
				 mark[i], MARK);
	assert_int_equal(thread_start(&t, look_at_stack, &second), 0);
	thread_join(&t);
	assert_ptr_equal(first.low, second.low);
#endif
}

/* Each stack has a page below it that faults (a stack overflow is a
 * crash, not a write into the next thread's stack). */
static void test_guard_page(void **state)
{
	(void)state;
	struct seen s = { 0 };
	struct thread t;
	assert_int_equal(thread_start(&t, look_at_stack, &s), 0);
	thread_join(&t);
	assert_non_null(s.low);
	assert_true(s.guard);
	assert_true(s.size >= (256u << 10));
}

/* More threads at once than the pool has stacks: those past it get glibc's,
 * and all run. */
static pthread_barrier_t all_up;
static void *wait_for_all(void *arg)
{
	struct seen *s = arg;
	int here;
	s->mark = (uintptr_t)&here;
	pthread_barrier_wait(&all_up);
	return NULL;
}

static void test_more_threads_than_stacks(void **state)
{
	(void)state;
	enum { N = 40 };
	struct thread t[N];
	struct seen s[N];
	memset(s, 0, sizeof(s));
	assert_int_equal(pthread_barrier_init(&all_up, NULL, N + 1), 0);
	for (int i = 0; i < N; i++)
		assert_int_equal(thread_start(&t[i], wait_for_all, &s[i]), 0);
	pthread_barrier_wait(&all_up);
	for (int i = 0; i < N; i++)
		thread_join(&t[i]);
	pthread_barrier_destroy(&all_up);
	for (int i = 0; i < N; i++)
		for (int j = 0; j < i; j++) /* no two shared a stack */
			assert_true(s[i].mark + 4096 < s[j].mark || s[i].mark > s[j].mark + 4096);
	/* and the pool's stacks are back: a thread still starts */
	struct seen again = { 0 };
	assert_int_equal(thread_start(&t[0], look_at_stack, &again), 0);
	thread_join(&t[0]);
	assert_true(again.guard);
}

static atomic_size_t items_done;
static void count_items(void *arg, size_t begin, size_t end)
{
	(void)arg;
	atomic_fetch_add(&items_done, end - begin);
}

/* parallel_for covers every item once, whatever the slices. */
static void test_parallel_for_covers(void **state)
{
	(void)state;
	for (size_t chunk = 1; chunk < 9; chunk++) {
		atomic_store(&items_done, 0);
		parallel_for(1000, chunk, 8, count_items, NULL);
		assert_int_equal(atomic_load(&items_done), 1000);
	}
}

/* The threads of this process now (/proc/self/task). */
static size_t threads_now(void)
{
	DIR *d = opendir("/proc/self/task");
	assert_non_null(d);
	size_t n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* A short wait on this CPU (~0.1 ms): a sleep would outlast a worker's
 * wait on a loaded machine. */
static void cpu_pause(void)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec < 100000);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* What the slices of one parallel_for saw: the thread each ran on, and the
 * most threads the process had meanwhile. */
static pthread_t slice_thread[4];
static atomic_size_t most_threads;

static void note_slice(void *arg, size_t begin, size_t end)
{
	(void)arg;
	(void)end;
	slice_thread[begin] = pthread_self();
	size_t n = threads_now(), seen = atomic_load(&most_threads);
	while (n > seen && !atomic_compare_exchange_weak(&most_threads, &seen, n))
		;
	sleep_ms(30); /* long enough that every helper takes a slice */
}

/* The prestarted workers end within a second, and a later parallel_for
 * (threads of its own then) still does every item. */
static void workers_gone_and_later_jobs_done(void)
{
	for (int i = 0; i < 1000 && parallel_workers(); i++)
		sleep_ms(1);
	assert_int_equal(parallel_workers(), 0);
	atomic_store(&items_done, 0);
	parallel_for(1000, 7, 4, count_items, NULL);
	assert_int_equal(atomic_load(&items_done), 1000);
}

/* Workers started ahead take a parallel_for's slices: no thread is started
 * for it (the process has no more threads meanwhile than it had), the
 * slices run on as many threads as it asked for, and the workers end on
 * their own a few milliseconds after the last job (they never sleep: a
 * sleeping thread would have to be woken for the process to exit). */
static void test_prestarted_workers_take_slices(void **state)
{
	(void)state;
	unsigned cpus = usable_cpus();
	if (cpus < 2)
		skip(); /* no worker on one CPU */
	size_t want = cpus - 1 < 3 ? cpus - 1 : 3;
	/* a few tries (30): on a loaded machine this thread may lose its CPU for
	 * longer than the workers wait (then parallel_for rightly starts
	 * threads of its own); once is enough to show they take the slices */
	bool taken = false;
	for (int attempt = 0; attempt < 30 && !taken; attempt++) {
		while (parallel_workers()) /* an earlier test's, or try's */
			sleep_ms(1);
		sleep_ms(5);                 /* (and out of /proc/self/task) */
		size_t base = threads_now(); /* this one, and a sanitizer's own */
		parallel_prestart(want);
		assert_true(parallel_workers() >= 1); /* the caller's one, at once */
		for (int i = 0; i < 100 && parallel_workers() < want; i++)
			cpu_pause(); /* the ones it starts */
		if (parallel_workers() != want)
			continue; /* not all started within their wait */
		size_t before = threads_now();
		atomic_store(&most_threads, 0);
		parallel_for(want + 1, 1, want + 1, note_slice, NULL);
		taken = before == base + want && atomic_load(&most_threads) <= before;
		for (size_t i = 0; i <= want; i++) /* on as many threads as it asked for */
			for (size_t k = 0; k < i; k++)
				taken = taken && !pthread_equal(slice_thread[i], slice_thread[k]);
	}
	assert_true(taken);
	/* one job each: they end right after it, not after their wait */
	workers_gone_and_later_jobs_done();
}

/* Workers released (parallel_release: no job is coming) end without
 * waiting out their wait, and take no later job. */
static void test_released_workers_end(void **state)
{
	(void)state;
	if (usable_cpus() < 2)
		skip();
	while (parallel_workers())
		sleep_ms(1);
	parallel_prestart(2);
	parallel_release();
	workers_gone_and_later_jobs_done();
}

/* A parallel_for while another holds the workers (from a slice of it, or
 * from another thread) starts threads of its own: every item is still done
 * once. */
static atomic_size_t inner_done;

static void count_inner(void *arg, size_t begin, size_t end)
{
	(void)arg;
	atomic_fetch_add(&inner_done, end - begin);
}

static void nested_slice(void *arg, size_t begin, size_t end)
{
	(void)arg;
	for (size_t i = begin; i < end; i++)
		parallel_for(100, 7, 3, count_inner, NULL);
}

static void *outer_job(void *arg)
{
	(void)arg;
	parallel_for(8, 1, 4, nested_slice, NULL);
	return NULL;
}

static void test_busy_pool_falls_back(void **state)
{
	(void)state;
	if (usable_cpus() < 2)
		skip();
	parallel_prestart(2);
	atomic_store(&inner_done, 0);
	pthread_t other;
	assert_int_equal(pthread_create(&other, NULL, outer_job, NULL), 0);
	outer_job(NULL);
	pthread_join(other, NULL);
	assert_int_equal(atomic_load(&inner_done), 2 * 8 * 100);
}

/* The parts of a status file parsed on threads: none of the threads but
 * the caller's calls malloc (glibc would give each its own arena, a 64 MiB
 * reservation and its page faults, or, with one arena, a lock the threads
 * wait on), and the parse agrees with the one-piece one. */
static void test_parts_threads_call_no_malloc(void **state)
{
	(void)state;
#ifdef SANITIZED
	skip();
#else
	if (usable_cpus() < 2)
		skip(); /* parallel_for starts no thread on one CPU */
	char path[] = "/tmp/gpugate-parallel-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	/* stanzas of ~1 KiB, as a real status file's (the bench's: 921,952
	 * bytes for 1,004 packages), for which each part's memory is sized */
	for (int i = 0; i < 1000; i++) {
		fprintf(f,
			"Package: pkg%d\nStatus: install ok installed\nPriority: optional\nArchitecture: amd64\n"
			"Version: 1.%d-1\nDepends: libc6 (>= 2.36), pkg%d | other\nProvides: virt%d\n"
			"Description: package %d\n",
			i, i, i + 1, i, i);
		for (int line = 0; line < 11; line++)
			fputs(" a longer description line of the kind a real one has, in several lines.\n", f);
		fputs("\n", f);
	}
	assert_int_equal(fclose(f), 0);
	const char *wanted[] = { "pkg7", "virt999", NULL };
	struct dpkg_status one, parts;
	char err[512];
	assert_int_equal(dpkg_status_load_parts(path, wanted, DPKG_STATUS_BUFFER, 1, &one, err, sizeof(err)), 0);
	main_thread = pthread_self();
	/* workers started ahead (the first starts the others, calling
	 * malloc as pthread_create does: before the count) */
	parallel_prestart(3);
	for (int i = 0; i < 100 && parallel_workers() < (usable_cpus() - 1 < 3 ? usable_cpus() - 1 : 3); i++)
		cpu_pause();
	atomic_store(&off_main, 0);
	atomic_store(&counting, true);
	/* a few times: the caller's thread takes the parts no other has taken
	 * yet, so that one load may leave none to the others */
	int rc = 0;
	for (int i = 0; i < 8 && rc == 0; i++) {
		if (i)
			dpkg_status_free(&parts);
		rc = dpkg_status_load_parts(path, wanted, DPKG_STATUS_BUFFER, 4, &parts, err, sizeof(err));
	}
	atomic_store(&counting, false);
	unlink(path);
	assert_int_equal(rc, 0);
	assert_int_equal(atomic_load(&off_main), 0);
	assert_int_equal(parts.count, one.count);
	assert_int_equal(parts.count, 2);
	for (size_t i = 0; i < one.count; i++) {
		assert_string_equal(parts.pkgs[i].name, one.pkgs[i].name);
		assert_string_equal(parts.pkgs[i].version, one.pkgs[i].version);
		assert_string_equal(parts.pkgs[i].provides, one.pkgs[i].provides);
		assert_int_equal(parts.pkgs[i].line, one.pkgs[i].line);
	}
	dpkg_status_free(&one);
	dpkg_status_free(&parts);
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stack_kept_after_join),
		cmocka_unit_test(test_guard_page),
		cmocka_unit_test(test_more_threads_than_stacks),
		cmocka_unit_test(test_parallel_for_covers),
		cmocka_unit_test(test_parts_threads_call_no_malloc),
		cmocka_unit_test(test_prestarted_workers_take_slices),
		cmocka_unit_test(test_busy_pool_falls_back),
		cmocka_unit_test(test_released_workers_end),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
