/* See sandbox_compact.h. Build-time only: linked into sandbox_gen. */
#include "sandbox_compact.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* Where the two 32-bit halves of argument i sit in struct seccomp_data. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG_LO(i) ((uint32_t)(offsetof(struct seccomp_data, args) + 8 * (i)))
#define ARG_HI(i) (ARG_LO(i) + 4)
#else
#define ARG_HI(i) ((uint32_t)(offsetof(struct seccomp_data, args) + 8 * (i)))
#define ARG_LO(i) (ARG_HI(i) + 4)
#endif
#define X32_SYSCALL_BIT 0x40000000u
/* libseccomp compares the high halves of arguments on 64-bit architectures */
#define ARGS_64BIT (sizeof(void *) == 8)

static void die(const char *what)
{
	fprintf(stderr, "sandbox_gen: %s\n", what);
	exit(1);
}

int compact_add(struct compact_rules *rules, int nr, uint32_t action, unsigned n_args, const struct scmp_arg_cmp *args)
{
	if (nr < 0)
		return 0; /* libseccomp's pseudo number for a call this architecture lacks */
	if (n_args > 1 || rules->count == N_ELEMS(rules->list))
		return -1;
	struct compact_rule *r = &rules->list[rules->count++];
	memset(r, 0, sizeof(*r));
	r->nr = nr;
	r->action = action;
	r->n_args = n_args;
	if (n_args)
		r->arg = args[0];
	return 0;
}

struct program {
	struct sock_filter insns[BPF_MAXINSNS];
	size_t len;
};

static size_t emit(struct program *p, uint16_t code, uint8_t jt, uint8_t jf, uint32_t k)
{
	if (p->len == N_ELEMS(p->insns))
		die("the compact program is too long");
	p->insns[p->len] = (struct sock_filter){ code, jt, jf, k };
	return p->len++;
}

/* Points the false branch of the jump at `at` to `target` (forward). */
static void aim_false(struct program *p, size_t at, size_t target)
{
	if (target <= at || target - at - 1 > 255)
		die("a jump in the compact program is out of reach");
	p->insns[at].jf = (uint8_t)(target - at - 1);
}

static bool special(const struct compact_rules *rules, int nr)
{
	for (size_t i = 0; i < rules->count; i++)
		if (rules->list[i].nr == nr && (rules->list[i].n_args || rules->list[i].action != SCMP_ACT_ALLOW))
			return true;
	return false;
}

/* One half of a comparison: load, mask, compare; records the jump that
 * fails the rule. Returns false when the half can never match. */
static bool emit_half(struct program *p, uint32_t offset, uint32_t mask, uint32_t value, size_t *fails, size_t *n_fails)
{
	if (mask == 0)
		return value == 0; /* nothing to load: always or never equal */
	emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, offset);
	if (mask != 0xffffffffu)
		emit(p, BPF_ALU | BPF_AND | BPF_K, 0, 0, mask);
	fails[(*n_fails)++] = emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 0, value);
	return true;
}

/* The rules of one system call, denials first, each ending in its action
 * when its comparison holds; the default action when none does. */
static void emit_block(struct program *p, const struct compact_rules *rules, int nr, uint32_t default_action)
{
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < rules->count; i++) {
			const struct compact_rule *r = &rules->list[i];
			if (r->nr != nr || (r->action == SCMP_ACT_ALLOW) != (pass == 1))
				continue;
			if (!r->n_args) {
				emit(p, BPF_RET | BPF_K, 0, 0, r->action);
				return; /* what follows could never run */
			}
			uint64_t mask = ~0ULL, value = r->arg.datum_a;
			if (r->arg.op == SCMP_CMP_MASKED_EQ) {
				mask = r->arg.datum_a;
				value = r->arg.datum_b;
			} else if (r->arg.op != SCMP_CMP_EQ) {
				die("the compact program knows only == and masked == comparisons");
			}
			size_t fails[2], n_fails = 0;
			size_t start = p->len;
			bool can_match = !ARGS_64BIT || emit_half(p, ARG_HI(r->arg.arg), (uint32_t)(mask >> 32),
								  (uint32_t)(value >> 32), fails, &n_fails);
			if (can_match)
				can_match = emit_half(p, ARG_LO(r->arg.arg), (uint32_t)mask, (uint32_t)value, fails,
						      &n_fails);
			if (!can_match) {
				p->len = start; /* the rule never applies */
				continue;
			}
			emit(p, BPF_RET | BPF_K, 0, 0, r->action);
			for (size_t f = 0; f < n_fails; f++)
				aim_false(p, fails[f], p->len);
		}
	}
	emit(p, BPF_RET | BPF_K, 0, 0, default_action);
}

size_t compact_program(const struct compact_rules *rules, uint32_t arch, uint32_t default_action,
		       uint32_t badarch_action, struct sock_filter **out)
{
	static struct program p;
	p.len = 0;
	/* First, an instruction the kernel's action cache cannot follow. At
	 * load, seccomp_cache_prepare (kernel/seccomp.c) runs the program for
	 * every system call number (~450) to find the ones it always allows;
	 * this program has none it could find (its allows go through the
	 * bitmap below, which uses X), so the walk through the dispatch for
	 * each number was time spent for an empty cache: with this, each stops
	 * at once. X starts at 0 anyway: nothing else changes. */
	emit(&p, BPF_LDX | BPF_IMM, 0, 0, 0);
	emit(&p, BPF_LD | BPF_W | BPF_ABS, 0, 0, (uint32_t)offsetof(struct seccomp_data, arch));
	emit(&p, BPF_JMP | BPF_JEQ | BPF_K, 1, 0, arch);
	emit(&p, BPF_RET | BPF_K, 0, 0, badarch_action);
	emit(&p, BPF_LD | BPF_W | BPF_ABS, 0, 0, (uint32_t)offsetof(struct seccomp_data, nr));
	if (arch == SCMP_ARCH_X86_64) {
		/* x32 calls share the architecture token: refused as libseccomp
		 * does, all but -1 (a tracer's skipped call) */
		emit(&p, BPF_JMP | BPF_JGE | BPF_K, 0, 2, X32_SYSCALL_BIT);
		emit(&p, BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 0xffffffffu);
		emit(&p, BPF_RET | BPF_K, 0, 0, badarch_action);
	}
	/* the calls with argument rules or another action: each to its block */
	int specials[64];
	size_t dispatch[64], n_specials = 0;
	int max_allowed = -1;
	for (size_t i = 0; i < rules->count; i++) {
		int nr = rules->list[i].nr;
		if (!special(rules, nr)) {
			if (nr > max_allowed)
				max_allowed = nr;
			continue;
		}
		bool seen = false;
		for (size_t k = 0; k < n_specials; k++)
			seen |= specials[k] == nr;
		if (seen)
			continue;
		if (n_specials == N_ELEMS(specials))
			die("too many system calls with argument rules");
		emit(&p, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, (uint32_t)nr);
		dispatch[n_specials] = emit(&p, BPF_JMP | BPF_JA, 0, 0, 0);
		specials[n_specials++] = nr;
	}
	/* the unconditional allows: bit nr % 32 of word nr / 32 */
	uint32_t words = (uint32_t)(max_allowed / 32 + 1);
	emit(&p, BPF_JMP | BPF_JGE | BPF_K, 0, 1, 32 * words);
	emit(&p, BPF_RET | BPF_K, 0, 0, default_action);
	emit(&p, BPF_ALU | BPF_AND | BPF_K, 0, 0, 31);
	emit(&p, BPF_MISC | BPF_TAX, 0, 0, 0);
	emit(&p, BPF_LD | BPF_W | BPF_ABS, 0, 0, (uint32_t)offsetof(struct seccomp_data, nr));
	size_t to_tail[BPF_MAXINSNS / 32];
	for (uint32_t w = 0; w < words; w++) {
		uint32_t bits = 0;
		for (size_t i = 0; i < rules->count; i++) {
			int nr = rules->list[i].nr;
			if ((uint32_t)nr / 32 == w && !special(rules, nr))
				bits |= 1u << (nr % 32);
		}
		emit(&p, BPF_JMP | BPF_JGE | BPF_K, 2, 0, 32 * (w + 1));
		emit(&p, BPF_LD | BPF_IMM, 0, 0, bits);
		to_tail[w] = emit(&p, BPF_JMP | BPF_JA, 0, 0, 0);
	}
	for (uint32_t w = 0; w < words; w++)
		p.insns[to_tail[w]].k = (uint32_t)(p.len - to_tail[w] - 1);
	emit(&p, BPF_ALU | BPF_RSH | BPF_X, 0, 0, 0);
	emit(&p, BPF_ALU | BPF_AND | BPF_K, 0, 0, 1);
	emit(&p, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 1);
	emit(&p, BPF_RET | BPF_K, 0, 0, SCMP_ACT_ALLOW);
	emit(&p, BPF_RET | BPF_K, 0, 0, default_action);
	for (size_t k = 0; k < n_specials; k++) {
		p.insns[dispatch[k]].k = (uint32_t)(p.len - dispatch[k] - 1);
		emit_block(&p, rules, specials[k], default_action);
	}
	*out = malloc(p.len * sizeof(**out));
	if (!*out)
		die("out of memory");
	memcpy(*out, p.insns, p.len * sizeof(**out));
	return p.len;
}

/* What the kernel returns for a program that misbehaves here. */
#define BPF_RUN_INVALID 0xdead0000u

uint32_t bpf_run(const struct sock_filter *prog, size_t len, const struct seccomp_data *data)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };
	for (size_t pc = 0; pc < len; pc++) {
		const struct sock_filter *f = &prog[pc];
		uint32_t src = BPF_SRC(f->code) == BPF_X ? x : f->k;
		switch (f->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (f->k % 4 || f->k > sizeof(*data) - 4)
				return BPF_RUN_INVALID;
			memcpy(&a, (const char *)data + f->k, 4);
			break;
		case BPF_LD | BPF_IMM:
			a = f->k;
			break;
		case BPF_LDX | BPF_IMM:
			x = f->k;
			break;
		case BPF_LD | BPF_MEM:
		case BPF_LDX | BPF_MEM:
		case BPF_ST:
		case BPF_STX:
			if (f->k >= BPF_MEMWORDS)
				return BPF_RUN_INVALID;
			if (f->code == (BPF_LD | BPF_MEM))
				a = mem[f->k];
			else if (f->code == (BPF_LDX | BPF_MEM))
				x = mem[f->k];
			else
				mem[f->k] = f->code == BPF_ST ? a : x;
			break;
		case BPF_ALU | BPF_AND | BPF_K:
		case BPF_ALU | BPF_AND | BPF_X:
			a &= src;
			break;
		case BPF_ALU | BPF_OR | BPF_K:
		case BPF_ALU | BPF_OR | BPF_X:
			a |= src;
			break;
		case BPF_ALU | BPF_RSH | BPF_K:
		case BPF_ALU | BPF_RSH | BPF_X:
			if (src >= 32)
				return BPF_RUN_INVALID;
			a >>= src;
			break;
		case BPF_MISC | BPF_TAX:
			x = a;
			break;
		case BPF_MISC | BPF_TXA:
			a = x;
			break;
		case BPF_JMP | BPF_JA:
			pc += f->k;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
		case BPF_JMP | BPF_JEQ | BPF_X:
			pc += a == src ? f->jt : f->jf;
			break;
		case BPF_JMP | BPF_JGT | BPF_K:
		case BPF_JMP | BPF_JGT | BPF_X:
			pc += a > src ? f->jt : f->jf;
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
		case BPF_JMP | BPF_JGE | BPF_X:
			pc += a >= src ? f->jt : f->jf;
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
		case BPF_JMP | BPF_JSET | BPF_X:
			pc += (a & src) ? f->jt : f->jf;
			break;
		case BPF_RET | BPF_K:
			return f->k;
		case BPF_RET | BPF_A:
			return a;
		default:
			return BPF_RUN_INVALID;
		}
	}
	return BPF_RUN_INVALID; /* fell off the end */
}

static uint64_t next_random(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

static bool rule_matches(const struct compact_rule *r, const struct seccomp_data *d)
{
	if (!r->n_args)
		return true;
	uint64_t arg = d->args[r->arg.arg];
	if (!ARGS_64BIT)
		arg &= 0xffffffffULL;
	if (r->arg.op == SCMP_CMP_MASKED_EQ)
		return (arg & r->arg.datum_a) == r->arg.datum_b;
	return arg == r->arg.datum_a;
}

/* Whether a call has both a denial and an allow among its rules. */
static bool overlapping(const struct compact_rules *rules, int nr)
{
	bool deny = false, allow = false;
	for (size_t i = 0; i < rules->count; i++) {
		if (rules->list[i].nr != nr)
			continue;
		deny |= rules->list[i].action != SCMP_ACT_ALLOW;
		allow |= rules->list[i].action == SCMP_ACT_ALLOW;
	}
	return deny && allow;
}

/* The rules read as written: the first matching rule with another action
 * than allow wins, then a matching allow, then the default. */
static uint32_t policy_action(const struct compact_rules *rules, uint32_t arch, uint32_t default_action,
			      uint32_t badarch_action, const struct seccomp_data *d)
{
	if (d->arch != arch)
		return badarch_action;
	if (arch == SCMP_ARCH_X86_64 && (uint32_t)d->nr >= X32_SYSCALL_BIT && (uint32_t)d->nr != 0xffffffffu)
		return badarch_action;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < rules->count; i++) {
			const struct compact_rule *r = &rules->list[i];
			if (r->nr == d->nr && (r->action == SCMP_ACT_ALLOW) == (pass == 1) && rule_matches(r, d))
				return r->action;
		}
	return default_action;
}

struct verification {
	const struct compact_rules *rules;
	uint32_t arch, default_action, badarch_action;
	const struct sock_filter *reference, *compact;
	size_t reference_len, compact_len;
	char *why;
	size_t why_size;
};

static int check_call(const struct verification *v, const struct seccomp_data *d)
{
	uint32_t want = policy_action(v->rules, v->arch, v->default_action, v->badarch_action, d);
	uint32_t compact = bpf_run(v->compact, v->compact_len, d);
	uint32_t reference = bpf_run(v->reference, v->reference_len, d);
	/* libseccomp folds a call whose allow rule always matches into a plain
	 * allow, dropping its denials (ioctl's TIOCSTI): there the rules decide */
	bool reference_counts = !(d->arch == v->arch && overlapping(v->rules, d->nr));
	if (compact == want && (!reference_counts || reference == want))
		return 0;
	snprintf(v->why, v->why_size,
		 "arch 0x%08x nr %d args 0x%llx 0x%llx 0x%llx: the rules give 0x%08x, libseccomp's program 0x%08x, "
		 "the compact one 0x%08x",
		 d->arch, d->nr, (unsigned long long)d->args[0], (unsigned long long)d->args[1],
		 (unsigned long long)d->args[2], want, reference, compact);
	return -1;
}

int compact_verify(const struct compact_rules *rules, uint32_t arch, uint32_t default_action, uint32_t badarch_action,
		   const struct sock_filter *reference, size_t reference_len, const struct sock_filter *compact,
		   size_t compact_len, char *why, size_t why_size)
{
	const struct verification v = { rules,     arch,    default_action, badarch_action,
					reference, compact, reference_len,  compact_len,
					why,       why_size };
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	const uint32_t archs[] = { arch, arch ^ 1u, 0, SCMP_ARCH_X86, SCMP_ARCH_AARCH64 };
	static const uint32_t odd_numbers[] = { 0xffffffffu, 0xfffffffeu, 0x7fffffffu, 0x80000000u };
	struct seccomp_data d;
	/* every number, with no arguments and with random ones */
	for (size_t ai = 0; ai < N_ELEMS(archs); ai++) {
		for (uint32_t n = 0; n < 4096 + 1024 + N_ELEMS(odd_numbers); n++) {
			uint32_t nr = n < 4096          ? n
				      : n < 4096 + 1024 ? X32_SYSCALL_BIT + (n - 4096)
							: odd_numbers[n - 5120];
			for (int round = 0; round < 2; round++) {
				memset(&d, 0, sizeof(d));
				d.arch = archs[ai];
				d.nr = (int)nr;
				for (int i = 0; round && i < 6; i++)
					d.args[i] = next_random(&seed);
				if (check_call(&v, &d))
					return -1;
			}
		}
	}
	/* each argument rule with the values it compares against, their
	 * neighbours and other high halves, in random surroundings */
	for (size_t i = 0; i < rules->count; i++) {
		const struct compact_rule *r = &rules->list[i];
		if (!r->n_args)
			continue;
		uint64_t val = r->arg.op == SCMP_CMP_MASKED_EQ ? r->arg.datum_b : r->arg.datum_a;
		uint64_t m = r->arg.op == SCMP_CMP_MASKED_EQ ? r->arg.datum_a : ~0ULL;
		const uint64_t values[] = {
			val,
			val ^ 1,
			val + 1,
			val - 1,
			val | 0xffffffff00000000ULL,
			val & 0xffffffffULL,
			val ^ 0x100000000ULL,
			~val,
			0,
			~0ULL,
			m,
			~m,
			val | ~m,
			(val & m) | (~m & 0x5555555555555555ULL),
			val ^ (m & (0 - m)),
		};
		for (size_t k = 0; k < N_ELEMS(values); k++) {
			for (int round = 0; round < 16; round++) {
				memset(&d, 0, sizeof(d));
				d.arch = arch;
				d.nr = r->nr;
				for (int j = 0; round && j < 6; j++)
					d.args[j] = next_random(&seed);
				d.args[r->arg.arg] = values[k];
				if (check_call(&v, &d))
					return -1;
			}
		}
	}
	return 0;
}
