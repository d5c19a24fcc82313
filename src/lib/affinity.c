#include "affinity.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Xe HPC (Ponte Vecchio) PCI device ids: pvcXlDeviceIds, pvcXtDeviceIds and
 * pvcXtVgDeviceIds of compute-runtime's
 * shared/source/xe_hpc_core/pvc/device_ids_configs_pvc.h. */
static const unsigned xe_hpc_ids[] = { 0x0BD0, 0x0BD5, 0x0BD6, 0x0BD7, 0x0BD8, 0x0BD9,
				       0x0BDA, 0x0BDB, 0x0B69, 0x0B6E, 0x0BD4 };

enum hierarchy hierarchy_default(unsigned pci_device_id)
{
	for (size_t i = 0; i < sizeof(xe_hpc_ids) / sizeof(xe_hpc_ids[0]); i++)
		if (xe_hpc_ids[i] == pci_device_id)
			return HIERARCHY_FLAT;
	return HIERARCHY_COMPOSITE;
}

static const char *const hierarchy_names[] = { "FLAT", "COMPOSITE", "COMBINED" };

bool hierarchy_parse(const char *value, enum hierarchy family_default, enum hierarchy *out)
{
	*out = family_default;
	for (size_t i = 0; value && i < sizeof(hierarchy_names) / sizeof(hierarchy_names[0]); i++) {
		if (strcmp(value, hierarchy_names[i]) == 0) {
			*out = (enum hierarchy)i;
			return true;
		}
	}
	return false;
}

const char *hierarchy_name(enum hierarchy h)
{
	return (unsigned)h < 3 ? hierarchy_names[h] : "?";
}

/* One piece of StringHelpers::split(): [*pos, next delimiter). The driver's
 * split yields no empty piece after a trailing delimiter, but does yield
 * one between two delimiters or before a leading one. Returns false when
 * the text is used up. */
static bool next_piece(const char *text, size_t len, size_t *pos, char delim, const char **start, size_t *n)
{
	if (*pos >= len)
		return false;
	const char *p = text + *pos;
	const char *d = memchr(p, delim, len - *pos);
	*start = p;
	*n = d ? (size_t)(d - p) : len - *pos;
	*pos = d ? (size_t)(d - text) + 1 : len;
	return true;
}

/* StringHelpers::toUint32t(): std::stoul(s, nullptr, 0) cast to uint32_t.
 * stoul is strtoul: leading white space, a sign ("-1" wraps to ULONG_MAX),
 * base from the prefix (0x1 is hex, 010 octal, 08 reads as 0), trailing
 * text ignored; no digit at all throws std::invalid_argument, a value past
 * unsigned long throws std::out_of_range. Returns 0, or -1 when it throws. */
static int to_uint32(const char *s, size_t n, uint32_t *out, char *why, size_t why_size)
{
	char buf[96];
	if (n >= sizeof(buf)) {
		/* longer than any number: strtoul reads its digits just the same,
		 * so keep the start (a long run of digits is out of range anyway) */
		n = sizeof(buf) - 1;
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
	char *end;
	errno = 0;
	unsigned long v = strtoul(buf, &end, 0);
	if (end == buf) {
		snprintf(why, why_size, "'%.40s' is not a number (std::stoul throws std::invalid_argument)", buf);
		return -1;
	}
	if (errno == ERANGE) {
		snprintf(why, why_size, "'%.40s' is too large (std::stoul throws std::out_of_range)", buf);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

static void note(struct affinity_result *r, const char *fmt, const char *entry, size_t n, unsigned a, unsigned b)
{
	if (r->note_count < AFFINITY_MAX_NOTES) {
		char e[48];
		snprintf(e, sizeof(e), "%.*s", (int)(n > 40 ? 40 : n), entry);
		snprintf(r->notes[r->note_count].text, sizeof(r->notes[0].text), fmt, e, a, b);
	}
	r->note_count++;
}

static uint64_t all_tiles(unsigned tiles)
{
	return tiles >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << tiles) - 1;
}

/* the driver's "no filter": unset, set but empty, or its own default value */
static bool mask_filters(const char *mask)
{
	return mask && *mask && strcmp(mask, "default") != 0;
}

bool affinity_needs_tiles(const char *mask, enum hierarchy h)
{
	return h != HIERARCHY_COMPOSITE || mask_filters(mask);
}

void affinity_apply(const char *mask, enum hierarchy h, const unsigned *tiles_in, size_t count,
		    struct affinity_result *r)
{
	memset(r, 0, sizeof(*r));
	if (count > AFFINITY_MAX_GPUS)
		count = AFFINITY_MAX_GPUS;
	unsigned tiles[AFFINITY_MAX_GPUS];
	uint32_t devices = 0; /* the indexes the mask's entries count in */
	for (size_t i = 0; i < count; i++) {
		tiles[i] = tiles_in[i] == 0 ? 1 : tiles_in[i] > AFFINITY_MAX_TILES ? AFFINITY_MAX_TILES : tiles_in[i];
		devices += h == HIERARCHY_COMPOSITE ? 1 : tiles[i];
	}
	if (!mask_filters(mask)) {
		for (size_t i = 0; i < count; i++) {
			r->visible[i] = true;
			r->tiles_on[i] = all_tiles(tiles[i]);
		}
	} else {
		r->filtered = true;
		size_t len = strlen(mask), pos = 0, n;
		const char *entry;
		while (!r->aborts && next_piece(mask, len, &pos, ',', &entry, &n)) {
			size_t sub_pos = 0, first_n, sub_n;
			const char *first, *sub;
			uint32_t index, sub_index;
			if (!next_piece(entry, n, &sub_pos, '.', &first, &first_n)) {
				/* split() of an empty entry is an empty list, which the
				 * driver then indexes: undefined behaviour, a crash at best */
				snprintf(r->abort_reason, sizeof(r->abort_reason),
					 "an empty entry (a leading ',' or two in a row): the driver indexes an empty "
					 "list, undefined behaviour");
				r->aborts = true;
				break;
			}
			if (to_uint32(first, first_n, &index, r->abort_reason, sizeof(r->abort_reason)) < 0) {
				r->aborts = true;
				break;
			}
			bool has_sub = next_piece(entry, n, &sub_pos, '.', &sub, &sub_n);
			if (index >= devices) {
				note(r,
				     count_noun(
					     devices,
					     "'%s' names device %u, which does not exist (%u device): the driver ignores it",
					     "'%s' names device %u, which does not exist (%u devices): the driver ignores it"),
				     entry, n, index, devices);
				continue;
			}
			if (h != HIERARCHY_COMPOSITE) {
				if (has_sub) {
					note(r,
					     "'%s' is a sub-device, which the driver ignores under FLAT and COMBINED "
					     "(every tile is a device of its own)",
					     entry, n, 0, 0);
					continue;
				}
				size_t g = 0;
				uint32_t first_index = 0;
				while (first_index + tiles[g] <= index)
					first_index += tiles[g++];
				r->tiles_on[g] |= (uint64_t)1 << (index - first_index);
				continue;
			}
			if (!has_sub) {
				r->tiles_on[index] |= all_tiles(tiles[index]);
				continue;
			}
			if (to_uint32(sub, sub_n, &sub_index, r->abort_reason, sizeof(r->abort_reason)) < 0) {
				r->aborts = true;
				break;
			}
			if (sub_index >= tiles[index]) {
				note(r, "'%s': GPU %u has no sub-device %u, so the driver ignores the entry", entry, n,
				     index, sub_index);
				continue;
			}
			size_t extra_pos = sub_pos, extra_n;
			const char *extra;
			if (next_piece(entry, n, &extra_pos, '.', &extra, &extra_n)) {
				/* X.Y.Z names an engine, which the driver leaves alone;
				 * more than three parts trips UNRECOVERABLE_IF, an abort */
				size_t more_pos = extra_pos, more_n;
				const char *more;
				if (next_piece(entry, n, &more_pos, '.', &more, &more_n)) {
					snprintf(
						r->abort_reason, sizeof(r->abort_reason),
						"'%.40s' has more than three parts (UNRECOVERABLE_IF in parseAffinityMask aborts)",
						entry);
					r->aborts = true;
					break;
				}
				note(r,
				     "'%s' names an engine (X.Y.Z), which the driver does not use to filter: ignored",
				     entry, n, 0, 0);
				continue;
			}
			r->tiles_on[index] |= (uint64_t)1 << sub_index;
		}
	}
	if (r->aborts) {
		memset(r->visible, 0, sizeof(r->visible));
		memset(r->tiles_on, 0, sizeof(r->tiles_on));
		return;
	}
	for (size_t i = 0; i < count; i++) {
		r->visible[i] = r->tiles_on[i] != 0;
		r->gpus += r->visible[i];
		if (h == HIERARCHY_COMPOSITE)
			r->devices += r->visible[i];
		else
			r->devices += (size_t)__builtin_popcountll(r->tiles_on[i]);
	}
}
