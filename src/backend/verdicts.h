/* What each backend tells the checking process (backend.h's second half):
 * the health verdict, the remediations and the packages of its loader.
 * ze_verdicts.c and cuda_verdicts.c, one per vendor. */
#ifndef GPUGATE_VERDICTS_H
#define GPUGATE_VERDICTS_H

#include "backend.h"
#include "probe_result.h"

void ze_judge_health(const struct probe_telemetry *t, const char *label, struct result *r);
extern const struct backend_remedy ze_remedies[];
extern const char *const ze_loader_packages[];

void cuda_judge_health(const struct probe_telemetry *t, const char *label, struct result *r);
extern const struct backend_remedy cuda_remedies[];
extern const char *const cuda_loader_packages[];

#endif
