/* gpugate-serve: `gpugate serve`, run as
 *   gpugate-serve --gpugate SELF serve [--listen ADDR:PORT] [--interval D] [check options]
 * (gpugate exec()s it, src/provision_exec.c; by hand the --gpugate part may
 * be left out, and gpugate is then looked up in PATH).
 *
 * Three threads: the main one waits for signals (SIGTERM/SIGINT end the
 * server at once, SIGHUP starts a run now, which reads the spec again), the
 * loop runs the checks every interval (checks.c), libmicrohttpd's answers
 * (http.c). Signals are blocked in all of them and taken by sigwaitinfo
 * here; the check child gets an empty mask back before exec. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../lib/monotonic_wait.h"
#include "../lib/util.h"
#include "commands.h"
#include "serve.h"
#include "spec.h"

extern char **environ;

static const char serve_usage[] =
	"usage: gpugate serve [--listen ADDR:PORT] [--interval DURATION] [check options]\n"
	"  runs the checks every interval (default 60s) and serves the last result over HTTP:\n"
	"  /metrics (Prometheus), /healthz, /readyz (200 when healthy and fresh), /report.json\n"
	"  --listen ADDR:PORT    where to listen (default " SERVE_DEFAULT_LISTEN ")\n"
	"  --interval DURATION   time between the starts of two runs (10s, 1m; at least 1s)\n"
	"  check options as for 'gpugate check' (--profile, --spec, --root, --deadline, --report ...)\n"
	"  SIGTERM ends it; SIGHUP runs the checks now, reading the spec again\n";

struct serve_options {
	const char *listen;
	double interval;
	char **check_args; /* NULL-terminated; points into argv */
};

/* An option's value as "--name VALUE" or "--name=VALUE"; advances *i. */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);
	if (strncmp(argv[*i], name, n) != 0)
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		usage_error("serve: option '%s' needs an argument", name);
		exit(EXIT_USAGE);
	}
	return argv[++*i];
}

#define SPEC_FROM_STDIN                                                                                      \
	"--spec -: serve reads its spec again on SIGHUP, so standard input cannot be its spec: give a file " \
	"(--spec FILE)"

/* Whether the check options take the spec from standard input ("--spec -",
 * "--spec=-", or GPUGATE_SPEC=- with neither --spec nor --profile), which
 * each run, and SIGHUP's, would have to read again. */
static bool spec_from_stdin(char **args)
{
	bool named = false;
	for (char **a = args; *a; a++) {
		if (strcmp(*a, "--spec=-") == 0 || (strcmp(*a, "--spec") == 0 && a[1] && strcmp(a[1], "-") == 0))
			return true;
		named |= strncmp(*a, "--spec", 6) == 0 || strncmp(*a, "--profile", 9) == 0;
	}
	const char *env = getenv("GPUGATE_SPEC");
	return !named && env && strcmp(env, "-") == 0;
}

/* 0, 3 on a usage error, -1 after --help. */
static int parse_options(int argc, char **argv, struct serve_options *o)
{
	o->listen = SERVE_DEFAULT_LISTEN;
	o->interval = SERVE_DEFAULT_INTERVAL;
	o->check_args = xcalloc((size_t)argc + 1, sizeof(*o->check_args));
	size_t k = 0;
	for (int i = 0; i < argc; i++) {
		const char *v;
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(serve_usage, stdout);
			return -1;
		} else if ((v = option_value(argc, argv, &i, "--listen"))) {
			o->listen = v;
		} else if ((v = option_value(argc, argv, &i, "--interval"))) {
			if (parse_seconds(v, &o->interval) < 0 || o->interval < 1)
				return usage_error("serve: --interval: '%s' is not a duration of at least 1s", v);
		} else {
			o->check_args[k++] = argv[i];
		}
	}
	return spec_from_stdin(o->check_args) ? usage_error("serve: %s", SPEC_FROM_STDIN) : 0;
}

/* The run's deadline as the check child will take it: its --deadline, else
 * GPUGATE_DEADLINE, else the longest built-in one. The child enforces it;
 * this bounds a child that does not. */
static double run_limit(char **args)
{
	const char *value = getenv("GPUGATE_DEADLINE");
	for (char **a = args; *a; a++) {
		if (strcmp(*a, "--deadline") == 0 && a[1])
			value = a[1];
		else if (strncmp(*a, "--deadline=", 11) == 0)
			value = *a + 11;
	}
	double s;
	return value && parse_seconds(value, &s) == 0 && s > 0 ? s : SERVE_FALLBACK_DEADLINE;
}

static enum run_outcome outcome_of(const struct check_run *run)
{
	if (run->killed)
		return OUTCOME_KILLED;
	if (run->start_error[0] || (run->exit_code != 0 && run->exit_code != 1))
		return OUTCOME_ERROR;
	return run->exit_code == 0 ? OUTCOME_HEALTHY : OUTCOME_UNHEALTHY;
}

static struct serve_state state;

/* The loop: a run, its snapshot published, then a sleep until the interval
 * has passed since the run started (or SIGHUP, or the end). A usage or spec
 * error in the first run ends the server (exit 3) so that a bad command line
 * fails where it is deployed; a later one (a spec edited, then SIGHUP) is
 * served as not ready until the spec is fixed. */
static void *loop_main(void *arg)
{
	(void)arg;
	char *last_line = NULL;
	for (bool first = true;; first = false) {
		double started = monotonic_seconds();
		pthread_mutex_lock(&state.lock);
		state.reload = false;
		pthread_mutex_unlock(&state.lock);
		struct check_run run;
		check_run_once(&state, &run);
		enum run_outcome outcome = outcome_of(&run);
		pthread_mutex_lock(&state.lock);
		state.runs[outcome]++;
		pthread_mutex_unlock(&state.lock);
		fputs(run.errors, stderr); /* gpugate's own messages, for the container log */
		struct snapshot *snap = snapshot_from_run(&state, &run, monotonic_seconds());
		/* the log says what changed, once: a ready line taken from the
		 * messages just logged (a spec error) is not said again */
		size_t first_len = strcspn(run.errors, "\n");
		bool logged = first_len && strncmp(snap->ready_line, run.errors, first_len) == 0;
		if ((!last_line || strcmp(last_line, snap->ready_line) != 0) && !logged)
			fprintf(stderr, "gpugate serve: %s", snap->ready_line);
		free(last_line);
		last_line = xstrdup(snap->ready_line);
		snapshot_publish(&state, snap);
		bool fatal = first && outcome == OUTCOME_ERROR && run.exit_code == EXIT_USAGE;
		check_run_release(&run);
		if (fatal) {
			free(last_line);
			kill(getpid(), SIGUSR1); /* the main thread ends the server with 3 */
			return NULL;
		}
		pthread_mutex_lock(&state.lock);
		struct timespec until = monotonic_timespec(started + state.interval);
		while (!state.stop && !state.reload && monotonic_seconds() < started + state.interval)
			pthread_cond_timedwait(&state.wake, &state.lock, &until);
		bool stop = state.stop;
		pthread_mutex_unlock(&state.lock);
		if (stop) {
			free(last_line);
			return NULL;
		}
	}
}

/* gpugate-serve [--gpugate PATH] [serve] OPTIONS... */
int main(int argc, char **argv)
{
	const char *gpugate;
	int i = helper_gpugate_arg(argc, argv, &gpugate);
	if (i < argc && strcmp(argv[i], "serve") == 0)
		i++;
	struct serve_options o;
	int rc = parse_options(argc - i, argv + i, &o);
	if (rc) {
		free(o.check_args);
		return rc < 0 ? 0 : rc;
	}
	/* Blocked before any thread starts, so every thread inherits it and
	 * only sigwaitinfo below takes them. */
	sigset_t signals;
	sigemptyset(&signals);
	sigaddset(&signals, SIGTERM);
	sigaddset(&signals, SIGINT);
	sigaddset(&signals, SIGHUP);
	sigaddset(&signals, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &signals, NULL);

	pthread_mutex_init(&state.lock, NULL);
	monotonic_cond_init(&state.wake);
	state.gpugate = gpugate;
	state.check_args = o.check_args;
	state.interval = o.interval;
	state.run_limit = run_limit(o.check_args);
	state.current = snapshot_initial(&state);

	/* a bad spec or option ends the server before it says it listens */
	char *errors = NULL;
	int preflight = check_preflight(&state, &errors);
	fputs(errors, stderr);
	free(errors);
	if (preflight == EXIT_USAGE)
		return EXIT_USAGE;
	char why[512];
	struct http_server *server = http_start(&state, o.listen, why, sizeof(why));
	if (!server) {
		fprintf(stderr, "gpugate: serve: %s\n", why);
		return EXIT_USAGE;
	}
	fprintf(stderr, "gpugate serve: listening on %s, checks every %.0f s\n", o.listen, o.interval);
	pthread_t loop;
	if (pthread_create(&loop, NULL, loop_main, NULL) != 0) {
		fputs("gpugate: serve: cannot start the check loop's thread\n", stderr);
		http_stop(server);
		return EXIT_USAGE;
	}
	int code = 0;
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(&signals, &si);
		if (sig == SIGHUP) {
			pthread_mutex_lock(&state.lock);
			state.reload = true;
			pthread_cond_signal(&state.wake);
			pthread_mutex_unlock(&state.lock);
			continue;
		}
		if (sig == SIGTERM || sig == SIGINT || sig == SIGUSR1) {
			code = sig == SIGUSR1 ? EXIT_USAGE : 0;
			break;
		}
	}
	/* The end, within a second: the server closes its connections; a check
	 * child still running is killed with this process (PR_SET_PDEATHSIG). */
	pthread_mutex_lock(&state.lock);
	state.stop = true;
	pthread_cond_signal(&state.wake);
	pthread_mutex_unlock(&state.lock);
	http_stop(server);
	fflush(stderr);
	_exit(code);
}
