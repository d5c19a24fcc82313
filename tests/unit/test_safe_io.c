/* lib/safe_io: what is written through, what is replaced, what is refused, and
 * the bounded reader. Device nodes (mknod), FIFOs and symlinks live in a temp
 * folder of this test only; nothing outside it is touched. mknod needs root
 * (CAP_MKNOD): those cases skip, saying so, without it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/safe_io.h"
#include "lib/util.h"

static char dir[64];
static char err[SAFE_ERR_MAX];

static const char *in_dir(const char *name)
{
	static char paths[4][256];
	static int next;
	char *p = paths[next++ % 4];
	snprintf(p, 256, "%s/%s", dir, name);
	return p;
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static char *slurp(const char *path)
{
	char *s = NULL;
	assert_int_equal(read_file(path, &s, NULL), 0);
	return s;
}

/* The entries of dir: a temp file left behind shows here. */
static int entries(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	int n = -1;
	assert_int_equal(fscanf(p, "%d", &n), 1);
	assert_int_equal(pclose(p), 0);
	return n;
}

static bool make_node(const char *path, mode_t kind, unsigned maj, unsigned min)
{
	if (mknod(path, kind | 0666, makedev(maj, min)) == 0)
		return true;
	assert_true(errno == EPERM); /* anything else is a fault of the test */
	return false;
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/gpugate-safeio-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void missing_file_is_created_with_mode(void **state)
{
	(void)state;
	const char *p = in_dir("new.json");
	mode_t old = umask(077);
	assert_int_equal(safe_write_file(p, "{}\n", 3, 0644, 0, err, sizeof(err)), 0);
	umask(old);
	struct stat st;
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0644);
	char *s = slurp(p);
	assert_string_equal(s, "{}\n");
	free(s);
	assert_int_equal(entries(), 1); /* no temp file left */
}

static void regular_file_is_replaced_not_rewritten(void **state)
{
	(void)state;
	const char *p = in_dir("report.txt");
	put(p, "old content that is longer");
	struct stat before, after;
	assert_int_equal(stat(p, &before), 0);
	/* a hard link shows the old inode kept its content: a rename, not a rewrite */
	const char *keep = in_dir("old-inode");
	assert_int_equal(link(p, keep), 0);
	assert_int_equal(safe_write_file(p, "new", 3, 0600, 0, err, sizeof(err)), 0);
	assert_int_equal(stat(p, &after), 0);
	assert_true(before.st_ino != after.st_ino);
	char *s = slurp(p), *o = slurp(keep);
	assert_string_equal(s, "new");
	assert_string_equal(o, "old content that is longer");
	free(s);
	free(o);
	assert_int_equal(entries(), 2);
}

static void character_device_is_written_through(void **state)
{
	(void)state;
	const char *p = in_dir("null");
	if (!make_node(p, S_IFCHR, 1, 3)) /* the null device's numbers (Linux devices.txt) */
		skip();
	assert_int_equal(safe_write_file(p, "discarded", 9, 0644, 0, err, sizeof(err)), 0);
	struct stat st;
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISCHR(st.st_mode)); /* still the device node */
	assert_int_equal(major(st.st_rdev), 1);
	assert_int_equal(minor(st.st_rdev), 3);
	assert_int_equal(entries(), 1);
}

static void fifo_with_reader_is_written_through(void **state)
{
	(void)state;
	const char *p = in_dir("fifo");
	assert_int_equal(mkfifo(p, 0600), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		int fd = open(p, O_RDONLY);
		char buf[64] = { 0 };
		ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		_exit(n == 5 && strcmp(buf, "hello") == 0 ? 0 : 1);
	}
	/* the writer may come before the reader opened: retry briefly on ENXIO */
	int rc = -ENXIO;
	for (int i = 0; i < 500 && rc == -ENXIO; i++) {
		rc = safe_write_file(p, "hello", 5, 0644, 0, err, sizeof(err));
		if (rc == -ENXIO)
			usleep(2000);
	}
	assert_int_equal(rc, 0);
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	struct stat st;
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
}

static void fifo_without_reader_is_an_error_not_a_hang(void **state)
{
	(void)state;
	const char *p = in_dir("lonely");
	assert_int_equal(mkfifo(p, 0600), 0);
	double t0 = monotonic_seconds();
	assert_int_equal(safe_write_file(p, "x", 1, 0644, 0, err, sizeof(err)), -ENXIO);
	assert_true(monotonic_seconds() - t0 < 1.0);
	assert_non_null(strstr(err, p));
	assert_non_null(strstr(err, "FIFO that nobody reads"));
}

static void symlink_is_written_through_and_kept(void **state)
{
	(void)state;
	const char *target = in_dir("target.txt"), *link_path = in_dir("link.txt");
	put(target, "previous text, longer than the new");
	assert_int_equal(symlink("target.txt", link_path), 0);
	assert_int_equal(safe_write_file(link_path, "new", 3, 0644, 0, err, sizeof(err)), 0);
	struct stat st;
	assert_int_equal(lstat(link_path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	char *s = slurp(target);
	assert_string_equal(s, "new"); /* truncated, as the shell's > does */
	free(s);
}

static void symlink_to_a_device_keeps_the_device(void **state)
{
	(void)state;
	const char *node = in_dir("devnull"), *link_path = in_dir("stdout-like");
	if (!make_node(node, S_IFCHR, 1, 3))
		skip();
	assert_int_equal(symlink(node, link_path), 0);
	assert_int_equal(safe_write_file(link_path, "x", 1, 0644, 0, err, sizeof(err)), 0);
	struct stat st;
	assert_int_equal(lstat(node, &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(lstat(link_path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
}

static void dangling_symlink_creates_nothing(void **state)
{
	(void)state;
	const char *link_path = in_dir("dangling"), *nowhere = in_dir("nowhere");
	assert_int_equal(symlink(nowhere, link_path), 0);
	assert_int_equal(safe_write_file(link_path, "x", 1, 0644, 0, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "symlink to a missing file"));
	struct stat st;
	assert_int_equal(lstat(nowhere, &st), -1);
	assert_int_equal(errno, ENOENT);
}

static void directory_is_refused(void **state)
{
	(void)state;
	const char *p = in_dir("sub");
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(safe_write_file(p, "x", 1, 0644, 0, err, sizeof(err)), -EISDIR);
	assert_non_null(strstr(err, "is a directory"));
}

static void replace_only_refuses_links_and_devices(void **state)
{
	(void)state;
	const char *target = in_dir("elsewhere"), *link_path = in_dir("cache.json");
	put(target, "kept");
	assert_int_equal(symlink(target, link_path), 0);
	assert_int_equal(safe_write_file(link_path, "x", 1, 0600, SAFE_WRITE_REPLACE_ONLY, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "a symlink"));
	char *s = slurp(target);
	assert_string_equal(s, "kept");
	free(s);
	struct stat st;
	assert_int_equal(lstat(link_path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	/* the old helper's name keeps the rule */
	assert_int_equal(write_file_atomic(link_path, "x", 1, 0600), -EEXIST);
	const char *node = in_dir("node");
	if (!make_node(node, S_IFCHR, 1, 3))
		skip();
	assert_int_equal(write_file_atomic(node, "x", 1, 0600), -EEXIST);
	assert_int_equal(lstat(node, &st), 0);
	assert_true(S_ISCHR(st.st_mode));
}

static void dash_is_standard_output(void **state)
{
	(void)state;
	const char *p = in_dir("captured");
	int saved = dup(1);
	assert_true(saved >= 0);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(dup2(fd, 1), 1);
	close(fd);
	assert_int_equal(write(1, "before,", 7), 7);
	int rc = safe_write_file("-", "dash,", 5, 0644, 0, err, sizeof(err));
	/* /dev/stdout of a redirected run: written on fd 1, not reopened at 0 */
	char self_fd[64];
	snprintf(self_fd, sizeof(self_fd), "/proc/self/fd/%d", 1);
	int rc2 = access(self_fd, F_OK) == 0 ? safe_write_file(self_fd, "link", 4, 0644, 0, err, sizeof(err)) : 0;
	assert_int_equal(dup2(saved, 1), 1);
	close(saved);
	assert_int_equal(rc, 0);
	assert_int_equal(rc2, 0);
	char *s = slurp(p);
	assert_string_equal(s, access("/proc/self/fd", F_OK) == 0 ? "before,dash,link" : "before,dash,");
	free(s);
}

static void streaming_writer_and_abort(void **state)
{
	(void)state;
	const char *p = in_dir("streamed");
	put(p, "original");
	struct safe_writer w;
	assert_int_equal(safe_writer_open(&w, p, 0644, 0, err, sizeof(err)), 0);
	assert_int_equal(safe_writer_write(&w, "par", 3, err, sizeof(err)), 0);
	safe_writer_abort(&w);
	char *s = slurp(p);
	assert_string_equal(s, "original"); /* untouched */
	free(s);
	assert_int_equal(entries(), 1);
	assert_int_equal(safe_writer_open(&w, p, 0644, 0, err, sizeof(err)), 0);
	assert_int_equal(safe_writer_write(&w, "one,", 4, err, sizeof(err)), 0);
	assert_int_equal(safe_writer_write(&w, "two", 3, err, sizeof(err)), 0);
	assert_int_equal(safe_writer_commit(&w, err, sizeof(err)), 0);
	s = slurp(p);
	assert_string_equal(s, "one,two");
	free(s);
}

static void device_swapped_in_before_rename_is_left_alone(void **state)
{
	(void)state;
	const char *p = in_dir("raced");
	struct safe_writer w;
	assert_int_equal(safe_writer_open(&w, p, 0644, 0, err, sizeof(err)), 0);
	assert_int_equal(safe_writer_write(&w, "x", 1, err, sizeof(err)), 0);
	if (!make_node(p, S_IFCHR, 1, 3)) {
		safe_writer_abort(&w);
		skip();
	}
	assert_int_equal(safe_writer_commit(&w, err, sizeof(err)), -EEXIST);
	struct stat st;
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(entries(), 1);
}

/* ---- reading */

static void reads_regular_file(void **state)
{
	(void)state;
	const char *p = in_dir("status");
	put(p, "Package: a\n");
	char *s = NULL;
	size_t n = 0;
	assert_int_equal(safe_read_file(p, 0, SAFE_MAX_TEXT, &s, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 11);
	assert_string_equal(s, "Package: a\n");
	free(s);
}

static void size_cap_refuses_big_and_growing_files(void **state)
{
	(void)state;
	const char *p = in_dir("big");
	put(p, "0123456789");
	char *s = NULL;
	assert_int_equal(safe_read_file(p, 0, 9, &s, NULL, err, sizeof(err)), -EFBIG);
	assert_non_null(strstr(err, p));
	assert_non_null(strstr(err, "10 bytes"));
	assert_int_equal(safe_read_file(p, 0, 10, &s, NULL, err, sizeof(err)), 0);
	free(s);
	/* /proc files say 0 bytes: the cap holds while reading */
	assert_int_equal(safe_read_file("/proc/self/maps", 0, 16, &s, NULL, err, sizeof(err)), -EFBIG);
}

static void zero_device_is_refused_at_once(void **state)
{
	(void)state;
	const char *p = in_dir("zero");
	if (!make_node(p, S_IFCHR, 1, 5)) /* /dev/zero's numbers */
		skip();
	char *s = NULL;
	double t0 = monotonic_seconds();
	assert_int_equal(safe_read_file(p, 0, SAFE_MAX_STATUS, &s, NULL, err, sizeof(err)), -EINVAL);
	assert_true(monotonic_seconds() - t0 < 0.5);
	assert_non_null(strstr(err, "is a character device, not a regular file"));
	assert_int_equal(read_file(p, &s, NULL), -EINVAL);
	/* opted in, the cap still ends it */
	assert_int_equal(safe_read_file(p, SAFE_KIND_CHR, 4096, &s, NULL, err, sizeof(err)), -EFBIG);
}

static void fifo_is_refused_unless_asked_for(void **state)
{
	(void)state;
	const char *p = in_dir("pipe");
	assert_int_equal(mkfifo(p, 0600), 0);
	/* a writer that never writes: blocking would hang here */
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		int fd = open(p, O_WRONLY);
		sleep(30);
		_exit(fd < 0);
	}
	char *s = NULL;
	double t0 = monotonic_seconds();
	int rc = safe_read_file(p, 0, SAFE_MAX_TEXT, &s, NULL, err, sizeof(err));
	double took = monotonic_seconds() - t0;
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	assert_int_equal(rc, -EINVAL);
	assert_true(took < 0.5);
	assert_non_null(strstr(err, "is a FIFO, not a regular file"));
	char line[16];
	assert_true(read_line_file(p, line, sizeof(line)) < 0);
}

static void fifo_asked_for_is_read_to_its_end(void **state)
{
	(void)state;
	const char *p = in_dir("spec-pipe");
	assert_int_equal(mkfifo(p, 0600), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		int fd = open(p, O_WRONLY);
		_exit(fd >= 0 && write(fd, "packages: []\n", 13) == 13 ? 0 : 1);
	}
	/* opened before the writer: wait until the child has it open */
	struct stat st;
	int fd = -1;
	for (int i = 0; i < 500; i++) {
		fd = safe_open_read(p, SAFE_KIND_REG | SAFE_KIND_FIFO, SAFE_MAX_TEXT, &st, err, sizeof(err));
		assert_true(fd >= 0);
		char *s = NULL;
		size_t n = 0;
		assert_int_equal(safe_read_fd(fd, p, SAFE_MAX_TEXT, &s, &n, err, sizeof(err)), 0);
		close(fd);
		if (n) {
			assert_string_equal(s, "packages: []\n");
			free(s);
			break;
		}
		free(s);
		usleep(2000);
	}
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void directory_and_missing_named_in_errors(void **state)
{
	(void)state;
	char *s = NULL;
	assert_int_equal(safe_read_file(dir, 0, SAFE_MAX_TEXT, &s, NULL, err, sizeof(err)), -EISDIR);
	assert_non_null(strstr(err, "is a directory"));
	const char *p = in_dir("absent");
	assert_int_equal(safe_read_file(p, 0, SAFE_MAX_TEXT, &s, NULL, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, p));
}

static void nofollow_refuses_links(void **state)
{
	(void)state;
	const char *t = in_dir("real"), *l = in_dir("alias");
	put(t, "x");
	assert_int_equal(symlink(t, l), 0);
	struct stat st;
	assert_int_equal(safe_open_read_at(AT_FDCWD, l, O_NOFOLLOW, 0, 0, &st, err, sizeof(err)), -ELOOP);
	assert_non_null(strstr(err, "is a symlink"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(missing_file_is_created_with_mode, setup, teardown),
		cmocka_unit_test_setup_teardown(regular_file_is_replaced_not_rewritten, setup, teardown),
		cmocka_unit_test_setup_teardown(character_device_is_written_through, setup, teardown),
		cmocka_unit_test_setup_teardown(fifo_with_reader_is_written_through, setup, teardown),
		cmocka_unit_test_setup_teardown(fifo_without_reader_is_an_error_not_a_hang, setup, teardown),
		cmocka_unit_test_setup_teardown(symlink_is_written_through_and_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(symlink_to_a_device_keeps_the_device, setup, teardown),
		cmocka_unit_test_setup_teardown(dangling_symlink_creates_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(directory_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(replace_only_refuses_links_and_devices, setup, teardown),
		cmocka_unit_test_setup_teardown(dash_is_standard_output, setup, teardown),
		cmocka_unit_test_setup_teardown(streaming_writer_and_abort, setup, teardown),
		cmocka_unit_test_setup_teardown(device_swapped_in_before_rename_is_left_alone, setup, teardown),
		cmocka_unit_test_setup_teardown(reads_regular_file, setup, teardown),
		cmocka_unit_test_setup_teardown(size_cap_refuses_big_and_growing_files, setup, teardown),
		cmocka_unit_test_setup_teardown(zero_device_is_refused_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(fifo_is_refused_unless_asked_for, setup, teardown),
		cmocka_unit_test_setup_teardown(fifo_asked_for_is_read_to_its_end, setup, teardown),
		cmocka_unit_test_setup_teardown(directory_and_missing_named_in_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(nofollow_refuses_links, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
