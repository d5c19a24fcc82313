/* gpugate diff's comparisons (src/operator/diff.c) on hand-built facts, at
 * the boundaries the mutation audit (tests/mutation/) found untested: the
 * launch latency's tolerance, a check's change between warn and skip, a new
 * check that fails, an equal version spelt another way, a GPU the run did
 * not select, a new library at the same driver version. test_facts.c judges
 * the common cases (package versions, a lost GPU, the copy tolerance). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "operator/diff.h"

/* One report: a check, a package, a GPU, a probe, a device's figures. */
struct doc {
	struct report_doc doc;
	struct report_check check;
	struct relation_fact rel;
	struct package_fact pkg;
	struct gpu_fact gpu;
	struct probe_run_fact probe;
	struct figure_fact fig;
};

static void doc_init(struct doc *s, const char *status, const char *version)
{
	memset(s, 0, sizeof(*s));
	s->check = (struct report_check){ "runtime.smoke", status, "summary", NULL, 0 };
	s->pkg = (struct package_fact){ "libze1", "amd64", version, "installed", NULL, NULL };
	s->rel = (struct relation_fact){ "libze1", true, &s->pkg, 1 };
	s->gpu = (struct gpu_fact){ .pci = "0000:03:00.0",
				    .vendor = "0x8086",
				    .device = "0x56a0",
				    .driver = "xe",
				    .selected = true,
				    .present = true };
	s->probe = (struct probe_run_fact){ .backend = "level-zero",
					    .driver_version = "1.6.32224",
					    .library = "/usr/lib/x86_64-linux-gnu/libze_loader.so.1" };
	s->fig = (struct figure_fact){ .backend = "level-zero",
				       .pci = "0000:03:00.0",
				       .name = "Arc",
				       .copy_bandwidth_gbs = 400,
				       .launch_latency_us = 10 };
	s->doc.path = "report.json";
	s->doc.checks = &s->check;
	s->doc.n_checks = 1;
	s->doc.packages = (struct packages_facts){ .relations = &s->rel, .n_relations = 1 };
	s->doc.devices = (struct devices_facts){ .gpus = &s->gpu, .n_gpus = 1 };
	s->doc.runtime.probes = &s->probe;
	s->doc.runtime.n_probes = 1;
	s->doc.runtime.figures = &s->fig;
	s->doc.runtime.n_figures = 1;
}

static void compare(struct doc *a, struct doc *b, double tol, struct diff_result *d)
{
	report_index(&a->doc);
	report_index(&b->doc);
	diff_compare(&a->doc, &b->doc, tol, d);
	json_decref(a->doc.by_id);
	json_decref(b->doc.by_id);
	a->doc.by_id = b->doc.by_id = NULL; /* report_index builds it again */
}

/* Exactly the tolerance slower to launch is within it; a little more is a
 * regression; faster never is. */
static void launch_latency_tolerance(void **state)
{
	(void)state;
	struct doc a, b;
	struct diff_result d;
	doc_init(&a, "pass", "1");
	doc_init(&b, "pass", "1");
	b.fig.launch_latency_us = 12; /* +20% */
	compare(&a, &b, 20, &d);
	assert_int_equal(d.n_performance, 1);
	assert_false(d.performance[0].regressed);
	assert_false(d.regressed);
	diff_result_release(&d);
	b.fig.launch_latency_us = 12.01;
	compare(&a, &b, 20, &d);
	assert_true(d.performance[0].regressed);
	assert_true(d.regressed);
	diff_result_release(&d);
	b.fig.launch_latency_us = 5; /* faster */
	b.fig.copy_bandwidth_gbs = 800;
	compare(&a, &b, 20, &d);
	assert_false(d.regressed);
	diff_result_release(&d);
	/* slower copy by more than the tolerance: a regression (the direction) */
	b.fig.launch_latency_us = 10;
	b.fig.copy_bandwidth_gbs = 300;
	compare(&a, &b, 20, &d);
	assert_true(d.performance[0].regressed);
	diff_result_release(&d);
}

/* fail > warn > skip > pass: skip -> warn is worse, warn -> skip better;
 * pass -> fail worse and a regression. */
static void status_order(void **state)
{
	(void)state;
	static const struct {
		const char *was, *now, *change;
		bool regressed;
	} cases[] = {
		{ "skip", "warn", "worse", false },  { "warn", "skip", "better", false },
		{ "pass", "skip", "worse", false },  { "pass", "fail", "worse", true },
		{ "fail", "pass", "better", false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct doc a, b;
		struct diff_result d;
		doc_init(&a, cases[i].was, "1");
		doc_init(&b, cases[i].now, "1");
		compare(&a, &b, 20, &d);
		assert_int_equal(d.n_checks, 1);
		assert_string_equal(d.checks[0].change, cases[i].change);
		assert_int_equal(d.regressed, cases[i].regressed);
		diff_result_release(&d);
	}
}

/* A check the old report lacks that fails now is a regression; one that
 * passes is only added. */
static void added_check(void **state)
{
	(void)state;
	struct doc a, b;
	struct diff_result d;
	doc_init(&a, "pass", "1");
	a.doc.n_checks = 0;
	doc_init(&b, "fail", "1");
	compare(&a, &b, 20, &d);
	assert_int_equal(d.n_checks, 1);
	assert_string_equal(d.checks[0].change, "added");
	assert_true(d.regressed);
	assert_non_null(strstr(d.regressions.s[0], "absent -> fail"));
	diff_result_release(&d);
	b.check.status = "pass";
	compare(&a, &b, 20, &d);
	assert_false(d.regressed);
	diff_result_release(&d);
}

/* The same version spelt two ways (an explicit epoch 0) is a rebuild. */
static void equal_version_rebuilt(void **state)
{
	(void)state;
	struct doc a, b;
	struct diff_result d;
	doc_init(&a, "pass", "1.17.0-1");
	doc_init(&b, "pass", "0:1.17.0-1");
	compare(&a, &b, 20, &d);
	assert_int_equal(d.n_packages, 1);
	assert_string_equal(d.packages[0].change, "rebuilt");
	diff_result_release(&d);
}

/* A GPU of another vendor (not selected) is not compared: dropping it from
 * the spec's vendor loses no GPU. */
static void unselected_gpu_not_lost(void **state)
{
	(void)state;
	struct doc a, b;
	struct diff_result d;
	doc_init(&a, "pass", "1");
	doc_init(&b, "pass", "1");
	a.gpu.selected = false;
	b.doc.devices.n_gpus = 0;
	compare(&a, &b, 20, &d);
	assert_int_equal(d.n_devices, 0);
	assert_false(d.regressed);
	diff_result_release(&d);
}

/* The same driver version from another library file is a change. */
static void driver_library_change(void **state)
{
	(void)state;
	struct doc a, b;
	struct diff_result d;
	doc_init(&a, "pass", "1");
	doc_init(&b, "pass", "1");
	compare(&a, &b, 20, &d);
	assert_int_equal(d.n_drivers, 0);
	diff_result_release(&d);
	b.probe.library = "/opt/intel/lib/libze_loader.so.1";
	compare(&a, &b, 20, &d);
	assert_int_equal(d.n_drivers, 1);
	assert_string_equal(d.drivers[0].new_library, "/opt/intel/lib/libze_loader.so.1");
	diff_result_release(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(launch_latency_tolerance),
		cmocka_unit_test(status_order),
		cmocka_unit_test(added_check),
		cmocka_unit_test(equal_version_rebuilt),
		cmocka_unit_test(unselected_gpu_not_lost),
		cmocka_unit_test(driver_library_change),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
