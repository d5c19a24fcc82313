/* Level Zero device visibility from the environment: ZE_AFFINITY_MASK
 * ("0", "0.1", "0,1.0, 2", "" hides everything) and ZE_FLAT_DEVICE_HIERARCHY
 * (FLAT, COMPOSITE, COMBINED). Shared by the devices check and the runtime
 * probe so both read the variables exactly the same way. */
#ifndef GPUGATE_AFFINITY_H
#define GPUGATE_AFFINITY_H

#include <stdbool.h>
#include <stddef.h>

#define AFFINITY_MAX_ITEMS 64
#define AFFINITY_MAX_INDEX 1023

struct affinity_item {
	unsigned device; /* root device index, in the order the driver numbers them */
	int sub;         /* sub-device (tile) index, or -1 for the whole device */
};

struct affinity {
	bool all;        /* the mask is unset: every device is visible */
	size_t count;    /* 0 with all == false: the empty mask hides every device */
	struct affinity_item items[AFFINITY_MAX_ITEMS];
};

enum hierarchy { HIERARCHY_FLAT = 0, HIERARCHY_COMPOSITE, HIERARCHY_COMBINED };

/* Parses a ZE_AFFINITY_MASK value; NULL means unset (everything visible).
 * Returns 0, or -1 with err naming the offending entry. */
int affinity_parse(const char *mask, struct affinity *out, char *err, size_t errsz);
/* Whether root device `device` is visible: with sub == -1, the device or any
 * of its sub-devices is named; otherwise that very sub-device is. */
bool affinity_visible(const struct affinity *a, unsigned device, int sub);
/* Writes the mask back in its normal form ("0,1.2"); "" for the empty mask,
 * "(unset)" when every device is visible. */
void affinity_format(const struct affinity *a, char *buf, size_t size);

/* Parses ZE_FLAT_DEVICE_HIERARCHY; NULL means unset (FLAT, the driver's default).
 * Returns 0, or -1 with err naming the value and the accepted ones. */
int hierarchy_parse(const char *value, enum hierarchy *out, char *err, size_t errsz);
const char *hierarchy_name(enum hierarchy h);

#endif
