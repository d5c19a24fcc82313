/* The kernel log scanner (records and plain lines) and the group lookup under
 * a root prefix. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/creds.h"
#include "lib/kmsg.h"
#include "lib/util.h"

static char dir[64];

static const char *file_with(const char *name, const char *text)
{
	static char path[128];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/gpugate-kmsg-XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void records_match_with_time_stamps(void **state)
{
	(void)state;
	const char *path = file_with(
		"kmsg",
		"6,1,0,-;Linux version 6.8.0\n"
		" SUBSYSTEM=drm\n"
		"4,2,12500000,-;xe 0000:03:00.0: [drm] *ERROR* GT0: timed out waiting for forcewake ack request.\n"
		"6,3,13000000,-;i915 0000:00:02.0: [drm] GPU HANG: ecode 12:1:85dffffb\n"
		"6,4,14000000,-;e1000e: eth0 NIC Link is Up\n"
		"3,5,15000000,-;i915 0000:00:02.0: [drm] *ERROR* GUC: load failed"); /* no final newline */
	struct kmsg_scan s;
	assert_int_equal(kmsg_scan(path, monotonic_seconds() + 5, &s), 0);
	assert_int_equal(s.records, 5);
	assert_int_equal(s.match_count, 3);
	assert_non_null(strstr(s.matches[0].line, "[   12.500000]"));
	assert_string_equal(s.matches[0].pattern, "timed out waiting for forcewake ack request");
	assert_string_equal(s.matches[1].pattern, "GPU HANG");
	assert_string_equal(s.matches[2].pattern, "ERROR.*GUC");
	kmsg_scan_free(&s);
}

/* Only the records after a sequence number count (the faults since a cached
 * probe), and the last record's number is reported for the next mark. */
static void records_after_a_mark(void **state)
{
	(void)state;
	const char *path =
		file_with("kmsg", "6,7,1000000,-;i915 0000:00:02.0: [drm] GPU HANG: ecode 1\n"
				  "6,8,2000000,-;usb 1-1: new device\n"
				  "plain text line with GPU HANG but no sequence number\n"
				  "3,9,3000000,-;xe 0000:03:00.0: [drm] *ERROR* GuC initialization failed\n");
	struct kmsg_scan s;
	assert_int_equal(kmsg_scan_after(path, 8, monotonic_seconds() + 5, &s), 0);
	assert_int_equal(s.match_count, 1);
	assert_non_null(strstr(s.matches[0].line, "GuC initialization failed"));
	assert_true(s.has_seq);
	assert_int_equal(s.last_seq, 9);
	kmsg_scan_free(&s);
	assert_int_equal(kmsg_scan_after(path, 9, monotonic_seconds() + 5, &s), 0);
	assert_int_equal(s.match_count, 0);
	kmsg_scan_free(&s);
	assert_int_equal(kmsg_scan(path, monotonic_seconds() + 5, &s), 0);
	assert_int_equal(s.match_count, 3);
	kmsg_scan_free(&s);
}

static void plain_lines_and_many_matches(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	for (int i = 0; i < 100; i++)
		sb_printf(&sb, "xe 0000:03:00.0: [drm] *ERROR* something %d\n", i);
	const char *path = file_with("log", sb.buf);
	sb_release(&sb);
	struct kmsg_scan s;
	assert_int_equal(kmsg_scan(path, monotonic_seconds() + 5, &s), 0);
	assert_int_equal(s.match_count, 100);
	assert_string_equal(s.matches[KMSG_MAX_KEPT - 1].pattern, "xe.*drm.*ERROR");
	kmsg_scan_free(&s);
}

static void missing_file(void **state)
{
	(void)state;
	struct kmsg_scan s;
	assert_int_equal(kmsg_scan("/nonexistent/kmsg", monotonic_seconds() + 5, &s), -ENOENT);
}

static void group_names_from_the_root(void **state)
{
	(void)state;
	char sub[128];
	snprintf(sub, sizeof(sub), "%s/etc", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	file_with("etc/group", "root:x:0:\nrender:x:993:alice\nvideo:x:44:\n");
	char name[64];
	assert_int_equal(creds_group_name(dir, 993, name, sizeof(name)), 0);
	assert_string_equal(name, "render");
	assert_int_equal(creds_group_name(dir, 4242, name, sizeof(name)), -ENOENT);
	assert_int_equal(creds_group_name("/nonexistent", 0, name, sizeof(name)), -ENOENT);
}

static void current_credentials(void **state)
{
	(void)state;
	struct creds c;
	assert_int_equal(creds_current(&c), 0);
	assert_int_equal(c.uid, getuid());
	assert_true(creds_in_group(&c, getgid()));
	char buf[128];
	creds_format(&c, buf, sizeof(buf));
	char want[64];
	snprintf(want, sizeof(want), "uid %u gid %u groups ", (unsigned)getuid(), (unsigned)getgid());
	assert_non_null(strstr(buf, want));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(records_match_with_time_stamps, setup, teardown),
		cmocka_unit_test_setup_teardown(plain_lines_and_many_matches, setup, teardown),
		cmocka_unit_test_setup_teardown(records_after_a_mark, setup, teardown),
		cmocka_unit_test(missing_file),
		cmocka_unit_test_setup_teardown(group_names_from_the_root, setup, teardown),
		cmocka_unit_test(current_credentials),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
