/* Shared by the libFuzzer targets: each target is one fuzz_NAME.c file that
 * defines LLVMFuzzerTestOneInput; the Makefile builds every fuzz_*.c against
 * all of gpugate's objects but main.o, and runs it from corpus/NAME/. */
#ifndef GPUGATE_FUZZ_H
#define GPUGATE_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A NUL-terminated copy of the input (callee frees). */
static inline char *fuzz_cstring(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* An exact-size copy, so that ASan sees a read one byte past the end. */
static inline char *fuzz_exact(const uint8_t *data, size_t size)
{
	char *s = malloc(size ? size : 1);
	if (!s)
		abort();
	memcpy(s, data, size);
	return s;
}

#endif
