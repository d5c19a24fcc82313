/* The system group's facts: the seccomp state (system.seccomp), the
 * effective capabilities (system.capabilities), the container signs
 * (system.container) and how much of the kernel log was read
 * (system.kernel_log). One encoder per check (the check writes its details
 * with it) and one decoder per check own the details keys;
 * checks/report.schema.json describes them ($defs.details, "system.*"). */
#ifndef GPUGATE_FACTS_SYSTEM_H
#define GPUGATE_FACTS_SYSTEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* system.seccomp: /proc/self/status's Seccomp and Seccomp_filters */
struct system_seccomp_fact {
	long long mode; /* 0 off, 1 strict, 2 filter */
	long long filters;
	long long sandbox_filters; /* of them, gpugate's own sandbox */
};

/* system.capabilities: CapEff, written as hex as /proc/self/status has it */
struct system_caps_fact {
	uint64_t cap_eff;
};

/* system.container */
struct system_container_fact {
	bool container;
	const char *engine; /* docker, podman, kubernetes, ...; NULL: none named */
};

/* system.kernel_log */
struct system_kernel_log_fact {
	uint64_t lines_read;
	bool stopped_early;  /* the deadline or the size cap stopped the scan */
	uint64_t gpu_errors; /* lines that show a sick GPU, all of them (the findings list the first few) */
};

/* What a report says of the group; each has_ bit says its check wrote
 * details (decoded), the fields are zero otherwise. */
struct system_facts {
	bool has_seccomp, has_caps, has_container, has_kernel_log;
	struct system_seccomp_fact seccomp;
	struct system_caps_fact caps;
	struct system_container_fact container;
	struct system_kernel_log_fact kernel_log;
};

void system_seccomp_encode(json_t *details, const struct system_seccomp_fact *f);
void system_caps_encode(json_t *details, const struct system_caps_fact *f);
void system_container_encode(json_t *details, const struct system_container_fact *f);
void system_kernel_log_encode(json_t *details, const struct system_kernel_log_fact *f);

/* Decoders: each reads its check's details (NULL or empty: none, its has_
 * bit stays false) into f; strings point into details. 0, or -1 with the
 * reason (check and key) in err when a key has the wrong type or CapEff is
 * not hex; a missing key reads as 0, false or NULL. */
int system_seccomp_decode(const json_t *details, struct system_facts *f, char *err, size_t errsz);
int system_caps_decode(const json_t *details, struct system_facts *f, char *err, size_t errsz);
int system_container_decode(const json_t *details, struct system_facts *f, char *err, size_t errsz);
int system_kernel_log_decode(const json_t *details, struct system_facts *f, char *err, size_t errsz);

/* The name of capability bit n as linux/capability.h spells it
 * ("CAP_SYS_ADMIN"), or NULL for a bit the kernel headers do not name. */
const char *system_cap_name(unsigned n);

#endif
