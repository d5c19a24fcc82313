#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "lib/zeversion.h"

static void test_since_23_09(void **state)
{
	(void)state;
	struct ze_driver_version v;
	ze_version_decode(0x01030000u + 33578u, &v); /* 25.18.33578.6 */
	assert_int_equal(v.format, ZE_VERSION_MAJOR_MINOR_BUILD);
	assert_int_equal(v.build, 33578);
	assert_int_equal(v.hotfix, -1);
	assert_string_equal(v.text, "1.3.33578");
}

static void test_24_22_exception(void **state)
{
	(void)state;
	struct ze_driver_version v;
	ze_version_decode((29735u << 12) + 13u, &v); /* 24.22.29735.13 */
	assert_int_equal(v.format, ZE_VERSION_BUILD_HOTFIX);
	assert_int_equal(v.build, 29735);
	assert_int_equal(v.hotfix, 13);
	assert_string_equal(v.text, "29735.13");
	ze_version_decode((29735u << 12) + 2u, &v);
	assert_string_equal(v.text, "29735.2");
}

static void test_before_23_09(void **state)
{
	(void)state;
	struct ze_driver_version v;
	ze_version_decode((1u << 24) | (3u << 16) | (24595u & 0xffff), &v); /* 22.43.24595 */
	assert_int_equal(v.format, ZE_VERSION_MAJOR_MINOR_BUILD);
	assert_int_equal(v.major, 1);
	assert_int_equal(v.minor, 3);
	assert_int_equal(v.build, 24595);
	assert_string_equal(v.text, "1.3.24595");
	ze_version_decode((1u << 24) | (2u << 16) | 13100u, &v);
	assert_string_equal(v.text, "1.2.13100");
}

static void test_package_build(void **state)
{
	(void)state;
	assert_int_equal(ze_package_build("24.22.29735.13-1"), 29735);
	assert_int_equal(ze_package_build("1.3.26918.9"), 26918);
	assert_int_equal(ze_package_build("22.43.24595.41-1"), 24595);
	assert_int_equal(ze_package_build("1:25.18.33578.6-1ubuntu1"), 33578);
	assert_int_equal(ze_package_build("24.26"), -1);
	assert_int_equal(ze_package_build("garbage"), -1);
	assert_int_equal(ze_package_build(NULL), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_since_23_09),
		cmocka_unit_test(test_24_22_exception),
		cmocka_unit_test(test_before_23_09),
		cmocka_unit_test(test_package_build),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
