/* Reporters: one file per format, each turning the same run into text. */
#ifndef GPUGATE_REPORT_H
#define GPUGATE_REPORT_H

#include <stdbool.h>

#include "../lib/util.h"
#include "../runner.h"

struct report_opts {
	bool color;       /* ANSI colour (text only; a TTY that did not ask for NO_COLOR) */
};

typedef void (*report_fn)(struct strbuf *out, const struct run *run, const struct report_opts *opts);

void report_text(struct strbuf *out, const struct run *run, const struct report_opts *opts);
void report_json(struct strbuf *out, const struct run *run, const struct report_opts *opts);
void report_junit(struct strbuf *out, const struct run *run, const struct report_opts *opts);
void report_prom(struct strbuf *out, const struct run *run, const struct report_opts *opts);
void report_github(struct strbuf *out, const struct run *run, const struct report_opts *opts);
void report_nfd(struct strbuf *out, const struct run *run, const struct report_opts *opts);

/* NULL when the format is unknown. */
report_fn report_lookup(const char *format);
/* "text|json|junit|prom|github|nfd" */
const char *report_format_names(void);

/* Writes to stdout (colour when it is a TTY). Returns 0 or -errno. */
int report_to_stdout(const char *format, const struct run *run);
/* Writes to a temp file beside path and renames it over path, so that a
 * collector (node_exporter, a CI uploader) never reads half a report. */
int report_to_file(const char *format, const struct run *run, const char *path);

#endif
