/* GitHub Actions workflow commands: an annotation per failure and warning. */
#include "report.h"

/* Escaping of workflow commands: data escapes %, CR and LF; property values
 * (the title) also ':' and ','. */
static void add_escaped(struct strbuf *out, const char *s, bool property)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '%': sb_puts(out, "%25"); break;
		case '\r': sb_puts(out, "%0D"); break;
		case '\n': sb_puts(out, "%0A"); break;
		case ':': if (property) { sb_puts(out, "%3A"); break; } sb_add(out, s, 1); break;
		case ',': if (property) { sb_puts(out, "%2C"); break; } sb_add(out, s, 1); break;
		default: sb_add(out, s, 1);
		}
	}
}

void report_github(struct strbuf *out, const struct run *run, const struct report_opts *opts)
{
	(void)opts;
	size_t c[4];
	run_counts(run, c);
	for (size_t i = 0; i < run->count; i++) {
		const struct result *r = &run->results[i];
		if (r->status != STATUS_FAIL && r->status != STATUS_WARN)
			continue;
		sb_puts(out, r->status == STATUS_FAIL ? "::error title=" : "::warning title=");
		add_escaped(out, r->id, true);
		sb_puts(out, "::");
		add_escaped(out, r->summary, false);
		if (r->remediation) {
			sb_puts(out, " \xE2\x80\x94 ");
			add_escaped(out, r->remediation, false);
		}
		sb_puts(out, "\n");
	}
	sb_printf(out, "gpugate: %s (profile %s): %zu passed, %zu warnings, %zu failed, %zu skipped\n",
		  c[STATUS_FAIL] ? "UNHEALTHY" : "HEALTHY", run->profile ? run->profile : "custom",
		  c[STATUS_PASS], c[STATUS_WARN], c[STATUS_FAIL], c[STATUS_SKIP]);
}
