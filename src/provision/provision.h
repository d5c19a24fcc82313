/* The commands of gpugate-provision; main.c dispatches to them. Each returns
 * the exit status: 0 done, 1 failed, 3 usage error. */
#ifndef GPUGATE_PROVISION_H
#define GPUGATE_PROVISION_H

#include "../commands.h" /* usage_error(): "gpugate: MESSAGE", the hint, and 3 */

#define PROV_OK     0
#define PROV_FAILED 1
#define PROV_USAGE  EXIT_USAGE

/* gpugate hf fetch REPO[@REVISION] [FILE...] */
int hf_fetch_main(int argc, char **argv);
/* gpugate stack fetch|verify */
int stack_main(int argc, char **argv);
/* gpugate bundle -o FILE.tar.gz; gpugate is the main binary, for its report. */
int bundle_main(int argc, char **argv, const char *gpugate);

/* mkdir -p; returns 0 or -errno. */
int mkdir_p(const char *path, unsigned mode);

#endif
