/* The node-feature-discovery reporter over hand-built runs: the labels'
 * sources (other groups' facts, written with their encoders, src/facts/)
 * and value rules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "facts/devices.h"
#include "facts/runtime.h"
#include "registry.h"
#include "report/report.h"
#include "spec.h"

#define P "feature.node.kubernetes.io/"

/* the run finished at 1000 s after the epoch: the labels expire the default
 * of reports.nfd_expiry later, read from the spec key table (its one owner) */
static char EXPIRY[64];

static int expiry_line(void **state)
{
	(void)state;
	double ttl;
	if (parse_seconds(key_default("reports.nfd_expiry", false), &ttl) < 0 || ttl <= 0)
		return -1;
	char when[32];
	report_iso8601(1000.0 + ttl, when);
	snprintf(EXPIRY, sizeof(EXPIRY), "# +expiry-time=%s\n", when);
	return 0;
}

/* check d's details as devices.gpus writes them */
static void gpu(struct result *r, const char *pci, bool selected, bool present)
{
	json_t *d = result_details(r), *list = json_object_get(d, "gpus");
	if (!list) {
		list = json_array();
		devices_facts_encode_gpus(d, list);
	}
	struct gpu_fact g = { pci, "0x8086", "0x56a0", "0x030000", "xe", "card0", "renderD128", selected, present };
	json_array_append_new(list, gpu_fact_encode(&g));
}

/* runtime.loader's details with one probe that reported this driver version */
static void probe(struct result *r, const char *driver_version)
{
	json_t *res = json_pack("{s:s, s:s}", "backend", "level-zero", "driver_version", driver_version);
	struct probe_run_fact p = { .backend = "level-zero", .seconds = 0.1, .result = res };
	json_t *probes = json_array();
	json_array_append_new(probes, probe_run_encode(&p));
	runtime_facts_encode_probes(result_details(r), probes);
	json_decref(res);
}

static char *render_with(struct result *results, size_t n, const char *profile, const struct report_opts *opts)
{
	struct run run = { .profile = profile, .results = results, .count = n, .finished_at = 1000.0 };
	struct strbuf sb = STRBUF_INIT;
	report_nfd(&sb, &run, opts);
	return sb_detach(&sb);
}

/* text is the expiry line, then these labels */
static void assert_labels(const char *text, const char *labels)
{
	assert_int_equal(strncmp(text, EXPIRY, strlen(EXPIRY)), 0);
	assert_string_equal(text + strlen(EXPIRY), labels);
}

static char *render(struct result *results, size_t n, const char *profile)
{
	struct report_opts opts = { .color = false };
	return render_with(results, n, profile, &opts);
}

static void test_healthy_without_sources(void **state)
{
	(void)state;
	struct result r[1] = { { .id = "packages.installed" } };
	result_set(&r[0], STATUS_PASS, "ok");
	char *text = render(r, 1, "healthcheck");
	assert_labels(text, P "gpugate.healthy=true\n" P "gpugate.profile=healthcheck\n");
	free(text);
	result_release(&r[0]);
}

static void test_gpus_and_driver_version(void **state)
{
	(void)state;
	struct result r[3] = { { .id = "devices.gpus" }, { .id = "runtime.smoke" }, { .id = "runtime.loader" } };
	result_set(&r[0], STATUS_PASS, "2 GPUs");
	gpu(&r[0], "0000:03:00.0", true, true);
	gpu(&r[0], "0000:04:00.0", true, true);
	result_set(&r[1], STATUS_FAIL, "smoke kernel gave wrong results");
	result_set(&r[2], STATUS_PASS, "driver");
	probe(&r[2], "1.3.29735+1 ");
	char *text = render(r, 3, "ci");
	assert_labels(text, P "gpugate.healthy=false\n" P "gpugate.profile=ci\n" P "gpugate.gpus=2\n" P
			      "gpugate.driver_version=1.3.29735_1\n");
	free(text);
	for (size_t i = 0; i < 3; i++)
		result_release(&r[i]);
}

/* the devices group's own shape: a list of GPUs with selected/present */
static void test_gpus_from_the_devices_list(void **state)
{
	(void)state;
	struct result r[1] = { { .id = "devices.gpus" } };
	result_set(&r[0], STATUS_PASS, "GPUs");
	gpu(&r[0], "0000:03:00.0", true, true);
	gpu(&r[0], "0000:04:00.0", true, false); /* not passed in */
	gpu(&r[0], "0000:00:02.0", false, true); /* another vendor's */
	gpu(&r[0], "0000:05:00.0", true, true);
	char *text = render(r, 1, "ci");
	assert_labels(text, P "gpugate.healthy=true\n" P "gpugate.profile=ci\n" P "gpugate.gpus=2\n");
	free(text);
	json_object_set_new(result_details(&r[0]), "gpus", json_array());
	text = render(r, 1, "ci");
	assert_labels(text, P "gpugate.healthy=true\n" P "gpugate.profile=ci\n" P "gpugate.gpus=0\n");
	free(text);
	result_release(&r[0]);
}

static void test_bad_sources_are_left_out(void **state)
{
	(void)state;
	struct result r[2] = { { .id = "devices.gpus" }, { .id = "runtime.loader" } };
	result_set(&r[0], STATUS_PASS, "x");
	json_object_set_new(result_details(&r[0]), "gpus", json_string("two")); /* not a list: no label */
	result_set(&r[1], STATUS_PASS, "y");
	char long_version[100];
	memset(long_version, '7', sizeof(long_version) - 1);
	long_version[sizeof(long_version) - 1] = '\0';
	probe(&r[1], long_version);
	char *text = render(r, 2, "my spec!");
	assert_labels(text, P "gpugate.healthy=true\n" P "gpugate.profile=my_spec\n");
	free(text);
	json_object_set_new(result_details(&r[0]), "gpus", json_object());
	json_object_clear(result_details(&r[1]));
	probe(&r[1], "--");
	text = render(r, 2, NULL);
	assert_labels(text, P "gpugate.healthy=true\n");
	free(text);
	for (size_t i = 0; i < 2; i++)
		result_release(&r[i]);
}

static void test_prefix_and_expiry_options(void **state)
{
	(void)state;
	struct result r[1] = { { .id = "packages.installed" } };
	result_set(&r[0], STATUS_FAIL, "no");
	struct report_opts opts = { .nfd_prefix = "gpu.example.com/", .nfd_expiry = 60 };
	char *text = render_with(r, 1, "ci", &opts);
	assert_string_equal(text, "# +expiry-time=1970-01-01T00:17:40Z\ngpu.example.com/gpugate.healthy=false\n"
				  "gpu.example.com/gpugate.profile=ci\n");
	free(text);
	result_release(&r[0]);
	char why[256];
	assert_true(report_nfd_prefix_valid("feature.node.kubernetes.io/", why, sizeof(why)));
	assert_true(report_nfd_prefix_valid("a-b.example.com/", why, sizeof(why)));
	assert_false(report_nfd_prefix_valid("example.com", why, sizeof(why)));  /* no '/' */
	assert_false(report_nfd_prefix_valid("Example.com/", why, sizeof(why))); /* uppercase */
	assert_false(report_nfd_prefix_valid("a..b/", why, sizeof(why)));
	assert_false(report_nfd_prefix_valid("-a.com/", why, sizeof(why)));
	assert_false(report_nfd_prefix_valid("a-.com/", why, sizeof(why)));
	assert_false(report_nfd_prefix_valid("node.kubernetes.io/", why, sizeof(why)));
	assert_true(report_nfd_prefix_valid("sub.feature.node.kubernetes.io/", why, sizeof(why)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_healthy_without_sources),    cmocka_unit_test(test_gpus_and_driver_version),
		cmocka_unit_test(test_gpus_from_the_devices_list), cmocka_unit_test(test_bad_sources_are_left_out),
		cmocka_unit_test(test_prefix_and_expiry_options),
	};
	return cmocka_run_group_tests(tests, expiry_line, NULL);
}
