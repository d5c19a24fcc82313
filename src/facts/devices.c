#include "facts/devices.h"

#include "facts/fields.h"

/* the details keys of devices.gpus: written and read only here */
#define K_GPUS     "gpus"
#define K_PCI      "pci"
#define K_VENDOR   "vendor"
#define K_DEVICE   "device"
#define K_CLASS    "class"
#define K_DRIVER   "driver"
#define K_CARD     "card"
#define K_RENDER   "render"
#define K_SELECTED "selected"
#define K_PRESENT  "present"

/* one GPU; selected and present read as true when absent, as diff read
 * them before these facts had a type */
static const struct fact_field gpu_fields[] = {
	{ K_PCI, FACT_TEXT, FACT_MEMBER(struct gpu_fact, pci) },
	{ K_VENDOR, FACT_TEXT, FACT_MEMBER(struct gpu_fact, vendor) },
	{ K_DEVICE, FACT_TEXT, FACT_MEMBER(struct gpu_fact, device) },
	{ K_CLASS, FACT_TEXT, FACT_MEMBER(struct gpu_fact, pci_class) },
	{ K_DRIVER, FACT_TEXT, FACT_MEMBER(struct gpu_fact, driver) },
	{ K_CARD, FACT_TEXT, FACT_MEMBER(struct gpu_fact, card) },
	{ K_RENDER, FACT_TEXT, FACT_MEMBER(struct gpu_fact, render) },
	{ K_SELECTED, FACT_BOOL, FACT_MEMBER(struct gpu_fact, selected), .absent = true },
	{ K_PRESENT, FACT_BOOL, FACT_MEMBER(struct gpu_fact, present), .absent = true },
};
FACT_TABLE(gpu_table, struct gpu_fact, "GPU", gpu_fields);

/* the check's details: the list is built GPU by GPU (gpu_fact_encode) */
static const struct fact_field devices_fields[] = {
	{ K_GPUS, FACT_ITEMS, FACT_MEMBER(struct devices_facts, gpus), .items = &gpu_table,
	  FACT_COUNT_OF(struct devices_facts, n_gpus) },
};
FACT_TABLE(devices_table, struct devices_facts, NULL, devices_fields);

json_t *gpu_fact_encode(const struct gpu_fact *g)
{
	return facts_encode_new(&gpu_table, g);
}

void devices_facts_encode_gpus(json_t *details, json_t *gpus)
{
	json_object_set_new(details, K_GPUS, gpus);
}

int devices_facts_decode(const json_t *details, struct devices_facts *f, char *err, size_t errsz)
{
	*f = (struct devices_facts){ 0 };
	return facts_decode(details, &devices_table, f, "devices.gpus", NULL, err, errsz);
}

void devices_facts_release(struct devices_facts *f)
{
	facts_release(&devices_table, f);
}
