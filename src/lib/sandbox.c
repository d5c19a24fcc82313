/* Loads the seccomp allow-lists of sandbox.h. The programs are built at
 * build time (src/tools/sandbox_gen.c holds the rules; libseccomp and
 * src/tools/sandbox_compact.c compile them) and loaded here with prctl +
 * seccomp(2): building them at every start cost ~2.5 ms, more than a
 * packages check. */
#include "sandbox.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox_bpf.h"
#include "util.h"

const char sandbox_self_exe[] = "/proc/self/exe";

#ifndef SECCOMP_FILTER_FLAG_SPEC_ALLOW
#define SECCOMP_FILTER_FLAG_SPEC_ALLOW (1UL << 2)
#endif

/* Where the kernel's spec_store_bypass_disable or spectre_v2_user is
 * "seccomp" (older kernels' default), installing a filter also turns on the
 * Speculative Store Bypass and indirect branch mitigations for the process,
 * which slow what follows; they protect a sandbox that runs untrusted code
 * from leaking its own memory. gpugate runs no untrusted code: its filter
 * only limits what a parser bug could do. SPEC_ALLOW keeps the filter and
 * leaves speculation as the rest of the system has it. The network profile
 * (gpugate-provision) keeps the mitigations: that process holds the Hugging
 * Face token while it parses server answers, and a download does not notice
 * the cost. */
static unsigned long spec_flags(enum sandbox_profile profile)
{
	return profile == SANDBOX_NETWORK ? 0 : SECCOMP_FILTER_FLAG_SPEC_ALLOW;
}

/* Loads the program on every thread of the process (TSYNC), so that no
 * thread already running stays outside it. Returns 0, a thread id TSYNC
 * could not synchronize, or -1 with errno. */
static long load(const struct sock_fprog *prog, unsigned long flags)
{
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, prog);
}

int sandbox_apply(enum sandbox_profile profile, char *err, size_t err_size)
{
	const struct sandbox_bpf *bpf = &sandbox_bpf_programs[profile];
	/* execve's one allowed path is compared by address, which ASLR picks at
	 * start: write it into the instructions that compare against it */
	struct sock_filter *insns = xmalloc(bpf->len * sizeof(*insns));
	memcpy(insns, bpf->insns, bpf->len * sizeof(*insns));
	uint64_t self = (uint64_t)(uintptr_t)sandbox_self_exe;
	for (size_t i = 0; i < bpf->n_self_exe_hi; i++)
		insns[bpf->self_exe_hi[i]].k = (uint32_t)(self >> 32);
	for (size_t i = 0; i < bpf->n_self_exe_lo; i++)
		insns[bpf->self_exe_lo[i]].k = (uint32_t)self;
	struct sock_fprog prog = { .len = (unsigned short)bpf->len, .filter = insns };
	int rc = 0;
	/* as libseccomp's seccomp_load does: no new privileges, then the filter */
	long loaded = 0;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		rc = -errno;
	else if ((loaded = load(&prog, SECCOMP_FILTER_FLAG_TSYNC | spec_flags(profile))) < 0)
		rc = -errno;
	if (rc == -EINVAL && spec_flags(profile) && (loaded = load(&prog, SECCOMP_FILTER_FLAG_TSYNC)) >= 0)
		rc = 0; /* a kernel older than 4.17 knows no SPEC_ALLOW */
	free(insns);
	if (rc == 0 && loaded > 0) {
		/* TSYNC names a thread it could not bring under the filter */
		snprintf(err, err_size, "seccomp_load (%s profile): thread %ld has a filter of its own",
			 sandbox_profile_name(profile), loaded);
		return -EBUSY;
	}
	if (rc < 0)
		snprintf(err, err_size, "seccomp_load (%s profile): %s", sandbox_profile_name(profile), strerror(-rc));
	return rc;
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
	case SANDBOX_CHECK:
		return "check";
	case SANDBOX_PROBE:
		return "probe";
	case SANDBOX_NETWORK:
		return "network";
	}
	return "unknown";
}
