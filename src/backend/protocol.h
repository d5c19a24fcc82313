/* The parent's side of the probe line protocol (see backend.h). */
#ifndef GPUGATE_PROTOCOL_H
#define GPUGATE_PROTOCOL_H

#include <jansson.h>

enum probe_line_kind { PROBE_LINE_STAGE, PROBE_LINE_ENUMERATED, PROBE_LINE_RESULT, PROBE_LINE_BAD };

struct probe_line {
	enum probe_line_kind kind;
	char stage[32];  /* PROBE_LINE_STAGE */
	char device[64]; /* PROBE_LINE_STAGE, "" when none */
	json_t *result;  /* PROBE_LINE_RESULT, PROBE_LINE_ENUMERATED: an object the caller owns */
	char error[128]; /* PROBE_LINE_BAD: why */
};

/* Parses one line without its newline. Never fails on garbage: that is
 * PROBE_LINE_BAD with a reason. */
void probe_parse_line(const char *line, struct probe_line *out);

#endif
