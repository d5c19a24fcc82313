/* NVIDIA health through NVML (libnvidia-ml.so.1), best effort: used by the
 * CUDA backend's telemetry stage, in the probe child only. */
#ifndef GPUGATE_NVML_H
#define GPUGATE_NVML_H

#include <jansson.h>

/* Fills telemetry for the GPU at PCI bus id `pci` ("0000:03:00.0"):
 * temperature_c, power_w, power_limit_w, ecc {...}, retired_pages or
 * row_remap {...}, processes [...], driver (NVIDIA driver version), xid.
 * A value NVML does not support on this GPU is the string "not supported";
 * when NVML cannot be loaded, telemetry.nvml says why. Never fails. */
void nvml_telemetry(const char *pci, json_t *telemetry);

#endif
