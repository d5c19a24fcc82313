/* A gpugate/v1 JSON report read back (gpugate diff, and the per-GPU
 * series of gpugate serve): the envelope, each
 * check's id, status, summary and finding codes, and the typed facts of the
 * groups that are compared, through their decoders (src/facts/).
 * The only place in src/operator/ that reads a report by key. */
#ifndef GPUGATE_OPERATOR_REPORT_DECODE_H
#define GPUGATE_OPERATOR_REPORT_DECODE_H

#include <stddef.h>

#include <jansson.h>

#include "facts/devices.h"
#include "facts/hf.h"
#include "facts/packages.h"
#include "facts/runtime.h"
#include "facts/system.h"

struct report_check {
	const char *id, *status, *summary; /* summary: "" when absent */
	const char **codes;                /* its findings' codes, in order */
	size_t n_codes;
};

struct report_doc {
	const char *path;
	json_t *doc;
	/* the envelope's strings, NULL when absent */
	const char *verdict, *profile, *version, *hostname, *timestamp, *spec_digest;
	struct report_check *checks;
	size_t n_checks;
	json_t *by_id; /* check id -> index: lookups stay O(1) on a report of many checks */
	struct packages_facts packages;
	struct devices_facts devices;
	struct runtime_facts runtime;
	struct hf_cache_facts hf; /* strings point into doc */
	struct system_facts system;
};

/* Reads and decodes the report at path (at most max bytes). 0, or -1 with
 * the reason in err (naming the file). */
int report_load(const char *path, size_t max, struct report_doc *r, char *err, size_t errsz);
/* The same from a report's text (len bytes, path names it in err). */
int report_parse(const char *path, const char *text, size_t len, struct report_doc *r, char *err, size_t errsz);
/* Builds by_id from checks (report_load does; a report_doc filled by hand,
 * as the unit tests do, calls it once its checks are set). */
void report_index(struct report_doc *r);
/* The first check of that id, or NULL. */
const struct report_check *report_check(const struct report_doc *r, const char *id);
void report_release(struct report_doc *r);

#endif
