#include "runner.h"

#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "lib/monotonic_wait.h"
#include "lib/util.h"
#include "registry.h"

struct planned {
	const struct check_group *group;
	const struct check_def *check;
};

/* The deadline guard, shared between the thread doing the work and the
 * watchdog thread. Everything is read and changed under the lock. During
 * SETUP (--root, the spec) the deadline and `doing` may still change;
 * during RUNNING results before `done` are final and the running thread never
 * touches them again. Whichever thread moves the state on from SETUP or
 * RUNNING first decides how the process ends. */
enum guard_state { GUARD_SETUP, GUARD_RUNNING, GUARD_FINISHED, GUARD_TIMED_OUT };

struct watchdog {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	enum guard_state state;
	double start, deadline;
	char doing[512]; /* what SETUP is busy with, for the message at the deadline */
	/* the run, from run_checks on */
	const struct context *ctx;
	struct planned *plan;
	struct result *results;
	size_t count;
	size_t done;
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

static bool selected(const struct context *ctx, const struct selection *sel, const struct check_group *g,
		     const struct check_def *c)
{
	if (!registry_check_enabled(ctx->spec, g, c))
		return false;
	if (sel->only && !listed(sel->only, c->id))
		return false;
	return !listed(sel->skip, c->id);
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

static struct result *find_result(struct run *run, const char *id)
{
	for (size_t i = 0; i < run->count; i++)
		if (run->results[i].id && strcmp(run->results[i].id, id) == 0)
			return &run->results[i];
	return NULL;
}

/* A check blocked by another (result_blocked) stays a skip only when the
 * check it waited on, followed to the root of the chain, failed in this run:
 * then the root's failure carries the verdict and the skip names it. When
 * the cause was not selected, or did not fail, the blocked check is itself a
 * failure: nothing else in the run would say that it never ran. */
/* The failed check at the root of id's chain of blocked checks, or NULL. */
static struct result *failed_root(struct run *run, const char *id, size_t depth)
{
	struct result *r = find_result(run, id);
	if (!r || depth > run->count)
		return NULL;
	if (r->status == STATUS_FAIL)
		return r;
	if (r->status != STATUS_SKIP || !r->blocked_by)
		return NULL;
	char **causes = split_list(r->blocked_by, NULL);
	struct result *root = NULL;
	for (char **c = causes; !root && c && *c; c++)
		root = failed_root(run, *c, depth + 1);
	free_list(causes);
	return root;
}

void run_resolve_blocked(struct run *run)
{
	for (size_t i = 0; i < run->count; i++) {
		struct result *r = &run->results[i];
		if (!r->blocked_by || r->status != STATUS_SKIP)
			continue;
		struct result *root = failed_root(run, r->id, 0);
		if (root && root != r) {
			result_set(r, STATUS_SKIP, "not reached: %s failed", root->id);
			continue;
		}
		char *causes = xstrdup(r->blocked_by);
		for (char *p = causes; *p; p++)
			if (*p == ',')
				*p = '/';
		result_set(r, STATUS_FAIL,
			   "not reached: it needs %s, which did not fail in this run (not selected, "
			   "or gave it nothing to check)",
			   causes);
		result_remedy(r, "run %s too, or see its result", causes);
		free(causes);
	}
}

/* The run as it stands: the first `done` results, then the rest as timed out. */
static void collect(const struct context *ctx, const struct planned *plan, const struct result *results, size_t count,
		    size_t done, struct run *run)
{
	run->count = count;
	run->spec = ctx->spec;
	run->results = xcalloc(count ? count : 1, sizeof(*run->results));
	memcpy(run->results, results, done * sizeof(*run->results));
	double limit = ctx->deadline - ctx->start;
	for (size_t i = done; i < count; i++) {
		struct result *r = &run->results[i];
		r->id = plan[i].check->id;
		if (i == done)
			result_set(r, STATUS_FAIL, "timed out: still running when the %.1f s deadline passed", limit);
		else
			result_set(r, STATUS_FAIL, "timed out: not started before the %.1f s deadline passed", limit);
		result_remedy(r, "raise --deadline (or the spec's deadline), or find what blocks this check");
		r->duration_ms = 0;
	}
	run_resolve_blocked(run);
	run->duration_ms = (monotonic_seconds() - ctx->start) * 1e3;
	run->finished_at = wall_seconds();
}

/* The watchdog looks at its state until the process ends; held here, it is
 * in use rather than lost (LeakSanitizer). */
static struct watchdog *volatile the_watchdog;

/* Sleeps until the deadline, which SETUP may still move. If the work is not
 * done by then (stuck in the kernel: a dead NFS mount, a FIFO with no
 * writer, a wedged driver file), it ends the process: during SETUP with a
 * message saying what was in progress (exit 3, --root or the spec could not
 * be read), during the run by delivering the finished results and the rest
 * as timed out. The stuck thread goes with the process. */
static void *watchdog_main(void *arg)
{
	struct watchdog *w = arg;
	pthread_mutex_lock(&w->lock);
	for (;;) {
		if (w->state == GUARD_FINISHED) {
			pthread_mutex_unlock(&w->lock);
			return NULL;
		}
		struct timespec until = monotonic_timespec(w->deadline);
		if (pthread_cond_timedwait(&w->changed, &w->lock, &until) != 0 && monotonic_seconds() >= w->deadline)
			break;
	}
	if (w->state == GUARD_SETUP) {
		fprintf(stderr,
			"gpugate: gave up after %.1f s, before any check ran, while %s: a FIFO with no "
			"writer or a hung network mount? (raise --deadline if it is only slow)\n",
			w->deadline - w->start, w->doing);
		fflush(stderr);
		_exit(EXIT_USAGE);
	}
	w->state = GUARD_TIMED_OUT;
	size_t done = w->done;
	pthread_mutex_unlock(&w->lock);
	struct run run;
	memset(&run, 0, sizeof(run));
	run.profile = w->ctx->profile;
	collect(w->ctx, w->plan, w->results, w->count, done, &run);
	int code = w->deliver(&run, w->deliver_arg);
	fflush(stdout);
	fflush(stderr);
	_exit(code);
}

struct watchdog *watchdog_start(double start, double deadline, const char *doing)
{
	struct watchdog *w = xcalloc(1, sizeof(*w));
	w->start = start;
	w->deadline = deadline;
	snprintf(w->doing, sizeof(w->doing), "%s", doing);
	pthread_mutex_init(&w->lock, NULL);
	monotonic_cond_init(&w->changed);
	/* One malloc arena: a second one costs a 64 MiB reservation and a
	 * page fault for each fresh page it hands out. */
	mallopt(M_ARENA_MAX, 1);
	pthread_t thread;
	if (pthread_create(&thread, NULL, watchdog_main, w) != 0) {
		pthread_cond_destroy(&w->changed);
		pthread_mutex_destroy(&w->lock);
		free(w);
		return NULL; /* no thread to be had: the work still runs, unguarded */
	}
	pthread_detach(thread);
	the_watchdog = w;
	return w;
}

void watchdog_setup(struct watchdog *w, double deadline, const char *doing)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	if (deadline > 0 && deadline != w->deadline) {
		w->deadline = deadline;
		pthread_cond_signal(&w->changed); /* to wait for the new one */
	}
	if (doing)
		snprintf(w->doing, sizeof(w->doing), "%s", doing);
	pthread_mutex_unlock(&w->lock);
}

/* Marks result i final; returns false when the watchdog has taken over. */
static bool finish_result(struct watchdog *w, size_t i)
{
	pthread_mutex_lock(&w->lock);
	bool running = w->state == GUARD_RUNNING;
	if (running) {
		w->done = i + 1;
		/* After the last check the watchdog is woken to end its thread
		 * while the reports are written: a process that exits with a
		 * second thread asleep waits for the kernel to wake and end it
		 * (~0.05-0.08 ms on a 16-core host). */
		if (w->done == w->count) {
			w->state = GUARD_FINISHED;
			pthread_cond_signal(&w->changed);
		}
	}
	pthread_mutex_unlock(&w->lock);
	return running;
}

int run_checks(const struct context *ctx, const struct selection *sel, struct run *run, run_deliver_fn *deliver,
	       void *deliver_arg, struct watchdog *w)
{
	memset(run, 0, sizeof(*run));
	run->profile = ctx->profile;
	struct planned *plan;
	size_t count = plan_checks(ctx, sel, &plan);
	struct result *results = xcalloc(count ? count : 1, sizeof(*results));
	if (w) {
		pthread_mutex_lock(&w->lock);
		w->ctx = ctx;
		w->plan = plan;
		w->results = results;
		w->count = count;
		w->deliver = deliver;
		w->deliver_arg = deliver_arg;
		w->state = count ? GUARD_RUNNING : GUARD_FINISHED;
		if (ctx->deadline != w->deadline || !count) { /* no checks: nothing to guard */
			w->deadline = ctx->deadline;
			pthread_cond_signal(&w->changed);
		}
		pthread_mutex_unlock(&w->lock);
	}

	const struct check_group *current = NULL;
	void *state = NULL;
	for (size_t i = 0; i < count; i++) {
		const struct planned *p = &plan[i];
		struct result *r = &results[i];
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
		if (w && !finish_result(w, i))
			for (;;)
				pause(); /* the watchdog is delivering the run and ends the process */
	}
	if (current && current->release)
		current->release(state);
	collect(ctx, plan, results, count, count, run);
	free(results); /* collect() copied them */
	if (!w)
		free(plan); /* else the watchdog may look at it until the process ends */
	return 0;
}

bool run_selects_any(const struct context *ctx, const struct selection *sel)
{
	struct planned *plan;
	size_t n = plan_checks(ctx, sel, &plan);
	free(plan);
	return n > 0;
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
