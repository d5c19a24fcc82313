#include "report.h"

#include "lib/safe_io.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const struct {
	const char *name;
	report_fn fn;
} formats[] = {
	{ "text", report_text }, { "json", report_json },     { "junit", report_junit },
	{ "prom", report_prom }, { "github", report_github }, { "nfd", report_nfd },
};

report_fn report_lookup(const char *format)
{
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++)
		if (strcmp(formats[i].name, format) == 0)
			return formats[i].fn;
	return NULL;
}

const char *report_format_names(void)
{
	return "text|json|junit|prom|github|nfd";
}

bool report_finding_repeats_summary(const struct result *r, const char *f)
{
	return f && r->summary && strcmp(f, r->summary) == 0;
}

void report_iso8601(double seconds, char out[32])
{
	time_t t = (time_t)seconds;
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(out, 32, "1970-01-01T00:00:00Z");
}

/* Writes all of buf to fd 1. SIGPIPE is blocked on this thread meanwhile
 * (a write to a pipe raises it on the writing thread): a reader that left
 * (`gpugate check | head -1`) gives -EPIPE here instead of killing gpugate
 * before it writes its --report files and exits with its verdict. The
 * mask is restored before returning, so no child inherits it. */
static int write_stdout(const char *buf, size_t len)
{
	sigset_t pipe_set, old;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	int err = safe_write_all(STDOUT_FILENO, buf, len);
	if (err == -EPIPE) {
		/* the pending SIGPIPE is taken here, not delivered after the unblock */
		struct timespec zero = { 0, 0 };
		while (sigtimedwait(&pipe_set, NULL, &zero) == SIGPIPE)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}

int report_to_stdout(const char *format, const struct run *run, const struct report_opts *opts)
{
	report_fn fn = report_lookup(format);
	if (!fn)
		return -EINVAL;
	struct strbuf sb = STRBUF_INIT;
	fn(&sb, run, opts);
	int err = write_stdout(sb.buf, sb.len);
	sb_release(&sb);
	return err;
}

int report_to_file(const char *format, const struct run *run, const char *path, const struct report_opts *opts,
		   char *err, size_t errsize)
{
	report_fn fn = report_lookup(format);
	if (!fn) {
		snprintf(err, errsize, "%s: unknown report format '%s'", path, format);
		return -EINVAL;
	}
	struct report_opts file_opts = *opts;
	file_opts.color = false; /* a file is no terminal */
	file_opts.quiet = false;
	struct strbuf sb = STRBUF_INIT;
	fn(&sb, run, &file_opts);
	/* a device or FIFO (/dev/null, /dev/stdout) is written through, a file
	 * replaced atomically: lib/safe_io.h */
	int rc = safe_write_file(path, sb.buf, sb.len, 0644, 0, err, errsize);
	sb_release(&sb);
	return rc;
}

int report_append_file(const char *path, const char *text, size_t len)
{
	/* TODO(safe_io): the safety helper's src/lib/safe_io.h writer, once on
	 * main. Until then: appended in place (the GitHub runner creates the
	 * file and reads it after the step), never through a symlink. */
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	int err = safe_write_all(fd, text, len);
	if (close(fd) < 0 && !err)
		err = -errno;
	return err;
}
