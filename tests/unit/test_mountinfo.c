/* The mountinfo parser: fields, \ooo unescaping, longest mount-point prefix
 * (later mounts stacked on earlier ones win), read-only options, malformed
 * lines; and the real table of this process against findmnt. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/mountinfo.h"

static const char sample[] =
	"22 1 0:21 / / rw,relatime - overlay overlay rw,lowerdir=/l,upperdir=/u\n"
	"23 22 0:22 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n"
	"30 22 8:1 /home/u/.cache/huggingface /root/.cache/huggingface rw,relatime - ext4 /dev/sda1 rw\n"
	"31 22 0:40 / /data/my\\040models ro,relatime shared:5 master:1 - tmpfs my\\134src rw,size=1024k\n"
	"32 22 0:41 / /data rw - tmpfs tmpfs rw\n"
	"33 32 0:42 / /data rw - tmpfs second rw\n"
	"34 22 0:43 / /ro rw - ext4 /dev/sdb ro\n";

static void test_fields(void **state)
{
	(void)state;
	struct mountinfo mi;
	char err[256];
	assert_int_equal(mountinfo_parse(sample, strlen(sample), &mi, err, sizeof(err)), 0);
	assert_int_equal(mi.count, 7);
	const struct mount_entry *e = &mi.entries[3];
	assert_int_equal(e->id, 31);
	assert_int_equal(e->parent_id, 22);
	assert_int_equal(e->major, 0);
	assert_int_equal(e->minor, 40);
	assert_string_equal(e->mount_point, "/data/my models");
	assert_string_equal(e->source, "my\\src");
	assert_string_equal(e->fstype, "tmpfs");
	assert_string_equal(e->super_options, "rw,size=1024k");
	assert_true(mount_is_read_only(e));
	assert_false(mount_is_read_only(&mi.entries[0]));
	assert_true(mount_is_read_only(&mi.entries[6])); /* superblock ro */
	mountinfo_free(&mi);
}

static void test_longest_prefix(void **state)
{
	(void)state;
	struct mountinfo mi;
	char err[256];
	assert_int_equal(mountinfo_parse(sample, strlen(sample), &mi, err, sizeof(err)), 0);
	struct {
		const char *path;
		int id;
	} cases[] = {
		{ "/", 22 },
		{ "/root/.cache/huggingface/hub", 30 },
		{ "/root/.cache/huggingface", 30 },
		{ "/root/.cache/huggingfacex", 22 }, /* a prefix of the name is no prefix of the path */
		{ "/root/.cache", 22 },
		{ "/data/my models/hub", 31 },
		{ "/data/my", 33 }, /* stacked: the later /data mount wins */
		{ "/data", 33 },
		{ "/proc/self", 23 },
		{ "/processes", 22 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		const struct mount_entry *m = mountinfo_find(&mi, cases[i].path);
		assert_non_null(m);
		if (m->id != cases[i].id)
			fail_msg("%s: mount %d, expected %d", cases[i].path, m->id, cases[i].id);
	}
	mountinfo_free(&mi);
}

static void test_unescape(void **state)
{
	(void)state;
	char s[] = "a\\040b\\011c\\012d\\134e\\04x\\";
	mountinfo_unescape(s);
	assert_string_equal(s, "a b\tc\nd\\e\\04x\\");
}

static void test_malformed(void **state)
{
	(void)state;
	const char *bad[] = {
		"22 1 0:21 / / rw\n",                           /* no separator */
		"x 1 0:21 / / rw - ext4 /dev/sda rw\n",         /* id */
		"22 1 021 / / rw - ext4 /dev/sda rw\n",         /* major:minor */
		"22 1 0:21 / relative rw - ext4 /dev/sda rw\n", /* mount point */
		"22 1 0:21 / / rw - ext4\n",                    /* fields after the separator */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		struct mountinfo mi;
		char err[256] = "";
		char *text = NULL;
		/* the good line first: the error must name line 2 */
		if (asprintf(&text, "%s%s", "1 0 0:1 / / rw - ext4 /dev/x rw\n", bad[i]) < 0)
			fail();
		assert_int_equal(mountinfo_parse(text, strlen(text), &mi, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "line 2"));
		assert_int_equal(mi.count, 0);
		free(text);
	}
	struct mountinfo mi;
	char err[256];
	assert_int_equal(mountinfo_load("/nonexistent/mountinfo", &mi, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "/nonexistent/mountinfo"));
	assert_non_null(strstr(err, "No such file"));
}

static void test_options(void **state)
{
	(void)state;
	assert_true(mount_option_has("rw,ro", "ro"));
	assert_true(mount_option_has("ro", "ro"));
	assert_false(mount_option_has("rw,errors=remount-ro", "ro"));
	assert_false(mount_option_has("", "ro"));
}

/* This process's own table: for each mount point, the answer must be the
 * mount findmnt names for it. */
static void test_against_findmnt(void **state)
{
	(void)state;
	struct mountinfo mi;
	char err[512];
	assert_int_equal(mountinfo_load("/proc/self/mountinfo", &mi, err, sizeof(err)), 0);
	assert_true(mi.count > 0);
	const char *paths[] = { "/", "/proc", "/dev", "/tmp", "/sys", "/etc" };
	for (size_t i = 0; i < sizeof(paths) / sizeof(*paths); i++) {
		char cmd[256], want[4096] = "";
		snprintf(cmd, sizeof(cmd), "findmnt -n -o TARGET -T %s 2>/dev/null", paths[i]);
		FILE *p = popen(cmd, "r");
		assert_non_null(p);
		if (!fgets(want, sizeof(want), p))
			want[0] = '\0';
		pclose(p);
		want[strcspn(want, "\n")] = '\0';
		if (!*want)
			continue;
		const struct mount_entry *m = mountinfo_find(&mi, paths[i]);
		assert_non_null(m);
		if (strcmp(m->mount_point, want) != 0)
			fail_msg("%s: mount point %s, findmnt says %s", paths[i], m->mount_point, want);
	}
	mountinfo_free(&mi);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),   cmocka_unit_test(test_longest_prefix),
		cmocka_unit_test(test_unescape), cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_options),  cmocka_unit_test(test_against_findmnt),
	};
	return cmocka_run_group_tests_name("mountinfo", tests, NULL, NULL);
}
