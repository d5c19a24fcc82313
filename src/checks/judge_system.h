/* The system group's judging, apart from reading /proc and the root: the
 * seccomp mode, the effective capabilities and the container signs, judged
 * from parsed values. Internal to src/checks/system.c; exposed so
 * tests/unit/test_judge_system.c can judge hand-built values. */
#ifndef GPUGATE_JUDGE_SYSTEM_H
#define GPUGATE_JUDGE_SYSTEM_H

#include <stdbool.h>

#include "../result.h"

/* What /proc/self/status says. */
struct proc_status {
	bool have_seccomp, have_caps;
	int seccomp;          /* 0 off, 1 strict, 2 filter */
	long seccomp_filters; /* -1 when the kernel does not report it */
	unsigned long long cap_eff;
};

/* Leaves gpugate's own sandbox_filters (src/lib/sandbox.h) out of this
 * process's status: they are not the container's filter. */
void system_discount_sandbox(struct proc_status *ps, int sandbox_filters);
/* system.seccomp from a status that has the Seccomp field. */
void system_judge_seccomp(const struct proc_status *ps, const char *path, int sandbox_filters, struct result *r);
/* system.capabilities from a status that has the CapEff field. */
void system_judge_capabilities(const struct proc_status *ps, struct result *r);

/* The signs of a container, as found under the root. */
struct container_signs {
	const char *dockerenv;    /* the path of /.dockerenv when it exists, else NULL */
	const char *containerenv; /* the path of /run/.containerenv when it exists, else NULL */
	/* where each was looked for (under --root), named when neither is
	 * there; NULL: the plain path */
	const char *dockerenv_at, *containerenv_at;
	const char *env;         /* $container, NULL when unset */
	bool kubernetes;         /* KUBERNETES_SERVICE_HOST is set */
	const char *cgroup;      /* the path of /proc/1/cgroup */
	const char *cgroup_text; /* its text, NULL when it could not be read */
};
/* system.container: always a pass; says whether and which. */
void system_judge_container(const struct container_signs *s, struct result *r);

#endif
