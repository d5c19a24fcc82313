/* The spawn-and-capture helper (src/lib/spawn.h): output on pipes, exit codes
 * and signals, the deadline kill of the whole group, a child whose
 * grandchild keeps its pipes open, parallel children. Runs /bin/sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/spawn.h"
#include "lib/util.h"

struct captured {
	struct strbuf s[SPAWN_STREAMS];
};

static void collect(void *arg, enum spawn_stream stream, const char *buf, size_t len)
{
	struct captured *c = arg;
	sb_add(&c->s[stream], buf, len);
}

static void release(struct captured *c)
{
	for (int s = 0; s < SPAWN_STREAMS; s++)
		sb_release(&c->s[s]);
}

static struct spawn_child shell(const char *script, struct captured *cap)
{
	static char *argv[8][4];
	static int next;
	char **a = argv[next++ % 8];
	a[0] = "/bin/sh";
	a[1] = "-c";
	a[2] = (char *)script;
	a[3] = NULL;
	for (int s = 0; s < SPAWN_STREAMS; s++)
		sb_init(&cap->s[s]);
	return (struct spawn_child){ .argv = a, .on_data = collect, .arg = cap };
}

static const char *text(struct captured *c, enum spawn_stream s)
{
	return c->s[s].buf;
}

static void test_separate_streams_and_exit_code(void **state)
{
	(void)state;
	struct captured cap;
	struct spawn_child c = shell("echo out; echo err >&2; exit 3", &cap);
	spawn_run(&c, 1, monotonic_seconds() + 10);
	assert_true(c.pid > 0);
	assert_string_equal(c.error, "");
	assert_false(c.killed);
	assert_int_equal(c.exit_code, 3);
	assert_int_equal(c.signal, 0);
	assert_string_equal(text(&cap, SPAWN_OUT), "out\n");
	assert_string_equal(text(&cap, SPAWN_ERR), "err\n");
	release(&cap);
}

static void test_merged_stderr_and_extra_fd(void **state)
{
	(void)state;
	struct captured cap;
	struct spawn_child c = shell("echo out; echo err >&2; echo proto >&3", &cap);
	c.merge_stderr = true;
	c.extra_fd = 3;
	spawn_run(&c, 1, monotonic_seconds() + 10);
	assert_int_equal(c.exit_code, 0);
	assert_string_equal(text(&cap, SPAWN_OUT), "out\nerr\n");
	assert_string_equal(text(&cap, SPAWN_ERR), "");
	assert_string_equal(text(&cap, SPAWN_EXTRA), "proto\n");
	release(&cap);
}

static void test_environment(void **state)
{
	(void)state;
	struct captured cap;
	struct spawn_child c = shell("echo \"$GPUGATE_SPAWN_TEST\"", &cap);
	char *env[] = { "GPUGATE_SPAWN_TEST=given", NULL };
	c.envp = env;
	spawn_run(&c, 1, monotonic_seconds() + 10);
	assert_int_equal(c.exit_code, 0);
	assert_string_equal(text(&cap, SPAWN_OUT), "given\n");
	release(&cap);
}

static void test_signal(void **state)
{
	(void)state;
	struct captured cap;
	struct spawn_child c = shell("kill -SEGV $$", &cap);
	spawn_run(&c, 1, monotonic_seconds() + 10);
	assert_false(c.killed);
	assert_int_equal(c.exit_code, -1);
	assert_int_equal(c.signal, SIGSEGV);
	release(&cap);
}

static bool gone(pid_t pid)
{
	/* dead, or a zombie waiting for its new parent to reap it */
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return true;
	bool zombie = fgets(buf, sizeof(buf), f) && strstr(buf, ") Z ");
	fclose(f);
	return zombie;
}

static void test_deadline_kills_the_whole_group(void **state)
{
	(void)state;
	struct captured cap;
	/* the grandchild's pid on the extra pipe, then both wait */
	struct spawn_child c = shell("sleep 30 & echo $! >&3; wait", &cap);
	c.extra_fd = 3;
	double t0 = monotonic_seconds();
	spawn_run(&c, 1, t0 + 0.3);
	double took = monotonic_seconds() - t0;
	assert_true(took >= 0.3);
	assert_true(took < 2.0);
	assert_true(c.killed);
	pid_t grandchild = (pid_t)atoi(text(&cap, SPAWN_EXTRA));
	assert_true(grandchild > 0);
	bool dead = false;
	for (int i = 0; i < 100 && !dead; i++) {
		dead = gone(grandchild);
		if (!dead)
			usleep(10000);
	}
	assert_true(dead);
	release(&cap);
}

static void test_exit_while_grandchild_holds_the_pipes(void **state)
{
	(void)state;
	struct captured cap;
	struct spawn_child c = shell("sleep 30 & echo started; exit 4", &cap);
	double t0 = monotonic_seconds();
	spawn_run(&c, 1, t0 + 10);
	assert_true(monotonic_seconds() - t0 < 2.0);
	assert_false(c.killed);
	assert_int_equal(c.exit_code, 4);
	assert_string_equal(text(&cap, SPAWN_OUT), "started\n");
	release(&cap);
}

static void test_cannot_execute(void **state)
{
	(void)state;
	struct captured cap;
	memset(&cap, 0, sizeof(cap));
	char *argv[] = { "/nonexistent/gpugate-spawn-test", NULL };
	struct spawn_child c = { .argv = argv, .on_data = collect, .arg = &cap };
	spawn_run(&c, 1, monotonic_seconds() + 10);
	assert_int_equal(c.exit_code, 127);
	assert_non_null(strstr(text(&cap, SPAWN_ERR), "cannot execute /nonexistent/gpugate-spawn-test"));
	release(&cap);
}

static void test_parallel(void **state)
{
	(void)state;
	struct captured cap[3];
	struct spawn_child c[3] = { shell("sleep 0.4; echo a", &cap[0]), shell("sleep 0.4; echo b", &cap[1]),
				    shell("sleep 0.4; echo c", &cap[2]) };
	double t0 = monotonic_seconds();
	spawn_run(c, 3, t0 + 10);
	assert_true(monotonic_seconds() - t0 < 1.1); /* not 1.2 s one after another */
	assert_string_equal(text(&cap[0], SPAWN_OUT), "a\n");
	assert_string_equal(text(&cap[1], SPAWN_OUT), "b\n");
	assert_string_equal(text(&cap[2], SPAWN_OUT), "c\n");
	for (int i = 0; i < 3; i++) {
		assert_int_equal(c[i].exit_code, 0);
		release(&cap[i]);
	}
}

static void test_large_output(void **state)
{
	(void)state;
	struct captured cap;
	/* more than a pipe holds: the reader must keep up while the child writes */
	struct spawn_child c = shell("head -c 1000000 /dev/zero", &cap);
	spawn_run(&c, 1, monotonic_seconds() + 10);
	assert_int_equal(c.exit_code, 0);
	assert_int_equal(cap.s[SPAWN_OUT].len, 1000000);
	release(&cap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_separate_streams_and_exit_code),
		cmocka_unit_test(test_merged_stderr_and_extra_fd),
		cmocka_unit_test(test_environment),
		cmocka_unit_test(test_signal),
		cmocka_unit_test(test_deadline_kills_the_whole_group),
		cmocka_unit_test(test_exit_while_grandchild_holds_the_pipes),
		cmocka_unit_test(test_cannot_execute),
		cmocka_unit_test(test_parallel),
		cmocka_unit_test(test_large_output),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
