/* Starts probe children, enforces the deadline with poll(), kills the whole
 * process group, reaps, and classifies: "hung in stage sync on 0000:03:00.0
 * for 10.0 s (killed)", "crashed with SIGSEGV in stage init", "exited 3 in
 * stage module: ...". */
#include "../lib/sandbox.h"
#include "probe.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/util.h"
#include "protocol.h"

#define OUTPUT_KEEP 8192
#define LINE_MAX_BYTES (1u << 20)

struct child {
	pid_t pid;
	int proto_fd, out_fd; /* -1 once at EOF */
	struct strbuf line, out;
	double start, stage_start;
	bool exited;
};

static char **child_env(const struct context *ctx)
{
	size_t n = 0;
	for (char **e = ctx->env; e && *e; e++)
		n++;
	char **env = xcalloc(n + 2, sizeof(*env));
	size_t k = 0;
	for (char **e = ctx->env; e && *e; e++)
		if (!str_starts_with(*e, "ZES_ENABLE_SYSMAN="))
			env[k++] = *e;
	/* Sysman through ze device handles needs it before zeInit (loader 1.8) */
	env[k++] = "ZES_ENABLE_SYSMAN=1";
	env[k] = NULL;
	return env;
}

static char **child_argv(const struct context *ctx, const struct probe_request *r, char *buf[6])
{
	buf[0] = xasprintf("%d", r->device);
	buf[1] = xasprintf("%zu", r->work_items ? r->work_items : (size_t)1 << 20);
	buf[2] = xasprintf("%.3f", r->sync_timeout_s > 0 ? r->sync_timeout_s : 10.0);
	char **argv = xcalloc(24, sizeof(*argv)); /* 21 at most, below */
	size_t k = 0;
	argv[k++] = (char *)ctx_self_exe(ctx);
	argv[k++] = "probe";
	argv[k++] = "--backend";
	argv[k++] = (char *)r->backend;
	argv[k++] = "--fd";
	argv[k++] = "3";
	if (r->device >= 0) {
		argv[k++] = "--device";
		argv[k++] = buf[0];
	}
	if (r->smoke)
		argv[k++] = "--smoke";
	if (r->telemetry)
		argv[k++] = "--telemetry";
	if (r->processes)
		argv[k++] = "--processes";
	if (r->perf) {
		buf[3] = xasprintf("%zu", r->perf_bytes ? r->perf_bytes : (size_t)256 << 20);
		argv[k++] = "--perf-bytes";
		argv[k++] = buf[3];
	}
	argv[k++] = "--work-items";
	argv[k++] = buf[1];
	if (ctx->sandbox_filters > 0)
		argv[k++] = "--sandbox";
	argv[k++] = "--sync-timeout";
	argv[k++] = buf[2];
	if (r->cache_dir) {
		argv[k++] = "--cache-dir";
		argv[k++] = (char *)r->cache_dir;
	}
	argv[k] = NULL;
	return argv;
}

/* fork + exec in a new process group; only async-signal-safe calls after fork. */
static int spawn(const struct context *ctx, const struct probe_request *r, struct child *c, char *err, size_t errsize)
{
	int proto[2], out[2];
	if (pipe2(proto, O_CLOEXEC) < 0) {
		snprintf(err, errsize, "pipe: %s", strerror(errno));
		return -1;
	}
	if (pipe2(out, O_CLOEXEC) < 0) {
		snprintf(err, errsize, "pipe: %s", strerror(errno));
		close(proto[0]);
		close(proto[1]);
		return -1;
	}
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	char *bufs[6] = { 0 };
	char **argv = child_argv(ctx, r, bufs);
	char **env = child_env(ctx);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		/* die with the parent: the forking thread lives as long as the probe */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		if (devnull >= 0)
			dup2(devnull, 0);
		dup2(out[1], 1);
		dup2(out[1], 2);
		dup2(proto[1], 3); /* dup2 clears O_CLOEXEC on the new descriptor */
		/* the one execve the sandbox allows: this binary, by its fixed path */
		sandbox_exec_self(argv, env);
		/* only async-signal-safe calls here: fixed texts, no strerror */
		bool no_proc = errno == ENOENT;
		static const char msg[] = "gpugate probe: cannot execute the gpugate binary through /proc/self/exe";
		static const char why[] = ": /proc/self/exe is missing (/proc is not mounted; mount it, as every container runtime does)\n";
		static const char other[] = "\n";
		ssize_t ignored = write(2, msg, sizeof(msg) - 1);
		ignored = no_proc ? write(2, why, sizeof(why) - 1) : write(2, other, sizeof(other) - 1);
		(void)ignored;
		_exit(127);
	}
	int saved = errno;
	if (pid > 0)
		setpgid(pid, pid); /* also here, so a kill right after fork finds the group */
	if (devnull >= 0)
		close(devnull);
	close(proto[1]);
	close(out[1]);
	for (int i = 0; i < 6; i++)
		free(bufs[i]);
	free(argv);
	free(env);
	if (pid < 0) {
		close(proto[0]);
		close(out[0]);
		snprintf(err, errsize, "fork: %s", strerror(saved));
		return -1;
	}
	c->pid = pid;
	c->proto_fd = proto[0];
	c->out_fd = out[0];
	fcntl(c->proto_fd, F_SETFL, O_NONBLOCK);
	fcntl(c->out_fd, F_SETFL, O_NONBLOCK);
	return 0;
}

static void handle_line(struct child *c, struct probe_run *run, const char *text)
{
	struct probe_line l;
	probe_parse_line(text, &l);
	if (l.kind == PROBE_LINE_STAGE) {
		snprintf(run->stage, sizeof(run->stage), "%s", l.stage);
		snprintf(run->device, sizeof(run->device), "%s", l.device);
		c->stage_start = monotonic_seconds();
	} else if (l.kind == PROBE_LINE_RESULT) {
		json_decref(run->result);
		run->result = l.result;
	}
}

static void read_proto(struct child *c, struct probe_run *run)
{
	char buf[4096];
	for (;;) {
		ssize_t n = read(c->proto_fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			close(c->proto_fd);
			c->proto_fd = -1;
			return;
		}
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (c->line.len < LINE_MAX_BYTES)
					sb_add(&c->line, &buf[i], 1);
				continue;
			}
			if (c->line.len) {
				handle_line(c, run, c->line.buf);
				c->line.len = 0;
				c->line.buf[0] = '\0';
			}
		}
	}
}

static void read_output(struct child *c)
{
	char buf[4096];
	for (;;) {
		ssize_t n = read(c->out_fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			close(c->out_fd);
			c->out_fd = -1;
			return;
		}
		sb_add(&c->out, buf, (size_t)n);
		if (c->out.len > 2 * OUTPUT_KEEP) { /* keep the tail */
			memmove(c->out.buf, c->out.buf + c->out.len - OUTPUT_KEEP, OUTPUT_KEEP + 1);
			c->out.len = OUTPUT_KEEP;
		}
	}
}

static bool child_running(const struct child *c)
{
	return c->pid > 0 && !c->exited && (c->proto_fd >= 0 || c->out_fd >= 0);
}

/* True once the child has exited (not reaped: WNOWAIT keeps its group alive
 * for the kill that follows). */
static bool child_exited(pid_t pid)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

static const char *stage_text(const struct probe_run *run, char *buf, size_t size)
{
	if (!run->stage[0])
		snprintf(buf, size, "before its first stage");
	else if (run->device[0])
		snprintf(buf, size, "in stage %s on %s", run->stage, run->device);
	else
		snprintf(buf, size, "in stage %s", run->stage);
	return buf;
}

static void classify(struct probe_run *run)
{
	char where[128];
	stage_text(run, where, sizeof(where));
	const char *rstage = run->result ? json_string_value(json_object_get(run->result, "stage")) : NULL;
	run->failed_stage = xstrdup(rstage ? rstage : run->stage[0] ? run->stage : "loader");
	if (run->killed) {
		run->verdict = xasprintf("hung %s for %.1f s (killed)", where, run->stage_seconds);
		return;
	}
	if (run->signal) {
		const char *name = sigabbrev_np(run->signal);
		run->verdict = name ? xasprintf("crashed with SIG%s %s", name, where)
				    : xasprintf("crashed with signal %d %s", run->signal, where);
		return;
	}
	if (!run->result) {
		run->verdict = xasprintf("exited %d %s without a result", run->exit_code, where);
		return;
	}
	if (json_is_true(json_object_get(run->result, "ok")) && run->exit_code == 0) {
		free(run->failed_stage);
		run->failed_stage = NULL;
		return;
	}
	const char *error = json_string_value(json_object_get(run->result, "error"));
	const char *message = json_string_value(json_object_get(run->result, "message"));
	if (rstage) { /* the result names the stage; the device is the last one seen */
		if (run->device[0] && strcmp(rstage, "init") && strcmp(rstage, "loader") && strcmp(rstage, "drivers") &&
		    strcmp(rstage, "devices"))
			snprintf(where, sizeof(where), "in stage %s on %s", rstage, run->device);
		else
			snprintf(where, sizeof(where), "in stage %s", rstage);
	}
	run->verdict = message ? xasprintf("exited %d %s: %s (%s)", run->exit_code, where, error ? error : "failed", message)
			       : xasprintf("exited %d %s: %s", run->exit_code, where, error ? error : "failed");
}

void probe_run_all(const struct context *ctx, const struct probe_request *reqs, struct probe_run *runs, size_t n,
		   double deadline)
{
	struct child *kids = xcalloc(n, sizeof(*kids));
	struct pollfd *pfds = xcalloc(2 * n, sizeof(*pfds));
	for (size_t i = 0; i < n; i++) {
		memset(&runs[i], 0, sizeof(runs[i]));
		runs[i].exit_code = -1;
		kids[i].proto_fd = kids[i].out_fd = -1;
		kids[i].start = kids[i].stage_start = monotonic_seconds();
		char err[256];
		if (spawn(ctx, &reqs[i], &kids[i], err, sizeof(err)) < 0) {
			runs[i].verdict = xasprintf("could not start the probe child: %s", err);
			runs[i].failed_stage = xstrdup("loader");
			runs[i].output = xstrdup("");
		}
	}
	for (;;) {
		size_t np = 0, alive = 0;
		for (size_t i = 0; i < n; i++) {
			if (!child_running(&kids[i]))
				continue;
			alive++;
			if (kids[i].proto_fd >= 0)
				pfds[np++] = (struct pollfd){ .fd = kids[i].proto_fd, .events = POLLIN };
			if (kids[i].out_fd >= 0)
				pfds[np++] = (struct pollfd){ .fd = kids[i].out_fd, .events = POLLIN };
		}
		if (!alive)
			break;
		double left = deadline - monotonic_seconds();
		if (left <= 0)
			break;
		/* wake at least every 50 ms: a child that exits while a grandchild
		 * holds its pipes open gives no EOF */
		int ms = left > 0.05 ? 50 : (int)(left * 1e3) + 1;
		int rc = poll(pfds, np, ms);
		if (rc < 0 && errno != EINTR)
			break;
		for (size_t i = 0; i < n; i++) {
			if (!child_running(&kids[i]))
				continue;
			if (kids[i].proto_fd >= 0)
				read_proto(&kids[i], &runs[i]);
			if (kids[i].out_fd >= 0)
				read_output(&kids[i]);
			if (child_exited(kids[i].pid)) {
				kids[i].exited = true;
				if (kids[i].proto_fd >= 0)
					read_proto(&kids[i], &runs[i]);
			}
		}
	}
	double now = monotonic_seconds();
	for (size_t i = 0; i < n; i++) {
		struct child *c = &kids[i];
		if (c->pid <= 0)
			continue;
		if (!c->exited && (c->proto_fd >= 0 || c->out_fd >= 0) && !child_exited(c->pid)) {
			runs[i].killed = true;
			runs[i].stage_seconds = now - c->stage_start;
		}
		/* the whole group, always: no probe process survives the check */
		kill(-c->pid, SIGKILL);
		int status = 0;
		while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
			;
		if (c->proto_fd >= 0) {
			read_proto(c, &runs[i]);
			if (c->proto_fd >= 0)
				close(c->proto_fd);
		}
		if (c->out_fd >= 0) {
			read_output(c);
			if (c->out_fd >= 0)
				close(c->out_fd);
		}
		if (!runs[i].killed) {
			runs[i].stage_seconds = now - c->stage_start;
			if (WIFEXITED(status))
				runs[i].exit_code = WEXITSTATUS(status);
			else if (WIFSIGNALED(status))
				runs[i].signal = WTERMSIG(status);
		}
		runs[i].seconds = now - c->start;
		runs[i].output = sb_detach(&c->out);
		text_sanitize(runs[i].output);
		sb_release(&c->line);
		classify(&runs[i]);
	}
	free(kids);
	free(pfds);
}

void probe_run_release(struct probe_run *run)
{
	json_decref(run->result);
	free(run->output);
	free(run->verdict);
	free(run->failed_stage);
	memset(run, 0, sizeof(*run));
}
