/* The devices group's facts that other commands read: every PCI GPU sysfs
 * lists (devices.gpus). One encoder (the check) and one decoder (gpugate
 * diff) own the details keys; checks/report.schema.json describes them. */
#ifndef GPUGATE_FACTS_DEVICES_H
#define GPUGATE_FACTS_DEVICES_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

struct gpu_fact {
	const char *pci;             /* PCI address */
	const char *vendor, *device; /* "0x8086", "0x56a0" */
	const char *pci_class;       /* "0x030000" */
	const char *driver;          /* bound kernel driver, "" when none */
	const char *card, *render;   /* node names, "" when none */
	bool selected;               /* of the spec's vendor, counted */
	bool present;                /* its nodes are in this container */
};

struct devices_facts {
	struct gpu_fact *gpus;
	size_t n_gpus;
};

json_t *gpu_fact_encode(const struct gpu_fact *g);
void devices_facts_encode_gpus(json_t *details, json_t *gpus);

/* Decodes devices.gpus's details (NULL: none). Strings point into details.
 * 0, or -1 with the reason in err. */
int devices_facts_decode(const json_t *details, struct devices_facts *f, char *err, size_t errsz);
void devices_facts_release(struct devices_facts *f);

#endif
