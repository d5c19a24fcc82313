/* Relation expressions: what parses, what it means, and the errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "lib/debrelation.h"

static void test_valid(void **state)
{
	(void)state;
	struct relation r;
	char err[256];
	assert_int_equal(relation_parse("libze1", &r, err, sizeof(err)), 0);
	assert_int_equal(r.count, 1);
	assert_string_equal(r.alts[0].name, "libze1");
	assert_null(r.alts[0].arch);
	assert_int_equal(r.alts[0].op, REL_ANY);
	relation_free(&r);

	assert_int_equal(relation_parse("  libze-intel-gpu1 ( >= 24.26 ) |intel-level-zero-gpu:amd64 (>>1.3.29138)", &r,
					err, sizeof(err)),
			 0);
	assert_int_equal(r.count, 2);
	assert_string_equal(r.alts[0].name, "libze-intel-gpu1");
	assert_int_equal(r.alts[0].op, REL_GE);
	assert_string_equal(r.alts[0].version, "24.26");
	assert_string_equal(r.alts[1].name, "intel-level-zero-gpu");
	assert_string_equal(r.alts[1].arch, "amd64");
	assert_int_equal(r.alts[1].op, REL_GT);
	assert_string_equal(r.alts[1].version, "1.3.29138");
	relation_free(&r);

	const char *ops[] = { "<<", "<=", "=", ">=", ">>" };
	const enum rel_op want[] = { REL_LT, REL_LE, REL_EQ, REL_GE, REL_GT };
	for (size_t i = 0; i < 5; i++) {
		char text[64];
		snprintf(text, sizeof(text), "a0:any (%s 1:2.0~rc1-1)", ops[i]);
		assert_int_equal(relation_parse(text, &r, err, sizeof(err)), 0);
		assert_int_equal(r.alts[0].op, want[i]);
		assert_string_equal(r.alts[0].arch, "any");
		relation_free(&r);
	}
}

/* What dpkg only warns about is taken as dpkg takes it, with the warning
 * kept (lib/dpkg/fields.c f_dependency, lib/dpkg/parsehelp.c parseversion). */
static void expect_warning(const char *text, enum rel_op op, const char *words)
{
	struct relation r;
	char err[256];
	assert_int_equal(relation_parse(text, &r, err, sizeof(err)), 0);
	assert_int_equal(r.alts[0].op, op);
	assert_non_null(r.alts[0].warning);
	if (!strstr(r.alts[0].warning, words))
		fail_msg("'%s': warning '%s' lacks '%s'", text, r.alts[0].warning, words);
	relation_free(&r);
}

static void test_warnings(void **state)
{
	(void)state;
	expect_warning("libze1 (> 1.0)", REL_GE, "obsolete");
	expect_warning("libze1 (< 1.0)", REL_LE, "obsolete");
	expect_warning("libze1 (1.0)", REL_EQ, "exact match");
	expect_warning("libze1 (>= a1.0)", REL_GE, "does not start with digit");
	expect_warning("libze1 (>= 1.0_1)", REL_GE, "invalid character");
	/* capitals: dpkg looks the name up lowercased (lib/dpkg/pkg-hash.c) */
	expect_warning("LibZe1", REL_ANY, "looks 'LibZe1' up as 'libze1'");
	expect_warning("LibZe1 (> 1.0)", REL_GE,
		       "lowercase (deb-control(5)): dpkg looks 'LibZe1' up as 'libze1'; '>' is obsolete");
	struct relation r;
	char err[256];
	assert_int_equal(relation_parse("Mesa-Vulkan-Drivers:amd64 | LibZe1", &r, err, sizeof(err)), 0);
	assert_string_equal(r.alts[0].name, "mesa-vulkan-drivers");
	assert_string_equal(r.alts[1].name, "libze1");
	relation_free(&r);
	assert_int_equal(relation_parse("libze1 (>= 2147483647:1.0)", &r, err, sizeof(err)), 0);
	assert_null(r.alts[0].warning);
	relation_free(&r);
	assert_int_equal(relation_parse("libze1 (>= 0000000001:1.0)", &r, err, sizeof(err)), 0);
	assert_null(r.alts[0].warning);
	relation_free(&r);
}

static void expect_error(const char *text, const char *words)
{
	struct relation r;
	char err[256];
	assert_int_equal(relation_parse(text, &r, err, sizeof(err)), -1);
	if (!strstr(err, words))
		fail_msg("'%s': error '%s' lacks '%s'", text, err, words);
	assert_null(r.alts);
}

static void test_invalid(void **state)
{
	(void)state;
	expect_error("", "expected a package name");
	expect_error("_a", "invalid package name");
	expect_error("-a", "invalid package name");
	expect_error("libze1 (>= )", "expected a version");
	expect_error("libze1 (~ 1.0)", "expected ')'");
	expect_error("libze1 (<> 1.0)", "bad version relationship");
	expect_error("libze1 (>= 1:)", "nothing after colon");
	expect_error("libze1 (>= 1.0", "expected ')'");
	expect_error("libze1, libze-dev", "one relation per list item");
	expect_error("libze1 |", "expected a package name");
	expect_error("libze1: (>= 1)", "architecture");
	expect_error("libze1 junk", "unexpected text");
}

/* Names dpkg's pkg_name_is_illegal() (lib/dpkg/parsehelp.c) accepts: one
 * character, '_' after the first. */
static void test_dpkg_names(void **state)
{
	(void)state;
	const char *ok[] = { "a", "x_y", "g++", "a.b-c+d_e", NULL };
	for (const char **n = ok; *n; n++) {
		struct relation rel;
		char err[256];
		if (relation_parse(*n, &rel, err, sizeof(err)) != 0)
			fail_msg("%s: %s", *n, err);
		relation_free(&rel);
		assert_null(deb_name_illegal(*n, strlen(*n)));
	}
	assert_non_null(deb_name_illegal("_a", 2));
	assert_non_null(deb_name_illegal("", 0));
	assert_non_null(deb_name_illegal("a b", 3));
}

static bool count_items(const struct relfield_item *it, void *data)
{
	(void)it;
	++*(int *)data;
	return true;
}

/* A database relation field as f_dependency() (lib/dpkg/fields.c) reads it:
 * continued lines, alternatives only where allowed, its errors. */
static void test_relfield(void **state)
{
	(void)state;
	char err[256];
	int n = 0;
	assert_int_equal(relfield_walk("Provides", "a,\n b (= 1),\n\tc:any", strlen("a,\n b (= 1),\n\tc:any"),
				       RELFIELD_PROVIDES, count_items, &n, err, sizeof(err)),
			 0);
	assert_int_equal(n, 3);
	n = 0;
	assert_int_equal(relfield_walk("Depends", "a | b (>= 2), c", strlen("a | b (>= 2), c"), RELFIELD_DEPENDS,
				       count_items, &n, err, sizeof(err)),
			 0);
	assert_int_equal(n, 3);
	assert_int_equal(
		relfield_walk("Provides", "a | b", strlen("a | b"), RELFIELD_PROVIDES, NULL, NULL, err, sizeof(err)),
		-1);
	assert_non_null(strstr(err, "alternatives"));
	assert_int_equal(relfield_walk("Depends", "a,", strlen("a,"), RELFIELD_DEPENDS, NULL, NULL, err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "missing package name"));
	assert_int_equal(
		relfield_walk("Depends", "a (>= 1", strlen("a (>= 1"), RELFIELD_DEPENDS, NULL, NULL, err, sizeof(err)),
		-1);
	assert_non_null(strstr(err, "unterminated"));
	assert_int_equal(relfield_walk("Depends", "a (>= 1:)", strlen("a (>= 1:)"), RELFIELD_DEPENDS, NULL, NULL, err,
				       sizeof(err)),
			 -1);
	assert_int_equal(relfield_walk("Provides", "a (>= 1)", strlen("a (>= 1)"), RELFIELD_PROVIDES, NULL, NULL, err,
				       sizeof(err)),
			 0);
}

static void test_holds(void **state)
{
	(void)state;
	assert_true(rel_op_holds(REL_GE, "1.8.12-1", "1.8"));
	assert_false(rel_op_holds(REL_GE, "1.8.12-1", "1.17"));
	assert_true(rel_op_holds(REL_LT, "1.0~rc1", "1.0"));
	assert_true(rel_op_holds(REL_EQ, "1.01", "1.1"));
	assert_false(rel_op_holds(REL_GT, "2.0", "2.0"));
	assert_true(rel_op_holds(REL_LE, "2.0", "2.0"));
	assert_true(rel_op_holds(REL_ANY, "", ""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid), cmocka_unit_test(test_invalid),    cmocka_unit_test(test_warnings),
		cmocka_unit_test(test_holds), cmocka_unit_test(test_dpkg_names), cmocka_unit_test(test_relfield),
	};
	return cmocka_run_group_tests_name("debrelation", tests, NULL, NULL);
}
