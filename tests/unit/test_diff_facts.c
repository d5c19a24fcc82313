/* gpugate diff's comparison of the hf and system facts
 * (src/operator/diff.c: diff_hf_facts, diff_system_facts) on hand-built
 * facts: each change is named by its stable key with the right direction,
 * equal facts and facts only one report has give nothing, and the
 * boundaries hold (free space equal to min_free is enough, one more GPU
 * error line is worse, capability bits named as linux/capability.h names
 * them). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "facts/system.h"
#include "operator/diff.h"

#define GIB (1024ULL * 1024 * 1024)

/* The entry of that fact, or NULL. */
static const struct diff_fact *find(const struct diff_facts *l, const char *fact)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->f[i].fact, fact) == 0)
			return &l->f[i];
	return NULL;
}

static void assert_fact(const struct diff_facts *l, const char *fact, const char *old, const char *new,
			const char *change)
{
	const struct diff_fact *f = find(l, fact);
	if (!f)
		fail_msg("no %s among %zu facts", fact, l->n);
	assert_string_equal(f->old, old);
	assert_string_equal(f->new, new);
	assert_string_equal(f->change, change);
}

static struct hf_cache_facts hf_base(void)
{
	return (struct hf_cache_facts){
		.has_location = true,
		.has_mount = true,
		.has_space = true,
		.has_layout = true,
		.has_integrity = true,
		.location = { .hub_cache = "/models/hub",
			      .from = "HF_HUB_CACHE",
			      .hf_home = "/models",
			      .token = "none" },
		.mount = { "/models", "ext4", "/dev/sdb1", "rw" },
		.space = { 20 * GIB, 10 * GIB },
		.layout = { .revisions = 3, .revisions_without_listing = 0, .repos = 2, .size_on_disk = 5 * GIB },
		.integrity = { .files = 7, .matching = 7, .scope = "models" },
	};
}

static void hf_same_facts_give_nothing(void **state)
{
	(void)state;
	struct hf_cache_facts a = hf_base(), b = hf_base();
	struct diff_facts d = { 0 };
	diff_hf_facts(&d, &a, &b);
	assert_int_equal(d.n, 0);
	/* free space that moves without crossing min_free is no change */
	b.space.free_bytes = 11 * GIB;
	diff_hf_facts(&d, &a, &b);
	assert_int_equal(d.n, 0);
	/* a check only one report has is compared by neither (the checks list tells it) */
	b = (struct hf_cache_facts){ 0 };
	diff_hf_facts(&d, &a, &b);
	diff_hf_facts(&d, &b, &a);
	assert_int_equal(d.n, 0);
	diff_facts_release(&d);
}

static void hf_each_change_named(void **state)
{
	(void)state;
	struct hf_cache_facts a = hf_base(), b = hf_base();
	b.location.hub_cache = "/root/.cache/huggingface/hub";
	b.location.offline = true;
	b.location.token = "HF_TOKEN";
	b.mount = (struct hf_mount_fact){ "/", "overlay", "overlay", "rw" };
	b.space.free_bytes = 3 * GIB;
	b.layout.repos = 1;
	b.layout.revisions = 1;
	b.layout.revisions_without_listing = 1;
	b.integrity.files = 8;
	b.integrity.matching = 5;
	b.integrity.unverified = 1;
	struct diff_facts d = { 0 };
	diff_hf_facts(&d, &a, &b);
	assert_fact(&d, "hf.location.hub_cache", "/models/hub", "/root/.cache/huggingface/hub", "changed");
	assert_fact(&d, "hf.location.offline", "false", "true", "changed");
	assert_fact(&d, "hf.location.token", "none", "HF_TOKEN", "changed");
	assert_fact(&d, "hf.mounted.own_mount", "true", "false", "worse");
	assert_fact(&d, "hf.mounted.mount_point", "/models", "/", "changed");
	assert_fact(&d, "hf.mounted.fstype", "ext4", "overlay", "changed");
	assert_fact(&d, "hf.space.below_min_free", "20.0 GiB free, min 10.0 GiB", "3.0 GiB free, min 10.0 GiB",
		    "worse");
	assert_fact(&d, "hf.layout.repos", "2", "1", "changed");
	assert_fact(&d, "hf.layout.revisions", "3", "1", "changed");
	assert_fact(&d, "hf.layout.revisions_without_listing", "0", "1", "worse");
	assert_fact(&d, "hf.integrity.files", "7", "8", "changed");
	assert_fact(&d, "hf.integrity.matching", "7", "5", "changed");
	assert_fact(&d, "hf.integrity.unverified", "0", "1", "worse");
	assert_fact(&d, "hf.integrity.not_matching", "0", "2", "worse");
	assert_null(find(&d, "hf.layout.size_on_disk"));
	assert_null(find(&d, "hf.integrity.scope"));
	diff_facts_release(&d);
	/* the way back: better */
	diff_hf_facts(&d, &b, &a);
	assert_fact(&d, "hf.mounted.own_mount", "false", "true", "better");
	assert_fact(&d, "hf.space.below_min_free", "3.0 GiB free, min 10.0 GiB", "20.0 GiB free, min 10.0 GiB",
		    "better");
	assert_fact(&d, "hf.integrity.not_matching", "2", "0", "better");
	diff_facts_release(&d);
}

static void hf_min_free_boundary(void **state)
{
	(void)state;
	struct hf_cache_facts a = hf_base(), b = hf_base();
	struct diff_facts d = { 0 };
	/* exactly min_free is enough (hf.space: avail >= need) */
	b.space.free_bytes = b.space.min_free_bytes;
	diff_hf_facts(&d, &a, &b);
	assert_int_equal(d.n, 0);
	b.space.free_bytes = b.space.min_free_bytes - 1;
	diff_hf_facts(&d, &a, &b);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.f[0].fact, "hf.space.below_min_free");
	assert_string_equal(d.f[0].change, "worse");
	diff_facts_release(&d);
	/* a raised min_free crosses too, with the same free space */
	b = hf_base();
	b.space.min_free_bytes = 21 * GIB;
	diff_hf_facts(&d, &a, &b);
	assert_fact(&d, "hf.space.below_min_free", "20.0 GiB free, min 10.0 GiB", "20.0 GiB free, min 21.0 GiB",
		    "worse");
	diff_facts_release(&d);
}

static struct system_facts system_base(void)
{
	return (struct system_facts){
		.has_seccomp = true,
		.has_caps = true,
		.has_container = true,
		.has_kernel_log = true,
		.seccomp = { 2, 2, 1 },
		.caps = { 0x00000000a80425fbULL }, /* docker's default set */
		.container = { true, "docker" },
		.kernel_log = { 1000, false, 0 },
	};
}

static void system_same_facts_give_nothing(void **state)
{
	(void)state;
	struct system_facts a = system_base(), b = system_base();
	struct diff_facts d = { 0 };
	diff_system_facts(&d, &a, &b);
	assert_int_equal(d.n, 0);
	/* more lines read, or gpugate's own sandbox filter counted, is no change */
	b.kernel_log.lines_read = 5000;
	b.seccomp = (struct system_seccomp_fact){ 2, 3, 2 };
	diff_system_facts(&d, &a, &b);
	assert_int_equal(d.n, 0);
	b = (struct system_facts){ 0 };
	diff_system_facts(&d, &a, &b);
	diff_system_facts(&d, &b, &a);
	assert_int_equal(d.n, 0);
	diff_facts_release(&d);
}

static void system_each_change_named(void **state)
{
	(void)state;
	struct system_facts a = system_base(), b = system_base();
	b.seccomp = (struct system_seccomp_fact){ 0, 0, 0 };
	/* SYS_ADMIN (21) and SYS_NICE (23) gained, CHOWN (0) lost, and a bit no header names */
	b.caps.cap_eff = (a.caps.cap_eff & ~1ULL) | (1ULL << 21) | (1ULL << 23) | (1ULL << 63);
	b.container.engine = "kubernetes";
	b.kernel_log.gpu_errors = 1; /* one line is enough */
	struct diff_facts d = { 0 };
	diff_system_facts(&d, &a, &b);
	assert_fact(&d, "system.seccomp.mode", "filter", "off", "changed");
	assert_fact(&d, "system.seccomp.filters", "1", "0", "changed");
	assert_fact(&d, "system.capabilities.CAP_SYS_ADMIN", "not effective", "effective", "gained");
	assert_fact(&d, "system.capabilities.CAP_SYS_NICE", "not effective", "effective", "gained");
	assert_fact(&d, "system.capabilities.CAP_CHOWN", "effective", "not effective", "lost");
	assert_fact(&d, "system.capabilities.bit63", "not effective", "effective", "gained");
	assert_fact(&d, "system.container.engine", "docker", "kubernetes", "changed");
	assert_fact(&d, "system.kernel_log.gpu_errors", "0", "1", "worse");
	assert_int_equal(d.n, 8);
	diff_facts_release(&d);
	/* no engine named reads as none; fewer GPU errors is better */
	a.container.engine = NULL;
	a.kernel_log.gpu_errors = 2;
	a.seccomp.mode = 1;
	diff_system_facts(&d, &a, &b);
	assert_fact(&d, "system.container.engine", "none", "kubernetes", "changed");
	assert_fact(&d, "system.kernel_log.gpu_errors", "2", "1", "better");
	assert_fact(&d, "system.seccomp.mode", "strict", "off", "changed");
	diff_facts_release(&d);
}

static void capability_names(void **state)
{
	(void)state;
	assert_string_equal(system_cap_name(0), "CAP_CHOWN");
	assert_string_equal(system_cap_name(19), "CAP_SYS_PTRACE");
	assert_string_equal(system_cap_name(38), "CAP_PERFMON");
	assert_string_equal(system_cap_name(40), "CAP_CHECKPOINT_RESTORE");
	for (unsigned n = 0; n <= 40; n++)
		assert_non_null(system_cap_name(n));
	assert_null(system_cap_name(41));
	assert_null(system_cap_name(64));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hf_same_facts_give_nothing), cmocka_unit_test(hf_each_change_named),
		cmocka_unit_test(hf_min_free_boundary),       cmocka_unit_test(system_same_facts_give_nothing),
		cmocka_unit_test(system_each_change_named),   cmocka_unit_test(capability_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
