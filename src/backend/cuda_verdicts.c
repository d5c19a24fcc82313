/* CUDA's verdicts (verdicts.h): NVML's ECC counters and memory repair (row
 * remapping, retired pages), the fixes for its errors. */
#include "../lib/util.h"
#include "../result.h"
#include "verdicts.h"

/* The CUDA errors' messages carry their own fix (cuda.c's table). */
const struct backend_remedy cuda_remedies[] = { { NULL, NULL } };

void cuda_judge_health(const struct probe_telemetry *t, const char *label, struct result *r)
{
	if (t->ecc.counted) {
		long long unc = t->ecc.uncorrectable, cor = t->ecc.correctable;
		if (unc > 0) {
			result_finding(r, STATUS_FAIL, "runtime.health.ecc_uncorrected",
				       "%s: %lld uncorrected ECC %s since the driver loaded", label, unc,
				       count_noun((size_t)unc, "error", "errors"));
			result_remedy(
				r,
				"drain the node and check nvidia-smi -q -d ECC,ROW_REMAPPER; reset the GPU (nvidia-smi -r) to remap the failed rows");
		} else if (cor > 0) {
			result_finding(r, STATUS_WARN, "runtime.health.ecc_corrected",
				       "%s: %lld corrected ECC %s since the driver loaded", label, cor,
				       count_noun((size_t)cor, "error", "errors"));
		}
	}
	if (t->row_remap_failure) {
		result_finding(r, STATUS_FAIL, "runtime.health.row_remap_failed",
			       "%s: row remapping failed: the GPU has run out of spare memory rows", label);
		result_remedy(r, "the GPU needs replacing: row remapping failure (nvidia-smi -q -d ROW_REMAPPER)");
	} else if (t->row_remap_pending) {
		result_finding(r, STATUS_WARN, "runtime.health.row_remap_pending",
			       "%s: a row remapping is pending: reset the GPU to apply it", label);
		result_remedy(
			r,
			"reset the GPU when it is idle (nvidia-smi -r) so that the pending row remapping takes effect");
	}
	if (t->retired_pages_pending)
		result_finding(r, STATUS_WARN, "runtime.health.page_retirement_pending",
			       "%s: a page retirement is pending: reset the GPU to apply it", label);
}
