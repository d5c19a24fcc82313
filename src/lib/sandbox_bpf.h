/* The seccomp programs of sandbox.h, generated at build time by
 * src/tools/sandbox_gen.c into build/gen/sandbox_bpf.c. */
#ifndef GPUGATE_SANDBOX_BPF_H
#define GPUGATE_SANDBOX_BPF_H

#include <linux/filter.h>
#include <stddef.h>

struct sandbox_bpf {
	const struct sock_filter *insns;
	size_t len;
	/* instructions whose constant is the high / low 32 bits of the address
	 * of sandbox_self_exe (execve's one allowed path), written at load */
	const unsigned short *self_exe_hi, *self_exe_lo;
	size_t n_self_exe_hi, n_self_exe_lo;
};

/* Indexed by enum sandbox_profile. */
extern const struct sandbox_bpf sandbox_bpf_programs[];

#endif
