/* root_path: a path read under --root never leaves the root, whatever links
 * the tree holds (absolute ones, "..", loops); the kernel's lookup (openat2)
 * and the walk in user space answer alike; root_open and read_attr_in_root
 * open what root_path names. Everything lives in a temp folder of this test:
 * the root and, beside it, an "outside" folder that a link escaping the root
 * would reach. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"

static char base[64], root[80], outside[80];

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
	snprintf(base, sizeof(base), "/tmp/gpugate-rootpath-XXXXXX");
	if (!mkdtemp(base))
		return -1;
	snprintf(root, sizeof(root), "%s/root", base);
	snprintf(outside, sizeof(outside), "%s/outside", base);
	return mkdir(root, 0755) == 0 && mkdir(outside, 0755) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	return system(cmd) == 0 ? 0 : -1;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
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

/* Each path, through the kernel's lookup and through the walk: the same
 * answer, whatever the links (the walk is what answered before openat2). */
static void kernel_and_walk_agree(void **state)
{
	(void)state;
	make_dirs("usr/lib/x86_64-linux-gnu");
	make_dirs("srv/dpkg");
	make_dirs("var/lib");
	make_dirs("sys/devices/pci0000:00/0000:18:00.0/drm/card0");
	make_dirs("sys/class/drm");
	make_dirs("a/b");
	make_dirs("loop");
	char path[512];
	snprintf(path, sizeof(path), "%s/srv/dpkg/status", root);
	write_text(path, "");
	snprintf(path, sizeof(path), "%s/plainfile", root);
	write_text(path, "");
	link_at("usr/lib", "lib");
	link_at("/srv/dpkg", "var/lib/dpkg");
	link_at("../../devices/pci0000:00/0000:18:00.0/drm/card0", "sys/class/drm/card0");
	link_at("../../../0000:18:00.0", "sys/devices/pci0000:00/0000:18:00.0/drm/card0/device");
	link_at("../../../../../../../../etc", "a/b/up");
	link_at("/nowhere/at/all", "dangling");
	link_at("../dangling", "a/via-dangling");
	link_at("me", "loop/me");
	/* the same shapes three names deep: the kernel's lookup answers from
	 * three components on (fewer: the walk, cheaper there) */
	make_dirs("deep/er");
	snprintf(path, sizeof(path), "%s/deep/er/plain", root);
	write_text(path, "");
	link_at("/nowhere/at/all", "deep/er/dangling");
	link_at("loop", "deep/er/loop");
	link_at("../../a/b/up", "deep/er/up");
	static const char *const paths[] = {
		"/",
		"",
		"/var/lib/dpkg/status",
		"/var/lib/dpkg/arch-native",
		"/var/lib/dpkg/missing/deeper",
		"/lib/x86_64-linux-gnu/libze_loader.so.1",
		"/sys/class/drm/card0/device/uevent",
		"/sys/class/drm/card0/gt",
		"/sys/class/drm/card0/device/..",
		"/sys/class/drm/card0/..",
		"/a/b/up/passwd",
		"/../../../etc/group",
		"//var/./lib//dpkg/",
		"/dangling",
		"/dangling/more",
		"/a/via-dangling",
		"/loop/me",
		"/loop/me/x",
		"/plainfile/x",
		"/missing/.",
		"/missing/..",
		"/a/b/./",
		"/deep/er/dangling",
		"/deep/er/dangling/more",
		"/deep/er/loop",
		"/deep/er/loop/x",
		"/deep/er/plain/x",
		"/deep/er/up/passwd",
		"/deep/er/missing",
		"/deep/er/missing/more",
		"/deep/er/..",
		"/deep/er/.",
		"/deep/er/",
		/* no link on the way: answered from the path's own spelling */
		"/deep/er/../er/plain",
		"/deep//er/./plain",
		"/deep/er/plain/",
		"/deep/../../../deep/er/plain",
		"/deep/er/../../srv/dpkg/status",
		"/deep/er/../missing",
	};
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		char *fast = root_path(root, paths[i]);
		char *walk = root_path_by_walk(root, paths[i]);
		if (strcmp(fast, walk) != 0)
			fail_msg("%s: root_path says %s, the walk %s", paths[i], fast, walk);
		free(fast);
		free(walk);
	}
}

/* What root_path names, root_open and read_attr_in_root open is inside the
 * root, when a link would lead out of it by the host's rules: to a real
 * folder beside the root that holds the same names with other content. */
static void opens_never_leave_the_root(void **state)
{
	(void)state;
	char path[512], inside_dir[512], buf[64];
	/* outside/secret, and the root's own copy at the path an escape names */
	snprintf(path, sizeof(path), "%s/secret", outside);
	write_text(path, "outside\n");
	make_dirs("outside");
	snprintf(path, sizeof(path), "%s/outside/secret", root);
	write_text(path, "inside\n");
	snprintf(inside_dir, sizeof(inside_dir), "%s%s", root, outside);
	char cmd[1100];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && printf 'inside\\n' > '%s/secret'", inside_dir, inside_dir);
	assert_int_equal(system(cmd), 0);
	make_dirs("d/e");
	link_at("../outside", "climb");                       /* ".." from the root: the root */
	link_at("../../../../../../../../outside", "d/e/up"); /* many of them */
	link_at(outside, "absolute");                         /* the host's folder by name */
	snprintf(path, sizeof(path), "../../../../../../..%s", outside);
	link_at(path, "d/e/climb-to-absolute");
	static const char *const names[] = { "/climb/secret", "/d/e/up/secret", "/absolute/secret",
					     "/d/e/climb-to-absolute/secret" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *p = root_path(root, names[i]);
		assert_true(strncmp(p, root, strlen(root)) == 0 && p[strlen(root)] == '/');
		assert_int_equal(read_line_file(p, buf, sizeof(buf)), 0);
		if (strcmp(buf, "inside") != 0)
			fail_msg("%s: root_path %s reads '%s'", names[i], p, buf);
		free(p);
		int fd = root_open(root, names[i], O_RDONLY);
		assert_true(fd >= 0);
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		assert_true(n > 0);
		buf[n] = '\0';
		if (strcmp(buf, "inside\n") != 0)
			fail_msg("%s: root_open reads '%s'", names[i], buf);
		assert_int_equal(read_attr_in_root(root, names[i], buf, sizeof(buf)), 0);
		if (strcmp(buf, "inside") != 0)
			fail_msg("%s: read_attr_in_root reads '%s'", names[i], buf);
	}
	/* missing is missing, a folder is no attribute */
	assert_int_equal(root_open(root, "/climb/none", O_RDONLY), -ENOENT);
	assert_int_equal(read_attr_in_root(root, "/d", buf, sizeof(buf)), -EISDIR);
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
		cmocka_unit_test_setup_teardown(kernel_and_walk_agree, setup, teardown),
		cmocka_unit_test_setup_teardown(opens_never_leave_the_root, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
