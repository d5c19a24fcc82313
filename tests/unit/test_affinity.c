/* ZE_AFFINITY_MASK and ZE_FLAT_DEVICE_HIERARCHY parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "lib/affinity.h"

static struct affinity a;
static char err[256];

static void unset_means_all(void **state)
{
	(void)state;
	assert_int_equal(affinity_parse(NULL, &a, err, sizeof(err)), 0);
	assert_true(a.all);
	assert_true(affinity_visible(&a, 7, -1));
	assert_true(affinity_visible(&a, 0, 3));
}

static void empty_hides_everything(void **state)
{
	(void)state;
	const char *forms[] = { "", " ", "\t  " };
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(affinity_parse(forms[i], &a, err, sizeof(err)), 0);
		assert_false(a.all);
		assert_int_equal(a.count, 0);
		assert_false(affinity_visible(&a, 0, -1));
	}
}

static void devices_and_sub_devices(void **state)
{
	(void)state;
	assert_int_equal(affinity_parse(" 0 , 2.1,3", &a, err, sizeof(err)), 0);
	assert_int_equal(a.count, 3);
	assert_int_equal(a.items[0].device, 0);
	assert_int_equal(a.items[0].sub, -1);
	assert_int_equal(a.items[1].device, 2);
	assert_int_equal(a.items[1].sub, 1);
	assert_true(affinity_visible(&a, 0, -1));
	assert_true(affinity_visible(&a, 0, 5));   /* the whole device includes its tiles */
	assert_false(affinity_visible(&a, 1, -1));
	assert_true(affinity_visible(&a, 2, -1));  /* some tile of 2 is named */
	assert_true(affinity_visible(&a, 2, 1));
	assert_false(affinity_visible(&a, 2, 0));
	char buf[64];
	affinity_format(&a, buf, sizeof(buf));
	assert_string_equal(buf, "0,2.1,3");
}

static void garbage_names_the_entry(void **state)
{
	(void)state;
	static const struct { const char *mask, *word; } bad[] = {
		{ "x", "entry 1 'x'" },
		{ "0,abc", "entry 2 'abc'" },
		{ "1,", "entry 2 is empty" },
		{ ",1", "entry 1 is empty" },
		{ "0,,1", "entry 2 is empty" },
		{ "-1", "'-1'" },
		{ "+1", "'+1'" },
		{ "0.", "'0.'" },
		{ ".1", "'.1'" },
		{ "0.1.2", "'0.1.2'" },
		{ "1024", "'1024'" },
		{ "99999999999999999999", "'99999999999999999999'" },
		{ "0x1", "'0x1'" },
		{ "1 2", "'1 2'" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(affinity_parse(bad[i].mask, &a, err, sizeof(err)), -1);
		if (!strstr(err, bad[i].word))
			fail_msg("mask '%s': error '%s' lacks '%s'", bad[i].mask, err, bad[i].word);
	}
}

static void too_many_entries(void **state)
{
	(void)state;
	char mask[1024] = "";
	for (int i = 0; i < AFFINITY_MAX_ITEMS + 1; i++)
		strcat(mask, i ? ",1" : "1");
	assert_int_equal(affinity_parse(mask, &a, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "more than"));
	assert_int_equal(affinity_parse("1023", &a, err, sizeof(err)), 0);
}

static void hierarchy_values(void **state)
{
	(void)state;
	enum hierarchy h;
	assert_int_equal(hierarchy_parse(NULL, &h, err, sizeof(err)), 0);
	assert_int_equal(h, HIERARCHY_FLAT);
	assert_int_equal(hierarchy_parse("COMPOSITE", &h, err, sizeof(err)), 0);
	assert_int_equal(h, HIERARCHY_COMPOSITE);
	assert_int_equal(hierarchy_parse("COMBINED", &h, err, sizeof(err)), 0);
	assert_string_equal(hierarchy_name(h), "COMBINED");
	assert_int_equal(hierarchy_parse("flat", &h, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'flat'"));
	assert_int_equal(hierarchy_parse("", &h, err, sizeof(err)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unset_means_all),
		cmocka_unit_test(empty_hides_everything),
		cmocka_unit_test(devices_and_sub_devices),
		cmocka_unit_test(garbage_names_the_entry),
		cmocka_unit_test(too_many_entries),
		cmocka_unit_test(hierarchy_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
