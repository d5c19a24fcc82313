/* The per-GPU series of /metrics, read from what the runtime checks measured
 * and recorded in the JSON report, decoded once through the runtime facts
 * (src/operator/report_decode.c, src/facts/runtime.c):
 *   runtime.devices      each device's memory_free, memory_total
 *   runtime.smoke        each probed device's smoke kernel verdict
 *   runtime.performance  each GPU's copy_bandwidth_gbs, launch_latency_us
 * Each GPU is labelled by backend, index, PCI address and UUID (the
 * name only on gpugate_gpu_info), with the run's profile as every gpugate
 * series is. A check that did not run, or a figure it did not measure,
 * gives no sample: nothing is guessed. */
#include <stdio.h>
#include <string.h>

#include "lib/escape.h"
#include "operator/report_decode.h"
#include "serve.h"

struct family {
	const char *name, *type, *help;
	struct strbuf samples;
	struct strbuf seen; /* label sets already given a sample, one per line */
};

/* whose a sample is: the labels of one GPU */
struct gpu_id {
	const char *backend, *pci, *uuid, *name;
	long index; /* -1: not reported */
};

static void add_label(struct strbuf *out, const char *name, const char *value, bool *first)
{
	sb_printf(out, "%s%s=\"", *first ? "" : ",", name);
	escape_add(out, value ? value : "", ESCAPE_PROM_LABEL);
	sb_puts(out, "\"");
	*first = false;
}

/* {profile,backend,index,pci,uuid[,name]} of one GPU. */
static void gpu_labels(struct strbuf *out, const char *profile, const struct gpu_id *g, bool with_name)
{
	bool first = true;
	sb_puts(out, "{");
	add_label(out, "profile", profile, &first);
	add_label(out, "backend", g->backend, &first);
	char index[32] = "";
	if (g->index >= 0)
		snprintf(index, sizeof(index), "%ld", g->index);
	add_label(out, "index", index, &first);
	add_label(out, "pci", g->pci, &first);
	add_label(out, "uuid", g->uuid, &first);
	if (with_name)
		add_label(out, "name", g->name, &first);
	sb_puts(out, "}");
}

/* One sample; a second one for the same GPU (two probes naming it) is
 * dropped, as the exposition format allows one per label set. */
static void add_sample(struct family *f, const char *profile, const struct gpu_id *g, double value, bool with_name)
{
	struct strbuf labels = STRBUF_INIT;
	gpu_labels(&labels, profile, g, with_name);
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

static void memory_samples(struct family *info, struct family *free_b, struct family *total_b,
			   const struct runtime_facts *f, const char *profile)
{
	for (size_t i = 0; i < f->n_devices; i++) {
		const struct runtime_device_fact *d = &f->devices[i];
		const struct gpu_id g = { d->backend, d->pci, d->uuid, d->name, d->index };
		add_sample(info, profile, &g, 1, true);
		if (d->has_memory_free)
			add_sample(free_b, profile, &g, d->memory_free, false);
		if (d->has_memory_total)
			add_sample(total_b, profile, &g, d->memory_total, false);
	}
}

static void smoke_samples(struct family *smoke, const struct runtime_facts *f, const char *profile)
{
	for (size_t i = 0; i < f->n_smoke; i++) {
		const struct smoke_device_fact *d = &f->smoke[i];
		const struct gpu_id g = { d->backend, d->pci, d->uuid, d->name, d->index };
		if (d->ok >= 0)
			add_sample(smoke, profile, &g, d->ok, false);
	}
}

static void perf_samples(struct family *bandwidth, struct family *latency, const struct runtime_facts *f,
			 const char *profile)
{
	for (size_t i = 0; i < f->n_figures; i++) {
		const struct figure_fact *m = &f->figures[i];
		const struct gpu_id g = { m->backend, m->pci, m->uuid, m->name, m->index };
		if (m->has_bandwidth)
			add_sample(bandwidth, profile, &g, m->copy_bandwidth_gbs * 1e9, false);
		if (m->has_latency)
			add_sample(latency, profile, &g, m->launch_latency_us * 1e-6, false);
	}
}

void gpu_metrics_from_report(struct strbuf *out, const char *json)
{
	struct report_doc report;
	char err[512];
	if (report_parse("the check's report", json, strlen(json), &report, err, sizeof(err)) < 0)
		return; /* /report.json shows it whole; no per-GPU series is guessed */
	const char *profile = report.profile;
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
	memory_samples(&fams[0], &fams[1], &fams[2], &report.runtime, profile);
	smoke_samples(&fams[3], &report.runtime, profile);
	perf_samples(&fams[4], &fams[5], &report.runtime, profile);
	for (size_t i = 0; i < ARRAY_SIZE(fams); i++) {
		if (fams[i].samples.len) {
			sb_printf(out, "# HELP %s %s\n# TYPE %s %s\n", fams[i].name, fams[i].help, fams[i].name,
				  fams[i].type);
			sb_add(out, fams[i].samples.buf, fams[i].samples.len);
		}
		sb_release(&fams[i].samples);
		sb_release(&fams[i].seen);
	}
	report_release(&report);
}
