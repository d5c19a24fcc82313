/* The seccomp profiles, each tried in a forked child: what must be denied
 * fails with the documented errno, and what the checks need still works. */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/sandbox.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZER 1
#else
#define SANITIZER 0
#endif

/* In the child: the first failed expectation becomes the exit status (its
 * line, mod 256 but never 0) and a message on stderr. */
#define EXPECT(cond)                                                                                  \
	do {                                                                                          \
		if (!(cond)) {                                                                        \
			fprintf(stderr, "%s:%d: expected %s (errno %s)\n", __FILE__, __LINE__, #cond, \
				strerror(errno));                                                     \
			_exit(__LINE__ % 250 + 1);                                                    \
		}                                                                                     \
	} while (0)

static long denied_with(long rc, int err)
{
	return rc == -1 && errno == err;
}

static void *thread_fn(void *arg)
{
	return arg;
}

static void threads_work(void)
{
	pthread_t t;
	EXPECT(pthread_create(&t, NULL, thread_fn, (void *)7) == 0);
	void *out = NULL;
	EXPECT(pthread_join(t, &out) == 0 && out == (void *)7);
}

static void files_work(void)
{
	char dir[] = "/tmp/gpugate-sandbox-XXXXXX";
	EXPECT(mkdtemp(dir) != NULL);
	char tmp[256], final[256];
	snprintf(tmp, sizeof(tmp), "%s/.r.tmp", dir);
	snprintf(final, sizeof(final), "%s/r", dir);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
	EXPECT(fd >= 0);
	EXPECT(write(fd, "x", 1) == 1);
	EXPECT(close(fd) == 0);
	EXPECT(rename(tmp, final) == 0);
	EXPECT(access(final, R_OK) == 0);
	EXPECT(unlink(final) == 0);
	EXPECT(rmdir(dir) == 0);
	char buf[64];
	EXPECT(readlink("/proc/self/exe", buf, sizeof(buf)) > 0);
	int p[2];
	EXPECT(pipe2(p, O_CLOEXEC) == 0);
	close(p[0]);
	close(p[1]);
}

/* symlink(2) in a fresh folder: 0, or the errno it failed with. */
static int symlink_errno(void)
{
	char dir[] = "/tmp/gpugate-sandbox-XXXXXX";
	EXPECT(mkdtemp(dir) != NULL);
	char link[256];
	snprintf(link, sizeof(link), "%s/l", dir);
	int err = symlink("../blobs/x", link) == 0 ? 0 : errno;
	unlink(link);
	EXPECT(rmdir(dir) == 0);
	return err;
}

/* What every profile denies. */
static void dangerous_denied(void)
{
	EXPECT(denied_with(mount("none", "/mnt", "tmpfs", 0, NULL), EPERM));
	EXPECT(denied_with(umount2("/proc", MNT_DETACH), EPERM));
	EXPECT(denied_with(syscall(SYS_bpf, 0, NULL, 0), EPERM));
	EXPECT(denied_with(syscall(SYS_keyctl, 0, 0, 0, 0, 0), EPERM));
	EXPECT(denied_with(syscall(SYS_add_key, "user", "k", "v", 1, 0), EPERM));
	EXPECT(denied_with(syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0), EPERM));
	EXPECT(denied_with(syscall(SYS_unshare, 0), EPERM));
	EXPECT(denied_with(syscall(SYS_setuid, 0), EPERM));
	EXPECT(denied_with(syscall(SYS_init_module, NULL, 0, ""), EPERM));
	EXPECT(denied_with(syscall(SYS_process_vm_writev, getppid(), NULL, 0, NULL, 0, 0), EPERM));
	EXPECT(denied_with(syscall(SYS_execveat, AT_FDCWD, "/bin/true", NULL, NULL, 0), EPERM));
	char *argv[] = { "sh", "-c", "exit 0", NULL };
	EXPECT(denied_with(execve("/bin/sh", argv, NULL), EPERM));
	/* a copy of the allowed path at another address does not pass */
	char copy[32];
	strcpy(copy, sandbox_self_exe);
	char *self_argv[] = { "x", NULL };
	EXPECT(denied_with(execve(copy, self_argv, NULL), EPERM));
	if (!SANITIZER)
		EXPECT(denied_with(ptrace(PTRACE_TRACEME, 0, NULL, NULL), EPERM));
	/* terminal injection, also with high bits set to dodge a 64-bit
	 * compare, on a real terminal: there only the filter answers ENOTTY
	 * (TIOCSTI succeeds, or fails with EIO or EPERM) */
	int ptm = posix_openpt(O_RDWR | O_NOCTTY);
	EXPECT(ptm >= 0);
	EXPECT(denied_with(syscall(SYS_ioctl, ptm, (unsigned long)TIOCSTI, "x"), ENOTTY));
	EXPECT(denied_with(syscall(SYS_ioctl, ptm, (unsigned long)TIOCSTI | (1UL << 32), "x"), ENOTTY));
	EXPECT(syscall(SYS_ioctl, ptm, (unsigned long)TIOCGPTN, &(unsigned){ 0 }) == 0); /* other requests pass */
	close(ptm);
	/* clone3 answers ENOSYS so that glibc falls back to clone */
	EXPECT(denied_with(syscall(SYS_clone3, NULL, 0), ENOSYS));
}

static void expect_child_ok(void (*body)(void))
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		body();
		_exit(0);
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void apply_or_die(enum sandbox_profile p)
{
	char err[256] = "";
	int rc = sandbox_apply(p, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "sandbox_apply: %s\n", err);
	EXPECT(rc == 0);
	/* the kernel reports the filter on the process */
	char status[4096];
	int fd = open("/proc/self/status", O_RDONLY);
	EXPECT(fd >= 0);
	ssize_t n = read(fd, status, sizeof(status) - 1);
	close(fd);
	EXPECT(n > 0);
	status[n] = '\0';
	EXPECT(strstr(status, "Seccomp:\t2") != NULL);
}

static void check_body(void)
{
	apply_or_die(SANDBOX_CHECK);
	EXPECT(denied_with(socket(AF_INET, SOCK_STREAM, 0), EPERM));
	EXPECT(denied_with(socket(AF_INET6, SOCK_DGRAM, 0), EPERM));
	EXPECT(denied_with(socket(AF_NETLINK, SOCK_RAW, 0), EPERM));
	EXPECT(denied_with(socket(AF_PACKET, SOCK_RAW, 0), EPERM));
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	EXPECT(fd >= 0);
	close(fd);
	dangerous_denied();
	threads_work();
	files_work();
	EXPECT(symlink_errno() == EPERM); /* no check makes links */
	/* the probe child: fork, then execve of this binary through the one
	 * allowed address (it exits at once: see main) */
	pid_t pid = fork();
	EXPECT(pid >= 0);
	if (pid == 0) {
		char *argv[] = { "test_sandbox", "--exit-42", NULL };
		sandbox_exec_self(argv, NULL);
		_exit(99);
	}
	int status = 0;
	EXPECT(waitpid(pid, &status, 0) == pid);
	EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 42);
}

static void probe_body(void)
{
	apply_or_die(SANDBOX_CHECK);
	apply_or_die(SANDBOX_PROBE); /* stacked, as in the probe child */
	EXPECT(denied_with(socket(AF_INET, SOCK_STREAM, 0), EPERM));
	dangerous_denied();
	threads_work();
	int fd = open("/dev/null", O_RDONLY);
	EXPECT(fd >= 0);
	EXPECT(ioctl(fd, FIONREAD, &(int){ 0 }) == 0 || errno != EPERM);
	close(fd);
	char *argv[] = { "test_sandbox", "--exit-42", NULL };
	EXPECT(denied_with(sandbox_exec_self(argv, NULL), EPERM));
	if (!SANITIZER)
		EXPECT(denied_with(fork(), EPERM));
}

static void network_body(void)
{
	apply_or_die(SANDBOX_NETWORK);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	EXPECT(fd >= 0);
	close(fd);
	fd = socket(AF_INET6, SOCK_STREAM, 0);
	EXPECT(fd >= 0 || errno == EAFNOSUPPORT);
	if (fd >= 0)
		close(fd);
	EXPECT(denied_with(socket(AF_PACKET, SOCK_RAW, 0), EPERM));
	dangerous_denied();
	threads_work();
	files_work();
	EXPECT(symlink_errno() == 0); /* hf fetch links snapshot files to blobs */
	char *argv[] = { "test_sandbox", "--exit-42", NULL };
	EXPECT(denied_with(sandbox_exec_self(argv, NULL), EPERM));
	if (!SANITIZER)
		EXPECT(denied_with(fork(), EPERM));
}

static void test_check_profile(void **state)
{
	(void)state;
	expect_child_ok(check_body);
}

static void test_probe_profile(void **state)
{
	(void)state;
	expect_child_ok(probe_body);
}

static void test_network_profile(void **state)
{
	(void)state;
	expect_child_ok(network_body);
}

static void test_env_switch(void **state)
{
	(void)state;
	char *on[] = { "PATH=/bin", "GPUGATE_NO_SANDBOX=1", NULL };
	char *off[] = { "GPUGATE_NO_SANDBOX=0", NULL };
	char *garbage[] = { "GPUGATE_NO_SANDBOX=yes please", "GPUGATE_NO_SANDBOX_X=1", NULL };
	char *none[] = { NULL };
	assert_true(sandbox_disabled_by_env(on));
	assert_false(sandbox_disabled_by_env(off));
	assert_false(sandbox_disabled_by_env(garbage));
	assert_false(sandbox_disabled_by_env(none));
	assert_false(sandbox_disabled_by_env(NULL));
	assert_string_equal(sandbox_profile_name(SANDBOX_PROBE), "probe");
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--exit-42") == 0)
		return 42;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_profile),
		cmocka_unit_test(test_probe_profile),
		cmocka_unit_test(test_network_profile),
		cmocka_unit_test(test_env_switch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
