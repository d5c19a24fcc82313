#include "runner.h"

#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/util.h"
#include "registry.h"

struct planned {
	const struct check_group *group;
	const struct check_def *check;
};

/* Shared between the waiting thread and the worker. Results before `done`
 * are final; the worker never touches them again. */
struct job {
	const struct context *ctx;
	struct planned *plan;
	struct result *results;
	size_t count;
	atomic_size_t done;
	pthread_mutex_t lock;
	pthread_cond_t changed;
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

static void *worker(void *arg)
{
	struct job *job = arg;
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
			state = current->prepare ? current->prepare(job->ctx) : NULL;
		}
		r->id = p->check->id;
		p->check->run(job->ctx, state, r);
		if (!r->summary)
			result_set(r, STATUS_FAIL, "internal error: the check set no result");
		r->duration_ms = (monotonic_seconds() - t0) * 1e3;
		/* the waiting thread reads `done` itself at the deadline, so it
		 * is woken only for the last result: a wake-up per check costs a
		 * futex call and a context switch each */
		if (i + 1 < job->count) {
			atomic_store(&job->done, i + 1);
			continue;
		}
		pthread_mutex_lock(&job->lock);
		atomic_store(&job->done, i + 1);
		pthread_cond_signal(&job->changed);
		pthread_mutex_unlock(&job->lock);
	}
	if (current && current->release)
		current->release(state);
	return NULL;
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

int run_checks(const struct context *ctx, const struct selection *sel, struct run *run)
{
	memset(run, 0, sizeof(*run));
	run->profile = ctx->profile;
	struct job *job = xcalloc(1, sizeof(*job));
	job->ctx = ctx;
	job->count = plan_checks(ctx, sel, &job->plan);
	job->results = xcalloc(job->count, sizeof(*job->results));
	atomic_init(&job->done, 0);
	pthread_mutex_init(&job->lock, NULL);
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&job->changed, &attr);
	pthread_condattr_destroy(&attr);

	/* The checks run on a worker thread so that one stuck in the kernel (a
	 * dead NFS mount, a wedged driver file) cannot keep the verdict past the
	 * deadline: this thread stops waiting and reports. */
	/* One malloc arena: the worker runs while this thread only waits, and
	 * a second arena costs a 64 MiB reservation, three more calls and a
	 * page fault for each fresh page it hands out. */
	mallopt(M_ARENA_MAX, 1);
	pthread_t thread;
	bool threaded = job->count > 0 && pthread_create(&thread, NULL, worker, job) == 0;
	if (job->count > 0 && !threaded)
		worker(job); /* no thread to be had: run inline, still correct */
	struct timespec until = to_timespec(ctx->deadline);
	pthread_mutex_lock(&job->lock);
	while (threaded && atomic_load(&job->done) < job->count) {
		if (pthread_cond_timedwait(&job->changed, &job->lock, &until) != 0 &&
		    monotonic_seconds() >= ctx->deadline)
			break;
	}
	size_t done = atomic_load(&job->done);
	pthread_mutex_unlock(&job->lock);

	run->count = job->count;
	run->results = xcalloc(job->count ? job->count : 1, sizeof(*run->results));
	memcpy(run->results, job->results, done * sizeof(*run->results));
	double limit = ctx->deadline - ctx->start;
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
	run->timed_out = done < job->count;
	if (!run->timed_out) {
		if (threaded)
			pthread_join(thread, NULL);
		pthread_cond_destroy(&job->changed);
		pthread_mutex_destroy(&job->lock);
		free(job->results);
		free(job->plan);
		free(job);
	}
	/* else the worker still holds the job: it is left to the _exit() */
	run->duration_ms = (monotonic_seconds() - ctx->start) * 1e3;
	run->finished_at = wall_seconds();
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
