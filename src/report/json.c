/* The gpugate/v1 JSON report of DESIGN.md, built with jansson. */
#include <stdlib.h>

#include "report.h"

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
		if (r->details)
			json_object_set(c, "details", r->details);
		json_array_append_new(checks, c);
	}
	json_t *doc = json_object();
	json_object_set_new(doc, "schema", json_string("gpugate/v1"));
	json_object_set_new(doc, "verdict", json_string(run_exit_code(run) == 0 ? "pass" : "fail"));
	json_object_set_new(doc, "profile", json_text(run->profile ? run->profile : "custom"));
	json_object_set_new(doc, "duration_ms", json_real(run->duration_ms));
	json_object_set_new(doc, "checks", checks);
	char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
	json_decref(doc);
	if (text) {
		sb_puts(out, text);
		sb_puts(out, "\n");
		free(text);
	}
}
