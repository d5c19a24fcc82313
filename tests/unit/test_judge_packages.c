/* The packages group's judging (src/checks/judge_packages.h) on hand-built
 * dpkg stanzas, no fixture root: a relation at its exact version under each
 * operator, architecture qualifiers, virtual packages provided with and
 * without an exact version, and package states. Boundaries first: these are
 * where a flipped comparison or a dropped condition would go unseen. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "checks/judge_packages.h"

/* One installed package of the native architecture, as dpkg_status_parse
 * would give it. */
#define PKG(n, v)                                                                                               \
	{                                                                                                       \
		.name = n, .arch = "amd64", .version = v, .state = "installed", .multiarch = "", .provides = "" \
	}

struct verdict {
	bool holds;
	enum status status; /* the result's status after the findings */
	char found[1024];
	size_t candidates; /* package facts recorded */
};

static struct verdict judge(const char *text, struct dpkg_pkg *pkgs, size_t n, const char *native)
{
	struct verdict v = { 0 };
	struct relation rel;
	char why[256];
	assert_int_equal(relation_parse(text, &rel, why, sizeof(why)), 0);
	struct dpkg_status st = { .pkgs = pkgs, .count = n, .native_arch = NULL };
	struct strbuf found = STRBUF_INIT;
	json_t *installed = json_array();
	struct result r = { .id = "packages.installed" };
	v.holds = packages_relation_holds(&rel, &st, native, &found, installed, &r);
	v.status = r.status;
	snprintf(v.found, sizeof(v.found), "%s", found.buf ? found.buf : "");
	v.candidates = json_array_size(installed);
	json_decref(installed);
	sb_release(&found);
	result_release(&r);
	relation_free(&rel);
	return v;
}

static void exact_version_under_each_operator(void **state)
{
	(void)state;
	struct dpkg_pkg p[] = { PKG("libze1", "1.2-1") };
	assert_true(judge("libze1 (>= 1.2-1)", p, 1, "amd64").holds);
	assert_true(judge("libze1 (<= 1.2-1)", p, 1, "amd64").holds);
	assert_true(judge("libze1 (= 1.2-1)", p, 1, "amd64").holds);
	struct verdict v = judge("libze1 (>> 1.2-1)", p, 1, "amd64");
	assert_false(v.holds);
	assert_non_null(strstr(v.found, "is too old"));
	v = judge("libze1 (<< 1.2-1)", p, 1, "amd64");
	assert_false(v.holds);
	assert_non_null(strstr(v.found, "is too new"));
	/* one revision away on either side */
	assert_true(judge("libze1 (>> 1.2-0)", p, 1, "amd64").holds);
	assert_true(judge("libze1 (<< 1.2-2)", p, 1, "amd64").holds);
	assert_false(judge("libze1 (>= 1.2-2)", p, 1, "amd64").holds);
	v = judge("libze1 (<= 1.2-0)", p, 1, "amd64");
	assert_false(v.holds);
	assert_non_null(strstr(v.found, "is too new"));
	assert_non_null(strstr(judge("libze1 (>= 1.2-2)", p, 1, "amd64").found, "is too old"));
	v = judge("libze1 (= 1.2-2)", p, 1, "amd64");
	assert_false(v.holds);
	assert_non_null(strstr(v.found, "another version"));
	/* dpkg: 1.2-1 and 1.2-01 are the same version */
	assert_true(judge("libze1 (= 1.2-01)", p, 1, "amd64").holds);
	assert_int_equal(v.status, STATUS_PASS);
}

static void missing_and_states(void **state)
{
	(void)state;
	struct dpkg_pkg p[] = { PKG("libze1", "1.2-1") };
	struct verdict v = judge("libigc2", p, 1, "amd64");
	assert_false(v.holds);
	assert_string_equal(v.found, "not installed");
	assert_int_equal(v.candidates, 0);

	p[0].state = "config-files"; /* removed, its conffiles kept */
	v = judge("libze1", p, 1, "amd64");
	assert_false(v.holds);
	assert_non_null(strstr(v.found, "is not installed (state config-files)"));
	assert_int_equal(v.candidates, 1);
	p[0].state = "unpacked";
	assert_false(judge("libze1", p, 1, "amd64").holds);
	p[0].state = "triggers-pending";
	assert_true(judge("libze1", p, 1, "amd64").holds);
	p[0].state = "triggers-awaited"; /* holds, with a note that passes */
	v = judge("libze1 (>= 1)", p, 1, "amd64");
	assert_true(v.holds);
	assert_int_equal(v.status, STATUS_PASS);
	/* the note only when it holds */
	assert_false(judge("libze1 (>= 2)", p, 1, "amd64").holds);
}

static void architecture_qualifiers(void **state)
{
	(void)state;
	struct dpkg_pkg p[] = { PKG("libze1", "1.2-1") };
	assert_true(judge("libze1:amd64 (>= 1.2)", p, 1, "amd64").holds);
	assert_true(judge("libze1:amd64", p, 1, "arm64").holds); /* qualified: the named one, not the native */
	struct verdict v = judge("libze1:i386", p, 1, "amd64");
	assert_false(v.holds);
	assert_non_null(strstr(v.found, "has another architecture"));
	/* unqualified: the native architecture only */
	v = judge("libze1", p, 1, "arm64");
	assert_false(v.holds);
	assert_non_null(strstr(v.found, "is not the native architecture"));
	v = judge("libze1", p, 1, NULL);
	assert_false(v.holds);
	assert_non_null(strstr(v.found, "the native one is unknown"));
	p[0].multiarch = "foreign"; /* serves any architecture's dependency */
	assert_true(judge("libze1", p, 1, "arm64").holds);
	assert_false(judge("libze1:any", p, 1, "amd64").holds); /* ':any' needs allowed */
	p[0].multiarch = "allowed";
	assert_true(judge("libze1:any", p, 1, "arm64").holds);
	assert_false(judge("libze1", p, 1, "arm64").holds);
	p[0].multiarch = "same";
	assert_false(judge("libze1:any", p, 1, "amd64").holds);
	/* ':native' is apt's spelling: dpkg knows no such architecture */
	v = judge("libze1:native", p, 1, "amd64");
	assert_false(v.holds);
	assert_non_null(strstr(v.found, "'native'"));
	/* Architecture: all counts as native; ':all' means native */
	p[0].arch = "all";
	assert_true(judge("libze1", p, 1, "arm64").holds);
	assert_true(judge("libze1:all", p, 1, "arm64").holds);
	assert_false(judge("libze1:i386", p, 1, "arm64").holds);
	p[0].arch = ""; /* no Architecture field: not native */
	assert_false(judge("libze1", p, 1, "amd64").holds);
}

static void provided_virtual_package(void **state)
{
	(void)state;
	struct dpkg_pkg p[] = { PKG("intel-opencl-icd", "24.35.30872.22-1") };
	p[0].provides = "opencl-icd (= 3.0), libfoo";
	/* an exact provided version serves a versioned relation, at its boundary */
	assert_true(judge("opencl-icd (>= 3.0)", p, 1, "amd64").holds);
	assert_true(judge("opencl-icd (= 3.0)", p, 1, "amd64").holds);
	assert_true(judge("opencl-icd", p, 1, "amd64").holds);
	struct verdict v = judge("opencl-icd (>> 3.0)", p, 1, "amd64");
	assert_false(v.holds);
	assert_non_null(strstr(v.found, "provides opencl-icd (= 3.0)"));
	assert_false(judge("opencl-icd (<< 3.0)", p, 1, "amd64").holds);
	/* a provided version other than '=' serves nothing (depcon.c) */
	p[0].provides = "opencl-icd (>= 3.0)";
	assert_false(judge("opencl-icd (>= 3.0)", p, 1, "amd64").holds);
	p[0].provides = "opencl-icd (= 3.0), libfoo";
	/* an unversioned Provides serves only an unversioned relation */
	assert_true(judge("libfoo", p, 1, "amd64").holds);
	v = judge("libfoo (>= 0)", p, 1, "amd64");
	assert_false(v.holds);
	assert_non_null(strstr(v.found, "without a version"));
	/* a provided name is matched whole, never as a prefix either way */
	assert_false(judge("opencl", p, 1, "amd64").holds);
	assert_false(judge("libfoo2", p, 1, "amd64").holds);
	p[0].provides = "libze";
	assert_false(judge("libze1", p, 1, "amd64").holds);
	p[0].provides = "opencl-icd (= 3.0), libfoo";
	/* the provider's state and architecture still count */
	p[0].state = "half-configured";
	assert_false(judge("opencl-icd", p, 1, "amd64").holds);
	p[0].state = "installed";
	assert_false(judge("opencl-icd", p, 1, "arm64").holds);
	/* an arch-qualified Provides item carries its own architecture */
	p[0].provides = "opencl-icd:i386 (= 3.0)";
	assert_false(judge("opencl-icd", p, 1, "amd64").holds);
	assert_true(judge("opencl-icd:i386", p, 1, "amd64").holds);
}

static void alternatives_and_several_candidates(void **state)
{
	(void)state;
	struct dpkg_pkg p[] = { PKG("libze1", "1.2-1"), PKG("libze-intel-gpu1", "24.1-1") };
	p[1].arch = "i386";
	/* one alternative is enough, whichever it is */
	assert_true(judge("libze2 | libze1 (>= 1.2)", p, 2, "amd64").holds);
	assert_true(judge("libze1 (>= 9) | libze-intel-gpu1:i386", p, 2, "amd64").holds);
	struct verdict v = judge("libze1 (>= 9) | libze-intel-gpu1", p, 2, "amd64");
	assert_false(v.holds);
	assert_int_equal(v.candidates, 2);
	assert_non_null(strstr(v.found, "; "));
	/* two instances of one Multi-Arch: same package: one serving is enough */
	struct dpkg_pkg q[] = { PKG("libze1", "1.2-1"), PKG("libze1", "1.2-1") };
	q[0].arch = "i386";
	q[0].multiarch = q[1].multiarch = "same";
	assert_true(judge("libze1", q, 2, "amd64").holds);
	assert_false(judge("libze1", q, 2, "arm64").holds);
	/* the serving instance first, then one that does not: still holds */
	q[0].arch = "amd64";
	q[1].arch = "i386";
	assert_true(judge("libze1", q, 2, "amd64").holds);
}

static void unreadable_version_never_holds(void **state)
{
	(void)state;
	/* dpkg refuses these versions: no versioned relation holds, even one
	 * a lax comparison would let through */
	static const char *const refused[] = { "", "1.0 beta", "a:1.0", "1.0-" };
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		struct dpkg_pkg p[] = { PKG("libze1", (char *)refused[i]) };
		struct verdict v = judge("libze1 (>= 0)", p, 1, "amd64");
		assert_false(v.holds);
		v = judge("libze1 (<< 99)", p, 1, "amd64");
		assert_false(v.holds);
		if (*refused[i])
			assert_non_null(strstr(v.found, "has a version dpkg cannot read"));
		/* an unversioned relation does not read the version */
		assert_true(judge("libze1", p, 1, "amd64").holds);
	}
}

static void lenient_version_warns(void **state)
{
	(void)state;
	/* a version dpkg reads leniently (no digit first) warns and compares */
	struct dpkg_pkg p[] = { PKG("libze1", "v1.2") };
	struct verdict v = judge("libze1 (>= 0)", p, 1, "amd64");
	assert_int_equal(v.status, STATUS_WARN);
	/* unversioned: the version is not read, so no warning */
	v = judge("libze1", p, 1, "amd64");
	assert_true(v.holds);
	assert_int_equal(v.status, STATUS_PASS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exact_version_under_each_operator),
		cmocka_unit_test(missing_and_states),
		cmocka_unit_test(architecture_qualifiers),
		cmocka_unit_test(provided_virtual_package),
		cmocka_unit_test(alternatives_and_several_candidates),
		cmocka_unit_test(unreadable_version_never_holds),
		cmocka_unit_test(lenient_version_warns),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
