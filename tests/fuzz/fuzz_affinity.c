/* ZE_AFFINITY_MASK and ZE_FLAT_DEVICE_HIERARCHY, from untrusted environment
 * values. The first line is the mask, the rest the hierarchy. An accepted
 * mask written back in normal form must parse to the same mask. */
#include "fuzz.h"
#include "lib/affinity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *mask = fuzz_cstring(data, size);
	char *nl = strchr(mask, '\n');
	const char *hier = "";
	if (nl) {
		*nl = '\0';
		hier = nl + 1;
	}
	char err[256];
	struct affinity a;
	if (affinity_parse(mask, &a, err, sizeof(err)) == 0) {
		if (a.all || a.count > AFFINITY_MAX_ITEMS)
			abort();
		char text[AFFINITY_MAX_ITEMS * 12 + 16];
		affinity_format(&a, text, sizeof(text));
		struct affinity again;
		if (affinity_parse(text, &again, err, sizeof(err)) != 0 || again.count != a.count)
			abort(); /* the normal form parses back */
		for (size_t i = 0; i < a.count; i++) {
			if (a.items[i].device > AFFINITY_MAX_INDEX ||
			    !affinity_visible(&a, a.items[i].device, a.items[i].sub) ||
			    !affinity_visible(&a, a.items[i].device, -1))
				abort(); /* a named device is visible */
		}
	} else if (!memchr(err, '\0', sizeof(err)) || !err[0]) {
		abort();
	}
	enum hierarchy h;
	if (hierarchy_parse(hier, &h, err, sizeof(err)) == 0) {
		if (!hierarchy_name(h))
			abort();
	} else if (!memchr(err, '\0', sizeof(err)) || !err[0]) {
		abort();
	}
	free(mask);
	return 0;
}
