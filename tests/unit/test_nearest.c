/* The "did you mean" helper: edit distances and the nearest name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "lib/nearest.h"

static void test_distance(void **state)
{
	(void)state;
	assert_int_equal(edit_distance("", ""), 0);
	assert_int_equal(edit_distance("abc", ""), 3);
	assert_int_equal(edit_distance("", "abc"), 3);
	assert_int_equal(edit_distance("kitten", "sitting"), 3);
	assert_int_equal(edit_distance("hf.mount", "hf.mounted"), 2);
	assert_int_equal(edit_distance("flaw", "lawn"), 2);
	char long_name[400];
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	assert_true(edit_distance(long_name, "a") == (size_t)-1);
}

static const char *pick(const char *word, const char *const *names)
{
	struct nearest n;
	nearest_init(&n, word);
	for (; *names; names++)
		nearest_offer(&n, *names);
	return nearest_result(&n);
}

static void test_nearest(void **state)
{
	(void)state;
	const char *ids[] = { "hf.location", "hf.mounted", "hf.writable", "devices.by_path", "runtime", NULL };
	assert_string_equal(pick("hf.mount", ids), "hf.mounted");
	assert_string_equal(pick("hf.writeable", ids), "hf.writable");
	assert_string_equal(pick("devices.bypath", ids), "devices.by_path");
	assert_string_equal(pick("runtim", ids), "runtime");
	assert_null(pick("zzzzzz", ids)); /* nothing close: no guess */
	assert_null(pick("x", ids));
	const char *none[] = { NULL };
	assert_null(pick("hf.mount", none));
	/* the first of equally near names wins */
	const char *ties[] = { "ab", "ba", NULL };
	assert_string_equal(pick("aa", ties), "ab");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_distance),
		cmocka_unit_test(test_nearest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
