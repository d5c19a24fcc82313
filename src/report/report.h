/* Reporters: one file per format, each turning the same run into text. */
#ifndef GPUGATE_REPORT_H
#define GPUGATE_REPORT_H

#include <stdbool.h>

#include "../lib/escape.h"
#include "../lib/util.h"
#include "../runner.h"

struct report_opts {
	bool color;             /* ANSI colour (text only; --color, NO_COLOR, a TTY) */
	bool quiet;             /* text: the verdict line only */
	bool verbose;           /* text: the findings of passing checks too */
	const char *nfd_prefix; /* nfd: label namespace with its '/'; REPORT_NFD_PREFIX when NULL */
	double nfd_expiry;      /* nfd: seconds the labels stay valid; 0: reports.nfd_expiry's default */
	/* Why a report of a passing run could not be written (the exit is then
	 * not 0): the text verdict line says it instead of HEALTHY. NULL: none. */
	const char *undelivered;
};

#define REPORT_NFD_PREFIX "feature.node.kubernetes.io/"

/* The verdict line's budget: node-problem-detector keeps 80 bytes of a
 * custom plugin's output (max_output_length; pkg/custompluginmonitor/types). */
#define REPORT_VERDICT_MAX 80

typedef void (*report_fn)(struct strbuf *out, const struct run *run, const struct report_opts *opts);

void report_text(struct strbuf *out, const struct run *run, const struct report_opts *opts);
void report_json(struct strbuf *out, const struct run *run, const struct report_opts *opts);
void report_junit(struct strbuf *out, const struct run *run, const struct report_opts *opts);
void report_prom(struct strbuf *out, const struct run *run, const struct report_opts *opts);
void report_github(struct strbuf *out, const struct run *run, const struct report_opts *opts);
void report_nfd(struct strbuf *out, const struct run *run, const struct report_opts *opts);

/* "gpugate: HEALTHY (profile P): counts" or, unhealthy, "gpugate: UNHEALTHY
 * (profile P): ID, ID +N more" in at most REPORT_VERDICT_MAX bytes (colour
 * codes aside), then a newline. */
void report_verdict_line(struct strbuf *out, const struct run *run, const struct report_opts *opts);
/* True when finding f says what r's summary says (printed once, not twice). */
bool report_finding_repeats_summary(const struct result *r, const char *f);

/* "sha256:HEX" of the spec in canonical form (spec_digest.c), or NULL when
 * there is no spec or libcrypto cannot be loaded; caller frees. */
char *report_spec_digest(const struct spec *spec);
/* Whether prefix ("example.com/") can namespace an NFD label; why says not. */
bool report_nfd_prefix_valid(const char *prefix, char *why, size_t why_size);
/* seconds since the epoch as "2026-11-25T12:00:00Z" */
void report_iso8601(double seconds, char out[32]);

/* The Markdown job summary for $GITHUB_STEP_SUMMARY (github.c). */
void report_github_summary(struct strbuf *out, const struct run *run);

/* NULL when the format is unknown. */
report_fn report_lookup(const char *format);
/* "text|json|junit|prom|github|nfd" */
const char *report_format_names(void);

/* Writes to stdout. Returns 0 or -errno (-EPIPE when the reader left). */
int report_to_stdout(const char *format, const struct run *run, const struct report_opts *opts);
/* Writes to a temp file beside path and renames it over path, so that a
 * collector (node_exporter, a CI uploader) never reads half a report.
 * Returns 0 or -errno, with err one sentence naming the file and the
 * problem (lib/safe_io.h). */
int report_to_file(const char *format, const struct run *run, const char *path, const struct report_opts *opts,
		   char *err, size_t errsize);

/* Appends text to path (created 0644 when missing, never through a
 * symlink): $GITHUB_STEP_SUMMARY. Returns 0 or -errno. */
int report_append_file(const char *path, const char *text, size_t len);

#endif
