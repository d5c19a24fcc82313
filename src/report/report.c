#include "report.h"

#include "lib/safe_io.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct {
	const char *name;
	report_fn fn;
} formats[] = {
	{ "text", report_text },
	{ "json", report_json },
	{ "junit", report_junit },
	{ "prom", report_prom },
	{ "github", report_github },
	{ "nfd", report_nfd },
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

int report_to_stdout(const char *format, const struct run *run)
{
	report_fn fn = report_lookup(format);
	if (!fn)
		return -EINVAL;
	const char *no_color = getenv("NO_COLOR");
	struct report_opts opts = { .color = isatty(1) && !(no_color && *no_color) };
	struct strbuf sb = STRBUF_INIT;
	fn(&sb, run, &opts);
	size_t done = 0;
	int err = 0;
	while (done < sb.len) {
		ssize_t n = write(1, sb.buf + done, sb.len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = -errno;
			break;
		}
		done += (size_t)n;
	}
	sb_release(&sb);
	return err;
}

int report_to_file(const char *format, const struct run *run, const char *path)
{
	report_fn fn = report_lookup(format);
	if (!fn)
		return -EINVAL;
	struct report_opts opts = { .color = false };
	struct strbuf sb = STRBUF_INIT;
	fn(&sb, run, &opts);
	/* a device or FIFO (/dev/null, /dev/stdout) is written through, a file
	 * replaced atomically: lib/safe_io.h */
	int rc = safe_write_file(path, sb.buf ? sb.buf : "", sb.len, 0644, 0, NULL, 0);
	sb_release(&sb);
	return rc;
}
