/* CUDA_VISIBLE_DEVICES, as the driver reads it. NVIDIA documents the form
 * (CUDA C++ Programming Guide, "CUDA Environment Variables"; the MPS guide):
 * a comma-separated list of device indices, of GPU UUIDs as nvidia-smi -L
 * prints them ("GPU-8932f937-d72c-..."), which may be shortened to a prefix
 * that names one GPU, or of MIG instances ("MIG-<UUID>"; "MIG-GPU-<UUID>/
 * <GI>/<CI>" before R470). The details below are what the driver answered
 * (tests/vectors/cuda-visible-devices.tsv, driver 580.159.04):
 * - the first entry decides: GPU- or MIG- (case matters: "gpu-..." is not
 *   a UUID) is a list of UUIDs, anything else a list of indices;
 * - an index is read as strtoul reads it: leading blanks, a sign ("-0" is
 *   0, "-1" names nothing), digits, trailing text ignored ("0x1" is 0);
 * - a UUID entry is compared with each GPU's UUID after the prefix, hex
 *   digits in either case, up to the end of the entry (a prefix: "GPU-6")
 *   or the end of the GPU's UUID (a full UUID: what follows is ignored);
 *   "GPU-" alone names nothing; "MIG-" followed by a GPU's UUID digits
 *   names that GPU; the pre-R470 "MIG-GPU-..." names nothing;
 * - the list ends at its first entry that names no device ("0,2,-1,1"
 *   shows 0 and 2), so an empty value or entry ends it;
 * - a list that names one device twice ("0,0", a UUID and its prefix)
 *   shows no device at all. */
#include "cuda_visible.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* strtoul's reading: -1 when there are no digits, or a '-' before a value
 * that is not 0 (strtoul negates it: ULONG_MAX names no GPU). */
static long read_index(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && isspace((unsigned char)s[i]))
		i++;
	bool negative = false;
	if (i < n && (s[i] == '+' || s[i] == '-'))
		negative = s[i++] == '-';
	size_t digits = i;
	long v = 0;
	while (i < n && s[i] >= '0' && s[i] <= '9' && v < 100000)
		v = v * 10 + (s[i++] - '0');
	if (i == digits || (negative && v != 0))
		return -1;
	return v;
}

/* Does entry (after its GPU-/MIG- prefix) name the GPU of this UUID? */
static bool uuid_names(const char *entry, size_t len, const char *uuid)
{
	if (strncmp(uuid, "GPU-", 4) != 0)
		return false;
	uuid += 4;
	size_t i = 0;
	for (; i < len && uuid[i]; i++)
		if (tolower((unsigned char)entry[i]) != tolower((unsigned char)uuid[i]))
			return false;
	return i > 0;
}

static int clip(size_t len, int most)
{
	return len > (size_t)most ? most : (int)len;
}

void cuda_visible_parse(const char *value, const char *const *uuids, size_t n, struct cuda_visible *p)
{
	memset(p, 0, sizeof(*p));
	p->by_uuid = strncmp(value, "GPU-", 4) == 0 || strncmp(value, "MIG-", 4) == 0;
	p->mig = strncmp(value, "MIG-", 4) == 0;
	const char *prefix = p->mig ? "MIG-" : "GPU-";
	const char *s = value;
	for (;;) {
		const char *comma = strchr(s, ',');
		size_t len = comma ? (size_t)(comma - s) : strlen(s);
		int gpu = -1;
		if (!p->by_uuid) {
			long idx = read_index(s, len);
			if (idx < 0) {
				snprintf(p->stop, sizeof(p->stop), "'%.*s' is not a device index", clip(len, 40), s);
				break;
			}
			if ((size_t)idx >= n) {
				snprintf(p->stop, sizeof(p->stop),
					 "index %ld names no GPU (this container has %zu: 0..%zu)", idx, n,
					 n ? n - 1 : 0);
				break;
			}
			gpu = (int)idx;
		} else if (strncmp(s, prefix, 4) != 0) {
			snprintf(p->stop, sizeof(p->stop), "'%.*s' is not a %s entry like the first", clip(len, 40), s,
				 prefix);
			break;
		} else if (p->mig && strncmp(s, "MIG-GPU-", 8) == 0) {
			snprintf(p->stop, sizeof(p->stop),
				 "'%.*s' is the MIG form of drivers before R470, which current drivers do not read "
				 "(nvidia-smi -L prints the MIG-<UUID> to use)",
				 clip(len, 60), s);
			break;
		} else if (len == 4) {
			snprintf(p->stop, sizeof(p->stop), "'%.*s' has no UUID after it", clip(len, 40), s);
			break;
		} else if (!uuids) {
			/* nothing to match a UUID against: each entry is counted,
			 * up to the GPUs there are */
			if (p->count >= n) {
				snprintf(p->stop, sizeof(p->stop), "'%.*s' is one entry more than there are GPUs (%zu)",
					 clip(len, 40), s, n);
				break;
			}
		} else {
			int owners = 0;
			for (size_t i = 0; i < n; i++)
				if (uuid_names(s + 4, len - 4, uuids[i])) {
					gpu = (int)i;
					owners++;
				}
			if (owners > 1) {
				snprintf(p->stop, sizeof(p->stop), "'%.*s' is the start of more than one GPU's UUID",
					 clip(len, 60), s);
				break;
			}
			/* a MIG-<UUID> that is no GPU's names an instance, whose
			 * UUID the driver's /proc files do not list: counted */
			if (owners == 0 && !p->mig) {
				snprintf(p->stop, sizeof(p->stop), "'%.*s' is the UUID of no GPU here", clip(len, 60),
					 s);
				break;
			}
		}
		for (size_t k = 0; k < p->count; k++)
			if ((gpu >= 0 && p->gpu[k] == gpu) || (p->len[k] == len && strncmp(p->text[k], s, len) == 0))
				p->duplicate = true;
		p->entries++;
		if (p->count < CUDA_VISIBLE_MAX) {
			p->text[p->count] = s;
			p->len[p->count] = len;
			p->gpu[p->count++] = gpu;
		}
		if (!comma)
			break;
		s = comma + 1;
	}
	if (p->duplicate)
		p->count = 0;
}
