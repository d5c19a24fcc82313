/* The per-GPU series of /metrics, read from what the runtime checks measured
 * and recorded in the JSON report's details (checks/SPEC.md):
 *   runtime.devices      details.devices[]: memory_free, memory_total
 *   runtime.smoke        details.probes[].result.devices[].smoke.ok
 *   runtime.performance  details.measured[]: copy_bandwidth_gbs, launch_latency_us
 * Each GPU is labelled by backend, index, PCI address and UUID (the
 * name only on gpugate_gpu_info), with the run's profile as every gpugate
 * series is. A check that did not run, or a figure it did not measure,
 * gives no sample: nothing is guessed. */
#include <string.h>

#include <jansson.h>

#include "lib/escape.h"
#include "serve.h"

struct family {
	const char *name, *type, *help;
	struct strbuf samples;
	struct strbuf seen; /* label sets already given a sample, one per line */
};

static json_t *check_details(json_t *report, const char *id)
{
	json_t *c;
	size_t i;
	json_array_foreach(json_object_get(report, "checks"), i, c)
	{
		const char *cid = json_string_value(json_object_get(c, "id"));
		if (cid && strcmp(cid, id) == 0)
			return json_object_get(c, "details");
	}
	return NULL;
}

static void add_label(struct strbuf *out, const char *name, const char *value, bool *first)
{
	sb_printf(out, "%s%s=\"", *first ? "" : ",", name);
	escape_add(out, value ? value : "", ESCAPE_PROM_LABEL);
	sb_puts(out, "\"");
	*first = false;
}

/* {profile,backend,index,pci,uuid[,name]} of one device object. */
static void gpu_labels(struct strbuf *out, const char *profile, json_t *dev, const char *backend, bool with_name)
{
	bool first = true;
	sb_puts(out, "{");
	add_label(out, "profile", profile, &first);
	const char *be = json_string_value(json_object_get(dev, "backend"));
	add_label(out, "backend", be ? be : backend, &first);
	char index[32] = "";
	json_t *ix = json_object_get(dev, "index");
	if (json_is_integer(ix))
		snprintf(index, sizeof(index), "%lld", (long long)json_integer_value(ix));
	add_label(out, "index", index, &first);
	add_label(out, "pci", json_string_value(json_object_get(dev, "pci")), &first);
	add_label(out, "uuid", json_string_value(json_object_get(dev, "uuid")), &first);
	if (with_name)
		add_label(out, "name", json_string_value(json_object_get(dev, "name")), &first);
	sb_puts(out, "}");
}

/* One sample; a second one for the same GPU (two probes naming it) is
 * dropped, as the exposition format allows one per label set. */
static void add_sample(struct family *f, const char *profile, json_t *dev, const char *backend, double value,
		       bool with_name)
{
	struct strbuf labels = STRBUF_INIT;
	gpu_labels(&labels, profile, dev, backend, with_name);
	sb_puts(&labels, "\n");
	if (!f->seen.buf || !strstr(f->seen.buf, labels.buf)) {
		sb_puts(&f->seen, labels.buf);
		sb_printf(&f->samples, "%s", f->name);
		sb_add(&f->samples, labels.buf, labels.len - 1);
		/* bytes as the integers they are; figures with 9 significant digits */
		if (value == (double)(long long)value && value < 9007199254740992.0)
			sb_printf(&f->samples, " %lld\n", (long long)value);
		else
			sb_printf(&f->samples, " %.9g\n", value);
	}
	sb_release(&labels);
}

static void memory_samples(struct family *info, struct family *free_b, struct family *total_b, json_t *report,
			   const char *profile)
{
	json_t *dev;
	size_t i;
	json_array_foreach(json_object_get(check_details(report, "runtime.devices"), "devices"), i, dev)
	{
		add_sample(info, profile, dev, NULL, 1, true);
		json_t *v = json_object_get(dev, "memory_free");
		if (json_is_number(v))
			add_sample(free_b, profile, dev, NULL, json_number_value(v), false);
		v = json_object_get(dev, "memory_total");
		if (json_is_number(v))
			add_sample(total_b, profile, dev, NULL, json_number_value(v), false);
	}
}

static void smoke_samples(struct family *smoke, json_t *report, const char *profile)
{
	json_t *probe, *dev;
	size_t i, d;
	json_array_foreach(json_object_get(check_details(report, "runtime.smoke"), "probes"), i, probe)
	{
		json_t *result = json_object_get(probe, "result");
		const char *backend = json_string_value(json_object_get(probe, "backend"));
		json_array_foreach(json_object_get(result, "devices"), d, dev)
		{
			json_t *ok = json_object_get(json_object_get(dev, "smoke"), "ok");
			if (json_is_boolean(ok))
				add_sample(smoke, profile, dev, backend, json_is_true(ok) ? 1 : 0, false);
		}
	}
}

static void perf_samples(struct family *bandwidth, struct family *latency, json_t *report, const char *profile)
{
	json_t *fig;
	size_t i;
	json_array_foreach(json_object_get(check_details(report, "runtime.performance"), "measured"), i, fig)
	{
		json_t *v = json_object_get(fig, "copy_bandwidth_gbs");
		if (json_is_number(v))
			add_sample(bandwidth, profile, fig, NULL, json_number_value(v) * 1e9, false);
		v = json_object_get(fig, "launch_latency_us");
		if (json_is_number(v))
			add_sample(latency, profile, fig, NULL, json_number_value(v) * 1e-6, false);
	}
}

void gpu_metrics_from_report(struct strbuf *out, const char *json)
{
	json_t *report = json_loads(json, 0, NULL);
	if (!report)
		return;
	const char *profile = json_string_value(json_object_get(report, "profile"));
	if (!profile)
		profile = "custom"; /* as report/prom.c labels a run without one */
	struct family fams[] = {
		{ "gpugate_gpu_info", "gauge", "A GPU the runtime checks saw; always 1.", STRBUF_INIT, STRBUF_INIT },
		{ "gpugate_gpu_memory_free_bytes", "gauge", "Free device memory the runtime reported.", STRBUF_INIT,
		  STRBUF_INIT },
		{ "gpugate_gpu_memory_total_bytes", "gauge", "Device memory the runtime reported.", STRBUF_INIT,
		  STRBUF_INIT },
		{ "gpugate_gpu_smoke_passed", "gauge", "1 when the smoke kernel ran correctly on the GPU, 0 when not.",
		  STRBUF_INIT, STRBUF_INIT },
		{ "gpugate_gpu_copy_bandwidth_bytes_per_second", "gauge",
		  "Copy bandwidth measured by runtime.performance (compare: its baseline, checks/baselines).",
		  STRBUF_INIT, STRBUF_INIT },
		{ "gpugate_gpu_launch_latency_seconds", "gauge",
		  "Kernel launch latency measured by runtime.performance (median).", STRBUF_INIT, STRBUF_INIT },
	};
	memory_samples(&fams[0], &fams[1], &fams[2], report, profile);
	smoke_samples(&fams[3], report, profile);
	perf_samples(&fams[4], &fams[5], report, profile);
	for (size_t i = 0; i < ARRAY_SIZE(fams); i++) {
		if (fams[i].samples.len) {
			sb_printf(out, "# HELP %s %s\n# TYPE %s %s\n", fams[i].name, fams[i].help, fams[i].name,
				  fams[i].type);
			sb_add(out, fams[i].samples.buf, fams[i].samples.len);
		}
		sb_release(&fams[i].samples);
		sb_release(&fams[i].seen);
	}
	json_decref(report);
}
