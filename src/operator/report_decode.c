#include "operator/report_decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "operator/operator.h"

/* the envelope's keys (checks/report.schema.json) */
#define K_SCHEMA   "schema"
#define K_CHECKS   "checks"
#define K_ID       "id"
#define K_STATUS   "status"
#define K_SUMMARY  "summary"
#define K_DETAILS  "details"
#define K_FINDINGS "findings"
#define K_CODE     "code"

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static const json_t *details_of(const struct report_doc *r, const char *id)
{
	const json_t *c = json_array_get(json_object_get(r->doc, K_CHECKS),
					 (size_t)json_integer_value(json_object_get(r->by_id, id)));
	return json_object_get(r->by_id, id) ? json_object_get(c, K_DETAILS) : NULL;
}

/* The structure every reader needs; the reason, or NULL. */
static const char *envelope_problem(const json_t *doc)
{
	if (!json_is_object(doc))
		return "not a JSON object";
	const char *schema = str(doc, K_SCHEMA);
	if (!schema || strcmp(schema, "gpugate/v1") != 0)
		return "its \"schema\" is not \"gpugate/v1\"";
	const json_t *checks = json_object_get(doc, K_CHECKS);
	if (!json_is_array(checks))
		return "it has no \"checks\" list";
	size_t i;
	const json_t *c;
	json_array_foreach(checks, i, c)
	{
		if (!json_is_string(json_object_get(c, K_ID)) || !json_is_string(json_object_get(c, K_STATUS)))
			return "a check without a string \"id\" and \"status\"";
	}
	return NULL;
}

static void decode_checks(struct report_doc *r)
{
	const json_t *checks = json_object_get(r->doc, K_CHECKS);
	r->n_checks = json_array_size(checks);
	r->checks = xcalloc(r->n_checks ? r->n_checks : 1, sizeof(*r->checks));
	for (size_t i = 0; i < r->n_checks; i++) {
		const json_t *c = json_array_get(checks, i);
		struct report_check *k = &r->checks[i];
		k->id = str(c, K_ID);
		k->status = str(c, K_STATUS);
		k->summary = str(c, K_SUMMARY) ? str(c, K_SUMMARY) : "";
		const json_t *findings = json_object_get(c, K_FINDINGS);
		k->codes = xcalloc(json_array_size(findings) + 1, sizeof(*k->codes));
		for (size_t f = 0; f < json_array_size(findings); f++) {
			const char *code = str(json_array_get(findings, f), K_CODE);
			if (code)
				k->codes[k->n_codes++] = code;
		}
	}
	report_index(r);
}

void report_index(struct report_doc *r)
{
	json_decref(r->by_id);
	r->by_id = json_object();
	for (size_t i = 0; i < r->n_checks; i++)
		if (!json_object_get(r->by_id, r->checks[i].id)) /* the first of a repeated id counts */
			json_object_set_new(r->by_id, r->checks[i].id, json_integer((json_int_t)i));
}

static void decode_envelope(struct report_doc *r)
{
	r->verdict = str(r->doc, "verdict");
	r->profile = str(r->doc, "profile");
	r->version = str(r->doc, "version");
	r->hostname = str(r->doc, "hostname");
	r->timestamp = str(r->doc, "timestamp");
	r->spec_digest = str(r->doc, "spec_digest");
}

int report_load(const char *path, size_t max, struct report_doc *r, char *err, size_t errsz)
{
	char *text = NULL;
	size_t len = 0;
	*r = (struct report_doc){ .path = path };
	if (operator_read_input(path, max, &text, &len, err, errsz) < 0)
		return -1;
	/* "-" is named as what it is, in errors and in the diff */
	int rc = report_parse(strcmp(path, "-") ? path : "standard input", text, len, r, err, errsz);
	free(text);
	return rc;
}

int report_parse(const char *path, const char *text, size_t len, struct report_doc *r, char *err, size_t errsz)
{
	*r = (struct report_doc){ .path = path };
	json_error_t jerr;
	r->doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!r->doc) {
		snprintf(err, errsz, "%s:%d:%d: not JSON: %s", path, jerr.line, jerr.column, jerr.text);
		return -1;
	}
	const char *why = envelope_problem(r->doc);
	if (why) {
		snprintf(err, errsz, "%s: not a gpugate JSON report (gpugate check --format json): %s", path, why);
		report_release(r);
		return -1;
	}
	decode_envelope(r);
	decode_checks(r);
	char why_facts[512];
	if (packages_facts_decode(details_of(r, "packages.installed"), &r->packages, why_facts, sizeof(why_facts)) <
		    0 ||
	    devices_facts_decode(details_of(r, "devices.gpus"), &r->devices, why_facts, sizeof(why_facts)) < 0 ||
	    runtime_loader_decode(details_of(r, "runtime.loader"), &r->runtime, why_facts, sizeof(why_facts)) < 0 ||
	    runtime_devices_decode(details_of(r, "runtime.devices"), &r->runtime, why_facts, sizeof(why_facts)) < 0 ||
	    runtime_performance_decode(details_of(r, "runtime.performance"), &r->runtime, why_facts,
				       sizeof(why_facts)) < 0 ||
	    runtime_smoke_decode(details_of(r, "runtime.smoke"), &r->runtime, why_facts, sizeof(why_facts)) < 0 ||
	    hf_location_decode(details_of(r, "hf.location"), &r->hf, why_facts, sizeof(why_facts)) < 0 ||
	    hf_mount_decode(details_of(r, "hf.mounted"), &r->hf, why_facts, sizeof(why_facts)) < 0 ||
	    hf_space_decode(details_of(r, "hf.space"), &r->hf, why_facts, sizeof(why_facts)) < 0 ||
	    hf_layout_decode(details_of(r, "hf.layout"), &r->hf, why_facts, sizeof(why_facts)) < 0 ||
	    hf_integrity_decode(details_of(r, "hf.integrity"), &r->hf, why_facts, sizeof(why_facts)) < 0 ||
	    system_seccomp_decode(details_of(r, "system.seccomp"), &r->system, why_facts, sizeof(why_facts)) < 0 ||
	    system_caps_decode(details_of(r, "system.capabilities"), &r->system, why_facts, sizeof(why_facts)) < 0 ||
	    system_container_decode(details_of(r, "system.container"), &r->system, why_facts, sizeof(why_facts)) < 0 ||
	    system_kernel_log_decode(details_of(r, "system.kernel_log"), &r->system, why_facts, sizeof(why_facts)) <
		    0) {
		snprintf(err, errsz, "%s: not a gpugate JSON report (gpugate check --format json): %s", path,
			 why_facts);
		report_release(r);
		return -1;
	}
	return 0;
}

const struct report_check *report_check(const struct report_doc *r, const char *id)
{
	const json_t *i = json_object_get(r->by_id, id);
	return i ? &r->checks[json_integer_value(i)] : NULL;
}

void report_release(struct report_doc *r)
{
	for (size_t i = 0; r->checks && i < r->n_checks; i++)
		free(r->checks[i].codes);
	free(r->checks);
	packages_facts_release(&r->packages);
	devices_facts_release(&r->devices);
	runtime_facts_release(&r->runtime);
	json_decref(r->by_id);
	json_decref(r->doc);
	*r = (struct report_doc){ 0 };
}
