#include "runner.h"

#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "lib/monotonic_wait.h"
#include "lib/parallel.h"
#include "lib/timeline.h"
#include "lib/util.h"
#include "registry.h"

#ifdef GPUGATE_TIMELINE
/* a mark naming a group or a check (timeline builds only) */
static void tl_mark_id(const char *what, const char *id)
{
	char label[128];
	snprintf(label, sizeof(label), "%s %s", what, id);
	tl_mark(label);
}
#else
#define tl_mark_id(what, id) ((void)0)
#endif

struct planned {
	const struct check_group *group;
	const struct check_def *check;
};

/* The deadline guard, shared between the thread doing the work and the
 * watchdog thread. Everything is read and changed under the lock. During
 * SETUP (--root, the spec) the deadline and `doing` may still change;
 * during RUNNING a result whose stage is CHECK_FINAL is final and the thread
 * that ran it never touches it again (the checks of a group that runs on a
 * thread of its own finish out of plan order). Whichever thread moves the state on from SETUP or
 * RUNNING first decides how the process ends. */
enum guard_state { GUARD_SETUP, GUARD_RUNNING, GUARD_FINISHED, GUARD_TIMED_OUT };
/* Where one check is: its result is final (and never touched again by the
 * thread that ran it) only at CHECK_FINAL. */
enum check_stage { CHECK_WAITING, CHECK_RUNNING, CHECK_FINAL };

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
	enum check_stage *stage; /* each check's, in plan order */
	size_t finished;         /* how many are CHECK_FINAL */
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

/* Whether --only and --skip (sel) leave check id in. */
static bool chosen(const struct selection *sel, const char *id)
{
	return (!sel->only || listed(sel->only, id)) && !listed(sel->skip, id);
}

/* Check c of a group the spec turns on. */
static bool selected(const struct context *ctx, const struct selection *sel, const struct check_def *c)
{
	return registry_check_switched_on(ctx->spec, c) && chosen(sel, c->id);
}

static size_t plan_checks(const struct context *ctx, const struct selection *sel, struct planned **out)
{
	size_t n = 0, cap = 16;
	struct planned *plan = xmalloc(cap * sizeof(*plan));
	for (const struct check_group *const *g = registry_groups; *g; g++) {
		if (!registry_group_enabled(ctx->spec, *g))
			continue; /* asked once, not for each of its checks */
		for (const struct check_def *c = (*g)->checks; c->id; c++) {
			if (!selected(ctx, sel, c))
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

/* The run as it stands: the final results, the rest as timed out. */
static void collect(const struct context *ctx, const struct planned *plan, const struct result *results, size_t count,
		    const enum check_stage *stage, struct run *run)
{
	run->count = count;
	run->spec = ctx->spec;
	run->results = xcalloc(count ? count : 1, sizeof(*run->results));
	char limit[32];
	human_seconds(ctx->deadline - ctx->start, limit, sizeof(limit));
	for (size_t i = 0; i < count; i++) {
		struct result *r = &run->results[i];
		if (stage[i] == CHECK_FINAL) {
			*r = results[i];
			continue;
		}
		r->id = plan[i].check->id;
		if (stage[i] == CHECK_RUNNING)
			result_set(r, STATUS_FAIL, "timed out: still running when the %s deadline passed", limit);
		else
			result_set(r, STATUS_FAIL, "timed out: not started before the %s deadline passed", limit);
		result_remedy(r, "raise --deadline (or the spec's deadline), or find what blocks this check");
		r->duration_ms = 0;
	}
	run_resolve_blocked(run);
	run->duration_ms = (monotonic_seconds() - ctx->start) * 1e3;
	run->finished_at = wall_seconds();
}

/* One malloc arena for the process's threads (the watchdog, the run's
 * second share): glibc gives each thread that calls malloc an arena of its
 * own otherwise, a 64 MiB reservation trimmed with munmap and a page fault
 * for each fresh page it hands out. Set before the first thread starts. */
static void one_malloc_arena(void)
{
	mallopt(M_ARENA_MAX, 1);
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
	tl_mark("watchdog running");
	pthread_mutex_lock(&w->lock);
	for (;;) {
		if (w->state == GUARD_FINISHED) {
			pthread_mutex_unlock(&w->lock);
			tl_mark("watchdog ends");
			return NULL;
		}
		struct timespec until = monotonic_timespec(w->deadline);
		if (pthread_cond_timedwait(&w->changed, &w->lock, &until) != 0 && monotonic_seconds() >= w->deadline)
			break;
	}
	if (w->state == GUARD_SETUP) {
		char limit[32];
		human_seconds(w->deadline - w->start, limit, sizeof(limit));
		fprintf(stderr,
			"gpugate: gave up after %s, before any check ran, while %s: a FIFO with no "
			"writer or a hung network mount? (raise --deadline if it is only slow)\n",
			limit, w->doing);
		fflush(stderr);
		_exit(EXIT_USAGE);
	}
	w->state = GUARD_TIMED_OUT;
	/* the stages are not changed any more (finish_result and
	 * start_result see TIMED_OUT): read without the lock */
	pthread_mutex_unlock(&w->lock);
	struct run run;
	memset(&run, 0, sizeof(run));
	run.profile = w->ctx->profile;
	collect(w->ctx, w->plan, w->results, w->count, w->stage, &run);
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
	one_malloc_arena();
	struct thread thread;
	/* (on any CPU: kept on this one, it woke there when the other share
	 * ended and took the CPU from this thread's last steps; measured on the
	 * GPU host, 2.5 % slower than left to the scheduler) */
	int rc = thread_start(&thread, watchdog_main, w);
	if (rc != 0) {
		pthread_cond_destroy(&w->changed);
		pthread_mutex_destroy(&w->lock);
		free(w);
		return NULL; /* no thread to be had: the work still runs, unguarded */
	}
	pthread_detach(thread.id); /* it keeps its stack until the process ends */
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

/* The stages of a run, with the lock that guards them when there is no
 * watchdog to hold it. */
struct stages {
	struct watchdog *w;
	enum check_stage *stage;
	size_t count;
};

/* Moves check i to stage to; returns false when the watchdog has taken over
 * (the check's result is then its own: the caller must stop). */
static bool set_stage(const struct stages *st, size_t i, enum check_stage to)
{
	struct watchdog *w = st->w;
	if (!w) {
		st->stage[i] = to;
		return true;
	}
	pthread_mutex_lock(&w->lock);
	bool running = w->state == GUARD_RUNNING, last = false;
	if (running) {
		st->stage[i] = to;
		/* After the last check the watchdog is woken to end its thread
		 * while the reports are written: a process that exits with a
		 * second thread asleep waits for the kernel to wake and end it
		 * (~0.05-0.08 ms on a 16-core host). */
		if (to == CHECK_FINAL && ++w->finished == w->count) {
			w->state = GUARD_FINISHED;
			last = true;
		}
	}
	pthread_mutex_unlock(&w->lock);
	/* signalled once the lock is free: the watchdog wakes to a lock it can
	 * take, not to sleep again on it until this thread lets go */
	if (last)
		pthread_cond_signal(&w->changed);
	return running;
}

/* One thread's share of the plan: the checks whose group runs on a thread of
 * its own (own_thread) or the others, each group prepared once before its
 * first check and released after its last, in plan order. */
struct share {
	const struct context *ctx;
	const struct planned *plan;
	struct result *results;
	const struct stages *stages;
	bool own_thread;  /* which share */
	atomic_bool done; /* set by a share's thread when it has finished */
};

static void run_share(const struct share *sh)
{
	const struct check_group *current = NULL;
	void *state = NULL;
	for (size_t i = 0; i < sh->stages->count; i++) {
		const struct planned *p = &sh->plan[i];
		if (p->group->own_thread != sh->own_thread)
			continue;
		struct result *r = &sh->results[i];
		if (!set_stage(sh->stages, i, CHECK_RUNNING))
			return; /* the watchdog is delivering the run and ends the process */
		double t0 = monotonic_seconds();
		if (p->group != current) {
			if (current && current->release)
				current->release(state);
			current = p->group;
			tl_mark_id("prepare", current->name);
			state = current->prepare ? current->prepare(sh->ctx) : NULL;
		}
		r->id = p->check->id;
		tl_mark_id("check", p->check->id);
		p->check->run(sh->ctx, state, r);
		tl_mark_id("done", p->check->id);
		if (!r->summary)
			result_set(r, STATUS_FAIL, "internal error: the check set no result");
		r->duration_ms = (monotonic_seconds() - t0) * 1e3;
		if (!set_stage(sh->stages, i, CHECK_FINAL))
			return;
	}
	if (current && current->release)
		current->release(state);
}

static void *run_share_thread(void *arg)
{
	struct share *sh = arg;
	tl_mark("rest thread running");
	run_share(sh);
	atomic_store_explicit(&sh->done, true, memory_order_release);
	return NULL;
}

/* How long the thread that finished its share first waits for the other
 * share's thread awake before it sleeps in the join: a thread asleep is
 * woken by an interrupt from the CPU that ends the other thread, which on
 * a virtual machine whose idle CPUs halt costs ~0.1 ms (the host's
 * measurements, round 5); a share that ends within this spin costs none. */
#define JOIN_SPIN_SECONDS 200e-6

static void wait_for_share(const struct share *sh)
{
	double until = monotonic_seconds() + JOIN_SPIN_SECONDS;
	while (!atomic_load_explicit(&sh->done, memory_order_acquire) && monotonic_seconds() < until)
		spin_pause();
}

int run_checks(const struct context *ctx, const struct selection *sel, struct run *run, run_deliver_fn *deliver,
	       void *deliver_arg, struct watchdog *w)
{
	memset(run, 0, sizeof(*run));
	run->profile = ctx->profile;
	struct planned *plan;
	size_t count = plan_checks(ctx, sel, &plan);
	struct result *results = xcalloc(count ? count : 1, sizeof(*results));
	enum check_stage *stage = xcalloc(count ? count : 1, sizeof(*stage));
	struct stages stages = { w, stage, count };
	if (w) {
		pthread_mutex_lock(&w->lock);
		w->ctx = ctx;
		w->plan = plan;
		w->results = results;
		w->count = count;
		w->stage = stage;
		w->deliver = deliver;
		w->deliver_arg = deliver_arg;
		w->state = count ? GUARD_RUNNING : GUARD_FINISHED;
		if (ctx->deadline != w->deadline || !count) { /* no checks: nothing to guard */
			w->deadline = ctx->deadline;
			pthread_cond_signal(&w->changed);
		}
		pthread_mutex_unlock(&w->lock);
	}

	/* A group marked own_thread (the packages group: the whole dpkg status
	 * file read with dpkg's strictness) runs apart from the others, when
	 * there are others: this thread, already running, takes it, the longest
	 * share, and a new one the rest, so that the new thread's start (a
	 * sleeping CPU woken: up to ~0.5 ms on the shared build VM) is not added
	 * to it; where no CPU is free the two take turns, which measured no
	 * slower than one thread (tests/bench/RESULTS.md). The results stay in
	 * plan order: each thread fills only its own checks' results. */
	size_t own = 0;
	for (size_t i = 0; i < count; i++)
		own += plan[i].group->own_thread;
	struct share apart = { ctx, plan, results, &stages, true, false },
		     rest = { ctx, plan, results, &stages, false, false };
	struct thread thread;
	bool threaded = own && own < count;
	if (threaded)
		one_malloc_arena(); /* (a run with no watchdog: spec freeze) */
	tl_mark("run planned");
	threaded = threaded && thread_start(&thread, run_share_thread, &rest) == 0;
	tl_mark("rest thread started");
	run_share(&apart);
	tl_mark("own share done");
	if (threaded) {
		wait_for_share(&rest);
		thread_join(&thread);
	} else
		run_share(&rest); /* one group alone, or no thread to be had: in turn */
	tl_mark("rest joined");
	if (w) {
		pthread_mutex_lock(&w->lock);
		bool timed_out = w->state == GUARD_TIMED_OUT;
		pthread_mutex_unlock(&w->lock);
		if (timed_out)
			for (;;)
				pause(); /* the watchdog is delivering the run and ends the process */
	}
	collect(ctx, plan, results, count, stage, run);
	free(results); /* collect() copied them */
	if (!w) {
		free(plan); /* else the watchdog may look at them until the process ends */
		free(stage);
	}
	return 0;
}

bool run_may_select_own_thread(const struct selection *sel)
{
	for (const struct check_group *const *g = registry_groups; *g; g++)
		for (const struct check_def *c = (*g)->checks; (*g)->own_thread && c->id; c++)
			if (chosen(sel, c->id))
				return true;
	return false;
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
