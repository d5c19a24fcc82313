/* What each backend tells the checking process (backend.h's second half):
 * the health verdict and the remediations (its packages are its vendor's).
 * ze_verdicts.c and cuda_verdicts.c, one per vendor. */
#ifndef GPUGATE_VERDICTS_H
#define GPUGATE_VERDICTS_H

#include "backend.h"
#include "probe_result.h"

void ze_judge_health(const struct probe_telemetry *t, const char *label, struct result *r);
extern const struct backend_remedy ze_remedies[];

void cuda_judge_health(const struct probe_telemetry *t, const char *label, struct result *r);
extern const struct backend_remedy cuda_remedies[];

#endif
