#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "lib/baselines.h"

/* the backend layer's names, as runtime_perf.c hands them to the library */
static const char *names[8];

static int parse(const char *text, struct baseline *b, char *err, size_t size)
{
	return baseline_parse("x.json", text, strlen(text), names, b, err, size);
}

static void test_parse_full_entry(void **state)
{
	(void)state;
	struct baseline b;
	char err[512];
	assert_int_equal(
		parse("{\"vendor_id\": \"0x10DE\", \"device_id\": \"2330\", \"backend\": \"cuda\", \"name\": \"H\","
		      " \"copy_bandwidth_gbs\": 2900.5, \"launch_latency_us\": 6, \"recorded\": {\"driver\": \"13.0\"}}",
		      &b, err, sizeof(err)),
		0);
	assert_int_equal(b.vendor_id, 0x10de);
	assert_int_equal(b.device_id, 0x2330);
	assert_string_equal(b.backend, "cuda");
	assert_string_equal(b.name, "H");
	assert_true(b.bandwidth_gbs == 2900.5 && b.latency_us == 6.0);
	assert_non_null(b.recorded);
	assert_string_equal(b.source, "x.json");
	struct baseline_set set = { malloc(sizeof(b)), 1 };
	assert_non_null(set.items);
	set.items[0] = b;
	baselines_free(&set);
}

static void test_parse_errors_name_the_file(void **state)
{
	(void)state;
	static const struct {
		const char *text, *words;
	} bad[] = {
		{ "{\"vendor_id\": \"0x8086\",\n \"device_id\"", "x.json:2:" },
		{ "[1]", "x.json: a baseline is one JSON object" },
		{ "{\"vendor_id\": \"0x8086\", \"device_id\": \"0x56a0\", \"copy_bandwidth_gbs\": 1, \"speed\": 2}",
		  "unknown key \"speed\"" },
		{ "{\"vendor_id\": \"0x8086\", \"device_id\": \"0x56a0\", \"copy_bandwidth_gbs\": 1, \"copy_bandwidth_gbs\": 2}",
		  "duplicate" },
		{ "{\"vendor_id\": \"0x18086\", \"device_id\": \"0x56a0\", \"copy_bandwidth_gbs\": 1}",
		  "must be PCI ids" },
		{ "{\"vendor_id\": \"0x8086\", \"device_id\": 70000, \"copy_bandwidth_gbs\": 1}", "must be PCI ids" },
		{ "{\"vendor_id\": \"0x8086\", \"copy_bandwidth_gbs\": 1}", "give device_id" },
		{ "{\"vendor_id\": \"0x8086\", \"device_id\": \"0x56a0\"}",
		  "neither copy_bandwidth_gbs nor launch_latency_us" },
		{ "{\"vendor_id\": \"0x8086\", \"device_id\": \"0x56a0\", \"launch_latency_us\": \"5\"}",
		  "positive numbers" },
		{ "{\"vendor_id\": \"0x8086\", \"device_id\": \"0x56a0\", \"launch_latency_us\": 5, \"backend\": \"opencl\"}",
		  "backend must be" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct baseline b;
		char err[512] = "";
		assert_int_equal(parse(bad[i].text, &b, err, sizeof(err)), -1);
		if (!strstr(err, bad[i].words) || strncmp(err, "x.json", 6) != 0)
			fail_msg("case %zu: '%s' lacks '%s'", i, err, bad[i].words);
	}
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void test_folder_find_and_precedence(void **state)
{
	(void)state;
	char dir[] = "/tmp/gpugate-baselines-XXXXXX";
	assert_non_null(mkdtemp(dir));
	write_file(dir, "a.json",
		   "{\"vendor_id\": \"0x8086\", \"device_id\": \"0x56a0\", \"copy_bandwidth_gbs\": 100}");
	write_file(
		dir, "b.json",
		"{\"vendor_id\": \"0x8086\", \"device_id\": \"0x56a0\", \"backend\": \"level-zero\", \"copy_bandwidth_gbs\": 200}");
	write_file(dir, "c.json", "{\"vendor_id\": \"0x10de\", \"name\": \"Fake GPU 0\", \"launch_latency_us\": 7}");
	write_file(dir, "notes.txt", "not a baseline");
	struct baseline_set set;
	char err[512];
	assert_int_equal(baselines_load(&set, dir, names, err, sizeof(err)), 0);
	const struct baseline *b = baselines_find(&set, 0x8086, 0x56a0, "Arc", "level-zero");
	assert_non_null(b);
	assert_true(b->bandwidth_gbs == 200); /* the later file, for this backend */
	b = baselines_find(&set, 0x8086, 0x56a0, NULL, "cuda");
	assert_non_null(b);
	assert_true(b->bandwidth_gbs == 100); /* b.json is level-zero only */
	assert_null(baselines_find(&set, 0x8086, 0x56a1, NULL, "level-zero"));
	b = baselines_find(&set, 0x10de, -1, "Fake GPU 0", "cuda");
	assert_non_null(b);
	assert_true(b->latency_us == 7);
	assert_null(baselines_find(&set, 0x10de, -1, "Fake GPU 1", "cuda"));
	baselines_free(&set);
	write_file(dir, "d.json", "{");
	assert_int_equal(baselines_load(&set, dir, names, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "/d.json:1:"));
	baselines_free(&set);
	const char *names[] = { "a.json", "b.json", "c.json", "d.json", "notes.txt" };
	for (size_t i = 0; i < 5; i++) {
		char path[512];
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

static void test_built_in_baselines_load(void **state)
{
	(void)state;
	struct baseline_set set;
	char err[512] = "";
	if (baselines_load(&set, NULL, names, err, sizeof(err)) != 0)
		fail_msg("a checked-in baseline is broken: %s", err);
	baselines_free(&set);
}

static void test_pci_ids(void **state)
{
	(void)state;
	json_t *v = json_string("0x56A0");
	assert_int_equal(baseline_pci_id(v), 0x56a0);
	json_decref(v);
	v = json_integer(0x8086);
	assert_int_equal(baseline_pci_id(v), 0x8086);
	json_decref(v);
	static const char *const bad[] = { "", "0x", "intel", "0x12345", "12 34", NULL };
	for (size_t i = 0; bad[i]; i++) {
		v = json_string(bad[i]);
		assert_int_equal(baseline_pci_id(v), -1);
		json_decref(v);
	}
	assert_int_equal(baseline_pci_id(NULL), -1);
}

int main(void)
{
	backend_name_list(names, 8);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_full_entry),
		cmocka_unit_test(test_parse_errors_name_the_file),
		cmocka_unit_test(test_folder_find_and_precedence),
		cmocka_unit_test(test_built_in_baselines_load),
		cmocka_unit_test(test_pci_ids),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
