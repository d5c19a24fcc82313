/* ZE_AFFINITY_MASK and ZE_FLAT_DEVICE_HIERARCHY as the Intel compute-runtime
 * reads them (shared/source/execution_environment/execution_environment.cpp:
 * parseAffinityMask, setDeviceHierarchyMode). The compute-runtime's own test
 * vectors run through the built gpugate in tests/integration/test_devices.py
 * (tests/vectors/level-zero-affinity.tsv); these are the parsing corners. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "lib/affinity.h"

static struct affinity_result r;
static const unsigned one_tile[4] = { 1, 1, 1, 1 };
static const unsigned two_tiles[4] = { 2, 2, 2, 2 };

static void no_filter_forms(void **state)
{
	(void)state;
	/* unset, empty and the driver's own "default" all mean: no filter */
	const char *forms[] = { NULL, "", "default" };
	for (size_t i = 0; i < 3; i++) {
		affinity_apply(forms[i], HIERARCHY_COMPOSITE, two_tiles, 4, &r);
		assert_false(r.filtered);
		assert_int_equal(r.gpus, 4);
		assert_int_equal(r.devices, 4);
		affinity_apply(forms[i], HIERARCHY_FLAT, two_tiles, 4, &r);
		assert_int_equal(r.devices, 8);
	}
}

/* Where affinity_needs_tiles says no, the answer is the same whatever the
 * tiles: devices.visibility then counts none. */
static void tiles_needed_only_where_they_count(void **state)
{
	(void)state;
	static const char *const masks[] = { NULL, "", "default", "0", "1.1", "0,1" };
	static const enum hierarchy hs[] = { HIERARCHY_FLAT, HIERARCHY_COMPOSITE, HIERARCHY_COMBINED };
	static struct affinity_result with_one, with_two;
	for (size_t m = 0; m < sizeof(masks) / sizeof(masks[0]); m++) {
		for (size_t h = 0; h < 3; h++) {
			affinity_apply(masks[m], hs[h], one_tile, 4, &with_one);
			affinity_apply(masks[m], hs[h], two_tiles, 4, &with_two);
			bool same = with_one.gpus == with_two.gpus && with_one.devices == with_two.devices &&
				    with_one.note_count == with_two.note_count &&
				    memcmp(with_one.visible, with_two.visible, sizeof(with_one.visible)) == 0;
			if (!affinity_needs_tiles(masks[m], hs[h]))
				assert_true(same);
		}
	}
	assert_false(affinity_needs_tiles(NULL, HIERARCHY_COMPOSITE));
	assert_false(affinity_needs_tiles("default", HIERARCHY_COMPOSITE));
	assert_true(affinity_needs_tiles(NULL, HIERARCHY_FLAT));
	assert_true(affinity_needs_tiles(NULL, HIERARCHY_COMBINED));
	assert_true(affinity_needs_tiles("0", HIERARCHY_COMPOSITE));
}

static void numbers_read_like_stoul(void **state)
{
	(void)state;
	/* std::stoul(s, nullptr, 0): hex, octal, a sign, blanks before, text after */
	static const struct {
		const char *mask;
		size_t gpu;
	} forms[] = {
		{ "0x1", 1 }, { "010", 8 },  { "08", 0 },  { "+1", 1 },
		{ " 2", 2 },  { "3abc", 3 }, { "1 2", 1 }, { "4294967297", 1 }, /* cast to uint32_t: 2^32 + 1 is 1 */
	};
	unsigned tiles[16];
	for (size_t i = 0; i < 16; i++)
		tiles[i] = 1;
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		affinity_apply(forms[i].mask, HIERARCHY_COMPOSITE, tiles, 16, &r);
		if (r.aborts || r.gpus != 1 || !r.visible[forms[i].gpu])
			fail_msg("mask '%s': expected only GPU %zu visible", forms[i].mask, forms[i].gpu);
	}
}

static void missing_devices_are_skipped_with_a_note(void **state)
{
	(void)state;
	affinity_apply("0,5,-1", HIERARCHY_COMPOSITE, one_tile, 4, &r);
	assert_false(r.aborts);
	assert_int_equal(r.gpus, 1);
	assert_int_equal(r.note_count, 2); /* -1 wraps to 4294967295: no such device either */
	assert_non_null(strstr(r.notes[0].text, "names device 5, which does not exist"));
	assert_non_null(strstr(r.notes[0].text, "the driver ignores it"));
	affinity_apply("7", HIERARCHY_COMPOSITE, one_tile, 4, &r);
	assert_int_equal(r.gpus, 0);
	assert_int_equal(r.note_count, 1);
}

static void sub_devices_by_hierarchy(void **state)
{
	(void)state;
	/* COMPOSITE: N.M is tile M of GPU N */
	affinity_apply("1.1", HIERARCHY_COMPOSITE, two_tiles, 4, &r);
	assert_int_equal(r.gpus, 1);
	assert_true(r.visible[1]);
	assert_int_equal(r.tiles_on[1], 2);
	affinity_apply("1.2", HIERARCHY_COMPOSITE, two_tiles, 4, &r);
	assert_int_equal(r.gpus, 0);
	assert_int_equal(r.note_count, 1);
	/* FLAT and COMBINED: every tile is a device, N.M is ignored */
	for (int h = 0; h < 2; h++) {
		affinity_apply("1.1,3", h ? HIERARCHY_COMBINED : HIERARCHY_FLAT, two_tiles, 4, &r);
		assert_int_equal(r.gpus, 1);
		assert_true(r.visible[1]); /* device 3 is GPU 1's second tile */
		assert_int_equal(r.devices, 1);
		assert_int_equal(r.note_count, 1);
		assert_non_null(strstr(r.notes[0].text, "ignores under FLAT and COMBINED"));
	}
	/* X.Y.Z names an engine: ignored; a fourth part aborts */
	affinity_apply("0.1.0", HIERARCHY_COMPOSITE, two_tiles, 4, &r);
	assert_false(r.aborts);
	assert_int_equal(r.gpus, 0);
	affinity_apply("0.1.0.0", HIERARCHY_COMPOSITE, two_tiles, 4, &r);
	assert_true(r.aborts);
	/* a trailing '.' or ',' yields no piece in the driver's split() */
	affinity_apply("0.,1,", HIERARCHY_COMPOSITE, two_tiles, 4, &r);
	assert_false(r.aborts);
	assert_int_equal(r.gpus, 2);
}

static void entries_the_driver_aborts_on(void **state)
{
	(void)state;
	static const char *const masks[] = { "x", "0,abc", ",1", "0,,1", ".1", "99999999999999999999999", "1.x" };
	for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		affinity_apply(masks[i], HIERARCHY_COMPOSITE, two_tiles, 4, &r);
		if (!r.aborts || !r.abort_reason[0])
			fail_msg("mask '%s' should abort the driver", masks[i]);
		assert_int_equal(r.gpus, 0);
	}
	/* under FLAT the sub-entry is never read, so "1.x" is only ignored */
	affinity_apply("1.x", HIERARCHY_FLAT, two_tiles, 4, &r);
	assert_false(r.aborts);
}

static void hierarchy_default_and_values(void **state)
{
	(void)state;
	enum hierarchy h;
	assert_int_equal(hierarchy_default(0x0BD5), HIERARCHY_FLAT);      /* Data Center GPU Max 1550 */
	assert_int_equal(hierarchy_default(0x56C0), HIERARCHY_COMPOSITE); /* Flex 170 */
	assert_int_equal(hierarchy_default(0xE20B), HIERARCHY_COMPOSITE); /* Arc B580 */
	assert_true(hierarchy_parse("COMBINED", HIERARCHY_FLAT, &h));
	assert_int_equal(h, HIERARCHY_COMBINED);
	/* unknown and lower-case values fall back to the default, as in the driver */
	assert_false(hierarchy_parse("flat", HIERARCHY_COMPOSITE, &h));
	assert_int_equal(h, HIERARCHY_COMPOSITE);
	assert_false(hierarchy_parse(NULL, HIERARCHY_FLAT, &h));
	assert_int_equal(h, HIERARCHY_FLAT);
	assert_string_equal(hierarchy_name(HIERARCHY_COMPOSITE), "COMPOSITE");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_filter_forms),
		cmocka_unit_test(tiles_needed_only_where_they_count),
		cmocka_unit_test(numbers_read_like_stoul),
		cmocka_unit_test(missing_devices_are_skipped_with_a_note),
		cmocka_unit_test(sub_devices_by_hierarchy),
		cmocka_unit_test(entries_the_driver_aborts_on),
		cmocka_unit_test(hierarchy_default_and_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
