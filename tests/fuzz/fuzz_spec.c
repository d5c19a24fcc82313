/* The spec loader (libyaml plus the schema every group declares) over any
 * bytes, then the accessors the checks use. */
#include "fuzz.h"
#include "registry.h"
#include "spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_exact(data, size);
	struct spec spec;
	struct spec_error err;
	memset(&err, 0, sizeof(err));
	if (spec_load_buffer(&spec, &registry_schema, "fuzz.yaml", buf, size, &err) == 0) {
		(void)spec_str(&spec, "profile", "ci");
		(void)spec_seconds(&spec, "deadline", 60);
		yaml_node_t *pkgs = spec_get(&spec, "packages");
		for (size_t i = 0; pkgs && i < spec_seq_len(pkgs); i++)
			(void)spec_node_str(spec_seq_item(&spec, pkgs, i));
	} else if (strncmp(err.msg, "fuzz.yaml", 9) != 0) {
		abort(); /* errors are located in the file */
	}
	spec_free(&spec);
	free(buf);
	return 0;
}
