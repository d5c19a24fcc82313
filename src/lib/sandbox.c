/* The seccomp allow-lists of sandbox.h, built with libseccomp. */
#include "sandbox.h"

#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util.h"

/* LeakSanitizer stops the world with ptrace and a clone without
 * CLONE_THREAD; sanitizer builds keep both. */
#if defined(__SANITIZE_ADDRESS__)
#define SANDBOX_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANDBOX_SANITIZER 1
#endif
#endif
#ifndef SANDBOX_SANITIZER
#define SANDBOX_SANITIZER 0
#endif

const char sandbox_self_exe[] = "/proc/self/exe";

/* Every profile: reading files and folders, writing the few files gpugate
 * writes (reports, state cache, the HF writability probe), memory, threads,
 * time, signals, pipes, and the identity calls access checks need. */
static const char *const base_calls[] = {
	/* files */
	"read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev",
	"preadv2", "pwritev2", "open", "openat", "openat2", "close", "close_range", "creat",
	"stat", "fstat", "lstat", "newfstatat", "fstatat64", "stat64", "fstat64", "lstat64",
	"statx", "statfs", "fstatfs", "statfs64", "fstatfs64", "access", "faccessat",
	"faccessat2", "readlink", "readlinkat", "getdents", "getdents64", "lseek", "_llseek",
	"fcntl", "fcntl64", "flock", "dup", "dup2", "dup3", "pipe", "pipe2", "mkdir", "mkdirat",
	"rename", "renameat", "renameat2", "unlink", "unlinkat", "rmdir", "fchmod", "fchmodat",
	"fsync", "fdatasync", "ftruncate", "ftruncate64", "getcwd", "chdir", "fchdir", "umask",
	"fadvise64", "fadvise64_64", "sendfile", "copy_file_range", "getxattr", "lgetxattr",
	"fgetxattr", "utimensat", "futimesat", "name_to_handle_at", "memfd_create",
	/* waiting on descriptors */
	"poll", "ppoll", "select", "_newselect", "pselect6", "epoll_create", "epoll_create1",
	"epoll_ctl", "epoll_wait", "epoll_pwait", "epoll_pwait2", "eventfd", "eventfd2",
	"timerfd_create", "timerfd_settime", "timerfd_gettime",
	/* memory */
	"brk", "mmap", "mmap2", "munmap", "mremap", "mprotect", "madvise", "mlock", "munlock",
	"mincore", "msync", "membarrier",
	/* threads */
	"futex", "futex_waitv", "set_robust_list", "get_robust_list", "rseq", "set_tid_address",
	"gettid", "sched_yield", "sched_getaffinity", "sched_getparam", "sched_getscheduler",
	"sched_get_priority_max", "sched_get_priority_min", "getcpu", "getpriority",
	/* signals and exit */
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigreturn", "sigaltstack",
	"rt_sigtimedwait", "rt_sigsuspend", "restart_syscall", "kill", "tgkill", "tkill",
	"exit", "exit_group", "wait4", "waitid", "pidfd_open", "pidfd_send_signal",
	/* identity and limits */
	"getpid", "getppid", "getuid", "geteuid", "getgid", "getegid", "getgroups", "getresuid",
	"getresgid", "getuid32", "geteuid32", "getgid32", "getegid32", "getgroups32",
	"getresuid32", "getresgid32", "getpgid", "getpgrp", "getsid", "setpgid", "setsid",
	"uname", "sysinfo", "getrlimit", "ugetrlimit", "prlimit64", "getrusage", "times",
	"getrandom", "prctl", "arch_prctl", "capget", "personality", "seccomp",
	/* time */
	"clock_gettime", "clock_gettime64", "clock_getres", "clock_nanosleep",
	"clock_nanosleep_time64", "nanosleep", "gettimeofday", "time",
	/* local sockets (NSS); socket() itself is filtered by family below */
	"connect", "sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg", "shutdown",
	"getsockopt", "setsockopt", "getsockname", "getpeername", "bind", "listen", "accept",
	"accept4",
	/* what a GPU runtime does in the probe child (inherited filters only
	 * narrow, so the checking process's filter must already allow it) */
	"sched_setaffinity", "mbind", "get_mempolicy", "set_mempolicy", "migrate_pages",
	"move_pages", "shmget", "shmat", "shmdt", "shmctl", "inotify_init1", "inotify_add_watch",
	"inotify_rm_watch",
	NULL,
};

/* The network profile adds nothing by name: IP sockets are let through by
 * the socket() rule below. */

static int add(scmp_filter_ctx f, uint32_t action, const char *name, unsigned n,
	       const struct scmp_arg_cmp *cmp)
{
	int nr = seccomp_syscall_resolve_name(name);
	if (nr == __NR_SCMP_ERROR)
		return 0; /* unknown to this libseccomp: nothing to allow */
	int rc = seccomp_rule_add_array(f, action, nr, n, cmp);
	return rc == -EDOM ? 0 : rc; /* not a call on this architecture */
}

static int add_socket_rules(scmp_filter_ctx f, enum sandbox_profile profile)
{
	static const int local[] = { AF_UNIX };
	static const int network[] = { AF_UNIX, AF_INET, AF_INET6, AF_NETLINK };
	const int *families = profile == SANDBOX_NETWORK ? network : local;
	size_t n = profile == SANDBOX_NETWORK ? ARRAY_SIZE(network) : ARRAY_SIZE(local);
	for (size_t i = 0; i < n; i++) {
		struct scmp_arg_cmp fam = SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)families[i], 0);
		int rc = add(f, SCMP_ACT_ALLOW, "socket", 1, &fam);
		if (rc == 0)
			rc = add(f, SCMP_ACT_ALLOW, "socketpair", 1, &fam);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* ioctl: everything but the terminal injection requests. The deny rule
 * compares the low 32 bits, as the kernel reads the request, so setting high
 * bits does not slip past it; the allow rule is conditional (always true) so
 * that libseccomp keeps both. */
static int add_ioctl_rules(scmp_filter_ctx f)
{
	static const unsigned long denied[] = { TIOCSTI, TIOCLINUX };
	for (size_t i = 0; i < ARRAY_SIZE(denied); i++) {
		struct scmp_arg_cmp req = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, denied[i]);
		int rc = add(f, SCMP_ACT_ERRNO(ENOTTY), "ioctl", 1, &req);
		if (rc < 0)
			return rc;
	}
	struct scmp_arg_cmp any = SCMP_A0(SCMP_CMP_MASKED_EQ, 0, 0);
	return add(f, SCMP_ACT_ALLOW, "ioctl", 1, &any);
}

/* Process creation. CHECK: fork (for the probe child) and threads; execve
 * only of sandbox_self_exe. PROBE and NETWORK: threads only, no execve. */
static int add_process_rules(scmp_filter_ctx f, enum sandbox_profile profile)
{
	int rc = add(f, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL);
	if (rc < 0)
		return rc;
	if (profile == SANDBOX_CHECK || SANDBOX_SANITIZER) {
		rc = add(f, SCMP_ACT_ALLOW, "clone", 0, NULL);
		if (rc == 0)
			rc = add(f, SCMP_ACT_ALLOW, "fork", 0, NULL);
		if (rc == 0)
			rc = add(f, SCMP_ACT_ALLOW, "vfork", 0, NULL);
	} else {
		/* clone's flags are the first argument on every architecture
		 * gpugate builds for */
		struct scmp_arg_cmp thread = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD);
		rc = add(f, SCMP_ACT_ALLOW, "clone", 1, &thread);
	}
	if (rc == 0 && profile == SANDBOX_CHECK) {
		struct scmp_arg_cmp path = SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)(uintptr_t)sandbox_self_exe, 0);
		rc = add(f, SCMP_ACT_ALLOW, "execve", 1, &path);
	}
	if (rc == 0 && SANDBOX_SANITIZER)
		rc = add(f, SCMP_ACT_ALLOW, "ptrace", 0, NULL);
	return rc;
}

static int build(scmp_filter_ctx f, enum sandbox_profile profile)
{
	for (const char *const *name = base_calls; *name; name++) {
		int rc = add(f, SCMP_ACT_ALLOW, *name, 0, NULL);
		if (rc < 0)
			return rc;
	}
	int rc = add_socket_rules(f, profile);
	if (rc == 0)
		rc = add_ioctl_rules(f);
	if (rc == 0)
		rc = add_process_rules(f, profile);
	return rc;
}

int sandbox_apply(enum sandbox_profile profile, char *err, size_t err_size)
{
	scmp_filter_ctx f = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	if (!f) {
		snprintf(err, err_size, "seccomp_init failed (libseccomp %s)", "unavailable");
		return -ENOMEM;
	}
	int rc = build(f, profile);
	const char *step = "seccomp_rule_add";
	if (rc == 0) {
		step = "seccomp_load";
		rc = seccomp_load(f);
	}
	seccomp_release(f);
	if (rc < 0)
		snprintf(err, err_size, "%s (%s profile): %s", step, sandbox_profile_name(profile),
			 strerror(-rc));
	return rc < 0 ? rc : 0;
}

bool sandbox_disabled_by_env(char **env)
{
	static const char name[] = "GPUGATE_NO_SANDBOX=";
	for (char **e = env; e && *e; e++)
		if (strncmp(*e, name, sizeof(name) - 1) == 0)
			return strcmp(*e + sizeof(name) - 1, "1") == 0;
	return false;
}

int sandbox_exec_self(char *const argv[], char *const envp[])
{
	return execve(sandbox_self_exe, argv, envp);
}

const char *sandbox_profile_name(enum sandbox_profile profile)
{
	switch (profile) {
	case SANDBOX_CHECK: return "check";
	case SANDBOX_PROBE: return "probe";
	case SANDBOX_NETWORK: return "network";
	}
	return "unknown";
}
