#include "result.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"

const char *status_name(enum status s)
{
	switch (s) {
	case STATUS_PASS:
		return "pass";
	case STATUS_SKIP:
		return "skip";
	case STATUS_WARN:
		return "warn";
	case STATUS_FAIL:
		return "fail";
	}
	return "fail";
}

/* xvasprintf in one formatting pass where the text fits a line's buffer
 * (every summary but a long list): a result of each check, every run. */
static char *format(const char *fmt, va_list ap)
{
	char line[1024];
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	char *out;
	if (n < 0) {
		out = xstrdup("");
	} else if ((size_t)n < sizeof(line)) {
		out = xstrndup(line, (size_t)n);
	} else {
		out = xmalloc((size_t)n + 1);
		vsnprintf(out, (size_t)n + 1, fmt, again);
	}
	va_end(again);
	return out;
}

void result_set(struct result *r, enum status s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	free(r->summary);
	r->summary = format(fmt, ap);
	va_end(ap);
	text_sanitize(r->summary);
	/* a summary is one line */
	for (char *p = r->summary; *p; p++)
		if (*p == '\n')
			*p = ' ';
	r->status = s;
}

void result_remedy(struct result *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *line = format(fmt, ap);
	va_end(ap);
	text_sanitize(line);
	if (r->remediation) {
		/* skip a line that is already there, whole */
		size_t n = strlen(line);
		for (const char *p = r->remediation; p; p = strchr(p, '\n')) {
			if (*p == '\n')
				p++;
			if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0')) {
				free(line);
				return;
			}
		}
		char *joined = xasprintf("%s\n%s", r->remediation, line);
		free(r->remediation);
		free(line);
		r->remediation = joined;
	} else {
		r->remediation = line;
	}
}

void result_blocked(struct result *r, const char *cause)
{
	free(r->blocked_by);
	r->blocked_by = xstrdup(cause);
	/* the runner names the root cause once the run is over (resolve_blocked) */
	size_t first = strcspn(cause, ",");
	result_set(r, STATUS_SKIP, "not reached: %.*s failed", (int)first, cause);
}

json_t *json_text(const char *s)
{
	if (!s)
		s = "";
	/* printable ASCII, most of every report, is what text_sanitize leaves
	 * alone: no copy; either way the text is valid UTF-8, which jansson
	 * need not check again */
	const char *p = s;
	while (*p >= 0x20 && *p < 0x7f)
		p++;
	if (!*p)
		return json_stringn_nocheck(s, (size_t)(p - s));
	char *copy = xstrdup(s);
	text_sanitize(copy);
	json_t *j = json_stringn_nocheck(copy, strlen(copy));
	free(copy);
	return j;
}

json_t *json_text_or_null(const char *s)
{
	return s ? json_text(s) : json_null();
}

json_t *result_details(struct result *r)
{
	if (!r->details)
		r->details = json_object();
	return r->details;
}

void result_finding(struct result *r, enum status s, const char *code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text = format(fmt, ap);
	va_end(ap);
	text_sanitize(text);
	if (!r->findings)
		r->findings = json_array();
	json_t *f = json_object();
	/* the keys and status words are ASCII constants, text_sanitize left
	 * valid UTF-8: no second check by jansson */
	json_object_set_new_nocheck(f, "code", json_string(code));
	json_object_set_new_nocheck(f, "status", json_string_nocheck(status_name(s)));
	json_object_set_new_nocheck(f, "text", json_string_nocheck(text));
	json_array_append_new(r->findings, f);
	free(text);
	if (r->worst_finding == 0 || s > r->worst_status) {
		r->worst_finding = json_array_size(r->findings);
		r->worst_status = s;
	}
	if (s > r->status)
		r->status = s;
}

size_t result_finding_count(const struct result *r)
{
	return r->findings ? json_array_size(r->findings) : 0;
}

const char *result_finding_text(const struct result *r, size_t i)
{
	return json_string_value(json_object_get(json_array_get(r->findings, i), "text"));
}

const char *result_worst_finding(const struct result *r)
{
	return r->worst_finding ? result_finding_text(r, r->worst_finding - 1) : NULL;
}

void result_release(struct result *r)
{
	free(r->summary);
	free(r->remediation);
	free(r->blocked_by);
	if (r->details)
		json_decref(r->details);
	if (r->findings)
		json_decref(r->findings);
	r->summary = r->remediation = r->blocked_by = NULL;
	r->details = r->findings = NULL;
	r->worst_finding = 0;
}
