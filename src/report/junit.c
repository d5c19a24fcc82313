/* JUnit XML for CI test tabs: one testsuite, one testcase per check. */
#include <string.h>

#include "report.h"

/* Escapes for both text and attribute values. Text is already valid UTF-8
 * without control characters (result.c sanitizes it). */
static void add_xml(struct strbuf *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': sb_puts(out, "&amp;"); break;
		case '<': sb_puts(out, "&lt;"); break;
		case '>': sb_puts(out, "&gt;"); break;
		case '"': sb_puts(out, "&quot;"); break;
		case '\'': sb_puts(out, "&apos;"); break;
		case '\n': sb_puts(out, "&#10;"); break;
		case '\t': sb_puts(out, "&#9;"); break;
		default: sb_add(out, s, 1);
		}
	}
}

static void add_body(struct strbuf *out, const struct result *r)
{
	json_t *findings = r->details ? json_object_get(r->details, "findings") : NULL;
	for (size_t k = 0; k < json_array_size(findings); k++) {
		add_xml(out, json_string_value(json_array_get(findings, k)));
		sb_puts(out, "&#10;");
	}
	if (r->remediation) {
		sb_puts(out, "fix: ");
		add_xml(out, r->remediation);
	}
}

void report_junit(struct strbuf *out, const struct run *run, const struct report_opts *opts)
{
	(void)opts;
	size_t c[4];
	run_counts(run, c);
	sb_puts(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	sb_printf(out, "<testsuites tests=\"%zu\" failures=\"%zu\" skipped=\"%zu\" time=\"%.3f\">\n",
		  run->count, c[STATUS_FAIL], c[STATUS_SKIP], run->duration_ms / 1e3);
	sb_puts(out, "  <testsuite name=\"gpugate");
	if (run->profile) {
		sb_puts(out, " ");
		add_xml(out, run->profile);
	}
	sb_printf(out, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"%.3f\">\n",
		  run->count, c[STATUS_FAIL], c[STATUS_SKIP], run->duration_ms / 1e3);
	for (size_t i = 0; i < run->count; i++) {
		const struct result *r = &run->results[i];
		const char *dot = strchr(r->id, '.');
		sb_puts(out, "    <testcase classname=\"gpugate.");
		if (dot)
			sb_add(out, r->id, (size_t)(dot - r->id));
		else
			add_xml(out, r->id);
		sb_puts(out, "\" name=\"");
		add_xml(out, r->id);
		sb_printf(out, "\" time=\"%.6f\"", r->duration_ms / 1e3);
		switch (r->status) {
		case STATUS_PASS:
			sb_puts(out, "/>\n");
			break;
		case STATUS_SKIP:
			sb_puts(out, ">\n      <skipped message=\"");
			add_xml(out, r->summary);
			sb_puts(out, "\"/>\n    </testcase>\n");
			break;
		case STATUS_FAIL:
			sb_puts(out, ">\n      <failure message=\"");
			add_xml(out, r->summary);
			sb_puts(out, "\" type=\"gpugate\">");
			add_body(out, r);
			sb_puts(out, "</failure>\n    </testcase>\n");
			break;
		case STATUS_WARN:
			sb_puts(out, ">\n      <system-out>WARNING: ");
			add_xml(out, r->summary);
			sb_puts(out, "&#10;");
			add_body(out, r);
			sb_puts(out, "</system-out>\n    </testcase>\n");
			break;
		}
	}
	sb_puts(out, "  </testsuite>\n</testsuites>\n");
}
