/* CUDA_VISIBLE_DEVICES as the NVIDIA driver reads it in cuInit: the one
 * parser for the devices check (checks/devices_visibility.c), the probe
 * session's child count (backend/session.c) and the test driver
 * (tests/fakes/fake_libcuda.c). No dependencies: the test driver compiles it
 * in. Decided against the real driver: tests/vectors/cuda-visible-devices.tsv
 * (tests/device/cuda_visible.py, driver 580 on an H100). */
#ifndef GPUGATE_VENDOR_CUDA_VISIBLE_H
#define GPUGATE_VENDOR_CUDA_VISIBLE_H

#include <stdbool.h>
#include <stddef.h>

#define CUDA_VISIBLE_MAX 64

struct cuda_visible {
	size_t count;                       /* devices CUDA shows (0 when one is named twice) */
	int gpu[CUDA_VISIBLE_MAX];          /* per device shown, in list order: its GPU (index into
					     * uuids), -1 when not matched (UUIDs unknown, a MIG instance) */
	const char *text[CUDA_VISIBLE_MAX]; /* each entry as written (into the value) */
	size_t len[CUDA_VISIBLE_MAX];
	size_t entries; /* entries read before the list ended */
	bool by_uuid;   /* the list names GPUs by UUID (GPU-, MIG-), not by index */
	bool mig;       /* ... and by MIG- */
	bool duplicate; /* one device named twice: CUDA shows none */
	char stop[200]; /* why the list ended early, "" when it did not */
};

/* Reads VALUE (not NULL: unset shows every GPU) against the n GPUs whose
 * UUIDs ("GPU-8-4-4-4-12", as nvidia-smi -L prints them) are uuids[];
 * uuids NULL when they are not known: each UUID entry is then counted as one
 * GPU, unmatched, up to n. */
void cuda_visible_parse(const char *value, const char *const *uuids, size_t n, struct cuda_visible *out);

#endif
