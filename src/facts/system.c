#include "facts/system.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/capability.h>

#include "../result.h"
#include "facts/decode.h"

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

void system_seccomp_encode(json_t *d, const struct system_seccomp_fact *f)
{
	json_object_set_new(d, K_MODE, json_integer((json_int_t)f->mode));
	json_object_set_new(d, K_FILTERS, json_integer((json_int_t)f->filters));
	json_object_set_new(d, K_SANDBOX_FILTERS, json_integer((json_int_t)f->sandbox_filters));
}

void system_caps_encode(json_t *d, const struct system_caps_fact *f)
{
	char hex[32];
	snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)f->cap_eff);
	json_object_set_new(d, K_CAP_EFF, json_string(hex));
}

void system_container_encode(json_t *d, const struct system_container_fact *f)
{
	json_object_set_new(d, K_CONTAINER, json_boolean(f->container));
	if (f->engine)
		json_object_set_new(d, K_ENGINE, json_text(f->engine));
}

void system_kernel_log_encode(json_t *d, const struct system_kernel_log_fact *f)
{
	json_object_set_new(d, K_LINES_READ, json_integer((json_int_t)f->lines_read));
	json_object_set_new(d, K_STOPPED_EARLY, json_boolean(f->stopped_early));
	json_object_set_new(d, K_GPU_ERRORS, json_integer((json_int_t)f->gpu_errors));
}

int system_seccomp_decode(const json_t *d, struct system_facts *f, char *err, size_t errsz)
{
	static const char check[] = "system.seccomp";
	struct system_seccomp_fact *s = &f->seccomp;
	*s = (struct system_seccomp_fact){ 0 };
	if (facts_details(d, check, &f->has_seccomp, err, errsz) < 0)
		return -1;
	if (!f->has_seccomp)
		return 0;
	if (facts_int(d, check, K_MODE, &s->mode, err, errsz) < 0 ||
	    facts_int(d, check, K_FILTERS, &s->filters, err, errsz) < 0 ||
	    facts_int(d, check, K_SANDBOX_FILTERS, &s->sandbox_filters, err, errsz) < 0) {
		f->has_seccomp = false;
		*s = (struct system_seccomp_fact){ 0 };
		return -1;
	}
	return 0;
}

int system_caps_decode(const json_t *d, struct system_facts *f, char *err, size_t errsz)
{
	static const char check[] = "system.capabilities";
	f->caps = (struct system_caps_fact){ 0 };
	if (facts_details(d, check, &f->has_caps, err, errsz) < 0)
		return -1;
	if (!f->has_caps)
		return 0;
	const char *hex;
	if (facts_str(d, check, K_CAP_EFF, &hex, err, errsz) < 0)
		goto fail;
	if (hex) {
		/* 1 to 16 hex digits and nothing else, as the kernel writes it */
		size_t n = strspn(hex, "0123456789abcdefABCDEF");
		if (n == 0 || n > 16 || hex[n]) {
			snprintf(err, errsz, "%s: \"%s\" is not a hex capability set: '%.40s'", check, K_CAP_EFF, hex);
			goto fail;
		}
		f->caps.cap_eff = strtoull(hex, NULL, 16);
	}
	return 0;
fail:
	f->has_caps = false;
	return -1;
}

int system_container_decode(const json_t *d, struct system_facts *f, char *err, size_t errsz)
{
	static const char check[] = "system.container";
	struct system_container_fact *c = &f->container;
	*c = (struct system_container_fact){ 0 };
	if (facts_details(d, check, &f->has_container, err, errsz) < 0)
		return -1;
	if (!f->has_container)
		return 0;
	if (facts_bool(d, check, K_CONTAINER, &c->container, err, errsz) < 0 ||
	    facts_str(d, check, K_ENGINE, &c->engine, err, errsz) < 0) {
		f->has_container = false;
		*c = (struct system_container_fact){ 0 };
		return -1;
	}
	return 0;
}

int system_kernel_log_decode(const json_t *d, struct system_facts *f, char *err, size_t errsz)
{
	static const char check[] = "system.kernel_log";
	struct system_kernel_log_fact *k = &f->kernel_log;
	*k = (struct system_kernel_log_fact){ 0 };
	if (facts_details(d, check, &f->has_kernel_log, err, errsz) < 0)
		return -1;
	if (!f->has_kernel_log)
		return 0;
	if (facts_count(d, check, K_LINES_READ, &k->lines_read, err, errsz) < 0 ||
	    facts_bool(d, check, K_STOPPED_EARLY, &k->stopped_early, err, errsz) < 0 ||
	    facts_count(d, check, K_GPU_ERRORS, &k->gpu_errors, err, errsz) < 0) {
		f->has_kernel_log = false;
		*k = (struct system_kernel_log_fact){ 0 };
		return -1;
	}
	return 0;
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
