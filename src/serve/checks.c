/* One check run: `gpugate check USER-OPTIONS` as a child process, which
 * keeps everything the check path does (its sandbox, its watchdog, the probe
 * in a grandchild) out of the serving process: a hung driver or a crash can
 * never stall or end the server. The child writes three reports in one run:
 * the text report on stdout (its first line is /readyz's body), the
 * Prometheus report on a pipe at fd 3 and the JSON report into a memfd,
 * both named to it as /proc/self/fd/N --report files (lib/safe_io.h writes
 * through what is there). lib/spawn.h starts it in its own process group,
 * reads its pipes and kills the group if it outlives its deadline. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/safe_io.h"
#include "lib/spawn.h"
#include "serve.h"

/* More than any report of a few hundred checks; a child that writes more is
 * broken, and its run an error rather than unbounded memory here. */
#define OUTPUT_MAX ((size_t)16 << 20)

struct capture {
	struct strbuf streams[SPAWN_STREAMS];
	bool overflow;
};

static void on_data(void *arg, enum spawn_stream stream, const char *buf, size_t len)
{
	struct capture *c = arg;
	struct strbuf *sb = &c->streams[stream];
	if (sb->len + len > OUTPUT_MAX) {
		c->overflow = true;
		return;
	}
	sb_add(sb, buf, len);
}

static char *taken(struct strbuf *sb)
{
	return sb->buf ? sb_detach(sb) : xstrdup("");
}

/* The JSON report from the memfd (at offset 0: the child wrote it through
 * its own open file description). */
static char *read_memfd(int fd, bool *overflow)
{
	char *content = NULL;
	size_t len = 0;
	if (lseek(fd, 0, SEEK_SET) < 0 ||
	    safe_read_fd(fd, "the JSON report", OUTPUT_MAX, &content, &len, NULL, 0) < 0) {
		*overflow = true;
		return xstrdup("");
	}
	return content;
}

/* In the child: the signals the server takes by sigwaitinfo are blocked in
 * all its threads, and a mask survives exec; gpugate check gets none. A
 * bare name ("gpugate") is looked up in PATH. */
static int exec_unblocked(char *const argv[], char *const envp[])
{
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	return execvpe(argv[0], argv, envp);
}

/* `gpugate check USER-OPTIONS OURS...` as argv; free() it (the strings are
 * borrowed). Ours last: the last --format and --color win in gpugate check. */
static const char **check_argv(const struct serve_state *state, const char *const *ours, size_t n_ours)
{
	size_t n_user = 0;
	while (state->check_args[n_user])
		n_user++;
	const char **argv = xcalloc(n_user + n_ours + 3, sizeof(*argv));
	size_t k = 0;
	argv[k++] = state->gpugate;
	argv[k++] = "check";
	for (size_t i = 0; i < n_user; i++)
		argv[k++] = state->check_args[i];
	for (size_t i = 0; i < n_ours; i++)
		argv[k++] = ours[i];
	argv[k] = NULL;
	return argv;
}

int check_preflight(struct serve_state *state, char **errors)
{
	/* everything a run reads before its first check: a bad option or spec
	 * is exit 3 here, before the server listens */
	static const char *const ours[] = { "--preflight" };
	const char **argv = check_argv(state, ours, ARRAY_SIZE(ours));
	struct capture cap = { 0 };
	struct spawn_child child = {
		.argv = (char *const *)argv,
		.die_with_parent = true,
		.exec = exec_unblocked,
		.on_data = on_data,
		.arg = &cap,
	};
	double start = monotonic_seconds();
	spawn_run(&child, 1, start + state->run_limit + SERVE_KILL_GRACE);
	free(argv);
	sb_release(&cap.streams[SPAWN_OUT]);
	*errors = taken(&cap.streams[SPAWN_ERR]);
	/* not started or killed: the runs will say so, served as not ready */
	return child.error[0] || child.killed ? -1 : child.exit_code;
}

void check_run_once(struct serve_state *state, struct check_run *run)
{
	memset(run, 0, sizeof(*run));
	run->exit_code = -1;
	/* Not close-on-exec: the child inherits it at this number and names it
	 * as its report file. Only this thread starts processes. */
	int json_fd = memfd_create("gpugate-serve-json", 0);
	if (json_fd < 0) {
		snprintf(run->start_error, sizeof(run->start_error), "memfd_create: %s", strerror(errno));
		run->text = xstrdup("");
		run->json = xstrdup("");
		run->prom = xstrdup("");
		run->errors = xstrdup("");
		return;
	}
	char json_report[64];
	snprintf(json_report, sizeof(json_report), "json:/proc/self/fd/%d", json_fd);
	const char *ours[] = { "--format", "text",     "--color=never", "--report", "prom:/proc/self/fd/3",
			       "--report", json_report };
	const char **argv = check_argv(state, ours, ARRAY_SIZE(ours));

	struct capture cap = { 0 };
	struct spawn_child child = {
		.argv = (char *const *)argv,
		.extra_fd = 3,
		.die_with_parent = true, /* SIGTERM ends this process: the run goes with it */
		.exec = exec_unblocked,
		.on_data = on_data,
		.arg = &cap,
	};
	double start = monotonic_seconds();
	pthread_mutex_lock(&state->lock);
	state->running = true;
	state->run_started = start;
	pthread_mutex_unlock(&state->lock);
	spawn_run(&child, 1, start + state->run_limit + SERVE_KILL_GRACE);
	pthread_mutex_lock(&state->lock);
	state->running = false;
	pthread_mutex_unlock(&state->lock);

	run->seconds = monotonic_seconds() - start;
	run->killed = child.killed;
	run->exit_code = child.killed ? -1 : child.exit_code;
	snprintf(run->start_error, sizeof(run->start_error), "%s", child.error);
	run->text = taken(&cap.streams[SPAWN_OUT]);
	run->errors = taken(&cap.streams[SPAWN_ERR]);
	run->prom = taken(&cap.streams[SPAWN_EXTRA]);
	run->json = read_memfd(json_fd, &cap.overflow);
	close(json_fd);
	if (cap.overflow && !run->start_error[0])
		snprintf(run->start_error, sizeof(run->start_error),
			 "the check run wrote more than %zu MiB of reports: ignored", OUTPUT_MAX >> 20);
	free(argv);
}

void check_run_release(struct check_run *run)
{
	free(run->text);
	free(run->json);
	free(run->prom);
	free(run->errors);
	memset(run, 0, sizeof(*run));
}
