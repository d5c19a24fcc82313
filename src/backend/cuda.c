/* Placeholder so that the tree links: the CUDA backend is built in its own
 * issue and replaces this file. */
#include "backend.h"

static int cuda_run(struct probe_channel *ch, const struct backend_options *opt, json_t *result)
{
	(void)opt;
	probe_stage(ch, "loader", NULL);
	json_object_set_new(result, "stage", json_string("loader"));
	json_object_set_new(result, "error", json_string("not built"));
	json_object_set_new(result, "message", json_string("CUDA backend not built yet"));
	return -1;
}

const struct backend cuda_backend = {
	.name = "cuda",
	.library = "libcuda.so.1",
	.provided_by = "libcuda1 (Debian non-free), the NVIDIA driver's user-space libraries",
	.run = cuda_run,
};
