/* lib/util.h's sizes and durations for people: a duration keeps enough
 * precision to tell what the user gave (a 0.0001 s deadline is "0.1 ms",
 * never "0.0 s"), a whole number of seconds has no decimals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/util.h"

static void expect_seconds(double s, const char *want)
{
	char buf[32];
	human_seconds(s, buf, sizeof(buf));
	assert_string_equal(buf, want);
}

static void durations_keep_their_precision(void **state)
{
	(void)state;
	expect_seconds(30, "30 s");
	expect_seconds(1, "1 s");
	expect_seconds(2.5, "2.5 s");
	expect_seconds(1.25, "1.25 s");
	expect_seconds(0.5, "500 ms");
	expect_seconds(0.0001, "0.1 ms");
	expect_seconds(0.000001, "0.001 ms");
	expect_seconds(1e-7, "1e-07 s");
	expect_seconds(0, "0 s");
	expect_seconds(10000000, "10000000 s");
	/* a deadline measured back from monotonic time is not exact */
	expect_seconds(30.0000000001, "30 s");
	expect_seconds(0.99999, "999.99 ms");
}

static void sizes_in_iec_units(void **state)
{
	(void)state;
	char buf[32];
	human_bytes(512, buf, sizeof(buf));
	assert_string_equal(buf, "512 B");
	human_bytes(1536, buf, sizeof(buf));
	assert_string_equal(buf, "1.5 KiB");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(durations_keep_their_precision),
		cmocka_unit_test(sizes_in_iec_units),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
