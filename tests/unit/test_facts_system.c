/* The system group's facts (src/facts/system.c): each check's encoding
 * decodes back to the same facts, CapEff as the kernel's hex, and hostile
 * details (wrong types, a CapEff that is not hex or too long, details that
 * are not an object) are refused with the check and key named. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "facts/system.h"

static void round_trip(void **state)
{
	(void)state;
	json_t *sec = json_object(), *caps = json_object(), *cont = json_object(), *klog = json_object();
	system_seccomp_encode(sec, &(struct system_seccomp_fact){ 2, 3, 1 });
	/* docker's default set: CAP_CHOWN ... CAP_AUDIT_WRITE, bit 63 to prove no sign is lost */
	uint64_t eff = 0x00000000a80425fbULL | (1ULL << 63);
	system_caps_encode(caps, &(struct system_caps_fact){ eff });
	assert_string_equal(json_string_value(json_object_get(caps, "CapEff")), "80000000a80425fb");
	system_container_encode(cont, &(struct system_container_fact){ true, "docker" });
	system_kernel_log_encode(klog, &(struct system_kernel_log_fact){ 1234, true, 7 });

	struct system_facts f = { 0 };
	char err[256];
	assert_int_equal(system_seccomp_decode(sec, &f, err, sizeof(err)), 0);
	assert_int_equal(system_caps_decode(caps, &f, err, sizeof(err)), 0);
	assert_int_equal(system_container_decode(cont, &f, err, sizeof(err)), 0);
	assert_int_equal(system_kernel_log_decode(klog, &f, err, sizeof(err)), 0);
	assert_true(f.has_seccomp && f.has_caps && f.has_container && f.has_kernel_log);
	assert_int_equal(f.seccomp.mode, 2);
	assert_int_equal(f.seccomp.filters, 3);
	assert_int_equal(f.seccomp.sandbox_filters, 1);
	assert_true(f.caps.cap_eff == eff);
	assert_true(f.container.container);
	assert_string_equal(f.container.engine, "docker");
	assert_true(f.kernel_log.lines_read == 1234);
	assert_true(f.kernel_log.gpu_errors == 7);
	assert_true(f.kernel_log.stopped_early);

	/* not in a container: no engine key, read as NULL */
	json_t *bare = json_object();
	system_container_encode(bare, &(struct system_container_fact){ false, NULL });
	assert_null(json_object_get(bare, "engine"));
	assert_int_equal(system_container_decode(bare, &f, err, sizeof(err)), 0);
	assert_false(f.container.container);
	assert_null(f.container.engine);
	json_decref(sec);
	json_decref(caps);
	json_decref(cont);
	json_decref(klog);
	json_decref(bare);
}

static void hostile_details(void **state)
{
	(void)state;
	struct system_facts f = { 0 };
	char err[256];
	json_t *sec = json_pack("{s:s}", "mode", "2");
	assert_int_equal(system_seccomp_decode(sec, &f, err, sizeof(err)), -1);
	assert_string_equal(err, "system.seccomp: \"mode\" is not an integer");
	assert_false(f.has_seccomp);
	/* CapEff: not hex, empty, longer than 64 bits, trailing junk, not a string */
	static const char *const bad[] = { "xyz", "", "10000000000000000", "ff ", "-1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		json_t *caps = json_pack("{s:s}", "CapEff", bad[i]);
		assert_int_equal(system_caps_decode(caps, &f, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "system.capabilities: \"CapEff\" is not a hex capability set"));
		assert_false(f.has_caps);
		json_decref(caps);
	}
	json_t *caps = json_pack("{s:i}", "CapEff", 255);
	assert_int_equal(system_caps_decode(caps, &f, err, sizeof(err)), -1);
	assert_string_equal(err, "system.capabilities: \"CapEff\" is not a string");
	json_t *cont = json_pack("{s:i}", "container", 1);
	assert_int_equal(system_container_decode(cont, &f, err, sizeof(err)), -1);
	assert_string_equal(err, "system.container: \"container\" is not true or false");
	json_t *klog = json_pack("{s:i}", "lines_read", -5);
	assert_int_equal(system_kernel_log_decode(klog, &f, err, sizeof(err)), -1);
	assert_string_equal(err, "system.kernel_log: \"lines_read\" is not an integer from 0");
	json_t *notobj = json_string("details");
	assert_int_equal(system_seccomp_decode(notobj, &f, err, sizeof(err)), -1);
	assert_string_equal(err, "system.seccomp: its details are not an object");
	json_decref(sec);
	json_decref(caps);
	json_decref(cont);
	json_decref(klog);
	json_decref(notobj);
}

static void missing_details_and_keys(void **state)
{
	(void)state;
	struct system_facts f = { 0 };
	char err[256];
	assert_int_equal(system_seccomp_decode(NULL, &f, err, sizeof(err)), 0);
	assert_false(f.has_seccomp);
	json_t *empty = json_object();
	assert_int_equal(system_kernel_log_decode(empty, &f, err, sizeof(err)), 0);
	assert_false(f.has_kernel_log);
	/* the kernel log check that was refused writes no lines_read: zero, not an error */
	json_t *partial = json_pack("{s:b}", "stopped_early", 0);
	assert_int_equal(system_kernel_log_decode(partial, &f, err, sizeof(err)), 0);
	assert_true(f.has_kernel_log);
	assert_true(f.kernel_log.lines_read == 0);
	json_t *caps = json_pack("{}");
	assert_int_equal(system_caps_decode(caps, &f, err, sizeof(err)), 0);
	assert_false(f.has_caps);
	json_decref(empty);
	json_decref(partial);
	json_decref(caps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(hostile_details),
		cmocka_unit_test(missing_details_and_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
