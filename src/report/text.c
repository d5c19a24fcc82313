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
	sb_printf(out, "%zu passed, %zu %s, %zu failed, %zu skipped in %.0f ms", c[STATUS_PASS], c[STATUS_WARN],
		  count_noun(c[STATUS_WARN], "warning", "warnings"), c[STATUS_FAIL], c[STATUS_SKIP], run->duration_ms);
}

void report_verdict_line(struct strbuf *out, const struct run *run, const struct report_opts *opts)
{
	bool healthy = run_exit_code(run) == 0;
	size_t start = out->len;
	if (healthy && opts->undelivered) {
		/* the checks passed, the exit does not: the first line says why */
		sb_puts(out, opts->color ? "\033[1;31mgpugate: NOT DELIVERED\033[0m" : "gpugate: NOT DELIVERED");
		sb_puts(out, " (profile ");
		escape_add(out, run->profile ? run->profile : "custom", ESCAPE_LINE);
		sb_puts(out, "): checks passed, but ");
		escape_add(out, opts->undelivered, ESCAPE_LINE);
		sb_puts(out, "\n");
		return;
	}
	if (opts->color)
		sb_puts(out, healthy ? "\033[1;32m" : "\033[1;31m");
	sb_puts(out, healthy ? "gpugate: HEALTHY" : "gpugate: UNHEALTHY");
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
 * line per value ("probes[0].result.devices[0].name: Fake Arc"), ids in hex
 * as lspci shows them, at most DETAIL_LINES lines (the JSON report has all). */
#define DETAIL_LINES 40

static bool all_scalars(const json_t *a)
{
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v) if (json_is_object(v) || json_is_array(v)) return false;
	return true;
}

static void add_scalar(struct strbuf *out, const char *key, const json_t *v)
{
	size_t klen = strlen(key);
	if (json_is_string(v))
		escape_add(out, json_string_value(v), ESCAPE_LINE);
	else if (json_is_integer(v) && klen > 3 && strcmp(key + klen - 3, "_id") == 0)
		sb_printf(out, "0x%04llx", (unsigned long long)json_integer_value(v));
	else if (json_is_integer(v))
		sb_printf(out, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		sb_printf(out, "%.4g", json_real_value(v));
	else if (json_is_boolean(v))
		sb_puts(out, json_is_true(v) ? "true" : "false");
	else if (json_is_array(v)) {
		size_t i;
		json_t *x;
		sb_puts(out, json_array_size(v) ? "" : "(none)");
		json_array_foreach(v, i, x)
		{
			sb_puts(out, i ? ", " : "");
			add_scalar(out, key, x);
		}
	} else if (json_is_object(v))
		sb_puts(out, "(none)");
	else
		sb_puts(out, "null");
}

/* path: the dotted name so far (its length restored on return). */
static void add_detail(struct strbuf *out, struct strbuf *path, const char *key, const json_t *v, size_t *lines)
{
	size_t mark = path->len;
	if ((json_is_object(v) && json_object_size(v)) || (json_is_array(v) && !all_scalars(v))) {
		const char *k;
		json_t *x;
		size_t i;
		if (json_is_object(v)) {
			json_object_foreach((json_t *)v, k, x)
			{
				sb_printf(path, "%s%s", path->len ? "." : "", k);
				add_detail(out, path, k, x, lines);
				path->len = mark;
				path->buf[mark] = '\0';
			}
		} else {
			json_array_foreach(v, i, x)
			{
				sb_printf(path, "[%zu]", i);
				add_detail(out, path, key, x, lines);
				path->len = mark;
				path->buf[mark] = '\0';
			}
		}
		return;
	}
	if (++*lines > DETAIL_LINES)
		return;
	sb_puts(out, "      ");
	escape_add(out, path->buf ? path->buf : "", ESCAPE_LINE);
	sb_puts(out, ": ");
	add_scalar(out, key, v);
	sb_puts(out, "\n");
}

static void add_details(struct strbuf *out, json_t *details)
{
	struct strbuf path = STRBUF_INIT;
	size_t lines = 0;
	add_detail(out, &path, "", details, &lines);
	if (lines > DETAIL_LINES)
		sb_printf(out, "      ... and %zu more (--format json has them all)\n", lines - DETAIL_LINES);
	sb_release(&path);
}

/* One check's lines. full: with every finding; otherwise briefly (three
 * findings), as the problems-only report does. */
static void add_check(struct strbuf *out, const struct result *r, const struct report_opts *opts, bool full)
{
	if (opts->color)
		sb_puts(out, colors[r->status]);
	sb_puts(out, labels[r->status]);
	if (opts->color)
		sb_puts(out, "\033[0m");
	sb_puts(out, "  "); /* "  id: " by copying: a printf per line costs more than the line */
	sb_puts(out, r->id);
	sb_puts(out, ": ");
	escape_add(out, r->summary, ESCAPE_LINE);
	sb_puts(out, "\n");
	bool problem = r->status == STATUS_WARN || r->status == STATUS_FAIL;
	if (!problem && !(opts->verbose && r->status == STATUS_PASS))
		return;
	size_t n = result_finding_count(r);
	size_t shown = full ? n : (n > 3 ? 3 : n);
	for (size_t k = 0; k < shown; k++) {
		const char *f = result_finding_text(r, k);
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

static bool is_problem(const struct result *r)
{
	return r->status == STATUS_WARN || r->status == STATUS_FAIL;
}

/* Appends block, cut to at most allow bytes: at a UTF-8 boundary, marked
 * " ...", always ending in a newline, never shorter than its first line's
 * "FAIL  id: " (so every problem keeps its id). */
static void add_cut(struct strbuf *out, const struct strbuf *block, size_t allow)
{
	static const char mark[] = " ...\n";
	if (block->len <= allow) {
		sb_add(out, block->buf, block->len);
		return;
	}
	size_t head = strcspn(block->buf, ":") + 1; /* "FAIL  id:" */
	size_t keep = allow > head + sizeof(mark) - 1 ? allow - (sizeof(mark) - 1) : head;
	while (keep > head && (block->buf[keep] & 0xC0) == 0x80)
		keep--; /* not inside a UTF-8 sequence */
	while (keep > head && block->buf[keep - 1] == '\n')
		keep--;
	sb_add(out, block->buf, keep);
	sb_puts(out, mark);
}

/* The problems only, sharing budget bytes fairly (Docker keeps 4096 of a
 * health check's output): each problem is given an equal share, and what a
 * short one leaves is shared among the longer ones, so one long finding
 * cannot push the others' ids out of the output. */
static void add_problems_shared(struct strbuf *out, const struct run *run, const struct report_opts *opts,
				size_t budget)
{
	size_t count = 0;
	for (size_t i = 0; i < run->count; i++)
		count += is_problem(&run->results[i]);
	if (!count)
		return;
	struct strbuf *blocks = xcalloc(count, sizeof(*blocks));
	size_t *allow = xcalloc(count, sizeof(*allow));
	bool *settled = xcalloc(count, sizeof(*settled));
	for (size_t i = 0, k = 0; i < run->count; i++)
		if (is_problem(&run->results[i]))
			add_check(&blocks[k++], &run->results[i], opts, false);
	/* water-filling: settle every block that fits the current fair share */
	size_t left = budget, open = count;
	for (bool changed = true; changed && open;) {
		changed = false;
		size_t share = left / open;
		for (size_t k = 0; k < count; k++) {
			if (!settled[k] && blocks[k].len <= share) {
				settled[k] = true;
				allow[k] = blocks[k].len;
				left -= blocks[k].len;
				open--;
				changed = true;
			}
		}
	}
	for (size_t k = 0; k < count; k++) {
		add_cut(out, &blocks[k], settled[k] ? allow[k] : left / open);
		sb_release(&blocks[k]);
	}
	free(blocks);
	free(allow);
	free(settled);
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
	for (size_t i = 0; i < run->count; i++)
		add_check(out, &run->results[i], opts, true);
	if (!run->text_limit || out->len - start <= run->text_limit)
		return;
	/* Too long for the consumer (Docker keeps 4096 bytes): the problems
	 * only, each within its share of what is left, then a pointer to all. */
	static const char cut[] = "(problems only, cut to fit; gpugate check --format text shows all)\n";
	out->len = header;
	out->buf[header] = '\0';
	size_t used = header - start + sizeof(cut) - 1;
	add_problems_shared(out, run, opts, run->text_limit > used ? run->text_limit - used : 0);
	sb_puts(out, cut);
	if (out->len - start <= run->text_limit)
		return;
	/* more problems than ids fit: the last resort is a cut at a line end */
	size_t keep = run->text_limit;
	while (keep > 0 && out->buf[start + keep - 1] != '\n')
		keep--;
	out->len = start + keep;
	out->buf[out->len] = '\0';
}
