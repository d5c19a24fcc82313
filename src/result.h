/* One check's outcome. A check fills exactly one result; reporters only read it. */
#ifndef GPUGATE_RESULT_H
#define GPUGATE_RESULT_H

#include <jansson.h>

enum status { STATUS_PASS = 0, STATUS_SKIP, STATUS_WARN, STATUS_FAIL };

struct result {
	const char *id; /* the check's id, owned by the registry */
	enum status status;
	char *summary;     /* one line */
	char *remediation; /* how to fix it; lines joined with '\n'; may be NULL */
	double duration_ms;
	json_t *details;      /* the check's facts: an object or NULL (checks/report.schema.json, per check id) */
	json_t *findings;     /* array of {code, status, text} objects, or NULL: result_finding */
	char *blocked_by;     /* the check this one waited on, when it could not run (result_blocked) */
	size_t worst_finding; /* 1 + index of the first finding of the worst status; 0: none yet */
	enum status worst_status;
};

const char *status_name(enum status s);

/* Sets the status and the one-line summary (replacing any earlier one). */
void result_set(struct result *r, enum status s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Appends one remediation line; the same line is never added twice. */
void result_remedy(struct result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The check could not run because check `cause` failed: it is skipped, its
 * summary "not reached: CAUSE failed", and the verdict comes from the cause.
 * The runner follows chains to the root cause, and turns the result into a
 * failure when the cause did not fail in this run (not selected, or passed),
 * so that a blocked check never hides a problem. `cause` may list
 * alternatives, "runtime.smoke,runtime.devices": the first that failed. */
void result_blocked(struct result *r, const char *cause);
/* Records one problem or observation, {code, status, text}, and raises the
 * status to s when s is worse than the current one. code is stable across
 * releases and wordings ("packages.installed.missing": the check id, a dot,
 * what was found); tests and `gpugate diff` match it, people read the text.
 * checks/report.schema.json lists the codes. */
void result_finding(struct result *r, enum status s, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* details as an object, created on first use. */
json_t *result_details(struct result *r);
/* Number of findings recorded so far. */
size_t result_finding_count(const struct result *r);
/* The text of finding i (0-based, i < result_finding_count). */
const char *result_finding_text(const struct result *r, size_t i);
/* The text of the first finding of the worst status recorded, or NULL when
 * there is none: the summary of a check that failed on one of several GPUs
 * names that GPU's failure, not the first GPU's pass. */
const char *result_worst_finding(const struct result *r);
/* A JSON string from any bytes (invalid UTF-8 replaced): never NULL. */
json_t *json_text(const char *s);
/* json_text(s), or null for NULL (a value the run did not have). */
json_t *json_text_or_null(const char *s);
void result_release(struct result *r);

#endif
