/* The system group's judging (src/checks/judge_system.h) on hand-built
 * /proc/self/status values and container signs, no fixture root: each
 * seccomp mode, gpugate's own sandbox filters left out at their boundary,
 * each GPU capability missing under a filter and without one, and which
 * container engine a set of signs names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "checks/judge_system.h"

#define CAP(n) (1ULL << (n))
enum { SYS_PTRACE = 19, SYS_ADMIN = 21, SYS_NICE = 23, PERFMON = 38 };
static const unsigned long long ALL_GPU_CAPS = CAP(SYS_PTRACE) | CAP(SYS_NICE) | CAP(PERFMON);

struct verdict {
	enum status status;
	char summary[512];
	size_t findings;
	bool remedy;
	char engine[64]; /* details.engine, "" when absent */
	bool container;  /* details.container */
};

static struct verdict take(struct result *r)
{
	struct verdict v = { .status = r->status, .remedy = r->remediation != NULL };
	snprintf(v.summary, sizeof(v.summary), "%s", r->summary ? r->summary : "");
	v.findings = r->findings ? json_array_size(r->findings) : 0;
	json_t *e = r->details ? json_object_get(r->details, "engine") : NULL;
	snprintf(v.engine, sizeof(v.engine), "%s", e ? json_string_value(e) : "");
	v.container = r->details && json_is_true(json_object_get(r->details, "container"));
	result_release(r);
	return v;
}

static struct verdict seccomp(int mode, long filters)
{
	struct proc_status ps = { .have_seccomp = true, .seccomp = mode, .seccomp_filters = filters };
	struct result r = { .id = "system.seccomp" };
	system_judge_seccomp(&ps, "/proc/self/status", 0, &r);
	return take(&r);
}

static struct verdict caps(unsigned long long eff, bool have_seccomp, int mode)
{
	struct proc_status ps = { .have_seccomp = have_seccomp, .have_caps = true, .seccomp = mode, .cap_eff = eff };
	struct result r = { .id = "system.capabilities" };
	system_judge_capabilities(&ps, &r);
	return take(&r);
}

static void seccomp_modes(void **state)
{
	(void)state;
	assert_int_equal(seccomp(0, 0).status, STATUS_PASS);
	struct verdict v = seccomp(2, 1);
	assert_int_equal(v.status, STATUS_PASS);
	assert_non_null(strstr(v.summary, "(1 filter)"));
	assert_non_null(strstr(seccomp(2, 2).summary, "(2 filters)"));
	v = seccomp(1, -1); /* strict: no GPU work can run */
	assert_int_equal(v.status, STATUS_WARN);
	assert_true(v.remedy);
	v = seccomp(3, -1);
	assert_int_equal(v.status, STATUS_WARN);
	assert_non_null(strstr(v.summary, "unknown seccomp mode 3"));
	assert_int_equal(seccomp(-1, -1).status, STATUS_WARN);
}

static void sandbox_filters_left_out(void **state)
{
	(void)state;
	/* exactly gpugate's own filters: no container filter at all */
	struct proc_status ps = { .have_seccomp = true, .seccomp = 2, .seccomp_filters = 2 };
	system_discount_sandbox(&ps, 2);
	assert_int_equal(ps.seccomp, 0);
	assert_int_equal(ps.seccomp_filters, 0);
	/* one more than ours: the container's */
	ps = (struct proc_status){ .have_seccomp = true, .seccomp = 2, .seccomp_filters = 3 };
	system_discount_sandbox(&ps, 2);
	assert_int_equal(ps.seccomp, 2);
	assert_int_equal(ps.seccomp_filters, 1);
	/* no sandbox (--no-sandbox): untouched */
	ps = (struct proc_status){ .have_seccomp = true, .seccomp = 2, .seccomp_filters = 1 };
	system_discount_sandbox(&ps, 0);
	assert_int_equal(ps.seccomp, 2);
	assert_int_equal(ps.seccomp_filters, 1);
	/* a kernel that does not count filters: nothing to subtract from */
	ps = (struct proc_status){ .have_seccomp = true, .seccomp = 2, .seccomp_filters = -1 };
	system_discount_sandbox(&ps, 1);
	assert_int_equal(ps.seccomp, 2);
	assert_int_equal(ps.seccomp_filters, -1);
	/* strict mode is never ours */
	ps = (struct proc_status){ .have_seccomp = true, .seccomp = 1, .seccomp_filters = 0 };
	system_discount_sandbox(&ps, 1);
	assert_int_equal(ps.seccomp, 1);
}

static void capabilities_under_a_filter_or_not(void **state)
{
	(void)state;
	struct verdict v = caps(ALL_GPU_CAPS, true, 2);
	assert_int_equal(v.status, STATUS_PASS);
	assert_int_equal(v.findings, 0);
	/* each one missing alone under a filter: a warning naming it */
	static const struct {
		int bit;
		const char *name;
	} one[] = { { SYS_NICE, "SYS_NICE" }, { SYS_PTRACE, "SYS_PTRACE" }, { PERFMON, "PERFMON" } };
	for (size_t i = 0; i < sizeof(one) / sizeof(one[0]); i++) {
		v = caps(ALL_GPU_CAPS & ~CAP(one[i].bit), true, 2);
		assert_int_equal(v.status, STATUS_WARN);
		assert_int_equal(v.findings, 1);
		assert_true(v.remedy);
		assert_non_null(strstr(v.summary, one[i].name));
		/* no filter: the kernel's own rules, a pass */
		v = caps(ALL_GPU_CAPS & ~CAP(one[i].bit), true, 0);
		assert_int_equal(v.status, STATUS_PASS);
		assert_int_equal(v.findings, 1);
		assert_false(v.remedy);
	}
	/* CAP_SYS_ADMIN grants what CAP_PERFMON does (kernels before 5.8) */
	v = caps(CAP(SYS_NICE) | CAP(SYS_PTRACE) | CAP(SYS_ADMIN), true, 2);
	assert_int_equal(v.status, STATUS_PASS);
	assert_int_equal(v.findings, 0);
	/* strict mode is not the filter that blocks these calls; nor is a kernel without seccomp */
	assert_int_equal(caps(0, true, 1).status, STATUS_PASS);
	assert_int_equal(caps(0, false, 2).status, STATUS_PASS);
	v = caps(0, true, 2);
	assert_int_equal(v.status, STATUS_WARN);
	assert_int_equal(v.findings, 3);
	assert_non_null(strstr(v.summary, "SYS_NICE, SYS_PTRACE, PERFMON"));
}

static struct verdict container(struct container_signs s)
{
	struct result r = { .id = "system.container" };
	system_judge_container(&s, &r);
	return take(&r);
}

static void container_engines(void **state)
{
	(void)state;
	const char *cg = "/proc/1/cgroup";
	struct verdict v = container((struct container_signs){ .cgroup = cg, .cgroup_text = "0::/init.scope\n" });
	assert_int_equal(v.status, STATUS_PASS);
	assert_false(v.container);
	assert_string_equal(v.engine, "");
	/* unread cgroup, empty $container: no sign */
	v = container((struct container_signs){ .env = "", .cgroup = cg });
	assert_false(v.container);

	v = container((struct container_signs){ .dockerenv = "/.dockerenv", .cgroup = cg });
	assert_true(v.container);
	assert_string_equal(v.engine, "docker");
	/* the first mark names the engine */
	v = container((struct container_signs){ .dockerenv = "/.dockerenv", .containerenv = "/run/.containerenv" });
	assert_string_equal(v.engine, "docker");
	v = container((struct container_signs){ .containerenv = "/run/.containerenv", .env = "oci" });
	assert_string_equal(v.engine, "podman");
	v = container((struct container_signs){ .env = "systemd-nspawn" });
	assert_string_equal(v.engine, "systemd-nspawn");
	/* Kubernetes names the engine over every other sign */
	v = container((struct container_signs){ .dockerenv = "/.dockerenv", .kubernetes = true });
	assert_string_equal(v.engine, "kubernetes");
	/* the cgroup's first word in the list, only when nothing else said */
	v = container((struct container_signs){ .cgroup = cg, .cgroup_text = "0::/system.slice/docker-ab.scope\n" });
	assert_string_equal(v.engine, "docker");
	assert_non_null(strstr(v.summary, "/proc/1/cgroup names docker"));
	v = container(
		(struct container_signs){ .cgroup = cg, .cgroup_text = "0::/kubepods/burstable/pod1/docker-ab\n" });
	assert_string_equal(v.engine, "kubepods");
	v = container((struct container_signs){ .env = "podman", .cgroup = cg, .cgroup_text = "0::/lxc/x\n" });
	assert_string_equal(v.engine, "podman");
	assert_non_null(strstr(v.summary, "names lxc"));
}

/* A capability the filter blocks is a warned finding (its own status, which
 * gpugate diff and the findings list show), not only a warned summary. */
static void blocked_capability_finding_warns(void **state)
{
	(void)state;
	struct proc_status ps = {
		.have_seccomp = true, .have_caps = true, .seccomp = 2, .cap_eff = ALL_GPU_CAPS & ~CAP(SYS_NICE)
	};
	struct result r = { .id = "system.capabilities" };
	system_judge_capabilities(&ps, &r);
	json_t *f = json_array_get(r.findings, 0);
	assert_string_equal(json_string_value(json_object_get(f, "code")), "system.capabilities.blocked");
	assert_string_equal(json_string_value(json_object_get(f, "status")), "warn");
	result_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(seccomp_modes),
		cmocka_unit_test(sandbox_filters_left_out),
		cmocka_unit_test(capabilities_under_a_filter_or_not),
		cmocka_unit_test(blocked_capability_finding_warns),
		cmocka_unit_test(container_engines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
