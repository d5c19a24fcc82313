/* Fallback probe protocol writers, weak so that src/backend/protocol.c (the
 * probe child's real ones) replaces them at link time. They let the CUDA
 * backend and its test driver link before the probe child exists; delete this
 * file once protocol.c is merged. */
#include "backend/backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, s, n);
		if (w < 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

__attribute__((weak)) void probe_stage(struct probe_channel *ch, const char *stage, const char *device)
{
	char line[256];
	int n = snprintf(line, sizeof line, "stage %s%s%s\n", stage, device ? " " : "",
			 device ? device : "");
	if (n > 0)
		write_all(ch->fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

__attribute__((weak)) void probe_result(struct probe_channel *ch, json_t *result)
{
	char *text = json_dumps(result, JSON_COMPACT | JSON_REAL_PRECISION(6));
	if (!text)
		return;
	write_all(ch->fd, "result ", 7);
	write_all(ch->fd, text, strlen(text));
	write_all(ch->fd, "\n", 1);
	free(text);
}
