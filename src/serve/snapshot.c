/* The snapshot of one run that the HTTP thread serves, and its publication.
 * /metrics is the run's own Prometheus report (the series of `gpugate check
 * --format prom`, report/prom.c), the per-GPU series (gpu_metrics.c) and
 * the loop's own series. A run that ended without a verdict (a usage or
 * spec error, killed past its deadline, not started) leaves no check series:
 * a stale gpugate_healthy 1 would hide it; /readyz says what happened. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/escape.h"
#include "serve.h"

static const char *const outcome_names[OUTCOME_COUNT] = { "healthy", "unhealthy", "error", "killed" };

static void loop_series(struct strbuf *out, const struct serve_state *state, int exit_code)
{
	sb_puts(out, "# HELP gpugate_serve_runs_total Check runs gpugate serve finished, by how they ended.\n"
		     "# TYPE gpugate_serve_runs_total counter\n");
	for (int i = 0; i < OUTCOME_COUNT; i++)
		sb_printf(out, "gpugate_serve_runs_total{result=\"%s\"} %lu\n", outcome_names[i], state->runs[i]);
	sb_puts(out, "# HELP gpugate_serve_last_run_exit_code The last check run's exit status (0 healthy, 1 "
		     "unhealthy, 3 usage or spec error); -1 when it was killed or did not start, or none ran yet.\n"
		     "# TYPE gpugate_serve_last_run_exit_code gauge\n");
	sb_printf(out, "gpugate_serve_last_run_exit_code %d\n", exit_code);
	sb_puts(out, "# HELP gpugate_serve_interval_seconds Time between the starts of two check runs.\n"
		     "# TYPE gpugate_serve_interval_seconds gauge\n");
	sb_printf(out, "gpugate_serve_interval_seconds %.3f\n", state->interval);
}

static struct snapshot *snapshot_new(void)
{
	struct snapshot *s = xcalloc(1, sizeof(*s));
	s->refs = 1; /* the state's */
	return s;
}

static void set_ready_line(struct snapshot *s, const char *text)
{
	size_t n = strcspn(text, "\n");
	struct strbuf sb = STRBUF_INIT;
	escape_add_n(&sb, text, n, ESCAPE_LINE);
	sb_puts(&sb, "\n");
	s->ready_len = sb.len;
	s->ready_line = sb_detach(&sb);
}

struct snapshot *snapshot_initial(const struct serve_state *state)
{
	struct snapshot *s = snapshot_new();
	struct strbuf m = STRBUF_INIT;
	loop_series(&m, state, -1);
	s->metrics_len = m.len;
	s->metrics = sb_detach(&m);
	set_ready_line(s, "gpugate serve: no check run has finished yet");
	return s;
}

struct snapshot *snapshot_from_run(const struct serve_state *state, const struct check_run *run, double now)
{
	struct snapshot *s = snapshot_new();
	s->finished = now;
	bool verdict = !run->start_error[0] && !run->killed && (run->exit_code == 0 || run->exit_code == 1) &&
		       run->json[0] && run->prom[0];
	struct strbuf m = STRBUF_INIT;
	if (verdict) {
		sb_puts(&m, run->prom);
		gpu_metrics_from_report(&m, run->json);
		s->json_len = strlen(run->json);
		s->json = xstrdup(run->json);
		s->healthy = run->exit_code == 0;
		set_ready_line(s, run->text);
	} else {
		char *why;
		if (run->start_error[0])
			why = xasprintf("gpugate serve: the check run failed: %s", run->start_error);
		else if (run->killed)
			why = xasprintf("gpugate serve: the check run was still running %.0f s after its %.0f s "
					"deadline: killed",
					SERVE_KILL_GRACE, state->run_limit);
		else if (run->errors[0])
			why = xasprintf("%s", run->errors); /* gpugate's own message, such as the spec error */
		else
			why = xasprintf("gpugate serve: the check run exited %d with no report", run->exit_code);
		set_ready_line(s, why);
		free(why);
	}
	loop_series(&m, state, verdict || (!run->killed && !run->start_error[0]) ? run->exit_code : -1);
	s->metrics_len = m.len;
	s->metrics = sb_detach(&m);
	return s;
}

static void snapshot_free(struct snapshot *s)
{
	free(s->metrics);
	free(s->json);
	free(s->ready_line);
	free(s);
}

void snapshot_publish(struct serve_state *state, struct snapshot *snap)
{
	pthread_mutex_lock(&state->lock);
	struct snapshot *old = state->current;
	state->current = snap;
	bool last = old && --old->refs == 0;
	pthread_mutex_unlock(&state->lock);
	if (last)
		snapshot_free(old);
}

struct snapshot *snapshot_get(struct serve_state *state)
{
	pthread_mutex_lock(&state->lock);
	struct snapshot *s = state->current;
	s->refs++;
	pthread_mutex_unlock(&state->lock);
	return s;
}

void snapshot_put(struct serve_state *state, struct snapshot *snap)
{
	pthread_mutex_lock(&state->lock);
	bool last = --snap->refs == 0;
	pthread_mutex_unlock(&state->lock);
	if (last)
		snapshot_free(snap);
}

bool serve_ready(const struct serve_state *state, const struct snapshot *snap, double now)
{
	return snap->healthy && snap->finished > 0 &&
	       now - snap->finished <= 2 * state->interval + state->run_limit + SERVE_KILL_GRACE;
}
