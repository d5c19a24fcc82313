/* A shorter encoding of the seccomp programs sandbox_gen.c builds with
 * libseccomp, checked at build time against the rules and libseccomp's
 * program.
 *
 * libseccomp compiles an allow-list into a tree with one comparison per
 * system call (256 instructions for the check profile), and the kernel's cost
 * of loading a filter grows with its length (JIT, the per-syscall action
 * cache): 0.22 ms on the H100 host, where this encoding loads in 0.15 ms.
 * The same rules fit in about 100
 * instructions when the unconditional allows become a bitmap indexed by the
 * system call number. The build fails unless it gives what the rules say
 * for every system call number and the argument values the rules compare
 * against, and agrees with libseccomp's program there (compact_verify). */
#ifndef GPUGATE_SANDBOX_COMPACT_H
#define GPUGATE_SANDBOX_COMPACT_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdint.h>

struct compact_rule {
	int nr;
	uint32_t action;
	unsigned n_args; /* 0 or 1: gpugate's rules compare one argument at most */
	struct scmp_arg_cmp arg;
};

struct compact_rules {
	struct compact_rule list[512];
	size_t count;
};

/* Records a rule as it is given to libseccomp (nr already resolved; a
 * negative pseudo number is left out, as libseccomp leaves it). Returns 0,
 * or -1 for what the encoding cannot express (more than one argument). */
int compact_add(struct compact_rules *rules, int nr, uint32_t action, unsigned n_args, const struct scmp_arg_cmp *args);

/* The program for the native architecture `arch`: the architecture check and
 * x32 refusal as libseccomp writes them, each system call with argument
 * rules or a non-allow action compared by number, then a bitmap of the
 * unconditional allows. Returns the length; *out is malloc'd. */
size_t compact_program(const struct compact_rules *rules, uint32_t arch, uint32_t default_action,
		       uint32_t badarch_action, struct sock_filter **out);

/* Runs a classic BPF seccomp program on one call, as the kernel does. */
uint32_t bpf_run(const struct sock_filter *prog, size_t len, const struct seccomp_data *data);

/* Tries every system call number below 4096 and in the x32 range, other
 * architectures, and each argument rule with the values it compares against
 * (their neighbours, other high halves, random surroundings): the compact
 * program must give what the rules say, read as written (a matching denial
 * first, then a matching allow, else the default), and so must libseccomp's
 * program, except for a call with both denials and allows: libseccomp folds
 * one whose allow always matches into a plain allow (ioctl: TIOCSTI would
 * pass). 0, or -1 with the first difference described in why. */
int compact_verify(const struct compact_rules *rules, uint32_t arch, uint32_t default_action, uint32_t badarch_action,
		   const struct sock_filter *reference, size_t reference_len, const struct sock_filter *compact,
		   size_t compact_len, char *why, size_t why_size);

#endif
