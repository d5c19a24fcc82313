/* JUnit XML for CI test tabs: one testsuite, one testcase per check, valid
 * against the Jenkins xUnit plugin's junit-10.xsd (tests/schemas/) and in
 * the shape GitLab reads (testcase classname = group, name = check id).
 * Every string goes through escape_add(.., ESCAPE_XML): XML 1.0 forbids most
 * C0 controls and U+FFFE/U+FFFF even as character references. */
#include <string.h>
#include <unistd.h>

#include "report.h"

static void add_body(struct strbuf *out, const struct result *r)
{
	for (size_t k = 0; k < result_finding_count(r); k++) {
		const char *f = result_finding_text(r, k);
		if (report_finding_repeats_summary(r, f))
			continue;
		escape_add(out, f, ESCAPE_XML);
		sb_puts(out, "&#10;");
	}
	if (r->remediation) {
		sb_puts(out, "fix: ");
		escape_add(out, r->remediation, ESCAPE_XML);
	}
}

void report_junit(struct strbuf *out, const struct run *run, const struct report_opts *opts)
{
	(void)opts;
	size_t c[4];
	run_counts(run, c);
	char host[256] = "";
	if (gethostname(host, sizeof(host) - 1) < 0)
		host[0] = '\0';
	char when[32];
	report_iso8601(run->finished_at, when);
	when[19] = '\0'; /* ISO 8601 without the zone, as JUnit writers put it */
	/* junit-10.xsd: <testsuites> has name, time, tests, failures, errors (no skipped) */
	sb_puts(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	sb_printf(out, "<testsuites name=\"gpugate\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" time=\"%.3f\">\n",
		  run->count, c[STATUS_FAIL], run->duration_ms / 1e3);
	sb_puts(out, "  <testsuite name=\"gpugate ");
	escape_add(out, run->profile ? run->profile : "custom", ESCAPE_XML);
	sb_printf(
		out,
		"\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"%.3f\" timestamp=\"%s\" hostname=\"",
		run->count, c[STATUS_FAIL], c[STATUS_SKIP], run->duration_ms / 1e3, when);
	escape_add(out, host, ESCAPE_XML);
	sb_puts(out, "\">\n");
	for (size_t i = 0; i < run->count; i++) {
		const struct result *r = &run->results[i];
		const char *dot = strchr(r->id, '.');
		sb_puts(out, "    <testcase classname=\"");
		escape_add_n(out, r->id, dot ? (size_t)(dot - r->id) : strlen(r->id), ESCAPE_XML);
		sb_puts(out, "\" name=\"");
		escape_add(out, r->id, ESCAPE_XML);
		sb_printf(out, "\" time=\"%.6f\"", r->duration_ms / 1e3);
		switch (r->status) {
		case STATUS_PASS:
			sb_puts(out, "/>\n");
			break;
		case STATUS_SKIP:
			sb_puts(out, ">\n      <skipped message=\"");
			escape_add(out, r->summary, ESCAPE_XML);
			sb_puts(out, "\"/>\n    </testcase>\n");
			break;
		case STATUS_FAIL:
			sb_puts(out, ">\n      <failure message=\"");
			escape_add(out, r->summary, ESCAPE_XML);
			sb_puts(out, "\" type=\"gpugate\">");
			add_body(out, r);
			sb_puts(out, "</failure>\n    </testcase>\n");
			break;
		case STATUS_WARN:
			sb_puts(out, ">\n      <system-out>WARNING: ");
			escape_add(out, r->summary, ESCAPE_XML);
			sb_puts(out, "&#10;");
			add_body(out, r);
			sb_puts(out, "</system-out>\n    </testcase>\n");
			break;
		}
	}
	sb_puts(out, "  </testsuite>\n</testsuites>\n");
}
