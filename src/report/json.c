/* The gpugate/v1 JSON report (README.md, "Report formats"), built with jansson. Its JSON
 * Schema is checks/report.schema.json (tests validate every report the
 * integration tests produce against it). */
#include <stdlib.h>
#include <unistd.h>

#include "lib/escape.h"
#include "report.h"

#ifndef GPUGATE_VERSION
#define GPUGATE_VERSION "0.0.0"
#endif

void report_json(struct strbuf *out, const struct run *run, const struct report_opts *opts)
{
	(void)opts;
	json_t *checks = json_array();
	for (size_t i = 0; i < run->count; i++) {
		const struct result *r = &run->results[i];
		json_t *c = json_object();
		json_object_set_new(c, "id", json_text(r->id));
		json_object_set_new(c, "status", json_string(status_name(r->status)));
		json_object_set_new(c, "summary", json_text(r->summary));
		if (r->remediation)
			json_object_set_new(c, "remediation", json_text(r->remediation));
		json_object_set_new(c, "duration_ms", json_real(r->duration_ms));
		if (r->findings)
			json_object_set(c, "findings", r->findings);
		if (r->details)
			json_object_set(c, "details", r->details);
		json_array_append_new(checks, c);
	}
	char host[256] = "";
	if (gethostname(host, sizeof(host) - 1) < 0)
		host[0] = '\0';
	char when[32];
	report_iso8601(run->finished_at, when);
	char *digest = report_spec_digest(run->spec);
	json_t *doc = json_object();
	json_object_set_new(doc, "schema", json_string("gpugate/v1"));
	json_object_set_new(doc, "version", json_string(GPUGATE_VERSION));
	json_object_set_new(doc, "verdict", json_string(run_exit_code(run) == 0 ? "pass" : "fail"));
	json_object_set_new(doc, "profile", json_text(run->profile ? run->profile : "custom"));
	json_object_set_new(doc, "hostname", json_text(host));
	json_object_set_new(doc, "timestamp", json_string(when));
	json_object_set_new(doc, "spec_digest", digest ? json_string(digest) : json_null());
	json_object_set_new(doc, "duration_ms", json_real(run->duration_ms));
	json_object_set_new(doc, "checks", checks);
	free(digest);
	char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
	json_decref(doc);
	if (text) {
		escape_json_document(out, text); /* no bidi control or C1 raw, even inside a string */
		sb_puts(out, "\n");
		free(text);
	}
}
