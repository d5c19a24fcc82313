/* The node-feature-discovery reporter over hand-built runs: the labels'
 * sources (details keys of other groups' checks) and value rules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "report/report.h"

/* the run finished at 1000 s after the epoch: labels expire 600 s later */
#define EXPIRY "# +expiry-time=1970-01-01T00:26:40Z\n"
#define P      "feature.node.kubernetes.io/"

static char *render_with(struct result *results, size_t n, const char *profile, const struct report_opts *opts)
{
	struct run run = { .profile = profile, .results = results, .count = n, .finished_at = 1000.0 };
	struct strbuf sb = STRBUF_INIT;
	report_nfd(&sb, &run, opts);
	return sb_detach(&sb);
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
	assert_string_equal(text, EXPIRY P "gpugate.healthy=true\n" P "gpugate.profile=healthcheck\n");
	free(text);
	result_release(&r[0]);
}

static void test_gpus_and_driver_version(void **state)
{
	(void)state;
	struct result r[3] = { { .id = "devices.gpus" }, { .id = "runtime.smoke" }, { .id = "runtime.level-zero" } };
	result_set(&r[0], STATUS_PASS, "2 GPUs");
	json_object_set_new(result_details(&r[0]), "gpu_count", json_integer(2));
	result_set(&r[1], STATUS_FAIL, "smoke kernel gave wrong results");
	result_set(&r[2], STATUS_PASS, "driver");
	json_object_set_new(result_details(&r[2]), "driver_version", json_string("1.3.29735+1 "));
	char *text = render(r, 3, "ci");
	assert_string_equal(text, EXPIRY P "gpugate.healthy=false\n" P "gpugate.profile=ci\n" P "gpugate.gpus=2\n" P
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
	json_t *list = json_array();
	json_array_append_new(list, json_pack("{s:s,s:b,s:b}", "pci", "0000:03:00.0", "selected", 1, "present", 1));
	json_array_append_new(list, json_pack("{s:s,s:b,s:b}", "pci", "0000:04:00.0", "selected", 1, "present", 0));
	json_array_append_new(list, json_pack("{s:s,s:b,s:b}", "pci", "0000:00:02.0", "selected", 0, "present", 1));
	json_array_append_new(list, json_pack("{s:s,s:b,s:b}", "pci", "0000:05:00.0", "selected", 1, "present", 1));
	json_object_set_new(result_details(&r[0]), "gpus", list);
	char *text = render(r, 1, "ci");
	assert_string_equal(text, EXPIRY P "gpugate.healthy=true\n" P "gpugate.profile=ci\n" P "gpugate.gpus=2\n");
	free(text);
	json_object_set_new(result_details(&r[0]), "gpus", json_array());
	text = render(r, 1, "ci");
	assert_string_equal(text, EXPIRY P "gpugate.healthy=true\n" P "gpugate.profile=ci\n" P "gpugate.gpus=0\n");
	free(text);
	result_release(&r[0]);
}

static void test_bad_sources_are_left_out(void **state)
{
	(void)state;
	struct result r[2] = { { .id = "devices.gpus" }, { .id = "runtime.cuda" } };
	result_set(&r[0], STATUS_PASS, "x");
	json_object_set_new(result_details(&r[0]), "gpu_count", json_string("two"));
	result_set(&r[1], STATUS_PASS, "y");
	char long_version[100];
	memset(long_version, '7', sizeof(long_version) - 1);
	long_version[sizeof(long_version) - 1] = '\0';
	json_object_set_new(result_details(&r[1]), "driver_version", json_string(long_version));
	char *text = render(r, 2, "my spec!");
	assert_string_equal(text, EXPIRY P "gpugate.healthy=true\n" P "gpugate.profile=my_spec\n");
	free(text);
	json_object_set_new(result_details(&r[0]), "gpu_count", json_integer(-1));
	json_object_set_new(result_details(&r[1]), "driver_version", json_string("--"));
	text = render(r, 2, NULL);
	assert_string_equal(text, EXPIRY P "gpugate.healthy=true\n");
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
	return cmocka_run_group_tests(tests, NULL, NULL);
}
