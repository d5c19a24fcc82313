/* The hf group's judging of where the cache lies (src/checks/judge_hf.h) on
 * hand-built facts, no fixture root: a GPU-only container under the
 * healthcheck and under ci, a cache missing and present, a read-only mount
 * with and without read_only: true, and free space exactly at min_free. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "checks/judge_hf.h"

/* A GPU-only container: no hf.models, no cache folder, no volume. */
static const struct hf_facts gpu_only = {
	.healthcheck = true, .cache_missing = true, .on_root = true, .require_mount = true
};

static void gpu_only_container_healthcheck_vs_ci(void **state)
{
	(void)state;
	struct hf_facts f = gpu_only;
	assert_true(hf_judge_unused(&f));
	assert_int_equal(hf_judge_mounted(&f, hf_judge_unused(&f)), HF_MOUNT_ROOT_UNUSED);
	assert_int_equal(hf_judge_not_writable(hf_judge_unused(&f)), STATUS_WARN);
	/* the same container under ci (not the healthcheck): a volume is required */
	f.healthcheck = false;
	assert_false(hf_judge_unused(&f));
	assert_int_equal(hf_judge_mounted(&f, hf_judge_unused(&f)), HF_MOUNT_ROOT);
	assert_int_equal(hf_judge_not_writable(hf_judge_unused(&f)), STATUS_FAIL);
}

static void each_sign_of_use_counts(void **state)
{
	(void)state;
	struct hf_facts f = gpu_only;
	f.models_listed = true; /* the spec needs models */
	assert_false(hf_judge_unused(&f));
	f = gpu_only;
	f.cache_missing = false; /* a cache is present */
	assert_false(hf_judge_unused(&f));
	assert_int_equal(hf_judge_mounted(&f, hf_judge_unused(&f)), HF_MOUNT_ROOT);
	f = gpu_only;
	f.on_root = false; /* a volume is mounted for it */
	assert_false(hf_judge_unused(&f));
	assert_int_equal(hf_judge_mounted(&f, hf_judge_unused(&f)), HF_MOUNT_OWN);
}

static void mount_required_or_not(void **state)
{
	(void)state;
	struct hf_facts f = { .on_root = true, .require_mount = false };
	assert_int_equal(hf_judge_mounted(&f, false), HF_MOUNT_ROOT_ALLOWED);
	assert_int_equal(hf_judge_mounted(&f, true), HF_MOUNT_ROOT_ALLOWED);
	f.require_mount = true;
	assert_int_equal(hf_judge_mounted(&f, false), HF_MOUNT_ROOT);
	f.on_root = false;
	assert_int_equal(hf_judge_mounted(&f, false), HF_MOUNT_OWN);
	assert_int_equal(hf_judge_mounted(&f, true), HF_MOUNT_OWN);
}

static void read_only_mount_with_and_without_read_only(void **state)
{
	(void)state;
	struct hf_facts f = { .ro_mount = true };
	assert_int_equal(hf_judge_writable(&f), HF_WRITE_RO_MOUNT);
	f.offline = true; /* offline does not excuse a read-only mount the spec does not expect */
	assert_int_equal(hf_judge_writable(&f), HF_WRITE_RO_MOUNT);
	f.read_only = true;
	assert_int_equal(hf_judge_writable(&f), HF_WRITE_BY_DESIGN);
	f.offline = false; /* huggingface_hub would call the Hub and try to write */
	assert_int_equal(hf_judge_writable(&f), HF_WRITE_BY_DESIGN_ONLINE);
	/* read_only: true on a read-write mount: still by design */
	f.ro_mount = false;
	assert_int_equal(hf_judge_writable(&f), HF_WRITE_BY_DESIGN_ONLINE);
	f.offline = true;
	assert_int_equal(hf_judge_writable(&f), HF_WRITE_BY_DESIGN);
	f.read_only = false; /* a read-write mount: test the folder itself */
	assert_int_equal(hf_judge_writable(&f), HF_WRITE_TRY);
}

static void space_exactly_at_min_free(void **state)
{
	(void)state;
	const uint64_t gib = 1ULL << 30;
	assert_true(hf_judge_space(20 * gib, 20 * gib));
	assert_false(hf_judge_space(20 * gib - 1, 20 * gib));
	assert_true(hf_judge_space(20 * gib + 1, 20 * gib));
	assert_true(hf_judge_space(0, 0)); /* min_free 0: any filesystem */
	assert_false(hf_judge_space(0, 1));
	assert_true(hf_judge_space(UINT64_MAX, UINT64_MAX));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gpu_only_container_healthcheck_vs_ci),
		cmocka_unit_test(each_sign_of_use_counts),
		cmocka_unit_test(mount_required_or_not),
		cmocka_unit_test(read_only_mount_with_and_without_read_only),
		cmocka_unit_test(space_exactly_at_min_free),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
