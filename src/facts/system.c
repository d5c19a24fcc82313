#include "facts/system.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/capability.h>

#include "../result.h"
#include "facts/decode.h"
#include "facts/fields.h"

/* the details keys of system.seccomp, .capabilities, .container and
 * .kernel_log: written and read only here */
#define K_MODE            "mode"
#define K_FILTERS         "filters"
#define K_SANDBOX_FILTERS "gpugate_sandbox_filters"
#define K_CAP_EFF         "CapEff"
#define K_CONTAINER       "container"
#define K_ENGINE          "engine"
#define K_LINES_READ      "lines_read"
#define K_STOPPED_EARLY   "stopped_early"
#define K_GPU_ERRORS      "gpu_errors"

/* CapEff is written as /proc/self/status has it, 16 hex digits, not as a
 * number: a rule of its own, so a hook rather than a kind */
static void cap_eff_encode(json_t *o, const char *key, const void *member)
{
	char hex[32];
	snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)*(const uint64_t *)member);
	json_object_set_new(o, key, json_string(hex));
}

static int cap_eff_decode(const json_t *o, const char *check, const char *key, void *member, char *err, size_t errsz)
{
	const char *hex;
	if (facts_str(o, check, key, &hex, err, errsz) < 0)
		return -1;
	*(uint64_t *)member = 0;
	if (!hex)
		return 0;
	/* 1 to 16 hex digits and nothing else, as the kernel writes it */
	size_t n = strspn(hex, "0123456789abcdefABCDEF");
	if (n == 0 || n > 16 || hex[n]) {
		snprintf(err, errsz, "%s: \"%s\" is not a hex capability set: '%.40s'", check, key, hex);
		return -1;
	}
	*(uint64_t *)member = strtoull(hex, NULL, 16);
	return 0;
}

/* each check's fields, in the order the details list them */
static const struct fact_field seccomp_fields[] = {
	{ K_MODE, FACT_INT, FACT_MEMBER(struct system_seccomp_fact, mode) },
	{ K_FILTERS, FACT_INT, FACT_MEMBER(struct system_seccomp_fact, filters) },
	{ K_SANDBOX_FILTERS, FACT_INT, FACT_MEMBER(struct system_seccomp_fact, sandbox_filters) },
};
FACT_TABLE(seccomp_table, struct system_seccomp_fact, NULL, seccomp_fields);

static const struct fact_field caps_fields[] = {
	{ K_CAP_EFF, FACT_CUSTOM, FACT_MEMBER(struct system_caps_fact, cap_eff), .encode = cap_eff_encode,
	  .decode = cap_eff_decode },
};
FACT_TABLE(caps_table, struct system_caps_fact, NULL, caps_fields);

static const struct fact_field container_fields[] = {
	{ K_CONTAINER, FACT_BOOL, FACT_MEMBER(struct system_container_fact, container) },
	{ K_ENGINE, FACT_TEXT, FACT_MEMBER(struct system_container_fact, engine), .flags = FACT_OMIT_NULL },
};
FACT_TABLE(container_table, struct system_container_fact, NULL, container_fields);

static const struct fact_field kernel_log_fields[] = {
	{ K_LINES_READ, FACT_COUNT, FACT_MEMBER(struct system_kernel_log_fact, lines_read) },
	{ K_STOPPED_EARLY, FACT_BOOL, FACT_MEMBER(struct system_kernel_log_fact, stopped_early) },
	{ K_GPU_ERRORS, FACT_COUNT, FACT_MEMBER(struct system_kernel_log_fact, gpu_errors) },
};
FACT_TABLE(kernel_log_table, struct system_kernel_log_fact, NULL, kernel_log_fields);

void system_seccomp_encode(json_t *d, const struct system_seccomp_fact *f)
{
	facts_encode(d, &seccomp_table, f);
}

void system_caps_encode(json_t *d, const struct system_caps_fact *f)
{
	facts_encode(d, &caps_table, f);
}

void system_container_encode(json_t *d, const struct system_container_fact *f)
{
	facts_encode(d, &container_table, f);
}

void system_kernel_log_encode(json_t *d, const struct system_kernel_log_fact *f)
{
	facts_encode(d, &kernel_log_table, f);
}

int system_seccomp_decode(const json_t *d, struct system_facts *f, char *err, size_t errsz)
{
	return facts_decode(d, &seccomp_table, &f->seccomp, "system.seccomp", &f->has_seccomp, err, errsz);
}

int system_caps_decode(const json_t *d, struct system_facts *f, char *err, size_t errsz)
{
	return facts_decode(d, &caps_table, &f->caps, "system.capabilities", &f->has_caps, err, errsz);
}

int system_container_decode(const json_t *d, struct system_facts *f, char *err, size_t errsz)
{
	return facts_decode(d, &container_table, &f->container, "system.container", &f->has_container, err, errsz);
}

int system_kernel_log_decode(const json_t *d, struct system_facts *f, char *err, size_t errsz)
{
	return facts_decode(d, &kernel_log_table, &f->kernel_log, "system.kernel_log", &f->has_kernel_log, err, errsz);
}

/* the kernel's own names and numbers (include/uapi/linux/capability.h) */
#define CAP_NAME(c) [c] = #c
static const char *const cap_names[] = {
	CAP_NAME(CAP_CHOWN),
	CAP_NAME(CAP_DAC_OVERRIDE),
	CAP_NAME(CAP_DAC_READ_SEARCH),
	CAP_NAME(CAP_FOWNER),
	CAP_NAME(CAP_FSETID),
	CAP_NAME(CAP_KILL),
	CAP_NAME(CAP_SETGID),
	CAP_NAME(CAP_SETUID),
	CAP_NAME(CAP_SETPCAP),
	CAP_NAME(CAP_LINUX_IMMUTABLE),
	CAP_NAME(CAP_NET_BIND_SERVICE),
	CAP_NAME(CAP_NET_BROADCAST),
	CAP_NAME(CAP_NET_ADMIN),
	CAP_NAME(CAP_NET_RAW),
	CAP_NAME(CAP_IPC_LOCK),
	CAP_NAME(CAP_IPC_OWNER),
	CAP_NAME(CAP_SYS_MODULE),
	CAP_NAME(CAP_SYS_RAWIO),
	CAP_NAME(CAP_SYS_CHROOT),
	CAP_NAME(CAP_SYS_PTRACE),
	CAP_NAME(CAP_SYS_PACCT),
	CAP_NAME(CAP_SYS_ADMIN),
	CAP_NAME(CAP_SYS_BOOT),
	CAP_NAME(CAP_SYS_NICE),
	CAP_NAME(CAP_SYS_RESOURCE),
	CAP_NAME(CAP_SYS_TIME),
	CAP_NAME(CAP_SYS_TTY_CONFIG),
	CAP_NAME(CAP_MKNOD),
	CAP_NAME(CAP_LEASE),
	CAP_NAME(CAP_AUDIT_WRITE),
	CAP_NAME(CAP_AUDIT_CONTROL),
	CAP_NAME(CAP_SETFCAP),
	CAP_NAME(CAP_MAC_OVERRIDE),
	CAP_NAME(CAP_MAC_ADMIN),
	CAP_NAME(CAP_SYSLOG),
	CAP_NAME(CAP_WAKE_ALARM),
	CAP_NAME(CAP_BLOCK_SUSPEND),
	CAP_NAME(CAP_AUDIT_READ),
	CAP_NAME(CAP_PERFMON),
	CAP_NAME(CAP_BPF),
	CAP_NAME(CAP_CHECKPOINT_RESTORE),
};

const char *system_cap_name(unsigned n)
{
	return n < sizeof(cap_names) / sizeof(cap_names[0]) ? cap_names[n] : NULL;
}
