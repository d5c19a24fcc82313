/* gpugate-provision: the commands that need libcurl and libarchive, kept
 * out of the main gpugate binary so that its start stays cheap.
 * gpugate exec()s it as: gpugate-provision --gpugate SELF VERB ARGS...
 * It may also be run by hand with the verbs hf-fetch, stack or bundle. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/sandbox.h"
#include "lib/util.h"
#include "provision.h"

extern char **environ;

/* hf fetch and stack fetch hold a token while they parse what servers send:
 * the network profile (sandbox.h) takes process creation and execve away
 * from a parser bug there. bundle runs tools and gpugate itself: none. */
static void sandbox_network(void)
{
	if (sandbox_disabled_by_env(environ))
		return;
	char why[256];
	if (sandbox_apply(SANDBOX_NETWORK, why, sizeof(why)) < 0)
		fprintf(stderr, "gpugate: warning: running without the seccomp sandbox: %s\n", why);
}

int main(int argc, char **argv)
{
	const char *gpugate;
	int i = helper_gpugate_arg(argc, argv, &gpugate);
	if (i >= argc)
		return usage_error("gpugate-provision: which command? (hf-fetch, stack, bundle)");
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fputs("gpugate: libcurl could not initialise\n", stderr);
		return PROV_FAILED;
	}
	const char *verb = argv[i];
	if (strcmp(verb, "hf-fetch") == 0 || strcmp(verb, "stack") == 0)
		sandbox_network();
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
