/* gpugate-serve: `gpugate serve`, the long-running mode. One thread runs
 * `gpugate check` as a child process every interval (checks.c), turns what
 * it wrote into a snapshot (snapshot.c, gpu_metrics.c) and publishes it; the
 * libmicrohttpd thread answers /metrics, /healthz, /readyz and /report.json
 * from the published snapshot (http.c); the main thread waits for signals
 * (main.c). The check path (the gpugate binary, the HEALTHCHECK) links none
 * of this: libmicrohttpd stays in this executable. */
#ifndef GPUGATE_SERVE_H
#define GPUGATE_SERVE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "lib/util.h"

/* Default listening address and interval (README, gpugate(1)). */
#define SERVE_DEFAULT_LISTEN   "127.0.0.1:9847"
#define SERVE_DEFAULT_INTERVAL 60.0
/* A run's limit when neither --deadline nor GPUGATE_DEADLINE says one: the
 * longest built-in profile's (validate, 300 s); the child ends itself by
 * its own deadline, this only bounds a child that does not. */
#define SERVE_FALLBACK_DEADLINE 300.0
/* Past its deadline a child gets this long to deliver before it is killed. */
#define SERVE_KILL_GRACE 5.0

/* What one check run left, immutable once published; shared with the
 * HTTP thread's responses by reference count. */
struct snapshot {
	int refs;      /* under the state lock */
	char *metrics; /* the whole /metrics body */
	size_t metrics_len;
	char *json; /* the JSON report, or NULL (no run yet, or it failed) */
	size_t json_len;
	char *ready_line; /* /readyz's body: the text report's first line, or why there is none */
	size_t ready_len;
	bool healthy;    /* the run's verdict was 0 */
	double finished; /* monotonic seconds; 0: no run has finished */
};

/* How one `gpugate check` run ended, and what it wrote. */
struct check_run {
	int exit_code;         /* 0, 1, 3...; -1 when it did not exit on its own */
	bool killed;           /* still running SERVE_KILL_GRACE after its deadline */
	char *text;            /* the text report (stdout) */
	char *json;            /* the JSON report */
	char *prom;            /* the Prometheus report */
	char *errors;          /* what it wrote on stderr */
	char start_error[200]; /* why it could not start; "" when it did */
	double seconds;
};

/* The counters /metrics carries for the serve loop itself. */
enum run_outcome { OUTCOME_HEALTHY, OUTCOME_UNHEALTHY, OUTCOME_ERROR, OUTCOME_KILLED, OUTCOME_COUNT };

struct serve_state {
	pthread_mutex_t lock;
	pthread_cond_t wake;      /* the loop's sleep: SIGHUP and SIGTERM cut it short */
	struct snapshot *current; /* never NULL once serving */
	/* the loop, under lock */
	bool stop, reload;
	bool running;       /* a check child is running */
	double run_started; /* monotonic, while running */
	pid_t child;        /* its pid (its own process group), while running */
	unsigned long runs[OUTCOME_COUNT];
	/* settings, read-only once serving */
	const char *gpugate; /* the gpugate binary that runs the checks */
	char **check_args;   /* the user's check options, NULL-terminated */
	double interval;
	double run_limit; /* the run's deadline */
};

/* checks.c: runs `gpugate check ARGS` once, bounded by limit seconds (plus
 * the grace), recording the child's pid in state while it runs. Fills run;
 * check_run_release frees it. */
void check_run_once(struct serve_state *state, struct check_run *run);
void check_run_release(struct check_run *run);
/* checks.c: `gpugate check ARGS --preflight`: the options, --root and the
 * spec read as a run would, no check run. Returns its exit code (3: a usage
 * or spec error, to end the server before it listens), -1 when it did not
 * start or outlived the run's limit; errors gets what it wrote on stderr (free it). */
int check_preflight(struct serve_state *state, char **errors);

/* gpu_metrics.c: the per-GPU series measured in the JSON report (free
 * memory, smoke result, performance figures) as Prometheus exposition. */
void gpu_metrics_from_report(struct strbuf *out, const char *json);

/* snapshot.c */
struct snapshot *snapshot_from_run(const struct serve_state *state, const struct check_run *run, double now);
/* The snapshot before the first run: the loop's own series only. */
struct snapshot *snapshot_initial(const struct serve_state *state);
/* Publishes snap as the current one (the state's lock taken inside). */
void snapshot_publish(struct serve_state *state, struct snapshot *snap);
/* The current snapshot with a reference, and the reference given back. */
struct snapshot *snapshot_get(struct serve_state *state);
void snapshot_put(struct serve_state *state, struct snapshot *snap);

/* http.c: the server on addr ("ADDR:PORT"); NULL with why filled on error. */
struct http_server;
struct http_server *http_start(struct serve_state *state, const char *listen, char *why, size_t whysize);
void http_stop(struct http_server *server);

/* Whether the state's last run is healthy and recent enough to trust:
 * finished within two intervals plus the run's limit. */
bool serve_ready(const struct serve_state *state, const struct snapshot *snap, double now);

#endif
