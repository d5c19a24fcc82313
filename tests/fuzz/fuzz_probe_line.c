/* The parent's probe line parser: the child that writes these lines runs a
 * vendor driver and may write anything before it dies. One line per input
 * (cut at the first newline, as the parent's reader does). */
#include "fuzz.h"
#include "backend/protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = fuzz_cstring(data, size);
	line[strcspn(line, "\n")] = '\0';
	struct probe_line pl;
	probe_parse_line(line, &pl);
	switch (pl.kind) {
	case PROBE_LINE_STAGE:
		if (!pl.stage[0] || !memchr(pl.device, '\0', sizeof(pl.device)))
			abort();
		break;
	case PROBE_LINE_RESULT:
	case PROBE_LINE_ENUMERATED:
		if (!json_is_object(pl.result))
			abort(); /* the caller relies on an object */
		json_decref(pl.result);
		break;
	case PROBE_LINE_BAD:
		if (!pl.error[0] || pl.result)
			abort(); /* a bad line says why and owns nothing */
		break;
	default:
		abort();
	}
	free(line);
	return 0;
}
