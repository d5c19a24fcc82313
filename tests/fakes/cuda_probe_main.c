/* Test driver for the CUDA backend until the probe child (`gpugate probe`)
 * drives it: runs cuda_backend.run() in this process with the probe channel
 * on stdout and prints the stage lines and the result line.
 *   cuda_probe [--device N] [--no-smoke] [--telemetry] [--work-items N]
 *              [--sync-timeout S]
 * Exit 0 when the probe passed, 1 when not, 3 on bad usage. */
#include "backend/backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	struct backend_options opt = { .device = 0, .smoke = true, .work_items = 1u << 20, .sync_timeout_s = 10 };
	for (int i = 1; i < argc; i++) {
		char *end = NULL;
		if (strcmp(argv[i], "--device") == 0 && i + 1 < argc)
			opt.device = (int)strtol(argv[++i], &end, 10);
		else if (strcmp(argv[i], "--work-items") == 0 && i + 1 < argc)
			opt.work_items = strtoul(argv[++i], &end, 10);
		else if (strcmp(argv[i], "--sync-timeout") == 0 && i + 1 < argc)
			opt.sync_timeout_s = strtod(argv[++i], &end);
		else if (strcmp(argv[i], "--no-smoke") == 0)
			opt.smoke = false;
		else if (strcmp(argv[i], "--telemetry") == 0)
			opt.telemetry = true;
		else {
			fprintf(stderr, "cuda_probe: unknown option %s\n", argv[i]);
			return 3;
		}
		if (end && *end) {
			fprintf(stderr, "cuda_probe: bad number %s\n", argv[i]);
			return 3;
		}
	}
	struct probe_channel ch = { .fd = 1 };
	json_t *result = json_object();
	int rc = cuda_backend.run(&ch, &opt, result);
	probe_result(&ch, result);
	json_decref(result);
	return rc == 0 ? 0 : 1;
}
