/* The human report: the verdict and counts first, one line per check, and
 * for each problem what was found and how to fix it. */
#include <string.h>

#include "report.h"

static const char *const labels[] = { "PASS", "SKIP", "WARN", "FAIL" };
static const char *const colors[] = { "\033[32m", "\033[2m", "\033[33m", "\033[31m" };

static void add_indented(struct strbuf *out, const char *prefix, const char *text)
{
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		sb_puts(out, prefix);
		sb_add(out, p, n);
		sb_puts(out, "\n");
		p += n + (nl ? 1 : 0);
	}
}

static void add_header(struct strbuf *out, const struct run *run, const struct report_opts *opts)
{
	size_t c[4];
	run_counts(run, c);
	bool healthy = c[STATUS_FAIL] == 0;
	if (opts->color)
		sb_puts(out, healthy ? "\033[1;32m" : "\033[1;31m");
	sb_printf(out, "gpugate: %s", healthy ? "HEALTHY" : "UNHEALTHY");
	if (opts->color)
		sb_puts(out, "\033[0m");
	sb_printf(out, " (profile %s): %zu passed, %zu warnings, %zu failed, %zu skipped in %.0f ms\n",
		  run->profile ? run->profile : "custom", c[STATUS_PASS], c[STATUS_WARN],
		  c[STATUS_FAIL], c[STATUS_SKIP], run->duration_ms);
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
		sb_printf(out, "  %s: %s\n", r->id, r->summary ? r->summary : "");
		if (r->status != STATUS_WARN && r->status != STATUS_FAIL)
			continue;
		json_t *findings = r->details ? json_object_get(r->details, "findings") : NULL;
		size_t n = json_array_size(findings);
		size_t shown = full ? n : (n > 3 ? 3 : n);
		for (size_t k = 0; k < shown; k++)
			add_indented(out, "      - ", json_string_value(json_array_get(findings, k)));
		if (shown < n)
			sb_printf(out, "      - ... and %zu more\n", n - shown);
		if (r->remediation)
			add_indented(out, "      fix: ", r->remediation);
	}
}

void report_text(struct strbuf *out, const struct run *run, const struct report_opts *opts)
{
	size_t start = out->len;
	add_header(out, run, opts);
	add_checks(out, run, opts, true);
	if (!run->text_limit || out->len - start <= run->text_limit)
		return;
	/* Too long for the consumer (Docker keeps 4096 bytes): problems only. */
	out->len = start;
	out->buf[start] = '\0';
	add_header(out, run, opts);
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
