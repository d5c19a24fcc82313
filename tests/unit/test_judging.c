/* The judging code on hand-built facts, with no fixture root: the health
 * verdicts of both backends at their boundaries (exactly one uncorrected ECC
 * error on CUDA, exactly one uncorrectable RAS error on Level Zero: each
 * must fail), the runner's blocked chains, the probe session's child plan,
 * and the Prometheus verdict of a warned check. The survivors of a hand
 * mutation audit (issue 27) were exactly these boundaries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "backend/session.h"
#include "backend/verdicts.h"
#include "report/report.h"
#include "runner.h"
#include "vendor/vendor.h"

static enum status judge(void (*fn)(const struct probe_telemetry *, const char *, struct result *),
			 const struct probe_telemetry *t, char *remedy, size_t size)
{
	struct result r = { .id = "runtime.health" };
	fn(t, "device 0", &r);
	enum status s = r.status;
	snprintf(remedy, size, "%s", r.remediation ? r.remediation : "");
	result_release(&r);
	return s;
}

/* The worst finding's words, as the check's summary shows them. */
static void judge_words(void (*fn)(const struct probe_telemetry *, const char *, struct result *),
			const struct probe_telemetry *t, char *words, size_t size)
{
	struct result r = { .id = "runtime.health" };
	fn(t, "device 0", &r);
	const char *w = result_worst_finding(&r);
	snprintf(words, size, "%s", w ? w : "");
	result_release(&r);
}

static void cuda_ecc_boundaries(void **state)
{
	(void)state;
	char fix[512];
	struct probe_telemetry t = { .present = true, .ecc = { .present = true, .counted = true } };
	assert_int_equal(judge(cuda_judge_health, &t, fix, sizeof(fix)), STATUS_PASS);
	t.ecc.uncorrectable = 1; /* exactly one: fails */
	assert_int_equal(judge(cuda_judge_health, &t, fix, sizeof(fix)), STATUS_FAIL);
	assert_non_null(strstr(fix, "nvidia-smi"));
	char words[256]; /* one error, in the singular (count_noun, issue 31 item 6) */
	judge_words(cuda_judge_health, &t, words, sizeof(words));
	assert_string_equal(words, "device 0: 1 uncorrected ECC error since the driver loaded");
	t.ecc.uncorrectable = 0;
	t.ecc.correctable = 1; /* exactly one corrected: a warning */
	assert_int_equal(judge(cuda_judge_health, &t, fix, sizeof(fix)), STATUS_WARN);
	judge_words(cuda_judge_health, &t, words, sizeof(words));
	assert_string_equal(words, "device 0: 1 corrected ECC error since the driver loaded");
	t.ecc.correctable = 2;
	judge_words(cuda_judge_health, &t, words, sizeof(words));
	assert_string_equal(words, "device 0: 2 corrected ECC errors since the driver loaded");
	t.ecc.correctable = 0;
	t.ecc.counted = false; /* not counted: nothing to judge */
	t.ecc.uncorrectable = 5;
	assert_int_equal(judge(cuda_judge_health, &t, fix, sizeof(fix)), STATUS_PASS);
	t.ecc.counted = true;
	t.ecc.uncorrectable = 0;
	t.row_remap_failure = true;
	assert_int_equal(judge(cuda_judge_health, &t, fix, sizeof(fix)), STATUS_FAIL);
	t.row_remap_pending = true; /* failed and pending: still the failure */
	assert_int_equal(judge(cuda_judge_health, &t, fix, sizeof(fix)), STATUS_FAIL);
	t.row_remap_failure = false;
	assert_int_equal(judge(cuda_judge_health, &t, fix, sizeof(fix)), STATUS_WARN);
	t.row_remap_pending = false;
	t.retired_pages_pending = true;
	assert_int_equal(judge(cuda_judge_health, &t, fix, sizeof(fix)), STATUS_WARN);
}

static void ze_ras_boundaries(void **state)
{
	(void)state;
	char fix[512];
	struct probe_telemetry t = { .present = true, .ras = { .present = true, .counted = true } };
	assert_int_equal(judge(ze_judge_health, &t, fix, sizeof(fix)), STATUS_PASS);
	t.ras.uncorrectable = 1; /* exactly one: fails */
	assert_int_equal(judge(ze_judge_health, &t, fix, sizeof(fix)), STATUS_FAIL);
	char words[256]; /* one error, in the singular (count_noun, issue 31 item 6) */
	judge_words(ze_judge_health, &t, words, sizeof(words));
	assert_string_equal(words, "device 0: 1 uncorrectable RAS error since the driver loaded (and 0 correctable)");
	t.ras.uncorrectable = 0;
	t.ras.correctable = 1; /* exactly one correctable: a warning */
	assert_int_equal(judge(ze_judge_health, &t, fix, sizeof(fix)), STATUS_WARN);
	judge_words(ze_judge_health, &t, words, sizeof(words));
	assert_string_equal(words, "device 0: 1 correctable RAS error since the driver loaded");
	t.ras.correctable = 2;
	judge_words(ze_judge_health, &t, words, sizeof(words));
	assert_string_equal(words, "device 0: 2 correctable RAS errors since the driver loaded");
	t.ras.correctable = 0;
	t.ras.counted = false; /* not counted: nothing to judge */
	t.ras.uncorrectable = 5;
	assert_int_equal(judge(ze_judge_health, &t, fix, sizeof(fix)), STATUS_PASS);
	t.ras.counted = true;
	t.ras.uncorrectable = 0;
	t.memory_health.why = "critical";
	assert_int_equal(judge(ze_judge_health, &t, fix, sizeof(fix)), STATUS_FAIL);
	t.memory_health.why = "replace";
	assert_int_equal(judge(ze_judge_health, &t, fix, sizeof(fix)), STATUS_FAIL);
	t.memory_health.why = "degraded";
	assert_int_equal(judge(ze_judge_health, &t, fix, sizeof(fix)), STATUS_WARN);
	t.memory_health.why = "ok";
	assert_int_equal(judge(ze_judge_health, &t, fix, sizeof(fix)), STATUS_PASS);
}

/* runner: a -> b -> c (c failed): a and b stay skips naming c; d waits on a
 * check that passed: a failure; e on one not in the run: a failure; f lists
 * alternatives, the second failed: a skip naming it. */
static void blocked_chains(void **state)
{
	(void)state;
	struct result r[7];
	memset(r, 0, sizeof(r));
	const char *ids[] = { "x.a", "x.b", "x.c", "x.d", "x.e", "x.f", "x.ok" };
	for (size_t i = 0; i < 7; i++)
		r[i].id = ids[i];
	result_blocked(&r[0], "x.b");
	result_blocked(&r[1], "x.c");
	result_set(&r[2], STATUS_FAIL, "broken");
	result_blocked(&r[3], "x.ok");
	result_blocked(&r[4], "x.missing");
	result_blocked(&r[5], "x.ok,x.c");
	result_set(&r[6], STATUS_PASS, "fine");
	struct run run = { .results = r, .count = 7 };
	run_resolve_blocked(&run);
	assert_int_equal(r[0].status, STATUS_SKIP);
	assert_non_null(strstr(r[0].summary, "x.c failed"));
	assert_int_equal(r[1].status, STATUS_SKIP);
	assert_non_null(strstr(r[1].summary, "x.c failed"));
	assert_int_equal(r[3].status, STATUS_FAIL);
	assert_non_null(strstr(r[3].summary, "x.ok"));
	assert_int_equal(r[4].status, STATUS_FAIL);
	assert_int_equal(r[5].status, STATUS_SKIP);
	assert_non_null(strstr(r[5].summary, "x.c failed"));
	assert_int_equal(run_exit_code(&run), 1);
	for (size_t i = 0; i < 7; i++)
		result_release(&r[i]);
}

/* A chain that loops (a -> b -> a) ends: the first resolved is a failure
 * (nothing in the run says it never ran otherwise), the other names it. */
static void blocked_loop_ends(void **state)
{
	(void)state;
	struct result r[2];
	memset(r, 0, sizeof(r));
	r[0].id = "x.a";
	r[1].id = "x.b";
	result_blocked(&r[0], "x.b");
	result_blocked(&r[1], "x.a");
	struct run run = { .results = r, .count = 2 };
	run_resolve_blocked(&run);
	assert_int_equal(r[0].status, STATUS_FAIL);
	assert_int_equal(r[1].status, STATUS_SKIP);
	assert_non_null(strstr(r[1].summary, "x.a failed"));
	assert_int_equal(run_exit_code(&run), 1);
	result_release(&r[0]);
	result_release(&r[1]);
}

/* A check that marked itself blocked and then judged anyway (result_set
 * does not clear blocked_by) keeps its own verdict: only skips resolve. A
 * check blocked on one that only warned is a failure: a warning is no
 * failure that explains the skip. */
static void blocked_then_judged_kept(void **state)
{
	(void)state;
	struct result r[3];
	memset(r, 0, sizeof(r));
	r[0].id = "x.a";
	r[1].id = "x.b";
	r[2].id = "x.warned";
	result_blocked(&r[0], "x.b");
	result_set(&r[0], STATUS_PASS, "found it another way");
	result_blocked(&r[1], "x.warned");
	result_set(&r[2], STATUS_WARN, "a warning");
	struct run run = { .results = r, .count = 1 };
	run_resolve_blocked(&run);
	assert_int_equal(r[0].status, STATUS_PASS);
	assert_string_equal(r[0].summary, "found it another way");
	assert_int_equal(run_exit_code(&run), 0);
	run.count = 3;
	run_resolve_blocked(&run);
	assert_int_equal(r[1].status, STATUS_FAIL);
	assert_non_null(strstr(r[1].summary, "x.warned, which did not fail"));
	for (size_t i = 0; i < 3; i++)
		result_release(&r[i]);
}

static void session_children(void **state)
{
	(void)state;
	const struct vendor *nv = &nvidia_vendor, *in = &intel_vendor;
	assert_int_equal(probe_children_planned(nv, 4, NULL), 4);
	assert_int_equal(probe_children_planned(nv, 4, "0"), 1);
	assert_int_equal(probe_children_planned(nv, 4, "0,2"), 2);
	assert_int_equal(probe_children_planned(nv, 4, "3,1,0,2"), 4);
	assert_int_equal(probe_children_planned(nv, 4, "0,0"), 1); /* none shown: one child says so */
	assert_int_equal(probe_children_planned(nv, 4, ""), 1);
	assert_int_equal(probe_children_planned(nv, 4, "4"), 1); /* N on N GPUs names none */
	assert_int_equal(probe_children_planned(nv, 2, "0,1,2"), 2);
	assert_int_equal(probe_children_planned(nv, 4, "GPU-aaaa,GPU-bbbb"), 2);
	assert_int_equal(probe_children_planned(nv, 0, NULL), 1);
	assert_int_equal(probe_children_planned(nv, 100, NULL), 64);
	/* ZE_AFFINITY_MASK entries can name several tiles: no cap */
	assert_int_equal(probe_children_planned(in, 4, "0"), 4);
}

/* gpugate_check_passed: 1 for a warned check, 0 for a failed one, no sample
 * for a skipped one. */
static void prom_warned_check_passed(void **state)
{
	(void)state;
	struct result r[3];
	memset(r, 0, sizeof(r));
	r[0].id = "devices.by_path";
	result_set(&r[0], STATUS_WARN, "warned");
	r[1].id = "devices.gpus";
	result_set(&r[1], STATUS_FAIL, "failed");
	r[2].id = "hf.models";
	result_set(&r[2], STATUS_SKIP, "skipped");
	struct run run = { .profile = "ci", .results = r, .count = 3 };
	struct report_opts opts = { 0 };
	struct strbuf out = STRBUF_INIT;
	report_prom(&out, &run, &opts);
	const char *warned = strstr(out.buf, "gpugate_check_passed{profile=\"ci\",id=\"devices.by_path\"}");
	assert_non_null(warned);
	assert_memory_equal(strchr(warned, '}'), "} 1\n", 4);
	const char *failed = strstr(out.buf, "gpugate_check_passed{profile=\"ci\",id=\"devices.gpus\"}");
	assert_non_null(failed);
	assert_memory_equal(strchr(failed, '}'), "} 0\n", 4);
	assert_non_null(strstr(out.buf, "gpugate_check_status{profile=\"ci\",id=\"hf.models\""));
	assert_null(strstr(out.buf, "gpugate_check_passed{profile=\"ci\",id=\"hf.models\""));
	sb_release(&out);
	for (size_t i = 0; i < 3; i++)
		result_release(&r[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cuda_ecc_boundaries),      cmocka_unit_test(ze_ras_boundaries),
		cmocka_unit_test(blocked_chains),           cmocka_unit_test(blocked_loop_ends),
		cmocka_unit_test(blocked_then_judged_kept), cmocka_unit_test(session_children),
		cmocka_unit_test(prom_warned_check_passed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
