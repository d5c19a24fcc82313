/* root_path: a path read under --root never leaves the root, whatever links
 * the tree holds (absolute ones, "..", loops). Everything lives in a temp
 * folder of this test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"

static char root[64];

static void make_dirs(const char *rel)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/%s'", root, rel);
	assert_int_equal(system(cmd), 0);
}

static void link_at(const char *target, const char *rel)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(symlink(target, path), 0);
}

static void expect(const char *path, const char *want_rel)
{
	char *got = root_path(root, path);
	char want[512];
	snprintf(want, sizeof(want), "%s%s", root, want_rel);
	assert_string_equal(got, want);
	free(got);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/gpugate-rootpath-XXXXXX");
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void real_root_is_the_path_itself(void **state)
{
	(void)state;
	char *p = root_path("", "/var/lib/dpkg/status");
	assert_string_equal(p, "/var/lib/dpkg/status");
	free(p);
	p = root_path("/", "/etc/ld.so.cache");
	assert_string_equal(p, "/etc/ld.so.cache");
	free(p);
}

static void plain_tree_is_joined(void **state)
{
	(void)state;
	make_dirs("var/lib/dpkg");
	expect("/var/lib/dpkg/status", "/var/lib/dpkg/status");
	expect("/missing/deeper/file", "/missing/deeper/file");
	expect("//var/./lib//dpkg", "/var/lib/dpkg");
}

static void absolute_links_start_again_at_root(void **state)
{
	(void)state;
	make_dirs("srv/dpkg");
	make_dirs("var/lib");
	link_at("/srv/dpkg", "var/lib/dpkg");            /* the host has /srv too: not read */
	link_at("/etc/ld.so.cache", "ld.so.cache.link"); /* a final component */
	expect("/var/lib/dpkg/status", "/srv/dpkg/status");
	expect("/ld.so.cache.link", "/etc/ld.so.cache");
}

static void dotdot_stops_at_root(void **state)
{
	(void)state;
	make_dirs("a/b");
	link_at("../../../../../../../etc", "a/b/up");
	expect("/a/b/up/passwd", "/etc/passwd");
	expect("/../../etc/group", "/etc/group");
	link_at("../b", "a/b/again");
	expect("/a/b/again/again/x", "/a/b/x");
}

static void relative_link_chain(void **state)
{
	(void)state;
	make_dirs("usr/lib/x86_64-linux-gnu");
	link_at("usr/lib", "lib");
	link_at("x86_64-linux-gnu", "usr/lib/multiarch");
	expect("/lib/multiarch/libze_loader.so.1", "/usr/lib/x86_64-linux-gnu/libze_loader.so.1");
}

static void loops_end_in_a_name_that_cannot_be_opened(void **state)
{
	(void)state;
	make_dirs("proc/self");
	link_at("/proc/self/mountinfo", "proc/self/mountinfo"); /* itself: on the host a real file */
	char *p = root_path(root, "/proc/self/mountinfo");
	assert_non_null(strstr(p, "too many symlinks"));
	assert_true(strncmp(p, root, strlen(root)) == 0);
	struct stat st;
	assert_int_equal(stat(p, &st), -1);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(real_root_is_the_path_itself),
		cmocka_unit_test_setup_teardown(plain_tree_is_joined, setup, teardown),
		cmocka_unit_test_setup_teardown(absolute_links_start_again_at_root, setup, teardown),
		cmocka_unit_test_setup_teardown(dotdot_stops_at_root, setup, teardown),
		cmocka_unit_test_setup_teardown(relative_link_chain, setup, teardown),
		cmocka_unit_test_setup_teardown(loops_end_in_a_name_that_cannot_be_opened, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
