#include "facts/devices.h"

#include <stdio.h>
#include <stdlib.h>

#include "../lib/util.h"
#include "../result.h"
#include "facts/decode.h"

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

json_t *gpu_fact_encode(const struct gpu_fact *g)
{
	json_t *j = json_object();
	json_object_set_new(j, K_PCI, json_text(g->pci));
	json_object_set_new(j, K_VENDOR, json_text(g->vendor));
	json_object_set_new(j, K_DEVICE, json_text(g->device));
	json_object_set_new(j, K_CLASS, json_text(g->pci_class));
	json_object_set_new(j, K_DRIVER, json_text(g->driver));
	json_object_set_new(j, K_CARD, json_text(g->card));
	json_object_set_new(j, K_RENDER, json_text(g->render));
	json_object_set_new(j, K_SELECTED, json_boolean(g->selected));
	json_object_set_new(j, K_PRESENT, json_boolean(g->present));
	return j;
}

void devices_facts_encode_gpus(json_t *details, json_t *gpus)
{
	json_object_set_new(details, K_GPUS, gpus);
}

int devices_facts_decode(const json_t *details, struct devices_facts *f, char *err, size_t errsz)
{
	*f = (struct devices_facts){ 0 };
	json_t *gpus;
	if (facts_list(details, "devices.gpus", K_GPUS, &gpus, err, errsz) < 0)
		return -1;
	f->n_gpus = json_array_size(gpus);
	f->gpus = xcalloc(f->n_gpus ? f->n_gpus : 1, sizeof(*f->gpus));
	for (size_t i = 0; i < f->n_gpus; i++) {
		const json_t *j = json_array_get(gpus, i);
		struct gpu_fact *g = &f->gpus[i];
		g->pci = json_string_value(json_object_get(j, K_PCI));
		g->vendor = json_string_value(json_object_get(j, K_VENDOR));
		g->device = json_string_value(json_object_get(j, K_DEVICE));
		g->pci_class = json_string_value(json_object_get(j, K_CLASS));
		g->driver = json_string_value(json_object_get(j, K_DRIVER));
		g->card = json_string_value(json_object_get(j, K_CARD));
		g->render = json_string_value(json_object_get(j, K_RENDER));
		/* absent counts as true, as diff read it before these facts had a type */
		g->selected = !json_is_false(json_object_get(j, K_SELECTED));
		g->present = !json_is_false(json_object_get(j, K_PRESENT));
	}
	return 0;
}

void devices_facts_release(struct devices_facts *f)
{
	free(f->gpus);
	*f = (struct devices_facts){ 0 };
}
