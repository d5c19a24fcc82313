/* The self-sandbox: a seccomp filter (built at build time from the rules of
 * src/tools/sandbox_gen.c) that gpugate loads on itself
 * once the options are parsed, before it reads the spec or any other file.
 * It is an allow-list: what is not listed fails with EPERM (never a kill, so
 * a library that probes an optional call degrades instead of dying).
 *
 * Design, and why:
 * - Filters stack and are inherited over fork and execve, and a later filter
 *   can only narrow, never widen. The probe child (`gpugate probe ...`) is
 *   forked and exec'd by the checking process after SANDBOX_CHECK is loaded,
 *   so SANDBOX_CHECK must already allow what the GPU runtime needs in that
 *   child (ioctl, executable mappings, threads, NUMA calls). The child then
 *   loads SANDBOX_PROBE on top, which takes away process creation and execve.
 * - seccomp sees pointers, not strings, so it cannot check execve's path.
 *   SANDBOX_CHECK allows execve only when the path argument is the address
 *   of sandbox_self_exe, a constant "/proc/self/exe" in read-only memory:
 *   a forked child shares that address, so sandbox_exec_self() works, and an
 *   execve of any other path (a shell, a downloaded file) fails with EPERM.
 *   execveat is denied outright. Code that already runs arbitrary
 *   instructions could still aim execve at that address after changing the
 *   page; the filter is a barrier against parser bugs turned into "run a
 *   shell", not against a full compromise.
 * - Network: socket() is allowed for AF_UNIX only (glibc's NSS asks nscd or
 *   sssd over a local socket when a check names a group); AF_INET, AF_INET6,
 *   AF_NETLINK, AF_PACKET and every other family fail with EPERM. No check
 *   needs the network; gpugate-provision's `hf fetch` and `stack` load
 *   SANDBOX_NETWORK (src/provision/main.c).
 * - Denied outright (besides everything not listed): ptrace, mount, umount2,
 *   pivot_root, bpf, keyctl, add_key, request_key, kexec_*, *_module,
 *   reboot, swapon/off, perf_event_open, process_vm_readv/writev, userfaultfd,
 *   unshare, setns, chroot, set*uid/gid, io_uring, ioctl(TIOCSTI/TIOCLINUX).
 *   Sanitizer builds keep ptrace: LeakSanitizer stops the process with it.
 * - clone3 answers ENOSYS so that glibc falls back to clone(2), whose flags
 *   a filter can see (clone3 passes them in memory).
 * - Writes stay allowed: the HF writability probe's temp file, the state
 *   cache and --report files are written through open/rename in the checks'
 *   and reporters' own paths.
 *
 * The filter applies to the threads and children created afterwards (the
 * deadline watchdog is started after it). It is loaded with TSYNC, so that a
 * thread already running could not stay outside it either. */
#ifndef GPUGATE_SANDBOX_H
#define GPUGATE_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>

enum sandbox_profile {
	SANDBOX_CHECK,   /* gpugate check: files, time, memory, threads, the probe child */
	SANDBOX_PROBE,   /* the probe child after exec: CHECK less fork and execve */
	SANDBOX_NETWORK, /* hf fetch, stack: CHECK plus IP sockets and symlinks; threads only, no fork or execve */
};

/* The only path SANDBOX_CHECK lets execve run (compared by address). */
extern const char sandbox_self_exe[];

/* Loads the profile's filter on the calling thread. Returns 0, or -errno
 * with a message in err ("seccomp_load: Invalid argument"). */
int sandbox_apply(enum sandbox_profile profile, char *err, size_t err_size);

/* True when GPUGATE_NO_SANDBOX is set to 1 (debugging) in env. */
bool sandbox_disabled_by_env(char **env);

/* execve of this binary, through the one path the filter allows. Returns
 * only on failure (-1, errno set). */
int sandbox_exec_self(char *const argv[], char *const envp[]);

/* Name of a profile: "check", "probe", "network". */
const char *sandbox_profile_name(enum sandbox_profile profile);

#endif
