/* gpugate diff's comparison of two decoded reports (src/operator/diff.c),
 * built once as a typed result: the JSON format encodes it
 * (gpugate-diff/v1), the text and Markdown formats render it. Every string
 * in a result is its own copy (sanitized, not yet escaped for any output);
 * NULL means absent. */
#ifndef GPUGATE_OPERATOR_DIFF_H
#define GPUGATE_OPERATOR_DIFF_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "operator/report_decode.h"

/* the run of each report */
struct diff_side {
	char *file, *verdict, *profile, *version, *hostname, *timestamp, *spec_digest;
};

struct diff_strings {
	char **s;
	size_t n;
};

/* a check whose status changed; old NULL: added; new NULL: removed */
struct diff_check {
	char *id, *old, *new, *summary;
	const char *change;                          /* added, worse, better, removed */
	struct diff_strings codes_added, codes_gone; /* finding codes, by stable code */
};

/* a package (name[:arch]) whose version changed */
struct diff_package {
	char *package, *old, *new;
	const char *change; /* added, upgraded, downgraded, rebuilt, removed */
};

/* a backend whose driver changed; new NULL: the backend is gone */
struct diff_driver {
	char *backend, *old, *new, *old_library, *new_library;
};

/* a GPU gained or lost */
struct diff_device {
	char *device, *name;
	const char *change; /* lost, added */
};

/* one GPU measured in both reports */
struct diff_figure {
	char *device, *name;
	double old_bandwidth_gbs, new_bandwidth_gbs, bandwidth_change_percent; /* change: NAN when n/a */
	double old_latency_us, new_latency_us, latency_change_percent;
	bool regressed;
};

/* an hf or system fact that differs, named by a stable key
 * ("hf.location.hub_cache", "system.capabilities.CAP_SYS_ADMIN"); only
 * facts both reports have are compared (a check one of them lacks shows
 * among the checks) */
struct diff_fact {
	char *fact, *old, *new; /* the values as text */
	const char *change;     /* changed; gained, lost (a capability); worse, better (a direction that matters) */
};

struct diff_facts {
	struct diff_fact *f;
	size_t n;
};

struct diff_result {
	struct diff_side old, new;
	double tolerance_percent;
	int same_spec;                   /* 1, 0, or -1 when a report has no spec_digest */
	struct diff_strings regressions; /* one sentence each */
	struct diff_check *checks;
	size_t n_checks;
	struct diff_package *packages;
	size_t n_packages;
	struct diff_driver *drivers;
	size_t n_drivers;
	struct diff_device *devices;
	size_t n_devices;
	struct diff_figure *performance;
	size_t n_performance;
	struct diff_facts hf, system; /* shown, never a regression by themselves (their checks judge) */
	bool regressed;               /* NEW regressed against OLD */
};

/* Compares: regressed when a check newly fails, a GPU is lost, or a figure
 * is worse than tol percent. */
void diff_compare(const struct report_doc *old, const struct report_doc *new, double tol, struct diff_result *d);
/* The hf and the system facts that differ, appended to out (the parts of
 * diff_compare that read those groups; release out with diff_facts_release). */
void diff_hf_facts(struct diff_facts *out, const struct hf_cache_facts *old, const struct hf_cache_facts *new);
void diff_system_facts(struct diff_facts *out, const struct system_facts *old, const struct system_facts *new);
void diff_facts_release(struct diff_facts *l);
/* The gpugate-diff/v1 document of d. */
json_t *diff_result_json(const struct diff_result *d);
void diff_result_release(struct diff_result *d);
/* diff_compare, then its document. */
json_t *diff_reports(const struct report_doc *old, const struct report_doc *new, double tol);

#endif
