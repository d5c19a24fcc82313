/* The human report: the verdict line first (it names the failed checks and
 * fits 80 bytes, what node-problem-detector keeps of a plugin's output), the
 * counts, then one line per check and for each problem what was found and
 * how to fix it. Everything from outside goes through escape_add. */
#include <stdlib.h>
#include <string.h>

#include "report.h"

static const char *const labels[] = { "PASS", "SKIP", "WARN", "FAIL" };
static const char *const colors[] = { "\033[32m", "\033[2m", "\033[33m", "\033[31m" };

/* Each line of a multi-line text (remediation), prefixed and escaped. */
static void add_indented(struct strbuf *out, const char *prefix, const char *text)
{
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		sb_puts(out, prefix);
		escape_add_n(out, p, n, ESCAPE_LINE);
		sb_puts(out, "\n");
		p += n + (nl ? 1 : 0);
	}
}

static void add_counts(struct strbuf *out, const struct run *run)
{
	size_t c[4];
	run_counts(run, c);
	sb_printf(out, "%zu passed, %zu warnings, %zu failed, %zu skipped in %.0f ms", c[STATUS_PASS], c[STATUS_WARN],
		  c[STATUS_FAIL], c[STATUS_SKIP], run->duration_ms);
}

void report_verdict_line(struct strbuf *out, const struct run *run, const struct report_opts *opts)
{
	bool healthy = run_exit_code(run) == 0;
	size_t start = out->len;
	if (opts->color)
		sb_puts(out, healthy ? "\033[1;32m" : "\033[1;31m");
	sb_printf(out, "gpugate: %s", healthy ? "HEALTHY" : "UNHEALTHY");
	if (opts->color)
		sb_puts(out, "\033[0m");
	size_t colour_bytes = opts->color ? strlen("\033[1;32m\033[0m") : 0;
	sb_puts(out, " (profile ");
	escape_add(out, run->profile ? run->profile : "custom", ESCAPE_LINE);
	sb_puts(out, "): ");
	if (healthy) {
		add_counts(out, run);
		sb_puts(out, "\n");
		return;
	}
	/* The failed checks' ids, as many as fit 80 bytes with "+N more". */
	size_t failed = 0;
	for (size_t i = 0; i < run->count; i++)
		failed += run->results[i].status == STATUS_FAIL;
	size_t shown = 0;
	for (size_t i = 0; i < run->count; i++) {
		const struct result *r = &run->results[i];
		if (r->status != STATUS_FAIL)
			continue;
		char more[32] = "";
		if (failed - shown - 1)
			snprintf(more, sizeof(more), " +%zu more", failed - shown - 1);
		size_t used = out->len - start - colour_bytes;
		if (shown && used + 2 + strlen(r->id) + strlen(more) > REPORT_VERDICT_MAX) {
			sb_printf(out, " +%zu more", failed - shown);
			break;
		}
		sb_printf(out, "%s%s", shown ? ", " : "", r->id);
		shown++;
	}
	sb_puts(out, "\n");
}

/* --verbose, for a passing check without findings: what it looked at, one
 * line per detail (compact JSON, cut at 200 bytes). */
static void add_details(struct strbuf *out, json_t *details)
{
	const char *key;
	json_t *value;
	json_object_foreach(details, key, value)
	{
		char *text = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);
		size_t n = text ? strlen(text) : 0;
		sb_puts(out, "      ");
		escape_add(out, key, ESCAPE_LINE);
		sb_puts(out, ": ");
		escape_add_n(out, text ? text : "", n > 200 ? 200 : n, ESCAPE_LINE);
		sb_puts(out, n > 200 ? " ...\n" : "\n");
		free(text);
	}
}

/* full: every check with its findings; otherwise only the problems, briefly
 * (used when the full report would not fit Docker's 4096 bytes). */
static void add_checks(struct strbuf *out, const struct run *run, const struct report_opts *opts, bool full)
{
	for (size_t i = 0; i < run->count; i++) {
		const struct result *r = &run->results[i];
		if (!full && (r->status == STATUS_PASS || r->status == STATUS_SKIP))
			continue;
		if (opts->color)
			sb_puts(out, colors[r->status]);
		sb_puts(out, labels[r->status]);
		if (opts->color)
			sb_puts(out, "\033[0m");
		sb_printf(out, "  %s: ", r->id);
		escape_add(out, r->summary, ESCAPE_LINE);
		sb_puts(out, "\n");
		bool problem = r->status == STATUS_WARN || r->status == STATUS_FAIL;
		if (!problem && !(opts->verbose && r->status == STATUS_PASS))
			continue;
		json_t *findings = r->details ? json_object_get(r->details, "findings") : NULL;
		size_t n = json_array_size(findings);
		size_t shown = full ? n : (n > 3 ? 3 : n);
		for (size_t k = 0; k < shown; k++) {
			const char *f = json_string_value(json_array_get(findings, k));
			if (report_finding_repeats_summary(r, f))
				continue; /* each summary is printed once */
			add_indented(out, "      - ", f ? f : "");
		}
		if (shown < n)
			sb_printf(out, "      - ... and %zu more\n", n - shown);
		if (!problem && n == 0 && r->details)
			add_details(out, r->details);
		if (r->remediation && problem)
			add_indented(out, "      fix: ", r->remediation);
	}
}

void report_text(struct strbuf *out, const struct run *run, const struct report_opts *opts)
{
	size_t start = out->len;
	report_verdict_line(out, run, opts);
	if (opts->quiet)
		return;
	if (run_exit_code(run) != 0) {
		add_counts(out, run);
		sb_puts(out, "\n");
	}
	size_t header = out->len;
	add_checks(out, run, opts, true);
	if (!run->text_limit || out->len - start <= run->text_limit)
		return;
	/* Too long for the consumer (Docker keeps 4096 bytes): problems only. */
	out->len = header;
	out->buf[header] = '\0';
	add_checks(out, run, opts, false);
	if (out->len - start <= run->text_limit)
		return;
	static const char cut[] = "... (report cut to fit; run gpugate check --format text for all)\n";
	size_t keep = run->text_limit - (sizeof(cut) - 1);
	while (keep > 0 && out->buf[start + keep - 1] != '\n')
		keep--;
	out->len = start + keep;
	sb_puts(out, cut);
}
