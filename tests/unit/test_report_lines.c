/* The reporters' line budgets over hand-built runs: the verdict line fits
 * 80 bytes (node-problem-detector's max_output_length) and names failed
 * checks, GitHub gets at most 10 error annotations (its per-step limit),
 * and checks blocked by a failure are named in the cause's annotation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lib/util.h"
#include "report/report.h"

#define N 15
static char ids[N][32];

static void make_run(struct run *run, struct result *r, size_t failed)
{
	memset(r, 0, N * sizeof(*r));
	for (size_t i = 0; i < N; i++) {
		snprintf(ids[i], sizeof(ids[i]), "packages.check_number_%02zu", i);
		r[i].id = ids[i];
		if (i < failed)
			result_set(&r[i], STATUS_FAIL, "failure %zu", i);
		else
			result_set(&r[i], STATUS_PASS, "ok");
	}
	*run = (struct run){ .profile = "healthcheck", .results = r, .count = N };
}

static size_t count_prefix(const char *text, const char *prefix)
{
	size_t n = 0;
	for (const char *p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		n += strncmp(p, prefix, strlen(prefix)) == 0;
	return n;
}

static void test_verdict_line_fits(void **state)
{
	(void)state;
	struct result r[N];
	struct run run;
	struct report_opts opts = { .quiet = true };
	for (size_t failed = 1; failed <= N; failed++) {
		make_run(&run, r, failed);
		struct strbuf sb = STRBUF_INIT;
		report_text(&sb, &run, &opts);
		assert_true(sb.len - 1 <= REPORT_VERDICT_MAX);
		assert_int_equal(sb.buf[sb.len - 1], '\n');
		assert_non_null(strstr(sb.buf, "packages.check_number_00"));
		size_t named = 0;
		for (size_t i = 0; i < failed; i++)
			named += strstr(sb.buf, ids[i]) != NULL;
		size_t more = 0;
		const char *plus = strstr(sb.buf, " +");
		if (plus)
			sscanf(plus, " +%zu more", &more);
		assert_int_equal(named + more, failed);
		sb_release(&sb);
		for (size_t i = 0; i < N; i++)
			result_release(&r[i]);
	}
}

static void test_github_annotation_limit(void **state)
{
	(void)state;
	struct result r[N];
	struct run run;
	struct report_opts opts = { 0 };
	make_run(&run, r, 14);
	struct strbuf sb = STRBUF_INIT;
	report_github(&sb, &run, &opts);
	assert_int_equal(count_prefix(sb.buf, "::error "), 10);
	assert_non_null(strstr(sb.buf, "::error title=gpugate::5 more failures: packages.check_number_09, "));
	assert_non_null(strstr(sb.buf, "packages.check_number_13 (see the job summary"));
	sb_release(&sb);
	for (size_t i = 0; i < N; i++)
		result_release(&r[i]);
}

static void test_blocked_named_in_cause(void **state)
{
	(void)state;
	struct result r[3] = { { .id = "runtime.loader" }, { .id = "runtime.devices" }, { .id = "runtime.smoke" } };
	result_set(&r[0], STATUS_FAIL, "no loader");
	result_blocked(&r[1], "runtime.loader");
	result_blocked(&r[2], "runtime.devices");
	struct run run = { .profile = "ci", .results = r, .count = 3 };
	/* the runner's resolution is what names the root: emulate it */
	result_set(&r[2], STATUS_SKIP, "not reached: runtime.loader failed");
	struct report_opts opts = { 0 };
	struct strbuf sb = STRBUF_INIT;
	report_github(&sb, &run, &opts);
	assert_int_equal(count_prefix(sb.buf, "::error "), 1);
	assert_non_null(strstr(sb.buf, "no loader (also blocks runtime.devices, runtime.smoke)"));
	sb_release(&sb);
	for (size_t i = 0; i < 3; i++)
		result_release(&r[i]);
}

/* The counts lines of the text report and the job summary go through the
 * one plural rule: "1 warning", "0 warnings", "2 warnings". */
static void test_counts_are_plural_only_when_not_one(void **state)
{
	(void)state;
	static const char *const want[] = { "0 warnings,", "1 warning,", "2 warnings," };
	for (size_t warned = 0; warned < 3; warned++) {
		struct result r[N];
		struct run run;
		make_run(&run, r, 1);
		for (size_t i = 1; i <= warned; i++)
			result_set(&r[i], STATUS_WARN, "warned %zu", i);
		struct report_opts opts = { 0 };
		struct strbuf text = STRBUF_INIT, summary = STRBUF_INIT;
		report_text(&text, &run, &opts);
		report_github_summary(&summary, &run);
		assert_non_null(strstr(text.buf, want[warned]));
		assert_non_null(strstr(summary.buf, want[warned]));
		assert_null(strstr(text.buf, " 1 warnings"));
		assert_null(strstr(summary.buf, " 1 warnings"));
		sb_release(&text);
		sb_release(&summary);
		for (size_t i = 0; i < N; i++)
			result_release(&r[i]);
	}
	assert_string_equal(count_noun(1, "repo", "repos"), "repo");
	assert_string_equal(count_noun(0, "repo", "repos"), "repos");
	assert_string_equal(count_noun(2, "repo", "repos"), "repos");
}

/* A passing run whose report was lost: the first line says why, never HEALTHY. */
static void test_undelivered_run_says_why_first(void **state)
{
	(void)state;
	struct result r[N];
	struct run run;
	make_run(&run, r, 0);
	struct report_opts opts = { .undelivered = "the junit report could not be written to /x: EACCES" };
	struct strbuf sb = STRBUF_INIT;
	report_text(&sb, &run, &opts);
	static const char first[] = "gpugate: NOT DELIVERED (profile healthcheck): checks passed, but the junit "
				    "report could not be written to /x: EACCES\n";
	assert_int_equal(strncmp(sb.buf, first, strlen(first)), 0);
	assert_null(strstr(sb.buf, "HEALTHY"));
	sb_release(&sb);
	for (size_t i = 0; i < N; i++)
		result_release(&r[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verdict_line_fits),
		cmocka_unit_test(test_github_annotation_limit),
		cmocka_unit_test(test_blocked_named_in_cause),
		cmocka_unit_test(test_counts_are_plural_only_when_not_one),
		cmocka_unit_test(test_undelivered_run_says_why_first),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
