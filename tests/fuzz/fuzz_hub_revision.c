/* The hub's revision answer (GET /api/models/{repo}/revision/{rev}), which
 * gpugate hf fetch reads from the network: JSON of any shape. On success the
 * commit is 40 hex and every name a string; on failure nothing is owned. */
#include "lib/digest.h"
#include "fuzz.h"
#include "provision/download.h"
#include "provision/hub_answer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *body = fuzz_exact(data, size);
	char *commit, **paths, err[300];
	size_t n;
	if (hub_parse_revision(body, size, &commit, &paths, &n, err, sizeof(err)) == 0) {
		if (!commit || !digest_is_hex(commit, 40) || !paths)
			abort();
		for (size_t i = 0; i < n; i++) {
			if (!paths[i])
				abort();
			free(paths[i]);
		}
		free(paths);
		free(commit);
	} else if (commit || paths || n || !err[0]) {
		abort();
	}
	free(body);
	return 0;
}
