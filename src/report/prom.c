/* Prometheus text exposition for node_exporter's textfile collector. Every
 * series carries a profile label, so that the healthcheck and validate runs
 * of one node, written to two files in one textfile folder
 * (gpugate-healthcheck.prom, gpugate-validate.prom), never collide: the
 * collector refuses a series that two files both define. */
#include "report.h"

#ifndef GPUGATE_VERSION
#define GPUGATE_VERSION "0.0.0"
#endif

static void add_family(struct strbuf *out, const char *name, const char *help)
{
	sb_printf(out, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

/* name{profile="P"[,id="ID"] */
static void add_series(struct strbuf *out, const char *name, const struct run *run, const char *id)
{
	sb_printf(out, "%s{profile=\"", name);
	escape_add(out, run->profile ? run->profile : "custom", ESCAPE_PROM_LABEL);
	if (id) {
		sb_puts(out, "\",id=\"");
		escape_add(out, id, ESCAPE_PROM_LABEL);
	}
	sb_puts(out, "\"");
}

void report_prom(struct strbuf *out, const struct run *run, const struct report_opts *opts)
{
	(void)opts;
	add_family(out, "gpugate_info", "The gpugate that wrote these metrics; always 1.");
	add_series(out, "gpugate_info", run, NULL);
	sb_puts(out, ",version=\"");
	escape_add(out, GPUGATE_VERSION, ESCAPE_PROM_LABEL);
	sb_puts(out, "\"} 1\n");

	add_family(out, "gpugate_healthy", "1 when no check failed in the run of this profile.");
	add_series(out, "gpugate_healthy", run, NULL);
	sb_printf(out, "} %d\n", run_exit_code(run) == 0 ? 1 : 0);

	add_family(out, "gpugate_check_status",
		   "1 for the status the check ended with (pass, warn, fail or skip), 0 for the others.");
	for (size_t i = 0; i < run->count; i++) {
		const struct result *r = &run->results[i];
		static const enum status all[] = { STATUS_PASS, STATUS_WARN, STATUS_FAIL, STATUS_SKIP };
		for (size_t k = 0; k < ARRAY_SIZE(all); k++) {
			add_series(out, "gpugate_check_status", run, r->id);
			sb_printf(out, ",status=\"%s\"} %d\n", status_name(all[k]), r->status == all[k]);
		}
	}
	add_family(out, "gpugate_check_passed",
		   "1 when the check passed or warned, 0 when it failed; no sample for a skipped check.");
	for (size_t i = 0; i < run->count; i++) {
		const struct result *r = &run->results[i];
		if (r->status == STATUS_SKIP)
			continue;
		add_series(out, "gpugate_check_passed", run, r->id);
		sb_printf(out, "} %d\n", r->status == STATUS_FAIL ? 0 : 1);
	}
	add_family(out, "gpugate_check_duration_seconds", "Time the check took.");
	for (size_t i = 0; i < run->count; i++) {
		add_series(out, "gpugate_check_duration_seconds", run, run->results[i].id);
		sb_printf(out, "} %.6f\n", run->results[i].duration_ms / 1e3);
	}
	add_family(out, "gpugate_run_duration_seconds", "Time the whole run took.");
	add_series(out, "gpugate_run_duration_seconds", run, NULL);
	sb_printf(out, "} %.6f\n", run->duration_ms / 1e3);
	add_family(out, "gpugate_last_run_timestamp_seconds", "When the run finished, in seconds since the epoch.");
	add_series(out, "gpugate_last_run_timestamp_seconds", run, NULL);
	sb_printf(out, "} %.3f\n", run->finished_at);
}
