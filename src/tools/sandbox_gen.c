/* Build-time generator of the seccomp programs of src/lib/sandbox.h.
 *
 * Building a filter with libseccomp costs ~2.5 ms per start (hundreds of rule
 * adds, then the BPF generation), more than the packages check itself. The
 * rules never change between runs, so this program builds each profile once,
 * with libseccomp (seccomp_export_bpf) and in the compact encoding of
 * sandbox_compact.c (100 instructions instead of 256: loading a filter costs
 * the kernel time per instruction), checks the second against the rules and
 * the first, and writes it as C arrays to stdout; gpugate loads them with
 * prctl + seccomp(2) and does not link libseccomp at all.
 *
 * One rule depends on a run-time value: execve is allowed only when its path
 * argument is the address of sandbox_self_exe, which ASLR moves on every
 * start. The generator builds that comparison against a sentinel address and
 * records the instructions that hold its two 32-bit halves; sandbox.c writes
 * the real address into them before loading. The generator fails when the
 * sentinel is not found, or found where it cannot be patched safely.
 *
 * Compiled with the same CFLAGS as gpugate, so sanitizer builds get the
 * sanitizer profiles (ptrace and plain clone kept for LeakSanitizer). */
#include <errno.h>
#include <linux/filter.h>
#include <sched.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/sandbox.h"
#include "lib/sanitizer.h"
#include "sandbox_compact.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* Stands for the address of sandbox_self_exe in the generated program. Both
 * halves are values no other rule compares against (no syscall number, ioctl
 * request, socket family, errno or clone flag), checked below. */
static const uint64_t SELF_EXE_SENTINEL = 0x5eccfe11a5e1fe7eULL;

/* Every profile: reading files and folders, writing the few files gpugate
 * writes (reports, state cache, the HF writability probe), memory, threads,
 * time, signals, pipes, and the identity calls access checks need. */
static const char *const base_calls[] = {
	/* files */
	"read",
	"write",
	"readv",
	"writev",
	"pread64",
	"pwrite64",
	"preadv",
	"pwritev",
	"preadv2",
	"pwritev2",
	"open",
	"openat",
	"openat2",
	"close",
	"close_range",
	"creat",
	"stat",
	"fstat",
	"lstat",
	"newfstatat",
	"fstatat64",
	"stat64",
	"fstat64",
	"lstat64",
	"statx",
	"statfs",
	"fstatfs",
	"statfs64",
	"fstatfs64",
	"access",
	"faccessat",
	"faccessat2",
	"readlink",
	"readlinkat",
	"getdents",
	"getdents64",
	"lseek",
	"_llseek",
	"fcntl",
	"fcntl64",
	"flock",
	"dup",
	"dup2",
	"dup3",
	"pipe",
	"pipe2",
	"mkdir",
	"mkdirat",
	"rename",
	"renameat",
	"renameat2",
	"unlink",
	"unlinkat",
	"rmdir",
	"fchmod",
	"fchmodat",
	"fsync",
	"fdatasync",
	"ftruncate",
	"ftruncate64",
	"getcwd",
	"chdir",
	"fchdir",
	"umask",
	"fadvise64",
	"fadvise64_64",
	"sendfile",
	"copy_file_range",
	"getxattr",
	"lgetxattr",
	"fgetxattr",
	"utimensat",
	"futimesat",
	"name_to_handle_at",
	"memfd_create",
	/* waiting on descriptors */
	"poll",
	"ppoll",
	"select",
	"_newselect",
	"pselect6",
	"epoll_create",
	"epoll_create1",
	"epoll_ctl",
	"epoll_wait",
	"epoll_pwait",
	"epoll_pwait2",
	"eventfd",
	"eventfd2",
	"timerfd_create",
	"timerfd_settime",
	"timerfd_gettime",
	/* memory */
	"brk",
	"mmap",
	"mmap2",
	"munmap",
	"mremap",
	"mprotect",
	"madvise",
	"mlock",
	"munlock",
	"mincore",
	"msync",
	"membarrier",
	/* threads */
	"futex",
	"futex_waitv",
	"set_robust_list",
	"get_robust_list",
	"rseq",
	"set_tid_address",
	"gettid",
	"sched_yield",
	"sched_getaffinity",
	"sched_getparam",
	"sched_getscheduler",
	"sched_get_priority_max",
	"sched_get_priority_min",
	"getcpu",
	"getpriority",
	/* signals and exit */
	"rt_sigaction",
	"rt_sigprocmask",
	"rt_sigreturn",
	"sigreturn",
	"sigaltstack",
	"rt_sigtimedwait",
	"rt_sigsuspend",
	"restart_syscall",
	"kill",
	"tgkill",
	"tkill",
	"exit",
	"exit_group",
	"wait4",
	"waitid",
	"pidfd_open",
	"pidfd_send_signal",
	/* identity and limits */
	"getpid",
	"getppid",
	"getuid",
	"geteuid",
	"getgid",
	"getegid",
	"getgroups",
	"getresuid",
	"getresgid",
	"getuid32",
	"geteuid32",
	"getgid32",
	"getegid32",
	"getgroups32",
	"getresuid32",
	"getresgid32",
	"getpgid",
	"getpgrp",
	"getsid",
	"setpgid",
	"setsid",
	"uname",
	"sysinfo",
	"getrlimit",
	"ugetrlimit",
	"prlimit64",
	"getrusage",
	"times",
	"getrandom",
	"prctl",
	"arch_prctl",
	"capget",
	"personality",
	"seccomp",
	/* time */
	"clock_gettime",
	"clock_gettime64",
	"clock_getres",
	"clock_nanosleep",
	"clock_nanosleep_time64",
	"nanosleep",
	"gettimeofday",
	"time",
	/* local sockets (NSS); socket() itself is filtered by family below */
	"connect",
	"sendto",
	"recvfrom",
	"sendmsg",
	"recvmsg",
	"sendmmsg",
	"recvmmsg",
	"shutdown",
	"getsockopt",
	"setsockopt",
	"getsockname",
	"getpeername",
	"bind",
	"listen",
	"accept",
	"accept4",
	/* what a GPU runtime does in the probe child (inherited filters only
	 * narrow, so the checking process's filter must already allow it) */
	"sched_setaffinity",
	"mbind",
	"get_mempolicy",
	"set_mempolicy",
	"migrate_pages",
	"move_pages",
	"shmget",
	"shmat",
	"shmdt",
	"shmctl",
	"inotify_init1",
	"inotify_add_watch",
	"inotify_rm_watch",
	NULL,
};

/* What the network profile adds by name: the snapshot links of the Hugging
 * Face cache that hf fetch makes (IP sockets are let through by the socket()
 * rule below). */
static const char *const network_calls[] = { "symlink", "symlinkat", NULL };

/* The rules given to libseccomp, for the compact encoding of the program. */
static struct compact_rules recorded;

static int add(scmp_filter_ctx f, uint32_t action, const char *name, unsigned n, const struct scmp_arg_cmp *cmp)
{
	int nr = seccomp_syscall_resolve_name(name);
	if (nr == __NR_SCMP_ERROR)
		return 0; /* unknown to this libseccomp: nothing to allow */
	int rc = seccomp_rule_add_array(f, action, nr, n, cmp);
	if (rc == -EDOM)
		return 0; /* not a call on this architecture */
	if (rc == 0 && compact_add(&recorded, nr, action, n, cmp) < 0)
		return -EINVAL;
	return rc;
}

static int add_socket_rules(scmp_filter_ctx f, enum sandbox_profile profile)
{
	static const int local[] = { AF_UNIX };
	static const int network[] = { AF_UNIX, AF_INET, AF_INET6, AF_NETLINK };
	const int *families = profile == SANDBOX_NETWORK ? network : local;
	size_t n = profile == SANDBOX_NETWORK ? N_ELEMS(network) : N_ELEMS(local);
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
 * bits does not slip past it. libseccomp folds this call into a plain allow
 * (its program lets TIOCSTI through); the compact program gpugate loads
 * keeps the denials, and compact_verify() holds it to them. */
static int add_ioctl_rules(scmp_filter_ctx f)
{
	static const unsigned long denied[] = { TIOCSTI, TIOCLINUX };
	for (size_t i = 0; i < N_ELEMS(denied); i++) {
		struct scmp_arg_cmp req = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, denied[i]);
		int rc = add(f, SCMP_ACT_ERRNO(ENOTTY), "ioctl", 1, &req);
		if (rc < 0)
			return rc;
	}
	struct scmp_arg_cmp any = SCMP_A0(SCMP_CMP_MASKED_EQ, 0, 0);
	return add(f, SCMP_ACT_ALLOW, "ioctl", 1, &any);
}

/* Process creation. CHECK: fork (for the probe child) and threads; execve
 * only of sandbox_self_exe (the sentinel, patched at load time). PROBE and
 * NETWORK: threads only, no execve. */
static int add_process_rules(scmp_filter_ctx f, enum sandbox_profile profile)
{
	int rc = add(f, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL);
	if (rc < 0)
		return rc;
	if (profile == SANDBOX_CHECK || BUILD_ASAN) {
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
		scmp_datum_t sentinel = sizeof(void *) == 8 ? SELF_EXE_SENTINEL : (uint32_t)SELF_EXE_SENTINEL;
		struct scmp_arg_cmp path = SCMP_A0(SCMP_CMP_EQ, sentinel, 0);
		rc = add(f, SCMP_ACT_ALLOW, "execve", 1, &path);
	}
	if (rc == 0 && BUILD_ASAN)
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
	for (const char *const *name = network_calls; profile == SANDBOX_NETWORK && *name; name++) {
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

static void die(const char *what, int err)
{
	fprintf(stderr, "sandbox_gen: %s: %s\n", what, strerror(err));
	exit(1);
}

/* The profile's program: libseccomp's, exported into a temporary file and
 * read back, then the compact encoding of the same rules, checked by
 * compact_verify() against the rules and libseccomp's program. Returns the
 * compact program's length; *reference_len is libseccomp's. */
static size_t export_program(enum sandbox_profile profile, struct sock_filter **out, size_t *reference_len)
{
	scmp_filter_ctx f = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	if (!f)
		die("seccomp_init", ENOMEM);
	/* libseccomp's tree: the reference the compact program is checked
	 * against (its length is in the generated file's comment) */
	int rc = seccomp_attr_set(f, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (rc < 0)
		die("seccomp_attr_set(SCMP_FLTATR_CTL_OPTIMIZE)", -rc);
	memset(&recorded, 0, sizeof(recorded));
	rc = build(f, profile);
	if (rc < 0)
		die("seccomp_rule_add", -rc);
	uint32_t badarch = 0;
	rc = seccomp_attr_get(f, SCMP_FLTATR_ACT_BADARCH, &badarch);
	if (rc < 0)
		die("seccomp_attr_get(SCMP_FLTATR_ACT_BADARCH)", -rc);
	FILE *tmp = tmpfile();
	if (!tmp)
		die("tmpfile", errno);
	rc = seccomp_export_bpf(f, fileno(tmp));
	if (rc < 0)
		die("seccomp_export_bpf", -rc);
	seccomp_release(f);
	long size = lseek(fileno(tmp), 0, SEEK_END);
	if (size <= 0 || size % (long)sizeof(struct sock_filter) != 0 ||
	    size / (long)sizeof(struct sock_filter) > BPF_MAXINSNS)
		die("seccomp_export_bpf gave a program of odd size", EINVAL);
	struct sock_filter *reference = malloc((size_t)size);
	if (!reference)
		die("malloc", ENOMEM);
	if (pread(fileno(tmp), reference, (size_t)size, 0) != size)
		die("reading the exported program back", errno ? errno : EIO);
	fclose(tmp);
	*reference_len = (size_t)size / sizeof(struct sock_filter);
	size_t n = compact_program(&recorded, seccomp_arch_native(), SCMP_ACT_ERRNO(EPERM), badarch, out);
	char why[512];
	if (compact_verify(&recorded, seccomp_arch_native(), SCMP_ACT_ERRNO(EPERM), badarch, reference, *reference_len,
			   *out, n, why, sizeof(why)) < 0) {
		fprintf(stderr, "sandbox_gen: the program of profile %d is wrong: %s\n", (int)profile, why);
		exit(1);
	}
	free(reference);
	return n;
}

/* Indexes of the instructions comparing (JEQ with a constant) against value;
 * any other use of value (a load, an ALU constant) is an error. */
static size_t find_compares(const struct sock_filter *prog, size_t n, uint32_t value, unsigned *idx, size_t max)
{
	size_t found = 0;
	for (size_t i = 0; i < n; i++) {
		if (prog[i].k != value)
			continue;
		if (prog[i].code != (BPF_JMP | BPF_JEQ | BPF_K) || found == max)
			die("the execve sentinel is used in an instruction that cannot be patched", EINVAL);
		idx[found++] = (unsigned)i;
	}
	return found;
}

static void emit_indexes(const char *name, const unsigned *idx, size_t n)
{
	printf("static const unsigned short %s[] = {", name);
	for (size_t i = 0; i < n; i++)
		printf(" %u,", idx[i]);
	printf(" 0 };\n");
}

int main(void)
{
	static const struct {
		enum sandbox_profile profile;
		const char *name;
	} profiles[] = {
		{ SANDBOX_CHECK, "check" },
		{ SANDBOX_PROBE, "probe" },
		{ SANDBOX_NETWORK, "network" },
	};
	const uint32_t hi = (uint32_t)(SELF_EXE_SENTINEL >> 32), lo = (uint32_t)SELF_EXE_SENTINEL;
	printf("/* Generated by src/tools/sandbox_gen.c with libseccomp %u.%u.%u%s. Do not edit. */\n",
	       seccomp_version()->major, seccomp_version()->minor, seccomp_version()->micro,
	       BUILD_ASAN ? " (sanitizer build: ptrace and clone kept)" : "");
	printf("#include \"lib/sandbox_bpf.h\"\n\n");
	size_t n_self[N_ELEMS(profiles)];
	size_t len[N_ELEMS(profiles)];
	for (size_t p = 0; p < N_ELEMS(profiles); p++) {
		struct sock_filter *prog;
		size_t reference_len;
		size_t n = export_program(profiles[p].profile, &prog, &reference_len);
		printf("/* %s: %zu instructions; libseccomp's tree of the same rules has %zu */\n", profiles[p].name, n,
		       reference_len);
		unsigned hi_idx[8], lo_idx[8];
		size_t n_hi = sizeof(void *) == 8 ? find_compares(prog, n, hi, hi_idx, N_ELEMS(hi_idx)) : 0;
		size_t n_lo = find_compares(prog, n, lo, lo_idx, N_ELEMS(lo_idx));
		bool wants_self = profiles[p].profile == SANDBOX_CHECK;
		if (wants_self ? n_lo == 0 || (sizeof(void *) == 8 && n_hi != n_lo) : n_lo + n_hi != 0)
			die("the execve sentinel is missing or unpaired in the exported program", EINVAL);
		printf("static const struct sock_filter %s_insns[] = {\n", profiles[p].name);
		for (size_t i = 0; i < n; i++)
			printf("\t{ 0x%04x, %u, %u, 0x%08x },\n", prog[i].code, prog[i].jt, prog[i].jf, prog[i].k);
		printf("};\n");
		char name[64];
		snprintf(name, sizeof(name), "%s_self_hi", profiles[p].name);
		emit_indexes(name, hi_idx, n_hi);
		snprintf(name, sizeof(name), "%s_self_lo", profiles[p].name);
		emit_indexes(name, lo_idx, n_lo);
		n_self[p] = n_lo;
		len[p] = n;
		free(prog);
	}
	printf("\nconst struct sandbox_bpf sandbox_bpf_programs[] = {\n");
	for (size_t p = 0; p < N_ELEMS(profiles); p++)
		printf("\t[%d] = { %s_insns, %zu, %s_self_hi, %s_self_lo, %zu, %zu },\n", (int)profiles[p].profile,
		       profiles[p].name, len[p], profiles[p].name, profiles[p].name,
		       sizeof(void *) == 8 ? n_self[p] : 0, n_self[p]);
	printf("};\n");
	return ferror(stdout) || fflush(stdout) ? 1 : 0;
}
