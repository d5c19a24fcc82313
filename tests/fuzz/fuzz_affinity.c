/* ZE_AFFINITY_MASK and ZE_FLAT_DEVICE_HIERARCHY, from untrusted environment
 * values. The first line is the mask, the second the hierarchy, the first
 * bytes after it the tiles of up to 8 GPUs. The result must stay within the
 * GPUs given, and a mask the driver does not abort on leaves notes that are
 * strings. */
#include "fuzz.h"
#include "lib/affinity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *mask = fuzz_cstring(data, size);
	char *nl = strchr(mask, '\n');
	const char *hier = "";
	const char *rest = "";
	if (nl) {
		*nl = '\0';
		hier = nl + 1;
		char *nl2 = strchr(nl + 1, '\n');
		if (nl2) {
			*nl2 = '\0';
			rest = nl2 + 1;
		}
	}
	unsigned tiles[8];
	size_t count = strnlen(rest, 8);
	for (size_t i = 0; i < count; i++)
		tiles[i] = (unsigned char)rest[i] % 9; /* 0 counts as 1 */
	enum hierarchy h;
	hierarchy_parse(hier, hierarchy_default((unsigned)size), &h);
	if (!hierarchy_name(h))
		abort();
	struct affinity_result r;
	affinity_apply(mask, h, tiles, count, &r);
	if (r.gpus > count || r.devices > count * 8)
		abort();
	for (size_t i = count; i < AFFINITY_MAX_GPUS; i++)
		if (r.visible[i])
			abort(); /* no GPU past the ones given */
	if (r.aborts && (r.gpus || !memchr(r.abort_reason, '\0', sizeof(r.abort_reason))))
		abort();
	for (size_t i = 0; i < r.note_count && i < AFFINITY_MAX_NOTES; i++)
		if (!memchr(r.notes[i].text, '\0', sizeof(r.notes[i].text)))
			abort();
	free(mask);
	return 0;
}
