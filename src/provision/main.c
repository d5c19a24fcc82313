/* gpugate-provision: the commands that need libcurl and libarchive, kept
 * out of the main gpugate binary so that its start stays cheap.
 * gpugate exec()s it as: gpugate-provision --gpugate SELF VERB ARGS...
 * It may also be run by hand with the verbs hf-fetch, stack or bundle. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "provision.h"

int main(int argc, char **argv)
{
	const char *gpugate = "gpugate";
	int i = 1;
	if (argc > 2 && strcmp(argv[1], "--gpugate") == 0) {
		gpugate = argv[2];
		i = 3;
	}
	if (i >= argc)
		return usage_error("gpugate-provision: which command? (hf-fetch, stack, bundle)");
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fputs("gpugate: libcurl could not initialise\n", stderr);
		return PROV_FAILED;
	}
	const char *verb = argv[i];
	int rc;
	if (strcmp(verb, "hf-fetch") == 0)
		rc = hf_fetch_main(argc - i, argv + i);
	else if (strcmp(verb, "stack") == 0)
		rc = stack_main(argc - i, argv + i);
	else if (strcmp(verb, "bundle") == 0)
		rc = bundle_main(argc - i, argv + i, gpugate);
	else
		rc = usage_error("gpugate-provision: unknown command '%s' (hf-fetch, stack, bundle)", verb);
	curl_global_cleanup();
	return rc;
}
