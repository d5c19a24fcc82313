/* GitHub Actions: workflow commands (an annotation per failure and warning)
 * on stdout, and a Markdown job summary for $GITHUB_STEP_SUMMARY.
 * GitHub shows at most 10 error and 10 warning annotations of a step
 * (docs.github.com, "Workflow commands": annotation limits), so checks
 * blocked by another's failure are collapsed into the cause's annotation
 * ("also blocks ..."), and past the limit one annotation lists the rest. */
#include <stdio.h>
#include <string.h>

#include "report.h"

#define ANNOTATIONS_PER_KIND 10

/* The ids of the checks blocked by r, as ", a, b", or "" */
static void add_blocked_ids(struct strbuf *out, const struct run *run, const struct result *r)
{
	size_t n = 0;
	char needle[256];
	snprintf(needle, sizeof(needle), "not reached: %s failed", r->id);
	for (size_t i = 0; i < run->count; i++) {
		const struct result *b = &run->results[i];
		if (b->status == STATUS_SKIP && b->blocked_by && b->summary && strcmp(b->summary, needle) == 0)
			sb_printf(out, "%s%s", n++ ? ", " : " (also blocks ", b->id);
	}
	if (n)
		sb_puts(out, ")");
}

static void add_annotations(struct strbuf *out, const struct run *run, enum status kind)
{
	const char *command = kind == STATUS_FAIL ? "::error" : "::warning";
	size_t total = 0, shown = 0;
	for (size_t i = 0; i < run->count; i++)
		total += run->results[i].status == kind;
	for (size_t i = 0; i < run->count; i++) {
		const struct result *r = &run->results[i];
		if (r->status != kind)
			continue;
		if (total > ANNOTATIONS_PER_KIND && shown == ANNOTATIONS_PER_KIND - 1) {
			/* the last annotation GitHub shows names the rest */
			sb_printf(out, "%s title=gpugate::%zu more %s: ", command, total - shown,
				  kind == STATUS_FAIL ? "failures" : "warnings");
			size_t k = 0;
			for (size_t j = i; j < run->count; j++)
				if (run->results[j].status == kind)
					sb_printf(out, "%s%s", k++ ? ", " : "", run->results[j].id);
			sb_puts(out, " (see the job summary or the text report)\n");
			return;
		}
		sb_printf(out, "%s title=", command);
		escape_add(out, r->id, ESCAPE_GITHUB_PROPERTY);
		sb_puts(out, "::");
		struct strbuf msg = STRBUF_INIT;
		sb_puts(&msg, r->summary ? r->summary : "");
		add_blocked_ids(&msg, run, r);
		if (r->remediation)
			sb_printf(&msg, " \xE2\x80\x94 %s", r->remediation);
		escape_add(out, msg.buf, ESCAPE_GITHUB_DATA);
		sb_release(&msg);
		sb_puts(out, "\n");
		shown++;
	}
}

void report_github(struct strbuf *out, const struct run *run, const struct report_opts *opts)
{
	add_annotations(out, run, STATUS_FAIL);
	add_annotations(out, run, STATUS_WARN);
	struct report_opts plain = *opts;
	plain.color = false;
	report_verdict_line(out, run, &plain);
}

void report_github_summary(struct strbuf *out, const struct run *run)
{
	size_t c[4];
	run_counts(run, c);
	bool healthy = run_exit_code(run) == 0;
	sb_printf(out, "### %s gpugate: %s (profile ", healthy ? "\xE2\x9C\x85" : "\xE2\x9D\x8C",
		  healthy ? "HEALTHY" : "UNHEALTHY");
	escape_add(out, run->profile ? run->profile : "custom", ESCAPE_MARKDOWN_CELL);
	sb_printf(out, ")\n\n%zu passed, %zu %s, %zu failed, %zu skipped in %.0f ms\n\n", c[STATUS_PASS],
		  c[STATUS_WARN], count_noun(c[STATUS_WARN], "warning", "warnings"), c[STATUS_FAIL], c[STATUS_SKIP],
		  run->duration_ms);
	if (!c[STATUS_FAIL] && !c[STATUS_WARN])
		return;
	sb_puts(out, "| Check | Status | What was found | Fix |\n| --- | --- | --- | --- |\n");
	for (int pass = 0; pass < 2; pass++) {
		enum status want = pass == 0 ? STATUS_FAIL : STATUS_WARN;
		for (size_t i = 0; i < run->count; i++) {
			const struct result *r = &run->results[i];
			if (r->status != want)
				continue;
			sb_printf(out, "| `%s` | %s | ", r->id, status_name(r->status));
			struct strbuf what = STRBUF_INIT;
			sb_puts(&what, r->summary ? r->summary : "");
			add_blocked_ids(&what, run, r);
			for (size_t k = 0, shown = 0; k < result_finding_count(r) && shown < 3; k++) {
				const char *f = result_finding_text(r, k);
				if (f && !report_finding_repeats_summary(r, f)) {
					sb_printf(&what, "\n- %s", f);
					shown++;
				}
			}
			escape_add(out, what.buf, ESCAPE_MARKDOWN_CELL);
			sb_release(&what);
			sb_puts(out, " | ");
			escape_add(out, r->remediation ? r->remediation : "", ESCAPE_MARKDOWN_CELL);
			sb_puts(out, " |\n");
		}
	}
	sb_puts(out, "\n");
}
