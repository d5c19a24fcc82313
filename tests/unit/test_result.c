/* result.c's text for reports: json_text keeps printable text and UTF-8 as
 * they are and turns control characters and bytes that are not UTF-8 into
 * '?', whichever of its two ways (plain ASCII as is, anything else copied
 * and cleaned) it takes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "result.h"

static void text_is(const char *in, const char *want)
{
	json_t *j = json_text(in);
	assert_non_null(j);
	assert_string_equal(json_string_value(j), want);
	json_decref(j);
}

static void json_text_cleans_what_a_terminal_must_not_get(void **state)
{
	(void)state;
	text_is(NULL, "");
	text_is("", "");
	text_is("0000:03:00.0 Intel 0x56c0 (driver xe)", "0000:03:00.0 Intel 0x56c0 (driver xe)");
	text_is("caf\xc3\xa9", "caf\xc3\xa9");
	text_is("a\x01"
		"b\x7f"
		"c",
		"a?b?c");
	text_is("tab\there\nline", "tab\there\nline");
	text_is("bad \xff byte", "bad ? byte");
	text_is("cut \xe2\x82", "cut ??");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(json_text_cleans_what_a_terminal_must_not_get),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
