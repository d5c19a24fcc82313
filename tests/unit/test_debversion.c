/* Debian version order against dpkg itself: 10,000 generated pairs rich in
 * '~', epochs, revisions, leading zeros and letters, each compared by
 * debversion_compare and by `dpkg --compare-versions`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "lib/debversion.h"

extern char **environ;

static int sign(int x)
{
	return (x > 0) - (x < 0);
}

static void test_known_order(void **state)
{
	(void)state;
	/* From deb-version(7), in increasing order. */
	const char *ordered[] = { "1.0~rc1", "1.0", "1.0a", "1.0+b1", "1.0.1", "1:0.1" };
	for (size_t i = 0; i + 1 < sizeof(ordered) / sizeof(*ordered); i++) {
		assert_true(debversion_compare(ordered[i], ordered[i + 1]) < 0);
		assert_true(debversion_compare(ordered[i + 1], ordered[i]) > 0);
	}
	assert_int_equal(debversion_compare("1.01", "1.1"), 0);
	assert_int_equal(debversion_compare("1.0", "1.0-0"), 0);
	assert_int_equal(debversion_compare("0:1.0", "1.0"), 0);
	assert_true(debversion_compare("1.0~~", "1.0~~a") < 0);
	assert_true(debversion_compare("1.0~~a", "1.0~") < 0);
	assert_true(debversion_compare("1.0~", "1.0") < 0);
	assert_true(debversion_compare("1.0", "1.0a") < 0);
	assert_true(debversion_compare("2.0-1", "2.0-1ubuntu1") < 0);
	assert_true(debversion_compare("24.26.30049.6-1", "24.26.30049.10-1") < 0);
}

/* dpkg's parseversion() (lib/dpkg/parsehelp.c): what it refuses, what it
 * only warns about, and the epochs strtol reads. */
static void test_levels(void **state)
{
	(void)state;
	static const struct {
		const char *v;
		enum debversion_level level;
	} cases[] = {
		{ "2147483647:1.0", DEBVERSION_OK },
		{ "0000000001:1.0", DEBVERSION_OK },
		{ "+1:1.0", DEBVERSION_OK },
		{ " \t1.0 ", DEBVERSION_OK },
		{ "2147483648:1.0", DEBVERSION_ERROR },
		{ "-1:1.0", DEBVERSION_ERROR },
		{ "1:", DEBVERSION_ERROR },
		{ "1.0-", DEBVERSION_ERROR },
		{ "1 0", DEBVERSION_ERROR },
		{ "a1.0", DEBVERSION_WARN },
		{ "1.0_1", DEBVERSION_WARN },
		{ "1.0-a:b", DEBVERSION_ERROR },
		{ "1:1.0-a:b", DEBVERSION_WARN },
		{ "1.0\xc3\xa9", DEBVERSION_WARN },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum debversion_level level;
		const char *why = debversion_check(cases[i].v, &level);
		if (level != cases[i].level || (level == DEBVERSION_OK) != (why == NULL))
			fail_msg("'%s': level %d (%s), expected %d", cases[i].v, level, why ? why : "ok",
				 cases[i].level);
	}
	assert_int_equal(debversion_compare("0000000001:1.0", "1:1.0"), 0);
	assert_true(debversion_compare("2147483647:1.0", "2147483646:9") > 0);
	/* bytes >= 0x80 weigh their own value (a signed char + 256): after the
	 * letters, before '+' and '.' */
	assert_true(debversion_compare("1.0\xc3", "1.0+") < 0);
	assert_true(debversion_compare("1.0\xc3", "1.0z") > 0);
}

static void test_invalid(void **state)
{
	(void)state;
	assert_null(debversion_invalid("1.0"));
	assert_null(debversion_invalid("1:2.3~rc1-4ubuntu1"));
	assert_null(debversion_invalid("22.3.3+ds1-1"));
	assert_non_null(debversion_invalid(""));
	assert_non_null(debversion_invalid("a1.0"));
	assert_non_null(debversion_invalid("x:1.0"));
	assert_non_null(debversion_invalid(":1.0"));
	assert_non_null(debversion_invalid("1.0-"));
	assert_non_null(debversion_invalid("1.0 2"));
	assert_non_null(debversion_invalid("1.0_2"));
	assert_non_null(debversion_invalid("1.0-a:b"));
}

/* xorshift: reproducible pairs without depending on rand()'s quality */
static uint32_t rng_state = 2463534242u;
static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state % n;
}

static void add_piece(char *buf, size_t size)
{
	static const char *const pieces[] = { "0", "00", "1",  "01",    "9",   "10",     "010", "123",
					      "a", "b",  "z",  "A",     "rc",  "~",      "~~",  "~a",
					      "+", ".",  "+b", "+dfsg", "~rc", "ubuntu", "deb" };
	size_t len = strlen(buf);
	snprintf(buf + len, size - len, "%s", pieces[rnd(sizeof(pieces) / sizeof(*pieces))]);
}

static void make_version(char *buf, size_t size)
{
	buf[0] = '\0';
	if (rnd(4) == 0)
		snprintf(buf, size, "%u:", rnd(3));
	size_t len = strlen(buf);
	snprintf(buf + len, size - len, "%u", rnd(12)); /* upstream starts with a digit */
	int n = (int)rnd(6);
	for (int i = 0; i < n; i++)
		add_piece(buf, size);
	if (rnd(2)) {
		len = strlen(buf);
		snprintf(buf + len, size - len, "-");
		int m = 1 + (int)rnd(3);
		for (int i = 0; i < m; i++)
			add_piece(buf, size);
		/* a revision must not end up empty or start oddly: dpkg accepts any */
	}
}

/* A second version close to the first, so that comparisons are interesting. */
static void mutate(const char *a, char *b, size_t size)
{
	snprintf(b, size, "%s", a);
	switch (rnd(5)) {
	case 0:
		add_piece(b, size);
		break;
	case 1:
		if (strlen(b) > 1)
			b[strlen(b) - 1] = '\0';
		break;
	case 2: {
		char *d = strchr(b, '-');
		if (d)
			*d = '\0';
		else
			add_piece(b, size);
		break;
	}
	case 3:
		make_version(b, size);
		break;
	default: {
		size_t i = strlen(b) - 1;
		if (b[i] >= '0' && b[i] <= '8')
			b[i]++;
		else
			add_piece(b, size);
	}
	}
}

static int dpkg_says(const char *a, const char *op, const char *b)
{
	char *argv[] = { "dpkg", "--compare-versions", (char *)a, (char *)op, (char *)b, NULL };
	pid_t pid;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", 1, 0); /* bad-syntax warnings */
	int rc = posix_spawnp(&pid, "dpkg", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	assert_int_equal(rc, 0);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void test_against_dpkg(void **state)
{
	(void)state;
	const char *count_env = getenv("DEBVERSION_PAIRS");
	int pairs = count_env && atoi(count_env) > 0 ? atoi(count_env) : 10000;
	int mismatches = 0, equal = 0, less = 0, greater = 0;
	for (int i = 0; i < pairs; i++) {
		char a[96], b[96];
		make_version(a, sizeof(a));
		mutate(a, b, sizeof(b));
		if (debversion_invalid(b))
			make_version(b, sizeof(b));
		int ours = sign(debversion_compare(a, b));
		int lt = dpkg_says(a, "lt", b);
		assert_true(lt == 0 || lt == 1);
		int theirs = lt == 0 ? -1 : (dpkg_says(a, "eq", b) == 0 ? 0 : 1);
		if (ours != theirs) {
			print_error("mismatch: '%s' vs '%s': ours %d, dpkg %d\n", a, b, ours, theirs);
			mismatches++;
		}
		equal += theirs == 0;
		less += theirs < 0;
		greater += theirs > 0;
	}
	print_message("%d pairs: %d less, %d equal, %d greater by dpkg; %d mismatches\n", pairs, less, equal, greater,
		      mismatches);
	assert_int_equal(mismatches, 0);
	/* the generator must exercise every outcome */
	assert_true(equal > 0 && less > 0 && greater > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_order),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_levels),
		cmocka_unit_test(test_against_dpkg),
	};
	return cmocka_run_group_tests_name("debversion", tests, NULL, NULL);
}
