/* Level Zero result codes: their names and what each means, in one leaf
 * file that ze.c (the probe's stages), ze_perf.c and ze_sysman.c share. It
 * includes nothing of the backend, so no include cycle runs through it. */
#ifndef GPUGATE_ZE_ERRORS_H
#define GPUGATE_ZE_ERRORS_H

#include <level_zero/ze_api.h>
#include <stddef.h>

struct ze_error_text {
	ze_result_t code;
	const char *name;    /* "ZE_RESULT_ERROR_DEVICE_LOST" */
	const char *meaning; /* what it means and the fix */
};

/* The table's entry for rc, or NULL when the table does not know it. */
const struct ze_error_text *ze_error_text(ze_result_t rc);

/* The ze_result_t's name ("ZE_RESULT_ERROR_DEVICE_LOST", or "ZE_RESULT
 * 0x78000001" for a code the table does not know) into buf. */
const char *ze_result_name(ze_result_t rc, char *buf, size_t size);

#endif
