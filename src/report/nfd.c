/* node-feature-discovery feature labels (the "local" source reads
 * /etc/kubernetes/node-feature-discovery/features.d/NAME, one name=value a
 * line). The labels come from results' details that the groups set:
 *   gpugate.healthy         true | false (no check failed)
 *   gpugate.profile         the profile that produced the verdict
 *   gpugate.gpus            details.gpu_count of check devices.gpus, else the
 *                           number of its details.gpus entries that are selected
 *                           and present (the GPUs of the spec's vendor this
 *                           container sees)
 *   gpugate.driver_version  details.driver_version of the first runtime.* check
 * A label whose source is absent is left out rather than guessed. */
#include <string.h>

#include "report.h"

/* Kubernetes label values: at most 63 characters of [A-Za-z0-9._-],
 * starting and ending alphanumeric. Other characters become '_'; a value
 * that is still not valid is dropped (returns false). */
static bool label_value(const char *in, char out[64])
{
	size_t n = 0;
	const char *p = in;
	while (*p && !((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
		p++;
	for (; *p && n < 63; p++) {
		char c = *p;
		bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  c == '.' || c == '-' || c == '_';
		out[n++] = ok ? c : '_';
	}
	if (*p)
		return false; /* longer than a label value may be: do not cut a version */
	while (n > 0 && (out[n - 1] == '.' || out[n - 1] == '-' || out[n - 1] == '_'))
		n--;
	out[n] = '\0';
	return n > 0;
}

static const struct result *find_result(const struct run *run, const char *id)
{
	for (size_t i = 0; i < run->count; i++)
		if (run->results[i].id && strcmp(run->results[i].id, id) == 0)
			return &run->results[i];
	return NULL;
}

/* -1 when the check did not run or says nothing usable. */
static long long gpu_count(const struct result *r)
{
	if (!r || !r->details)
		return -1;
	json_t *count = json_object_get(r->details, "gpu_count");
	if (json_is_integer(count))
		return json_integer_value(count) >= 0 ? json_integer_value(count) : -1;
	json_t *list = json_object_get(r->details, "gpus");
	if (!json_is_array(list))
		return -1;
	long long n = 0;
	for (size_t i = 0; i < json_array_size(list); i++) {
		json_t *g = json_array_get(list, i);
		json_t *selected = json_object_get(g, "selected"), *present = json_object_get(g, "present");
		if (json_is_object(g) && !json_is_false(selected) && !json_is_false(present))
			n++;
	}
	return n;
}

static const char *driver_version(const struct run *run)
{
	for (size_t i = 0; i < run->count; i++) {
		const struct result *r = &run->results[i];
		if (!r->id || strncmp(r->id, "runtime.", 8) != 0 || !r->details)
			continue;
		const char *v = json_string_value(json_object_get(r->details, "driver_version"));
		if (v && *v)
			return v;
	}
	return NULL;
}

void report_nfd(struct strbuf *out, const struct run *run, const struct report_opts *opts)
{
	(void)opts;
	char value[64];
	sb_printf(out, "gpugate.healthy=%s\n", run_exit_code(run) == 0 ? "true" : "false");
	if (run->profile && label_value(run->profile, value))
		sb_printf(out, "gpugate.profile=%s\n", value);
	long long gpus = gpu_count(find_result(run, "devices.gpus"));
	if (gpus >= 0)
		sb_printf(out, "gpugate.gpus=%lld\n", gpus);
	const char *version = driver_version(run);
	if (version && label_value(version, value))
		sb_printf(out, "gpugate.driver_version=%s\n", value);
}
