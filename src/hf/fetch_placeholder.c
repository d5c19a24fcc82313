/* Placeholder for `gpugate hf fetch` until the provisioning work lands (that
 * change deletes this file). */
#include <stdio.h>

#include "../commands.h"

int cmd_hf_fetch(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("gpugate: hf fetch is not built yet\n", stderr);
	return EXIT_USAGE;
}
