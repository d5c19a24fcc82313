/* Starts probe children, enforces the deadline with poll(), kills the whole
 * process group, reaps, and classifies: "hung in stage sync on 0000:03:00.0
 * for 10.0 s (killed)", "crashed with SIGSEGV in stage init", "exited 3 in
 * stage module: ...". */
#include "probe.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/sandbox.h"
#include "../lib/spawn.h"
#include "../lib/util.h"
#include "probe_plan.h"
#include "protocol.h"

#define OUTPUT_KEEP    8192
#define LINE_MAX_BYTES (1u << 20)

/* One probe child: its spawn (src/lib/spawn.h), the protocol line being
 * assembled, the tail of its output, and when it entered its stage. */
struct child {
	struct spawn_child sp;
	struct probe_run *run;
	struct strbuf line, out;
	double stage_start;
	char *bufs[6];
	char **argv, **env;
};

static char **child_env(const struct probe_plan *plan)
{
	size_t n = 0;
	for (char **e = plan->env; e && *e; e++)
		n++;
	char **env = xcalloc(n + 2, sizeof(*env));
	size_t k = 0;
	for (char **e = plan->env; e && *e; e++)
		if (!str_starts_with(*e, "ZES_ENABLE_SYSMAN="))
			env[k++] = *e;
	/* Sysman through ze device handles needs it before zeInit (loader 1.8) */
	env[k++] = "ZES_ENABLE_SYSMAN=1";
	env[k] = NULL;
	return env;
}

static char **child_argv(const struct probe_plan *plan, const struct probe_request *r, char *buf[6])
{
	buf[0] = xasprintf("%d", r->device);
	buf[1] = xasprintf("%zu", r->work_items ? r->work_items : (size_t)1 << 20);
	buf[2] = xasprintf("%.3f", r->sync_timeout_s > 0 ? r->sync_timeout_s : 10.0);
	char **argv = xcalloc(26, sizeof(*argv)); /* 23 at most, below */
	size_t k = 0;
	argv[k++] = (char *)plan->self_exe;
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
	if (plan->sandbox)
		argv[k++] = "--sandbox";
	argv[k++] = "--sync-timeout";
	argv[k++] = buf[2];
	if (r->cache_dir) {
		argv[k++] = "--cache-dir";
		argv[k++] = (char *)r->cache_dir;
	}
	if (r->library) {
		argv[k++] = "--library";
		argv[k++] = (char *)r->library;
	}
	argv[k] = NULL;
	return argv;
}

static void handle_line(struct child *c, const char *text)
{
	struct probe_line l;
	probe_parse_line(text, &l);
	if (l.kind == PROBE_LINE_STAGE) {
		snprintf(c->run->stage, sizeof(c->run->stage), "%s", l.stage);
		snprintf(c->run->device, sizeof(c->run->device), "%s", l.device);
		c->stage_start = monotonic_seconds();
	} else if (l.kind == PROBE_LINE_RESULT) {
		json_decref(c->run->result);
		c->run->result = l.result;
	} else if (l.kind == PROBE_LINE_ENUMERATED) {
		json_decref(c->run->enumerated);
		c->run->enumerated = l.result;
	}
}

/* The protocol pipe is split into lines (each at most LINE_MAX_BYTES); the
 * output pipe keeps its last OUTPUT_KEEP bytes. */
static void on_data(void *arg, enum spawn_stream stream, const char *buf, size_t n)
{
	struct child *c = arg;
	if (stream == SPAWN_OUT) {
		sb_add(&c->out, buf, n);
		if (c->out.len > 2 * OUTPUT_KEEP) { /* keep the tail */
			memmove(c->out.buf, c->out.buf + c->out.len - OUTPUT_KEEP, OUTPUT_KEEP + 1);
			c->out.len = OUTPUT_KEEP;
		}
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (buf[i] != '\n') {
			if (c->line.len < LINE_MAX_BYTES)
				sb_add(&c->line, &buf[i], 1);
			continue;
		}
		if (c->line.len) {
			handle_line(c, c->line.buf);
			c->line.len = 0;
			c->line.buf[0] = '\0';
		}
	}
}

static int exec_self(char *const argv[], char *const envp[])
{
	/* the one execve the sandbox allows: this binary, by its fixed path */
	int rc = sandbox_exec_self(argv, envp);
	if (errno == ENOENT) { /* in the child after fork: a fixed text, no strerror */
		static const char msg[] = "gpugate probe: /proc/self/exe is missing (/proc is not mounted; every "
					  "container runtime mounts it): cannot start the probe\n";
		ssize_t ignored = write(2, msg, sizeof(msg) - 1);
		(void)ignored;
	}
	return rc;
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
		char took[32];
		human_seconds(run->stage_seconds, took, sizeof(took));
		run->verdict = xasprintf("hung %s for %s (killed)", where, took);
		return;
	}
	if (run->signal) {
		const char *name = sigabbrev_np(run->signal);
		run->verdict = name ? xasprintf("crashed with SIG%s %s", name, where)
				    : xasprintf("crashed with signal %d %s", run->signal, where);
		return;
	}
	if (!run->result) {
		/* what the child said before it ended (exec_self's /proc/self/exe
		 * line, a loader's complaint): its first line, so the summary says why */
		const char *out = run->output ? run->output : "";
		out += strspn(out, "\n");
		int n = (int)strcspn(out, "\n");
		if (n)
			run->verdict = xasprintf("exited %d %s without a result: %.*s", run->exit_code, where,
						 n > 300 ? 300 : n, out);
		else
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
	run->verdict =
		message ? xasprintf("exited %d %s: %s (%s)", run->exit_code, where, error ? error : "failed", message)
			: xasprintf("exited %d %s: %s", run->exit_code, where, error ? error : "failed");
}

void probe_run_all(const struct probe_plan *plan, const struct probe_request *reqs, struct probe_run *runs, size_t n)
{
	struct child *kids = xcalloc(n, sizeof(*kids));
	struct spawn_child *sp = xcalloc(n, sizeof(*sp));
	for (size_t i = 0; i < n; i++) {
		memset(&runs[i], 0, sizeof(runs[i]));
		runs[i].exit_code = -1;
		struct child *c = &kids[i];
		c->run = &runs[i];
		c->argv = child_argv(plan, &reqs[i], c->bufs);
		c->env = child_env(plan);
		sp[i] = (struct spawn_child){
			.argv = c->argv,
			.envp = c->env,
			.merge_stderr = true,
			.extra_fd = 3, /* the probe's --fd */
			/* die with the parent: the forking thread lives as long as the probe */
			.die_with_parent = true,
			.exec = exec_self,
			.on_data = on_data,
			.arg = c,
		};
		c->stage_start = monotonic_seconds();
	}
	spawn_run(sp, n, plan->deadline);
	for (size_t i = 0; i < n; i++) {
		struct child *c = &kids[i];
		struct probe_run *run = &runs[i];
		if (sp[i].pid <= 0) {
			run->verdict = xasprintf("could not start the probe child: %s", sp[i].error);
			run->failed_stage = xstrdup("loader");
			run->output = xstrdup("");
		} else {
			run->killed = sp[i].killed;
			run->stage_seconds = sp[i].end - c->stage_start;
			if (!run->killed) {
				run->exit_code = sp[i].exit_code;
				run->signal = sp[i].signal;
			}
			run->seconds = sp[i].end - sp[i].start;
			run->output = sb_detach(&c->out);
			text_sanitize(run->output);
			classify(run);
		}
		sb_release(&c->line);
		sb_release(&c->out);
		for (int b = 0; b < 6; b++)
			free(c->bufs[b]);
		free(c->argv);
		free(c->env);
	}
	free(sp);
	free(kids);
}

void probe_run_release(struct probe_run *run)
{
	json_decref(run->result);
	json_decref(run->enumerated);
	free(run->output);
	free(run->verdict);
	free(run->failed_stage);
	memset(run, 0, sizeof(*run));
}
