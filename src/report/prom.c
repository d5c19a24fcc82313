/* Prometheus text exposition for node_exporter's textfile collector. */
#include "report.h"

static void add_label_value(struct strbuf *out, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '\\' || *s == '"')
			sb_printf(out, "\\%c", *s);
		else if (*s == '\n')
			sb_puts(out, "\\n");
		else
			sb_add(out, s, 1);
	}
}

static void add_family(struct strbuf *out, const char *name, const char *help)
{
	sb_printf(out, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

void report_prom(struct strbuf *out, const struct run *run, const struct report_opts *opts)
{
	(void)opts;
	add_family(out, "gpugate_check_passed", "1 when the check passed, warned or was skipped, 0 when it failed.");
	for (size_t i = 0; i < run->count; i++) {
		sb_puts(out, "gpugate_check_passed{id=\"");
		add_label_value(out, run->results[i].id);
		sb_printf(out, "\"} %d\n", run->results[i].status == STATUS_FAIL ? 0 : 1);
	}
	add_family(out, "gpugate_check_duration_seconds", "Time the check took.");
	for (size_t i = 0; i < run->count; i++) {
		sb_puts(out, "gpugate_check_duration_seconds{id=\"");
		add_label_value(out, run->results[i].id);
		sb_printf(out, "\"} %.6f\n", run->results[i].duration_ms / 1e3);
	}
	add_family(out, "gpugate_healthy", "1 when no check failed.");
	sb_printf(out, "gpugate_healthy %d\n", run_exit_code(run) == 0 ? 1 : 0);
	add_family(out, "gpugate_run_duration_seconds", "Time the whole run took.");
	sb_printf(out, "gpugate_run_duration_seconds %.6f\n", run->duration_ms / 1e3);
	add_family(out, "gpugate_last_run_timestamp_seconds", "When the run finished, in seconds since the epoch.");
	sb_printf(out, "gpugate_last_run_timestamp_seconds %.3f\n", run->finished_at);
}
