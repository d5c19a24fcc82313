/* Performance baselines: the copy bandwidth and kernel launch latency a GPU
 * model reached on a known-good driver stack, one JSON object per file:
 *
 *   {"vendor_id": "0x8086", "device_id": "0x56a0", "backend": "level-zero",
 *    "name": "Intel Arc A770", "copy_bandwidth_gbs": 480.5,
 *    "launch_latency_us": 9.8, "recorded": {...}}
 *
 * keyed by PCI vendor and device id (and the backend, when given); where the
 * device id cannot be read (CUDA without /sys), by vendor and name. The files
 * of checks/baselines/ are built into the binary; the spec's
 * runtime.baselines names a folder of more (they win over built-in ones). */
#ifndef GPUGATE_BASELINES_H
#define GPUGATE_BASELINES_H

#include <jansson.h>
#include <stddef.h>

struct baseline {
	char *source;              /* "checks/baselines/x.json (built in)" or the file's path */
	long vendor_id, device_id; /* device_id -1: matched by name */
	char *backend;             /* NULL: any backend */
	char *name;                /* the model, for people; may be NULL */
	double bandwidth_gbs;      /* 0: not recorded */
	double latency_us;         /* 0: not recorded */
	json_t *recorded;          /* what it was measured on, or NULL */
};

struct baseline_set {
	struct baseline *items;
	size_t n;
};

/* The built-in baselines, then every *.json in folder (when not NULL).
 * backends: the names a "backend" key may take (NULL-terminated; the
 * backend layer's table, backend_name_list(); NULL: any name), so that this
 * library needs no backend. 0, or -1 with err naming the file and the
 * problem. */
int baselines_load(struct baseline_set *set, const char *folder, const char *const *backends, char *err,
		   size_t errsize);
/* One file's text; 0 or -1 with err ("NAME:LINE:COL: ..." or "NAME: ..."). */
int baseline_parse(const char *name, const char *text, size_t len, const char *const *backends, struct baseline *out,
		   char *err, size_t errsize);
/* The last loaded baseline for this device (device_id -1 or name NULL when
 * unknown) and backend, or NULL. */
const struct baseline *baselines_find(const struct baseline_set *set, long vendor_id, long device_id, const char *name,
				      const char *backend);
void baselines_free(struct baseline_set *set);

/* A PCI id from JSON: an integer or a "0x10de" / "10de" string; -1 if neither. */
long baseline_pci_id(const json_t *v);

#endif
