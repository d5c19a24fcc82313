/* The scalar parsers shared by the spec and the command line (sizes,
 * durations, booleans), the list splitter and the text sanitizer. */
#include <math.h>

#include "fuzz.h"
#include "lib/util.h"
#include "spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstring(data, size);
	uint64_t bytes;
	double seconds;
	bool flag;
	(void)parse_size(s, &bytes);
	if (parse_seconds(s, &seconds) == 0 && (isnan(seconds) || seconds < 0))
		abort(); /* a duration is a non-negative number */
	(void)parse_bool(s, &flag);
	size_t n = 0;
	char **list = split_list(s, &n);
	for (size_t i = 0; i < n; i++)
		if (!list[i] || !*list[i])
			abort(); /* empty items are dropped */
	free_list(list);
	text_sanitize(s);
	free(s);
	return 0;
}
