/* The typed decoder of the probe child's result (src/backend/probe_result.h):
 * every field from a Level Zero and a CUDA result line as the children write
 * them, and truncated or hostile lines (wrong types, absent keys) that must
 * read as absent, never crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/probe_result.h"
#include "backend/protocol.h"

/* Parses a protocol line as the parent does, then decodes its object. */
static void decode_line(const char *line, struct probe_result *out)
{
	struct probe_line l;
	probe_parse_line(line, &l);
	probe_result_decode(l.kind == PROBE_LINE_RESULT ? l.result : NULL, out);
	json_decref(l.result);
}

static const char ze_line[] =
	"result {\"backend\":\"level-zero\",\"ok\":false,\"stage\":\"perf\",\"error\":\"zero duration\","
	"\"message\":\"timestamps broken\",\"library\":\"/usr/lib/x86_64-linux-gnu/libze_loader.so.1.8.0\","
	"\"driver_library\":\"/usr/lib/x86_64-linux-gnu/libze_intel_gpu.so.1\",\"driver_version\":\"1.3.29735\","
	"\"driver_build\":29735,\"driver_version_raw\":16809399,\"timings_ms\":{\"init\":1.5},"
	"\"devices\":[{\"index\":0,\"name\":\"Arc A770\",\"vendor_id\":32902,\"device_id\":22176,"
	"\"uuid\":\"00ff\",\"compute\":\"512 EUs\",\"pci\":\"0000:03:00.0\",\"memory_total\":17179869184,"
	"\"memory_free\":16000000000,\"smoke\":{\"ok\":true,\"elements\":1048576,\"mismatches\":0,\"group_size\":256},"
	"\"telemetry\":{\"temperature_c\":45.5,\"power_w\":\"not supported by this driver\","
	"\"frequency\":{\"actual_mhz\":2100.0,\"max_mhz\":2400.0,\"throttle_reasons\":[]},"
	"\"memory_health\":\"degraded\",\"ras\":{\"correctable\":3,\"uncorrectable\":1}},"
	"\"processes\":[{\"pid\":42,\"used_memory\":1073741824,\"self\":false},{\"pid\":7,\"used_memory\":0,\"self\":true}],"
	"\"performance\":{\"copy_bandwidth_gbs\":400.5,\"launch_latency_us\":7.25,\"buffer_bytes\":268435456,"
	"\"method\":\"kernel timestamps\"},\"stage\":\"perf\",\"error\":\"zero duration\",\"message\":\"m\"},"
	"{\"index\":1,\"name\":\"Arc A770\",\"pci\":\"0000:04:00.0\",\"memory_total\":17179869184}]}";

static void test_level_zero_every_field(void **state)
{
	(void)state;
	struct probe_result r;
	decode_line(ze_line, &r);
	assert_true(r.present);
	assert_false(r.ok);
	assert_string_equal(r.backend, "level-zero");
	assert_string_equal(r.stage, "perf");
	assert_string_equal(r.error, "zero duration");
	assert_string_equal(r.message, "timestamps broken");
	assert_string_equal(r.library, "/usr/lib/x86_64-linux-gnu/libze_loader.so.1.8.0");
	assert_string_equal(r.driver_library, "/usr/lib/x86_64-linux-gnu/libze_intel_gpu.so.1");
	assert_string_equal(r.driver_version, "1.3.29735");
	assert_true(r.has_driver_build);
	assert_int_equal(r.driver_build, 29735);
	assert_int_equal(r.device_count, -1);
	assert_int_equal(r.n_devices, 2);
	assert_non_null(r.raw);

	const struct probe_device *d = &r.devices[0];
	assert_int_equal(d->index, 0);
	assert_string_equal(d->name, "Arc A770");
	assert_string_equal(d->pci, "0000:03:00.0");
	assert_string_equal(d->uuid, "00ff");
	assert_string_equal(d->compute, "512 EUs");
	assert_int_equal(d->vendor_id, 0x8086);
	assert_int_equal(d->device_id, 0x56a0);
	assert_true(d->has_memory_total && d->has_memory_free);
	assert_int_equal(d->memory_total, 17179869184ULL);
	assert_int_equal(d->memory_free, 16000000000ULL);
	assert_string_equal(d->stage, "perf");
	assert_string_equal(d->error, "zero duration");
	assert_string_equal(d->message, "m");
	assert_true(d->smoke.present && d->smoke.ok);
	assert_int_equal(d->smoke.elements, 1048576);
	assert_int_equal(d->smoke.mismatches, 0);
	assert_int_equal(d->smoke.first_bad_index, -1);

	const struct probe_telemetry *t = &d->telemetry;
	assert_true(t->present);
	assert_non_null(t->raw);
	assert_true(t->temperature_c.present && t->temperature_c.is_number);
	assert_true(t->temperature_c.value == 45.5);
	assert_true(t->power_w.present && !t->power_w.is_number);
	assert_string_equal(t->power_w.why, "not supported by this driver");
	assert_true(t->frequency_mhz.is_number && t->frequency_mhz.value == 2100.0);
	assert_string_equal(t->memory_health.why, "degraded");
	assert_true(t->ras.counted);
	assert_int_equal(t->ras.correctable, 3);
	assert_int_equal(t->ras.uncorrectable, 1);
	assert_false(t->ecc.present);
	assert_null(t->nvml);

	assert_int_equal(d->processes.state, PROBE_LIST_KNOWN);
	assert_int_equal(d->processes.n, 2);
	assert_int_equal(d->processes.items[0].pid, 42);
	assert_int_equal(d->processes.items[0].used_memory, 1073741824);
	assert_false(d->processes.items[0].self);
	assert_true(d->processes.items[1].self);

	assert_true(d->performance.present && d->performance.measured);
	assert_true(d->performance.copy_bandwidth_gbs == 400.5);
	assert_true(d->performance.launch_latency_us == 7.25);
	assert_int_equal(d->performance.buffer_bytes, 268435456);
	assert_non_null(d->performance.raw);

	const struct probe_device *e = &r.devices[1];
	assert_false(e->has_memory_free);
	assert_false(e->smoke.present);
	assert_false(e->telemetry.present);
	assert_int_equal(e->processes.state, PROBE_LIST_ABSENT);
	assert_false(e->performance.present);
	assert_int_equal(e->vendor_id, -1);

	/* by index, then by position */
	assert_ptr_equal(probe_result_device(&r, 1), e);
	assert_null(probe_result_device(&r, 2));
	probe_result_free(&r);
}

static const char cuda_line[] =
	"result {\"backend\":\"cuda\",\"ok\":true,\"cuda_visible_devices\":null,\"driver_version\":\"13.0\","
	"\"device_count\":8,\"library\":\"/usr/lib/x86_64-linux-gnu/libcuda.so.580.1\","
	"\"devices\":[{\"index\":3,\"name\":\"NVIDIA H100\",\"vendor_id\":4318,\"device_id\":\"0x2330\","
	"\"pci\":\"0000:19:00.0\",\"memory_total\":85899345920,\"memory_free\":84825604096,"
	"\"smoke\":{\"ok\":false,\"elements\":1048576,\"mismatches\":5,\"first_bad_index\":17},"
	"\"telemetry\":{\"nvml\":\"ok\",\"temperature_c\":33,\"power_w\":70.25,"
	"\"ecc\":{\"enabled\":true,\"corrected_volatile\":2,\"uncorrected_volatile\":\"not supported\"},"
	"\"row_remap\":{\"corrected_rows\":0,\"uncorrected_rows\":0,\"pending\":true,\"failure\":false},"
	"\"retired_pages\":{\"pending\":true},"
	"\"processes\":[{\"pid\":99,\"used_memory\":512,\"self\":false}]}}]}";

static void test_cuda_every_field(void **state)
{
	(void)state;
	struct probe_result r;
	decode_line(cuda_line, &r);
	assert_true(r.ok);
	assert_string_equal(r.backend, "cuda");
	assert_null(r.stage);
	assert_null(r.error);
	assert_false(r.has_driver_build);
	assert_null(r.driver_library);
	assert_int_equal(r.device_count, 8);
	assert_int_equal(r.n_devices, 1);
	const struct probe_device *d = probe_result_device(&r, 3);
	assert_non_null(d);
	assert_int_equal(d->index, 3);
	assert_int_equal(d->vendor_id, 0x10de);
	assert_int_equal(d->device_id, 0x2330); /* a PCI id given as text */
	assert_false(d->smoke.ok);
	assert_int_equal(d->smoke.mismatches, 5);
	assert_int_equal(d->smoke.first_bad_index, 17);
	const struct probe_telemetry *t = &d->telemetry;
	assert_string_equal(t->nvml, "ok");
	assert_true(t->temperature_c.is_number && t->temperature_c.value == 33);
	assert_true(t->power_w.is_number && t->power_w.value == 70.25);
	assert_false(t->frequency_mhz.present);
	assert_false(t->memory_health.present);
	assert_false(t->ras.present);
	assert_true(t->ecc.counted);
	assert_int_equal(t->ecc.correctable, 2);
	assert_int_equal(t->ecc.uncorrectable, 0); /* a counter NVML could not read counts 0 */
	assert_true(t->row_remap_pending);
	assert_false(t->row_remap_failure);
	assert_true(t->retired_pages_pending);
	/* NVML's process list, in the telemetry, is the device's */
	assert_int_equal(d->processes.state, PROBE_LIST_KNOWN);
	assert_int_equal(d->processes.n, 1);
	assert_int_equal(d->processes.items[0].pid, 99);
	probe_result_free(&r);
}

static void test_unavailable_lists_and_texts(void **state)
{
	(void)state;
	struct probe_result r;
	decode_line("result {\"devices\":[{\"index\":0,\"processes\":\"not supported by this driver\","
		    "\"telemetry\":{\"ras\":\"not supported by this driver\",\"frequency\":\"failed: X\","
		    "\"memory_health\":\"not supported by this driver\"}},"
		    "{\"index\":1,\"telemetry\":{\"nvml\":\"not loaded (libnvidia-ml.so.1 not found)\","
		    "\"ecc\":\"not supported\"}}]}",
		    &r);
	assert_int_equal(r.n_devices, 2);
	const struct probe_device *a = &r.devices[0], *b = &r.devices[1];
	assert_int_equal(a->processes.state, PROBE_LIST_UNAVAILABLE);
	assert_string_equal(a->processes.why, "not supported by this driver");
	assert_true(a->telemetry.ras.present && !a->telemetry.ras.counted);
	assert_string_equal(a->telemetry.ras.why, "not supported by this driver");
	assert_string_equal(a->telemetry.frequency_mhz.why, "failed: X");
	assert_false(a->telemetry.frequency_mhz.is_number);
	assert_string_equal(a->telemetry.memory_health.why, "not supported by this driver");
	/* NVML not loaded: no list, and why */
	assert_int_equal(b->processes.state, PROBE_LIST_UNAVAILABLE);
	assert_string_equal(b->processes.why, "not loaded (libnvidia-ml.so.1 not found)");
	assert_string_equal(b->telemetry.ecc.why, "not supported");
	probe_result_free(&r);
}

static void test_truncated_line_is_absent(void **state)
{
	(void)state;
	struct probe_result r;
	/* the child was killed halfway through writing its result */
	char line[sizeof(ze_line)];
	for (size_t cut = 0; cut < sizeof(ze_line) - 1; cut += 37) {
		memcpy(line, ze_line, cut);
		line[cut] = '\0';
		decode_line(line, &r);
		assert_false(r.present);
		assert_int_equal(r.n_devices, 0);
		assert_null(r.library);
		probe_result_free(&r);
	}
	probe_result_decode(NULL, &r);
	assert_false(r.present);
	assert_int_equal(r.device_count, -1);
	probe_result_free(&r);
}

static void test_hostile_types_read_as_absent(void **state)
{
	(void)state;
	struct probe_result r;
	decode_line(
		"result {\"ok\":\"yes\",\"backend\":7,\"library\":[\"x\"],\"driver_build\":\"29735\","
		"\"device_count\":\"8\",\"devices\":[3,\"x\",null,{\"index\":\"0\",\"name\":{},\"vendor_id\":-5,"
		"\"device_id\":\"0xzz\",\"memory_total\":-1,\"memory_free\":1.5,\"smoke\":[],"
		"\"telemetry\":\"broken\",\"processes\":{\"pid\":1},\"performance\":{\"copy_bandwidth_gbs\":\"fast\","
		"\"launch_latency_us\":1}},{\"processes\":[1,{\"pid\":\"x\",\"self\":1}],"
		"\"telemetry\":{\"temperature_c\":true,\"ras\":[],\"row_remap\":\"x\"}}]}",
		&r);
	assert_true(r.present);
	assert_false(r.ok);
	assert_null(r.backend);
	assert_null(r.library);
	assert_false(r.has_driver_build);
	assert_int_equal(r.device_count, -1);
	assert_int_equal(r.n_devices, 2); /* only the objects */
	const struct probe_device *d = &r.devices[0];
	assert_int_equal(d->index, -1);
	assert_null(d->name);
	assert_int_equal(d->vendor_id, -1);
	assert_int_equal(d->device_id, -1);
	assert_false(d->has_memory_total);
	assert_false(d->has_memory_free);
	assert_false(d->smoke.present);
	assert_false(d->telemetry.present);
	assert_int_equal(d->processes.state, PROBE_LIST_ABSENT);
	assert_true(d->performance.present);
	assert_false(d->performance.measured);
	const struct probe_device *e = &r.devices[1];
	assert_int_equal(e->processes.state, PROBE_LIST_KNOWN);
	assert_int_equal(e->processes.n, 1); /* the number is not a process */
	assert_int_equal(e->processes.items[0].pid, 0);
	assert_false(e->processes.items[0].self);
	assert_false(e->telemetry.temperature_c.present);
	assert_false(e->telemetry.ras.present);
	assert_false(e->telemetry.row_remap_failure);
	/* hostile input never gives a device by a wrong index */
	assert_ptr_equal(probe_result_device(&r, 0), &r.devices[0]);
	assert_null(probe_result_device(&r, 5));
	probe_result_free(&r);
}

static void test_deep_nesting_and_huge_numbers(void **state)
{
	(void)state;
	struct probe_result r;
	decode_line("result {\"devices\":[{\"index\":9223372036854775807,\"memory_total\":9223372036854775807,"
		    "\"smoke\":{\"elements\":-9223372036854775807},\"telemetry\":{\"power_w\":1e308}}]}",
		    &r);
	assert_int_equal(r.n_devices, 1);
	assert_true(r.devices[0].has_memory_total);
	assert_null(probe_result_device(&r, 1));
	assert_true(r.devices[0].telemetry.power_w.is_number);
	probe_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_level_zero_every_field),
		cmocka_unit_test(test_cuda_every_field),
		cmocka_unit_test(test_unavailable_lists_and_texts),
		cmocka_unit_test(test_truncated_line_is_absent),
		cmocka_unit_test(test_hostile_types_read_as_absent),
		cmocka_unit_test(test_deep_nesting_and_huge_numbers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
