/* Loading and matching performance baselines (see baselines.h). */
#include "baselines.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "embedded.h"
#include "util.h"

long baseline_pci_id(const json_t *v)
{
	if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);
		return i >= 0 && i <= 0xffff ? (long)i : -1;
	}
	const char *s = json_string_value(v);
	if (!s || !*s)
		return -1;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	char *end;
	errno = 0;
	long id = strtol(s, &end, 16);
	return !errno && *s && !*end && end - s <= 4 && id >= 0 ? id : -1;
}

static int fail(char *err, size_t errsize, const char *name, const char *fmt, const char *what)
{
	char msg[512];
	snprintf(msg, sizeof(msg), fmt, what);
	snprintf(err, errsize, "%s: %s", name, msg);
	return -1;
}

/* A positive number, or 0 when absent; -1 when present and not one. */
static double positive(const json_t *v)
{
	if (!v)
		return 0;
	return json_is_number(v) && json_number_value(v) > 0 ? json_number_value(v) : -1;
}

int baseline_parse(const char *name, const char *text, size_t len, const char *const *backends, struct baseline *out,
		   char *err, size_t errsize)
{
	static const char *const known[] = { "vendor_id",         "device_id", "backend", "name", "copy_bandwidth_gbs",
					     "launch_latency_us", "recorded",  "comment", NULL };
	memset(out, 0, sizeof(*out));
	json_error_t je;
	json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!j) {
		snprintf(err, errsize, "%s:%d:%d: not valid JSON: %s", name, je.line, je.column, je.text);
		return -1;
	}
	int rc = -1;
	const char *key;
	json_t *v;
	if (!json_is_object(j)) {
		fail(err, errsize, name, "%s", "a baseline is one JSON object");
		goto out;
	}
	json_object_foreach(j, key, v)
	{
		size_t i = 0;
		while (known[i] && strcmp(known[i], key) != 0)
			i++;
		if (!known[i]) {
			fail(err, errsize, name,
			     "unknown key \"%s\" (known: vendor_id, device_id, backend, name, "
			     "copy_bandwidth_gbs, launch_latency_us, recorded, comment)",
			     key);
			goto out;
		}
	}
	out->vendor_id = baseline_pci_id(json_object_get(j, "vendor_id"));
	json_t *did = json_object_get(j, "device_id");
	out->device_id = did ? baseline_pci_id(did) : -1;
	if (out->vendor_id < 0 || (did && out->device_id < 0)) {
		fail(err, errsize, name, "%s",
		     "vendor_id and device_id must be PCI ids, e.g. \"0x8086\" and \"0x56a0\"");
		goto out;
	}
	json_t *be = json_object_get(j, "backend");
	const char *bs = json_string_value(be);
	bool known_backend = bs && *bs;
	if (known_backend && backends) { /* the caller's list: the backends' own table */
		known_backend = false;
		for (const char *const *b = backends; *b; b++)
			known_backend |= strcmp(*b, bs) == 0;
	}
	if (be && !known_backend) {
		char names[128] = "";
		for (const char *const *b = backends; b && *b; b++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s\"%s\"",
				 names[0] ? (b[1] ? ", " : " or ") : "", *b);
		if (!backends)
			snprintf(names, sizeof(names), "a backend name");
		fail(err, errsize, name, "backend must be %s (or absent: any)", names);
		goto out;
	}
	json_t *nm = json_object_get(j, "name");
	if (nm && !json_is_string(nm)) {
		fail(err, errsize, name, "%s", "name must be a string");
		goto out;
	}
	if (!did && !nm) {
		fail(err, errsize, name, "%s", "give device_id (or, where the PCI id is unknown, the device's name)");
		goto out;
	}
	out->bandwidth_gbs = positive(json_object_get(j, "copy_bandwidth_gbs"));
	out->latency_us = positive(json_object_get(j, "launch_latency_us"));
	if (out->bandwidth_gbs < 0 || out->latency_us < 0) {
		fail(err, errsize, name, "%s", "copy_bandwidth_gbs and launch_latency_us must be positive numbers");
		goto out;
	}
	if (out->bandwidth_gbs == 0 && out->latency_us == 0) {
		fail(err, errsize, name, "%s", "neither copy_bandwidth_gbs nor launch_latency_us is given");
		goto out;
	}
	out->source = xstrdup(name);
	out->backend = bs ? xstrdup(bs) : NULL;
	out->name = nm ? xstrdup(json_string_value(nm)) : NULL;
	out->recorded = json_incref(json_object_get(j, "recorded"));
	rc = 0;
out:
	json_decref(j);
	return rc;
}

static void add(struct baseline_set *set, const struct baseline *b)
{
	set->items = xrealloc(set->items, (set->n + 1) * sizeof(*set->items));
	set->items[set->n++] = *b;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int baselines_load(struct baseline_set *set, const char *folder, const char *const *backends, char *err, size_t errsize)
{
	memset(set, 0, sizeof(*set));
	struct baseline b;
	for (const struct embedded_file *f = embedded_baselines; f->name; f++) {
		char *name = xasprintf("%s (built in)", f->name);
		int rc = baseline_parse(name, (const char *)f->data, f->size, backends, &b, err, errsize);
		free(name);
		if (rc < 0)
			return -1;
		add(set, &b);
	}
	if (!folder)
		return 0;
	DIR *d = opendir(folder);
	if (!d) {
		snprintf(err, errsize, "runtime.baselines: cannot open the folder %s: %s", folder, strerror(errno));
		return -1;
	}
	/* in name order, so that which file wins a duplicate is predictable */
	char **names = NULL;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && str_ends_with(e->d_name, ".json")) {
			names = xrealloc(names, (n + 1) * sizeof(*names));
			names[n++] = xstrdup(e->d_name);
		}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), by_name);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		char *path = xasprintf("%s/%s", folder, names[i]), *text = NULL;
		size_t len = 0;
		struct stat st;
		/* never open a FIFO or a device: it could block the check forever */
		int r = stat(path, &st) < 0 ? -errno : !S_ISREG(st.st_mode) ? -EINVAL : read_file(path, &text, &len);
		if (r == -EINVAL) {
			snprintf(err, errsize, "%s: not a regular file", path);
			rc = -1;
		} else if (r < 0) {
			snprintf(err, errsize, "%s: cannot read: %s", path, strerror(-r));
			rc = -1;
		} else if (len > (1 << 20)) {
			snprintf(err, errsize, "%s: %zu bytes: too big for a baseline", path, len);
			rc = -1;
		} else if (rc == 0 && baseline_parse(path, text, len, backends, &b, err, errsize) == 0) {
			add(set, &b);
		} else {
			rc = -1;
		}
		free(text);
		free(path);
		if (rc < 0)
			break;
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

const struct baseline *baselines_find(const struct baseline_set *set, long vendor_id, long device_id, const char *name,
				      const char *backend)
{
	const struct baseline *found = NULL;
	for (size_t i = 0; i < set->n; i++) {
		const struct baseline *b = &set->items[i];
		bool model =
			b->device_id >= 0 ? b->device_id == device_id : (name && b->name && strcmp(b->name, name) == 0);
		if (b->vendor_id == vendor_id && model &&
		    (!b->backend || (backend && strcmp(b->backend, backend) == 0)))
			found = b;
	}
	return found;
}

void baselines_free(struct baseline_set *set)
{
	for (size_t i = 0; i < set->n; i++) {
		free(set->items[i].source);
		free(set->items[i].backend);
		free(set->items[i].name);
		json_decref(set->items[i].recorded);
	}
	free(set->items);
	memset(set, 0, sizeof(*set));
}
