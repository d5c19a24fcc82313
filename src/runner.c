#include "runner.h"

#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/util.h"
#include "registry.h"

struct planned {
	const struct check_group *group;
	const struct check_def *check;
};

/* Shared between the thread running the checks and the watchdog. Results
 * before `done` are final; the running thread never touches them again.
 * `state` is read and changed under the lock: whichever of the two threads
 * moves it from RUNNING first delivers the run. */
enum job_state { JOB_RUNNING, JOB_FINISHED, JOB_TIMED_OUT };

struct job {
	const struct context *ctx;
	struct planned *plan;
	struct result *results;
	size_t count;
	size_t done;
	enum job_state state;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	run_deliver_fn *deliver;
	void *deliver_arg;
};

static bool listed(char **list, const char *id)
{
	for (char **p = list; p && *p; p++)
		if (check_id_matches(id, *p))
			return true;
	return false;
}

static bool selected(const struct context *ctx, const struct selection *sel,
		     const struct check_group *g, const struct check_def *c)
{
	if (!registry_check_enabled(ctx->spec, g, c))
		return false;
	if (sel->only && !listed(sel->only, c->id))
		return false;
	return !listed(sel->skip, c->id);
}

static struct timespec to_timespec(double seconds)
{
	struct timespec ts;
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

static size_t plan_checks(const struct context *ctx, const struct selection *sel, struct planned **out)
{
	size_t n = 0, cap = 16;
	struct planned *plan = xmalloc(cap * sizeof(*plan));
	for (const struct check_group *const *g = registry_groups; *g; g++) {
		for (const struct check_def *c = (*g)->checks; c->id; c++) {
			if (!selected(ctx, sel, *g, c))
				continue;
			if (n == cap) {
				cap *= 2;
				plan = xrealloc(plan, cap * sizeof(*plan));
			}
			plan[n].group = *g;
			plan[n].check = c;
			n++;
		}
	}
	*out = plan;
	return n;
}

/* The run as it stands: the finished results, then the rest as timed out. */
static void collect(const struct job *job, size_t done, struct run *run)
{
	run->count = job->count;
	run->results = xcalloc(job->count ? job->count : 1, sizeof(*run->results));
	memcpy(run->results, job->results, done * sizeof(*run->results));
	double limit = job->ctx->deadline - job->ctx->start;
	for (size_t i = done; i < job->count; i++) {
		struct result *r = &run->results[i];
		r->id = job->plan[i].check->id;
		if (i == done)
			result_set(r, STATUS_FAIL, "timed out: still running when the %.1f s deadline passed", limit);
		else
			result_set(r, STATUS_FAIL, "timed out: not started before the %.1f s deadline passed", limit);
		result_remedy(r, "raise --deadline (or the spec's deadline), or find what blocks this check");
		r->duration_ms = 0;
	}
	run->duration_ms = (monotonic_seconds() - job->ctx->start) * 1e3;
	run->finished_at = wall_seconds();
}

/* The watchdog may look at its job until the process ends; held here, the
 * job is in use rather than lost (LeakSanitizer). */
static struct job *volatile watched_job;

/* Sleeps until the deadline. If the checks are still running then (one
 * stuck in the kernel: a dead NFS mount, a wedged driver file), it delivers
 * the run as it stands and ends the process; the stuck thread goes with it. */
static void *watchdog(void *arg)
{
	struct job *job = arg;
	struct timespec until = to_timespec(job->ctx->deadline);
	pthread_mutex_lock(&job->lock);
	while (job->state == JOB_RUNNING && pthread_cond_timedwait(&job->changed, &job->lock, &until) == 0)
		;
	if (job->state != JOB_RUNNING) {
		pthread_mutex_unlock(&job->lock);
		return NULL;
	}
	job->state = JOB_TIMED_OUT;
	size_t done = job->done;
	pthread_mutex_unlock(&job->lock);
	struct run run;
	memset(&run, 0, sizeof(run));
	run.profile = job->ctx->profile;
	collect(job, done, &run);
	int code = job->deliver(&run, job->deliver_arg);
	fflush(stdout);
	fflush(stderr);
	_exit(code);
}

/* Marks result i final; returns false when the watchdog has taken over. */
static bool finish_result(struct job *job, size_t i)
{
	pthread_mutex_lock(&job->lock);
	bool running = job->state == JOB_RUNNING;
	if (running) {
		job->done = i + 1;
		/* the watchdog is not woken: it sees FINISHED if it ever wakes,
		 * and the process has usually ended before the deadline */
		if (job->done == job->count)
			job->state = JOB_FINISHED;
	}
	pthread_mutex_unlock(&job->lock);
	return running;
}

int run_checks(const struct context *ctx, const struct selection *sel, struct run *run,
	       run_deliver_fn *deliver, void *deliver_arg)
{
	memset(run, 0, sizeof(*run));
	run->profile = ctx->profile;
	struct job *job = xcalloc(1, sizeof(*job));
	job->ctx = ctx;
	job->count = plan_checks(ctx, sel, &job->plan);
	job->results = xcalloc(job->count ? job->count : 1, sizeof(*job->results));
	job->deliver = deliver;
	job->deliver_arg = deliver_arg;
	pthread_mutex_init(&job->lock, NULL);
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&job->changed, &attr);
	pthread_condattr_destroy(&attr);

	/* The checks run on this thread and a watchdog thread waits for the
	 * deadline, rather than the other way round: no hand-over from one
	 * thread to another in a run that finishes in time (each cost a
	 * wake-up of an idle CPU, ~0.1-0.3 ms, more than most checks). */
	/* One malloc arena: a second one costs a 64 MiB reservation and a
	 * page fault for each fresh page it hands out. */
	mallopt(M_ARENA_MAX, 1);
	pthread_t thread;
	bool watched = job->count > 0 && pthread_create(&thread, NULL, watchdog, job) == 0;
	if (watched)
		pthread_detach(thread);
	/* else no thread to be had: the checks still run, unguarded */

	const struct check_group *current = NULL;
	void *state = NULL;
	for (size_t i = 0; i < job->count; i++) {
		const struct planned *p = &job->plan[i];
		struct result *r = &job->results[i];
		double t0 = monotonic_seconds();
		if (p->group != current) {
			if (current && current->release)
				current->release(state);
			current = p->group;
			state = current->prepare ? current->prepare(ctx) : NULL;
		}
		r->id = p->check->id;
		p->check->run(ctx, state, r);
		if (!r->summary)
			result_set(r, STATUS_FAIL, "internal error: the check set no result");
		r->duration_ms = (monotonic_seconds() - t0) * 1e3;
		if (!finish_result(job, i))
			for (;;)
				pause(); /* the watchdog is delivering the run and ends the process */
	}
	if (current && current->release)
		current->release(state);
	collect(job, job->count, run);
	free(job->results); /* collect() copied them */
	job->results = NULL;
	if (watched) {
		watched_job = job;
	} else {
		pthread_cond_destroy(&job->changed);
		pthread_mutex_destroy(&job->lock);
		free(job->plan);
		free(job);
	}
	return 0;
}

void run_counts(const struct run *run, size_t counts[4])
{
	memset(counts, 0, 4 * sizeof(counts[0]));
	for (size_t i = 0; i < run->count; i++)
		counts[run->results[i].status]++;
}

int run_exit_code(const struct run *run)
{
	size_t counts[4];
	run_counts(run, counts);
	return counts[STATUS_FAIL] ? 1 : 0;
}

void run_release(struct run *run)
{
	for (size_t i = 0; i < run->count; i++)
		result_release(&run->results[i]);
	free(run->results);
	run->results = NULL;
	run->count = 0;
}
